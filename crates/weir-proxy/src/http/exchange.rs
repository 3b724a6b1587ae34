//! One request/response exchange: rules, backend choice, persistence,
//! server connection (pooled or new, with retries), head and body in both
//! directions, tunnels. Its outcome and the answers weir makes itself are
//! in `outcome.rs`, the log samples in `samples.rs`.

use super::decide::{decide, BodyWait};
use super::io::{drain, send, transfer, Buf, XferError, XferTimeouts};
use super::outcome::{after, answer_local, fail, fail_as, upload_term, Outcome};
use super::read::{read_response, RespFail};
use super::request::{balance_key, forwardfor, ConnModeExt, Plan};
use super::rules::{self, ExCtx, Local, Vars, Verdict};
use super::samples::{capture, log_samples, request_samples};
use super::{cookie, errors, head, ms, park, pool, Held};
use crate::conn::Conn;
use crate::connect::{self, Attempts, ConnectFail, Connected};
use crate::forward::{Duplex, FwdOptions, FwdTimeouts};
use crate::log::LogRecord;
use crate::session::Accepted;
use crate::state::FrontendId;
use crate::state::{BackendRt, Shared};
use crate::term::{Cause, State, Term};
use std::sync::atomic::Ordering;
use std::time::Duration;
use weir_config::{HttpConnMode, HttpReuse, RetryOn};
use weir_proto::h1::{Framing, RequestHead};

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

