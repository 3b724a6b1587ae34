//! NetScaler Client IP header parser: never panics; a parsed header takes
//! no more than it was given; every shorter prefix asks for more.
#![no_main]

use libfuzzer_sys::fuzz_target;
use weir_proto::netscaler::parse;

fuzz_target!(|data: &[u8]| {
    // The magic the input starts with, so that the fuzzer reaches past it.
    let magic = data
        .get(..4)
        .map_or(1, |m| u32::from_be_bytes(m.try_into().unwrap()));
    if let Ok(Some((_, used))) = parse(data, magic) {
        assert!(used <= data.len());
        for n in 0..used {
            assert_eq!(parse(&data[..n], magic), Ok(None), "{n}");
        }
    }
});
