//! HTTP checks: the request of an `http-check send` rule (over HTTP/1.x,
//! or HTTP/2 with prior knowledge), the response read as far as the rules
//! need it, and `http-check expect` patterns judged on it, as haproxy 2.6
//! writes and judges them.

use crate::conn::Conn;
use tokio::time::Instant;
use weir_config::{CheckText, HdrHow, HdrMatch, HdrPat, HttpSend, TcpMatch};
use weir_proto::h1::{Framing, Header};
use weir_rules::matching::{matches, Method};
use weir_rules::{Ctx, Sample};

/// The most of a response a check keeps (haproxy's buffer).
pub(super) const MAX_READ: usize = 16384;

/// A request as it goes out: every log-format part rendered.
pub(super) struct Request {
    pub meth: String,
    pub uri: String,
    pub ver: String,
    /// In order: the rule's headers, the state header, the length, the
    /// connection's.
    pub headers: Vec<(String, Vec<u8>)>,
    pub body: Option<Vec<u8>>,
}

/// A response, or as much of its body as was read.
pub(super) struct Reply {
    pub status: u16,
    pub reason: String,
    /// `1.1`, `2.0`.
    pub version: String,
    pub headers: Vec<Header>,
    pub body: Vec<u8>,
}

fn text(t: &CheckText, ctx: &dyn Ctx) -> Vec<u8> {
    match t {
        CheckText::Plain(s) => weir_rules::args::raw_bytes(s).into_owned(),
        CheckText::Fmt(f) => f.render(ctx),
    }
}

/// Renders `send`'s request: `OPTIONS / HTTP/1.0` for what it leaves
/// out, the `X-Haproxy-Server-State` header of `state`, a length for a
/// body, and `Connection: close` in HTTP/1.1 unless a header says
/// otherwise.
pub(super) fn request(send: &HttpSend, ctx: &dyn Ctx, state: Option<&str>) -> Request {
    let uri = send.uri.as_ref().map(|u| text(u, ctx)).unwrap_or_default();
    let mut req = Request {
        meth: send.meth.clone().unwrap_or_else(|| "OPTIONS".into()),
        uri: match uri.is_empty() {
            true => "/".into(),
            false => target(&uri),
        },
        ver: send.ver.clone().unwrap_or_else(|| "HTTP/1.0".into()),
        headers: Vec::new(),
        body: send.body.as_ref().map(|b| text(b, ctx)),
    };
    let mut connection = None;
    for (name, value) in &send.headers {
        let name = name.to_ascii_lowercase();
        let value = value.render(ctx);
        // (A value a sample filled with a line end or NUL would end the
        // head: the header is left out.)
        if value.iter().any(|&c| matches!(c, b'\r' | b'\n' | 0)) {
            continue;
        }
        match name.as_str() {
            // (A length is the body's own.)
            "content-length" | "transfer-encoding" => {}
            "connection" => connection = Some(value),
            _ => req.headers.push((name, value)),
        }
    }
    if let Some(s) = state {
        req.headers
            .push(("x-haproxy-server-state".into(), s.as_bytes().to_vec()));
    }
    if let Some(b) = &req.body {
        req.headers
            .push(("content-length".into(), b.len().to_string().into_bytes()));
    }
    match connection {
        Some(c) => req.headers.push(("connection".into(), c)),
        None if !req.ver.eq_ignore_ascii_case("HTTP/1.0") => {
            req.headers.push(("connection".into(), b"close".to_vec()))
        }
        None => {}
    }
    req
}

/// A request target from rendered bytes: spaces and control bytes (which
/// would break the request line) percent-encoded.
fn target(uri: &[u8]) -> String {
    let mut out = String::with_capacity(uri.len());
    for &c in uri {
        match c {
            0x21..=0x7e => out.push(char::from(c)),
            _ => out.push_str(&format!("%{c:02X}")),
        }
    }
    out
}

