//! Differential tests: the same configuration and the same raw requests to
//! weir and to Debian's `haproxy`, in front of the same origin; the status
//! each client gets and what reaches the origin must agree, except for the
//! documented differences (docs/compatibility.md, "HTTP differences").

use crate::common::http::{http_cfg, Origin};
use crate::common::*;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// Sends `req` and returns the status lines of every response read until
/// the proxy closes (or goes quiet: keep-alive).
fn statuses(port: u16, req: &[u8]) -> Vec<u16> {
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.set_read_timeout(Some(Duration::from_millis(400)))
        .unwrap();
    let _ = c.write_all(req);
    let mut out = Vec::new();
    let mut b = [0u8; 65536];
    while let Ok(n) = c.read(&mut b) {
        if n == 0 {
            break;
        }
        out.extend_from_slice(&b[..n]);
    }
    let text = String::from_utf8_lossy(&out);
    text.match_indices("HTTP/1.")
        .filter_map(|(i, _)| {
            let rest = &text[i..];
            let line = rest.lines().next()?;
            let code = line.split(' ').nth(1)?;
            (code.len() == 3).then(|| code.parse().ok()).flatten()
        })
        .collect()
}

/// Documented difference: (weir's statuses, haproxy's statuses).
type Differs = Option<(&'static [u16], &'static [u16])>;

/// The corpus: name, raw request, and the statuses each proxy answers
/// where weir differs from haproxy 2.6 on purpose (it is stricter, or it
/// answers requests haproxy drops).
fn corpus() -> Vec<(&'static str, Vec<u8>, Differs)> {
    let r = |s: &str| s.as_bytes().to_vec();
    vec![
        ("plain", r("GET /?s=3 HTTP/1.1\r\nHost: a\r\n\r\n"), None),
        ("absolute-form", r("GET http://a/?s=3 HTTP/1.1\r\nHost: a\r\n\r\n"), None),
        ("http10", r("GET /?s=3 HTTP/1.0\r\n\r\n"), None),
        (
            "cl-te",
            r("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: a\r\n\r\n"),
            None,
        ),
        (
            "te-cl",
            r("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n8\r\nSMUGGLED\r\n0\r\n\r\n"),
            None,
        ),
        ("te-space-colon", r("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding : chunked\r\n\r\n0\r\n\r\n"), None),
        ("te-xchunked", r("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: xchunked\r\n\r\n0\r\n\r\n"), None),
        ("te-chunked-identity", r("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n"), None),
        ("te-double-chunked", r("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"), None),
        ("te-http10", r("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"), None),
        ("cl-dup-same", r("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc"), None),
        ("cl-dup-diff", r("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd"), None),
        ("cl-list-diff", r("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3, 4\r\n\r\nabcd"), None),
        ("cl-negative", r("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n"), None),
        ("cl-plus", r("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: +3\r\n\r\nabc"), None),
        ("chunk-overflow", r("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFFF1\r\nx\r\n0\r\n\r\n"), None),
        ("chunk-bad-hex", r("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3x\r\nabc\r\n0\r\n\r\n"), None),
        ("header-name-space", r("GET / HTTP/1.1\r\nHost: a\r\nBad Name: x\r\n\r\n"), None),
        ("header-nul", r("GET / HTTP/1.1\r\nHost: a\r\nX: a\0b\r\n\r\n"), Some((&[400], &[200]))),
        ("obs-fold", r("GET / HTTP/1.1\r\nHost: a\r\nX: a\r\n b\r\n\r\n"), Some((&[400], &[200]))),
        ("bare-cr", r("GET / HTTP/1.1\r\nHost: a\rX: y\r\n\r\n"), None),
        ("bad-version", r("GET / HTTP/9.9\r\nHost: a\r\n\r\n"), Some((&[400], &[200]))),
        ("no-version", r("GET /\r\n\r\n"), None),
        ("uri-too-long", format!("GET /{} HTTP/1.1\r\nHost: a\r\n\r\n", "a".repeat(17000)).into_bytes(), Some((&[414], &[400]))),
        ("too-many-headers", format!("GET / HTTP/1.1\r\n{}\r\n", "A: b\r\n".repeat(150)).into_bytes(), Some((&[431], &[400]))),
        ("pipelined", r("GET /?s=1 HTTP/1.1\r\nHost: a\r\n\r\nGET /?s=2 HTTP/1.1\r\nHost: a\r\n\r\n"), None),
        // HTTP/1.0 GET, HEAD, DELETE with a body: 413 (servers of that age
        // may not read it); other methods, HTTP/1.1 and an empty body pass.
        ("http10-get-body", r("GET / HTTP/1.0\r\nContent-Length: 3\r\n\r\nabc"), None),
        ("http10-head-body", r("HEAD / HTTP/1.0\r\nContent-Length: 2\r\n\r\nab"), None),
        ("http10-delete-chunked", r("DELETE / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"), None),
        ("http10-get-empty-body", r("GET / HTTP/1.0\r\nContent-Length: 0\r\n\r\n"), None),
        ("http10-options-body", r("OPTIONS / HTTP/1.0\r\nContent-Length: 2\r\n\r\nab"), None),
        ("http11-get-body", r("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\nab"), None),
    ]
}

