//! The fields that decide where a message ends, and where a request goes,
//! read exactly by RFC 9110/9112 so that no server behind weir can read
//! them differently: `Content-Length` (1*DIGIT, identical repeats merged),
//! `Transfer-Encoding` (a token list whose last is `chunked`), one `Host`,
//! and the request target's form. Optional whitespace is SP and HTAB only:
//! no value ever meets a trim that knows Unicode.

use super::{H1Error, Header};

/// Optional whitespace (RFC 9110 §5.6.3) removed from both ends.
pub(super) fn trim_ows(v: &[u8]) -> &[u8] {
    let start = v.iter().position(|&b| b != b' ' && b != b'\t');
    let Some(start) = start else { return &[] };
    let end = v
        .iter()
        .rposition(|&b| b != b' ' && b != b'\t')
        .unwrap_or(start);
    v.get(start..=end).unwrap_or_default()
}

/// The elements of a comma-separated list, each without its optional
/// whitespace (empty elements kept: callers decide).
fn elements(v: &[u8]) -> impl Iterator<Item = &[u8]> {
    v.split(|&b| b == b',').map(trim_ows)
}

/// Which of the fields the framing and connection rules read a head
/// holds, found in one pass: a rule whose field is absent is skipped
/// (most heads hold two or three of them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Names(u8);

impl Names {
    pub(super) const HOST: u8 = 1;
    pub(super) const CONTENT_LENGTH: u8 = 2;
    pub(super) const TRANSFER_ENCODING: u8 = 4;
    pub(super) const CONNECTION: u8 = 8;
    pub(super) const UPGRADE: u8 = 16;
    pub(super) const TE: u8 = 32;
    pub(super) const EXPECT: u8 = 64;

    pub(super) fn of(headers: &[Header]) -> Names {
        let mut bits = 0;
        for h in headers {
            let n = h.name_bytes();
            let (bit, want): (u8, &[u8]) = match n.len() {
                2 => (Self::TE, b"te"),
                4 => (Self::HOST, b"host"),
                6 => (Self::EXPECT, b"expect"),
                7 => (Self::UPGRADE, b"upgrade"),
                10 => (Self::CONNECTION, b"connection"),
                14 => (Self::CONTENT_LENGTH, b"content-length"),
                17 => (Self::TRANSFER_ENCODING, b"transfer-encoding"),
                _ => continue,
            };
            if super::head::eq_ignore_case(n, want) {
                bits |= bit;
            }
        }
        Names(bits)
    }

    /// Holds a field of `name` (one of the constants).
    pub(super) fn has(self, name: u8) -> bool {
        self.0 & name != 0
    }
}

/// `tchar` of RFC 9110 §5.6.2.
pub(super) fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// A `token`: one or more `tchar`.
pub(super) fn is_token(v: &[u8]) -> bool {
    !v.is_empty() && v.iter().all(|&b| is_tchar(b))
}

/// The message's length from its `Content-Length` fields, and whether
/// they are already in canonical form (one field, one value). Identical
/// values, repeated in fields or within one list, are one; different
/// values, an empty value, a sign or any byte but a digit are errors.
pub(super) fn content_length(headers: &[Header]) -> Result<Option<(u64, bool)>, &'static str> {
    let mut found: Option<u64> = None;
    let mut values = 0usize;
    for h in headers.iter().filter(|h| h.is("content-length")) {
        for part in elements(h.value()) {
            if part.is_empty() || part.len() > 19 || !part.iter().all(u8::is_ascii_digit) {
                return Err("invalid Content-Length");
            }
            let n = part.iter().fold(0u64, |n, &d| n * 10 + u64::from(d - b'0'));
            match found {
                Some(f) if f != n => return Err("several different Content-Length values"),
                _ => found = Some(n),
            }
            values += 1;
        }
    }
    Ok(found.map(|n| (n, values == 1)))
}

/// Keeps one `Content-Length` field, with value `n`, where the first was.
pub(super) fn set_single_content_length(headers: &mut Vec<Header>, n: u64) {
    set_single(headers, "content-length", n.to_string().as_bytes());
}

