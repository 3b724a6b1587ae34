//! HPACK (RFC 7541): the header-block decoder with its dynamic table, and
//! an encoder that uses the static table and literals only (never the
//! dynamic table, which RFC 7541 allows), as a proxy's encoder can.

use super::huffman;
use std::borrow::Cow;
use std::collections::VecDeque;

/// RFC 7541 Appendix A: the static table (index 1 is the first entry).
pub const STATIC: [(&str, &str); 61] = [
    (":authority", ""),
    (":method", "GET"),
    (":method", "POST"),
    (":path", "/"),
    (":path", "/index.html"),
    (":scheme", "http"),
    (":scheme", "https"),
    (":status", "200"),
    (":status", "204"),
    (":status", "206"),
    (":status", "304"),
    (":status", "400"),
    (":status", "404"),
    (":status", "500"),
    ("accept-charset", ""),
    ("accept-encoding", "gzip, deflate"),
    ("accept-language", ""),
    ("accept-ranges", ""),
    ("accept", ""),
    ("access-control-allow-origin", ""),
    ("age", ""),
    ("allow", ""),
    ("authorization", ""),
    ("cache-control", ""),
    ("content-disposition", ""),
    ("content-encoding", ""),
    ("content-language", ""),
    ("content-length", ""),
    ("content-location", ""),
    ("content-range", ""),
    ("content-type", ""),
    ("cookie", ""),
    ("date", ""),
    ("etag", ""),
    ("expect", ""),
    ("expires", ""),
    ("from", ""),
    ("host", ""),
    ("if-match", ""),
    ("if-modified-since", ""),
    ("if-none-match", ""),
    ("if-range", ""),
    ("if-unmodified-since", ""),
    ("last-modified", ""),
    ("link", ""),
    ("location", ""),
    ("max-forwards", ""),
    ("proxy-authenticate", ""),
    ("proxy-authorization", ""),
    ("range", ""),
    ("referer", ""),
    ("refresh", ""),
    ("retry-after", ""),
    ("server", ""),
    ("set-cookie", ""),
    ("strict-transport-security", ""),
    ("transfer-encoding", ""),
    ("user-agent", ""),
    ("vary", ""),
    ("via", ""),
    ("www-authenticate", ""),
];

/// Each entry's overhead in the table's size (RFC 7541 §4.1).
const ENTRY_OVERHEAD: usize = 32;

/// Why a header block could not be decoded: all are COMPRESSION_ERROR for
/// HTTP/2, which ends the connection (the table is out of step).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum HpackError {
    #[error("header block ends inside a field")]
    Truncated,
    #[error("integer too large in a header block")]
    Integer,
    #[error("header index {0} out of range")]
    Index(usize),
    #[error("invalid Huffman string in a header block")]
    Huffman,
    #[error("dynamic table size update above the limit or after a field")]
    SizeUpdate,
}

/// The decoder's dynamic table: newest entry first.
#[derive(Debug, Default)]
struct Table {
    /// Each entry's name and value in one allocation, with the name length.
    entries: VecDeque<(Box<[u8]>, usize)>,
    size: usize,
    max: usize,
}

impl Table {
    fn evict_to(&mut self, max: usize) {
        while self.size > max {
            match self.entries.pop_back() {
                Some((e, _)) => self.size -= e.len() + ENTRY_OVERHEAD,
                None => break,
            }
        }
    }
    fn insert(&mut self, name: &[u8], value: &[u8]) {
        let size = name.len() + value.len() + ENTRY_OVERHEAD;
        if size > self.max {
            // Larger than the table: it empties it and is not kept.
            self.evict_to(0);
            return;
        }
        self.evict_to(self.max - size);
        let mut e = Vec::with_capacity(name.len() + value.len());
        e.extend_from_slice(name);
        e.extend_from_slice(value);
        self.entries.push_front((e.into_boxed_slice(), name.len()));
        self.size += size;
    }
    /// Entry `i` (1-based over static then dynamic) as (name, value).
    fn get(&self, i: usize) -> Result<(&[u8], &[u8]), HpackError> {
        if i == 0 {
            return Err(HpackError::Index(0));
        }
        if let Some((n, v)) = STATIC.get(i - 1) {
            return Ok((n.as_bytes(), v.as_bytes()));
        }
        let (e, nl) = self
            .entries
            .get(i - 1 - STATIC.len())
            .ok_or(HpackError::Index(i))?;
        Ok(e.split_at(*nl))
    }
}

