//! Unit tests of `jwt.rs`: tokens signed here with aws-lc-rs, checked
//! with haproxy 2.6's return codes.

use super::*;
use crate::NoCtx;
use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{EcdsaKeyPair, KeyPair, RsaKeyPair};

fn b64u(b: &[u8]) -> String {
    String::from_utf8(crate::strconv::base64(b))
        .unwrap()
        .trim_end_matches('=')
        .replace('+', "-")
        .replace('/', "_")
}

fn signed_part(alg: &str) -> String {
    format!(
        "{}.{}",
        b64u(format!(r#"{{"alg":"{alg}","typ":"JWT"}}"#).as_bytes()),
        b64u(br#"{"sub":"42","admin":true}"#)
    )
}

#[test]
fn hmac_tokens_and_their_errors() {
    let msg = signed_part("HS256");
    let tag = hmac::sign(&hmac::Key::new(hmac::HMAC_SHA256, b"k"), msg.as_bytes());
    let token = format!("{msg}.{}", b64u(tag.as_ref()));
    let v = |t: &str, alg: &[u8], key: &[u8]| verify(t.as_bytes(), alg, key, None);
    assert_eq!(v(&token, b"HS256", b"k"), 1);
    assert_eq!(v(&token, b"HS256", b"other"), 0);
    assert_eq!(v(&token, b"HS384", b"k"), 0);
    assert_eq!(v(&token, b"PS256", b"k"), -2);
    assert_eq!(v(&token, b"XX256", b"k"), -1);
    assert_eq!(v(&msg, b"HS256", b"k"), -3, "two parts");
    assert_eq!(v(&format!("{msg}."), b"HS256", b"k"), -3, "empty signature");
    assert_eq!(v(&format!("{token}.x"), b"HS256", b"k"), -3, "four parts");
    // 45 characters: no base64url text has that length.
    assert_eq!(
        v(&format!("{token}AA"), b"HS256", b"k"),
        -3,
        "not base64url"
    );
    assert_eq!(v(&format!("{token}*"), b"HS256", b"k"), -3, "not base64url");
    assert_eq!(v(&token, b"RS256", b"k"), -5, "no public key");
}

#[test]
fn ecdsa_and_rsa_tokens() {
    let rng = SystemRandom::new();
    let pkcs8 =
        EcdsaKeyPair::generate_pkcs8(&signature::ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
    let kp = EcdsaKeyPair::from_pkcs8(&signature::ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref())
        .unwrap();
    let msg = signed_part("ES256");
    let sig = kp.sign(&rng, msg.as_bytes()).unwrap();
    let token = format!("{msg}.{}", b64u(sig.as_ref()));
    let pk = PublicKey {
        alg: vec![0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01],
        key: kp.public_key().as_ref().to_vec(),
    };
    assert_eq!(verify(token.as_bytes(), b"ES256", b"", Some(&pk)), 1);
    let bad = format!("{msg}.{}", b64u(&[sig.as_ref(), &[0]].concat()));
    assert_eq!(
        verify(bad.as_bytes(), b"ES256", b"", Some(&pk)),
        -3,
        "not two halves"
    );
    let bad = format!("{msg}.{}", b64u(&[sig.as_ref(), &[0, 0]].concat()));
    assert_eq!(
        verify(bad.as_bytes(), b"ES256", b"", Some(&pk)),
        0,
        "halves too long"
    );
    let other = format!("{}.{}", signed_part("ES256x"), b64u(sig.as_ref()));
    assert_eq!(verify(other.as_bytes(), b"ES256", b"", Some(&pk)), 0);

    let rsa = RsaKeyPair::generate(aws_lc_rs::rsa::KeySize::Rsa2048).unwrap();
    let msg = signed_part("RS256");
    let mut sig = vec![0; rsa.public_modulus_len()];
    rsa.sign(&signature::RSA_PKCS1_SHA256, &rng, msg.as_bytes(), &mut sig)
        .unwrap();
    let token = format!("{msg}.{}", b64u(&sig));
    let pk = PublicKey {
        alg: vec![0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01],
        key: rsa.public_key().as_ref().to_vec(),
    };
    assert_eq!(verify(token.as_bytes(), b"RS256", b"", Some(&pk)), 1);
    assert_eq!(verify(token.as_bytes(), b"RS512", b"", Some(&pk)), 0);
}

#[test]
fn keys_from_pem() {
    // A P-256 certificate's key is read as a key file's would be.
    let cert = crate::strconv::b64dec(crate::x509::tests_cert_b64()).unwrap();
    let pem = format!(
        "-----BEGIN CERTIFICATE-----\n{}\n-----END CERTIFICATE-----\n",
        String::from_utf8(crate::strconv::base64(&cert)).unwrap()
    );
    let k = public_key(&pem).unwrap();
    assert_eq!(k.key.len(), 65);
    assert_eq!(k.key[0], 4, "an uncompressed point");
    assert!(
        public_key("-----BEGIN RSA PRIVATE KEY-----\nAA==\n-----END RSA PRIVATE KEY-----")
            .is_none()
    );
    assert!(public_key("no pem").is_none());
}

#[test]
fn queries_and_bearer() {
    let token = format!("{}.sig", signed_part("HS256"));
    let q = |part, path: Option<&str>| {
        let c = JwtConv::Query {
            part,
            path: path.map(|p| crate::json::parse_path(p).unwrap()),
            int: false,
        };
        apply(&c, Sample::Str(token.clone().into_bytes()), &NoCtx).map(|s| s.to_bytes())
    };
    assert_eq!(q(0, Some("$.alg")), Some(b"HS256".to_vec()));
    assert_eq!(q(1, Some("$.sub")), Some(b"42".to_vec()));
    assert_eq!(q(1, None), Some(br#"{"sub":"42","admin":true}"#.to_vec()));
    assert_eq!(q(3, None), None, "no fourth part");
}
