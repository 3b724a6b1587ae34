//! `option tcp-check`, `option httpchk`, the protocol checks, and the
//! `tcp-check` and `http-check` rules.

use crate::model::{
    CheckCode, CheckConnect, CheckInfo, CheckProto, CheckText, HdrHow, HdrMatch, HdrPat, HttpSend,
    Proxy, ProxyKind, TcpCheckRule, TcpCheckRules, TcpExpect, TcpMatch,
};
use weir_rules::matching::{compile, Method};
use weir_rules::{Expr, Fmt};

/// The check keywords; `Ok(false)` for another family's.
pub(super) fn checks(
    p: &mut Proxy,
    name: &str,
    args: &[String],
    negate: bool,
) -> Result<bool, String> {
    if let Some(done) = check_option(p, name, args, negate)? {
        return Ok(done);
    }
    let (http, kw) = match name.split_once(' ') {
        Some(("tcp-check", kw)) => (false, kw),
        Some(("http-check", kw)) => (true, kw),
        _ => return Ok(false),
    };
    match kw {
        "send-state" => {
            super::proxy::no_args(args)?;
            p.options.check_send_state = !negate;
            return Ok(true);
        }
        "disable-on-404" => {
            super::proxy::no_args(args)?;
            p.options.check_disable_404 = !negate;
            return Ok(true);
        }
        _ => {}
    }
    let rules = own(p, http);
    let pending = || rules.pending_comment.take();
    let rule = match kw {
        "comment" => {
            let c = super::proxy::one(args, "a message")?.to_string();
            rules.pending_comment = Some(c.clone());
            TcpCheckRule::Comment(c)
        }
        "connect" => {
            let mut c = connect(args)?;
            c.comment = c.comment.or_else(pending);
            TcpCheckRule::Connect(c)
        }
        "send" if http => {
            let mut s = http_send(args)?;
            s.comment = s.comment.or_else(pending);
            TcpCheckRule::HttpSend(Box::new(s))
        }
        "send" | "send-binary" | "send-lf" | "send-binary-lf" => {
            let binary = kw.starts_with("send-binary");
            let (data, comment) = send(args, binary, kw.ends_with("-lf"))?;
            let comment = comment.or_else(pending);
            match data {
                Ok(data) => TcpCheckRule::Send { data, comment },
                Err(fmt) => TcpCheckRule::SendLf {
                    fmt,
                    binary,
                    comment,
                },
            }
        }
        "expect" => {
            let mut e = expect(args, http)?;
            e.comment = e.comment.or_else(pending);
            TcpCheckRule::Expect(e)
        }
        "set-var" => {
            let (action, rest) = args.split_first().ok_or("expects a variable")?;
            let (var, value) = weir_rules::vars::parse_set(action, rest, &super::http::load)
                .ok_or("expects set-var(<name>) or set-var-fmt(<name>)")??;
            TcpCheckRule::SetVar(var, value)
        }
        "unset-var" => {
            let [action] = args else {
                return Err("expects unset-var(<name>) and nothing more".into());
            };
            let v = weir_rules::vars::parse_action(action, "unset-var")?;
            if !v.conds.is_empty() {
                return Err("'unset-var' takes no condition".into());
            }
            TcpCheckRule::UnsetVar(v.name)
        }
        _ => return Ok(false),
    };
    add(
        rules,
        rule,
        http,
        &format!("{} {kw}", if http { "http-check" } else { "tcp-check" }),
    )?;
    Ok(true)
}

