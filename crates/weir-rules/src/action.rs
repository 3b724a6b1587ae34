//! `http-request`, `http-response` and `http-after-response` rules, and
//! `redirect`: each an action with an optional condition.

use crate::acl::{split_cond, Acl, Cond, Loader};
use crate::fmt::Fmt;
use crate::sample::Expr;
use crate::vars::{VarSet, VarValue};
use std::sync::Arc;

/// The body of a `return` (or `deny` with a custom answer).
#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    None,
    Static(Vec<u8>),
    Fmt(Fmt),
    /// The proxy's error page for this status (`errorfile` option).
    ErrorPage(u16),
}

/// `return status N [content-type T] [string S|lf-string S|file F|
/// errorfile F|default-errorfiles] [hdr name value]…`.
#[derive(Debug, Clone, PartialEq)]
pub struct Return {
    pub status: u16,
    pub content_type: Option<String>,
    pub body: Body,
    pub headers: Vec<(String, Fmt)>,
}

/// What a redirect rewrites.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedirectKind {
    Location,
    Prefix,
    Scheme,
}

/// `redirect location|prefix|scheme <to> [code N] [drop-query] [append-slash]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Redirect {
    pub kind: RedirectKind,
    pub to: Fmt,
    pub code: u16,
    pub drop_query: bool,
    pub append_slash: bool,
}

/// Header edits shared by request and response rules.
#[derive(Debug, Clone)]
pub enum HeaderOp {
    Set(String, Fmt),
    Add(String, Fmt),
    Del(String),
    /// `replace-header`: the whole value; `replace-value`: each
    /// comma-separated value.
    Replace {
        name: String,
        re: regex::bytes::Regex,
        with: Fmt,
        each_value: bool,
    },
}

/// An `http-request` action.
#[derive(Debug, Clone)]
pub enum ReqAction {
    Allow,
    Deny {
        status: u16,
    },
    Tarpit {
        status: u16,
    },
    Return(Return),
    Redirect(Redirect),
    Header(HeaderOp),
    SetPath(Fmt),
    SetPathQ(Fmt),
    SetQuery(Fmt),
    SetUri(Fmt),
    SetMethod(Fmt),
    /// `set-var(…)` / `set-var-fmt(…)`.
    SetVar(VarSet, VarValue),
    UnsetVar(String),
    /// Accepted for compatibility; weir's logs have one level per line.
    SetLogLevel,
    /// `normalize-uri <normalizer> [option]`.
    NormalizeUri(crate::normalize::Normalizer),
    /// `capture <sample> len <n>`: the value, cut to `n` bytes, goes in
    /// capture slot `slot` after the `capture request header` ones.
    Capture {
        expr: Expr,
        len: usize,
        slot: usize,
    },
    /// `auth [realm <realm>]`: a 401 asking for Basic credentials (the
    /// realm defaults to the proxy's name).
    Auth {
        realm: Option<String>,
    },
    /// `wait-for-body time <t> [at-least <bytes>]`: waits for the body (or
    /// that many bytes of it, or a full buffer) at most `time`.
    WaitForBody {
        time: std::time::Duration,
        at_least: Option<u64>,
    },
    /// `use-service <name>`: weir answers with a service of its own.
    UseService(Service),
}

/// Services `use-service` can hand a request to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Service {
    /// `prometheus-exporter`: the metrics in Prometheus' text format.
    Prometheus,
}

/// An `http-response` / `http-after-response` action.
#[derive(Debug, Clone)]
pub enum ResAction {
    Allow,
    Deny { status: u16 },
    Return(Return),
    Header(HeaderOp),
    SetStatus { status: u16, reason: Option<String> },
    SetVar(VarSet, VarValue),
    UnsetVar(String),
    SetLogLevel,
}

/// An action with its condition.
#[derive(Debug, Clone)]
pub struct Rule<A> {
    pub action: A,
    pub cond: Option<Cond>,
}

impl<A> Rule<A> {
    /// Whether the rule applies to this request.
    pub fn applies(&self, ctx: &dyn crate::sample::Ctx) -> bool {
        self.cond.as_ref().is_none_or(|c| c.eval(ctx))
    }
}

