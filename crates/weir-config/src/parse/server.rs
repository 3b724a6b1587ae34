//! `server` and `default-server` lines and their options (manual §5).

use crate::addr::{parse_server_addr, ServerAddr};
use crate::diag::{did_you_mean, Loc};
use crate::keywords::{self, Status};
use crate::model::{Server, ServerDefaults};
use crate::units::{parse_duration, parse_u32};

pub(super) fn option_error(table: &'static [keywords::Keyword], what: &str, word: &str) -> String {
    match keywords::find(table, word) {
        Some(k) if k.status == Status::Refused => {
            format!("'{what}' option '{word}' is not supported by weir yet")
        }
        _ => {
            let hint = did_you_mean(word, table.iter().map(|k| k.name))
                .map(|s| format!("; did you mean '{s}'?"))
                .unwrap_or_default();
            format!("unknown keyword '{word}' on '{what}' line{hint}")
        }
    }
}

/// Server options followed by one argument (skipped together on error).
const TAKES_ARG: &[&str] = &[
    "weight",
    "agent-addr",
    "agent-port",
    "agent-send",
    "agent-inter",
    "inter",
    "fastinter",
    "downinter",
    "slowstart",
    "rise",
    "fall",
    "port",
    "addr",
    "maxconn",
    "maxqueue",
    "pool-max-conn",
    "pool-low-conn",
    "pool-purge-delay",
    "id",
    "source",
    "on-marked-down",
    "on-marked-up",
    "minconn",
    "cookie",
    "track",
    "observe",
    "on-error",
    "error-limit",
    "init-addr",
    "resolvers",
    "resolve-prefer",
    "resolve-net",
    "resolve-opts",
    "sni",
    "alpn",
    "proto",
    "ws",
    "crt",
    "ca-file",
    "verify",
    "redir",
    "namespace",
    "socks4",
    "check-proto",
];

