//! Arguments of the HTTP keywords of a proxy: `option forwardfor`,
//! `errorfile`.

use crate::model::ForwardFor;
use std::net::IpAddr;
use std::sync::Arc;

/// Parses `<addr>[/<prefix>]` (a network for `except`).
pub(super) fn network(s: &str) -> Result<(IpAddr, u8), String> {
    let (a, len) = match s.split_once('/') {
        Some((a, l)) => (a, Some(l)),
        None => (s, None),
    };
    let ip: IpAddr = a
        .parse()
        .map_err(|_| format!("invalid network address '{s}'"))?;
    let max = if ip.is_ipv4() { 32 } else { 128 };
    let len = match len {
        None => max,
        Some(l) => {
            if let Ok(m) = l.parse::<std::net::Ipv4Addr>() {
                let bits = u32::from(m);
                if bits.leading_ones() + bits.trailing_zeros() != 32 {
                    return Err(format!("invalid netmask '{l}'"));
                }
                bits.leading_ones() as u8
            } else {
                l.parse::<u8>()
                    .ok()
                    .filter(|n| *n <= max)
                    .ok_or_else(|| format!("invalid prefix length '{l}'"))?
            }
        }
    };
    Ok((ip, len))
}

/// `option forwardfor [except <net>] [header <name>] [if-none]`.
pub(super) fn forwardfor(args: &[String]) -> Result<ForwardFor, String> {
    let mut ff = ForwardFor {
        except: None,
        header: "X-Forwarded-For".into(),
        if_none: false,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "except" => {
                let n = it.next().ok_or("'except' expects a network")?;
                ff.except = Some(network(n)?);
            }
            "header" => {
                let h = it.next().ok_or("'header' expects a header name")?;
                if h.is_empty() || !h.bytes().all(|b| b.is_ascii_graphic() && b != b':') {
                    return Err(format!("invalid header name '{h}'"));
                }
                ff.header = h.clone();
            }
            "if-none" => ff.if_none = true,
            o => {
                return Err(format!(
                    "unexpected '{o}' (expects 'except', 'header' or 'if-none')"
                ))
            }
        }
    }
    Ok(ff)
}

/// Status codes HAProxy lets `errorfile` replace.
pub const ERRORFILE_CODES: &[u16] = &[
    200, 400, 401, 403, 404, 405, 407, 408, 410, 413, 425, 429, 500, 501, 502, 503, 504,
];

/// `errorfile <code> <file>`: the file holds a whole HTTP response.
pub(super) fn errorfile(args: &[String]) -> Result<(u16, Arc<[u8]>), String> {
    let [code, file] = args else {
        return Err("expects <status_code> and <file>".into());
    };
    let code: u16 = code
        .parse()
        .ok()
        .filter(|c| ERRORFILE_CODES.contains(c))
        .ok_or_else(|| format!("status code '{code}' cannot be overridden"))?;
    let body = std::fs::read(file).map_err(|e| format!("error opening file '{file}' : {e}"))?;
    if body.len() > 16384 {
        return Err(format!(
            "file '{file}' is larger than a buffer ({} bytes)",
            body.len()
        ));
    }
    if !body.starts_with(b"HTTP/1.") || !body.windows(4).any(|w| w == b"\r\n\r\n") {
        return Err(format!(
            "file '{file}' is not a complete HTTP/1 response (status line, headers, empty line)"
        ));
    }
    Ok((code, body.into()))
}
