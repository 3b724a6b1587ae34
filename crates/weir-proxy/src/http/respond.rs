//! A server's response on its way back, phase by phase: the backend's
//! `tcp-response content` rules, the response rules and persistence, the
//! connection's fate on both sides, the head to the client, then the body
//! (beside the rest of the request's) or a tunnel.

use super::attempt::Upload;
use super::exchange::{Prepared, Route};
use super::io::{drain, send, transfer, Buf, XferError, XferTimeouts};
use super::outcome::{after, answer_local, fail, upload_term, Outcome};
use super::peer::Peer;
use super::rules::{self, ExCtx, Local, Vars};
use super::samples::log_samples;
use super::{cookie, head};
use crate::conn::Io;
use crate::forward::{Duplex, FwdOptions, FwdTimeouts};
use crate::log::LogRecord;
use crate::state::ServerId;
use crate::term::{Cause, State, Term};
use weir_config::HttpConnMode;
use weir_proto::h1::{Framing, RequestHead, ResponseHead};

/// The server side of a try that got its response head.
pub(super) struct Sent<'c> {
    pub conn: Peer<'c>,
    pub srv: ServerId,
    /// Request body bytes received so far (as haproxy counts them).
    pub bytes_in: u64,
    /// The interim (`1xx`) responses relayed before the head, as haproxy
    /// counts them.
    pub interim: u64,
    /// `Tr`: milliseconds from the request sent to the response head.
    pub t_res: i64,
}

/// What becomes of the server connection once the exchange ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kept {
    /// It may carry another exchange.
    Server,
    /// Nothing is left to deliver on it: it closes (with a reset when
    /// plain TCP).
    Closed,
    /// The exchange ended early: it is dropped as it is.
    AsIs,
}

