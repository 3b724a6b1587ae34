//! HTTP/1 codec: requests, responses and chunked bodies never panic; a
//! parsed head never claims more bytes than it was given; no strict prefix
//! of a complete head parses; a head written back by weir parses again,
//! in canonical form, to the same message and the same framing (what weir
//! forwards is read by the next hop as weir read it).
#![no_main]

use libfuzzer_sys::fuzz_target;
use weir_proto::h1::{
    parse_request, parse_response, write_request, write_response, ChunkedDecoder, Limits,
};

fuzz_target!(|data: &[u8]| {
    let l = Limits::default();
    if let Ok(Some((head, used))) = parse_request(data, &l) {
        assert!(used <= data.len());
        for n in 0..used {
            assert!(!matches!(parse_request(&data[..n], &l), Ok(Some(_))));
        }
        let out = write_request(&head);
        let (again, n) = parse_request(&out, &l)
            .expect("a written head parses")
            .expect("a written head is complete");
        assert_eq!(n, out.len());
        assert!(again.canonical, "{:?}", String::from_utf8_lossy(&out));
        assert_eq!(
            (&again.method, &again.uri, again.minor, &again.headers, again.framing),
            (&head.method, &head.uri, head.minor, &head.headers, head.framing)
        );
    }
    if let Ok(Some((head, used))) = parse_response(data, &l, "GET") {
        assert!(used <= data.len());
        let out = write_response(&head);
        let (again, n) = parse_response(&out, &l, "GET")
            .expect("a written head parses")
            .expect("a written head is complete");
        assert_eq!(n, out.len());
        assert!(again.canonical || head.reason.is_empty());
        assert_eq!(
            (again.status, again.minor, &again.headers, again.framing),
            (head.status, head.minor, &head.headers, head.framing)
        );
    }
    let mut d = ChunkedDecoder::default();
    if let Ok((_, used)) = d.feed(data) {
        assert!(used <= data.len());
    }
});
