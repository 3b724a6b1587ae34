//! WebSocket over HTTP/2 (RFC 8441) through the real binary: an HTTP/2
//! client's extended CONNECT reaches an HTTP/1.1 server as an upgrade
//! (with the key weir makes, whose proof weir checks) and tunnels; an
//! HTTP/1.1 client's upgrade reaches a `proto h2` server as extended
//! CONNECT; a server that does not offer it gets none (502).

use crate::common::h2::*;
use crate::common::http::{ws_accept, Client, Origin};
use crate::common::*;
use std::io::Read;
use std::time::Duration;

const T: Duration = Duration::from_secs(5);
const KEY: &str = "dGhlIHNhbXBsZSBub25jZQ==";

fn cfg(port: u16, global: &str, bind: &str, server: &str, syslog: u16) -> String {
    format!(
        "global\n    log 127.0.0.1:{syslog} local0\n{global}\
         defaults\n    mode http\n    log global\n    option httplog\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         frontend fe\n    bind 127.0.0.1:{port}{bind}\n    default_backend be\n\
         backend be\n    server s {server}\n"
    )
}

/// Whether weir's SETTINGS offer extended CONNECT.
fn offers_extended_connect(c: &mut Raw) -> bool {
    let f = c.until(T, |f| f.kind == SETTINGS && f.flags & 1 == 0);
    let s = f.last().expect("weir's SETTINGS");
    assert_eq!(s.kind, SETTINGS);
    s.payload.chunks(6).any(|p| p == [0, 8, 0, 0, 0, 1])
}

fn open(id: u32, path: &str) -> Vec<u8> {
    let b = block(&[
        (":method", "CONNECT"),
        (":protocol", "websocket"),
        (":scheme", "http"),
        (":path", path),
        (":authority", "localhost"),
    ]);
    frame(HEADERS, END_HEADERS, id, &b)
}

#[test]
fn an_h2_clients_websocket_reaches_an_http1_server_and_tunnels() {
    let o = Origin::start("o1");
    let log = Syslog::start();
    let port = free_port();
    let bind = " proto h2";
    let server = format!("127.0.0.1:{}", o.port());
    let w = Weir::start(&cfg(port, "", bind, &server, log.port()), port);
    let mut c = Raw::connect(port);
    assert!(offers_extended_connect(&mut c));
    assert!(c.send(&open(1, "/ws")));
    let f = c.until(T, |f| f.stream == 1 && f.kind == HEADERS);
    // `:status 200` (static table entry 8): the server switched.
    assert_eq!(f.last().map(|f| f.payload[0]), Some(0x88), "{f:?}");
    for msg in [&b"ping"[..], &[7u8; 30_000][..]] {
        for part in msg.chunks(16_384) {
            assert!(c.send(&frame(DATA, 0, 1, part)));
        }
        let mut back = Vec::new();
        c.until(T, |f| {
            if f.stream == 1 && f.kind == DATA {
                back.extend_from_slice(&f.payload);
            }
            back.len() >= msg.len()
        });
        assert!(back == msg, "{} bytes back of {}", back.len(), msg.len());
    }
    // The server was asked with a key weir made (HTTP/2 carries none).
    let head = o
        .seen
        .lock()
        .unwrap()
        .last()
        .unwrap()
        .head
        .to_ascii_lowercase();
    assert!(head.starts_with("get /ws http/1.1"), "{head}");
    assert!(head.contains("upgrade: websocket"), "{head}");
    assert!(head.contains("sec-websocket-key: "), "{head}");
    // The client's end of stream ends the tunnel both ways.
    assert!(c.send(&frame(DATA, END_STREAM, 1, b"")));
    let f = c.until(T, |f| {
        f.stream == 1 && (f.flags & END_STREAM != 0 || f.kind == RST_STREAM)
    });
    assert_eq!(f.last().map(|f| f.kind), Some(DATA), "{f:?}");
    // A server that does not prove the key is a bad gateway.
    assert!(c.send(&open(3, "/ws-wrong")));
    let line = log.wait_line("/ws-wrong", T);
    assert!(line.contains(" 502 "), "{line}");
    drop(w);
}

#[test]
fn an_http1_upgrade_reaches_an_h2_server_as_extended_connect() {
    let o = Origin::start("o1");
    let log = Syslog::start();
    // Server side: weir with an HTTP/2 frontend in front of the origin.
    let (inner, front) = (free_port(), free_port());
    let origin = format!("127.0.0.1:{}", o.port());
    let _w1 = Weir::start(&cfg(inner, "", " proto h2", &origin, log.port()), inner);
    let to_inner = format!("127.0.0.1:{inner} proto h2");
    let _w2 = Weir::start(&cfg(front, "", "", &to_inner, log.port()), front);
    let mut c = Client::connect(front);
    c.send(format!("GET /ws HTTP/1.1\r\nHost: t\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: {KEY}\r\n\r\n").as_bytes());
    let r = c.response("GET");
    assert_eq!(r.status, 101);
    assert_eq!(
        r.header("sec-websocket-accept"),
        Some(ws_accept(KEY).as_str())
    );
    assert!(r
        .header("upgrade")
        .is_some_and(|u| u.eq_ignore_ascii_case("websocket")));
    for msg in [&b"ping"[..], &[9u8; 70_000][..]] {
        c.send(msg);
        let mut back = vec![0u8; msg.len()];
        c.r.read_exact(&mut back).unwrap();
        assert!(back == msg);
    }
    // The client's end reaches the server through both hops (END_STREAM
    // on the HTTP/2 stream), whose close comes back.
    // (At once: not at the 5 s timeouts.)
    let t0 = std::time::Instant::now();
    c.w.shutdown(std::net::Shutdown::Write).unwrap();
    assert!(c.closed());
    assert!(t0.elapsed() < Duration::from_secs(3), "{:?}", t0.elapsed());
    // `h2-workaround-bogus-websocket-clients`: no extended CONNECT is
    // offered, so the upgrade cannot go (502, as haproxy answers).
    let (inner2, front2) = (free_port(), free_port());
    let g = "    h2-workaround-bogus-websocket-clients\n";
    let _w3 = Weir::start(&cfg(inner2, g, " proto h2", &origin, log.port()), inner2);
    let mut raw = Raw::connect(inner2);
    assert!(!offers_extended_connect(&mut raw));
    let to_inner2 = format!("127.0.0.1:{inner2} proto h2");
    let _w4 = Weir::start(&cfg(front2, "", "", &to_inner2, log.port()), front2);
    let mut c = Client::connect(front2);
    c.send(format!("GET /ws HTTP/1.1\r\nHost: t\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: {KEY}\r\n\r\n").as_bytes());
    assert_eq!(c.response("GET").status, 502);
    // Other requests still go over HTTP/2 to that server.
    assert_eq!(Client::connect(front2).get("/x").status, 200);
}

