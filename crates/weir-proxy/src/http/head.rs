//! Heads as the exchange edits them: written back to bytes (by the codec)
//! after weir changed them or when they did not arrive canonical; the
//! `Connection` field; a field's value.

use weir_proto::h1::Header;

/// The request line and headers of `req`.
pub use weir_proto::h1::write_request as request;
/// The status line and headers of `res`.
pub use weir_proto::h1::write_response as response;

/// Whether a `Connection` header lists `token`.
pub use weir_proto::h1::connection_has;

/// Says `value` (or nothing) of the connection, as haproxy rewrites the
/// field: the `close` and `keep-alive` tokens of every `Connection` field
/// go (a field left empty goes with them), the others (`upgrade`, the
/// names of hop-by-hop fields) stay, and `connection: value` is added.
pub fn set_connection(hs: &mut Vec<Header>, value: Option<&str>) {
    hs.retain_mut(|h| {
        if !h.is("connection") {
            return true;
        }
        let kept: Vec<&[u8]> = weir_proto::h1::other_connection_tokens(h.value()).collect();
        if kept.is_empty() {
            return false;
        }
        let v = kept.join(&b", "[..]);
        if v != h.value() {
            h.set_value(&v);
        }
        true
    });
    if let Some(v) = value {
        hs.push(Header::new("connection", v.as_bytes()));
    }
}

/// The first value of header `name`.
pub fn get<'a>(hs: &'a [Header], name: &str) -> Option<&'a [u8]> {
    hs.iter().find(|h| h.is(name)).map(|h| h.value())
}

/// `h1-case-adjust`: the names `map` lists (lower case → spelling) take
/// their spelling; whether one changed.
pub fn adjust_case(headers: &mut [weir_proto::h1::Header], map: &[(String, String)]) -> bool {
    let mut changed = false;
    for h in headers.iter_mut() {
        if let Some((_, to)) = map.iter().find(|(from, _)| h.is(from)) {
            if h.name() != to {
                h.set_name(to);
                changed = true;
            }
        }
    }
    changed
}
