//! FastCGI 1.0 records as a Responder's client writes and reads them:
//! record headers, name-value pairs, `FCGI_BEGIN_REQUEST` and
//! `FCGI_END_REQUEST` bodies, and the CGI response head an application
//! writes first on its `FCGI_STDOUT` stream (RFC 3875 §6.3).

use thiserror::Error;

/// The protocol version every record carries.
pub const VERSION: u8 = 1;
/// A record header's size.
pub const HEADER_LEN: usize = 8;
/// The most content one record holds.
pub const MAX_CONTENT: usize = 0xffff;

/// Record types (§8).
pub mod kind {
    pub const BEGIN_REQUEST: u8 = 1;
    pub const ABORT_REQUEST: u8 = 2;
    pub const END_REQUEST: u8 = 3;
    pub const PARAMS: u8 = 4;
    pub const STDIN: u8 = 5;
    pub const STDOUT: u8 = 6;
    pub const STDERR: u8 = 7;
    pub const GET_VALUES: u8 = 9;
    pub const GET_VALUES_RESULT: u8 = 10;
    pub const UNKNOWN_TYPE: u8 = 11;
}

/// The Responder role of `FCGI_BEGIN_REQUEST`.
pub const ROLE_RESPONDER: u16 = 1;
/// `FCGI_KEEP_CONN`: the application keeps the connection after the
/// request.
pub const KEEP_CONN: u8 = 1;

/// What makes bytes from an application unreadable.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum FcgiError {
    #[error("FastCGI record of version {0}")]
    Version(u8),
    #[error("truncated FastCGI name-value pair")]
    Pair,
    #[error("FastCGI end-request body of {0} bytes")]
    EndRequest(usize),
    #[error("invalid CGI response header: {0}")]
    Head(&'static str),
}

/// One record, borrowed from the bytes it was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record<'a> {
    pub kind: u8,
    pub id: u16,
    pub content: &'a [u8],
}

/// Appends one record (`content` at most [`MAX_CONTENT`] bytes), without
/// padding.
pub fn push_record(out: &mut Vec<u8>, kind: u8, id: u16, content: &[u8]) {
    let len = content.len().min(MAX_CONTENT);
    let [id_hi, id_lo] = id.to_be_bytes();
    let [len_hi, len_lo] = (len as u16).to_be_bytes();
    out.extend_from_slice(&[VERSION, kind, id_hi, id_lo, len_hi, len_lo, 0, 0]);
    out.extend_from_slice(content.get(..len).unwrap_or_default());
}

/// Appends `data` on a stream (`FCGI_PARAMS`, `FCGI_STDIN`) in records of
/// at most [`MAX_CONTENT`] bytes; nothing for no data (an empty record
/// ends a stream: see [`push_end`]).
pub fn push_stream(out: &mut Vec<u8>, kind: u8, id: u16, data: &[u8]) {
    for part in data.chunks(MAX_CONTENT) {
        push_record(out, kind, id, part);
    }
}

/// Appends the empty record that ends a stream.
pub fn push_end(out: &mut Vec<u8>, kind: u8, id: u16) {
    push_record(out, kind, id, &[]);
}

/// Appends `FCGI_BEGIN_REQUEST` for the Responder role.
pub fn push_begin(out: &mut Vec<u8>, id: u16, keep_conn: bool) {
    let [r_hi, r_lo] = ROLE_RESPONDER.to_be_bytes();
    let flags = if keep_conn { KEEP_CONN } else { 0 };
    push_record(
        out,
        kind::BEGIN_REQUEST,
        id,
        &[r_hi, r_lo, flags, 0, 0, 0, 0, 0],
    );
}

/// Appends a pair's length: one byte below 128, else four with the top
/// bit set.
fn push_len(out: &mut Vec<u8>, n: usize) {
    if n < 0x80 {
        out.push(n as u8);
    } else {
        let n = (n.min(0x7fff_ffff) as u32) | 0x8000_0000;
        out.extend_from_slice(&n.to_be_bytes());
    }
}

/// Appends one name-value pair (§3.4).
pub fn push_pair(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    push_len(out, name.len());
    push_len(out, value.len());
    out.extend_from_slice(name);
    out.extend_from_slice(value);
}

/// Reads a pair's length at the start of `b`: the length and its size.
fn read_len(b: &[u8]) -> Result<(usize, usize), FcgiError> {
    match b {
        [n, ..] if n & 0x80 == 0 => Ok((usize::from(*n), 1)),
        [a, b1, c, d, ..] => Ok(((u32::from_be_bytes([a & 0x7f, *b1, *c, *d])) as usize, 4)),
        _ => Err(FcgiError::Pair),
    }
}

