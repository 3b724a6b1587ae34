//! Statistics counters for `show stat` and `show info`: each frontend,
//! backend and server has one block of counters per worker thread, which
//! only that thread writes (a plain load and store, no locked instruction,
//! no shared cache line); readers sum the blocks. Counting happens once per
//! exchange (HTTP) or session (TCP), where its log record is complete.

use crate::log::LogRecord;
use crate::state::FrontendId;
use crate::state::ServerId;
use crate::state::{BackendRt, Shared};
use crate::term::{Cause, State, Term};
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

/// What is counted.
#[derive(Debug, Clone, Copy)]
#[repr(usize)]
pub enum Ctr {
    /// Sessions (frontends: connections accepted; backends and servers:
    /// exchanges or sessions sent there).
    Sessions,
    BytesIn,
    BytesOut,
    /// HTTP requests.
    Requests,
    /// Responses by class: 1xx … 5xx, then other.
    Hrsp1,
    Hrsp2,
    Hrsp3,
    Hrsp4,
    Hrsp5,
    HrspOther,
    /// Invalid or timed-out requests.
    ReqErr,
    /// Requests denied by a rule.
    ReqDenied,
    /// Responses denied by a rule.
    RespDenied,
    /// Connections refused by `tcp-request connection` rules (`dcon`), and
    /// sessions by `tcp-request session` rules (`dses`).
    ConnDenied,
    SessDenied,
    /// Failed connections to servers.
    ConnErr,
    /// Bad, missing or timed-out server responses.
    RespErr,
    Retries,
    Redispatches,
    CliAbort,
    SrvAbort,
    /// TLS handshakes completed on a frontend, and those resumed.
    SslSess,
    SslReused,
    SslFailed,
    /// Rewrites that found no room (`wrew`), and internal errors (`eint`).
    Wrew,
    Eint,
    /// HTTP/1 body bytes moved with splice(2): received on this side
    /// (`h1_spliced_bytes_in`) and sent (`h1_spliced_bytes_out`).
    H1SplicedIn,
    H1SplicedOut,
    /// Queue, connect, response and total times: sums in ms and how many
    /// were summed (for `qtime` … `ttime`, averaged by [`crate::rates`]).
    QSum,
    QN,
    CSum,
    CN,
    RSum,
    RN,
    TSum,
    TN,
    /// The longest of each (`qtime_max` …): per-thread maxima, not sums.
    QMax,
    CMax,
    RMax,
    TMax,
}

const N: usize = Ctr::TMax as usize + 1;

/// One thread's counters for one object, on a cache line of its own.
#[repr(align(64))]
struct Block([AtomicU64; N]);

impl Block {
    /// The slot of counter `i` (`Ctr as usize`; every counter has one).
    #[inline]
    fn slot(&self, i: usize) -> Option<&AtomicU64> {
        self.0.get(i)
    }
}

impl Default for Block {
    fn default() -> Block {
        Block(std::array::from_fn(|_| AtomicU64::new(0)))
    }
}

thread_local! {
    /// This thread's block: 1..=nbthread on worker threads, 0 elsewhere.
    static SLOT: Cell<usize> = const { Cell::new(0) };
}

/// The calling thread's block: its worker number, or 0.
pub fn thread_slot() -> usize {
    SLOT.with(Cell::get)
}

/// Makes the calling thread write block `slot` (worker thread `slot`).
pub fn set_thread_slot(slot: usize) {
    SLOT.with(|s| s.set(slot));
}

/// One thread's block of one object's counters.
struct Local<'a> {
    b: Option<&'a Block>,
    /// Block 0, which several threads may share.
    shared: bool,
}

/// Counters counted together: a frontend's and, with `option
/// socket-stats`, its listener's; a backend's and its server's.
struct Both<'a>(Local<'a>, Option<Local<'a>>);

impl Both<'_> {
    #[inline]
    fn add(&self, c: Ctr, v: u64) {
        self.0.add(c, v);
        if let Some(l) = &self.1 {
            l.add(c, v);
        }
    }
}

