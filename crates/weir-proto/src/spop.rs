//! SPOP 2.0, the protocol between haproxy and stream processing offload
//! agents (haproxy's doc/SPOE.txt): frames, variable-length integers and
//! typed values; the HAPROXY-HELLO frame (of a health check or of an
//! engine's connection) and the judgement of an agent's AGENT-HELLO;
//! NOTIFY frames and the actions of ACK frames; HAPROXY-DISCONNECT.

/// The largest frame weir sends or takes (haproxy's default buffer less
/// the frame length).
pub const MAX_FRAME: u32 = 16380;

const HAPROXY_HELLO: u8 = 1;
const HAPROXY_DISCONNECT: u8 = 2;
const NOTIFY: u8 = 3;
const AGENT_HELLO: u8 = 101;
const AGENT_DISCONNECT: u8 = 102;
const ACK: u8 = 103;
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

/// A frame's start: its type, FIN, and its stream and frame ids.
fn frame_head(kind: u8, sid: u64, fid: u64) -> Vec<u8> {
    let mut f = vec![kind];
    f.extend_from_slice(&FLAG_FIN.to_be_bytes());
    put_varint(&mut f, sid);
    put_varint(&mut f, fid);
    f
}

/// `f` with its length in front.
fn framed(f: Vec<u8>) -> Vec<u8> {
    let mut out = (f.len() as u32).to_be_bytes().to_vec();
    out.extend_from_slice(&f);
    out
}

/// The HAPROXY-HELLO frame of a health check: version 2.0, the largest
/// frame, no capability, `healthcheck` true.
pub fn healthcheck_hello() -> Vec<u8> {
    let mut f = hello_items(MAX_FRAME);
    put_str(&mut f, b"healthcheck");
    f.push(T_BOOL | BOOL_TRUE);
    framed(f)
}

fn hello_items(max_frame: u32) -> Vec<u8> {
    let mut f = frame_head(HAPROXY_HELLO, 0, 0);
    put_str(&mut f, b"supported-versions");
    f.push(T_STRING);
    put_str(&mut f, b"2.0");
    put_str(&mut f, b"max-frame-size");
    f.push(T_UINT32);
    put_varint(&mut f, u64::from(max_frame));
    put_str(&mut f, b"capabilities");
    f.push(T_STRING);
    put_str(&mut f, b"");
    f
}

/// The HAPROXY-HELLO frame opening an engine's connection: version 2.0,
/// `max_frame`, no capability (one exchange at a time per connection),
/// the engine's id.
pub fn hello(max_frame: u32, engine_id: &str) -> Vec<u8> {
    let mut f = hello_items(max_frame);
    put_str(&mut f, b"engine-id");
    f.push(T_STRING);
    put_str(&mut f, engine_id.as_bytes());
    framed(f)
}

/// A HAPROXY-DISCONNECT frame.
pub fn disconnect(status: u32, message: &str) -> Vec<u8> {
    let mut f = frame_head(HAPROXY_DISCONNECT, 0, 0);
    put_str(&mut f, b"status-code");
    f.push(T_UINT32);
    put_varint(&mut f, u64::from(status));
    put_str(&mut f, b"message");
    f.push(T_STRING);
    put_str(&mut f, message.as_bytes());
    framed(f)
}

/// A typed value of a message's argument or an action's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Typed {
    Null,
    Bool(bool),
    Int32(i32),
    Uint32(u32),
    Int64(i64),
    Uint64(u64),
    Ipv4([u8; 4]),
    Ipv6([u8; 16]),
    Str(Vec<u8>),
    Bin(Vec<u8>),
}

