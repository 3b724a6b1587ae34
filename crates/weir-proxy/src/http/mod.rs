//! `mode http` over HTTP/1.1: one client connection carries a series of
//! exchanges (keep-alive, pipelining); each request is read and checked by
//! the strict codec, balanced on its own, sent over an idle or new server
//! connection, and its response streamed back; then the exchange is logged
//! with HAProxy's `httplog` fields and the connection kept or closed.

mod answers;
mod attempt;
mod cache;
mod compress;
mod cookie;
mod decide;
pub mod entry;
pub(crate) mod errors;
mod exchange;
mod head;
pub mod idle;
pub(crate) mod io;
#[allow(unsafe_code)]
pub(crate) mod lot;
mod outcome;
pub mod peer;
pub mod pool;
mod read;
mod request;
mod respond;
pub mod room;
pub mod rules;
pub(crate) mod samples;
mod scripted;
pub mod service;
pub(crate) mod splicing;
pub mod view;

use crate::conn::{Conn, Io};
use crate::connect::Connected;
use crate::log::{level, render, LogRecord};
use crate::session::Accepted;
use crate::state::ServerId;
use crate::state::Shared;
use crate::state::{FrontendId, ProxyId};
use crate::term::{Cause, State, Term};
use exchange::exchange;
use io::{send, Buf};
use peer::Peer;
pub(crate) use read::head_timeouts;
use read::{read_head, HeadEnd};
use rules::Vars;
use std::net::IpAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;
use weir_config::HttpReuse;
use weir_proto::h1::{H1Error, Limits, RequestHead};

pub(super) use crate::session::ms;

fn now_wall() -> Duration {
    crate::clock::wall()
}

/// A server connection kept by a client session between exchanges
/// (`http-reuse never`), or on its way to the idle pool.
pub(super) struct Held {
    be: ProxyId,
    srv: ServerId,
    conn: Connected<peer::Upstream>,
    /// Exchanges it carried.
    uses: u32,
    /// Its server's connection generation.
    gen: u32,
}

/// Where the exchanges of a sleeping session ([`lot`]) go on from.
pub struct Asleep {
    /// Requests served so far.
    count: u64,
    vars: Option<Box<Vars>>,
    /// Since when the client is idle (its deadline and `%Ti` count from it).
    idle_since: Instant,
    /// When the idle wait ends (`timeout http-keep-alive` or
    /// `http-request`).
    pub(crate) deadline: Option<Instant>,
    /// False once the lot refused it: the session stays awake.
    pub(crate) may_sleep: bool,
    /// Woken because the client sent (or closed).
    pub(crate) by_bytes: bool,
    /// How many times the client woke it by sending: each one doubles the
    /// idle time before the next sleep (see [`lot::sleep_after`]).
    pub(crate) naps: u8,
}

/// Serves HTTP/1.1 exchanges on `client` until it closes, an error ends
/// it, or a response requires closing. Every exchange is logged. Returns
/// the session's state when, idle for a while, it should go to sleep
/// ([`lot::sleep`]); the connection is then still open.
///
/// Not an `async fn`: the arguments go into the session at once, so the
/// task that waits on an idle client stores them only there.
pub fn serve<'a>(
    sh: &'a Arc<Shared>,
    fe_idx: FrontendId,
    client: Peer<'a>,
    acc: &'a Accepted,
    initial: Vec<u8>,
    accept_wall: Duration,
    vars: Vars,
) -> impl std::future::Future<Output = Option<Asleep>> + 'a {
    if let Some(s) = client.tcp().filter(|_| !acc.nodelay) {
        let _ = s.set_nodelay(true);
    }
    let mut ss = Session::new(sh, fe_idx, client, acc, accept_wall, &initial, 0, false);
    ss.arc = Some(sh);
    // The session's variables set by `tcp-request connection|session`.
    ss.vars = (!vars.is_empty()).then(|| Box::new(vars));
    run(ss, crate::clock::now())
}

