//! Unit tests of `action.rs`: the request-target parts `set-path`,
//! `replace-path` … rewrite (answers checked against haproxy 2.6), header
//! name matching, `deny`'s forms.

use super::*;

fn w(s: &str) -> Vec<String> {
    s.split(' ').map(String::from).collect()
}

fn no_acl(_: &str) -> Option<Arc<[Acl]>> {
    None
}

fn rule(s: &str) -> Result<Rule<ReqAction>, String> {
    parse_request_rule(&w(s), &no_acl, &|_| Err("no files".into()))
}

#[test]
fn target_parts_as_haproxy_rewrites_them() {
    let re = |r: &str| regex::bytes::Regex::new(r).unwrap();
    let u = "/x/a/c?a/b";
    assert_eq!(
        UriPart::Path.replace(u, &re("/a(.*)"), br"/b\1").unwrap(),
        "/b/c?a/b"
    );
    assert_eq!(
        UriPart::Uri.replace(u, &re("^/(.*)"), br"/z/\1").unwrap(),
        "/z/x/a/c?a/b"
    );
    assert_eq!(
        UriPart::PathQ.replace(u, &re("/a(.*)"), br"/q\1").unwrap(),
        "/q/c?a/b"
    );
    assert_eq!(UriPart::Path.replace(u, &re("^/nope"), b"/x"), None);
    let abs = "http://h:8/p?q";
    assert_eq!(
        UriPart::Path.replace(abs, &re("(.*)"), br"/f\1").unwrap(),
        "http://h:8/f/p?q"
    );
    assert_eq!(UriPart::Path.set(abs, "/n"), "http://h:8/n?q");
    assert_eq!(UriPart::PathQ.set(abs, "/n?z"), "http://h:8/n?z");
    assert_eq!(UriPart::Uri.set(abs, "/o"), "/o");
}

#[test]
fn del_header_matching_methods() {
    let del = |s: &str| match rule(&format!("del-header {s}")).unwrap().action {
        ReqAction::Header(HeaderOp::Del(m)) => m,
        _ => panic!("not a del-header"),
    };
    assert!(del("X-Str").matches("x-str"));
    assert!(!del("x-str").matches("x-str2"));
    assert!(del("x-beg -m beg").matches("X-Beg-1"));
    assert!(del("end1 -m end").matches("x-end1"));
    assert!(del("sub -m sub").matches("a-sub-b"));
    assert!(del("^x.reg.$ -m reg").matches("X-Reg1"));
    assert!(!del("^x.reg.$ -m reg").matches("x-reg12"));
    assert!(rule("del-header x -m nope").is_err());
}

#[test]
fn deny_status_forms_and_custom_answers() {
    let deny = |s: &str| match rule(s).unwrap().action {
        ReqAction::Deny { status, answer } => (status, answer),
        _ => panic!("not a deny"),
    };
    assert_eq!(deny("deny").0, 403);
    assert_eq!(deny("deny deny_status 429").0, 429);
    assert_eq!(deny("deny status 401"), (401, None));
    let (s, a) = deny("deny status 403 content-type text/plain string no");
    assert_eq!(s, 403);
    let a = a.unwrap();
    assert_eq!((a.status, a.body), (403, Body::Static(b"no".to_vec())));
    assert_eq!(deny("deny hdr x-a b").1.unwrap().status, 403);
    assert!(rule("deny status 1000").is_err());
    assert!(matches!(rule("reject").unwrap().action, ReqAction::Reject));
    assert!(rule("reject now").is_err());
    assert!(matches!(
        rule("set-src hdr(x-src)").unwrap().action,
        ReqAction::SetAddr(crate::tcp::AddrPart::Src, _)
    ));
}

#[test]
fn return_errorfile_is_a_whole_response() {
    let dir = std::env::temp_dir().join(format!("weir-ret-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (good, bad) = (dir.join("good.http"), dir.join("bad.http"));
    std::fs::write(&good, "HTTP/1.1 400 Bad\r\ncontent-length: 0\r\n\r\n").unwrap();
    std::fs::write(&bad, "just text").unwrap();
    let load = |f: &str| std::fs::read_to_string(f).map_err(|e| e.to_string());
    let ret = |f: &std::path::Path| {
        let w: Vec<String> = ["return", "status", "400", "errorfile", f.to_str().unwrap()]
            .iter()
            .map(|s| s.to_string())
            .collect();
        parse_request_rule(&w, &no_acl, &load).map(|r| r.action)
    };
    match ret(&good).unwrap() {
        ReqAction::Return(r) => {
            assert!(matches!(r.body, Body::Raw(b) if b.starts_with(b"HTTP/1.1 400")))
        }
        a => panic!("{a:?}"),
    }
    assert!(ret(&bad)
        .unwrap_err()
        .contains("not a complete HTTP/1 response"));
    match ret(std::path::Path::new("/dev/null")).unwrap() {
        ReqAction::Return(r) => assert_eq!(r.body, Body::Raw(Vec::new())),
        a => panic!("{a:?}"),
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn do_resolve_forms() {
    let r = rule("do-resolve(txn.ip,dns,ipv4) hdr(host)").unwrap(); // ok: fixed input
    match r.action {
        ReqAction::DoResolve(d) => {
            assert_eq!(
                (d.var.as_str(), d.resolvers.as_str(), d.ipv6),
                ("txn.ip", "dns", false)
            )
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        rule("do-resolve(txn.ip,dns) src").map(|r| r.action),
        Ok(ReqAction::DoResolve(d)) if d.ipv6
    ));
    assert!(rule("do-resolve(nope,dns) src")
        .unwrap_err()
        .contains("invalid variable name"));
    assert!(rule("do-resolve(txn.ip,dns,ipv5) src")
        .unwrap_err()
        .contains("'ipv4' or 'ipv6'"));
    assert!(rule("do-resolve(txn.ip) src").is_err());
}

#[test]
fn socket_options_parse_decimal_and_hexadecimal() {
    let a = |v: &str| vec![v.to_string()];
    assert_eq!(
        parse_sockopt("set-mark", &a("0x2a")),
        Ok(Some(SockOpt::Mark(42)))
    );
    assert_eq!(
        parse_sockopt("set-tos", &a("32")),
        Ok(Some(SockOpt::Tos(32)))
    );
    assert_eq!(parse_sockopt("set-nice", &a("-1024")), Ok(None));
    assert!(parse_sockopt("set-nice", &a("2000")).is_err());
    assert!(parse_sockopt("set-mark", &a("0xzz")).is_err());
    assert!(parse_sockopt("set-tos", &[]).is_err());
}
