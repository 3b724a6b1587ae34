//! Unit tests of the SOCKS4 codec.

use super::*;

#[test]
fn request_as_haproxy_writes_it() {
    let r = connect_request("127.0.0.1:8080".parse().unwrap()); // ok: fixed input
    assert_eq!(
        r,
        [4, 1, 0x1f, 0x90, 127, 0, 0, 1, b'H', b'A', b'P', b'r', b'o', b'x', b'y', 0]
    );
}

#[test]
fn replies() {
    assert_eq!(reply(&[0, 0x5a, 0, 0, 0, 0, 0, 0]), Ok(()));
    assert_eq!(reply(&[0, 0x5b, 0, 0, 0, 0, 0, 0]), Err(0x5b));
    assert_eq!(reply(&[4, 0x5a, 0, 0, 0, 0, 0, 0]), Err(0x5a));
}
