//! What each `peers` section's sessions are doing, for `show peers`: the
//! peers module writes it as its sessions come and go, the runtime API
//! reads it.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Instant;

use weir_stick::Table;

/// The sections whose local peer is this process, once they are bound.
#[derive(Debug, Default)]
pub struct Board {
    sections: OnceLock<Vec<Arc<SectionBoard>>>,
}

impl Board {
    /// Sets the sections (once, at start).
    pub fn set(&self, s: Vec<Arc<SectionBoard>>) {
        let _ = self.sections.set(s);
    }

    pub fn sections(&self) -> &[Arc<SectionBoard>] {
        self.sections.get().map_or(&[], Vec::as_slice)
    }
}

/// One section: its peers and shared tables, in the configuration's
/// order.
#[derive(Debug)]
pub struct SectionBoard {
    pub name: String,
    /// The process's start, as `show peers` dates a section.
    pub started: std::time::SystemTime,
    pub peers: Vec<PeerBoard>,
    /// The shared tables: their name on the wire and the table.
    pub tables: Vec<(String, Arc<Table>)>,
    /// A peer has pushed its tables to this process.
    pub synced: AtomicBool,
    /// When the resynchronisation from a peer is given up.
    pub resync_until: Instant,
    /// Turns of its sessions' loops.
    pub calls: AtomicU64,
}

/// One peer line.
#[derive(Debug)]
pub struct PeerBoard {
    pub name: String,
    pub local: bool,
    pub addr: Option<SocketAddr>,
    live: Mutex<PeerLive>,
}

/// Where a peer's link stands (HAProxy's last status names).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum LinkStatus {
    #[default]
    None,
    /// Connecting, or the last try failed.
    Conn,
    /// A session runs.
    Esta,
}

impl LinkStatus {
    pub fn name(self) -> &'static str {
        match self {
            LinkStatus::None => "NONE",
            LinkStatus::Conn => "CONN",
            LinkStatus::Esta => "ESTA",
        }
    }
}

/// A peer's counters and its session, if one runs.
#[derive(Debug, Default, Clone)]
pub struct PeerLive {
    pub status: LinkStatus,
    pub last_hdshk: Option<Instant>,
    pub reconnect: Option<Instant>,
    pub heartbeat: Option<Instant>,
    pub tx_hbt: u64,
    pub rx_hbt: u64,
    /// Sessions closed for silence.
    pub no_hbt: u64,
    pub new_conn: u64,
    pub proto_err: u64,
    /// Crossing sessions refused.
    pub coll: u64,
    pub sess: Option<SessView>,
}

/// A running session, as its last turn left it.
#[derive(Debug, Default, Clone)]
pub struct SessView {
    /// The session's number for this peer (they count up).
    pub id: u64,
    /// The peer connected to us (haproxy then shows the transport).
    pub incoming: bool,
    pub tls: bool,
    /// The other end's address and ours.
    pub src: Option<SocketAddr>,
    pub addr: Option<SocketAddr>,
    pub calls: u64,
    /// The local table of the last update received, and of the last sent.
    pub last_in: Option<usize>,
    pub last_out: Option<usize>,
    /// Per shared table (in the section's order).
    pub tables: Vec<TableView>,
}

/// What a session knows of one shared table.
#[derive(Debug, Default, Clone, Copy)]
pub struct TableView {
    /// The id the peer gave its table of that name (0: none yet).
    pub remote_id: u64,
    /// The data types it stores, as a bit per type.
    pub remote_data: u64,
    /// The last of our updates it acknowledged, the last we sent, the last
    /// of its updates we received.
    pub last_acked: u32,
    pub last_pushed: u32,
    pub last_get: u32,
}

impl PeerBoard {
    pub fn new(name: String, local: bool, addr: Option<SocketAddr>) -> PeerBoard {
        PeerBoard {
            name,
            local,
            addr,
            live: Mutex::new(PeerLive::default()),
        }
    }

    pub fn live(&self) -> MutexGuard<'_, PeerLive> {
        self.live.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl SectionBoard {
    pub fn turn(&self) {
        self.calls.fetch_add(1, Ordering::Relaxed);
    }
}
