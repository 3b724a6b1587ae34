//! Stick tables, differential against haproxy 2.6: the same
//! configuration through both, the same clients, and `show table`'s text
//! compared (entry addresses and expiry times left out): what each
//! tracker counts (connections, sessions, requests, errors, failures,
//! general purpose counters and tags), the fetches and converters that
//! read them, rate limiting, connection limits per source, and the
//! runtime API's `show|clear|set table`.

use crate::common::*;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::time::Duration;

/// A server answering each request with the status its path names
/// (`/404` → 404), empty, keeping the connection.
fn status_server() -> Server {
    Server::start(|c| {
        let mut w = c.try_clone().unwrap();
        let mut r = BufReader::new(c);
        loop {
            let mut line = String::new();
            if r.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            loop {
                let mut h = String::new();
                if r.read_line(&mut h).unwrap_or(0) == 0 {
                    return;
                }
                if h == "\r\n" {
                    break;
                }
            }
            let path = line.split(' ').nth(1).unwrap_or("/");
            let code: u16 = path.trim_start_matches('/').parse().unwrap_or(200);
            let resp = format!("HTTP/1.1 {code} X\r\ncontent-length: 0\r\n\r\n");
            if w.write_all(resp.as_bytes()).is_err() {
                return;
            }
        }
    })
}

/// Requests on one keep-alive connection; each answer's status and
/// `x-r` header.
fn requests(port: u16, reqs: &[(&str, &str)]) -> Vec<String> {
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut r = BufReader::new(c.try_clone().unwrap());
    let mut out = Vec::new();
    for (path, user) in reqs {
        write!(
            c,
            "GET {path} HTTP/1.1\r\nHost: a\r\nx-user: {user}\r\n\r\n"
        )
        .unwrap();
        let resp = crate::common::http::read_response(&mut r, "GET").unwrap();
        let xr = resp.header("x-r").unwrap_or("-").to_string();
        out.push(format!("{} {xr}", resp.status));
        if resp.header("connection") == Some("close") {
            break;
        }
    }
    out
}

fn counters_cfg(sock: &Path, port: u16, srv: u16) -> String {
    format!(
        "global\n    stats socket {} level admin\n\
         defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         frontend fe\n    bind 127.0.0.1:{port}\n\
         \x20   stick-table type ip size 10 expire 1m store conn_cnt,conn_cur,conn_rate(10s),sess_cnt,sess_rate(10s),http_req_cnt,http_req_rate(10s),http_err_cnt,http_err_rate(10s),http_fail_cnt,http_fail_rate(10s),gpc0,gpc0_rate(10s),gpt0\n\
         \x20   tcp-request connection track-sc0 src\n\
         \x20   http-request track-sc1 req.hdr(x-user) table users\n\
         \x20   http-request sc-inc-gpc0(0) if {{ path /inc }}\n\
         \x20   http-request sc-inc-gpc(1,1) if {{ path /inc }}\n\
         \x20   http-request sc-set-gpt0(0) 7 if {{ path /tag }}\n\
         \x20   http-request sc-set-gpt(0,1) req.hdr_cnt(x-user) if {{ path /tag }}\n\
         \x20   http-request set-var(txn.u) req.hdr(x-user)\n\
         \x20   http-request deny if {{ path /deny }}\n\
         \x20   http-response set-header x-r \"%[sc_http_req_cnt(0)] %[sc0_get_gpc0] %[sc_get_gpc(1,1)] %[src_conn_cnt] %[src_http_err_cnt] %[sc1_http_req_cnt] %[sc_tracked(2)] %[sc1_tracked] %[table_cnt(users)] %[table_avl] %[var(txn.u),table_http_req_cnt(users)] %[var(txn.u),in_table(users)] %[str(nobody),in_table(users)] %[sc_trackers(1)] %[sc0_conn_cur] %[sc_get_gpt0(0)]\"\n\
         \x20   default_backend be\n\
         backend be\n    server s 127.0.0.1:{srv}\n\
         backend users\n    stick-table type string len 4 size 10 store http_req_cnt,http_err_cnt,http_fail_cnt,gpc(2),gpt(1),conn_cur\n",
        sock.display()
    )
}

const COUNTED: &[(&str, &str)] = &[
    ("/", "alice"),
    ("/404", "alice"),
    ("/inc", "bob"),
    ("/500", "bob"),
    ("/501", "alice"),
    ("/tag", "carolyn"),
    ("/", "bob"),
    ("/deny", "alice"),
];

