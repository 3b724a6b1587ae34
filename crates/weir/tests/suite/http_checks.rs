//! `http-check` rules beside haproxy 2.6: each kind of expect rule's
//! outcome in the log, the requests `http-check send` writes (`send-state`,
//! log-format parts, variables), `disable-on-404`'s NOLB state, and the
//! rule-order errors of a configuration.

use crate::common::http::Client;
use crate::common::*;
use std::io::{Read, Write};
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Answers every check by its path: `/503` and `/404` with their status,
/// anything else 200 with headers and a body to match; `/rq…` requests
/// are recorded whole.
fn check_target(seen: Arc<Mutex<Vec<String>>>) -> Server {
    Server::start(move |mut c| {
        let mut req = Vec::new();
        let mut b = [0u8; 4096];
        // The head, then a body as long as its length says.
        while let Ok(n) = c.read(&mut b) {
            if n == 0 {
                break;
            }
            req.extend_from_slice(&b[..n]);
            let text = String::from_utf8_lossy(&req).into_owned();
            if let Some(end) = text.find("\r\n\r\n") {
                let len = text[..end]
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length: "))
                    .and_then(|v| v.parse::<usize>().ok())
                    .unwrap_or(0);
                if req.len() >= end + 4 + len {
                    break;
                }
            }
        }
        let text = String::from_utf8_lossy(&req).into_owned();
        let path = text.split(' ').nth(1).unwrap_or("/").to_string();
        if path.starts_with("/rq") {
            seen.lock().unwrap().push(text.clone());
        }
        let (code, reason) = match path.as_str() {
            p if p.contains("503") => (503, "Service Unavailable"),
            p if p.contains("404") => (404, "Not Found"),
            _ => (200, "OK"),
        };
        let body = "hello world state: ready";
        let _ = c.write_all(
            format!(
                "HTTP/1.1 {code} {reason}\r\nX-Test: a, b\r\nX-Name: x-test\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            )
            .as_bytes(),
        );
    })
}

/// The backends of the outcome test: what each adds to `option httpchk`.
const CASES: &[(&str, &str)] = &[
    ("GET /503", "http-check expect status 200"),
    ("GET /", "http-check expect status 200"),
    ("GET /", "http-check expect string xyz"),
    ("GET /", "http-check expect rstring ^nope"),
    ("GET /", "http-check expect hdr name x-none"),
    ("GET /", "http-check expect hdr name x-test value -m str c"),
    ("GET /", "http-check expect ! string hello"),
    ("GET /404", "http-check disable-on-404"),
    ("GET /503", ""),
    ("GET /", "http-check expect rstatus ^4"),
    ("GET /", "http-check expect fhdr name x-test value -m str a"),
    (
        "GET /",
        "http-check set-var(check.x) str(zzz)\n  http-check expect string-lf \"%[var(check.x)]\"",
    ),
    (
        "GET /",
        "http-check comment \"my comment\"\n  http-check expect status 201",
    ),
    (
        "GET /503",
        "http-check expect status 200 on-error \"bad %[res.hdr(x-test)] %[status]\" status-code \"int(42)\"",
    ),
    (
        "GET /",
        "http-check send hdr x-a b\n  http-check expect status 200 on-success \"yay %[status]\"",
    ),
    ("GET /", "http-check expect ! hdr name x-test"),
    ("GET /", "http-check expect status 200 ok-status L7OKC"),
    (
        "GET /404",
        "http-check expect status 200\n  http-check disable-on-404",
    ),
    (
        "",
        "http-check set-var(check.h) res.hdr(x-name)\n  http-check send uri /\n  http-check expect status 200\n  http-check set-var(check.h) res.hdr(x-name)\n  http-check expect hdr name-lf \"%[var(check.h)]\" value -m beg a",
    ),
    ("GET /", "http-check expect string hello"),
];

/// The log lines of a run: each check's outcome and the state lines, with
/// dates, process ids and durations left out.
fn outcome_lines(start: &dyn Fn(&str, u16) -> Box<dyn std::any::Any>, target: u16) -> Vec<String> {
    let log = Syslog::start();
    let port = free_port();
    let mut cfg = format!(
        "global\n  log 127.0.0.1:{} local0\n  node n1\ndefaults\n  mode http\n  timeout connect 1s\n  timeout client 5s\n  timeout server 5s\n  timeout check 2s\n  option log-health-checks\n  log global\n\
         listen dummy\n  bind 127.0.0.1:{port}\n  server x 127.0.0.1:{target}\n",
        log.port()
    );
    for (i, (opt, rules)) in CASES.iter().enumerate() {
        cfg.push_str(&format!(
            "backend b{i}\n  option httpchk {opt}\n  {rules}\n  server s 127.0.0.1:{target} check inter 300ms rise 1 fall 1\n"
        ));
    }
    let _p = start(&cfg, port);
    // Each backend's first check, then the state line a failure or a
    // conditional pass brings.
    for i in 0..CASES.len() {
        let line = log.wait_line(&format!("server b{i}/s "), Duration::from_secs(10));
        let follow = match () {
            _ if line.contains(" failed,") => "is DOWN",
            _ if line.contains("conditionally") => "is stopping",
            _ => continue,
        };
        log.wait_line(&format!("Server b{i}/s {follow}"), Duration::from_secs(10));
    }
    let lines = log.lines.lock().unwrap().clone();
    let mut out: Vec<String> = lines
        .iter()
        .filter(|l| l.contains("/s ") && !l.contains("dummy"))
        .map(|l| {
            let text = l.split_once("]: ").map_or(l.as_str(), |(_, t)| t);
            match text.split_once(", check duration: ") {
                Some((a, b)) => format!("{a}{}", b.split_once(',').map_or("", |(_, r)| r)),
                None => text.to_string(),
            }
        })
        .collect();
    // (One line per backend and kind: later checks repeat the first.)
    out.sort();
    out.dedup();
    out
}

/// Every kind of `http-check expect` rule, `disable-on-404`, comments,
/// `on-success`/`on-error` log-format messages, `status-code`, variables
/// set from the response, and `ok-status`: the same log lines as haproxy's.
#[test]
fn http_check_outcomes_as_haproxy() {
    Haproxy::bin().expect("haproxy is not installed: tests/run installs it");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let target = check_target(seen);
    let theirs = outcome_lines(
        &|cfg, port| Box::new(Haproxy::start(cfg, port).unwrap()),
        target.port(),
    );
    let mine = outcome_lines(&|cfg, port| Box::new(Weir::start(cfg, port)), target.port());
    assert_eq!(mine, theirs);
    for want in [
        "info: \"HTTP content check did not match\"",
        "info: \"HTTP check matched unwanted content\"",
        "conditionally succeeded",
        "code: 42, info: \"bad b 503\"",
        "info: \"yay 200\"",
        "info: \"OK comment: my comment\"",
    ] {
        assert!(
            theirs.iter().any(|l| l.contains(want)),
            "{want}: {theirs:#?}"
        );
    }
}

/// The requests of `http-check send` rules: defaults, `send-state`,
/// `uri-lf`, `body-lf`, `hdr` values with samples, the length and
/// connection headers, several connections in one check; byte for byte
/// what haproxy writes.
#[test]
fn http_check_requests_as_haproxy() {
    Haproxy::bin().expect("haproxy is not installed: tests/run installs it");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let target = check_target(seen.clone());
    let t = target.port();
    let run = |start: Start<'_>| -> Vec<String> {
        seen.lock().unwrap().clear();
        let port = free_port();
        let cfg = format!(
            "global\n  node n1\ndefaults\n  mode http\n  timeout connect 1s\n  timeout client 5s\n  timeout server 5s\n\
             listen dummy\n  bind 127.0.0.1:{port}\n  server x 127.0.0.1:{t}\n\
             backend c1\n  option httpchk GET /rq1?x\n  server s 127.0.0.1:{t} check inter 5s\n\
             backend c2\n  option httpchk\n  http-check send-state\n  http-check send meth GET uri /rq2 ver HTTP/1.1 hdr x-a b hdr Host foo body xyz\n  server s 127.0.0.1:{t} check inter 5s rise 3 fall 2 weight 7\n  server s2 127.0.0.1:{t} weight 3\n\
             backend c3\n  option httpchk\n  http-check set-var(check.p) str(/rq3)\n  http-check send meth POST uri-lf \"%[var(check.p)]-%[srv_id]\" hdr host \"h-%[srv_name]\" body-lf \"b=%[be_name]\" ver HTTP/1.1\n  server s 127.0.0.1:{t} check inter 5s\n\
             backend c4\n  option httpchk GET /rq4 HTTP/1.1\\r\\nHost:\\ www\n  server s 127.0.0.1:{t} check inter 5s\n\
             backend c5\n  option httpchk\n  http-check connect\n  http-check send uri /rq5a hdr Connection keep-alive hdr Content-Length 99 body abc\n  http-check expect status 200\n  http-check connect port {t}\n  http-check unset-var(check.none)\n  http-check send meth HEAD uri /rq5b ver HTTP/1.1\n  server s 127.0.0.1:{t} check inter 5s\n"
        );
        let _p = start(&cfg, port);
        wait_for("every check request", Duration::from_secs(10), || {
            let s = seen.lock().unwrap();
            (s.len() >= 6).then_some(())
        });
        let mut got = seen.lock().unwrap().clone();
        got.sort();
        got
    };
    let theirs = beside_haproxy(run);
    assert!(
        theirs
            .iter()
            .any(|r| r.contains("x-haproxy-server-state: UP 1/2; address=127.0.0.1;")),
        "{theirs:#?}"
    );
}

