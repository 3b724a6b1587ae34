//! `http-request`, `http-response` and `http-after-response` rules, and
//! `redirect`: each an action with an optional condition.

use crate::acl::{split_cond, Acl, Cond, Loader};
use crate::fmt::Fmt;
use crate::sample::Expr;
use crate::vars::{VarSet, VarValue};
use std::sync::Arc;

pub use crate::redirect::{parse_redirect, Redirect, RedirectKind};
pub use crate::sockopt::{parse_sockopt, SockOpt};

/// The body of a `return` (or `deny` with a custom answer).
#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    None,
    Static(Vec<u8>),
    Fmt(Fmt),
    /// The proxy's error page for this status (`default-errorfiles`).
    ErrorPage(u16),
    /// `errorfile <file>`: a whole raw response, sent as it is (an empty
    /// one closes the connection without an answer).
    Raw(Vec<u8>),
    /// `errorfiles <name>`: the page of that `http-errors` section for the
    /// status, until the configuration resolves it ([`Return::resolve`]).
    Section(String),
}

impl Return {
    /// Replaces `errorfiles <name>` with the section's page for the status
    /// (`page(name, status)`: `Err` for an unknown section, `None` when it
    /// has none for this status: the proxy's pages answer then).
    pub fn resolve(
        &mut self,
        page: impl Fn(&str, u16) -> Result<Option<Vec<u8>>, String>,
    ) -> Result<(), String> {
        if let Body::Section(name) = &self.body {
            self.body = match page(name, self.status)? {
                Some(raw) => Body::Raw(raw),
                None => Body::ErrorPage(self.status),
            };
        }
        Ok(())
    }
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

/// How `del-header` picks the header names it removes.
#[derive(Debug, Clone)]
pub enum NameMatch {
    Str(String),
    Beg(String),
    End(String),
    Sub(String),
    Reg(regex::bytes::Regex),
}

impl NameMatch {
    /// Whether header `name` is one to remove: names are compared in lower
    /// case, as haproxy stores them (a regex sees `x-r1` for `X-R1`).
    pub fn matches(&self, name: &str) -> bool {
        let n = name.to_ascii_lowercase();
        match self {
            NameMatch::Str(p) => n == *p,
            NameMatch::Beg(p) => n.starts_with(p.as_str()),
            NameMatch::End(p) => n.ends_with(p.as_str()),
            NameMatch::Sub(p) => n.contains(p.as_str()),
            NameMatch::Reg(re) => re.is_match(n.as_bytes()),
        }
    }
}

/// Header edits shared by request and response rules.
#[derive(Debug, Clone)]
pub enum HeaderOp {
    Set(String, Fmt),
    Add(String, Fmt),
    /// `del-header <name> [-m str|beg|end|sub|reg]`.
    Del(NameMatch),
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
    /// `track-sc*`, `sc-inc-gpc*`, `sc-add-gpc`, `sc-set-gpt*`.
    Stick(crate::stick::StickAction),
    /// `deny [status N] [<return options>]`: the error page, or the answer
    /// the options describe.
    Deny {
        status: u16,
        answer: Option<Return>,
    },
    Tarpit {
        status: u16,
    },
    /// `reject`: the connection closes without an answer.
    Reject,
    /// `silent-drop`: the connection closes with nothing said to the
    /// client.
    SilentDrop,
    /// `replace-path|replace-pathq|replace-uri <regex> <fmt>`: when the
    /// regex matches the part, the part becomes the format with `\N`
    /// back-references.
    Replace {
        part: UriPart,
        re: regex::bytes::Regex,
        with: Fmt,
    },
    /// `set-src|set-dst|set-src-port|set-dst-port <expr>`.
    SetAddr(crate::tcp::AddrPart, Expr),
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
    /// `strict-mode on|off`: whether a rewrite that finds no room fails
    /// the message (a 500) for the rules after it in this set.
    StrictMode(bool),
    SetLogLevel,
    /// `set-mark`, `set-tos` (`None`: `set-nice`, accepted).
    SockOpt(Option<SockOpt>),
    /// `set-timeout server|tunnel <time>|<expr>`: the exchange's timeout
    /// (an expression gives milliseconds).
    SetTimeout(TimeoutKind, TimeoutValue),
    /// `normalize-uri <normalizer> [option]`.
    NormalizeUri(crate::normalize::Normalizer),
    /// `capture <sample> len <n>` or `capture <sample> id <n>`: the value,
    /// cut to `len` bytes, goes in capture slot `slot` after the `capture
    /// request header` ones (the configuration resolves `id`).
    Capture {
        expr: Expr,
        len: usize,
        slot: usize,
        id: Option<usize>,
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
    /// `do-resolve(<var>,<resolvers>[,ipv4|ipv6]) <expr>`: the address of
    /// the name `expr` gives, stored in `var` (nothing on failure).
    DoResolve(Box<DoResolve>),
    /// `use-service <name>`: weir answers with a service of its own.
    UseService(Service),
    /// `lua.<name> [args]`: an action a Lua script registered.
    Lua(crate::lua::LuaCall),
    /// `cache-use <cache>`: answer from the cache when it holds the
    /// response.
    CacheUse(String),
    /// `send-spoe-group <engine> <group>`: the group's messages to the
    /// engine's agent, waiting for its answer.
    SendSpoeGroup(String, String),
}

/// Services `use-service` can hand a request to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Service {
    /// `prometheus-exporter`: the metrics in Prometheus' text format.
    Prometheus,
    /// `lua.<name>`: a service a Lua script registered.
    Lua(String),
}

/// The service `use-service <s>` names.
pub fn parse_service(args: &[String]) -> Result<Service, String> {
    match args {
        [s] if s == "prometheus-exporter" => Ok(Service::Prometheus),
        [s] => match crate::lua::call(s, &[]) {
            Some(c) => Ok(Service::Lua(c?.name)),
            None => Err(format!(
                "'use-service': unknown service '{s}' (weir has 'prometheus-exporter' and 'lua.<name>')"
            )),
        },
        _ => Err("'use-service' expects a service name".into()),
    }
}

/// An `http-response` / `http-after-response` action.
#[derive(Debug, Clone)]
pub enum ResAction {
    Allow,
    /// `track-sc*`, `sc-inc-gpc*`, `sc-add-gpc`, `sc-set-gpt*`.
    Stick(crate::stick::StickAction),
    Deny {
        status: u16,
        answer: Option<Return>,
    },
    Return(Return),
    /// `redirect …`: the server's response is replaced by the redirect.
    Redirect(Redirect),
    Header(HeaderOp),
    SetStatus {
        status: u16,
        reason: Option<String>,
    },
    SetVar(VarSet, VarValue),
    UnsetVar(String),
    /// `strict-mode on|off`, as [`ReqAction::StrictMode`].
    StrictMode(bool),
    SetLogLevel,
    /// `set-mark`, `set-tos` (`None`: `set-nice`, accepted).
    SockOpt(Option<SockOpt>),
    /// `wait-for-body time <t> [at-least <bytes>]`: the response's body
    /// (or that much of it) is read before the response goes on; in time,
    /// or a 504.
    WaitForBody {
        time: std::time::Duration,
        at_least: Option<u64>,
    },
    /// `lua.<name> [args]`: an action a Lua script registered.
    Lua(crate::lua::LuaCall),
    /// `cache-store <cache>`: keep the response in the cache.
    CacheStore(String),
    /// `capture <sample> id <n>`: the value, cut to the slot's length, in
    /// response capture slot `slot` after the `capture response header`
    /// ones (the configuration resolves `id` to `slot` and `len`).
    Capture {
        expr: Expr,
        len: usize,
        slot: usize,
        id: usize,
    },
    /// `send-spoe-group <engine> <group>`: the group's messages to the
    /// engine's agent, waiting for its answer.
    SendSpoeGroup(String, String),
    /// `silent-drop`: the client's connection is reset, nothing sent.
    SilentDrop,
}

impl ReqAction {
    /// The answer it describes (`deny` with options, `return`).
    pub fn answer_mut(&mut self) -> Option<&mut Return> {
        match self {
            ReqAction::Deny { answer, .. } => answer.as_mut(),
            ReqAction::Return(r) => Some(r),
            _ => None,
        }
    }
}

impl ResAction {
    /// As [`ReqAction::answer_mut`].
    pub fn answer_mut(&mut self) -> Option<&mut Return> {
        match self {
            ResAction::Deny { answer, .. } => answer.as_mut(),
            ResAction::Return(r) => Some(r),
            _ => None,
        }
    }
}

/// The part of the request target a `replace-*` action rewrites.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UriPart {
    Path,
    PathQ,
    Uri,
}