/// One request/response exchange after the request head was read.
#[allow(clippy::too_many_arguments)]
#[allow(clippy::manual_async_fn)] // a block: see below
pub(super) fn exchange<'r, 'a>(
    sh: &'r Shared,
    fe_idx: FrontendId,
    client: &'r Conn,
    acc: &'a Accepted,
    key: &'a [u8],
    cbuf: &'a mut Buf,
    req: &'a mut RequestHead,
    used: usize,
    held: &'a mut Option<Box<Held>>,
    first: bool,
    rec: &'a mut LogRecord<'r>,
    vars: &'a mut Vars,
) -> impl std::future::Future<Output = Outcome<'r>> + use<'r, 'a> {
    // Not an `async fn`: rustc would keep each argument twice in the
    // future (as received and as moved in), in every state of a request
    // that may wait minutes for its server; a block captures them once.
    async move {
        let fe = &sh.frontends[fe_idx];
        let fe_px = &sh.cfg.proxies[fe.proxy];
        let size = sh.bufsize;
        let limits = weir_proto::h1::Limits {
            max_head: size,
            max_headers: sh.maxhdr,
        };
        // A head whose bytes are not canonical is written anew.
        let mut dirty = !req.canonical;
        // The client asked with HEAD: whatever method rules send to the
        // server, the client's response has no body (its connection would
        // otherwise read the server's body as the next response).
        let client_head = req.method == "HEAD";
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
            body: None,
            tls: client.tls_info(),
            // The listener as the shared state holds it (the exchange's
            // view lives as long as that state).
            bind: fe.binds.get(acc.bind.index).map(|b| &*b.info),
        };
        if fe_px.http.monitor_uri.as_deref() == Some(req.uri.as_str()) {
            let local = Local {
                bytes: errors::page(200, false),
                status: 200,
                term: Term::NORMAL,
                keep: true,
            };
            let mut o = Box::pin(answer_local(client, fe_px, cbuf, used, &*req, local)).await;
            o.nolog = true;
            return o;
        }
        let header_caps = fe_px.http.capture_req.len();
        super::samples::start_record(fe_px, rec, req, vars, &tmpl);
        // The frontend's rules, the backend choice, the backend's rules.
        // Blocks: the body wait and the verdict are not kept in the states
        // that wait after them.
        let (chosen, body) = {
            let (verdict, chosen, body) = {
                let mut bw = BodyWait {
                    client,
                    cbuf,
                    used,
                    size,
                    client_timeout: fe_px.timeouts.client,
                    body: None,
                };
                let (v, c) = decide(sh, fe_idx, &mut tmpl, req, vars, &mut dirty, &mut bw).await;
                (v, c, bw.body.take())
            };
            // Addresses `set-src`/`set-dst` rules changed are the ones
            // logged and forwarded.
            rec.client = tmpl.src;
            rec.frontend_addr = tmpl.dst;
            if let Some(caps) = &mut rec.req_caps {
                for (slot, v) in vars.captures.drain(..) {
                    if let Some(c) = caps.get_mut(header_caps + slot) {
                        *c = v;
                    }
                }
            }
            if !matches!(verdict, Verdict::Continue | Verdict::WaitBody { .. }) || chosen.is_none()
            {
                // Answered here: the log line's samples see the request as it is.
                request_samples(fe_px, rec, &tmpl, &*req, vars, body.as_deref());
            }
            match verdict {
                Verdict::Continue | Verdict::WaitBody { .. } => {}
                Verdict::Fail(status, term) => {
                    cbuf.consume(used);
                    if let Some(be) = chosen {
                        rec.backend = &be.name;
                    }
                    return Box::pin(fail(client, fe_px, fe_px, status, term)).await;
                }
                Verdict::Close { reset, http } => {
                    cbuf.consume(used);
                    // As haproxy logs it: no `TR`, and from the frontend's
                    // TCP rules (run before HTTP parsing there) no request.
                    rec.t_req = -1;
                    match chosen {
                        Some(be) => rec.backend = &be.name,
                        None if !http => rec.request = "<BADREQ>",
                        None => {}
                    }
                    if reset {
                        client.set_reset_on_close();
                    }
                    let term = Term::new(Cause::Proxy, State::Request);
                    let mut o = Box::pin(fail(client, fe_px, fe_px, 0, term)).await;
                    o.keep_client = false;
                    return o;
                }
                Verdict::Respond(local) => {
                    let view = ExCtx {
                        req: Some(&*req),
                        ..tmpl
                    };
                    let local = after(local, sh, fe_px, chosen.map(|b| &**b), vars, &view);
                    return Box::pin(answer_local(client, fe_px, cbuf, used, &*req, local)).await;
                }
                Verdict::Service(weir_rules::action::Service::Prometheus) => {
                    let local = crate::runtime::prometheus(sh, &req.uri);
                    return Box::pin(answer_local(client, fe_px, cbuf, used, &*req, local)).await;
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
                        term: Term::new(Cause::Proxy, State::Tarpit),
                        keep: false,
                    };
                    let view = ExCtx {
                        req: Some(&*req),
                        ..tmpl
                    };
                    let local = after(local, sh, fe_px, chosen.map(|b| &**b), vars, &view);
                    return Box::pin(answer_local(client, fe_px, cbuf, used, &*req, local)).await;
                }
            }
            (chosen, body)
        };
        let be_stats = chosen.map(|b| &sh.cfg.proxies[b.proxy]);
        if let Some((px, page)) = super::stats_page::target(fe_px, be_stats, &req.uri) {
            let (local, took) = {
                let ctx = ExCtx {
                    req: Some(&*req),
                    vars: Some(vars),
                    body: None,
                    ..tmpl
                };
                Box::pin(super::stats_page::answer(
                    sh, client, cbuf, used, &*req, px, page, &ctx,
                ))
                .await
            };
            let view = ExCtx {
                req: Some(&*req),
                ..tmpl
            };
            let local = after(local, sh, fe_px, chosen.map(|b| &**b), vars, &view);
            return Box::pin(answer_local(client, fe_px, cbuf, took, &*req, local)).await;
        }
        let Some(be) = chosen else {
            cbuf.consume(used);
            return Box::pin(fail(
                client,
                fe_px,
                fe_px,
                503,
                Term::new(Cause::Server, State::Connect),
            ))
            .await;
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
        // The unique id's header comes before the ones `forwardfor` and
        // `originalto` add, as haproxy 2.6 orders them.
        if let (Some(h), Some(id)) = (&fe_px.http.unique_id_header, &rec.unique_id) {
            req.headers
                .push(weir_proto::h1::Header::new(h, id.as_bytes()));
            dirty = true;
        }
        dirty |= forwardfor(&plan, req, tmpl.src.map(|p| p.ip()), false);
        dirty |= forwardfor(&plan, req, tmpl.dst.map(|p| p.ip()), true);
        request_samples(fe_px, rec, &tmpl, &*req, vars, body.as_deref());
        // The wall clock only for dated cookies (`maxidle`/`maxlife`).
        let dated = be_px
            .cookie
            .as_ref()
            .is_some_and(|c| c.maxidle.is_some() || c.maxlife.is_some());
        let now_secs = if dated {
            super::now_wall().as_secs()
        } else {
            0
        };
        let (mut persist, cookie_changed) = cookie::on_request(be_px, req, now_secs);
        dirty |= cookie_changed;
        if let Some(p) = &persist {
            rec.cookie_flags = [p.req_flag, b'N'];
        }
        let server_close = mode != HttpConnMode::KeepAlive || !req.keep_alive;
        if mode != HttpConnMode::KeepAlive && !head::connection_has(&req.headers, "close") {
            head::set_connection(&mut req.headers, Some("close"));
            dirty = true;
        }
        let head_bytes: Vec<u8> = if dirty {
            head::request(&*req)
        } else {
            Vec::new()
        };
        let body_framing = req.framing;
        // Bytes of the body already read, sent with the head.
        let early_body = match body_framing {
            Framing::ContentLength(n) => (cbuf.bytes().len() - used).min(n as usize),
            _ => 0,
        };
        // The request as received (its head and the body bytes read with it)
        // leaves the client buffer now, so that no `tune.bufsize` buffer is
        // held while the server connection is made or queued: a crowd of
        // clients arriving at once would each pin one (seed 004's clients
        // that wait minutes for their answers).
        // (A rewritten head is sent from `head_bytes`: only its body bytes.)
        let from = if dirty { used } else { 0 };
        let taken: Vec<u8> = cbuf
            .bytes()
            .get(from..used + early_body)
            .map(<[u8]>::to_vec)
            .unwrap_or_default();
        cbuf.consume(used + early_body);

        let reuse_policy = be_px.http.reuse;
        let lb_key: std::borrow::Cow<'_, [u8]> = match &be_px.balance_key {
            Some(k) if be_px.balance == weir_config::Balance::Key => balance_key(k, &*req).into(),
            _ => key.into(),
        };
        // Each server's SNI for this request (only when one has `sni`).
        let sni = be.snis(&ExCtx {
            req: Some(&*req),
            be: Some(be),
            ..tmpl
        });
        let mut tries = 0;
        // The request's bytes went to a server once (a retry rebuilds them).
        let mut consumed = false;
        // `retry-on` retries done, and the server to avoid on the next try.
        let mut l7_retries = 0u32;
        let mut avoid_next: Option<usize> = None;
        loop {
            tries += 1;
            let mut reused: Option<u32> = None;
            // A block: what connecting needs (the attempts, their result)
            // is not kept in the states that wait after it.
            let conn = {
                let mut attempts = Attempts {
                    persist_to: persist
                        .as_ref()
                        .and_then(|p| p.server)
                        .filter(|_| avoid_next.is_none())
                        .map(|i| (i, be_px.options.persist)),
                    avoid: avoid_next.take(),
                    ..Attempts::default()
                };
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
                            let gen = be.servers[srv].conn_gen.load(Ordering::Relaxed);
                            if h.be == be_key && h.srv == srv && h.gen == gen {
                                if !pool::alive(&h.conn.conn) {
                                    return None;
                                }
                                reused = Some(h.uses);
                                return Some(h.conn);
                            }
                            *held = Some(h);
                        }
                        if !allow_pool || be.servers[srv].private_sni() {
                            return None;
                        }
                        let gen = be.servers[srv].conn_gen.load(Ordering::Relaxed);
                        pool::take(be_key, srv, proven_only, gen).map(|c| {
                            reused = Some(if c.proven { 2 } else { 1 });
                            Connected {
                                srv,
                                conn: c.conn,
                                server_addr: c.server_addr,
                                source_addr: c.source_addr,
                            }
                        })
                    };
                    // Boxed: its state is needed only while connecting, and an
                    // exchange waiting for its response should not carry it.
                    Box::pin(connect::connect(
                        be,
                        be_px,
                        &lb_key,
                        acc.local,
                        &mut attempts,
                        &mut reuse,
                        &sni,
                    ))
                    .await
                };
                if let Some(h) = held.take() {
                    park(sh, *h);
                }
                rec.retries = attempts.retries + l7_retries;
                rec.srv_retries = attempts.same_server_retries + l7_retries;
                rec.failed_srv = attempts.failed_srv;
                rec.redispatched |= attempts.redispatched;
                rec.srv_queue = attempts.srv_queue;
                rec.be_queue = attempts.be_queue;
                rec.tw = ms(attempts.tw);
                rec.beconn = be.conns.load(Ordering::Relaxed);
                match connected {
                    Ok(c) => {
                        rec.tc = attempts.tc.map_or(-1, ms);
                        c
                    }
                    Err(fail) => {
                        rec.server = srv_name(be, attempts.last_srv);
                        let status = match fail {
                            ConnectFail::ClientAbort { .. } => 0,
                            _ => 503,
                        };
                        let o =
                            Box::pin(self::fail(client, be_px, fe_px, status, fail.term())).await;
                        return o.at(be, attempts.last_srv);
                    }
                }
            };
            let slot = SrvSlot { be, srv: conn.srv };
            crate::sessions::set_target(acc.reg, be.proxy, Some(conn.srv));
            rec.server = srv_name(be, Some(conn.srv));
            if let Some(p) = &mut persist {
                if p.server.is_some_and(|i| i != conn.srv) {
                    // Its server could not take it: redispatched.
                    p.req_flag = b'D';
                    rec.cookie_flags[0] = b'D';
                }
            }
            rec.srvconn = be.servers[conn.srv].cur_conns.load(Ordering::Relaxed);
            rec.server_addr = conn.server_addr;
            rec.source_addr = conn.source_addr;
            if reused.is_none() {
                if let Some(s) = conn.conn.tcp() {
                    let _ = s.set_nodelay(true);
                }
            }
            let sconn = &conn.conn;
            let t_srv = XferTimeouts {
                read: fe_px.timeouts.client,
                write: be_px.timeouts.server,
            };

            // Head (with the body bytes already read) in one write.
            let rebuilt = consumed && !dirty;
            let sent_head = if let Conn::H2Up(up) = sconn {
                // An HTTP/2 server takes the head as it is, never as text;
                // the body bytes read with it follow.
                let body = if consumed {
                    &[][..]
                } else if dirty {
                    &taken[..]
                } else {
                    taken.get(used..).unwrap_or_default()
                };
                match up.send_request(req) {
                    Ok(()) => send(sconn, body, be_px.timeouts.server).await,
                    Err(_) => Err(XferError::DstError),
                }
            } else if consumed {
                // A retry of a bodyless request: the head alone.
                let b = if dirty {
                    head_bytes.clone()
                } else {
                    head::request(&*req)
                };
                send(sconn, &b, be_px.timeouts.server).await
            } else if dirty {
                let mut b = head_bytes.clone();
                b.extend_from_slice(&taken);
                send(sconn, &b, be_px.timeouts.server).await
            } else {
                send(sconn, &taken, be_px.timeouts.server).await
            };
            let head_len = if dirty {
                head_bytes.len()
            } else if rebuilt {
                head::request(&*req).len()
            } else {
                used
            };
            let sent_at = crate::clock::now();
            if sent_head.is_err() {
                if reused.is_some() && tries == 1 {
                    // The idle connection died under us: try a new one.
                    drop(slot);
                    continue;
                }
                let o = Box::pin(fail(
                    client,
                    be_px,
                    fe_px,
                    502,
                    Term::new(Cause::Server, State::Headers),
                ))
                .await;
                return o.at(be, Some(conn.srv));
            }
            consumed = true;
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
            // The body still going up when the response head came: it goes
            // on beside the response, which is relayed at once (as haproxy).
            let mut pending_up: Option<Upload<'_>> = None;
            // A block: the response as read is not kept once taken apart.
            let (mut res, rused) = {
                let (up, resp) = if no_body {
                    let r =
                        read_response(client, sconn, &mut sbuf, &limits, &req.method, be_px, fe_px)
                            .await;
                    (Ok(0), r)
                } else {
                    // Both at once; a body that fails on the client's side ends
                    // the wait for a response that cannot come. Boxed: a request
                    // without a body (the common case) does not carry their state.
                    let mut up_fut: Upload<'_> = Box::pin(transfer(
                        client,
                        &mut *cbuf,
                        sconn,
                        rest_framing,
                        size,
                        t_srv,
                        true,
                    ));
                    let mut resp_fut = Box::pin(read_response(
                        client,
                        sconn,
                        &mut sbuf,
                        &limits,
                        &req.method,
                        be_px,
                        fe_px,
                    ));
                    let mut up = None;
                    let resp = loop {
                        tokio::select! {
                            r = &mut up_fut, if up.is_none() => {
                                let client_failed = matches!(&r, Err(e) if *e != XferError::DstError);
                                up = Some(r);
                                if client_failed {
                                    break Err(RespFail::Closed);
                                }
                            }
                            r = &mut resp_fut => break r,
                        }
                    };
                    drop(resp_fut);
                    let up = match up {
                        Some(r) => r,
                        None => {
                            if resp.is_ok() {
                                pending_up = Some(up_fut);
                            }
                            Ok(0)
                        }
                    };
                    (up, resp)
                };
                match up {
                    Ok(n) => bytes_in += n,
                    Err(e) => {
                        let status = match e {
                            XferError::Invalid(e) => e.status(),
                            XferError::SrcTimeout => 408,
                            XferError::SrcClosed | XferError::SrcError => 400,
                            XferError::DstError => 502,
                            XferError::DstTimeout => 504,
                        };
                        let term = upload_term(e);
                        if resp.is_err() || !matches!(e, XferError::DstError) {
                            drop(pending_up);
                            let answered = !matches!(e, XferError::SrcClosed | XferError::SrcError);
                            sconn.set_reset_on_close();
                            let mut o = if let XferError::Invalid(why) = e {
                                // A body that cannot be read is the client's
                                // error: logged (`PH`: the server had not
                                // answered yet, as haproxy says), kept for
                                // `show errors`, answered with a close.
                                sh.errors.record(
                                    fe.proxy,
                                    false,
                                    None,
                                    acc.peer,
                                    why.to_string(),
                                    cbuf.bytes(),
                                );
                                Box::pin(fail_as(
                                    client,
                                    be_px,
                                    fe_px,
                                    status,
                                    Term::new(Cause::Proxy, State::Headers),
                                    true,
                                ))
                                .await
                            } else if answered {
                                Box::pin(fail(client, be_px, fe_px, status, term)).await
                            } else {
                                Outcome::error(status, term)
                            };
                            o.bytes_in = bytes_in;
                            return o.at(be, Some(conn.srv));
                        }
                    }
                }
                // `retry-on` (and a reused connection the server had closed).
                let retry_on = be_px.http.retry_on.as_deref().unwrap_or(&[]);
                let wants = |c: RetryOn| retry_on.contains(&c);
                let retryable = body_framing == Framing::None && l7_retries < be_px.retries;
                let again = match &resp {
                    Err(RespFail::Empty | RespFail::Reset)
                        if reused.is_some() && tries == 1 && body_framing == Framing::None =>
                    {
                        Some(false)
                    }
                    Err(RespFail::Empty | RespFail::Closed | RespFail::Reset)
                        if wants(RetryOn::EmptyResponse) =>
                    {
                        Some(true)
                    }
                    Err(RespFail::Timeout) if wants(RetryOn::ResponseTimeout) => Some(true),
                    Err(RespFail::Invalid) if wants(RetryOn::JunkResponse) => Some(true),
                    Ok((r, _)) if wants(RetryOn::Status(r.status)) => Some(true),
                    _ => None,
                };
                if let Some(counted) = again.filter(|c| !c || retryable) {
                    if counted {
                        l7_retries += 1;
                        if be_px.options.redispatch {
                            avoid_next = Some(conn.srv);
                            rec.redispatched = true;
                        }
                    }
                    sconn.set_reset_on_close();
                    drop(slot);
                    continue;
                }
                match resp {
                    Ok(r) => r,
                    Err(f) => {
                        if f == RespFail::Invalid {
                            let s = &be_px.servers[conn.srv];
                            let server = Some((s.name.clone(), s.uid));
                            let reason = "invalid response head".to_string();
                            sh.errors.record(
                                be.proxy,
                                true,
                                server,
                                acc.peer,
                                reason,
                                sbuf.bytes(),
                            );
                        }
                        let (status, term): (u16, Term) = match f {
                            RespFail::Timeout => {
                                (504, Term::new(Cause::ServerTimeout, State::Headers))
                            }
                            RespFail::Invalid => (502, Term::new(Cause::Proxy, State::Headers)),
                            RespFail::Empty | RespFail::Closed | RespFail::Reset => {
                                (502, Term::new(Cause::Server, State::Headers))
                            }
                            RespFail::ClientGone => (0, Term::new(Cause::Client, State::Headers)),
                        };
                        // haproxy counts a reset before the head as two
                        // response errors (one for the read, one for the end).
                        rec.srv_reset = f == RespFail::Reset;
                        // No response came: `Tr` is -1, as haproxy logs it.
                        let mut o = Box::pin(fail(client, be_px, fe_px, status, term)).await;
                        o.bytes_in = bytes_in;
                        return o.at(be, Some(conn.srv));
                    }
                }
            };
            let t_res = ms(crate::clock::elapsed(sent_at));
            // The backend's `tcp-response content` rules, on the head.
            let mut close_server = false;
            if !be_px.tcp.response.is_empty() {
                use crate::tcp::rules::{run, Decision, Subject};
                let view = ExCtx {
                    req: Some(&*req),
                    res: Some(&res),
                    srv: rec.server,
                    ..tmpl
                };
                let (mut peer, mut local) = (tmpl.src, tmpl.dst);
                let mut subj = Subject {
                    peer: &mut peer,
                    local: &mut local,
                    expect_proxy: None,
                    vars: &mut *vars,
                };
                let rules = &be_px.tcp.response;
                match run(weir_rules::TcpRuleSet::Response, rules, &view, &mut subj) {
                    Decision::Go => {}
                    Decision::Close => close_server = true,
                    d @ (Decision::Reject | Decision::Drop) => {
                        // Nothing goes to the client: `PD`, as haproxy logs it.
                        sconn.set_reset_on_close();
                        if d == Decision::Drop {
                            client.set_reset_on_close();
                        }
                        let term = Term::new(Cause::Proxy, State::Data);
                        let mut o = Box::pin(fail(client, be_px, fe_px, 0, term)).await;
                        o.bytes_in = bytes_in;
                        o.keep_client = false;
                        return o.at(be, Some(conn.srv));
                    }
                }
            }
            let mut rdirty = !res.canonical;
            // A block: the response's rules and samples do not wait, so
            // their context is not kept in the states that do.
            let replaced = {
                let rtmpl = ExCtx {
                    req: Some(&*req),
                    srv: rec.server,
                    ..tmpl
                };
                let order = rules::response_order(Some(be_px), fe_px);
                let replaced =
                    rules::run_response_phases(order, false, &mut res, vars, &rtmpl, &mut rdirty);
                if !fe_px.http.capture_res.is_empty() {
                    rec.res_caps = Some(capture(&fe_px.http.capture_res, &res.headers));
                }
                log_samples(
                    fe_px,
                    rec,
                    &ExCtx {
                        req: Some(&*req),
                        res: Some(&res),
                        vars: Some(vars),
                        body: body.as_deref(),
                        ..rtmpl
                    },
                );
                replaced
            };
            if let (Some(p), None) = (&persist, &replaced) {
                let (flag, changed) =
                    cookie::on_response(be_px, conn.srv, p, &req.method, &mut res, now_secs);
                rdirty |= changed;
                rec.cookie_flags = [p.req_flag, flag];
            }
            if let Some(local) = replaced {
                // The server's answer is dropped, and its connection with it.
                sconn.set_reset_on_close();
                let view = ExCtx {
                    req: Some(&*req),
                    srv: rec.server,
                    ..tmpl
                };
                let local = after(local, sh, fe_px, Some(be), vars, &view);
                let mut o = Box::pin(answer_local(
                    client,
                    fe_px,
                    &mut Buf::default(),
                    0,
                    &*req,
                    local,
                ))
                .await;
                o.bytes_in = bytes_in;
                o.t_res = t_res;
                o.keep_client = false;
                return o;
            }

            // Connection management on both sides.
            let tunnel = res.framing == Framing::Tunnel;
            // A body the HEAD client must not get is read from the server
            // and dropped (its connection stays usable, as haproxy's).
            let skip_body = client_head && !matches!(res.framing, Framing::None | Framing::Tunnel);
            // Chunks in an HTTP/1.0 response: framing HTTP/1.0 does not
            // know, so the client's connection closes after it (RFC 9112
            // §6.1), as haproxy does.
            let chunked_10 = res.minor == 0 && res.framing == Framing::Chunked;
            let keep_client = req.keep_alive
                && mode != HttpConnMode::Close
                && (res.framing != Framing::UntilClose || skip_body)
                && !chunked_10
                && !*sh.stopping.borrow();
            let mut keep_server = !server_close && !close_server && res.keep_alive && !tunnel;
            if !tunnel {
                let (has_close, has_ka) = (
                    head::connection_has(&res.headers, "close"),
                    head::connection_has(&res.headers, "keep-alive"),
                );
                if req.minor >= 1 {
                    if keep_client && has_close {
                        head::set_connection(&mut res.headers, None);
                        rdirty = true;
                    } else if !keep_client && !has_close && !chunked_10 {
                        // (An HTTP/1.0 response says close by its version:
                        // haproxy adds nothing to a chunked one.)
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
                _ if skip_body => 0,
                Framing::ContentLength(n) => (sbuf.bytes().len() - rused).min(n as usize),
                _ => 0,
            };
            let sent = if let Conn::H2(h) = client {
                // An HTTP/2 client takes the parsed head as it is (its
                // stream ends with it when its HEAD gets no body).
                let early_body = &sbuf.bytes()[rused..rused + early];
                let framing = res.framing;
                if skip_body {
                    res.framing = Framing::None;
                }
                let r = h
                    .respond(&res, early_body)
                    .map(|()| rused)
                    .map_err(|_| XferError::DstError);
                res.framing = framing;
                r
            } else if rdirty {
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
                term: Term::NORMAL,
                bytes_in,
                bytes_out: 0,
                t_res,
                keep_client,
                tunnel,
                nolog: false,
            };
            match sent {
                Ok(n) => out.bytes_out = (n + early) as u64,
                Err(e) => {
                    out.term = if e == XferError::DstTimeout {
                        Term::new(Cause::ClientTimeout, State::Data)
                    } else {
                        Term::new(Cause::Client, State::Data)
                    };
                    out.keep_client = false;
                    sconn.set_reset_on_close();
                    return out;
                }
            }
            if tunnel {
                // A body still coming cannot be told from the tunnel's bytes.
                // (`map` moves the upload, and its borrows, out of the way.)
                if pending_up.map(drop).is_some() {
                    out.keep_client = false;
                    out.term = Term::new(Cause::Proxy, State::Data);
                    sconn.set_reset_on_close();
                    return out;
                }
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
                let t = FwdTimeouts::between(fe_px, be_px);
                let opts = FwdOptions {
                    bufsize: size,
                    splice_request: false,
                    splice_response: false,
                    pipesize: sh.pipesize,
                };
                let r = Box::pin(Duplex::new(client, sconn, t, opts, &initial, false)).await;
                out.bytes_in += r.client_to_server;
                out.bytes_out += r.server_to_client + leftover.len() as u64;
                out.term = r.end.term();
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
            // The upload is moved in: its borrows end with the call.
            let body = async {
                if skip_body {
                    // Read to its end and dropped: nothing reaches the client.
                    drain(sconn, &mut sbuf, rest, size, t_cli).await.map(|_| 0)
                } else {
                    transfer(sconn, &mut sbuf, client, rest, size, t_cli, false).await
                }
            };
            let (down, up) = beside(body, pending_up).await;
            match up {
                Some(Ok(n)) => out.bytes_in += n,
                Some(Err(e)) => {
                    // The request never ended as it should: neither side is
                    // kept, and the log says which side failed.
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
                    return out;
                }
            }
            if keep_server && sbuf.is_empty() {
                let h = Held {
                    be: be.proxy,
                    srv: conn.srv,
                    uses: reused.unwrap_or(0) + 1,
                    gen: be.servers[conn.srv].conn_gen.load(Ordering::Relaxed),
                    conn,
                };
                // The connection goes back to the thread's idle pool, where
                // this client's next request (or another's) finds it; an idle
                // client holds none. `http-reuse never` keeps it private.
                if reuse_policy == HttpReuse::Never && out.keep_client {
                    *held = Some(Box::new(h));
                } else {
                    park(sh, h);
                }
            } else if conn.conn.is_tcp() {
                // Nothing is left to deliver either way: a plain connection
                // closes with a reset, as HAProxy's do, so that no FIN
                // exchange follows and no TIME_WAIT is left on either side
                // (about 4 % of the proxy's CPU per connection).
                conn.conn.set_reset_on_close();
            }
            drop(slot);
            return out;
        }
    }
}

/// A request body still on its way to the server.
type Upload<'u> =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<u64, XferError>> + Send + 'u>>;

/// Runs `down` (a response body on its way to the client) and, beside it,
/// the rest of a request body still going up when the server answered.
async fn beside<T>(
    down: impl std::future::Future<Output = T>,
    up: Option<Upload<'_>>,
) -> (T, Option<Result<u64, XferError>>) {
    match up {
        None => (down.await, None),
        Some(up) => {
            let (d, u) = tokio::join!(down, up);
            (d, Some(u))
        }
    }
}

/// The name of server `i` of `be`, for the log line.
fn srv_name(be: &BackendRt, i: Option<usize>) -> Option<&str> {
    i.and_then(|i| be.servers.get(i)).map(|s| s.name.as_str())
}
