//! `option httplog` and `option httplog clf` lines from weir and from
//! Debian's haproxy 2.6, captured over UDP syslog for the same requests on
//! the same configuration, compared field by field. Only the fields that
//! cannot agree (client ports, dates, timer values) are masked; a timer
//! that is `-1` on one side must be `-1` on the other. Byte counts are
//! compared as they are: both count the size of haproxy's internal (HTX)
//! form of what was received.

use crate::common::http::{Client, Origin};
use crate::common::*;
use std::time::Duration;

/// Splits a log message into fields: `[...]`, `{...}` and `"..."` groups
/// are one field each, other fields end at a space.
fn fields(msg: &str) -> Vec<String> {
    let mut out = Vec::new();
    let b = msg.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b' ' {
            i += 1;
            continue;
        }
        let close = match b[i] {
            b'[' => Some(b']'),
            b'{' => Some(b'}'),
            b'"' => Some(b'"'),
            _ => None,
        };
        let end = match close {
            Some(c) => msg[i + 1..]
                .bytes()
                .position(|x| x == c)
                .map_or(b.len(), |p| i + 1 + p + 1),
            None => msg[i..].find(' ').map_or(b.len(), |p| i + p),
        };
        out.push(msg[i..end].to_string());
        i = end;
    }
    out
}