impl Local<'_> {
    #[inline]
    fn add(&self, c: Ctr, v: u64) {
        let Some(a) = self.b.and_then(|b| b.slot(c as usize)) else {
            return;
        };
        if self.shared {
            a.fetch_add(v, Ordering::Relaxed);
        } else {
            // Only this worker thread writes its block.
            a.store(a.load(Ordering::Relaxed).wrapping_add(v), Ordering::Relaxed);
        }
    }
    /// Raises a maximum slot to `v`.
    #[inline]
    fn raise(&self, c: Ctr, v: u64) {
        let Some(a) = self.b.and_then(|b| b.slot(c as usize)) else {
            return;
        };
        if self.shared {
            a.fetch_max(v, Ordering::Relaxed);
        } else if v > a.load(Ordering::Relaxed) {
            a.store(v, Ordering::Relaxed);
        }
    }
}

/// The counters of one frontend, backend, server or listener.
pub struct Counters {
    blocks: Box<[Block]>,
    /// The sums at the last `clear counters all`, taken off what `get`
    /// reports (the blocks' writers are never disturbed).
    base: Block,
}

impl std::fmt::Debug for Counters {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Counters")
    }
}

impl Counters {
    /// Counters for `nthreads` worker threads (and block 0 for the rest).
    pub fn new(nthreads: usize) -> Counters {
        Counters {
            blocks: (0..=nthreads).map(|_| Block::default()).collect(),
            base: Block::default(),
        }
    }

    #[inline]
    pub fn add(&self, c: Ctr, v: u64) {
        self.at(SLOT.with(Cell::get)).add(c, v);
    }

    /// This thread's block, for several additions with one slot lookup.
    #[inline]
    fn at(&self, slot: usize) -> Local<'_> {
        match self.blocks.get(slot) {
            Some(b) => Local {
                b: Some(b),
                shared: slot == 0,
            },
            // Not a worker thread's slot: block 0, shared by such threads.
            None => Local {
                b: self.blocks.first(),
                shared: true,
            },
        }
    }

    fn sum(&self, i: usize) -> u64 {
        self.blocks
            .iter()
            .filter_map(|b| b.slot(i))
            .map(|a| a.load(Ordering::Relaxed))
            .fold(0u64, u64::wrapping_add)
    }

    /// The sum over threads since the last [`Counters::clear`].
    pub fn get(&self, c: Ctr) -> u64 {
        let i = c as usize;
        self.sum(i)
            .wrapping_sub(self.base.slot(i).map_or(0, |a| a.load(Ordering::Relaxed)))
    }

    /// The largest value of a maximum slot over threads.
    pub fn max(&self, c: Ctr) -> u64 {
        self.blocks
            .iter()
            .filter_map(|b| b.slot(c as usize))
            .map(|a| a.load(Ordering::Relaxed))
            .max()
            .unwrap_or(0)
    }

    /// Starts the maxima again (`clear counters`). A thread raising one at
    /// the same moment may keep its value: a reset, not a barrier.
    pub fn clear_max(&self) {
        for b in self.blocks.iter() {
            for c in [Ctr::QMax, Ctr::CMax, Ctr::RMax, Ctr::TMax] {
                if let Some(a) = b.slot(c as usize) {
                    a.store(0, Ordering::Relaxed);
                }
            }
        }
    }

    /// Starts every counter again from zero.
    pub fn clear(&self) {
        for (i, b) in self.base.0.iter().enumerate() {
            b.store(self.sum(i), Ordering::Relaxed);
        }
    }
}

fn hrsp(status: i32) -> Ctr {
    match status {
        100..=199 => Ctr::Hrsp1,
        200..=299 => Ctr::Hrsp2,
        300..=399 => Ctr::Hrsp3,
        400..=499 => Ctr::Hrsp4,
        500..=599 => Ctr::Hrsp5,
        _ => Ctr::HrspOther,
    }
}

/// `tcp-response content reject`: `PD` with nothing sent to the client.
fn response_rejected(rec: &LogRecord<'_>) -> bool {
    rec.term == Term::new(Cause::Proxy, State::Data) && rec.status < 0 && rec.bytes_out == 0
}