/// Where the response goes after its head.
pub(super) enum Next<'r> {
    Done(Outcome<'r>),
    Tunnel(Outcome<'r>),
    Body(Outcome<'r>, BodyDown),
}

/// How the response body goes down.
pub(super) struct BodyDown {
    rest: Framing,
    /// Compressed on the way down (the server's framing stays `rest`).
    comp: Option<weir_config::model::CompAlgo>,
    /// `cache-store`: the cache, the key and the object the body completes.
    store: Option<Box<Keep>>,
    /// Read from the server and dropped (a HEAD request's).
    skip: bool,
    keep_server: bool,
}

/// A response on its way to a cache.
pub(super) struct Keep {
    cache: std::sync::Arc<crate::state::cache::Store>,
    key: Vec<u8>,
    object: crate::state::cache::Object,
}

/// The response head: rules, persistence, connection fields, and the head
/// sent to the client.
#[allow(clippy::too_many_arguments)]
pub(super) async fn head<'r>(
    r: Route<'r>,
    tmpl: &ExCtx<'r>,
    s: &Sent<'_>,
    mut res: ResponseHead,
    rused: usize,
    sbuf: &mut Buf,
    req: &RequestHead,
    p: &Prepared<'_>,
    body: Option<&[u8]>,
    rec: &mut LogRecord<'r>,
    vars: &mut Vars,
) -> Next<'r> {
    // What haproxy counts received for the head: its size as it came.
    let head_size = weir_proto::h1::htx::response(&res);
    // The server's answer counts on the entries tracked before its rules
    // run (a 4xx as the client's error, a 5xx as the server's failure).
    for ev in super::rules::status_events(res.status, true) {
        vars.track.count(ev);
    }
    if !r.be_px.stick_rules.is_empty() {
        let ctx = ExCtx {
            req: Some(req),
            res: Some(&res),
            vars: Some(vars),
            ..*tmpl
        };
        crate::sticky::on_response(tmpl.sh, r.be, r.be_px, &ctx, s.srv);
    }
    // The response's rules see the server connection's TLS session.
    let stmpl = ExCtx {
        srv_tls: s.conn.tls_info(),
        srv_conn: Some(s.conn),
        ..*tmpl
    };
    // The response's header captures, before its rules.
    vars.caps
        .headers(true, &r.f.fe_px.http.res_captures, &res.headers);
    let close_server = match tcp_rules(r, &stmpl, s, &res, req, rec, vars) {
        Ok(c) => c,
        Err(term) => {
            // The log sees what the rules did (`last_rule_*`, variables).
            let view = response_view(&stmpl, req, &res, rec.server, vars);
            log_samples(r.f.fe_px, rec, &view);
            let mut o = fail(r.be_px, r.f.fe_px, 0, term);
            o.bytes_in = s.bytes_in;
            o.keep_client = false;
            return Next::Done(o.at(r.be, Some(s.srv)));
        }
    };
    if let Some((time, at_least)) = body_wanted(r, &stmpl, &res, req, rec, vars) {
        let waited = wait_body(
            s.conn,
            sbuf,
            rused,
            res.framing,
            time,
            at_least,
            r.f.sh.bufsize,
        );
        if let Err(term) = Box::pin(waited).await {
            s.conn.set_reset_on_close();
            let mut o = fail(r.be_px, r.f.fe_px, 504, term);
            o.bytes_in = s.bytes_in;
            o.keep_client = false;
            return Next::Done(o.at(r.be, Some(s.srv)));
        }
    }
    // SPOE engines' `on-http-response` messages (the backend's, then the
    // frontend's), before the response's rules.
    for px in super::rules::response_order(Some(r.be_px), r.f.fe_px) {
        if !px.spoe.is_empty() {
            let ctx = response_view(&stmpl, req, &res, rec.server, vars);
            let ev = weir_config::model::SpoeEvent::HttpResponse;
            Box::pin(crate::spoe::on_event(tmpl.sh, px, ev, &ctx)).await;
        }
    }
    let mut rdirty = !res.canonical;
    // The room the response's rewrites have: its head and the body bytes
    // read behind it.
    // (A status is three digits.)
    let head = super::room::head(&["HTTP/1.1", "200", &res.reason], &res.headers);
    let read = sbuf.bytes().len().saturating_sub(rused);
    let mut room = super::room::Room::new(&tmpl.sh.cfg.global, head, read);
    let mut at = rules::ResumeAt::default();
    let replaced = loop {
        let step = http_rules(
            r,
            &stmpl,
            &mut res,
            req,
            body,
            rec,
            vars,
            &mut rdirty,
            &mut room,
            at,
        );
        match step {
            rules::ResOutcome::Done(replaced) => break replaced,
            rules::ResOutcome::Spoe {
                px,
                engine,
                group,
                at: next,
            } => {
                // `http-response send-spoe-group`: the response waits for
                // the agent, then the rules go on.
                let ctx = response_view(&stmpl, req, &res, rec.server, vars);
                Box::pin(crate::spoe::send_group(tmpl.sh, px, &engine, &group, &ctx)).await;
                at = next;
            }
        }
    };
    let replaced = replaced.or_else(|| checkcache(r, &stmpl, &res, req, rec.server, vars));
    vars.rewrites_failed(room.failed(), true);
    if let (Some(ps), None) = (&p.persist, &replaced) {
        let (flag, changed) =
            cookie::on_response(r.be_px, s.srv, ps, &req.method, &mut res, p.now_secs);
        rdirty |= changed;
        rec.cookie_flags = [ps.req_flag, flag];
    }
    if let Some(local) = replaced {
        if super::outcome::is_silent_drop(&local) {
            let o = super::outcome::dropped(r.f.client, s.conn, res.status, s.bytes_in);
            return Next::Done(o.at(r.be, Some(s.srv)));
        }
        // What haproxy had counted of the server's response by then: its
        // head and the body bytes read with it.
        let read = match res.framing {
            Framing::ContentLength(n) => sbuf.bytes().len().saturating_sub(rused).min(n as usize),
            Framing::None => 0,
            _ => sbuf.bytes().len().saturating_sub(rused),
        };
        let received = s.interim + head_size + read as u64;
        let o = replace(r, tmpl, s, local, req, rec, vars).await;
        return Next::Done(Outcome {
            bytes_out: o.bytes_out + received,
            ..o
        });
    }
    // Compression: the server's framing is what the body is read with.
    let server_framing = res.framing;
    let comp = p
        .comp
        .filter(|_| !p.client_head)
        .filter(|&a| super::compress::response(r.f.fe_px, r.be_px, a, &mut res));
    rdirty |= comp.is_some();
    // `cache-store` (of what is not compressed here): the response as it
    // goes, its body kept on the way down.
    let store = vars
        .cache_store
        .as_ref()
        .filter(|_| !p.client_head && comp.is_none())
        .and_then(|n| r.f.sh.caches.get(n))
        .and_then(|c| {
            super::cache::invalidate(c, req, &res);
            let (key, object) = super::cache::storable(c, req, &res)?;
            Some(Box::new(Keep {
                cache: c.clone(),
                key,
                object,
            }))
        });
    let fate = connection(r, &mut res, req, p, close_server, &mut rdirty);
    let early = match res.framing {
        _ if fate.skip_body || comp.is_some() || store.is_some() => 0,
        Framing::ContentLength(n) => (sbuf.bytes().len() - rused).min(n as usize),
        _ => 0,
    };
    let sent = send_head(r.f, &mut res, sbuf, rused, early, fate.skip_body, rdirty).await;
    sbuf.consume(rused + early);
    let mut out = Outcome {
        be: Some(r.be),
        srv: Some(s.srv),
        status: i32::from(res.status),
        term: Term::NORMAL,
        bytes_in: s.bytes_in,
        bytes_out: 0,
        t_res: s.t_res,
        keep_client: fate.keep_client,
        tunnel: fate.tunnel,
        nolog: false,
        unsent: Vec::new(),
    };
    match sent {
        Ok(_) => out.bytes_out = s.interim + head_size + early as u64,
        Err(e) => {
            out.term = if e == XferError::DstTimeout {
                Term::new(Cause::ClientTimeout, State::Data)
            } else {
                Term::new(Cause::Client, State::Data)
            };
            out.keep_client = false;
            s.conn.set_reset_on_close();
            return Next::Done(out);
        }
    }
    if r.f.fe_px.options.logasap {
        super::log_early(
            r.f.sh,
            r.f.fe_idx,
            rec,
            out.status,
            out.bytes_out,
            out.t_res,
        );
    }
    if fate.tunnel {
        return Next::Tunnel(out);
    }
    let rest = match server_framing {
        Framing::ContentLength(n) => Framing::ContentLength(n - early as u64),
        f => f,
    };
    let down = BodyDown {
        rest,
        comp,
        store,
        skip: fate.skip_body,
        keep_server: fate.keep_server,
    };
    Next::Body(out, down)
}

