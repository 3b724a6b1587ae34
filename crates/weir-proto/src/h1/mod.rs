//! HTTP/1.1 message heads and body framing (RFC 9112), strict where the
//! protocol is ambiguous so that weir never reads a message differently
//! from the server behind it (request smuggling). Pure: bytes in, values
//! out; each parser is tri-state (`Ok(None)` = need more bytes).
//!
//! Choices, after HAProxy 2.6: a request with both Transfer-Encoding and
//! Content-Length is accepted with Transfer-Encoding winning, the
//! Content-Length removed, and the connection marked to close after the
//! response; identical repeated Content-Length values (and Host fields)
//! merge into one, different ones are a 400; a request whose last transfer
//! coding is not `chunked` is a 400, one with another coding before
//! `chunked` a 422. A head whose bytes are not exactly what weir would
//! write (bare LF, extra spaces, merged fields) says so
//! (`canonical: false`) and is written anew before it goes anywhere.

mod authority;
mod body;
mod chunked;
mod framing;
mod head;
pub mod htx;
pub mod status;
mod write;

pub use authority::normalized_authority;
pub use body::body_prefix;
pub use chunked::{ChunkEvent, ChunkedDecoder};
pub use head::{
    connection_has, connection_lists, decoded_request_head, other_connection_tokens, parse_request,
    parse_response, request_head, response_head, Header, Limits, RequestHead, RequestParts,
    ResponseHead, ResponseParts,
};
pub use write::{write_request, write_request_parts, write_response};

/// How a message body ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// No body.
    None,
    ContentLength(u64),
    Chunked,
    /// Responses only: the body ends when the server closes.
    UntilClose,
    /// CONNECT accepted or 101 Switching Protocols: bytes flow both ways.
    Tunnel,
}

/// Why a message was refused; `status()` is what the client gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum H1Error {
    #[error("bad request: {0}")]
    BadRequest(&'static str),
    #[error("request URI too long")]
    UriTooLong,
    #[error("request header section too large or too many headers")]
    HeadersTooLarge,
    #[error("unprocessable: {0}")]
    Unprocessable(&'static str),
    #[error("invalid response: {0}")]
    BadResponse(&'static str),
    #[error("an HTTP/1.0 GET, HEAD or DELETE request with a body")]
    BodyNotAllowed,
}

impl H1Error {
    /// The status code HAProxy answers with.
    pub fn status(self) -> u16 {
        match self {
            H1Error::BadRequest(_) => 400,
            H1Error::UriTooLong => 414,
            H1Error::HeadersTooLarge => 431,
            H1Error::Unprocessable(_) => 422,
            H1Error::BadResponse(_) => 502,
            H1Error::BodyNotAllowed => 413,
        }
    }
}

#[cfg(test)]
#[path = "h1_tests.rs"]
mod tests;
