//! One try of an exchange against a server: a connection (held, pooled or
//! new, through the balancer), the request sent on it, its response head
//! awaited while the body goes up, and `retry-on`'s decision.

use super::exchange::{Prepared, Route};
use super::io::{send, transfer, Activity, Buf, XferError, XferTimeouts};
use super::outcome::{fail, fail_as, upload_term, Outcome};
use super::peer::Peer;
use super::peer::Upstream;
use super::read::{read_response, RespFail};
use super::{cookie, head, ms, park, pool, Held};
use crate::conn::Io;
use crate::connect::{self, Attempts, ConnectFail, Connected};
use crate::log::LogRecord;
use crate::session::Accepted;
use crate::state::BackendRt;
use crate::state::ServerId;
use crate::term::{Cause, State, Term};
use std::sync::atomic::Ordering;
use weir_config::{HttpReuse, RetryOn};
use weir_proto::h1::{Framing, RequestHead, ResponseHead};

/// A server slot taken from the balancer for one try; given back when
/// dropped, whatever ends it.
pub(super) struct SrvSlot<'a> {
    be: &'a BackendRt,
    srv: ServerId,
}

impl<'a> SrvSlot<'a> {
    pub(super) fn new(be: &'a BackendRt, srv: ServerId) -> Self {
        SrvSlot { be, srv }
    }
}

impl Drop for SrvSlot<'_> {
    fn drop(&mut self) {
        self.be.release(self.srv);
    }
}

/// The tries of one exchange.
#[derive(Default)]
pub(super) struct Tries {
    pub count: u32,
    /// The request's bytes went to a server once (a retry rebuilds them).
    pub consumed: bool,
    /// `retry-on` retries done.
    pub l7_retries: u32,
    /// The server the next try avoids (a redispatched retry).
    pub avoid_next: Option<ServerId>,
}

/// A request body still on its way to the server.
pub(super) type Upload<'u> =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<u64, XferError>> + Send + 'u>>;

