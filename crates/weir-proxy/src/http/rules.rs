//! Runs a proxy's HTTP rules on an exchange: `http-request` (then
//! `redirect`) on the request head, `http-response` and
//! `http-after-response` on the response head (the answers of `deny`,
//! `return` and `redirect` are built in [`super::answers`]).

pub use super::answers::{local_headers, redirect_response, return_response};
use super::errors;
use super::room::Room;
pub use super::view::{ExCtx, L4Ctx};
use crate::state::procvars::{ProcVars, VarStore};
use crate::term::{Cause, State, Term};
use std::time::Duration;
use weir_config::Proxy;
use weir_proto::h1::{Header, RequestHead, ResponseHead};
use weir_rules::action::UriPart;
use weir_rules::vars::VarSet;
use weir_rules::{Ctx, HeaderOp, ReqAction, ResAction, Rule, Sample};

/// Variables set by `set-var` (`sess.*` live as long as the connection,
/// `txn.*`, `req.*` and `res.*` for one exchange; `proc.*` are the
/// process's, in [`ProcVars`]).
#[derive(Clone)]
pub struct Vars {
    vals: VarStore,
    /// The exchange's capture slots.
    pub caps: super::samples::Captures,
    /// The exchange's `unique-id-format` value (the `unique-id` fetch).
    pub unique_id: Option<String>,
    /// `set-timeout server|tunnel`: the exchange's own timeouts.
    pub timeouts: SetTimeouts,
    /// The last rule that ended a rule set of the exchange.
    pub last_rule: Option<weir_rules::RuleAt>,
    proc: ProcVars,
    /// The stick counters tracked (`track-sc*`).
    pub track: crate::state::tables::Trackers,
    /// The place in the configuration of the proxy whose rules run
    /// (stick fetches without a table name read its table).
    pub own_table: Option<usize>,
    /// Rewrites of the exchange that found no room (`wrew`): all of
    /// them, and those once a backend was chosen.
    pub failed_rewrites: [u32; 2],
    /// A Lua script's `txn:set_priv()` value for the exchange.
    pub lua_priv: Option<std::sync::Arc<crate::lua::Priv>>,
    /// `cache-use`: the cache the response came from (`res.cache_hit`).
    pub cache_hit: Option<String>,
    /// `cache-store`: the cache the response goes to.
    pub cache_store: Option<String>,
    /// `set-mark`, `set-tos`: options for the client's socket, set once
    /// the rules that asked for them end (see [`crate::conn::apply_sockopts`]).
    pub sockopts: crate::conn::SockOpts,
}

/// The timeouts `set-timeout` gave one exchange (none: the backend's).
#[derive(Debug, Clone, Copy, Default)]
pub struct SetTimeouts {
    pub server: Option<Duration>,
    pub tunnel: Option<Duration>,
}

impl Vars {
    /// A connection's variables, beside the process's.
    pub fn new(proc: &ProcVars) -> Vars {
        Vars {
            vals: VarStore::default(),
            caps: Default::default(),
            unique_id: None,
            timeouts: SetTimeouts::default(),
            last_rule: None,
            proc: proc.clone(),
            track: Default::default(),
            own_table: None,
            failed_rewrites: [0; 2],
            lua_priv: None,
            cache_hit: None,
            cache_store: None,
            sockopts: Default::default(),
        }
    }
    pub(crate) fn get(&self, name: &str) -> Option<Sample> {
        if name.starts_with("proc.") {
            return self.proc.get(name);
        }
        self.vals.get(name)
    }
    pub(crate) fn set(&self, name: &str, v: Sample) {
        if name.starts_with("proc.") {
            return self.proc.set(name, v);
        }
        self.vals.set(name, v)
    }
    /// `set-var`: stores `v` when the variable's conditions hold (a
    /// `proc` variable always exists).
    pub(crate) fn set_if(&self, var: &VarSet, v: Sample) {
        let cur = self.get(&var.name);
        let exists = var.name.starts_with("proc.") || cur.is_some();
        if var.allows(cur.as_ref(), exists, &v) {
            self.set(&var.name, v);
        }
    }
    pub(crate) fn unset(&self, name: &str) {
        if name.starts_with("proc.") {
            return self.proc.unset(name);
        }
        self.vals.unset(name)
    }
    /// The rules of `px` (a proxy of `sh`'s configuration) run next:
    /// stick fetches without a table name read its table.
    pub fn rules_of(&mut self, sh: &crate::state::Shared, px: &Proxy) {
        if !sh.tables.all().is_empty() {
            self.own_table = crate::state::tables::Tables::place(&sh.cfg, px);
        }
    }
    /// No variable is left.
    pub fn is_empty(&self) -> bool {
        self.vals.is_empty()
            && self.caps.is_empty()
            && self.unique_id.is_none()
            && self.track.is_empty()
    }
    /// Counts rewrites that found no room; `backend`: once a backend was
    /// chosen.
    pub fn rewrites_failed(&mut self, n: u32, backend: bool) {
        self.failed_rewrites[0] += n;
        if backend {
            self.failed_rewrites[1] += n;
        }
    }

