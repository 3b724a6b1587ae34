use super::*;
use weir_proto::h1::{parse_response, Limits};

/// What the builder makes of `fields` (pseudo-headers first, as the codec
/// delivers them).
fn build(fields: &[(&str, &[u8])], end_stream: bool, limits: &Limits) -> Option<Built> {
    let mut b = RequestBuilder::default();
    for (n, v) in fields {
        b.field(n.as_bytes(), v);
    }
    b.finish(end_stream, limits, || b"k".to_vec())
}

/// The head built from `fields`, written as HTTP/1.1, and whether the
/// body is re-framed as chunks.
fn head(fields: &[(&str, &str)], end_stream: bool) -> Option<(String, bool)> {
    let fields: Vec<(&str, &[u8])> = fields.iter().map(|(n, v)| (*n, v.as_bytes())).collect();
    let b = build(&fields, end_stream, &Limits::default())?;
    let h = b.head.expect("a valid head");
    let text = String::from_utf8(weir_proto::h1::write_request(&h)).unwrap();
    Some((text, b.chunked))
}

/// The error a request gets (its status).
fn refused(fields: &[(&str, &[u8])], limits: &Limits) -> u16 {
    match build(fields, true, limits).expect("a target").head {
        Ok(h) => panic!("accepted: {h:?}"),
        Err((e, text)) => {
            assert!(
                text.windows(9).any(|w| w == b" HTTP/1.1"),
                "the capture has the request"
            );
            e.status()
        }
    }
}

const GET: [(&str, &[u8]); 4] = [
    (":method", b"GET"),
    (":scheme", b"http"),
    (":authority", b"h"),
    (":path", b"/"),
];

#[test]
fn fields_are_held_to_http1_rules_without_text() {
    let with = |extra: &[(&'static str, &'static [u8])]| {
        let mut f = GET.to_vec();
        f.extend_from_slice(extra);
        f
    };
    let lim = Limits::default();
    // What HTTP/1.1's tokeniser refuses in bytes is refused here too.
    assert_eq!(refused(&with(&[("x-a", b"a\x01b")]), &lim), 400);
    assert_eq!(refused(&with(&[("x\"a", b"v")]), &lim), 400);
    let mut b = RequestBuilder::default();
    for (n, v) in GET {
        b.field(n.as_bytes(), v);
    }
    b.field(b"x-\xff", b"v");
    let e = b
        .finish(true, &lim, || b"k".to_vec())
        .unwrap()
        .head
        .unwrap_err()
        .0;
    assert_eq!(e.status(), 400);
    let mut bad_method = GET.to_vec();
    bad_method[0] = (":method", b"G(T");
    assert_eq!(refused(&bad_method, &lim), 400);
    // Limits: field count (431), head size (431), request line (414).
    let small = Limits {
        max_head: 64,
        max_headers: 3,
        ..Limits::default()
    };
    let many = with(&[("a", b"1"), ("b", b"2"), ("c", b"3")]);
    assert_eq!(refused(&many, &small), 431);
    let long = with(&[("a", &[b'x'; 64])]);
    assert_eq!(refused(&long, &small), 431);
    let mut long_path = GET.to_vec();
    long_path[3] = (":path", &[b'/'; 70]);
    assert_eq!(refused(&long_path, &small), 414);
    // The message rules: a bad length.
    assert_eq!(refused(&with(&[("content-length", b"1x")]), &lim), 400);
    // Values lose the whitespace around them, as in HTTP/1.1.
    let h = build(&with(&[("x-a", b" v \t")]), true, &lim)
        .unwrap()
        .head
        .unwrap();
    assert_eq!(
        weir_proto::h1::write_request(&h),
        b"GET / HTTP/1.1\r\nhost: h\r\nx-a: v\r\n\r\n"
    );
    assert!(!h.canonical && !h.expect_continue && h.keep_alive);
}

fn text(v: Vec<u8>) -> String {
    String::from_utf8(v).unwrap()
}

#[test]
fn a_get_becomes_origin_form_with_host_from_authority() {
    let (h, chunked) = head(
        &[
            (":method", "GET"),
            (":scheme", "https"),
            (":authority", "example.com:8443"),
            (":path", "/a/b?x=1"),
            ("host", "ignored"),
            ("accept", "*/*"),
        ],
        true,
    )
    .unwrap();
    assert_eq!(
        h,
        "GET /a/b?x=1 HTTP/1.1\r\nhost: example.com:8443\r\naccept: */*\r\n\r\n"
    );
    assert!(!chunked);
}

