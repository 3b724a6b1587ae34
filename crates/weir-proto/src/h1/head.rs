//! Request and response heads on `httparse`, with weir's limits and the
//! framing decision of RFC 9112 §6.
// Indexing still to be made checked (`get`) here: every index is within a length httparse returned.
#![allow(clippy::indexing_slicing)]

use super::framing::{self, Names};
use super::{authority, Framing, H1Error};
use std::mem::MaybeUninit;

/// Size limits (HAProxy: `tune.bufsize`, `tune.http.maxhdr`).
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_head: usize,
    pub max_headers: usize,
    /// `option accept-invalid-http-request`: a request target may carry a
    /// fragment (`#…`) and the characters RFC 3986 leaves out
    /// (`"<>\^`{|}`), as haproxy then lets them through.
    pub relaxed_target: bool,
    /// `h1-accept-payload-with-any-method`: an HTTP/1.0 GET, HEAD or
    /// DELETE may carry a body (haproxy answers 413 otherwise: servers of
    /// that age may not read it, a smuggling risk).
    pub any_method_payload: bool,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_head: 16384,
            max_headers: 101,
            relaxed_target: false,
            any_method_payload: false,
        }
    }
}

/// One header field as received: its name and its value, kept inside the
/// field when they are short (most are: no allocation) and in one
/// allocation otherwise.
#[derive(Clone)]
pub struct Header {
    raw: Raw,
}

/// The bytes of a name and a value that fit in a [`Header`] itself.
const INLINE: usize = 45;

/// A field's bytes: the name's, then the value's; `split` is where the
/// name ends.
#[derive(Clone)]
enum Raw {
    Inline {
        len: u8,
        split: u8,
        bytes: [u8; INLINE],
    },
    Heap {
        split: usize,
        bytes: Box<[u8]>,
    },
}

impl Header {
    pub fn new(name: &str, value: &[u8]) -> Header {
        let len = name.len() + value.len();
        if len <= INLINE {
            let mut bytes = [0u8; INLINE];
            bytes[..name.len()].copy_from_slice(name.as_bytes());
            bytes[name.len()..len].copy_from_slice(value);
            // Both fit in a u8: len <= INLINE.
            let raw = Raw::Inline {
                len: len as u8,
                split: name.len() as u8,
                bytes,
            };
            return Header { raw };
        }
        let mut bytes = Vec::with_capacity(len);
        bytes.extend_from_slice(name.as_bytes());
        bytes.extend_from_slice(value);
        Header {
            raw: Raw::Heap {
                split: name.len(),
                bytes: bytes.into_boxed_slice(),
            },
        }
    }

    /// The name's bytes and the value's.
    fn parts(&self) -> (&[u8], &[u8]) {
        let (all, split) = match &self.raw {
            Raw::Inline { len, split, bytes } => (&bytes[..usize::from(*len)], usize::from(*split)),
            Raw::Heap { split, bytes } => (&bytes[..], *split),
        };
        all.split_at(split)
    }

    /// The name as it came (HTTP/1.1) or lower-cased (HTTP/2).
    pub fn name(&self) -> &str {
        // Always UTF-8: `new` takes the name as a `str`.
        std::str::from_utf8(self.parts().0).unwrap_or_default()
    }

    /// The name's bytes (no UTF-8 check: for writing it out).
    pub fn name_bytes(&self) -> &[u8] {
        self.parts().0
    }

    /// Whether the name is `name`, without case.
    pub fn is(&self, name: &str) -> bool {
        eq_ignore_case(self.parts().0, name.as_bytes())
    }

    pub fn value(&self) -> &[u8] {
        self.parts().1
    }

    pub fn set_value(&mut self, value: &[u8]) {
        *self = Header::new(self.name(), value);
    }

    /// Spells the name `name` (the same name in another case).
    pub fn set_name(&mut self, name: &str) {
        *self = Header::new(name, self.value());
    }
}

/// `a` and `b` are the same ASCII without case: `eq_ignore_ascii_case`,
/// without its early exit and branch per byte, so the compiler compares
/// a short name (most field names are 4 to 20 bytes) in a few vector steps.
/// Names are compared many times a request (every `Host`, `Connection`,
/// `Content-Length` … lookup).
pub fn eq_ignore_case(a: &[u8], b: &[u8]) -> bool {
    let lower = |c: u8| c | (u8::from(c.wrapping_sub(b'A') < 26) << 5);
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .fold(0u8, |d, (&x, &y)| d | (lower(x) ^ lower(y)))
            == 0
}

