//! How the converters of [`crate::sample`] change a sample: `convert`,
//! and the byte-level work behind it (base64 both ways, URL decoding,
//! `field`/`word`, `ipmask`).

use crate::sample::{Conv, Ctx, Sample};
use std::net::IpAddr;

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 with padding.
pub fn base64(b: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(b.len().div_ceil(3) * 4);
    for c in b.chunks(3) {
        let byte = |k: usize| u32::from(c.get(k).copied().unwrap_or(0));
        let n = (byte(0) << 16) | (byte(1) << 8) | byte(2);
        for i in 0..4 {
            if i <= c.len() {
                // Six bits: always an index of the table.
                out.extend(B64.get(((n >> (18 - 6 * i)) & 63) as usize));
            } else {
                out.push(b'=');
            }
        }
    }
    out
}

pub(crate) fn b64dec(b: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0);
    for &c in b.iter().filter(|&&c| c != b'=') {
        let v = B64.iter().position(|&x| x == c)? as u32;
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    Some(out)
}

/// Percent-decoding; `+` becomes a space after the first `?`, or
/// everywhere when `in_form`.
pub fn url_dec(b: &[u8], in_form: bool) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(b.len());
    let mut in_query = in_form;
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        match c {
            b'%' => {
                let h = b.get(i + 1..i + 3)?;
                if !h.iter().all(u8::is_ascii_hexdigit) {
                    return None;
                }
                out.push(u8::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok()?);
                i += 3;
                continue;
            }
            b'+' if in_query => out.push(b' '),
            c => {
                in_query |= c == b'?';
                out.push(c);
            }
        }
        i += 1;
    }
    Some(out)
}

/// Fields `index` (1-based; negative from the end) to `index + count - 1`
/// of `b`, as they stand in `b` (the delimiters between them kept);
/// `words` skips empty fields. `None` when `index` is out of range.
fn fields(b: &[u8], delims: &[u8], index: i64, count: usize, words: bool) -> Option<Vec<u8>> {
    let mut spans = Vec::new();
    let mut start = 0;
    for (i, c) in b.iter().enumerate() {
        if delims.contains(c) {
            spans.push((start, i));
            start = i + 1;
        }
    }
    spans.push((start, b.len()));
    if words {
        spans.retain(|(a, z)| a < z);
    }
    let len = spans.len() as i64;
    // A count of 0: every field from the index to the end (or, from the
    // end, to the start).
    let (first, last) = match (index > 0, count) {
        (true, 0) => (index - 1, len - 1),
        (false, 0) => (0, len + index),
        (true, n) => (index - 1, (index - 1 + n as i64).min(len) - 1),
        (false, n) => {
            let last = len + index;
            (last - (n as i64 - 1), last)
        }
    };
    if index == 0 || first < 0 || first >= len || last < first {
        return None;
    }
    let (start, _) = spans.get(usize::try_from(first).ok()?)?;
    let (_, end) = spans.get(usize::try_from(last).ok()?)?;
    b.get(*start..*end).map(<[u8]>::to_vec)
}

fn mask(ip: IpAddr, v4: u32, v6: u128) -> IpAddr {
    match ip {
        IpAddr::V4(a) => IpAddr::V4((u32::from(a) & v4).into()),
        IpAddr::V6(a) => match v6_to_v4(a) {
            Some(a) => IpAddr::V4((u32::from(a) & v4).into()),
            None => IpAddr::V6((u128::from(a) & v6).into()),
        },
    }
}

/// The IPv4 address an IPv6 one carries, as haproxy reads it before an
/// IPv4 mask: a mapped address (`::ffff:a.b.c.d`) or a 6to4 one
/// (`2002:AABB:CCDD::/48`).
fn v6_to_v4(a: std::net::Ipv6Addr) -> Option<std::net::Ipv4Addr> {
    let o = a.octets();
    match o {
        [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, a, b, c, d] => Some([a, b, c, d].into()),
        [0x20, 0x02, a, b, c, d, ..] => Some([a, b, c, d].into()),
        _ => None,
    }
}

