//! How connections end, beside haproxy: `option http-pretend-keepalive`
//! (the server is not told `Connection: close` in a closing mode, and the
//! proxy closes after the answer all the same) and `option nolinger`
//! (sockets close with a reset).

use crate::common::*;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc;
use std::time::Duration;

/// A server answering each request on a connection until the proxy
/// closes it; sends (the request's `connection` header, whether the proxy
/// closed after the answer) for each connection.
fn recording_server() -> (Server, mpsc::Receiver<(String, bool)>) {
    let (tx, rx) = mpsc::channel();
    let tx = std::sync::Mutex::new(tx);
    let s = Server::start(move |c| {
        c.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
        let mut r = BufReader::new(c.try_clone().unwrap());
        let mut conn = String::from("-");
        loop {
            let mut line = String::new();
            if r.read_line(&mut line).unwrap_or(0) == 0 {
                break;
            }
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some((k, v)) = line.split_once(':') {
                if k.eq_ignore_ascii_case("connection") {
                    conn = v.trim().to_ascii_lowercase();
                }
            }
        }
        let mut w = c;
        // Keep-alive answer: only the proxy can end the connection.
        let _ = w.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok");
        // A FIN or a reset: not the read timeout.
        let closed = match r.read(&mut [0u8; 1]) {
            Ok(n) => n == 0,
            Err(e) => e.kind() == std::io::ErrorKind::ConnectionReset,
        };
        let _ = tx.lock().unwrap().send((conn, closed));
    });
    (s, rx)
}

fn cfg(port: u16, srv: u16, opts: &str) -> String {
    format!(
        "defaults\n    mode http\n    timeout connect 1s\n    timeout client 3s\n    timeout server 3s\n    option httpclose\n\
         listen l\n    bind 127.0.0.1:{port}\n{opts}    server s 127.0.0.1:{srv}\n"
    )
}

/// The status line of the answer to `req`.
fn status(port: u16, req: &str) -> String {
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
    c.write_all(req.as_bytes()).unwrap();
    let mut out = String::new();
    let _ = c.read_to_string(&mut out);
    out.lines().next().unwrap_or("").to_string()
}

#[test]
fn pretend_keepalive_hides_the_close_from_the_server_as_haproxy() {
    let seen = beside_haproxy(|start| {
        let (srv, rx) = recording_server();
        let port = free_port();
        let mut out = Vec::new();
        for opts in ["", "    option http-pretend-keepalive\n"] {
            let _p = start(&cfg(port, srv.addr.port(), opts), port);
            for req in [
                "GET /a HTTP/1.1\r\nhost: a\r\n\r\n",
                "GET /b HTTP/1.1\r\nhost: a\r\nconnection: close\r\n\r\n",
                "GET /c HTTP/1.0\r\n\r\n",
            ] {
                let st = status(port, req);
                let (conn, closed) = rx.recv_timeout(Duration::from_secs(5)).unwrap();
                out.push((st, conn, closed));
            }
        }
        out
    });
    let heads: Vec<&str> = seen.iter().map(|(_, c, _)| c.as_str()).collect();
    assert_eq!(
        heads,
        ["close", "close", "-", "-", "-", "keep-alive"],
        "{seen:?}"
    );
    assert!(seen
        .iter()
        .all(|(st, _, closed)| st.contains(" 200 ") && *closed));
}

/// How a keep-alive connection the proxy closes on its timeout ends for
/// its client: (a reset, the answer read before it).
fn ending(port: u16) -> (bool, String) {
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
    c.write_all(b"GET / HTTP/1.1\r\nhost: a\r\n\r\n").unwrap();
    let mut b = [0u8; 4096];
    let n = c.read(&mut b).unwrap();
    let head = String::from_utf8_lossy(&b[..n])
        .lines()
        .next()
        .unwrap_or("")
        .to_string();
    let reset = loop {
        match c.read(&mut b) {
            Ok(0) => break false,
            Ok(_) => continue,
            Err(e) => break e.kind() == std::io::ErrorKind::ConnectionReset,
        }
    };
    (reset, head)
}

#[test]
fn nolinger_closes_with_a_reset() {
    // haproxy shuts its side down before the reset, so its clients read a
    // FIN first (documented difference): only the answers are compared.
    let answer = "    http-request return status 200 content-type text/plain string ok\n";
    let ends = std::cell::RefCell::new(Vec::new());
    let seen = beside_haproxy(|start| {
        let port = free_port();
        let mut out = Vec::new();
        for opts in ["", "    option nolinger\n"] {
            let c = format!(
                "defaults\n    mode http\n    timeout connect 1s\n    timeout client 300ms\n    timeout server 3s\n\
                 listen l\n    bind 127.0.0.1:{port}\n{opts}{answer}"
            );
            let _p = start(&c, port);
            let (reset, head) = ending(port);
            ends.borrow_mut().push(reset);
            out.push(head);
        }
        out
    });
    assert_eq!(seen, ["HTTP/1.1 200 OK", "HTTP/1.1 200 OK"]);
    // haproxy's two closes, then weir's: a reset only with nolinger.
    assert_eq!(*ends.borrow(), [false, false, false, true]);
}

#[test]
fn nolinger_resets_server_connections() {
    // A server that holds its connection open: the proxy closes it on the
    // server timeout, with a reset under nolinger.
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let srv = l.local_addr().unwrap().port();
    let port = free_port();
    let _w = Weir::start(
        &format!(
            "defaults\n    mode tcp\n    timeout connect 1s\n    timeout client 3s\n    timeout server 300ms\n\
             listen l\n    bind 127.0.0.1:{port}\n    option nolinger\n    server s 127.0.0.1:{srv}\n"
        ),
        port,
    );
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.write_all(b"hello").unwrap();
    let (mut s, _) = l.accept().unwrap();
    s.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
    let mut b = [0u8; 16];
    assert_eq!(s.read(&mut b).unwrap(), 5);
    let e = s.read(&mut b).expect_err("a reset, not a FIN");
    assert_eq!(e.kind(), std::io::ErrorKind::ConnectionReset);
}