impl PartialEq for Header {
    fn eq(&self, other: &Header) -> bool {
        self.parts() == other.parts()
    }
}

impl Eq for Header {}

impl std::fmt::Debug for Header {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Header")
            .field("name", &self.name())
            .field("value", &String::from_utf8_lossy(self.value()))
            .finish()
    }
}

/// A parsed request head.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestHead {
    pub method: String,
    pub uri: String,
    /// Minor version: 0 for HTTP/1.0, 1 for HTTP/1.1; weir marks a request
    /// that came over HTTP/2 with 2 (it goes to servers as HTTP/1.1).
    pub minor: u8,
    /// Headers in order; a Content-Length dropped by the framing rules is gone.
    pub headers: Vec<Header>,
    pub framing: Framing,
    /// The client wants the connection kept open after this exchange.
    pub keep_alive: bool,
    /// Both Transfer-Encoding and Content-Length were present, or chunks
    /// came over HTTP/1.0: close after the response.
    pub close_after: bool,
    pub expect_continue: bool,
    /// The head's bytes as received are exactly what weir would write for
    /// it, and may be forwarded as they are; otherwise weir writes it.
    pub canonical: bool,
    /// The `:scheme` of an HTTP/2 request when it is `http` or `https`
    /// (the log shows the request in absolute form with it).
    pub scheme: Option<&'static str>,
}

/// A parsed response head.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResponseHead {
    pub status: u16,
    pub reason: String,
    pub minor: u8,
    pub headers: Vec<Header>,
    pub framing: Framing,
    pub keep_alive: bool,
    /// As [`RequestHead::canonical`].
    pub canonical: bool,
}

fn headers_of(h: &[httparse::Header<'_>]) -> Vec<Header> {
    h.iter().map(|h| Header::new(h.name, h.value)).collect()
}

/// Whether a `Connection` field lists `token` (compared without case; no
/// allocation: it runs on every head).
pub fn connection_has(headers: &[Header], token: &str) -> bool {
    headers
        .iter()
        .filter(|h| h.is("connection"))
        .flat_map(|h| h.value().split(|&b| b == b','))
        .any(|t| eq_ignore_case(t.trim_ascii(), token.as_bytes()))
}

/// The tokens of a `Connection` field's `value` other than `close` and
/// `keep-alive`: what haproxy's HTTP/1 reader leaves of the field (no
/// allocation).
pub fn other_connection_tokens(value: &[u8]) -> impl Iterator<Item = &[u8]> {
    value
        .split(|&b| b == b',')
        .map(<[u8]>::trim_ascii)
        .filter(|t| {
            !t.is_empty()
                && !t.eq_ignore_ascii_case(b"close")
                && !t.eq_ignore_ascii_case(b"keep-alive")
        })
}

/// Which of `tokens` (up to 8) the `Connection` fields list, as bits (bit
/// `i` for `tokens[i]`), in one pass over the fields.
pub fn connection_lists(headers: &[Header], tokens: &[&str]) -> u8 {
    let mut found = 0u8;
    for h in headers.iter().filter(|h| h.is("connection")) {
        for t in h.value().split(|&b| b == b',') {
            let t = t.trim_ascii();
            for (i, want) in tokens.iter().enumerate().take(8) {
                if eq_ignore_case(t, want.as_bytes()) {
                    found |= 1 << i;
                }
            }
        }
    }
    found
}

fn map_err(e: httparse::Error, request: bool) -> H1Error {
    let what = match e {
        httparse::Error::HeaderName => "invalid character in a header name",
        httparse::Error::HeaderValue => "invalid character in a header value",
        httparse::Error::NewLine => "invalid line ending",
        httparse::Error::Status => "invalid status",
        httparse::Error::Token => "invalid token",
        httparse::Error::TooManyHeaders => return H1Error::HeadersTooLarge,
        httparse::Error::Version => "invalid version",
    };
    if request {
        H1Error::BadRequest(what)
    } else {
        H1Error::BadResponse(what)
    }
}

/// A request head over the limit: 414 when the request line alone does not
/// fit, 431 otherwise.
fn too_large(buf: &[u8], limits: &Limits) -> H1Error {
    let line = buf.iter().position(|&b| b == b'\n').unwrap_or(buf.len());
    if line >= limits.max_head {
        H1Error::UriTooLong
    } else {
        H1Error::HeadersTooLarge
    }
}

/// When a head is still incomplete: too big already?
fn incomplete(buf: &[u8], limits: &Limits, request: bool) -> Result<Option<()>, H1Error> {
    if buf.len() < limits.max_head {
        return Ok(None);
    }
    if request {
        Err(too_large(buf, limits))
    } else {
        Err(H1Error::BadResponse("response head too large"))
    }
}

/// Header slots kept on the stack: enough for the default
/// `tune.http.maxhdr` (101), so a parse neither allocates nor zeroes them.
const STACK_HEADERS: usize = 128;

/// `max` header slots for httparse: from `stack` when they fit, otherwise
/// from `heap` (a larger `tune.http.maxhdr`).
fn header_slots<'s, 'b>(
    stack: &'s mut [MaybeUninit<httparse::Header<'b>>; STACK_HEADERS],
    heap: &'s mut Vec<MaybeUninit<httparse::Header<'b>>>,
    max: usize,
) -> &'s mut [MaybeUninit<httparse::Header<'b>>] {
    if max <= STACK_HEADERS {
        &mut stack[..max]
    } else {
        heap.resize_with(max, MaybeUninit::uninit);
        heap
    }
}

