//! Unit tests of `lexer.rs`.

use super::*;

fn env(name: &str) -> Option<String> {
    match name {
        "HOST" => Some("127.0.0.1".into()),
        "LIST" => Some("a b  c".into()),
        "EMPTY" => Some(String::new()),
        _ => None,
    }
}

fn t(line: &str) -> Vec<String> {
    tokenize(line, &env).unwrap()
}

#[test]
fn words_and_comments() {
    assert_eq!(t("  bind :80   # web"), ["bind", ":80"]);
    assert_eq!(t("# only a comment"), Vec::<String>::new());
    assert_eq!(t(""), Vec::<String>::new());
    assert_eq!(t("a\tb"), ["a", "b"]);
}

#[test]
fn manual_equivalences() {
    let want = ["log-format", "%{+Q}o %t %s %{-Q}r"];
    assert_eq!(t(r"log-format %{+Q}o\ %t\ %s\ %{-Q}r"), want);
    assert_eq!(t(r#"log-format "%{+Q}o %t %s %{-Q}r""#), want);
    assert_eq!(t(r"log-format '%{+Q}o %t %s %{-Q}r'"), want);
    assert_eq!(t(r#"log-format "%{+Q}o %t"' %s %{-Q}r'"#), want);
    assert_eq!(t(r#"log-format "%{+Q}o %t"' %s'\ %{-Q}r"#), want);
}

#[test]
fn escapes() {
    assert_eq!(t(r"a\#b"), ["a#b"]);
    assert_eq!(t(r"a\x41b"), ["aAb"]);
    // Escaped UTF-8 is its characters; a byte of no UTF-8 stays a byte.
    assert_eq!(t(r"\xC3\xA9t\xC3\xA9"), ["été"]);
    let w = &t(r#""-\xE0-""#)[0];
    assert_eq!(&*weir_rules::args::raw_bytes(w), b"-\xE0-");
    assert_eq!(
        &*weir_rules::args::raw_bytes("plain é"),
        "plain é".as_bytes()
    );
    assert_eq!(t(r"a\nb"), ["a\nb"]);
    assert_eq!(t(r"^/img\.png$"), [r"^/img\.png$"]);
    assert_eq!(t(r#""a#b""#), ["a#b"]);
    assert!(tokenize(r"a\xZZ", &env).is_err());
}

#[test]
fn variables_only_in_double_quotes() {
    assert_eq!(t(r#"server s "$HOST":80"#), ["server", "s", "127.0.0.1:80"]);
    assert_eq!(t(r#""${HOST}:80""#), ["127.0.0.1:80"]);
    assert_eq!(t("$HOST"), ["$HOST"]);
    assert_eq!(t("'$HOST'"), ["$HOST"]);
    assert_eq!(t(r#""${NOPE-10.0.0.1}:514""#), ["10.0.0.1:514"]);
    assert_eq!(t(r#""${EMPTY-x}""#), [""], "default only for unset");
    assert_eq!(t(r#"x "${LIST[*]}" y"#), ["x", "a", "b", "c", "y"]);
    assert_eq!(t(r#""\$HOST""#), ["$HOST"]);
    assert_eq!(t(r#""""#), [""]);
}

#[test]
fn unterminated_quotes() {
    assert!(tokenize("bind \"abc", &env).is_err());
    assert!(tokenize("bind 'abc", &env).is_err());
    assert!(tokenize("\"${HOST\"", &env).is_err());
}
