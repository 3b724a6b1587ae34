//! `tcp-request connection|session|content` and `tcp-response content`
//! rules at run time: one evaluator for the four sets, on whatever the
//! caller's view holds (addresses only, or an HTTP request and response).

use crate::conn::Conn;
use crate::http::rules::{ExCtx, Vars};
use crate::session::{prologue, Accepted};
use crate::state::{BackendRt, FrontendId, Shared};
use crate::stats::Ctr;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;
use weir_rules::{AddrPart, Rule, Sample, TcpAction, TcpRuleSet};

/// What a rule set decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Accepted, or no rule stopped it: the connection goes on.
    Go,
    /// `reject`: closed (counted as denied).
    Reject,
    /// `silent-drop`: closed with a reset, nothing said to the client.
    Drop,
    /// `tcp-response content close`: the server's side closes after this.
    Close,
    /// `switch-mode http`: the connection goes on in HTTP (HTTP/2 or
    /// HTTP/1.1 only when given).
    SwitchHttp(Option<bool>),
    /// `use-service lua.<name>`: the script answers the connection.
    Service(String),
}

/// The state the rules may change: the connection's addresses (as the
/// fetches `src`/`dst` and the logs see them), whether a PROXY header is
/// expected, and the variables.
pub struct Subject<'v> {
    pub peer: &'v mut Option<SocketAddr>,
    pub local: &'v mut Option<SocketAddr>,
    /// Where `expect-proxy` goes (connection rules only).
    pub expect_proxy: Option<&'v mut bool>,
    pub vars: &'v mut Vars,
    /// A `do-resolve` rule's name, to resolve before the rules after it
    /// run (see [`run_resolving`]).
    pub resolve: Option<(String, Box<weir_rules::action::DoResolve>)>,
    /// A Lua action to run before the rules after it.
    pub lua: Option<weir_rules::lua::LuaCall>,
    /// A `send-spoe-group` rule's engine and group, sent before the
    /// rules after it run.
    pub spoe: Option<(String, String)>,
}

/// Runs `rules` of `set` in order, each condition seeing `tmpl` with the
/// subject's current addresses and variables.
pub fn run(
    set: TcpRuleSet,
    rules: &[Rule<TcpAction>],
    tmpl: &ExCtx<'_>,
    subj: &mut Subject<'_>,
) -> Decision {
    run_from(set, rules, 0, tmpl, subj).unwrap_or(Decision::Go)
}