    /// Drops the variables of the finished exchange.
    pub fn end_exchange(&mut self) {
        self.caps = Default::default();
        self.unique_id = None;
        self.timeouts = SetTimeouts::default();
        self.last_rule = None;
        self.track.end_stream();
        self.own_table = None;
        self.failed_rewrites = [0; 2];
        self.lua_priv = None;
        self.cache_hit = None;
        self.cache_store = None;
        self.vals
            .retain(|n| n.starts_with("sess.") || n.starts_with("proc."));
    }
}

/// A response weir makes itself, and how it is logged.
pub struct Local {
    pub bytes: Vec<u8>,
    pub status: u16,
    pub term: Term,
    /// The client connection may stay open afterwards.
    pub keep: bool,
}

/// What the request rules decided.
pub enum Verdict {
    Continue,
    Respond(Local),
    Tarpit(u16),
    /// `wait-for-body`: buffer the body, then run the rules from `next`.
    WaitBody {
        next: usize,
        time: std::time::Duration,
        at_least: Option<u64>,
    },
    /// `do-resolve`: resolve `name`, store its address in `var`, then run
    /// the rules from `next`.
    Resolve {
        next: usize,
        name: String,
        how: Box<weir_rules::action::DoResolve>,
    },
    /// The request cannot go on: answer `status` (0: nothing, the client
    /// is gone) and log `term`.
    Fail(u16, Term),
    /// `use-service`: weir answers with one of its services.
    Service(weir_rules::action::Service),
    /// `cache-use`: the cache `name` holds the answer.
    Cached {
        local: Local,
        name: String,
    },
    /// `lua.<name>`: run the script's action, then the rules from `next`.
    Lua {
        next: usize,
        call: weir_rules::lua::LuaCall,
    },
    /// `send-spoe-group <engine> <group>`: the group to the engine's
    /// agent, then the rules from `next`.
    Spoe {
        next: usize,
        engine: String,
        group: String,
    },
    /// `tcp-request content reject|silent-drop`, `http-request reject`:
    /// the connection closes without an answer (with a reset for
    /// `silent-drop`); `http`: an HTTP rule refused it (the log keeps the
    /// request line).
    Close {
        reset: bool,
        http: bool,
    },
}

/// The proxies whose response rules apply, in order: the backend's, then
/// the frontend's (once when they are one proxy).
pub fn response_order<'p>(
    be: Option<&'p Proxy>,
    fe: &'p Proxy,
) -> impl Iterator<Item = &'p Proxy> + Clone {
    be.filter(|b| !std::ptr::eq(*b, fe))
        .into_iter()
        .chain(std::iter::once(fe))
}

/// The `http-response` rules of `pxs` (unless `after_only`), then their
/// `http-after-response` rules, on `res`; the first rule that answers in
/// the response's place ends them.
pub fn run_response_phases<'p>(
    pxs: impl Iterator<Item = &'p Proxy> + Clone,
    after_only: bool,
    res: &mut ResponseHead,
    vars: &mut Vars,
    tmpl: &ExCtx<'_>,
    dirty: &mut bool,
    room: &mut Room,
) -> Option<Local> {
    // Here nothing waits: a `send-spoe-group` rule is passed over.
    let mut at = ResumeAt::default();
    loop {
        match run_response_from(pxs.clone(), after_only, res, vars, tmpl, dirty, room, at) {
            ResOutcome::Done(r) => return r,
            ResOutcome::Spoe { at: next, .. } => at = next,
        }
    }
}

/// Where response rules stopped for a rule that waits: the phase
/// (`http-after-response` or not), the proxy's place in the order, the
/// next rule of its set.
#[derive(Debug, Default, Clone, Copy)]
pub struct ResumeAt {
    after: bool,
    px: usize,
    rule: usize,
}