/// Applies `default-server`/`server` options to `d`. Errors are collected.
fn server_options(
    d: &mut ServerDefaults,
    id: &mut Option<u32>,
    opts: &[String],
    what: &str,
) -> Vec<String> {
    let mut errs = Vec::new();
    let mut i = 0;
    while i < opts.len() {
        let word = opts[i].as_str();
        let arg = opts.get(i + 1).map(String::as_str);
        let need = |name: &str| arg.ok_or_else(|| format!("'{name}' expects an argument"));
        let r: Result<usize, String> = (|| {
            Ok(match word {
                "check" => {
                    d.check = true;
                    1
                }
                "no-check" => {
                    d.check = false;
                    1
                }
                "backup" => {
                    d.backup = true;
                    1
                }
                "no-backup" => {
                    d.backup = false;
                    1
                }
                "disabled" => {
                    d.disabled = true;
                    1
                }
                "init-addr" => {
                    d.init_addr = need(word)?
                        .split(',')
                        .map(|m| match m {
                            "last" => Ok(crate::model::InitAddr::Last),
                            "libc" => Ok(crate::model::InitAddr::Libc),
                            "none" => Ok(crate::model::InitAddr::None),
                            ip => ip.parse().map(crate::model::InitAddr::Ip).map_err(|_| {
                                format!("'init-addr' : unknown method '{ip}' (expects 'last', 'libc', 'none' or an address)")
                            }),
                        })
                        .collect::<Result<_, _>>()?;
                    2
                }
                "enabled" => {
                    d.disabled = false;
                    1
                }
                "send-proxy" => {
                    d.send_proxy_v1 = true;
                    1
                }
                "send-proxy-v2" => {
                    d.send_proxy_v2 = true;
                    1
                }
                "send-proxy-v2-ssl" => {
                    d.send_proxy_v2 = true;
                    d.proxy_v2.ssl = true;
                    1
                }
                "send-proxy-v2-ssl-cn" => {
                    d.send_proxy_v2 = true;
                    d.proxy_v2.ssl = true;
                    d.proxy_v2.cert_cn = true;
                    1
                }
                "proxy-v2-options" => {
                    for o in need(word)?.split(',') {
                        let flag = match o {
                            "authority" => &mut d.proxy_v2.authority,
                            "unique-id" => &mut d.proxy_v2.unique_id,
                            "crc32c" => &mut d.proxy_v2.crc32c,
                            "ssl" => &mut d.proxy_v2.ssl,
                            "cert-cn" => &mut d.proxy_v2.cert_cn,
                            "ssl-cipher" => &mut d.proxy_v2.ssl_cipher,
                            "cert-sig" => &mut d.proxy_v2.cert_sig,
                            "cert-key" => &mut d.proxy_v2.cert_key,
                            _ => return Err(format!("'proxy-v2-options': unknown option '{o}'")),
                        };
                        *flag = true;
                    }
                    2
                }
                // Each clears the flags its positive form sets, and only
                // those (haproxy's), so what another word set may still
                // send a header.
                "no-send-proxy" => {
                    d.send_proxy_v1 = false;
                    1
                }
                "no-send-proxy-v2" => {
                    d.send_proxy_v2 = false;
                    1
                }
                "no-send-proxy-v2-ssl" => {
                    d.send_proxy_v2 = false;
                    d.proxy_v2.ssl = false;
                    1
                }
                "no-send-proxy-v2-ssl-cn" => {
                    d.send_proxy_v2 = false;
                    d.proxy_v2.ssl = false;
                    d.proxy_v2.cert_cn = false;
                    1
                }
                "tfo" | "no-tfo" => 1,
                "ws" => {
                    d.ws = match need(word)? {
                        "auto" => crate::model::WsMode::Auto,
                        "h1" => crate::model::WsMode::H1,
                        "h2" => crate::model::WsMode::H2,
                        w => return Err(format!("'ws' expects 'auto', 'h1' or 'h2', got '{w}'")),
                    };
                    2
                }
                "proto" | "check-proto" => {
                    let p = need(word)?;
                    if word == "proto" && p == "fcgi" {
                        (d.h2, d.fcgi) = (false, true);
                        return Ok(2);
                    }
                    let h2 = match p {
                        "h2" => true,
                        "h1" => false,
                        p => {
                            let fcgi = if word == "proto" {
                                ", 'h2' or 'fcgi'"
                            } else {
                                " or 'h2'"
                            };
                            return Err(format!(
                                "'{word}' expects 'h1'{fcgi} on a server line, got '{p}'"
                            ));
                        }
                    };
                    match word {
                        "proto" => (d.h2, d.fcgi) = (h2, false),
                        _ => d.check_h2 = Some(h2),
                    }
                    2
                }
                "weight" => {
                    let w = parse_u32(need(word)?, word)?;
                    if w > 256 {
                        return Err(format!(
                            "weight of server must be between 0 and 256, got {w}"
                        ));
                    }
                    d.weight = w;
                    2
                }
                "inter" | "fastinter" | "downinter" | "slowstart" => {
                    let t = parse_duration(need(word)?)?;
                    if t.is_zero() && word != "slowstart" {
                        return Err(format!("'{word}' must be greater than 0"));
                    }
                    match word {
                        "inter" => d.inter = t,
                        "fastinter" => d.fastinter = Some(t),
                        "downinter" => d.downinter = Some(t),
                        _ => d.slowstart = Some(t),
                    }
                    2
                }
                "rise" | "fall" => {
                    let n = parse_u32(need(word)?, word)?;
                    if n == 0 {
                        return Err(format!("'{word}' must be greater than 0"));
                    }
                    if word == "rise" {
                        d.rise = n;
                    } else {
                        d.fall = n;
                    }
                    2
                }
                "port" => {
                    let p = parse_u32(need(word)?, word)?;
                    if !(1..=65535).contains(&p) {
                        return Err(format!("invalid check port {p}"));
                    }
                    d.check_port = Some(p as u16);
                    2
                }
                "addr" => {
                    d.check_addr = Some(need(word)?.to_string());
                    2
                }
                "resolvers" => {
                    d.resolve.resolvers = Some(need(word)?.to_string());
                    2
                }
                "resolve-prefer" => {
                    d.resolve.prefer_v4 = match need(word)? {
                        "ipv4" => true,
                        "ipv6" => false,
                        w => {
                            return Err(format!(
                                "'resolve-prefer' expects 'ipv4' or 'ipv6', got '{w}'"
                            ))
                        }
                    };
                    2
                }
                "resolve-net" => {
                    let mut nets = Vec::new();
                    for n in need(word)?.split(',') {
                        nets.push(
                            parse_net(n)
                                .ok_or_else(|| format!("'resolve-net' : invalid network '{n}'"))?,
                        );
                    }
                    d.resolve.nets = nets;
                    2
                }
                "resolve-opts" => {
                    for o in need(word)?.split(',') {
                        match o {
                            "allow-dup-ip" => d.resolve.allow_dup_ip = true,
                            "ignore-weight" => d.resolve.ignore_weight = true,
                            "prevent-dup-ip" => d.resolve.prevent_dup_ip = true,
                            _ => return Err(format!("'resolve-opts' : unknown option '{o}'")),
                        }
                    }
                    2
                }
                "observe" => {
                    d.observe.layer7 = Some(match need(word)? {
                        "layer4" => false,
                        "layer7" => true,
                        w => {
                            return Err(format!(
                                "'observe' expects one of 'none', 'layer4', 'layer7' but got '{w}'"
                            ))
                        }
                    });
                    2
                }
                "error-limit" => {
                    let n = parse_u32(need(word)?, word)?;
                    if n == 0 {
                        return Err("'error-limit' expects a positive number".into());
                    }
                    d.observe.limit = n;
                    2
                }
                "on-error" => {
                    d.observe.action = match need(word)? {
                        "fastinter" => crate::model::OnError::FastInter,
                        "fail-check" => crate::model::OnError::FailCheck,
                        "sudden-death" => crate::model::OnError::SuddenDeath,
                        "mark-down" => crate::model::OnError::MarkDown,
                        w => return Err(format!("'on-error' expects one of 'fastinter', 'fail-check', 'sudden-death' or 'mark-down' but got '{w}'")),
                    };
                    2
                }
                "check-send-proxy" => {
                    d.check_send_proxy = true;
                    1
                }
                "check-via-socks4" => {
                    d.check_via_socks4 = true;
                    1
                }
                "socks4" => {
                    let v = need(word)?;
                    let sa = v.parse::<std::net::SocketAddr>().map_err(|_| match v
                        .parse::<std::net::IpAddr>()
                    {
                        Ok(_) => format!("'socks4 {v}' : missing port specification in '{v}'."),
                        Err(_) => format!("'socks4 {v}' : expects <ip>:<port>"),
                    })?;
                    d.socks4 = Some(sa);
                    2
                }
                "agent-check" | "no-agent-check" => {
                    d.agent.enabled = word == "agent-check";
                    1
                }
                "agent-addr" => {
                    d.agent.addr = Some(need(word)?.to_string());
                    2
                }
                "agent-port" => {
                    let p = parse_u32(need(word)?, word)?;
                    if !(1..=65535).contains(&p) {
                        return Err(format!("invalid agent port {p}"));
                    }
                    d.agent.port = Some(p as u16);
                    2
                }
                "agent-send" => {
                    d.agent.send = need(word)?.to_string();
                    2
                }
                "agent-inter" => {
                    d.agent.inter = Some(parse_duration(need(word)?)?);
                    2
                }
                "maxconn" => {
                    d.maxconn = Some(parse_u32(need(word)?, word)?).filter(|n| *n > 0);
                    2
                }
                "maxqueue" => {
                    d.maxqueue = Some(parse_u32(need(word)?, word)?).filter(|n| *n > 0);
                    2
                }
                "redir" => {
                    d.redir = Some(need(word)?.to_string());
                    2
                }
                "minconn" => {
                    d.minconn = Some(parse_u32(need(word)?, word)?).filter(|n| *n > 0);
                    2
                }
                "pool-max-conn" => {
                    let v = need(word)?;
                    d.pool_max_conn = match v.parse::<i64>() {
                        Ok(-1) => None,
                        Ok(n) if n >= 0 => Some(n as usize),
                        _ => {
                            return Err(format!(
                                "'pool-max-conn' expects -1 or a positive number, got '{v}'"
                            ))
                        }
                    };
                    2
                }
                "pool-low-conn" => {
                    // Changes nothing in weir (see the keyword table).
                    parse_u32(need(word)?, word)?;
                    2
                }
                "pool-purge-delay" => {
                    let t = parse_duration(need(word)?)?;
                    d.pool_purge_delay = (!t.is_zero()).then_some(t);
                    2
                }
                "id" => {
                    let n = parse_u32(need(word)?, word)?;
                    if n == 0 {
                        return Err("server id must be greater than 0".into());
                    }
                    *id = Some(n);
                    2
                }
                "source" => {
                    let a = parse_server_addr(need(word)?, None)?;
                    if opts.get(i + 2).map(String::as_str) == Some("usesrc") {
                        return Err(
                            "'source ... usesrc' (transparent source) is not supported by weir yet"
                                .into(),
                        );
                    }
                    d.source = Some(a);
                    2
                }
                "namespace" => {
                    d.namespace = Some(netns(need(word)?)?);
                    2
                }
                "on-marked-down" => {
                    let a = need(word)?;
                    if a != "shutdown-sessions" {
                        return Err(format!("'on-marked-down {a}' is not supported by weir yet (only 'shutdown-sessions')"));
                    }
                    d.shutdown_on_down = true;
                    2
                }
                "on-marked-up" => {
                    let a = need(word)?;
                    if a != "shutdown-backup-sessions" {
                        return Err(format!(
                            "'on-marked-up' expects 'shutdown-backup-sessions', got '{a}'"
                        ));
                    }
                    d.shutdown_backup_on_up = true;
                    2
                }
                _ => match d.tls.apply(word, arg) {
                    // A server line has no warnings: a suite it names that
                    // weir lacks is refused there.
                    Some(r) => match crate::tls::unoffered(word, arg.unwrap_or("")).pop() {
                        Some(w) => return Err(w),
                        None => r?,
                    },
                    None => return Err(option_error(keywords::SERVER, what, word)),
                },
            })
        })();
        match r {
            Ok(n) => i += n,
            Err(e) => {
                errs.push(e);
                i += if TAKES_ARG.contains(&word) { 2 } else { 1 };
            }
        }
    }
    errs
}

