//! Fetches on the client's first bytes, for `tcp-request content` rules
//! with `tcp-request inspect-delay` (pure): `req.len`, `req.payload`,
//! `req.payload_lv`, `req.proto_http`, `wait_end`, and the TLS
//! ClientHello's `req.ssl_hello_type`, `req.ssl_ver`, `req.ssl_sni`,
//! `req.ssl_alpn`, `req.ssl_ec_ext`, `req.ssl_st_ext`, and the RDP
//! connection request's `req.rdp_cookie`, `req.rdp_cookie_cnt`. A fetch that could
//! answer otherwise with more bytes marks it ([`Ctx::more`]), so the rule
//! waits for them until the payload is final.

use crate::sample::{Ctx, Sample};

/// The payload fetches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PayloadFetch {
    Len,
    /// `req.payload(<offset>,<length>)`; length 0: to the end.
    Payload {
        off: usize,
        len: usize,
    },
    /// `req.payload_lv(<offset1>,<length>[,<offset2>])`: `rel` when
    /// `offset2` is relative to the end of the length field.
    PayloadLv {
        off: usize,
        len: usize,
        off2: Option<i64>,
        rel: bool,
    },
    ProtoHttp,
    WaitEnd,
    SslHelloType,
    SslVer,
    SslSni,
    SslAlpn,
    SslEcExt,
    SslStExt,
    /// `req.rdp_cookie([<name>])`: the value of the RDP cookie (of that
    /// name, case-insensitive).
    RdpCookie(Option<String>),
    /// `req.rdp_cookie_cnt([<name>])`: 1 when there is one, else 0.
    RdpCookieCnt(Option<String>),
}

/// The payload fetch `name(a)`; `None` for another name.
pub fn parse(name: &str, a: &[String]) -> Option<Result<PayloadFetch, String>> {
    let num = |i: usize| -> Result<usize, String> {
        a.get(i).and_then(|v| v.parse().ok()).ok_or_else(|| {
            format!(
                "fetch method '{name}' expects a non-negative integer at argument {}",
                i + 1
            )
        })
    };
    Some(Ok(match name {
        "req.len" | "req_len" => PayloadFetch::Len,
        "req.payload" | "payload" => match (num(0), num(1)) {
            (Ok(off), Ok(len)) => PayloadFetch::Payload { off, len },
            (Err(e), _) | (_, Err(e)) => return Some(Err(e)),
        },
        "req.payload_lv" | "payload_lv" => {
            let (off, len) = match (num(0), num(1)) {
                (Ok(o), Ok(l)) if (1..=4).contains(&l) => (o, l),
                (Ok(_), Ok(_)) => {
                    return Some(Err(format!(
                        "fetch method '{name}': the length field is 1 to 4 bytes"
                    )))
                }
                (Err(e), _) | (_, Err(e)) => return Some(Err(e)),
            };
            let (off2, rel) = match a.get(2) {
                None => (None, false),
                Some(v) => match v.parse::<i64>() {
                    Ok(n) => (Some(n), v.starts_with(['+', '-'])),
                    Err(_) => {
                        return Some(Err(format!("fetch method '{name}': invalid offset '{v}'")))
                    }
                },
            };
            PayloadFetch::PayloadLv {
                off,
                len,
                off2,
                rel,
            }
        }
        "req.proto_http" | "req_proto_http" => PayloadFetch::ProtoHttp,
        "wait_end" => PayloadFetch::WaitEnd,
        "req.ssl_hello_type" | "req_ssl_hello_type" => PayloadFetch::SslHelloType,
        "req.ssl_ver" | "req_ssl_ver" => PayloadFetch::SslVer,
        "req.ssl_sni" | "req_ssl_sni" => PayloadFetch::SslSni,
        "req.ssl_alpn" => PayloadFetch::SslAlpn,
        "req.ssl_ec_ext" => PayloadFetch::SslEcExt,
        "req.ssl_st_ext" => PayloadFetch::SslStExt,
        "req.rdp_cookie" | "rdp_cookie" => PayloadFetch::RdpCookie(a.first().cloned()),
        "req.rdp_cookie_cnt" | "rdp_cookie_cnt" => PayloadFetch::RdpCookieCnt(a.first().cloned()),
        _ => return None,
    }))
}

