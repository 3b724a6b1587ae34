//! Unit tests of `tickets.rs`.

use super::*;

fn key_file(keys: &[Vec<u8>]) -> String {
    let dir = std::env::temp_dir().join(format!("weir-tickets-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // One file per call: the tests run at once.
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = dir.join(format!("k{n}"));
    let text: String = keys
        .iter()
        .map(|k| String::from_utf8(b64(k)).unwrap() + "\n")
        .collect();
    std::fs::write(&path, text).unwrap();
    path.to_string_lossy().into_owned()
}

/// Standard base64, as `openssl base64 -A` writes it.
fn b64(b: &[u8]) -> Vec<u8> {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = Vec::new();
    for c in b.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= c.len() {
                out.push(T[(n >> (18 - 6 * i) & 63) as usize]);
            } else {
                out.push(b'=');
            }
        }
    }
    out
}

fn key(b: u8, len: usize) -> Vec<u8> {
    vec![b; len]
}

#[test]
fn file_keys_rotate_as_haproxy_documents() {
    // Keys 1..3: 2 encrypts, 1..3 decrypt.
    let a = from_file(&key_file(&[key(1, 80), key(2, 80), key(3, 80)]), 300).unwrap();
    let t = a.encrypt(b"session").unwrap();
    assert_eq!(&t[..16], &[2u8; 16], "the penultimate key's name");
    assert_eq!(a.decrypt(&t).unwrap(), b"session");
    // A key appended: 3 encrypts now, and 2's tickets still open.
    let b = from_file(
        &key_file(&[key(1, 80), key(2, 80), key(3, 80), key(4, 80)]),
        300,
    )
    .unwrap();
    assert_eq!(b.decrypt(&t).unwrap(), b"session");
    assert_eq!(&b.encrypt(b"x").unwrap()[..16], &[3u8; 16]);
    // Tampered: refused.
    let mut bad = t.clone();
    *bad.last_mut().unwrap() ^= 1;
    assert!(a.decrypt(&bad).is_none());
    // 48-byte keys (AES-128).
    let c = from_file(&key_file(&[key(5, 48), key(6, 48), key(7, 48)]), 300).unwrap();
    assert_eq!(c.decrypt(&c.encrypt(b"s").unwrap()).unwrap(), b"s");
}

#[test]
fn file_errors() {
    assert!(from_file(&key_file(&[key(1, 80), key(2, 80)]), 1)
        .unwrap_err()
        .contains("not enough keys"));
    assert!(
        from_file(&key_file(&[key(1, 80), key(2, 48), key(3, 80)]), 1)
            .unwrap_err()
            .contains("wrong sized key at line 2")
    );
    assert!(from_file("/nonexistent/keys", 1).is_err());
}

#[test]
fn derived_keys_agree_between_ticketers_of_one_secret() {
    let (a, b) = (Derived::new(300), Derived::new(300));
    let t = a.encrypt(b"session").unwrap();
    assert_eq!(b.decrypt(&t).unwrap(), b"session");
    let other = Derived {
        secret: [9u8; 32],
        lifetime: 300,
        cache: Mutex::new(None),
    };
    assert!(other.decrypt(&t).is_none(), "another secret opens nothing");
}
