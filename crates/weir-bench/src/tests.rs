//! Unit tests of the pure parts: request asks, sizes, response framing.

use crate::http1::{parse_head, Chunked, Framing};
use crate::server::{parse_request, parse_size, query_param};

#[test]
fn sizes_and_params() {
    assert_eq!(parse_size("0"), Some(0));
    assert_eq!(parse_size("16k"), Some(16384));
    assert_eq!(parse_size("2m"), Some(2 << 20));
    assert_eq!(parse_size("1g"), Some(1 << 30));
    assert_eq!(parse_size("x"), None);
    assert_eq!(query_param("/?s=1&t=5", "t"), Some("5"));
    assert_eq!(query_param("/?s=1", "t"), None);
}

#[test]
fn request_asks() {
    let a =
        parse_request("GET /?s=10k&t=3&c=1 HTTP/1.1\r\nHost: x\r\nsleep: 20\r\ntimes: 2\r\n\r\n");
    assert_eq!(
        (a.size, a.delay_ms, a.chunked, a.sleep_ms, a.times, a.close),
        (10240, 3, true, 20, 2, false)
    );
    assert!(parse_request("GET / HTTP/1.0\r\n\r\n").close);
    assert!(!parse_request("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").close);
    assert!(parse_request("GET / HTTP/1.1\r\nConnection: close\r\n\r\n").close);
    assert_eq!(
        parse_request("POST / HTTP/1.1\r\nContent-Length: 7\r\n\r\n").body_len,
        7
    );
}

#[test]
fn response_heads() {
    let h = parse_head(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello")
        .unwrap()
        .unwrap();
    assert_eq!(
        (h.status, h.body, h.close, h.head_len),
        (200, Framing::Length(5), false, 38)
    );
    let h =
        parse_head(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n")
            .unwrap()
            .unwrap();
    assert_eq!((h.body, h.close), (Framing::Chunked, true));
    let h = parse_head(b"HTTP/1.1 204 No Content\r\n\r\n")
        .unwrap()
        .unwrap();
    assert_eq!(h.body, Framing::Length(0));
    assert!(parse_head(b"HTTP/1.1 200 OK\r\n").unwrap().is_none());
    assert!(parse_head(b"SSH-2.0\r\n\r\n").is_err());
    let full = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n";
    for n in 0..full.len() {
        assert!(parse_head(&full[..n]).unwrap().is_none(), "prefix {n}");
    }
}

#[test]
fn chunked_bodies_in_any_split() {
    let body = b"5\r\nhello\r\n3;ext=1\r\nabc\r\n0\r\nTrailer: x\r\n\r\n";
    for split in 0..body.len() {
        let mut c = Chunked::default();
        let mut pending = body[..split].to_vec();
        let used = c.feed(&pending).unwrap();
        pending.drain(..used);
        pending.extend_from_slice(&body[split..]);
        let used = c.feed(&pending).unwrap();
        assert!(c.done(), "split {split}");
        assert_eq!(used, pending.len());
    }
    assert!(Chunked::default().feed(b"zz\r\n").is_err());
    assert!(Chunked::default().feed(b"2\r\nabX\r\n").is_err());
}
