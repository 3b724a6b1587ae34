//! Addresses of `bind`, `server`, `log` and `stats socket`: IPv4, `[IPv6]`,
//! `*`, port ranges, `ipv4@`/`ipv6@`/`unix@`/`abns@`/`fd@` prefixes and paths.

use std::net::IpAddr;

/// A host part: any address, a literal IP or a name resolved at start-up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Host {
    Any,
    Ip(IpAddr),
    Name(String),
}

/// Which family a prefix forced (`ipv4@`, `ipv6@`), if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    Unspec,
    V4,
    V6,
}

/// One listening address of a `bind` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BindAddr {
    Inet {
        host: Host,
        family: Family,
        ports: (u16, u16),
    },
    Unix(String),
    Abns(String),
    Fd(i32),
}

/// How a server's port is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PortSpec {
    /// No port: the port the client connected to.
    Same,
    Fixed(u16),
    /// `+N`/`-N`: the client's destination port shifted by N.
    Offset(i32),
}

/// Where a server (or a log target) lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerAddr {
    Inet {
        host: Host,
        family: Family,
        port: PortSpec,
    },
    Unix(String),
    Abns(String),
}

fn split_prefix(text: &str) -> (Option<&str>, &str) {
    match text.find('@') {
        Some(i)
            if text[..i]
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') =>
        {
            (Some(&text[..i]), &text[i + 1..])
        }
        _ => (None, text),
    }
}

/// Splits `host:port` where host may be `[v6]`, a bare IPv6 (last colon is
/// the port), a name, `*` or empty. Returns (host text, port text or None).
fn split_host_port(text: &str) -> Result<(&str, Option<&str>), String> {
    if let Some(rest) = text.strip_prefix('[') {
        let end = rest
            .find(']')
            .ok_or_else(|| format!("missing ']' in address '{text}'"))?;
        let host = &rest[..end];
        let after = &rest[end + 1..];
        return match after.strip_prefix(':') {
            Some(p) => Ok((host, Some(p))),
            None if after.is_empty() => Ok((host, None)),
            None => Err(format!(
                "unexpected '{after}' after ']' in address '{text}'"
            )),
        };
    }
    match text.rfind(':') {
        Some(i) => Ok((&text[..i], Some(&text[i + 1..]))),
        None => Ok((text, None)),
    }
}

fn parse_host(h: &str, family: Family) -> Result<Host, String> {
    if h.is_empty() || h == "*" {
        return Ok(Host::Any);
    }
    match h.parse::<IpAddr>() {
        Ok(ip) => {
            match (family, ip) {
                (Family::V4, IpAddr::V6(_)) => return Err(format!("'{h}' is not an IPv4 address")),
                (Family::V6, IpAddr::V4(_)) => return Err(format!("'{h}' is not an IPv6 address")),
                _ => {}
            }
            Ok(Host::Ip(ip))
        }
        Err(_) => {
            let valid = h
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.' || c == '_');
            if valid && !h.contains(':') {
                Ok(Host::Name(h.to_string()))
            } else {
                Err(format!("invalid address: '{h}'"))
            }
        }
    }
}

fn parse_port(p: &str, text: &str) -> Result<u16, String> {
    match p.parse::<u32>() {
        Ok(n) if (1..=65535).contains(&n) => Ok(n as u16),
        Ok(n) => Err(format!("invalid port '{n}' in '{text}' (must be 1-65535)")),
        Err(_) => Err(format!("invalid port '{p}' in '{text}'")),
    }
}

fn family_of(prefix: Option<&str>) -> Family {
    match prefix {
        Some("ipv4") | Some("tcp4") => Family::V4,
        Some("ipv6") | Some("tcp6") => Family::V6,
        _ => Family::Unspec,
    }
}

/// Parses one `bind` address list (`:80,:81`, `1.2.3.4:8000-8010`, `unix@/s`).
pub fn parse_bind_list(text: &str) -> Result<Vec<BindAddr>, String> {
    if text.starts_with('/') {
        return Ok(vec![BindAddr::Unix(text.to_string())]);
    }
    text.split(',').map(parse_bind_one).collect()
}