/// What response rules came to.
pub enum ResOutcome<'p> {
    /// Their end: an answer replacing the server's, or none.
    Done(Option<Local>),
    /// A `send-spoe-group` rule of `px`: the group goes to the agent,
    /// then the rules go on `at`.
    Spoe {
        px: &'p Proxy,
        engine: String,
        group: String,
        at: ResumeAt,
    },
}

/// [`run_response_phases`] from `at`, stopping at a rule that waits.
#[allow(clippy::too_many_arguments)]
pub fn run_response_from<'p>(
    pxs: impl Iterator<Item = &'p Proxy> + Clone,
    after_only: bool,
    res: &mut ResponseHead,
    vars: &mut Vars,
    tmpl: &ExCtx<'_>,
    dirty: &mut bool,
    room: &mut Room,
    at: ResumeAt,
) -> ResOutcome<'p> {
    for after in [false, true] {
        // (`http-response` is skipped with `after_only`, and once the
        // rules stopped in `http-after-response`.)
        if !after && (after_only || at.after) {
            continue;
        }
        for (k, px) in pxs.clone().enumerate() {
            let here = after == at.after;
            if here && k < at.px {
                continue;
            }
            let from = if here && k == at.px { at.rule } else { 0 };
            let rules = if after {
                &px.http_after_response
            } else {
                &px.http_response
            };
            if rules.is_empty() {
                // No rules (most proxies): the proxy is only noted as the
                // one whose rules ran last.
                vars.rules_of(tmpl.sh, px);
                continue;
            }
            match run_response(rules, px, res, vars, tmpl, dirty, room, from) {
                Ok(Some(r)) => return ResOutcome::Done(Some(r)),
                Ok(None) => {}
                Err((next, engine, group)) => {
                    return ResOutcome::Spoe {
                        px,
                        engine,
                        group,
                        at: ResumeAt {
                            after,
                            px: k,
                            rule: next,
                        },
                    }
                }
            }
        }
    }
    ResOutcome::Done(None)
}

/// `http-after-response` on an answer weir made (a deny, a return, a
/// redirect, an error, the stats page): the rules of `pxs` in turn (see
/// [`response_order`]), as on a server's response. A rule that answers in
/// its turn replaces it. With `after_only` false, the `http-response`
/// rules run first (the answer of a Lua service, as a server's).
pub fn after_local<'p>(
    local: Local,
    pxs: impl Iterator<Item = &'p Proxy> + Clone,
    after_only: bool,
    vars: &mut Vars,
    tmpl: &ExCtx<'_>,
) -> Local {
    rules_on_local(local, pxs, after_only, vars, tmpl).unwrap_or_else(|replaced| replaced)
}

/// [`after_local`], telling a rule's own answer (`Err`) from the answer
/// given, rewritten or not (`Ok`).
pub fn rules_on_local<'p>(
    mut local: Local,
    pxs: impl Iterator<Item = &'p Proxy> + Clone,
    after_only: bool,
    vars: &mut Vars,
    tmpl: &ExCtx<'_>,
) -> Result<Local, Local> {
    if pxs
        .clone()
        .all(|p| p.http_after_response.is_empty() && (after_only || p.http_response.is_empty()))
    {
        return Ok(local);
    }
    // Room for the whole answer: it is weir's own.
    let limits = weir_proto::h1::Limits {
        max_head: local.bytes.len() + 1,
        max_headers: local.bytes.iter().filter(|&&b| b == b'\n').count() + 1,
        relaxed_target: false,
        ..Default::default()
    };
    let method = tmpl.req.map_or("GET", |r| r.method.as_str());
    let Ok(Some((mut res, used))) = weir_proto::h1::parse_response(&local.bytes, &limits, method)
    else {
        return Ok(local);
    };
    let mut dirty = false;
    // weir's own answer, whole.
    let head = local.bytes.len().min(used);
    let mut room = Room::new(&tmpl.sh.cfg.global, head, local.bytes.len() - head);
    let r = run_response_phases(pxs, after_only, &mut res, vars, tmpl, &mut dirty, &mut room);
    if let Some(r) = r {
        return Err(Local { keep: false, ..r });
    }
    if dirty {
        let mut bytes = weir_proto::h1::write_response(&res);
        bytes.extend_from_slice(local.bytes.get(used..).unwrap_or_default());
        local.bytes = bytes;
        local.status = res.status;
    }
    Ok(local)
}