/// `option tcp-check`, `option httpchk` and the protocol checks:
/// `Some(true)` when `name` is one of them.
fn check_option(
    p: &mut Proxy,
    name: &str,
    args: &[String],
    negate: bool,
) -> Result<Option<bool>, String> {
    let proto = match name {
        "option tcp-check"
        | "option redis-check"
        | "option smtpchk"
        | "option pgsql-check"
        | "option mysql-check"
        | "option ldap-check"
        | "option ssl-hello-chk"
        | "option spop-check"
        | "option external-check"
        | "option httpchk" => name,
        _ => return Ok(None),
    };
    if negate {
        super::proxy::no_args(args)?;
        p.options.check_proto = None;
        return Ok(Some(true));
    }
    let proto = match proto {
        "option httpchk" => {
            httpchk(p, args)?;
            CheckProto::Http
        }
        "option tcp-check" => CheckProto::TcpCheck,
        "option redis-check" => CheckProto::Redis,
        "option ldap-check" => CheckProto::Ldap,
        "option ssl-hello-chk" => CheckProto::SslHello,
        "option spop-check" => CheckProto::Spop,
        "option external-check" => CheckProto::External,
        "option smtpchk" => CheckProto::Smtp(smtp_hello(args)?),
        "option pgsql-check" => match args {
            [u, name] if u == "user" => CheckProto::Pgsql(name.clone()),
            _ => return Err("expects 'user <username>'".into()),
        },
        _ => CheckProto::Mysql(mysql_login(args)?),
    };
    if matches!(
        proto,
        CheckProto::TcpCheck
            | CheckProto::Redis
            | CheckProto::Ldap
            | CheckProto::SslHello
            | CheckProto::Spop
            | CheckProto::External
    ) {
        super::proxy::no_args(args)?;
    }
    p.options.check_proto = Some(proto);
    Ok(Some(true))
}

/// `option httpchk [[<method>] <uri> [<version>]]`: with arguments, the
/// request they give (header lines hidden after the version, the old
/// way, become its headers).
fn httpchk(p: &mut Proxy, args: &[String]) -> Result<(), String> {
    let rules = own(p, true);
    let (meth, uri, ver) = match args {
        [] => return Ok(()),
        [u] => (None, u, None),
        [m, u] => (Some(m), u, None),
        [m, u, v] => (Some(m), u, Some(v)),
        _ => return Err("expects at most <method> <uri> <version>".into()),
    };
    let mut send = HttpSend {
        meth: meth.cloned(),
        uri: Some(CheckText::Plain(uri.clone())),
        implicit: true,
        ..Default::default()
    };
    if let Some(v) = ver {
        let mut lines = v.split("\r\n");
        send.ver = lines.next().map(str::to_string);
        for l in lines.filter(|l| !l.is_empty()) {
            let (n, v) = l.split_once(':').unwrap_or((l, ""));
            let v = Fmt::parse(v.trim(), &super::http::load)?;
            send.headers.push((n.trim().to_string(), v));
        }
    }
    let first = rules
        .rules
        .iter()
        .position(|r| !r.is_aside() && !matches!(r, TcpCheckRule::Connect(_)));
    match first.and_then(|i| rules.rules.get_mut(i).map(|r| (i, r))) {
        Some((_, TcpCheckRule::HttpSend(s))) if s.implicit => **s = send,
        Some((_, TcpCheckRule::HttpSend(s))) => s.merge(send),
        _ => {
            let at = usize::from(matches!(
                rules.rules.iter().find(|r| !r.is_aside()),
                Some(TcpCheckRule::Connect(_))
            ));
            let at = match at {
                1 => rules
                    .rules
                    .iter()
                    .position(|r| !r.is_aside())
                    .map_or(0, |i| i + 1),
                _ => 0,
            };
            rules
                .rules
                .insert(at, TcpCheckRule::HttpSend(Box::new(send)));
        }
    }
    Ok(())
}

