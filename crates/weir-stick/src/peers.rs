//! HAProxy's peers protocol, version 2.1, as pure codecs (Debian's
//! `peers-v2.0.txt` describes 2.0; 2.1 adds heartbeats, and the expiry and
//! the data types' parameters in table definitions, as haproxy 2.6 sends
//! them): encoded integers, the hello and status lines, messages and their
//! framing, table definitions and entry updates.

use crate::data::{DataType, Schema, Value};
use crate::freq::FreqCtr;
use crate::key::{Key, KeyType};

/// What a peer sent that cannot be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PeerError {
    #[error("bad hello")]
    Hello,
    #[error("bad message")]
    Message,
    #[error("message too large")]
    TooLarge,
}

/// The largest message weir reads (haproxy's buffers are 16 kB).
pub const MAX_MESSAGE: usize = 64 * 1024;

/// Message classes and types.
pub mod msg {
    pub const CONTROL: u8 = 0;
    pub const ERROR: u8 = 1;
    pub const TABLE: u8 = 10;
    pub const RESYNC_REQUEST: u8 = 0;
    pub const RESYNC_FINISHED: u8 = 1;
    pub const RESYNC_PARTIAL: u8 = 2;
    pub const RESYNC_CONFIRM: u8 = 3;
    pub const HEARTBEAT: u8 = 4;
    pub const UPDATE: u8 = 0x80;
    pub const INC_UPDATE: u8 = 0x81;
    pub const DEFINE: u8 = 0x82;
    pub const SWITCH: u8 = 0x83;
    pub const ACK: u8 = 0x84;
    pub const UPDATE_TIMED: u8 = 0x85;
    pub const INC_UPDATE_TIMED: u8 = 0x86;
}

/// Appends `v` encoded: one byte below 240, else 4 bits in a first byte
/// from 240 up, then 7 bits a byte, the high bit saying more follow.
pub fn encode_int(mut v: u64, out: &mut Vec<u8>) {
    if v < 240 {
        out.push(v as u8);
        return;
    }
    out.push((v as u8) | 240);
    v = (v - 240) >> 4;
    while v >= 128 {
        out.push((v as u8) | 128);
        v = (v - 128) >> 7;
    }
    out.push(v as u8);
}

/// Reads an encoded integer at the start of `b`: the value and the bytes
/// it took, `None` when `b` ends inside it.
pub fn decode_int(b: &[u8]) -> Result<Option<(u64, usize)>, PeerError> {
    let Some(&first) = b.first() else {
        return Ok(None);
    };
    let mut v = u64::from(first);
    if first < 240 {
        return Ok(Some((v, 1)));
    }
    let mut shift = 4u32;
    for (i, &byte) in b.iter().enumerate().skip(1) {
        if shift > 60 {
            return Err(PeerError::Message);
        }
        v = v.wrapping_add(u64::from(byte) << shift);
        if byte < 128 {
            return Ok(Some((v, i + 1)));
        }
        shift += 7;
    }
    Ok(None)
}

/// A reader over a message's data.
struct Reader<'a> {
    b: &'a [u8],
}

impl<'a> Reader<'a> {
    fn int(&mut self) -> Result<u64, PeerError> {
        let (v, n) = decode_int(self.b)?.ok_or(PeerError::Message)?;
        self.b = self.b.get(n..).unwrap_or_default();
        Ok(v)
    }
    fn bytes(&mut self, n: usize) -> Result<&'a [u8], PeerError> {
        let out = self.b.get(..n).ok_or(PeerError::Message)?;
        self.b = self.b.get(n..).unwrap_or_default();
        Ok(out)
    }
    fn u32(&mut self) -> Result<u32, PeerError> {
        let a: [u8; 4] = self.bytes(4)?.try_into().map_err(|_| PeerError::Message)?;
        Ok(u32::from_be_bytes(a))
    }
    fn done(&self) -> bool {
        self.b.is_empty()
    }
}

/// The first line a connecting peer sends, and the two after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hello {
    /// The peer it wants (the receiver's name).
    pub remote: String,
    /// Its own name.
    pub local: String,
    pub pid: u32,
}