/// Reads an integer with an `n`-bit prefix from `b[*pos..]` (RFC 7541
/// §5.1); values above `u32::MAX` are refused.
fn integer(b: &[u8], pos: &mut usize, n: u32) -> Result<usize, HpackError> {
    let mask = (1u32 << n) - 1;
    let first = *b.get(*pos).ok_or(HpackError::Truncated)?;
    *pos += 1;
    let mut v = u32::from(first) & mask;
    if v < mask {
        return Ok(v as usize);
    }
    let mut shift = 0u32;
    loop {
        let byte = *b.get(*pos).ok_or(HpackError::Truncated)?;
        *pos += 1;
        let add = u64::from(byte & 0x7f) << shift;
        let sum = u64::from(v) + add;
        if shift > 28 || sum > u64::from(u32::MAX) {
            return Err(HpackError::Integer);
        }
        v = sum as u32;
        if byte & 0x80 == 0 {
            return Ok(v as usize);
        }
        shift += 7;
    }
}

/// Reads a string literal at `b[*pos..]`: a slice of the block when raw,
/// or the range of `scratch` it was Huffman-decoded into.
fn string<'b>(b: &'b [u8], pos: &mut usize, scratch: &mut Vec<u8>) -> Result<Str<'b>, HpackError> {
    let huff = b.get(*pos).ok_or(HpackError::Truncated)? & 0x80 != 0;
    let len = integer(b, pos, 7)?;
    let end = pos.checked_add(len).ok_or(HpackError::Truncated)?;
    let raw = b.get(*pos..end).ok_or(HpackError::Truncated)?;
    *pos = end;
    if !huff {
        return Ok(Str::Raw(raw));
    }
    let from = scratch.len();
    huffman::decode(raw, scratch).map_err(|_| HpackError::Huffman)?;
    Ok(Str::Scratch(from, scratch.len()))
}

/// Where a decoded string lies.
enum Str<'b> {
    Raw(&'b [u8]),
    Scratch(usize, usize),
}

impl<'b> Str<'b> {
    fn get<'a>(&self, scratch: &'a [u8]) -> &'a [u8]
    where
        'b: 'a,
    {
        match *self {
            Str::Raw(s) => s,
            Str::Scratch(a, z) => scratch.get(a..z).unwrap_or_default(),
        }
    }
}

/// The decoding side of a connection's HPACK context.
#[derive(Debug)]
pub struct Decoder {
    table: Table,
    /// The largest table the peer may ask for (our SETTINGS_HEADER_TABLE_SIZE).
    limit: usize,
    /// Where Huffman-coded strings are decoded, kept between blocks.
    scratch: Vec<u8>,
}

/// The most scratch capacity a decoder keeps between blocks.
const SCRATCH_KEPT: usize = 512;

impl Decoder {
    /// A decoder whose table may grow to `limit` bytes (the value weir
    /// announces as SETTINGS_HEADER_TABLE_SIZE; 4096 by default).
    pub fn new(limit: usize) -> Decoder {
        Decoder {
            table: Table {
                max: limit,
                ..Table::default()
            },
            limit,
            scratch: Vec::new(),
        }
    }

    /// The dynamic table's current size in bytes (entries plus overhead).
    pub fn table_size(&self) -> usize {
        self.table.size
    }

