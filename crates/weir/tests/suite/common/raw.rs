//! Raw HTTP/1 test parts for the framing and smuggling tests: a strict
//! recording origin (it reads each request by RFC 9112 and records what it
//! could not read), a canonical-head check, and a byte-exact client side.

use super::Server;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What a strict origin made of the bytes it received.
#[derive(Default, Debug, Clone)]
pub struct Seen {
    /// Request heads, exactly as received.
    pub heads: Vec<Vec<u8>>,
    /// Bytes it could not read as a request: an ambiguity reached it.
    pub problems: Vec<String>,
    /// Every byte received, on all connections.
    pub bytes: usize,
}

/// Reads one CRLF-terminated line from `buf` at `at`.
pub fn line(buf: &[u8], at: usize) -> Option<(&[u8], usize)> {
    let end = buf.get(at..)?.windows(2).position(|w| w == b"\r\n")?;
    Some((&buf[at..at + end], at + end + 2))
}

/// A canonical head: CRLF line ends only, `token: value` fields with one
/// space after the colon and no surrounding whitespace, at most one Host,
/// one length field, never both framings. Returns what is wrong.
pub fn head_problem(head: &[u8]) -> Option<String> {
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
pub fn field<'h>(head: &'h [u8], name: &str) -> Option<&'h [u8]> {
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
pub fn request(buf: &[u8]) -> Result<Option<(Vec<u8>, usize)>, String> {
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
pub fn recording_origin() -> (Server, Arc<Mutex<Seen>>) {
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

/// Reads complete responses (each with a Content-Length) from `buf`.
pub fn responses(buf: &[u8]) -> Vec<u16> {
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

/// Reads from `c` until `n` bytes or more came, or EOF; the bytes read.
pub fn read_at_least(c: &mut TcpStream, n: usize, wait: Duration) -> Vec<u8> {
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

/// A proxy configuration with one frontend per case, each in front of its
/// own origin.
pub fn config(ports: &[(u16, u16)]) -> String {
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

/// Waits until the origin recorded `n` requests (false after 5 s).
pub fn wait_for_heads(seen: &Arc<Mutex<Seen>>, n: usize) -> bool {
    let end = Instant::now() + Duration::from_secs(5);
    while Instant::now() < end {
        if seen.lock().unwrap().heads.len() >= n {
            return true;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    false
}
