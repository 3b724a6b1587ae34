//! HPACK's Huffman code (RFC 7541 §5.2, Appendix B): encoding and strict
//! decoding of string literals.
//!
//! The code is canonical: sorting the 257 symbols (256 bytes and EOS) by
//! code length, then by value, and counting up gives every code. So only the
//! lengths are written here; the codes and the decoding tables are derived
//! at compile time.
// Indexing still to be made checked (`get`) here: table lookups by masked indexes, within the tables by construction.
#![allow(clippy::indexing_slicing)]

/// Code length in bits of each symbol, bytes 0..=255 then EOS (256).
const LENS: [u8; 257] = [
    13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28, // 0x00
    28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 28, // 0x10
    6, 10, 10, 12, 13, 6, 8, 11, 10, 10, 8, 11, 8, 6, 6, 6, // ' ' ..
    5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7, 8, 15, 6, 12, 10, // '0' ..
    13, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, // '@' ..
    7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 8, 13, 19, 13, 14, 6, // 'P' ..
    15, 5, 6, 5, 6, 5, 6, 6, 6, 5, 7, 7, 6, 6, 6, 5, // '`' ..
    6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7, 15, 11, 14, 13, 28, // 'p' ..
    20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23, // 0x80
    24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24, // 0x90
    22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23, // 0xa0
    21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23, // 0xb0
    26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25, // 0xc0
    19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27, // 0xd0
    20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23, // 0xe0
    26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26, // 0xf0
    30, // EOS
];

const EOS: u16 = 256;
const MAX_LEN: usize = 30;
/// Codes this long or shorter are decoded with one table look-up.
const FAST_BITS: u32 = 9;

/// Symbols sorted by (length, value): the canonical order.
const SORTED: [u16; 257] = {
    let mut s = [0u16; 257];
    let mut k = 0;
    let mut len = 1;
    while len <= MAX_LEN {
        let mut sym = 0;
        while sym < 257 {
            if LENS[sym] as usize == len {
                s[k] = sym as u16;
                k += 1;
            }
            sym += 1;
        }
        len += 1;
    }
    s
};

/// Per length: the first code of that length, the index in `SORTED` of its
/// symbol, and how many codes have that length.
const FIRST: ([u32; MAX_LEN + 1], [u16; MAX_LEN + 1], [u16; MAX_LEN + 1]) = {
    let mut count = [0u16; MAX_LEN + 1];
    let mut sym = 0;
    while sym < 257 {
        count[LENS[sym] as usize] += 1;
        sym += 1;
    }
    let mut first = [0u32; MAX_LEN + 1];
    let mut index = [0u16; MAX_LEN + 1];
    let mut code = 0u32;
    let mut idx = 0u16;
    let mut len = 1;
    while len <= MAX_LEN {
        first[len] = code;
        index[len] = idx;
        code = (code + count[len] as u32) << 1;
        idx += count[len];
        len += 1;
    }
    (first, index, count)
};

/// The code of each symbol (right-aligned in `LENS[sym]` bits).
const CODES: [u32; 257] = {
    let mut c = [0u32; 257];
    let mut k = 0;
    let mut code = 0u32;
    let mut prev = LENS[SORTED[0] as usize];
    while k < 257 {
        let sym = SORTED[k] as usize;
        let len = LENS[sym];
        if k > 0 {
            code = (code + 1) << (len - prev);
        }
        prev = len;
        c[sym] = code;
        k += 1;
    }
    c
};

/// Indexed by the next `FAST_BITS` bits: the symbol and its length, or a
/// length of 0 when the code is longer.
const FAST: [(u16, u8); 1 << FAST_BITS] = {
    let mut t = [(0u16, 0u8); 1 << FAST_BITS];
    let mut sym = 0;
    while sym < 257 {
        let len = LENS[sym] as u32;
        if len <= FAST_BITS {
            let base = (CODES[sym] << (FAST_BITS - len)) as usize;
            let mut i = 0;
            while i < (1 << (FAST_BITS - len)) {
                t[base + i] = (sym as u16, len as u8);
                i += 1;
            }
        }
        sym += 1;
    }
    t
};

