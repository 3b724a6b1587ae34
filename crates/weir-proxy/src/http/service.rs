//! weir's own answers that the runtime layer above provides — the stats
//! page and the Prometheus exporter read and change the live state through
//! the runtime API — registered once at start ([`register`]), so that the
//! HTTP layer names nothing above it.

use super::io::Buf;
use super::peer::Peer;
use super::rules::{ExCtx, Local};
use crate::state::Shared;
use crate::term::{Cause, State, Term};
use std::future::Future;
use std::pin::Pin;
use std::sync::OnceLock;
use weir_config::{Proxy, StatsPage};
use weir_proto::h1::RequestHead;

/// A stats page's answer, and how many bytes of the client buffer the
/// request took (head and form body).
pub type Answer<'a> = Pin<Box<dyn Future<Output = (Local, usize)> + Send + 'a>>;

/// A request for a stats page.
pub struct StatsRequest<'a> {
    pub sh: &'a Shared,
    pub client: Peer<'a>,
    pub cbuf: &'a mut Buf,
    /// Bytes of the head at the front of `cbuf`.
    pub used: usize,
    pub req: &'a RequestHead,
    /// The proxy whose page it is.
    pub px: &'a Proxy,
    pub page: &'a StatsPage,
    pub ctx: &'a ExCtx<'a>,
}

/// What the layer above answers.
pub struct Services {
    /// `http-request use-service prometheus-exporter`: the metrics for
    /// the request's URI.
    pub prometheus: fn(&Shared, &str) -> Local,
    /// A request under a proxy's `stats uri`.
    pub stats_page: for<'a> fn(StatsRequest<'a>) -> Answer<'a>,
    /// `show stat`'s rows (a Lua script's `get_stats()`).
    pub stat_rows: fn(&Shared, &weir_admin::cli::StatFilter) -> Vec<weir_admin::stat::Row>,
}

static SERVICES: OnceLock<Services> = OnceLock::new();

/// Registers the services (once; a second registration is ignored).
pub fn register(s: Services) {
    let _ = SERVICES.set(s);
}

/// What a request gets when no service was registered.
fn missing() -> Local {
    Local {
        bytes: super::errors::page(503, false),
        status: 503,
        term: Term::new(Cause::Local, State::Request),
        keep: false,
    }
}

/// The Prometheus exporter's answer to `uri`.
pub(super) fn prometheus(sh: &Shared, uri: &str) -> Local {
    match SERVICES.get() {
        Some(s) => (s.prometheus)(sh, uri),
        None => missing(),
    }
}

/// `show stat`'s rows for `f` (none before the runtime registered).
pub fn stat_rows(sh: &Shared, f: &weir_admin::cli::StatFilter) -> Vec<weir_admin::stat::Row> {
    SERVICES
        .get()
        .map(|s| (s.stat_rows)(sh, f))
        .unwrap_or_default()
}

/// The stats page's answer.
pub(super) fn stats_page(r: StatsRequest<'_>) -> Answer<'_> {
    match SERVICES.get() {
        Some(s) => (s.stats_page)(r),
        None => {
            let used = r.used;
            Box::pin(async move { (missing(), used) })
        }
    }
}

/// The proxy whose stats page `uri` asks for: the frontend's, else the
/// backend's.
pub(super) fn target<'a>(
    fe: &'a Proxy,
    be: Option<&'a Proxy>,
    uri: &str,
) -> Option<(&'a Proxy, &'a StatsPage)> {
    [Some(fe), be]
        .into_iter()
        .flatten()
        .find_map(|p| p.stats.as_ref().map(|s| (p, s)))
        .filter(|(_, s)| uri.starts_with(s.uri.as_str()))
}