/// `req.len` on a parsed HTTP request: the size haproxy's internal
/// message takes (what its users' thresholds were measured against): a
/// 20-byte start-line record with the method, URI and version, each
/// header's name and value (as the rules see them), one byte closing the headers, and the body
/// bytes buffered.
fn http_len(ctx: &dyn Ctx) -> i64 {
    // `version()` is "1.1": the record holds "HTTP/1.1".
    let line = 20 + ctx.method().len() + ctx.uri().len() + 5 + ctx.version().len();
    let heads: usize = crate::hdrfetch::seen(ctx.req_headers())
        .iter()
        .map(|(n, v)| n.len() + v.len())
        .sum();
    let body = ctx.body().map_or(0, <[u8]>::len);
    (line + heads + 1 + body) as i64
}

/// The server's-side fetch `name(a)` (`res.len`, `res.payload`,
/// `res.payload_lv`), for `tcp-response content` rules; `None` for
/// another name.
pub fn parse_res(name: &str, a: &[String]) -> Option<Result<PayloadFetch, String>> {
    let rest = name.strip_prefix("res.")?;
    if !matches!(rest, "len" | "payload" | "payload_lv") {
        return None;
    }
    parse(&format!("req.{rest}"), a)
}

/// What a server's-side fetch of `k` gives now.
pub fn fetch_res(ctx: &dyn Ctx, k: &PayloadFetch) -> Option<Sample> {
    let (data, fin) = ctx.res_payload()?;
    fetch_on(ctx, k, data, fin)
}

/// What a fetch of `k` gives now.
pub fn fetch(ctx: &dyn Ctx, k: &PayloadFetch) -> Option<Sample> {
    if *k == PayloadFetch::WaitEnd {
        // `tcp-response content` rules wait on the server's bytes.
        if let Some((data, fin)) = ctx.res_payload() {
            return fetch_on(ctx, k, data, fin);
        }
    }
    if *k == PayloadFetch::ProtoHttp && !ctx.method().is_empty() {
        // In HTTP mode the request was parsed as HTTP already.
        return Some(Sample::Bool(true));
    }
    if !ctx.method().is_empty() && ctx.payload().is_none() {
        // A parsed HTTP message: the rules run once on it, so the wait
        // is over.
        match k {
            PayloadFetch::Len => return Some(Sample::Int(http_len(ctx))),
            PayloadFetch::WaitEnd => return Some(Sample::Bool(true)),
            _ => {}
        }
    }
    let (data, fin) = ctx.payload()?;
    fetch_on(ctx, k, data, fin)
}

/// A fetch of `k` on `data` (final or not).
fn fetch_on(ctx: &dyn Ctx, k: &PayloadFetch, data: &[u8], fin: bool) -> Option<Sample> {
    // More bytes could change the answer: the rule waits for them.
    let wait = || {
        if !fin {
            if let Some(m) = ctx.more() {
                m.store(true, std::sync::atomic::Ordering::Relaxed);
            }
        }
        None
    };
    match k {
        PayloadFetch::Len => {
            if !fin {
                if let Some(m) = ctx.more() {
                    m.store(true, std::sync::atomic::Ordering::Relaxed);
                }
            }
            Some(Sample::Int(data.len() as i64))
        }
        PayloadFetch::Payload { off, len } => {
            let end = if *len == 0 {
                data.len().max(*off)
            } else {
                off + len
            };
            match data.get(*off..end) {
                Some(b) if *len != 0 || fin => Some(Sample::Bin(b.to_vec())),
                Some(b) => {
                    let _ = wait();
                    Some(Sample::Bin(b.to_vec()))
                }
                None => wait(),
            }
        }
        PayloadFetch::PayloadLv {
            off,
            len,
            off2,
            rel,
        } => {
            let Some(field) = data.get(*off..off + len) else {
                return wait();
            };
            let n = field.iter().fold(0usize, |n, &b| (n << 8) | usize::from(b));
            let start = match (off2, rel) {
                (None, _) => Some(off + len),
                (Some(o), true) => usize::try_from((off + len) as i64 + o).ok(),
                (Some(o), false) => usize::try_from(*o).ok(),
            }?;
            match data.get(start..start + n) {
                Some(b) => Some(Sample::Bin(b.to_vec())),
                None => wait(),
            }
        }
        PayloadFetch::ProtoHttp => match looks_http(data) {
            Some(b) => Some(Sample::Bool(b)),
            None if fin => Some(Sample::Bool(false)),
            None => wait(),
        },
        PayloadFetch::WaitEnd => {
            if fin {
                Some(Sample::Bool(true))
            } else {
                wait()
            }
        }
        PayloadFetch::RdpCookie(name) => match rdp_cookie(data, name.as_deref()) {
            Rdp::Short => wait(),
            Rdp::None => None,
            Rdp::Found(v) => Some(Sample::Str(v.to_vec())),
        },
        PayloadFetch::RdpCookieCnt(name) => match rdp_cookie(data, name.as_deref()) {
            Rdp::Short => wait(),
            Rdp::None => Some(Sample::Int(0)),
            Rdp::Found(_) => Some(Sample::Int(1)),
        },
        _ => match hello(data) {
            Hello::Short => wait(),
            Hello::NotTls => None,
            Hello::Ok(h) => match k {
                PayloadFetch::SslHelloType => Some(Sample::Int(i64::from(h.kind))),
                PayloadFetch::SslVer => Some(Sample::Int(h.version)),
                PayloadFetch::SslSni => h.sni.map(|s| Sample::Str(s.to_vec())),
                PayloadFetch::SslAlpn => h.alpn.map(|a| Sample::Str(a.to_vec())),
                PayloadFetch::SslEcExt => Some(Sample::Bool(h.ec)),
                PayloadFetch::SslStExt => Some(Sample::Int(h.ticket)),
                _ => None,
            },
        },
    }
}

