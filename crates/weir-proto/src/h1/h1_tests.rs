//! HTTP/1 codec tests: captured messages at every prefix, each strictness
//! rule, chunked bodies in every split.

use super::*;

fn req(s: &str) -> Result<Option<(RequestHead, usize)>, H1Error> {
    parse_request(s.as_bytes(), &Limits::default())
}

fn ok(s: &str) -> RequestHead {
    req(s).unwrap().unwrap().0
}

fn status(s: &str) -> u16 {
    req(s).unwrap_err().status()
}

/// The values of the fields named `name`, in order.
fn values<'h>(h: &'h RequestHead, name: &str) -> Vec<&'h [u8]> {
    h.headers
        .iter()
        .filter(|x| x.is(name))
        .map(|x| x.value())
        .collect()
}

const CAPTURED: &[&str] = &[
    "GET / HTTP/1.1\r\nHost: example.com\r\nUser-Agent: curl/7.88.1\r\nAccept: */*\r\n\r\n",
    "POST /upload?x=1 HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Type: text/plain\r\n\r\nhello",
    "PUT /c HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
    "GET /ws HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n",
    "GET / HTTP/1.0\r\n\r\n",
];

#[test]
fn captured_requests_at_every_prefix() {
    for msg in CAPTURED {
        let b = msg.as_bytes();
        let (_, used) = parse_request(b, &Limits::default()).unwrap().unwrap();
        for n in 0..used {
            assert_eq!(
                parse_request(&b[..n], &Limits::default()),
                Ok(None),
                "prefix {n} of {msg:?}"
            );
        }
    }
}

#[test]
fn framing_and_connection() {
    let h = ok(CAPTURED[0]);
    assert_eq!(
        (
            h.method.as_str(),
            h.uri.as_str(),
            h.minor,
            h.framing,
            h.keep_alive
        ),
        ("GET", "/", 1, Framing::None, true)
    );
    assert_eq!(ok(CAPTURED[1]).framing, Framing::ContentLength(5));
    assert_eq!(ok(CAPTURED[2]).framing, Framing::Chunked);
    assert!(!ok(CAPTURED[4]).keep_alive, "HTTP/1.0 closes by default");
    assert!(ok("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").keep_alive);
    assert!(!ok("GET / HTTP/1.1\r\nConnection: Close\r\n\r\n").keep_alive);
    assert_eq!(
        ok("CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\n\r\n").framing,
        Framing::Tunnel
    );
    assert!(
        ok("POST / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\n").expect_continue
    );
}

#[test]
fn te_and_cl_together_te_wins_and_closes() {
    let h = ok("POST / HTTP/1.1\r\nContent-Length: 10\r\nTransfer-Encoding: chunked\r\n\r\n");
    assert_eq!(h.framing, Framing::Chunked);
    assert!(h.close_after && !h.keep_alive);
    assert!(
        !h.headers.iter().any(|x| x.is("content-length")),
        "Content-Length removed"
    );
}

#[test]
fn content_length_rules() {
    assert_eq!(
        ok("POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\n").framing,
        Framing::ContentLength(3)
    );
    assert_eq!(
        ok("POST / HTTP/1.1\r\nContent-Length: 3, 3\r\n\r\n").framing,
        Framing::ContentLength(3)
    );
    assert_eq!(
        status("POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n"),
        400
    );
    assert_eq!(status("POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n"), 400);
    assert_eq!(
        status("POST / HTTP/1.1\r\nContent-Length: 1e3\r\n\r\n"),
        400
    );
    assert_eq!(
        status("POST / HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n"),
        400
    );
    assert_eq!(status("POST / HTTP/1.1\r\nContent-Length: \r\n\r\n"), 400);
}

