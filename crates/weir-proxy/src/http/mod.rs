//! `mode http` over HTTP/1.1: one client connection carries a series of
//! exchanges (keep-alive, pipelining); each request is read and checked by
//! the strict codec, balanced on its own, sent over an idle or new server
//! connection, and its response streamed back; then the exchange is logged
//! with HAProxy's `httplog` fields and the connection kept or closed.

mod errors;
mod head;
mod io;
pub mod pool;
pub mod rules;

use crate::conn::Conn;
use crate::connect::{self, Attempts, ConnectFail, Connected};
use crate::forward::{Duplex, End, FwdOptions, FwdTimeouts};
use crate::log::{level, render, LogRecord};
use crate::session::Accepted;
use crate::state::{BackendRt, Shared};
use io::{send, timed, transfer, Buf, XferError, XferTimeouts};
use rules::{ExCtx, Local, Vars, Verdict};
use std::net::IpAddr;
use std::sync::atomic::Ordering;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::time::Instant;
use weir_config::{HttpConnMode, HttpReuse, Proxy};
use weir_proto::h1::{self, Framing, H1Error, Header, Limits, RequestHead, ResponseHead};

fn ms(d: Duration) -> i64 {
    d.as_millis() as i64
}

fn now_wall() -> Duration {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
}

/// A server connection kept by a client session between exchanges
/// (`http-reuse never`), or on its way to the idle pool.
struct Held {
    be: usize,
    srv: usize,
    conn: Connected,
    /// Exchanges it carried.
    uses: u32,
}

/// A server slot taken from the balancer for one exchange; given back when
/// dropped, whatever ends the exchange.
struct SrvSlot<'a> {
    be: &'a BackendRt,
    srv: usize,
}

impl Drop for SrvSlot<'_> {
    fn drop(&mut self) {
        self.be.release(self.srv);
    }
}

/// Why reading a request head stopped.
enum HeadEnd {
    Head(RequestHead, usize),
    /// The client left (or the keep-alive wait expired) between requests.
    Idle,
    /// `timeout http-request` expired on a partial or missing request: 408.
    Timeout,
    /// The client closed in the middle of a head, or sent nothing: 400.
    Closed,
    /// A read error: nothing can be answered.
    Error,
    Invalid(H1Error),
}

/// Settings of one frontend/backend pair, resolved once per exchange.
struct Plan<'a> {
    fe: &'a Proxy,
    be: &'a Proxy,
}

/// What one exchange produced for the log line.
struct Outcome<'r> {
    /// The backend and server used, to log their connection counts.
    be: Option<&'r BackendRt>,
    srv: Option<usize>,
    status: i32,
    term: [u8; 2],
    bytes_in: u64,
    bytes_out: u64,
    t_res: i64,
    keep_client: bool,
    tunnel: bool,
}

impl Outcome<'_> {
    fn error(status: u16, term: &[u8; 2]) -> Self {
        Outcome {
            be: None,
            srv: None,
            status: i32::from(status),
            term: *term,
            bytes_in: 0,
            bytes_out: 0,
            t_res: -1,
            keep_client: false,
            tunnel: false,
        }
    }
}

/// The timeout for a complete request head, and for the wait before one
/// on a kept-alive connection (HAProxy's fallbacks).
fn head_timeouts(fe: &Proxy) -> (Option<Duration>, Option<Duration>) {
    let t = &fe.timeouts;
    let req = t.http_request.or(t.client);
    let ka = t.http_keep_alive.or(t.http_request).or(t.client);
    (req, ka)
}

