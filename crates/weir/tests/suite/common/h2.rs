//! A raw HTTP/2 client for the tests that must send what curl will not
//! (floods, rapid resets, malformed requests, trailers): frames written by
//! hand, HPACK literals without the dynamic table, and the frames that come
//! back read as type, flags, stream and payload.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

pub const DATA: u8 = 0;
pub const HEADERS: u8 = 1;
pub const RST_STREAM: u8 = 3;
pub const SETTINGS: u8 = 4;
pub const PING: u8 = 6;
pub const GOAWAY: u8 = 7;
pub const CONTINUATION: u8 = 9;
pub const END_STREAM: u8 = 1;
pub const END_HEADERS: u8 = 4;

/// One frame: type, flags, stream, payload.
pub fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let mut f = (payload.len() as u32).to_be_bytes()[1..].to_vec();
    f.push(kind);
    f.push(flags);
    f.extend_from_slice(&stream.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

/// An HPACK integer with an `n`-bit prefix whose high bits are `first`.
fn int(out: &mut Vec<u8>, first: u8, n: u32, mut v: usize) {
    let max = (1usize << n) - 1;
    if v < max {
        out.push(first | v as u8);
        return;
    }
    out.push(first | max as u8);
    v -= max;
    while v >= 128 {
        out.push((v % 128) as u8 | 0x80);
        v /= 128;
    }
    out.push(v as u8);
}

/// A header block of literal fields (never indexed, no Huffman).
pub fn block(fields: &[(&str, &str)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (n, v) in fields {
        out.push(0x10);
        int(&mut out, 0, 7, n.len());
        out.extend_from_slice(n.as_bytes());
        int(&mut out, 0, 7, v.len());
        out.extend_from_slice(v.as_bytes());
    }
    out
}

/// A GET of `path` on stream `id` (ending the stream).
pub fn get(id: u32, path: &str) -> Vec<u8> {
    let b = block(&[
        (":method", "GET"),
        (":scheme", "http"),
        (":path", path),
        (":authority", "localhost"),
    ]);
    frame(HEADERS, END_HEADERS | END_STREAM, id, &b)
}

/// A raw connection that has sent the preface and an empty SETTINGS.
pub struct Raw {
    pub s: TcpStream,
    got: Vec<u8>,
}

/// A frame as received.
#[derive(Debug, Clone)]
pub struct Frame {
    pub kind: u8,
    pub flags: u8,
    pub stream: u32,
    pub payload: Vec<u8>,
}

impl Frame {
    /// The error code of a GOAWAY or RST_STREAM.
    pub fn code(&self) -> u32 {
        let at = if self.kind == GOAWAY { 4 } else { 0 };
        u32::from_be_bytes(self.payload[at..at + 4].try_into().unwrap())
    }
}

impl Raw {
    pub fn connect(port: u16) -> Raw {
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n").unwrap();
        s.write_all(&frame(SETTINGS, 0, 0, &[])).unwrap();
        Raw { s, got: Vec::new() }
    }
    /// Sends bytes; false once the peer stopped taking them.
    pub fn send(&mut self, b: &[u8]) -> bool {
        self.s.write_all(b).is_ok()
    }
    /// Frames until `stop` accepts one, the connection ends, or `t` passes.
    pub fn until(&mut self, t: Duration, mut stop: impl FnMut(&Frame) -> bool) -> Vec<Frame> {
        let end = Instant::now() + t;
        let mut frames = Vec::new();
        let mut buf = [0u8; 65536];
        loop {
            while self.got.len() >= 9 {
                let len = u32::from_be_bytes([0, self.got[0], self.got[1], self.got[2]]) as usize;
                if self.got.len() < 9 + len {
                    break;
                }
                let f = Frame {
                    kind: self.got[3],
                    flags: self.got[4],
                    stream: u32::from_be_bytes(self.got[5..9].try_into().unwrap()) & 0x7fff_ffff,
                    payload: self.got[9..9 + len].to_vec(),
                };
                self.got.drain(..9 + len);
                let done = stop(&f);
                frames.push(f);
                if done {
                    return frames;
                }
            }
            let left = end.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return frames;
            }
            self.s.set_read_timeout(Some(left)).unwrap();
            match self.s.read(&mut buf) {
                Ok(0) | Err(_) => return frames,
                Ok(n) => self.got.extend_from_slice(&buf[..n]),
            }
        }
    }
}
