//! SPOP, the protocol between haproxy and stream processing offload agents
//! (haproxy's doc/SPOE.txt): frames, variable-length integers and typed
//! values, as far as a health check needs them: the HAPROXY-HELLO frame
//! with `healthcheck`, and the judgement of an agent's AGENT-HELLO.

/// The largest frame weir sends or takes (haproxy's default buffer less
/// the frame length).
pub const MAX_FRAME: u32 = 16380;

const HAPROXY_HELLO: u8 = 1;
const AGENT_HELLO: u8 = 101;
const AGENT_DISCONNECT: u8 = 103;
const FLAG_FIN: u32 = 1;

/// Value types.
const T_BOOL: u8 = 1;
const T_INT32: u8 = 2;
const T_UINT32: u8 = 3;
const T_INT64: u8 = 4;
const T_UINT64: u8 = 5;
const T_IPV4: u8 = 6;
const T_IPV6: u8 = 7;
const T_STRING: u8 = 8;
const T_BINARY: u8 = 9;
/// A boolean's value, in its type byte.
const BOOL_TRUE: u8 = 0x10;

/// Appends `v` in SPOP's variable-length form.
pub fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    if v < 240 {
        out.push(v as u8);
        return;
    }
    out.push((v | 240) as u8);
    v = (v - 240) >> 4;
    while v >= 128 {
        out.push((v | 128) as u8);
        v = (v - 128) >> 7;
    }
    out.push(v as u8);
}

/// A variable-length integer at the start of `buf`, and its length.
pub fn varint(buf: &[u8]) -> Option<(u64, usize)> {
    let first = u64::from(*buf.first()?);
    if first < 240 {
        return Some((first, 1));
    }
    let (mut v, mut shift, mut i) = (first, 4u32, 1usize);
    loop {
        let b = u64::from(*buf.get(i)?);
        v = v.checked_add(b.checked_shl(shift)?)?;
        i += 1;
        if b < 128 {
            return Some((v, i));
        }
        shift += 7;
        if shift > 63 {
            return None;
        }
    }
}

fn put_str(out: &mut Vec<u8>, s: &[u8]) {
    put_varint(out, s.len() as u64);
    out.extend_from_slice(s);
}

/// The HAPROXY-HELLO frame of a health check: version 2.0, the largest
/// frame, no capability, `healthcheck` true.
pub fn healthcheck_hello() -> Vec<u8> {
    let mut f = vec![HAPROXY_HELLO];
    f.extend_from_slice(&FLAG_FIN.to_be_bytes());
    f.extend_from_slice(&[0, 0]);
    put_str(&mut f, b"supported-versions");
    f.push(T_STRING);
    put_str(&mut f, b"2.0");
    put_str(&mut f, b"max-frame-size");
    f.push(T_UINT32);
    put_varint(&mut f, u64::from(MAX_FRAME));
    put_str(&mut f, b"capabilities");
    f.push(T_STRING);
    put_str(&mut f, b"");
    put_str(&mut f, b"healthcheck");
    f.push(T_BOOL | BOOL_TRUE);
    let mut out = (f.len() as u32).to_be_bytes().to_vec();
    out.extend_from_slice(&f);
    out
}

/// Why an agent's hello is refused, worded as haproxy's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HelloError {
    Invalid,
    Fragmented,
    NoVersion,
    BadVersion,
    NoFrameSize,
    BadFrameSize,
    /// An AGENT-DISCONNECT frame: the agent's message.
    Disconnect(String),
}

impl HelloError {
    pub fn message(&self) -> String {
        match self {
            HelloError::Invalid => "invalid frame received".into(),
            HelloError::Fragmented => "fragmentation not supported".into(),
            HelloError::NoVersion => "version value not found".into(),
            HelloError::BadVersion => "unsupported version".into(),
            HelloError::NoFrameSize => "max-frame-size value not found".into(),
            HelloError::BadFrameSize => "max-frame-size too big or too small".into(),
            HelloError::Disconnect(m) => m.clone(),
        }
    }
}

/// A typed value: a string's bytes, or an integer.
enum Value<'a> {
    Str(&'a [u8]),
    Int(u64),
    Other,
}