/// `<ip>/<bits>` or `<ip>/<netmask>`.
fn parse_net(text: &str) -> Option<(std::net::IpAddr, u8)> {
    let (ip, bits) = text.split_once('/')?;
    let ip: std::net::IpAddr = ip.parse().ok()?;
    let max = if ip.is_ipv4() { 32 } else { 128 };
    let bits = match bits.parse::<u8>() {
        Ok(b) if b <= max => b,
        _ => match bits.parse::<std::net::Ipv4Addr>() {
            Ok(m) if ip.is_ipv4() => u32::from(m).count_ones() as u8,
            _ => return None,
        },
    };
    Some((ip, bits))
}

/// `default-server <options>`.
pub(super) fn default_server(d: &mut ServerDefaults, opts: &[String]) -> Vec<String> {
    let mut id = None;
    let mut errs = server_options(d, &mut id, opts, "default-server");
    if id.is_some() {
        errs.push("'id' is not permitted on 'default-server'".into());
    }
    errs
}

/// An address of its own in a backend without servers (`dispatch`,
/// `option transparent`): a server named `<NOSRV>` in logs, with no
/// checks, whatever `default-server` says.
pub(super) fn address_of_its_own(
    default_server: &ServerDefaults,
    addr: &str,
    loc: &Loc,
) -> Result<Server, Vec<String>> {
    let full = ["server", "<NOSRV>", addr].map(String::from);
    let mut s = server(default_server, &full, loc)?;
    s.dispatch = true;
    s.check = false;
    Ok(s)
}

