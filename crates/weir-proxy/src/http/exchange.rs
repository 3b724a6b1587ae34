//! One request/response exchange, phase by phase: the rules and the
//! backend choice (or an answer weir makes itself), the request as the
//! server gets it, then tries against servers (`attempt.rs`: connect, send,
//! await the response, retry) until one answers and its response goes back
//! (`respond.rs`). Its outcome and weir's own answers are in `outcome.rs`,
//! the log samples in `samples.rs`.

use super::attempt::{self, Tries};
use super::decide::{decide, BodyWait};
use super::io::{Buf, XferError};
use super::outcome::{after, answer_local, fail, Outcome};
use super::peer::Peer;
use super::request::{balance_key, forwardfor, ConnModeExt, Plan};
use super::respond::{self, Kept, Next};
use super::rules::{ExCtx, Local, Vars, Verdict};
use super::samples::request_samples;
use super::{cookie, errors, head, ms, park, Held};
use crate::conn::Io;
use crate::log::LogRecord;
use crate::session::Accepted;
use crate::state::{BackendRt, FrontendId, Shared};
use crate::term::{Cause, State, Term};
use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;
use weir_config::{HttpConnMode, Proxy};
use weir_proto::h1::{Framing, RequestHead};

/// What every phase of an exchange reads: the shared state, the frontend's
/// proxy and the client connection.
#[derive(Clone, Copy)]
pub(super) struct Front<'r> {
    pub sh: &'r Shared,
    pub fe_idx: FrontendId,
    pub fe_px: &'r Proxy,
    pub client: Peer<'r>,
}

/// [`Front`] once a backend was chosen.
#[derive(Clone, Copy)]
pub(super) struct Route<'r> {
    pub f: Front<'r>,
    pub be: &'r BackendRt,
    pub be_px: &'r Proxy,
    /// The exchange's server and tunnel timeouts: the backend's, unless
    /// `set-timeout` changed them.
    pub server_timeout: Option<std::time::Duration>,
    pub tunnel_timeout: Option<std::time::Duration>,
}

impl<'r> Route<'r> {
    /// The splicing `option splice-*` allows for the request's body
    /// (`request`) or the response's, on either proxy, unless `nosplice`.
    pub fn splicing(&self, request: bool) -> Option<super::splicing::Splicing<'r>> {
        let sh = self.f.sh;
        let on = |o: &weir_config::ProxyOptions| {
            o.splice_auto
                || if request {
                    o.splice_request
                } else {
                    o.splice_response
                }
        };
        if sh.nosplice || !(on(&self.f.fe_px.options) || on(&self.be_px.options)) {
            return None;
        }
        let fe = &sh.frontend(self.f.fe_idx).counters;
        let be = &self.be.counters;
        let (from, to) = if request { (fe, be) } else { (be, fe) };
        Some(super::splicing::Splicing {
            pipesize: sh.pipesize,
            from,
            to,
        })
    }
}

/// The request as the server gets it, made once for every try.
pub(super) struct Prepared<'k> {
    /// The head was rewritten: `wire` starts with it, not its bytes.
    pub dirty: bool,
    /// What the first try sends in one write: the head (as received, or
    /// rewritten) and the body bytes read with it, out of the client
    /// buffer.
    pub wire: Vec<u8>,
    /// The head's size in `wire`.
    pub head_len: usize,
    /// Body bytes in `wire`, after the head.
    pub early_body: usize,
    pub body_framing: Framing,
    pub persist: Option<cookie::Persist>,
    /// The wall clock's seconds, for dated cookies (0 otherwise).
    pub now_secs: u64,
    pub mode: HttpConnMode,
    /// The server connection closes after this exchange.
    pub server_close: bool,
    pub lb_key: Cow<'k, [u8]>,
    /// Each server's SNI for this request (only when one has `sni`).
    pub sni: Vec<Option<String>>,
    /// The client asked with HEAD: whatever method rules send to the
    /// server, the client's response has no body.
    pub client_head: bool,
    /// The server a `use-server` rule chose.
    pub use_server: Option<crate::state::ServerId>,
    /// A persistence keeps its server even when it is down.
    pub force_persist: bool,
    /// Where `stick on|store-request` store the server once connected.
    pub stick: crate::sticky::Sticky,
    /// The client's last server, preferred (never forced).
    pub prefer: Option<crate::state::ServerId>,
    /// A WebSocket upgrade: it takes the server's `ws` protocol.
    pub websocket: bool,
    /// The compression the client accepts (`compression algo`).
    pub comp: Option<weir_config::model::CompAlgo>,
    /// The request for the backend's FastCGI application (`use-fcgi-app`).
    pub fcgi: Option<Result<crate::fcgi::Request, crate::fcgi::Refusal>>,
}