/// The typed value at the start of `buf`, and its length.
fn value(buf: &[u8]) -> Option<(Value<'_>, usize)> {
    let t = *buf.first()? & 0x0f;
    let rest = buf.get(1..)?;
    Some(match t {
        0 | T_BOOL => (Value::Other, 1),
        T_INT32 | T_UINT32 | T_INT64 | T_UINT64 => {
            let (v, n) = varint(rest)?;
            (Value::Int(v), 1 + n)
        }
        T_IPV4 => (Value::Other, 5),
        T_IPV6 => (Value::Other, 17),
        T_STRING | T_BINARY => {
            let (len, n) = varint(rest)?;
            let len = usize::try_from(len).ok()?;
            (Value::Str(rest.get(n..n.checked_add(len)?)?), 1 + n + len)
        }
        _ => return None,
    })
}

/// The key and value at the start of `buf`, and their length.
fn kv(buf: &[u8]) -> Option<(&[u8], Value<'_>, usize)> {
    let (len, n) = varint(buf)?;
    let end = n.checked_add(usize::try_from(len).ok()?)?;
    let key = buf.get(n..end)?;
    let (v, m) = value(buf.get(end..)?)?;
    Some((key, v, end + m))
}

/// Judges an agent's answer to a health check's hello: `Ok(None)` until
/// the whole frame came, `Ok(Some(len))` when it is a valid AGENT-HELLO
/// (of `len` bytes with its length).
pub fn agent_hello(buf: &[u8]) -> Result<Option<usize>, HelloError> {
    let Some(head) = buf.get(..4).and_then(|h| <[u8; 4]>::try_from(h).ok()) else {
        return Ok(None);
    };
    let len = u32::from_be_bytes(head);
    // (A length out of bounds is no frame, as haproxy words it.)
    if len == 0 || len > MAX_FRAME {
        return Err(HelloError::Invalid);
    }
    let Some(frame) = buf.get(4..4 + len as usize) else {
        return Ok(None);
    };
    hello_frame(frame).map(|()| Some(4 + len as usize))
}

fn hello_frame(frame: &[u8]) -> Result<(), HelloError> {
    let invalid = HelloError::Invalid;
    let (&kind, rest) = frame.split_first().ok_or(HelloError::Invalid)?;
    let flags = rest
        .get(..4)
        .and_then(|f| <[u8; 4]>::try_from(f).ok())
        .ok_or(HelloError::Invalid)?;
    let flags = u32::from_be_bytes(flags);
    let mut at = 4;
    let ids = (|| {
        let (sid, n) = varint(rest.get(at..)?)?;
        let (fid, m) = varint(rest.get(at + n..)?)?;
        Some((sid, fid, n + m))
    })();
    let (sid, fid, n) = ids.ok_or(HelloError::Invalid)?;
    at += n;
    if kind != AGENT_HELLO && kind != AGENT_DISCONNECT {
        return Err(invalid);
    }
    if flags & FLAG_FIN == 0 {
        return Err(HelloError::Fragmented);
    }
    if sid != 0 || fid != 0 {
        return Err(invalid);
    }
    let (mut version, mut frame_size) = (false, false);
    let mut message = String::new();
    while let Some(b) = rest.get(at..).filter(|b| !b.is_empty()) {
        let (key, v, n) = kv(b).ok_or(HelloError::Invalid)?;
        at += n;
        match (kind, key, v) {
            (AGENT_HELLO, b"version", Value::Str(s)) => {
                // (weir speaks SPOP 2.0, as haproxy 2.6 does.)
                if s.trim_ascii() != b"2.0" {
                    return Err(HelloError::BadVersion);
                }
                version = true;
            }
            (AGENT_HELLO, b"version", _) => return Err(HelloError::Invalid),
            (AGENT_HELLO, b"max-frame-size", Value::Int(n)) => {
                if !(256..=u64::from(MAX_FRAME)).contains(&n) {
                    return Err(HelloError::BadFrameSize);
                }
                frame_size = true;
            }
            (AGENT_HELLO, b"max-frame-size", _) => return Err(HelloError::Invalid),
            (AGENT_DISCONNECT, b"message", Value::Str(s)) => {
                message = String::from_utf8_lossy(s).into_owned();
            }
            _ => {}
        }
    }
    match (kind, version, frame_size) {
        (AGENT_DISCONNECT, ..) => Err(HelloError::Disconnect(message)),
        (_, false, _) => Err(HelloError::NoVersion),
        (_, _, false) => Err(HelloError::NoFrameSize),
        _ => Ok(()),
    }
}

#[cfg(test)]
#[path = "spop_tests.rs"]
mod tests;
