//! The runtime API's pure half: command lines parsed into typed
//! [`cli::Command`]s with the level each one needs, the help text, and
//! HAProxy 2.6's output formats (`show stat` CSV, `show info`, `show
//! servers state`) rendered from values the caller gathers. No sockets and
//! no clock: weir-proxy feeds it live state and sends what it renders.

#![forbid(unsafe_code)]
#![cfg_attr(not(test), deny(clippy::indexing_slicing))]

pub mod cli;
pub mod cli_set;
pub mod errors;
pub mod page;
pub mod prom;
pub mod sess;
pub mod ssl;
pub mod stat;
pub mod table;
pub mod typed;
mod typed_meta;
