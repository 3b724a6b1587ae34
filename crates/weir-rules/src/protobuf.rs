//! Protocol buffers fields (pure): the `protobuf(<field>[,<type>])` and
//! `ungrpc(<field>[,<type>])` converters. A field is found by its number
//! path (`48.59.1`: field 1 of the message in field 59 of the message in
//! field 48), at its first occurrence; with a type, its value is an
//! integer, without one its raw bytes (a varint's own bytes, a fixed
//! field's 4 or 8, a length-delimited field's content). `ungrpc` reads
//! gRPC messages (a flag byte and a big-endian length before each) and
//! answers from the first that has the field.
//!
//! haproxy 2.6's answers, observed: a field found with another wire type
//! than the type's gives nothing (no later occurrence is looked for);
//! varint types give the 64-bit value unchanged (`int32` included),
//! `sint*` undo the zigzag; `fixed32` is unsigned, `sfixed32` signed,
//! both 64-bit ones signed; `float` and `double` are cut to an integer
//! as a C cast to an unsigned one cuts them ([`whole`]); a varint type whose value is missing
//! at the very end of the message reads 0; groups (wire types 3 and 4)
//! end the search with nothing.

/// The wire form a type reads, and how its value becomes an integer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PbType {
    /// `int32`, `int64`, `uint32`, `uint64`, `bool`, `enum`.
    Varint,
    /// `sint32`, `sint64`.
    Zigzag,
    /// `fixed64`, `sfixed64`.
    Fixed64,
    Double,
    Fixed32,
    Sfixed32,
    Float,
}

impl PbType {
    fn wire(self) -> u64 {
        match self {
            PbType::Varint | PbType::Zigzag => 0,
            PbType::Fixed64 | PbType::Double => 1,
            PbType::Fixed32 | PbType::Sfixed32 | PbType::Float => 5,
        }
    }
}

/// A `protobuf` or `ungrpc` converter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PbConv {
    /// The field numbers, outermost first; `None` when one cannot match
    /// (written empty or beyond 32 bits, which haproxy accepts and never
    /// finds).
    pub path: Option<Vec<u32>>,
    pub ty: Option<PbType>,
    /// The input is gRPC messages (`ungrpc`).
    pub grpc: bool,
}

/// What a field gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PbValue {
    Int(i64),
    Raw(Vec<u8>),
}

/// Parses `protobuf`'s or `ungrpc`'s arguments (`grpc` for `ungrpc`).
pub fn parse(name: &str, a: &[String], grpc: bool) -> Result<PbConv, String> {
    let (path, ty) = match a {
        [p] => (p, None),
        [p, t] => (p, Some(pb_type(t)?)),
        [] => {
            return Err(format!(
                "converter '{name}': expected a protocol buffers field number"
            ))
        }
        _ => {
            return Err(format!(
                "converter '{name}' takes a field number and a type"
            ))
        }
    };
    let bad = path.is_empty()
        || path.ends_with('.')
        || !path.bytes().all(|b| b.is_ascii_digit() || b == b'.');
    if bad {
        return Err(format!(
            "converter '{name}': failed to parse '{path}' as a protocol buffers field number"
        ));
    }
    let path = path
        .split('.')
        .map(|n| n.parse::<u32>().ok())
        .collect::<Option<Vec<u32>>>();
    Ok(PbConv { path, ty, grpc })
}

fn pb_type(t: &str) -> Result<PbType, String> {
    Ok(match t {
        "int32" | "int64" | "uint32" | "uint64" | "bool" | "enum" => PbType::Varint,
        "sint32" | "sint64" => PbType::Zigzag,
        "fixed64" | "sfixed64" => PbType::Fixed64,
        "double" => PbType::Double,
        "fixed32" => PbType::Fixed32,
        "sfixed32" => PbType::Sfixed32,
        "float" => PbType::Float,
        _ => return Err(format!("Wrong protocol buffer type '{t}'.")),
    })
}

/// The converter on `input`: `None` when the field is not there.
pub fn extract(c: &PbConv, input: &[u8]) -> Option<PbValue> {
    let path = c.path.as_deref()?;
    if !c.grpc {
        return lookup(input, path, c.ty);
    }
    let mut rest = input;
    while let [_flag, a, b, d, e, after @ ..] = rest {
        let len = u32::from_be_bytes([*a, *b, *d, *e]) as usize;
        let msg = after.get(..len)?;
        if let Some(v) = lookup(msg, path, c.ty) {
            return Some(v);
        }
        rest = after.get(len..)?;
    }
    None
}