/// The backend's `tcp-response content` rules on the head: `Ok(true)` when
/// the server connection closes after the response; `Err` with the
/// termination when nothing goes to the client (`PD`, as haproxy logs it).
fn tcp_rules(
    r: Route<'_>,
    tmpl: &ExCtx<'_>,
    s: &Sent<'_>,
    res: &ResponseHead,
    req: &RequestHead,
    rec: &LogRecord<'_>,
    vars: &mut Vars,
) -> Result<bool, Term> {
    use crate::tcp::rules::Decision;
    let rules = &r.be_px.tcp.response;
    if rules.is_empty() {
        return Ok(false);
    }
    vars.rules_of(tmpl.sh, r.be_px);
    let view = ExCtx {
        req: Some(req),
        res: Some(res),
        srv: rec.server,
        ..*tmpl
    };
    match crate::tcp::rules::response(rules, &view, tmpl.src, tmpl.dst, vars) {
        // (`use-service` is a content rule only.)
        Decision::Go | Decision::SwitchHttp(_) | Decision::Service(_) => Ok(false),
        Decision::Close => Ok(true),
        d @ (Decision::Reject | Decision::Drop) => {
            s.conn.set_reset_on_close();
            if d == Decision::Drop {
                r.f.client.set_reset_on_close();
            }
            Err(Term::new(Cause::Proxy, State::Data))
        }
    }
}