/// Resolves ACL names of the section.
pub type Lookup<'a> = &'a dyn Fn(&str) -> Option<Arc<[Acl]>>;

fn status(s: Option<&String>, what: &str) -> Result<u16, String> {
    s.and_then(|v| v.parse().ok())
        .filter(|v| (100..=599).contains(v))
        .ok_or_else(|| format!("'{what}' expects a valid status code"))
}

/// The variable of `unset-var(<name>)` (conditions make no sense there).
pub(crate) fn var_name(w: &str, action: &str) -> Result<String, String> {
    let v = crate::vars::parse_action(w, action)?;
    if !v.conds.is_empty() {
        return Err(format!("'{action}' takes no condition"));
    }
    Ok(v.name)
}

pub(crate) fn exactly<'a>(
    args: &'a [String],
    n: usize,
    what: &str,
) -> Result<&'a [String], String> {
    if args.len() == n {
        Ok(args)
    } else {
        Err(format!(
            "'{what}' expects {n} argument(s), got {}",
            args.len()
        ))
    }
}

fn header_op(name: &str, args: &[String], load: Loader<'_>) -> Result<Option<HeaderOp>, String> {
    Ok(Some(match name {
        "set-header" | "add-header" => {
            let a = exactly(args, 2, name)?;
            let f = Fmt::parse(&a[1], load)?;
            if name == "set-header" {
                HeaderOp::Set(a[0].clone(), f)
            } else {
                HeaderOp::Add(a[0].clone(), f)
            }
        }
        "del-header" => {
            if args.is_empty() || args.len() > 3 {
                return Err("'del-header' expects a header name".into());
            }
            HeaderOp::Del(args[0].clone())
        }
        "replace-header" | "replace-value" => {
            let a = exactly(args, 3, name)?;
            let re = regex::bytes::Regex::new(&format!("^(?:{})$", a[1]))
                .map_err(|e| format!("'{name}': invalid regex '{}': {e}", a[1]))?;
            HeaderOp::Replace {
                name: a[0].clone(),
                re,
                with: Fmt::parse(&a[2], load)?,
                each_value: name == "replace-value",
            }
        }
        _ => return Ok(None),
    }))
}

/// Parses the words of a `return` action (after `return`).
fn parse_return(args: &[String], load: Loader<'_>) -> Result<Return, String> {
    let mut r = Return {
        status: 200,
        content_type: None,
        body: Body::None,
        headers: Vec::new(),
    };
    let mut it = args.iter();
    while let Some(w) = it.next() {
        let mut val = || {
            it.next()
                .ok_or_else(|| format!("'{w}' expects a value"))
                .cloned()
        };
        match w.as_str() {
            "status" => r.status = status(Some(&val()?), "status")?,
            "content-type" => r.content_type = Some(val()?),
            "string" => r.body = Body::Static(val()?.into_bytes()),
            "lf-string" => r.body = Body::Fmt(Fmt::parse(&val()?, load)?),
            "file" | "lf-file" => {
                let f = val()?;
                r.body = Body::Static(load(&f)?.into_bytes());
            }
            "errorfile" => {
                let f = val()?;
                r.body = Body::Static(load(&f)?.into_bytes());
                r.content_type = None;
            }
            "default-errorfiles" => r.body = Body::ErrorPage(0),
            "hdr" => {
                let n = val()?;
                let v = val()?;
                r.headers.push((n, Fmt::parse(&v, load)?));
            }
            o => return Err(format!("'return': unexpected '{o}'")),
        }
    }
    if matches!(r.body, Body::ErrorPage(_)) {
        r.body = Body::ErrorPage(r.status);
    }
    if matches!(r.body, Body::Static(_) | Body::Fmt(_)) && r.content_type.is_none() {
        return Err("'return': a body needs a 'content-type'".into());
    }
    Ok(r)
}

