//! weir-balance: the server set of a backend and its balancing algorithms,
//! as pure state machines driven by events (up/down, weight, connection taken
//! and released). The clock and the random source are passed in, so every
//! decision is reproducible in tests.

#![forbid(unsafe_code)]
// Request-derived keys (hashes of sources, URIs, headers) pick servers
// here: no unwrap, expect or unchecked index outside tests, except in the
// server set, which indexes only its own list by positions it made.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)
)]

pub mod hash;
pub mod health;
pub mod rng;
#[allow(clippy::indexing_slicing)]
mod set;

pub use health::Health;
pub use rng::Rng;
pub use set::{Algo, Pick, ServerInfo, ServerSet};
