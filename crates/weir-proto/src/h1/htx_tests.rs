//! Unit tests of `htx.rs`: the `%U` and `%B` haproxy 2.6 logged for the
//! same messages.

use super::super::{parse_request, parse_response, Limits};
use super::*;

fn req(wire: &str) -> u64 {
    let (head, _) = parse_request(wire.as_bytes(), &Limits::default())
        .unwrap()
        .unwrap();
    request(&head)
}

fn res(wire: &str) -> u64 {
    let (head, _) = parse_response(wire.as_bytes(), &Limits::default(), "GET")
        .unwrap()
        .unwrap();
    response(&head)
}

#[test]
fn request_heads_as_haproxy_counts_them() {
    assert_eq!(req("GET /cl HTTP/1.1\r\nHost: a\r\n\r\n"), 40);
    assert_eq!(
        req("GET /cl HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"),
        40
    );
    assert_eq!(
        req("GET /cl HTTP/1.1\r\nHost: a\r\nConnection: foo, keep-alive\r\n\r\n"),
        53
    );
    assert_eq!(
        req("GET /cl HTTP/1.1\r\nHost: a\r\nProxy-Connection: close\r\nKeep-Alive: 1\r\n\r\n"),
        72
    );
    assert_eq!(req("GET /cl HTTP/1.0\r\n\r\n"), 35);
    assert_eq!(req("GET http://a/cl HTTP/1.1\r\nHost: a\r\n\r\n"), 48);
    assert_eq!(
        req("GET /cl HTTP/1.1\r\nHost:    a   \r\nX-Long:  v  v \r\n\r\n"),
        50
    );
    assert_eq!(req("GET /cl HTTP/1.1\r\nHost: a\r\nX-Empty:\r\n\r\n"), 47);
    // The body's 3 bytes come on top: haproxy logged 59.
    assert_eq!(
        req("POST /cl HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\n"),
        56
    );
}

#[test]
fn response_heads_and_local_answers_as_haproxy_counts_them() {
    assert_eq!(
        res("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-A: b\r\n\r\n"),
        53
    );
    assert_eq!(res("HTTP/1.1 204 No Content\r\n\r\n"), 42);
    assert_eq!(
        res("HTTP/1.1 200 OK\r\nConnection: foo, close\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n"),
        62
    );
    assert_eq!(res("HTTP/1.1 100 Continue\r\n\r\n"), 40);
    let ret = "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 5\r\n\r\nhello";
    assert_eq!(written_response(ret.as_bytes()), 76);
    let redirect =
        "HTTP/1.1 302 Found\r\ncontent-length: 0\r\nlocation: /x\r\ncache-control: no-cache\r\n\r\n";
    assert_eq!(written_response(redirect.as_bytes()), 83);
    // A chunked body: its data, then 1 and the trailers (haproxy: 68).
    let chunked =
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\nX-T: 1\r\n\r\n";
    assert_eq!(written_response(chunked.as_bytes()), 68);
}

#[test]
fn trailers_count_their_names_and_values() {
    assert_eq!(trailers(&[]), 1);
    assert_eq!(trailers(&[b"X-T: y".to_vec()]), 5);
}
