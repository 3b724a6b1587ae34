//! Pure translations between HTTP/2 messages and the heads the exchange
//! works on: a request's pseudo-headers and fields to a request head in
//! origin form; a response head to HTTP/2 fields and a server's HTTP/2
//! response to the response model; chunked trailer lines to a trailer map.

use http::header::{HeaderMap, HeaderName, HeaderValue};
use weir_proto::h1::{
    H1Error, Header, Limits, RequestHead, RequestParts, ResponseHead, ResponseParts,
};

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

/// An HTTP/2 request's fields (validated by the codec) gathered into the
/// request the exchange works on, in HTTP/1.1 terms and never as text:
/// origin form (the authority for CONNECT), `host` from `:authority`,
/// cookies joined with `; ` (RFC 9113 §8.2.3), and `transfer-encoding:
/// chunked` for a body of unknown length (as it goes to HTTP/1.1 servers).
#[derive(Default)]
pub struct RequestBuilder {
    method: Vec<u8>,
    scheme: Scheme,
    path: Vec<u8>,
    /// `:authority`, already as the `host` field it becomes.
    authority: Option<Header>,
    /// The regular fields, in order.
    fields: Vec<Header>,
    /// A regular field came: pseudo-headers come first.
    started: bool,
    /// A field name that is not text (it fails as a token later).
    bad_name: bool,
    cookies: Vec<u8>,
    has_length: bool,
    /// `:protocol` (RFC 8441's extended CONNECT).
    protocol: Option<Vec<u8>>,
}

/// A request the builder completed.
pub struct Built {
    /// The head, or why the exchange answers it with an error, with the
    /// request as HTTP/1.1 text for the error capture.
    pub head: Result<RequestHead, (H1Error, Vec<u8>)>,
    /// The body is re-framed as chunks.
    pub chunked: bool,
    /// An extended CONNECT, now an HTTP/1.1 upgrade: its DATA are the
    /// tunnel's bytes once the server switches.
    pub upgrade: bool,
    /// The `Sec-WebSocket-Key` weir added for a WebSocket the client opened
    /// without one (HTTP/2 has none); the server must prove it read it.
    pub ws_key: Option<Vec<u8>>,
}

/// `:scheme` as far as the request needs it: whether it is a scheme at
/// all, and `http`/`https` by name (their default ports are dropped from
/// `:authority`).
#[derive(Default, Clone, Copy, PartialEq, Eq)]
enum Scheme {
    #[default]
    Missing,
    Bad,
    Http,
    Https,
    Other,
}

impl Scheme {
    fn of(s: &[u8]) -> Scheme {
        let ok = s.first().is_some_and(u8::is_ascii_alphabetic)
            && s.iter()
                .all(|&b| b.is_ascii_alphanumeric() || b"+-.".contains(&b));
        if !ok {
            Scheme::Bad
        } else if s.eq_ignore_ascii_case(b"http") {
            Scheme::Http
        } else if s.eq_ignore_ascii_case(b"https") {
            Scheme::Https
        } else {
            Scheme::Other
        }
    }

    fn valid(self) -> bool {
        matches!(self, Scheme::Http | Scheme::Https | Scheme::Other)
    }

    /// `http` or `https`, as the request names it.
    fn known(self) -> Option<&'static str> {
        match self {
            Scheme::Http => Some("http"),
            Scheme::Https => Some("https"),
            _ => None,
        }
    }

    /// The name that decides the default port (any other scheme has none).
    fn name(self) -> &'static [u8] {
        match self {
            Scheme::Http => b"http",
            Scheme::Https => b"https",
            _ => b"",
        }
    }
}