/// Where slice `part` of `buf` starts in it (both from one parse).
fn offset(buf: &[u8], part: &[u8]) -> usize {
    (part.as_ptr() as usize).wrapping_sub(buf.as_ptr() as usize)
}

/// Whether the header lines from `pos` to the end of `head` are exactly
/// `name: value\r\n` each, then `\r\n`: what weir would write for them.
fn canonical_fields(head: &[u8], mut pos: usize, fields: &[httparse::Header<'_>]) -> bool {
    for h in fields {
        if offset(head, h.name.as_bytes()) != pos {
            return false;
        }
        pos += h.name.len();
        if head.get(pos..pos + 2) != Some(b": ")
            || !h.value.is_empty() && offset(head, h.value) != pos + 2
        {
            return false;
        }
        pos += 2 + h.value.len();
        if head.get(pos..pos + 2) != Some(b"\r\n") {
            return false;
        }
        pos += 2;
    }
    head.get(pos..) == Some(b"\r\n")
}

/// Whether a request head's bytes are exactly what weir would write for
/// it (single spaces, CRLF line ends, one space after each colon): only
/// then may they be forwarded as received.
fn canonical_request(head: &[u8], req: &httparse::Request<'_, '_>) -> bool {
    let (Some(method), Some(path)) = (req.method, req.path) else {
        return false;
    };
    let pos = method.len();
    if head.get(pos) != Some(&b' ') || offset(head, path.as_bytes()) != pos + 1 {
        return false;
    }
    let pos = pos + 1 + path.len();
    let line_end: &[u8] = if req.version == Some(0) {
        b" HTTP/1.0\r\n"
    } else {
        b" HTTP/1.1\r\n"
    };
    head.get(pos..pos + line_end.len()) == Some(line_end)
        && canonical_fields(head, pos + line_end.len(), req.headers)
}

/// The same for a response head: `HTTP/1.x NNN reason\r\n`, then fields.
fn canonical_response(head: &[u8], res: &httparse::Response<'_, '_>) -> bool {
    let Some(reason) = res.reason else {
        return false;
    };
    if head.get(8) != Some(&b' ')
        || head.get(12) != Some(&b' ')
        || reason.is_empty()
        || offset(head, reason.as_bytes()) != 13
    {
        return false;
    }
    let pos = 13 + reason.len();
    head.get(pos..pos + 2) == Some(b"\r\n") && canonical_fields(head, pos + 2, res.headers)
}

/// The request's target form checked, and the authority it names against
/// `Host`: they must agree. Default ports are removed from both, as
/// haproxy 2.6 does. Returns whether the target or `Host` changed.
fn check_authority(
    method: &str,
    uri: &mut String,
    headers: &mut [Header],
    relaxed_target: bool,
) -> Result<bool, H1Error> {
    let bad = H1Error::BadRequest;
    let (range, default) = match framing::target(method, uri, relaxed_target).map_err(bad)? {
        framing::Target::Absolute { scheme, authority } => {
            (authority, authority::scheme_port(scheme))
        }
        framing::Target::Authority => {
            let default = authority::connect_port(uri.as_bytes()).map_err(bad)?;
            (0..0, default)
        }
        framing::Target::Origin | framing::Target::Asterisk => return Ok(false),
    };
    // CONNECT's target is its authority, and keeps its port.
    let named = if range.is_empty() {
        uri.as_bytes()
    } else {
        &uri.as_bytes()[range.clone()]
    };
    let mut host = headers.iter_mut().find(|h| h.is("host"));
    if let Some(h) = &host {
        if !authority::same(default, named, h.value()) {
            return Err(bad("the target's authority and Host differ"));
        }
    }
    let mut changed = false;
    // An absolute target's default or empty port goes, and then Host's
    // too; CONNECT's Host loses only a default port written out.
    let absolute = !range.is_empty();
    let stripped_target = authority::without_default_port(named, default, true)
        .filter(|_| absolute)
        .map(|v| String::from_utf8_lossy(&v).into_owned());
    if let Some(h) = &mut host {
        if absolute == stripped_target.is_some() {
            if let Some(v) = authority::without_default_port(h.value(), default, absolute) {
                h.set_value(&v);
                changed = true;
            }
        }
    }
    if let Some(v) = stripped_target {
        uri.replace_range(range, &v);
        changed = true;
    }
    Ok(changed)
}

/// Parses a request head at the start of `buf`; returns it and the bytes
/// it used. Errors carry the status to answer.
pub fn parse_request(buf: &[u8], limits: &Limits) -> Result<Option<(RequestHead, usize)>, H1Error> {
    let mut stack = [const { MaybeUninit::uninit() }; STACK_HEADERS];
    let mut heap = Vec::new();
    let slots = header_slots(&mut stack, &mut heap, limits.max_headers);
    let mut req = httparse::Request::new(&mut []);
    let parsed = httparse::ParserConfig::default()
        .allow_multiple_spaces_in_request_line_delimiters(true)
        .parse_request_with_uninit_headers(&mut req, buf, slots);
    let used = match parsed {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return incomplete(buf, limits, true).map(|_| None),
        Err(e) => return Err(map_err(e, true)),
    };
    if used > limits.max_head {
        return Err(too_large(&buf[..used], limits));
    }
    if buf[..used].contains(&0) {
        return Err(H1Error::BadRequest("NUL byte in the request head"));
    }
    let canonical = canonical_request(&buf[..used], &req);
    let parts = RequestParts {
        method: req.method.unwrap_or("").to_string(),
        uri: req.path.unwrap_or("").to_string(),
        minor: req.version.unwrap_or(1),
        headers: headers_of(req.headers),
    };
    request_head(&mut { parts }, canonical, limits).map(|head| Some((head, used)))
}

/// A request as a decoder delivers it (HTTP/1.1's request line and fields,
/// or an HTTP/2 request's pseudo-headers and fields in HTTP/1.1 terms),
/// before the message rules apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestParts {
    pub method: String,
    /// Origin, absolute or authority form, or `*`.
    pub uri: String,
    pub minor: u8,
    pub headers: Vec<Header>,
}

