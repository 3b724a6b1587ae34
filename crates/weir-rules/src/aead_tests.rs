//! Unit tests of `aead.rs`, on messages encrypted by Python's
//! `cryptography` (AES-GCM, nonce `nnnnnnnnnnnn`, keys of `k`, `y`, `z`).

use super::*;

use crate::NoCtx;

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn dec(args: &[&str], ct: &str) -> Option<Vec<u8>> {
    let a: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    apply(&parse(&a).unwrap(), &hex(ct), &NoCtx)
}

const NONCE: &str = "bm5ubm5ubm5ubm5u";

#[test]
fn the_three_key_sizes_decrypt() {
    let cases = [
        (
            "128",
            "a2tra2tra2tra2tra2traw==",
            "yF8fBsCtQJ/OJgtyQ9/r8g==",
            "539926ca6c458ed0c38373",
        ),
        (
            "192",
            "eXl5eXl5eXl5eXl5eXl5eXl5eXl5eXl5",
            "GB6YnK0W8nUBhlOLRbE5ig==",
            "990c31dff4efc934aabe08",
        ),
        (
            "256",
            "enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6eno=",
            "vlC8OwvNaAsrhker35OVkw==",
            "5301d77609806fca07efa9",
        ),
    ];
    for (bits, key, tag, ct) in cases {
        assert_eq!(
            dec(&[bits, NONCE, key, tag], ct),
            Some(b"hello world".to_vec()),
            "{bits}"
        );
    }
}

#[test]
fn what_does_not_verify_gives_nothing() {
    let key = "a2tra2tra2tra2tra2traw==";
    let ct = "539926ca6c458ed0c38373";
    assert_eq!(
        dec(&["128", NONCE, key, "AAAAAAAAAAAAAAAAAAAAAA=="], ct),
        None
    );
    // A 128-bit key with 256 bits asked for.
    assert_eq!(
        dec(&["256", NONCE, key, "yF8fBsCtQJ/OJgtyQ9/r8g=="], ct),
        None
    );
    assert_eq!(
        dec(&["128", NONCE, key, "yF8fBsCtQJ/OJgtyQ9/r8g=="], ""),
        None
    );
}

#[test]
fn arguments_are_refused_as_haproxy_refuses_them() {
    let p = |a: &[&str]| parse(&a.iter().map(|s| s.to_string()).collect::<Vec<_>>());
    assert!(p(&["100", NONCE, NONCE, NONCE])
        .unwrap_err()
        .contains("128, 192 or 256"));
    assert!(p(&["128", "abc", NONCE, NONCE])
        .unwrap_err()
        .contains("failed to parse nonce"));
    assert!(p(&["128", "!!!!", NONCE, NONCE]).is_err());
    assert!(p(&["128", NONCE]).is_err());
    assert!(p(&["128", "txn.n", "txn.k", "txn.t"]).is_ok());
}