/// A `capture <sample> len|id …` rule: the sample into the frontend's
/// slot, cut to its length. A sample that fails leaves the slot as it was;
/// a backend's rule names the frontend's slots, and an id the frontend
/// lacks keeps nothing (as in haproxy).
pub(crate) fn capture(expr: &weir_rules::Expr, res: bool, slot: usize, ctx: &dyn Ctx) {
    if let Some(v) = expr.eval(ctx) {
        ctx.capture(res, slot, &v);
    }
}

/// A header edit computed with the request borrowed, applied after.
enum Edit {
    /// The operation, its rendered value and its rendered replacement.
    Header(HeaderOp, Vec<u8>, Vec<u8>),
    Status(u16, String),
    Uri(String),
    Method(String),
    SetVar(VarSet, Option<Sample>),
    UnsetVar(String),
    /// `set-src|dst(-port)`: the address part and its new value.
    Addr(weir_rules::AddrPart, Option<Sample>),
    Timeout(weir_rules::action::TimeoutKind, Option<Duration>),
    /// `track-sc*`: what to track.
    Track(weir_rules::stick::TrackReq),
    /// `strict-mode on|off`.
    Strict(bool),
    /// What a Lua action left of the message and variables.
    Lua(Box<crate::lua::TxnState>),
    /// `cache-store`: the response goes to this cache.
    CacheStore(String),
    /// `set-mark`, `set-tos`.
    SockOpt(weir_rules::action::SockOpt),
}

/// Applies a header edit within `room`: one that does not fit is undone;
/// false then.
fn header_in_room(
    hs: &mut Vec<Header>,
    room: &mut Room,
    op: &HeaderOp,
    value: Vec<u8>,
    w: &[u8],
) -> bool {
    let before = super::room::fields(hs);
    let saved = room.tight(value.len() + w.len()).then(|| hs.clone());
    apply_header(hs, op, value, w);
    let grown = super::room::fields(hs) as i64 - before as i64;
    if room.take(grown) {
        return true;
    }
    if let Some(old) = saved {
        *hs = old;
    }
    false
}

fn apply_header(hs: &mut Vec<Header>, op: &HeaderOp, value: Vec<u8>, w: &[u8]) {
    match op {
        HeaderOp::Set(n, _) => {
            hs.retain(|h| !h.is(n));
            hs.push(Header::new(n, &value));
        }
        HeaderOp::Add(n, _) => hs.push(Header::new(n, &value)),
        HeaderOp::Del(m) => hs.retain(|h| !m.matches(h.name())),
        HeaderOp::Replace {
            name,
            re,
            each_value,
            ..
        } => {
            let w = &weir_rules::matching::backrefs(w)[..];
            for h in hs.iter_mut().filter(|h| h.is(name)) {
                if *each_value {
                    let parts: Vec<Vec<u8>> = h
                        .value()
                        .split(|&b| b == b',')
                        .map(|v| {
                            let v = v.trim_ascii();
                            re.replace(v, w).into_owned()
                        })
                        .collect();
                    h.set_value(&parts.join(&b", "[..]));
                } else {
                    let v = re.replace(h.value(), w).into_owned();
                    h.set_value(&v);
                }
            }
        }
    }
}

fn header_edit(op: &HeaderOp, ctx: &dyn Ctx) -> Edit {
    let v = match op {
        HeaderOp::Set(_, f) | HeaderOp::Add(_, f) => f.render(ctx),
        _ => Vec::new(),
    };
    let w = match op {
        HeaderOp::Replace { with, .. } => with.render(ctx),
        _ => Vec::new(),
    };
    Edit::Header(op.clone(), v, w)
}

