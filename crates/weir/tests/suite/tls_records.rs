//! weir's own TLS record layer after a client's handshake, driven by a
//! rustls client on a raw socket: key updates both ways (TLS 1.3),
//! TLS 1.2 sessions, and a tampered record that gets a bad_record_mac alert
//! and ends only its own connection.

use crate::common::tls::*;
use crate::common::*;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A client session to weir's TLS bind on `port`, handshake done.
struct Client {
    conn: rustls::ClientConnection,
    sock: TcpStream,
}

impl Client {
    fn connect(
        pki: &Pki,
        port: u16,
        versions: &[&'static rustls::SupportedProtocolVersion],
    ) -> Client {
        let mut roots = rustls::RootCertStore::empty();
        let ca = CertificateDer::from_pem_file(pki.path("ca.pem")).expect("ca.pem");
        roots.add(ca).expect("root");
        let cfg = rustls::ClientConfig::builder_with_protocol_versions(versions)
            .with_root_certificates(roots)
            .with_no_client_auth();
        let name = "www.example.com".try_into().expect("name");
        let conn = rustls::ClientConnection::new(Arc::new(cfg), name).expect("client");
        let sock = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        sock.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut c = Client { conn, sock };
        while c.conn.is_handshaking() {
            c.conn.complete_io(&mut c.sock).expect("handshake");
        }
        c
    }

    /// Sends one request and returns the raw bytes that came back until
    /// its whole answer was decrypted, and the answer.
    fn request(&mut self, path: &str) -> (Vec<u8>, String) {
        self.request_in(path, usize::MAX)
    }

    /// [`Client::request`] with the request's records written `step`
    /// bytes at a time.
    fn request_in(&mut self, path: &str, step: usize) -> (Vec<u8>, String) {
        self.request_with(path, step, true)
    }

    /// [`Client::request_in`], with Nagle's algorithm on or off.
    fn request_with(&mut self, path: &str, step: usize, nodelay: bool) -> (Vec<u8>, String) {
        write!(
            self.conn.writer(),
            "GET {path} HTTP/1.1\r\nHost: www.example.com\r\n\r\n"
        )
        .unwrap();
        let mut rec = Vec::new();
        while self.conn.wants_write() {
            self.conn.write_tls(&mut rec).expect("seal");
        }
        self.sock.set_nodelay(nodelay).unwrap();
        for part in rec.chunks(step) {
            self.sock.write_all(part).expect("send");
        }
        let (mut raw, mut plain) = (Vec::new(), Vec::new());
        let end = Instant::now() + Duration::from_secs(5);
        while !answered(&plain) {
            assert!(
                Instant::now() < end,
                "no whole answer: {:?}",
                String::from_utf8_lossy(&plain)
            );
            let mut chunk = [0u8; 4096];
            let n = self.sock.read(&mut chunk).expect("read");
            assert!(n > 0, "closed: {:?}", String::from_utf8_lossy(&plain));
            raw.extend_from_slice(&chunk[..n]);
            let mut rest = &chunk[..n];
            while !rest.is_empty() {
                self.conn.read_tls(&mut rest).expect("read_tls");
                self.conn.process_new_packets().expect("records");
                let mut buf = [0u8; 4096];
                while let Ok(k) = self.conn.reader().read(&mut buf) {
                    if k == 0 {
                        break;
                    }
                    plain.extend_from_slice(&buf[..k]);
                }
            }
        }
        (raw, String::from_utf8_lossy(&plain).into_owned())
    }
}

/// A whole response with a Content-Length body.
fn answered(b: &[u8]) -> bool {
    let t = String::from_utf8_lossy(b);
    let Some((head, body)) = t.split_once("\r\n\r\n") else {
        return false;
    };
    let len = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-length:")
                .map(|v| v.trim().to_string())
        })
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(0);
    body.len() >= len
}

/// The lengths of the TLS records in `raw` (whole ones).
fn record_lengths(raw: &[u8]) -> Vec<usize> {
    let (mut out, mut at) = (Vec::new(), 0);
    while raw.len() >= at + 5 {
        let len = usize::from(u16::from_be_bytes([raw[at + 3], raw[at + 4]]));
        out.push(len);
        at += 5 + len;
    }
    out
}

/// weir with a TLS bind that answers with what the TLS fetches see.
fn start() -> (Pki, Weir, u16) {
    let pki = Pki::new();
    let port = free_port();
    let cfg = tls_cfg(
        port,
        &format!("crt {}", pki.path("certs/1-www.pem")),
        None,
        "",
    );
    let w = Weir::start(&cfg, port);
    (pki, w, port)
}

#[test]
fn key_updates_both_ways_keep_the_session() {
    let (pki, _w, port) = start();
    let mut c = Client::connect(&pki, port, &[&rustls::version::TLS13]);
    let (_, a) = c.request("/one");
    assert!(
        a.starts_with("HTTP/1.1 200") && a.contains("proto=TLSv1.3"),
        "{a}"
    );

    // The client moves to new keys and asks weir to do the same: weir
    // reads the next request with the client's new keys, and its answer
    // starts with its own key_update (a handshake record: 5 bytes of
    // message, its content type and a 16-byte tag).
    c.conn.refresh_traffic_keys().expect("key update");
    let (raw, a) = c.request("/two");
    assert!(a.starts_with("HTTP/1.1 200"), "{a}");
    let lens = record_lengths(&raw);
    assert_eq!(lens.first(), Some(&22), "weir's key_update first: {lens:?}");

    // Several in a row, then more requests on the same session.
    for i in 0..5 {
        c.conn.refresh_traffic_keys().expect("key update");
        let (_, a) = c.request(&format!("/again{i}"));
        assert!(a.starts_with("HTTP/1.1 200"), "{a}");
    }
}

