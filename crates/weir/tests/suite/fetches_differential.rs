//! Header and URL fetches (manual §7.3.6), differential against haproxy
//! 2.6: the request's header block and names, line counts, the
//! response's counterparts of the request header fetches (`res.hdr_cnt`,
//! `res.hdr_val`, `res.hdr_ip`, `res.cook*` and the `shdr*`/`scook*`
//! aliases), and `baseq`, `base32`, `url32`, `url_ip`, `url_port`,
//! `urlp_val`; and the live figures of proxies and servers (`queue`,
//! `be_conn_free`, `connslots`, `srv_*`, rates, `stopping`, `thread`,
//! `dst_conn`). Each proxy relays to a frontend of its own that answers
//! with the response headers; the fetches land in response headers that
//! are compared one by one.

use crate::common::*;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// Fetches on the request, kept in variables for the response.
const REQ: &[&str] = &[
    "req.hdrs,base64",
    "req.hdr_names",
    "req.hdr_names(;)",
    "req.fhdr_cnt",
    "req.fhdr_cnt(x-a)",
    "baseq",
    "base32",
    "url32",
    "url_ip",
    "url_port",
    "urlp_val(n)",
    "urlp_val(s)",
    "req.len",
    "req.hdr(x-other),set-var(txn.cv),upper",
    "req.hdr(x-none),set-var(txn.cv2,ifnotempty),upper",
    "so_id",
    "fe_defbe",
    "src_is_local",
    "dst_is_local",
    "req.body_size",
];

/// Fetches on the response.
const RES: &[&str] = &[
    "res.hdr_cnt(x-list)",
    "shdr_cnt(x-list)",
    "res.fhdr_cnt(x-list)",
    "res.hdr_val(x-n)",
    "shdr_val(x-n)",
    "res.hdr_ip(x-ip)",
    "res.hdr_ip(x-ip,1)",
    "shdr_ip(x-ip,-2)",
    "res.cook(b)",
    "res.cook",
    "scook(zz)",
    "res.cook_cnt",
    "res.cook_cnt(a)",
    "scook_cnt(b)",
    "res.cook_val(b)",
    "scook_val(a)",
    "res.ver",
    "resp_ver",
    "capture.res.ver",
    "var(txn.cv)",
    "var(txn.cv2)",
    "bc_http_major",
    "bc_src",
    "bc_dst",
];

fn cfg(port: u16, inner: u16) -> String {
    let mut c = format!(
        "defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         frontend fe\n    bind 127.0.0.1:{port} id 7\n    default_backend be\n"
    );
    for (i, f) in REQ.iter().enumerate() {
        c.push_str(&format!("    http-request set-var(txn.q{i}) {f}\n"));
        c.push_str(&format!(
            "    http-response set-header x-q{i:02} \"[%[var(txn.q{i})]]\"\n"
        ));
    }
    for (i, f) in RES.iter().enumerate() {
        c.push_str(&format!(
            "    http-response set-header x-s{i:02} \"[%[{f}]]\"\n"
        ));
    }
    c.push_str(&format!(
        "backend be\n    server s 127.0.0.1:{inner}\n\
         frontend inner\n    bind 127.0.0.1:{inner}\n\
         \x20   http-request return status 200 hdr set-cookie \"a=1; Path=/\" hdr set-cookie \"b=22; HttpOnly\" hdr x-list \"x, y\" hdr x-list z hdr x-n 7 hdr x-ip \"10.0.0.1, 10.0.0.2\"\n"
    ));
    c
}

/// The `x-q`/`x-s` headers of the answer to one request, sorted.
fn answers(port: u16) -> Vec<String> {
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    c.write_all(
        b"GET http://192.0.2.9:8081/p/a?n=42&s=x HTTP/1.1\r\nHost: 192.0.2.9:8081\r\nX-A: 1\r\nx-a: 2\r\nX-Other: z\r\nConnection: close\r\n\r\n",
    )
    .unwrap();
    let mut got = Vec::new();
    let _ = c.read_to_end(&mut got);
    let mut out: Vec<String> = String::from_utf8_lossy(&got)
        .lines()
        .filter(|l| l.starts_with("x-q") || l.starts_with("x-s"))
        .map(str::to_string)
        .collect();
    out.sort();
    out
}