/// A server connection for this try: the one the client session holds,
/// one from the idle pool, or a new one; `Err` when none could be had
/// (answered 503, or nothing when the client left). The second value is
/// how many exchanges a reused connection carried.
pub(super) async fn connect<'r>(
    r: Route<'r>,
    acc: &Accepted,
    held: &mut Option<Box<Held>>,
    p: &Prepared<'_>,
    t: &mut Tries,
    first: bool,
    rec: &mut LogRecord<'r>,
) -> Result<(Connected<Upstream>, Option<u32>), Outcome<'r>> {
    let (be, be_px) = (r.be, r.be_px);
    let mut reused: Option<u32> = None;
    let mut attempts = Attempts {
        persist_to: p
            .use_server
            .or_else(|| p.persist.as_ref().and_then(|p| p.server))
            .map(|i| (i, p.force_persist))
            .or(p.prefer.map(|i| (i, false)))
            .filter(|_| t.avoid_next.is_none()),
        avoid: t.avoid_next.take(),
        // (The method only: the path is read when a `redir` server is
        // chosen.)
        redirect_ok: p.wire.starts_with(b"GET ") || p.wire.starts_with(b"HEAD "),
        ..Attempts::default()
    };
    let reuse_policy = be_px.http.reuse;
    let tries = t.count;
    let allow_pool = tries == 1
        && match reuse_policy {
            HttpReuse::Never => false,
            HttpReuse::Safe => !first,
            HttpReuse::Aggressive | HttpReuse::Always => true,
        };
    let proven_only = first && reuse_policy == HttpReuse::Aggressive;
    let pp = connect::ProxySource {
        src: rec.client,
        dst: rec.frontend_addr,
        authority: acc.authority(r.f.client.tls_info()),
        unique_id: rec.unique_id.as_deref().map(str::as_bytes),
        tls: r.f.client.tls_info(),
    };
    // The destination as the rules left it (`set-dst`), for a server at
    // `0.0.0.0` or with a relative port.
    let dst = rec.frontend_addr.or(acc.local);
    let connected = {
        let mut reuse = |srv: ServerId| -> Option<Connected<Upstream>> {
            if tries > 1 {
                return None;
            }
            let gen = be.server(srv).conn_gen.load(Ordering::Relaxed);
            if be.server(srv).proxy_v2.unique_id {
                // Its PROXY header names one request.
                return None;
            }
            let key = || conn_key(be, srv, &p.sni, dst, &pp);
            if let Some(h) = held.take() {
                if h.be == be.proxy && h.srv == srv && h.gen == gen && h.conn.key == key() {
                    if !pool::alive(&h.conn.conn.peer()) {
                        return None;
                    }
                    reused = Some(h.uses);
                    return Some(h.conn);
                }
                *held = Some(h);
            }
            let s = be.server(srv);
            // Idle connections speak HTTP/1.1: not for a WebSocket that
            // goes in HTTP/2 (`ws h2`).
            let ws_h2 = p.websocket && s.ws.h2 == crate::state::H2Use::Always;
            if !allow_pool || s.dispatch || ws_h2 {
                return None;
            }
            let key = key();
            pool::take(be.proxy, srv, key, proven_only, gen).map(|c| {
                reused = Some(if c.proven { 2 } else { 1 });
                Connected {
                    srv,
                    conn: Upstream::of(be, s, c.conn),
                    server_addr: c.server_addr,
                    source_addr: c.source_addr,
                    key,
                    gen,
                }
            })
        };
        // Boxed: its state is needed only while connecting, and an
        // exchange waiting for its response should not carry it. Built in
        // its box (`Box::pin` copied its 2.5 KB there on every request).
        let attempt = crate::alloc::boxed(|| {
            connect::connect(
                be,
                be_px,
                &p.lb_key,
                dst,
                &mut attempts,
                &mut reuse,
                &p.sni,
                &pp,
                p.websocket,
            )
        });
        // A client that closed gives up its place in the queue or its
        // connect retries.
        match abort_watch(r, p.body_framing) {
            Some(tcp) => tokio::select! {
                // The attempt first: a close already seen still finds it
                // queued or connecting (CQ, CC), never before it began.
                biased;
                c = attempt => c,
                () = client_closed(tcp) => Err(ConnectFail::ClientAbort { queued: false }),
            },
            None => attempt.await,
        }
    };
    let connected = match connected {
        // Queued when no server was taken yet.
        Err(ConnectFail::ClientAbort { .. }) => Err(ConnectFail::ClientAbort {
            queued: attempts.last_srv.is_none(),
        }),
        c => c,
    };
    let connected = connected.map(|mut c| {
        c.key = conn_key(be, c.srv, &p.sni, dst, &pp);
        c
    });
    if let Some(h) = held.take() {
        park(r.f.sh, *h);
    }
    attempts.note(rec, t.l7_retries);
    rec.beconn = be.conns.load(Ordering::Relaxed);
    match connected {
        Ok(c) => {
            rec.tc = attempts.tc.map_or(-1, ms);
            Ok((c, reused))
        }
        Err(ConnectFail::Redirect) => {
            rec.server = be.server_name(attempts.last_srv);
            let prefix = attempts
                .last_srv
                .and_then(|s| be.server(s).conf.redir.as_deref())
                .unwrap_or_default();
            let path = redirect_path(p.wire.get(..p.head_len).unwrap_or_default()).unwrap_or("/");
            let mut o = Outcome::error(302, ConnectFail::Redirect.term());
            o.unsent = format!(
                "HTTP/1.1 302 Found\r\ncache-control: no-cache\r\ncontent-length: 0\r\nlocation: {prefix}{path}\r\nconnection: close\r\n\r\n"
            )
            .into_bytes();
            o.bytes_out = o.unsent.len() as u64;
            Err(o.at(be, attempts.last_srv))
        }
        Err(e) => {
            rec.server = be.server_name(attempts.last_srv);
            let status = match e {
                ConnectFail::ClientAbort { .. } => 0,
                _ => 503,
            };
            let o = fail(be_px, r.f.fe_px, status, e.term());
            Err(o.at(be, attempts.last_srv))
        }
    }
}