impl RequestBuilder {
    pub fn field(&mut self, name: &[u8], value: &[u8]) {
        if name.first() == Some(&b':') {
            if self.started {
                return;
            }
            match name {
                b":method" => self.method = value.to_vec(),
                b":scheme" => self.scheme = Scheme::of(value),
                b":path" => self.path = value.to_vec(),
                b":authority" => self.authority = Some(Header::new("host", value)),
                b":protocol" => self.protocol = Some(value.to_vec()),
                _ => {}
            }
            return;
        }
        if !self.started {
            self.started = true;
            self.fields.reserve(16);
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
                match std::str::from_utf8(name) {
                    Ok(n) => self.fields.push(Header::new(n, value)),
                    Err(_) => self.bad_name = true,
                }
            }
        }
    }

    /// A plain CONNECT (an extended one names a path and a protocol).
    fn connect(&self) -> bool {
        self.method == b"CONNECT" && self.protocol.is_none()
    }

    /// Whether HTTP/1.1 can carry the request's target.
    fn target_ok(&self) -> bool {
        let target = if self.connect() {
            self.authority
                .as_ref()
                .map(Header::value)
                .unwrap_or_default()
        } else {
            &self.path
        };
        let bad = target.is_empty()
            || target.iter().any(|&b| b <= b' ' || b == 0x7f)
            || !self.connect() && matches!(self.scheme, Scheme::Missing);
        !bad
    }

    /// The request, or `None` when its target cannot be carried in
    /// HTTP/1.1 (the stream is reset). An extended CONNECT becomes the
    /// HTTP/1.1 upgrade it stands for (RFC 8441 §5): `GET` with
    /// `Connection: upgrade` and `Upgrade: <protocol>`, and for a WebSocket
    /// without a key, the key `new_key` makes.
    pub fn finish(
        mut self,
        end_stream: bool,
        limits: &Limits,
        new_key: impl FnOnce() -> Vec<u8>,
    ) -> Option<Built> {
        if !self.target_ok() {
            return None;
        }
        let connect = self.connect();
        let protocol = self.protocol.take();
        if protocol.is_some() {
            self.method = b"GET".to_vec();
        }
        // The target moves into the head (CONNECT's is the authority, also
        // kept for `host`); a method or target that is not text is refused
        // below as a bad token.
        let target = if connect {
            self.authority
                .as_ref()
                .map(|a| a.value().to_vec())
                .unwrap_or_default()
        } else {
            std::mem::take(&mut self.path)
        };
        let (method, uri) = (
            String::from_utf8(std::mem::take(&mut self.method)),
            String::from_utf8(target),
        );
        let not_text = method.is_err() || uri.is_err();
        let mut headers = std::mem::take(&mut self.fields);
        if let Some(mut host) = self.authority.take() {
            // `:authority` without the scheme's default port, as haproxy
            // 2.6 normalises it (`http` and `hostname:80` are `hostname`).
            let normal = (!connect)
                .then(|| weir_proto::h1::normalized_authority(self.scheme.name(), host.value()))
                .flatten();
            if let Some(normal) = normal {
                host.set_value(&normal);
            }
            headers.insert(0, host);
        }
        if !self.cookies.is_empty() {
            headers.push(Header::new("cookie", &self.cookies));
        }
        let mut ws_key = None;
        if let Some(p) = &protocol {
            headers.push(Header::new("connection", b"upgrade"));
            headers.push(Header::new("upgrade", p));
            if p.eq_ignore_ascii_case(b"websocket")
                && !headers.iter().any(|h| h.is("sec-websocket-key"))
            {
                let key = new_key();
                headers.push(Header::new("sec-websocket-key", &key));
                ws_key = Some(key);
            }
        }
        let chunked = !end_stream && !self.has_length && !connect && protocol.is_none();
        if chunked {
            headers.push(Header::new("transfer-encoding", b"chunked"));
        }
        let mut parts = RequestParts {
            method: method.unwrap_or_default(),
            uri: uri.unwrap_or_default(),
            minor: 1,
            headers,
        };
        let head = if self.bad_name {
            Err(H1Error::BadRequest("invalid character in a header name"))
        } else if not_text {
            Err(H1Error::BadRequest("invalid token"))
        } else if !connect && !self.scheme.valid() {
            // Present but not a scheme: answered 400, as haproxy does (a
            // missing one resets the stream, above).
            Err(H1Error::BadRequest("invalid scheme"))
        } else {
            weir_proto::h1::decoded_request_head(&mut parts, limits).map(|mut head| {
                head.scheme = self.scheme.known();
                head
            })
        };
        let head = head.map_err(|e| (e, weir_proto::h1::write_request_parts(&parts)));
        Some(Built {
            head,
            chunked,
            upgrade: protocol.is_some(),
            ws_key,
        })
    }
}

/// A response head's fields for HTTP/2: connection-specific ones dropped
/// (names are lower-cased by the encoder).
pub fn response_fields(head: &ResponseHead) -> impl Iterator<Item = (&[u8], &[u8])> {
    head.headers
        .iter()
        .filter(|h| !CONNECTION_FIELDS.iter().any(|f| h.is(f)))
        .map(|h| (h.name_bytes(), h.value()))
}

/// A `name: value` line's name and its value without surrounding blanks.
fn split_field(line: &[u8]) -> Option<(&[u8], &[u8])> {
    let (name, value) = crate::cut::split_at_byte(line, b':')?;
    Some((name, value.trim_ascii()))
}

