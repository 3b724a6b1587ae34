//! weir-proto: pure codecs with no I/O. Each parser is tri-state:
//! `Ok(Some((value, consumed)))`, `Ok(None)` = need more bytes, or `Err`.
// Network input never panics: no unwrap, expect or unchecked indexing
// outside tests (the modules that still index say why their indexes hold).
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)
)]
#![forbid(unsafe_code)]

pub mod fcgi;
pub mod h1;
pub mod h2;
pub mod netscaler;
pub mod proxy_protocol;
pub mod socks4;
pub mod spop;
pub mod syslog;
