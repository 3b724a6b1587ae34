//! The sizes haproxy counts for messages (pure): its byte counters (`%U`,
//! `%B`, the `bin`/`bout` statistics, `bytes_in|out_*` in stick tables)
//! count the size of its internal form of what it received (HTX), not
//! the bytes on the wire. Observed on haproxy 2.6: a head is 20 bytes,
//! plus the start line's three parts without their spaces, plus each
//! field's name and value without `: ` and line ends, plus 1 for the end
//! of the head; a body counts its data only (no chunk framing); a chunked
//! body's end counts 1 plus its trailer fields' names and values. Fields
//! as haproxy keeps them: a `Connection` field loses its `close` and
//! `keep-alive` tokens (and goes when none is left), values are trimmed.

use super::{Header, RequestHead, ResponseHead};

/// The fixed part of a start line.
const START: u64 = 20;
/// The end of a head, and of a chunked body's trailers.
const END: u64 = 1;

/// One field's size: its name and value.
fn plain(h: &Header) -> u64 {
    (h.name_bytes().len() + h.value().trim_ascii().len()) as u64
}

/// One received field's size: a `Connection` field without the tokens
/// haproxy's HTTP/1 reader takes out of it.
fn field(h: &Header) -> u64 {
    let value = h.value().trim_ascii();
    if !h.is("connection") {
        return plain(h);
    }
    // The tokens kept, joined with `, ` (no allocation: most requests
    // have this field).
    let (count, len) =
        super::head::other_connection_tokens(value).fold((0, 0), |(n, l), t| (n + 1, l + t.len()));
    if count == 0 {
        return 0;
    }
    (h.name_bytes().len() + len + 2 * (count - 1)) as u64
}

fn fields(headers: &[Header]) -> u64 {
    headers.iter().map(field).sum()
}

/// A request head as received. An HTTP/2 request (`minor` 2) is
/// `HTTP/2.0` with its target in absolute form when it has a scheme and
/// an authority (its `host` field), as haproxy makes it.
pub fn request(head: &RequestHead) -> u64 {
    // `HTTP/1.0`, `HTTP/1.1` and `HTTP/2.0` are all 8 bytes.
    let version = b"HTTP/1.1".len();
    let uri = if head.minor == 2 {
        let authority = head
            .headers
            .iter()
            .find(|h| h.is("host"))
            .map(|h| h.value().len());
        let absolute = match (head.scheme, authority) {
            (Some(s), Some(a)) if head.uri.starts_with('/') => s.len() + 3 + a,
            _ => 0,
        };
        absolute + head.uri.len()
    } else {
        head.uri.len()
    };
    let mut size = fields(&head.headers);
    if head.minor == 2 {
        // The `transfer-encoding: chunked` weir adds to an HTTP/2 body of
        // no announced length is not in haproxy's form of it.
        size -= head
            .headers
            .iter()
            .filter(|h| h.is("transfer-encoding"))
            .map(field)
            .sum::<u64>();
    }
    START + (head.method.len() + uri + version) as u64 + size + END
}

/// A response head as received (a 1xx one too).
pub fn response(head: &ResponseHead) -> u64 {
    let status = digits(head.status);
    START + (b"HTTP/1.1".len() + status + head.reason.len()) as u64 + fields(&head.headers) + END
}

/// How many decimal digits `n` is written with.
fn digits(n: u16) -> usize {
    n.checked_ilog10().map_or(1, |d| d as usize + 1)
}

/// A chunked body's end: its trailer lines (`name: value`, as received).
pub fn trailers(lines: &[Vec<u8>]) -> u64 {
    let line = |l: &Vec<u8>| match l.iter().position(|&b| b == b':') {
        Some(i) => {
            let (name, value) = l.split_at(i);
            (name.trim_ascii().len() + value.get(1..).unwrap_or_default().trim_ascii().len()) as u64
        }
        None => l.len() as u64,
    };
    END + lines.iter().map(line).sum::<u64>()
}

/// A whole response as weir writes it (a local answer: an error page, a
/// redirect, a `return`): its head's size, every field counted as it is
/// (haproxy makes these in its own form), and its body's, chunked or not;
/// the wire size when it cannot be read.
pub fn written_response(bytes: &[u8]) -> u64 {
    let limits = super::Limits::default();
    match super::parse_response(bytes, &limits, "GET") {
        Ok(Some((head, used))) => {
            let body = bytes.get(used..).unwrap_or_default();
            let body = match head.framing {
                super::Framing::Chunked => chunked_data(body),
                _ => body.len() as u64,
            };
            let start = (b"HTTP/1.1".len() + 3 + head.reason.len()) as u64;
            START + start + head.headers.iter().map(plain).sum::<u64>() + END + body
        }
        _ => bytes.len() as u64,
    }
}

/// The data and end of a whole chunked body.
fn chunked_data(body: &[u8]) -> u64 {
    let mut dec = super::ChunkedDecoder::default();
    let Ok((events, _)) = dec.feed(body) else {
        return body.len() as u64;
    };
    let mut n = 0;
    let mut trailer_lines = Vec::new();
    for ev in events {
        match ev {
            super::ChunkEvent::Data(r) => n += (r.end - r.start) as u64,
            super::ChunkEvent::Trailer(t) => trailer_lines.push(t),
            super::ChunkEvent::End => n += trailers(&trailer_lines),
        }
    }
    n
}

#[cfg(test)]
#[path = "htx_tests.rs"]
mod tests;