#[allow(clippy::too_many_arguments)]
async fn read_head(
    client: &Conn,
    buf: &mut Buf,
    size: usize,
    limits: &Limits,
    wait_deadline: Option<Instant>,
    head_timeout: Option<Duration>,
    first: bool,
    first_byte: &mut Option<Instant>,
) -> HeadEnd {
    loop {
        if !buf.is_empty() {
            let at = *first_byte.get_or_insert_with(Instant::now);
            match h1::parse_request(buf.bytes(), limits) {
                Ok(Some((req, used))) => return HeadEnd::Head(req, used),
                Ok(None) if buf.is_full() => {
                    return HeadEnd::Invalid(H1Error::HeadersTooLarge);
                }
                Ok(None) => {}
                Err(e) => return HeadEnd::Invalid(e),
            }
            let deadline = head_timeout.map(|t| at + t);
            let r = match deadline {
                Some(d) => tokio::time::timeout_at(d, buf.fill(client, size))
                    .await
                    .ok(),
                None => Some(buf.fill(client, size).await),
            };
            match r {
                None => return HeadEnd::Timeout,
                Some(Ok(0)) => return HeadEnd::Closed,
                Some(Ok(_)) => {}
                Some(Err(_)) => return HeadEnd::Error,
            }
        } else {
            let r = match wait_deadline {
                Some(d) => tokio::time::timeout_at(d, buf.fill(client, size))
                    .await
                    .ok(),
                None => Some(buf.fill(client, size).await),
            };
            match r {
                None if first => return HeadEnd::Timeout,
                Some(Ok(0)) if first => return HeadEnd::Closed,
                None | Some(Ok(0)) => return HeadEnd::Idle,
                Some(Ok(_)) => {}
                Some(Err(_)) if first => return HeadEnd::Error,
                Some(Err(_)) => return HeadEnd::Idle,
            }
        }
    }
}

/// Adds `X-Forwarded-For` (or the configured name) as `option forwardfor`
/// asks. Returns whether the head changed.
fn forwardfor(plan: &Plan<'_>, req: &mut RequestHead, peer: Option<IpAddr>) -> bool {
    let Some(ip) = peer else { return false };
    let mut changed = false;
    let mut done: Vec<&str> = Vec::new();
    for px in [plan.fe, plan.be] {
        let Some(ff) = &px.http.forwardfor else {
            continue;
        };
        if done.iter().any(|h| h.eq_ignore_ascii_case(&ff.header)) {
            continue;
        }
        done.push(&ff.header);
        if ff
            .except
            .is_some_and(|(n, len)| weir_rules::matching::in_net(ip, n, len))
        {
            continue;
        }
        if ff.if_none && head::get(&req.headers, &ff.header).is_some() {
            continue;
        }
        req.headers.push(Header {
            name: ff.header.clone(),
            value: ip.to_string().into_bytes(),
        });
        changed = true;
    }
    changed
}

/// Serves HTTP/1.1 exchanges on `client` until it closes, an error ends
/// it, or a response requires closing. Every exchange is logged.
pub async fn serve(
    sh: &Shared,
    fe_idx: usize,
    client: &Conn,
    acc: &Accepted,
    initial: Vec<u8>,
    accept_wall: Duration,
) {
    let fe = &sh.frontends[fe_idx];
    let fe_px = &sh.cfg.proxies[fe.proxy];
    let size = sh.bufsize;
    let limits = Limits {
        max_head: size,
        ..Limits::default()
    };
    if let Conn::Tcp(s) = client {
        let _ = s.set_nodelay(true);
    }
    let (head_timeout, ka_timeout) = head_timeouts(fe_px);
    let mut stop = sh.stopping.subscribe();
    let mut ss = Session {
        sh,
        fe_idx,
        client,
        acc,
        accept_wall,
        cbuf: Buf::with(&initial, size),
        held: None,
        vars: Vars::default(),
        key: match acc.peer.map(|p| p.ip()) {
            Some(IpAddr::V4(a)) => a.octets().to_vec(),
            Some(IpAddr::V6(a)) => a.octets().to_vec(),
            None => Vec::new(),
        },
        count: 0,
    };
    drop(initial);
    let mut idle_since = Instant::now();
    loop {
        let first = ss.count == 0;
        let wait = if first { head_timeout } else { ka_timeout };
        let wait_deadline = wait.map(|t| idle_since + t);
        let mut first_byte: Option<Instant> = None;
        let end = tokio::select! {
            e = read_head(client, &mut ss.cbuf, size, &limits, wait_deadline, head_timeout, first, &mut first_byte) => e,
            _ = stop.wait_for(|s| *s), if !first && ss.cbuf.is_empty() => HeadEnd::Idle,
        };
        if matches!(end, HeadEnd::Idle) {
            break;
        }
        let start = first_byte.unwrap_or_else(Instant::now);
        // Boxed: an idle keep-alive connection carries none of this state.
        let keep = Box::pin(ss.handle(end, start, idle_since)).await;
        if !keep || *stop.borrow() {
            break;
        }
        idle_since = Instant::now();
    }
    if let Some(h) = ss.held.take() {
        park(sh, h);
    }
}