/// Adds `rule` to a rule set, as haproxy orders them: a `connect` only
/// first or after an `expect`; in `http-check` sets, a `send` only first
/// or after a `connect`, an `expect` only after a `send` or an `expect`,
/// and the first `send` fills in `option httpchk`'s request and takes its
/// place.
fn add(rules: &mut TcpCheckRules, rule: TcpCheckRule, http: bool, kw: &str) -> Result<(), String> {
    let step = rules.rules.len() + 1;
    let first = rules.rules.iter().position(|r| !r.is_aside());
    let last = rules.rules.iter().rev().find(|r| !r.is_aside());
    if matches!(rule, TcpCheckRule::Connect(_))
        && first.is_some_and(|i| !matches!(rules.rules.get(i), Some(TcpCheckRule::Connect(_))))
    {
        return Err("first step MUST also be a 'connect', optionally preceded by a 'set-var', an 'unset-var' or a 'comment', when there is a 'connect' step in the tcp-check ruleset.".into());
    }
    if http {
        let after = |want: &[fn(&TcpCheckRule) -> bool], missing: &str| match last {
            None => Ok(()),
            Some(TcpCheckRule::HttpSend(s)) if s.implicit => Ok(()),
            Some(l) if want.iter().any(|f| f(l)) => Ok(()),
            Some(_) => Err(format!(
                "unable to add {kw} rule at step {step} (missing {missing} rule)."
            )),
        };
        let connect: fn(&TcpCheckRule) -> bool = |r| matches!(r, TcpCheckRule::Connect(_));
        let send: fn(&TcpCheckRule) -> bool = |r| matches!(r, TcpCheckRule::HttpSend(_));
        let expect: fn(&TcpCheckRule) -> bool = |r| matches!(r, TcpCheckRule::Expect(_));
        match &rule {
            TcpCheckRule::HttpSend(_) => after(&[connect], "connect")?,
            TcpCheckRule::Expect(_) => after(&[send, expect], "send")?,
            TcpCheckRule::Connect(_) => after(&[expect], "expect")?,
            _ => {}
        }
    }
    let rule = match (rule, first.map(|i| (i, rules.rules.get(i)))) {
        (TcpCheckRule::HttpSend(s), Some((i, Some(TcpCheckRule::HttpSend(old)))))
            if old.implicit =>
        {
            let mut merged = (**old).clone();
            merged.merge(*s);
            rules.rules.remove(i);
            TcpCheckRule::HttpSend(Box::new(merged))
        }
        (rule, _) => rule,
    };
    rules.rules.push(rule);
    Ok(())
}
/// The hello line of `option smtpchk [<hello> <domain>]`: `HELO` or
/// `EHLO` with the domain given, `HELO localhost` otherwise.
fn smtp_hello(args: &[String]) -> Result<String, String> {
    match args {
        [] => Ok("HELO localhost".into()),
        [h, d] if h == "HELO" || h == "EHLO" => Ok(format!("{h} {d}")),
        [_, _] => Ok("HELO localhost".into()),
        _ => Err("expects nothing, or <hello> <domain>".into()),
    }
}

/// The login of `option mysql-check [user <name> [post-41|pre-41]]`
/// (post-41 by default).
fn mysql_login(args: &[String]) -> Result<Option<(String, bool)>, String> {
    match args {
        [] => Ok(None),
        [u, name] if u == "user" => Ok(Some((name.clone(), true))),
        [u, name, v] if u == "user" && (v == "post-41" || v == "pre-41") => {
            Ok(Some((name.clone(), v == "post-41")))
        }
        _ => Err("expects nothing, or 'user <username> [post-41|pre-41]'".into()),
    }
}

/// The section's `tcp-check` (`http`: `http-check`) rules; its first such
/// line (or `option httpchk`) drops the rules `defaults` gave.
fn own(p: &mut Proxy, http: bool) -> &mut TcpCheckRules {
    let defaults = p.kind == ProxyKind::Defaults;
    let rules = if http {
        &mut p.http_check
    } else {
        &mut p.tcp_check
    };
    if !defaults && !rules.own {
        rules.rules.clear();
        rules.pending_comment = None;
    }
    rules.own = true;
    rules
}

fn value<'a>(
    it: &mut std::slice::Iter<'a, String>,
    kw: &str,
    what: &str,
) -> Result<&'a str, String> {
    it.next()
        .map(String::as_str)
        .ok_or_else(|| format!("'{kw}' expects {what}"))
}