/// A string literal that is not a valid Huffman encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum HuffmanError {
    /// EOS inside the string, or padding longer than 7 bits or not all ones.
    #[error("invalid Huffman padding or EOS in a string")]
    Padding,
}

/// The length in bytes of `src` once encoded.
pub fn encoded_len(src: &[u8]) -> usize {
    let bits: usize = src.iter().map(|&b| LENS[b as usize] as usize).sum();
    bits.div_ceil(8)
}

/// Appends the Huffman encoding of `src` to `out` (padded with ones).
pub fn encode(src: &[u8], out: &mut Vec<u8>) {
    out.reserve(encoded_len(src));
    let mut acc: u64 = 0;
    let mut n: u32 = 0;
    for &b in src {
        let len = u32::from(LENS[b as usize]);
        acc = (acc << len) | u64::from(CODES[b as usize]);
        n += len;
        while n >= 8 {
            n -= 8;
            out.push((acc >> n) as u8);
        }
    }
    if n > 0 {
        let pad = 8 - n;
        out.push(((acc << pad) | ((1 << pad) - 1)) as u8);
    }
}

/// The symbol at the start of `peek` (the next bits, MSB first, in the low
/// `MAX_LEN` bits) and its length.
fn symbol(peek: u32) -> (u16, u32) {
    let (sym, len) = FAST[(peek >> (MAX_LEN as u32 - FAST_BITS)) as usize];
    if len != 0 {
        return (sym, u32::from(len));
    }
    let (first, index, count) = &FIRST;
    let mut len = FAST_BITS as usize + 1;
    while len <= MAX_LEN {
        let code = peek >> (MAX_LEN - len);
        let off = code.wrapping_sub(first[len]);
        if off < u32::from(count[len]) {
            return (SORTED[index[len] as usize + off as usize], len as u32);
        }
        len += 1;
    }
    // Unreachable for a complete code: every 30-bit pattern starts with
    // some code (EOS is the all-ones one).
    (EOS, MAX_LEN as u32)
}

/// Appends the decoding of `src` to `out`. Fails on EOS inside the string
/// and on padding that is longer than 7 bits or not a prefix of EOS (all
/// ones), as RFC 7541 §5.2 requires.
pub fn decode(src: &[u8], out: &mut Vec<u8>) -> Result<(), HuffmanError> {
    out.reserve(src.len() + src.len() / 2);
    let mut acc: u64 = 0;
    let mut n: u32 = 0; // bits in `acc`, right-aligned
    let mut bytes = src.iter();
    loop {
        while n <= 56 - 8 {
            match bytes.next() {
                Some(&b) => {
                    acc = (acc << 8) | u64::from(b);
                    n += 8;
                }
                None => break,
            }
        }
        if n == 0 {
            return Ok(());
        }
        // The next 30 bits, padded with ones past the end.
        let peek = if n >= MAX_LEN as u32 {
            (acc >> (n - MAX_LEN as u32)) as u32 & ((1 << MAX_LEN) - 1)
        } else {
            let pad = MAX_LEN as u32 - n;
            (((acc << pad) | ((1 << pad) - 1)) as u32) & ((1 << MAX_LEN) - 1)
        };
        let (sym, len) = symbol(peek);
        if len > n {
            // Only padding is left: fewer than 8 bits, all ones.
            let ones = (1u64 << n) - 1;
            return if n < 8 && acc & ones == ones {
                Ok(())
            } else {
                Err(HuffmanError::Padding)
            };
        }
        if sym == EOS {
            return Err(HuffmanError::Padding);
        }
        out.push(sym as u8);
        n -= len;
        acc &= (1u64 << n) - 1;
    }
}

#[cfg(test)]
#[path = "huffman_tests.rs"]
mod tests;
