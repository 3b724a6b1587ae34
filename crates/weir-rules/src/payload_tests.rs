//! Unit tests of `payload.rs`: fetches on growing payloads, and
//! ClientHellos built here byte by byte.

use super::*;
use std::sync::atomic::{AtomicBool, Ordering};

struct P<'a> {
    data: &'a [u8],
    fin: bool,
    more: AtomicBool,
}

impl Ctx for P<'_> {
    fn src(&self) -> Option<std::net::SocketAddr> {
        None
    }
    fn dst(&self) -> Option<std::net::SocketAddr> {
        None
    }
    fn payload(&self) -> Option<(&[u8], bool)> {
        Some((self.data, self.fin))
    }
    fn more(&self) -> Option<&AtomicBool> {
        Some(&self.more)
    }
}

/// What `name(args)` gives on `data`, and whether it asked for more.
fn get(name: &str, args: &[&str], data: &[u8], fin: bool) -> (Option<Sample>, bool) {
    let a: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let k = parse(name, &a).unwrap().unwrap();
    let p = P {
        data,
        fin,
        more: AtomicBool::new(false),
    };
    let v = fetch(&p, &k);
    (v, p.more.load(Ordering::Relaxed))
}

fn with_len(w: usize, b: &[u8]) -> Vec<u8> {
    let mut out = b.len().to_be_bytes()[8 - w..].to_vec();
    out.extend_from_slice(b);
    out
}

/// A ClientHello record with these extensions (type, body).
fn client_hello(exts: &[(u16, Vec<u8>)]) -> Vec<u8> {
    let mut e = Vec::new();
    for (t, b) in exts {
        e.extend_from_slice(&t.to_be_bytes());
        e.extend(with_len(2, b));
    }
    let mut msg = vec![3, 3];
    msg.extend_from_slice(&[7; 32]);
    msg.extend(with_len(1, &[1; 32]));
    msg.extend(with_len(2, &[0x13, 0x01, 0xc0, 0x2b]));
    msg.extend(with_len(1, &[0]));
    msg.extend(with_len(2, &e));
    let mut hs = vec![1];
    hs.extend(with_len(3, &msg));
    let mut rec = vec![22, 3, 1];
    rec.extend(with_len(2, &hs));
    rec
}

#[test]
fn client_hello_fields() {
    let sni = with_len(2, &[&[0u8][..], &with_len(2, b"www.example.com")].concat());
    let alpn = with_len(2, &[with_len(1, b"h2"), with_len(1, b"http/1.1")].concat());
    let hello = client_hello(&[(0, sni), (10, vec![0, 2, 0, 23]), (16, alpn), (35, vec![])]);
    let str = |s: &str| Some(Sample::Str(s.as_bytes().to_vec()));
    assert_eq!(
        get("req.ssl_sni", &[], &hello, false),
        (str("www.example.com"), false)
    );
    assert_eq!(
        get("req_ssl_hello_type", &[], &hello, false),
        (Some(Sample::Int(1)), false)
    );
    assert_eq!(
        get("req.ssl_ver", &[], &hello, false),
        (Some(Sample::Int(0x30001)), false)
    );
    assert_eq!(get("req.ssl_alpn", &[], &hello, false), (str("h2"), false));
    assert_eq!(
        get("req.ssl_ec_ext", &[], &hello, false),
        (Some(Sample::Bool(true)), false)
    );
    assert_eq!(
        get("req.ssl_st_ext", &[], &hello, false),
        (Some(Sample::Int(1)), false)
    );
    // Cut short: the fetch waits, unless nothing more will come.
    for n in [0, 3, 9, hello.len() - 1] {
        assert_eq!(
            get("req.ssl_sni", &[], &hello[..n], false),
            (None, true),
            "{n}"
        );
        assert_eq!(
            get("req.ssl_sni", &[], &hello[..n], true),
            (None, false),
            "{n}"
        );
    }
    // Not TLS: decided at once.
    assert_eq!(
        get("req.ssl_sni", &[], b"GET / HTTP/1.1\r\n", false),
        (None, false)
    );
    // No SNI in a complete hello: nothing, decided.
    let bare = client_hello(&[]);
    assert_eq!(get("req.ssl_sni", &[], &bare, false), (None, false));
    assert_eq!(
        get("req.ssl_st_ext", &[], &bare, false),
        (Some(Sample::Int(0)), false)
    );
}

#[test]
fn payloads_lengths_and_http() {
    let b = |s: &[u8]| Some(Sample::Bin(s.to_vec()));
    assert_eq!(
        get("req.payload", &["0", "3"], b"abcdef", false),
        (b(b"abc"), false)
    );
    assert_eq!(
        get("req.payload", &["4", "3"], b"abcdef", false),
        (None, true)
    );
    assert_eq!(
        get("req.payload", &["2", "0"], b"abcdef", true),
        (b(b"cdef"), false)
    );
    assert_eq!(
        get("req.payload", &["2", "0"], b"abcdef", false),
        (b(b"cdef"), true)
    );
    // A 2-byte length, then the data (or from an offset of its own).
    let lv = b"\x00\x03xyzw";
    assert_eq!(
        get("req.payload_lv", &["0", "2"], lv, false),
        (b(b"xyz"), false)
    );
    assert_eq!(
        get("req.payload_lv", &["0", "2", "+1"], lv, false),
        (b(b"yzw"), false)
    );
    assert_eq!(
        get("req.payload_lv", &["0", "2", "3"], lv, false),
        (b(b"yzw"), false)
    );
    assert_eq!(
        get("req.payload_lv", &["0", "2"], b"\x00\x09ab", false),
        (None, true)
    );
    assert_eq!(
        get("req.len", &[], b"abc", false),
        (Some(Sample::Int(3)), true)
    );
    assert_eq!(
        get("req.len", &[], b"abc", true),
        (Some(Sample::Int(3)), false)
    );
    let http = b"GET /x HTTP/1.1\r\nHost: a\r\n\r\n";
    let t = Some(Sample::Bool(true));
    let f = Some(Sample::Bool(false));
    assert_eq!(get("req.proto_http", &[], http, false), (t, false));
    assert_eq!(get("req.proto_http", &[], &http[..10], false), (None, true));
    assert_eq!(
        get("req.proto_http", &[], &http[..10], true),
        (f.clone(), false)
    );
    assert_eq!(
        get("req.proto_http", &[], b"\x16\x03\x01\x00", false),
        (f, false)
    );
    assert_eq!(get("wait_end", &[], b"", false), (None, true));
    assert_eq!(
        get("wait_end", &[], b"", true),
        (Some(Sample::Bool(true)), false)
    );
    assert!(parse("req.payload_lv", &["0".into(), "5".into()])
        .unwrap()
        .is_err());
}