#[test]
fn counters_fetches_and_show_table_as_haproxy() {
    let srv = status_server();
    let dir = tempdir("stick-counters");
    let (ws, hs) = (dir.join("w.sock"), dir.join("h.sock"));
    let (wp, hp) = (free_port(), free_port());
    let Some(_h) = Haproxy::start(&counters_cfg(&hs, hp, srv.port()), hp) else {
        panic!("haproxy is not installed: tests/run installs it");
    };
    let _w = Weir::start(&counters_cfg(&ws, wp, srv.port()), wp);
    let ours = [requests(wp, COUNTED), requests(wp, &[("/inc", "bob")])];
    let theirs = [requests(hp, COUNTED), requests(hp, &[("/inc", "bob")])];
    assert_eq!(ours, theirs, "weir's answers, then haproxy's");
    assert_eq!(ours[0][2], "200 3 1 1 1 1 1 0 1 2 9 1 1 0 1 1 0");
    // The clients have left once each proxy has seen them go.
    for sock in [&ws, &hs] {
        wait_for(
            "the tracked connections to end",
            Duration::from_secs(5),
            || {
                ask(sock, "show table fe\n")
                    .contains(" conn_cur=0 ")
                    .then_some(())
            },
        );
    }
    let mut seen = Vec::new();
    for cmd in [
        "show table fe\n",
        "show table users\n",
        "show table users data.http_req_cnt gt 1\n",
        "show table users key bob\n",
        "show table\n",
        "show table nope\n",
        "show table users data.bogus gt 1\n",
        "show table users data.gpc0 eq 1\n",
        "show table users data.http_req_cnt xx 1\n",
        "set table users key dave data.http_req_cnt 5 data.http_err_cnt -1\n",
        "set table users key erin data.gpc0 1\n",
        "set table fe key 10.0.0.1 data.conn_rate 4 data.gpt0 3\n",
        "show table users\n",
        "show table fe\n",
        "clear table users key dave\n",
        "clear table users data.http_req_cnt ge 3\n",
        "show table users\n",
        "clear table fe\n",
        "show table fe\n",
    ] {
        let (o, t) = (normalized(&ask(&ws, cmd)), normalized(&ask(&hs, cmd)));
        assert_eq!(o, t, "{cmd}: weir's, then haproxy's");
        seen.push(o);
    }
    assert!(seen[3].contains("key=bob use=0 exp=? conn_cur=0 http_req_cnt=4 http_err_cnt=0 http_fail_cnt=1 gpt0=0 gpc0=0 gpc1=2"), "{}", seen[3]);
    assert!(
        seen[0].contains("conn_cnt=2 conn_rate(10000)=2 conn_cur=0 sess_cnt=2"),
        "{}",
        seen[0]
    );
    assert!(seen[5].starts_with("No such table"));
    assert!(seen[12].contains("key=dave") && seen[12].contains("http_err_cnt=4294967295"));
    assert!(
        !seen[16].contains("key=dave") && !seen[16].contains("key=bob"),
        "{}",
        seen[16]
    );
}

fn limits_cfg(port: u16, srv: u16) -> String {
    format!(
        "defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         frontend fe\n    bind 127.0.0.1:{port}\n\
         \x20   stick-table type ip size 1k expire 1m store http_req_rate(10s),conn_cur\n\
         \x20   tcp-request connection track-sc0 src\n\
         \x20   tcp-request connection reject if {{ sc_conn_cur(0) gt 2 }}\n\
         \x20   http-request deny deny_status 429 if {{ sc_http_req_rate(0) gt 4 }}\n\
         \x20   default_backend be\n\
         backend be\n    server s 127.0.0.1:{srv}\n"
    )
}

