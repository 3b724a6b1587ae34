//! The request side of an exchange before a server is chosen: the
//! frontend's `http-request` rules and `redirect`s, the backend choice,
//! then the backend's rules; the request body is buffered first where
//! `option http-buffer-request` asks, or in the middle where a
//! `wait-for-body` rule does, so `req.body` fetches see it.

use super::head;
use super::io::{send, Buf};
use super::peer::Peer;
use super::room::Room;
use super::rules::{self, ExCtx, Vars, Verdict};
use crate::state::FrontendId;
use crate::state::{BackendRt, Shared};
use crate::term::{Cause, State, Term};
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;
use weir_config::model::SpoeEvent;
use weir_config::Proxy;
use weir_proto::h1::{body_prefix, Framing, RequestHead};
use weir_rules::{ReqAction, Rule};

/// The client side of body buffering, and the body once buffered.
pub(super) struct BodyWait<'a> {
    pub client: Peer<'a>,
    pub cbuf: &'a mut Buf,
    /// Bytes of the head at the front of `cbuf`.
    pub used: usize,
    pub size: usize,
    /// `timeout client`, for the `100 Continue` weir sends.
    pub client_timeout: Option<Duration>,
    pub body: Option<Vec<u8>>,
}

impl BodyWait<'_> {
    /// The room rewrites of `req` have: its head and the body bytes read
    /// behind it (see [`Room`]).
    fn room(&self, g: &weir_config::Global, req: &RequestHead) -> Room {
        let body = match &self.body {
            Some(b) => b.len(),
            None => self.cbuf.bytes().len().saturating_sub(self.used),
        };
        let version = if req.minor == 0 {
            "HTTP/1.0"
        } else {
            "HTTP/1.1"
        };
        let head = super::room::head(&[&req.method, &req.uri, version], &req.headers);
        Room::new(g, head, body)
    }

    /// Reads the body into the buffer until it is complete, `at_least`
    /// bytes of it are there, the buffer is full or `deadline` passes.
    /// A deadline reached first is a 408, as haproxy answers.
    async fn wait(
        &mut self,
        req: &mut RequestHead,
        dirty: &mut bool,
        deadline: Option<Instant>,
        at_least: Option<u64>,
    ) -> Result<(), Verdict> {
        if matches!(
            req.framing,
            Framing::None | Framing::Tunnel | Framing::ContentLength(0)
        ) {
            self.body = Some(Vec::new());
            return Ok(());
        }
        // The client waits for a go-ahead before sending the body: weir
        // gives it, and the server sees no `Expect`.
        if head::get(&req.headers, "expect")
            .is_some_and(|v| v.eq_ignore_ascii_case(b"100-continue"))
        {
            req.headers.retain(|h| !h.is("expect"));
            *dirty = true;
            if send(
                self.client,
                b"HTTP/1.1 100 Continue\r\n\r\n",
                self.client_timeout,
            )
            .await
            .is_err()
            {
                return Err(Verdict::Fail(0, Term::new(Cause::Client, State::Request)));
            }
        }
        loop {
            let bytes = self.cbuf.bytes().get(self.used..).unwrap_or(&[]);
            let (body, done) = body_prefix(req.framing, bytes)
                .map_err(|e| Verdict::Fail(e.status(), Term::new(Cause::Proxy, State::Request)))?;
            let enough =
                done || at_least.is_some_and(|n| body.len() as u64 >= n) || self.cbuf.is_full();
            if enough {
                self.body = Some(body);
                return Ok(());
            }
            let r = match deadline {
                Some(d) => tokio::time::timeout_at(d, self.cbuf.fill(self.client, self.size))
                    .await
                    .ok(),
                None => Some(self.cbuf.fill(self.client, self.size).await),
            };
            match r {
                None => {
                    return Err(Verdict::Fail(
                        408,
                        Term::new(Cause::ClientTimeout, State::Request),
                    ))
                }
                // The client left: nothing to answer (haproxy logs -1, CR).
                Some(Ok(0)) | Some(Err(_)) => {
                    return Err(Verdict::Fail(0, Term::new(Cause::Client, State::Request)))
                }
                Some(Ok(_)) => {}
            }
        }
    }

    /// `option http-buffer-request`: the whole body (or a full buffer)
    /// within `timeout http-request`.
    async fn buffer_for(
        &mut self,
        px: &Proxy,
        req: &mut RequestHead,
        dirty: &mut bool,
    ) -> Result<(), Verdict> {
        // A FastCGI application is told a chunked body's length: haproxy
        // waits for it (a buffer's worth at most).
        let fcgi = px.use_fcgi_app.is_some() && req.framing == Framing::Chunked;
        if !(px.options.http_buffer_request || fcgi) || self.body.is_some() {
            return Ok(());
        }
        let t = px.timeouts.http_request.or(px.timeouts.client);
        // Boxed (as in `run`): only a request that waits for its body
        // carries the wait's state.
        Box::pin(self.wait(req, dirty, t.map(|t| crate::clock::now() + t), None)).await
    }
}