/// A name and its value.
pub type Pair<'a> = (&'a [u8], &'a [u8]);

/// The name-value pairs of a record's content.
pub fn pairs(mut b: &[u8]) -> Result<Vec<Pair<'_>>, FcgiError> {
    let mut out = Vec::new();
    while !b.is_empty() {
        let (nl, a) = read_len(b)?;
        let (vl, c) = read_len(b.get(a..).unwrap_or_default())?;
        let rest = b.get(a + c..).unwrap_or_default();
        let name = rest.get(..nl).ok_or(FcgiError::Pair)?;
        let value = rest.get(nl..nl + vl).ok_or(FcgiError::Pair)?;
        out.push((name, value));
        b = rest.get(nl + vl..).unwrap_or_default();
    }
    Ok(out)
}

/// The record at the start of `buf` and the bytes it takes (with its
/// padding); `None` until it is whole.
pub fn parse_record(buf: &[u8]) -> Result<Option<(Record<'_>, usize)>, FcgiError> {
    let Some(&[version, kind, id_hi, id_lo, len_hi, len_lo, pad, _]) = buf.get(..HEADER_LEN) else {
        return Ok(None);
    };
    if version != VERSION {
        return Err(FcgiError::Version(version));
    }
    let len = usize::from(u16::from_be_bytes([len_hi, len_lo]));
    let total = HEADER_LEN + len + usize::from(pad);
    let Some(content) = buf.get(HEADER_LEN..HEADER_LEN + len) else {
        return Ok(None);
    };
    if buf.len() < total {
        return Ok(None);
    }
    let id = u16::from_be_bytes([id_hi, id_lo]);
    Ok(Some((Record { kind, id, content }, total)))
}

/// `FCGI_END_REQUEST`'s body: the application's exit status and the
/// protocol status (0 for a request completed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EndRequest {
    pub app_status: u32,
    pub protocol_status: u8,
}

/// Reads an `FCGI_END_REQUEST` body.
pub fn end_request(content: &[u8]) -> Result<EndRequest, FcgiError> {
    match content {
        [a, b, c, d, p, _, _, _] => Ok(EndRequest {
            app_status: u32::from_be_bytes([*a, *b, *c, *d]),
            protocol_status: *p,
        }),
        _ => Err(FcgiError::EndRequest(content.len())),
    }
}

/// The CGI response head: the status (from `Status:`, 302 for a
/// `Location:` alone, else 200), its reason, and the other fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CgiHead {
    pub status: u16,
    pub reason: String,
    pub headers: Vec<(String, Vec<u8>)>,
}

/// The most fields a CGI head may have.
const MAX_FIELDS: usize = 128;

/// Parses the CGI head at the start of `buf` (lines ending in LF or CR
/// LF, up to an empty line): the head and the bytes it takes, `None`
/// until it is whole.
pub fn parse_cgi_head(buf: &[u8]) -> Result<Option<(CgiHead, usize)>, FcgiError> {
    let mut fields = [httparse::EMPTY_HEADER; MAX_FIELDS];
    let (used, parsed) = match httparse::parse_headers(buf, &mut fields) {
        Ok(httparse::Status::Complete(c)) => c,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(_) => return Err(FcgiError::Head("malformed field")),
    };
    let mut head = CgiHead {
        status: 200,
        reason: String::new(),
        headers: Vec::with_capacity(parsed.len()),
    };
    let mut status = None;
    for f in parsed {
        if f.name.eq_ignore_ascii_case("status") {
            status = Some(status_line(f.value)?);
        } else {
            head.headers.push((f.name.to_string(), f.value.to_vec()));
        }
    }
    let location = head
        .headers
        .iter()
        .any(|(n, _)| n.eq_ignore_ascii_case("location"));
    let (code, reason) = status.unwrap_or_else(|| {
        if location {
            (302, String::new())
        } else {
            (200, String::new())
        }
    });
    head.status = code;
    head.reason = reason;
    Ok(Some((head, used)))
}

/// `Status: <3 digits> [<reason>]`.
fn status_line(v: &[u8]) -> Result<(u16, String), FcgiError> {
    let s = std::str::from_utf8(v).map_err(|_| FcgiError::Head("status not text"))?;
    let s = s.trim();
    let (code, reason) = s.split_once(' ').unwrap_or((s, ""));
    match code.parse::<u16>() {
        Ok(c) if code.len() == 3 && (100..=999).contains(&c) => Ok((c, reason.trim().to_string())),
        _ => Err(FcgiError::Head("bad status")),
    }
}

#[cfg(test)]
#[path = "fcgi_tests.rs"]
mod tests;
