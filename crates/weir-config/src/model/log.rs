//! The logging parts of the model: `log` lines and their targets, `ring`
//! and `log-forward` sections.

use super::Bind;
use crate::addr::ServerAddr;
use crate::diag::Loc;

/// Syslog message layout of a `log` line's `format` (the codec's own).
pub use weir_proto::syslog::Format as LogFormatKind;

/// Where a `log` line sends messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogDest {
    Udp(ServerAddr),
    /// `ring@<name>`.
    Ring(String),
    Unix(String),
    Stdout,
    Stderr,
}

/// A resolved `log <target> …` line.
#[derive(Debug, Clone)]
pub struct LogTarget {
    pub dest: LogDest,
    /// `sample <ranges>:<size>`: of every `size` lines, those whose place
    /// (from 1) falls in one of the ranges.
    pub sample: Option<LogSample>,
    pub max_len: usize,
    /// `format …` when given (rfc3164 for a logger, the ring's format
    /// for a ring, the message's own when relayed).
    pub format: Option<LogFormatKind>,
    pub facility: u8,
    pub max_level: u8,
    pub min_level: u8,
    pub loc: Loc,
}

/// `log … sample <ranges>:<size>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogSample {
    /// Inclusive ranges, numbered from 1.
    pub ranges: Vec<(u32, u32)>,
    pub size: u32,
}

impl LogSample {
    /// Whether line number `n` (from 0, counted at this target) is sent.
    pub fn keeps(&self, n: u32) -> bool {
        let place = n % self.size.max(1) + 1;
        self.ranges.iter().any(|&(a, b)| (a..=b).contains(&place))
    }
}

/// A `ring` section: log lines kept in a buffer of `size` bytes and sent
/// on to TCP syslog servers.
#[derive(Debug, Clone)]
pub struct Ring {
    pub name: String,
    pub loc: Loc,
    /// How lines are written into it (`log ring@…` targets take it).
    pub format: LogFormatKind,
    pub maxlen: usize,
    pub size: usize,
    pub timeout_connect: Option<std::time::Duration>,
    pub timeout_server: Option<std::time::Duration>,
    pub servers: Vec<RingServer>,
}

/// A ring's `server <name> <addr> [ssl …] [log-proto legacy|octet-count]`.
#[derive(Debug, Clone)]
pub struct RingServer {
    pub name: String,
    pub addr: ServerAddr,
    pub tls: crate::tls::ServerTls,
    /// RFC 6587 octet counting (`<len> <msg>`) instead of one line each.
    pub octet_count: bool,
    pub loc: Loc,
}

/// A `log-forward` section: syslog received on `bind` (TCP) and
/// `dgram-bind` (UDP) lines, relayed to its `log` targets.
#[derive(Debug, Clone)]
pub struct LogForward {
    pub name: String,
    pub loc: Loc,
    pub binds: Vec<Bind>,
    pub dgram_binds: Vec<(crate::addr::BindAddr, Loc)>,
    pub logs: Vec<LogTarget>,
    /// Connections at once on its `bind` lines (10 by default).
    pub maxconn: u32,
    pub timeout_client: Option<std::time::Duration>,
    pub backlog: Option<u32>,
}