/// What the first bytes of an RDP connection say of its cookie.
#[derive(Debug, PartialEq, Eq)]
pub enum Rdp<'a> {
    /// More bytes could tell.
    Short,
    /// There is none (of that name).
    None,
    Found(&'a [u8]),
}

/// The cookie of an RDP connection request (an X.224 CR in a TPKT, whose
/// 11 bytes of headers are skipped unread, as haproxy does): the first
/// line after them, `Cookie:`, spaces, `<name>=<value>` and CR LF; with
/// `name`, only a cookie of that name (case-insensitive) counts.
pub fn rdp_cookie<'a>(data: &'a [u8], name: Option<&str>) -> Rdp<'a> {
    let Some((head, rest)) = data.get(11..).and_then(|l| l.split_at_checked(7)) else {
        return Rdp::Short;
    };
    if !head.eq_ignore_ascii_case(b"Cookie:") {
        return Rdp::None;
    }
    let rest = skip_spaces(rest);
    if rest.is_empty() {
        return Rdp::Short;
    }
    let value = match name {
        Some(n) => match rest.split_at_checked(n.len()) {
            Some((k, [b'=', v @ ..])) if k.eq_ignore_ascii_case(n.as_bytes()) => v,
            Some((_, [_, ..])) => return Rdp::None,
            _ => return Rdp::Short,
        },
        None => match rest.iter().position(|&b| b == b'=' || b == b'\r') {
            None => return Rdp::Short,
            Some(i) => match rest.split_at(i) {
                (_, [b'=', v @ ..]) => v,
                _ => return Rdp::None,
            },
        },
    };
    let Some(cr) = value.iter().position(|&b| b == b'\r') else {
        return Rdp::Short;
    };
    match value.split_at(cr) {
        (_, [_]) => Rdp::Short,
        (v, [_, b'\n', ..]) => Rdp::Found(v),
        _ => Rdp::None,
    }
}

/// The bytes after the leading spaces.
fn skip_spaces(b: &[u8]) -> &[u8] {
    let n = b.iter().take_while(|&&x| x == b' ').count();
    b.get(n..).unwrap_or_default()
}

/// The server address an RDP `msts` cookie names (`<addr>.<port>.…`, its
/// decimal numbers the address's and port's bytes in network order read
/// as little-endian integers, cut to 32 and 16 bits; each number may
/// follow blanks and must be followed by a dot), as `persist rdp-cookie`
/// reads it.
pub fn rdp_msts(v: &[u8]) -> Option<std::net::SocketAddrV4> {
    fn number(v: &[u8]) -> Option<(u64, &[u8])> {
        let v = v.trim_ascii_start();
        let digits = v.iter().take_while(|b| b.is_ascii_digit()).count();
        let (num, rest) = v.split_at_checked(digits)?;
        let n = num.iter().fold(0u64, |n, &d| {
            n.saturating_mul(10).saturating_add(u64::from(d - b'0'))
        });
        match rest {
            [b'.', rest @ ..] => Some((n, rest)),
            _ => None,
        }
    }
    let (addr, rest) = number(v)?;
    let (port, _) = number(rest)?;
    let ip = std::net::Ipv4Addr::from((addr as u32).to_le_bytes());
    Some(std::net::SocketAddrV4::new(
        ip,
        u16::from_be_bytes((port as u16).to_le_bytes()),
    ))
}