/// Counts a finished exchange or session on its frontend, and on the
/// backend and server it went to. `http`: an HTTP exchange.
/// Adds `n` to counter `c` of a frontend and, with `option socket-stats`,
/// of its listener `bind`.
pub fn add_front(fe: &crate::state::FrontendRt, bind: &crate::state::BindInfo, c: Ctr, n: u64) {
    fe.counters.add(c, n);
    if let Some(s) = &bind.stats {
        s.counters.add(c, n);
    }
}

pub fn count(
    sh: &Shared,
    fe_idx: FrontendId,
    be: Option<&BackendRt>,
    srv: Option<ServerId>,
    rec: &LogRecord<'_>,
    http: bool,
) {
    let Some(fe) = sh.frontends.get(fe_idx.index()) else {
        return;
    };
    let slot = SLOT.with(Cell::get);
    let fc = fe.counters.at(slot);
    // With `option socket-stats`, the listener counts what its frontend
    // does.
    let lc = rec
        .listener
        .and_then(|i| fe.binds.get(i))
        .and_then(|b| b.info.stats.as_ref())
        .map(|s| s.counters.at(slot));
    let f = Both(fc, lc);
    f.add(Ctr::BytesIn, rec.bytes_in);
    f.add(Ctr::BytesOut, rec.bytes_out);
    let term = rec.term;
    let eint = u64::from(term.cause == Cause::Internal);
    f.add(Ctr::Wrew, u64::from(rec.failed_rewrites[0]));
    f.add(Ctr::Eint, eint);
    // A request refused before any server: a bad one (`PR` with 400, 408 …
    // or `CR`/`cR`), or one denied by a rule (`PR` with 403 and the like).
    let invalid = (term.client_side() && term.state == State::Request)
        || (term.cause == Cause::Proxy && rec.status == 400);
    let denied = term == Term::new(Cause::Proxy, State::Request) && !invalid;
    if http {
        f.add(Ctr::Requests, 1);
        if rec.status > 0 {
            f.add(hrsp(rec.status), 1);
        }
        if invalid {
            f.add(Ctr::ReqErr, 1);
        } else if denied {
            f.add(Ctr::ReqDenied, 1);
        }
        // `PH` after a response came is a rule's denial; before, the
        // response could not be read (an error of the backend's).
        if term == Term::new(Cause::Proxy, State::Headers) && rec.t_res >= 0 {
            f.add(Ctr::RespDenied, 1);
        }
        if response_rejected(rec) {
            f.add(Ctr::RespDenied, 1);
        }
    }
    let Some(be) = be else {
        return;
    };
    let s = srv
        .and_then(|i| be.server_at(i))
        .map(|s| s.counters.at(slot));
    // The backend's counters, and its server's.
    let both = Both(be.counters.at(slot), s);
    let (b, s) = (&both.0, &both.1);
    both.add(Ctr::Sessions, 1);
    both.add(Ctr::Wrew, u64::from(rec.failed_rewrites[1]));
    both.add(Ctr::Eint, eint);
    if http && response_rejected(rec) {
        both.add(Ctr::RespDenied, 1);
    }
    both.add(Ctr::BytesIn, rec.bytes_in);
    both.add(Ctr::BytesOut, rec.bytes_out);
    if http {
        // The backend counts every request and answer; a server only those
        // it answered (a valid response head), as haproxy's rows do.
        b.add(Ctr::Requests, 1);
        if rec.status > 0 {
            b.add(hrsp(rec.status), 1);
        }
        let answered = rec.t_res >= 0
            && matches!(
                term.state,
                State::Done | State::Data | State::Closing | State::Tarpit
            );
        if let (Some(s), true) = (&s, answered) {
            s.add(Ctr::Requests, 1);
            if rec.status > 0 {
                s.add(hrsp(rec.status), 1);
            }
        }
    }
    // Retries and redispatches count on the server that failed (haproxy's
    // rows), and on the backend.
    let failed = rec
        .failed_srv
        .or(srv)
        .and_then(|i| be.server_at(i))
        .map(|s| s.counters.at(slot));
    for (c, n) in [
        (Ctr::Retries, u64::from(rec.srv_retries)),
        (Ctr::Redispatches, u64::from(rec.redispatched)),
    ] {
        if n > 0 {
            b.add(c, n);
            if let Some(f) = &failed {
                f.add(c, n);
            }
        }
    }
    // Times, for the averages and maxima: the queue and connect times of
    // those that waited or connected, the response time of HTTP
    // exchanges, the total time of all (HAProxy's `Tt`, which counts a
    // keep-alive request's idle time before it).
    for (t, sum, n, max) in [
        (rec.tw, Ctr::QSum, Ctr::QN, Ctr::QMax),
        (rec.tc, Ctr::CSum, Ctr::CN, Ctr::CMax),
        (
            if http { rec.t_res } else { -1 },
            Ctr::RSum,
            Ctr::RN,
            Ctr::RMax,
        ),
        (rec.tt, Ctr::TSum, Ctr::TN, Ctr::TMax),
    ] {
        if let Ok(t) = u64::try_from(t) {
            both.add(sum, t);
            both.add(n, 1);
            b.raise(max, t);
            if let Some(s) = &s {
                s.raise(max, t);
            }
        }
    }
    match (term.cause, term.state) {
        (Cause::Server, State::Connect) => both.add(Ctr::ConnErr, 1),
        (_, State::Headers) if term.server_side() => {
            both.add(Ctr::RespErr, if rec.srv_reset { 2 } else { 1 })
        }
        (Cause::Proxy, State::Headers) if http && rec.t_res < 0 => both.add(Ctr::RespErr, 1),
        // A response cut short: an error of the response, and in HTTP
        // the server's abort too.
        (_, State::Data) if term.server_side() => {
            both.add(Ctr::RespErr, 1);
            if http {
                both.add(Ctr::SrvAbort, 1);
            }
        }
        (_, State::Headers | State::Data | State::Queue | State::Connect) if term.client_side() => {
            both.add(Ctr::CliAbort, 1)
        }
        _ if term.server_side() => both.add(Ctr::SrvAbort, 1),
        _ => {}
    }
}

