//! weir-balance: the server set of a backend and its balancing algorithms,
//! as pure state machines driven by events (up/down, weight, connection taken
//! and released). The clock and the random source are passed in, so every
//! decision is reproducible in tests.

#![forbid(unsafe_code)]

pub mod hash;
pub mod health;
pub mod rng;
mod set;

pub use health::Health;
pub use rng::Rng;
pub use set::{Algo, Pick, ServerInfo, ServerSet};