/// The path and query a `redir` server's answer sends a GET or HEAD
/// request `head` to (`None` for another method).
fn redirect_path(head: &[u8]) -> Option<&str> {
    let line = head.split(|&b| b == b'\r').next()?;
    let line = std::str::from_utf8(line).ok()?;
    let mut w = line.split(' ');
    if !matches!(w.next()?, "GET" | "HEAD") {
        return None;
    }
    let uri = w.next()?;
    // An absolute-form target: from its path on.
    Some(match uri.split_once("://") {
        Some((_, rest)) => rest.find('/').map_or("/", |i| &rest[i..]),
        None => uri,
    })
}

/// What a connection to server `srv` is opened for beyond the server (a
/// hash; 0 when the server uses none of it): its SNI when computed per
/// request, the client's destination when the server takes it, the PROXY
/// header's addresses and authority. A connection serves only requests
/// with the same, as haproxy's connection hash.
fn conn_key(
    be: &BackendRt,
    srv: ServerId,
    sni: &[Option<String>],
    dst: Option<std::net::SocketAddr>,
    pp: &connect::ProxySource<'_>,
) -> u64 {
    use std::hash::{Hash, Hasher};
    let s = be.server(srv);
    let takes_dst = s.takes_client_dst();
    let (by_sni, by_proxy) = (s.private_sni(), s.send_proxy.is_some());
    if !(by_sni || takes_dst || by_proxy) {
        return 0;
    }
    let mut h = std::collections::hash_map::DefaultHasher::new();
    if by_sni {
        sni.get(srv.index()).hash(&mut h);
    }
    if takes_dst {
        dst.hash(&mut h);
    }
    if by_proxy {
        (pp.src, pp.dst, pp.authority).hash(&mut h);
    }
    h.finish() | 1
}

/// The client connection `option abortonclose` watches: a clear-text
/// HTTP/1.1 client's, once a bodyless request (`framing`) is read whole
/// (its next bytes can only be a next request or its close).
fn abort_watch(r: Route<'_>, framing: Framing) -> Option<&tokio::net::TcpStream> {
    let on = r.be_px.options.abortonclose && framing == Framing::None;
    match r.f.client {
        Peer::Conn(c) if on => c.tcp(),
        _ => None,
    }
}

/// Resolves once the client's side of `tcp` is closed (its end of stream
/// read without taking a byte); never while it only sends more (a next
/// request waits in the socket).
async fn client_closed(tcp: &tokio::net::TcpStream) {
    let mut b = [0u8; 1];
    match tcp.peek(&mut b).await {
        Ok(0) | Err(_) => {}
        Ok(_) => std::future::pending().await,
    }
}

/// The server a try got, in the log record (and persistence's flag: a
/// cookie whose server could not take the request was redispatched).
pub(super) fn note_server<'r>(
    r: Route<'r>,
    conn: &Connected<Upstream>,
    reused: Option<u32>,
    persist: &mut Option<cookie::Persist>,
    rec: &mut LogRecord<'r>,
) {
    rec.server = r.be.server_name(Some(conn.srv));
    if let Some(p) = persist {
        if p.server.is_some_and(|i| i != conn.srv) {
            p.req_flag = b'D';
            rec.cookie_flags[0] = b'D';
        }
    }
    rec.srvconn = r.be.server(conn.srv).cur_conns.load(Ordering::Relaxed);
    rec.server_addr = conn.server_addr;
    rec.source_addr = conn.source_addr;
    if reused.is_none() {
        if let Some(s) = conn.conn.peer().tcp() {
            let _ = s.set_nodelay(true);
        }
    }
}