/// Chunked trailer lines (`name: value`) as HTTP/2 trailer fields, names
/// in lower case; lines that are not fields, and connection-specific
/// fields, are dropped.
pub fn trailer_fields(lines: &[Vec<u8>]) -> Vec<(Vec<u8>, Vec<u8>)> {
    lines
        .iter()
        .filter_map(|line| {
            let (name, value) = split_field(line)?;
            let (name, value) = (name.to_ascii_lowercase(), value.to_vec());
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
    if let Some(p) = upgrade_protocol(req) {
        // RFC 8441 §5: an HTTP/1.1 upgrade is an extended CONNECT, whose
        // `:scheme` haproxy sends as `https`.
        let mut r = upstream_fields(req, "CONNECT", "https", authority)?;
        let p = std::str::from_utf8(p).ok()?;
        r.extensions_mut().insert(h2::ext::Protocol::from(p));
        return Some(r);
    }
    upstream_fields(req, &req.method, scheme, authority)
}

/// The protocol an HTTP/1.1 request asks to switch to (`Connection:
/// upgrade` with `Upgrade`).
pub fn upgrade_protocol(req: &RequestHead) -> Option<&[u8]> {
    if !weir_proto::h1::connection_has(&req.headers, "upgrade") {
        return None;
    }
    req.headers
        .iter()
        .find(|h| h.is("upgrade"))
        .map(Header::value)
        .filter(|v| !v.is_empty())
}

/// The request as HTTP/2 fields, with `method` and `scheme`.
fn upstream_fields(
    req: &RequestHead,
    method: &str,
    scheme: &str,
    authority: &str,
) -> Option<http::Request<()>> {
    let host = req
        .headers
        .iter()
        .find(|h| h.is("host"))
        .and_then(|h| std::str::from_utf8(h.value()).ok())
        .unwrap_or(authority);
    let uri = format!("{scheme}://{host}{}", req.uri);
    let mut r = http::Request::builder()
        .method(method)
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

/// A server's acceptance of an extended CONNECT (a 2xx) as the HTTP/1.1
/// `101 Switching Protocols` the client asked for, proving a WebSocket
/// key with its accept value (RFC 8441 §5).
pub fn switched_parts(
    parts: &http::response::Parts,
    protocol: &[u8],
    accept: Option<&[u8]>,
) -> ResponseParts {
    let mut headers = Vec::with_capacity(parts.headers.len() + 3);
    for (n, v) in &parts.headers {
        let skip = !clean(v.as_bytes())
            || CONNECTION_FIELDS.contains(&n.as_str())
            || n == http::header::CONTENT_LENGTH
            || n == "sec-websocket-accept";
        if !skip {
            headers.push(Header::new(n.as_str(), v.as_bytes()));
        }
    }
    headers.push(Header::new("connection", b"upgrade"));
    headers.push(Header::new("upgrade", protocol));
    if let Some(a) = accept {
        headers.push(Header::new("sec-websocket-accept", a));
    }
    ResponseParts {
        status: 101,
        reason: weir_proto::h1::status::reason(101).to_string(),
        minor: 1,
        headers,
    }
}

/// A server's HTTP/2 response head in HTTP/1.1 terms, and whether its
/// body is re-framed as chunks: it keeps a `content-length`, gets
/// `content-length: 0` when the stream already ended, and is chunked
/// otherwise (bodiless statuses and HEAD answers get no framing).
pub fn response_parts(
    parts: &http::response::Parts,
    ended: bool,
    head_req: bool,
) -> (ResponseParts, bool) {
    let status = parts.status.as_u16();
    let mut headers = Vec::with_capacity(parts.headers.len() + 1);
    let mut has_length = false;
    for (n, v) in &parts.headers {
        if !clean(v.as_bytes()) || CONNECTION_FIELDS.contains(&n.as_str()) {
            continue;
        }
        has_length |= n == http::header::CONTENT_LENGTH;
        headers.push(Header::new(n.as_str(), v.as_bytes()));
    }
    let bodiless = head_req || status < 200 || status == 204 || status == 304;
    let chunked = !has_length && !bodiless && !ended;
    if chunked {
        headers.push(Header::new("transfer-encoding", b"chunked"));
    } else if !has_length && !bodiless {
        headers.push(Header::new("content-length", b"0"));
    }
    let parts = ResponseParts {
        status,
        reason: weir_proto::h1::status::reason(status).to_string(),
        minor: 1,
        headers,
    };
    (parts, chunked)
}

/// Chunked trailer lines (`name: value`) as an HTTP/2 trailer map; lines
/// that are not fields are dropped.
pub fn trailers(lines: &[Vec<u8>]) -> HeaderMap {
    let mut map = HeaderMap::new();
    for line in lines {
        let Some((name, value)) = split_field(line) else {
            continue;
        };
        let name = name.to_ascii_lowercase();
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
