//! Request smuggling, tried as an attacker would: a table of hostile
//! requests sent to weir in front of strict recording origins (one per
//! case, so that whatever reaches an origin belongs to its case). Each
//! case asserts weir's answer, that nothing or exactly the expected number
//! of requests reached the origin, each in canonical form and readable
//! without ambiguity, and that the connection closes where it must. The
//! same table then runs through Debian's haproxy 2.6 (tests/run installs
//! it); every case where the two differ is printed, and the test fails
//! where weir forwards what haproxy refuses.

mod common;

use common::*;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What a strict origin made of the bytes it received.
#[derive(Default, Debug, Clone)]
struct Seen {
    /// Request heads, exactly as received.
    heads: Vec<Vec<u8>>,
    /// Bytes it could not read as a request: an ambiguity reached it.
    problems: Vec<String>,
    /// Every byte received, on all connections.
    bytes: usize,
}

/// Reads one CRLF-terminated line from `buf` at `at`.
fn line(buf: &[u8], at: usize) -> Option<(&[u8], usize)> {
    let end = buf.get(at..)?.windows(2).position(|w| w == b"\r\n")?;
    Some((&buf[at..at + end], at + end + 2))
}

/// A canonical head: CRLF line ends only, `token: value` fields with one
/// space after the colon and no surrounding whitespace, at most one Host,
/// one length field, never both framings. Returns what is wrong.
fn head_problem(head: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(head);
    // Each line with its CR; the empty piece after the last LF dropped.
    let body = head.strip_suffix(b"\r\n")?.strip_suffix(b"\n")?;
    let mut lines = body.split(|&b| b == b'\n');
    let first = lines.next().unwrap_or_default();
    let tchar = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
    let ok_line = |l: &[u8]| l.last() == Some(&b'\r') && !l[..l.len() - 1].contains(&b'\r');
    if !ok_line(first) || first.split(|&b| b == b' ').count() != 3 {
        return Some(format!("request line {text:?}"));
    }
    let (mut cl, mut te, mut host) = (0, 0, 0);
    for l in lines {
        if !ok_line(l) {
            return Some(format!("line end in {text:?}"));
        }
        let l = &l[..l.len() - 1];
        let Some(colon) = l.iter().position(|&b| b == b':') else {
            return Some(format!("field without colon in {text:?}"));
        };
        let (name, value) = (&l[..colon], &l[colon + 1..]);
        let v = value.strip_prefix(b" ").unwrap_or(b"\x00");
        if name.is_empty()
            || !name.iter().all(|&b| tchar(b))
            || v.first().is_some_and(|b| *b == b' ' || *b == b'\t')
            || v.last().is_some_and(|b| *b == b' ' || *b == b'\t')
        {
            return Some(format!("field layout in {text:?}"));
        }
        match name.to_ascii_lowercase().as_slice() {
            b"content-length" => cl += 1,
            b"transfer-encoding" => te += 1,
            b"host" => host += 1,
            _ => {}
        }
    }
    if cl > 1 || te > 1 || host > 1 || (cl == 1 && te == 1) {
        return Some(format!("framing fields in {text:?}"));
    }
    None
}

/// The value of field `name` in a head.
fn field<'h>(head: &'h [u8], name: &str) -> Option<&'h [u8]> {
    let mut at = 0;
    while let Some((l, next)) = line(head, at) {
        at = next;
        if let Some(colon) = l.iter().position(|&b| b == b':') {
            if l[..colon].eq_ignore_ascii_case(name.as_bytes()) {
                return Some(l[colon + 1..].trim_ascii());
            }
        }
    }
    None
}

/// Reads one request (strictly) from `buf`; `Ok(None)` when incomplete.
fn request(buf: &[u8]) -> Result<Option<(Vec<u8>, usize)>, String> {
    let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
        return Ok(None);
    };
    let head = &buf[..end + 4];
    if let Some(p) = head_problem(head) {
        return Err(p);
    }
    let mut at = end + 4;
    let te = field(head, "transfer-encoding");
    let cl = field(head, "content-length");
    if let Some(te) = te {
        if !te.eq_ignore_ascii_case(b"chunked") {
            return Err(format!("transfer coding {:?}", String::from_utf8_lossy(te)));
        }
        loop {
            let Some((l, next)) = line(buf, at) else {
                return Ok(None);
            };
            let size = l.split(|&b| b == b';').next().unwrap_or_default();
            let size = std::str::from_utf8(size)
                .ok()
                .and_then(|s| usize::from_str_radix(s, 16).ok())
                .ok_or_else(|| format!("chunk size {:?}", String::from_utf8_lossy(l)))?;
            at = next;
            if size == 0 {
                loop {
                    let Some((t, next)) = line(buf, at) else {
                        return Ok(None);
                    };
                    at = next;
                    if t.is_empty() {
                        return Ok(Some((head.to_vec(), at)));
                    }
                }
            }
            if buf.len() < at + size + 2 {
                return Ok(None);
            }
            if &buf[at + size..at + size + 2] != b"\r\n" {
                return Err("chunk data not followed by CRLF".into());
            }
            at += size + 2;
        }
    }
    let n: usize = match cl {
        Some(v) => std::str::from_utf8(v)
            .ok()
            .filter(|s| s.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("content-length {:?}", String::from_utf8_lossy(v)))?,
        None => 0,
    };
    if buf.len() < at + n {
        return Ok(None);
    }
    Ok(Some((head.to_vec(), at + n)))
}

