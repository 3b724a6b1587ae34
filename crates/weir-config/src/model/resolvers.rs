//! `resolvers` sections (manual §5.3.2).

use crate::diag::Loc;

/// A `resolvers` section (manual §5.3.2): the name servers asked and how
/// long each kind of answer is kept.
#[derive(Debug, Clone)]
pub struct Resolvers {
    pub name: String,
    pub loc: Loc,
    /// `nameserver <id> <ip>:<port>` (UDP), and those of
    /// `/etc/resolv.conf` with `parse-resolv-conf`.
    pub nameservers: Vec<(String, std::net::SocketAddr)>,
    /// The name servers asked over TCP (`nameserver <id> tcp@<ip>:<port>`),
    /// by address.
    pub tcp: Vec<std::net::SocketAddr>,
    /// `accepted_payload_size` (EDNS0; 512 without it).
    pub payload_size: u16,
    /// `resolve_retries`: queries sent before a resolution times out.
    pub retries: u32,
    /// `timeout resolve`: between two resolutions of a name.
    pub resolve: std::time::Duration,
    /// `timeout retry`: between two tries of one resolution.
    pub retry: std::time::Duration,
    /// `hold <status> <period>`.
    pub hold: ResolverHold,
}

/// How long a resolution's last answer stands once answers change
/// (`hold valid|nx|other|refused|timeout|obsolete`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResolverHold {
    pub valid: std::time::Duration,
    pub nx: std::time::Duration,
    pub other: std::time::Duration,
    pub refused: std::time::Duration,
    pub timeout: std::time::Duration,
    pub obsolete: std::time::Duration,
}

impl Default for ResolverHold {
    fn default() -> Self {
        let s = std::time::Duration::from_secs;
        ResolverHold {
            valid: s(10),
            nx: s(30),
            other: s(30),
            refused: s(30),
            timeout: s(30),
            obsolete: s(0),
        }
    }
}