#[test]
fn tls12_sessions_carry_requests() {
    let (pki, _w, port) = start();
    let mut c = Client::connect(&pki, port, &[&rustls::version::TLS12]);
    for i in 0..3 {
        let (_, a) = c.request(&format!("/{i}"));
        assert!(
            a.starts_with("HTTP/1.1 200") && a.contains("proto=TLSv1.2"),
            "{a}"
        );
    }
}

#[test]
fn records_that_arrive_a_byte_at_a_time_are_read_whole() {
    let (pki, _w, port) = start();
    for versions in [&rustls::version::TLS13, &rustls::version::TLS12] {
        let mut c = Client::connect(&pki, port, &[versions]);
        for i in 0..3 {
            let (_, a) = c.request_in(&format!("/drip{i}"), 1);
            assert!(a.starts_with("HTTP/1.1 200"), "{a}");
        }
    }
}

#[test]
fn a_tampered_record_gets_bad_record_mac_and_spares_others() {
    let (pki, _w, port) = start();
    for versions in [&rustls::version::TLS13, &rustls::version::TLS12] {
        let mut c = Client::connect(&pki, port, &[versions]);
        let (_, a) = c.request("/first");
        assert!(a.starts_with("HTTP/1.1 200"), "{a}");
        let mut other = Client::connect(&pki, port, &[versions]);

        // The next request's record with one bit of its tag flipped.
        write!(
            c.conn.writer(),
            "GET /x HTTP/1.1\r\nHost: www.example.com\r\n\r\n"
        )
        .unwrap();
        let mut rec = Vec::new();
        while c.conn.wants_write() {
            c.conn.write_tls(&mut rec).unwrap();
        }
        let last = rec.len() - 1;
        rec[last] ^= 1;
        c.sock.write_all(&rec).unwrap();

        // weir answers with an alert and closes.
        let mut back = Vec::new();
        c.sock.read_to_end(&mut back).expect("weir closes");
        let mut rest = &back[..];
        while !rest.is_empty() {
            if c.conn.read_tls(&mut rest).unwrap_or(0) == 0 {
                break;
            }
        }
        let r = c.conn.process_new_packets();
        assert!(
            matches!(
                r,
                Err(rustls::Error::AlertReceived(
                    rustls::AlertDescription::BadRecordMac
                ))
            ),
            "{r:?}"
        );

        // The other session goes on.
        let (_, a) = other.request("/other");
        assert!(a.starts_with("HTTP/1.1 200"), "{a}");
    }
}

/// A client with Nagle's algorithm on writes its request right after its
/// Finished, and the request waits until the Finished is acknowledged.
/// weir holds TLS 1.3 session tickets to send them with the first
/// response, but a session that finds nothing to read sends them at once,
/// and their packet is that acknowledgement: no 40 ms delayed-ACK stall
/// per connection (10 connections: a few ms each; with the stall, 0.4 s
/// or more in all).
#[test]
fn nagle_clients_send_their_request_without_waiting_for_a_delayed_ack() {
    let (pki, _w, port) = start();
    let t0 = Instant::now();
    for _ in 0..10 {
        let mut c = Client::connect(&pki, port, &[&rustls::version::TLS13]);
        let (_, answer) = c.request_with("/", usize::MAX, false);
        assert!(answer.starts_with("HTTP/1.1 "), "{answer}");
    }
    let took = t0.elapsed();
    assert!(
        took < Duration::from_millis(300),
        "10 connections took {took:?}"
    );
}

#[test]
fn maxrecord_keeps_the_records_of_an_answer_small_and_hard_maxrecord_all() {
    let pki = Pki::new();
    let origin = crate::common::http::Origin::start("o");
    let sizes = |global: &str, path: &str| {
        let port = free_port();
        let cfg = tls_cfg(
            port,
            &format!("crt {}", pki.path("certs/1-www.pem")),
            Some(origin.port()),
            global,
        );
        let _w = Weir::start(&cfg, port);
        let mut c = Client::connect(&pki, port, &[&rustls::version::TLS13]);
        let (raw, answer) = c.request(path);
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        // Record lengths include the type byte and the 16-byte tag.
        record_lengths(&raw)
            .into_iter()
            .map(|l| l - 17)
            .max()
            .unwrap()
    };
    assert_eq!(sizes("", "/?s=40000"), 16384);
    assert_eq!(sizes("    tune.ssl.maxrecord 1000\n", "/?s=40000"), 1000);
    // A long transfer outgrows maxrecord; hard-maxrecord holds throughout.
    assert_eq!(sizes("    tune.ssl.maxrecord 1000\n", "/?s=300000"), 16384);
    assert_eq!(
        sizes("    tune.ssl.hard-maxrecord 1200\n", "/?s=300000"),
        1200
    );
}
