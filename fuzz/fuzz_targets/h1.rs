//! HTTP/1 codec: requests, responses and chunked bodies never panic; a
//! parsed head never claims more bytes than it was given; no strict prefix
//! of a complete head parses.
#![no_main]

use libfuzzer_sys::fuzz_target;
use weir_proto::h1::{parse_request, parse_response, ChunkedDecoder, Limits};

fuzz_target!(|data: &[u8]| {
    let l = Limits::default();
    if let Ok(Some((_, used))) = parse_request(data, &l) {
        assert!(used <= data.len());
        for n in 0..used {
            assert!(!matches!(parse_request(&data[..n], &l), Ok(Some(_))));
        }
    }
    if let Ok(Some((_, used))) = parse_response(data, &l, "GET") {
        assert!(used <= data.len());
    }
    let mut d = ChunkedDecoder::default();
    if let Ok((_, used)) = d.feed(data) {
        assert!(used <= data.len());
    }
});
