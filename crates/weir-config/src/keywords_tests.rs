//! Unit tests of `keywords.rs`.

use super::*;

#[test]
fn tables_are_sorted_and_unique() {
    for t in [GLOBAL, PROXY, BIND, SERVER] {
        for pair in t.windows(2) {
            assert!(
                pair[0].name < pair[1].name,
                "{} !< {}",
                pair[0].name,
                pair[1].name
            );
        }
    }
}

#[test]
fn multiword_lookup() {
    let words: Vec<String> = ["timeout", "client", "5s"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(find_proxy(&words).unwrap().name, "timeout client");
    let words: Vec<String> = ["balance", "roundrobin"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(find_proxy(&words).unwrap().name, "balance");
    assert!(is_proxy_prefix("option"));
    assert!(!is_proxy_prefix("balance"));
}

#[test]
fn compatibility_doc_matches_tables() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/compatibility.md");
    let want = super::render_markdown();
    if std::env::var_os("WEIR_BLESS").is_some() {
        std::fs::write(path, &want).unwrap();
    }
    let have = std::fs::read_to_string(path).unwrap_or_default();
    assert!(have == want, "docs/compatibility.md is out of date: run WEIR_BLESS=1 cargo test -p weir-config compatibility_doc");
}