/// Whether the bytes start an HTTP/1 request: `Some(true)` once a whole
/// head parses, `Some(false)` when they cannot be one, `None` until then.
fn looks_http(data: &[u8]) -> Option<bool> {
    // HTTP/2's preface is HTTP too (haproxy's parser takes it).
    const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
    if data.starts_with(PREFACE) {
        return Some(true);
    }
    if PREFACE.starts_with(data) {
        return None;
    }
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut req = httparse::Request::new(&mut headers);
    match req.parse(data) {
        Ok(httparse::Status::Complete(_)) => Some(true),
        Ok(httparse::Status::Partial) => None,
        Err(httparse::Error::TooManyHeaders) => Some(true),
        Err(_) => Some(false),
    }
}

/// A TLS ClientHello, as far as the fetches read it.
#[derive(Debug, Default, PartialEq, Eq)]
struct ClientHello<'a> {
    /// The handshake message type (1: client hello).
    kind: u8,
    /// The record's version, as `(major << 16) + minor`.
    version: i64,
    sni: Option<&'a [u8]>,
    /// The first protocol of the ALPN extension.
    alpn: Option<&'a [u8]>,
    ec: bool,
    /// 0 no session ticket extension, 1 an empty one, 2 with a ticket.
    ticket: i64,
}

#[derive(Debug, PartialEq, Eq)]
enum Hello<'a> {
    Short,
    NotTls,
    Ok(ClientHello<'a>),
}

fn be(b: &[u8]) -> usize {
    b.iter().fold(0usize, |n, &x| (n << 8) | usize::from(x))
}

/// `n` bytes from `b` and the rest.
fn take(b: &[u8], n: usize) -> Option<(&[u8], &[u8])> {
    b.split_at_checked(n)
}

/// A length-prefixed (`w` bytes) block and the rest.
fn block(b: &[u8], w: usize) -> Option<(&[u8], &[u8])> {
    let (l, rest) = take(b, w)?;
    take(rest, be(l))
}

/// Reads a TLS record holding a handshake message.
fn hello(data: &[u8]) -> Hello<'_> {
    let Some(&[kind, major, minor, l1, l2]) = data.get(..5) else {
        return if data.first().is_some_and(|&t| t != 22) {
            Hello::NotTls
        } else {
            Hello::Short
        };
    };
    if kind != 22 || major < 3 {
        return Hello::NotTls;
    }
    let version = (i64::from(major) << 16) + i64::from(minor);
    let rec_len = be(&[l1, l2]);
    let body = data.get(5..).unwrap_or_default();
    let Some((&kind, after)) = body.split_first() else {
        return Hello::Short;
    };
    let Some(msg_len) = after.get(..3).map(be) else {
        return Hello::Short;
    };
    if msg_len + 4 > rec_len {
        // A hello across records: the first must hold it (as haproxy).
        return Hello::NotTls;
    }
    let Some(msg) = after.get(3..3 + msg_len) else {
        return Hello::Short;
    };
    let mut h = ClientHello {
        kind,
        version,
        ..ClientHello::default()
    };
    if kind == 1 {
        if let Some(exts) = extensions(msg) {
            read_extensions(exts, &mut h);
        }
    }
    Hello::Ok(h)
}

/// The extensions block of a ClientHello body.
fn extensions(msg: &[u8]) -> Option<&[u8]> {
    let (_, rest) = take(msg, 2 + 32)?; // version, random
    let (_, rest) = block(rest, 1)?; // session id
    let (_, rest) = block(rest, 2)?; // cipher suites
    let (_, rest) = block(rest, 1)?; // compression methods
    block(rest, 2).map(|(e, _)| e)
}

fn read_extensions<'a>(mut exts: &'a [u8], h: &mut ClientHello<'a>) {
    while let Some((kind, rest)) = take(exts, 2) {
        let Some((body, rest)) = block(rest, 2) else {
            return;
        };
        exts = rest;
        match be(kind) {
            0 => {
                // server_name: a list of (type, name); type 0 is a host.
                let list = block(body, 2).map(|(l, _)| l).unwrap_or_default();
                if let Some((&0, name)) = list.split_first() {
                    h.sni = block(name, 2).map(|(n, _)| n);
                }
            }
            10 => h.ec = true,
            16 => {
                let list = block(body, 2).map(|(l, _)| l).unwrap_or_default();
                h.alpn = block(list, 1).map(|(p, _)| p);
            }
            35 => h.ticket = if body.is_empty() { 1 } else { 2 },
            _ => {}
        }
    }
}

#[cfg(test)]
#[path = "payload_tests.rs"]
mod tests;