/// Goes on with the exchanges of a session that slept (see [`serve`]).
pub(crate) fn wake<'a>(
    sh: &'a Arc<Shared>,
    fe_idx: FrontendId,
    client: Peer<'a>,
    acc: &'a Accepted,
    accept_wall: Duration,
    a: Asleep,
) -> impl std::future::Future<Output = Option<Asleep>> + 'a {
    let mut ss = Session::new(sh, fe_idx, client, acc, accept_wall, &[], a.count, false);
    ss.arc = Some(sh);
    ss.vars = a.vars;
    ss.may_sleep = a.may_sleep;
    ss.naps = a.naps;
    if let (true, Peer::Conn(c @ (Conn::Tcp(_) | Conn::Unix(_)))) = (a.by_bytes, client) {
        // The event loop has not seen the socket yet: its bytes are read
        // now rather than after another turn of it (nothing read: the
        // session waits as usual).
        let fd = std::os::fd::AsRawFd::as_raw_fd(c);
        let _ = ss
            .cbuf
            .try_fill_with(sh.bufsize, |d| crate::splice::read_fd(fd, d));
    }
    run(ss, a.idle_since)
}

/// Serves the one exchange of an HTTP/2 stream, whose request head (in
/// HTTP/1.1 form) is `head`. `ordinal` counts the connection's earlier
/// streams (for `http-reuse safe` and the log's request counter).
#[allow(clippy::too_many_arguments)]
pub async fn serve_stream(
    sh: &Shared,
    fe_idx: FrontendId,
    client: Peer<'_>,
    acc: &Accepted,
    head: Result<RequestHead, (H1Error, Vec<u8>)>,
    accept_wall: Duration,
    ordinal: u64,
    vars: Option<Box<Vars>>,
) {
    // A bad request's text stays in the buffer for the error capture.
    let (decoded, text) = match head {
        Ok(h) => (Ok(h), Vec::new()),
        Err((e, text)) => (Err(e), text),
    };
    let mut ss = Session::new(sh, fe_idx, client, acc, accept_wall, &text, ordinal, true);
    ss.decoded = Some(decoded);
    ss.vars = vars;
    // One turn, awaited in place: the stream's task boxes this future once
    // (the keep-alive loop of `run` would box each turn again).
    let idle_since = crate::clock::now();
    let head_timeout = timeouts(&ss).0;
    let turn = Turn {
        wait_deadline: head_timeout.map(|t| idle_since + t),
        head_timeout,
        first: true,
        idle_since,
    };
    ss.turn(turn).await;
    if let Some(h) = ss.held.take() {
        park(sh, *h);
    }
}

impl<'a> Session<'a> {
    /// A session whose first bytes are `initial`, `count` requests in
    /// (`single`: one exchange only, an HTTP/2 stream).
    #[allow(clippy::too_many_arguments)]
    fn new(
        sh: &'a Shared,
        fe_idx: FrontendId,
        client: Peer<'a>,
        acc: &'a Accepted,
        accept_wall: Duration,
        initial: &[u8],
        count: u64,
        single: bool,
    ) -> Session<'a> {
        Session {
            sh,
            fe_idx,
            client,
            acc,
            accept_wall,
            cbuf: Buf::with(initial, sh.bufsize),
            held: None,
            vars: None,
            count,
            single,
            may_sleep: true,
            naps: 0,
            decoded: None,
            last: None,
            arc: None,
        }
    }
}

/// The head timeouts of a session's frontend: (first request, keep-alive).
fn timeouts(ss: &Session<'_>) -> (Option<Duration>, Option<Duration>) {
    head_timeouts(ss.sh.proxy(ss.sh.frontend(ss.fe_idx).proxy))
}