/// One request/response exchange after the request head was read.
#[allow(clippy::too_many_arguments)]
#[allow(clippy::manual_async_fn)] // a block: see below
pub(super) fn exchange<'r, 'a>(
    sh: &'r Shared,
    fe_idx: FrontendId,
    client: Peer<'r>,
    acc: &'r Accepted,
    key: &'a [u8],
    cbuf: &'a mut Buf,
    req: &'a mut RequestHead,
    used: usize,
    held: &'a mut Option<Box<Held>>,
    first: bool,
    rec: &'a mut LogRecord<'r>,
    vars: &'a mut Vars,
    last: Option<super::Last>,
) -> impl std::future::Future<Output = Outcome<'r>> + use<'r, 'a> {
    // Not an `async fn`: rustc would keep each argument twice in the
    // future (as received and as moved in), in every state of a request
    // that may wait minutes for its server; a block captures them once.
    async move {
        let fe = sh.frontend(fe_idx);
        let f = Front {
            sh,
            fe_idx,
            fe_px: sh.proxy(fe.proxy),
            client,
        };
        // A head whose bytes are not canonical is written anew.
        let mut dirty = !req.canonical;
        let client_head = req.method == "HEAD";
        let mut tmpl = template(f, acc, first);
        if f.fe_px
            .http
            .monitor_uri
            .as_deref()
            .is_some_and(|m| monitor_matches(m, &req.uri))
        {
            return Box::pin(monitor(f, &tmpl, cbuf, used, req, vars)).await;
        }
        super::samples::start_record(f.fe_px, rec, req, vars, &tmpl);
        let (chosen, body) =
            match rules_phase(f, &mut tmpl, cbuf, req, used, rec, vars, &mut dirty).await {
                Ok(c) => c,
                Err(o) => return o,
            };
        let Some(be) = chosen else {
            return Box::pin(no_backend(f, &tmpl, cbuf, used, req, vars)).await;
        };
        let be_px = sh.proxy(be.proxy);
        let r = Route {
            f,
            be,
            be_px,
            server_timeout: vars.timeouts.server.or(be_px.timeouts.server),
            tunnel_timeout: vars.timeouts.tunnel.or(be_px.timeouts.tunnel),
        };
        tmpl.be = Some(be);
        rec.backend = &be.name;
        let mut p = prepare(
            r,
            &tmpl,
            cbuf,
            req,
            used,
            key,
            rec,
            vars,
            body.as_deref(),
            dirty,
        );
        p.client_head = client_head;
        p.prefer = prefer_last(r, last, &p);
        let mut tries = Tries::default();
        loop {
            tries.count += 1;
            let (conn, reused) =
                match attempt::connect(r, acc, held, &p, &mut tries, first, rec).await {
                    Ok(c) => c,
                    Err(o) => return o,
                };
            let slot = attempt::SrvSlot::new(be, conn.srv);
            crate::sessions::set_target(acc.reg, be.proxy, Some(conn.srv));
            attempt::note_server(r, &conn, reused, &mut p.persist, rec);
            p.stick.store(r.be, conn.srv);
            let at = Some(conn.srv);
            let sent = attempt::send_request(r, &conn, req, &p, reused, &mut tries).await;
            let mut bytes_in = match sent {
                Ok(n) => n,
                Err(Some(o)) => return o,
                Err(None) => {
                    drop(slot);
                    continue;
                }
            };
            let sent_at = crate::clock::now();
            let sconn = conn.conn.peer();
            let mut sbuf = Buf::default();
            // The body still going up when the response head came goes on
            // beside the response, which is relayed at once (as haproxy).
            let sent = super::io::Activity::default();
            let mut up = attempt::upload(r, &mut *cbuf, sconn, &p, &sent);
            let mut interim = 0;
            let upload = (up.as_mut(), &sent);
            let resp = attempt::response(r, sconn, &mut sbuf, req, upload, &mut interim);
            let (went_up, resp) = resp.await;
            observe_response(r.be, conn.srv, &resp);
            if went_up.is_some() || resp.is_err() {
                up = None;
            }
            match went_up {
                Some(Ok(n)) => bytes_in += n,
                Some(Err(e)) if resp.is_err() || e != XferError::DstError => {
                    drop(up);
                    let o = attempt::upload_failed(r, acc, cbuf, sconn, e, bytes_in).await;
                    return o.at(be, at);
                }
                _ => {}
            }
            if attempt::retry(r, &resp, reused, &p, &mut tries, conn.srv, rec) {
                sconn.set_reset_on_close();
                drop(slot);
                continue;
            }
            let (res, rused) = match resp {
                Ok(x) => x,
                Err(e) => {
                    let mut o = attempt::response_failed(r, acc, conn.srv, &sbuf, e, rec);
                    o.bytes_in = bytes_in;
                    return o.at(be, at);
                }
            };
            let s = respond::Sent {
                conn: sconn,
                srv: conn.srv,
                bytes_in,
                interim,
                t_res: ms(crate::clock::elapsed(sent_at)),
            };
            let b = body.as_deref();
            let next = respond::head(r, &tmpl, &s, res, rused, &mut sbuf, req, &p, b, rec, vars);
            let (out, kept) = match next.await {
                Next::Done(o) => return o,
                // A body still coming cannot be told from the tunnel's bytes.
                Next::Tunnel(o) if up.is_some() => return respond::no_tunnel(sconn, o),
                Next::Tunnel(o) => {
                    drop(up);
                    return respond::tunnel(r, sconn, &mut sbuf, cbuf, o).await;
                }
                Next::Body(o, down) => respond::body(r, sconn, &mut sbuf, up, o, down).await,
            };
            if kept != Kept::AsIs {
                finish(r, conn, kept, reused, &sbuf, out.keep_client, held);
            }
            drop(slot);
            return out;
        }
    }
}

