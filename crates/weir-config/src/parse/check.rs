//! `option tcp-check`, `option redis-check` and the `tcp-check` rules.

use crate::model::{
    CheckCode, CheckConnect, CheckInfo, CheckProto, Proxy, ProxyKind, TcpCheckRule, TcpExpect,
    TcpMatch,
};

/// The check keywords; `Ok(false)` for another family's.
pub(super) fn checks(
    p: &mut Proxy,
    name: &str,
    args: &[String],
    negate: bool,
) -> Result<bool, String> {
    match name {
        "option tcp-check"
        | "option redis-check"
        | "option smtpchk"
        | "option pgsql-check"
        | "option mysql-check"
        | "option ldap-check"
        | "option ssl-hello-chk" => {
            if negate {
                super::proxy::no_args(args)?;
                p.options.check_proto = None;
                return Ok(true);
            }
            let proto = match name {
                "option tcp-check" => CheckProto::TcpCheck,
                "option redis-check" => CheckProto::Redis,
                "option ldap-check" => CheckProto::Ldap,
                "option ssl-hello-chk" => CheckProto::SslHello,
                "option smtpchk" => CheckProto::Smtp(smtp_hello(args)?),
                "option pgsql-check" => match args {
                    [u, name] if u == "user" => CheckProto::Pgsql(name.clone()),
                    _ => return Err("expects 'user <username>'".into()),
                },
                _ => CheckProto::Mysql(mysql_login(args)?),
            };
            if matches!(
                proto,
                CheckProto::TcpCheck | CheckProto::Redis | CheckProto::Ldap | CheckProto::SslHello
            ) {
                super::proxy::no_args(args)?;
            }
            p.options.httpchk = None;
            p.options.check_proto = Some(proto);
        }
        "tcp-check comment" => {
            own(p);
            let c = super::proxy::one(args, "a message")?.to_string();
            p.tcp_check.rules.push(TcpCheckRule::Comment(c.clone()));
            p.tcp_check.pending_comment = Some(c);
        }
        "tcp-check connect" => {
            own(p);
            let mut c = connect(args)?;
            c.comment = c.comment.or_else(|| p.tcp_check.pending_comment.take());
            p.tcp_check.rules.push(TcpCheckRule::Connect(c));
        }
        "tcp-check send" | "tcp-check send-binary" => {
            own(p);
            let (data, comment) = send(args, name == "tcp-check send-binary")?;
            let comment = comment.or_else(|| p.tcp_check.pending_comment.take());
            p.tcp_check.rules.push(TcpCheckRule::Send { data, comment });
        }
        "tcp-check expect" => {
            own(p);
            let mut e = expect(args)?;
            e.comment = e.comment.or_else(|| p.tcp_check.pending_comment.take());
            p.tcp_check.rules.push(TcpCheckRule::Expect(e));
        }
        _ => return Ok(false),
    }
    Ok(true)
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

/// A section's first `tcp-check` line drops the rules `defaults` gave.
fn own(p: &mut Proxy) {
    if p.kind != ProxyKind::Defaults && !p.tcp_check.own {
        p.tcp_check.rules.clear();
        p.tcp_check.pending_comment = None;
    }
    p.tcp_check.own = true;
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
                let v = value(&mut it, "addr", "an address")?;
                c.addr = Some(v.parse().map_err(|_| format!("invalid address '{v}'"))?);
            }
            "comment" => c.comment = Some(value(&mut it, "comment", "a message")?.to_string()),
            "ssl" => c.ssl = true,
            "sni" => c.sni = Some(value(&mut it, "sni", "a server name")?.to_string()),
            "alpn" => {
                let v = value(&mut it, "alpn", "a protocol list")?;
                c.alpn = Some(v.split(',').map(str::to_string).collect());
            }
            o @ ("proto" | "send-proxy" | "via-socks4") => {
                return Err(format!("'{o}' is not supported by weir yet"))
            }
            o => {
                return Err(format!(
                    "expects 'comment', 'port', 'addr', 'ssl', 'sni', 'alpn', 'default' or 'linger' but got '{o}'"
                ))
            }
        }
    }
    Ok(c)
}

/// The bytes of `send <string>` or `send-binary <hex>`, and a comment.
fn send(args: &[String], binary: bool) -> Result<(Vec<u8>, Option<String>), String> {
    let (data, rest) = args.split_first().ok_or("expects the data to send")?;
    let comment = match rest {
        [] => None,
        [c, m] if c == "comment" => Some(m.clone()),
        _ => return Err(format!("expects 'comment' but got '{}'", rest.join(" "))),
    };
    let bytes = if binary {
        hex(data)?
    } else {
        weir_rules::args::raw_bytes(data).into_owned()
    };
    Ok((bytes, comment))
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

/// A log-format message, as long as it is plain text.
fn message(v: &str, kw: &str) -> Result<String, String> {
    if v.contains('%') {
        return Err(format!(
            "'{kw}' with a log-format expression is not supported by weir yet"
        ));
    }
    Ok(v.to_string())
}

fn expect(args: &[String]) -> Result<TcpExpect, String> {
    let mut e = TcpExpect::new(TcpMatch::String(Vec::new()));
    let mut it = args.iter();
    let (mut negate, mut found) = (false, false);
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
                e.error_status = status(
                    take("a status")?,
                    &["L7OKC", "L7RSP", "L7STS", "L6RSP", "L4CON"],
                )?
            }
            "tout-status" => {
                e.tout_status = status(take("a status")?, &["L7TOUT", "L6TOUT", "L4TOUT"])?
            }
            "on-success" => {
                e.on_success = Some(CheckInfo::Text(message(take("a message")?, "on-success")?))
            }
            "on-error" => {
                e.on_error = Some(CheckInfo::Text(message(take("a message")?, "on-error")?))
            }
            "status-code" => {
                let v = take("an expression")?;
                let n = v
                    .strip_prefix("int(")
                    .and_then(|r| r.strip_suffix(')'))
                    .and_then(|n| n.parse().ok())
                    .ok_or_else(|| {
                        format!("'status-code {v}' is not supported by weir yet (only 'int(<n>)')")
                    })?;
                e.status_code = Some(CheckCode::Fixed(n));
            }
            "!" => negate = true,
            kind => {
                let kind = kind.strip_prefix('!').map_or(kind, |k| {
                    negate = true;
                    k
                });
                let pat = take("a pattern")?;
                let re = |p: &str| {
                    weir_rules::matching::compile(weir_rules::matching::Method::Reg, p, false)
                };
                e.pattern = match kind {
                    "string" => TcpMatch::String(weir_rules::args::raw_bytes(pat).into_owned()),
                    "rstring" => TcpMatch::RString(re(pat)?),
                    "binary" => TcpMatch::Binary(hex(pat)?),
                    "rbinary" => TcpMatch::RBinary(re(pat)?),
                    k @ ("string-lf" | "binary-lf") => {
                        return Err(format!("'{k}' is not supported by weir yet"))
                    }
                    k => {
                        return Err(format!(
                            "expects 'string', 'rstring', 'binary' or 'rbinary' but got '{k}'"
                        ))
                    }
                };
                if found {
                    return Err(format!("a second pattern ('{kind}') after the first"));
                }
                found = true;
            }
        }
    }
    if !found {
        return Err("expects [!] string|rstring|binary|rbinary <pattern>".into());
    }
    e.negate = negate;
    Ok(e)
}
