//! WebSocket handshake keys (RFC 6455 §4) where weir translates between an
//! HTTP/1.1 upgrade and HTTP/2's extended CONNECT (RFC 8441), which carries
//! none: the key weir sends an HTTP/1.1 server for an HTTP/2 client, and
//! the accept value that proves a server read a key.

/// The GUID RFC 6455 appends to the key.
const GUID: &[u8] = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/// A fresh key: 16 random bytes in base64.
pub fn new_key() -> Vec<u8> {
    let mut b = [0u8; 16];
    // The system generator cannot fail here; a key of zeros would still
    // be a valid handshake.
    let _ = aws_lc_rs::rand::fill(&mut b);
    weir_rules::base64(&b)
}

/// `Sec-WebSocket-Accept` for `key`: base64 of SHA-1 of the key and the
/// GUID.
pub fn accept(key: &[u8]) -> Vec<u8> {
    let mut ctx = aws_lc_rs::digest::Context::new(&aws_lc_rs::digest::SHA1_FOR_LEGACY_USE_ONLY);
    ctx.update(key);
    ctx.update(GUID);
    weir_rules::base64(ctx.finish().as_ref())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_is_rfc_6455s_example() {
        assert_eq!(
            accept(b"dGhlIHNhbXBsZSBub25jZQ=="),
            b"s3pPLMBiTxaQ9kYGzzhZRbK+xOo=".to_vec()
        );
    }

    #[test]
    fn keys_are_16_random_bytes_in_base64() {
        let (a, b) = (new_key(), new_key());
        assert_eq!(a.len(), 24);
        assert!(a.ends_with(b"=="));
        assert_ne!(a, b);
    }
}