/// What the rules of every phase see of the exchange before its request,
/// response and variables are added.
fn template<'r>(f: Front<'r>, acc: &'r Accepted, first: bool) -> ExCtx<'r> {
    let fe = f.sh.frontend(f.fe_idx);
    ExCtx {
        src: acc.peer,
        dst: acc.local,
        first,
        tls: f.client.tls_info(),
        // The listener as the shared state holds it (the exchange's view
        // lives as long as that state).
        bind: fe.binds.get(acc.bind.index).map(|b| &*b.info),
        acc: Some(acc),
        ..ExCtx::bare(f.sh, f.fe_idx)
    }
}

/// No backend for the request: a 503, which the frontend's
/// `http-after-response` rules see as haproxy's do.
async fn no_backend<'r>(
    f: Front<'r>,
    tmpl: &ExCtx<'_>,
    cbuf: &mut Buf,
    used: usize,
    req: &RequestHead,
    vars: &mut Vars,
) -> Outcome<'r> {
    let local = Local {
        bytes: errors::response_of(&[f.fe_px], 503, false),
        status: 503,
        term: Term::new(Cause::Server, State::Connect),
        keep: false,
    };
    let view = ExCtx {
        req: Some(req),
        ..*tmpl
    };
    let local = after(local, f.sh, f.fe_px, None, vars, &view);
    answer_local(cbuf, used, req, local)
}

/// Whether request target `uri` is `monitor-uri`'s `m`, as haproxy 2.6
/// compares them: a path is compared with the target's path (an
/// absolute-form target's too), an absolute URI with the whole target.
fn monitor_matches(m: &str, uri: &str) -> bool {
    if !m.starts_with('/') {
        return m == uri;
    }
    let path = match uri.split_once("://") {
        Some((_, rest)) => rest.find('/').map_or("/", |i| rest.get(i..).unwrap_or("/")),
        None => uri,
    };
    path == m
}