/// Sends the request head (with the body bytes read with it) in one write;
/// `Ok` with the head's size.
async fn send_head(
    r: Route<'_>,
    sconn: Peer<'_>,
    req: &RequestHead,
    p: &Prepared<'_>,
    consumed: bool,
    named: Option<&RequestHead>,
) -> Result<usize, XferError> {
    let t = r.server_timeout;
    let (head, body) = p.wire.split_at(p.head_len.min(p.wire.len()));
    if let (Peer::Fcgi(up), Some(Ok(fr))) = (sconn, &p.fcgi) {
        // The application takes the parameters made for it, then the
        // body bytes read with the head.
        up.begin(fr, p.body_framing);
        send(sconn, if consumed { &[] } else { body }, t).await?;
        return Ok(p.head_len);
    }
    if let Some(req) = named {
        // Rewritten for this server: the head anew, then the body bytes.
        let body = if consumed { &[][..] } else { body };
        if let Peer::H2Up(up) = sconn {
            h2_request(up, req, t).await?;
            send(sconn, body, t).await?;
            return Ok(head::request(req).len());
        }
        let mut out = head::request(req);
        let n = out.len();
        out.extend_from_slice(body);
        send(sconn, &out, t).await?;
        return Ok(n);
    }
    if let Peer::H2Up(up) = sconn {
        // An HTTP/2 server takes the head as it is, never as text; the
        // body bytes read with it follow.
        h2_request(up, req, t).await?;
        send(sconn, if consumed { &[] } else { body }, t).await?;
        return Ok(if consumed && !p.dirty {
            head::request(req).len()
        } else {
            p.head_len
        });
    }
    if !consumed {
        send(sconn, &p.wire, t).await?;
        return Ok(p.head_len);
    }
    // A retry of a bodyless request: the head alone.
    if p.dirty {
        send(sconn, head, t).await?;
        return Ok(p.head_len);
    }
    let head = head::request(req);
    send(sconn, &head, t).await?;
    Ok(head.len())
}

/// A request's head to an HTTP/2 server; an upgrade waits for the
/// server's SETTINGS, and fails (a 502) where it offers no extended
/// CONNECT, as haproxy's does.
async fn h2_request(
    up: &crate::h2::upstream::H2Up,
    req: &RequestHead,
    t: Option<std::time::Duration>,
) -> Result<(), XferError> {
    if crate::h2::upgrade_protocol(req).is_some() {
        let ok = match t {
            Some(t) => tokio::time::timeout(t, up.can_upgrade()).await,
            None => Ok(up.can_upgrade().await),
        };
        if ok != Ok(true) {
            return Err(XferError::DstError);
        }
    }
    up.send_request(req).map_err(|_| XferError::DstError)
}

/// The request goes up on this try's connection: `Ok` with the bytes
/// sent; `Err(None)` for another try (an idle connection that died under
/// us), `Err(Some(outcome))` when the exchange ends (a 502).
pub(super) async fn send_request<'r>(
    r: Route<'r>,
    conn: &Connected<Upstream>,
    req: &RequestHead,
    p: &Prepared<'_>,
    reused: Option<u32>,
    t: &mut Tries,
) -> Result<u64, Option<Outcome<'r>>> {
    // `http-send-name-header`: the server's name replaces the header's
    // values (a retry on another server sends that one's).
    let named = r.be_px.http.send_name_header.as_deref().map(|h| {
        let mut named = req.clone();
        named.headers.retain(|f| !f.name().eq_ignore_ascii_case(h));
        let srv = r.be.server(conn.srv).name.as_bytes();
        named.headers.push(weir_proto::h1::Header::new(h, srv));
        named
    });
    if let (Upstream::Fcgi(_), Some(Err(refusal))) = (&conn.conn, &p.fcgi) {
        let (status, term) = refusal.answer();
        let o = fail(r.be_px, r.f.fe_px, status, term);
        return Err(Some(o.at(r.be, Some(conn.srv))));
    }
    match send_head(r, conn.conn.peer(), req, p, t.consumed, named.as_ref()).await {
        Ok(_) => {
            t.consumed = true;
            // The head counts as received (the session adds its size).
            Ok(p.early_body as u64)
        }
        Err(_) if reused.is_some() && t.count == 1 => Err(None),
        Err(_) => {
            let term = Term::new(Cause::Server, State::Headers);
            let o = fail(r.be_px, r.f.fe_px, 502, term);
            Err(Some(o.at(r.be, Some(conn.srv))))
        }
    }
}

