//! Heads written back to bytes in canonical form: `METHOD SP target SP
//! HTTP/1.x CRLF`, each field as `name: value CRLF`, then CRLF. What weir
//! sends whenever a head changed or did not arrive in that form.

use super::{Header, RequestHead, RequestParts, ResponseHead};

fn fields(out: &mut Vec<u8>, hs: &[Header]) {
    for h in hs {
        out.extend_from_slice(h.name_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(h.value());
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"\r\n");
}

/// The request line and fields of `req`.
pub fn write_request(req: &RequestHead) -> Vec<u8> {
    request(&req.method, &req.uri, req.minor, &req.headers)
}

/// The same for a request not yet a head (a bad one, for its capture).
pub fn write_request_parts(req: &RequestParts) -> Vec<u8> {
    request(&req.method, &req.uri, req.minor, &req.headers)
}

fn request(method: &str, uri: &str, minor: u8, headers: &[Header]) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(method.as_bytes());
    out.push(b' ');
    out.extend_from_slice(uri.as_bytes());
    out.extend_from_slice(if minor == 0 {
        b" HTTP/1.0\r\n"
    } else {
        b" HTTP/1.1\r\n"
    });
    fields(&mut out, headers);
    out
}

/// The status line and fields of `res`.
pub fn write_response(res: &ResponseHead) -> Vec<u8> {
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
    fields(&mut out, &res.headers);
    out
}