/// `monitor-uri`: a 200, or a 503 when a `monitor fail` condition holds
/// (the proxy's pages, `http-after-response` applied), not logged.
async fn monitor<'r>(
    f: Front<'r>,
    tmpl: &ExCtx<'r>,
    cbuf: &mut Buf,
    used: usize,
    req: &RequestHead,
    vars: &mut Vars,
) -> Outcome<'r> {
    let view = ExCtx {
        req: Some(req),
        ..*tmpl
    };
    let fail = f.fe_px.http.monitor_fail.iter().any(|c| c.eval(&view));
    let status = if fail { 503 } else { 200 };
    let local = Local {
        bytes: errors::reply_of(&[f.fe_px], status, &view),
        status,
        term: Term::NORMAL,
        keep: true,
    };
    let local = after(local, f.sh, f.fe_px, None, vars, &view);
    let mut o = answer_local(cbuf, used, req, local);
    o.nolog = true;
    o
}

/// The frontend's rules, the backend choice and the backend's rules. An
/// answer weir makes itself (deny, redirect, tarpit, a service, the stats
/// page) ends the exchange: `Err` with its outcome.
#[allow(clippy::too_many_arguments)]
async fn rules_phase<'r>(
    f: Front<'r>,
    tmpl: &mut ExCtx<'r>,
    cbuf: &mut Buf,
    req: &mut RequestHead,
    used: usize,
    rec: &mut LogRecord<'r>,
    vars: &mut Vars,
    dirty: &mut bool,
) -> Result<(Option<&'r Arc<BackendRt>>, Option<Vec<u8>>), Outcome<'r>> {
    let fe_px = f.fe_px;
    // Blocks: the body wait and the verdict are not kept in the states
    // that wait after them.
    let (verdict, chosen, body) = {
        let mut bw = BodyWait {
            client: f.client,
            cbuf,
            used,
            size: f.sh.bufsize,
            client_timeout: fe_px.timeouts.client,
            body: None,
        };
        let (v, c) = decide(f.sh, tmpl.fe_idx, tmpl, req, vars, dirty, &mut bw).await;
        (v, c, bw.body.take())
    };
    // Addresses `set-src`/`set-dst` rules changed are the ones logged and
    // forwarded.
    rec.client = tmpl.src;
    rec.frontend_addr = tmpl.dst;
    if rec.req_caps.is_some() {
        rec.req_caps = Some(vars.caps.values(false, fe_px.http.req_captures.len()));
    }
    let go_on = matches!(
        verdict,
        Verdict::Continue
            | Verdict::WaitBody { .. }
            | Verdict::Resolve { .. }
            | Verdict::Lua { .. }
            | Verdict::Spoe { .. }
    );
    if !go_on || chosen.is_none() {
        // Answered here: the log line's samples see the request as it is.
        request_samples(fe_px, rec, tmpl, &*req, vars, body.as_deref());
    }
    if !go_on {
        let answered = Box::pin(answer(f, verdict, chosen, tmpl, cbuf, req, used, rec, vars));
        if let Some(o) = answered.await {
            return Err(o);
        }
    }
    let be_stats = chosen.map(|b| f.sh.proxy(b.proxy));
    if let Some((px, page)) = super::service::target(fe_px, be_stats, &req.uri) {
        let (local, took) = {
            let ctx = ExCtx {
                req: Some(&*req),
                vars: Some(vars),
                body: None,
                ..*tmpl
            };
            let r = super::service::StatsRequest {
                sh: f.sh,
                client: f.client,
                cbuf,
                used,
                req: &*req,
                px,
                page,
                ctx: &ctx,
            };
            super::service::stats_page(r).await
        };
        let view = ExCtx {
            req: Some(&*req),
            ..*tmpl
        };
        let local = after(local, f.sh, fe_px, chosen.map(|b| &**b), vars, &view);
        // A service that read the whole body (an admin form) leaves nothing
        // of the request behind: the connection may stay open.
        if matches!(req.framing, Framing::ContentLength(n) if took as u64 == used as u64 + n) {
            req.framing = Framing::None;
        }
        return Err(answer_local(cbuf, took, &*req, local));
    }
    Ok((chosen, body))
}

/// The answer to a verdict that ends the exchange before any server (none
/// for one that lets the request go on).
#[allow(clippy::too_many_arguments)]
async fn answer<'r>(
    f: Front<'r>,
    verdict: Verdict,
    chosen: Option<&'r Arc<BackendRt>>,
    tmpl: &ExCtx<'r>,
    cbuf: &mut Buf,
    req: &RequestHead,
    used: usize,
    rec: &mut LogRecord<'r>,
    vars: &mut Vars,
) -> Option<Outcome<'r>> {
    let (sh, fe_px, client) = (f.sh, f.fe_px, f.client);
    // What the connection and request rules asked of the client's socket.
    crate::conn::apply_sockopts(client.tcp(), &mut vars.sockopts);
    let view = ExCtx {
        req: Some(req),
        ..*tmpl
    };
    let local = match verdict {
        Verdict::Continue | Verdict::WaitBody { .. } | Verdict::Resolve { .. } => return None,
        Verdict::Fail(status, term) => {
            cbuf.consume(used);
            let o = fail(fe_px, fe_px, status, term);
            let Some(be) = chosen else {
                return Some(o);
            };
            rec.backend = &be.name;
            // An internal error (a rewrite that found no room) counts on
            // the backend chosen, as haproxy's `eint`.
            return Some(if term.cause == Cause::Internal {
                o.at(be, None)
            } else {
                o
            });
        }
        Verdict::Close { reset, http } => {
            cbuf.consume(used);
            // As haproxy logs it: no `TR`, and from the frontend's TCP
            // rules (run before HTTP parsing there) no request.
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
            let mut o = fail(fe_px, fe_px, 0, term);
            o.keep_client = false;
            return Some(o);
        }
        Verdict::Respond(local) => after(local, sh, fe_px, chosen.map(|b| &**b), vars, &view),
        Verdict::Service(weir_rules::action::Service::Prometheus) => {
            super::service::prometheus(sh, &req.uri)
        }
        Verdict::Service(weir_rules::action::Service::Lua(name)) => {
            let (be, view) = (chosen.map(|b| &**b), &view);
            let o = super::scripted::service(
                sh, fe_px, be, &name, view, client, cbuf, req, used, rec, vars,
            );
            return Some(Box::pin(o).await);
        }
        Verdict::Lua { .. } | Verdict::Spoe { .. } => return None,
        Verdict::Cached { local, name } => {
            // The cached answer goes through the response rules, as a
            // server's, which see `res.cache_hit`; logged as haproxy logs
            // the cache's applet.
            vars.cache_hit = Some(name);
            rec.tw = 0;
            rec.tc = 0;
            let be_px = chosen.map(|b| sh.proxy(b.proxy));
            let order = super::rules::response_order(be_px, fe_px);
            let local = super::rules::after_local(local, order, false, vars, &view);
            let o = answer_local(cbuf, used, req, local);
            return Some(super::outcome::Outcome { t_res: 0, ..o });
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
            after(local, sh, fe_px, chosen.map(|b| &**b), vars, &view)
        }
    };
    Some(answer_local(cbuf, used, req, local))
}