#[test]
fn transfer_encoding_rules() {
    for (te, want) in [
        ("gzip", 400),
        ("chunked, gzip", 400),
        ("xchunked", 400),
        ("chunked;q=1", 400),
        ("", 400),
        ("chunked, chunked", 400),
        ("\u{a0}chunked", 400),
        ("chunked\u{a0}", 400),
        ("\u{85}chunked", 400),
        ("chunked\u{3000}", 400),
        ("gzip, chunked", 422),
        ("identity, chunked", 422),
        (",chunked", 422),
        ("foo, chunked", 422),
    ] {
        let msg = format!("POST / HTTP/1.1\r\nTransfer-Encoding: {te}\r\n\r\n");
        assert_eq!(status(&msg), want, "{te:?}");
    }
    assert_eq!(
        status(
            "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n"
        ),
        400
    );
    // Accepted, and written as one canonical field.
    for te in ["CHUNKED", "chunked,", "chunked ,", "\tchunked"] {
        let h = ok(&format!(
            "POST / HTTP/1.1\r\nTransfer-Encoding: {te}\r\n\r\n"
        ));
        assert_eq!(h.framing, Framing::Chunked, "{te:?}");
        assert!(!h.canonical, "{te:?}");
        assert_eq!(values(&h, "transfer-encoding"), [b"chunked"], "{te:?}");
    }
    let h = ok("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n");
    assert!(h.canonical && !h.close_after);
    // HTTP/1.0 with chunks: read, then closed (as haproxy 2.6).
    let h = ok("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n");
    assert_eq!(h.framing, Framing::Chunked);
    assert!(h.close_after && !h.keep_alive);
}

#[test]
fn content_length_is_digits_only_and_merged() {
    for cl in [
        "\u{a0}5",
        "5\u{a0}",
        "\u{3000}5",
        "+5",
        "0x5",
        "5 5",
        "5,",
        ",5",
        "5;",
    ] {
        let msg = format!("POST / HTTP/1.1\r\nContent-Length: {cl}\r\n\r\n");
        assert_eq!(status(&msg), 400, "{cl:?}");
    }
    for msg in [
        "POST / HTTP/1.1\r\nContent-Length: 5, 5\r\n\r\n",
        "POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n",
        "POST / HTTP/1.1\r\nContent-Length:\t5 \r\n\r\n",
    ] {
        let h = ok(msg);
        assert_eq!(h.framing, Framing::ContentLength(5), "{msg:?}");
        assert!(!h.canonical, "{msg:?}");
        assert_eq!(values(&h, "content-length"), [b"5"], "{msg:?}");
    }
    assert!(ok("POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\n").canonical);
}

#[test]
fn one_host_and_an_agreeing_authority() {
    assert_eq!(status("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"), 400);
    let h = ok("GET / HTTP/1.1\r\nHost: a\r\nX: 1\r\nHost: a\r\n\r\n");
    assert!(!h.canonical);
    assert_eq!(h.headers.iter().filter(|x| x.is("host")).count(), 1);
    for (target, host, want_ok) in [
        ("http://a/", "a", true),
        ("http://A/x", "a", true),
        ("http://a:80/", "a", true),
        ("http://a/", "a:80", true),
        ("https://a:443/", "a", true),
        ("http://u@a/", "a", true),
        ("http://b/", "a", false),
        ("http://a:443/", "a", false),
        ("https://a:80/", "a", false),
        ("http://a:8080/", "a", false),
        ("http://a?x", "a", true),
    ] {
        let msg = format!("GET {target} HTTP/1.1\r\nHost: {host}\r\n\r\n");
        assert_eq!(req(&msg).is_ok(), want_ok, "{target} / {host}");
    }
    assert!(req("GET http://a/ HTTP/1.1\r\n\r\n").is_ok(), "no Host");
}

