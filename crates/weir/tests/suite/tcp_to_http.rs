//! `mode tcp` clients going on in HTTP through the real binary, beside
//! haproxy 2.6: `tcp-request content switch-mode http` (the content rules
//! seeing TCP for the first request and HTTP for the next ones), a TCP
//! frontend whose backend is HTTP (the implicit upgrade, which a content
//! rule's `reject` stops), and `proto h1`.

use crate::common::*;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

fn cfg(p1: u16, p2: u16, p3: u16) -> String {
    format!(
        "defaults\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         frontend fe1\n    mode tcp\n    bind 127.0.0.1:{p1}\n    tcp-request inspect-delay 1s\n\
         \x20   tcp-request content set-var(req.mode) internal.strm.is_htx,iif(http,tcp)\n\
         \x20   tcp-request content switch-mode http if HTTP\n\
         \x20   tcp-request content reject\n\
         \x20   http-request return status 200 content-type text/plain lf-string \"mode=%[var(req.mode)] fe=%[fe_name]\"\n\
         frontend fe2\n    mode tcp\n    bind 127.0.0.1:{p2}\n    tcp-request inspect-delay 1s\n\
         \x20   tcp-request content reject if {{ req.payload(0,0) -m sub /refused }}\n    default_backend be\n\
         frontend fe3\n    mode tcp\n    bind 127.0.0.1:{p3}\n    tcp-request inspect-delay 1s\n\
         \x20   tcp-request content switch-mode http proto h1 if HTTP\n    default_backend be\n\
         backend be\n    mode http\n\
         \x20   http-request return status 200 content-type text/plain lf-string \"be=%[be_name] ver=%[req.ver]\"\n"
    )
}

/// Sends `req` and reads until the peer closes (or 2 s pass). The client
/// does not half-close: haproxy then sometimes closes without answering.
fn answer(port: u16, req: &[u8]) -> String {
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    c.write_all(req).unwrap();
    let mut got = Vec::new();
    let _ = c.read_to_end(&mut got);
    // The status line and body only (the headers' order and dates differ).
    let t = String::from_utf8_lossy(&got).into_owned();
    let status = t.lines().next().unwrap_or("").to_string();
    let body = t.split("\r\n\r\n").skip(1).collect::<Vec<_>>().join("|");
    format!("{status} {body}")
}

#[test]
fn tcp_clients_go_on_in_http_as_haproxy() {
    let ports = |_| (free_port(), free_port(), free_port());
    let (w, h) = (ports(0), ports(1));
    let Some(_h) = Haproxy::start(&cfg(h.0, h.1, h.2), h.0) else {
        panic!("haproxy is not installed: tests/run installs it");
    };
    let _w = Weir::start(&cfg(w.0, w.1, w.2), w.0);
    let two = b"GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    let cases: [(&str, usize, &[u8], &str); 6] = [
        (
            "switched",
            0,
            two,
            "HTTP/1.1 200 OK mode=tcp fe=fe1HTTP/1.1 200 OK",
        ),
        ("not http", 0, b"\x16\x03\x01hello", " "),
        (
            "implicit",
            1,
            b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
            "HTTP/1.1 200 OK be=be ver=1.1",
        ),
        (
            // A refusal wins over the upgrade.
            "implicit, refused",
            1,
            b"GET /refused HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
            " ",
        ),
        (
            "implicit, junk",
            1,
            b"junk\r\n\r\n",
            "HTTP/1.1 400 Bad request ",
        ),
        (
            "proto h1, h2 preface",
            2,
            b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
            "HTTP/1.1 400 Bad request ",
        ),
    ];
    for (what, i, req, want) in cases {
        let pick = |p: (u16, u16, u16)| [p.0, p.1, p.2][i];
        let (ours, theirs) = (answer(pick(w), req), answer(pick(h), req));
        let ours_start: String = ours.chars().take(want.len()).collect();
        let theirs_start: String = theirs.chars().take(want.len()).collect();
        assert_eq!(
            ours_start, theirs_start,
            "{what}: weir [{ours}] haproxy [{theirs}]"
        );
        assert_eq!(ours_start, want, "{what}: [{ours}]");
    }
    // The second request of the switched connection is HTTP from the start.
    let t = answer(w.0, two);
    assert!(t.contains("mode=http fe=fe1"), "{t}");
}