impl UriPart {
    /// `uri` split as this part sees it: (kept before, the part, kept
    /// after). An absolute-form target keeps its scheme and authority;
    /// `Path` keeps the query.
    fn split(self, uri: &str) -> (&str, &str, &str) {
        let start = uri.find("://").map_or(0, |i| {
            uri[i + 3..].find('/').map_or(uri.len(), |j| i + 3 + j)
        });
        let (prefix, rest) = uri.split_at(start);
        let (path, query) = rest.split_at(rest.find('?').unwrap_or(rest.len()));
        match self {
            UriPart::Path => (prefix, path, query),
            UriPart::PathQ => (prefix, rest, ""),
            UriPart::Uri => ("", uri, ""),
        }
    }

    /// The request target with this part set to `value` (`set-path`,
    /// `set-pathq`, `set-uri`).
    pub fn set(self, uri: &str, value: &str) -> String {
        let (before, _, after) = self.split(uri);
        format!("{before}{value}{after}")
    }

    /// The request target with this part replaced by `with` (`\N`
    /// back-references expanded) when `re` matches the part; `None` when
    /// it does not.
    pub fn replace(self, uri: &str, re: &regex::bytes::Regex, with: &[u8]) -> Option<String> {
        let (before, target, after) = self.split(uri);
        let caps = re.captures(target.as_bytes())?;
        let mut out = Vec::new();
        caps.expand(&crate::matching::backrefs(with), &mut out);
        Some(format!("{before}{}{after}", String::from_utf8_lossy(&out)))
    }
}

