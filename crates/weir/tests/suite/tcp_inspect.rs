//! `tcp-request content` inspection in `mode tcp` through the real binary,
//! beside haproxy 2.6 on the same configuration: routing by the SNI of a
//! real TLS ClientHello (made by rustls), by whether the bytes are HTTP,
//! by a length-prefixed field; rejecting on a payload; waiting for a
//! request that comes in pieces, and deciding at `inspect-delay` on one
//! that never completes.

use crate::common::*;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn cfg(port: u16, servers: &[(&str, u16)]) -> String {
    let mut c = format!(
        "defaults\n    mode tcp\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         frontend fe\n    bind 127.0.0.1:{port}\n    tcp-request inspect-delay 1s\n\
         \x20   tcp-request content reject if {{ req.payload(0,4) -m bin 44454e59 }}\n\
         \x20   tcp-request content accept if {{ req_ssl_hello_type 1 }}\n\
         \x20   tcp-request content accept if HTTP\n\
         \x20   tcp-request content accept if {{ req.payload_lv(0,1) -m found }}\n\
         \x20   use_backend a if {{ req_ssl_sni -i a.example.com }}\n\
         \x20   use_backend b if {{ req.ssl_sni -m end .b.example.com }}\n\
         \x20   use_backend http if HTTP\n\
         \x20   use_backend lv if {{ req.payload_lv(0,1) -m bin 616263 }}\n\
         \x20   default_backend other\n"
    );
    for (name, p) in servers {
        c.push_str(&format!("backend {name}\n    server s 127.0.0.1:{p}\n"));
    }
    c
}

/// A ClientHello for `sni`, as rustls sends it.
fn client_hello(sni: &str) -> Vec<u8> {
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let cfg = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(rustls::RootCertStore::empty())
        .with_no_client_auth();
    let name = rustls::pki_types::ServerName::try_from(sni.to_string()).unwrap();
    let mut c = rustls::ClientConnection::new(Arc::new(cfg), name).unwrap();
    let mut out = Vec::new();
    c.write_tls(&mut out).unwrap();
    out
}

/// Sends `parts` (pausing `gap` between them) and reads what comes back
/// until the connection closes.
fn exchange(port: u16, parts: &[&[u8]], gap: Duration) -> String {
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            std::thread::sleep(gap);
        }
        let _ = c.write_all(p);
    }
    let mut got = Vec::new();
    let _ = c.read_to_end(&mut got);
    String::from_utf8_lossy(&got).into_owned()
}

#[test]
fn content_inspection_as_haproxy() {
    let names = ["a", "b", "http", "lv", "other"];
    let servers: Vec<Server> = names.iter().map(|n| Server::named(n)).collect();
    let sp: Vec<(&str, u16)> = names
        .iter()
        .zip(&servers)
        .map(|(n, s)| (*n, s.port()))
        .collect();
    let (wp, hp) = (free_port(), free_port());
    let Some(_h) = Haproxy::start(&cfg(hp, &sp), hp) else {
        panic!("haproxy is not installed: tests/run installs it");
    };
    let _w = Weir::start(&cfg(wp, &sp), wp);
    let a = client_hello("a.example.com");
    let b = client_hello("www.b.example.com");
    let c = client_hello("c.example.com");
    let get: &[u8] = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n";
    let gap = Duration::from_millis(200);
    let cases: Vec<(&str, Vec<&[u8]>, &str)> = vec![
        ("sni a", vec![&a], "a"),
        ("sni *.b", vec![&b], "b"),
        ("sni c", vec![&c], "other"),
        ("hello in two pieces", vec![&a[..10], &a[10..]], "a"),
        ("http", vec![get], "http"),
        (
            "http in pieces",
            vec![&get[..9], &get[9..20], &get[20..]],
            "http",
        ),
        ("length-value", vec![b"\x03abcdef"], "lv"),
        ("refused", vec![b"DENY me"], ""),
    ];
    for (what, parts, want) in &cases {
        let ours = exchange(wp, parts, gap);
        let theirs = exchange(hp, parts, gap);
        assert_eq!(ours, theirs, "{what}: weir against haproxy");
        assert_eq!(ours, *want, "{what}");
    }
    // A request that never completes is decided when the delay ends.
    let t0 = Instant::now();
    assert_eq!(exchange(wp, &[b"GET / HT"], gap), "other");
    let waited = t0.elapsed();
    assert!(
        waited >= Duration::from_millis(900) && waited < Duration::from_secs(3),
        "{waited:?}"
    );
    assert_eq!(exchange(hp, &[b"GET / HT"], gap), "other");
}