#[test]
fn h1_accept_payload_with_any_method_as_haproxy() {
    let origin = Origin::start("o");
    let be = format!("    server s 127.0.0.1:{}", origin.port());
    let got = beside_haproxy(|start| {
        let port = free_port();
        let cfg = http_cfg(port, "    h1-accept-payload-with-any-method", "", &be);
        let _p = start(&cfg, port);
        statuses(port, b"GET / HTTP/1.0\r\nContent-Length: 3\r\n\r\nabc")
    });
    assert_eq!(got, [200]);
}

#[test]
fn weir_and_haproxy_agree_on_tricky_requests() {
    let origin = Origin::start("o");
    let (wport, hport) = (free_port(), free_port());
    let be = format!("    server s 127.0.0.1:{}", origin.port());
    let Some(_h) = Haproxy::start(&http_cfg(hport, "", "", &be), hport) else {
        panic!("haproxy is not installed: tests/run installs it");
    };
    let _w = Weir::start(&http_cfg(wport, "", "", &be), wport);
    let mut report = Vec::new();
    for (name, req, documented) in corpus() {
        let before = origin.seen.lock().unwrap().len();
        let w = statuses(wport, &req);
        let w_seen: Vec<String> = origin.seen.lock().unwrap()[before..]
            .iter()
            .map(|s| s.head.lines().next().unwrap_or("").to_string())
            .collect();
        let before = origin.seen.lock().unwrap().len();
        let h = statuses(hport, &req);
        let h_seen: Vec<String> = origin.seen.lock().unwrap()[before..]
            .iter()
            .map(|s| s.head.lines().next().unwrap_or("").to_string())
            .collect();
        let agree = match documented {
            Some((dw, dh)) => w == dw && h == dh,
            None => w == h && w_seen == h_seen,
        };
        if !agree {
            report.push(format!(
                "{name}: weir {w:?} (origin saw {w_seen:?}) vs haproxy {h:?} (origin saw {h_seen:?})"
            ));
        }
        assert!(
            !w_seen.iter().any(|l| l.contains("smuggled")),
            "{name}: a smuggled request reached the origin through weir"
        );
    }
    assert!(report.is_empty(), "differences:\n{}", report.join("\n"));
}

/// Internal-state fetches, request-line captures, cookie counts and the
/// hash converters give weir and haproxy 2.6 the same values for the same
/// request (ids as HAProxy assigns them, a stats socket taking #1). The
/// frontend logs: haproxy captures the request line only then.
#[test]
fn fetches_and_hash_converters_as_haproxy() {
    let origin = Origin::start("o");
    let dir = tempdir("fetch-differential");
    let cfg = |sock: &std::path::Path, port: u16| {
        format!(
            "global\n    stats socket {}\n\
             defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
             \x20   log 127.0.0.1:9 local0\n    option httplog\n\
             frontend fe\n    bind 127.0.0.1:{port}\n\
             \x20   http-request set-var(txn.fe) fe_name\n\
             \x20   http-request set-var(txn.hash) req.hdr(x-in),crc32\n\
             \x20   http-request set-var(txn.hash1) req.hdr(x-in),crc32(1)\n\
             \x20   http-request set-var(txn.djb) req.hdr(x-in),djb2\n\
             \x20   http-request set-var(txn.djb1) req.hdr(x-in),djb2(1)\n\
             \x20   http-request set-var(txn.sdbm) req.hdr(x-in),sdbm\n\
             \x20   http-request set-var(txn.cc) req.cook_cnt(n)\n\
             \x20   http-request set-var(txn.call) req.cook_cnt\n\
             \x20   http-request set-var(txn.cv) req.cook_val(n)\n\
             \x20   default_backend be\n\
             backend be\n    id 7\n\
             \x20   http-response set-header x-fe \"%[var(txn.fe)]/%[fe_id]\"\n\
             \x20   http-response set-header x-be \"%[be_name]/%[be_id]\"\n\
             \x20   http-response set-header x-srv %[srv_id]\n\
             \x20   http-response set-header x-hash \"%[var(txn.hash)] %[var(txn.hash1)] %[var(txn.djb)] %[var(txn.djb1)] %[var(txn.sdbm)]\"\n\
             \x20   http-response set-header x-cook \"%[var(txn.cc)] %[var(txn.call)] %[var(txn.cv)]\"\n\
             \x20   http-response set-header x-const \"%[bin(414243)] %[bool(1)] %[env(HOME)]\"\n\
             \x20   http-response set-header x-cap \"%[capture.req.method] %[capture.req.uri] %[capture.req.ver]\"\n\
             \x20   server off 127.0.0.1:9 disabled\n    server s 127.0.0.1:{} id 5\n",
            sock.display(),
            origin.port()
        )
    };
    let (wp, hp) = (free_port(), free_port());
    let Some(_h) = Haproxy::start(&cfg(&dir.join("h.sock"), hp), hp) else {
        panic!("haproxy is not installed: tests/run installs it");
    };
    let _w = Weir::start(&cfg(&dir.join("w.sock"), wp), wp);
    let ask = |port: u16| {
        let mut c = crate::common::http::Client::connect(port);
        c.send(
            b"GET /p?q=1 HTTP/1.1\r\nHost: a\r\nX-In: weir-and-haproxy\r\nCookie: n=12; m=x\r\nCookie: n=34\r\n\r\n",
        );
        let r = c.response("GET");
        assert_eq!(r.status, 200, "{port}");
        [
            "x-fe", "x-be", "x-srv", "x-hash", "x-cook", "x-const", "x-cap",
        ]
        .map(|h| format!("{h}: {}", r.header(h).unwrap_or("(none)")))
    };
    let (ours, theirs) = (ask(wp), ask(hp));
    assert_eq!(ours, theirs, "weir, then haproxy");
    // Not vacuous: the values are there.
    assert!(
        ours[2].ends_with(": 5") && ours[1].contains("be/7"),
        "{ours:?}"
    );
}

