//! `stick on|match|store-request|store-response`, differential against
//! haproxy 2.6: the same configuration through both, the same requests,
//! which server answered each, and `show table`'s text (entry addresses
//! and expiry times left out).

use crate::common::http::Origin;
use crate::common::*;
use std::io::{BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::time::Duration;

fn http_cfg(sock: &Path, port: u16, s1: u16, s2: u16) -> String {
    format!(
        "global\n    stats socket {} level admin\n\
         defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         frontend fe\n    bind 127.0.0.1:{port}\n\
         \x20   use_backend cookies if {{ path_beg /setcookie }} || {{ req.cook(JSESSIONID) -m found }}\n\
         \x20   default_backend be\n\
         backend be\n    balance roundrobin\n\
         \x20   stick-table type string len 10 size 1m expire 1m\n\
         \x20   stick on urlp(c) if {{ urlp(c) -m found }}\n\
         \x20   server s1 127.0.0.1:{s1} id 7\n    server s2 127.0.0.1:{s2}\n\
         backend cookies\n    balance roundrobin\n\
         \x20   stick match req.cook(JSESSIONID) table sessions\n\
         \x20   stick store-response res.cook(JSESSIONID) table sessions\n\
         \x20   server c1 127.0.0.1:{s1}\n    server c2 127.0.0.1:{s2}\n\
         backend sessions\n    stick-table type string size 10 srvkey addr store gpc0\n",
        sock.display()
    )
}

/// Each request on its own connection: the server that answered.
fn servers(port: u16, reqs: &[(&str, Option<&str>)]) -> Vec<String> {
    reqs.iter()
        .map(|(path, cookie)| {
            let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
            c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            let cookie = cookie.map_or(String::new(), |v| format!("Cookie: JSESSIONID={v}\r\n"));
            write!(
                c,
                "GET {path} HTTP/1.1\r\nHost: a\r\n{cookie}Connection: close\r\n\r\n"
            )
            .unwrap();
            let resp = crate::common::http::read_response(&mut BufReader::new(c), "GET").unwrap();
            resp.header("x-server").unwrap_or("-").to_string()
        })
        .collect()
}

const REQS: &[(&str, Option<&str>)] = &[
    ("/?c=a", None),
    ("/?c=b", None),
    ("/?c=a", None),
    ("/", None),
    ("/?c=b", None),
    ("/?c=c", None),
    ("/?c=a", None),
    ("/setcookie", None),
    ("/x", Some("abc")),
    ("/x", Some("abc")),
    ("/x", Some("zzz")),
    ("/x", Some("abc")),
];

#[test]
fn stick_on_match_and_store_response_as_haproxy() {
    let (s1, s2) = (Origin::start("s1"), Origin::start("s2"));
    let dir = tempdir("stickiness");
    let (ws, hs) = (dir.join("w.sock"), dir.join("h.sock"));
    let (wp, hp) = (free_port(), free_port());
    let Some(_h) = Haproxy::start(&http_cfg(&hs, hp, s1.port(), s2.port()), hp) else {
        panic!("haproxy is not installed: tests/run installs it");
    };
    let _w = Weir::start(&http_cfg(&ws, wp, s1.port(), s2.port()), wp);
    let (ours, theirs) = (servers(wp, REQS), servers(hp, REQS));
    assert_eq!(ours, theirs, "weir's servers, then haproxy's");
    assert_eq!(ours[0], ours[2], "c=a sticks");
    assert_eq!(ours[2], ours[6]);
    assert_eq!(ours[1], ours[4], "c=b sticks");
    assert_ne!(ours[0], ours[1]);
    assert_eq!(ours[7], ours[8], "the cookie set sticks");
    assert_eq!(ours[8], ours[9]);
    assert_eq!(ours[9], ours[11]);
    // Compared once each proxy has let go of every entry (the last
    // exchange may still hold one just after its response).
    for sock in [&ws, &hs] {
        wait_for("the entries to be let go", Duration::from_secs(5), || {
            ["show table be\n", "show table sessions\n"]
                .iter()
                .all(|c| {
                    !ask(sock, c)
                        .lines()
                        .any(|l| l.contains(" use=") && !l.contains(" use=0 "))
                })
                .then_some(())
        });
    }
    for cmd in ["show table be\n", "show table sessions\n", "show table\n"] {
        let (o, t) = (normalized(&ask(&ws, cmd)), normalized(&ask(&hs, cmd)));
        assert_eq!(o, t, "{cmd}: weir's, then haproxy's");
        assert!(o.contains("used:"), "{o}");
    }
    let be = normalized(&ask(&ws, "show table be\n"));
    assert!(
        be.contains("key=a use=0 exp=? server_id=7 server_key=s1"),
        "{be}"
    );
    let sessions = normalized(&ask(&ws, "show table sessions\n"));
    let addr = format!(
        "server_key=127.0.0.1:{}",
        if ours[7] == "s1" {
            s1.port()
        } else {
            s2.port()
        }
    );
    assert!(
        sessions.contains("key=abc") && sessions.contains(&addr),
        "{sessions}"
    );
}

fn tcp_cfg(port: u16, a: u16, b: u16) -> String {
    format!(
        "defaults\n    mode tcp\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         frontend fe\n    bind 127.0.0.1:{port}\n    default_backend be\n\
         backend be\n    balance roundrobin\n\
         \x20   stick-table type ip size 10\n    stick on src\n\
         \x20   server a 127.0.0.1:{a}\n    server b 127.0.0.1:{b}\n"
    )
}

#[test]
fn stick_on_src_keeps_a_tcp_client_on_its_server() {
    let (a, b) = (Server::named("a"), Server::named("b"));
    let port = free_port();
    let _w = Weir::start(&tcp_cfg(port, a.port(), b.port()), port);
    let names: Vec<String> = (0..4)
        .map(|_| {
            let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
            c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            let mut s = String::new();
            let _ = c.read_to_string(&mut s);
            s
        })
        .collect();
    assert_eq!(
        names,
        ["a", "a", "a", "a"],
        "round robin alone would alternate"
    );
}

/// Each answer's `Set-Cookie` and the server that gave it.
fn cookie_answers(port: u16, cookie: Option<&str>, n: usize) -> Vec<(String, String)> {
    (0..n)
        .map(|_| {
            let mut c = crate::common::http::Client::connect(port);
            let extra = cookie
                .map(|v| format!("Cookie: SRVID={v}\r\n"))
                .unwrap_or_default();
            c.send(
                format!("GET / HTTP/1.1\r\nHost: t\r\n{extra}Connection: close\r\n\r\n").as_bytes(),
            );
            let r = c.response("GET");
            (
                r.header("set-cookie").unwrap_or("-").to_string(),
                r.field("server").unwrap_or_default(),
            )
        })
        .collect()
}

#[test]
fn dynamic_cookies_as_haproxy() {
    let (a, b) = (Origin::start("a"), Origin::start("b"));
    let got = beside_haproxy(|start| {
        let port = free_port();
        let cfg = |key: &str| {
            format!(
                "defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
                 listen l\n    bind 127.0.0.1:{port}\n    balance roundrobin\n\
                 \x20   cookie SRVID insert dynamic\n{key}\
                 \x20   server a 127.0.0.1:{}\n    server b 127.0.0.1:{}\n",
                a.port(),
                b.port()
            )
        };
        let p = start(&cfg("    dynamic-cookie-key mysecret\n"), port);
        let first = cookie_answers(port, None, 2);
        // The cookie made for b brings every request to b.
        let b_cookie = first
            .iter()
            .find(|(_, s)| s == "b")
            .and_then(|(c, _)| c.strip_prefix("SRVID="))
            .and_then(|c| c.split(';').next())
            .unwrap_or_default()
            .to_string();
        let pinned = cookie_answers(port, Some(&b_cookie), 3);
        drop(p);
        // Without a key the servers have no cookie: haproxy deletes it.
        let port2 = free_port();
        let cfg2 = cfg("").replace(&port.to_string(), &port2.to_string());
        let _p = start(&cfg2, port2);
        (first, pinned, cookie_answers(port2, None, 1))
    });
    // The same cookies as haproxy's (above), each server its own, and
    // the one for b pins to b.
    assert_ne!(got.0[0].0, got.0[1].0, "{got:?}");
    assert!(got.1.iter().all(|(_, s)| s == "b"), "{got:?}");
    assert_eq!(
        got.2[0].0,
        "SRVID=; Expires=Thu, 01-Jan-1970 00:00:01 GMT; path=/"
    );
}
