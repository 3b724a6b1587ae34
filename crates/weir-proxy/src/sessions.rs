//! The live client connections of each worker thread, for `show sess` and
//! `shutdown session`: a thread-local table that only its own thread
//! writes (no lock, no atomic on the connection path; 24 bytes a
//! connection), read and changed by the runtime API through jobs run on
//! that thread.

use crate::state::ServerId;
use crate::state::Shared;
use crate::state::{FrontendId, ProxyId};
use std::cell::RefCell;
use std::collections::HashMap;
use std::future::Future;
use std::net::SocketAddr;
use std::os::fd::RawFd;
use std::pin::Pin;

use std::task::{Context, Poll, Waker};
use std::time::Duration;

/// A connection's place in its thread's table (`seq` tells a reused slot).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Reg {
    idx: u32,
    seq: u32,
}

/// No server chosen yet.
const NONE: u32 = u32::MAX;
/// No backend chosen yet (proxies past this index are shown as none).
const NO_BE: u16 = u16::MAX;
/// Ages are kept in tenths of a second (13 years fit).
const TICK_MS: u64 = 100;

#[derive(Clone, Copy)]
struct Entry {
    /// 0: a free slot.
    seq: u32,
    fd: RawFd,
    srv: u32,
    /// Tenths of a second from [`epoch`] to the accept.
    since: u32,
    fe: u16,
    be: u16,
    killed: bool,
    /// Idle, its session asleep ([`crate::http::lot`]).
    asleep: bool,
}

// The table's cost per connection.
const _: () = assert!(std::mem::size_of::<Entry>() == 24);

#[derive(Default)]
struct Table {
    entries: Vec<Entry>,
    free: Vec<u32>,
    next_seq: u32,
    /// Clients whose address came in a PROXY header (few: kept aside).
    proxied: HashMap<u32, SocketAddr>,
}

thread_local! {
    static TABLE: RefCell<Table> = RefCell::default();
    /// The sessions of this thread waiting to learn whether they were
    /// killed (see [`killed`]).
    static WATCHERS: RefCell<Watchers> = RefCell::default();
}

/// Wakers of the sessions watching for a kill, woken all at once by
/// [`wake_all`]. One thread's own: a watch costs no lock and no atomic
/// (a `tokio::sync::Notify` locked its waiter list at every poll of every
/// exchange, 1.5 % of an HTTP/2 request's CPU).
#[derive(Default)]
struct Watchers {
    /// Bumped by every [`wake_all`], which empties `slots`: a watch
    /// registered in an older round has no slot any more.
    round: u64,
    slots: Vec<Option<Waker>>,
    free: Vec<usize>,
}

impl Watchers {
    fn insert(&mut self, w: Waker) -> usize {
        match self.free.pop() {
            Some(i) => {
                if let Some(s) = self.slots.get_mut(i) {
                    *s = Some(w);
                }
                i
            }
            None => {
                self.slots.push(Some(w));
                self.slots.len() - 1
            }
        }
    }
}

/// This thread's watcher list, as an address (a watch is only ever polled
/// and dropped on its session's thread; the address makes sure).
fn watchers_here() -> usize {
    WATCHERS.with(|w| std::ptr::from_ref(w) as usize)
}

use crate::clock::epoch;

/// Enters an accepted client connection in this thread's table.
pub fn register(fd: RawFd, fe: FrontendId) -> Reg {
    let since = (crate::clock::now()
        .into_std()
        .saturating_duration_since(epoch())
        .as_millis() as u64
        / TICK_MS) as u32;
    TABLE.with(|t| {
        let mut t = t.borrow_mut();
        t.next_seq = t.next_seq.wrapping_add(1).max(1);
        let e = Entry {
            seq: t.next_seq,
            fd,
            fe: u16::try_from(fe.index()).unwrap_or(NO_BE),
            be: NO_BE,
            srv: NONE,
            killed: false,
            asleep: false,
            since,
        };
        let free = t.free.pop();
        let idx = match free.and_then(|i| Some((i, t.entries.get_mut(i as usize)?))) {
            Some((i, slot)) => {
                *slot = e;
                i
            }
            None => {
                t.entries.push(e);
                (t.entries.len() - 1) as u32
            }
        };
        Reg { idx, seq: e.seq }
    })
}

fn with_entry<R>(r: Reg, f: impl FnOnce(&mut Entry) -> R) -> Option<R> {
    TABLE.with(|t| {
        let mut t = t.borrow_mut();
        t.entries
            .get_mut(r.idx as usize)
            .filter(|e| e.seq == r.seq && r.seq != 0)
            .map(f)
    })
}