fn parse_bind_one(text: &str) -> Result<BindAddr, String> {
    if text.starts_with('/') {
        return Ok(BindAddr::Unix(text.to_string()));
    }
    let (prefix, rest) = split_prefix(text);
    match prefix {
        Some("unix") => return Ok(BindAddr::Unix(rest.to_string())),
        Some("abns") => return Ok(BindAddr::Abns(rest.to_string())),
        Some("fd") => {
            return rest
                .parse::<i32>()
                .ok()
                .filter(|n| *n >= 0)
                .map(BindAddr::Fd)
                .ok_or_else(|| format!("invalid file descriptor in '{text}'"))
        }
        None | Some("ipv4") | Some("ipv6") | Some("tcp") | Some("tcp4") | Some("tcp6") => {}
        Some(other) => {
            return Err(format!(
                "address family '{other}@' is not supported by weir yet for 'bind' ('{text}')"
            ))
        }
    }
    let family = family_of(prefix);
    let (host, port) = split_host_port(rest)?;
    let port = port.ok_or_else(|| format!("missing port number in '{text}'"))?;
    let ports = match port.split_once('-') {
        Some((lo, hi)) => {
            let (lo, hi) = (parse_port(lo, text)?, parse_port(hi, text)?);
            if hi < lo {
                return Err(format!("invalid port range '{port}' in '{text}'"));
            }
            (lo, hi)
        }
        None => {
            let p = parse_port(port, text)?;
            (p, p)
        }
    };
    Ok(BindAddr::Inet {
        host: parse_host(host, family)?,
        family,
        ports,
    })
}

/// Expands `$NAME` and `${NAME}` in an address, as haproxy does in
/// server and bind addresses even outside double quotes (an unset
/// variable is empty).
pub fn expand_env(text: &str, var: &dyn Fn(&str) -> Option<String>) -> String {
    if !text.contains('$') {
        return text.to_string();
    }
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find('$') {
        out.push_str(rest.get(..i).unwrap_or_default());
        let after = rest.get(i + 1..).unwrap_or_default();
        let (name, used) = match after.strip_prefix('{') {
            Some(b) => match b.find('}') {
                Some(end) => (b.get(..end).unwrap_or_default(), end + 2),
                None => ("", 0),
            },
            None => {
                let n = after
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(after.len());
                (after.get(..n).unwrap_or_default(), n)
            }
        };
        if name.is_empty() {
            out.push('$');
            rest = after;
            continue;
        }
        out.push_str(&var(name).unwrap_or_default());
        rest = after.get(used..).unwrap_or_default();
    }
    out.push_str(rest);
    out
}

/// Parses a server address (`10.0.0.1:80`, `[::1]:80`, `name:80`, `:+1000`,
/// `unix@/s`). `default_port` fills in a missing port when given (logs use 514).
pub fn parse_server_addr(text: &str, default_port: Option<u16>) -> Result<ServerAddr, String> {
    if text.starts_with('/') {
        return Ok(ServerAddr::Unix(text.to_string()));
    }
    let (prefix, rest) = split_prefix(text);
    match prefix {
        Some("unix") => return Ok(ServerAddr::Unix(rest.to_string())),
        Some("abns") => return Ok(ServerAddr::Abns(rest.to_string())),
        None | Some("ipv4") | Some("ipv6") | Some("tcp") | Some("tcp4") | Some("tcp6")
        | Some("udp") => {}
        Some(other) => {
            return Err(format!(
                "address family '{other}@' is not supported by weir yet ('{text}')"
            ))
        }
    }
    let family = family_of(prefix);
    // A bare IPv6 address without brackets and without port.
    if !rest.starts_with('[') && rest.matches(':').count() > 1 && rest.parse::<IpAddr>().is_ok() {
        let port = default_port.map_or(PortSpec::Same, PortSpec::Fixed);
        return Ok(ServerAddr::Inet {
            host: parse_host(rest, family)?,
            family,
            port,
        });
    }
    let (host, port) = split_host_port(rest)?;
    // A server without an address takes the client's destination, as
    // `0.0.0.0` does (an address made of unset variables, in haproxy); a
    // log target without one is this host's, as haproxy takes `log :`.
    let host = if host.is_empty() { "0.0.0.0" } else { host };
    if host.is_empty() || host == "*" {
        return Err(format!("missing address in '{text}'"));
    }
    let port = match port {
        None | Some("") => default_port.map_or(PortSpec::Same, PortSpec::Fixed),
        // A server's port 0 is no port, as in haproxy.
        Some("0") if default_port.is_none() => PortSpec::Same,
        Some(p) if p.starts_with('+') || p.starts_with('-') => {
            let n: i32 = p
                .parse()
                .map_err(|_| format!("invalid port offset '{p}' in '{text}'"))?;
            if n.abs() > 65535 {
                return Err(format!("invalid port offset '{p}' in '{text}'"));
            }
            PortSpec::Offset(n)
        }
        Some(p) => PortSpec::Fixed(parse_port(p, text)?),
    };
    Ok(ServerAddr::Inet {
        host: parse_host(host, family)?,
        family,
        port,
    })
}

#[cfg(test)]
#[path = "addr_tests.rs"]
mod tests;
