//! `ring` sections (manual §3.9: a buffer of log lines sent on to TCP
//! syslog servers) and `log-forward` sections (§3.10: syslog received
//! over UDP and TCP, relayed to `log` targets).

use super::State;
use crate::addr::{parse_bind_list, parse_server_addr};
use crate::diag::Loc;
use crate::model::{LogFormatKind, LogForward, Ring, RingServer};
use crate::units::{parse_duration, parse_size, parse_u32};

/// Opens `ring <name>` (false: refused).
pub(super) fn open_ring(st: &mut State<'_>, words: &[String], loc: &Loc) -> bool {
    let Some(name) = one_name(st, "ring", words, loc) else {
        return false;
    };
    if st.config.rings.iter().any(|r| r.name == name) {
        st.diags
            .alert(loc, format!("ring '{name}' has the same name as another"));
    }
    st.config.rings.push(Ring {
        name,
        loc: loc.clone(),
        format: LogFormatKind::Raw,
        maxlen: 1024,
        size: st.config.global.bufsize,
        timeout_connect: None,
        timeout_server: None,
        servers: Vec::new(),
    });
    true
}

/// Opens `log-forward <name>` (false: refused).
pub(super) fn open_forward(st: &mut State<'_>, words: &[String], loc: &Loc) -> bool {
    let Some(name) = one_name(st, "log-forward", words, loc) else {
        return false;
    };
    if st.config.log_forwards.iter().any(|r| r.name == name) {
        st.diags.alert(
            loc,
            format!("log-forward '{name}' has the same name as another"),
        );
    }
    st.config.log_forwards.push(LogForward {
        name,
        loc: loc.clone(),
        binds: Vec::new(),
        dgram_binds: Vec::new(),
        logs: Vec::new(),
        maxconn: 10,
        timeout_client: None,
        backlog: None,
    });
    true
}

fn one_name(st: &mut State<'_>, kw: &str, words: &[String], loc: &Loc) -> Option<String> {
    match words {
        [_, n] => Some(n.clone()),
        _ => {
            st.diags
                .alert(loc, format!("'{kw}' expects exactly one name"));
            None
        }
    }
}

/// One line of the current `ring` section.
pub(super) fn ring_line(st: &mut State<'_>, words: &[String], loc: &Loc) {
    let Some(ring) = st.config.rings.last_mut() else {
        return;
    };
    let kw = words.first().map_or("", String::as_str);
    let args = words.get(1..).unwrap_or_default();
    let one = || {
        args.first()
            .map(String::as_str)
            .ok_or_else(|| format!("'{kw}' expects an argument"))
    };
    let r: Result<(), String> = (|| {
        match kw {
            "description" => {}
            "format" => ring.format = super::log::format_kind(one()?)?,
            "maxlen" => ring.maxlen = parse_u32(one()?, "maxlen")? as usize,
            "size" => ring.size = usize::try_from(parse_size(one()?)?).unwrap_or(usize::MAX),
            "timeout" => {
                let (which, v) = match args {
                    [w, v] => (w.as_str(), parse_duration(v)?),
                    _ => return Err("'timeout' expects 'connect' or 'server' and a time".into()),
                };
                match which {
                    "connect" => ring.timeout_connect = Some(v),
                    "server" => ring.timeout_server = Some(v),
                    w => return Err(format!("'timeout {w}' is not a ring timeout (expects 'connect' or 'server')")),
                }
            }
            "server" => ring.servers.push(ring_server(args, loc)?),
            "backing-file" => return Err("'backing-file' is not supported by weir yet".into()),
            _ => {
                return Err(format!(
                    "unknown keyword '{kw}' in 'ring' section (expects 'description', 'format', 'maxlen', 'size', 'timeout' or 'server')"
                ))
            }
        }
        Ok(())
    })();
    if let Err(e) = r {
        st.diags.alert(loc, e);
    }
}

