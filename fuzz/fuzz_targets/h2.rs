//! HTTP/2 codecs: the frame parser and the HPACK decoder never panic;
//! every strict prefix of a parsed frame asks for more; a Huffman-encoded
//! string decodes back to itself; the server connection takes any bytes
//! after the preface without panicking.
#![no_main]

use libfuzzer_sys::fuzz_target;
use weir_proto::h2::{frame, hpack, huffman, server};

struct Nothing;

impl server::Sink for Nothing {
    fn field(&mut self, _: u32, _: &[u8], _: &[u8]) {}
    fn head(&mut self, _: u32, _: bool) {}
    fn trailers(&mut self, _: u32) {}
    fn data(&mut self, _: u32, _: &[u8], _: bool) {}
    fn reset(&mut self, _: u32, _: u32) {}
    fn window(&mut self, _: u32) {}
}

fuzz_target!(|data: &[u8]| {
    if let Ok(Some((_, used))) = frame::parse(data, frame::MIN_MAX_FRAME) {
        assert!(used <= data.len());
        for n in 0..used {
            assert!(matches!(
                frame::parse(&data[..n], frame::MIN_MAX_FRAME),
                Ok(None)
            ));
        }
    }
    let mut d = hpack::Decoder::new(4096);
    let _ = d.decode(data, |_: &[u8], _: &[u8]| Ok::<(), hpack::HpackError>(()));
    assert!(d.table_size() <= 4096);
    let mut enc = Vec::new();
    huffman::encode(data, &mut enc);
    let mut back = Vec::new();
    assert!(huffman::decode(&enc, &mut back).is_ok());
    assert_eq!(back, data);
    let mut any = Vec::new();
    let _ = huffman::decode(data, &mut any);
    let mut s = server::Server::new(server::Config {
        max_concurrent_streams: 4,
        initial_window: 1000,
        max_frame: frame::MIN_MAX_FRAME,
        header_table_size: 4096,
        max_header_block: 4096,
    });
    let mut input = frame::PREFACE.to_vec();
    input.extend_from_slice(data);
    let _ = s.feed(&input, &mut Nothing);
});