/// `server <name> <addr> <options>`, starting from the proxy's defaults.
pub(super) fn server(
    defaults: &ServerDefaults,
    words: &[String],
    loc: &Loc,
) -> Result<Server, Vec<String>> {
    let Some(name) = words.get(1) else {
        return Err(vec![
            "'server' expects <name> and <addr>[:<port>] as arguments".into(),
        ]);
    };
    let Some(addr_text) = words.get(2) else {
        return Err(vec![format!(
            "'server {name}' : missing address ('server' expects <name> and <addr>[:<port>])"
        )]);
    };
    let mut errs = Vec::new();
    let addr = match parse_server_addr(addr_text, None) {
        Ok(a) => a,
        Err(e) => {
            errs.push(format!("'server {name}' : {e}"));
            ServerAddr::Unix(String::new())
        }
    };
    let mut d = defaults.clone();
    let mut id = None;
    // `cookie <value>` belongs to one server only.
    let mut cookie = None;
    let mut track = None;
    let mut opts: Vec<String> = Vec::new();
    let mut it = words[3..].iter();
    while let Some(w) = it.next() {
        if w == "cookie" {
            match it.next() {
                Some(v) => cookie = Some(v.clone()),
                None => errs.push(format!("'server {name}' : 'cookie' expects a value")),
            }
        } else if w == "track" {
            match it.next() {
                Some(v) => {
                    track = Some(match v.split_once('/') {
                        Some((b, s)) => (Some(b.to_string()), s.to_string()),
                        None => (None, v.clone()),
                    })
                }
                None => errs.push(format!(
                    "'server {name}' : 'track' expects [<proxy>/]<server> as argument"
                )),
            }
        } else {
            opts.push(w.clone());
        }
    }
    errs.extend(
        server_options(&mut d, &mut id, &opts, "server")
            .into_iter()
            .map(|e| format!("'server {name}' : {e}")),
    );
    if d.agent.enabled && d.agent.port.is_none() {
        errs.push(format!(
            "'server {name}' : server {name} does not have agent port. Agent check has been disabled."
        ));
    }
    if !errs.is_empty() {
        return Err(errs);
    }
    let send_proxy = d.send_proxy();
    // A `minconn` above `maxconn` (or without one) raises it, as haproxy
    // does: `minconn` alone is a fixed limit.
    let maxconn = match (d.maxconn, d.minconn) {
        (m, Some(n)) if m.is_none_or(|m| n > m) => Some(n),
        (m, _) => m,
    };
    Ok(Server {
        dispatch: false,
        name: name.clone(),
        addr,
        loc: loc.clone(),
        id,
        uid: 0,
        weight: d.weight,
        check: d.check,
        inter: d.inter,
        fastinter: d.fastinter,
        downinter: d.downinter,
        rise: d.rise,
        fall: d.fall,
        check_port: d.check_port,
        check_addr: d.check_addr,
        backup: d.backup,
        disabled: d.disabled,
        init_addr: d.init_addr.clone(),
        maxconn,
        minconn: d.minconn,
        maxqueue: d.maxqueue,
        send_proxy,
        redir: d.redir.clone(),
        proxy_v2: d.proxy_v2,
        h2: d.h2,
        fcgi: d.fcgi,
        check_h2: d.check_h2,
        ws: d.ws,
        source: d.source,
        namespace: d.namespace,
        shutdown_on_down: d.shutdown_on_down,
        shutdown_backup_on_up: d.shutdown_backup_on_up,
        slowstart: d.slowstart,
        pool_max_conn: d.pool_max_conn,
        pool_purge_delay: d.pool_purge_delay,
        cookie,
        track,
        agent: d.agent,
        check_send_proxy: d.check_send_proxy,
        check_via_socks4: d.check_via_socks4,
        socks4: d.socks4,
        resolve: d.resolve,
        observe: d.observe,
        template: false,
        tls: d.tls,
    })
}

