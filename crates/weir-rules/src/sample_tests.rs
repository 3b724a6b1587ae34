use super::*;
use crate::acl::{Acl, Cond};
use std::sync::Arc;

struct T {
    uri: String,
    headers: Vec<(String, Vec<u8>)>,
}

impl Ctx for T {
    fn src(&self) -> Option<SocketAddr> {
        "10.1.2.3:4567".parse().ok()
    }
    fn dst(&self) -> Option<SocketAddr> {
        "127.0.0.1:80".parse().ok()
    }
    fn method(&self) -> &str {
        "GET"
    }
    fn uri(&self) -> &str {
        &self.uri
    }
    fn version(&self) -> &str {
        "1.1"
    }
    fn req_headers(&self) -> Vec<(&str, &[u8])> {
        self.headers
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_slice()))
            .collect()
    }
    fn res_headers(&self) -> Vec<(&str, &[u8])> {
        Vec::new()
    }
    fn status(&self) -> Option<u16> {
        None
    }
    fn nbsrv(&self, _: &str) -> Option<i64> {
        Some(2)
    }
    fn be_conn(&self, _: &str) -> Option<i64> {
        Some(0)
    }
    fn fe_conn(&self) -> i64 {
        1
    }
    fn srv_name(&self) -> Option<String> {
        None
    }
    fn var(&self, n: &str) -> Option<Sample> {
        (n == "txn.x").then(|| Sample::Str(b"X".to_vec()))
    }
    fn first_req(&self) -> bool {
        true
    }
    fn body(&self) -> Option<&[u8]> {
        None
    }
}

fn ctx() -> T {
    T {
        uri: "/api/v1/items?id=42&q=a%20b".into(),
        headers: vec![
            ("Host".into(), b"Example.COM:8080".to_vec()),
            ("X-List".into(), b"a, b ,c".to_vec()),
            ("Cookie".into(), b"SRV=s2; lang=fr".to_vec()),
            ("X-List".into(), b"d".to_vec()),
        ],
    }
}

fn no_files(f: &str) -> Result<String, String> {
    match f {
        "hosts.map" => Ok("example.com:8080 be_a\n# c\n\nother be_b\n".into()),
        "nets.lst" => Ok("10.0.0.0/8\n".into()),
        _ => Err(format!("no file {f}")),
    }
}

fn eval(e: &str) -> Option<Vec<u8>> {
    Expr::parse(e, &no_files)
        .unwrap()
        .eval(&ctx())
        .map(|s| s.to_bytes())
}

fn w(s: &str) -> Vec<String> {
    s.split(' ').map(str::to_string).collect()
}

fn acl(s: &str) -> bool {
    Acl::parse(&w(s), &no_files).unwrap().eval(&ctx())
}

#[test]
fn fetches_and_converters() {
    assert_eq!(eval("path").unwrap(), b"/api/v1/items");
    assert_eq!(eval("query").unwrap(), b"id=42&q=a%20b");
    assert_eq!(eval("url_param(q),url_dec").unwrap(), b"a b");
    // `+` is a space only after a `?`, or with in_form (haproxy 2.6).
    assert_eq!(eval("str(/a+b?c+d),url_dec").unwrap(), b"/a+b?c d");
    assert_eq!(eval("str(a+b),url_dec(1)").unwrap(), b"a b");
    assert_eq!(eval("str(%zz),url_dec"), None);
    assert_eq!(eval("str(a%2),url_dec"), None);
    assert_eq!(eval("url_param(id)").unwrap(), b"42");
    assert_eq!(eval("hdr(host),lower").unwrap(), b"example.com:8080");
    assert_eq!(eval("hdr(host),field(1,:)").unwrap(), b"Example.COM");
    // A count of 0 runs to the end, or from the end to the start.
    assert_eq!(
        eval("str(f1_f2_f3__f5),field(2,_,0)").unwrap(),
        b"f2_f3__f5"
    );
    assert_eq!(
        eval("str(f1_f2_f3__f5),field(-3,_,0)").unwrap(),
        b"f1_f2_f3"
    );
    assert_eq!(eval("str(f1_f2_f3__f5),word(2,_,0)").unwrap(), b"f2_f3__f5");
    assert_eq!(
        eval("str(::ffff:10.1.2.3),ipmask(16)").unwrap(),
        b"10.1.0.0"
    );
    assert_eq!(eval("hdr(x-list)").unwrap(), b"d", "last occurrence");
    assert_eq!(eval("hdr(x-list,2)").unwrap(), b"b");
    assert_eq!(eval("hdr(x-list,-2)").unwrap(), b"c");
    assert_eq!(eval("req.fhdr(x-list,1)").unwrap(), b"a, b ,c");
    assert_eq!(eval("hdr_cnt(x-list)").unwrap(), b"4");
    assert_eq!(eval("req.cook(SRV)").unwrap(), b"s2");
    assert_eq!(eval("src,ipmask(16)").unwrap(), b"10.1.0.0");
    assert_eq!(eval("str(hello),base64").unwrap(), b"aGVsbG8=");
    assert_eq!(eval("str(aGVsbG8=),b64dec").unwrap(), b"hello");
    assert_eq!(eval("str(ab),hex").unwrap(), b"6162");
    assert_eq!(eval("path,regsub(/v[0-9]+/,/,g)").unwrap(), b"/api/items");
    assert_eq!(eval("path,word(2,/)").unwrap(), b"v1");
    assert_eq!(eval("str(a),concat(-,txn.x,-)").unwrap(), b"a-X-");
    assert_eq!(
        eval("hdr(host),lower,map_str(hosts.map,none)").unwrap(),
        b"be_a"
    );
    assert_eq!(eval("str(zzz),map(hosts.map,none)").unwrap(), b"none");
    assert_eq!(eval("base").unwrap(), b"Example.COM:8080/api/v1/items");
    assert!(eval("hdr(absent)").is_none());
    assert!(Expr::parse("nope", &no_files).is_err());
    assert!(Expr::parse("path,nope", &no_files).is_err());
}

