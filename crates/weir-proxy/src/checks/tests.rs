//! Unit tests of the HTTP checks' request, response and patterns.

use super::http::{found, h1_bytes, parse_h1, request, Parsed, Reply};
use weir_config::{CheckText, HdrHow, HdrMatch, HdrPat, HttpSend, TcpMatch};

/// A fetch context without anything: patterns as written.
struct Bare;

impl weir_rules::Ctx for Bare {
    fn src(&self) -> Option<std::net::SocketAddr> {
        None
    }
    fn dst(&self) -> Option<std::net::SocketAddr> {
        None
    }
}

fn fmt(s: &str) -> weir_rules::Fmt {
    weir_rules::Fmt::parse(s, &|_| Err("no files".into())).expect("a format") // ok: fixed input
}

#[test]
fn request_defaults_and_header_order() {
    let plain = request(&HttpSend::default(), &Bare, None);
    assert_eq!(h1_bytes(&plain), b"OPTIONS / HTTP/1.0\r\n\r\n");
    let send = HttpSend {
        meth: Some("GET".into()),
        uri: Some(CheckText::Fmt(fmt(""))),
        ver: Some("HTTP/1.1".into()),
        headers: vec![
            ("Connection".into(), fmt("keep-alive")),
            ("Content-Length".into(), fmt("99")),
            ("Host".into(), fmt("h")),
        ],
        body: Some(CheckText::Plain("abc".into())),
        ..Default::default()
    };
    let r = request(&send, &Bare, Some("UP"));
    assert_eq!(
        String::from_utf8_lossy(&h1_bytes(&r)),
        "GET / HTTP/1.1\r\nhost: h\r\nx-haproxy-server-state: UP\r\ncontent-length: 3\r\nconnection: keep-alive\r\n\r\nabc"
    );
    let close = HttpSend {
        ver: Some("HTTP/1.1".into()),
        ..Default::default()
    };
    assert!(h1_bytes(&request(&close, &Bare, None)).ends_with(b"connection: close\r\n\r\n"));
    // What a sample renders cannot break the head.
    let hostile = HttpSend {
        uri: Some(CheckText::Fmt(fmt("/a b%[str(x)]"))),
        headers: vec![("x-a".into(), fmt("%[str(a),url_dec]\r\nx"))],
        ..Default::default()
    };
    let r = request(&hostile, &Bare, None);
    assert_eq!(r.uri, "/a%20bx");
    assert!(r.headers.is_empty(), "{:?}", r.headers);
}

fn parsed(buf: &[u8], closed: bool, body: bool) -> Option<Reply> {
    match parse_h1(buf, closed, "GET", body) {
        Parsed::Done(r) => Some(r),
        _ => None,
    }
}

#[test]
fn responses_read_as_far_as_needed() {
    let head = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhe";
    assert!(parsed(head, false, false).is_some_and(|r| r.status == 200));
    assert!(matches!(parse_h1(head, false, "GET", true), Parsed::More));
    assert!(parsed(head, true, true).is_some_and(|r| r.body == b"he"));
    assert!(matches!(
        parse_h1(b"HTTP/1.1 200", false, "GET", false),
        Parsed::More
    ));
    assert!(matches!(
        parse_h1(b"HTTP/1.1 200", true, "GET", false),
        Parsed::Bad
    ));
    assert!(matches!(
        parse_h1(b"hello there\r\n\r\n", false, "GET", false),
        Parsed::Bad
    ));
    let chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n";
    assert!(parsed(chunked, false, true).is_some_and(|r| r.body == b"hello"));
    let until_close = b"HTTP/1.0 200 OK\r\n\r\nbody here";
    assert!(matches!(
        parse_h1(until_close, false, "GET", true),
        Parsed::More
    ));
    assert!(parsed(until_close, true, true).is_some_and(|r| r.body == b"body here"));
}

/// A pattern as the configuration compiles it (a regex on names without
/// case).
fn pat(how: HdrHow, text: &str) -> HdrPat {
    let re = (how == HdrHow::Reg).then(|| {
        let icase = text.starts_with("^x");
        weir_rules::matching::compile(weir_rules::matching::Method::Reg, text, icase)
            .expect("a regex") // ok: fixed input
    });
    HdrPat {
        how,
        text: CheckText::Plain(text.into()),
        re,
    }
}

#[test]
fn header_patterns() {
    let reply = parsed(
        b"HTTP/1.1 202 Accepted\r\nX-Test: true, value-end\r\nX-Other: 1\r\n\r\n",
        false,
        false,
    )
    .expect("a response"); // ok: fixed input
    let hdr = |full: bool, name: HdrPat, value: Option<HdrPat>| {
        TcpMatch::Hdr(Box::new(HdrMatch { full, name, value }))
    };
    let yes = [
        hdr(false, pat(HdrHow::Str, "x-test"), None),
        hdr(
            false,
            pat(HdrHow::Beg, "X-T"),
            Some(pat(HdrHow::Str, "true")),
        ),
        hdr(
            false,
            pat(HdrHow::Sub, "-tes"),
            Some(pat(HdrHow::End, "-end")),
        ),
        hdr(
            true,
            pat(HdrHow::Str, "x-test"),
            Some(pat(HdrHow::Str, "true, value-end")),
        ),
        hdr(
            false,
            pat(HdrHow::Reg, "^x-o"),
            Some(pat(HdrHow::Reg, "^1$")),
        ),
        TcpMatch::Status(vec![(200, 299)]),
    ];
    for m in &yes {
        assert!(found(m, &reply, &Bare), "{m:?}");
    }
    let no = [
        hdr(false, pat(HdrHow::Str, "x-none"), None),
        hdr(
            true,
            pat(HdrHow::Str, "x-test"),
            Some(pat(HdrHow::Str, "true")),
        ),
        hdr(
            false,
            pat(HdrHow::Str, "x-test"),
            Some(pat(HdrHow::Str, "TRUE")),
        ),
        TcpMatch::Status(vec![(200, 201), (300, 399)]),
    ];
    for m in &no {
        assert!(!found(m, &reply, &Bare), "{m:?}");
    }
}