/// An action with its condition.
#[derive(Debug, Clone)]
pub struct Rule<A> {
    pub action: A,
    pub cond: Option<Cond>,
    /// Where the configuration wrote it (`last_rule_file`/`_line`).
    pub at: Option<RuleAt>,
}

/// A rule's file and line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleAt {
    pub file: std::sync::Arc<str>,
    pub line: u32,
}

impl<A> Rule<A> {
    /// Whether the rule applies to this request.
    pub fn applies(&self, ctx: &dyn crate::sample::Ctx) -> bool {
        self.cond.as_ref().is_none_or(|c| c.eval(ctx))
    }

    /// The same on a payload that may grow (see [`crate::acl::Tri`]).
    pub fn applies_tri(&self, ctx: &dyn crate::sample::Ctx) -> crate::acl::Tri {
        self.cond
            .as_ref()
            .map_or(crate::acl::Tri::Pass, |c| c.eval_tri(ctx))
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

/// The `N` arguments of `what`, or why there are not `N`.
pub(crate) fn exactly<'a, const N: usize>(
    args: &'a [String],
    what: &str,
) -> Result<&'a [String; N], String> {
    args.try_into()
        .map_err(|_| format!("'{what}' expects {N} argument(s), got {}", args.len()))
}

fn header_op(name: &str, args: &[String], load: Loader<'_>) -> Result<Option<HeaderOp>, String> {
    Ok(Some(match name {
        "set-header" | "add-header" => {
            let [field, value] = exactly(args, name)?;
            let f = Fmt::parse(value, load)?;
            if name == "set-header" {
                HeaderOp::Set(field.clone(), f)
            } else {
                HeaderOp::Add(field.clone(), f)
            }
        }
        "del-header" => HeaderOp::Del(match args {
            [n] => NameMatch::Str(n.to_ascii_lowercase()),
            [n, m, how] if m == "-m" => {
                let low = n.to_ascii_lowercase();
                match how.as_str() {
                    "str" => NameMatch::Str(low),
                    "beg" => NameMatch::Beg(low),
                    "end" => NameMatch::End(low),
                    "sub" => NameMatch::Sub(low),
                    "reg" => NameMatch::Reg(
                        crate::matching::regex(n, false)
                            .map_err(|e| format!("'del-header': {e}"))?,
                    ),
                    o => {
                        return Err(format!(
                        "'del-header': unknown matching method '{o}' (str, beg, end, sub or reg)"
                    ))
                    }
                }
            }
            _ => return Err("'del-header' expects '<name> [-m <method>]'".into()),
        }),
        "replace-header" | "replace-value" => {
            let [field, pattern, with] = exactly(args, name)?;
            let re = crate::matching::regex(&format!("^(?:{pattern})$"), false)
                .map_err(|e| format!("'{name}': {e}"))?;
            HeaderOp::Replace {
                name: field.clone(),
                re,
                with: Fmt::parse(with, load)?,
                each_value: name == "replace-value",
            }
        }
        _ => return Ok(None),
    }))
}

