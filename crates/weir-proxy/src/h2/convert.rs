//! Pure translations between HTTP/2 messages and the HTTP/1.1 heads the
//! exchange works on: a request's pseudo-headers and fields to an HTTP/1.1
//! head in origin form, a response head to HTTP/2 fields, and chunked
//! trailer lines to a trailer map.

use http::header::{HeaderMap, HeaderName, HeaderValue};
use http::request::Parts;
use weir_proto::h1::{RequestHead, ResponseHead};

/// Why an HTTP/2 request cannot be carried as HTTP/1.1 (a malformed
/// request: the stream is reset with PROTOCOL_ERROR).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Malformed {
    #[error("a field carries a byte HTTP/1.1 cannot carry")]
    BadByte,
    #[error("a connection-specific field")]
    ConnectionField,
    #[error("'te' other than 'trailers'")]
    Te,
    #[error("no :path")]
    NoPath,
}

/// Fields that HTTP/2 forbids (RFC 9113 §8.2.2).
const CONNECTION_FIELDS: [&str; 5] = [
    "connection",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "upgrade",
];

fn clean(v: &[u8]) -> bool {
    !v.iter().any(|&b| b == b'\r' || b == b'\n' || b == 0)
}

/// The HTTP/1.1 head for an HTTP/2 request: origin form (the authority
/// for CONNECT), `host` from `:authority`, cookies joined with `; `
/// (RFC 9113 §8.2.3), and `transfer-encoding: chunked` for a body of
/// unknown length (`has_body` and no `content-length`).
pub fn request_head(parts: &Parts, has_body: bool) -> Result<Vec<u8>, Malformed> {
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(parts.method.as_str().as_bytes());
    out.push(b' ');
    let authority = parts.uri.authority().map(|a| a.as_str());
    if parts.method == http::Method::CONNECT {
        out.extend_from_slice(authority.ok_or(Malformed::NoPath)?.as_bytes());
    } else {
        let pq = parts
            .uri
            .path_and_query()
            .map(|p| p.as_str())
            .filter(|p| !p.is_empty())
            .ok_or(Malformed::NoPath)?;
        if !clean(pq.as_bytes()) || pq.contains(' ') {
            return Err(Malformed::BadByte);
        }
        out.extend_from_slice(pq.as_bytes());
    }
    out.extend_from_slice(b" HTTP/1.1\r\n");
    if let Some(a) = authority {
        out.extend_from_slice(b"host: ");
        out.extend_from_slice(a.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    let mut cookies: Vec<&[u8]> = Vec::new();
    let mut has_length = false;
    for (name, value) in &parts.headers {
        let n = name.as_str();
        let v = value.as_bytes();
        if !clean(v) {
            return Err(Malformed::BadByte);
        }
        if CONNECTION_FIELDS.contains(&n) {
            return Err(Malformed::ConnectionField);
        }
        match n {
            "te" if !v.eq_ignore_ascii_case(b"trailers") => return Err(Malformed::Te),
            "host" if authority.is_some() => continue,
            "cookie" => {
                cookies.push(v);
                continue;
            }
            "content-length" => has_length = true,
            _ => {}
        }
        out.extend_from_slice(n.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(v);
        out.extend_from_slice(b"\r\n");
    }
    if !cookies.is_empty() {
        out.extend_from_slice(b"cookie: ");
        out.extend_from_slice(&cookies.join(&b"; "[..]));
        out.extend_from_slice(b"\r\n");
    }
    if has_body && !has_length && parts.method != http::Method::CONNECT {
        out.extend_from_slice(b"transfer-encoding: chunked\r\n");
    }
    out.extend_from_slice(b"\r\n");
    Ok(out)
}

/// An HTTP/1.1 response head as HTTP/2 fields: connection-specific fields
/// dropped, names lower-cased. Fields HTTP/2 cannot carry are dropped.
pub fn response(head: &ResponseHead) -> http::Response<()> {
    let mut res = http::Response::new(());
    *res.status_mut() =
        http::StatusCode::from_u16(head.status).unwrap_or(http::StatusCode::BAD_GATEWAY);
    let map = res.headers_mut();
    for h in &head.headers {
        if CONNECTION_FIELDS.iter().any(|f| h.is(f)) {
            continue;
        }
        // Names are lower-cased as they are parsed.
        if let (Ok(n), Ok(v)) = (
            HeaderName::from_bytes(h.name().as_bytes()),
            HeaderValue::from_bytes(h.value()),
        ) {
            map.append(n, v);
        }
    }
    res
}

/// An HTTP/1.1 request head as an HTTP/2 request to a server: the target
/// in absolute form (`scheme`, and the `host` field or `authority` when
/// there is none), connection-specific fields and `host` dropped, `te`
/// kept only as `trailers`. `None` for what HTTP/2 cannot carry (a CONNECT
/// tunnel, `*`, a bad target).
pub fn upstream_request(
    req: &RequestHead,
    scheme: &str,
    authority: &str,
) -> Option<http::Request<()>> {
    if req.method == "CONNECT" || !req.uri.starts_with('/') {
        return None;
    }
    let host = req
        .headers
        .iter()
        .find(|h| h.is("host"))
        .and_then(|h| std::str::from_utf8(h.value()).ok())
        .unwrap_or(authority);
    let uri = format!("{scheme}://{host}{}", req.uri);
    let mut r = http::Request::builder()
        .method(req.method.as_str())
        .uri(uri)
        .version(http::Version::HTTP_2)
        .body(())
        .ok()?;
    let map = r.headers_mut();
    for h in &req.headers {
        let lower = h.name().to_ascii_lowercase();
        if CONNECTION_FIELDS.contains(&lower.as_str()) || lower == "host" || lower == "expect" {
            continue;
        }
        if lower == "te" && !h.value().eq_ignore_ascii_case(b"trailers") {
            continue;
        }
        if let (Ok(n), Ok(v)) = (
            HeaderName::from_bytes(lower.as_bytes()),
            HeaderValue::from_bytes(h.value()),
        ) {
            map.append(n, v);
        }
    }
    Some(r)
}

/// A server's HTTP/2 response head as HTTP/1.1 bytes, and whether its body
/// is re-framed as chunks: it keeps a `content-length`, gets
/// `content-length: 0` when the stream already ended, and is chunked
/// otherwise (bodiless statuses and HEAD answers get no framing).
pub fn response_head(
    parts: &http::response::Parts,
    ended: bool,
    head_req: bool,
) -> (Vec<u8>, bool) {
    let status = parts.status.as_u16();
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(b"HTTP/1.1 ");
    out.extend_from_slice(parts.status.as_str().as_bytes());
    out.push(b' ');
    out.extend_from_slice(weir_proto::h1::status::reason(status).as_bytes());
    out.extend_from_slice(b"\r\n");
    let mut has_length = false;
    for (n, v) in &parts.headers {
        if !clean(v.as_bytes()) || CONNECTION_FIELDS.contains(&n.as_str()) {
            continue;
        }
        has_length |= n == http::header::CONTENT_LENGTH;
        out.extend_from_slice(n.as_str().as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(v.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    let bodiless = head_req || status < 200 || status == 204 || status == 304;
    let chunked = !has_length && !bodiless && !ended;
    if chunked {
        out.extend_from_slice(b"transfer-encoding: chunked\r\n");
    } else if !has_length && !bodiless {
        out.extend_from_slice(b"content-length: 0\r\n");
    }
    out.extend_from_slice(b"\r\n");
    (out, chunked)
}

/// Chunked trailer lines (`name: value`) as an HTTP/2 trailer map; lines
/// that are not fields are dropped.
pub fn trailers(lines: &[Vec<u8>]) -> HeaderMap {
    let mut map = HeaderMap::new();
    for line in lines {
        let Some(colon) = line.iter().position(|&b| b == b':') else {
            continue;
        };
        let name = line[..colon].to_ascii_lowercase();
        let value = line[colon + 1..].trim_ascii();
        if let (Ok(n), Ok(v)) = (
            HeaderName::from_bytes(&name),
            HeaderValue::from_bytes(value),
        ) {
            if !CONNECTION_FIELDS.contains(&n.as_str()) {
                map.append(n, v);
            }
        }
    }
    map
}

/// An HTTP/2 trailer map as the end of a chunked body (`0`, the fields,
/// the empty line).
pub fn last_chunk(trailers: Option<&HeaderMap>) -> Vec<u8> {
    let mut out = b"0\r\n".to_vec();
    for (n, v) in trailers.into_iter().flatten() {
        if clean(v.as_bytes()) {
            out.extend_from_slice(n.as_str().as_bytes());
            out.extend_from_slice(b": ");
            out.extend_from_slice(v.as_bytes());
            out.extend_from_slice(b"\r\n");
        }
    }
    out.extend_from_slice(b"\r\n");
    out
}

#[cfg(test)]
#[path = "convert_tests.rs"]
mod tests;