/// The request as the server gets it: the unique id's, `forwardfor`'s and
/// `originalto`'s headers, persistence, the connection header; then the
/// request leaves the client buffer, so that no `tune.bufsize` buffer is
/// held while the server connection is made or queued (a crowd of clients
/// arriving at once would each pin one: seed 004's clients that wait
/// minutes for their answers).
#[allow(clippy::too_many_arguments)]
fn prepare<'k>(
    r: Route<'_>,
    tmpl: &ExCtx<'_>,
    cbuf: &mut Buf,
    req: &mut RequestHead,
    used: usize,
    key: &'k [u8],
    rec: &mut LogRecord<'_>,
    vars: &Vars,
    body: Option<&[u8]>,
    mut dirty: bool,
) -> Prepared<'k> {
    let (fe_px, be_px) = (r.f.fe_px, r.be_px);
    let mode = fe_px.http.conn_mode.max_with(be_px.http.conn_mode);
    let plan = Plan {
        fe: fe_px,
        be: be_px,
    };
    // The unique id's header comes before the ones `forwardfor` and
    // `originalto` add, as haproxy 2.6 orders them.
    if let (Some(h), Some(id)) = (&fe_px.http.unique_id_header, &rec.unique_id) {
        req.headers
            .push(weir_proto::h1::Header::new(h, id.as_bytes()));
        dirty = true;
    }
    dirty |= forwardfor(&plan, req, tmpl.src.map(|p| p.ip()), false);
    dirty |= forwardfor(&plan, req, tmpl.dst.map(|p| p.ip()), true);
    request_samples(fe_px, rec, tmpl, &*req, vars, body);
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
    // (A cookie naming a server deleted at run time names none.)
    if let Some(p) = persist.as_mut() {
        let gone = p
            .server
            .and_then(|i| r.be.server_at(i))
            .is_some_and(|s| s.deleted.load(std::sync::atomic::Ordering::Relaxed));
        if gone {
            p.server = None;
            p.req_flag = b'I';
        }
    }
    if let Some(p) = &persist {
        rec.cookie_flags = [p.req_flag, b'N'];
    }
    let (use_server, force, stick) = persistence(r, tmpl, req, vars, persist.as_mut());
    let comp = super::compress::choose(fe_px, be_px, req, &mut dirty);
    let server_close = mode != HttpConnMode::KeepAlive || !req.keep_alive;
    if mode != HttpConnMode::KeepAlive && be_px.options.pretend_keepalive {
        // The server is told the connection stays open (a 1.0 request says
        // so); weir closes it after the answer all the same.
        let v = (req.minor == 0).then_some("keep-alive");
        head::set_connection(&mut req.headers, v);
        dirty = true;
    } else if mode != HttpConnMode::KeepAlive && req.minor == 0 {
        // HTTP/1.0 closes unless told otherwise: nothing to say, as haproxy.
        if head::connection_has(&req.headers, "keep-alive") {
            head::set_connection(&mut req.headers, None);
            dirty = true;
        }
    } else if mode != HttpConnMode::KeepAlive && !head::connection_has(&req.headers, "close") {
        head::set_connection(&mut req.headers, Some("close"));
        dirty = true;
    }
    let body_framing = req.framing;
    // Bytes of the body already read, sent with the head.
    let early_body = match body_framing {
        Framing::ContentLength(n) => (cbuf.bytes().len() - used).min(n as usize),
        _ => 0,
    };
    // `option h1-case-adjust-bogus-server`: names spelled for the server.
    if be_px.options.h1_case_adjust_bogus_server {
        dirty |= head::adjust_case(&mut req.headers, &r.f.sh.cfg.global.h1_case_adjust);
    }
    // A rewritten head is written anew, followed by the body bytes only.
    let (mut wire, from) = if dirty {
        (head::request(&*req), used)
    } else {
        (Vec::new(), 0)
    };
    let head_len = if dirty { wire.len() } else { used };
    wire.extend_from_slice(
        cbuf.bytes()
            .get(from..used + early_body)
            .unwrap_or_default(),
    );
    cbuf.consume(used + early_body);
    let ctx = ExCtx {
        req: Some(&*req),
        be: Some(r.be),
        vars: Some(vars),
        body,
        ..*tmpl
    };
    let lb_key: Cow<'k, [u8]> = match &be_px.balance_key {
        Some(k) if be_px.balance == weir_config::Balance::Key => balance_key(k, req, &ctx).into(),
        _ => key.into(),
    };
    let sni = r.be.snis(&ctx);
    let fcgi = r.be.fcgi.as_ref().map(|app| {
        let facts = crate::fcgi::Facts {
            src: tmpl.src,
            dst: tmpl.dst,
            https: tmpl.tls.is_some(),
            body_len: crate::fcgi::body_len(req.framing, cbuf.bytes()),
        };
        crate::fcgi::request(&app.conf, req, &facts, &ctx)
    });
    Prepared {
        dirty,
        wire,
        head_len,
        early_body,
        body_framing,
        persist,
        now_secs,
        mode,
        server_close,
        lb_key,
        sni,
        client_head: false,
        use_server,
        force_persist: force,
        stick,
        prefer: None,
        websocket: crate::h2::upgrade_protocol(req)
            .is_some_and(|p| p.eq_ignore_ascii_case(b"websocket")),
        comp,
        fcgi,
    }
}