/// A mask of `BITS` bits given as a prefix length (`24`) or in address
/// form (`255.255.255.0`, `ffff:ffff::`).
pub(crate) fn mask_arg<const BITS: u32>(s: &str) -> Option<u128> {
    let all = if BITS == 128 {
        u128::MAX
    } else {
        (1u128 << BITS) - 1
    };
    if let Ok(n) = s.parse::<u32>() {
        return (n <= BITS).then(|| all & all.checked_shl(BITS - n).unwrap_or(0));
    }
    match s.parse::<IpAddr>().ok()? {
        IpAddr::V4(a) if BITS == 32 => Some(u128::from(u32::from(a))),
        IpAddr::V6(a) if BITS == 128 => Some(u128::from(a)),
        _ => None,
    }
}

pub(crate) fn convert(c: &Conv, v: Sample, ctx: &dyn Ctx) -> Option<Sample> {
    let bytes = || v.to_bytes();
    // What converters taking binary input read.
    let bin = || v.to_bin();
    Some(match c {
        Conv::Lower => Sample::Str(bytes().to_ascii_lowercase()),
        Conv::Upper => Sample::Str(bytes().to_ascii_uppercase()),
        Conv::Length => Sample::Int(bytes().len() as i64),
        Conv::Base64 => Sample::Str(base64(&bin())),
        Conv::B64Dec => Sample::Bin(b64dec(&bytes())?),
        Conv::Ub64Enc => Sample::Str(
            base64(&bin())
                .into_iter()
                .filter(|&c| c != b'=')
                .map(|c| match c {
                    b'+' => b'-',
                    b'/' => b'_',
                    c => c,
                })
                .collect(),
        ),
        Conv::Ub64Dec => {
            let b: Vec<u8> = bytes()
                .into_iter()
                .map(|c| match c {
                    b'-' => b'+',
                    b'_' => b'/',
                    b'+' | b'/' => b'!',
                    c => c,
                })
                .collect();
            Sample::Bin(b64dec(&b)?)
        }
        Conv::Hex => Sample::Str(
            bin()
                .iter()
                .flat_map(|b| format!("{b:02X}").into_bytes())
                .collect(),
        ),
        Conv::UrlDec(in_form) => Sample::Str(url_dec(&bytes(), *in_form)?),
        Conv::Field {
            index,
            delims,
            count,
        } => Sample::Str(fields(&bytes(), delims, *index, *count, false)?),
        Conv::Word {
            index,
            delims,
            count,
        } => Sample::Str(fields(&bytes(), delims, *index, *count, true)?),
        Conv::RegSub { re, with, global } => {
            let b = bytes();
            let out = if *global {
                re.replace_all(&b, with.as_slice())
            } else {
                re.replace(&b, with.as_slice())
            };
            Sample::Str(out.into_owned())
        }
        Conv::SetVar(var) => {
            ctx.set_var(var, &v);
            v
        }
        Conv::UnsetVar(name) => {
            ctx.unset_var(name);
            v
        }
        Conv::Stick(c) => crate::stick::convert(c, &v, ctx)?,
        Conv::Lua(c) => ctx.lua_conv(c, &v)?,
        Conv::IpMask(a, b) => Sample::Ip(mask(v.to_ip()?, *a, *b)),
        Conv::Concat { before, var, after } => {
            let mut out = bytes();
            out.extend_from_slice(before);
            if let Some(x) = var.as_deref().and_then(|n| ctx.var(n)) {
                out.extend_from_slice(&x.to_bytes());
            }
            out.extend_from_slice(after);
            Sample::Str(out)
        }
        Conv::Bytes { offset, len } => {
            let b = bin();
            let start = (*offset).min(b.len());
            let end = len.map_or(b.len(), |l| (start + l).min(b.len()));
            Sample::Bin(b.get(start..end).unwrap_or_default().to_vec())
        }
        Conv::Map(m) => Sample::Str(m.lookup(&v)?.into_bytes()),
        Conv::Hash(h) => h.apply(&bin()),
        Conv::More(m) => return m.apply(v, ctx),
        Conv::Jwt(j) => return crate::jwt::apply(j, v, ctx),
        Conv::Text(t) => return t.apply(v, ctx),
    })
}
