//! The last invalid request of each frontend and the last invalid response
//! of each backend, with the bytes as received, for `show errors`. Only
//! error paths write here, so a short lock is fine.

use crate::state::ProxyId;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// Most bytes kept of one message.
const MAX_BYTES: usize = 16 * 1024;

/// One invalid message.
#[derive(Debug, Clone)]
pub struct Captured {
    /// When, since the epoch.
    pub at: Duration,
    /// The proxy that saw it (a frontend for requests, a backend for
    /// responses).
    pub proxy: ProxyId,
    pub response: bool,
    /// The server (name, id) of a response.
    pub server: Option<(String, u32)>,
    pub event: u64,
    pub src: Option<SocketAddr>,
    pub reason: String,
    pub bytes: Vec<u8>,
}

#[derive(Default)]
pub struct ErrorLog {
    seq: AtomicU64,
    last: Mutex<HashMap<(ProxyId, bool), Captured>>,
}

impl ErrorLog {
    /// Keeps `bytes` as the last invalid request (or response) of `proxy`.
    #[allow(clippy::too_many_arguments)]
    pub fn record(
        &self,
        proxy: ProxyId,
        response: bool,
        server: Option<(String, u32)>,
        src: Option<SocketAddr>,
        reason: String,
        bytes: &[u8],
    ) {
        let c = Captured {
            at: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default(),
            proxy,
            response,
            server,
            event: self.seq.fetch_add(1, Ordering::Relaxed),
            src,
            reason,
            bytes: bytes.get(..MAX_BYTES).unwrap_or(bytes).to_vec(),
        };
        if let Ok(mut m) = self.last.lock() {
            m.insert((proxy, response), c);
        }
    }

    /// Events captured since start.
    pub fn total(&self) -> u64 {
        self.seq.load(Ordering::Relaxed)
    }

    /// The kept events, oldest first.
    pub fn events(&self) -> Vec<Captured> {
        let mut v: Vec<Captured> = self
            .last
            .lock()
            .map(|m| m.values().cloned().collect())
            .unwrap_or_default();
        v.sort_by_key(|c| c.event);
        v
    }
}