fn connect(args: &[String]) -> Result<CheckConnect, String> {
    let mut c = CheckConnect::default();
    let mut it = args.iter();
    while let Some(w) = it.next() {
        match w.as_str() {
            "default" => c.default = true,
            "linger" => {}
            "port" => {
                let v = value(&mut it, "port", "a port")?;
                c.port = Some(
                    v.parse::<u16>()
                        .ok()
                        .filter(|p| *p > 0)
                        .ok_or_else(|| format!("invalid port '{v}'"))?,
                );
            }
            "addr" => {
                // `<ip>` or `<ip>:<port>` (whose port gives way to `port`).
                let v = value(&mut it, "addr", "an address")?;
                let bad = || format!("invalid address '{v}'");
                match v.parse::<std::net::SocketAddr>() {
                    Ok(sa) => {
                        c.addr = Some(sa.ip());
                        c.port = c.port.or(Some(sa.port()).filter(|p| *p > 0));
                    }
                    Err(_) => c.addr = Some(v.parse().map_err(|_| bad())?),
                }
            }
            "comment" => c.comment = Some(value(&mut it, "comment", "a message")?.to_string()),
            "ssl" => c.ssl = true,
            "sni" => c.sni = Some(value(&mut it, "sni", "a server name")?.to_string()),
            "alpn" => {
                let v = value(&mut it, "alpn", "a protocol list")?;
                c.alpn = Some(v.split(',').map(str::to_string).collect());
            }
            "proto" => {
                c.proto = Some(match value(&mut it, "proto", "a protocol")? {
                    p @ ("h1" | "h2") => p.to_string(),
                    p => return Err(format!("'proto {p}' is not supported by weir (h1 or h2)")),
                })
            }
            "send-proxy" => c.send_proxy = true,
            "via-socks4" => c.via_socks4 = true,
            o => {
                return Err(format!(
                    "expects 'comment', 'port', 'addr', 'send-proxy', 'via-socks4', 'ssl', 'sni', 'alpn', 'proto', 'default' or 'linger' but got '{o}'"
                ))
            }
        }
    }
    Ok(c)
}

/// The bytes of `send <string>` or `send-binary <hex>` (`Err`: the
/// log-format string of `send-lf`, `send-binary-lf`), and a comment.
type SendData = Result<Vec<u8>, Fmt>;

fn send(args: &[String], binary: bool, lf: bool) -> Result<(SendData, Option<String>), String> {
    let (data, rest) = args.split_first().ok_or("expects the data to send")?;
    let comment = match rest {
        [] => None,
        [c, m] if c == "comment" => Some(m.clone()),
        _ => return Err(format!("expects 'comment' but got '{}'", rest.join(" "))),
    };
    let data = match (lf, binary) {
        (true, _) => Err(Fmt::parse(data, &super::http::load)?),
        (false, true) => Ok(hex(data)?),
        (false, false) => Ok(weir_rules::args::raw_bytes(data).into_owned()),
    };
    Ok((data, comment))
}

/// `http-check send [meth M] [uri U|uri-lf F] [ver V] [hdr N F]…
/// [body S|body-lf F] [comment C]`.
fn http_send(args: &[String]) -> Result<HttpSend, String> {
    let mut s = HttpSend::default();
    let mut it = args.iter();
    let fmt = |v: &str| Fmt::parse(v, &super::http::load);
    while let Some(w) = it.next() {
        let mut take = || value(&mut it, w, "a value");
        match w.as_str() {
            "meth" => s.meth = Some(take()?.to_string()),
            "uri" => s.uri = Some(CheckText::Plain(take()?.to_string())),
            "uri-lf" => s.uri = Some(CheckText::Fmt(fmt(take()?)?)),
            "ver" => s.ver = Some(take()?.to_string()),
            "body" => s.body = Some(CheckText::Plain(take()?.to_string())),
            "body-lf" => s.body = Some(CheckText::Fmt(fmt(take()?)?)),
            "comment" => s.comment = Some(take()?.to_string()),
            "hdr" => {
                let n = take()?.to_string();
                let v = value(&mut it, "hdr", "a name and a value")?;
                s.headers.push((n, fmt(v)?));
            }
            o => {
                return Err(format!(
                    "expects 'meth', 'uri', 'uri-lf', 'ver', 'hdr', 'body', 'body-lf' or 'comment' but got '{o}'"
                ))
            }
        }
    }
    Ok(s)
}