/// What a client connection keeps between its exchanges.
struct Session<'a> {
    sh: &'a Shared,
    fe_idx: usize,
    client: &'a Conn,
    acc: &'a Accepted,
    accept_wall: Duration,
    cbuf: Buf,
    held: Option<Held>,
    vars: Vars,
    /// The client address as `balance source` hashes it.
    key: Vec<u8>,
    /// Requests served so far.
    count: u64,
}

impl Session<'_> {
    /// Answers what reading a head produced (an error page, or the
    /// exchange) and logs it. Returns whether the connection stays open.
    async fn handle(&mut self, end: HeadEnd, start: Instant, idle_since: Instant) -> bool {
        let (sh, fe_idx, client, acc) = (self.sh, self.fe_idx, self.client, self.acc);
        let fe = &sh.frontends[fe_idx];
        let fe_px = &sh.cfg.proxies[fe.proxy];
        let req_wall = now_wall().saturating_sub(start.elapsed());
        let ti = ms(start.saturating_duration_since(idle_since));
        let mut rec = LogRecord {
            client: acc.peer,
            frontend_addr: acc.local,
            frontend: &fe.name,
            backend: &fe.name,
            accept: self.accept_wall,
            req_date: req_wall,
            tw: -1,
            tc: -1,
            t_req: -1,
            t_res: -1,
            ti,
            term: *b"--",
            cookie_flags: *b"--",
            hostname: &sh.hostname,
            http: true,
            status: -1,
            request: "<BADREQ>",
            req_counter: self.count,
            ..LogRecord::default()
        };
        let (req, used) = match end {
            HeadEnd::Head(r, u) => (r, u),
            fail => {
                let (status, term) = match fail {
                    HeadEnd::Timeout => (408, b"cR"),
                    HeadEnd::Closed => (400, b"CR"),
                    HeadEnd::Invalid(e) => (e.status(), b"PR"),
                    _ => (0, b"CR"),
                };
                if status != 0 {
                    let page = errors::response(fe_px, status, true);
                    let _ = send(client, &page, fe_px.timeouts.client).await;
                    rec.status = i32::from(status);
                }
                rec.term = *term;
                rec.ta = ms(start.elapsed());
                rec.tt = rec.ta + ti;
                let nothing =
                    matches!(fail, HeadEnd::Closed | HeadEnd::Timeout) && self.cbuf.is_empty();
                if !(nothing && fe_px.options.dontlognull) {
                    log_exchange(sh, fe_idx, &mut rec);
                }
                return false;
            }
        };
        rec.t_req = ms(start.elapsed());
        let first = self.count == 0;
        self.count += 1;
        let line = if fe.logger.is_empty() {
            String::new()
        } else {
            format!("{} {} HTTP/1.{}", req.method, req.uri, req.minor)
        };
        rec.request = &line;
        let out = exchange(
            sh,
            fe_idx,
            client,
            acc,
            &self.key,
            &mut self.cbuf,
            req,
            used,
            &mut self.held,
            first,
            &mut rec,
            &mut self.vars,
        )
        .await;
        rec.status = out.status;
        rec.term = out.term;
        rec.bytes_in = out.bytes_in;
        rec.bytes_out = out.bytes_out;
        rec.t_res = out.t_res;
        if let Some(be) = out.be {
            rec.beconn = be.conns.load(Ordering::Relaxed);
            if let Some(s) = out.srv.and_then(|i| be.servers.get(i)) {
                rec.srvconn = s.cur_conns.load(Ordering::Relaxed);
            }
        }
        rec.ta = ms(start.elapsed());
        rec.tt = rec.ta + ti;
        log_exchange(sh, fe_idx, &mut rec);
        self.vars.end_exchange();
        out.keep_client && !out.tunnel
    }
}

/// Leaves a held server connection in the thread's idle pool.
fn park(sh: &Shared, h: Held) {
    let Some(be) = sh.backends.iter().find(|b| b.proxy == h.be) else {
        return;
    };
    if sh.cfg.proxies[be.proxy].http.reuse == HttpReuse::Never {
        return;
    }
    let slot = pool::Slot {
        be: h.be,
        srv: h.srv,
        max_per_server: None,
        max_total: (sh.maxconn as usize / 4).max(64),
    };
    pool::put(
        &slot,
        h.conn.conn,
        h.conn.server_addr,
        h.conn.source_addr,
        h.uses > 1,
    );
}