/// `http-check disable-on-404`: a 404 takes a running server out of
/// balancing (NOLB: "is stopping", `show stat` says NOLB, requests go to
/// the other server), a 200 puts it back; the same lines as haproxy's.
#[test]
fn disable_on_404_is_nolb_as_haproxy() {
    Haproxy::bin().expect("haproxy is not installed: tests/run installs it");
    let status = Arc::new(AtomicU16::new(200));
    let st = status.clone();
    let a = Server::start(move |mut c| {
        let mut b = [0u8; 2048];
        let n = c.read(&mut b).unwrap_or(0);
        let code = match b[..n].starts_with(b"OPTIONS") {
            true => st.load(Ordering::SeqCst),
            false => 200,
        };
        let _ = c.write_all(format!("HTTP/1.1 {code} X\r\nContent-Length: 1\r\n\r\na").as_bytes());
    });
    let b = Server::start(|mut c| {
        let mut buf = [0u8; 2048];
        let _ = c.read(&mut buf);
        let _ = c.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nb");
    });
    let run = |start: Start<'_>| -> Vec<String> {
        status.store(200, Ordering::SeqCst);
        let log = Syslog::start();
        let port = free_port();
        let sock = tempdir("nolb").join(format!("s{port}.sock"));
        let cfg = format!(
            "global\n  log 127.0.0.1:{} local0\n  stats socket {}\ndefaults\n  mode http\n  timeout connect 1s\n  timeout client 5s\n  timeout server 5s\n  option log-health-checks\n  log global\n\
             listen px\n  bind 127.0.0.1:{port}\n  balance roundrobin\n  option httpchk\n  http-check disable-on-404\n  server a 127.0.0.1:{} check inter 100ms rise 2 fall 2\n  server b 127.0.0.1:{} check inter 100ms rise 2 fall 2\n",
            log.port(),
            sock.display(),
            a.port(),
            b.port()
        );
        let _p = start(&cfg, port);
        let status_of = |name: &str| {
            show_stat(&sock)
                .into_iter()
                .find(|r| r["svname"] == name)
                .map(|r| r["status"].clone())
                .unwrap_or_default()
        };
        wait_for("a up", Duration::from_secs(5), || {
            (status_of("a") == "UP").then_some(())
        });
        status.store(404, Ordering::SeqCst);
        log.wait_line("px/a is stopping", Duration::from_secs(5));
        assert_eq!(status_of("a"), "NOLB");
        let bodies: Vec<String> = (0..6)
            .map(|_| {
                let mut c = Client::connect(port);
                c.get("/").text()
            })
            .collect();
        assert!(bodies.iter().all(|b| b == "b"), "{bodies:?}");
        status.store(200, Ordering::SeqCst);
        log.wait_line("px/a is UP", Duration::from_secs(5));
        assert_eq!(status_of("a"), "UP");
        let lines = log.lines.lock().unwrap().clone();
        lines
            .iter()
            .filter(|l| l.contains("px/a"))
            .map(|l| {
                let text = l.split_once("]: ").map_or(l.as_str(), |(_, t)| t);
                match text.split_once(", check duration: ") {
                    Some((x, y)) => format!("{x}{}", y.split_once(',').map_or("", |(_, r)| r)),
                    None => text.to_string(),
                }
            })
            .collect()
    };
    beside_haproxy(run);
}