/// Runs `rules` from rule `from`. On a payload that may still grow
/// (`tmpl.payload` or `tmpl.res_payload` not final), a rule whose condition misses stops the
/// run: `Err` with its index, to run again from there with more bytes
/// (the rules before it are not run twice).
pub fn run_from(
    set: TcpRuleSet,
    rules: &[Rule<TcpAction>],
    from: usize,
    tmpl: &ExCtx<'_>,
    subj: &mut Subject<'_>,
) -> Result<Decision, usize> {
    let growing = tmpl
        .payload
        .or(tmpl.res_payload)
        .is_some_and(|(_, fin)| !fin);
    for (i, rule) in rules.iter().enumerate().skip(from) {
        let ctx = ExCtx {
            src: *subj.peer,
            dst: *subj.local,
            vars: Some(&*subj.vars),
            ..*tmpl
        };
        let applies = if growing {
            match rule.applies_tri(&ctx) {
                weir_rules::acl::Tri::Miss => return Err(i),
                t => t == weir_rules::acl::Tri::Pass,
            }
        } else {
            rule.applies(&ctx)
        };
        if !applies {
            continue;
        }
        let end = match &rule.action {
            TcpAction::Accept => Some(Decision::Go),
            TcpAction::Reject => Some(Decision::Reject),
            TcpAction::SilentDrop => Some(Decision::Drop),
            TcpAction::Close => Some(Decision::Close),
            TcpAction::SwitchHttp(p) => Some(Decision::SwitchHttp(*p)),
            _ => None,
        };
        if let Some(d) = end {
            // A stream's rule sets only (connection and session rules run
            // before there is one).
            if matches!(set, TcpRuleSet::Content | TcpRuleSet::Response) {
                subj.vars.last_rule = rule.at.clone();
            }
            return Ok(d);
        }
        match &rule.action {
            TcpAction::Accept
            | TcpAction::Reject
            | TcpAction::SilentDrop
            | TcpAction::Close
            | TcpAction::SwitchHttp(_) => {}
            TcpAction::ExpectProxy => {
                if let Some(e) = subj.expect_proxy.as_deref_mut() {
                    *e = true;
                }
            }
            TcpAction::SetLogLevel | TcpAction::SockOpt(None) => {}
            TcpAction::SockOpt(Some(o)) => subj.vars.sockopts.ask(*o),
            TcpAction::Lua(call) => {
                subj.lua = Some(call.clone());
                return Err(i + 1);
            }
            TcpAction::SendSpoeGroup(e, g) => {
                subj.spoe = Some((e.clone(), g.clone()));
                return Err(i + 1);
            }
            TcpAction::UseService(name) => {
                subj.vars.last_rule = rule.at.clone();
                return Ok(Decision::Service(name.clone()));
            }
            TcpAction::SetVar(var, value) => {
                if let Some(v) = value.eval(&ctx) {
                    set_var(set, subj.vars, var, v);
                }
            }
            TcpAction::UnsetVar(name) => subj.vars.unset(name),
            TcpAction::DoResolve(d) => {
                // (No name: nothing to ask, the variable stays unset.)
                if let Some(name) = d.expr.eval(&ctx).map(|s| s.to_bytes()) {
                    let name = String::from_utf8_lossy(&name).into_owned();
                    subj.resolve = Some((name, d.clone()));
                    return Err(i + 1);
                }
            }
            TcpAction::SetAddr(part, e) => {
                let v = e.eval(&ctx);
                let addr = match part {
                    AddrPart::Src | AddrPart::SrcPort => &mut *subj.peer,
                    AddrPart::Dst | AddrPart::DstPort => &mut *subj.local,
                };
                if let Some(v) = v {
                    set_addr(addr, *part, &v);
                }
            }
            TcpAction::Capture { expr, slot, .. } => {
                crate::http::rules::capture(expr, false, *slot, &ctx);
            }
            TcpAction::Stick(a) => {
                use std::sync::atomic::Ordering::Relaxed;
                // A tracked key from fetches that more bytes could change
                // waits for them (the `sc-*` actions act at once: they are
                // not run twice).
                let tracks = matches!(a, weir_rules::stick::StickAction::Track { .. });
                if let Some(m) = ctx.more.filter(|_| tracks) {
                    m.store(false, Relaxed);
                }
                let t = weir_rules::stick::act(a, &ctx);
                let waits = tracks && ctx.more.is_some_and(|m| m.load(Relaxed));
                if growing && waits {
                    return Err(i);
                }
                if let Some(t) = t {
                    let sess = matches!(set, TcpRuleSet::Connection | TcpRuleSet::Session);
                    subj.vars.track.track(t.slot, sess, &t.table, &t.key, &[]);
                }
            }
        }
    }
    Ok(Decision::Go)
}