/// The protocol line weir speaks.
pub const PROTOCOL: &str = "HAProxyS 2.1";

impl Hello {
    /// The three lines.
    pub fn bytes(&self) -> Vec<u8> {
        format!(
            "{PROTOCOL}\n{}\n{} {} 0\n",
            self.remote, self.local, self.pid
        )
        .into_bytes()
    }

    /// Reads a hello: `Ok(None)` until three lines came; the status code
    /// to answer when it is refused (501 protocol, 502 version).
    pub fn parse(b: &[u8]) -> Result<Option<(Hello, usize)>, u16> {
        let mut lines = Vec::new();
        let mut start = 0;
        for (i, &c) in b.iter().enumerate() {
            if c == b'\n' {
                lines.push(b.get(start..i).unwrap_or_default());
                start = i + 1;
                if lines.len() == 3 {
                    break;
                }
            }
        }
        if lines.len() < 3 {
            return if b.len() > 1024 { Err(501) } else { Ok(None) };
        }
        let text = |l: &[u8]| {
            String::from_utf8_lossy(l)
                .trim_end_matches('\r')
                .to_string()
        };
        let first = text(lines.first().copied().unwrap_or_default());
        let (proto, ver) = first.split_once(' ').ok_or(501u16)?;
        if proto != "HAProxyS" {
            return Err(501);
        }
        if !ver.starts_with("2.") {
            return Err(502);
        }
        let third = text(lines.get(2).copied().unwrap_or_default());
        let mut words = third.split(' ');
        let local = words.next().unwrap_or("").to_string();
        let pid = words.next().and_then(|p| p.parse().ok()).unwrap_or(0);
        Ok(Some((
            Hello {
                remote: text(lines.get(1).copied().unwrap_or_default()),
                local,
                pid,
            },
            start,
        )))
    }
}

/// One framed message: class, type and (for types from 128 up) data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Message<'a> {
    pub class: u8,
    pub kind: u8,
    pub data: &'a [u8],
}

impl<'a> Message<'a> {
    /// Reads the message at the start of `b` and the bytes it took.
    pub fn parse(b: &'a [u8]) -> Result<Option<(Message<'a>, usize)>, PeerError> {
        let (Some(&class), Some(&kind)) = (b.first(), b.get(1)) else {
            return Ok(None);
        };
        if kind < 128 {
            return Ok(Some((
                Message {
                    class,
                    kind,
                    data: &[],
                },
                2,
            )));
        }
        let rest = b.get(2..).unwrap_or_default();
        let Some((len, n)) = decode_int(rest)? else {
            return Ok(None);
        };
        let len = usize::try_from(len).map_err(|_| PeerError::TooLarge)?;
        if len > MAX_MESSAGE {
            return Err(PeerError::TooLarge);
        }
        match rest.get(n..n + len) {
            Some(data) => Ok(Some((Message { class, kind, data }, 2 + n + len))),
            None => Ok(None),
        }
    }
}

/// Appends a message of `class` and `kind` with `data` (types from 128).
pub fn frame(class: u8, kind: u8, data: &[u8], out: &mut Vec<u8>) {
    out.push(class);
    out.push(kind);
    if kind >= 128 {
        encode_int(data.len() as u64, out);
        out.extend_from_slice(data);
    }
}

/// The key type numbers of table definitions.
fn key_code(t: KeyType) -> (u64, u64) {
    match t {
        KeyType::Integer => (2, 4),
        KeyType::Ip => (4, 4),
        KeyType::Ipv6 => (5, 16),
        KeyType::String(n) => (6, n as u64 + 1),
        KeyType::Binary(n) => (7, n as u64),
    }
}

/// A table as a definition message describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableDef {
    /// The sender's number for it.
    pub id: u64,
    pub name: String,
    pub key_type: u64,
    pub key_len: u64,
    /// The data types sent in updates, by bit.
    pub types: u64,
    pub expire: u64,
    /// Elements of array types, by type id.
    pub counts: Vec<(u8, u64)>,
}

