//! `resolvers` sections (manual §5.3.2): name servers, retries, timeouts
//! and hold periods.

use super::State;
use crate::diag::Loc;
use crate::model::{ResolverHold, Resolvers};
use crate::units::{parse_duration, parse_u32};

/// Opens `resolvers <name>`.
pub(super) fn open(st: &mut State<'_>, words: &[String], loc: &Loc) -> bool {
    match words.get(1) {
        Some(n) if words.len() == 2 => {
            if st.config.resolvers.iter().any(|r| r.name == *n) {
                st.diags.alert(
                    loc,
                    format!("resolvers section '{n}' has the same name as another"),
                );
            }
            st.config.resolvers.push(Resolvers {
                name: n.clone(),
                loc: loc.clone(),
                nameservers: Vec::new(),
                tcp: Vec::new(),
                payload_size: 512,
                retries: 3,
                resolve: std::time::Duration::from_secs(1),
                retry: std::time::Duration::from_secs(1),
                hold: ResolverHold::default(),
            });
            true
        }
        _ => {
            st.diags.alert(loc, "'resolvers' expects exactly one name");
            false
        }
    }
}

/// One line of the current `resolvers` section.
pub(super) fn line(st: &mut State<'_>, words: &[String], loc: &Loc) {
    let Some(sec) = st.config.resolvers.last_mut() else {
        return;
    };
    let kw = words.first().map_or("", String::as_str);
    let args = words.get(1..).unwrap_or_default();
    if let Err(e) = apply(sec, kw, args) {
        st.diags.alert(loc, format!("'{kw}' : {e}"));
    }
}

fn apply(sec: &mut Resolvers, kw: &str, args: &[String]) -> Result<(), String> {
    let one = || match args {
        [v] => Ok(v.as_str()),
        _ => Err("expects one value".to_string()),
    };
    match kw {
        "nameserver" => {
            let [id, addr] = args else {
                return Err("expects <id> and <ip>:<port>".into());
            };
            let tcp = addr.starts_with("tcp@");
            let a = addr.strip_prefix("udp@").unwrap_or(addr);
            let a = a.strip_prefix("tcp@").unwrap_or(a);
            let sa = match a.parse() {
                Ok(sa) => sa,
                Err(_) => a
                    .parse::<std::net::IpAddr>()
                    .map(|ip| std::net::SocketAddr::new(ip, 53))
                    .map_err(|_| format!("'{addr}' is not an address and port"))?,
            };
            if sec.nameservers.iter().any(|(n, _)| n == id) {
                return Err(format!("'{id}' is declared twice"));
            }
            sec.nameservers.push((id.clone(), sa));
            if tcp {
                sec.tcp.push(sa);
            }
        }
        "parse-resolv-conf" => {
            let text = std::fs::read_to_string("/etc/resolv.conf")
                .map_err(|e| format!("cannot read /etc/resolv.conf: {e}"))?;
            for (i, ip) in resolv_conf(&text).into_iter().enumerate() {
                sec.nameservers.push((
                    format!("resolv.conf-{}", i + 1),
                    std::net::SocketAddr::new(ip, 53),
                ));
            }
        }
        "accepted_payload_size" => {
            let n = parse_u32(one()?, kw)?;
            if !(512..=65535).contains(&n) {
                return Err(format!("must be between 512 and 65535, got {n}"));
            }
            sec.payload_size = n as u16;
        }
        "resolve_retries" => sec.retries = parse_u32(one()?, kw)?.max(1),
        "timeout" => match args {
            [w, v] if w == "resolve" => sec.resolve = nonzero(v)?,
            [w, v] if w == "retry" => sec.retry = nonzero(v)?,
            _ => return Err("expects 'resolve' or 'retry' and a time".into()),
        },
        "hold" => {
            let [what, v] = args else {
                return Err("expects <status> <period>".into());
            };
            let t = parse_duration(v)?;
            let h = &mut sec.hold;
            match what.as_str() {
                "valid" => h.valid = t,
                "nx" => h.nx = t,
                "other" => h.other = t,
                "refused" => h.refused = t,
                "timeout" => h.timeout = t,
                "obsolete" => h.obsolete = t,
                w => {
                    return Err(format!(
                    "unknown status '{w}' (expects valid, nx, other, refused, timeout or obsolete)"
                ))
                }
            }
        }
        _ => return Err(format!("unknown keyword '{kw}' in 'resolvers' section")),
    }
    Ok(())
}

fn nonzero(v: &str) -> Result<std::time::Duration, String> {
    let t = parse_duration(v)?;
    if t.is_zero() {
        return Err("must be greater than 0".into());
    }
    Ok(t)
}

/// The `nameserver` addresses of a `resolv.conf`.
pub(crate) fn resolv_conf(text: &str) -> Vec<std::net::IpAddr> {
    text.lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            (w.next() == Some("nameserver")).then(|| w.next()?.parse().ok())?
        })
        .collect()
}

#[cfg(test)]
#[path = "resolvers_tests.rs"]
mod tests;
