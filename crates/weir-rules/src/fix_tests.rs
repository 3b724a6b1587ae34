//! Unit tests of `fix.rs`.

use super::*;

/// A logon message made for these tests (checksum 142).
fn logon() -> Vec<u8> {
    b"8=FIX.4.4\x019=59\x0135=A\x0134=1\x0149=WEIR\x0152=20261126-10:00:00\x0156=PEER\x0198=0\x01108=30\x0110=142\x01".to_vec()
}

#[test]
fn valid_messages_and_their_faults() {
    let m = logon();
    assert!(is_valid(&m));
    let bad_sum = [&m[..m.len() - 2], b"3\x01"].concat();
    assert!(!is_valid(&bad_sum));
    let bad_len = String::from_utf8(m.clone())
        .unwrap()
        .replace("9=59", "9=58");
    assert!(!is_valid(bad_len.as_bytes()));
    let bad_version = String::from_utf8(m.clone())
        .unwrap()
        .replace("FIX.4.4", "FIX.9.9");
    assert!(!is_valid(bad_version.as_bytes()));
    assert!(!is_valid(&m[..m.len() - 1]), "cut short");
    assert!(!is_valid(b"8=FIX.4.4\x01x=1\x01"));
    assert!(!is_valid(b""));
}

#[test]
fn tag_values() {
    let m = logon();
    assert_eq!(tag_value(&m, tag_of("MsgType").unwrap()), Some(&b"A"[..]));
    assert_eq!(tag_value(&m, tag_of("49").unwrap()), Some(&b"WEIR"[..]));
    assert_eq!(tag_value(&m, 10), Some(&b"142"[..]));
    assert_eq!(tag_value(&m, 999), None);
    assert!(tag_of("Nope").is_err());
}

#[test]
fn partial_messages_wait_and_whole_ones_are_decided() {
    let m = logon();
    assert!(!is_partial(&m));
    assert!(is_partial(&m[..m.len() - 1]), "no SOH after the checksum");
    assert!(is_partial(b"8=FIX.4.4\x019=5\x01"), "no checksum yet");
    // A wrong checksum field is still a whole message: decided (invalid).
    assert!(!is_partial(b"8=FIX.4.4\x019=5\x0110=2520\x01"));
}
