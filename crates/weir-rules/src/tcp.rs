//! `tcp-request connection|session|content` and `tcp-response content`
//! rules (manual §4.2): their actions and how a rule's words parse.

use crate::acl::{split_cond, Loader};
use crate::action::{capture, cond_of, exactly, var_name, Lookup, Rule};
use crate::sample::Expr;
use crate::vars::{VarSet, VarValue};

/// Where a TCP rule runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TcpRuleSet {
    /// Right after accept, before anything is read (layer 4 only).
    Connection,
    /// Once the PROXY header and the TLS handshake are done.
    Session,
    /// On the request's contents (in HTTP: on each request, before the
    /// `http-request` rules).
    Content,
    /// `tcp-response content`: on the response (in HTTP: its head, before
    /// the `http-response` rules).
    Response,
}

impl TcpRuleSet {
    /// The rule set's name in the configuration.
    pub fn keyword(self) -> &'static str {
        match self {
            TcpRuleSet::Connection => "tcp-request connection",
            TcpRuleSet::Session => "tcp-request session",
            TcpRuleSet::Content => "tcp-request content",
            TcpRuleSet::Response => "tcp-response content",
        }
    }
}

/// Which address a `set-src`/`set-dst` action rewrites.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddrPart {
    Src,
    SrcPort,
    Dst,
    DstPort,
}

/// A TCP rule's action.
#[derive(Debug, Clone)]
pub enum TcpAction {
    /// Stops this rule set; the connection goes on.
    Accept,
    /// Closes the connection (counted as denied; connection and session
    /// rejects are not logged, as in HAProxy).
    Reject,
    /// `tcp-response content close`: closes the server's side once the
    /// response is forwarded.
    Close,
    /// `set-var(…)` / `set-var-fmt(…)`.
    SetVar(VarSet, VarValue),
    UnsetVar(String),
    /// `set-src`, `set-dst`, `set-src-port`, `set-dst-port`.
    SetAddr(AddrPart, Expr),
    /// `expect-proxy layer4`: a PROXY header is read first.
    ExpectProxy,
    /// Closes without a word to the client (a reset).
    SilentDrop,
    /// Accepted for compatibility; weir's logs have one level per line.
    SetLogLevel,
    /// `set-mark`, `set-tos` (`None`: `set-nice`, accepted).
    SockOpt(Option<crate::action::SockOpt>),
    /// `capture <sample> len <n>`, as `http-request capture`.
    Capture {
        expr: Expr,
        len: usize,
        slot: usize,
    },
    /// `switch-mode http [proto h1|h2]`: the connection goes on in HTTP
    /// (`Some(true)` HTTP/2, `Some(false)` HTTP/1.1 only, `None` either,
    /// by the first bytes).
    SwitchHttp(Option<bool>),
    /// `track-sc*`, `sc-inc-gpc*`, `sc-add-gpc`, `sc-set-gpt*`.
    Stick(crate::stick::StickAction),
    /// `do-resolve(<var>,<resolvers>[,ipv4|ipv6]) <expr>`.
    DoResolve(Box<crate::action::DoResolve>),
    /// `lua.<name> [args]`: an action a Lua script registered.
    Lua(crate::lua::LuaCall),
    /// `use-service lua.<name>`: a Lua script answers the connection.
    UseService(String),
    /// `send-spoe-group <engine> <group>`: the group's messages to the
    /// engine's agent; the rules after it wait for its answer.
    SendSpoeGroup(String, String),
}

/// Actions of HAProxy that weir refuses by name, with the reason.
fn refused(name: &str) -> Option<&'static str> {
    let base = name.split('(').next().unwrap_or(name);
    Some(match base {
        "ot-group" => "OpenTracing is not supported by weir",
        "expect-netscaler-cip" => "the NetScaler client IP protocol is not supported by weir",
        "set-priority-class" | "set-priority-offset" => "it is not supported by weir yet",
        _ => return None,
    })
}