/// Runs `rules` on `req` (with the body when buffered); `tmpl` is the
/// fetch context, completed with the request as rules rewrite it.
#[allow(clippy::too_many_arguments)]
pub fn run_request(
    rules: &[Rule<ReqAction>],
    px: &Proxy,
    req: &mut RequestHead,
    vars: &mut Vars,
    tmpl: &mut ExCtx<'_>,
    dirty: &mut bool,
    body: Option<&[u8]>,
    room: &mut Room,
) -> Verdict {
    vars.rules_of(tmpl.sh, px);
    for (i, rule) in rules.iter().enumerate() {
        let step = {
            let ctx = ExCtx {
                req: Some(req),
                vars: Some(vars),
                body,
                ..*tmpl
            };
            if !rule.applies(&ctx) {
                continue;
            }
            request_step(rule, i, px, req, &ctx)
        };
        match step {
            Step::Edit(edit) => {
                if !apply_request_edit(edit, req, vars, tmpl, dirty, room) && room.strict {
                    // A rewrite that found no room: an internal error.
                    vars.last_rule = rule.at.clone();
                    return Verdict::Fail(500, Term::new(Cause::Internal, State::Request));
                }
            }
            Step::Stop(v) => {
                if !matches!(
                    v,
                    Verdict::WaitBody { .. }
                        | Verdict::Resolve { .. }
                        | Verdict::Lua { .. }
                        | Verdict::Spoe { .. }
                ) {
                    vars.last_rule = rule.at.clone();
                }
                return v;
            }
            Step::Skip => {}
        }
    }
    Verdict::Continue
}

/// What one request rule does: an edit of the request, a verdict that ends
/// the rules, or nothing.
enum Step {
    Edit(Edit),
    Stop(Verdict),
    Skip,
}

/// The step of request rule `i` (whose condition holds) on `ctx`.
fn request_step(
    rule: &Rule<ReqAction>,
    i: usize,
    px: &Proxy,
    req: &RequestHead,
    ctx: &ExCtx<'_>,
) -> Step {
    let edit = match &rule.action {
        ReqAction::Allow => return Step::Stop(Verdict::Continue),
        ReqAction::Deny { status, answer } => {
            let bytes = match answer {
                Some(r) => return_response(r, px, ctx),
                None => errors::reply_of(&[px], *status, ctx),
            };
            return Step::Stop(Verdict::Respond(Local {
                bytes,
                status: *status,
                term: Term::new(Cause::Proxy, State::Request),
                keep: !errors::closes(*status),
            }));
        }
        ReqAction::Reject => {
            return Step::Stop(Verdict::Close {
                reset: false,
                http: true,
            })
        }
        ReqAction::SilentDrop => {
            return Step::Stop(Verdict::Close {
                reset: true,
                http: true,
            })
        }
        ReqAction::Replace { part, re, with } => {
            match part.replace(&req.uri, re, &with.render(ctx)) {
                Some(u) => Edit::Uri(u),
                None => return Step::Skip,
            }
        }
        ReqAction::SetAddr(part, e) => Edit::Addr(*part, e.eval(ctx)),
        ReqAction::Tarpit { status } => return Step::Stop(Verdict::Tarpit(*status)),
        ReqAction::Return(r) => {
            return Step::Stop(Verdict::Respond(Local {
                bytes: return_response(r, px, ctx),
                status: r.status,
                term: Term::new(Cause::Local, State::Request),
                keep: true,
            }))
        }
        ReqAction::Redirect(r) => {
            let Some(bytes) = redirect_response(r, ctx) else {
                return Step::Skip;
            };
            return Step::Stop(Verdict::Respond(Local {
                bytes,
                status: r.code,
                term: Term::new(Cause::Local, State::Request),
                keep: true,
            }));
        }
        ReqAction::Header(op) => header_edit(op, ctx),
        ReqAction::SetPath(f) | ReqAction::SetPathQ(f) | ReqAction::SetUri(f) => {
            let part = match &rule.action {
                ReqAction::SetPath(_) => UriPart::Path,
                ReqAction::SetPathQ(_) => UriPart::PathQ,
                _ => UriPart::Uri,
            };
            let v = String::from_utf8_lossy(&f.render(ctx)).into_owned();
            Edit::Uri(part.set(&req.uri, &v))
        }
        ReqAction::SetQuery(f) => {
            let q = String::from_utf8_lossy(&f.render(ctx)).into_owned();
            let p = req.uri.split('?').next().unwrap_or("");
            Edit::Uri(if q.is_empty() {
                p.to_string()
            } else {
                format!("{p}?{q}")
            })
        }
        ReqAction::SetMethod(f) => {
            Edit::Method(String::from_utf8_lossy(&f.render(ctx)).into_owned())
        }
        ReqAction::SetVar(n, e) => Edit::SetVar(n.clone(), e.eval(ctx)),
        ReqAction::UnsetVar(n) => Edit::UnsetVar(n.clone()),
        ReqAction::Stick(a) => match weir_rules::stick::act(a, ctx) {
            Some(t) => Edit::Track(t),
            None => return Step::Skip,
        },
        ReqAction::SetLogLevel | ReqAction::SockOpt(None) => return Step::Skip,
        ReqAction::SockOpt(Some(o)) => Edit::SockOpt(*o),
        ReqAction::StrictMode(on) => Edit::Strict(*on),
        ReqAction::NormalizeUri(n) => match n.apply(&req.uri) {
            Some(u) => Edit::Uri(u),
            None => return Step::Stop(Verdict::Fail(400, Term::new(Cause::Proxy, State::Request))),
        },
        ReqAction::Capture { expr, slot, .. } => {
            capture(expr, false, *slot, ctx);
            return Step::Skip;
        }
        ReqAction::SetTimeout(kind, v) => Edit::Timeout(*kind, v.eval(ctx)),
        ReqAction::Auth { realm } => {
            let realm = realm.as_deref().unwrap_or(&px.name);
            return Step::Stop(Verdict::Respond(Local {
                bytes: errors::with_header(
                    errors::response(px, 401, false),
                    &format!("www-authenticate: Basic realm=\"{realm}\""),
                ),
                status: 401,
                term: Term::new(Cause::Local, State::Request),
                keep: true,
            }));
        }
        ReqAction::UseService(s) => return Step::Stop(Verdict::Service(s.clone())),
        ReqAction::CacheUse(name) => {
            return match super::cache::lookup(ctx, name, req) {
                Some(local) => Step::Stop(Verdict::Cached {
                    local,
                    name: name.clone(),
                }),
                None => Step::Skip,
            }
        }
        ReqAction::Lua(call) => {
            return Step::Stop(Verdict::Lua {
                next: i + 1,
                call: call.clone(),
            })
        }
        ReqAction::SendSpoeGroup(engine, group) => {
            return Step::Stop(Verdict::Spoe {
                next: i + 1,
                engine: engine.clone(),
                group: group.clone(),
            })
        }
        ReqAction::DoResolve(d) => {
            // (No name: nothing to ask, the variable stays unset.)
            let Some(name) = d.expr.eval(ctx).map(|s| s.to_bytes()) else {
                return Step::Skip;
            };
            return Step::Stop(Verdict::Resolve {
                next: i + 1,
                name: String::from_utf8_lossy(&name).into_owned(),
                how: d.clone(),
            });
        }
        ReqAction::WaitForBody { time, at_least } => {
            return Step::Stop(Verdict::WaitBody {
                next: i + 1,
                time: *time,
                at_least: *at_least,
            })
        }
    };
    Step::Edit(edit)
}