/// Masks a timer field (or a `/`-separated group of them): values of zero
/// or more become `N`, `-1` stays.
fn timers(f: &str) -> String {
    f.split('/')
        .map(|t| match t.parse::<i64>() {
            Ok(n) if n >= 0 => "N".to_string(),
            _ => t.to_string(),
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// The message part of a syslog line, its volatile fields masked.
fn normalized(line: &str, clf: bool) -> Vec<String> {
    let msg = line.split_once("]: ").map_or(line, |(_, m)| m).trim_end();
    let mut f = fields(msg);
    let mask = |f: &mut Vec<String>, i: usize, m: &dyn Fn(&str) -> String| {
        if let Some(v) = f.get_mut(i) {
            *v = m(v);
        }
    };
    let port = |v: &str| {
        v.rsplit_once(':')
            .map_or(v.to_string(), |(a, _)| a.to_string() + ":P")
    };
    if clf {
        mask(&mut f, 3, &|_| "[DATE]".into());
        mask(&mut f, 9, &|_| "P".into());
        mask(&mut f, 10, &|_| "MS".into());
        for i in 14..=18 {
            mask(&mut f, i, &timers);
        }
    } else {
        mask(&mut f, 0, &port);
        mask(&mut f, 1, &|_| "[DATE]".into());
        mask(&mut f, 4, &timers);
    }
    f
}

/// Extra lines: (global, frontend, sections after the others, where
/// `ORIGIN` is the origin's port).
type Extra = (&'static str, &'static str, &'static str);

/// The stats socket of the proxy listening on `port`.
fn sock(port: u16) -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("httplog-{port}.sock"))
}

fn cfg(port: u16, sys: u16, origin: u16, dead: u16, clf: bool, extra: Extra) -> String {
    format!(
        "global\n    nbthread 1\n    log 127.0.0.1:{sys} local0\n    stats socket {} level admin\n{}\n\
         defaults\n    mode http\n    log global\n    option httplog{}\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         frontend fe\n    bind 127.0.0.1:{port}\n    capture request header Host len 20\n    capture response header X-Server len 20\n\
         {}\n\
         \x20   http-request deny if {{ path /deny }}\n    use_backend dead if {{ path /dead }}\n    default_backend be\n\
         backend be\n    server s 127.0.0.1:{origin}\n\
         backend dead\n    retries 0\n    server d 127.0.0.1:{dead}\n{}",
        sock(port).display(),
        extra.0,
        if clf { " clf" } else { "" },
        extra.1,
        extra.2.replace("ORIGIN", &origin.to_string())
    )
}

/// The requests, each on its own connection, and a word its log line has.
const REQUESTS: &[(&str, &str)] = &[
    ("GET /ok?x=1 HTTP/1.1\r\nHost: a.example\r\n\r\n", "/ok"),
    (
        "POST /post HTTP/1.1\r\nHost: b\r\nContent-Length: 5\r\n\r\nhello",
        "/post",
    ),
    ("GET /deny HTTP/1.1\r\nHost: c\r\n\r\n", "/deny"),
    ("GET /dead HTTP/1.1\r\nHost: d\r\n\r\n", "/dead"),
    ("GET /x HTTP/1.1\r\nBad Header: x\r\n\r\n", "BADREQ"),
    ("HEAD /?s=10 HTTP/1.0\r\n\r\n", "HEAD"),
];

/// Sends each request to weir then to haproxy and compares their log
/// lines; returns the request lines the origin saw, in order. A request
/// with a NUL is sent in two parts: the rest once `gate` accepted the
/// proxy's connection.
fn compare(
    clf: bool,
    extra: Extra,
    requests: &[(&str, &str)],
    gate: Option<&Server>,
) -> Vec<String> {
    let origin = Origin::start("o");
    let dead = free_port();
    let (wsys, hsys) = (Syslog::start(), Syslog::start());
    let (wport, hport) = (free_port(), free_port());
    let Some(_h) = Haproxy::start(
        &cfg(hport, hsys.port(), origin.port(), dead, clf, extra),
        hport,
    ) else {
        panic!("haproxy is not installed: tests/run installs it");
    };
    let _w = Weir::start(
        &cfg(wport, wsys.port(), origin.port(), dead, clf, extra),
        wport,
    );
    let mut report = Vec::new();
    for (req, needle) in requests {
        let mut lines = Vec::new();
        for (port, sys) in [(wport, &wsys), (hport, &hsys)] {
            // The connection counts a line gives: each proxy has seen the
            // last client go before the next comes.
            wait_for("the last client gone", Duration::from_secs(5), || {
                show_stat(&sock(port))
                    .iter()
                    .any(|r| r["svname"] == "FRONTEND" && r["pxname"] == "fe" && r["scur"] == "0")
                    .then_some(())
            });
            let mut c = Client::connect(port);
            match (req.split_once('\0'), gate) {
                (Some((first, rest)), Some(g)) => {
                    let before = g.accepted.load(std::sync::atomic::Ordering::SeqCst);
                    c.send(first.as_bytes());
                    wait_for("the server's connection", Duration::from_secs(5), || {
                        (g.accepted.load(std::sync::atomic::Ordering::SeqCst) > before)
                            .then_some(())
                    });
                    c.send(rest.as_bytes());
                }
                _ => c.send(req.as_bytes()),
            }
            let method = if req.starts_with("HEAD") {
                "HEAD"
            } else {
                "GET"
            };
            // A cut response is an error here, and an expected one.
            let _ = crate::common::http::read_response(&mut c.r, method);
            drop(c);
            lines.push(sys.wait_line(needle, Duration::from_secs(5)));
        }
        let (w, h) = (normalized(&lines[0], clf), normalized(&lines[1], clf));
        if w != h {
            report.push(format!(
                "{needle}:\n  weir    {}\n  haproxy {}\n  {w:?}\n  {h:?}",
                lines[0], lines[1]
            ));
        }
    }
    assert!(report.is_empty(), "differences:\n{}", report.join("\n"));
    let seen = origin.seen.lock().unwrap();
    seen.iter()
        .map(|s| s.head.lines().next().unwrap_or("").to_string())
        .collect()
}

#[test]
fn httplog_lines_match_haproxy_field_by_field() {
    compare(false, ("", "", ""), REQUESTS, None);
}

#[test]
fn rule_captures_and_normalized_uris_log_as_haproxy() {
    let origin_saw = compare(
        false,
        (
            "    expose-experimental-directives",
            "    http-request capture req.hdr(user-agent) len 6\n\
             \x20   http-request normalize-uri path-merge-slashes\n\
             \x20   http-request normalize-uri path-strip-dotdot\n\
             \x20   http-request normalize-uri query-sort-by-name\n\
             \x20   http-request capture path len 20",
            "",
        ),
        &[
            (
                "GET /a//b/../c?z=1&a=2 HTTP/1.1\r\nUser-Agent: curl/8.1.2\r\n\r\n",
                "/a//b",
            ),
            ("GET /plain HTTP/1.1\r\n\r\n", "/plain"),
        ],
        None,
    );
    // Both proxies sent the server the same normalized request.
    assert_eq!(origin_saw[0], origin_saw[1]);
    assert_eq!(origin_saw[0], "GET /a/c?a=2&z=1 HTTP/1.1");
}

/// The `capture-req(<id>)` and `capture-res(<id>)` converters: a slot id
/// counts the slots in the order of their lines (here `Host`, `X-Server`
/// first), a value is
/// cut to its slot's length, a later write wins, an id without a slot
/// keeps nothing; the sample goes on unchanged.
#[test]
fn capture_converters_log_as_haproxy() {
    compare(
        false,
        (
            "",
            "    declare capture request len 4\n\
             \x20   declare capture response len 6\n\
             \x20   http-request set-header X-C %[req.hdr(host),capture-req(1)]\n\
             \x20   http-request set-header X-D %[str(zz),capture-req(9)]\n\
             \x20   http-request set-var(txn.h) str(overwritten),capture-req(0)\n\
             \x20   http-response set-header X-R %[str(response-value),capture-res(1)]\n\
             \x20   http-response set-header X-Q %[int(42),capture-res(0)]",
            "",
        ),
        &[(
            "GET /cap HTTP/1.1\r\nHost: hostname.example\r\n\r\n",
            "/cap",
        )],
        None,
    );
}

/// Capture slots are numbered in the order their lines come, whatever
/// their kind (header captures, `declare capture`, `capture … len`): `%hr`
/// and `%hs` list them so, `id` and `capture-req` name them so, a rule
/// whose sample fails leaves its slot as it was, and `capture.req.hdr`
/// reads what the rules wrote.
#[test]
fn capture_slots_keep_the_order_of_their_lines_as_haproxy() {
    compare(
        false,
        (
            "",
            "    declare capture request len 10\n\
             \x20   capture request header User-Agent len 5\n\
             \x20   http-request capture req.hdr(nonexistent) id 0\n\
             \x20   http-request capture str(rule-value-long) len 8\n\
             \x20   http-request capture str(declared-value) id 1\n\
             \x20   http-request set-var(txn.c) str(converted),capture-req(2)\n\
             \x20   http-request capture capture.req.hdr(1) len 12\n\
             \x20   http-request capture req.hdr(nonexistent) len 3\n\
             \x20   declare capture response len 6\n\
             \x20   capture response header Content-Type len 4\n\
             \x20   http-response capture res.hdr(nonexistent) id 0\n\
             \x20   http-response capture str(response-value) id 1",
            "",
        ),
        &[(
            "GET /slots HTTP/1.1\r\nHost: hostname.example\r\nUser-Agent: agent/1.0\r\n\r\n",
            "/slots",
        )],
        None,
    );
}

/// A backend's `capture … id` rules write the frontend's slots, cut to
/// the frontend's lengths; an id the frontend lacks keeps nothing.
#[test]
fn a_backends_captures_write_the_frontends_slots_as_haproxy() {
    compare(
        false,
        (
            "",
            "    declare capture request len 5\n\
             \x20   declare capture response len 6\n\
             \x20   use_backend capbe if { path_beg /bk }",
            "backend capbe\n\
             \x20   http-request capture str(from-backend) id 1\n\
             \x20   http-request capture str(to-host) id 0\n\
             \x20   http-request capture str(nothere) id 7\n\
             \x20   http-response capture str(be-response) id 0\n\
             \x20   http-response capture str(be-declared) id 1\n\
             \x20   http-response capture str(nothere) id 9\n\
             \x20   server s 127.0.0.1:ORIGIN\n",
        ),
        &[("GET /bk HTTP/1.1\r\nHost: hostname.example\r\n\r\n", "/bk")],
        None,
    );
}

#[test]
fn httplog_clf_lines_match_haproxy_field_by_field() {
    compare(true, ("", "", ""), REQUESTS, None);
}

#[test]
fn field_splitter_keeps_groups() {
    assert_eq!(
        fields(r#"a [b c] "d e" {f|g} "" h"#),
        ["a", "[b c]", "\"d e\"", "{f|g}", "\"\"", "h"]
    );
    assert_eq!(timers("0/-1/12/3/4"), "N/-1/N/N/N");
}

/// A server that reads a request head, then does `then` with the stream.
fn fault(then: fn(&mut std::net::TcpStream)) -> Server {
    Server::start(move |mut c| {
        if read_head(&mut c).is_some() {
            then(&mut c);
        }
    })
}

#[test]
fn error_paths_log_as_haproxy() {
    use std::io::{Read, Write};
    let reset = fault(|c| {
        let _ = socket2::SockRef::from(&*c).set_linger(Some(Duration::ZERO));
    });
    let silent = fault(|c| {
        let _ = c.read(&mut [0u8; 16]);
    });
    let garbage = fault(|c| {
        let _ = c.write_all(b"garbage\r\n\r\n");
    });
    let truncated = fault(|c| {
        let _ = c.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nabc");
    });
    let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
    let mut routes = String::new();
    let mut backends = String::new();
    for (name, srv) in [
        ("reset", &reset),
        ("silent", &silent),
        ("garbage", &garbage),
        ("truncated", &truncated),
    ] {
        routes.push_str(&format!(
            "    use_backend b_{name} if {{ path_beg /{name} }}\n"
        ));
        backends.push_str(&format!(
            "backend b_{name}\n    timeout server 300ms\n    server s 127.0.0.1:{}\n",
            srv.port()
        ));
    }
    compare(
        false,
        ("", leak(routes), leak(backends)),
        &[
            ("GET /reset HTTP/1.1\r\nHost: a\r\n\r\n", "/reset"),
            ("GET /silent HTTP/1.1\r\nHost: a\r\n\r\n", "/silent"),
            ("GET /garbage HTTP/1.1\r\nHost: a\r\n\r\n", "/garbage"),
            ("GET /truncated HTTP/1.1\r\nHost: a\r\n\r\n", "/truncated"),
            // A chunk-size line that is not one, after the head went on
            // to a server that waits for the body.
            (
                "POST /silent/chunked HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n\0ZZ\r\n\r\n",
                "/silent/chunked",
            ),
        ],
        Some(&silent),
    );
}

#[test]
fn rule_outcomes_log_as_haproxy() {
    // `reject` closes with the request logged (`PR`, no `TR`), `set-src`
    // changes the client the log names, `deny status N` with a custom
    // answer logs its status.
    let extra = (
        "",
        "    http-request reject if { path /reject }\n\
         \x20   http-request set-src hdr(x-src) if { hdr(x-src) -m found }\n\
         \x20   http-request deny status 401 content-type text/plain string no if { path /no }",
        "",
    );
    let reqs: &[(&str, &str)] = &[
        ("GET /reject HTTP/1.1\r\nHost: a\r\n\r\n", "/reject"),
        (
            "GET /src HTTP/1.1\r\nHost: a\r\nX-Src: 192.0.2.9\r\n\r\n",
            "192.0.2.9",
        ),
        ("GET /no HTTP/1.1\r\nHost: a\r\n\r\n", "/no"),
    ];
    compare(false, extra, reqs, None);
}

#[test]
fn a_connection_that_never_sends_logs_its_wait_as_haproxy() {
    // No byte of a request before `timeout http-request`: a 408 whose
    // whole wait is active time (`-1/-1/-1/-1/<Ta>`, no idle time).
    let extra = ("", "    timeout http-request 300ms", "");
    compare(false, extra, &[("", "408")], None);
    // The masked comparison above cannot see the timer: read weir's.
    let sys = Syslog::start();
    let port = free_port();
    let _w = Weir::start(
        &cfg(port, sys.port(), free_port(), free_port(), false, extra),
        port,
    );
    let mut c = Client::connect(port);
    assert_eq!(
        crate::common::http::read_response(&mut c.r, "GET")
            .unwrap()
            .status,
        408
    );
    // (" 408 ": the status field, not a process id with those digits.)
    let line = sys.wait_line(" 408 ", Duration::from_secs(5));
    let msg = line.split_once("]: ").map_or(line.as_str(), |(_, m)| m);
    let timers = fields(msg)[4].clone();
    let ta: i64 = timers.rsplit('/').next().unwrap().parse().unwrap();
    assert!(timers.starts_with("-1/-1/-1/-1/") && ta >= 250, "{line}");
}

#[test]
fn captured_cookies_log_as_haproxy() {
    for clf in [false, true] {
        compare(
            clf,
            ("", "    capture cookie JSESS len 12", ""),
            &[
                (
                    "GET /setcookie HTTP/1.1\r\nCookie: a=1; JSESSX=longvalue12345; JSESSY=2\r\n\r\n",
                    "/setcookie",
                ),
                ("GET /none HTTP/1.1\r\nCookie: other=1\r\n\r\n", "/none"),
            ],
            None,
        );
    }
}