#[test]
fn request_targets() {
    for bad in [
        "GET /a#b HTTP/1.1\r\n\r\n",
        "GET a:80 HTTP/1.1\r\n\r\n",
        "GET http:/a HTTP/1.1\r\n\r\n",
        "GET ://a/ HTTP/1.1\r\n\r\n",
        "GET http:///x HTTP/1.1\r\n\r\n",
        "GET /a\u{ff}b HTTP/1.1\r\n\r\n",
        "GET /a<b HTTP/1.1\r\n\r\n",
        "GET /a|b HTTP/1.1\r\n\r\n",
        "GET /a{b} HTTP/1.1\r\n\r\n",
        "GET /a\\b HTTP/1.1\r\n\r\n",
        "GET /a\"b HTTP/1.1\r\n\r\n",
    ] {
        assert_eq!(status(bad), 400, "{bad:?}");
    }
    for good in [
        "OPTIONS * HTTP/1.1\r\n\r\n",
        "CONNECT a:443 HTTP/1.1\r\n\r\n",
        "GET /a?b=c HTTP/1.1\r\n\r\n",
    ] {
        assert!(req(good).is_ok(), "{good:?}");
    }
}

#[test]
fn non_canonical_heads_are_marked() {
    for msg in [
        "GET / HTTP/1.1\nHost: a\nX: a\n\n",
        "GET / HTTP/1.1\r\nHost: a\nX: a\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a\r\n\n",
        "GET  / HTTP/1.1\r\nHost: a\r\n\r\n",
        "GET /  HTTP/1.1\r\nHost: a\r\n\r\n",
        "GET / HTTP/1.1\r\nHost:a\r\n\r\n",
        "GET / HTTP/1.1\r\nHost:  a\r\n\r\n",
        "GET / HTTP/1.1\r\nHost:\ta\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a \r\n\r\n",
        "GET / HTTP/1.1\r\nX:\r\n\r\n",
        "GET / HTTP/1.1\r\nX:  \r\n\r\n",
    ] {
        let h = ok(msg);
        assert!(!h.canonical, "{msg:?}");
    }
    for msg in CAPTURED {
        assert!(ok(msg).canonical, "{msg:?}");
    }
    assert!(ok("GET / HTTP/1.1\r\nX: \r\n\r\n").canonical, "empty value");
    let l = Limits::default();
    let res = |s: &str| parse_response(s.as_bytes(), &l, "GET").unwrap().unwrap().0;
    assert!(res("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n").canonical);
    assert!(!res("HTTP/1.1 200 OK\nContent-Length: 1\n\n").canonical);
    assert!(!res("HTTP/1.1 200 OK\r\nContent-Length:1\r\n\r\n").canonical);
}

#[test]
fn size_limits() {
    let limits = Limits {
        max_head: 64,
        max_headers: 4,
        ..Limits::default()
    };
    let long_uri = format!("GET /{} HTTP/1.1\r\n", "a".repeat(100));
    assert_eq!(
        parse_request(long_uri.as_bytes(), &limits)
            .unwrap_err()
            .status(),
        414
    );
    let big = format!("GET / HTTP/1.1\r\nX: {}\r\n", "b".repeat(100));
    assert_eq!(
        parse_request(big.as_bytes(), &limits).unwrap_err().status(),
        431
    );
    let many = "GET / HTTP/1.1\r\nA: 1\r\nB: 1\r\nC: 1\r\nD: 1\r\nE: 1\r\n\r\n";
    assert_eq!(
        parse_request(
            many.as_bytes(),
            &Limits {
                max_head: 16384,
                max_headers: 4,
                ..Limits::default()
            }
        )
        .unwrap_err()
        .status(),
        431
    );
}

