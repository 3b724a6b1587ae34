//! Health from the traffic (`observe layer4|layer7`, `error-limit`,
//! `on-error`): each connection to a server and, in layer 7, each
//! response counts as a success or an error; `error-limit` errors in a row
//! wake the server's health check, which applies `on-error`.

use super::{BackendRt, ServerId};
use std::sync::atomic::Ordering;

/// What one exchange with a server showed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seen {
    /// A connection made, or refused / timed out.
    Connect(bool),
    /// A response status, or `None` for an invalid or timed-out response.
    Response(Option<u16>),
}

impl Seen {
    fn ok(self) -> bool {
        match self {
            Seen::Connect(ok) => ok,
            Seen::Response(Some(s)) => (100..500).contains(&s) || s == 501 || s == 505,
            Seen::Response(None) => false,
        }
    }
    /// How haproxy words the last error in its check line.
    pub fn describe(self) -> &'static str {
        match self {
            Seen::Connect(_) => "L4 unsuccessful connection",
            Seen::Response(Some(_)) => "Wrong http response",
            Seen::Response(None) => "L7 timeout or invalid response",
        }
    }
}

/// Counts what was seen of server `srv`; the `error-limit`-th error in a
/// row hands the server's check the `on-error` action.
pub fn report(be: &BackendRt, srv: ServerId, seen: Seen) {
    let Some(s) = be.server_at(srv) else {
        return;
    };
    let o = &s.conf.observe;
    // (Layer 4 judges connections; layer 7 responses, and connections
    // that failed: one made says nothing of the responses.)
    let watched = match (o.layer7, seen) {
        (None, _) => false,
        (Some(false), Seen::Response(_)) => false,
        (Some(true), Seen::Connect(true)) => false,
        _ => s.conf.check,
    };
    if !watched {
        return;
    }
    if seen.ok() {
        s.errors_in_row.store(0, Ordering::Relaxed);
        return;
    }
    let n = s.errors_in_row.fetch_add(1, Ordering::Relaxed) + 1;
    if n >= o.limit {
        s.errors_in_row.store(0, Ordering::Relaxed);
        if let Ok(mut last) = s.observed.lock() {
            *last = Some((n, seen));
        }
        s.observe_wake.notify_one();
    }
}