fn put_typed(out: &mut Vec<u8>, v: &Typed) {
    match v {
        Typed::Null => out.push(0),
        Typed::Bool(b) => out.push(T_BOOL | if *b { BOOL_TRUE } else { 0 }),
        // Signed integers go as their two's complement bits.
        Typed::Int32(n) => {
            out.push(T_INT32);
            put_varint(out, u64::from(*n as u32));
        }
        Typed::Uint32(n) => {
            out.push(T_UINT32);
            put_varint(out, u64::from(*n));
        }
        Typed::Int64(n) => {
            out.push(T_INT64);
            put_varint(out, *n as u64);
        }
        Typed::Uint64(n) => {
            out.push(T_UINT64);
            put_varint(out, *n);
        }
        Typed::Ipv4(a) => {
            out.push(T_IPV4);
            out.extend_from_slice(a);
        }
        Typed::Ipv6(a) => {
            out.push(T_IPV6);
            out.extend_from_slice(a);
        }
        Typed::Str(b) => {
            out.push(T_STRING);
            put_str(out, b);
        }
        Typed::Bin(b) => {
            out.push(T_BINARY);
            put_str(out, b);
        }
    }
}

/// The owned typed value at the start of `buf`, and its length.
fn typed(buf: &[u8]) -> Option<(Typed, usize)> {
    let kind = *buf.first()?;
    let rest = buf.get(1..)?;
    let int = || varint(rest).map(|(v, n)| (v, n + 1));
    Some(match kind & 0x0f {
        0 => (Typed::Null, 1),
        T_BOOL => (Typed::Bool(kind & BOOL_TRUE != 0), 1),
        T_INT32 => int().map(|(v, n)| (Typed::Int32(v as u32 as i32), n))?,
        T_UINT32 => int().map(|(v, n)| (Typed::Uint32(v as u32), n))?,
        T_INT64 => int().map(|(v, n)| (Typed::Int64(v as i64), n))?,
        T_UINT64 => int().map(|(v, n)| (Typed::Uint64(v), n))?,
        T_IPV4 => (Typed::Ipv4(rest.get(..4)?.try_into().ok()?), 5),
        T_IPV6 => (Typed::Ipv6(rest.get(..16)?.try_into().ok()?), 17),
        T_STRING | T_BINARY => {
            let (len, n) = varint(rest)?;
            let end = n.checked_add(usize::try_from(len).ok()?)?;
            let b = rest.get(n..end)?.to_vec();
            let v = if kind & 0x0f == T_STRING {
                Typed::Str(b)
            } else {
                Typed::Bin(b)
            };
            (v, 1 + end)
        }
        _ => return None,
    })
}

/// A NOTIFY frame of `messages` (a name and named arguments each), with
/// its length; `None` when it would exceed `max_frame` (weir does not
/// fragment).
pub fn notify(
    sid: u64,
    fid: u64,
    messages: &[(&str, Vec<(&str, Typed)>)],
    max_frame: u32,
) -> Option<Vec<u8>> {
    let mut f = frame_head(NOTIFY, sid, fid);
    for (name, args) in messages {
        put_str(&mut f, name.as_bytes());
        f.push(u8::try_from(args.len()).ok()?);
        for (k, v) in args {
            put_str(&mut f, k.as_bytes());
            put_typed(&mut f, v);
        }
    }
    (f.len() <= max_frame as usize).then(|| framed(f))
}

/// A variable's scope in an action.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Proc,
    Sess,
    Txn,
    Req,
    Res,
}

impl Scope {
    /// The prefix of variable names in that scope.
    pub fn prefix(self) -> &'static str {
        match self {
            Scope::Proc => "proc",
            Scope::Sess => "sess",
            Scope::Txn => "txn",
            Scope::Req => "req",
            Scope::Res => "res",
        }
    }
}

/// An action of an ACK frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    SetVar(Scope, Vec<u8>, Typed),
    UnsetVar(Scope, Vec<u8>),
}

/// A frame an agent sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentFrame {
    Ack {
        sid: u64,
        fid: u64,
        actions: Vec<Action>,
    },
    /// AGENT-DISCONNECT: its status code and message.
    Disconnect(u32, String),
    /// A frame of another type (skipped, as the protocol allows).
    Other,
}