/// The exchanges of one client connection, one turn at a time; returns
/// its state when it goes to sleep.
async fn run(mut ss: Session<'_>, mut idle_since: Instant) -> Option<Asleep> {
    let (sh, client) = (ss.sh, ss.client);
    // A session that woke sleeps again only after a while awake.
    let awake_since = crate::clock::now();
    loop {
        let first = ss.count == 0;
        let wait_deadline = {
            let (head, ka) = timeouts(&ss);
            if first { head } else { ka }.map(|t| idle_since + t)
        };
        if ss.cbuf.is_empty() && ss.decoded.is_none() {
            // Idle: only readiness, the deadline and a hard stop are
            // awaited here, with no timer of its own; an exchange's state
            // is allocated once bytes come. A soft stop does not close an
            // idle keep-alive connection, whose client may be sending a
            // request at that very moment: its next request is answered
            // with `Connection: close`, or it ends at its keep-alive
            // timeout (or `hard-stop-after`) as it would have anyway. Once
            // stopping, sessions stay awake (the lot wakes them all).
            let signal = &sh.killing;
            let sleep_at = (ss.can_sleep() && !*sh.stopping.borrow())
                .then(|| idle_since.max(awake_since) + lot::sleep_after(ss.naps));
            match idle::IdleWait::new(client, signal, wait_deadline, sleep_at).await {
                // An accepted socket is assumed readable before any event:
                // the first request is read once here, and waited for
                // again (asleep, maybe) if nothing is there yet. Under TLS
                // it is read in the exchange, as before (a TLS client
                // sleeps once it has made a request).
                idle::Woke::Readable if first && sleep_at.is_some() && client.is_plain() => {
                    let e = ss.cbuf.try_fill(client, sh.bufsize).err();
                    if e.is_some_and(|e| e.kind() == std::io::ErrorKind::WouldBlock) {
                        continue;
                    }
                }
                idle::Woke::Readable => {}
                // A client that has not read its last answer for so long
                // keeps its task (a sleeping socket holds no bytes).
                idle::Woke::Sleep if client.has_pending() => {
                    ss.may_sleep = false;
                    continue;
                }
                idle::Woke::Sleep => {
                    return Some(Asleep {
                        count: ss.count,
                        vars: ss.vars.take(),
                        idle_since,
                        deadline: wait_deadline,
                        may_sleep: true,
                        by_bytes: false,
                        naps: ss.naps,
                    })
                }
                // A first request that timed out still gets its 408 below.
                idle::Woke::Ended if !first || *sh.killing.borrow() => break,
                idle::Woke::Ended => {}
            }
            // `shutdown session` stops the socket's reading, which wakes it.
            if crate::sessions::is_killed(ss.acc.reg) {
                client.set_reset_on_close();
                break;
            }
        }
        let turn = Turn {
            wait_deadline,
            head_timeout: timeouts(&ss).0,
            first,
            idle_since,
        };
        // Boxed: an idle keep-alive connection carries none of this state.
        // A connection whose answer said keep-alive stays open, even if a
        // soft stop began since (its client may already be sending the
        // next request, which is answered with `Connection: close`).
        match crate::alloc::boxed(|| ss.turn(turn)).await {
            Some(true) if !ss.single => {}
            _ => break,
        }
        idle_since = crate::clock::now();
    }
    if let Some(h) = ss.held.take() {
        park(sh, *h);
    }
    // What the last answer left held is sent before the connection closes.
    if client.has_pending() {
        let t = sh.proxy(sh.frontend(ss.fe_idx).proxy).timeouts.client;
        let _ = io::timed(t, crate::conn::flush(&client)).await;
    }
    None
}

/// What a client connection keeps between its exchanges.
struct Session<'a> {
    sh: &'a Shared,
    fe_idx: FrontendId,
    client: Peer<'a>,
    acc: &'a Accepted,
    accept_wall: Duration,
    cbuf: Buf,
    /// Boxed: rare (`http-reuse never`), and kept out of idle sessions.
    held: Option<Box<Held>>,
    /// `sess.*` variables kept between exchanges (boxed: most sessions
    /// have none).
    vars: Option<Box<Vars>>,
    /// Requests served so far.
    count: u64,
    /// One exchange only (an HTTP/2 stream).
    single: bool,
    /// Whether it may sleep when idle (see [`lot`]).
    may_sleep: bool,
    /// See [`Asleep::naps`].
    naps: u8,
    /// The request an HTTP/2 stream brought, decoded already.
    decoded: Option<Result<RequestHead, H1Error>>,
    /// The server of its last exchange (`option prefer-last-server`, and
    /// a 401 or 407 keeps the next request there).
    last: Option<Last>,
    /// The shared state as a task can keep it: a connection whose first
    /// bytes are HTTP/2's preface goes on in HTTP/2 (none on a stream).
    arc: Option<&'a Arc<Shared>>,
}