/// Applies a request rule's edit.
/// Applies an edit of the request; false when a rewrite found no room.
fn apply_request_edit(
    edit: Edit,
    req: &mut RequestHead,
    vars: &mut Vars,
    tmpl: &mut ExCtx<'_>,
    dirty: &mut bool,
    room: &mut Room,
) -> bool {
    match edit {
        Edit::Header(op, v, w) => {
            let fits = header_in_room(&mut req.headers, room, &op, v, &w);
            *dirty |= fits;
            return fits;
        }
        Edit::Uri(u) => {
            if !u.is_empty() && !u.bytes().any(|b| b <= b' ' || b == 0x7f) {
                if !room.take(u.len() as i64 - req.uri.len() as i64) {
                    return false;
                }
                req.uri = u;
                *dirty = true;
            }
        }
        Edit::Method(m) => {
            if !m.is_empty()
                && m.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
            {
                if !room.take(m.len() as i64 - req.method.len() as i64) {
                    return false;
                }
                req.method = m;
                *dirty = true;
            }
        }
        Edit::Strict(on) => room.strict = on,
        Edit::SetVar(n, Some(v)) => vars.set_if(&n, v),
        Edit::SockOpt(o) => vars.sockopts.ask(o),
        Edit::SetVar(_, None) | Edit::Status(..) => {}
        Edit::UnsetVar(n) => vars.unset(&n),
        Edit::Timeout(kind, Some(d)) => match kind {
            weir_rules::action::TimeoutKind::Server => vars.timeouts.server = Some(d),
            weir_rules::action::TimeoutKind::Tunnel => vars.timeouts.tunnel = Some(d),
        },
        Edit::Timeout(_, None) => {}
        Edit::Addr(part, Some(v)) => {
            use weir_rules::AddrPart::{Dst, DstPort, Src, SrcPort};
            let a = match part {
                Src | SrcPort => &mut tmpl.src,
                Dst | DstPort => &mut tmpl.dst,
            };
            crate::tcp::rules::set_addr(a, part, &v);
        }
        Edit::Addr(_, None) => {}
        Edit::Track(t) => {
            // The request counts at once (one lock with the tracking).
            let req = [weir_stick::Event::HttpReq];
            vars.track.track(t.slot, false, &t.table, &t.key, &req);
        }
        Edit::Lua(_) | Edit::CacheStore(_) => {}
    }
    true
}