/// Whether `b` is a whole HTTP/1 response as `errorfile` files hold one:
/// a status line, then headers up to the empty line.
pub fn is_raw_response(b: &[u8]) -> bool {
    b.starts_with(b"HTTP/1.") && b.windows(4).any(|w| w == b"\r\n\r\n")
}

/// Parses the words of a `return` action (after `return`), or of an
/// `http-error` line's reply.
pub fn parse_return(args: &[String], load: Loader<'_>) -> Result<Return, String> {
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
            "file" => {
                let f = val()?;
                r.body = Body::Static(load(&f)?.into_bytes());
            }
            "lf-file" => {
                let f = val()?;
                r.body = Body::Fmt(Fmt::parse(&load(&f)?, load)?);
            }
            "errorfile" => {
                let f = val()?;
                let raw = load(&f)?.into_bytes();
                if !raw.is_empty() && !is_raw_response(&raw) {
                    return Err(format!(
                        "file '{f}' is not a complete HTTP/1 response (status line, headers, empty line)"
                    ));
                }
                r.body = Body::Raw(raw);
            }
            "default-errorfiles" => r.body = Body::ErrorPage(0),
            "errorfiles" => r.body = Body::Section(val()?),
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

fn deny_status(args: &[String], default: u16) -> Result<u16, String> {
    match args {
        [] => Ok(default),
        [k, v] if k == "deny_status" || k == "status" => status(Some(v), k),
        _ => Err(format!("unexpected '{}'", args.join(" "))),
    }
}

/// `deny`'s words: `[deny_status|status N]`, then optionally the options
/// of `return` for a custom answer.
fn parse_deny(
    args: &[String],
    default: u16,
    load: Loader<'_>,
) -> Result<(u16, Option<Return>), String> {
    let only_status = args.len() <= 2
        && args
            .first()
            .is_none_or(|k| k == "status" || k == "deny_status");
    if only_status {
        return Ok((deny_status(args, default)?, None));
    }
    let mut words: Vec<String> = args
        .iter()
        .map(|w| {
            if w == "deny_status" {
                "status".into()
            } else {
                w.clone()
            }
        })
        .collect();
    if !words.iter().any(|w| w == "status") {
        words.splice(0..0, ["status".to_string(), default.to_string()]);
    }
    let r = parse_return(&words, load)?;
    Ok((r.status, Some(r)))
}

/// `replace-path|replace-pathq|replace-uri <regex> <fmt>`.
fn parse_replace(
    part: UriPart,
    name: &str,
    args: &[String],
    load: Loader<'_>,
) -> Result<ReqAction, String> {
    let [pattern, with] = exactly(args, name)?;
    let re = crate::matching::regex(pattern, false).map_err(|e| format!("'{name}': {e}"))?;
    Ok(ReqAction::Replace {
        part,
        re,
        with: Fmt::parse(with, load)?,
    })
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

/// What `do-resolve` asks and where the answer goes.
#[derive(Debug, Clone, PartialEq)]
pub struct DoResolve {
    pub var: String,
    pub resolvers: String,
    /// `ipv4` (false) or `ipv6` (true, the default): the family asked
    /// first.
    pub ipv6: bool,
    pub expr: Expr,
}

/// `do-resolve(<var>,<resolvers>[,ipv4|ipv6]) <expr>`.
pub(crate) fn do_resolve(
    action: &str,
    args: &[String],
    load: Loader<'_>,
) -> Result<DoResolve, String> {
    let inner = action
        .strip_prefix("do-resolve(")
        .and_then(|r| r.strip_suffix(')'))
        .ok_or("'do-resolve' expects (<var>,<resolvers>[,ipv4|ipv6])")?;
    let mut parts = inner.split(',').map(str::trim);
    let var = parts.next().unwrap_or("");
    if !crate::vars::is_var(var) {
        return Err(format!("'do-resolve': invalid variable name '{var}'"));
    }
    let resolvers = parts
        .next()
        .filter(|r| !r.is_empty())
        .ok_or("'do-resolve' expects a resolvers section after the variable")?;
    let ipv6 = match parts.next() {
        None | Some("ipv6") => true,
        Some("ipv4") => false,
        Some(o) => return Err(format!("'do-resolve': expects 'ipv4' or 'ipv6', got '{o}'")),
    };
    let [e] = args else {
        return Err("'do-resolve' expects one sample expression".into());
    };
    Ok(DoResolve {
        var: var.to_string(),
        resolvers: resolvers.to_string(),
        ipv6,
        expr: Expr::parse(e, load)?,
    })
}

/// `wait-for-body time <t> [at-least <bytes>]`.
/// Which timeout `set-timeout` changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeoutKind {
    Server,
    Tunnel,
}

/// A `set-timeout` value: a time, or an expression in milliseconds.
#[derive(Debug, Clone)]
pub enum TimeoutValue {
    Fixed(std::time::Duration),
    Expr(Expr),
}

impl TimeoutValue {
    /// The timeout for this exchange; `None` when the expression gives no
    /// positive integer (the timeout is then left as it is).
    pub fn eval(&self, ctx: &dyn crate::sample::Ctx) -> Option<std::time::Duration> {
        match self {
            TimeoutValue::Fixed(d) => Some(*d),
            TimeoutValue::Expr(e) => match e.eval(ctx)? {
                crate::sample::Sample::Int(ms) if ms > 0 => {
                    Some(std::time::Duration::from_millis(ms as u64))
                }
                _ => None,
            },
        }
    }
}

fn set_timeout(args: &[String], load: Loader<'_>) -> Result<ReqAction, String> {
    let [kind, v] = exactly(args, "set-timeout")?;
    let kind = match kind.as_str() {
        "server" => TimeoutKind::Server,
        "tunnel" => TimeoutKind::Tunnel,
        k => {
            return Err(format!(
                "'set-timeout': unsupported timeout '{k}' (server or tunnel)"
            ))
        }
    };
    let value = if v.starts_with(|c: char| c.is_ascii_digit()) {
        TimeoutValue::Fixed(time_arg(v)?)
    } else {
        TimeoutValue::Expr(Expr::parse(v, load)?)
    };
    Ok(ReqAction::SetTimeout(kind, value))
}

fn wait_for_body(args: &[String]) -> Result<ReqAction, String> {
    let (time, at_least) = wait_args(args)?;
    Ok(ReqAction::WaitForBody { time, at_least })
}

/// `time <t> [at-least <bytes>]` of `wait-for-body`.
fn wait_args(args: &[String]) -> Result<(std::time::Duration, Option<u64>), String> {
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
    Ok((
        time.ok_or("'wait-for-body' expects 'time <time>'")?,
        at_least,
    ))
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
    let (name, args) = act.split_first().ok_or("expects an action")?;
    let name = name.as_str();
    let one = |what: &str| -> Result<Fmt, String> {
        let [arg] = exactly(args, what)?;
        Fmt::parse(arg, load)
    };
    let action = if let Some(h) = header_op(name, args, load)? {
        ReqAction::Header(h)
    } else if let Some(a) = crate::stick::parse_action(name, args, &|e| Expr::parse(e, load)) {
        ReqAction::Stick(a?)
    } else if let Some(set) = crate::vars::parse_set(name, args, load) {
        let (var, value) = set?;
        ReqAction::SetVar(var, value)
    } else {
        match name {
            "allow" => ReqAction::Allow,
            "deny" => {
                let (status, answer) = parse_deny(args, 403, load)?;
                ReqAction::Deny { status, answer }
            }
            "reject" => {
                exactly::<0>(args, name)?;
                ReqAction::Reject
            }
            "silent-drop" => {
                exactly::<0>(args, name)?;
                ReqAction::SilentDrop
            }
            "replace-path" => parse_replace(UriPart::Path, name, args, load)?,
            "replace-pathq" => parse_replace(UriPart::PathQ, name, args, load)?,
            "replace-uri" => parse_replace(UriPart::Uri, name, args, load)?,
            "set-src" | "set-dst" | "set-src-port" | "set-dst-port" => {
                let part = match name {
                    "set-src" => crate::tcp::AddrPart::Src,
                    "set-dst" => crate::tcp::AddrPart::Dst,
                    "set-src-port" => crate::tcp::AddrPart::SrcPort,
                    _ => crate::tcp::AddrPart::DstPort,
                };
                let [e] = exactly(args, name)?;
                ReqAction::SetAddr(part, Expr::parse(e, load)?)
            }
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
                exactly::<1>(args, name)?;
                ReqAction::SetLogLevel
            }
            "set-mark" | "set-tos" | "set-nice" => ReqAction::SockOpt(parse_sockopt(name, args)?),
            "strict-mode" => ReqAction::StrictMode(strict_mode(args)?),
            "wait-for-body" => wait_for_body(args)?,
            n if n.starts_with("do-resolve(") => {
                ReqAction::DoResolve(Box::new(do_resolve(n, args, load)?))
            }
            "set-timeout" => set_timeout(args, load)?,
            "use-service" => ReqAction::UseService(parse_service(args)?),
            "cache-use" => match args {
                [c] => ReqAction::CacheUse(c.clone()),
                _ => return Err("'cache-use' expects a cache name".into()),
            },
            "send-spoe-group" => match args {
                [e, g] => ReqAction::SendSpoeGroup(e.clone(), g.clone()),
                _ => return Err("'send-spoe-group' expects an engine and a group".into()),
            },
            "normalize-uri" => ReqAction::NormalizeUri(crate::normalize::Normalizer::parse(args)?),
            "capture" => match args {
                [e, k, n] if k == "len" => {
                    let (expr, len) = capture(e, n, load)?;
                    ReqAction::Capture {
                        expr,
                        len,
                        slot: 0,
                        id: None,
                    }
                }
                [e, k, n] if k == "id" => ReqAction::Capture {
                    expr: Expr::parse(e, load)?,
                    len: 0,
                    slot: 0,
                    id: Some(
                        n.parse()
                            .map_err(|_| format!("'capture ... id': invalid id '{n}'"))?,
                    ),
                },
                _ => {
                    return Err(
                        "'capture' expects '<sample> len <length>' or '<sample> id <id>'".into(),
                    )
                }
            },
            "auth" => ReqAction::Auth {
                realm: match args {
                    [] => None,
                    [k, v] if k == "realm" => Some(v.clone()),
                    _ => return Err("'auth' expects '[realm <realm>]'".into()),
                },
            },
            n if n.starts_with("unset-var(") => ReqAction::UnsetVar(var_name(n, "unset-var")?),
            n if n.starts_with("lua.") => ReqAction::Lua(crate::lua::call(n, args).ok_or("")??),
            o => return Err(format!("action '{o}' is not supported by weir")),
        }
    };
    Ok(Rule {
        action,
        cond: cond_of(c, lookup, load)?,
        at: None,
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
    let (name, args) = act.split_first().ok_or("expects an action")?;
    let name = name.as_str();
    let action = if let Some(h) = header_op(name, args, load)? {
        ResAction::Header(h)
    } else if let Some(a) = crate::stick::parse_action(name, args, &|e| Expr::parse(e, load)) {
        ResAction::Stick(a?)
    } else if let Some(set) = crate::vars::parse_set(name, args, load) {
        let (var, value) = set?;
        ResAction::SetVar(var, value)
    } else {
        match name {
            "allow" => ResAction::Allow,
            "deny" => {
                let (status, answer) = parse_deny(args, 502, load)?;
                ResAction::Deny { status, answer }
            }
            "return" => ResAction::Return(parse_return(args, load)?),
            "redirect" => ResAction::Redirect(parse_redirect(args, load)?),
            "set-status" => {
                let s = status(args.first(), "set-status")?;
                let reason = match args.get(1..).unwrap_or_default() {
                    [] => None,
                    [k, v] if k == "reason" => Some(v.clone()),
                    o => return Err(format!("'set-status': unexpected '{}'", o.join(" "))),
                };
                ResAction::SetStatus { status: s, reason }
            }
            "set-log-level" => {
                exactly::<1>(args, name)?;
                ResAction::SetLogLevel
            }
            "set-mark" | "set-tos" | "set-nice" => ResAction::SockOpt(parse_sockopt(name, args)?),
            "silent-drop" if args.is_empty() => ResAction::SilentDrop,
            "strict-mode" => ResAction::StrictMode(strict_mode(args)?),
            "cache-store" => match args {
                [c] => ResAction::CacheStore(c.clone()),
                _ => return Err("'cache-store' expects a cache name".into()),
            },
            "capture" => match args {
                [e, k, n] if k == "id" => ResAction::Capture {
                    expr: Expr::parse(e, load)?,
                    len: 0,
                    slot: 0,
                    id: n
                        .parse()
                        .map_err(|_| format!("'capture ... id': invalid id '{n}'"))?,
                },
                _ => return Err("'capture' expects '<sample> id <id>'".into()),
            },
            "send-spoe-group" => match args {
                [e, g] => ResAction::SendSpoeGroup(e.clone(), g.clone()),
                _ => return Err("'send-spoe-group' expects an engine and a group".into()),
            },
            "wait-for-body" => {
                let (time, at_least) = wait_args(args)?;
                ResAction::WaitForBody { time, at_least }
            }
            n if n.starts_with("unset-var(") => ResAction::UnsetVar(var_name(n, "unset-var")?),
            n if n.starts_with("lua.") => ResAction::Lua(crate::lua::call(n, args).ok_or("")??),
            o => return Err(format!("action '{o}' is not supported by weir")),
        }
    };
    Ok(Rule {
        action,
        cond: cond_of(c, lookup, load)?,
        at: None,
    })
}

#[cfg(test)]
#[path = "action_tests.rs"]
mod tests;

/// `strict-mode on|off`.
fn strict_mode(args: &[String]) -> Result<bool, String> {
    match args {
        [v] if v == "on" => Ok(true),
        [v] if v == "off" => Ok(false),
        _ => Err("'strict-mode' expects 'on' or 'off'".into()),
    }
}
