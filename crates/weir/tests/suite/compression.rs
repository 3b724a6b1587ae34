//! HTTP compression (`compression algo|type|offload`), differential
//! against haproxy 2.6: which responses are compressed (content type,
//! status, an encoding already there, `no-transform`, HEAD, HTTP/1.0, the
//! best q-value), the head (`Content-Encoding`, `Vary`, chunked, a weak
//! `ETag`), the server's `Accept-Encoding` with `offload`, and the body
//! decompressed, from a length or from chunks.

use crate::common::*;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// The body the origin sends for `/…`: `n` numbered lines.
fn text(n: usize) -> Vec<u8> {
    (0..n)
        .flat_map(|i| format!("line of text {i}\n").into_bytes())
        .collect()
}

/// An origin that answers by path: `/css` as text/css, `/chunked` in
/// chunks, `/etag` with a strong ETag, `/encoded` already encoded,
/// `/notransform` with `Cache-Control: no-transform`, `/404` a 404; it
/// says which `Accept-Encoding` it saw in `x-ae`.
fn origin() -> Server {
    Server::start(|mut c| {
        let Some(head) = read_head(&mut c) else {
            return;
        };
        let req = head;
        let path = req.split(' ').nth(1).unwrap_or("/").to_string();
        let head = req.starts_with("HEAD ");
        let ae = req
            .lines()
            .find_map(|l| {
                let (n, v) = l.split_once(':')?;
                n.eq_ignore_ascii_case("accept-encoding")
                    .then(|| v.trim().to_string())
            })
            .unwrap_or_else(|| "-".into());
        let body = text(3000);
        let (status, ctype, extra) = match path.as_str() {
            "/css" => ("200 OK", "text/css", ""),
            "/etag" => ("200 OK", "text/plain", "ETag: \"v1\"\r\n"),
            "/encoded" => ("200 OK", "text/plain", "Content-Encoding: br\r\n"),
            "/notransform" => ("200 OK", "text/plain", "Cache-Control: no-transform\r\n"),
            "/404" => ("404 Not Found", "text/plain", ""),
            _ => ("200 OK", "text/plain", ""),
        };
        let mut out =
            format!("HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nx-ae: {ae}\r\n{extra}");
        if path == "/chunked" {
            out.push_str("Transfer-Encoding: chunked\r\n\r\n");
            let mut o = out.into_bytes();
            if !head {
                for part in body.chunks(7000) {
                    o.extend_from_slice(format!("{:x}\r\n", part.len()).as_bytes());
                    o.extend_from_slice(part);
                    o.extend_from_slice(b"\r\n");
                }
                o.extend_from_slice(b"0\r\n\r\n");
            }
            let _ = c.write_all(&o);
        } else {
            out.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
            let mut o = out.into_bytes();
            if !head {
                o.extend_from_slice(&body);
            }
            let _ = c.write_all(&o);
        }
    })
}

/// The body of a raw answer, its chunks joined.
fn dechunk(mut b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let Some(i) = b.windows(2).position(|w| w == b"\r\n") else {
            return out;
        };
        let n = usize::from_str_radix(std::str::from_utf8(&b[..i]).unwrap().trim(), 16).unwrap();
        if n == 0 {
            return out;
        }
        out.extend_from_slice(&b[i + 2..i + 2 + n]);
        b = &b[i + 4 + n..];
    }
}

/// What a client sees of one request: the status line, the compression
/// fields, what the server was asked, and the body decoded.
fn ask(port: u16, method: &str, path: &str, version: &str, hs: &str) -> Vec<String> {
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    c.write_all(
        format!("{method} {path} HTTP/{version}\r\nHost: a\r\n{hs}Connection: close\r\n\r\n")
            .as_bytes(),
    )
    .unwrap();
    let mut got = Vec::new();
    let _ = c.read_to_end(&mut got);
    let at = got
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a head")
        + 4;
    let head = String::from_utf8_lossy(&got[..at]).into_owned();
    let field = |n: &str| {
        head.lines()
            .find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.eq_ignore_ascii_case(n).then(|| v.trim().to_string())
            })
            .unwrap_or_else(|| "-".into())
    };
    let mut body = got[at..].to_vec();
    if field("transfer-encoding") == "chunked" {
        body = dechunk(&body);
    }
    let decoded = match field("content-encoding").as_str() {
        "gzip" => {
            let mut d = Vec::new();
            flate2::read::GzDecoder::new(&body[..])
                .read_to_end(&mut d)
                .unwrap();
            d
        }
        "deflate" => {
            let mut d = Vec::new();
            flate2::read::ZlibDecoder::new(&body[..])
                .read_to_end(&mut d)
                .unwrap();
            d
        }
        _ => body,
    };
    let intact = decoded.is_empty() || decoded == text(3000);
    vec![
        head.lines().next().unwrap_or_default().to_string(),
        field("content-encoding"),
        field("transfer-encoding"),
        field("content-length"),
        field("vary"),
        field("etag"),
        field("x-ae"),
        format!("{} bytes, intact {intact}", decoded.len()),
    ]
}

#[test]
fn compressed_responses_beside_haproxy() {
    let srv = origin();
    let got = beside_haproxy(|start| {
        let (port, off) = (free_port(), free_port());
        let cfg = format!(
            "defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
             frontend fe\n    bind 127.0.0.1:{port}\n    default_backend gz\n\
             frontend fe2\n    bind 127.0.0.1:{off}\n    default_backend both\n\
             backend gz\n    compression algo gzip\n    compression type text/plain text/html\n    server s1 127.0.0.1:{p}\n\
             backend both\n    compression algo gzip deflate\n    compression offload\n    server s1 127.0.0.1:{p}\n",
            p = srv.port()
        );
        let _p = start(&cfg, port);
        wait_for("the second frontend", Duration::from_secs(5), || {
            listening(off).then_some(())
        });
        let gz = "Accept-Encoding: gzip\r\n";
        vec![
            ask(port, "GET", "/", "1.1", gz),
            ask(port, "GET", "/chunked", "1.1", gz),
            ask(port, "GET", "/", "1.1", ""),
            ask(port, "GET", "/css", "1.1", gz),
            ask(port, "GET", "/404", "1.1", gz),
            ask(port, "GET", "/encoded", "1.1", gz),
            ask(port, "GET", "/notransform", "1.1", gz),
            ask(port, "GET", "/etag", "1.1", gz),
            ask(port, "HEAD", "/", "1.1", gz),
            ask(port, "GET", "/", "1.0", gz),
            ask(
                port,
                "GET",
                "/",
                "1.1",
                &format!("{gz}User-Agent: Mozilla/4.0 (X11)\r\n"),
            ),
            ask(
                off,
                "GET",
                "/",
                "1.1",
                "Accept-Encoding: gzip;q=0.5, deflate;q=0.8\r\n",
            ),
            ask(off, "GET", "/chunked", "1.1", "Accept-Encoding: br\r\n"),
        ]
    });
    // What both did is what haproxy documents.
    let enc: Vec<&str> = got.iter().map(|r| r[1].as_str()).collect();
    assert_eq!(
        enc,
        ["gzip", "gzip", "-", "-", "-", "br", "-", "gzip", "-", "-", "-", "deflate", "-"],
        "{got:#?}"
    );
    assert!(
        got.iter().all(|r| r[7].ends_with("intact true")),
        "{got:#?}"
    );
    assert_eq!(got[0][4], "Accept-Encoding");
    assert_eq!(got[7][5], "W/\"v1\"");
    assert_eq!(
        got[11][6], "-",
        "offload: the server is not asked to compress"
    );
}