/// Where a session's last exchange went, and what it answered.
#[derive(Debug, Clone, Copy)]
pub(super) struct Last {
    pub(super) be: crate::state::ProxyId,
    pub(super) srv: crate::state::ServerId,
    pub(super) status: i32,
}

impl Session<'_> {
    /// Whether the session, idle now, may go to sleep after a while: a
    /// socket (plain or TLS, nothing left to send), no server connection of its own (`http-reuse never`),
    /// and no stop under way.
    fn can_sleep(&self) -> bool {
        self.may_sleep
            && !self.single
            && self.held.is_none()
            && matches!(self.client, Peer::Conn(c) if lot::Plain::can_take(c))
            && !*self.sh.stopping.borrow()
            && lot::available()
    }
}

/// When and how the next request head is awaited.
struct Turn {
    wait_deadline: Option<Instant>,
    head_timeout: Option<Duration>,
    first: bool,
    idle_since: Instant,
}

impl<'a> Session<'a> {
    /// Reads the next request head and answers it, unless a hard stop
    /// comes first. `None` when the client left between requests;
    /// otherwise whether the connection stays open.
    async fn turn(&mut self, t: Turn) -> Option<bool> {
        let limits = &Limits {
            max_head: self.sh.bufsize,
            max_headers: self.sh.maxhdr,
            relaxed_target: self
                .sh
                .proxy(self.sh.frontend(self.fe_idx).proxy)
                .http
                .accept_invalid_request,
            any_method_payload: self.sh.cfg.global.h1_accept_payload_with_any_method,
        };
        let (sh, reg) = (self.sh, self.acc.reg);
        let client = self.client;
        let work = async {
            let mut first_byte: Option<Instant> = None;
            let end = match self.decoded.take() {
                Some(decoded) => {
                    first_byte = Some(crate::clock::now());
                    match decoded {
                        Ok(req) => HeadEnd::Head(req, 0),
                        Err(e) => HeadEnd::Invalid(e),
                    }
                }
                None => {
                    read_head(
                        client,
                        &mut self.cbuf,
                        limits.max_head,
                        limits,
                        t.wait_deadline,
                        t.head_timeout,
                        t.first,
                        &mut first_byte,
                    )
                    .await
                }
            };
            if matches!(end, HeadEnd::Idle) {
                return None;
            }
            // With no byte of a request, the whole wait is active time (no
            // idle time), as haproxy 2.6 logs a timed-out or empty
            // connection.
            let start = first_byte.unwrap_or(t.idle_since);
            // Boxed in place: moved into this future, its state (4.5 KB)
            // was copied once a request.
            Some(crate::alloc::boxed(|| self.handle(end, start, t.idle_since)).await)
        };
        tokio::select! {
            r = work => r,
            _ = crate::sessions::killed(sh, reg) => {
                client.set_reset_on_close();
                None
            }
        }
    }