#[test]
fn without_authority_the_host_field_stays() {
    let fields = [
        (":method", "GET"),
        (":scheme", "http"),
        (":path", "/x"),
        ("host", "h.test"),
    ];
    assert_eq!(
        head(&fields, true).unwrap().0,
        "GET /x HTTP/1.1\r\nhost: h.test\r\n\r\n"
    );
}

#[test]
fn cookies_are_joined_and_bodies_framed() {
    let post = [
        (":method", "POST"),
        (":scheme", "http"),
        (":authority", "h"),
        (":path", "/up"),
    ];
    let mut f = post.to_vec();
    f.extend([("cookie", "a=1"), ("cookie", "b=2"), ("te", "trailers")]);
    let (h, chunked) = head(&f, false).unwrap();
    assert!(h.contains("cookie: a=1; b=2\r\n"), "{h}");
    assert!(
        h.ends_with("transfer-encoding: chunked\r\n\r\n") && chunked,
        "{h}"
    );
    let mut f = post.to_vec();
    f.push(("content-length", "5"));
    let (h, chunked) = head(&f, false).unwrap();
    assert!(
        h.contains("content-length: 5\r\n") && !h.contains("chunked") && !chunked,
        "{h}"
    );
    // No body: no framing added.
    assert!(!head(&post, true).unwrap().0.contains("chunked"));
}

#[test]
fn connect_uses_the_authority_and_bad_targets_are_refused() {
    let (h, chunked) = head(
        &[(":method", "CONNECT"), (":authority", "example.com:443")],
        false,
    )
    .unwrap();
    assert_eq!(
        h,
        // Host loses the default port, as an HTTP/1.1 CONNECT's does.
        "CONNECT example.com:443 HTTP/1.1\r\nhost: example.com\r\n\r\n"
    );
    assert!(!chunked);
    let bad = [(":method", "GET"), (":scheme", "http"), (":path", "/a b")];
    assert_eq!(head(&bad, true), None);
}

#[test]
fn responses_lose_connection_fields() {
    let raw = b"HTTP/1.1 201 Created\r\nConnection: keep-alive\r\nX-A: 1\r\nTransfer-Encoding: chunked\r\nSet-Cookie: a\r\nSet-Cookie: b\r\n\r\n";
    let (head, _) = parse_response(raw, &Limits::default(), "GET")
        .unwrap()
        .unwrap();
    let names: Vec<String> = response_fields(&head)
        .map(|(n, v)| {
            format!(
                "{}={}",
                String::from_utf8_lossy(n).to_ascii_lowercase(),
                String::from_utf8_lossy(v)
            )
        })
        .collect();
    assert_eq!(names, ["x-a=1", "set-cookie=a", "set-cookie=b"]);
}

#[test]
fn trailers_both_ways() {
    let map = trailers(&[
        b"Grpc-Status: 0".to_vec(),
        b"grpc-message:  ok ".to_vec(),
        b"junk".to_vec(),
    ]);
    assert_eq!(map.get("grpc-status").unwrap(), "0");
    assert_eq!(map.get("grpc-message").unwrap(), "ok");
    assert_eq!(map.len(), 2);
    let end = text(last_chunk(Some(&map)));
    assert!(
        end.starts_with("0\r\n") && end.ends_with("\r\n\r\n"),
        "{end}"
    );
    assert!(end.contains("grpc-status: 0\r\n"), "{end}");
    assert_eq!(text(last_chunk(None)), "0\r\n\r\n");
    let f = trailer_fields(&[
        b"Grpc-Status: 0".to_vec(),
        b"junk".to_vec(),
        b"Connection: x".to_vec(),
    ]);
    assert_eq!(f, [(b"grpc-status".to_vec(), b"0".to_vec())]);
}