/// Removes a connection that ended (before its socket is reused).
pub fn unregister(r: Reg) {
    TABLE.with(|t| {
        let mut t = t.borrow_mut();
        if let Some(e) = t.entries.get_mut(r.idx as usize) {
            if e.seq == r.seq && r.seq != 0 {
                e.seq = 0;
                t.free.push(r.idx);
                if !t.proxied.is_empty() {
                    t.proxied.remove(&r.idx);
                }
            }
        }
    });
}

/// Records the backend and server a connection's stream goes to.
pub fn set_target(r: Reg, be: ProxyId, srv: Option<ServerId>) {
    with_entry(r, |e| {
        e.be = u16::try_from(be.index()).unwrap_or(NO_BE);
        e.srv = srv.map_or(NONE, |s| s.index() as u32);
    });
}

/// Records the client address a PROXY header gave.
pub fn set_peer(r: Reg, addr: SocketAddr) {
    TABLE.with(|t| {
        let mut t = t.borrow_mut();
        if t.entries
            .get(r.idx as usize)
            .is_some_and(|e| e.seq == r.seq)
        {
            t.proxied.insert(r.idx, addr);
        }
    });
}

/// Records whether the connection's session sleeps.
pub fn set_asleep(r: Reg, v: bool) {
    with_entry(r, |e| e.asleep = v);
}

/// Whether `shutdown session` asked this connection to end.
pub fn is_killed(r: Reg) -> bool {
    with_entry(r, |e| e.killed).unwrap_or(false)
}

/// Why [`killed`] returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kill {
    /// `shutdown session`.
    Admin,
    /// Hard stop.
    Stop,
}

/// Completes when this connection is killed by `shutdown session` or by a
/// hard stop.
pub fn killed(sh: &Shared, r: Reg) -> Killed<'_> {
    Killed { sh, r, slot: None }
}

/// See [`killed`].
pub struct Killed<'a> {
    sh: &'a Shared,
    r: Reg,
    /// Where its waker is: (watcher list, slot, round).
    slot: Option<(usize, usize, u64)>,
}

impl Future for Killed<'_> {
    type Output = Kill;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Kill> {
        let me = &mut *self;
        let round = WATCHERS.with_borrow(|w| w.round);
        if let Some((_, i, r)) = me.slot {
            if r == round {
                // No kill since it looked: only keep the waker current.
                // (A replaced waker is dropped once the list is released:
                // dropping one may end a task, and with it a watch.)
                let _old = WATCHERS.with_borrow_mut(|w| match w.slots.get_mut(i) {
                    Some(Some(k)) if !k.will_wake(cx.waker()) => {
                        Some(std::mem::replace(k, cx.waker().clone()))
                    }
                    _ => None,
                });
                return Poll::Pending;
            }
        }
        me.slot = None;
        if *me.sh.killing.borrow() {
            return Poll::Ready(Kill::Stop);
        }
        if is_killed(me.r) {
            return Poll::Ready(Kill::Admin);
        }
        let i = WATCHERS.with_borrow_mut(|w| w.insert(cx.waker().clone()));
        me.slot = Some((watchers_here(), i, round));
        Poll::Pending
    }
}

impl Drop for Killed<'_> {
    fn drop(&mut self) {
        let Some((list, i, r)) = self.slot else {
            return;
        };
        // The waker taken out is dropped after the list is released.
        let _old = WATCHERS.try_with(|w| {
            if std::ptr::from_ref(w) as usize != list {
                return None;
            }
            let mut w = w.borrow_mut();
            if w.round != r {
                return None;
            }
            let slot = w.slots.get_mut(i)?;
            let old = slot.take();
            w.free.push(i);
            old
        });
    }
}

/// Wakes the calling thread's sessions to look at their kill flags.
fn wake_all() {
    let woken = WATCHERS.with_borrow_mut(|w| {
        w.round += 1;
        w.free.clear();
        std::mem::take(&mut w.slots)
    });
    for k in woken.into_iter().flatten() {
        k.wake();
    }
}

/// A session as this thread sees it, to be named on the main thread.
#[derive(Debug, Clone)]
pub struct Raw {
    pub id: u64,
    pub uniq: u64,
    pub fd: RawFd,
    pub fe: FrontendId,
    pub be: Option<ProxyId>,
    pub srv: Option<ServerId>,
    pub peer: Option<SocketAddr>,
    pub local: Option<SocketAddr>,
    pub unix: bool,
    pub age: Duration,
    pub thread: usize,
    pub killed: bool,
    pub asleep: bool,
}