/// Runs response `rules` from rule `from` on `res`; returns a
/// replacement answer when a rule denies or returns, `Err` at a
/// `send-spoe-group` rule (the next rule, the engine and the group).
#[allow(clippy::too_many_arguments)]
pub fn run_response(
    rules: &[Rule<ResAction>],
    px: &Proxy,
    res: &mut ResponseHead,
    vars: &mut Vars,
    tmpl: &ExCtx<'_>,
    dirty: &mut bool,
    room: &mut Room,
    from: usize,
) -> Result<Option<Local>, (usize, String, String)> {
    vars.rules_of(tmpl.sh, px);
    if from == 0 {
        room.strict = true;
    }
    for (i, rule) in rules.iter().enumerate().skip(from) {
        // `Err`: the rule ends the set (with an answer replacing the
        // server's, or none for `allow`).
        let step: Result<Edit, Option<Local>> = {
            let ctx = ExCtx {
                res: Some(res),
                vars: Some(vars),
                ..*tmpl
            };
            if !rule.applies(&ctx) {
                continue;
            }
            match &rule.action {
                ResAction::Allow => Err(None),
                ResAction::Deny { status, answer } => Err(Some(Local {
                    bytes: match answer {
                        Some(r) => return_response(r, px, &ctx),
                        None => errors::reply_of(&[px], *status, &ctx),
                    },
                    status: *status,
                    term: Term::new(Cause::Proxy, State::Headers),
                    keep: !errors::closes(*status),
                })),
                // Answered in the server's place: `LH`, as haproxy logs it.
                ResAction::Return(r) => Err(Some(Local {
                    bytes: return_response(r, px, &ctx),
                    status: r.status,
                    term: Term::new(Cause::Local, State::Headers),
                    keep: true,
                })),
                ResAction::Redirect(r) => {
                    // `ignore-empty` with an empty location: the next rule.
                    let Some(bytes) = redirect_response(r, &ctx) else {
                        continue;
                    };
                    Err(Some(Local {
                        bytes,
                        status: r.code,
                        term: Term::new(Cause::Local, State::Headers),
                        keep: true,
                    }))
                }
                ResAction::Header(op) => Ok(header_edit(op, &ctx)),
                ResAction::SetStatus { status, reason } => Ok(Edit::Status(
                    *status,
                    reason.clone().unwrap_or_else(|| {
                        weir_proto::h1::status::generated_reason(*status).to_string()
                    }),
                )),
                ResAction::SetVar(n, e) => Ok(Edit::SetVar(n.clone(), e.eval(&ctx))),
                ResAction::UnsetVar(n) => Ok(Edit::UnsetVar(n.clone())),
                ResAction::Stick(a) => match weir_rules::stick::act(a, &ctx) {
                    Some(t) => Ok(Edit::Track(t)),
                    None => continue,
                },
                ResAction::StrictMode(on) => Ok(Edit::Strict(*on)),
                ResAction::CacheStore(name) => Ok(Edit::CacheStore(name.clone())),
                ResAction::Capture { expr, slot, .. } => {
                    capture(expr, true, *slot, &ctx);
                    continue;
                }
                ResAction::SendSpoeGroup(e, g) => return Err((i + 1, e.clone(), g.clone())),
                ResAction::SilentDrop => Err(Some(super::outcome::silent_drop())),
                ResAction::Lua(call) => Ok(Edit::Lua(Box::new(crate::lua::response_action(
                    tmpl.sh, call, &ctx,
                )))),
                // Done before the rules ran (see `respond::wait_body`).
                ResAction::SetLogLevel
                | ResAction::WaitForBody { .. }
                | ResAction::SockOpt(None) => continue,
                ResAction::SockOpt(Some(o)) => {
                    vars.sockopts.ask(*o);
                    continue;
                }
            }
        };
        let edit = match step {
            Ok(edit) => edit,
            Err(answer) => {
                vars.last_rule = rule.at.clone();
                return Ok(answer);
            }
        };
        let fits = match edit {
            Edit::Header(op, v, w) => {
                let fits = header_in_room(&mut res.headers, room, &op, v, &w);
                *dirty |= fits;
                fits
            }
            Edit::Status(s, r) => {
                let fits = room.take(r.len() as i64 - res.reason.len() as i64);
                if fits {
                    res.status = s;
                    res.reason = r;
                    *dirty = true;
                }
                fits
            }
            Edit::Strict(on) => {
                room.strict = on;
                true
            }
            Edit::SetVar(n, Some(v)) => {
                vars.set_if(&n, v);
                true
            }
            Edit::UnsetVar(n) => {
                vars.unset(&n);
                true
            }
            Edit::CacheStore(name) => {
                vars.cache_store = Some(name);
                true
            }
            Edit::Lua(st) => {
                let st = *st;
                if let Some(v) = st.vars {
                    *vars = v;
                }
                if st.done {
                    // `txn:done(reply)` answers in the response's place;
                    // `txn:done()` ends the stream without one.
                    vars.last_rule = rule.at.clone();
                    let (status, bytes) = st.reply.unwrap_or_default();
                    return Ok(Some(Local {
                        bytes,
                        status,
                        term: Term::new(Cause::Local, State::Headers),
                        keep: status != 0,
                    }));
                }
                if let Some(r) = st.res.filter(|_| st.res_changed) {
                    *res = r;
                    *dirty = true;
                }
                true
            }
            Edit::Track(t) => {
                // The request was counted before this tracker began, and so
                // was a 4xx or 5xx answer: count them now.
                let req = [weir_stick::Event::HttpReq];
                if let Some(new) = vars.track.track(t.slot, false, &t.table, &t.key, &req) {
                    for ev in status_events(res.status, true) {
                        new.count(ev);
                    }
                }
                true
            }
            _ => true,
        };
        if !fits && room.strict {
            // A rewrite that found no room: an internal error in place of
            // the server's answer.
            vars.last_rule = rule.at.clone();
            let ctx = ExCtx {
                res: Some(res),
                vars: Some(vars),
                ..*tmpl
            };
            return Ok(Some(Local {
                bytes: errors::reply_of(&[px], 500, &ctx),
                status: 500,
                term: Term::new(Cause::Internal, State::Headers),
                keep: !errors::closes(500),
            }));
        }
    }
    Ok(None)
}

