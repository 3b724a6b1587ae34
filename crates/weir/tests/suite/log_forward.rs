//! `log-forward` and `ring` sections, differential against haproxy 2.6:
//! the same syslog messages (RFC 3164 and 5424, over UDP and over TCP
//! octet-counted and line-ended) relayed by each to the same kinds of
//! targets (as they came, rfc3164 with a level filter, rfc5424, short,
//! raw, and a ring sending on to a TCP syslog server), compared target by
//! target.

use crate::common::*;
use std::io::{BufRead, Write};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const UDP_IN: &[&str] = &[
    "<134>Nov 26 21:10:42 myhost haproxy[1234]: hello world",
    "<13>1 2026-11-26T21:10:42.123456+00:00 h2 app 99 ID47 [x@1 a=\"b\"] msg five",
    "<11>Nov 26 21:10:42 tagonly: m3",
    "<134>Nov 26 21:11:34 haproxy[15253]: 127.0.0.1:40886 fe1 \"GET / HTTP/1.1\"",
];
const OCTET: &str = "<14>Nov 26 21:10:43 h3 t3: via octet counting";
const LINE: &str = "<12>Nov 26 21:10:44 h4 t4[7]: via a line";
/// Messages each target gets: all six, but two at `notice` and above.
const COUNTS: [usize; 6] = [6, 3, 6, 6, 6, 6];

/// A TCP syslog server: the lines it received.
fn tcp_sink() -> (u16, Arc<Mutex<Vec<String>>>) {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let lines = Arc::new(Mutex::new(Vec::new()));
    let out = lines.clone();
    std::thread::spawn(move || {
        for c in l.incoming().flatten() {
            let out = out.clone();
            std::thread::spawn(move || {
                for line in std::io::BufReader::new(c).lines() {
                    match line {
                        Ok(l) => out.lock().unwrap().push(l),
                        Err(_) => return,
                    }
                }
            });
        }
    });
    (port, lines)
}

/// Runs the messages through `start`'s relay (`who`, named when it fails);
/// each target's messages, sorted.
fn relayed(who: &str, start: impl Fn(&str, u16) -> Box<dyn std::any::Any>) -> Vec<Vec<String>> {
    let sinks: Vec<Syslog> = (0..5).map(|_| Syslog::start()).collect();
    let (ring_port, ring_lines) = tcp_sink();
    let (udp_in, tcp_in) = (free_udp_port(), free_port());
    let cfg = format!(
        "ring r\n    format rfc5424\n    maxlen 1200\n    size 32764\n    timeout connect 5s\n    timeout server 10s\n    server s 127.0.0.1:{ring_port}\n\
         log-forward f\n    dgram-bind 127.0.0.1:{udp_in}\n    bind 127.0.0.1:{tcp_in}\n    timeout client 5s\n\
         \x20   log 127.0.0.1:{} local0\n    log 127.0.0.1:{} format rfc3164 local1 notice\n\
         \x20   log 127.0.0.1:{} format rfc5424 local2\n    log 127.0.0.1:{} format short local0\n\
         \x20   log 127.0.0.1:{} format raw local0\n    log ring@r local0\n",
        sinks[0].port(),
        sinks[1].port(),
        sinks[2].port(),
        sinks[3].port(),
        sinks[4].port()
    );
    let _p = start(&cfg, tcp_in);
    let u = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    for m in UDP_IN {
        u.send_to(m.as_bytes(), ("127.0.0.1", udp_in)).unwrap();
    }
    let mut t = std::net::TcpStream::connect(("127.0.0.1", tcp_in)).unwrap();
    t.write_all(format!("{} {OCTET}{LINE}\n", OCTET.len()).as_bytes())
        .unwrap();
    let mut got = Vec::new();
    for (i, want) in COUNTS.iter().enumerate() {
        let lines = wait_for(
            &format!("{want} messages from {who} at target {i}"),
            Duration::from_secs(10),
            || {
                let l = match sinks.get(i) {
                    Some(s) => s.lines.lock().unwrap().clone(),
                    None => ring_lines.lock().unwrap().clone(),
                };
                (l.len() >= *want).then_some(l)
            },
        );
        let mut lines = lines;
        lines.sort();
        got.push(lines);
    }
    got
}

fn free_udp_port() -> u16 {
    std::net::UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn messages_are_relayed_as_haproxy_relays_them() {
    Haproxy::bin().expect("haproxy is not installed: tests/run installs it");
    let theirs = relayed("haproxy", |cfg, port| {
        Box::new(Haproxy::start(cfg, port).unwrap())
    });
    let mine = relayed("weir", |cfg, port| Box::new(Weir::start(cfg, port)));
    for (i, (m, t)) in mine.iter().zip(&theirs).enumerate() {
        assert_eq!(m, t, "target {i}");
    }
    // The level filter kept only what is at `notice` or above.
    assert!(mine[1].iter().all(|l| !l.contains("hello world")));
    assert!(mine[5]
        .iter()
        .any(|l| l
            .starts_with("<134>1 2026-11-26T21:10:42-00:00 myhost haproxy 1234 - - hello world")));
}

/// A ring's lines wait while its server is away, and go once it listens.
#[test]
fn a_ring_keeps_lines_until_its_server_takes_them() {
    let port = free_port();
    let udp_in = free_udp_port();
    let ring_port = free_port();
    let cfg = format!(
        "ring r\n    format raw\n    size 32764\n    timeout connect 1s\n    server s 127.0.0.1:{ring_port} log-proto octet-count\n\
         log-forward f\n    dgram-bind 127.0.0.1:{udp_in}\n    bind 127.0.0.1:{port}\n    log ring@r local0\n"
    );
    let _w = Weir::start(&cfg, port);
    let u = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    for i in 0..3 {
        u.send_to(format!("<13>early {i}").as_bytes(), ("127.0.0.1", udp_in))
            .unwrap();
    }
    // The server comes late: it gets the three, octet-counted.
    let l = std::net::TcpListener::bind(("127.0.0.1", ring_port)).unwrap();
    let (mut c, _) = l.accept().unwrap();
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let want = b"7 early 07 early 17 early 2";
    let mut got = vec![0u8; want.len()];
    std::io::Read::read_exact(&mut c, &mut got).unwrap();
    assert_eq!(got, want);
}

/// A `log ring@…` that names no ring is an error with its line.
#[test]
fn an_unknown_ring_is_an_error_with_its_line() {
    let (code, _, err) =
        check_cfg("log-forward f\n    dgram-bind 127.0.0.1:1514\n    log ring@nope local0\n");
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("haproxy.cfg:3] : log server uses unknown ring named 'nope'."),
        "{err}"
    );
}
