//! The responses weir generates itself: HAProxy's default error pages (same
//! status lines, headers and bodies, so clients and monitors see the same
//! bytes) and those replaced by `errorfile`.

use weir_config::Proxy;

use weir_proto::h1::status::PAGES;

/// An error page as HAProxy sends it. `parse_error` selects the form used
/// when the request itself could not be parsed (capitalised header names
/// and `Connection: close`, as HAProxy's raw messages; haproxy's 422 has
/// no `Connection` field, though the connection closes all the same).
pub fn page(status: u16, parse_error: bool) -> Vec<u8> {
    let (reason, text) = PAGES
        .iter()
        .find(|(s, _, _)| *s == status)
        .map_or(("Error", "An error occurred."), |(_, r, t)| (*r, *t));
    let body = format!("<html><body><h1>{status} {reason}</h1>\n{text}\n</body></html>\n");
    if parse_error {
        let close = if status == 422 {
            ""
        } else {
            "Connection: close\r\n"
        };
        format!(
            "HTTP/1.1 {status} {reason}\r\nContent-length: {}\r\nCache-Control: no-cache\r\n{close}Content-Type: text/html\r\n\r\n{body}",
            body.len()
        )
        .into_bytes()
    } else {
        format!(
            "HTTP/1.1 {status} {reason}\r\ncontent-length: {}\r\ncache-control: no-cache\r\ncontent-type: text/html\r\n\r\n{body}",
            body.len()
        )
        .into_bytes()
    }
}

/// Whether haproxy ends the client connection after its own page for
/// `status` (its 400 and 408 pages say `connection: close`; after the
/// others, a deny included, the connection carries the next request).
pub fn closes(status: u16) -> bool {
    matches!(status, 400 | 408)
}

/// The response for `status` in a proxy: its `errorfile`, else the default.
pub fn response(px: &Proxy, status: u16, parse_error: bool) -> Vec<u8> {
    response_of(&[px], status, parse_error)
}

/// The response for `status`: the first of `pxs` (the backend, then the
/// frontend, as haproxy 2.6 looks) with an `errorfile` or `errorloc` for
/// it, else the default page.
pub fn response_of(pxs: &[&Proxy], status: u16, parse_error: bool) -> Vec<u8> {
    pxs.iter()
        .find_map(|px| px.http.errorfiles.iter().find(|(s, _)| *s == status))
        .map_or_else(|| page(status, parse_error), |(_, b)| b.to_vec())
}

/// The response for `status` rendered on `ctx`: the first of `pxs` with
/// an `http-error` reply for it (formats rendered per response), an
/// `errorfile` or an `errorloc`, else the default page.
pub fn reply_of(pxs: &[&Proxy], status: u16, ctx: &dyn weir_rules::Ctx) -> Vec<u8> {
    for px in pxs {
        if let Some((_, r)) = px.http.error_replies.iter().find(|(s, _)| *s == status) {
            return super::rules::return_response(r, px, ctx);
        }
        if let Some((_, b)) = px.http.errorfiles.iter().find(|(s, _)| *s == status) {
            return b.to_vec();
        }
    }
    page(status, false)
}

/// `resp` with the header `line` (without CRLF) added at the end of its
/// head, unless a header of that name is there already.
pub fn with_header(mut resp: Vec<u8>, line: &str) -> Vec<u8> {
    let name = line.split(':').next().unwrap_or(line).to_ascii_lowercase();
    if let Some(end) = resp.windows(4).position(|w| w == b"\r\n\r\n") {
        let head = String::from_utf8_lossy(resp.get(..end).unwrap_or_default());
        let head = head.to_ascii_lowercase();
        if !head.contains(&format!("\r\n{name}:")) {
            let ins = format!("{line}\r\n");
            resp.splice(end + 2..end + 2, ins.bytes());
        }
    }
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_have_exact_lengths_and_haproxy_bytes() {
        let p = page(503, false);
        let text = String::from_utf8(p).unwrap_or_default();
        assert!(text.starts_with("HTTP/1.1 503 Service Unavailable\r\ncontent-length: 107\r\n"));
        let (_, body) = text.split_once("\r\n\r\n").unwrap_or_default();
        assert_eq!(body.len(), 107);
        let p = String::from_utf8(page(400, true)).unwrap_or_default();
        assert!(p.contains("Content-length: 90\r\n") && p.contains("Connection: close\r\n"));
        let p = String::from_utf8(page(408, true)).unwrap_or_default();
        assert!(p.contains("Content-length: 110\r\n"));
        let p = String::from_utf8(page(422, true)).unwrap_or_default();
        assert!(p.starts_with("HTTP/1.1 422 Unprocessable Content\r\nContent-length: 116\r\n"));
        assert!(!p.contains("Connection"));
        for (s, len) in [
            (502, 107),
            (504, 92),
            (403, 93),
            (500, 97),
            (501, 136),
            (413, 106),
        ] {
            let p = String::from_utf8(page(s, false)).unwrap_or_default();
            assert!(
                p.contains(&format!("content-length: {len}\r\n")),
                "{s}: {p}"
            );
        }
    }
}
