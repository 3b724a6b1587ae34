//! Unit tests of `conv.rs`: values checked against haproxy 2.6's answers.

use super::*;
use crate::sample::{Expr, Sample};
use std::net::SocketAddr;

struct Vars;

impl Ctx for Vars {
    fn src(&self) -> Option<SocketAddr> {
        None
    }
    fn dst(&self) -> Option<SocketAddr> {
        None
    }
    fn var(&self, name: &str) -> Option<Sample> {
        match name {
            "txn.twelve" => Some(Sample::Int(12)),
            "txn.key" => Some(Sample::Str(b"a2V5".to_vec())),
            "txn.s" => Some(Sample::Str(b"abc".to_vec())),
            _ => None,
        }
    }
}

fn ev(e: &str) -> Option<Sample> {
    Expr::parse(e, &|_| Err("no files".into()))
        .unwrap()
        .eval(&Vars)
}

fn text(e: &str) -> String {
    String::from_utf8(ev(e).expect(e).to_bytes()).unwrap()
}

#[test]
fn arithmetic_saturates_and_reads_variables() {
    assert_eq!(ev("int(60),div(txn.twelve)"), Some(Sample::Int(5)));
    assert_eq!(ev("int(7),div(0)"), Some(Sample::Int(i64::MAX)));
    assert_eq!(ev("int(7),mod(0)"), Some(Sample::Int(0)));
    assert_eq!(ev("int(7),mod(3)"), Some(Sample::Int(1)));
    assert_eq!(
        ev("int(9223372036854775807),add(1)"),
        Some(Sample::Int(i64::MAX))
    );
    assert_eq!(ev("int(5),sub(7),neg"), Some(Sample::Int(2)));
    assert_eq!(ev("int(6),and(3),xor(1),or(8)"), Some(Sample::Int(11)));
    assert_eq!(ev("int(0),cpl"), Some(Sample::Int(-1)));
    assert_eq!(ev("int(3),odd"), Some(Sample::Bool(true)));
    assert_eq!(ev("int(3),even"), Some(Sample::Bool(false)));
    assert_eq!(ev("int(0),not"), Some(Sample::Bool(true)));
    assert_eq!(ev("int(2),bool"), Some(Sample::Bool(true)));
    assert_eq!(ev("int(1),add(txn.missing)"), None);
    assert!(Expr::parse("int(1),add(nope)", &|_| Err(String::new())).is_err());
}