/// Counts a finished exchange on the entries tracked: its bytes, a
/// client's error weir answered (a request denied, tarpitted, invalid or
/// cut short, a 401 of `auth`) and a server's failure without an answer
/// (its response invalid or cut short). The server's answers counted
/// when their head came (`status_events`).
pub fn count_exchange(track: &crate::state::tables::Trackers, rec: &crate::log::LogRecord<'_>) {
    use crate::term::State as At;
    use weir_stick::Event;
    let t = rec.term;
    let refused = match t.cause {
        Cause::Proxy => matches!(t.state, At::Request | At::Tarpit),
        Cause::Client => t.state == At::Request,
        Cause::Local => rec.status == 401,
        _ => false,
    };
    let failed = t.server_side() && t.state == At::Headers;
    let evs = [
        Some(Event::BytesIn(rec.bytes_in)),
        Some(Event::BytesOut(rec.bytes_out)),
        refused.then_some(Event::HttpErr),
        failed.then_some(Event::HttpFail),
    ];
    let evs = evs.map(|e| e.unwrap_or(Event::BytesIn(0)));
    track.count_all(&evs);
}

/// What a response with `status` counts on the tracked entries: a 4xx is
/// the client's error (`http_err_*`), a 5xx other than 501 and 505 the
/// server's failure (`http_fail_*`); `from_server` false for weir's own
/// answers, which count neither here.
pub fn status_events(status: u16, from_server: bool) -> impl Iterator<Item = weir_stick::Event> {
    let err = from_server && (400..500).contains(&status);
    let fail = from_server && status >= 500 && status != 501 && status != 505;
    err.then_some(weir_stick::Event::HttpErr)
        .into_iter()
        .chain(fail.then_some(weir_stick::Event::HttpFail))
}