/// `ws h1|h2|auto` on `proto h2` servers and on TLS servers offering
/// `h2,http/1.1`: the protocol a WebSocket takes (the inner weir reports
/// the version it received, the outer the ALPN of its connection).
#[test]
fn the_ws_keyword_picks_the_protocol_of_websockets() {
    let pki = crate::common::tls::Pki::new();
    let o = Origin::start("o1");
    let log = Syslog::start();
    let (inner, inner_tls, front) = (free_port(), free_port(), free_port());
    let cfg_inner = format!(
        "global\n    log 127.0.0.1:{} local0\n\
         defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         frontend fe\n    bind 127.0.0.1:{inner}\n    bind 127.0.0.1:{inner_tls} ssl crt {} alpn h2,http/1.1\n\
         \x20   http-response set-header x-ver %[req.ver]\n    default_backend be\n\
         backend be\n    server o 127.0.0.1:{}\n",
        log.port(),
        pki.path("certs/1-www.pem"),
        o.port()
    );
    let _w1 = Weir::start(&cfg_inner, inner);
    let mut cfg = format!(
        "defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         frontend fe\n    bind 127.0.0.1:{front}\n    use_backend %[req.hdr(x-be)]\n"
    );
    let servers = [
        ("h1", format!("127.0.0.1:{inner} proto h2 ws h1")),
        ("h2", format!("127.0.0.1:{inner} proto h2 ws h2")),
        ("auto", format!("127.0.0.1:{inner} proto h2")),
        (
            "tlsauto",
            format!("127.0.0.1:{inner_tls} ssl verify none alpn h2,http/1.1"),
        ),
        (
            "tlsh2",
            format!("127.0.0.1:{inner_tls} ssl verify none alpn h2,http/1.1 ws h2"),
        ),
    ];
    for (name, line) in &servers {
        cfg.push_str(&format!(
            "backend {name}\n    http-response set-header x-alpn \"%[ssl_bc_alpn]\"\n    server s {line}\n"
        ));
    }
    let _w2 = Weir::start(&cfg, front);
    for (name, want) in [
        ("h1", "1.1 "),
        ("h2", "2.0 "),
        ("auto", "2.0 "),
        ("tlsauto", "1.1 http/1.1"),
        ("tlsh2", "2.0 h2"),
    ] {
        let mut c = Client::connect(front);
        c.send(format!("GET /ws HTTP/1.1\r\nHost: t\r\nx-be: {name}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: {KEY}\r\n\r\n").as_bytes());
        let r = c.response("GET");
        assert_eq!(r.status, 101, "{name}");
        let got = format!(
            "{} {}",
            r.header("x-ver").unwrap_or(""),
            r.header("x-alpn").unwrap_or("")
        );
        assert_eq!(got, want, "{name}");
        c.send(b"ping");
        let mut back = [0u8; 4];
        c.r.read_exact(&mut back).unwrap();
        assert_eq!(&back, b"ping", "{name}");
    }
    // Other requests to the TLS server keep HTTP/2.
    let mut c = Client::connect(front);
    c.send(b"GET /x HTTP/1.1\r\nHost: t\r\nx-be: tlsauto\r\n\r\n");
    let r = c.response("GET");
    assert_eq!(r.header("x-ver"), Some("2.0"));
}

/// A `proto h2` server that closes before its SETTINGS: the upgrade
/// waiting for them gets its 502 at once, even with no `timeout server`.
#[test]
fn an_upgrade_to_an_h2_server_that_closes_early_is_a_502() {
    let server = Server::start(|mut c| {
        let mut preface = [0u8; 24];
        let _ = std::io::Read::read_exact(&mut c, &mut preface);
    });
    let log = Syslog::start();
    let front = free_port();
    let cfg = format!(
        "global\n    log 127.0.0.1:{} local0\n\
         defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n\
         frontend fe\n    bind 127.0.0.1:{front}\n    default_backend be\n\
         backend be\n    server s 127.0.0.1:{} proto h2\n",
        log.port(),
        server.port()
    );
    let _w = Weir::start(&cfg, front);
    let mut c = Client::connect(front);
    c.send(format!("GET /ws HTTP/1.1\r\nHost: t\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: {KEY}\r\n\r\n").as_bytes());
    let t0 = std::time::Instant::now();
    assert_eq!(c.response("GET").status, 502);
    assert!(t0.elapsed() < Duration::from_secs(3), "{:?}", t0.elapsed());
}