/// [`run_from`], resolving the names `do-resolve` rules ask: the rules
/// after one run with its answer in its variable (nothing on an error).
/// `Err` only for a payload that may still grow.
pub async fn run_resolving(
    sh: &Shared,
    set: TcpRuleSet,
    rules: &[Rule<TcpAction>],
    mut from: usize,
    tmpl: &ExCtx<'_>,
    subj: &mut Subject<'_>,
) -> Result<Decision, usize> {
    loop {
        let i = match run_from(set, rules, from, tmpl, subj) {
            Err(i) => i,
            done => return done,
        };
        if let Some(call) = subj.lua.take() {
            let st = crate::lua::TxnState {
                vars: Some(subj.vars.clone()),
                src: *subj.peer,
                dst: *subj.local,
                ..crate::lua::TxnState::of(tmpl)
            };
            let kind = if set == TcpRuleSet::Response {
                "tcp-res"
            } else {
                "tcp-req"
            };
            let st = Box::pin(crate::lua::run_action(sh, kind, &call, st)).await;
            if let Some(v) = st.vars {
                *subj.vars = v;
            }
            from = i;
            continue;
        }
        if let Some((engine, group)) = subj.spoe.take() {
            // The engine of the rule's proxy: the backend's, else the
            // frontend's.
            let fe = sh.proxy(sh.frontend(tmpl.fe_idx).proxy);
            let px = tmpl
                .be
                .map(|b| sh.proxy(b.proxy))
                .filter(|p| p.spoe.iter().any(|e| e.id == engine))
                .unwrap_or(fe);
            // The messages take what the payload holds now (as final).
            let ctx = ExCtx {
                vars: Some(subj.vars),
                payload: tmpl.payload.map(|(p, _)| (p, true)),
                more: None,
                ..*tmpl
            };
            Box::pin(crate::spoe::send_group(sh, px, &engine, &group, &ctx)).await;
            from = i;
            continue;
        }
        let Some((name, how)) = subj.resolve.take() else {
            return Err(i);
        };
        do_resolve(sh, &how, &name, subj.vars).await;
        from = i;
    }
}

/// `do-resolve` (TCP or HTTP rules): the address of `name` in the rule's
/// variable; nothing stored on an error.
pub async fn do_resolve(sh: &Shared, how: &weir_rules::action::DoResolve, name: &str, vars: &Vars) {
    // (Boxed: only a request that resolves carries the query's state.)
    let ip = Box::pin(crate::dns::lookup(sh, &how.resolvers, name, how.ipv6)).await;
    if let Some(ip) = ip {
        let var = weir_rules::vars::VarSet {
            name: how.var.clone(),
            conds: Vec::new(),
        };
        vars.set_if(&var, Sample::Ip(ip));
    }
}

/// Before a request exists, only the session's and the process's
/// variables can be set (HAProxy: `proc` and `sess` scopes).
fn set_var(set: TcpRuleSet, vars: &mut Vars, var: &weir_rules::vars::VarSet, v: Sample) {
    let early = matches!(set, TcpRuleSet::Connection | TcpRuleSet::Session);
    let name = &var.name;
    if early && !(name.starts_with("sess.") || name.starts_with("proc.")) {
        return;
    }
    vars.set_if(var, v);
}

/// `set-src`/`set-dst` keep the port when the family allows it (else
/// 0); `set-*-port` changes the port only.
pub(crate) fn set_addr(addr: &mut Option<SocketAddr>, part: AddrPart, v: &Sample) {
    match part {
        AddrPart::Src | AddrPart::Dst => {
            let ip = match v {
                Sample::Ip(ip) => Some(*ip),
                Sample::Str(s) => std::str::from_utf8(s)
                    .ok()
                    .and_then(|s| s.trim().parse::<IpAddr>().ok()),
                _ => None,
            };
            if let Some(ip) = ip {
                let port = addr
                    .filter(|a| a.is_ipv4() == ip.is_ipv4())
                    .map_or(0, |a| a.port());
                *addr = Some(SocketAddr::new(ip, port));
            }
        }
        AddrPart::SrcPort | AddrPart::DstPort => {
            let port = match v {
                Sample::Int(n) => u16::try_from(*n).ok(),
                Sample::Str(s) => std::str::from_utf8(s)
                    .ok()
                    .and_then(|s| s.trim().parse().ok()),
                _ => None,
            };
            if let (Some(p), Some(a)) = (port, addr.as_mut()) {
                a.set_port(p);
            }
        }
    }
}

/// A view of a connection before any request: its addresses and TLS.
pub fn l4_view<'a>(sh: &'a Shared, fe_idx: FrontendId, client: &'a Conn) -> ExCtx<'a> {
    l4_view_in(sh, fe_idx, client, None)
}

