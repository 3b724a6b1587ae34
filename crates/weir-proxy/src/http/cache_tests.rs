//! Unit tests of the cache's rules: `Accept-Encoding` and content
//! codings of variants, HTTP dates.

use super::{accepted, coding_bit, codings, http_date, ALL_CODINGS, IDENTITY};
use weir_proto::h1::Header;

fn hs(fields: &[(&str, &str)]) -> Vec<Header> {
    fields
        .iter()
        .map(|(n, v)| Header::new(n, v.as_bytes()))
        .collect()
}

fn bits(names: &[&str]) -> u16 {
    names
        .iter()
        .map(|n| coding_bit(n.as_bytes()).unwrap()) // ok: names of the registry
        .sum()
}

#[test]
fn accept_encoding() {
    let ae = |v: &str| accepted(&hs(&[("Accept-Encoding", v)]));
    assert_eq!(accepted(&hs(&[])), Some(ALL_CODINGS), "no field: anything");
    assert_eq!(ae(""), Some(IDENTITY), "empty: identity only");
    assert_eq!(ae("GZIP ; q=0.8, first"), Some(bits(&["gzip", "identity"])));
    assert_eq!(ae("gzip;q=0, identity;q=0.0, br"), Some(bits(&["br"])));
    assert_eq!(ae("gzip;q=0, *"), Some(ALL_CODINGS & !bits(&["gzip"])));
    assert_eq!(
        ae("br, *;q=0"),
        Some(bits(&["br"])),
        "identity refused by *;q=0"
    );
    let many: Vec<String> = (1..=17).map(|i| format!("a{i}")).collect();
    assert_eq!(ae(&many.join(",")), None);
    assert_eq!(ae(&many[..16].join(",")), Some(IDENTITY));
}

#[test]
fn content_codings() {
    let ce = |v: &str| codings(&hs(&[("Content-Encoding", v)]));
    assert_eq!(codings(&hs(&[])), Some(IDENTITY));
    assert_eq!(ce("deflate, GZIP"), Some(bits(&["deflate", "gzip"])));
    assert_eq!(ce("my-coding"), None);
}

#[test]
fn http_dates() {
    assert_eq!(
        http_date(b"Thu, 22 Oct 2020 16:51:12 GMT"),
        Some(1_603_385_472)
    );
    assert_eq!(
        http_date(b"Sun, 06 Nov 1994 08:49:37 GMT"),
        Some(784_111_777)
    );
    assert_eq!(http_date(b"not a date"), None);
    assert_eq!(
        http_date(b"Thu, 22 Oct 9223372036854775807 16:51:12 GMT"),
        None
    );
}