/// The first `http-response wait-for-body` rule (backend's, then
/// frontend's) that applies to the response head: its time and size.
/// The body is read before the rules run (haproxy runs the rules before
/// it first).
fn body_wanted(
    r: Route<'_>,
    tmpl: &ExCtx<'_>,
    res: &ResponseHead,
    req: &RequestHead,
    rec: &LogRecord<'_>,
    vars: &Vars,
) -> Option<(std::time::Duration, Option<u64>)> {
    let ctx = ExCtx {
        req: Some(req),
        res: Some(res),
        srv: rec.server,
        vars: Some(vars),
        ..*tmpl
    };
    rules::response_order(Some(r.be_px), r.f.fe_px)
        .flat_map(|px| px.http_response.iter())
        .find_map(|rule| match rule.action {
            weir_rules::ResAction::WaitForBody { time, at_least } if rule.applies(&ctx) => {
                Some((time, at_least))
            }
            _ => None,
        })
}

/// Reads the response body into `sbuf` (after the head's `rused` bytes)
/// until it is whole, `at_least` bytes of it came or the buffer is full;
/// `Err` when `time` passes first (a 504) or the server fails.
async fn wait_body(
    sconn: Peer<'_>,
    sbuf: &mut Buf,
    rused: usize,
    framing: Framing,
    time: std::time::Duration,
    at_least: Option<u64>,
    size: usize,
) -> Result<(), Term> {
    if matches!(
        framing,
        Framing::None | Framing::Tunnel | Framing::ContentLength(0)
    ) {
        return Ok(());
    }
    let deadline = crate::clock::now() + time;
    loop {
        let bytes = sbuf.bytes().get(rused..).unwrap_or_default();
        let (body, done) = weir_proto::h1::body_prefix(framing, bytes)
            .map_err(|_| Term::new(Cause::Server, State::Data))?;
        if done || at_least.is_some_and(|n| body.len() as u64 >= n) || sbuf.is_full() {
            return Ok(());
        }
        match tokio::time::timeout_at(deadline, sbuf.fill(sconn, size)).await {
            Err(_) => return Err(Term::new(Cause::ServerTimeout, State::Data)),
            Ok(Ok(0)) if framing == Framing::UntilClose => return Ok(()),
            Ok(Ok(0) | Err(_)) => return Err(Term::new(Cause::Server, State::Data)),
            Ok(Ok(_)) => {}
        }
    }
}

/// What the response's rules and SPOE messages see: the request, the
/// response, its server and the exchange's variables.
fn response_view<'a>(
    stmpl: &ExCtx<'a>,
    req: &'a RequestHead,
    res: &'a ResponseHead,
    srv: Option<&'a str>,
    vars: &'a Vars,
) -> ExCtx<'a> {
    ExCtx {
        req: Some(req),
        res: Some(res),
        srv,
        vars: Some(vars),
        ..*stmpl
    }
}

/// `option checkcache`: a cacheable response that sets a cookie is
/// blocked (`PH--`) with an alert, in haproxy 2.6's way: its error page of
/// the response's status.
fn checkcache(
    r: Route<'_>,
    tmpl: &ExCtx<'_>,
    res: &ResponseHead,
    req: &RequestHead,
    srv: Option<&str>,
    vars: &Vars,
) -> Option<Local> {
    if !r.be_px.options.checkcache || !super::cache::cacheable_cookie(req, res) {
        return None;
    }
    let msg = format!(
        "Blocking cacheable cookie in response from instance {}, server {}.",
        r.be_px.name,
        srv.unwrap_or("<NONE>")
    );
    crate::log::console("ALERT", &msg);
    r.be.logger.send(1, &msg);
    let ctx = ExCtx {
        req: Some(req),
        res: Some(res),
        vars: Some(vars),
        ..*tmpl
    };
    Some(Local {
        bytes: super::errors::reply_of(&[r.be_px, r.f.fe_px], res.status, &ctx),
        status: res.status,
        term: Term::new(Cause::Proxy, State::Headers),
        keep: !super::errors::closes(res.status),
    })
}