/// `option prefer-last-server`, and haproxy's stick to a server that
/// asked for authentication (401, 407): the server of the client's last
/// request, when the algorithm is not deterministic and neither a rule
/// nor a cookie chose.
fn prefer_last(
    r: Route<'_>,
    last: Option<super::Last>,
    p: &Prepared<'_>,
) -> Option<crate::state::ServerId> {
    let l = last.filter(|l| l.be == r.be.proxy)?;
    if p.use_server.is_some() || p.persist.as_ref().is_some_and(|c| c.server.is_some()) {
        return None;
    }
    let px = r.be_px;
    let spread = matches!(
        px.balance,
        weir_config::Balance::RoundRobin
            | weir_config::Balance::StaticRr
            | weir_config::Balance::LeastConn
            | weir_config::Balance::First
            | weir_config::Balance::Random { .. }
    );
    let asked = px.options.prefer_last_server || matches!(l.status, 401 | 407);
    (spread && asked).then_some(l.srv)
}

/// `use-server`, `force-persist`, `ignore-persist` and `stick` rules: the
/// server a rule or a stick table names, whether a persistence keeps a
/// server that is down, and the keys to store the server under; a cookie
/// that `ignore-persist` matches names no server.
fn persistence(
    r: Route<'_>,
    tmpl: &ExCtx<'_>,
    req: &RequestHead,
    vars: &Vars,
    persist: Option<&mut cookie::Persist>,
) -> (Option<crate::state::ServerId>, bool, crate::sticky::Sticky) {
    let px = r.be_px;
    if px.use_servers.is_empty()
        && px.force_persist.is_empty()
        && px.ignore_persist.is_empty()
        && px.stick_rules.is_empty()
    {
        return (None, px.options.persist, Default::default());
    }
    let ctx = ExCtx {
        req: Some(req),
        be: Some(r.be),
        vars: Some(vars),
        ..*tmpl
    };
    let force = crate::connect::force_persist(px, &ctx);
    let mut cookie = None;
    if let Some(p) = persist {
        if px.ignore_persist.iter().any(|c| c.eval(&ctx)) {
            p.server = None;
        }
        cookie = p.server;
    }
    let used = crate::connect::use_server(r.be, px, &ctx, force);
    let assigned = used.is_some() || cookie.is_some();
    let stick = crate::sticky::on_request(r.f.sh, r.be, px, &ctx, force, assigned);
    (used.or(stick.server), force, stick)
}