/// A strict origin that records what it receives and answers each request
/// it can read with `200`; bytes it cannot read are recorded as problems.
fn recording_origin() -> (Server, Arc<Mutex<Seen>>) {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let s2 = seen.clone();
    let server = Server::start(move |mut c| {
        let _ = c.set_read_timeout(Some(Duration::from_secs(10)));
        let mut buf = Vec::new();
        let mut chunk = [0u8; 65536];
        loop {
            match request(&buf) {
                Ok(Some((head, used))) => {
                    s2.lock().unwrap().heads.push(head);
                    buf.drain(..used);
                    let ok = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
                    if c.write_all(ok).is_err() {
                        return;
                    }
                    continue;
                }
                Ok(None) => {}
                Err(p) => {
                    s2.lock().unwrap().problems.push(p);
                    return;
                }
            }
            match c.read(&mut chunk) {
                Ok(0) | Err(_) => {
                    if !buf.is_empty() {
                        let left = String::from_utf8_lossy(&buf).into_owned();
                        s2.lock()
                            .unwrap()
                            .problems
                            .push(format!("left unread: {left:?}"));
                    }
                    return;
                }
                Ok(n) => {
                    s2.lock().unwrap().bytes += n;
                    buf.extend_from_slice(&chunk[..n]);
                }
            }
        }
    });
    (server, seen)
}

/// What a case expects of weir.
#[derive(Clone, Copy, Debug)]
enum Want {
    /// This status, the connection closed, nothing reached the origin.
    Refused(u16),
    /// `n` requests reach the origin (each answered 200); `close`: the
    /// connection closes after them.
    Forwarded { n: usize, close: bool },
    /// `n` requests forwarded, then one refused with `status` (pipelined).
    ThenRefused { n: usize, status: u16 },
}

use Want::*;

const fn fwd(n: usize) -> Want {
    Forwarded { n, close: false }
}

const CLOSE1: Want = Forwarded { n: 1, close: true };

/// The hostile requests: name, bytes, what weir must do, and, for some, a
/// check of the one head the origin received.
type Check = Option<fn(&[u8]) -> bool>;