/// Runs `rules`, buffering the body where a `wait-for-body` rule asks and
/// resolving a name where a `do-resolve` rule does.
#[allow(clippy::too_many_arguments)]
async fn run(
    rules: &[Rule<ReqAction>],
    px: &Proxy,
    req: &mut RequestHead,
    vars: &mut Vars,
    tmpl: &mut ExCtx<'_>,
    dirty: &mut bool,
    bw: &mut BodyWait<'_>,
    room: &mut Room,
) -> Verdict {
    // Each rule set starts strict.
    room.strict = true;
    let mut from = 0;
    loop {
        let v = rules::run_request(
            rules.get(from..).unwrap_or(&[]),
            px,
            req,
            vars,
            tmpl,
            dirty,
            bw.body.as_deref(),
            room,
        );
        if let Verdict::Lua { next, call } = v {
            // A script's action: it may wait; the request waits with it.
            let st = crate::lua::TxnState {
                body: bw.body.clone(),
                ..crate::lua::TxnState::of(&ExCtx {
                    req: Some(req),
                    vars: Some(vars),
                    ..*tmpl
                })
            };
            let st = Box::pin(crate::lua::run_action(tmpl.sh, "http-req", &call, st)).await;
            if let Some(v) = st.vars {
                *vars = v;
            }
            if let Some(r) = st.req.filter(|_| st.req_changed) {
                *req = r;
                *dirty = true;
            }
            if st.done {
                // `txn:done(reply)` answers; `txn:done()` ends the stream.
                return match st.reply {
                    Some((status, bytes)) => Verdict::Respond(rules::Local {
                        bytes,
                        status,
                        term: Term::new(Cause::Local, State::Request),
                        keep: true,
                    }),
                    None => Verdict::Close {
                        reset: false,
                        http: true,
                    },
                };
            }
            from += next;
            continue;
        }
        if let Verdict::Spoe {
            next,
            engine,
            group,
        } = v
        {
            // `send-spoe-group`: the request waits for the agent.
            let ctx = ExCtx {
                req: Some(req),
                vars: Some(vars),
                ..*tmpl
            };
            Box::pin(crate::spoe::send_group(tmpl.sh, px, &engine, &group, &ctx)).await;
            from += next;
            continue;
        }
        if let Verdict::Resolve { next, name, how } = v {
            // `do-resolve`: the request waits for the name's address.
            crate::tcp::rules::do_resolve(tmpl.sh, &how, &name, vars).await;
            from += next;
            continue;
        }
        let Verdict::WaitBody {
            next,
            time,
            at_least,
        } = v
        else {
            return v;
        };
        // Boxed: the rules of every request would otherwise carry the
        // state of a wait only `wait-for-body` needs.
        // A body that does not come in time is a 408, as haproxy answers.
        let waited = Box::pin(bw.wait(req, dirty, Some(crate::clock::now() + time), at_least));
        if let Err(v) = waited.await {
            return v;
        }
        from += next;
    }
}