    /// Answers what reading a head produced (an error page, or the
    /// exchange) and logs it. Returns whether the connection stays open.
    #[allow(clippy::manual_async_fn)] // as `exchange`
    fn handle<'s>(
        &'s mut self,
        mut end: HeadEnd,
        start: Instant,
        idle_since: Instant,
    ) -> impl std::future::Future<Output = bool> + use<'s, 'a> {
        // Not an `async fn`: its arguments would be kept twice (see
        // `exchange`).
        async move {
            let (sh, fe_idx, client, acc) = (self.sh, self.fe_idx, self.client, self.acc);
            let fe = sh.frontend(fe_idx);
            let req_wall = now_wall().saturating_sub(crate::clock::elapsed(start));
            let ti = ms(start.saturating_duration_since(idle_since));
            let mut rec = LogRecord {
                req_date: req_wall,
                t_req: -1,
                t_res: -1,
                ti,
                cookie_flags: *b"--",
                http: true,
                status: -1,
                request: "<BADREQ>",
                req_counter: self.count,
                ..crate::session::record(sh, fe_idx, acc, self.accept_wall)
            };
            if matches!(end, HeadEnd::H2Preface) {
                if let Some(h2) = self.h2_switch() {
                    h2.await;
                    return false;
                }
                end = HeadEnd::Invalid(H1Error::BadRequest("HTTP/2 preface on an HTTP/1.1 bind"));
            }
            if !matches!(end, HeadEnd::Head(..)) {
                return self.head_failed(end, start, ti, rec).await;
            }
            // The request stays where the head reader put it: the exchange
            // works on it there (a copy would be kept in every state).
            let HeadEnd::Head(req, used) = &mut end else {
                return false;
            };
            let used = *used;
            rec.t_req = ms(crate::clock::elapsed(start));
            rec.started = Some(start);
            let first = self.count == 0;
            self.count += 1;
            if client.is_h2() {
                req.minor = 2;
            }
            // What haproxy counts received for the head (its size before
            // any rule rewrites it; the body's bytes come on top).
            let head_size = weir_proto::h1::htx::request(req);
            let line = if fe.logger.is_empty() {
                String::new()
            } else {
                request_line(acc, req, self.sh.cfg.global.logurilen)
            };
            rec.request = &line;
            // The client address as `balance source` hashes it.
            let mut kb = [0u8; 16];
            let key = source_key(acc.peer.map(|p| p.ip()), &mut kb);
            // Boxed as the session keeps it: not carried in the exchange.
            let mut held = self.held.take();
            let mut vars = self
                .vars
                .take()
                .map(|v| *v)
                .unwrap_or_else(|| Vars::new(&sh.proc_vars));
            let out = exchange(
                sh,
                fe_idx,
                client,
                acc,
                key,
                &mut self.cbuf,
                req,
                used,
                &mut held,
                first,
                &mut rec,
                &mut vars,
                self.last,
            )
            .await;
            self.held = held;
            self.last = out.be.zip(out.srv).map(|(b, srv)| Last {
                be: b.proxy,
                srv,
                status: out.status,
            });
            rec.status = out.status;
            rec.term = out.term;
            // The head was read whatever came of it: answered locally,
            // denied or failed, it counts as received (haproxy's `bin`).
            rec.bytes_in = head_size + out.bytes_in;
            rec.bytes_out = out.bytes_out;
            rec.t_res = out.t_res;
            if let Some(be) = out.be {
                rec.beconn = be.conns.load(Ordering::Relaxed);
                if let Some(s) = out.srv.and_then(|i| be.server_at(i)) {
                    rec.srvconn = s.cur_conns.load(Ordering::Relaxed);
                }
            }
            rec.ta = ms(crate::clock::elapsed(start));
            rec.tt = rec.ta + ti;
            rec.failed_rewrites = vars.failed_rewrites;
            crate::stats::count(sh, fe_idx, out.be, out.srv, &rec, true);
            if !vars.track.is_empty() {
                rules::count_exchange(&vars.track, &rec);
            }
            if !out.nolog && !rec.logged {
                log_exchange(sh, fe_idx, &mut rec);
            }
            vars.end_exchange();
            if !vars.is_empty() {
                self.vars = Some(Box::new(vars));
            }
            let mut keep = out.keep_client && !out.tunnel;
            if !out.unsent.is_empty() {
                let timeout = sh.proxy(fe.proxy).timeouts.client;
                keep &= send(client, &out.unsent, timeout).await.is_ok();
            }
            keep
        }
    }

    /// A connection opened with HTTP/2's preface, where the bind allows it:
    /// HTTP/2 served on it from its first bytes, as `proto h2` would.
    fn h2_switch(&mut self) -> Option<impl std::future::Future<Output = ()> + use<'a>> {
        let (Some(sh), Peer::Conn(client)) = (self.arc, self.client) else {
            return None;
        };
        if !self.acc.bind.h2_upgrade || self.count != 0 || self.acc.switched == Some(false) {
            return None;
        }
        let initial = self.cbuf.bytes().to_vec();
        self.cbuf.consume(initial.len());
        let vars = self
            .vars
            .take()
            .map(|v| *v)
            .unwrap_or_else(|| Vars::new(&sh.proc_vars));
        let (fe_idx, acc, wall) = (self.fe_idx, self.acc, self.accept_wall);
        Some(Box::pin(crate::h2::serve(
            sh, fe_idx, client, acc, initial, wall, vars,
        )))
    }

    /// No request head came, or a bad one: the error page haproxy sends
    /// (none when the client left), kept for `show errors` when invalid,
    /// counted and logged. The connection closes.
    async fn head_failed(
        &mut self,
        fail: HeadEnd,
        start: Instant,
        ti: i64,
        mut rec: LogRecord<'_>,
    ) -> bool {
        let (sh, fe_idx) = (self.sh, self.fe_idx);
        let fe = sh.frontend(fe_idx);
        let fe_px = sh.proxy(fe.proxy);
        let nothing = matches!(fail, HeadEnd::Closed | HeadEnd::Timeout) && self.cbuf.is_empty();
        if nothing && fe_px.options.http_ignore_probes {
            // A browser's speculative connection: silently closed.
            return false;
        }
        let (status, term) = match &fail {
            HeadEnd::Timeout => (408, Term::new(Cause::ClientTimeout, State::Request)),
            HeadEnd::Closed => (400, Term::new(Cause::Client, State::Request)),
            HeadEnd::Invalid(e) => {
                // A client whose end came with its invalid head is the
                // one blamed (`CR`), as haproxy, which sees both at once.
                let gone = matches!(self.client, Peer::Conn(c) if c.peer_closed());
                let cause = if gone { Cause::Client } else { Cause::Proxy };
                (e.status(), Term::new(cause, State::Request))
            }
            _ => (0, Term::new(Cause::Client, State::Request)),
        };
        if let HeadEnd::Invalid(e) = &fail {
            let why = e.to_string();
            let bytes = self.cbuf.bytes();
            sh.errors
                .record(fe.proxy, false, None, self.acc.peer, why, bytes);
        }
        let page = (status != 0).then(|| errors::response(fe_px, status, true));
        if page.is_some() {
            rec.status = i32::from(status);
        }
        rec.term = term;
        rec.ta = ms(crate::clock::elapsed(start));
        rec.tt = rec.ta + ti;
        if !nothing {
            crate::stats::count(sh, fe_idx, None, None, &rec, true);
            if let Some(v) = &self.vars {
                v.track.count(weir_stick::Event::HttpReq);
                rules::count_exchange(&v.track, &rec);
            }
        }
        let quiet = nothing && fe_px.options.dontlognull;
        if !quiet && !fe.logger.is_empty() {
            // The line's samples see the connection (there is no request).
            let format = fe_px
                .error_log_format
                .as_ref()
                .or(fe_px.log_format.as_ref());
            if let Some(f) = format {
                let view = view::ExCtx {
                    src: self.acc.peer,
                    dst: self.acc.local,
                    tls: self.client.tls_info(),
                    bind: fe.binds.get(self.acc.bind.index).map(|b| &*b.info),
                    acc: Some(self.acc),
                    ..view::ExCtx::bare(sh, fe_idx)
                };
                rec.samples = crate::log::sample_values(f, &view);
            }
            log_as(sh, fe_idx, &mut rec, true);
        }
        // Sent once logged, as haproxy writes its line first.
        if let Some(page) = page {
            let _ = send(self.client, &page, fe_px.timeouts.client).await;
        }
        false
    }
}