/// The server connection after the exchange: back to the thread's idle
/// pool (where this client's next request, or another's, finds it), kept
/// by the client session (`http-reuse never`), or closed.
fn finish(
    r: Route<'_>,
    conn: crate::connect::Connected<super::peer::Upstream>,
    kept: Kept,
    reused: Option<u32>,
    sbuf: &Buf,
    keep_client: bool,
    held: &mut Option<Box<Held>>,
) {
    if kept == Kept::Server && sbuf.is_empty() && conn.conn.reusable() {
        // Stamped with the generation it was opened under: one opened
        // before `set server addr` is never reused after it.
        let gen = conn.gen;
        let h = Held {
            be: r.be.proxy,
            srv: conn.srv,
            uses: reused.unwrap_or(0) + 1,
            gen,
            conn,
        };
        // An idle client holds none; `http-reuse never` keeps it private,
        // and so does a `dispatch` address.
        let s = r.be.server(h.srv);
        let private = r.be_px.http.reuse == weir_config::HttpReuse::Never || s.dispatch;
        // (`max-session-srv-conns 0`: the session keeps none.)
        let kept = keep_client && r.f.fe_px.max_session_srv_conns != Some(0);
        if private && kept {
            *held = Some(Box::new(h));
        } else {
            park(r.f.sh, h);
        }
    } else if conn.conn.peer().is_tcp() {
        // Nothing is left to deliver either way: a plain connection closes
        // with a reset, as HAProxy's do, so that no FIN exchange follows
        // and no TIME_WAIT is left on either side (about 4 % of the proxy's
        // CPU per connection).
        conn.conn.peer().set_reset_on_close();
    }
}

/// What a response (or its failure) tells of the server's health
/// (`observe layer7`); a client's own failures say nothing of it.
fn observe_response(
    be: &crate::state::BackendRt,
    srv: crate::state::ServerId,
    resp: &attempt::Resp,
) {
    use super::read::RespFail;
    use crate::state::observe::{report, Seen};
    let seen = match resp {
        Ok((head, _)) => Seen::Response(Some(head.status)),
        Err(
            RespFail::Timeout
            | RespFail::Invalid
            | RespFail::Empty
            | RespFail::Closed
            | RespFail::Reset,
        ) => Seen::Response(None),
        Err(_) => return,
    };
    report(be, srv, seen);
}
