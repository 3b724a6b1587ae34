//! Request smuggling, tried as an attacker would: a table of hostile
//! requests sent to weir in front of strict recording origins (one per
//! case, so that whatever reaches an origin belongs to its case). Each
//! case asserts weir's answer, that nothing or exactly the expected number
//! of requests reached the origin, each in canonical form and readable
//! without ambiguity, and that the connection closes where it must. The
//! same table then runs through Debian's haproxy 2.6 (tests/run installs
//! it); every case where the two differ is printed, and the test fails
//! where weir forwards what haproxy refuses.

use crate::common::raw::*;
use crate::common::*;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What a case expects of weir.
#[derive(Clone, Copy, Debug)]
enum Want {
    /// This status, the connection closed, nothing reached the origin.
    Refused(u16),
    /// `n` requests reach the origin (each answered 200); `close`: the
    /// connection closes after them.
    Forwarded { n: usize, close: bool },
    /// `n` requests forwarded, then one refused with `status` (pipelined).
    ThenRefused { n: usize, status: u16 },
}

use Want::*;

const fn fwd(n: usize) -> Want {
    Forwarded { n, close: false }
}

const CLOSE1: Want = Forwarded { n: 1, close: true };

/// The hostile requests: name, bytes, what weir must do, and, for some, a
/// check of the one head the origin received.
type Check = Option<fn(&[u8]) -> bool>;