fn log_exchange(sh: &Shared, fe_idx: usize, rec: &mut LogRecord<'_>) {
    let fe = &sh.frontends[fe_idx];
    if fe.logger.is_empty() {
        return;
    }
    let px = &sh.cfg.proxies[fe.proxy];
    rec.actconn = sh.actconn.load(Ordering::Relaxed);
    rec.feconn = fe.conns.load(Ordering::Relaxed);
    let normal = &rec.term == b"--" && rec.status < 500;
    if px.options.dontlog_normal && normal {
        return;
    }
    if let Some(f) = &px.log_format {
        fe.logger.send(level::INFO, &render(f, rec));
    }
}

/// One request/response exchange after the request head was read.
#[allow(clippy::too_many_arguments)]
async fn exchange<'r>(
    sh: &'r Shared,
    fe_idx: usize,
    client: &Conn,
    acc: &Accepted,
    key: &[u8],
    cbuf: &mut Buf,
    mut req: RequestHead,
    used: usize,
    held: &mut Option<Held>,
    first: bool,
    rec: &mut LogRecord<'r>,
    vars: &mut Vars,
) -> Outcome<'r> {
    let fe = &sh.frontends[fe_idx];
    let fe_px = &sh.cfg.proxies[fe.proxy];
    let size = sh.bufsize;
    let mut dirty = req.close_after;
    let mut tmpl = ExCtx {
        sh,
        fe_idx,
        be: None,
        src: acc.peer,
        dst: acc.local,
        req: None,
        res: None,
        srv: None,
        first,
        vars: None,
    };
    // The frontend's rules, the backend choice, the backend's rules.
    let mut verdict = rules::run_request(
        &fe_px.http_request,
        fe_px,
        &mut req,
        vars,
        &tmpl,
        &mut dirty,
    );
    if matches!(verdict, Verdict::Continue) {
        verdict = rules::run_request(&fe_px.redirects, fe_px, &mut req, vars, &tmpl, &mut dirty);
    }
    let chosen = if matches!(verdict, Verdict::Continue) {
        let ctx = ExCtx {
            req: Some(&req),
            vars: Some(vars),
            ..tmpl
        };
        sh.select_backend(fe_idx, &ctx)
    } else {
        None
    };
    if let Some(be) = chosen.filter(|b| b.proxy != fe.proxy) {
        let be_px = &sh.cfg.proxies[be.proxy];
        tmpl.be = Some(be);
        verdict = rules::run_request(
            &be_px.http_request,
            be_px,
            &mut req,
            vars,
            &tmpl,
            &mut dirty,
        );
        if matches!(verdict, Verdict::Continue) {
            verdict =
                rules::run_request(&be_px.redirects, be_px, &mut req, vars, &tmpl, &mut dirty);
        }
    }
    match verdict {
        Verdict::Continue => {}
        Verdict::Respond(local) => {
            return answer_local(client, fe_px, cbuf, used, &req, local).await
        }
        Verdict::Tarpit(status) => {
            let t = fe_px
                .timeouts
                .tarpit
                .or(fe_px.timeouts.connect)
                .unwrap_or(Duration::ZERO);
            tokio::time::sleep(t).await;
            let local = Local {
                bytes: errors::response(fe_px, status, false),
                status,
                term: *b"PT",
                keep: false,
            };
            return answer_local(client, fe_px, cbuf, used, &req, local).await;
        }
    }
    let Some(be) = chosen else {
        cbuf.consume(used);
        let page = errors::response(fe_px, 503, false);
        let _ = send(client, &page, fe_px.timeouts.client).await;
        return Outcome::error(503, b"SC");
    };
    let be_px = &sh.cfg.proxies[be.proxy];
    tmpl.be = Some(be);
    rec.backend = &be.name;
    let mode = fe_px.http.conn_mode.max_with(be_px.http.conn_mode);
    let plan = Plan {
        fe: fe_px,
        be: be_px,
    };
    // The head as the server gets it.
    dirty |= forwardfor(&plan, &mut req, acc.peer.map(|p| p.ip()));
    let server_close = mode != HttpConnMode::KeepAlive || !req.keep_alive;
    if mode != HttpConnMode::KeepAlive && !head::connection_has(&req.headers, "close") {
        head::set_connection(&mut req.headers, Some("close"));
        dirty = true;
    }
    let head_bytes: Vec<u8> = if dirty {
        head::request(&req)
    } else {
        Vec::new()
    };
    let body_framing = req.framing;
    // Bytes of the body already read, sent with the head.
    let early_body = match body_framing {
        Framing::ContentLength(n) => (cbuf.bytes().len() - used).min(n as usize),
        _ => 0,
    };

    let reuse_policy = be_px.http.reuse;
    let mut tries = 0;
    loop {
        tries += 1;
        let mut attempts = Attempts::default();
        let mut reused: Option<u32> = None;
        let be_key = be.proxy;
        let allow_pool = tries == 1
            && match reuse_policy {
                HttpReuse::Never => false,
                HttpReuse::Safe => !first,
                HttpReuse::Aggressive | HttpReuse::Always => true,
            };
        let proven_only = first && reuse_policy == HttpReuse::Aggressive;
        let connected = {
            let mut reuse = |srv: usize| -> Option<Connected> {
                if tries > 1 {
                    return None;
                }
                if let Some(h) = held.take() {
                    if h.be == be_key && h.srv == srv {
                        if !pool::alive(&h.conn.conn) {
                            return None;
                        }
                        reused = Some(h.uses);
                        return Some(h.conn);
                    }
                    *held = Some(h);
                }
                if !allow_pool {
                    return None;
                }
                pool::take(be_key, srv, proven_only).map(|c| {
                    reused = Some(if c.proven { 2 } else { 1 });
                    Connected {
                        srv,
                        conn: c.conn,
                        server_addr: c.server_addr,
                        source_addr: c.source_addr,
                    }
                })
            };
            connect::connect(be, be_px, key, acc.local, &mut attempts, &mut reuse).await
        };
        if let Some(h) = held.take() {
            park(sh, h);
        }
        rec.retries = attempts.retries;
        rec.redispatched = attempts.redispatched;
        rec.srv_queue = attempts.srv_queue;
        rec.be_queue = attempts.be_queue;
        rec.tw = ms(attempts.tw);
        rec.beconn = be.conns.load(Ordering::Relaxed);
        let srv_name =
            |i: Option<usize>| i.and_then(|i| be.servers.get(i)).map(|s| s.name.as_str());
        let conn = match connected {
            Ok(c) => c,
            Err(fail) => {
                rec.server = srv_name(attempts.last_srv);
                cbuf.consume(used + early_body);
                let status = match fail {
                    ConnectFail::ClientAbort { .. } => 0,
                    _ => 503,
                };
                if status != 0 {
                    let page = errors::response(be_px, status, false);
                    let _ = send(client, &page, fe_px.timeouts.client).await;
                }
                let mut o = Outcome::error(status, &fail.term());
                o.status = if status == 0 { -1 } else { o.status };
                return o;
            }
        };
        let slot = SrvSlot { be, srv: conn.srv };
        rec.server = srv_name(Some(conn.srv));
        rec.tc = attempts.tc.map_or(-1, ms);
        rec.srvconn = be.servers[conn.srv].cur_conns.load(Ordering::Relaxed);
        rec.server_addr = conn.server_addr;
        rec.source_addr = conn.source_addr;
        if reused.is_none() {
            if let Conn::Tcp(s) = &conn.conn {
                let _ = s.set_nodelay(true);
            }
        }
        let sconn = &conn.conn;
        let t_srv = XferTimeouts {
            read: fe_px.timeouts.client,
            write: be_px.timeouts.server,
        };

        // Head (with the body bytes already read) in one write.
        let sent_head = if dirty {
            let mut b = head_bytes.clone();
            b.extend_from_slice(&cbuf.bytes()[used..used + early_body]);
            send(sconn, &b, be_px.timeouts.server).await
        } else {
            send(
                sconn,
                &cbuf.bytes()[..used + early_body],
                be_px.timeouts.server,
            )
            .await
        };
        let head_len = if dirty { head_bytes.len() } else { used };
        let sent_at = Instant::now();
        if sent_head.is_err() {
            if reused.is_some() && tries == 1 {
                // The idle connection died under us: try a new one.
                drop(slot);
                continue;
            }
            cbuf.consume(used + early_body);
            let page = errors::response(be_px, 502, false);
            let _ = send(client, &page, fe_px.timeouts.client).await;
            return Outcome::error(502, b"SH");
        }
        cbuf.consume(used + early_body);
        let mut bytes_in = (head_len + early_body) as u64;
        let rest_framing = match body_framing {
            Framing::ContentLength(n) => Framing::ContentLength(n - early_body as u64),
            f => f,
        };

        // The body goes up while the response head is awaited (a server may
        // answer `100 Continue` first, or answer early).
        let mut sbuf = Buf::default();
        let no_body = matches!(rest_framing, Framing::None | Framing::Tunnel)
            || rest_framing == Framing::ContentLength(0);
        let (up, resp) = if no_body {
            let r = read_response(client, sconn, &mut sbuf, size, &req.method, be_px, fe_px).await;
            (Ok(0), r)
        } else {
            // Both at once; a body that fails on the client's side ends
            // the wait for a response that cannot come.
            let up_fut = transfer(client, cbuf, sconn, rest_framing, size, t_srv, true);
            let resp_fut = read_response(client, sconn, &mut sbuf, size, &req.method, be_px, fe_px);
            tokio::pin!(up_fut, resp_fut);
            let (mut up, mut resp) = (None, None);
            while up.is_none() || resp.is_none() {
                tokio::select! {
                    r = &mut up_fut, if up.is_none() => {
                        let client_failed = matches!(&r, Err(e) if *e != XferError::DstError);
                        up = Some(r);
                        if client_failed {
                            break;
                        }
                    }
                    r = &mut resp_fut, if resp.is_none() => resp = Some(r),
                }
            }
            (up.unwrap_or(Ok(0)), resp.unwrap_or(Err(RespFail::Closed)))
        };
        match up {
            Ok(n) => bytes_in += n,
            Err(e) => {
                let (status, term): (u16, &[u8; 2]) = match e {
                    XferError::Invalid(e) => (e.status(), b"PD"),
                    XferError::SrcTimeout => (408, b"cD"),
                    XferError::SrcClosed | XferError::SrcError => (400, b"CD"),
                    XferError::DstError => (502, b"SD"),
                    XferError::DstTimeout => (504, b"sD"),
                };
                if resp.is_err() || !matches!(e, XferError::DstError) {
                    if !matches!(e, XferError::SrcClosed | XferError::SrcError) {
                        let page = errors::response(be_px, status, false);
                        let _ = send(client, &page, fe_px.timeouts.client).await;
                    }
                    sconn.set_reset_on_close();
                    let mut o = Outcome::error(status, term);
                    o.bytes_in = bytes_in;
                    return o;
                }
            }
        }
        let (mut res, rused) = match resp {
            Ok(r) => r,
            Err(RespFail::Empty)
                if reused.is_some() && tries == 1 && body_framing == Framing::None =>
            {
                drop(slot);
                continue;
            }
            Err(f) => {
                let (status, term): (u16, &[u8; 2]) = match f {
                    RespFail::Timeout => (504, b"sH"),
                    RespFail::Invalid => (502, b"PH"),
                    RespFail::Empty | RespFail::Closed => (502, b"SH"),
                    RespFail::ClientGone => (0, b"CH"),
                };
                if status != 0 {
                    let page = errors::response(be_px, status, false);
                    let _ = send(client, &page, fe_px.timeouts.client).await;
                }
                let mut o = Outcome::error(status, term);
                o.status = if status == 0 { -1 } else { o.status };
                o.bytes_in = bytes_in;
                o.t_res = ms(sent_at.elapsed());
                return o;
            }
        };
        let t_res = ms(sent_at.elapsed());
        let mut rdirty = false;
        let rtmpl = ExCtx {
            req: Some(&req),
            srv: rec.server,
            ..tmpl
        };
        let mut replaced: Option<Local> = None;
        let mut order = vec![be_px];
        if be.proxy != fe.proxy {
            order.push(fe_px);
        }
        for list in [0, 1] {
            for px in &order {
                if replaced.is_none() {
                    let rules = if list == 0 {
                        &px.http_response
                    } else {
                        &px.http_after_response
                    };
                    replaced = rules::run_response(rules, px, &mut res, vars, &rtmpl, &mut rdirty);
                }
            }
        }
        if let Some(local) = replaced {
            // The server's answer is dropped, and its connection with it.
            sconn.set_reset_on_close();
            let mut o = answer_local(client, fe_px, &mut Buf::default(), 0, &req, local).await;
            o.bytes_in = bytes_in;
            o.t_res = t_res;
            o.keep_client = false;
            return o;
        }

        // Connection management on both sides.
        let tunnel = res.framing == Framing::Tunnel;
        let keep_client = req.keep_alive
            && mode != HttpConnMode::Close
            && res.framing != Framing::UntilClose
            && !*sh.stopping.borrow();
        let keep_server = !server_close && res.keep_alive && !tunnel;
        if !tunnel {
            let (has_close, has_ka) = (
                head::connection_has(&res.headers, "close"),
                head::connection_has(&res.headers, "keep-alive"),
            );
            if req.minor >= 1 {
                if keep_client && has_close {
                    head::set_connection(&mut res.headers, None);
                    rdirty = true;
                } else if !keep_client && !has_close {
                    head::set_connection(&mut res.headers, Some("close"));
                    rdirty = true;
                }
            } else if keep_client && !has_ka {
                head::set_connection(&mut res.headers, Some("keep-alive"));
                rdirty = true;
            } else if !keep_client && has_ka {
                head::set_connection(&mut res.headers, Some("close"));
                rdirty = true;
            }
        }
        let early = match res.framing {
            Framing::ContentLength(n) => (sbuf.bytes().len() - rused).min(n as usize),
            _ => 0,
        };
        let sent = if rdirty {
            let mut b = head::response(&res);
            let n = b.len();
            b.extend_from_slice(&sbuf.bytes()[rused..rused + early]);
            send(client, &b, fe_px.timeouts.client).await.map(|_| n)
        } else {
            send(
                client,
                &sbuf.bytes()[..rused + early],
                fe_px.timeouts.client,
            )
            .await
            .map(|_| rused)
        };
        sbuf.consume(rused + early);
        let mut out = Outcome {
            be: Some(be),
            srv: Some(conn.srv),
            status: i32::from(res.status),
            term: *b"--",
            bytes_in,
            bytes_out: 0,
            t_res,
            keep_client,
            tunnel,
        };
        match sent {
            Ok(n) => out.bytes_out = (n + early) as u64,
            Err(e) => {
                out.term = if e == XferError::DstTimeout {
                    *b"cD"
                } else {
                    *b"CD"
                };
                out.keep_client = false;
                sconn.set_reset_on_close();
                return out;
            }
        }
        if tunnel {
            let leftover = sbuf.bytes().to_vec();
            sbuf.consume(leftover.len());
            if !leftover.is_empty()
                && send(client, &leftover, fe_px.timeouts.client)
                    .await
                    .is_err()
            {
                out.term = *b"CD";
                return out;
            }
            let initial = cbuf.bytes().to_vec();
            cbuf.consume(initial.len());
            let t = FwdTimeouts {
                client: fe_px.timeouts.client,
                server: be_px.timeouts.server,
                client_fin: fe_px.timeouts.client_fin,
                server_fin: be_px.timeouts.server_fin,
                tunnel: be_px.timeouts.tunnel,
            };
            let opts = FwdOptions {
                bufsize: size,
                splice_request: false,
                splice_response: false,
                pipesize: sh.pipesize,
            };
            let r = Duplex::new(client, sconn, t, opts, &initial, false).await;
            out.bytes_in += r.client_to_server;
            out.bytes_out += r.server_to_client + leftover.len() as u64;
            out.term = match r.end {
                End::Done => *b"--",
                End::ClientTimeout => *b"cD",
                End::ServerTimeout => *b"sD",
                End::ClientError => *b"CD",
                End::ServerError => *b"SD",
            };
            return out;
        }
        let rest = match res.framing {
            Framing::ContentLength(n) => Framing::ContentLength(n - early as u64),
            f => f,
        };
        let t_cli = XferTimeouts {
            read: be_px.timeouts.server,
            write: fe_px.timeouts.client,
        };
        match transfer(sconn, &mut sbuf, client, rest, size, t_cli, false).await {
            Ok(n) => out.bytes_out += n,
            Err(e) => {
                out.term = match e {
                    XferError::SrcTimeout => *b"sD",
                    XferError::SrcClosed | XferError::SrcError | XferError::Invalid(_) => *b"SD",
                    XferError::DstTimeout => *b"cD",
                    XferError::DstError => *b"CD",
                };
                out.keep_client = false;
                if matches!(e, XferError::DstError | XferError::DstTimeout) {
                    sconn.set_reset_on_close();
                }
                return out;
            }
        }
        if keep_server && sbuf.is_empty() {
            let h = Held {
                be: be.proxy,
                srv: conn.srv,
                uses: reused.unwrap_or(0) + 1,
                conn,
            };
            // The connection goes back to the thread's idle pool, where
            // this client's next request (or another's) finds it; an idle
            // client holds none. `http-reuse never` keeps it private.
            if reuse_policy == HttpReuse::Never && out.keep_client {
                *held = Some(h);
            } else {
                park(sh, h);
            }
        }
        drop(slot);
        return out;
    }
}