/// Result of one check.
#[derive(Debug, Clone)]
pub struct CheckResult {
    pub ok: bool,
    /// "Layer4 connection problem", "Layer7 wrong status", …
    pub reason: String,
    /// `, code: N`, `, info: "…"` details.
    pub detail: String,
    pub duration: std::time::Duration,
    /// The log line of a check that passed gives its info (a check
    /// script's; an HTTP check's reason phrase is left out).
    pub log_info: bool,
}

/// A server's health as the runtime API shows it; its check task writes it
/// after each check (never the request path).
#[derive(Debug, Clone)]
pub struct CheckView {
    /// The server has `check`.
    pub enabled: bool,
    pub up: bool,
    pub health: u32,
    pub rise: u32,
    pub fall: u32,
    /// HAProxy's short status (`L4OK`, `L4CON`, `L7STS` …); empty before
    /// the first check.
    pub code: &'static str,
    /// The long form ("Layer4 connection problem").
    pub desc: String,
    /// What the check saw (`last_chk`).
    pub info: String,
    pub http_code: Option<u16>,
    pub duration_ms: Option<u128>,
    /// Failed checks, and UP to DOWN transitions.
    pub failed: u64,
    pub downs: u64,
    /// The last state change, and the time spent down before the current
    /// state.
    pub changed: std::time::Instant,
    pub down_total: std::time::Duration,
}

impl CheckView {
    pub fn new(enabled: bool, rise: u32, fall: u32) -> CheckView {
        CheckView {
            enabled,
            up: true,
            health: rise.max(1),
            rise: rise.max(1),
            fall: fall.max(1),
            code: "",
            desc: String::new(),
            info: String::new(),
            http_code: None,
            duration_ms: None,
            failed: 0,
            downs: 0,
            changed: std::time::Instant::now(),
            down_total: std::time::Duration::ZERO,
        }
    }