fn cases() -> Vec<(&'static str, Vec<u8>, Want, Check)> {
    let r = |s: &[u8]| s.to_vec();
    let one_cl5: Check = Some(|h| field(h, "content-length") == Some(b"5"));
    let chunked: Check = Some(|h| field(h, "transfer-encoding") == Some(b"chunked"));
    let one_host: Check = Some(|h| field(h, "host") == Some(b"a"));
    let x_b: Check = Some(|h| field(h, "x") == Some(b"b"));
    vec![
        // Transfer-Encoding padded with non-ASCII whitespace.
        ("te-nbsp-before", r(b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: \xc2\xa0chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n"), Refused(400), None),
        ("te-nbsp-after", r(b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\xc2\xa0\r\n\r\n0\r\n\r\n"), Refused(400), None),
        ("te-nel-before", r(b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: \xc2\x85chunked\r\n\r\n0\r\n\r\n"), Refused(400), None),
        ("te-ideographic-space", r(b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\xe3\x80\x80\r\n\r\n0\r\n\r\n"), Refused(400), None),
        ("cl-nbsp", r(b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: \xc2\xa05\r\n\r\nhello"), Refused(400), None),
        ("cl-vertical-tab", r(b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: \x0b5\r\n\r\nhello"), Refused(400), None),
        // Transfer codings.
        ("te-gzip-chunked", r(b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n"), Refused(422), None),
        ("te-identity-chunked", r(b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: identity, chunked\r\n\r\n0\r\n\r\n"), Refused(422), None),
        ("te-empty-element-first", r(b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: ,chunked\r\n\r\n0\r\n\r\n"), Refused(422), None),
        ("te-xchunked", r(b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: xchunked\r\n\r\n0\r\n\r\n"), Refused(400), None),
        ("te-chunked-param", r(b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked;q=1\r\n\r\n0\r\n\r\n"), Refused(400), None),
        ("te-chunked-gzip", r(b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, gzip\r\n\r\n0\r\n\r\n"), Refused(400), None),
        ("te-twice-one-field", r(b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, chunked\r\n\r\n0\r\n\r\n"), Refused(400), None),
        ("te-twice-two-fields", r(b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"), Refused(400), None),
        ("te-empty", r(b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: \r\n\r\n"), Refused(400), None),
        ("te-space-before-colon", r(b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding : chunked\r\n\r\n0\r\n\r\n"), Refused(400), None),
        ("te-upper-case", r(b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: CHUNKED\r\n\r\n0\r\n\r\n"), fwd(1), chunked),
        ("te-trailing-comma", r(b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked,\r\n\r\n0\r\n\r\n"), fwd(1), chunked),
        ("te-tab", r(b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding:\tchunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"), fwd(1), chunked),
        ("te-http10", r(b"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"), CLOSE1, chunked),
        // Both framings.
        ("cl-te-smuggled-get", r(b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: a\r\n\r\n"), CLOSE1, chunked),
        ("te-cl-smuggled-chunk", r(b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n8\r\nSMUGGLED\r\n0\r\n\r\n"), CLOSE1, chunked),
        ("cl-te-plain-body", r(b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\nhello"), Refused(400), None),
        // Content-Length.
        ("cl-list-same", r(b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5, 5\r\n\r\nhello"), fwd(1), one_cl5),
        ("cl-twice-same", r(b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello"), fwd(1), one_cl5),
        ("cl-twice-different", r(b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 5\r\n\r\nhello"), Refused(400), None),
        ("cl-list-different", r(b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3, 5\r\n\r\nhello"), Refused(400), None),
        ("cl-plus", r(b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: +5\r\n\r\nhello"), Refused(400), None),
        ("cl-minus", r(b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: -5\r\n\r\nhello"), Refused(400), None),
        ("cl-hex", r(b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0x5\r\n\r\nhello"), Refused(400), None),
        ("cl-empty", r(b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: \r\n\r\n"), Refused(400), None),
        ("cl-overflow", r(b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999999999999999\r\n\r\nhello"), Refused(400), None),
        ("cl-space-inside", r(b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5 5\r\n\r\nhello"), Refused(400), None),
        ("cl-tab-padded", r(b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length:\t5\t\r\n\r\nhello"), fwd(1), one_cl5),
        // Host and the target.
        ("host-twice-different", r(b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"), Refused(400), None),
        ("host-twice-same", r(b"GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n"), fwd(1), one_host),
        ("absolute-other-host", r(b"GET http://b/ HTTP/1.1\r\nHost: a\r\n\r\n"), Refused(400), None),
        ("absolute-http-port-443", r(b"GET http://a:443/ HTTP/1.1\r\nHost: a\r\n\r\n"), Refused(400), None),
        ("absolute-default-port", r(b"GET http://a:80/ HTTP/1.1\r\nHost: a\r\n\r\n"), fwd(1), None),
        ("absolute-https-default", r(b"GET https://a:443/ HTTP/1.1\r\nHost: a\r\n\r\n"), fwd(1), None),
        ("absolute-case", r(b"GET http://A/ HTTP/1.1\r\nHost: a\r\n\r\n"), fwd(1), None),
        ("fragment", r(b"GET /a#b HTTP/1.1\r\nHost: a\r\n\r\n"), Refused(400), None),
        ("authority-form-get", r(b"GET a:80 HTTP/1.1\r\nHost: a\r\n\r\n"), Refused(400), None),
        ("target-non-ascii", r(b"GET /a\xffb HTTP/1.1\r\nHost: a\r\n\r\n"), Refused(400), None),
        ("target-ctl", r(b"GET /a\x01b HTTP/1.1\r\nHost: a\r\n\r\n"), Refused(400), None),
        // Layout: written anew, never passed through.
        ("bare-lf-head", r(b"GET / HTTP/1.1\nHost: a\nX: b\n\n"), fwd(1), x_b),
        ("bare-lf-hides-te", r(b"POST / HTTP/1.1\r\nHost: a\r\nX: a\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"), fwd(1), chunked),
        ("two-spaces-request-line", r(b"GET  /  HTTP/1.1\r\nHost: a\r\n\r\n"), fwd(1), None),
        ("ows-tabs-and-trailing", r(b"GET / HTTP/1.1\r\nHost:\ta\r\nX:   b  \r\n\r\n"), fwd(1), x_b),
        ("no-space-after-colon", r(b"GET / HTTP/1.1\r\nHost:a\r\nX:b\r\n\r\n"), fwd(1), x_b),
        ("obs-fold", r(b"GET / HTTP/1.1\r\nHost: a\r\nX: a\r\n b\r\n\r\n"), Refused(400), None),
        ("obs-fold-te", r(b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding:\r\n chunked\r\n\r\n0\r\n\r\n"), Refused(400), None),
        ("bare-cr", r(b"GET / HTTP/1.1\r\nHost: a\rX: y\r\n\r\n"), Refused(400), None),
        ("cr-before-crlf", r(b"GET / HTTP/1.1\r\nHost: a\r\r\n\r\n"), Refused(400), None),
        ("leading-space-field", r(b"GET / HTTP/1.1\r\n Host: a\r\n\r\n"), Refused(400), None),
        // Bytes that never belong in a head.
        ("nul-in-value", r(b"GET / HTTP/1.1\r\nHost: a\r\nX: a\x00b\r\n\r\n"), Refused(400), None),
        ("ctl-in-value", r(b"GET / HTTP/1.1\r\nHost: a\r\nX: a\x01b\r\n\r\n"), Refused(400), None),
        ("del-in-value", r(b"GET / HTTP/1.1\r\nHost: a\r\nX: a\x7fb\r\n\r\n"), Refused(400), None),
        ("name-separator", r(b"GET / HTTP/1.1\r\nHost: a\r\nX(y): a\r\n\r\n"), Refused(400), None),
        ("name-empty", r(b"GET / HTTP/1.1\r\nHost: a\r\n: a\r\n\r\n"), Refused(400), None),
        ("name-space", r(b"GET / HTTP/1.1\r\nHost: a\r\nBad Name: x\r\n\r\n"), Refused(400), None),
        ("method-separator", r(b"G(T / HTTP/1.1\r\nHost: a\r\n\r\n"), Refused(400), None),
        ("version-lower-case", r(b"GET / http/1.1\r\nHost: a\r\n\r\n"), Refused(400), None),
        ("http09", r(b"GET /\r\n\r\n"), Refused(400), None),
        // Chunked bodies.
        ("chunk-bad-in-first-read", r(b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"), Refused(400), None),
        ("chunk-size-overflow", r(b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFFF1\r\nx\r\n0\r\n\r\n"), Refused(400), None),
        ("chunk-leading-space", r(b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n 3\r\nabc\r\n0\r\n\r\n"), Refused(400), None),
        ("chunk-data-too-long", r(b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcd\r\n0\r\n\r\n"), Refused(400), None),
        ("chunk-extension", r(b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3;a=b\r\nabc\r\n0\r\n\r\n"), fwd(1), chunked),
        ("chunk-trailer", r(b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nT: v\r\n\r\n"), fwd(1), chunked),
        // Sizes.
        ("too-many-fields", format!("GET / HTTP/1.1\r\n{}\r\n", "A: b\r\n".repeat(150)).into_bytes(), Refused(431), None),
        ("target-too-long", format!("GET /{} HTTP/1.1\r\nHost: a\r\n\r\n", "a".repeat(17000)).into_bytes(), Refused(414), None),
        // Ordinary requests, to show the table is not all refusals.
        ("expect-continue", r(b"POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\nabc"), fwd(1), None),
        ("pipelined-three", r(b"GET /1 HTTP/1.1\r\nHost: a\r\n\r\nPOST /2 HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\nabGET /3 HTTP/1.1\r\nHost: a\r\n\r\n"), fwd(3), None),
        ("pipelined-then-bad", r(b"GET /1 HTTP/1.1\r\nHost: a\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"), ThenRefused { n: 1, status: 400 }, None),
        ("options-asterisk", r(b"OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n"), fwd(1), None),
    ]
}

/// What a client saw: the statuses of complete responses, and whether the
/// proxy closed the connection (within `wait` once they are in).
struct Answer {
    statuses: Vec<u16>,
    closed: bool,
}

/// Sends `req` and reads until the proxy closes, or until `n` responses
/// came and the connection is expected to stay open; `wait` at most.
fn send(port: u16, req: &[u8], want: Want, wait: Duration) -> Answer {
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let _ = c.write_all(req);
    let deadline = Instant::now() + wait;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 65536];
    loop {
        if let Forwarded { n, close: false } = want {
            if responses(&buf).len() >= n {
                return Answer {
                    statuses: responses(&buf),
                    closed: false,
                };
            }
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Answer {
                statuses: responses(&buf),
                closed: false,
            };
        }
        c.set_read_timeout(Some(left)).unwrap();
        match c.read(&mut chunk) {
            Ok(0) | Err(_) => {
                return Answer {
                    statuses: responses(&buf),
                    closed: true,
                }
            }
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}

/// One proxy's results over the table: per case, its answer and what its
/// origin recorded.
struct Run {
    results: Vec<(Answer, Seen)>,
    _origins: Vec<Server>,
    seen: Vec<Arc<Mutex<Seen>>>,
    /// Every request of a client beside the hostile ones was answered.
    bystander_ok: bool,
}

fn run(
    start: impl FnOnce(&str, u16) -> Option<Box<dyn std::any::Any>>,
    wait: Duration,
) -> Option<Run> {
    let table = cases();
    let mut origins = Vec::new();
    let mut seen = Vec::new();
    let mut ports = Vec::new();
    for _ in &table {
        let (s, rec) = recording_origin();
        ports.push((free_port(), s.port()));
        origins.push(s);
        seen.push(rec);
    }
    // A well-behaved client beside the attacker, on its own frontend.
    let (bystander_origin, bystander_seen) = recording_origin();
    ports.push((free_port(), bystander_origin.port()));
    let last = ports.last().map(|p| p.0).unwrap_or_default();
    let _proxy = start(&config(&ports), last)?;
    let mut bystander = TcpStream::connect(("127.0.0.1", last)).unwrap();
    let mut bystander_answers = 0;
    let mut results = Vec::new();
    for (i, (_, req, want, _)) in table.iter().enumerate() {
        let answer = send(ports[i].0, req, *want, wait);
        let s = seen[i].lock().unwrap().clone();
        results.push((answer, s));
        // Its keep-alive connection is answered between every two cases.
        let _ = bystander.write_all(format!("GET /b{i} HTTP/1.1\r\nHost: a\r\n\r\n").as_bytes());
        let got = read_at_least(&mut bystander, 40, Duration::from_secs(5));
        bystander_answers += responses(&got).iter().filter(|s| **s == 200).count();
    }
    let bystander_ok = bystander_answers == table.len()
        && bystander_seen.lock().unwrap().heads.len() == table.len();
    drop(bystander_origin);
    Some(Run {
        results,
        _origins: origins,
        seen,
        bystander_ok,
    })
}

#[test]
fn hostile_requests_never_reach_a_server_ambiguously() {
    let table = cases();
    assert!(table.len() >= 60, "{} cases", table.len());
    let weir = run(
        |cfg, port| Some(Box::new(Weir::start(cfg, port)) as Box<dyn std::any::Any>),
        Duration::from_secs(5),
    )
    .expect("weir runs");
    let mut failures = Vec::new();
    for ((name, _, want, check), (answer, seen)) in table.iter().zip(&weir.results) {
        let (bytes, problems, heads) = (seen.bytes, &seen.problems, &seen.heads);
        let mut fail = |what: String| failures.push(format!("{name}: {what}"));
        if !problems.is_empty() {
            fail(format!(
                "the origin could not read what it got: {problems:?}"
            ));
        }
        match *want {
            Refused(status) => {
                if answer.statuses != [status] {
                    fail(format!("answered {:?}, want [{status}]", answer.statuses));
                }
                if !answer.closed {
                    fail("connection left open after a refusal".into());
                }
                if bytes != 0 {
                    fail(format!("{bytes} bytes reached the origin"));
                }
            }
            ThenRefused { n, status } => {
                let mut expect = vec![200; n];
                expect.push(status);
                if answer.statuses != expect || heads.len() != n || !answer.closed {
                    fail(format!(
                        "answered {:?} (closed: {}), {} forwarded; want {expect:?}, {n}, closed",
                        answer.statuses,
                        answer.closed,
                        heads.len()
                    ));
                }
            }
            Forwarded { n, close } => {
                if answer.statuses != vec![200; n] {
                    fail(format!("answered {:?}, want {n} x 200", answer.statuses));
                }
                if heads.len() != n {
                    fail(format!("the origin got {} requests, want {n}", heads.len()));
                }
                if close && !answer.closed {
                    fail("connection not closed".into());
                }
                if let (Some(check), Some(h)) = (check, heads.first()) {
                    if !check(h) {
                        fail(format!("forwarded head {:?}", String::from_utf8_lossy(h)));
                    }
                }
            }
        }
    }
    // Late arrivals: an origin that got anything after its case was done.
    for ((name, _, want, _), s) in table.iter().zip(&weir.seen) {
        if let Refused(_) = want {
            let s = s.lock().unwrap();
            if s.bytes != 0 {
                failures.push(format!("{name}: {} bytes reached the origin late", s.bytes));
            }
        }
    }
    if !weir.bystander_ok {
        failures.push("a well-behaved client beside them was not answered every time".into());
    }
    assert!(failures.is_empty(), "weir:\n{}", failures.join("\n"));

    // The same table through haproxy 2.6.
    // (haproxy keeps some connections open that weir closes: a shorter
    // wait, since only its statuses and its origins' records are compared.)
    let Some(hap) = run(
        |cfg, port| Haproxy::start(cfg, port).map(|h| Box::new(h) as Box<dyn std::any::Any>),
        Duration::from_secs(1),
    ) else {
        panic!("haproxy is not installed: tests/run installs it (weir's own table passed)");
    };
    let mut differ = Vec::new();
    let mut worse = Vec::new();
    for ((name, ..), (w, h)) in table.iter().zip(weir.results.iter().zip(&hap.results)) {
        let (wa, wn) = (&w.0.statuses, w.1.heads.len());
        let (ha, hn) = (&h.0.statuses, h.1.heads.len());
        if wa != ha || wn != hn {
            differ.push(format!(
                "{name}: weir {wa:?} ({wn} forwarded) / haproxy {ha:?} ({hn} forwarded)"
            ));
        }
        let haproxy_refused = hn == 0 && ha.first().is_some_and(|s| (400..500).contains(s));
        if haproxy_refused && w.1.bytes != 0 {
            worse.push(format!("{name}: weir forwarded what haproxy refuses"));
        }
    }
    eprintln!("weir and haproxy differ on:\n{}", differ.join("\n"));
    assert!(worse.is_empty(), "{}", worse.join("\n"));
}
