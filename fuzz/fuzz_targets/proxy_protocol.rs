//! PROXY protocol parser: never panics; a parsed header re-encodes to bytes
//! that parse to the same addresses; every prefix of valid input asks for more.
#![no_main]

use libfuzzer_sys::fuzz_target;
use weir_proto::proxy_protocol::{encode_v1, encode_v2, parse, ProxyHeader};

fuzz_target!(|data: &[u8]| {
    if let Ok(Some((h, used))) = parse(data) {
        assert!(used <= data.len());
        if let ProxyHeader::Inet { src, dst } = h {
            for enc in [encode_v1(src, dst), encode_v2(src, dst)] {
                assert_eq!(parse(&enc).unwrap().unwrap().0, h);
            }
        }
        for n in 0..used {
            assert!(!matches!(parse(&data[..n]), Ok(Some(_))));
        }
    }
});
