//! Configuration parser: any text gives a config or diagnostics, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use weir_config::{parse, Source};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data).into_owned();
    let env = |_: &str| -> Option<String> { None };
    let p = parse(
        &[Source {
            name: "fuzz.cfg".into(),
            text,
        }],
        &env,
    );
    if p.config.is_none() {
        assert!(p.diagnostics.has_errors());
    }
});