/// `server <name> <addr> [ssl …] [log-proto …]`: TLS options and the
/// framing; other server options change nothing here and are refused.
fn ring_server(args: &[String], loc: &Loc) -> Result<RingServer, String> {
    let (Some(name), Some(addr)) = (args.first(), args.get(1)) else {
        return Err("'server' expects <name> and <addr>[:<port>]".into());
    };
    let addr = parse_server_addr(addr, None).map_err(|e| format!("'server {name}' : {e}"))?;
    let mut tls = crate::tls::ServerTls::default();
    let mut octet_count = false;
    let opts = args.get(2..).unwrap_or_default();
    let mut i = 0;
    while let Some(w) = opts.get(i) {
        let arg = opts.get(i + 1).map(String::as_str);
        if w == "log-proto" {
            octet_count = match arg {
                Some("octet-count") => true,
                Some("legacy") => false,
                _ => {
                    return Err(format!(
                        "'server {name}' : 'log-proto' expects 'legacy' or 'octet-count'"
                    ))
                }
            };
            i += 2;
            continue;
        }
        match tls.apply(w, arg) {
            Some(r) => i += r.map_err(|e| format!("'server {name}' : {e}"))?,
            None => {
                return Err(format!(
                    "'server {name}' : '{w}' is not supported in a 'ring' section by weir (TLS options and 'log-proto' are)"
                ))
            }
        }
    }
    Ok(RingServer {
        name: name.clone(),
        addr,
        tls,
        octet_count,
        loc: loc.clone(),
    })
}

/// One line of the current `log-forward` section.
pub(super) fn forward_line(st: &mut State<'_>, words: &[String], loc: &Loc) {
    let kw = words.first().map_or("", String::as_str);
    let args = words.get(1..).unwrap_or_default();
    if kw == "bind" {
        match super::bind::bind(words, loc, &mut st.diags, false) {
            Ok(b) => {
                if let Some(fwd) = st.config.log_forwards.last_mut() {
                    fwd.binds.push(b);
                }
            }
            Err(es) => {
                for e in es {
                    st.diags.alert(loc, e);
                }
            }
        }
        return;
    }
    let global_logs = st.config.global.logs.clone();
    let Some(fwd) = st.config.log_forwards.last_mut() else {
        return;
    };
    let one = || {
        args.first()
            .map(String::as_str)
            .ok_or_else(|| format!("'{kw}' expects an argument"))
    };
    let r: Result<(), String> = (|| {
        match kw {
            "dgram-bind" => {
                let a = parse_bind_list(one()?).map_err(|e| format!("'dgram-bind' : {e}"))?;
                if args.len() > 1 {
                    return Err("'dgram-bind' : bind options are not supported by weir yet".into());
                }
                fwd.dgram_binds.extend(a.into_iter().map(|a| (a, loc.clone())));
            }
            "log" if args.first().is_some_and(|a| a == "global") => {
                fwd.logs.extend(global_logs);
            }
            "log" => fwd.logs.push(super::log::parse_log_target(args, loc)?),
            "maxconn" => fwd.maxconn = parse_u32(one()?, "maxconn")?,
            "backlog" => fwd.backlog = Some(parse_u32(one()?, "backlog")?),
            "timeout" => match args {
                [w, v] if w == "client" => fwd.timeout_client = Some(parse_duration(v)?),
                _ => return Err("'timeout' expects 'client' and a time in a 'log-forward' section".into()),
            },
            _ => {
                return Err(format!(
                    "unknown keyword '{kw}' in 'log-forward' section (expects 'bind', 'dgram-bind', 'log', 'maxconn', 'backlog' or 'timeout')"
                ))
            }
        }
        Ok(())
    })();
    if let Err(e) = r {
        st.diags.alert(loc, e);
    }
}

/// Every `log ring@<name>` names a `ring` section (HAProxy's words).
pub(super) fn check_rings(st: &mut State<'_>) {
    let c = &st.config;
    let targets = c
        .global
        .logs
        .iter()
        .chain(c.proxies.iter().flat_map(|p| &p.logs))
        .chain(c.log_forwards.iter().flat_map(|f| &f.logs));
    let missing: Vec<(Loc, String)> = targets
        .filter_map(|t| match &t.dest {
            crate::model::LogDest::Ring(n) if !c.rings.iter().any(|r| r.name == *n) => {
                Some((t.loc.clone(), n.clone()))
            }
            _ => None,
        })
        .collect();
    for (loc, n) in missing {
        st.diags
            .alert(&loc, format!("log server uses unknown ring named '{n}'."));
    }
}