/// Replaces every field `name` by one with `value`, at the first one's
/// place and with its spelling of the name.
fn set_single(headers: &mut Vec<Header>, name: &str, value: &[u8]) {
    let Some(first) = headers.iter().position(|h| h.is(name)) else {
        return;
    };
    if let Some(h) = headers.get_mut(first) {
        h.set_value(value);
    }
    let mut i = 0;
    headers.retain(|h| {
        i += 1;
        i - 1 == first || !h.is(name)
    });
}

/// What a request's `Transfer-Encoding` fields say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RequestCoding {
    /// No `Transfer-Encoding` field.
    Absent,
    /// `chunked` alone; `canonical` when it is one field that says exactly
    /// `chunked`.
    Chunked { canonical: bool },
}

/// Reads a request's transfer codings. Empty elements at the end of the
/// list are ignored (haproxy 2.6 accepts `chunked,`). The last coding must
/// be `chunked`, once (400 otherwise); weir, as haproxy 2.6, applies no
/// other coding to requests, so one before it is a 422. An element that is
/// not a token (a parameter, non-ASCII whitespace) is a 400.
pub(super) fn request_coding(headers: &[Header]) -> Result<RequestCoding, H1Error> {
    let mut fields = headers.iter().filter(|h| h.is("transfer-encoding"));
    let Some(first) = fields.next() else {
        return Ok(RequestCoding::Absent);
    };
    let canonical = first.value() == b"chunked" && fields.next().is_none();
    let mut list: Vec<&[u8]> = headers
        .iter()
        .filter(|h| h.is("transfer-encoding"))
        .flat_map(|h| elements(h.value()))
        .collect();
    while list.last().is_some_and(|e| e.is_empty()) {
        list.pop();
    }
    let bad = H1Error::BadRequest;
    let Some(last) = list.pop() else {
        return Err(bad("empty Transfer-Encoding"));
    };
    if !last.eq_ignore_ascii_case(b"chunked") {
        return Err(bad("the last transfer coding is not chunked"));
    }
    for c in &list {
        if c.eq_ignore_ascii_case(b"chunked") {
            return Err(bad("chunked applied more than once"));
        }
        if !c.is_empty() && !is_token(c) {
            return Err(bad("invalid transfer coding"));
        }
    }
    if !list.is_empty() {
        return Err(H1Error::Unprocessable(
            "a transfer coding other than chunked",
        ));
    }
    Ok(RequestCoding::Chunked { canonical })
}

/// Keeps one `Transfer-Encoding: chunked` field where the first was.
pub(super) fn set_single_chunked(headers: &mut Vec<Header>) {
    set_single(headers, "transfer-encoding", b"chunked");
}

/// Reads a response's transfer codings: `Some(true)` when `chunked` is
/// last (once), `Some(false)` when the body then runs until the server
/// closes, `None` without the field. An element that is not a token, or
/// `chunked` before the last, is an error.
pub(super) fn response_chunked(headers: &[Header]) -> Result<Option<bool>, &'static str> {
    let mut list: Vec<&[u8]> = Vec::new();
    let mut any = false;
    for h in headers.iter().filter(|h| h.is("transfer-encoding")) {
        any = true;
        list.extend(elements(h.value()).filter(|e| !e.is_empty()));
    }
    if !any {
        return Ok(None);
    }
    for (i, c) in list.iter().enumerate() {
        let name = c.split(|&b| b == b';').next().map(trim_ows).unwrap_or(c);
        if !is_token(name) {
            return Err("invalid transfer coding");
        }
        if name.eq_ignore_ascii_case(b"chunked") && (i + 1 != list.len() || name.len() != c.len()) {
            return Err("chunked applied before the last coding");
        }
    }
    Ok(Some(
        list.last()
            .is_some_and(|c| c.eq_ignore_ascii_case(b"chunked")),
    ))
}

