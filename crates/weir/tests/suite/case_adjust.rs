//! `h1-case-adjust` with `option h1-case-adjust-bogus-client|server`,
//! beside haproxy: the header names listed reach the server (requests) and
//! the client (responses) spelled as the map says.

use crate::common::*;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::mpsc;
use std::time::Duration;

/// An origin that sends each request head it reads to the test and
/// answers with lower-case header names.
fn origin() -> (Server, mpsc::Receiver<Vec<String>>) {
    let (tx, rx) = mpsc::channel();
    let tx = std::sync::Mutex::new(tx);
    let s = Server::start(move |c: TcpStream| {
        let mut r = BufReader::new(c.try_clone().unwrap());
        let mut names = Vec::new();
        loop {
            let mut line = String::new();
            if r.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                break;
            }
            if let Some((n, _)) = line.split_once(':') {
                names.push(n.to_string());
            }
        }
        let _ = tx.lock().unwrap().send(names);
        let mut c = c;
        let _ = c.write_all(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\nx-answer: 1\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok",
        );
    });
    (s, rx)
}

fn exchange(port: u16) -> String {
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    c.write_all(b"GET / HTTP/1.1\r\nhost: a\r\nx-custom: 1\r\nconnection: close\r\n\r\n")
        .unwrap();
    let mut s = String::new();
    c.read_to_string(&mut s).unwrap();
    s
}

#[test]
fn listed_names_take_their_spelling_as_in_haproxy() {
    let (srv, seen) = origin();
    let dir = tempdir("case-adjust");
    let file = dir.join("names");
    std::fs::write(&file, "# names\n  content-type   Content-TYPE\n\n").unwrap();
    let got = beside_haproxy(|start| {
        let port = free_port();
        let cfg = format!(
            "global\n    h1-case-adjust x-custom X-CuStOm\n    h1-case-adjust-file {}\n\
             defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
             frontend fe\n    bind 127.0.0.1:{port}\n    option h1-case-adjust-bogus-client\n    default_backend be\n\
             backend be\n    option h1-case-adjust-bogus-server\n    server s 127.0.0.1:{}\n",
            file.display(),
            srv.port()
        );
        let _p = start(&cfg, port);
        let answer = exchange(port);
        let names = seen.recv_timeout(Duration::from_secs(5)).unwrap();
        (
            names.iter().any(|n| n == "X-CuStOm"),
            answer.contains("\r\nContent-TYPE: text/plain\r\n"),
        )
    });
    assert_eq!(got, (true, true));
}

#[test]
fn bad_maps_are_refused_as_in_haproxy() {
    for line in [
        "h1-case-adjust content-length Content-Type",
        "h1-case-adjust content-length",
    ] {
        let (code, _, err) = check_cfg(&format!("global\n    {line}\n"));
        assert_ne!(code, 0, "{line}");
        assert!(err.contains(":2]"), "{err}");
    }
    let dir = tempdir("case-adjust-bad");
    let file = dir.join("names");
    std::fs::write(
        &file,
        "content-length Content-Length\ncontent-length Content-LENGTH\n",
    )
    .unwrap();
    let (code, _, err) = check_cfg(&format!(
        "global\n    h1-case-adjust-file {}\n",
        file.display()
    ));
    assert_ne!(code, 0);
    assert!(
        err.contains("duplicate entry 'content-length' at line 2"),
        "{err}"
    );
}