impl TableDef {
    /// The definition of a local table named `name` as number `id`.
    pub fn of(id: u64, name: &str, key: KeyType, schema: &Schema, expire: Option<u32>) -> TableDef {
        let (key_type, key_len) = key_code(key);
        let mut types = 0u64;
        let mut counts = Vec::new();
        for c in schema.columns() {
            types |= 1 << c.ty.id();
            if c.ty.is_array() && c.idx == 0 {
                let n = schema.columns().iter().filter(|d| d.ty == c.ty).count();
                counts.push((c.ty.id(), n as u64));
            }
        }
        TableDef {
            id,
            name: name.to_string(),
            key_type,
            key_len,
            types,
            expire: u64::from(expire.unwrap_or(0)),
            counts,
        }
    }

    /// Whether it describes keys of `key`.
    pub fn keys_fit(&self, key: KeyType) -> bool {
        let (t, len) = key_code(key);
        t == self.key_type && (t != 6 && t != 7 || len == self.key_len)
    }

    /// The definition message's data; `schema` gives the periods.
    pub fn encode(&self, schema: &Schema) -> Vec<u8> {
        let mut out = Vec::new();
        encode_int(self.id, &mut out);
        encode_int(self.name.len() as u64, &mut out);
        out.extend_from_slice(self.name.as_bytes());
        encode_int(self.key_type, &mut out);
        encode_int(self.key_len, &mut out);
        encode_int(self.types, &mut out);
        encode_int(self.expire, &mut out);
        for c in schema.columns().iter().filter(|c| c.idx == 0) {
            if c.ty.is_array() {
                encode_int(u64::from(c.ty.id()), &mut out);
                let n = schema.columns().iter().filter(|d| d.ty == c.ty).count();
                encode_int(n as u64, &mut out);
                if c.ty.is_rate() {
                    encode_int(u64::from(c.period), &mut out);
                }
            } else if c.ty.is_rate() {
                encode_int(u64::from(c.ty.id()), &mut out);
                encode_int(u64::from(c.period), &mut out);
            }
        }
        out
    }

    /// Reads a definition message's data.
    pub fn decode(data: &[u8]) -> Result<TableDef, PeerError> {
        let mut r = Reader { b: data };
        let id = r.int()?;
        let n = usize::try_from(r.int()?).map_err(|_| PeerError::Message)?;
        let name = String::from_utf8_lossy(r.bytes(n)?).into_owned();
        let key_type = r.int()?;
        let key_len = r.int()?;
        let types = r.int()?;
        let expire = if r.done() { 0 } else { r.int()? };
        let mut counts = Vec::new();
        while !r.done() {
            let t = r.int()?;
            let ty = u8::try_from(t)
                .ok()
                .and_then(by_id)
                .ok_or(PeerError::Message)?;
            if ty.is_array() {
                counts.push((ty.id(), r.int()?));
                if ty.is_rate() {
                    r.int()?;
                }
            } else {
                r.int()?;
            }
        }
        Ok(TableDef {
            id,
            name,
            key_type,
            key_len,
            types,
            expire,
            counts,
        })
    }

    /// The columns an update of this table carries, in order: each type
    /// of the bitfield, arrays with their elements.
    fn sent(&self) -> Vec<(DataType, usize)> {
        let mut out = Vec::new();
        for bit in 0..64u8 {
            if self.types & (1 << bit) == 0 {
                continue;
            }
            let Some(ty) = by_id(bit) else {
                continue;
            };
            let n = if ty.is_array() {
                self.counts
                    .iter()
                    .find(|(t, _)| *t == bit)
                    .map_or(1, |(_, n)| *n as usize)
            } else {
                1
            };
            out.extend((0..n).map(|i| (ty, i)));
        }
        out
    }
}

fn by_id(id: u8) -> Option<DataType> {
    (0..=24u8)
        .filter_map(|i| DataType::by_name(type_name(i)?))
        .find(|t| t.id() == id)
}