/// Keeps of a request's `TE` fields (hop-by-hop) only what a server may
/// use: one `TE: trailers` when `trailers` is listed, without parameters;
/// nothing otherwise (as haproxy 2.6 does). Returns whether the fields
/// changed.
pub(super) fn te_trailers_only(headers: &mut Vec<Header>) -> bool {
    let mut fields = headers.iter().filter(|h| h.is("te"));
    let Some(first) = fields.next() else {
        return false;
    };
    if first.value() == b"trailers" && fields.next().is_none() {
        return false;
    }
    let trailers = headers
        .iter()
        .filter(|h| h.is("te"))
        .flat_map(|h| elements(h.value()))
        .any(|e| e.eq_ignore_ascii_case(b"trailers"));
    if trailers {
        set_single(headers, "te", b"trailers");
    } else {
        headers.retain(|h| !h.is("te"));
    }
    true
}

/// The `Host` fields: identical repeats are one (the first is kept, and
/// the return value says whether others were removed); different values
/// are an error.
pub(super) fn single_host(headers: &mut Vec<Header>) -> Result<bool, &'static str> {
    let mut hosts = headers.iter().filter(|h| h.is("host"));
    let Some(first) = hosts.next() else {
        return Ok(false);
    };
    let mut repeated = false;
    for h in hosts {
        if h.value() != first.value() {
            return Err("several different Host fields");
        }
        repeated = true;
    }
    if repeated {
        let v = first.value().to_vec();
        set_single(headers, "host", &v);
    }
    Ok(repeated)
}

/// The form of a request target (RFC 9112 §3.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Target<'a> {
    /// `/path?query`
    Origin,
    /// `scheme://authority/path?query`: the scheme, and where the
    /// authority (without userinfo) is in the target.
    Absolute {
        scheme: &'a str,
        authority: std::ops::Range<usize>,
    },
    /// `host:port`, for CONNECT.
    Authority,
    /// `*`
    Asterisk,
}

/// A target byte outside visible ASCII.
const INVISIBLE: u8 = 1;
/// A visible byte RFC 3986 leaves out of URIs.
const EXCLUDED: u8 = 2;
/// `#`: a fragment.
const FRAGMENT: u8 = 4;

/// The kind of each byte in a request target (0: an ordinary one).
// Indexes are checked when the constant is built: a wrong one fails the build.
#[allow(clippy::indexing_slicing)]
const TARGET_BYTES: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        t[b] = if b < 0x21 || b > 0x7e {
            INVISIBLE
        } else if b == b'#' as usize {
            FRAGMENT
        } else {
            0
        };
        b += 1;
    }
    let excluded = b"\"<>\\^`{|}";
    let mut i = 0;
    while i < excluded.len() {
        t[excluded[i] as usize] = EXCLUDED;
        i += 1;
    }
    t
};

/// Reads the target of a request with `method`: visible ASCII only, none
/// of the characters RFC 3986 leaves out and no fragment (unless
/// `relaxed_target`), and one of the four forms (authority form for
/// CONNECT only).
pub(super) fn target<'a>(
    method: &str,
    uri: &'a str,
    relaxed_target: bool,
) -> Result<Target<'a>, &'static str> {
    // One look at each byte (targets can be long): what kinds it holds.
    let kinds = uri.bytes().fold(0u8, |k, b| {
        k | TARGET_BYTES
            .get(usize::from(b))
            .copied()
            .unwrap_or(INVISIBLE)
    });
    if kinds & INVISIBLE != 0 || !relaxed_target && kinds & EXCLUDED != 0 {
        return Err("invalid character in the request target");
    }
    if !relaxed_target && kinds & FRAGMENT != 0 {
        return Err("fragment in the request target");
    }
    if method == "CONNECT" {
        return Ok(Target::Authority);
    }
    if uri.starts_with('/') {
        return Ok(Target::Origin);
    }
    if uri == "*" {
        return Ok(Target::Asterisk);
    }
    let Some((scheme, rest)) = uri.split_once("://") else {
        return Err("invalid request target");
    };
    let scheme_ok = scheme
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic())
        && scheme
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b));
    if !scheme_ok {
        return Err("invalid scheme in the request target");
    }
    let start = scheme.len() + 3;
    let end = start + rest.find(['/', '?']).unwrap_or(rest.len());
    let start = uri[start..end]
        .rfind('@')
        .map_or(start, |at| start + at + 1);
    if start == end {
        return Err("empty authority in the request target");
    }
    Ok(Target::Absolute {
        scheme,
        authority: start..end,
    })
}