fn make_id(thread: usize, idx: u32, seq: u32) -> u64 {
    ((thread as u64) << 56) | (u64::from(idx) << 32) | u64::from(seq)
}

/// The thread, slot and sequence an id names.
fn split_id(id: u64) -> (usize, Reg) {
    (
        (id >> 56) as usize,
        Reg {
            idx: ((id >> 32) & 0x00ff_ffff) as u32,
            seq: id as u32,
        },
    )
}

/// This thread's sessions (run on the worker thread itself).
fn snapshot(thread: usize) -> Vec<Raw> {
    let now_ms = epoch().elapsed().as_millis() as u64;
    TABLE.with(|t| {
        let t = t.borrow();
        t.entries
            .iter()
            .enumerate()
            .filter(|(_, e)| e.seq != 0)
            .map(|(i, e)| {
                let fd = BorrowedFd(e.fd);
                let sa = socket2::SockRef::from(&fd);
                let peer = sa.peer_addr().ok();
                let unix = peer.as_ref().is_some_and(|a| a.as_socket().is_none());
                Raw {
                    id: make_id(thread, i as u32, e.seq),
                    uniq: u64::from(e.seq),
                    fd: e.fd,
                    fe: FrontendId::new(usize::from(e.fe)),
                    be: (e.be != NO_BE).then_some(ProxyId::new(usize::from(e.be))),
                    srv: (e.srv != NONE).then_some(ServerId::new(e.srv as usize)),
                    peer: t
                        .proxied
                        .get(&(i as u32))
                        .copied()
                        .or_else(|| peer.and_then(|a| a.as_socket())),
                    local: sa.local_addr().ok().and_then(|a| a.as_socket()),
                    unix,
                    age: Duration::from_millis(now_ms.saturating_sub(u64::from(e.since) * TICK_MS)),
                    thread,
                    killed: e.killed,
                    asleep: e.asleep,
                }
            })
            .collect()
    })
}

/// A raw descriptor lent for the time of one socket query, on the thread
/// that owns it (the entry lives exactly as long as its socket).
struct BorrowedFd(RawFd);

impl std::os::fd::AsFd for BorrowedFd {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        // SAFETY: the table holds a descriptor only while its connection
        // is open, and this runs on the connection's own thread between
        // two of its polls, so the descriptor is open for this borrow.
        unsafe { std::os::fd::BorrowedFd::borrow_raw(self.0) }
    }
}

/// Marks one session killed and wakes it (run on its own thread). Its
/// client socket stops reading, which also ends a session idle between
/// requests.
fn kill(r: Reg) -> bool {
    let Some(fd) = with_entry(r, |e| {
        e.killed = true;
        e.fd
    }) else {
        return false;
    };
    // SAFETY: shutdown on a descriptor that is open (see BorrowedFd).
    unsafe {
        libc::shutdown(fd, libc::SHUT_RD);
    }
    wake_all();
    true
}

/// Every worker's sessions, oldest first within each thread.
pub async fn all(sh: &Shared) -> Vec<Raw> {
    let mut jobs = Vec::new();
    for slot in 1..=sh.nthreads {
        if let Some(h) = sh.workers.get(slot) {
            jobs.push(h.spawn(async move { snapshot(slot) }));
        }
    }
    let mut out = Vec::new();
    for j in jobs {
        if let Ok(mut v) = j.await {
            out.append(&mut v);
        }
    }
    out
}

/// One session by id, if it is still open.
pub async fn one(sh: &Shared, id: u64) -> Option<Raw> {
    let (slot, _) = split_id(id);
    let h = sh.workers.get(slot)?;
    let v = h.spawn(async move { snapshot(slot) }).await.ok()?;
    v.into_iter().find(|r| r.id == id)
}

/// `shutdown session <id>`: false when no such session is open.
pub async fn shutdown(sh: &Shared, id: u64) -> bool {
    let (slot, r) = split_id(id);
    match sh.workers.get(slot) {
        Some(h) => h.spawn(async move { kill(r) }).await.unwrap_or(false),
        None => false,
    }
}

/// Hard stop: wakes every worker's sessions so they see it.
pub fn wake_everyone(sh: &Shared) {
    for slot in 1..=sh.nthreads {
        if let Some(h) = sh.workers.get(slot) {
            h.spawn(async { wake_all() });
        }
    }
}
