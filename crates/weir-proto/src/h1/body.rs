//! The body bytes found after a head in a buffer, decoded by framing:
//! what `req.body` shows once a request body is buffered.

use super::{ChunkEvent, ChunkedDecoder, Framing, H1Error};

/// The body in `bytes` (the buffer after the head) and whether it is
/// complete. Chunked bodies are decoded; a body without framing is empty
/// and complete. `Err` for a malformed chunked body.
pub fn body_prefix(framing: Framing, bytes: &[u8]) -> Result<(Vec<u8>, bool), H1Error> {
    match framing {
        Framing::ContentLength(n) => {
            let have = bytes.len().min(usize::try_from(n).unwrap_or(usize::MAX));
            Ok((
                bytes.get(..have).unwrap_or_default().to_vec(),
                have as u64 == n,
            ))
        }
        Framing::Chunked => {
            let mut d = ChunkedDecoder::default();
            let (events, _) = d.feed(bytes)?;
            let mut out = Vec::new();
            for e in events {
                if let ChunkEvent::Data(r) = e {
                    out.extend_from_slice(bytes.get(r).unwrap_or_default());
                }
            }
            Ok((out, d.is_done()))
        }
        Framing::None | Framing::UntilClose | Framing::Tunnel => Ok((Vec::new(), true)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_length_prefix_and_complete() {
        assert_eq!(
            body_prefix(Framing::ContentLength(5), b"hel").unwrap(), // ok: unit test on fixed input
            (b"hel".to_vec(), false)
        );
        assert_eq!(
            body_prefix(Framing::ContentLength(5), b"helloGET /").unwrap(), // ok: unit test on fixed input
            (b"hello".to_vec(), true)
        );
    }

    #[test]
    fn chunked_is_decoded_at_every_prefix() {
        let msg = b"3;x=1\r\nabc\r\n2\r\nde\r\n0\r\nT: v\r\n\r\n";
        for i in 0..msg.len() {
            let (b, done) = body_prefix(Framing::Chunked, &msg[..i]).unwrap(); // ok: unit test on fixed input
            assert!(b"abcde".starts_with(&b), "{i}");
            assert!(!done, "{i}");
        }
        assert_eq!(
            body_prefix(Framing::Chunked, msg).unwrap(), // ok: unit test on fixed input
            (b"abcde".to_vec(), true)
        );
        assert!(body_prefix(Framing::Chunked, b"zz\r\n").is_err());
    }
}