impl RequestParts {
    /// How many bytes the request takes written as HTTP/1.1 (its head
    /// limit is `tune.bufsize` whatever version brought it).
    pub fn wire_len(&self) -> usize {
        let line = self.method.len() + 1 + self.uri.len() + " HTTP/1.1\r\n".len();
        let fields: usize = self
            .headers
            .iter()
            .map(|h| h.name_bytes().len() + 2 + h.value().len() + 2)
            .sum();
        line + fields + 2
    }
}

/// A request decoded from another syntax than HTTP/1.1 bytes (HTTP/2's
/// fields): the checks the HTTP/1.1 tokeniser makes on bytes — tokens for
/// the method and field names, visible characters in values (the optional
/// whitespace around them removed), the head size and field count limits —
/// then [`request_head`]. Such a head is never canonical: it is written.
pub fn decoded_request_head(
    parts: &mut RequestParts,
    limits: &Limits,
) -> Result<RequestHead, H1Error> {
    if parts.headers.len() > limits.max_headers {
        return Err(H1Error::HeadersTooLarge);
    }
    if !framing::is_token(parts.method.as_bytes()) {
        return Err(H1Error::BadRequest("invalid token"));
    }
    for h in parts.headers.iter_mut() {
        if !framing::is_token(h.name_bytes()) {
            return Err(H1Error::BadRequest("invalid character in a header name"));
        }
        let v = h.value();
        if v.iter().any(|&b| b != b'\t' && (b < b' ' || b == 0x7f)) {
            return Err(H1Error::BadRequest("invalid character in a header value"));
        }
        let trimmed = v.trim_ascii();
        if trimmed.len() != v.len() {
            let t = trimmed.to_vec();
            h.set_value(&t);
        }
    }
    let wire = parts.wire_len();
    if wire > limits.max_head {
        // Where the request line's `\n` would be, as `too_large` reads it.
        let newline = parts.method.len() + 1 + parts.uri.len() + " HTTP/1.1\r".len();
        return Err(if newline >= limits.max_head {
            H1Error::UriTooLong
        } else {
            H1Error::HeadersTooLarge
        });
    }
    request_head(parts, false, limits)
}

