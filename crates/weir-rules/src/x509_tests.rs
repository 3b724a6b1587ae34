//! Unit tests of `x509.rs`.

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

/// A self-signed P-256 certificate made with `openssl req -x509 -subj
/// "/C=FR/O=Weir Test/CN=unit.example" -set_serial 0x1234 -days 30`.
pub(crate) const CERT_B64: &[u8] = b"MIIBsjCCAVmgAwIBAgICEjQwCgYIKoZIzj0EAwIwODELMAkGA1UEBhMCRlIxEjAQBgNVBAoMCVdlaXIgVGVzdDEVMBMGA1UEAwwMdW5pdC5leGFtcGxlMB4XDTI2MTEyNjA5MjI0NVoXDTI2MTIyNjA5MjI0NVowODELMAkGA1UEBhMCRlIxEjAQBgNVBAoMCVdlaXIgVGVzdDEVMBMGA1UEAwwMdW5pdC5leGFtcGxlMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEJ2VxkwpK84lQxY6DZ8IV1YbrjQAhJymtViQNpksaXzpBNjnCS20luUjNFLpa3BiM43zmpgFYJ7mMQcHSdp/An6NTMFEwHQYDVR0OBBYEFBpcp9leYnSS+yBTf19EI5UdWl+MMB8GA1UdIwQYMBaAFBpcp9leYnSS+yBTf19EI5UdWl+MMA8GA1UdEwEB/wQFMAMBAf8wCgYIKoZIzj0EAwIDRwAwRAIgQzFpbblbyIfEsFQ9BR/7ehSSe/iq8FkZjhgyaoseSXwCIBrXWOw+xyiz7dQY11KGw8VUgKb8IjJBS+861Q3l7+Vl";

#[test]
fn certificate_fields_as_openssl_reads_them() {
    let der = crate::strconv::b64dec(CERT_B64).unwrap();
    let c = parse(&der).unwrap();
    assert_eq!(c.version, 3);
    assert_eq!(c.serial, [0x12, 0x34]);
    assert_eq!(sig_alg_name(c.sig_alg), "ecdsa-with-SHA256");
    assert_eq!(key_alg_name(c.key_alg), "id-ecPublicKey");
    assert_eq!(oneline(c.subject), "/C=FR/O=Weir Test/CN=unit.example");
    assert_eq!(oneline(c.issuer), oneline(c.subject));
    assert_eq!(c.not_before, b"261126092245Z");
    assert_eq!(c.not_after, b"261226092245Z");
    // Anything cut short is not a certificate.
    for n in [0, 10, 200, der.len() - 1] {
        assert!(parse(&der[..n]).is_none(), "{n}");
    }
    assert_eq!(
        sig_alg_name(&[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x0b]),
        "RSA-SHA256"
    );
}

#[test]
fn dn_entries_and_rfc2253() {
    let der = crate::strconv::b64dec(CERT_B64).unwrap();
    let c = parse(&der).unwrap();
    assert_eq!(entry(c.subject, "cn", 1).as_deref(), Some("unit.example"));
    assert_eq!(entry(c.subject, "O", -1).as_deref(), Some("Weir Test"));
    assert_eq!(entry(c.subject, "O", 2), None);
    assert_eq!(entry(c.subject, "O", 0), None);
    assert_eq!(rfc2253(c.subject), "CN=unit.example,O=Weir Test,C=FR");
    // SET{SEQ{OID CN, UTF8 "a,b"}}: the comma is escaped.
    let der = [
        0x31, 0x0c, 0x30, 0x0a, 0x06, 0x03, 0x55, 0x04, 0x03, 0x0c, 0x03, b'a', b',', b'b',
    ];
    assert_eq!(rfc2253(&der), "CN=a\\,b");
}

#[test]
fn times_as_seconds() {
    assert_eq!(time_secs(b"700101000000Z"), Some(0));
    assert_eq!(time_secs(b"160117230238Z"), Some(1_453_071_758));
    assert_eq!(time_secs(b"20480907140120Z"), Some(2_483_100_080));
    assert_eq!(time_secs(b"garbage"), None);
}
