//! weir-proto: pure codecs with no I/O. Each parser is tri-state:
//! `Ok(Some((value, consumed)))`, `Ok(None)` = need more bytes, or `Err`.
// Network input never panics: no unwrap or expect outside tests.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]
#![forbid(unsafe_code)]

pub mod h1;
pub mod h2;
pub mod proxy_protocol;