#[test]
fn acl_matching_methods() {
    assert!(acl("path_beg /api"));
    assert!(!acl("path_beg /API"));
    assert!(acl("path_beg -i /API"));
    assert!(acl("path_end items"));
    assert!(acl("path_sub v1"));
    assert!(acl("path_dir v1"));
    assert!(!acl("path_dir v"));
    assert!(acl("path_reg ^/api/v[0-9]+/"));
    assert!(acl("hdr_dom(host) -i example.com"));
    assert!(acl("hdr(host) -m beg -i example"));
    assert!(acl("hdr(x-list) c"), "every occurrence is tried");
    assert!(acl("src 10.0.0.0/8"));
    assert!(!acl("src 192.168.0.0/16 127.0.0.1"));
    assert!(acl("src -f nets.lst"));
    assert!(acl("url_param(id) -m int gt 40"));
    assert!(!acl("url_param(id) -m int lt 40"));
    assert!(acl("url_param(id) -m int 40:50"));
    assert!(acl("path_len 13"));
    assert!(acl("hdr(host) -m found"));
    assert!(!acl("hdr(nope) -m found"));
    assert!(acl("always_true"));
    assert!(!acl("always_false"));
    assert!(acl("nbsrv(be) ge 1"));
    assert!(acl("method GET HEAD"));
    assert!(Acl::parse(&w("path -m nope x"), &no_files).is_err());
    assert!(Acl::parse(&w("path_reg ("), &no_files).is_err());
}

#[test]
fn conditions() {
    let a: Arc<[Acl]> = Arc::from(vec![Acl::parse(&w("path_beg /api"), &no_files).unwrap()]);
    let b: Arc<[Acl]> = Arc::from(vec![
        Acl::parse(&w("src 192.168.0.0/16"), &no_files).unwrap()
    ]);
    let lookup = |n: &str| match n {
        "is_api" => Some(a.clone()),
        "lan" => Some(b.clone()),
        _ => None,
    };
    let c = |s: &str| Cond::parse(&w(s), &lookup, &no_files).map(|c| c.eval(&ctx()));
    assert_eq!(c("if is_api"), Ok(true));
    assert_eq!(c("unless is_api"), Ok(false));
    assert_eq!(c("if is_api lan"), Ok(false));
    assert_eq!(c("if is_api !lan"), Ok(true));
    assert_eq!(c("if lan || is_api"), Ok(true));
    assert_eq!(c("if lan or !is_api"), Ok(false));
    assert_eq!(c("if { path_end items } is_api"), Ok(true));
    assert_eq!(c("if ! { src 10.0.0.0/8 }"), Ok(false));
    assert_eq!(c("if METH_GET HTTP_1.1"), Ok(true));
    assert!(c("if missing").is_err());
    assert!(c("if").is_err());
    assert!(c("if is_api ||").is_err());
}

#[test]
fn strings_become_numbers_without_unicode_whitespace() {
    let s = |v: &str| Sample::Str(v.as_bytes().to_vec());
    assert_eq!(s(" 5\t").to_int(), Some(5));
    assert_eq!(s("\u{a0}5").to_int(), None);
    assert_eq!(s("5\u{3000}").to_int(), None);
    assert_eq!(s("\u{85}5").to_int(), None);
    assert_eq!(s(" 127.0.0.1 ").to_ip(), "127.0.0.1".parse().ok());
    assert_eq!(s("\u{a0}127.0.0.1").to_ip(), None);
    // An integer is an IPv4 address, as haproxy casts it.
    assert_eq!(Sample::Int(0x7f00_0001).to_ip(), "127.0.0.1".parse().ok());
}

#[test]
fn header_addresses_and_masks() {
    let t = T {
        uri: "/".into(),
        headers: vec![
            ("X-Forwarded-For".into(), b"10.0.0.1, 2001:db8::1".to_vec()),
            ("X-Bad".into(), b"nope".to_vec()),
        ],
    };
    let ev = |e: &str| {
        Expr::parse(e, &no_files)
            .unwrap()
            .eval(&t)
            .map(|s| s.to_bytes())
    };
    assert_eq!(ev("req.hdr_ip(x-forwarded-for)").unwrap(), b"2001:db8::1");
    assert_eq!(
        ev("hdr_ip(x-forwarded-for,1),ipmask(24)").unwrap(),
        b"10.0.0.0"
    );
    assert_eq!(ev("req.hdr_ip(x-bad)"), None);
    assert_eq!(
        ev("req.hdr_ip(x-forwarded-for),ipmask(24,ffff:ffff::)").unwrap(),
        b"2001:db8::"
    );
    assert_eq!(
        ev("hdr_ip(x-forwarded-for,1),ipmask(255.255.0.0)").unwrap(),
        b"10.0.0.0"
    );
    assert!(Expr::parse("src,ipmask(33)", &no_files).is_err());
    assert!(Expr::parse("src,ipmask(24,129)", &no_files).is_err());
}