/// The request head the exchange works on, from a decoded request: one
/// `Host`, `TE` reduced to `trailers`, the target's authority checked
/// against `Host`, the framing of RFC 9112 §6 (or a tunnel for CONNECT),
/// keep-alive and `Expect: 100-continue`. Both HTTP/1.1 and HTTP/2 requests
/// pass through it. `canonical`: the received bytes may be forwarded as
/// they are, unless a rule here changed the head.
/// On an error, `parts` are left (maybe partly normalised) for the error
/// capture; on success they are taken.
pub fn request_head(
    parts: &mut RequestParts,
    mut canonical: bool,
    limits: &Limits,
) -> Result<RequestHead, H1Error> {
    let RequestParts {
        method,
        uri,
        minor,
        headers,
    } = parts;
    let (method, minor) = (&*method, *minor);
    // (The rules below remove or merge fields only of their own names.)
    let names = Names::of(headers);
    if names.has(Names::HOST) {
        canonical &= !framing::single_host(headers).map_err(H1Error::BadRequest)?;
    }
    if names.has(Names::TE) {
        canonical &= !framing::te_trailers_only(headers);
    }
    canonical &= !check_authority(method, uri, headers, limits.relaxed_target)?;
    let cl = match names.has(Names::CONTENT_LENGTH) {
        true => framing::content_length(headers).map_err(H1Error::BadRequest)?,
        false => None,
    };
    let coding = match names.has(Names::TRANSFER_ENCODING) {
        true => framing::request_coding(headers)?,
        false => framing::RequestCoding::Absent,
    };
    let mut close_after = false;
    let framing = match coding {
        framing::RequestCoding::Chunked {
            canonical: te_canonical,
        } => {
            if !te_canonical {
                framing::set_single_chunked(headers);
                canonical = false;
            }
            if cl.is_some() {
                headers.retain(|h| !h.is("content-length"));
                canonical = false;
                close_after = true;
            }
            // HTTP/1.0 knows no chunks: read them (as haproxy does), then
            // close, since the client cannot frame a next request the same
            // way (RFC 9112 §6.1).
            close_after |= minor == 0;
            Framing::Chunked
        }
        framing::RequestCoding::Absent => match cl {
            Some((n, single)) => {
                if !single {
                    framing::set_single_content_length(headers, n);
                    canonical = false;
                }
                if n == 0 {
                    Framing::None
                } else {
                    Framing::ContentLength(n)
                }
            }
            None => Framing::None,
        },
    };
    let framing = if method == "CONNECT" {
        Framing::Tunnel
    } else {
        framing
    };
    if minor == 0
        && !limits.any_method_payload
        && matches!(method.as_str(), "GET" | "HEAD" | "DELETE")
        && framing != Framing::None
    {
        return Err(H1Error::BodyNotAllowed);
    }
    // RFC 6455 §4.1: a WebSocket handshake carries its key (haproxy 2.6
    // answers 400 to one without).
    let connection = names.has(Names::CONNECTION);
    if connection
        && names.has(Names::UPGRADE)
        && websocket_upgrade(headers)
        && !headers.iter().any(|h| h.is("sec-websocket-key"))
    {
        return Err(H1Error::BadRequest(
            "a WebSocket upgrade without Sec-WebSocket-Key",
        ));
    }
    let keep_alive = if minor == 0 {
        connection && connection_has(headers, "keep-alive")
    } else {
        !(connection && connection_has(headers, "close"))
    };
    let expect_continue = minor == 1
        && names.has(Names::EXPECT)
        && headers
            .iter()
            .any(|h| h.is("expect") && h.value().eq_ignore_ascii_case(b"100-continue"));
    Ok(RequestHead {
        method: std::mem::take(&mut parts.method),
        uri: std::mem::take(&mut parts.uri),
        minor,
        headers: std::mem::take(&mut parts.headers),
        framing,
        keep_alive: keep_alive && !close_after,
        close_after,
        expect_continue,
        canonical,
        scheme: None,
    })
}