#[test]
fn header_and_url_fetches_as_haproxy() {
    let (wp, wi, hp, hi) = (free_port(), free_port(), free_port(), free_port());
    let Some(_h) = Haproxy::start(&cfg(hp, hi), hp) else {
        panic!("haproxy is not installed: tests/run installs it");
    };
    let _w = Weir::start(&cfg(wp, wi), wp);
    let (ours, theirs) = (answers(wp), answers(hp));
    assert_eq!(ours.len(), REQ.len() + RES.len(), "{ours:?}");
    let diffs: Vec<String> = ours
        .iter()
        .zip(&theirs)
        .filter(|(a, b)| a != b)
        .map(|(a, b)| format!("weir {a} / haproxy {b}"))
        .collect();
    assert!(diffs.is_empty(), "{diffs:#?}");
    // What they found (so that both finding nothing cannot pass).
    for want in [
        "x-q01: [host,x-a,x-a,x-other]",
        "x-q04: [2]",
        "x-q05: [192.0.2.9:8081/p/a?n=42&s=x]",
        "x-q10: [42]",
        "x-q13: [Z]",
        "x-q15: [7]",
        "x-s21: [1]",
        "x-s22: [127.0.0.1]",
        "x-s23: [127.0.0.1]",
        "x-q16: [be]",
        "x-q17: [1]",
        "x-s19: [z]",
        "x-s00: [3]",
        "x-s05: [10.0.0.2]",
        "x-s08: [22]",
    ] {
        assert!(ours.iter().any(|l| l == want), "{want} in {ours:#?}");
    }
}

/// Live figures of proxies and servers no request goes to.
const LIVE: &[&str] = &[
    "queue(b1)",
    "avg_queue(b1)",
    "be_conn_free(b1)",
    "be_conn_free(b2)",
    "connslots(b1)",
    "connslots(b2)",
    "srv_conn(b1/s1)",
    "srv_conn_free(b1/s1)",
    "srv_conn_free(b1/s2)",
    "srv_is_up(b1/s1)",
    "srv_is_up(b1/s3)",
    "srv_queue(b1/s1)",
    "srv_weight(b1/s2)",
    "srv_iweight(b1/s1)",
    "srv_uweight(b1/s1)",
    "be_sess_rate(b1)",
    "srv_sess_rate(b1/s1)",
    "stopping",
    "thread",
    "proc",
    "dst_conn",
    "fc_http_major",
    "hostname",
    "rand(1)",
];

fn live_cfg(port: u16) -> String {
    let mut c = format!(
        "global\n    nbthread 1\n\
         defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         frontend fe\n    bind 127.0.0.1:{port}\n"
    );
    // (haproxy reads 64 words a line: ten fetches per rule.)
    for g in (0..LIVE.len()).step_by(10) {
        c.push_str("    http-request return status 200");
        for (i, f) in LIVE.iter().enumerate().skip(g).take(10) {
            c.push_str(&format!(" hdr x-l{i:02} \"[%[{f}]]\""));
        }
        c.push_str(&format!(" if {{ path /g{g} }}\n"));
    }
    c.push_str(
        "backend b1\n    server s1 127.0.0.1:1 maxconn 10 maxqueue 5 weight 20\n\
         \x20   server s2 127.0.0.1:1 weight 30\n    server s3 127.0.0.1:1 disabled\n\
         backend b2\n    server s4 127.0.0.1:1 maxconn 3 maxqueue 2\n",
    );
    c
}

fn live_answers(port: u16) -> Vec<String> {
    let mut out = Vec::new();
    for g in (0..LIVE.len()).step_by(10) {
        let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        c.write_all(
            format!("GET /g{g} HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n").as_bytes(),
        )
        .unwrap();
        let mut got = Vec::new();
        let _ = c.read_to_end(&mut got);
        out.extend(
            String::from_utf8_lossy(&got)
                .lines()
                .filter(|l| l.starts_with("x-l"))
                .map(str::to_string),
        );
    }
    out.sort();
    out
}

#[test]
fn live_state_fetches_as_haproxy() {
    let (wp, hp) = (free_port(), free_port());
    let Some(_h) = Haproxy::start(&live_cfg(hp), hp) else {
        panic!("haproxy is not installed: tests/run installs it");
    };
    let _w = Weir::start(&live_cfg(wp), wp);
    let (ours, theirs) = (live_answers(wp), live_answers(hp));
    assert_eq!(ours.len(), LIVE.len(), "{ours:?}");
    let diffs: Vec<String> = ours
        .iter()
        .zip(&theirs)
        .zip(LIVE)
        .filter(|((a, b), _)| a != b)
        .map(|((a, b), f)| format!("{f}: weir {a} / haproxy {b}"))
        .collect();
    assert!(diffs.is_empty(), "{diffs:#?}");
    for want in [
        "x-l03: [3]",
        "x-l05: [5]",
        "x-l07: [10]",
        "x-l12: [30]",
        "x-l20: [1]",
    ] {
        assert!(ours.iter().any(|l| l == want), "{want} in {ours:#?}");
    }
}