#[test]
fn responses() {
    let l = Limits::default();
    let r = |s: &str, m: &str| parse_response(s.as_bytes(), &l, m).unwrap().unwrap().0;
    assert_eq!(
        r("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx", "GET").framing,
        Framing::ContentLength(1)
    );
    assert_eq!(
        r("HTTP/1.1 200 OK\r\n\r\n", "GET").framing,
        Framing::UntilClose
    );
    assert!(!r("HTTP/1.1 200 OK\r\n\r\n", "GET").keep_alive);
    assert_eq!(
        r("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n", "HEAD").framing,
        Framing::None
    );
    assert_eq!(
        r("HTTP/1.1 304 Not Modified\r\n\r\n", "GET").framing,
        Framing::None
    );
    assert_eq!(
        r("HTTP/1.1 204 No Content\r\n\r\n", "GET").framing,
        Framing::None
    );
    assert_eq!(
        r(
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n",
            "GET"
        )
        .framing,
        Framing::Tunnel
    );
    assert_eq!(
        r("HTTP/1.1 200 OK\r\n\r\n", "CONNECT").framing,
        Framing::Tunnel
    );
    assert_eq!(
        r(
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
            "GET"
        )
        .framing,
        Framing::Chunked
    );
    assert_eq!(
        r("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", "GET").framing,
        Framing::UntilClose
    );
    let e = parse_response(
        b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
        &l,
        "GET",
    )
    .unwrap_err();
    assert_eq!(e.status(), 502);
    let full = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
    for n in 0..full.len() {
        assert_eq!(
            parse_response(&full[..n], &l, "GET"),
            Ok(None),
            "prefix {n}"
        );
    }
}

/// Body bytes, trailer lines, and whether the end was seen.
type Decoded = (Vec<u8>, Vec<Vec<u8>>, bool);

fn decode_all(body: &[u8], split: usize) -> Result<Decoded, H1Error> {
    let mut d = ChunkedDecoder::default();
    let (mut data, mut trailers) = (Vec::new(), Vec::new());
    let mut pending = body[..split].to_vec();
    for next in [&body[split..], &b""[..]] {
        let (ev, used) = d.feed(&pending)?;
        for e in ev {
            match e {
                ChunkEvent::Data(r) => data.extend_from_slice(&pending[r]),
                ChunkEvent::Trailer(t) => trailers.push(t),
                ChunkEvent::End => {}
            }
        }
        pending.drain(..used);
        pending.extend_from_slice(next);
    }
    Ok((data, trailers, d.is_done()))
}

#[test]
fn chunked_in_every_split() {
    let body = b"5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: yes\r\n\r\n";
    for split in 0..=body.len() {
        let (data, trailers, done) = decode_all(body, split).unwrap();
        assert_eq!(data, b"hello world", "split {split}");
        assert_eq!(trailers, vec![b"X-Trailer: yes".to_vec()]);
        assert!(done);
    }
}

#[test]
fn chunked_rejects() {
    for bad in [
        &b"zz\r\n"[..],
        b"5\r\nhelloX\r\n",
        b"fffffffffffffffff\r\n",
        b"4000000000000000\r\n",
        b"\r\n",
        b"5\nhello\r\n",
        b"0\r\nbadtrailer\r\n\r\n",
    ] {
        assert!(
            decode_all(bad, bad.len()).is_err(),
            "{:?}",
            String::from_utf8_lossy(bad)
        );
    }
}

#[test]
fn a_body_that_is_not_chunked_is_refused_before_its_line_ends() {
    let mut d = ChunkedDecoder::default();
    assert!(d.feed(b"hello").is_err(), "not hex: no CRLF awaited");
    for partial in [&b""[..], b"1", b"1f", b"5;", b"5 ", b"5\r", b"5;ext=x y"] {
        let mut d = ChunkedDecoder::default();
        assert!(
            matches!(d.feed(partial), Ok((_, 0))),
            "{:?}",
            String::from_utf8_lossy(partial)
        );
    }
    let mut d = ChunkedDecoder::default();
    assert!(d.feed(b"11111111111111111").is_err(), "17 digits");
}

#[test]
fn connection_tokens_match_whole_and_without_case() {
    let h = |v: &str| Header::new("Connection", v.as_bytes());
    let hs = [h("Upgrade, KEEP-Alive"), h(" close ")];
    assert!(super::head::connection_has(&hs, "keep-alive"));
    assert!(super::head::connection_has(&hs, "close"));
    assert!(super::head::connection_has(&hs, "upgrade"));
    assert!(!super::head::connection_has(&[h("closed, keep")], "close"));
    let both = ["close", "keep-alive"];
    assert_eq!(super::head::connection_lists(&hs, &both), 3);
    assert_eq!(
        super::head::connection_lists(&[h("Keep-Alive ,x")], &both),
        2
    );
    assert_eq!(super::head::connection_lists(&[], &both), 0);
    assert!(!super::head::connection_has(&[h("keep-alive")], "close"));
}