/// The request line as the log shows it, cut to `max` bytes
/// (`tune.http.logurilen`); an HTTP/2 request in absolute form, as HAProxy
/// logs them.
fn request_line(acc: &Accepted, req: &RequestHead, max: usize) -> String {
    let mut line = full_request_line(acc, req);
    if line.len() > max {
        let mut end = max;
        while !line.is_char_boundary(end) {
            end -= 1;
        }
        line.truncate(end);
    }
    line
}

fn full_request_line(acc: &Accepted, req: &RequestHead) -> String {
    if req.minor != 2 {
        return format!("{} {} HTTP/1.{}", req.method, req.uri, req.minor);
    }
    let scheme = req.scheme.unwrap_or(if acc.bind.tls.is_some() {
        "https"
    } else {
        "http"
    });
    let host = req
        .headers
        .iter()
        .find(|h| h.is("host"))
        .map(|h| String::from_utf8_lossy(h.value()))
        .unwrap_or_default();
    format!("{} {scheme}://{host}{} HTTP/2.0", req.method, req.uri)
}

/// The client address as `balance source` hashes it (in `kb`).
fn source_key(ip: Option<IpAddr>, kb: &mut [u8; 16]) -> &[u8] {
    match ip {
        Some(IpAddr::V4(a)) => {
            kb[..4].copy_from_slice(&a.octets());
            &kb[..4]
        }
        Some(IpAddr::V6(a)) => {
            *kb = a.octets();
            &kb[..]
        }
        None => &[],
    }
}