/// Parses the words of a redirect (after `redirect`).
pub fn parse_redirect(args: &[String], load: Loader<'_>) -> Result<Redirect, String> {
    let kind = match args.first().map(String::as_str) {
        Some("location") => RedirectKind::Location,
        Some("prefix") => RedirectKind::Prefix,
        Some("scheme") => RedirectKind::Scheme,
        _ => return Err("'redirect' expects 'location', 'prefix' or 'scheme'".into()),
    };
    let to = Fmt::parse(args.get(1).ok_or("'redirect' expects a destination")?, load)?;
    let mut r = Redirect {
        kind,
        to,
        code: 302,
        drop_query: false,
        append_slash: false,
    };
    let mut it = args[2..].iter();
    while let Some(w) = it.next() {
        match w.as_str() {
            "code" => {
                r.code = it
                    .next()
                    .and_then(|c| c.parse().ok())
                    .filter(|c| [301, 302, 303, 307, 308].contains(c))
                    .ok_or("'redirect code' expects 301, 302, 303, 307 or 308")?;
            }
            "drop-query" => r.drop_query = true,
            "append-slash" => r.append_slash = true,
            "ignore-empty" => {}
            "set-cookie" | "clear-cookie" => {
                return Err(format!("'redirect ... {w}' is not supported by weir yet"))
            }
            o => return Err(format!("'redirect': unexpected '{o}'")),
        }
    }
    Ok(r)
}

fn deny_status(args: &[String], default: u16) -> Result<u16, String> {
    match args {
        [] => Ok(default),
        [k, v] if k == "deny_status" => status(Some(v), "deny_status"),
        _ => Err(format!("unexpected '{}'", args.join(" "))),
    }
}

pub(crate) fn cond_of(
    c: &[String],
    lookup: Lookup<'_>,
    load: Loader<'_>,
) -> Result<Option<Cond>, String> {
    if c.is_empty() {
        Ok(None)
    } else {
        Cond::parse(c, lookup, load).map(Some)
    }
}

/// A time with HAProxy's units (`us`, `ms`, `s`, `m`, `h`, `d`; ms when
/// none).
fn time_arg(v: &str) -> Result<std::time::Duration, String> {
    let digits = v.bytes().take_while(u8::is_ascii_digit).count();
    let n: u64 = v[..digits]
        .parse()
        .map_err(|_| format!("invalid time '{v}'"))?;
    let us = match &v[digits..] {
        "us" => 1,
        "" | "ms" => 1_000,
        "s" => 1_000_000,
        "m" => 60_000_000,
        "h" => 3_600_000_000,
        "d" => 86_400_000_000,
        u => return Err(format!("invalid time unit '{u}' in '{v}'")),
    };
    Ok(std::time::Duration::from_micros(n.saturating_mul(us)))
}

/// `wait-for-body time <t> [at-least <bytes>]`.
fn wait_for_body(args: &[String]) -> Result<ReqAction, String> {
    let mut time = None;
    let mut at_least = None;
    let mut it = args.iter();
    while let Some(w) = it.next() {
        let v = it
            .next()
            .ok_or_else(|| format!("'wait-for-body': '{w}' expects a value"))?;
        match w.as_str() {
            "time" => time = Some(time_arg(v)?),
            "at-least" => {
                at_least = Some(
                    v.parse::<u64>()
                        .map_err(|_| format!("'wait-for-body': invalid size '{v}'"))?,
                )
            }
            o => return Err(format!("'wait-for-body': unexpected '{o}'")),
        }
    }
    Ok(ReqAction::WaitForBody {
        time: time.ok_or("'wait-for-body' expects 'time <time>'")?,
        at_least,
    })
}

/// The sample and length of `capture <sample> len <length>` (the slot is
/// given once the proxy's captures are counted).
pub(crate) fn capture(e: &str, n: &str, load: Loader<'_>) -> Result<(Expr, usize), String> {
    let len = n
        .parse()
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| format!("'capture': invalid length '{n}'"))?;
    Ok((Expr::parse(e, load)?, len))
}