#[test]
fn the_fields_framing_reads_are_found_in_one_pass() {
    use super::framing::Names;
    let hs: Vec<Header> = [
        "User-Agent",
        "HOST",
        "Content-length",
        "te",
        "X-Upgrade",
        "Connection",
        "Transfer-Encodinq",
    ]
    .iter()
    .map(|n| Header::new(n, b"x"))
    .collect();
    let n = Names::of(&hs);
    for (bit, want) in [
        (Names::HOST, true),
        (Names::CONTENT_LENGTH, true),
        (Names::TE, true),
        (Names::CONNECTION, true),
        (Names::UPGRADE, false),
        (Names::EXPECT, false),
        (Names::TRANSFER_ENCODING, false),
    ] {
        assert_eq!(n.has(bit), want, "bit {bit}");
    }
    // A head without them skips the rules, and is read the same: the
    // length of a POST with only Transfer-Encoding, keep-alive without
    // Connection.
    let r = ok("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n");
    assert_eq!((r.framing, r.keep_alive), (Framing::Chunked, true));
    assert!(!ok("GET / HTTP/1.1\r\nhost: a\r\ncOnnection: close\r\n\r\n").keep_alive);
}

#[test]
fn written_heads_parse_again_canonical_and_the_same() {
    let accepted = [
        "GET / HTTP/1.1\nHost: a\nX: a\n\n",
        "GET  /x  HTTP/1.1\r\nHost:\ta \r\nHost: a\r\n\r\n",
        "POST / HTTP/1.1\r\nContent-Length: 5, 5\r\nTransfer-Encoding: CHUNKED,\r\n\r\n",
        "POST / HTTP/1.0\r\nContent-Length:5\r\nX:\r\n\r\n",
        "GET http://A:80/ HTTP/1.1\r\nHost: a\r\n\r\n",
    ];
    for msg in CAPTURED.iter().chain(&accepted) {
        let h = ok(msg);
        let out = write_request(&h);
        let (again, n) = parse_request(&out, &Limits::default()).unwrap().unwrap();
        assert_eq!(n, out.len(), "{msg:?}");
        assert!(
            again.canonical,
            "{msg:?} -> {:?}",
            String::from_utf8_lossy(&out)
        );
        assert_eq!(
            (
                again.method,
                again.uri,
                again.minor,
                again.headers,
                again.framing
            ),
            (h.method, h.uri, h.minor, h.headers, h.framing),
            "{msg:?}"
        );
    }
}

/// The fuzz target's round trip: a head weir accepts, written back, parses
/// again canonical to the same message and framing.
fn round_trip(data: &[u8]) {
    let l = Limits::default();
    if let Ok(Some((head, _))) = parse_request(data, &l) {
        let out = write_request(&head);
        let (again, n) = parse_request(&out, &l).unwrap().unwrap();
        assert_eq!(n, out.len());
        assert!(again.canonical);
        assert_eq!(
            (
                again.method,
                again.uri,
                again.minor,
                again.headers,
                again.framing
            ),
            (
                head.method,
                head.uri,
                head.minor,
                head.headers,
                head.framing
            )
        );
    }
    if let Ok(Some((head, _))) = parse_response(data, &l, "GET") {
        let out = write_response(&head);
        let (again, n) = parse_response(&out, &l, "GET").unwrap().unwrap();
        assert_eq!(n, out.len());
        assert!(again.canonical || head.reason.is_empty());
        assert_eq!(
            (again.status, again.headers, again.framing),
            (head.status, head.headers, head.framing)
        );
    }
}