/// The frontend's rules, the backend choice and the backend's rules.
/// Returns the verdict and the backend chosen (none when a rule answered
/// or no backend applies); `tmpl.be` is set to it.
pub(super) async fn decide<'s>(
    sh: &'s Shared,
    fe_idx: FrontendId,
    tmpl: &mut ExCtx<'s>,
    req: &mut RequestHead,
    vars: &mut Vars,
    dirty: &mut bool,
    bw: &mut BodyWait<'_>,
) -> (Verdict, Option<&'s Arc<BackendRt>>) {
    let fe = sh.frontend(fe_idx);
    let fe_px = sh.proxy(fe.proxy);
    if let Err(v) = bw.buffer_for(fe_px, req, dirty).await {
        // A client that left while its body was awaited still gets its
        // backend named in the log, as haproxy 2.6 names it.
        let chosen = matches!(v, Verdict::Fail(0, _))
            .then(|| {
                let ctx = ExCtx {
                    req: Some(req),
                    vars: Some(vars),
                    ..*tmpl
                };
                sh.select_backend(fe_idx, &ctx)
            })
            .flatten();
        return (v, chosen);
    }
    if !fe_px.spoe.is_empty() {
        if tmpl.first {
            spoe_event(fe_px, SpoeEvent::ClientSession, req, vars, tmpl).await;
        }
        spoe_event(fe_px, SpoeEvent::FrontendTcpRequest, req, vars, tmpl).await;
    }
    if let Some(v) = content_rules(fe_px, req, vars, tmpl).await {
        return (v, None);
    }
    if !fe_px.spoe.is_empty() {
        spoe_event(fe_px, SpoeEvent::FrontendHttpRequest, req, vars, tmpl).await;
    }
    // The request counts on what the session and the frontend's
    // `tcp-request content` rules track (an `http-request track-sc*`
    // counts it when it starts).
    vars.track.count(weir_stick::Event::HttpReq);
    let mut room = bw.room(&sh.cfg.global, req);
    let r = &mut room;
    let mut verdict = run(&fe_px.http_request, fe_px, req, vars, tmpl, dirty, bw, r).await;
    if matches!(verdict, Verdict::Continue) {
        verdict = run(&fe_px.redirects, fe_px, req, vars, tmpl, dirty, bw, r).await;
    }
    if matches!(verdict, Verdict::Continue) {
        verdict = restrict_names(fe_px, req, dirty);
    }
    if !matches!(verdict, Verdict::Continue) {
        vars.rewrites_failed(room.failed(), false);
        return (verdict, None);
    }
    let chosen = {
        let ctx = ExCtx {
            req: Some(req),
            vars: Some(vars),
            body: bw.body.as_deref(),
            ..*tmpl
        };
        sh.select_backend(fe_idx, &ctx)
    };
    // (What the frontend's rules could not rewrite counts whatever comes.)
    vars.rewrites_failed(room.failed(), false);
    let mut room = room.after_frontend();
    if let Some(be) = chosen.filter(|b| b.proxy != fe.proxy) {
        let be_px = sh.proxy(be.proxy);
        tmpl.be = Some(be);
        if let Err(v) = bw.buffer_for(be_px, req, dirty).await {
            return (v, chosen);
        }
        if let Some(v) = content_rules(be_px, req, vars, tmpl).await {
            return (v, chosen);
        }
        // The frontend's engines and the backend's see the backend's
        // event (not a listen section's).
        for px in [fe_px, be_px].into_iter().filter(|p| !p.spoe.is_empty()) {
            spoe_event(px, SpoeEvent::BackendHttpRequest, req, vars, tmpl).await;
        }
        let r = &mut room;
        verdict = run(&be_px.http_request, be_px, req, vars, tmpl, dirty, bw, r).await;
        if matches!(verdict, Verdict::Continue) {
            verdict = run(&be_px.redirects, be_px, req, vars, tmpl, dirty, bw, r).await;
        }
        if matches!(verdict, Verdict::Continue) {
            verdict = restrict_names(be_px, req, dirty);
        }
    }
    vars.rewrites_failed(room.failed(), true);
    (verdict, chosen)
}

