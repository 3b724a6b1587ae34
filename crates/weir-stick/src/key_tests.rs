use crate::key::{Key, KeyType};

fn words(s: &str) -> Vec<String> {
    s.split_whitespace().map(String::from).collect()
}

#[test]
fn key_types_parse_with_lengths() {
    assert_eq!(
        KeyType::parse(&words("ip size 1")).unwrap(),
        (KeyType::Ip, 1)
    );
    assert_eq!(
        KeyType::parse(&words("string len 8 size 1")).unwrap(),
        (KeyType::String(8), 3)
    );
    assert_eq!(
        KeyType::parse(&words("binary")).unwrap(),
        (KeyType::Binary(32), 1)
    );
    assert!(KeyType::parse(&words("string len x")).is_err());
    assert!(KeyType::parse(&words("float")).is_err());
}

#[test]
fn keys_cut_pad_and_display() {
    let s = KeyType::String(4);
    assert_eq!(Key::string(s, b"abcdef").display(s), "abcd");
    let b = KeyType::Binary(3);
    let k = Key::binary(b, b"a");
    assert_eq!(k, Key::Bytes(vec![b'a', 0, 0].into()));
    assert_eq!(k.display(b), "610000");
    assert_eq!(Key::parse(b, "610000"), Some(k));
    assert_eq!(
        Key::parse(KeyType::Ip, "1.2.3.4")
            .unwrap()
            .display(KeyType::Ip),
        "1.2.3.4"
    );
    assert_eq!(Key::parse(KeyType::Ip, "::1"), None);
}
