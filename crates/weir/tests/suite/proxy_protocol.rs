//! PROXY protocol: accept-proxy on binds (v1, v2, bad headers) and
//! send-proxy / send-proxy-v2 towards servers.

use crate::common::*;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::mpsc;
use std::sync::Mutex;
use std::time::Duration;

/// A server that reports the first `n` bytes it receives (or all until EOF).
fn capture(n: usize) -> (Server, mpsc::Receiver<Vec<u8>>) {
    let (tx, rx) = mpsc::channel();
    let tx = Mutex::new(tx);
    let srv = Server::start(move |mut c| {
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut got = Vec::new();
        let mut b = [0u8; 1024];
        while got.len() < n {
            match c.read(&mut b) {
                Ok(0) | Err(_) => break,
                Ok(k) => got.extend_from_slice(&b[..k]),
            }
        }
        let _ = c.write_all(b"ok");
        let _ = tx.lock().unwrap().send(got);
    });
    (srv, rx)
}

fn recv_nonempty(rx: &mpsc::Receiver<Vec<u8>>) -> Vec<u8> {
    loop {
        let v = rx
            .recv_timeout(Duration::from_secs(5))
            .expect("server saw nothing");
        if !v.is_empty() {
            return v;
        }
    }
}

#[test]
fn send_proxy_v1_and_v2_carry_the_client_addresses() {
    let (srv, rx) = capture(1);
    let (_w, port) = proxy_to("s", srv.port(), "send-proxy");
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let local = c.local_addr().unwrap();
    c.write_all(b"payload").unwrap();
    let mut b = [0u8; 2];
    c.read_exact(&mut b).unwrap();
    let got = String::from_utf8(recv_nonempty(&rx)).unwrap();
    let want = format!("PROXY TCP4 127.0.0.1 127.0.0.1 {} {port}\r\n", local.port());
    assert!(got.starts_with(&want), "{got:?} vs {want:?}");

    let (srv, rx) = capture(28);
    let (_w, port) = proxy_to("s", srv.port(), "send-proxy-v2");
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let local = c.local_addr().unwrap();
    c.write_all(b"x").unwrap();
    c.read_exact(&mut b).unwrap();
    let got = recv_nonempty(&rx);
    assert_eq!(&got[..12], b"\r\n\r\n\0\r\nQUIT\n");
    assert_eq!(got[12], 0x21);
    assert_eq!(got[13], 0x11);
    assert_eq!(&got[16..20], &[127, 0, 0, 1]);
    assert_eq!(u16::from_be_bytes([got[24], got[25]]), local.port());
    assert_eq!(u16::from_be_bytes([got[26], got[27]]), port);
}

#[test]
fn accept_proxy_v1_and_v2_then_forward_the_rest() {
    let (srv, rx) = capture(1 << 20);
    let port = free_port();
    let cfg = format!(
        "{LOG_TCP}  timeout connect 1s\n  timeout client 5s\n  timeout server 5s\n\
         listen px\n  bind 127.0.0.1:{port} accept-proxy\n  server s 127.0.0.1:{} send-proxy\n",
        srv.port()
    );
    let w = Weir::start(&cfg, port);
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.write_all(b"PROXY TCP4 192.0.2.7 198.51.100.9 40000 443\r\nhello")
        .unwrap();
    c.shutdown(std::net::Shutdown::Write).unwrap();
    let mut s = String::new();
    c.read_to_string(&mut s).unwrap();
    let got = String::from_utf8(recv_nonempty(&rx)).unwrap();
    assert_eq!(
        got, "PROXY TCP4 192.0.2.7 198.51.100.9 40000 443\r\nhello",
        "addresses passed through, header not forwarded twice"
    );
    let out = w.wait_output("192.0.2.7:40000 [", Duration::from_secs(3));
    assert!(out.contains("px px/s"), "{out}");

    let mut v2 = b"\r\n\r\n\0\r\nQUIT\n".to_vec();
    v2.extend_from_slice(&[
        0x21, 0x11, 0x00, 0x0c, 10, 1, 2, 3, 10, 3, 2, 1, 0x13, 0x88, 0x00, 0x50,
    ]);
    v2.extend_from_slice(b"v2data");
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.write_all(&v2).unwrap();
    c.shutdown(std::net::Shutdown::Write).unwrap();
    let mut s = String::new();
    c.read_to_string(&mut s).unwrap();
    let got = String::from_utf8(recv_nonempty(&rx)).unwrap();
    assert_eq!(got, "PROXY TCP4 10.1.2.3 10.3.2.1 5000 80\r\nv2data");
}

#[test]
fn bad_proxy_header_closes_and_logs() {
    let srv = Server::echo();
    let port = free_port();
    let cfg = format!(
        "global\n  log stdout format raw local0\ndefaults\n  mode tcp\n  log global\n  timeout connect 1s\n  timeout client 2s\n  timeout server 5s\n\
         listen px\n  bind 127.0.0.1:{port} accept-proxy\n  server s 127.0.0.1:{}\n",
        srv.port()
    );
    let w = Weir::start(&cfg, port);
    let before = srv.accepted.load(std::sync::atomic::Ordering::Relaxed);
    let mut c = client(port);
    c.write_all(b"GET / HTTP/1.1\r\n\r\n").unwrap();
    let mut b = [0u8; 4];
    assert!(matches!(c.read(&mut b), Ok(0) | Err(_)));
    let out = w.wait_output(
        "does not look like a PROXY protocol header",
        Duration::from_secs(3),
    );
    assert!(
        out.contains("px/1: "),
        "the listener by its number, as HAProxy: {out}"
    );
    assert_eq!(
        srv.accepted.load(std::sync::atomic::Ordering::Relaxed),
        before,
        "never reached a server"
    );
    // A good client right after is served.
    let mut ok = TcpStream::connect(("127.0.0.1", port)).unwrap();
    ok.write_all(b"PROXY UNKNOWN\r\nping").unwrap();
    ok.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    ok.read_exact(&mut b).unwrap();
    assert_eq!(&b, b"ping");
}

#[test]
fn accept_proxy_v2_with_large_tlvs() {
    // Load balancers add TLVs (TLS details, ids): a 1,000-byte v2 header is
    // accepted, and bytes after it are forwarded.
    let srv = Server::echo();
    let port = free_port();
    let cfg = format!(
        "defaults\n  mode tcp\n  timeout connect 1s\n  timeout client 5s\n  timeout server 5s\n\
         listen px\n  bind 127.0.0.1:{port} accept-proxy\n  server s 127.0.0.1:{}\n",
        srv.port()
    );
    let _w = Weir::start(&cfg, port);
    let tlv_len: u16 = 1000 - 16 - 12 - 3;
    let mut v2 = b"\r\n\r\n\0\r\nQUIT\n".to_vec();
    v2.extend_from_slice(&[0x21, 0x11]);
    v2.extend_from_slice(&(12 + 3 + tlv_len).to_be_bytes());
    v2.extend_from_slice(&[10, 0, 0, 1, 10, 0, 0, 2, 0x13, 0x88, 0x00, 0x50]);
    v2.push(0xE0);
    v2.extend_from_slice(&tlv_len.to_be_bytes());
    v2.extend(std::iter::repeat_n(b'z', tlv_len as usize));
    assert_eq!(v2.len(), 1000);
    v2.extend_from_slice(b"after");
    let mut c = client(port);
    c.write_all(&v2).unwrap();
    let mut b = [0u8; 5];
    c.read_exact(&mut b).unwrap();
    assert_eq!(&b, b"after");
}