/// A varint at the start of `data` and the bytes after it; `None` when
/// it is cut short or longer than 10 bytes (bits beyond 64 are dropped).
fn varint(data: &[u8]) -> Option<(u64, &[u8])> {
    let mut v = 0u64;
    for (i, &b) in data.iter().enumerate().take(10) {
        v |= u64::from(b & 0x7f).checked_shl(7 * i as u32).unwrap_or(0);
        if b & 0x80 == 0 {
            return Some((v, data.get(i + 1..)?));
        }
    }
    None
}

/// The bytes after a field of `wire` type whose key was read.
fn skip(data: &[u8], wire: u64) -> Option<&[u8]> {
    match wire {
        0 => varint(data).map(|(_, r)| r),
        1 => data.get(8..),
        2 => {
            let (len, r) = varint(data)?;
            r.get(usize::try_from(len).ok()?..)
        }
        5 => data.get(4..),
        _ => None,
    }
}

/// Field `path` of message `msg`.
fn lookup(msg: &[u8], path: &[u32], ty: Option<PbType>) -> Option<PbValue> {
    let (&want, inner) = path.split_first()?;
    let mut rest = msg;
    loop {
        if rest.is_empty() {
            return None;
        }
        let (key, after) = varint(rest)?;
        let (field, wire) = (key >> 3, key & 7);
        if field == u64::from(want) {
            if inner.is_empty() {
                return value(after, wire, ty);
            }
            if wire != 2 {
                return None;
            }
            let (len, r) = varint(after)?;
            let sub = r.get(..usize::try_from(len).ok()?)?;
            return lookup(sub, inner, ty);
        }
        rest = skip(after, wire)?;
    }
}

/// A float cut to an integer as haproxy 2.6 on x86-64 cuts it (observed):
/// through an unsigned 64-bit integer, so 2^63 and above (an infinity, not
/// a number) give 0 or wrap, and what is below -2^63 gives `i64::MIN`.
fn whole(f: f64) -> i64 {
    const TWO63: f64 = 9_223_372_036_854_775_808.0;
    // The processor's conversion: out of range or not a number is i64::MIN.
    let cvt = |y: f64| {
        if y.is_finite() && (-TWO63..TWO63).contains(&y) {
            y as i64
        } else {
            i64::MIN
        }
    };
    if f < TWO63 {
        cvt(f)
    } else {
        cvt(f - TWO63) ^ i64::MIN
    }
}

/// The value of a field of `wire` type starting at `data`.
fn value(data: &[u8], wire: u64, ty: Option<PbType>) -> Option<PbValue> {
    let Some(ty) = ty else {
        let len = match wire {
            0 => data.len() - varint(data)?.1.len(),
            1 => 8,
            2 => {
                let (len, r) = varint(data)?;
                return r
                    .get(..usize::try_from(len).ok()?)
                    .map(|b| PbValue::Raw(b.to_vec()));
            }
            5 => 4,
            _ => return None,
        };
        return data.get(..len).map(|b| PbValue::Raw(b.to_vec()));
    };
    if ty.wire() != wire {
        return None;
    }
    let fixed4 = || -> Option<[u8; 4]> { data.get(..4)?.try_into().ok() };
    let fixed8 = || -> Option<[u8; 8]> { data.get(..8)?.try_into().ok() };
    Some(PbValue::Int(match ty {
        PbType::Varint | PbType::Zigzag => {
            let v = if data.is_empty() { 0 } else { varint(data)?.0 };
            if ty == PbType::Zigzag {
                ((v >> 1) as i64) ^ -((v & 1) as i64)
            } else {
                v as i64
            }
        }
        PbType::Fixed64 => i64::from_le_bytes(fixed8()?),
        PbType::Double => whole(f64::from_le_bytes(fixed8()?)),
        PbType::Fixed32 => i64::from(u32::from_le_bytes(fixed4()?)),
        PbType::Sfixed32 => i64::from(i32::from_le_bytes(fixed4()?)),
        PbType::Float => whole(f64::from(f32::from_le_bytes(fixed4()?))),
    }))
}

#[cfg(test)]
#[path = "protobuf_tests.rs"]
mod tests;