fn hex(s: &str) -> Result<Vec<u8>, String> {
    match weir_rules::matching::unhex(s) {
        Some(b) if !b.is_empty() => Ok(b),
        _ => Err(format!("'{s}' is not a hexadecimal string")),
    }
}

/// A status an expect rule may set, among those allowed for its use.
fn status(v: &str, allowed: &[&'static str]) -> Result<&'static str, String> {
    allowed
        .iter()
        .find(|a| a.eq_ignore_ascii_case(v))
        .copied()
        .ok_or_else(|| format!("'{v}' is not one of {}", allowed.join(", ")))
}

/// A rule's message: plain text, or a log-format string.
fn message(v: &str) -> Result<CheckInfo, String> {
    let f = Fmt::parse(v, &super::http::load)?;
    Ok(match f.is_static() {
        true => CheckInfo::Text(v.to_string()),
        false => CheckInfo::Fmt(f),
    })
}

/// `tcp-check expect …` (`http`: `http-check expect …`).
fn expect(args: &[String], http: bool) -> Result<TcpExpect, String> {
    let mut e = TcpExpect::new(TcpMatch::String(Vec::new()));
    let mut it = args.iter();
    let (mut negate, mut found, mut error_status) = (false, false, None);
    while let Some(w) = it.next() {
        let mut take = |what: &str| value(&mut it, w, what);
        match w.as_str() {
            "min-recv" => {
                let v = take("a number")?;
                let n: i64 = v.parse().map_err(|_| format!("invalid number '{v}'"))?;
                e.min_recv = usize::try_from(n).ok();
            }
            "comment" => e.comment = Some(take("a message")?.to_string()),
            "ok-status" => {
                e.ok_status = status(take("a status")?, &["L7OK", "L7OKC", "L6OK", "L4OK"])?
            }
            "error-status" => {
                error_status = Some(status(
                    take("a status")?,
                    &["L7OKC", "L7RSP", "L7STS", "L6RSP", "L4CON"],
                )?)
            }
            "tout-status" => {
                e.tout_status = status(take("a status")?, &["L7TOUT", "L6TOUT", "L4TOUT"])?
            }
            "on-success" => e.on_success = Some(message(take("a message")?)?),
            "on-error" => e.on_error = Some(message(take("a message")?)?),
            "status-code" => {
                let v = take("an expression")?;
                let fixed = v
                    .strip_prefix("int(")
                    .and_then(|r| r.strip_suffix(')'))
                    .and_then(|n| n.parse().ok());
                e.status_code = Some(match fixed {
                    Some(n) => CheckCode::Fixed(n),
                    None => CheckCode::Expr(Expr::parse(v, &super::http::load)?),
                });
            }
            "!" => negate = true,
            kind => {
                let kind = kind.strip_prefix('!').map_or(kind, |k| {
                    negate = true;
                    k
                });
                if found {
                    return Err(format!("a second pattern ('{kind}') after the first"));
                }
                e.pattern = pattern(kind, &mut it, http)?;
                found = true;
            }
        }
    }
    if !found {
        return Err(match http {
            true => "expects [!] status|rstatus|hdr|fhdr|string|rstring|string-lf <pattern>",
            false => "expects [!] string|rstring|binary|rbinary|string-lf|binary-lf <pattern>",
        }
        .into());
    }
    e.error_status = error_status.unwrap_or(e.pattern.error_status());
    e.negate = negate;
    Ok(e)
}

/// The pattern of an expect rule of `kind`, from the words after it.
fn pattern(
    kind: &str,
    it: &mut std::slice::Iter<'_, String>,
    http: bool,
) -> Result<TcpMatch, String> {
    if http && matches!(kind, "hdr" | "fhdr") {
        return Ok(TcpMatch::Hdr(Box::new(hdr_match(kind == "fhdr", it)?)));
    }
    let pat = value(it, kind, "a pattern")?;
    let re = |p: &str| compile(Method::Reg, p, false);
    Ok(match (kind, http) {
        ("string", _) => TcpMatch::String(weir_rules::args::raw_bytes(pat).into_owned()),
        ("rstring", _) => TcpMatch::RString(re(pat)?),
        ("string-lf", _) => TcpMatch::Lf(Fmt::parse(pat, &super::http::load)?, false),
        ("binary", false) => TcpMatch::Binary(hex(pat)?),
        ("rbinary", false) => TcpMatch::RBinary(re(pat)?),
        ("binary-lf", false) => TcpMatch::Lf(Fmt::parse(pat, &super::http::load)?, true),
        ("status", true) => TcpMatch::Status(status_codes(pat)?),
        ("rstatus", true) => TcpMatch::RStatus(re(pat)?),
        (k, false) => {
            return Err(format!(
                "expects 'string', 'rstring', 'binary', 'rbinary', 'string-lf' or 'binary-lf' but got '{k}'"
            ))
        }
        (k, true) => {
            return Err(format!(
                "expects 'status', 'rstatus', 'hdr', 'fhdr', 'string', 'rstring' or 'string-lf' but got '{k}'"
            ))
        }
    })
}

/// `status <code|a-b>[,…]`.
fn status_codes(pat: &str) -> Result<Vec<(u16, u16)>, String> {
    pat.split(',')
        .map(|part| {
            let (a, b) = part.split_once('-').unwrap_or((part, part));
            let code = |c: &str| {
                c.trim()
                    .parse::<u16>()
                    .map_err(|_| format!("invalid status '{part}'"))
            };
            Ok((code(a)?, code(b)?))
        })
        .collect()
}

/// `name[-lf] [-m <meth>] <name> [value[-lf] [-m <meth>] <value>]`.
fn hdr_match(full: bool, it: &mut std::slice::Iter<'_, String>) -> Result<HdrMatch, String> {
    let what = if full { "fhdr" } else { "hdr" };
    let side = |it: &mut std::slice::Iter<'_, String>, first: &str| -> Result<HdrPat, String> {
        let lf = first.ends_with("-lf");
        let mut how = HdrHow::Str;
        let mut w = value(it, first, "a pattern")?;
        if w == "-m" {
            how = match value(it, "-m", "a method")? {
                "str" => HdrHow::Str,
                "beg" => HdrHow::Beg,
                "end" => HdrHow::End,
                "sub" => HdrHow::Sub,
                "reg" => HdrHow::Reg,
                m => {
                    return Err(format!(
                    "'{what}': unknown matching method '{m}' (expects str, beg, end, sub or reg)"
                ))
                }
            };
            w = value(it, first, "a pattern")?;
        }
        if lf && how == HdrHow::Reg {
            return Err(format!(
                "'{what}': log-format string is not supported with a regex matching method."
            ));
        }
        // Header names compare without case.
        let re = match how {
            HdrHow::Reg => Some(compile(Method::Reg, w, first.starts_with("name"))?),
            _ => None,
        };
        let text = match lf {
            true => CheckText::Fmt(Fmt::parse(w, &super::http::load)?),
            false => CheckText::Plain(w.to_string()),
        };
        Ok(HdrPat { how, text, re })
    };
    let first = value(it, what, "'name' or 'name-lf'")?;
    if first != "name" && first != "name-lf" {
        return Err(format!(
            "'{what}': expects 'name' or 'name-lf' but got '{first}'"
        ));
    }
    let name = side(it, first)?;
    let rest = it.as_slice();
    let value_side = match rest.first().map(String::as_str) {
        Some(v @ ("value" | "value-lf")) => {
            it.next();
            Some(side(it, v)?)
        }
        _ => None,
    };
    Ok(HdrMatch {
        full,
        name,
        value: value_side,
    })
}