/// The response rules (backend's, then frontend's) from `at`, the
/// response captures and the log samples: an answer that replaces the
/// server's when a rule made one; the rules stop at a `send-spoe-group`
/// rule, for the caller to wait for the agent and go on.
#[allow(clippy::too_many_arguments)]
fn http_rules<'p>(
    r: Route<'p>,
    tmpl: &ExCtx<'_>,
    res: &mut ResponseHead,
    req: &RequestHead,
    body: Option<&[u8]>,
    rec: &mut LogRecord<'_>,
    vars: &mut Vars,
    rdirty: &mut bool,
    room: &mut super::room::Room,
    at: rules::ResumeAt,
) -> rules::ResOutcome<'p> {
    let fe_px = r.f.fe_px;
    let rtmpl = ExCtx {
        req: Some(req),
        srv: rec.server,
        ..*tmpl
    };
    let order = rules::response_order(Some(r.be_px), fe_px);
    let replaced = match rules::run_response_from(order, false, res, vars, &rtmpl, rdirty, room, at)
    {
        rules::ResOutcome::Done(r) => r,
        wait => return wait,
    };
    crate::conn::apply_sockopts(r.f.client.tcp(), &mut vars.sockopts);
    let slots = fe_px.http.res_captures.len();
    if slots > 0 {
        rec.res_caps = Some(vars.caps.values(true, slots));
    }
    if let (Some((name, len)), Some(c)) = (&fe_px.http.capture_cookie, &mut rec.cookie_caps) {
        let [_, res_cookie] = &mut **c;
        *res_cookie = super::samples::capture_cookie(name, *len, &res.headers, true);
    }
    let view = ExCtx {
        res: Some(res),
        vars: Some(vars),
        body,
        ..rtmpl
    };
    log_samples(fe_px, rec, &view);
    rules::ResOutcome::Done(replaced)
}

/// A rule's answer in place of the server's: the server's answer is
/// dropped, and its connection with it; the client's stays as after any
/// answer weir makes.
async fn replace<'r>(
    r: Route<'r>,
    tmpl: &ExCtx<'r>,
    s: &Sent<'_>,
    local: Local,
    req: &RequestHead,
    rec: &LogRecord<'r>,
    vars: &mut Vars,
) -> Outcome<'r> {
    s.conn.set_reset_on_close();
    let view = ExCtx {
        req: Some(req),
        srv: rec.server,
        ..*tmpl
    };
    let local = after(local, r.f.sh, r.f.fe_px, Some(r.be), vars, &view);
    let mut empty = Buf::default();
    let mut o = answer_local(&mut empty, 0, req, local);
    o.bytes_in = s.bytes_in;
    o.t_res = s.t_res;
    // Counted on the backend and server that answered, as haproxy does.
    o.at(r.be, Some(s.srv))
}

/// Both connections' fate after this response.
struct Fate {
    keep_client: bool,
    keep_server: bool,
    tunnel: bool,
    /// A body the HEAD client must not get is read from the server and
    /// dropped (its connection stays usable, as haproxy's).
    skip_body: bool,
}

