//! Unit tests of `tls/certs.rs`.

use super::*;

#[test]
fn crt_list_lines() {
    let l = parse_crt_list(
        "# c\n/a.pem\n\n/b.pem www.Example.com !x.example.com *.example.org # tail\n",
    )
    .expect("parses");
    assert_eq!(l.len(), 2);
    assert_eq!(l[0].crt, "/a.pem");
    assert!(l[0].filters.is_empty());
    assert_eq!(
        l[1].filters,
        ["www.example.com", "!x.example.com", "*.example.org"]
    );
    assert_eq!(l[1].line, 4);
    let e = parse_crt_list("/a.pem\n/b.pem [alpn h2] x\n").expect_err("options refused");
    assert!(e.starts_with("line 2:"), "{e}");
}