/// The server options `add server` takes (management guide, "add
/// server"); a server keyword not listed is refused there.
const DYNAMIC_OPTIONS: &[&str] = &[
    "agent-addr",
    "agent-check",
    "agent-inter",
    "agent-port",
    "agent-send",
    "allow-0rtt",
    "alpn",
    "addr",
    "backup",
    "ca-file",
    "check",
    "check-alpn",
    "check-proto",
    "check-send-proxy",
    "check-sni",
    "check-ssl",
    "check-via-socks4",
    "ciphers",
    "ciphersuites",
    "crl-file",
    "crt",
    "disabled",
    "downinter",
    "enabled",
    "error-limit",
    "fall",
    "fastinter",
    "force-sslv3",
    "force-tlsv10",
    "force-tlsv11",
    "force-tlsv12",
    "force-tlsv13",
    "id",
    "inter",
    "maxconn",
    "maxqueue",
    "minconn",
    "no-ssl-reuse",
    "no-sslv3",
    "no-tlsv10",
    "no-tlsv11",
    "no-tlsv12",
    "no-tlsv13",
    "no-tls-tickets",
    "npn",
    "observe",
    "on-error",
    "on-marked-down",
    "on-marked-up",
    "pool-low-conn",
    "pool-max-conn",
    "pool-purge-delay",
    "port",
    "proto",
    "proxy-v2-options",
    "rise",
    "send-proxy",
    "send-proxy-v2",
    "send-proxy-v2-ssl",
    "send-proxy-v2-ssl-cn",
    "slowstart",
    "sni",
    "socks4",
    "source",
    "ssl",
    "ssl-max-ver",
    "ssl-min-ver",
    "tfo",
    "tls-tickets",
    "track",
    "usesrc",
    "verify",
    "verifyhost",
    "weight",
    "ws",
];

