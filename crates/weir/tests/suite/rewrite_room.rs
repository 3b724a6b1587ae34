//! The room rewrites have and `strict-mode`, differential against haproxy
//! 2.6: with `tune.bufsize 2048` and `tune.maxrewrite 128`, a request or
//! response whose body filled its buffer takes one 60-byte header more
//! but not two; a rewrite that does not fit is a 500 under `strict-mode
//! on` (the default, again at each rule set) and left out under `off`; the
//! failures count as `wrew`, the 500s as `eint`.

use crate::common::*;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

const V: &str = "123456789012345678901234567890123456789012345678901234567890";

/// An origin that reads a request (and its body), and answers with the
/// `x-` fields it got in `x-got`, the path in `x-req`, and 2000 bytes of
/// body in the same write as the head.
fn origin() -> Server {
    Server::start(|mut c| {
        let mut buf = Vec::new();
        let mut b = [0u8; 4096];
        let end = loop {
            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
            match c.read(&mut b) {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&b[..n]),
            }
        };
        let head = String::from_utf8_lossy(&buf[..end]).into_owned();
        let lower = head.to_ascii_lowercase();
        let len: usize = lower
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        let mut rest = vec![0u8; len.saturating_sub(buf.len() - end)];
        if c.read_exact(&mut rest).is_err() {
            return;
        }
        let path = head.split(' ').nth(1).unwrap_or("").to_string();
        let got: Vec<&str> = lower
            .lines()
            .filter(|l| l.starts_with("x-hdr"))
            .map(|l| l.split(':').next().unwrap_or(""))
            .collect();
        let mut out = format!(
            "HTTP/1.1 200 OK\r\nx-req: {path}\r\nx-got: {}\r\ncontent-length: 2000\r\n\r\n",
            got.join(",")
        )
        .into_bytes();
        out.extend(std::iter::repeat_n(b'b', 2000));
        let _ = c.write_all(&out);
    })
}

fn cfg(port: u16, sock: &std::path::Path, origin: u16) -> String {
    format!(
        "global\n    tune.bufsize 2048\n    tune.maxrewrite 128\n    stats socket {} level admin\n\
         defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n    option http-buffer-request\n\
         frontend fe\n    bind 127.0.0.1:{port}\n\
         \x20   http-request set-header x-hdr1 {V}\n\
         \x20   http-request set-header x-hdr2 {V} if {{ path /req2 }}\n\
         \x20   http-request strict-mode off if {{ path /req3 }}\n\
         \x20   http-request set-header x-hdr3 {V} if {{ path /req3 }}\n\
         \x20   http-response set-header x-rsp4 {V} if {{ res.hdr(x-req) /rsp4 }}\n\
         \x20   default_backend be\n\
         backend be\n\
         \x20   http-request set-header x-hdr3 {V} if {{ path /req4 }}\n\
         \x20   http-response set-header x-rsp1 {V}\n\
         \x20   http-response set-header x-rsp2 {V} if {{ res.hdr(x-req) /rsp2 }}\n\
         \x20   http-response strict-mode off if {{ res.hdr(x-req) /rsp3 }}\n\
         \x20   http-response set-header x-rsp3 {V} if {{ res.hdr(x-req) /rsp3 }}\n\
         \x20   server s 127.0.0.1:{origin}\n",
        sock.display()
    )
}

/// Each request's status, what the server got and the `x-rsp` fields of
/// the answer; then the frontend's and backend's `wrew` and `eint`.
fn run(port: u16, sock: &std::path::Path) -> (Vec<String>, Vec<String>) {
    let mut out = Vec::new();
    for (path, body) in [
        ("/req1", 2000),
        ("/req2", 2000),
        ("/req3", 2000),
        ("/req4", 2000),
        ("/rsp1", 0),
        ("/rsp2", 0),
        ("/rsp3", 0),
        ("/rsp4", 0),
    ] {
        let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut req = format!(
            "GET {path} HTTP/1.1\r\nhost: a\r\ncontent-length: {body}\r\nconnection: close\r\n\r\n"
        )
        .into_bytes();
        req.extend(std::iter::repeat_n(b'a', body));
        c.write_all(&req).unwrap();
        let mut got = Vec::new();
        let _ = c.read_to_end(&mut got);
        let text = String::from_utf8_lossy(&got).to_ascii_lowercase();
        let status = text.split(' ').nth(1).unwrap_or("?").to_string();
        let fields: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("x-got") || l.starts_with("x-rsp"))
            .map(|l| l.split(':').next().unwrap_or("").trim())
            .collect();
        let server_got = text
            .lines()
            .find_map(|l| l.strip_prefix("x-got:"))
            .unwrap_or("")
            .trim();
        out.push(format!(
            "{path} {status} [{}] got=[{server_got}]",
            fields.join(",")
        ));
    }
    let rows = show_stat(sock);
    let counts = rows
        .iter()
        .filter(|r| matches!(r["svname"].as_str(), "FRONTEND" | "BACKEND"))
        .map(|r| {
            format!(
                "{}/{} wrew={} eint={}",
                r["pxname"], r["svname"], r["wrew"], r["eint"]
            )
        })
        .collect();
    (out, counts)
}

#[test]
fn rewrites_that_find_no_room_fail_as_in_haproxy() {
    let o = origin();
    let dir = tempdir("rewrite-room");
    let (ws, hs) = (dir.join("w.sock"), dir.join("h.sock"));
    let (wp, hp) = (free_port(), free_port());
    let Some(_h) = Haproxy::start(&cfg(hp, &hs, o.port()), hp) else {
        panic!("haproxy is not installed: tests/run installs it");
    };
    let _w = Weir::start(&cfg(wp, &ws, o.port()), wp);
    let theirs = run(hp, &hs);
    let mine = run(wp, &ws);
    assert_eq!(mine, theirs);
    // What the case shows, whoever runs it.
    assert!(
        mine.0.iter().any(|l| l.starts_with("/req2 500")),
        "{mine:?}"
    );
    assert!(
        mine.0
            .iter()
            .any(|l| l.starts_with("/req3 200") && l.ends_with("got=[x-hdr1]")),
        "{mine:?}"
    );
}
