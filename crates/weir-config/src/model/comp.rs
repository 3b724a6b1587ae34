//! HTTP compression settings of a proxy (`compression algo|type|offload`,
//! manual §4.2), `cache` sections (manual §6) and `filter` lines (§9).

/// A compression algorithm of `compression algo`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompAlgo {
    /// No compression, but the body goes chunked (as haproxy's).
    Identity,
    /// RFC 1952.
    Gzip,
    /// RFC 1950 (zlib).
    Deflate,
    /// RFC 1951 without a wrapper, announced as `deflate`.
    RawDeflate,
}

impl CompAlgo {
    /// The name in the configuration.
    pub fn parse(name: &str) -> Option<CompAlgo> {
        Some(match name {
            "identity" => CompAlgo::Identity,
            "gzip" => CompAlgo::Gzip,
            "deflate" => CompAlgo::Deflate,
            "raw-deflate" => CompAlgo::RawDeflate,
            _ => return None,
        })
    }
    /// The token of `Accept-Encoding` and `Content-Encoding` it answers to.
    pub fn token(self) -> &'static str {
        match self {
            CompAlgo::Identity => "identity",
            CompAlgo::Gzip => "gzip",
            CompAlgo::Deflate | CompAlgo::RawDeflate => "deflate",
        }
    }
}

/// A proxy's `compression` lines.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Compression {
    pub algos: Vec<CompAlgo>,
    /// `compression type`: content types (prefixes) to compress; empty:
    /// any.
    pub types: Vec<String>,
    /// `compression offload`: the server is not asked to compress.
    pub offload: bool,
}

/// A `filter` line (manual §9): they say in which order a proxy's
/// filters see the data (compression after the cache, as haproxy
/// requires).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Filter {
    /// `filter compression`.
    Compression,
    /// `filter cache <name>`.
    Cache(String),
    /// `filter trace … quiet`: a debugging filter that forwards what it
    /// sees unchanged and prints nothing.
    Trace,
    /// `filter spoe`: the engine's id (in the proxy's `spoe` list).
    Spoe(String),
}

/// A `cache <name>` section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cache {
    pub name: String,
    pub loc: crate::diag::Loc,
    /// `total-max-size` in bytes (given in megabytes).
    pub total_max_size: u64,
    /// `max-object-size` in bytes (at most half the total by default).
    pub max_object_size: u64,
    /// `max-age` in seconds (60 by default).
    pub max_age: u64,
    /// `process-vary on`: responses with `Vary` are cached by their
    /// secondary key.
    pub process_vary: bool,
    /// `max-secondary-entries` (10 by default).
    pub max_secondary_entries: u32,
}
