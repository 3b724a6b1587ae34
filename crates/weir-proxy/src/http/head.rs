//! Heads written back to bytes after weir changed them (headers added or
//! removed); unchanged heads are forwarded as received.

use weir_proto::h1::{Header, RequestHead, ResponseHead};

fn headers(out: &mut Vec<u8>, hs: &[Header]) {
    for h in hs {
        out.extend_from_slice(h.name().as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(h.value());
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"\r\n");
}

/// The request line and headers of `req`.
pub fn request(req: &RequestHead) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(req.method.as_bytes());
    out.push(b' ');
    out.extend_from_slice(req.uri.as_bytes());
    out.extend_from_slice(if req.minor == 0 {
        b" HTTP/1.0\r\n"
    } else {
        b" HTTP/1.1\r\n"
    });
    headers(&mut out, &req.headers);
    out
}

/// The status line and headers of `res`.
pub fn response(res: &ResponseHead) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(if res.minor == 0 {
        b"HTTP/1.0 "
    } else {
        b"HTTP/1.1 "
    });
    out.extend_from_slice(res.status.to_string().as_bytes());
    out.push(b' ');
    out.extend_from_slice(res.reason.as_bytes());
    out.extend_from_slice(b"\r\n");
    headers(&mut out, &res.headers);
    out
}

/// Whether a `Connection` header lists `token`.
pub use weir_proto::h1::connection_has;

/// Replaces every `Connection` header by one with `value` (or none).
pub fn set_connection(hs: &mut Vec<Header>, value: Option<&str>) {
    hs.retain(|h| !h.is("connection"));
    if let Some(v) = value {
        hs.push(Header::new("connection", v.as_bytes()));
    }
}

/// The first value of header `name`.
pub fn get<'a>(hs: &'a [Header], name: &str) -> Option<&'a [u8]> {
    hs.iter().find(|h| h.is(name)).map(|h| h.value())
}
