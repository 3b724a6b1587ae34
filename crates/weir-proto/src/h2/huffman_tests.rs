use super::*;
use crate::h2::hex;

fn enc(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    encode(s, &mut out);
    assert_eq!(out.len(), encoded_len(s));
    out
}

fn dec(b: &[u8]) -> Result<Vec<u8>, HuffmanError> {
    let mut out = Vec::new();
    decode(b, &mut out).map(|()| out)
}

#[test]
fn derived_codes_are_rfc_7541_appendix_b() {
    // A sample of Appendix B's rows: (symbol, code, length).
    for (sym, code, len) in [
        (0usize, 0x1ff8u32, 13u8),
        (1, 0x7fffd8, 23),
        (9, 0xffffea, 24),
        (10, 0x3ffffffc, 30),
        (b' ' as usize, 0x14, 6),
        (b'0' as usize, 0x0, 5),
        (b'a' as usize, 0x3, 5),
        (b'z' as usize, 0x7b, 7),
        (b'~' as usize, 0x1ffd, 13),
        (127, 0xffffffc, 28),
        (128, 0xfffe6, 20),
        (255, 0x3ffffee, 26),
        (256, 0x3fffffff, 30),
    ] {
        assert_eq!((CODES[sym], LENS[sym]), (code, len), "symbol {sym}");
    }
    // A complete prefix code: the Kraft sum is exactly one.
    let kraft: u64 = LENS.iter().map(|&l| 1u64 << (30 - l)).sum();
    assert_eq!(kraft, 1 << 30);
}

#[test]
fn rfc_7541_appendix_c_strings() {
    for (text, coded) in [
        ("www.example.com", "f1e3 c2e5 f23a 6ba0 ab90 f4ff"),
        ("no-cache", "a8eb 1064 9cbf"),
        ("custom-key", "25a8 49e9 5ba9 7d7f"),
        ("custom-value", "25a8 49e9 5bb8 e8b4 bf"),
        ("302", "6402"),
        ("private", "aec3 771a 4b"),
        (
            "Mon, 21 Oct 2013 20:13:21 GMT",
            "d07a be94 1054 d444 a820 0595 040b 8166 e082 a62d 1bff",
        ),
        (
            "https://www.example.com",
            "9d29 ad17 1863 c78f 0b97 c8e9 ae82 ae43 d3",
        ),
    ] {
        assert_eq!(enc(text.as_bytes()), hex(coded), "encoding {text}");
        assert_eq!(
            dec(&hex(coded)).unwrap(),
            text.as_bytes(),
            "decoding {text}"
        );
    }
}

#[test]
fn every_byte_and_mixed_strings_round_trip() {
    let all: Vec<u8> = (0..=255u8).collect();
    assert_eq!(dec(&enc(&all)).unwrap(), all);
    let mut x: u32 = 12345;
    for len in 0..300 {
        let s: Vec<u8> = (0..len)
            .map(|_| {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                (x >> 16) as u8
            })
            .collect();
        assert_eq!(dec(&enc(&s)).unwrap(), s, "length {len}");
    }
    assert_eq!(dec(&[]).unwrap(), b"");
}

#[test]
fn bad_padding_and_eos_are_refused() {
    // 'a' is 00011: padded with zeros instead of ones.
    assert_eq!(dec(&[0b0001_1000]), Err(HuffmanError::Padding));
    assert_eq!(dec(&[0b0001_1111]).unwrap(), b"a");
    // Eight bits of padding: a whole byte of ones after a full symbol.
    assert_eq!(dec(&[0b0000_0111, 0xff]), Err(HuffmanError::Padding));
    // EOS (30 ones) encoded inside the string.
    assert_eq!(dec(&[0xff, 0xff, 0xff, 0xff]), Err(HuffmanError::Padding));
    // A truncated long code: the first 8 bits of symbol 0 (13 bits).
    assert_eq!(dec(&[0xff]), Err(HuffmanError::Padding));
}