/// Sends a response weir made (deny, return, redirect, tarpit) in place of
/// the server's. A request body is not read: the connection closes then.
async fn answer_local<'r>(
    client: &Conn,
    fe_px: &Proxy,
    cbuf: &mut Buf,
    used: usize,
    req: &RequestHead,
    local: Local,
) -> Outcome<'r> {
    let keep = local.keep && req.keep_alive && req.framing == Framing::None;
    cbuf.consume(used);
    let mut bytes = local.bytes;
    if !keep {
        // Tell the client the connection ends here.
        if let Some(end) = bytes.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&bytes[..end]).to_ascii_lowercase();
            if !head.contains("\r\nconnection:") {
                bytes.splice(end + 2..end + 2, b"connection: close\r\n".iter().copied());
            }
        }
    }
    let sent = send(client, &bytes, fe_px.timeouts.client).await;
    Outcome {
        be: None,
        srv: None,
        status: i32::from(local.status),
        term: if sent.is_ok() { local.term } else { *b"CD" },
        bytes_in: 0,
        bytes_out: bytes.len() as u64,
        t_res: -1,
        keep_client: keep && sent.is_ok(),
        tunnel: false,
    }
}

/// Why no response head came.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RespFail {
    /// The server closed before sending anything.
    Empty,
    /// The server closed in the middle of a head.
    Closed,
    Timeout,
    Invalid,
    /// Writing an interim response to the client failed.
    ClientGone,
}

