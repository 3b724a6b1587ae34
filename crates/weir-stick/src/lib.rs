//! weir-stick: stick tables as pure state — keys, the data types of
//! HAProxy 2.6 (counters, tags, frequency counters, the server), expiry and
//! eviction, shared by every thread. The clock is passed in (milliseconds
//! on a wrapping 32-bit tick, as HAProxy's), so every figure is
//! reproducible in tests.

#![forbid(unsafe_code)]
// Keys come from requests: no unwrap, expect or unchecked index outside
// tests.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)
)]

pub mod data;
pub mod freq;
pub mod key;
pub mod peers;
pub mod table;

pub use data::{Column, DataType, Schema, StoreSpec};
pub use freq::FreqCtr;
pub use key::{Key, KeyType};
pub use table::{Clock, Entry, Event, ReadValue, Table, TableDef, Tracker};

#[cfg(test)]
mod data_tests;
#[cfg(test)]
mod freq_tests;
#[cfg(test)]
mod key_tests;
#[cfg(test)]
mod peers_tests;
#[cfg(test)]
mod table_tests;
