//! HTTP/2 codecs: frames (RFC 9113), HPACK header compression (RFC 7541)
//! and its Huffman code. Pure: bytes in, values out; the connection's state
//! (streams, flow control, settings) lives with its user.

pub mod frame;
pub mod hpack;
pub mod huffman;
pub mod server;

/// Bytes from hexadecimal text with spaces, as the RFCs print examples.
#[cfg(test)]
fn hex(s: &str) -> Vec<u8> {
    let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()) // ok: test helper
        .collect()
}
