//! Runtime API and stats page inputs: any command line splits and parses
//! into commands or one-line errors, any form body and page request parse
//! or are refused, any scrape query gives a scope or a refusal; never a
//! panic, and every answer stays one line.
#![no_main]

use libfuzzer_sys::fuzz_target;
use weir_admin::cli::{self, CliError, Level};
use weir_admin::page::{PageForm, PageRequest};
use weir_admin::prom::Scope;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for words in cli::split(&text) {
        assert!(!words.is_empty());
        match cli::parse(&words) {
            Ok(cmd) => {
                let _ = cmd.level();
            }
            Err(CliError::Usage(m)) => assert!(!m.contains('\n'), "{m:?}"),
            Err(CliError::Unknown) => {
                let t = cli::unknown(&words, Level::Admin);
                assert!(t.starts_with("Unknown command"));
            }
        }
    }
    let _ = PageForm::parse(data);
    let _ = PageRequest::parse(&text);
    let _ = Scope::parse(&text);
    let _ = weir_admin::sess::parse_id(&text);
});