#[test]
fn fuzz_crashers_stay_fixed() {
    // Found by `cargo fuzz run h1`: a two-digit status (`020`) was read as
    // 20 and written back as an invalid status line.
    for data in [
        &b"\x0d\x0a\x0d\x0aHTTP/1.1 020\x0a\x0d\x0a%\x00\x00EG  Ht"[..],
        b"HTTP/1.1 020 BBFBBBBPOST / HTTP/0.1\x0d\x0aTransfer-Encoding: 1.1\x0d\x0aTransfer-Encodin:g'!!!chunke__________________________________________________2d)B+++%GPOST / GET ,ht=p:T / h: 2, : 5\x0d\x0a\x0d\x0aHTT\xd3/P\xff\x0d\x09\xff\x10\x00\x0a\x0a.1H",
    ] {
        round_trip(data);
    }
    let l = Limits::default();
    assert!(parse_response(b"HTTP/1.1 020 X\r\n\r\n", &l, "GET").is_err());
}

#[test]
fn te_keeps_trailers_only() {
    let te = |v: &str| -> (Vec<Vec<u8>>, bool) {
        let h = ok(&format!("GET / HTTP/1.1\r\nTE: {v}\r\n\r\n"));
        let vals = values(&h, "te").iter().map(|v| v.to_vec()).collect();
        (vals, h.canonical)
    };
    assert_eq!(te("trailers"), (vec![b"trailers".to_vec()], true));
    assert_eq!(te("trailers, gzip"), (vec![b"trailers".to_vec()], false));
    assert_eq!(te("gzip, Trailers"), (vec![b"trailers".to_vec()], false));
    assert_eq!(te("gzip"), (vec![], false));
    assert_eq!(te("trailers;q=0.5"), (vec![], false));
}

#[test]
fn default_ports_are_removed_as_haproxy_does() {
    let host = |h: &RequestHead| {
        h.headers
            .iter()
            .find(|x| x.is("host"))
            .map(|x| x.value().to_vec())
    };
    let h = ok("GET http://u:p@a:80/c1 HTTP/1.1\r\nHost: a:80\r\n\r\n");
    assert_eq!(
        (h.uri.as_str(), host(&h)),
        ("http://u:p@a/c1", Some(b"a".to_vec()))
    );
    assert!(!h.canonical);
    let h = ok("GET https://a:443/ HTTP/1.1\r\nHost: a:443\r\n\r\n");
    assert_eq!(
        (h.uri.as_str(), host(&h)),
        ("https://a/", Some(b"a".to_vec()))
    );
    // The target without a port: Host keeps its own (haproxy's c22-c29).
    for (target, hst, want_target, want_host) in [
        ("http://a/", "a:80", "http://a/", "a:80"),
        ("http://a/", "a:", "http://a/", "a:"),
        ("http://a:/", "a", "http://a/", "a"),
        ("http://a:80/", "a:", "http://a/", "a"),
        ("http://a:/", "a:80", "http://a/", "a"),
    ] {
        let h = ok(&format!("GET {target} HTTP/1.1\r\nHost: {hst}\r\n\r\n"));
        assert_eq!(
            (h.uri.as_str(), host(&h)),
            (want_target, Some(want_host.as_bytes().to_vec())),
            "{target} {hst}"
        );
    }
    let h = ok("GET https://a:80/ HTTP/1.1\r\nHost: a:80\r\n\r\n");
    assert_eq!(
        (h.uri.as_str(), host(&h)),
        ("https://a:80/", Some(b"a:80".to_vec()))
    );
    assert!(h.canonical);
    for (target, hst, want) in [
        ("a:80", "a:80", Some("a")),
        ("a:80", "a", Some("a")),
        ("a:80", "a:", Some("a:")),
        ("a:443", "a:443", Some("a")),
        ("a:8443", "a:8443", Some("a:8443")),
        ("a:80", "a:443", None),
        ("a:8080", "a", None),
        ("a", "a", None),
        ("b:80", "a:80", None),
    ] {
        let msg = format!("CONNECT {target} HTTP/1.1\r\nHost: {hst}\r\n\r\n");
        match want {
            Some(w) => {
                let h = ok(&msg);
                assert_eq!(
                    (h.uri.as_str(), host(&h)),
                    (target, Some(w.as_bytes().to_vec()))
                );
            }
            None => assert_eq!(status(&msg), 400, "{msg:?}"),
        }
    }
}