/// The same once a backend is chosen.
/// A backend's `tcp-response content` rules on a session to `peer` via
/// `local` (they may set variables; the addresses are not theirs to
/// change).
pub fn response(
    rules: &[Rule<TcpAction>],
    view: &ExCtx<'_>,
    peer: Option<SocketAddr>,
    local: Option<SocketAddr>,
    vars: &mut Vars,
) -> Decision {
    if rules.is_empty() {
        return Decision::Go;
    }
    let (mut peer, mut local) = (peer, local);
    let mut subj = Subject {
        resolve: None,
        lua: None,
        spoe: None,
        peer: &mut peer,
        local: &mut local,
        expect_proxy: None,
        vars,
    };
    run(TcpRuleSet::Response, rules, view, &mut subj)
}

pub fn l4_view_in<'a>(
    sh: &'a Shared,
    fe_idx: FrontendId,
    client: &'a Conn,
    be: Option<&'a BackendRt>,
) -> ExCtx<'a> {
    ExCtx {
        be,
        tls: client.tls_info(),
        ..ExCtx::bare(sh, fe_idx)
    }
}

/// Runs the frontend's `tcp-request connection` (or, with `Session`,
/// `tcp-request session`) rules on an accepted client: the addresses
/// they set and a PROXY header they expect go to `acc`, variables to
/// `vars`. `false`: refused — counted (`dcon`/`dses`), not logged, as
/// HAProxy does, and to be closed (with a reset for `silent-drop`).
pub fn admit(
    sh: &Shared,
    fe_idx: FrontendId,
    client: &Conn,
    acc: &mut Accepted,
    vars: &mut Vars,
    set: TcpRuleSet,
) -> bool {
    let px = sh.proxy(sh.frontend(fe_idx).proxy);
    let rules = px.tcp.of(set);
    // A session accepted counts on the entries its connection tracks.
    let accepted = |vars: &Vars| {
        if set == TcpRuleSet::Session {
            vars.track.count(weir_stick::Event::Sess);
        }
        true
    };
    if rules.is_empty() {
        return accepted(vars);
    }
    vars.rules_of(sh, px);
    let conn = (acc.peer, acc.local);
    let mut subj = Subject {
        resolve: None,
        lua: None,
        spoe: None,
        peer: &mut acc.peer,
        local: &mut acc.local,
        expect_proxy: Some(&mut acc.accept_proxy),
        vars,
    };
    let view = ExCtx {
        fc: Some(&conn),
        srv_tls: None,
        ..l4_view(sh, fe_idx, client)
    };
    let d = run(set, rules, &view, &mut subj);
    if set == TcpRuleSet::Session && (acc.peer, acc.local) != conn {
        acc.fc = Some(Box::new(conn));
    }
    match d {
        // (`use-service` is a content rule only.)
        Decision::Go | Decision::Close | Decision::SwitchHttp(_) | Decision::Service(_) => {
            accepted(vars)
        }
        Decision::Reject | Decision::Drop => {
            let ctr = if set == TcpRuleSet::Connection {
                Ctr::ConnDenied
            } else {
                Ctr::SessDenied
            };
            crate::stats::add_front(sh.frontend(fe_idx), &acc.bind, ctr, 1);
            if d == Decision::Drop {
                client.set_reset_on_close();
            }
            false
        }
    }
}

/// A client's opening: the `tcp-request connection` rules, then the
/// prologue (a PROXY header, when one is expected). The bytes read past
/// the header; `None` when the client was refused or its header failed.
pub async fn open(
    sh: &Shared,
    fe_idx: FrontendId,
    client: &Conn,
    acc: &mut Accepted,
    vars: &mut Vars,
    accept_wall: Duration,
) -> Option<Vec<u8>> {
    if !admit(sh, fe_idx, client, acc, vars, TcpRuleSet::Connection) {
        return None;
    }
    // Boxed: the PROXY header reader's buffer is only needed here.
    Box::pin(prologue(sh, fe_idx, client, acc, accept_wall)).await
}
