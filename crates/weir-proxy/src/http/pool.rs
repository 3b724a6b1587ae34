//! Idle server connections of this thread, HAProxy's per-thread idle
//! pools: a finished exchange leaves its server connection here and a later
//! request to the same server takes it instead of connecting. A thread
//! whose pool has none for the server takes one from another thread's, as
//! haproxy's threads do, and moves it under its own event loop. Connections
//! the server closed are noticed when taken (and by a purge that runs while
//! the pool is not empty); each is closed after `pool-purge-delay`.

use crate::conn::{Conn, Io};
use crate::state::ProxyId;
use crate::state::ServerId;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::time::Duration;
use tokio::time::Instant;

/// An idle connection to a server.
pub struct IdleConn {
    pub conn: Conn,
    pub server_addr: Option<SocketAddr>,
    pub source_addr: Option<SocketAddr>,
    /// It has carried more than one exchange (the server keeps connections
    /// alive): what `http-reuse aggressive` asks of a first request.
    pub proven: bool,
    /// What it was opened for beyond its server (see
    /// [`crate::connect::Connected::key`]): only a request with the same
    /// takes it.
    key: u64,
    /// When `pool-purge-delay` closes it (`None`: never).
    expires: Option<Instant>,
    /// Its server's connection generation when it was left here.
    gen: u32,
}

impl IdleConn {
    fn usable(&self, now: Instant) -> bool {
        self.expires.is_none_or(|e| now < e) && alive(&self.conn)
    }
}

/// (backend proxy index, server index).
type Key = (ProxyId, ServerId);

#[derive(Default)]
struct Pool {
    /// Keyed by small numbers weir gives: a fast hash, unseeded.
    idle: rustc_hash::FxHashMap<Key, Vec<IdleConn>>,
    count: usize,
    purging: bool,
}

/// A thread's pool, which the other threads may take from.
type Shared = Arc<Mutex<Pool>>;

thread_local! {
    static POOL: Shared = register();
}

/// Every thread's pool with its worker number, for the others to take
/// from (and `show servers conn` to count).
static POOLS: Mutex<Vec<(usize, Shared)>> = Mutex::new(Vec::new());

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn register() -> Shared {
    let p = Shared::default();
    lock(&POOLS).push((crate::stats::thread_slot(), p.clone()));
    p
}

/// Runs `f` on this thread's pool.
fn with_pool<R>(f: impl FnOnce(&mut Pool) -> R) -> R {
    POOL.with(|p| f(&mut lock(p)))
}

/// True when the server has not closed nor sent anything on `c` (a reused
/// connection must be silent). Costs a system call only when the event
/// loop saw the socket become readable.
pub fn alive<I: Io + ?Sized>(c: &I) -> bool {
    let readable = match c.transport().and_then(Conn::seen_readable) {
        Some(r) => r,
        None => {
            let mut cx = Context::from_waker(Waker::noop());
            match c.poll_read_ready(&mut cx) {
                Poll::Pending => false,
                Poll::Ready(Err(_)) => return false,
                Poll::Ready(Ok(())) => true,
            }
        }
    };
    if !readable {
        return true;
    }
    let mut b = [0u8; 1];
    matches!(c.try_recv(&mut b), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock)
}

/// Takes a live idle connection to server `srv` of backend `be` of
/// connection generation `gen` (older ones are closed) opened for `key`; with
/// `proven_only`, only one that already carried several exchanges. This
/// thread's pool first, then the other threads'.
pub fn take(be: ProxyId, srv: ServerId, key: u64, proven_only: bool, gen: u32) -> Option<IdleConn> {
    let want = Want {
        key: (be, srv),
        conn_key: key,
        proven_only,
        gen,
        movable: false,
    };
    with_pool(|p| p.take(&want)).or_else(|| steal(&want))
}

/// What a request takes from a pool.
struct Want {
    key: Key,
    /// The connection's own key.
    conn_key: u64,
    proven_only: bool,
    gen: u32,
    /// Only a connection that can move to another thread's event loop.
    movable: bool,
}

impl Pool {
    fn take(&mut self, w: &Want) -> Option<IdleConn> {
        let now = crate::clock::now();
        let list = self.idle.get_mut(&w.key)?;
        let fits = |c: &IdleConn| {
            c.key == w.conn_key
                && (!w.proven_only || c.proven)
                && (!w.movable || crate::http::lot::Plain::can_take(&c.conn))
        };
        while let Some(i) = list.iter().rposition(fits) {
            let c = list.swap_remove(i);
            self.count -= 1;
            if c.gen == w.gen && c.usable(now) {
                return Some(c);
            }
        }
        None
    }
}