/// Why an agent's frame is refused (a SPOP status code).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameError {
    /// 3: over the negotiated size.
    TooBig,
    /// 4: not a frame.
    Invalid,
    /// 10: a fragment (weir announces no fragmentation).
    Fragmented,
}

impl FrameError {
    pub fn status(self) -> u32 {
        match self {
            FrameError::TooBig => 3,
            FrameError::Invalid => 4,
            FrameError::Fragmented => 10,
        }
    }
}

/// The agent's frame at the start of `buf`: `Ok(None)` until it all
/// came; otherwise the frame and its length (with its length field).
pub fn agent_frame(buf: &[u8], max_frame: u32) -> Result<Option<(AgentFrame, usize)>, FrameError> {
    let Some(head) = buf.get(..4).and_then(|h| <[u8; 4]>::try_from(h).ok()) else {
        return Ok(None);
    };
    let len = u32::from_be_bytes(head);
    if len > max_frame {
        return Err(FrameError::TooBig);
    }
    let Some(frame) = buf.get(4..4 + len as usize) else {
        return Ok(None);
    };
    let f = parse_agent_frame(frame).ok_or(FrameError::Invalid)??;
    Ok(Some((f, 4 + len as usize)))
}

fn parse_agent_frame(frame: &[u8]) -> Option<Result<AgentFrame, FrameError>> {
    let (&kind, rest) = frame.split_first()?;
    let flags = u32::from_be_bytes(rest.get(..4)?.try_into().ok()?);
    let (sid, n) = varint(rest.get(4..)?)?;
    let (fid, m) = varint(rest.get(4 + n..)?)?;
    let mut p = rest.get(4 + n + m..)?;
    if flags & FLAG_FIN == 0 {
        return Some(Err(FrameError::Fragmented));
    }
    Some(Ok(match kind {
        ACK => {
            let mut actions = Vec::new();
            while let Some((&t, r)) = p.split_first() {
                let (&nb, r) = r.split_first()?;
                p = r;
                if t != 1 && t != 2 {
                    // An action weir does not know: its arguments skipped.
                    for _ in 0..nb {
                        p = p.get(typed(p)?.1..)?;
                    }
                    continue;
                }
                // set-var and unset-var: a scope byte, a name (a length
                // and its bytes), and set-var's typed value.
                let (&scope, r) = p.split_first()?;
                let (len, n) = varint(r)?;
                let end = n.checked_add(usize::try_from(len).ok()?)?;
                let name = r.get(n..end)?.to_vec();
                p = r.get(end..)?;
                let scope = match scope {
                    0 => Scope::Proc,
                    1 => Scope::Sess,
                    2 => Scope::Txn,
                    3 => Scope::Req,
                    4 => Scope::Res,
                    _ => return None,
                };
                if t == 1 {
                    let (v, used) = typed(p)?;
                    p = p.get(used..)?;
                    actions.push(Action::SetVar(scope, name, v));
                } else {
                    actions.push(Action::UnsetVar(scope, name));
                }
            }
            AgentFrame::Ack { sid, fid, actions }
        }
        AGENT_DISCONNECT => {
            let (mut status, mut message) = (0, String::new());
            while !p.is_empty() {
                let (k, n) = varint(p)?;
                let end = n.checked_add(usize::try_from(k).ok()?)?;
                let key = p.get(n..end)?;
                let (v, used) = typed(p.get(end..)?)?;
                p = p.get(end + used..)?;
                match (key, v) {
                    (b"status-code", Typed::Uint32(s)) => status = s,
                    (b"status-code", Typed::Int32(s)) => status = s as u32,
                    (b"message", Typed::Str(m)) => {
                        message = String::from_utf8_lossy(&m).into_owned()
                    }
                    _ => {}
                }
            }
            AgentFrame::Disconnect(status, message)
        }
        _ => AgentFrame::Other,
    }))
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