/// The messages of `px`'s SPOE engines on `event`, the request waiting
/// for the agents' answers (callers skip a proxy without engines: the
/// common request builds no future for it).
async fn spoe_event(
    px: &weir_config::Proxy,
    event: SpoeEvent,
    req: &RequestHead,
    vars: &Vars,
    tmpl: &ExCtx<'_>,
) {
    let ctx = ExCtx {
        req: Some(req),
        vars: Some(vars),
        ..*tmpl
    };
    Box::pin(crate::spoe::on_event(tmpl.sh, px, event, &ctx)).await;
}

/// `option http-restrict-req-hdr-names`, after the proxy's rules: headers
/// named outside `[A-Za-z0-9-]` are deleted, or the request gets a 403.
fn restrict_names(px: &weir_config::Proxy, req: &mut RequestHead, dirty: &mut bool) -> Verdict {
    use weir_config::model::RestrictNames;
    let odd = |h: &weir_proto::h1::Header| {
        !h.name()
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'-')
    };
    match px.http.restrict_names {
        RestrictNames::Preserve => Verdict::Continue,
        RestrictNames::Delete => {
            let before = req.headers.len();
            req.headers.retain(|h| !odd(h));
            *dirty |= req.headers.len() != before;
            Verdict::Continue
        }
        RestrictNames::Reject if req.headers.iter().any(odd) => Verdict::Respond(rules::Local {
            bytes: super::errors::response(px, 403, false),
            status: 403,
            term: Term::new(Cause::Proxy, State::Request),
            // As after a deny: the connection stays open.
            keep: true,
        }),
        RestrictNames::Reject => Verdict::Continue,
    }
}

/// A proxy's `tcp-request content` rules on a request, before its
/// `http-request` rules: the addresses they set go to the exchange's view.
/// `Some`: the request was refused (closed without an answer, `PR`).
async fn content_rules(
    px: &weir_config::Proxy,
    req: &RequestHead,
    vars: &mut Vars,
    tmpl: &mut ExCtx<'_>,
) -> Option<Verdict> {
    use crate::tcp::rules::{Decision, Subject};
    // A `mode tcp` client's first request after `switch-mode http` was
    // through these rules already, in TCP.
    // (An HTTP/2 stream was not: it came after the switch.)
    let switched = tmpl.acc.is_some_and(|a| a.switched.is_some());
    if px.tcp.content.is_empty() || (switched && tmpl.first && req.minor < 2) {
        return None;
    }
    vars.rules_of(tmpl.sh, px);
    let view = ExCtx {
        req: Some(req),
        ..*tmpl
    };
    let mut subj = Subject {
        resolve: None,
        lua: None,
        spoe: None,
        peer: &mut tmpl.src,
        local: &mut tmpl.dst,
        expect_proxy: None,
        vars,
    };
    let d = crate::tcp::rules::run_resolving(
        tmpl.sh,
        weir_rules::TcpRuleSet::Content,
        &px.tcp.content,
        0,
        &view,
        &mut subj,
    )
    .await
    .unwrap_or(Decision::Go);
    match d {
        // (An HTTP stream is HTTP already: `switch-mode` ends the rules.)
        Decision::Go | Decision::Close | Decision::SwitchHttp(_) => None,
        Decision::Service(name) => Some(Verdict::Service(weir_rules::action::Service::Lua(name))),
        Decision::Reject => Some(Verdict::Close {
            reset: false,
            http: false,
        }),
        Decision::Drop => Some(Verdict::Close {
            reset: true,
            http: false,
        }),
    }
}