#[test]
fn websocket_handshakes_carry_their_key_and_proof() {
    let up = "GET /ws HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\nUpgrade: WebSocket\r\n";
    assert!(matches!(
        req(&format!("{up}\r\n")),
        Err(H1Error::BadRequest(m)) if m.contains("Sec-WebSocket-Key")
    ));
    assert!(req(&format!("{up}Sec-WebSocket-Key: a2V5\r\n\r\n"))
        .unwrap()
        .is_some());
    // Another protocol needs no key.
    assert!(
        req("GET / HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n")
            .unwrap()
            .is_some()
    );
    let res = |extra: &str| {
        parse_response(
            format!("HTTP/1.1 101 Switching Protocols\r\nConnection: upgrade\r\nUpgrade: websocket\r\n{extra}\r\n").as_bytes(),
            &Limits::default(),
            "GET",
        )
    };
    assert!(matches!(res(""), Err(H1Error::BadResponse(m)) if m.contains("Sec-WebSocket-Accept")));
    assert!(res("Sec-WebSocket-Accept: x\r\n").unwrap().is_some());
}

#[test]
fn short_fields_are_kept_inline_long_ones_whole() {
    // A field costs 48 bytes, no more than a boxed field and its heap block.
    assert_eq!(std::mem::size_of::<Header>(), 48);
    for (name, value) in [
        ("host", &b"example.com"[..]),
        ("x", &[b'v'; 44][..]),
        ("x", &[b'v'; 45][..]),
        ("user-agent", &[b'a'; 300][..]),
        ("e", &b""[..]),
    ] {
        let mut h = Header::new(name, value);
        assert_eq!((h.name(), h.value()), (name, value));
        assert_eq!(h.name_bytes(), name.as_bytes());
        assert!(h.is(&name.to_ascii_uppercase()));
        assert_eq!(h, Header::new(name, value));
        assert_ne!(h, Header::new(name, b"other"));
        h.set_value(&[b'w'; 60]);
        assert_eq!((h.name(), h.value()), (name, &[b'w'; 60][..]));
        h.set_value(b"short");
        assert_eq!(h.value(), b"short");
    }
}

#[test]
fn http10_get_head_delete_with_a_body_get_413() {
    let req = |t: &str, any: bool| {
        let limits = Limits {
            any_method_payload: any,
            ..Limits::default()
        };
        parse_request(t.as_bytes(), &limits)
            .map(|r| r.is_some())
            .map_err(|e| e.status())
    };
    assert_eq!(
        req("GET / HTTP/1.0\r\nContent-Length: 1\r\n\r\n", false),
        Err(413)
    );
    assert_eq!(
        req(
            "DELETE / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n",
            false
        ),
        Err(413)
    );
    assert_eq!(
        req("GET / HTTP/1.0\r\nContent-Length: 1\r\n\r\n", true),
        Ok(true)
    );
    assert_eq!(
        req("GET / HTTP/1.0\r\nContent-Length: 0\r\n\r\n", false),
        Ok(true)
    );
    assert_eq!(
        req("POST / HTTP/1.0\r\nContent-Length: 1\r\n\r\n", false),
        Ok(true)
    );
    assert_eq!(
        req(
            "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\n\r\n",
            false
        ),
        Ok(true)
    );
}

#[test]
fn names_compare_without_case_as_ascii_does() {
    let words: [&[u8]; 9] = [
        b"Content-Length",
        b"content-length",
        b"CONTENT-LENGTH",
        b"content-lengti",
        b"",
        b"@[`{",
        b"`{@[",
        b"\xc3\xa9",
        b"\xc3\x89",
    ];
    for a in words {
        for b in words {
            assert_eq!(
                super::head::eq_ignore_case(a, b),
                a.eq_ignore_ascii_case(b),
                "{a:?} {b:?}"
            );
        }
    }
}