fn type_name(id: u8) -> Option<&'static str> {
    Some(match id {
        0 => "server_id",
        1 => "gpt0",
        2 => "gpc0",
        3 => "gpc0_rate",
        4 => "conn_cnt",
        5 => "conn_rate",
        6 => "conn_cur",
        7 => "sess_cnt",
        8 => "sess_rate",
        9 => "http_req_cnt",
        10 => "http_req_rate",
        11 => "http_err_cnt",
        12 => "http_err_rate",
        13 => "bytes_in_cnt",
        14 => "bytes_in_rate",
        15 => "bytes_out_cnt",
        16 => "bytes_out_rate",
        17 => "gpc1",
        18 => "gpc1_rate",
        19 => "server_key",
        20 => "http_fail_cnt",
        21 => "http_fail_rate",
        22 => "gpt",
        23 => "gpc",
        24 => "gpc_rate",
        _ => return None,
    })
}

/// A value an update carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sent {
    Count(u64),
    /// Milliseconds since the period began, this period's and the last
    /// one's counts.
    Freq {
        elapsed: u32,
        curr: u32,
        prev: u32,
    },
    /// `server_key`: the text, or none.
    Text(Option<String>),
}

/// The server keys a session sent or learned, by number (haproxy's
/// dictionary cache: a text goes once, then its number).
#[derive(Debug, Default)]
pub struct Dict {
    texts: Vec<String>,
}

impl Dict {
    fn id_of(&mut self, t: &str) -> (u64, bool) {
        if let Some(i) = self.texts.iter().position(|x| x == t) {
            return (i as u64 + 1, false);
        }
        if self.texts.len() >= 200 {
            self.texts.clear();
        }
        self.texts.push(t.to_string());
        (self.texts.len() as u64, true)
    }
}

/// Encodes an update of `key` (`id`: its update number, `None` for an
/// incremental one) with `values` laid out as `schema`, at `now`.
pub fn encode_update(
    id: Option<u32>,
    key: &Key,
    def: &TableDef,
    schema: &Schema,
    values: &[Value],
    now: u32,
    dict: &mut Dict,
) -> Vec<u8> {
    let mut out = Vec::new();
    if let Some(id) = id {
        out.extend_from_slice(&id.to_be_bytes());
    }
    match key {
        Key::V4(a) => out.extend_from_slice(&a.octets()),
        Key::V6(a) => out.extend_from_slice(&a.octets()),
        Key::Int(n) => out.extend_from_slice(&n.to_be_bytes()),
        Key::Bytes(b) if def.key_type == 6 => {
            let b: &[u8] = b.split(|&c| c == 0).next().unwrap_or_default();
            encode_int(b.len() as u64, &mut out);
            out.extend_from_slice(b);
        }
        Key::Bytes(b) => out.extend_from_slice(b),
    }
    for (ty, idx) in def.sent() {
        let v = schema.find(ty, idx).and_then(|at| {
            values
                .get(at)
                .map(|v| (v, schema.column(at).map_or(0, |c| c.period)))
        });
        match (ty, v) {
            (DataType::ServerKey, Some((Value::Text(Some(t)), _))) => {
                let (n, fresh) = dict.id_of(t);
                let mut inner = Vec::new();
                encode_int(n, &mut inner);
                if fresh {
                    encode_int(t.len() as u64, &mut inner);
                    inner.extend_from_slice(t.as_bytes());
                }
                encode_int(inner.len() as u64, &mut out);
                out.extend_from_slice(&inner);
            }
            (DataType::ServerKey, _) => encode_int(0, &mut out),
            (t, Some((Value::Freq(f), _))) if t.is_rate() => {
                let (tick, curr, prev) = f.parts();
                encode_int(u64::from(now.wrapping_sub(tick)), &mut out);
                encode_int(u64::from(curr), &mut out);
                encode_int(u64::from(prev), &mut out);
            }
            (t, _) if t.is_rate() => {
                encode_int(u64::from(now), &mut out);
                encode_int(0, &mut out);
                encode_int(0, &mut out);
            }
            (_, Some((Value::Count(c), _))) => encode_int(*c, &mut out),
            _ => encode_int(0, &mut out),
        }
    }
    out
}

