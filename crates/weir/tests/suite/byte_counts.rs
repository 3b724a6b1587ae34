//! `%U` and `%B` beside haproxy 2.6's, exactly: both count the size of
//! haproxy's internal form of what was received (a head without `: ` and
//! line ends, a `Connection` field without `close` and `keep-alive`, a
//! chunked body's data and trailers without framing), before any rule
//! rewrote it, and weir's own answers as made. Requests over HTTP/1.0,
//! 1.1 and HTTP/2, bodies of both framings, rewrites on both sides, local
//! answers, a 503, HEAD, an interim `100 Continue`, a body that ends
//! with the connection, and responses replaced by `http-response deny`,
//! `return` and `redirect` (the server's response counts, then the answer;
//! and the termination states, `PH` and `LH`).

use crate::common::http::Client;
use crate::common::*;
use std::io::{BufRead, BufReader, Read, Write};
use std::time::Duration;

/// The canned answer for a request path.
fn answer(path: &str) -> &'static [u8] {
    match path {
        "/ch" => b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
        "/cht" => b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n3\r\nabc\r\n0\r\nX-T: 1\r\n\r\n",
        "/e" => b"HTTP/1.1 204 No Content\r\n\r\n",
        "/rc" => b"HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\nContent-Length: 5\r\n\r\nhello",
        "/rcf" => b"HTTP/1.1 200 OK\r\nConnection: foo, close\r\nContent-Length: 5\r\n\r\nhello",
        "/eof" => b"HTTP/1.1 200 OK\r\nX-Eof: 1\r\n\r\nhello, until the end",
        "/r100" => b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
        _ => b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-A: b\r\n\r\nhello",
    }
}

/// Reads one request (its body by length or chunks) and answers it; the
/// connection closes after each answer.
fn origin() -> Server {
    Server::start(|c| {
        let mut w = c.try_clone().unwrap();
        let mut r = BufReader::new(c);
        let mut head = Vec::new();
        let mut line = String::new();
        while r.read_line(&mut line).unwrap_or(0) > 2 {
            head.push(line.trim_end().to_ascii_lowercase());
            line.clear();
        }
        let path = head
            .first()
            .and_then(|l| l.split(' ').nth(1))
            .map(|p| p.split('?').next().unwrap_or("").to_string())
            .unwrap_or_default();
        let length = head
            .iter()
            .find_map(|l| l.strip_prefix("content-length:"))
            .map(|n| n.trim().parse::<usize>().unwrap_or(0));
        if let Some(n) = length {
            let _ = r.read_exact(&mut vec![0; n]);
        } else if head.iter().any(|l| l.starts_with("transfer-encoding:")) {
            // Up to the empty line after the last chunk and its trailers.
            let mut last = false;
            loop {
                line.clear();
                if r.read_line(&mut line).unwrap_or(0) == 0 {
                    return;
                }
                if last && line == "\r\n" {
                    break;
                }
                last |= line.trim_end() == "0";
            }
        }
        let _ = w.write_all(answer(&path));
    })
}

fn cfg(port: u16, h2: u16, sys: u16, origin: u16) -> String {
    format!(
        "global\n    log 127.0.0.1:{sys} local0\n\
         defaults\n    mode http\n    log global\n    log-format \"%{{+Q}}r U=%U B=%B %ST %ts\"\n\
         \x20   timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         frontend fe\n    bind 127.0.0.1:{port}\n    bind 127.0.0.1:{h2} proto h2\n\
         \x20   http-request set-var(txn.p) path\n\
         \x20   http-request deny if {{ path /deny }}\n\
         \x20   http-request redirect location /x if {{ path /redir }}\n\
         \x20   http-request return status 200 content-type text/plain string hello if {{ path /ret }}\n\
         \x20   http-request set-header X-Req abcdef if {{ path /addreq }}\n\
         \x20   http-response set-header X-Added abc if {{ var(txn.p) -m str /addres }}\n\
         \x20   http-response deny if {{ var(txn.p) -m str /rdeny }}\n\
         \x20   http-response return status 201 content-type text/plain string ab if {{ var(txn.p) -m str /rret }}\n\
         \x20   http-response redirect location /zz if {{ var(txn.p) -m str /rredir }}\n\
         \x20   use_backend none if {{ path /none }}\n    default_backend be\n\
         backend be\n    server s1 127.0.0.1:{origin}\n\
         backend none\n"
    )
}