/// Decides whether each side is kept, and says so in the response's
/// `connection` field where HTTP/1.x needs it.
fn connection(
    r: Route<'_>,
    res: &mut ResponseHead,
    req: &RequestHead,
    p: &Prepared<'_>,
    close_server: bool,
    rdirty: &mut bool,
) -> Fate {
    let tunnel = res.framing == Framing::Tunnel;
    let skip_body = p.client_head && !matches!(res.framing, Framing::None | Framing::Tunnel);
    // Chunks in an HTTP/1.0 response: framing HTTP/1.0 does not know, so
    // the client's connection closes after it (RFC 9112 §6.1), as haproxy
    // does.
    let chunked_10 = res.minor == 0 && res.framing == Framing::Chunked;
    let keep_client = req.keep_alive
        && p.mode != HttpConnMode::Close
        && (res.framing != Framing::UntilClose || skip_body)
        && !chunked_10
        && !*r.f.sh.stopping.borrow();
    let keep_server = !p.server_close && !close_server && res.keep_alive && !tunnel;
    if !tunnel {
        let listed = weir_proto::h1::connection_lists(&res.headers, &["close", "keep-alive"]);
        let (has_close, has_ka) = (listed & 1 != 0, listed & 2 != 0);
        let set = if req.minor >= 1 {
            // (A server's `keep-alive` stays, where haproxy drops it: a
            // head nothing else changes goes out as its bytes came, not
            // written anew on every response.)
            if keep_client && has_close {
                Some(None)
            } else if !keep_client && !has_close && !chunked_10 {
                // (An HTTP/1.0 response says close by its version: haproxy
                // adds nothing to a chunked one.)
                Some(Some("close"))
            } else {
                None
            }
        } else if keep_client && !has_ka {
            Some(Some("keep-alive"))
        } else if !keep_client && !has_close {
            // An HTTP/1.0 client is told its connection closes, as
            // haproxy tells it, whatever the server said.
            Some(Some("close"))
        } else {
            None
        };
        if let Some(v) = set {
            head::set_connection(&mut res.headers, v);
            *rdirty = true;
        }
    }
    Fate {
        keep_client,
        keep_server,
        tunnel,
        skip_body,
    }
}

/// `option h1-case-adjust-bogus-client` (an HTTP/1 client): names spelled
/// for the client; whether one changed.
fn adjust_case(f: super::exchange::Front<'_>, res: &mut ResponseHead) -> bool {
    f.fe_px.options.h1_case_adjust_bogus_client
        && head::adjust_case(&mut res.headers, &f.sh.cfg.global.h1_case_adjust)
}

/// Sends the response head with the `early` body bytes read with it; `Ok`
/// with the head's size.
async fn send_head(
    f: super::exchange::Front<'_>,
    res: &mut ResponseHead,
    sbuf: &Buf,
    rused: usize,
    early: usize,
    skip_body: bool,
    rdirty: bool,
) -> Result<usize, XferError> {
    let t = f.fe_px.timeouts.client;
    let bytes = sbuf.bytes();
    if let Peer::H2(h) = f.client {
        // An HTTP/2 client takes the parsed head as it is. When its HEAD
        // gets no body, its stream ends once the server's body was read
        // (`body`): a request that follows on another stream may need this
        // server connection, as it would after an HTTP/1.1 exchange.
        let early_body = bytes.get(rused..rused + early).unwrap_or_default();
        let framing = res.framing;
        if skip_body {
            res.framing = Framing::UntilClose;
        }
        let r = h.respond(res, early_body).map(|()| rused);
        res.framing = framing;
        r.map_err(|_| XferError::DstError)
    } else if adjust_case(f, res) | rdirty {
        let mut b = head::response(res);
        let n = b.len();
        b.extend_from_slice(bytes.get(rused..rused + early).unwrap_or_default());
        send(f.client, &b, t).await.map(|_| n)
    } else {
        let head_and_early = bytes.get(..rused + early).unwrap_or_default();
        send(f.client, head_and_early, t).await.map(|_| rused)
    }
}

/// A tunnel refused: the request body still going up could not be told
/// from the tunnel's bytes; both connections end.
pub(super) fn no_tunnel<'r>(sconn: Peer<'_>, mut out: Outcome<'r>) -> Outcome<'r> {
    out.keep_client = false;
    out.term = Term::new(Cause::Proxy, State::Data);
    sconn.set_reset_on_close();
    out
}

