//! Unit tests of `tls/dn.rs`.

use super::*;

#[test]
fn name_forms() {
    // SET{SEQ{OID C, PrintableString "FR"}} SET{SEQ{OID CN, UTF8 "a.b"}}
    let der = [
        0x31, 0x0b, 0x30, 0x09, 0x06, 0x03, 0x55, 0x04, 0x06, 0x13, 0x02, b'F', b'R', 0x31, 0x0c,
        0x30, 0x0a, 0x06, 0x03, 0x55, 0x04, 0x03, 0x0c, 0x03, b'a', b'.', b'b',
    ];
    assert_eq!(oneline(&der), "/C=FR/CN=a.b");
    assert_eq!(common_name(&der).as_deref(), Some("a.b"));
    assert_eq!(oneline(&der[..5]), "", "truncated input gives nothing");
    assert_eq!(
        dotted(&[0x2b, 0x06, 0x01, 0x04, 0x01, 0x82, 0x37]),
        "1.3.6.1.4.1.311"
    );
}