    /// Decodes one complete header block, calling `field(name, value)` for
    /// each field in order. `field` may fail with its own error, which ends
    /// the decoding (the table may then be out of step: the connection must
    /// end). Size updates are accepted only before the first field.
    pub fn decode<E: From<HpackError>>(
        &mut self,
        block: &[u8],
        field: impl FnMut(&[u8], &[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut scratch = std::mem::take(&mut self.scratch);
        let done = self.decode_with(block, &mut scratch, field);
        if scratch.capacity() <= SCRATCH_KEPT {
            self.scratch = scratch;
        }
        done
    }

    fn decode_with<E: From<HpackError>>(
        &mut self,
        block: &[u8],
        scratch: &mut Vec<u8>,
        mut field: impl FnMut(&[u8], &[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut pos = 0;
        let mut fields = 0usize;
        while let Some(&first) = block.get(pos) {
            scratch.clear();
            if first & 0x80 != 0 {
                // Indexed field.
                let i = integer(block, &mut pos, 7)?;
                let (n, v) = self.table.get(i)?;
                field(n, v)?;
            } else if first & 0xe0 == 0x20 {
                // Dynamic table size update.
                let max = integer(block, &mut pos, 5)?;
                if fields > 0 || max > self.limit {
                    return Err(HpackError::SizeUpdate.into());
                }
                self.table.max = max;
                self.table.evict_to(max);
                continue;
            } else {
                // A literal: with incremental indexing (01), without (0000)
                // or never indexed (0001).
                let index = first & 0x40 != 0;
                let i = integer(block, &mut pos, if index { 6 } else { 4 })?;
                let name = if i == 0 {
                    Some(string(block, &mut pos, scratch)?)
                } else {
                    self.table.get(i)?;
                    None
                };
                let value = string(block, &mut pos, scratch)?;
                let value = value.get(scratch);
                if index {
                    let name: Cow<'_, [u8]> = match &name {
                        Some(n) => Cow::Borrowed(n.get(scratch)),
                        None => match STATIC.get(i - 1) {
                            Some((n, _)) => Cow::Borrowed(n.as_bytes()),
                            // A dynamic entry's name is copied: the
                            // insertion may evict it.
                            None => Cow::Owned(self.table.get(i)?.0.to_vec()),
                        },
                    };
                    self.table.insert(&name, value);
                    field(&name, value)?;
                } else {
                    let name = match &name {
                        Some(n) => n.get(scratch),
                        None => self.table.get(i)?.0,
                    };
                    field(name, value)?;
                }
            }
            fields += 1;
        }
        Ok(())
    }
}

/// The encoding side: static-table indexes and literals without indexing,
/// never the dynamic table. Names are written in lower case.
#[derive(Debug, Clone, Copy, Default)]
pub struct Encoder {
    /// Huffman-code string literals when that makes them shorter.
    pub huffman: bool,
}

/// Appends an integer with an `n`-bit prefix; `flags` fills the bits above.
fn put_integer(out: &mut Vec<u8>, flags: u8, n: u32, v: usize) {
    let mask = (1usize << n) - 1;
    if v < mask {
        out.push(flags | v as u8);
        return;
    }
    out.push(flags | mask as u8);
    let mut rest = v - mask;
    while rest >= 0x80 {
        out.push((rest as u8 & 0x7f) | 0x80);
        rest >>= 7;
    }
    out.push(rest as u8);
}

/// The static index of `name` (lower case), if it has one.
fn static_name(name: &[u8]) -> Option<usize> {
    // Linear over 61 short names: cheap next to the copy of the value.
    STATIC
        .iter()
        .position(|(n, _)| n.as_bytes() == name)
        .map(|i| i + 1)
}

impl Encoder {
    fn put_string(&self, out: &mut Vec<u8>, s: &[u8]) {
        if self.huffman {
            let h = huffman::encoded_len(s);
            if h < s.len() {
                put_integer(out, 0x80, 7, h);
                huffman::encode(s, out);
                return;
            }
        }
        put_integer(out, 0, 7, s.len());
        out.extend_from_slice(s);
    }

    /// Appends `:status` (an index for the seven in the static table).
    pub fn status(&self, out: &mut Vec<u8>, code: u16) {
        let idx = match code {
            200 => 8,
            204 => 9,
            206 => 10,
            304 => 11,
            400 => 12,
            404 => 13,
            500 => 14,
            _ => 0,
        };
        if idx != 0 {
            out.push(0x80 | idx);
            return;
        }
        // Literal without indexing, name `:status` (index 8).
        out.push(0x08);
        let mut digits = [b'0'; 3];
        let c = code.min(999);
        digits[0] += (c / 100) as u8;
        digits[1] += (c / 10 % 10) as u8;
        digits[2] += (c % 10) as u8;
        self.put_string(out, &digits);
    }

    /// Appends one field; `name` is lower-cased as it is written.
    pub fn field(&self, out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
        // Lower-cased on the stack for the usual names (an HTTP/1.1
        // server's `Content-Length`), allocated only for long ones.
        let mut short = [0u8; 64];
        let long;
        let name = if !name.iter().any(u8::is_ascii_uppercase) {
            name
        } else if let Some(buf) = short.get_mut(..name.len()) {
            buf.copy_from_slice(name);
            buf.make_ascii_lowercase();
            buf
        } else {
            long = name.to_ascii_lowercase();
            &long[..]
        };
        match static_name(name) {
            Some(i) => {
                let same = STATIC.get(i - 1).is_some_and(|e| e.1.as_bytes() == value);
                if same && !value.is_empty() {
                    put_integer(out, 0x80, 7, i);
                    return;
                }
                put_integer(out, 0, 4, i);
            }
            None => {
                out.push(0);
                self.put_string(out, name);
            }
        }
        self.put_string(out, value);
    }
}

#[cfg(test)]
#[path = "hpack_tests.rs"]
mod tests;