/// A tunnel (`101 Switching Protocols`, CONNECT): what the server sent
/// after its head, then both directions until either side ends.
pub(super) async fn tunnel<'r>(
    r: Route<'r>,
    sconn: Peer<'_>,
    sbuf: &mut Buf,
    cbuf: &mut Buf,
    mut out: Outcome<'r>,
) -> Outcome<'r> {
    let (client, fe_px) = (r.f.client, r.f.fe_px);
    let leftover = sbuf.bytes().to_vec();
    sbuf.consume(leftover.len());
    if !leftover.is_empty()
        && send(client, &leftover, fe_px.timeouts.client)
            .await
            .is_err()
    {
        out.term = Term::new(Cause::Client, State::Data);
        return out;
    }
    let initial = cbuf.bytes().to_vec();
    cbuf.consume(initial.len());
    let mut t = FwdTimeouts::between(fe_px, r.be_px);
    t.server = r.server_timeout;
    t.tunnel = r.tunnel_timeout;
    let opts = FwdOptions {
        bufsize: r.f.sh.bufsize,
        splice_request: false,
        splice_response: false,
        pipesize: r.f.sh.pipesize,
    };
    let d = Box::pin(Duplex::new(&client, &sconn, t, opts, &initial, false)).await;
    out.bytes_in += d.client_to_server;
    out.bytes_out += d.server_to_client + leftover.len() as u64;
    out.term = d.end.term();
    out
}

/// The response body down to the client, beside the rest of a request
/// body still going up when the server answered.
pub(super) async fn body<'r>(
    r: Route<'r>,
    sconn: Peer<'_>,
    sbuf: &mut Buf,
    pending_up: Option<Upload<'_>>,
    mut out: Outcome<'r>,
    b: BodyDown,
) -> (Outcome<'r>, Kept) {
    let t_cli = XferTimeouts {
        read: r.server_timeout,
        write: r.f.fe_px.timeouts.client,
        sent: None,
    };
    let size = r.f.sh.bufsize;
    let up = async move {
        match pending_up {
            Some(u) => Some(u.await),
            None => None,
        }
    };
    // Both made in place in the join: a future passed along would be kept
    // twice (once as the argument, once joined).
    let (down, up) = tokio::join!(
        async {
            if b.skip {
                // Read to its end and dropped: nothing reaches the client,
                // whose HTTP/2 stream ends now.
                let drained = drain(sconn, sbuf, b.rest, size, t_cli).await.map(|_| 0);
                if let Peer::H2(h) = r.f.client {
                    let _ = h.shutdown_write();
                }
                drained
            } else if let Some(k) = b.store {
                let limit = k.cache.max_object();
                let c = super::cache::transfer_keeping(
                    sconn, sbuf, r.f.client, b.rest, limit, size, t_cli,
                );
                let (sent, body) = Box::pin(c).await;
                if let (Ok(_), Some(body)) = (&sent, body) {
                    super::cache::keep(&k.cache, k.key, k.object, body);
                }
                sent
            } else if let Some(algo) = b.comp {
                let level = r.f.sh.cfg.global.comp_maxlevel;
                let c = super::compress::transfer(
                    sconn, sbuf, r.f.client, b.rest, algo, level, size, t_cli,
                );
                Box::pin(c).await
            } else {
                let sp = r.splicing(false);
                transfer(sconn, sbuf, r.f.client, b.rest, size, t_cli, false, sp).await
            }
        },
        up
    );
    let mut keep_server = b.keep_server;
    match up {
        Some(Ok(n)) => out.bytes_in += n,
        Some(Err(e)) => {
            // The request never ended as it should: neither side is kept,
            // and the log says which side failed.
            out.term = upload_term(e);
            out.keep_client = false;
            keep_server = false;
            sconn.set_reset_on_close();
        }
        None => {}
    }
    match down {
        Ok(n) => out.bytes_out += n,
        Err(e) => {
            out.term = match e {
                XferError::SrcTimeout => Term::new(Cause::ServerTimeout, State::Data),
                XferError::SrcClosed | XferError::SrcError | XferError::Invalid(_) => {
                    Term::new(Cause::Server, State::Data)
                }
                XferError::DstTimeout => Term::new(Cause::ClientTimeout, State::Data),
                XferError::DstError => Term::new(Cause::Client, State::Data),
            };
            out.keep_client = false;
            if matches!(e, XferError::DstError | XferError::DstTimeout) {
                sconn.set_reset_on_close();
            }
            return (out, Kept::AsIs);
        }
    }
    let kept = if keep_server {
        Kept::Server
    } else {
        Kept::Closed
    };
    (out, kept)
}
