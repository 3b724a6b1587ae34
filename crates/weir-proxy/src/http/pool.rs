//! Idle server connections of this thread, HAProxy's per-thread idle
//! pools: a finished exchange leaves its server connection here and a later
//! request to the same server takes it instead of connecting. Connections
//! the server closed are noticed when taken (and by a purge that runs while
//! the pool is not empty); each is closed after `pool-purge-delay`.

use crate::conn::{Conn, Io};
use crate::state::ProxyId;
use crate::state::ServerId;
use std::cell::RefCell;
use std::net::SocketAddr;
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
    idle: std::collections::HashMap<Key, Vec<IdleConn>>,
    count: usize,
    purging: bool,
}

thread_local! {
    static POOL: RefCell<Pool> = RefCell::new(Pool::default());
}

/// True when the server has not closed nor sent anything on `c` (a reused
/// connection must be silent). Costs a system call only when the event
/// loop saw the socket become readable.
pub fn alive<I: Io + ?Sized>(c: &I) -> bool {
    let mut cx = Context::from_waker(Waker::noop());
    match c.poll_read_ready(&mut cx) {
        Poll::Pending => true,
        Poll::Ready(Err(_)) => false,
        Poll::Ready(Ok(())) => {
            let mut b = [0u8; 1];
            matches!(c.try_recv(&mut b), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock)
        }
    }
}

/// Takes a live idle connection to server `srv` of backend `be` of
/// connection generation `gen` (older ones are closed); with
/// `proven_only`, only one that already carried several exchanges.
pub fn take(be: ProxyId, srv: ServerId, proven_only: bool, gen: u32) -> Option<IdleConn> {
    POOL.with(|p| {
        let mut p = p.borrow_mut();
        let p = &mut *p;
        let now = crate::clock::now();
        let list = p.idle.get_mut(&(be, srv))?;
        while let Some(i) = list.iter().rposition(|c| !proven_only || c.proven) {
            let c = list.swap_remove(i);
            p.count -= 1;
            if c.gen == gen && c.usable(now) {
                return Some(c);
            }
        }
        None
    })
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
    let start_purge = POOL.with(|p| {
        let mut p = p.borrow_mut();
        let p = &mut *p;
        if p.count >= slot.max_total {
            return false;
        }
        let list = p.idle.entry((slot.be, slot.srv)).or_default();
        if slot.max_per_server.is_some_and(|m| list.len() >= m) {
            return false;
        }
        list.push(IdleConn {
            conn,
            server_addr,
            source_addr,
            proven,
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

/// Closes expired and dead idle connections once a second while any are
/// left, then ends.
async fn purge() {
    loop {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let empty = POOL.with(|p| {
            let mut p = p.borrow_mut();
            let p = &mut *p;
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
    POOL.with(|p| {
        let mut p = p.borrow_mut();
        p.idle.clear();
        p.count = 0;
    });
}