/// The options of [`DYNAMIC_OPTIONS`] that take a value and are not in
/// [`TAKES_ARG`] (TLS and agent settings, read elsewhere).
const DYNAMIC_VALUED: &[&str] = &[
    "agent-addr",
    "agent-inter",
    "agent-port",
    "agent-send",
    "check-alpn",
    "check-sni",
    "ciphers",
    "ciphersuites",
    "crl-file",
    "npn",
    "ssl-max-ver",
    "ssl-min-ver",
    "usesrc",
    "verifyhost",
];

/// `add server <backend>/<name> <addr> [options]` (runtime API): a server
/// that takes nothing from `default-server`; the error is the one line the
/// command answers, worded as haproxy's.
pub fn dynamic_server(name: &str, args: &[String]) -> Result<Server, String> {
    let Some(addr) = args.first() else {
        return Err("'server' expects <name> and <addr>[:<port>] as arguments.".into());
    };
    let mut opts = args.iter().skip(1);
    while let Some(w) = opts.next() {
        let known = keywords::find(keywords::SERVER, w).is_some();
        if DYNAMIC_OPTIONS.contains(&w.as_str()) {
            if TAKES_ARG.contains(&w.as_str()) || DYNAMIC_VALUED.contains(&w.as_str()) {
                opts.next();
            }
        } else if known {
            return Err(format!("'{w}' option is not accepted for dynamic server"));
        } else {
            return Err(format!("unknown keyword '{w}'."));
        }
    }
    // A name is never resolved here ("init-addr none"), and haproxy takes
    // an address whose port does not read as one as a bare name.
    let (text, name_only) = match parse_server_addr(addr, None) {
        Ok(_) => (addr.clone(), None),
        Err(_) => {
            let host = addr.rsplit_once(':').map_or(addr.as_str(), |(h, _)| h);
            ("0.0.0.0".to_string(), Some(host.to_string()))
        }
    };
    let mut words = vec!["server".to_string(), name.to_string(), text];
    words.extend(args.iter().skip(1).cloned());
    let loc = Loc {
        file: "cli".into(),
        line: 0,
    };
    let mut s = server(&ServerDefaults::default(), &words, &loc).map_err(|es| {
        let prefix = format!("'server {name}' : ");
        let e = es.join("; ");
        let e = e.strip_prefix(&prefix).unwrap_or(&e);
        format!("{e}.")
    })?;
    s.init_addr = vec![crate::model::InitAddr::None];
    if let Some(host) = name_only {
        s.addr = ServerAddr::Inet {
            host: crate::addr::Host::Name(host),
            family: crate::addr::Family::Unspec,
            port: crate::addr::PortSpec::Same,
        };
    }
    Ok(s)
}

#[cfg(test)]
#[path = "server_tests.rs"]
mod tests;

/// A `namespace` name: one of `ip netns`'s (`*`, the PROXY header's, is
/// not taken).
pub(super) fn netns(name: &str) -> Result<String, String> {
    if name == "*" {
        return Err(
            "'namespace *' (the namespace a PROXY header names) is not supported by weir yet"
                .into(),
        );
    }
    if name.is_empty() || name.contains('/') || name == "." || name == ".." {
        return Err(format!("'namespace' : invalid name '{name}'"));
    }
    Ok(name.to_string())
}