/// An idle connection from another thread's pool, moved under this
/// thread's event loop (a pool busy on its own thread is passed over).
fn steal(w: &Want) -> Option<IdleConn> {
    let w = Want {
        movable: true,
        ..*w
    };
    let c = POOL.with(|mine| {
        lock(&POOLS)
            .iter()
            .filter(|(_, p)| !Arc::ptr_eq(p, mine))
            .find_map(|(_, p)| p.try_lock().ok()?.take(&w))
    })?;
    let conn = crate::http::lot::rehome(c.conn)?;
    Some(IdleConn { conn, ..c })
}

/// Where a connection may be left: its server, and the limits.
pub struct Slot {
    pub be: ProxyId,
    pub srv: ServerId,
    /// `pool-max-conn` of the server (`None` = no limit).
    pub max_per_server: Option<usize>,
    /// `pool-purge-delay` of the server (`None` = kept until it dies).
    pub purge_delay: Option<Duration>,
    /// Idle connections this thread may hold in all (HAProxy keeps no more
    /// than a fraction of its descriptors idle).
    pub max_total: usize,
    /// The server's connection generation the connection belongs to.
    pub gen: u32,
    /// What the connection was opened for beyond its server.
    pub key: u64,
}

/// Leaves a server connection for later requests; it is closed instead
/// when a limit is reached.
pub fn put(
    slot: &Slot,
    conn: Conn,
    server_addr: Option<SocketAddr>,
    source_addr: Option<SocketAddr>,
    proven: bool,
) {
    // Bytes held for the end of the pass go now (the connection may be
    // taken by another thread); one that cannot take them is not idle.
    if conn.try_flush().is_err() {
        return;
    }
    // `pool-max-conn` counts the server's idle connections of every
    // thread, as haproxy's does.
    if slot
        .max_per_server
        .is_some_and(|m| idle_everywhere((slot.be, slot.srv)) >= m)
    {
        return;
    }
    let start_purge = with_pool(|p| {
        if p.count >= slot.max_total {
            return false;
        }
        let list = p.idle.entry((slot.be, slot.srv)).or_default();
        list.push(IdleConn {
            conn,
            server_addr,
            source_addr,
            proven,
            key: slot.key,
            expires: slot.purge_delay.map(|d| crate::clock::now() + d),
            gen: slot.gen,
        });
        p.count += 1;
        !std::mem::replace(&mut p.purging, true)
    });
    if start_purge {
        crate::profile::spawn::<crate::profile::Purge, _>(purge());
    }
}

/// The idle connections to a server in every thread's pool.
fn idle_everywhere(key: Key) -> usize {
    let pools: Vec<(usize, Shared)> = lock(&POOLS).clone();
    pools
        .iter()
        .map(|(_, p)| lock(p).idle.get(&key).map_or(0, Vec::len))
        .sum()
}

/// A server's idle connections, as `show servers conn` counts them.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Census {
    /// Those that carried one exchange only (haproxy's "unsafe" list).
    pub unproven: usize,
    /// Those that carried several (its "safe" list).
    pub proven: usize,
    /// (worker number, count) of each thread holding some.
    pub per_thread: Vec<(usize, usize)>,
}

impl Census {
    pub fn total(&self) -> usize {
        self.unproven + self.proven
    }
}

/// Counts the idle connections to server `srv` of backend `be` in every
/// thread's pool.
pub fn census(be: ProxyId, srv: ServerId) -> Census {
    let pools: Vec<(usize, Shared)> = lock(&POOLS).clone();
    let mut c = Census::default();
    for (thread, p) in &pools {
        let p = lock(p);
        let Some(list) = p.idle.get(&(be, srv)) else {
            continue;
        };
        let proven = list.iter().filter(|i| i.proven).count();
        c.proven += proven;
        c.unproven += list.len() - proven;
        if !list.is_empty() {
            c.per_thread.push((*thread, list.len()));
        }
    }
    c
}

/// Closes expired and dead idle connections once a second while any are
/// left, then ends.
async fn purge() {
    loop {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let empty = with_pool(|p| {
            let now = crate::clock::now();
            let mut count = 0;
            p.idle.retain(|_, list| {
                list.retain(|c| c.usable(now));
                count += list.len();
                !list.is_empty()
            });
            p.count = count;
            if count == 0 {
                p.purging = false;
            }
            count == 0
        });
        if empty {
            return;
        }
    }
}

/// Closes every idle connection of this thread (soft stop).
pub fn clear() {
    with_pool(|p| {
        p.idle.clear();
        p.count = 0;
    });
}