/// Reads the final response head (interim `1xx` responses are passed to
/// the client as they come).
async fn read_response(
    client: &Conn,
    sconn: &Conn,
    sbuf: &mut Buf,
    size: usize,
    method: &str,
    be_px: &Proxy,
    fe_px: &Proxy,
) -> Result<(ResponseHead, usize), RespFail> {
    let limits = Limits {
        max_head: size,
        ..Limits::default()
    };
    let mut got_any = false;
    loop {
        if !sbuf.is_empty() {
            got_any = true;
            match h1::parse_response(sbuf.bytes(), &limits, method) {
                Ok(Some((res, used))) if (100..200).contains(&res.status) && res.status != 101 => {
                    let interim = sbuf.bytes()[..used].to_vec();
                    sbuf.consume(used);
                    if send(client, &interim, fe_px.timeouts.client).await.is_err() {
                        return Err(RespFail::ClientGone);
                    }
                    continue;
                }
                Ok(Some(r)) => return Ok(r),
                Ok(None) if sbuf.is_full() => return Err(RespFail::Invalid),
                Ok(None) => {}
                Err(_) => return Err(RespFail::Invalid),
            }
        }
        match timed(be_px.timeouts.server, sbuf.fill(sconn, size)).await {
            None => return Err(RespFail::Timeout),
            Some(Ok(0)) | Some(Err(_)) if !got_any => return Err(RespFail::Empty),
            Some(Ok(0)) | Some(Err(_)) => return Err(RespFail::Closed),
            Some(Ok(_)) => {}
        }
    }
}

trait ConnModeExt {
    fn max_with(self, other: Self) -> Self;
}

impl ConnModeExt for HttpConnMode {
    /// The stricter of a frontend's and a backend's modes.
    fn max_with(self, other: Self) -> Self {
        let rank = |m: HttpConnMode| match m {
            HttpConnMode::KeepAlive => 0,
            HttpConnMode::ServerClose => 1,
            HttpConnMode::Close => 2,
        };
        if rank(other) > rank(self) {
            other
        } else {
            self
        }
    }
}