#[test]
fn http2s_preface_is_http() {
    let preface = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
    let t = Some(Sample::Bool(true));
    assert_eq!(get("req.proto_http", &[], preface, false), (t, false));
    assert_eq!(
        get("req.proto_http", &[], &preface[..20], false),
        (None, true)
    );
}

#[test]
fn rdp_cookies_are_read_as_haproxy_reads_them() {
    // What Debian's haproxy 2.6 gave for each connection request (its
    // `req.rdp_cookie`, `(mstshash)`, `(msts)`, `req.rdp_cookie_cnt`,
    // `(mstshash)`; "-" where the fetch found nothing and more bytes could
    // change that).
    fn tpkt(line: &[u8]) -> Vec<u8> {
        let mut v = vec![3, 0, 0, 0, 0, 0xe0, 0, 0, 0, 0, 0];
        v.extend_from_slice(line);
        v
    }
    let cases: [(&[u8], [&str; 5]); 16] = [
        (
            b"Cookie: mstshash=alice\r\n\x01\x00\x08",
            ["alice", "alice", "-", "1", "1"],
        ),
        (
            b"Cookie: msts=3640205228.15629.0000\r\n",
            [
                "3640205228.15629.0000",
                "-",
                "3640205228.15629.0000",
                "1",
                "0",
            ],
        ),
        (b"cookie: MSTSHASH=Bob\r\n", ["Bob", "Bob", "-", "1", "1"]),
        (
            b"Cookie:mstshash=nospace\r\n",
            ["nospace", "nospace", "-", "1", "1"],
        ),
        (b"Cookie: mstshash=noend", ["-", "-", "-", "-", "-"]),
        (b"Cookie: mstshash=lf\n", ["-", "-", "-", "-", "-"]),
        (b"Cookie: mstshashx=a\r\n", ["a", "-", "-", "1", "0"]),
        (b"Cookie: x\r\n", ["-", "-", "-", "0", "-"]),
        (
            b"Cookie: mstshash=one\r\nCookie: mstshash=two\r\n",
            ["one", "one", "-", "1", "1"],
        ),
        (b"Cookie: mstshash=cr\r", ["-", "-", "-", "-", "-"]),
        (b"Cookie: mstshash=a\rb\r\n", ["-", "-", "-", "0", "0"]),
        (b"XCookie: mstshash=off12\r\n", ["-", "-", "-", "0", "0"]),
        (b"Cookie: =v\r\n", ["v", "-", "-", "1", "-"]),
        (
            b"Cookie:\tmstshash=tabsp\r\n",
            ["tabsp", "-", "-", "1", "0"],
        ),
        (b"Cookie: a b=c\r\n", ["c", "-", "-", "1", "-"]),
        (b"Cookie:", ["-", "-", "-", "-", "-"]),
    ];
    let show = |r: Rdp<'_>, cnt: bool| match (r, cnt) {
        (Rdp::Short, _) | (Rdp::None, false) => "-".to_string(),
        (Rdp::None, true) => "0".into(),
        (Rdp::Found(_), true) => "1".into(),
        (Rdp::Found(v), false) => String::from_utf8_lossy(v).into_owned(),
    };
    for (line, want) in cases {
        let d = tpkt(line);
        let got = [
            show(rdp_cookie(&d, None), false),
            show(rdp_cookie(&d, Some("mstshash")), false),
            show(rdp_cookie(&d, Some("msts")), false),
            show(rdp_cookie(&d, None), true),
            show(rdp_cookie(&d, Some("MSTSHASH")), true),
        ];
        assert_eq!(got, want, "{}", String::from_utf8_lossy(line));
    }
    // An HTTP request has no cookie at the RDP offset; too few bytes wait.
    assert_eq!(
        rdp_cookie(b"GET / HTTP/1.1\r\nCookie: mstshash=x\r\n\r\n", None),
        Rdp::None
    );
    assert_eq!(rdp_cookie(b"\x03\x00\x00\x20\x10", None), Rdp::Short);
}

#[test]
fn msts_cookies_name_a_server_as_haproxy_reads_them() {
    // 127.0.0.2:9502, as haproxy 2.6 matched it (and did not without the
    // dot after the port).
    let want = Some("127.0.0.2:9502".parse().unwrap());
    for v in [
        "33554559.7717.",
        "33554559.7717.0000",
        " 33554559.7717.0",
        "4328521855.7717.0",
        "33554559.73253.0",
    ] {
        assert_eq!(rdp_msts(v.as_bytes()), want, "{v}");
    }
    for v in ["33554559.7717", "33554559.7717x", "33554559"] {
        assert_eq!(rdp_msts(v.as_bytes()), None, "{v}");
    }
}