/// Parses `http-request <action> [args] [if|unless cond]`.
pub fn parse_request_rule(
    words: &[String],
    lookup: Lookup<'_>,
    load: Loader<'_>,
) -> Result<Rule<ReqAction>, String> {
    let (act, c) = split_cond(words);
    let name = act.first().ok_or("expects an action")?.as_str();
    let args = &act[1..];
    let one = |what: &str| -> Result<Fmt, String> { Fmt::parse(&exactly(args, 1, what)?[0], load) };
    let action = if let Some(h) = header_op(name, args, load)? {
        ReqAction::Header(h)
    } else if let Some(set) = crate::vars::parse_set(name, args, load) {
        let (var, value) = set?;
        ReqAction::SetVar(var, value)
    } else {
        match name {
            "allow" => ReqAction::Allow,
            "deny" => ReqAction::Deny {
                status: deny_status(args, 403)?,
            },
            "tarpit" => ReqAction::Tarpit {
                status: deny_status(args, 500)?,
            },
            "return" => ReqAction::Return(parse_return(args, load)?),
            "redirect" => ReqAction::Redirect(parse_redirect(args, load)?),
            "set-path" => ReqAction::SetPath(one(name)?),
            "set-pathq" => ReqAction::SetPathQ(one(name)?),
            "set-query" => ReqAction::SetQuery(one(name)?),
            "set-uri" => ReqAction::SetUri(one(name)?),
            "set-method" => ReqAction::SetMethod(one(name)?),
            "set-log-level" => {
                exactly(args, 1, name)?;
                ReqAction::SetLogLevel
            }
            "wait-for-body" => wait_for_body(args)?,
            "use-service" => match args {
                [s] if s == "prometheus-exporter" => ReqAction::UseService(Service::Prometheus),
                [s] => {
                    return Err(format!(
                        "'use-service': unknown service '{s}' (weir has 'prometheus-exporter')"
                    ))
                }
                _ => return Err("'use-service' expects a service name".into()),
            },
            "normalize-uri" => ReqAction::NormalizeUri(crate::normalize::Normalizer::parse(args)?),
            "capture" => match args {
                [e, k, n] if k == "len" => {
                    let (expr, len) = capture(e, n, load)?;
                    ReqAction::Capture { expr, len, slot: 0 }
                }
                [_, k, _] if k == "id" => return Err(
                    "'capture ... id' (declare capture) is not supported by weir yet; use 'len'"
                        .into(),
                ),
                _ => return Err("'capture' expects '<sample> len <length>'".into()),
            },
            "auth" => ReqAction::Auth {
                realm: match args {
                    [] => None,
                    [k, v] if k == "realm" => Some(v.clone()),
                    _ => return Err("'auth' expects '[realm <realm>]'".into()),
                },
            },
            n if n.starts_with("unset-var(") => ReqAction::UnsetVar(var_name(n, "unset-var")?),
            o => return Err(format!("action '{o}' is not supported by weir")),
        }
    };
    Ok(Rule {
        action,
        cond: cond_of(c, lookup, load)?,
    })
}

/// Parses `http-response <action> [args] [if|unless cond]` (and
/// `http-after-response`).
pub fn parse_response_rule(
    words: &[String],
    lookup: Lookup<'_>,
    load: Loader<'_>,
) -> Result<Rule<ResAction>, String> {
    let (act, c) = split_cond(words);
    let name = act.first().ok_or("expects an action")?.as_str();
    let args = &act[1..];
    let action = if let Some(h) = header_op(name, args, load)? {
        ResAction::Header(h)
    } else if let Some(set) = crate::vars::parse_set(name, args, load) {
        let (var, value) = set?;
        ResAction::SetVar(var, value)
    } else {
        match name {
            "allow" => ResAction::Allow,
            "deny" => ResAction::Deny {
                status: deny_status(args, 502)?,
            },
            "return" => ResAction::Return(parse_return(args, load)?),
            "set-status" => {
                let s = status(args.first(), "set-status")?;
                let reason = match &args[1..] {
                    [] => None,
                    [k, v] if k == "reason" => Some(v.clone()),
                    o => return Err(format!("'set-status': unexpected '{}'", o.join(" "))),
                };
                ResAction::SetStatus { status: s, reason }
            }
            "set-log-level" => {
                exactly(args, 1, name)?;
                ResAction::SetLogLevel
            }
            n if n.starts_with("unset-var(") => ResAction::UnsetVar(var_name(n, "unset-var")?),
            o => return Err(format!("action '{o}' is not supported by weir")),
        }
    };
    Ok(Rule {
        action,
        cond: cond_of(c, lookup, load)?,
    })
}