/// Whether `action` may be used in `set` (as HAProxy accepts it).
fn allowed(set: TcpRuleSet, action: &TcpAction) -> bool {
    use TcpRuleSet::*;
    match action {
        TcpAction::ExpectProxy => set == Connection,
        TcpAction::Close => set == Response,
        TcpAction::Capture { .. }
        | TcpAction::SetLogLevel
        | TcpAction::SwitchHttp(_)
        | TcpAction::DoResolve(_)
        | TcpAction::SendSpoeGroup(..)
        | TcpAction::UseService(_) => set == Content,
        TcpAction::Lua(_) | TcpAction::SockOpt(None) => matches!(set, Content | Response),
        TcpAction::SetAddr(..) => set != Response,
        TcpAction::Stick(_) => set != Response,
        _ => true,
    }
}

/// Parses `<action> [args] [if|unless cond]` of a rule of `set`.
pub fn parse_tcp_rule(
    set: TcpRuleSet,
    words: &[String],
    lookup: Lookup<'_>,
    load: Loader<'_>,
) -> Result<Rule<TcpAction>, String> {
    let kw = set.keyword();
    let (act, c) = split_cond(words);
    let (name, args) = act.split_first().ok_or("expects an action")?;
    let name = name.as_str();
    let expr = |what: &str| -> Result<Expr, String> {
        let [arg] = exactly(args, what)?;
        Expr::parse(arg, load)
    };
    let stick = crate::stick::parse_action(name, args, &|e| Expr::parse(e, load));
    let action = match name {
        _ if stick.is_some() => TcpAction::Stick(stick.ok_or("no action")??),
        "accept" => TcpAction::Accept,
        "reject" => TcpAction::Reject,
        "close" => TcpAction::Close,
        "silent-drop" => TcpAction::SilentDrop,
        "expect-proxy" => match args {
            [l] if l == "layer4" => TcpAction::ExpectProxy,
            _ => return Err("'expect-proxy' expects 'layer4'".into()),
        },
        "set-log-level" => {
            exactly::<1>(args, name)?;
            TcpAction::SetLogLevel
        }
        "set-mark" | "set-tos" | "set-nice" => {
            TcpAction::SockOpt(crate::action::parse_sockopt(name, args)?)
        }
        "switch-mode" => TcpAction::SwitchHttp(
            match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
                ["http"] => None,
                ["http", "proto", "h1"] => Some(false),
                ["http", "proto", "h2"] => Some(true),
                _ => return Err("'switch-mode' expects 'http [proto h1|h2]'".into()),
            },
        ),
        "set-src" => TcpAction::SetAddr(AddrPart::Src, expr(name)?),
        "set-src-port" => TcpAction::SetAddr(AddrPart::SrcPort, expr(name)?),
        "set-dst" => TcpAction::SetAddr(AddrPart::Dst, expr(name)?),
        "set-dst-port" => TcpAction::SetAddr(AddrPart::DstPort, expr(name)?),
        "capture" => match args {
            [e, k, n] if k == "len" => {
                let (expr, len) = capture(e, n, load)?;
                TcpAction::Capture { expr, len, slot: 0 }
            }
            _ => return Err("'capture' expects '<sample> len <length>'".into()),
        },
        n if n.starts_with("set-var") => match crate::vars::parse_set(n, args, load) {
            Some(set) => {
                let (var, value) = set?;
                TcpAction::SetVar(var, value)
            }
            None => return Err(format!("unknown action '{n}'")),
        },
        n if n.starts_with("unset-var(") => TcpAction::UnsetVar(var_name(n, "unset-var")?),
        "use-service" => match crate::action::parse_service(args)? {
            crate::action::Service::Lua(n) => TcpAction::UseService(n),
            _ => return Err("'use-service': only Lua services answer TCP connections".into()),
        },
        n if n.starts_with("lua.") => TcpAction::Lua(crate::lua::call(n, args).ok_or("")??),
        "send-spoe-group" => match args {
            [e, g] => TcpAction::SendSpoeGroup(e.clone(), g.clone()),
            _ => return Err("'send-spoe-group' expects an engine and a group".into()),
        },
        n if n.starts_with("do-resolve(") => {
            TcpAction::DoResolve(Box::new(crate::action::do_resolve(n, args, load)?))
        }
        n => {
            return Err(match refused(n) {
                Some(why) => format!("action '{n}': {why}"),
                None => format!("unknown action '{n}'"),
            })
        }
    };
    if !allowed(set, &action) {
        return Err(format!("'{name}' is not allowed in '{kw}' rules"));
    }
    Ok(Rule {
        action,
        cond: cond_of(c, lookup, load)?,
        at: None,
    })
}
