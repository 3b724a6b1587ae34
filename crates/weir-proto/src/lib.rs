//! weir-proto: pure codecs with no I/O. Each parser is tri-state:
//! `Ok(Some((value, consumed)))`, `Ok(None)` = need more bytes, or `Err`.

#![forbid(unsafe_code)]

pub mod h1;
pub mod h2;
pub mod proxy_protocol;
