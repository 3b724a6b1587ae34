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
    assert!(l[0].opts.is_empty());
    let l = parse_crt_list(
        "/b.pem [alpn h2 ssl-min-ver TLSv1.3] x.test !y.test\n/c.pem [verify none]\n",
    )
    .expect("options");
    assert_eq!(l[0].opts, ["alpn", "h2", "ssl-min-ver", "TLSv1.3"]);
    assert_eq!(l[0].filters, ["x.test", "!y.test"]);
    assert_eq!(l[1].opts, ["verify", "none"]);
    assert!(l[1].filters.is_empty());
    let e = parse_crt_list("/a.pem\n/b.pem [alpn h2 x\n").expect_err("unclosed");
    assert!(e.starts_with("line 2:"), "{e}");
}