/// Whether a new connection to `port` is served (a reject closes it
/// without an answer).
fn served(port: u16) -> bool {
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let _ = c.write_all(b"GET /200 HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
    let mut got = Vec::new();
    let _ = c.read_to_end(&mut got);
    !got.is_empty()
}

#[test]
fn rate_limits_and_connection_limits_per_source_as_haproxy() {
    let srv = status_server();
    let (wp, hp) = (free_port(), free_port());
    let Some(_h) = Haproxy::start(&limits_cfg(hp, srv.port()), hp) else {
        panic!("haproxy is not installed: tests/run installs it");
    };
    let _w = Weir::start(&limits_cfg(wp, srv.port()), wp);
    for port in [wp, hp] {
        // Two connections held: a third is refused, then served once one
        // of them closed.
        let a = TcpStream::connect(("127.0.0.1", port)).unwrap();
        let b = TcpStream::connect(("127.0.0.1", port)).unwrap();
        // (each is counted once its connection rules ran: a request
        // answered on each says so)
        for mut c in [&a, &b] {
            c.write_all(b"GET /204 HTTP/1.1\r\nHost: a\r\n\r\n")
                .unwrap();
            let mut buf = [0u8; 64];
            c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            assert!(c.read(&mut buf).unwrap() > 0);
        }
        let c = TcpStream::connect(("127.0.0.1", port)).unwrap();
        assert!(!served_on(c), "port {port}: a third connection is refused");
        drop(a);
        wait_for("a slot to free", Duration::from_secs(5), || {
            served(port).then_some(())
        });
        drop(b);
    }
    // Requests over the rate (4 done above on each: two 204, a refused
    // third not counted, one served): the fifth passes, the sixth is 429.
    let statuses = |port: u16| -> Vec<String> {
        requests(port, &[("/200", "x"), ("/200", "x"), ("/200", "x")])
            .into_iter()
            .map(|s| s.split(' ').next().unwrap_or("").to_string())
            .collect()
    };
    let (ours, theirs) = (statuses(wp), statuses(hp));
    assert_eq!(ours, theirs, "weir's statuses, then haproxy's");
    assert!(ours.contains(&"429".to_string()), "{ours:?}");
}

/// Whether the server answers a request on `c`.
fn served_on(mut c: TcpStream) -> bool {
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let _ = c.write_all(b"GET /200 HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
    let mut got = Vec::new();
    let _ = c.read_to_end(&mut got);
    !got.is_empty()
}

fn tcp_cfg(sock: &Path, port: u16, srv: u16) -> String {
    format!(
        "global\n    stats socket {} level admin\n\
         defaults\n    mode tcp\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         frontend fe\n    bind 127.0.0.1:{port}\n\
         \x20   tcp-request inspect-delay 1s\n\
         \x20   tcp-request content track-sc0 src table t\n\
         \x20   tcp-request content reject if {{ req.len gt 0 }} {{ sc_get_gpc0(0) gt 1 }}\n\
         \x20   tcp-request content sc-inc-gpc0(0)\n\
         \x20   default_backend be\n\
         backend be\n    server s 127.0.0.1:{srv}\n\
         backend t\n    stick-table type ip size 10 store conn_cnt,conn_cur,sess_cnt,gpc0,bytes_in_cnt,bytes_out_cnt\n",
        sock.display()
    )
}

#[test]
fn mode_tcp_tracking_as_haproxy() {
    let echo = Server::echo();
    let dir = tempdir("stick-tcp");
    let (ws, hs) = (dir.join("w.sock"), dir.join("h.sock"));
    let (wp, hp) = (free_port(), free_port());
    let Some(_h) = Haproxy::start(&tcp_cfg(&hs, hp, echo.port()), hp) else {
        panic!("haproxy is not installed: tests/run installs it");
    };
    let _w = Weir::start(&tcp_cfg(&ws, wp, echo.port()), wp);
    let run = |port: u16| -> Vec<usize> {
        (0..3)
            .map(|_| {
                let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
                c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
                let _ = c.write_all(b"hello stick tables");
                let _ = c.shutdown(std::net::Shutdown::Write);
                let mut got = Vec::new();
                let _ = c.read_to_end(&mut got);
                got.len()
            })
            .collect()
    };
    let (ours, theirs) = (run(wp), run(hp));
    assert_eq!(ours, theirs, "bytes echoed: weir's, then haproxy's");
    assert_eq!(ours, [18, 18, 0]);
    let table = |sock: &Path| {
        wait_for("the last session to end", Duration::from_secs(5), || {
            let t = normalized(&ask(sock, "show table t\n"));
            t.contains("conn_cur=0").then_some(t)
        })
    };
    assert_eq!(table(&ws), table(&hs), "weir's table, then haproxy's");
}

/// `show table`'s `used:` counts the entries it lists, also once an entry
/// expired and before the table's purge came by (haproxy's reg-test
/// stick-table/converteers_ref_cnt_never_dec accepts `used:0`, or
/// `used:1` with the entry).
#[test]
fn used_counts_the_entries_listed_as_they_expire() {
    let dir = tempdir("stick-expiry");
    let sock = dir.join("w.sock");
    let port = free_port();
    let cfg = format!(
        "global\n    stats socket {} level admin\n\
         defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         frontend fe\n    bind 127.0.0.1:{port}\n\
         \x20   stick-table type ip size 10 expire 50ms store http_req_cnt\n\
         \x20   http-request track-sc0 src\n\
         \x20   http-request return status 200\n",
        sock.display()
    );
    let _w = Weir::start(&cfg, port);
    assert_eq!(requests(port, &[("/", "a")]), ["200 -"]);
    let mut listed = Vec::new();
    wait_for("the entry to expire", Duration::from_secs(5), || {
        let t = ask(&sock, "show table fe\n");
        let lines = t.lines().filter(|l| l.contains(": key=")).count();
        let used = t
            .split("used:")
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .and_then(|n| n.parse::<usize>().ok());
        assert_eq!(used, Some(lines), "{t}");
        listed.push(lines);
        (lines == 0).then_some(())
    });
    assert_eq!(listed.first(), Some(&1), "the entry was listed once");
}