    /// Takes one check's result and the health counter after it.
    pub fn record(&mut self, r: &CheckResult, up: bool, health: u32) {
        self.code = short_code(&r.reason);
        self.desc = r.reason.clone();
        self.info = detail_text(&r.detail);
        self.http_code = detail_code(&r.detail);
        self.duration_ms = Some(r.duration.as_millis());
        self.health = health;
        if !r.ok {
            self.failed += 1;
        }
        if up != self.up {
            let now = std::time::Instant::now();
            if !up {
                self.downs += 1;
            } else {
                self.down_total += now.duration_since(self.changed);
            }
            self.changed = now;
            self.up = up;
        }
    }

    /// Total time down, the current spell included.
    pub fn downtime(&self) -> std::time::Duration {
        if self.up {
            self.down_total
        } else {
            self.down_total + self.changed.elapsed()
        }
    }
}

/// HAProxy's short check status for a result's long form.
fn short_code(reason: &str) -> &'static str {
    match reason {
        "Layer4 check passed" => "L4OK",
        "Layer4 timeout" => "L4TOUT",
        "Layer4 connection problem" => "L4CON",
        "Layer6 check passed" => "L6OK",
        "Layer6 timeout" => "L6TOUT",
        "Layer6 invalid response" => "L6RSP",
        "Layer7 check passed" => "L7OK",
        "Layer7 check conditionally passed" => "L7OKC",
        "Layer7 timeout" => "L7TOUT",
        "Layer7 invalid response" => "L7RSP",
        "Layer7 wrong status" => "L7STS",
        "Socket error" => "SOCKERR",
        "No status change" => "CHECKED",
        "External check passed" => "PROCOK",
        "External check error" => "PROCERR",
        "External check timeout" => "PROCTOUT",
        _ => "UNK",
    }
}

/// The `info: "…"` text of a result's detail (`, code: 503, info: "…"`).
fn detail_text(detail: &str) -> String {
    detail
        .split_once("info: \"")
        .map(|(_, rest)| rest.trim_end_matches('"').to_string())
        .unwrap_or_default()
}

/// The HTTP status in a result's detail.
fn detail_code(detail: &str) -> Option<u16> {
    let (_, rest) = detail.split_once("code: ")?;
    rest.split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

/// A `resolvers` section's figures, per name server (`show resolvers`):
/// what the resolver task sent and what came back, counted as haproxy
/// counts them.
#[derive(Debug)]
pub struct ResolverStats {
    pub name: String,
    pub servers: Vec<NameServerStats>,
    /// Wakes the section's task (a server's name changed at run time).
    pub wake: tokio::sync::Notify,
    /// `do-resolve`'s answers: (name, IPv6 first) to the address and when
    /// it came.
    pub cache: std::sync::Mutex<DnsCache>,
}

/// `do-resolve`'s answers by (name, IPv6 first).
pub type DnsCache =
    std::collections::HashMap<(String, bool), (std::net::IpAddr, std::time::Instant)>;

/// One name server's counters.
#[derive(Debug, Default)]
pub struct NameServerStats {
    pub id: String,
    pub addr: Option<std::net::SocketAddr>,
    /// Queries sent, and those `send` refused.
    pub sent: AtomicU64,
    pub snd_error: AtomicU64,
    /// Answers with records, and those that changed a server.
    pub valid: AtomicU64,
    pub update: AtomicU64,
    pub nx: AtomicU64,
    pub timeout: AtomicU64,
    pub refused: AtomicU64,
    pub other: AtomicU64,
    /// Datagrams dropped: undecodable, another id or question (late or
    /// spoofed), cut (TC).
    pub invalid: AtomicU64,
    pub truncated: AtomicU64,
    pub outdated: AtomicU64,
}

impl ResolverStats {
    /// Empty counters for every name server of `r`.
    pub fn new(r: &weir_config::Resolvers) -> ResolverStats {
        ResolverStats {
            name: r.name.clone(),
            servers: r
                .nameservers
                .iter()
                .map(|(id, addr)| NameServerStats {
                    id: id.clone(),
                    addr: Some(*addr),
                    ..NameServerStats::default()
                })
                .collect(),
            wake: tokio::sync::Notify::new(),
            cache: std::sync::Mutex::new(DnsCache::new()),
        }
    }
}