/// The request in HTTP/1.x.
pub(super) fn h1_bytes(req: &Request) -> Vec<u8> {
    let mut out = format!("{} {} {}\r\n", req.meth, req.uri, req.ver).into_bytes();
    for (n, v) in &req.headers {
        out.extend_from_slice(n.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(v);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"\r\n");
    if let Some(b) = &req.body {
        out.extend_from_slice(b);
    }
    out
}

/// What the bytes read so far make of a response.
pub(super) enum Parsed {
    Done(Reply),
    More,
    /// Not an HTTP response (or it ended before its head did).
    Bad,
}

/// Parses what the server sent; with `body`, the response is whole only
/// with its body (or as much of it as fits, or all it sent before
/// closing).
pub(super) fn parse_h1(buf: &[u8], closed: bool, method: &str, body: bool) -> Parsed {
    let limits = weir_proto::h1::Limits::default();
    let (head, used) = match weir_proto::h1::parse_response(buf, &limits, method) {
        Ok(Some(h)) => h,
        Ok(None) if !closed && buf.len() < MAX_READ => return Parsed::More,
        _ => return Parsed::Bad,
    };
    let rest = buf.get(used..).unwrap_or_default();
    let (bytes, whole) = match head.framing {
        Framing::UntilClose => (rest.to_vec(), closed),
        f => match weir_proto::h1::body_prefix(f, rest) {
            Ok(b) => b,
            Err(_) => return Parsed::Bad,
        },
    };
    if body && !whole && !closed && buf.len() < MAX_READ {
        return Parsed::More;
    }
    Parsed::Done(Reply {
        status: head.status,
        reason: head.reason,
        version: format!("1.{}", head.minor),
        headers: head.headers,
        body: bytes,
    })
}

/// Why an HTTP/2 exchange failed: a timeout, or anything else.
pub(super) enum H2Error {
    Timeout,
    Failed,
}

/// Sends `req` over HTTP/2 on `conn` and reads the response (its body up
/// to [`MAX_READ`]) before `deadline`.
pub(super) async fn h2_exchange(
    conn: Conn,
    req: &Request,
    authority: &str,
    deadline: Instant,
) -> Result<Reply, H2Error> {
    let run = async {
        let io = crate::conn_io::ConnIo::new(Box::new(conn), Vec::new());
        let (sender, connection) = h2::client::handshake(io).await.ok()?;
        let driver = tokio::spawn(async move {
            let _ = connection.await;
        });
        let reply = h2_request(sender, req, authority).await;
        driver.abort();
        reply
    };
    match tokio::time::timeout_at(deadline, run).await {
        Err(_) => Err(H2Error::Timeout),
        Ok(None) => Err(H2Error::Failed),
        Ok(Some(r)) => Ok(r),
    }
}

async fn h2_request(
    sender: h2::client::SendRequest<bytes::Bytes>,
    req: &Request,
    authority: &str,
) -> Option<Reply> {
    let mut sender = sender.ready().await.ok()?;
    let host = req
        .headers
        .iter()
        .find(|(n, _)| n == "host")
        .map(|(_, v)| String::from_utf8_lossy(v).into_owned());
    let uri = format!("http://{}{}", host.as_deref().unwrap_or(authority), req.uri);
    let mut b = http::Request::builder().method(req.meth.as_str()).uri(uri);
    for (n, v) in &req.headers {
        // (HTTP/2 has no connection-specific fields.)
        if !matches!(n.as_str(), "host" | "connection" | "content-length") {
            b = b.header(n.as_str(), v.as_slice());
        }
    }
    let body = req.body.clone().unwrap_or_default();
    let (resp, mut stream) = sender
        .send_request(b.body(()).ok()?, body.is_empty())
        .ok()?;
    if !body.is_empty() {
        stream.send_data(body.into(), true).ok()?;
    }
    let resp = resp.await.ok()?;
    let (parts, mut recv) = resp.into_parts();
    let mut body = Vec::new();
    while body.len() < MAX_READ {
        match recv.data().await {
            Some(Ok(d)) => {
                let _ = recv.flow_control().release_capacity(d.len());
                body.extend_from_slice(&d);
            }
            Some(Err(_)) => return None,
            None => break,
        }
    }
    body.truncate(MAX_READ);
    let status = parts.status.as_u16();
    Some(Reply {
        status,
        reason: weir_proto::h1::status::reason(status).to_string(),
        version: "2.0".into(),
        headers: parts
            .headers
            .iter()
            .map(|(n, v)| Header::new(n.as_str(), v.as_bytes()))
            .collect(),
        body,
    })
}

/// Whether an expect rule's pattern reads the body.
pub(super) fn reads_body(m: &TcpMatch) -> bool {
    !matches!(
        m,
        TcpMatch::Status(_) | TcpMatch::RStatus(_) | TcpMatch::Hdr(_)
    )
}

fn regex(p: &weir_rules::matching::Pattern, b: &[u8]) -> bool {
    matches(Method::Reg, false, &Sample::Str(b.to_vec()), p)
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && hay.windows(needle.len()).any(|w| w == needle)
}

/// Whether `reply` has what `m` looks for.
pub(super) fn found(m: &TcpMatch, reply: &Reply, ctx: &dyn Ctx) -> bool {
    match m {
        TcpMatch::Status(ranges) => ranges
            .iter()
            .any(|(a, b)| (*a..=*b).contains(&reply.status)),
        TcpMatch::RStatus(p) => regex(p, reply.status.to_string().as_bytes()),
        TcpMatch::Hdr(h) => header_found(h, reply, ctx),
        TcpMatch::String(s) | TcpMatch::Binary(s) => contains(&reply.body, s),
        TcpMatch::RString(p) | TcpMatch::RBinary(p) => regex(p, &reply.body),
        TcpMatch::Lf(f, _) => contains(&reply.body, &f.render(ctx)),
    }
}

/// Compares `subject` by `pat` (`name`: without case).
fn compare(pat: &HdrPat, subject: &[u8], name: bool, ctx: &dyn Ctx) -> bool {
    if let Some(re) = &pat.re {
        return regex(re, subject);
    }
    let want = text(&pat.text, ctx);
    let (s, w) = match name {
        true => (subject.to_ascii_lowercase(), want.to_ascii_lowercase()),
        false => (subject.to_vec(), want),
    };
    match pat.how {
        HdrHow::Str | HdrHow::Reg => s == w,
        HdrHow::Beg => s.starts_with(&w),
        HdrHow::End => s.ends_with(&w),
        HdrHow::Sub => contains(&s, &w) || w.is_empty(),
    }
}

fn header_found(h: &HdrMatch, reply: &Reply, ctx: &dyn Ctx) -> bool {
    reply.headers.iter().any(|hd| {
        if !compare(&h.name, hd.name_bytes(), true, ctx) {
            return false;
        }
        let Some(v) = &h.value else {
            return true;
        };
        match h.full {
            true => compare(v, hd.value(), false, ctx),
            false => hd
                .value()
                .split(|&c| c == b',')
                .map(|p| p.trim_ascii())
                .any(|p| compare(v, p, false, ctx)),
        }
    })
}
