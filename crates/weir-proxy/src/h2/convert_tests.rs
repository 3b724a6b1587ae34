use super::*;
use weir_proto::h1::{parse_response, Limits};

fn parts(method: &str, uri: &str, headers: &[(&str, &str)]) -> Parts {
    let mut b = http::Request::builder().method(method).uri(uri);
    for (n, v) in headers {
        b = b.header(*n, *v);
    }
    b.body(()).unwrap().into_parts().0
}

fn text(v: Vec<u8>) -> String {
    String::from_utf8(v).unwrap()
}

#[test]
fn a_get_becomes_origin_form_with_host_from_authority() {
    let p = parts(
        "GET",
        "https://example.com:8443/a/b?x=1",
        &[("host", "ignored"), ("accept", "*/*")],
    );
    assert_eq!(
        text(request_head(&p, false).unwrap()),
        "GET /a/b?x=1 HTTP/1.1\r\nhost: example.com:8443\r\naccept: */*\r\n\r\n"
    );
}

#[test]
fn without_authority_the_host_field_stays() {
    let p = parts("GET", "/x", &[("host", "h.test")]);
    assert_eq!(
        text(request_head(&p, false).unwrap()),
        "GET /x HTTP/1.1\r\nhost: h.test\r\n\r\n"
    );
}

#[test]
fn cookies_are_joined_and_bodies_framed() {
    let p = parts(
        "POST",
        "http://h/up",
        &[("cookie", "a=1"), ("cookie", "b=2"), ("te", "trailers")],
    );
    let h = text(request_head(&p, true).unwrap());
    assert!(h.contains("cookie: a=1; b=2\r\n"), "{h}");
    assert!(h.ends_with("transfer-encoding: chunked\r\n\r\n"), "{h}");
    let p = parts("POST", "http://h/up", &[("content-length", "5")]);
    let h = text(request_head(&p, true).unwrap());
    assert!(
        h.contains("content-length: 5\r\n") && !h.contains("chunked"),
        "{h}"
    );
    // No body: no framing added.
    let p = parts("POST", "http://h/up", &[]);
    assert!(!text(request_head(&p, false).unwrap()).contains("chunked"));
}

#[test]
fn connection_fields_and_bad_te_are_malformed() {
    for (n, v) in [
        ("connection", "close"),
        ("keep-alive", "1"),
        ("transfer-encoding", "chunked"),
        ("upgrade", "websocket"),
        ("proxy-connection", "x"),
    ] {
        let p = parts("GET", "http://h/", &[(n, v)]);
        assert_eq!(
            request_head(&p, false),
            Err(Malformed::ConnectionField),
            "{n}"
        );
    }
    let p = parts("GET", "http://h/", &[("te", "gzip")]);
    assert_eq!(request_head(&p, false), Err(Malformed::Te));
}

#[test]
fn connect_uses_the_authority() {
    let p = parts("CONNECT", "example.com:443", &[]);
    assert_eq!(
        text(request_head(&p, true).unwrap()),
        "CONNECT example.com:443 HTTP/1.1\r\nhost: example.com:443\r\n\r\n"
    );
}

#[test]
fn responses_lose_connection_fields() {
    let raw = b"HTTP/1.1 201 Created\r\nConnection: keep-alive\r\nX-A: 1\r\nTransfer-Encoding: chunked\r\nSet-Cookie: a\r\nSet-Cookie: b\r\n\r\n";
    let (head, _) = parse_response(raw, &Limits::default(), "GET")
        .unwrap()
        .unwrap();
    let r = response(&head);
    assert_eq!(r.status(), 201);
    assert_eq!(r.headers().get("x-a").unwrap(), "1");
    assert_eq!(r.headers().get_all("set-cookie").iter().count(), 2);
    assert!(r.headers().get("connection").is_none());
    assert!(r.headers().get("transfer-encoding").is_none());
}

#[test]
fn trailers_both_ways() {
    let map = trailers(&[
        b"Grpc-Status: 0".to_vec(),
        b"grpc-message:  ok ".to_vec(),
        b"junk".to_vec(),
    ]);
    assert_eq!(map.get("grpc-status").unwrap(), "0");
    assert_eq!(map.get("grpc-message").unwrap(), "ok");
    assert_eq!(map.len(), 2);
    let end = text(last_chunk(Some(&map)));
    assert!(
        end.starts_with("0\r\n") && end.ends_with("\r\n\r\n"),
        "{end}"
    );
    assert!(end.contains("grpc-status: 0\r\n"), "{end}");
    assert_eq!(text(last_chunk(None)), "0\r\n\r\n");
}

#[test]
fn requests_to_servers_go_in_absolute_form() {
    let raw = b"POST /api?x=1 HTTP/1.1\r\nHost: svc.test\r\nConnection: keep-alive\r\nTE: trailers\r\nContent-Type: application/grpc\r\nTransfer-Encoding: chunked\r\n\r\n";
    let (req, _) = weir_proto::h1::parse_request(raw, &Limits::default())
        .unwrap()
        .unwrap();
    let r = upstream_request(&req, "http", "10.0.0.1:80").unwrap();
    assert_eq!(r.uri(), "http://svc.test/api?x=1");
    assert_eq!(r.method(), "POST");
    assert_eq!(r.headers().get("te").unwrap(), "trailers");
    assert_eq!(r.headers().get("content-type").unwrap(), "application/grpc");
    for gone in ["host", "connection", "transfer-encoding"] {
        assert!(r.headers().get(gone).is_none(), "{gone}");
    }
    let raw = b"GET / HTTP/1.1\r\n\r\n";
    let (req, _) = weir_proto::h1::parse_request(raw, &Limits::default())
        .unwrap()
        .unwrap();
    let r = upstream_request(&req, "https", "10.0.0.1:443").unwrap();
    assert_eq!(r.uri(), "https://10.0.0.1:443/");
    let raw = b"CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\n\r\n";
    let (req, _) = weir_proto::h1::parse_request(raw, &Limits::default())
        .unwrap()
        .unwrap();
    assert!(upstream_request(&req, "http", "x").is_none());
}

#[test]
fn responses_from_servers_get_http1_framing() {
    let r = http::Response::builder()
        .status(200)
        .header("content-type", "text/plain")
        .body(())
        .unwrap();
    let (parts, ()) = r.into_parts();
    let (h, chunked) = response_head(&parts, false, false);
    assert!(chunked);
    assert_eq!(
        text(h),
        "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ntransfer-encoding: chunked\r\n\r\n"
    );
    let (h, chunked) = response_head(&parts, true, false);
    assert!(!chunked && text(h).contains("content-length: 0\r\n"));
    let (h, chunked) = response_head(&parts, false, true);
    assert!(
        !chunked && !text(h.clone()).contains("content-length") && !text(h).contains("chunked")
    );
    let r = http::Response::builder()
        .status(204)
        .header("content-length", "0")
        .body(())
        .unwrap();
    let (h, chunked) = response_head(&r.into_parts().0, false, false);
    assert!(!chunked && text(h).starts_with("HTTP/1.1 204 No Content\r\n"));
}