/// `Connection: upgrade` with `Upgrade: websocket`.
fn websocket_upgrade(headers: &[Header]) -> bool {
    connection_has(headers, "upgrade")
        && headers
            .iter()
            .any(|h| h.is("upgrade") && h.value().eq_ignore_ascii_case(b"websocket"))
}

/// Parses a response head to a request made with `method`.
pub fn parse_response(
    buf: &[u8],
    limits: &Limits,
    method: &str,
) -> Result<Option<(ResponseHead, usize)>, H1Error> {
    let mut stack = [const { MaybeUninit::uninit() }; STACK_HEADERS];
    let mut heap = Vec::new();
    let slots = header_slots(&mut stack, &mut heap, limits.max_headers);
    let mut res = httparse::Response::new(&mut []);
    let parsed =
        httparse::ParserConfig::default().parse_response_with_uninit_headers(&mut res, buf, slots);
    let used = match parsed {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return incomplete(buf, limits, false).map(|_| None),
        Err(e) => return Err(map_err(e, false)),
    };
    if buf[..used].contains(&0) {
        return Err(H1Error::BadResponse("NUL byte in the response head"));
    }
    let canonical = canonical_response(&buf[..used], &res);
    let status = res.code.unwrap_or(0);
    if status < 100 {
        // Three digits, but no class of RFC 9110 §15: nothing to relay.
        return Err(H1Error::BadResponse("invalid status"));
    }
    let parts = ResponseParts {
        status,
        reason: res.reason.unwrap_or("").to_string(),
        minor: res.version.unwrap_or(1),
        headers: headers_of(res.headers),
    };
    response_head(parts, method, canonical).map(|head| Some((head, used)))
}

/// A response as a decoder delivers it (HTTP/1.1's status line and
/// fields, or an HTTP/2 response's in HTTP/1.1 terms).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResponseParts {
    pub status: u16,
    pub reason: String,
    pub minor: u8,
    pub headers: Vec<Header>,
}

/// The response head the exchange works on, from a decoded response to a
/// request made with `method`: the framing of RFC 9112 §6.3
/// (Transfer-Encoding over Content-Length, bodiless statuses and HEAD, a
/// tunnel after 101 or a CONNECT's 2xx) and keep-alive.
pub fn response_head(
    parts: ResponseParts,
    method: &str,
    mut canonical: bool,
) -> Result<ResponseHead, H1Error> {
    let ResponseParts {
        status,
        reason,
        minor,
        mut headers,
    } = parts;
    let names = Names::of(&headers);
    let cl = match names.has(Names::CONTENT_LENGTH) {
        true => framing::content_length(&headers).map_err(H1Error::BadResponse)?,
        false => None,
    };
    let chunked = match names.has(Names::TRANSFER_ENCODING) {
        true => framing::response_chunked(&headers).map_err(H1Error::BadResponse)?,
        false => None,
    };
    if chunked.is_some() && cl.is_some() {
        // Transfer-Encoding wins (RFC 9112 §6.3): the length goes.
        headers.retain(|h| !h.is("content-length"));
        canonical = false;
    } else if let Some((n, false)) = cl {
        framing::set_single_content_length(&mut headers, n);
        canonical = false;
    }
    // RFC 6455 §4.2.2: a server switching to WebSocket proves it read the
    // key (haproxy 2.6 answers 502 to a 101 without the proof).
    if status == 101
        && websocket_upgrade(&headers)
        && !headers.iter().any(|h| h.is("sec-websocket-accept"))
    {
        return Err(H1Error::BadResponse(
            "a WebSocket 101 without Sec-WebSocket-Accept",
        ));
    }
    let framing = if status == 101 || (method == "CONNECT" && (200..300).contains(&status)) {
        Framing::Tunnel
    } else if method == "HEAD" || (100..200).contains(&status) || status == 204 || status == 304 {
        Framing::None
    } else {
        match chunked {
            Some(true) => Framing::Chunked,
            Some(false) => Framing::UntilClose,
            None => match cl {
                Some((0, _)) => Framing::None,
                Some((n, _)) => Framing::ContentLength(n),
                None => Framing::UntilClose,
            },
        }
    };
    let connection = names.has(Names::CONNECTION);
    let keep_alive = framing != Framing::UntilClose
        && if minor == 0 {
            connection && connection_has(&headers, "keep-alive")
        } else {
            !(connection && connection_has(&headers, "close"))
        };
    Ok(ResponseHead {
        status,
        reason,
        minor,
        headers,
        framing,
        keep_alive,
        canonical,
    })
}