#[test]
fn requests_to_servers_go_in_absolute_form() {
    let raw = b"POST /api?x=1 HTTP/1.1\r\nHost: svc.test\r\nConnection: keep-alive\r\nTE: trailers\r\nContent-Type: application/grpc\r\nTransfer-Encoding: chunked\r\n\r\n";
    let (req, _) = weir_proto::h1::parse_request(raw, &Limits::default())
        .unwrap()
        .unwrap();
    let r = upstream_request(&req, "http", "10.0.0.1:80").unwrap();
    assert_eq!(r.uri(), "http://svc.test/api?x=1");
    assert_eq!(r.method(), "POST");
    assert_eq!(r.headers().get("te").unwrap(), "trailers");
    assert_eq!(r.headers().get("content-type").unwrap(), "application/grpc");
    for gone in ["host", "connection", "transfer-encoding"] {
        assert!(r.headers().get(gone).is_none(), "{gone}");
    }
    let raw = b"GET / HTTP/1.1\r\n\r\n";
    let (req, _) = weir_proto::h1::parse_request(raw, &Limits::default())
        .unwrap()
        .unwrap();
    let r = upstream_request(&req, "https", "10.0.0.1:443").unwrap();
    assert_eq!(r.uri(), "https://10.0.0.1:443/");
    let raw = b"CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\n\r\n";
    let (req, _) = weir_proto::h1::parse_request(raw, &Limits::default())
        .unwrap()
        .unwrap();
    assert!(upstream_request(&req, "http", "x").is_none());
}

#[test]
fn responses_from_servers_get_http1_framing() {
    // The response head as the exchange gets it, written as HTTP/1.1.
    let head = |parts: &http::response::Parts, ended: bool, head_req: bool| {
        let (p, chunked) = response_parts(parts, ended, head_req);
        let method = if head_req { "HEAD" } else { "GET" };
        let h = weir_proto::h1::response_head(p, method, false).unwrap();
        (text(weir_proto::h1::write_response(&h)), h.framing, chunked)
    };
    let r = http::Response::builder()
        .status(200)
        .header("content-type", "text/plain")
        .body(())
        .unwrap();
    let (parts, ()) = r.into_parts();
    let (h, framing, chunked) = head(&parts, false, false);
    assert!(chunked && framing == weir_proto::h1::Framing::Chunked);
    assert_eq!(
        h,
        "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ntransfer-encoding: chunked\r\n\r\n"
    );
    let (h, framing, chunked) = head(&parts, true, false);
    assert!(!chunked && h.contains("content-length: 0\r\n"));
    assert_eq!(framing, weir_proto::h1::Framing::None);
    let (h, _, chunked) = head(&parts, false, true);
    assert!(!chunked && !h.contains("content-length") && !h.contains("chunked"));
    let r = http::Response::builder()
        .status(204)
        .header("content-length", "0")
        .body(())
        .unwrap();
    let (h, _, chunked) = head(&r.into_parts().0, false, false);
    assert!(!chunked && h.starts_with("HTTP/1.1 204 No Content\r\n"));
}

#[test]
fn the_scheme_is_checked_and_its_default_port_leaves_host() {
    let get = |scheme: &'static str, authority: &'static str| {
        head(
            &[
                (":method", "GET"),
                (":scheme", scheme),
                (":authority", authority),
                (":path", "/"),
            ],
            true,
        )
        .map(|(h, _)| h)
    };
    assert_eq!(
        get("http", "h:80").unwrap(),
        "GET / HTTP/1.1\r\nhost: h\r\n\r\n"
    );
    assert_eq!(
        get("https", "h:443").unwrap(),
        "GET / HTTP/1.1\r\nhost: h\r\n\r\n"
    );
    assert_eq!(
        get("https", "h:80").unwrap(),
        "GET / HTTP/1.1\r\nhost: h:80\r\n\r\n"
    );
    assert_eq!(
        get("http", "h:8080").unwrap(),
        "GET / HTTP/1.1\r\nhost: h:8080\r\n\r\n"
    );
    // A scheme that is no scheme is a bad request (400, as haproxy answers
    // it); a missing one has no target (the stream is reset).
    for bad in ["http://localhost/?", "", "1http", "ht tp"] {
        let f: [(&str, &[u8]); 4] = [
            (":method", b"GET"),
            (":scheme", bad.as_bytes()),
            (":authority", b"h"),
            (":path", b"/"),
        ];
        assert_eq!(refused(&f, &Limits::default()), 400, "{bad:?}");
    }
    let missing: [(&str, &[u8]); 3] = [(":method", b"GET"), (":authority", b"h"), (":path", b"/")];
    assert!(build(&missing, true, &Limits::default()).is_none());
}