fn cases() -> Vec<(&'static str, Vec<u8>, Want, Check)> {
    let r = |s: &[u8]| s.to_vec();
    let one_cl5: Check = Some(|h| field(h, "content-length") == Some(b"5"));
    let chunked: Check = Some(|h| field(h, "transfer-encoding") == Some(b"chunked"));
    let one_host: Check = Some(|h| field(h, "host") == Some(b"a"));
    let x_b: Check = Some(|h| field(h, "x") == Some(b"b"));
    vec![
        // Transfer-Encoding padded with non-ASCII whitespace.
        ("te-nbsp-before", r(b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: \xc2\xa0chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n"), Refused(400), None),
        ("te-nbsp-after", r(b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\xc2\xa0\r\n\r\n0\r\n\r\n"), Refused(400), None),
        ("te-nel-before", r(b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: \xc2\x85chunked\r\n\r\n0\r\n\r\n"), Refused(400), None),
        ("te-ideographic-space", r(b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\xe3\x80\x80\r\n\r\n0\r\n\r\n"), Refused(400), None),
        ("cl-nbsp", r(b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: \xc2\xa05\r\n\r\nhello"), Refused(400), None),
        ("cl-vertical-tab", r(b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: \x0b5\r\n\r\nhello"), Refused(400), None),
        // Transfer codings.
        ("te-gzip-chunked", r(b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n"), Refused(422), None),
        ("te-identity-chunked", r(b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: identity, chunked\r\n\r\n0\r\n\r\n"), Refused(422), None),
        ("te-empty-element-first", r(b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: ,chunked\r\n\r\n0\r\n\r\n"), Refused(422), None),
        ("te-xchunked", r(b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: xchunked\r\n\r\n0\r\n\r\n"), Refused(400), None),
        ("te-chunked-param", r(b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked;q=1\r\n\r\n0\r\n\r\n"), Refused(400), None),
        ("te-chunked-gzip", r(b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, gzip\r\n\r\n0\r\n\r\n"), Refused(400), None),
        ("te-twice-one-field", r(b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, chunked\r\n\r\n0\r\n\r\n"), Refused(400), None),
        ("te-twice-two-fields", r(b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"), Refused(400), None),
        ("te-empty", r(b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: \r\n\r\n"), Refused(400), None),
        ("te-space-before-colon", r(b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding : chunked\r\n\r\n0\r\n\r\n"), Refused(400), None),
        ("te-upper-case", r(b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: CHUNKED\r\n\r\n0\r\n\r\n"), fwd(1), chunked),
        ("te-trailing-comma", r(b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked,\r\n\r\n0\r\n\r\n"), fwd(1), chunked),
        ("te-tab", r(b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding:\tchunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"), fwd(1), chunked),
        ("te-http10", r(b"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"), CLOSE1, chunked),
        // Both framings.
        ("cl-te-smuggled-get", r(b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: a\r\n\r\n"), CLOSE1, chunked),
        ("te-cl-smuggled-chunk", r(b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n8\r\nSMUGGLED\r\n0\r\n\r\n"), CLOSE1, chunked),
        ("cl-te-plain-body", r(b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\nhello"), Refused(400), None),
        // Content-Length.
        ("cl-list-same", r(b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5, 5\r\n\r\nhello"), fwd(1), one_cl5),
        ("cl-twice-same", r(b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello"), fwd(1), one_cl5),
        ("cl-twice-different", r(b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 5\r\n\r\nhello"), Refused(400), None),
        ("cl-list-different", r(b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3, 5\r\n\r\nhello"), Refused(400), None),
        ("cl-plus", r(b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: +5\r\n\r\nhello"), Refused(400), None),
        ("cl-minus", r(b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: -5\r\n\r\nhello"), Refused(400), None),
        ("cl-hex", r(b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0x5\r\n\r\nhello"), Refused(400), None),
        ("cl-empty", r(b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: \r\n\r\n"), Refused(400), None),
        ("cl-overflow", r(b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999999999999999\r\n\r\nhello"), Refused(400), None),
        ("cl-space-inside", r(b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5 5\r\n\r\nhello"), Refused(400), None),
        ("cl-tab-padded", r(b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length:\t5\t\r\n\r\nhello"), fwd(1), one_cl5),
        // Host and the target.
        ("host-twice-different", r(b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"), Refused(400), None),
        ("host-twice-same", r(b"GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n"), fwd(1), one_host),
        ("absolute-other-host", r(b"GET http://b/ HTTP/1.1\r\nHost: a\r\n\r\n"), Refused(400), None),
        ("absolute-http-port-443", r(b"GET http://a:443/ HTTP/1.1\r\nHost: a\r\n\r\n"), Refused(400), None),
        ("absolute-default-port", r(b"GET http://a:80/ HTTP/1.1\r\nHost: a\r\n\r\n"), fwd(1), None),
        ("absolute-https-default", r(b"GET https://a:443/ HTTP/1.1\r\nHost: a\r\n\r\n"), fwd(1), None),
        ("absolute-case", r(b"GET http://A/ HTTP/1.1\r\nHost: a\r\n\r\n"), fwd(1), None),
        ("fragment", r(b"GET /a#b HTTP/1.1\r\nHost: a\r\n\r\n"), Refused(400), None),
        ("authority-form-get", r(b"GET a:80 HTTP/1.1\r\nHost: a\r\n\r\n"), Refused(400), None),
        ("target-non-ascii", r(b"GET /a\xffb HTTP/1.1\r\nHost: a\r\n\r\n"), Refused(400), None),
        ("target-ctl", r(b"GET /a\x01b HTTP/1.1\r\nHost: a\r\n\r\n"), Refused(400), None),
        // Layout: written anew, never passed through.
        ("bare-lf-head", r(b"GET / HTTP/1.1\nHost: a\nX: b\n\n"), fwd(1), x_b),
        ("bare-lf-hides-te", r(b"POST / HTTP/1.1\r\nHost: a\r\nX: a\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"), fwd(1), chunked),
        ("two-spaces-request-line", r(b"GET  /  HTTP/1.1\r\nHost: a\r\n\r\n"), fwd(1), None),
        ("ows-tabs-and-trailing", r(b"GET / HTTP/1.1\r\nHost:\ta\r\nX:   b  \r\n\r\n"), fwd(1), x_b),
        ("no-space-after-colon", r(b"GET / HTTP/1.1\r\nHost:a\r\nX:b\r\n\r\n"), fwd(1), x_b),
        ("obs-fold", r(b"GET / HTTP/1.1\r\nHost: a\r\nX: a\r\n b\r\n\r\n"), Refused(400), None),
        ("obs-fold-te", r(b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding:\r\n chunked\r\n\r\n0\r\n\r\n"), Refused(400), None),
        ("bare-cr", r(b"GET / HTTP/1.1\r\nHost: a\rX: y\r\n\r\n"), Refused(400), None),
        ("cr-before-crlf", r(b"GET / HTTP/1.1\r\nHost: a\r\r\n\r\n"), Refused(400), None),
        ("leading-space-field", r(b"GET / HTTP/1.1\r\n Host: a\r\n\r\n"), Refused(400), None),
        // Bytes that never belong in a head.
        ("nul-in-value", r(b"GET / HTTP/1.1\r\nHost: a\r\nX: a\x00b\r\n\r\n"), Refused(400), None),
        ("ctl-in-value", r(b"GET / HTTP/1.1\r\nHost: a\r\nX: a\x01b\r\n\r\n"), Refused(400), None),
        ("del-in-value", r(b"GET / HTTP/1.1\r\nHost: a\r\nX: a\x7fb\r\n\r\n"), Refused(400), None),
        ("name-separator", r(b"GET / HTTP/1.1\r\nHost: a\r\nX(y): a\r\n\r\n"), Refused(400), None),
        ("name-empty", r(b"GET / HTTP/1.1\r\nHost: a\r\n: a\r\n\r\n"), Refused(400), None),
        ("name-space", r(b"GET / HTTP/1.1\r\nHost: a\r\nBad Name: x\r\n\r\n"), Refused(400), None),
        ("method-separator", r(b"G(T / HTTP/1.1\r\nHost: a\r\n\r\n"), Refused(400), None),
        ("version-lower-case", r(b"GET / http/1.1\r\nHost: a\r\n\r\n"), Refused(400), None),
        ("http09", r(b"GET /\r\n\r\n"), Refused(400), None),
        // Chunked bodies.
        ("chunk-bad-in-first-read", r(b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"), Refused(400), None),
        ("chunk-size-overflow", r(b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFFF1\r\nx\r\n0\r\n\r\n"), Refused(400), None),
        ("chunk-leading-space", r(b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n 3\r\nabc\r\n0\r\n\r\n"), Refused(400), None),
        ("chunk-data-too-long", r(b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcd\r\n0\r\n\r\n"), Refused(400), None),
        ("chunk-extension", r(b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3;a=b\r\nabc\r\n0\r\n\r\n"), fwd(1), chunked),
        ("chunk-trailer", r(b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nT: v\r\n\r\n"), fwd(1), chunked),
        // Sizes.
        ("too-many-fields", format!("GET / HTTP/1.1\r\n{}\r\n", "A: b\r\n".repeat(150)).into_bytes(), Refused(431), None),
        ("target-too-long", format!("GET /{} HTTP/1.1\r\nHost: a\r\n\r\n", "a".repeat(17000)).into_bytes(), Refused(414), None),
        // Ordinary requests, to show the table is not all refusals.
        ("expect-continue", r(b"POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\nabc"), fwd(1), None),
        ("pipelined-three", r(b"GET /1 HTTP/1.1\r\nHost: a\r\n\r\nPOST /2 HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\nabGET /3 HTTP/1.1\r\nHost: a\r\n\r\n"), fwd(3), None),
        ("pipelined-then-bad", r(b"GET /1 HTTP/1.1\r\nHost: a\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"), ThenRefused { n: 1, status: 400 }, None),
        ("options-asterisk", r(b"OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n"), fwd(1), None),
    ]
}

/// What a client saw: the statuses of complete responses, and whether the
/// proxy closed the connection (within `wait` once they are in).
struct Answer {
    statuses: Vec<u16>,
    closed: bool,
}

/// Reads complete responses (each with a Content-Length) from `buf`.
fn responses(buf: &[u8]) -> Vec<u16> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(end) = buf[at..].windows(4).position(|w| w == b"\r\n\r\n") {
        let head = &buf[at..at + end + 4];
        let status = head
            .get(9..12)
            .and_then(|s| std::str::from_utf8(s).ok())
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let len: usize = field(head, "content-length")
            .and_then(|v| std::str::from_utf8(v).ok())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        if buf.len() < at + end + 4 + len {
            break;
        }
        out.push(status);
        at += end + 4 + len;
    }
    out
}

/// Sends `req` and reads until the proxy closes, or until `n` responses
/// came and the connection is expected to stay open; `wait` at most.
fn send(port: u16, req: &[u8], want: Want, wait: Duration) -> Answer {
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let _ = c.write_all(req);
    let deadline = Instant::now() + wait;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 65536];
    loop {
        if let Forwarded { n, close: false } = want {
            if responses(&buf).len() >= n {
                return Answer {
                    statuses: responses(&buf),
                    closed: false,
                };
            }
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Answer {
                statuses: responses(&buf),
                closed: false,
            };
        }
        c.set_read_timeout(Some(left)).unwrap();
        match c.read(&mut chunk) {
            Ok(0) | Err(_) => {
                return Answer {
                    statuses: responses(&buf),
                    closed: true,
                }
            }
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}

/// A proxy configuration with one frontend per case, each in front of its
/// own origin.
fn config(ports: &[(u16, u16)]) -> String {
    let mut cfg = String::from(
        "global\n    nbthread 1\ndefaults\n    mode http\n    timeout connect 2s\n    timeout client 5s\n    timeout server 5s\n",
    );
    for (i, (listen, origin)) in ports.iter().enumerate() {
        cfg.push_str(&format!(
            "frontend f{i}\n    bind 127.0.0.1:{listen}\n    default_backend b{i}\nbackend b{i}\n    server s 127.0.0.1:{origin}\n"
        ));
    }
    cfg
}

/// One proxy's results over the table: per case, its answer and what its
/// origin recorded.
struct Run {
    results: Vec<(Answer, Seen)>,
    _origins: Vec<Server>,
    seen: Vec<Arc<Mutex<Seen>>>,
    /// Every request of a client beside the hostile ones was answered.
    bystander_ok: bool,
}

fn run(
    start: impl FnOnce(&str, u16) -> Option<Box<dyn std::any::Any>>,
    wait: Duration,
) -> Option<Run> {
    let table = cases();
    let mut origins = Vec::new();
    let mut seen = Vec::new();
    let mut ports = Vec::new();
    for _ in &table {
        let (s, rec) = recording_origin();
        ports.push((free_port(), s.port()));
        origins.push(s);
        seen.push(rec);
    }
    // A well-behaved client beside the attacker, on its own frontend.
    let (bystander_origin, bystander_seen) = recording_origin();
    ports.push((free_port(), bystander_origin.port()));
    let last = ports.last().map(|p| p.0).unwrap_or_default();
    let _proxy = start(&config(&ports), last)?;
    let mut bystander = TcpStream::connect(("127.0.0.1", last)).unwrap();
    let mut bystander_answers = 0;
    let mut results = Vec::new();
    for (i, (_, req, want, _)) in table.iter().enumerate() {
        let answer = send(ports[i].0, req, *want, wait);
        let s = seen[i].lock().unwrap().clone();
        results.push((answer, s));
        // Its keep-alive connection is answered between every two cases.
        let _ = bystander.write_all(format!("GET /b{i} HTTP/1.1\r\nHost: a\r\n\r\n").as_bytes());
        let got = read_at_least(&mut bystander, 40, Duration::from_secs(5));
        bystander_answers += responses(&got).iter().filter(|s| **s == 200).count();
    }
    let bystander_ok = bystander_answers == table.len()
        && bystander_seen.lock().unwrap().heads.len() == table.len();
    drop(bystander_origin);
    Some(Run {
        results,
        _origins: origins,
        seen,
        bystander_ok,
    })
}

#[test]
fn hostile_requests_never_reach_a_server_ambiguously() {
    let table = cases();
    assert!(table.len() >= 60, "{} cases", table.len());
    let weir = run(
        |cfg, port| Some(Box::new(Weir::start(cfg, port)) as Box<dyn std::any::Any>),
        Duration::from_secs(5),
    )
    .expect("weir runs");
    let mut failures = Vec::new();
    for ((name, _, want, check), (answer, seen)) in table.iter().zip(&weir.results) {
        let (bytes, problems, heads) = (seen.bytes, &seen.problems, &seen.heads);
        let mut fail = |what: String| failures.push(format!("{name}: {what}"));
        if !problems.is_empty() {
            fail(format!(
                "the origin could not read what it got: {problems:?}"
            ));
        }
        match *want {
            Refused(status) => {
                if answer.statuses != [status] {
                    fail(format!("answered {:?}, want [{status}]", answer.statuses));
                }
                if !answer.closed {
                    fail("connection left open after a refusal".into());
                }
                if bytes != 0 {
                    fail(format!("{bytes} bytes reached the origin"));
                }
            }
            ThenRefused { n, status } => {
                let mut expect = vec![200; n];
                expect.push(status);
                if answer.statuses != expect || heads.len() != n || !answer.closed {
                    fail(format!(
                        "answered {:?} (closed: {}), {} forwarded; want {expect:?}, {n}, closed",
                        answer.statuses,
                        answer.closed,
                        heads.len()
                    ));
                }
            }
            Forwarded { n, close } => {
                if answer.statuses != vec![200; n] {
                    fail(format!("answered {:?}, want {n} x 200", answer.statuses));
                }
                if heads.len() != n {
                    fail(format!("the origin got {} requests, want {n}", heads.len()));
                }
                if close && !answer.closed {
                    fail("connection not closed".into());
                }
                if let (Some(check), Some(h)) = (check, heads.first()) {
                    if !check(h) {
                        fail(format!("forwarded head {:?}", String::from_utf8_lossy(h)));
                    }
                }
            }
        }
    }
    // Late arrivals: an origin that got anything after its case was done.
    for ((name, _, want, _), s) in table.iter().zip(&weir.seen) {
        if let Refused(_) = want {
            let s = s.lock().unwrap();
            if s.bytes != 0 {
                failures.push(format!("{name}: {} bytes reached the origin late", s.bytes));
            }
        }
    }
    if !weir.bystander_ok {
        failures.push("a well-behaved client beside them was not answered every time".into());
    }
    assert!(failures.is_empty(), "weir:\n{}", failures.join("\n"));

    // The same table through haproxy 2.6.
    // (haproxy keeps some connections open that weir closes: a shorter
    // wait, since only its statuses and its origins' records are compared.)
    let Some(hap) = run(
        |cfg, port| Haproxy::start(cfg, port).map(|h| Box::new(h) as Box<dyn std::any::Any>),
        Duration::from_secs(1),
    ) else {
        panic!("haproxy is not installed: tests/run installs it (weir's own table passed)");
    };
    let mut differ = Vec::new();
    let mut worse = Vec::new();
    for ((name, ..), (w, h)) in table.iter().zip(weir.results.iter().zip(&hap.results)) {
        let (wa, wn) = (&w.0.statuses, w.1.heads.len());
        let (ha, hn) = (&h.0.statuses, h.1.heads.len());
        if wa != ha || wn != hn {
            differ.push(format!(
                "{name}: weir {wa:?} ({wn} forwarded) / haproxy {ha:?} ({hn} forwarded)"
            ));
        }
        let haproxy_refused = hn == 0 && ha.first().is_some_and(|s| (400..500).contains(s));
        if haproxy_refused && w.1.bytes != 0 {
            worse.push(format!("{name}: weir forwarded what haproxy refuses"));
        }
    }
    eprintln!("weir and haproxy differ on:\n{}", differ.join("\n"));
    assert!(worse.is_empty(), "{}", worse.join("\n"));
}

/// Reads from `c` until `n` bytes or more came, or EOF; the bytes read.
fn read_at_least(c: &mut TcpStream, n: usize, wait: Duration) -> Vec<u8> {
    let deadline = Instant::now() + wait;
    let mut out = Vec::new();
    let mut chunk = [0u8; 65536];
    while out.len() < n {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        c.set_read_timeout(Some(left)).unwrap();
        match c.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(k) => out.extend_from_slice(&chunk[..k]),
        }
    }
    out
}

/// A server that answers 413 as soon as it has a head, then reads the
/// body to its end (Content-Length) and answers the next request 200.
fn early_answering_origin(body_seen: Arc<Mutex<usize>>) -> Server {
    Server::start(move |mut c| {
        let mut buf = Vec::new();
        let mut chunk = [0u8; 65536];
        let mut answered = 0;
        loop {
            if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = buf[..end + 4].to_vec();
                let len: usize = field(&head, "content-length")
                    .and_then(|v| std::str::from_utf8(v).ok()?.parse().ok())
                    .unwrap_or(0);
                let answer: &[u8] = if answered == 0 {
                    b"HTTP/1.1 413 Payload Too Large\r\nContent-Length: 3\r\n\r\nbig"
                } else {
                    b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
                };
                answered += 1;
                if c.write_all(answer).is_err() {
                    return;
                }
                buf.drain(..end + 4);
                while buf.len() < len {
                    match c.read(&mut chunk) {
                        Ok(0) | Err(_) => return,
                        Ok(k) => buf.extend_from_slice(&chunk[..k]),
                    }
                }
                *body_seen.lock().unwrap() += len;
                buf.drain(..len);
                continue;
            }
            match c.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(k) => buf.extend_from_slice(&chunk[..k]),
            }
        }
    })
}

#[test]
fn a_server_answering_before_the_body_ends_is_relayed_at_once() {
    let body_seen = Arc::new(Mutex::new(0));
    let origin = early_answering_origin(body_seen.clone());
    let port = free_port();
    let cfg = config(&[(port, origin.port())]).replace("timeout server 5s", "timeout server 30s");
    let _w = Weir::start(&cfg, port);
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let total = 200_000;
    c.write_all(
        format!("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: {total}\r\n\r\n").as_bytes(),
    )
    .unwrap();
    c.write_all(&vec![b'x'; 1000]).unwrap();
    // The answer comes while 199 000 bytes are still to be sent (weir used
    // to hold it until the server closed: 30 s here).
    let got = read_at_least(&mut c, 3, Duration::from_secs(5));
    assert_eq!(
        responses(&got),
        [413],
        "{:?}",
        String::from_utf8_lossy(&got)
    );
    // The rest of the body still goes up, and the connection stays usable.
    c.write_all(&vec![b'y'; total - 1000]).unwrap();
    c.write_all(b"GET /next HTTP/1.1\r\nHost: a\r\n\r\n")
        .unwrap();
    let got = read_at_least(&mut c, 2, Duration::from_secs(5));
    assert_eq!(
        responses(&got),
        [200],
        "{:?}",
        String::from_utf8_lossy(&got)
    );
    assert_eq!(*body_seen.lock().unwrap(), total);
}

#[test]
fn a_bad_chunk_after_the_head_is_answered_logged_and_kept() {
    let (origin, seen) = recording_origin();
    let syslog = Syslog::start();
    let dir = tempdir("smuggling-errors");
    let sock = dir.join("admin.sock");
    let port = free_port();
    let cfg = config(&[(port, origin.port())])
        .replace(
            "global\n",
            &format!(
                "global\n    stats socket {} level admin\n    log 127.0.0.1:{} local0\n",
                sock.display(),
                syslog.port()
            ),
        )
        .replace(
            "defaults\n",
            "defaults\n    log global\n    option httplog\n",
        );
    let _w = Weir::start(&cfg, port);
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.write_all(b"POST /up HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n")
        .unwrap();
    // The head (and the valid chunk) went up; the bad size line comes later.
    wait_for("the head at the origin", Duration::from_secs(5), || {
        (seen.lock().unwrap().bytes > 0).then_some(())
    });
    c.write_all(b"zz\r\n").unwrap();
    let got = read_at_least(&mut c, usize::MAX, Duration::from_secs(5));
    let text = String::from_utf8_lossy(&got);
    // As haproxy 2.6 answers it: its page, then `connection: close`.
    assert!(
        text.starts_with("HTTP/1.1 400 Bad request\r\ncontent-length: 90\r\n")
            && text.contains("\r\ncontent-type: text/html\r\nconnection: close\r\n\r\n"),
        "{text}"
    );
    let line = syslog.wait_line("/up", Duration::from_secs(5));
    assert!(line.contains(" 400 ") && line.contains(" PH-- "), "{line}");
    let t = ask(&sock, "show errors\n");
    assert!(t.contains("invalid request") && t.contains("zz"), "{t}");
    // The server connection is not kept: the origin sees its end.
    wait_for(
        "the origin's connection closed",
        Duration::from_secs(5),
        || (!seen.lock().unwrap().problems.is_empty()).then_some(()),
    );
    let s = seen.lock().unwrap();
    assert!(
        s.heads.is_empty(),
        "no request was completed: {:?}",
        s.heads
    );
    assert!(s.problems[0].starts_with("left unread"), "{:?}", s.problems);
}

/// A server that answers every connection with `answer`, then closes.
fn answering(answer: &'static [u8]) -> Server {
    Server::start(move |mut c| {
        let mut chunk = [0u8; 4096];
        let mut head = Vec::new();
        while !head.windows(4).any(|w| w == b"\r\n\r\n") {
            match c.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(k) => head.extend_from_slice(&chunk[..k]),
            }
        }
        let _ = c.write_all(answer);
    })
}

#[test]
fn responses_are_read_as_strictly_and_written_canonical() {
    let cases: [(&[u8], &[u8]); 5] = [
        // Bare LF line ends: written anew with CRLF.
        (
            b"HTTP/1.1 200 OK\nContent-Length: 2\nX:  a \n\nok",
            b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX: a\r\n\r\nok",
        ),
        // Identical lengths merged into one field.
        (
            b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok",
            b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
        ),
        // A length padded with a non-ASCII space is invalid: 502.
        (
            b"HTTP/1.1 200 OK\r\nContent-Length: \xc2\xa02\r\n\r\nok",
            b"HTTP/1.1 502 ",
        ),
        // Different lengths: 502.
        (
            b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok",
            b"HTTP/1.1 502 ",
        ),
        // A coding padded with a non-ASCII space: 502.
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\xc2\xa0\r\n\r\n0\r\n\r\n",
            b"HTTP/1.1 502 ",
        ),
    ];
    for (answer, want) in cases {
        let origin = answering(answer);
        let port = free_port();
        let _w = Weir::start(&config(&[(port, origin.port())]), port);
        let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
        c.write_all(b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
            .unwrap();
        let got = read_at_least(&mut c, usize::MAX, Duration::from_secs(5));
        let text = String::from_utf8_lossy(&got);
        let want_text = String::from_utf8_lossy(want);
        let want_text = want_text.replace("\r\n\r\n", "\r\nconnection: close\r\n\r\n");
        let ok = if want.ends_with(b" ") {
            text.starts_with(&*want_text)
        } else {
            text == want_text
        };
        assert!(
            ok,
            "server sent {:?}: client got {text:?}",
            String::from_utf8_lossy(answer)
        );
    }
}

/// HTTP/2 requests that would smuggle once translated to HTTP/1.1: each
/// ends in a refusal (RST_STREAM or a 4xx) with nothing, or nothing
/// complete, at its origin; the others reach it in canonical form.
#[test]
fn http2_requests_never_become_ambiguous_http1() {
    use common::h2::*;
    let pseudo = |path: &'static str| -> Vec<(&'static str, &'static str)> {
        vec![
            (":method", "POST"),
            (":scheme", "http"),
            (":path", path),
            (":authority", "a"),
        ]
    };
    let with = |path: &'static str, extra: &[(&'static str, &'static str)]| {
        let mut f = pseudo(path);
        f.extend_from_slice(extra);
        block(&f)
    };
    // (name, frames on stream 1, refused?)
    let cases: Vec<(&str, Vec<u8>, bool)> = vec![
        (
            "cl-shorter-than-data",
            {
                let mut b = frame(
                    HEADERS,
                    END_HEADERS,
                    1,
                    &with("/", &[("content-length", "5")]),
                );
                b.extend(frame(
                    DATA,
                    END_STREAM,
                    1,
                    b"hello0\r\n\r\nGET /smuggled HTTP/1.1\r\n\r\n",
                ));
                b
            },
            true,
        ),
        (
            "cl-longer-than-data",
            {
                let mut b = frame(
                    HEADERS,
                    END_HEADERS,
                    1,
                    &with("/", &[("content-length", "50")]),
                );
                b.extend(frame(DATA, END_STREAM, 1, b"hello"));
                b
            },
            true,
        ),
        (
            "transfer-encoding",
            {
                let mut b = frame(
                    HEADERS,
                    END_HEADERS,
                    1,
                    &with("/", &[("transfer-encoding", "chunked")]),
                );
                b.extend(frame(
                    DATA,
                    END_STREAM,
                    1,
                    b"0\r\n\r\nGET /smuggled HTTP/1.1\r\n\r\n",
                ));
                b
            },
            true,
        ),
        (
            "crlf-in-value",
            frame(
                HEADERS,
                END_HEADERS | END_STREAM,
                1,
                &with("/", &[("x", "a\r\nTransfer-Encoding: chunked")]),
            ),
            true,
        ),
        (
            "lf-in-name",
            frame(
                HEADERS,
                END_HEADERS | END_STREAM,
                1,
                &with("/", &[("x\ny", "a")]),
            ),
            true,
        ),
        (
            "upper-case-name",
            frame(
                HEADERS,
                END_HEADERS | END_STREAM,
                1,
                &with("/", &[("Content-Length", "0")]),
            ),
            true,
        ),
        (
            "space-in-path",
            frame(
                HEADERS,
                END_HEADERS | END_STREAM,
                1,
                &with("/a HTTP/1.1\r\nX: y", &[]),
            ),
            true,
        ),
        (
            "fragment-in-path",
            frame(HEADERS, END_HEADERS | END_STREAM, 1, &with("/a#b", &[])),
            true,
        ),
        (
            "connection-field",
            frame(
                HEADERS,
                END_HEADERS | END_STREAM,
                1,
                &with("/", &[("connection", "keep-alive")]),
            ),
            true,
        ),
        (
            "host-beside-authority",
            frame(
                HEADERS,
                END_HEADERS | END_STREAM,
                1,
                &with("/", &[("host", "b")]),
            ),
            false,
        ),
        (
            "content-length-matching",
            {
                let mut b = frame(
                    HEADERS,
                    END_HEADERS,
                    1,
                    &with("/", &[("content-length", "5")]),
                );
                b.extend(frame(DATA, END_STREAM, 1, b"hello"));
                b
            },
            false,
        ),
        (
            "no-length",
            {
                let mut b = frame(HEADERS, END_HEADERS, 1, &with("/", &[]));
                b.extend(frame(
                    DATA,
                    END_STREAM,
                    1,
                    b"0\r\n\r\nGET /smuggled HTTP/1.1\r\n\r\n",
                ));
                b
            },
            false,
        ),
    ];
    let mut ports = Vec::new();
    let mut origins = Vec::new();
    for _ in &cases {
        let (s, seen) = recording_origin();
        ports.push((free_port(), s.port()));
        origins.push((s, seen));
    }
    // Every frontend takes HTTP/2 in clear text (prior knowledge).
    let cfg = ports.iter().fold(config(&ports), |c, (p, _)| {
        c.replace(
            &format!("bind 127.0.0.1:{p}\n"),
            &format!("bind 127.0.0.1:{p} proto h2\n"),
        )
    });
    let _w = Weir::start(&cfg, ports.last().unwrap().0);
    let mut failures = Vec::new();
    for ((name, frames, refused), (port, (_, seen))) in
        cases.iter().zip(ports.iter().map(|p| p.0).zip(&origins))
    {
        let mut c = Raw::connect(port);
        c.send(frames);
        let got = c.until(Duration::from_secs(5), |f| {
            f.stream == 1 && (f.kind == RST_STREAM || f.flags & END_STREAM != 0) || f.kind == GOAWAY
        });
        let status = got
            .iter()
            .find(|f| f.kind == HEADERS && f.stream == 1)
            .map(|f| f.payload.clone());
        let reset = got.iter().any(|f| f.kind == RST_STREAM || f.kind == GOAWAY);
        drop(c);
        if *refused {
            // A stream refused mid-body may leave an incomplete request at
            // its origin: never a complete one, never a second one.
            let s = seen.lock().unwrap();
            if !s.heads.is_empty() {
                failures.push(format!("{name}: the origin got {:?}", s.heads));
            }
            let answered_4xx = status.is_some();
            if !reset && !answered_4xx {
                failures.push(format!("{name}: neither reset nor answered: {got:?}"));
            }
        } else {
            let ok = wait_for_heads(seen, 1);
            let s = seen.lock().unwrap();
            if !ok || !s.problems.is_empty() {
                failures.push(format!(
                    "{name}: the origin got {:?} / {:?}",
                    s.heads, s.problems
                ));
            } else if let Some(h) = s.heads.first() {
                if field(h, "host") != Some(b"a") {
                    failures.push(format!(
                        "{name}: forwarded {:?}",
                        String::from_utf8_lossy(h)
                    ));
                }
            }
        }
    }
    for ((name, ..), (_, seen)) in cases.iter().zip(&origins) {
        let s = seen.lock().unwrap();
        if s.heads
            .iter()
            .any(|h| h.windows(9).any(|w| w == b"/smuggled"))
        {
            failures.push(format!("{name}: a smuggled request reached the origin"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Waits until the origin recorded `n` requests (false after 5 s).
fn wait_for_heads(seen: &Arc<Mutex<Seen>>, n: usize) -> bool {
    let end = Instant::now() + Duration::from_secs(5);
    while Instant::now() < end {
        if seen.lock().unwrap().heads.len() >= n {
            return true;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    false
}

/// A server answering every request on a connection with a body, plain or
/// chunked by turns.
fn body_server() -> Server {
    Server::start(|mut c| {
        let mut n = 0;
        loop {
            let mut buf = Vec::new();
            let mut b = [0u8; 4096];
            while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                match c.read(&mut b) {
                    Ok(0) | Err(_) => return,
                    Ok(k) => buf.extend_from_slice(&b[..k]),
                }
            }
            n += 1;
            let answer: &[u8] = if n % 2 == 1 {
                b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nskipped data"
            } else {
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nchunk\r\n0\r\n\r\n"
            };
            if c.write_all(answer).is_err() {
                return;
            }
        }
    })
}

#[test]
fn a_head_request_gets_no_body_whatever_the_server_was_asked() {
    // `http-request set-method GET` turns the client's HEAD into a GET: the
    // server's body must not reach the client, whose next response would
    // begin with it (haproxy's reg-test http_bodyless_response.vtc).
    let origin = body_server();
    let port = free_port();
    let cfg = config(&[(port, origin.port())]).replace(
        "    default_backend b0\n",
        "    http-request set-method GET\n    default_backend b0\n",
    );
    let _w = Weir::start(&cfg, port);
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    for (method, want) in [
        ("HEAD", "HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n"),
        (
            "HEAD",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
        ),
        ("HEAD", "HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n"),
    ] {
        c.write_all(format!("{method} / HTTP/1.1\r\nHost: a\r\n\r\n").as_bytes())
            .unwrap();
        let got = read_at_least(&mut c, want.len(), Duration::from_secs(5));
        assert_eq!(String::from_utf8_lossy(&got), want);
    }
    // The next GET gets its own whole response on the same connection.
    c.write_all(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
    let want = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nchunk\r\n0\r\n\r\n";
    let got = read_at_least(&mut c, want.len(), Duration::from_secs(5));
    assert_eq!(String::from_utf8_lossy(&got), want);
    // One server connection served all four: the bodies were read, not cut.
    assert_eq!(
        origin.accepted.load(std::sync::atomic::Ordering::Relaxed),
        1
    );
}