/// The `Connection` tokens of the response to `req` (one request, read
/// until the proxy closes or goes quiet), in lower case and sorted.
fn connection_values(port: u16, req: &str) -> Vec<String> {
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.set_read_timeout(Some(Duration::from_millis(400)))
        .unwrap();
    c.write_all(req.as_bytes()).unwrap();
    let head = read_head(&mut c).unwrap_or_default();
    head.lines()
        .filter_map(|l| l.split_once(':'))
        .filter(|(n, _)| n.eq_ignore_ascii_case("connection"))
        .flat_map(|(_, v)| v.split(',').map(|t| t.trim().to_ascii_lowercase()))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect()
}

/// A server that answers one request with `response`.
fn answering(response: &'static [u8]) -> Server {
    Server::start(move |mut s| {
        let mut head = Vec::new();
        let mut b = [0u8; 1024];
        while !head.ends_with(b"\r\n\r\n") {
            match s.read(&mut b[..1]) {
                Ok(1) => head.push(b[0]),
                _ => return,
            }
        }
        let _ = s.write_all(response);
    })
}

/// The `Connection` tokens of the responses to `requests`, with weir and
/// haproxy, which must agree.
fn connection_answers(origin: &Server, requests: &[&str]) -> Vec<Vec<String>> {
    let be = format!("    server s 127.0.0.1:{}", origin.port());
    beside_haproxy(|start| {
        let port = free_port();
        let _p = start(&http_cfg(port, "", "", &be), port);
        requests
            .iter()
            .map(|r| connection_values(port, r))
            .collect()
    })
}

/// An HTTP/1.0 client (without and with keep-alive), an HTTP/1.1 one with
/// close, and one without.
const CLIENTS: [&str; 4] = [
    "GET / HTTP/1.0\r\n\r\n",
    "GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
    "GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
    "GET / HTTP/1.1\r\nHost: a\r\n\r\n",
];

#[test]
fn the_connection_field_says_what_becomes_of_the_client_as_haproxy() {
    // A server that says nothing of its connection.
    let origin = answering(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
    let got = connection_answers(&origin, &CLIENTS);
    // An HTTP/1.0 client whose connection closes is told so too.
    assert_eq!(got[0], ["close"]);
    assert_eq!(got[1], ["keep-alive"]);
    assert_eq!(got[2], ["close"]);
}

#[test]
fn where_weir_says_close_a_servers_other_connection_tokens_stay_as_haproxy() {
    let origin = answering(
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive, x-foo\r\nX-Foo: 1\r\n\r\nok",
    );
    // The clients whose answer weir rewrites: only what is said of the
    // connection changes.
    let got = connection_answers(&origin, &CLIENTS[..3]);
    assert_eq!(got[0], ["close", "x-foo"]);
    assert_eq!(got[1], ["keep-alive", "x-foo"]);
    assert_eq!(got[2], ["close", "x-foo"]);
    // An HTTP/1.1 client kept alive gets the head as the server sent it
    // (haproxy drops `keep-alive`; docs/compatibility.md says so): a head
    // nothing changes is not written anew on every response.
    let port = free_port();
    let be = format!("    server s 127.0.0.1:{}", origin.port());
    let _w = Weir::start(&http_cfg(port, "", "", &be), port);
    assert_eq!(connection_values(port, CLIENTS[3]), ["keep-alive", "x-foo"]);
}