/// Leaves a held server connection in the thread's idle pool.
pub(super) fn park(sh: &Shared, h: Held) {
    let Some(be) = sh.backend_of(h.be) else {
        return;
    };
    if sh.proxy(be.proxy).http.reuse == HttpReuse::Never
        || matches!(h.conn.conn, peer::Upstream::H2(_))
        || be
            .server_at(h.srv)
            .is_some_and(|s| s.dispatch || s.proxy_v2.unique_id)
    {
        // (A PROXY header naming one request serves no other.)
        return;
    }
    let srv = be.server_at(h.srv).map(|s| &s.conf);
    let slot = pool::Slot {
        be: h.be,
        srv: h.srv,
        max_per_server: srv.and_then(|s| s.pool_max_conn),
        purge_delay: srv.and_then(|s| s.pool_purge_delay),
        max_total: (sh.maxconn as usize / 4).max(64),
        gen: h.gen,
        key: h.conn.key,
    };
    let conn = match h.conn.conn {
        peer::Upstream::Conn(c) => c,
        peer::Upstream::Fcgi(f) => f.into_conn(),
        peer::Upstream::H2(_) => return,
    };
    pool::put(
        &slot,
        conn,
        h.conn.server_addr,
        h.conn.source_addr,
        h.uses > 1,
    );
}

/// `option logasap`: the exchange is logged once the response head went
/// to the client, with the total time and bytes so far (`+`); the line at
/// its end is not written.
pub(super) fn log_early(
    sh: &Shared,
    fe_idx: FrontendId,
    rec: &mut LogRecord<'_>,
    status: i32,
    bytes_out: u64,
    t_res: i64,
) {
    let Some(start) = rec.started else {
        return;
    };
    rec.status = status;
    rec.bytes_out = bytes_out;
    rec.t_res = t_res;
    rec.ta = ms(crate::clock::elapsed(start));
    rec.tt = rec.ta + rec.ti;
    rec.early = true;
    log_exchange(sh, fe_idx, rec);
    rec.early = false;
    rec.logged = true;
}

fn log_exchange(sh: &Shared, fe_idx: FrontendId, rec: &mut LogRecord<'_>) {
    log_as(sh, fe_idx, rec, false);
}

/// Logs an exchange in the frontend's format, or (`badreq`: a request that
/// never came whole) in its `error-log-format` when it has one, as
/// haproxy logs what ends before a stream exists.
fn log_as(sh: &Shared, fe_idx: FrontendId, rec: &mut LogRecord<'_>, badreq: bool) {
    let fe = sh.frontend(fe_idx);
    if fe.logger.is_empty() {
        return;
    }
    let px = sh.proxy(fe.proxy);
    rec.actconn = sh.actconn.load(Ordering::Relaxed);
    rec.feconn = fe.conns.load(Ordering::Relaxed);
    let normal = rec.term.is_normal() && rec.status < 500;
    if px.options.dontlog_normal && normal {
        return;
    }
    let lvl = if px.options.log_separate_errors && !normal {
        level::ERR
    } else {
        level::INFO
    };
    let error_format = px.error_log_format.as_ref().filter(|_| badreq);
    if let Some(f) = error_format.or(px.log_format.as_ref()) {
        let sd = px.log_format_sd.as_ref().map(|sd| render(sd, rec));
        fe.logger.send_sd(lvl, &render(f, rec), sd.as_deref());
    }
}