#[test]
fn digests_and_macs() {
    assert_eq!(
        text("str(abc),sha1,hex"),
        "A9993E364706816ABA3E25717850C26C9CD0D89D"
    );
    assert_eq!(
        text("str(abc),sha2,hex,lower"),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    assert_eq!(
        text("str(abc),digest(SHA256),hex"),
        text("str(abc),sha2(256),hex")
    );
    // RFC 2202's and RFC 4231's vectors use other keys; "key" is the
    // common example: HMAC-SHA256("key", "The quick brown fox…").
    assert_eq!(
        text("str('The quick brown fox jumps over the lazy dog'),hmac(sha256,a2V5),hex,lower"),
        "f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8"
    );
    assert_eq!(
        text("str(x),hmac(sha256,txn.key),hex"),
        text("str(x),hmac(sha256,a2V5),hex")
    );
    assert!(Expr::parse("str(x),digest(md4)", &|_| Err(String::new())).is_err());
}

#[test]
fn hashes() {
    assert_eq!(ev("str(abc),xxh32"), Some(Sample::Int(0x32D1_53FF)));
    assert_eq!(
        ev("str(abc),xxh64"),
        Some(Sample::Int(0x44BC_2CF5_AD77_0999_u64 as i64))
    );
    assert_eq!(ev("str(123456789),crc32c"), Some(Sample::Int(0xE306_9283)));
}

#[test]
fn dumps_items_and_choices() {
    assert_eq!(text("bin(01020304050607),be2dec(:,2)"), "258:772:1286:7");
    assert_eq!(text("bin(01020304050607),be2dec(-,2,1)"), "258-772-1286");
    assert_eq!(text("bin(01020304050607),be2dec(,2,1)"), "2587721286");
    assert_eq!(text("bin(7f000001),be2dec(.,1)"), "127.0.0.1");
    assert_eq!(
        text("str(0123456789),be2hex(--,3),lower"),
        "303132--333435--363738--39"
    );
    assert_eq!(
        text("str(0123456789),be2hex(.,3,1)"),
        "303132.333435.363738"
    );
    assert_eq!(text("str(),add_item(',',txn.s,_x)"), "abc_x");
    assert_eq!(text("str(in),add_item(',',txn.s)"), "in,abc");
    assert_eq!(text("str(in),add_item(',',txn.none)"), "in");
    assert_eq!(text("str(in),add_item(',',,_x)"), "in,_x");
    assert_eq!(text("int(2),iif(ok,ko)"), "ok");
    assert_eq!(text("bool(0),iif(ok,ko)"), "ko");
    assert_eq!(
        text("str('foo=bar+42 42 '),url_enc"),
        "foo%3Dbar%2B42%2042%20"
    );
    assert_eq!(ev("str(abd),strcmp(txn.s)"), Some(Sample::Int(1)));
    assert_eq!(ev("str(abc),strcmp(txn.s)"), Some(Sample::Int(0)));
    assert_eq!(
        ev("str(abc),secure_memcmp(txn.s)"),
        Some(Sample::Bool(true))
    );
    assert_eq!(
        ev("str(ab),secure_memcmp(txn.s)"),
        Some(Sample::Bool(false))
    );
}

#[test]
fn json_escapes_and_decoders() {
    assert_eq!(text("str('foo 1/2'),json"), r"foo 1\/2");
    assert_eq!(text(r#"str('a"b\c'),json"#), r#"a\"b\\c"#);
    assert_eq!(text("str(é),json(utf8)"), r"\u00e9");
    assert_eq!(ev("bin(e0),json(utf8)"), None);
    assert_eq!(text("bin(2de02d),json(utf8s)"), "--");
    assert_eq!(text("bin(c1bf),json(utf8p)"), r"\u007f");
}

#[test]
fn an_acl_matches_as_its_last_converter_answers() {
    let acl = |s: &str| {
        let w: Vec<String> = s.split(' ').map(String::from).collect();
        crate::acl::Acl::parse(&w, &|_| Err("no files".into()))
            .unwrap()
            .eval(&Vars)
    };
    assert!(acl("str(abc),secure_memcmp(txn.s)"));
    assert!(!acl("str(abd),secure_memcmp(txn.s)"));
    assert!(acl("int(3),add(1) 4"));
    assert!(acl("int(3),add(1) 2:5"));
    assert!(acl("str(abc),length lt 4"));
}

#[test]
fn variables_with_defaults_and_uuids() {
    assert_eq!(ev("var(txn.twelve,60)"), Some(Sample::Int(12)));
    assert_eq!(
        ev("var(proc.str60,60),div(txn.twelve)"),
        Some(Sample::Int(5))
    );
    assert_eq!(ev("var(txn.none)"), None);
    assert!(Expr::parse("var(nope)", &|_| Err(String::new())).is_err());
    let u = text("uuid");
    let parts: Vec<&str> = u.split('-').collect();
    assert_eq!(
        parts.iter().map(|p| p.len()).collect::<Vec<_>>(),
        [8, 4, 4, 4, 12]
    );
    assert!(parts[2].starts_with('4'), "{u}");
    assert_ne!(u, text("uuid()"), "random");
}

#[test]
fn map_regm_substitutes_the_key_groups() {
    let m = crate::matching::Map::parse(
        "regm",
        "^(.*)\\.(.*)$ \\1_AND_\\2\n",
        Some("unknown".into()),
    )
    .unwrap();
    let s = |x: &str| Sample::Str(x.as_bytes().to_vec());
    assert_eq!(
        m.lookup(&s("www.example.org")).unwrap(),
        "www.example_AND_org"
    );
    assert_eq!(m.lookup(&s("nodot")).unwrap(), "unknown");
    let r = crate::matching::Map::parse("reg", "^(.*)\\.(.*)$ \\1_AND_\\2\n", None).unwrap();
    assert_eq!(
        r.lookup(&s("a.b")).unwrap(),
        "\\1_AND_\\2",
        "map_reg keeps the value"
    );
}