/// Each request on its own connection, and a word of its log line.
const REQUESTS: &[(&str, &str)] = &[
    ("GET /cl HTTP/1.1\r\nHost: a\r\n\r\n", "\"GET /cl "),
    (
        "GET /c2 HTTP/1.1\r\nHost: a\r\nConnection: foo, keep-alive\r\n\r\n",
        "/c2",
    ),
    (
        "GET /c3 HTTP/1.1\r\nHost:    a   \r\nX-Long:  v  v \r\nProxy-Connection: close\r\nX-Empty:\r\n\r\n",
        "/c3",
    ),
    ("GET /c4 HTTP/1.0\r\n\r\n", "/c4"),
    ("GET http://a/c5 HTTP/1.1\r\nHost: a\r\n\r\n", "/c5"),
    ("GET /ch HTTP/1.1\r\nHost: a\r\n\r\n", "/ch "),
    ("GET /cht HTTP/1.1\r\nHost: a\r\n\r\n", "/cht"),
    ("GET /e HTTP/1.1\r\nHost: a\r\n\r\n", "/e "),
    ("GET /rc HTTP/1.1\r\nHost: a\r\n\r\n", "/rc "),
    ("GET /rcf HTTP/1.1\r\nHost: a\r\n\r\n", "/rcf"),
    ("GET /eof HTTP/1.1\r\nHost: a\r\n\r\n", "/eof"),
    ("HEAD /head HTTP/1.1\r\nHost: a\r\n\r\n", "/head"),
    ("GET /r100 HTTP/1.1\r\nHost: a\r\n\r\n", "/r100"),
    (
        "POST /p1 HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc",
        "/p1",
    ),
    (
        "POST /p2 HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n",
        "/p2",
    ),
    (
        "POST /p3 HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nX-T: y\r\n\r\n",
        "/p3",
    ),
    ("GET /deny HTTP/1.1\r\nHost: a\r\n\r\n", "/deny"),
    ("GET /redir HTTP/1.1\r\nHost: a\r\n\r\n", "/redir"),
    ("GET /ret HTTP/1.1\r\nHost: a\r\n\r\n", "/ret"),
    ("GET /addreq HTTP/1.1\r\nHost: a\r\n\r\n", "/addreq"),
    ("GET /addres HTTP/1.1\r\nHost: a\r\n\r\n", "/addres"),
    ("GET /none HTTP/1.1\r\nHost: a\r\n\r\n", "/none"),
    ("GET /rdeny HTTP/1.1\r\nHost: a\r\n\r\n", "/rdeny"),
    ("GET /rret HTTP/1.1\r\nHost: a\r\n\r\n", "/rret"),
    ("GET /rredir HTTP/1.1\r\nHost: a\r\n\r\n", "/rredir"),
];

/// The ` U=… B=… status termination` part of a line.
fn counts(line: &str) -> String {
    line.rsplit_once("\" ")
        .map_or(line, |(_, c)| c)
        .trim()
        .to_string()
}

fn send(port: u16, req: &str) {
    let mut c = Client::connect(port);
    c.send(req.as_bytes());
    let method = if req.starts_with("HEAD") {
        "HEAD"
    } else {
        "GET"
    };
    let _ = crate::common::http::read_response(&mut c.r, method);
}

/// An HTTP/2 request through curl (prior knowledge, clear text), with a
/// body when `data` is given.
fn h2_request(port: u16, path: &str, data: Option<&str>) {
    let url = format!("http://127.0.0.1:{port}{path}");
    let mut args = vec![
        "-sS",
        "--http2-prior-knowledge",
        "-o",
        "/dev/null",
        "-H",
        "Cookie: a=1",
        "-H",
        "Cookie: b=2",
    ];
    if let Some(d) = data {
        args.extend_from_slice(&["--data-binary", d]);
    }
    args.push(&url);
    let out = std::process::Command::new("curl")
        .args(&args)
        .output()
        .expect("curl is needed (tests/run installs it)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn byte_counts_are_haproxys() {
    let o = origin();
    let (wsys, hsys) = (Syslog::start(), Syslog::start());
    let (wp, wh2, hp, hh2) = (free_port(), free_port(), free_port(), free_port());
    let oport = o.addr.port();
    let Some(_h) = Haproxy::start(&cfg(hp, hh2, hsys.port(), oport), hp) else {
        panic!("haproxy is not installed: tests/run installs it");
    };
    let _w = Weir::start(&cfg(wp, wh2, wsys.port(), oport), wp);
    let mut differ = Vec::new();
    let mut compare = |what: &str, w: String, h: String| {
        let (cw, ch) = (counts(&w), counts(&h));
        if cw != ch {
            differ.push(format!("{what}: weir {cw}, haproxy {ch}\n  {w}\n  {h}"));
        }
    };
    for (req, needle) in REQUESTS {
        send(wp, req);
        let w = wsys.wait_line(needle, Duration::from_secs(5));
        send(hp, req);
        let h = hsys.wait_line(needle, Duration::from_secs(5));
        compare(req.lines().next().unwrap_or(""), w, h);
    }
    for (path, data) in [("/h2get", None), ("/h2post?x=1", Some("abc"))] {
        let needle = path.split('?').next().unwrap_or(path);
        h2_request(wh2, path, data);
        let w = wsys.wait_line(needle, Duration::from_secs(5));
        h2_request(hh2, path, data);
        let h = hsys.wait_line(needle, Duration::from_secs(5));
        compare(path, w, h);
    }
    assert!(
        differ.is_empty(),
        "byte counts differ:\n{}",
        differ.join("\n")
    );
}
