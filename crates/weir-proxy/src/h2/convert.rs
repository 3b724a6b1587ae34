//! Pure translations between HTTP/2 messages and the HTTP/1.1 heads the
//! exchange works on: a request's pseudo-headers and fields to an HTTP/1.1
//! head in origin form, a response head to HTTP/2 fields, and chunked
//! trailer lines to a trailer map.

use http::header::{HeaderMap, HeaderName, HeaderValue};
use weir_proto::h1::{RequestHead, ResponseHead};

/// Fields that HTTP/2 forbids (RFC 9113 §8.2.2).
pub(crate) const CONNECTION_FIELDS: [&str; 5] = [
    "connection",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "upgrade",
];

fn clean(v: &[u8]) -> bool {
    !v.iter().any(|&b| b == b'\r' || b == b'\n' || b == 0)
}

/// An HTTP/2 request's fields (validated by the codec) gathered into an
/// HTTP/1.1 head: origin form (the authority for CONNECT), `host` from
/// `:authority`, cookies joined with `; ` (RFC 9113 §8.2.3), and
/// `transfer-encoding: chunked` for a body of unknown length.
#[derive(Default)]
pub struct RequestBuilder {
    /// The pseudo-headers' values, one after the other.
    pseudo: Vec<u8>,
    method: (usize, usize),
    scheme: (usize, usize),
    path: (usize, usize),
    authority: Option<(usize, usize)>,
    /// The head once its request line is written (at the first regular
    /// field: pseudo-headers come first).
    out: Vec<u8>,
    started: bool,
    /// The target cannot be carried in HTTP/1.1.
    bad: bool,
    cookies: Vec<u8>,
    has_length: bool,
}

impl RequestBuilder {
    fn get(&self, (a, z): (usize, usize)) -> &[u8] {
        self.pseudo.get(a..z).unwrap_or_default()
    }

    pub fn field(&mut self, name: &[u8], value: &[u8]) {
        if name.first() == Some(&b':') {
            if self.started {
                return;
            }
            if self.pseudo.capacity() == 0 {
                self.pseudo.reserve(128);
            }
            let at = (self.pseudo.len(), self.pseudo.len() + value.len());
            match name {
                b":method" => self.method = at,
                b":scheme" => self.scheme = at,
                b":path" => self.path = at,
                b":authority" => self.authority = Some(at),
                _ => return,
            }
            self.pseudo.extend_from_slice(value);
            return;
        }
        if !self.started {
            self.start();
        }
        match name {
            b"host" if self.authority.is_some() => {}
            b"cookie" => {
                if !self.cookies.is_empty() {
                    self.cookies.extend_from_slice(b"; ");
                }
                self.cookies.extend_from_slice(value);
            }
            _ => {
                self.has_length |= name == b"content-length";
                self.out.extend_from_slice(name);
                self.out.extend_from_slice(b": ");
                self.out.extend_from_slice(value);
                self.out.extend_from_slice(b"\r\n");
            }
        }
    }

    fn connect(&self) -> bool {
        self.get(self.method) == b"CONNECT"
    }

    /// Writes the request line and `host`.
    fn start(&mut self) {
        self.started = true;
        let target = if self.connect() {
            self.authority.map(|a| self.get(a)).unwrap_or_default()
        } else {
            self.get(self.path)
        };
        let scheme = self.get(self.scheme);
        let scheme_ok = scheme.first().is_some_and(u8::is_ascii_alphabetic)
            && scheme
                .iter()
                .all(|&b| b.is_ascii_alphanumeric() || b"+-.".contains(&b));
        if target.is_empty()
            || target.iter().any(|&b| b <= b' ' || b == 0x7f)
            || !self.connect() && !scheme_ok
        {
            self.bad = true;
            return;
        }
        let mut out = Vec::with_capacity(256 + self.pseudo.len());
        out.extend_from_slice(self.get(self.method));
        out.push(b' ');
        out.extend_from_slice(target);
        out.extend_from_slice(b" HTTP/1.1\r\n");
        if let Some(a) = self.authority {
            // `:authority` without the scheme's default port, as haproxy
            // 2.6 normalises it (`http` and `hostname:80` are `hostname`).
            let authority = self.get(a);
            let normal = (!self.connect())
                .then(|| weir_proto::h1::normalized_authority(scheme, authority))
                .flatten();
            out.extend_from_slice(b"host: ");
            out.extend_from_slice(normal.as_deref().unwrap_or(authority));
            out.extend_from_slice(b"\r\n");
        }
        self.out = out;
    }

    /// The HTTP/1.1 head, and whether the body is re-framed as chunks;
    /// `None` when the target cannot be carried in HTTP/1.1.
    pub fn finish(mut self, end_stream: bool) -> Option<(Vec<u8>, bool)> {
        if !self.started {
            self.start();
        }
        if self.bad {
            return None;
        }
        let connect = self.connect();
        let mut out = self.out;
        if !self.cookies.is_empty() {
            out.extend_from_slice(b"cookie: ");
            out.extend_from_slice(&self.cookies);
            out.extend_from_slice(b"\r\n");
        }
        let chunked = !end_stream && !self.has_length && !connect;
        if chunked {
            out.extend_from_slice(b"transfer-encoding: chunked\r\n");
        }
        out.extend_from_slice(b"\r\n");
        Some((out, chunked))
    }
}

/// A response head's fields for HTTP/2: connection-specific ones dropped
/// (names are lower-cased by the encoder).
pub fn response_fields(head: &ResponseHead) -> impl Iterator<Item = (&[u8], &[u8])> {
    head.headers
        .iter()
        .filter(|h| !CONNECTION_FIELDS.iter().any(|f| h.is(f)))
        .map(|h| (h.name().as_bytes(), h.value()))
}

/// Chunked trailer lines (`name: value`) as HTTP/2 trailer fields, names
/// in lower case; lines that are not fields, and connection-specific
/// fields, are dropped.
pub fn trailer_fields(lines: &[Vec<u8>]) -> Vec<(Vec<u8>, Vec<u8>)> {
    lines
        .iter()
        .filter_map(|line| {
            let colon = line.iter().position(|&b| b == b':')?;
            let name = line[..colon].to_ascii_lowercase();
            let value = line[colon + 1..].trim_ascii().to_vec();
            let bad = CONNECTION_FIELDS
                .iter()
                .any(|f| f.as_bytes() == name.as_slice());
            (!bad && !name.is_empty()).then_some((name, value))
        })
        .collect()
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