/// The order haproxy requires of `http-check` rules, refused at the same
/// line with haproxy's words.
#[test]
fn http_check_rule_order_errors_as_haproxy() {
    let bin = Haproxy::bin().expect("haproxy is not installed: tests/run installs it");
    for (rules, words) in [
        (
            "http-check connect\n  http-check send\n  http-check send",
            "(missing connect rule)",
        ),
        (
            "http-check connect\n  http-check expect status 200",
            "(missing send rule)",
        ),
        (
            "http-check connect\n  http-check send\n  http-check connect",
            "(missing expect rule)",
        ),
        (
            "http-check send\n  http-check connect",
            "first step MUST also be a 'connect'",
        ),
        (
            "http-check expect hdr name-lf -m reg x",
            "log-format string is not supported with a regex matching method",
        ),
    ] {
        let cfg = format!(
            "defaults\n  mode http\n  timeout connect 1s\n  timeout client 1s\n  timeout server 1s\nbackend b\n  option httpchk\n  {rules}\n  server s 127.0.0.1:1 check\n"
        );
        let dir = tempdir("hc-order");
        let path = dir.join("h.cfg");
        std::fs::write(&path, &cfg).unwrap();
        let h = std::process::Command::new(bin)
            .args(["-c", "-f", path.to_str().unwrap()])
            .output()
            .unwrap();
        let theirs = String::from_utf8_lossy(&h.stderr).into_owned();
        let line = theirs
            .lines()
            .find(|l| l.contains(words))
            .and_then(|l| {
                l.split("h.cfg:")
                    .nth(1)?
                    .split(']')
                    .next()
                    .map(str::to_string)
            })
            .unwrap_or_else(|| panic!("haproxy: {theirs}"));
        let (code, out, err) = check_cfg(&cfg);
        let mine = format!("{out}{err}");
        assert_ne!(code, 0, "{mine}");
        assert!(
            mine.lines()
                .any(|l| l.contains(&format!(":{line}]")) && l.contains(words)),
            "{rules}: haproxy at {line}: {theirs}\nweir: {mine}"
        );
    }
}