/// An update read: its number (`None`: the previous one's plus one), the
/// key, and each value by type and element.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Update {
    pub id: Option<u32>,
    pub expire: Option<u32>,
    pub key: Key,
    pub values: Vec<(DataType, usize, Sent)>,
}

/// Reads an update of a table `def` describes, for keys of `key`.
pub fn decode_update(
    kind: u8,
    data: &[u8],
    def: &TableDef,
    key: KeyType,
    dict: &mut Dict,
) -> Result<Update, PeerError> {
    let mut r = Reader { b: data };
    let id = matches!(kind, msg::UPDATE | msg::UPDATE_TIMED)
        .then(|| r.u32())
        .transpose()?;
    let expire = matches!(kind, msg::UPDATE_TIMED | msg::INC_UPDATE_TIMED)
        .then(|| r.u32())
        .transpose()?;
    let len = usize::try_from(def.key_len).map_err(|_| PeerError::Message)?;
    let k = match key {
        KeyType::Ip => {
            let a: [u8; 4] = r.bytes(4)?.try_into().map_err(|_| PeerError::Message)?;
            Key::V4(a.into())
        }
        KeyType::Ipv6 => {
            let a: [u8; 16] = r.bytes(16)?.try_into().map_err(|_| PeerError::Message)?;
            Key::V6(a.into())
        }
        KeyType::Integer => Key::Int(r.u32()?),
        KeyType::String(_) => {
            let n = usize::try_from(r.int()?).map_err(|_| PeerError::Message)?;
            Key::string(key, r.bytes(n)?)
        }
        KeyType::Binary(_) => Key::binary(key, r.bytes(len)?),
    };
    let mut values = Vec::new();
    for (ty, idx) in def.sent() {
        let v = match ty {
            DataType::ServerKey => {
                let n = usize::try_from(r.int()?).map_err(|_| PeerError::Message)?;
                if n == 0 {
                    Sent::Text(None)
                } else {
                    let mut inner = Reader { b: r.bytes(n)? };
                    let id = usize::try_from(inner.int()?).map_err(|_| PeerError::Message)?;
                    if inner.done() {
                        Sent::Text(dict.texts.get(id.wrapping_sub(1)).cloned())
                    } else {
                        let l = usize::try_from(inner.int()?).map_err(|_| PeerError::Message)?;
                        let t = String::from_utf8_lossy(inner.bytes(l)?).into_owned();
                        if (1..=256).contains(&id) {
                            if dict.texts.len() < id {
                                dict.texts.resize(id, String::new());
                            }
                            if let Some(slot) = dict.texts.get_mut(id - 1) {
                                *slot = t.clone();
                            }
                        }
                        Sent::Text(Some(t))
                    }
                }
            }
            t if t.is_rate() => Sent::Freq {
                elapsed: r.int()? as u32,
                curr: r.int()? as u32,
                prev: r.int()? as u32,
            },
            _ => Sent::Count(r.int()?),
        };
        values.push((ty, idx, v));
    }
    Ok(Update {
        id,
        expire,
        key: k,
        values,
    })
}

/// A rate as a peer sent it, on the local clock at `now`.
pub fn freq_of(now: u32, elapsed: u32, curr: u32, prev: u32) -> FreqCtr {
    FreqCtr::from_parts(now.wrapping_sub(elapsed), curr, prev)
}

/// An ack's data: the receiver's number for the table, the last update.
pub fn encode_ack(table: u64, update: u32) -> Vec<u8> {
    let mut out = Vec::new();
    encode_int(table, &mut out);
    out.extend_from_slice(&update.to_be_bytes());
    out
}

/// An ack's table number and last update ([`encode_ack`]'s inverse).
pub fn decode_ack(data: &[u8]) -> Result<(u64, u32), PeerError> {
    let (table, n) = decode_int(data)?.ok_or(PeerError::Message)?;
    let b: [u8; 4] = data
        .get(n..n + 4)
        .and_then(|b| b.try_into().ok())
        .ok_or(PeerError::Message)?;
    Ok((table, u32::from_be_bytes(b)))
}