/// The response head as read, or why none came.
pub(super) type Resp = Result<(ResponseHead, usize), RespFail>;

/// The rest of the request body, on its way up (none without one).
pub(super) fn upload<'u>(
    r: Route<'u>,
    cbuf: &'u mut Buf,
    sconn: Peer<'u>,
    p: &Prepared<'_>,
    sent: &'u Activity,
) -> Option<Upload<'u>> {
    let rest = match p.body_framing {
        Framing::ContentLength(n) => Framing::ContentLength(n - p.early_body as u64),
        f => f,
    };
    if matches!(rest, Framing::None | Framing::Tunnel) || rest == Framing::ContentLength(0) {
        return None;
    }
    let t = XferTimeouts {
        read: r.f.fe_px.timeouts.client,
        write: r.server_timeout,
        sent: Some(sent),
    };
    // Boxed: a request without a body (the common case) does not carry
    // its state.
    let size = r.f.sh.bufsize;
    let sp = r.splicing(true);
    Some(Box::pin(transfer(
        r.f.client, cbuf, sconn, rest, size, t, true, sp,
    )))
}

/// The response head, read while the body goes up (`up`: a server may
/// answer `100 Continue` first, or answer early). A body that fails on the
/// client's side ends the wait for a response that cannot come. With the
/// upload's result when it ended first. Interim responses' sizes are
/// added to `interim`. The server's timeout counts from the body's last
/// bytes `sent` records (from the head's, with `option
/// independent-streams` on the backend), as haproxy's.
pub(super) async fn response(
    r: Route<'_>,
    sconn: Peer<'_>,
    sbuf: &mut Buf,
    req: &RequestHead,
    (up, sent): (Option<&mut Upload<'_>>, &Activity),
    interim: &mut u64,
) -> (Option<Result<u64, XferError>>, Resp) {
    let (client, t_server, fe_px) = (r.f.client, r.server_timeout, r.f.fe_px);
    let sent = (up.is_some() && !r.be_px.options.independent_streams).then_some(sent);
    let limits = weir_proto::h1::Limits {
        max_head: r.f.sh.bufsize,
        max_headers: r.f.sh.maxhdr,
        relaxed_target: false,
        ..Default::default()
    };
    let method = &req.method;
    let read = read_response(
        client, sconn, sbuf, &limits, method, t_server, sent, fe_px, interim,
    );
    let Some(up_fut) = up else {
        // A client that closed gets no response.
        let resp = match abort_watch(r, req.framing) {
            Some(tcp) => tokio::select! {
                biased;
                res = read => res,
                () = client_closed(tcp) => Err(RespFail::ClientClosed),
            },
            None => read.await,
        };
        return (None, resp);
    };
    let mut resp_fut = Box::pin(read);
    let mut up = None;
    let resp = loop {
        tokio::select! {
            // The upload first: a request body that turns out invalid in
            // bytes already read is the client's fault, whatever the server
            // did meanwhile (haproxy logs it `PH`, 400).
            biased;
            r = &mut *up_fut, if up.is_none() => {
                let client_failed = matches!(&r, Err(e) if *e != XferError::DstError);
                up = Some(r);
                if client_failed {
                    break Err(RespFail::Closed);
                }
            }
            r = &mut resp_fut => break r,
        }
    };
    (up, resp)
}

/// The answer to a request body that failed on its way up.
pub(super) async fn upload_failed<'r>(
    r: Route<'r>,
    acc: &Accepted,
    cbuf: &Buf,
    sconn: Peer<'_>,
    e: XferError,
    bytes_in: u64,
) -> Outcome<'r> {
    let (be_px, fe_px) = (r.be_px, r.f.fe_px);
    let status = match e {
        XferError::Invalid(e) => e.status(),
        XferError::SrcTimeout => 408,
        XferError::SrcClosed | XferError::SrcError => 400,
        XferError::DstError => 502,
        XferError::DstTimeout => 504,
    };
    let answered = !matches!(e, XferError::SrcClosed | XferError::SrcError);
    sconn.set_reset_on_close();
    let mut o = if let XferError::Invalid(why) = e {
        // A body that cannot be read is the client's error: logged (`PH`:
        // the server had not answered yet, as haproxy says), kept for
        // `show errors`, answered with a close.
        r.f.sh.errors.record(
            r.f.sh.frontend(r.f.fe_idx).proxy,
            false,
            None,
            acc.peer,
            why.to_string(),
            cbuf.bytes(),
        );
        let term = Term::new(Cause::Proxy, State::Headers);
        fail_as(be_px, fe_px, status, term, true)
    } else if answered {
        fail(be_px, fe_px, status, upload_term(e))
    } else {
        Outcome::error(status, upload_term(e))
    };
    o.bytes_in = bytes_in;
    o
}

