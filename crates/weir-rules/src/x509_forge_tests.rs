//! Unit tests of `x509_forge.rs`.

use super::*;
use crate::x509::{entry, oneline, parse, signed_parts, spki_der, time_secs};

fn ca() -> Vec<u8> {
    crate::strconv::b64dec(crate::x509::tests::CERT_B64).unwrap()
}

#[test]
fn a_forged_leaf_reads_back_as_openssl_shows_it() {
    let ca = ca();
    let issuer = subject_der(&ca).unwrap();
    let spki = spki_der(&ca).unwrap();
    let alg = sig_alg_der("ECDSA_NISTP256_SHA256").unwrap();
    let ca_id = key_id(&ca).unwrap();
    assert_eq!(
        ca_id,
        [
            0x1a, 0x5c, 0xa7, 0xd9, 0x5e, 0x62, 0x74, 0x92, 0xfb, 0x20, 0x53, 0x7f, 0x5f, 0x44,
            0x23, 0x95, 0x1d, 0x5a, 0x5f, 0x8c
        ]
    );
    let leaf = Leaf {
        name: "unknown-sni.com",
        serial: &[0x01, 0x02, 0x03],
        sig_alg: &alg,
        issuer,
        not_before: 1_795_000_000,
        not_after: 2_600_000_000,
        spki,
        key_id: &[7; 20],
        ca_key_id: Some(&ca_id),
    };
    let tbs = tbs(&leaf).unwrap();
    let der = certificate(&tbs, &alg, &[0x30, 0x00]);
    let c = parse(&der).unwrap();
    assert_eq!(c.version, 3);
    assert_eq!(c.serial, [1, 2, 3]);
    assert_eq!(oneline(c.issuer), "/C=FR/O=Weir Test/CN=unit.example");
    // The CA's name, then the server's CN: the first CN is the CA's.
    assert_eq!(
        oneline(c.subject),
        "/C=FR/O=Weir Test/CN=unit.example/CN=unknown-sni.com"
    );
    assert_eq!(entry(c.subject, "CN", 1).as_deref(), Some("unit.example"));
    assert_eq!(
        entry(c.subject, "CN", -1).as_deref(),
        Some("unknown-sni.com")
    );
    // UTCTime before 2050, GeneralizedTime after.
    assert_eq!(c.not_before, b"261118110640Z");
    assert_eq!(c.not_after, b"20520522141320Z");
    assert_eq!(time_secs(c.not_after), Some(2_600_000_000));
    assert_eq!(spki_der(&der), Some(spki));
    assert_eq!(key_id(&der).as_deref(), Some(&[7u8; 20][..]));
    assert_eq!(crate::x509::is_ca(&der), Some(false));
    let (signed, _, sig) = signed_parts(&der).unwrap();
    assert_eq!(signed, tbs.as_slice());
    assert_eq!(sig, [0x30, 0x00]);
}

#[test]
fn long_elements_take_long_lengths() {
    let big = der(0x04, &[0u8; 300]);
    assert_eq!(&big[..4], &[0x04, 0x82, 0x01, 0x2c]);
    assert_eq!(crate::x509::tlv(&big).map(|t| t.1.len()), Some(300));
    assert!(sig_alg_der("RSA_PSS_SHA256").is_none());
}