/// `retry-on` (and a reused connection the server had closed): whether
/// this response, or its absence, calls for another try.
pub(super) fn retry(
    r: Route<'_>,
    resp: &Resp,
    reused: Option<u32>,
    p: &Prepared<'_>,
    t: &mut Tries,
    srv: ServerId,
    rec: &mut LogRecord<'_>,
) -> bool {
    let be_px = r.be_px;
    let retry_on = be_px.http.retry_on.as_deref().unwrap_or(&[]);
    let wants = |c: RetryOn| retry_on.contains(&c);
    let bodyless = p.body_framing == Framing::None;
    let retryable = bodyless && t.l7_retries < be_px.retries;
    let again = match resp {
        Err(RespFail::Empty | RespFail::Reset) if reused.is_some() && t.count == 1 && bodyless => {
            Some(false)
        }
        Err(RespFail::Empty | RespFail::Closed | RespFail::Reset)
            if wants(RetryOn::EmptyResponse) =>
        {
            Some(true)
        }
        Err(RespFail::Timeout) if wants(RetryOn::ResponseTimeout) => Some(true),
        Err(RespFail::Invalid) if wants(RetryOn::JunkResponse) => Some(true),
        Ok((res, _)) if wants(RetryOn::Status(res.status)) => Some(true),
        _ => None,
    };
    let Some(counted) = again.filter(|c| !c || retryable) else {
        return false;
    };
    if counted {
        t.l7_retries += 1;
        if be_px.options.redispatch {
            t.avoid_next = Some(srv);
            rec.redispatched = true;
        }
    }
    true
}

/// The answer when no response head came: 504 on a timeout, 502 otherwise
/// (`Tr` is -1, as haproxy logs it); an invalid head is kept for `show
/// errors`.
pub(super) fn response_failed<'r>(
    r: Route<'r>,
    acc: &Accepted,
    srv: ServerId,
    sbuf: &Buf,
    f: RespFail,
    rec: &mut LogRecord<'r>,
) -> Outcome<'r> {
    let (be_px, fe_px) = (r.be_px, r.f.fe_px);
    if f == RespFail::Invalid {
        let s = &r.be.server(srv).conf;
        let server = Some((s.name.clone(), s.uid));
        let reason = "invalid response head".to_string();
        r.f.sh
            .errors
            .record(r.be.proxy, true, server, acc.peer, reason, sbuf.bytes());
    }
    let (status, term) = match f {
        RespFail::Timeout => (504, Term::new(Cause::ServerTimeout, State::Headers)),
        RespFail::Invalid => (502, Term::new(Cause::Proxy, State::Headers)),
        RespFail::Empty | RespFail::Closed | RespFail::Reset => {
            (502, Term::new(Cause::Server, State::Headers))
        }
        RespFail::ClientGone => (0, Term::new(Cause::Client, State::Headers)),
        // As haproxy logs a request its client abandoned.
        RespFail::ClientClosed => (400, Term::new(Cause::Client, State::Headers)),
    };
    // haproxy counts a reset before the head as two response errors (one
    // for the read, one for the end).
    rec.srv_reset = f == RespFail::Reset;
    fail(be_px, fe_px, status, term)
}
