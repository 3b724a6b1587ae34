//! Sleeping sessions: an HTTP/1.1 client (plain or over TLS) idle for a
//! while ([`sleep_after`]: 200 ms at first) gives up its task and its
//! registration in the event loop, and waits as one slot
//! of its thread's lot — its socket, its addresses and a few counters —
//! with the socket watched by a second epoll instance of the thread's own.
//! It wakes (a new task takes it over, exactly where it stopped) when the
//! client sends or closes, when its deadline passes, or on a stop; the
//! session itself then decides what that means, as if it had never slept.
//! A `mode tcp` session ([`crate::tcp`]) sleeps the same way with both of
//! its sockets watched; a kill of its server's sessions wakes it too.

use super::idle::Wheel;
use super::Asleep;
use crate::conn::{Conn, Parts};
use crate::session::Accepted;
use crate::state::FrontendId;
use crate::state::Shared;
use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Registry, Token};
use std::cell::RefCell;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::unix::AsyncFd;
use tokio::time::Instant;

/// How long a client stays idle before its session first sleeps.
const SLEEP_AFTER: Duration = Duration::from_millis(200);
/// The most times [`SLEEP_AFTER`] is doubled (to 3.2 s).
const MAX_DOUBLINGS: u8 = 4;

/// How long a client that woke its session `naps` times by sending stays
/// idle before the session sleeps again. A sleep and a wake-up cost about
/// 10 µs of CPU (four `epoll_ctl`, a task, the nested epoll's wake-ups):
/// a client that comes back regularly soon stays awake between its
/// requests, while one that went quiet sleeps after 200 ms.
pub(crate) fn sleep_after(naps: u8) -> Duration {
    SLEEP_AFTER * (1u32 << naps.min(MAX_DOUBLINGS))
}

/// The socket of a sleeping session, out of the event loop.
enum Sock {
    Tcp(std::net::TcpStream),
    Unix(std::os::unix::net::UnixStream),
}

/// A sleeping session's connection: its socket, and its TLS session if any.
pub(crate) struct Plain {
    sock: Sock,
    tls: Option<Box<crate::tls::Dormant>>,
}

impl Plain {
    /// Takes a connection out of the event loop; `Err` gives back one that
    /// cannot sleep (HTTP/2, or bytes waiting to be sent: in the TLS
    /// layer, or held to the end of the pass), `Ok(Err)`
    /// when deregistering failed (the socket is closed then).
    fn from_conn(c: Conn) -> Result<std::io::Result<Plain>, Conn> {
        if c.has_pending() {
            return Err(c);
        }
        let (io, tls) = match c.into_parts() {
            Parts::Tls(t) => {
                let (io, d) = t.into_dormant();
                (io.into_parts(), Some(d))
            }
            p => (p, None),
        };
        let sock = match io {
            Parts::Tcp(s) => s.into_std().map(Sock::Tcp),
            Parts::Unix(s) => s.into_std().map(Sock::Unix),
            other => {
                let other = Conn::from(other);
                return Err(match tls {
                    Some(d) => Conn::Tls(Box::new(crate::tls::TlsStream::from_dormant(other, *d))),
                    None => other,
                });
            }
        };
        Ok(sock.map(|sock| Plain { sock, tls }))
    }

    fn fd(&self) -> RawFd {
        match &self.sock {
            Sock::Tcp(s) => s.as_raw_fd(),
            Sock::Unix(s) => s.as_raw_fd(),
        }
    }

    /// Back under the event loop.
    pub(crate) fn into_conn(self) -> std::io::Result<Conn> {
        let io = match self.sock {
            Sock::Tcp(s) => tokio::net::TcpStream::from_std(s).map(Conn::Tcp)?,
            Sock::Unix(s) => tokio::net::UnixStream::from_std(s).map(Conn::Unix)?,
        };
        Ok(match self.tls {
            Some(d) => Conn::Tls(Box::new(crate::tls::TlsStream::from_dormant(io, *d))),
            None => io,
        })
    }

    /// Whether a connection could sleep now.
    pub(crate) fn can_take(c: &Conn) -> bool {
        match c {
            Conn::Tcp(_) | Conn::Unix(_) => true,
            Conn::Tls(t) => matches!(t.io(), Conn::Tcp(_) | Conn::Unix(_)) && !t.has_pending(),
        }
    }
}

/// Moves a connection under the calling thread's event loop (an idle
/// server connection another thread left); `None` when it cannot move or
/// the move failed (it is closed).
pub(crate) fn rehome(c: Conn) -> Option<Conn> {
    Plain::from_conn(c).ok()?.ok()?.into_conn().ok()
}

/// What a sleeping session keeps.
pub(crate) struct Sleeper {
    pub sock: Plain,
    pub fe_idx: FrontendId,
    pub acc: Accepted,
    pub accept_wall: Duration,
    pub asleep: Asleep,
}

/// A sleeping session of either kind, kept inline in the lot's slots: a
/// burst of sessions falling asleep then allocates nothing that would sit
/// in the holes their tasks left (and keep those pages resident).
#[allow(clippy::large_enum_variant)] // both kinds live in the same slots
enum Slept {
    Http(Sleeper),
    Tcp(crate::tcp::Sleeper),
}

impl Slept {
    /// Its sockets (the client's first).
    fn fds(&self) -> [Option<RawFd>; 2] {
        match self {
            Slept::Http(s) => [Some(s.sock.fd()), None],
            Slept::Tcp(t) => [Some(t.client.fd()), Some(t.server.fd())],
        }
    }

    /// Woken by a byte or a close on one of its sockets.
    fn by_bytes(&mut self) {
        match self {
            Slept::Http(s) => {
                s.asleep.by_bytes = true;
                s.asleep.naps = s.asleep.naps.saturating_add(1);
            }
            Slept::Tcp(t) => t.woken.naps = t.woken.naps.saturating_add(1),
        }
    }
}

struct Lot {
    sleepers: Wheel<Slept>,
    registry: Registry,
    /// Sessions that fell asleep since the last trim.
    slept: usize,
}

impl Lot {
    /// Watches the sockets of the session in `slot`; false (none left
    /// watched) when one cannot be.
    fn watch(&mut self, slot: usize, fds: [Option<RawFd>; 2]) -> bool {
        for (side, fd) in fds.iter().enumerate() {
            let Some(fd) = *fd else { continue };
            let token = Token(slot * 2 + side);
            if self
                .registry
                .register(&mut SourceFd(&fd), token, Interest::READABLE)
                .is_err()
            {
                for fd in fds.iter().take(side).flatten() {
                    let _ = self.registry.deregister(&mut SourceFd(fd));
                }
                return false;
            }
        }
        true
    }

    /// Stops watching a session's sockets.
    fn unwatch(&mut self, fds: [Option<RawFd>; 2]) {
        for fd in fds.iter().flatten() {
            let _ = self.registry.deregister(&mut SourceFd(fd));
        }
    }

    /// Puts a session in a slot and watches it; gives it back when the lot
    /// cannot take it.
    fn take(&mut self, deadline: Option<Instant>, s: Slept) -> Option<Slept> {
        let fds = s.fds();
        let slot = self.sleepers.insert(deadline, s);
        if self.watch(slot, fds) {
            None
        } else {
            // Out of epoll watches, say: the session goes on awake.
            self.sleepers.remove(slot)
        }
    }
}

thread_local! {
    /// This thread's lot; none where the thread has no driver.
    static LOT: RefCell<Option<Lot>> = const { RefCell::new(None) };
}

/// Whether sessions of this thread can sleep.
pub(crate) fn available() -> bool {
    LOT.try_with(|l| l.borrow().is_some()).unwrap_or(false)
}

/// Takes `client` out of the event loop and puts its session to sleep
/// until [`Driver`] wakes it. Returns false when the connection is gone
/// (the caller ends the session); when the lot cannot take it, its session
/// is woken at once and never sleeps again.
pub(crate) fn sleep(
    sh: &Arc<Shared>,
    fe_idx: FrontendId,
    client: Conn,
    acc: Accepted,
    accept_wall: Duration,
    asleep: Asleep,
) -> bool {
    let sock = match Plain::from_conn(client) {
        Ok(Ok(s)) => s,
        // Deregistering from the event loop does not fail on a registered
        // socket; if it did, the socket is closed and the session ends.
        Ok(Err(_)) => return false,
        // Checked by the session before it returned asleep: cannot happen;
        // the connection is closed rather than kept without a task.
        Err(c) => {
            c.close_notify();
            return false;
        }
    };
    let deadline = asleep.deadline;
    let s = Sleeper {
        sock,
        fe_idx,
        acc,
        accept_wall,
        asleep,
    };
    let reg = s.acc.reg;
    match put(deadline, Slept::Http(s)) {
        None => crate::sessions::set_asleep(reg, true),
        Some(Slept::Http(mut s)) => {
            s.asleep.may_sleep = false;
            wake(sh, Slept::Http(s));
        }
        Some(t) => wake(sh, t),
    }
    true
}

/// Puts a session in this thread's lot; gives it back when there is no lot
/// or the lot cannot take it.
fn put(deadline: Option<Instant>, s: Slept) -> Option<Slept> {
    LOT.try_with(|l| match l.borrow_mut().as_mut() {
        Some(lot) => {
            let back = lot.take(deadline, s);
            if back.is_none() {
                lot.slept += 1;
            }
            back
        }
        None => Some(s),
    })
    .unwrap_or(None)
}

/// Sessions that fell asleep on a thread before the memory they left is
/// given back to the system.
const TRIM_AFTER: usize = 256;
/// The least time between two trims (any thread's).
const TRIM_EVERY_MS: u64 = 250;

/// Gives the memory freed by sessions that fell asleep back to the system
/// (`malloc_trim`), once enough of them did. The tasks a burst of clients
/// left are freed in the middle of the heap, which glibc keeps resident
/// until asked; a sleeping `mode tcp` session holds about 0.9 KB of heap,
/// an awake one about 3.5 KB. At most once in [`TRIM_EVERY_MS`] over all
/// threads; the sleeps are counted until a trim runs.
pub(crate) fn trim_after_sleeps() {
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
    static LAST: AtomicU64 = AtomicU64::new(0);
    let enough = LOT
        .try_with(|l| {
            l.borrow()
                .as_ref()
                .is_some_and(|lot| lot.slept >= TRIM_AFTER)
        })
        .unwrap_or(false);
    if !enough {
        return;
    }
    let now = crate::clock::wall().as_millis() as u64;
    let last = LAST.load(Relaxed);
    if now.saturating_sub(last) < TRIM_EVERY_MS
        || LAST.compare_exchange(last, now, Relaxed, Relaxed).is_err()
    {
        return;
    }
    LOT.with(|l| {
        if let Some(lot) = l.borrow_mut().as_mut() {
            lot.slept = 0;
        }
    });
    // The blocks this thread keeps for reuse would hold their pages.
    crate::alloc::cache::flush();
    #[cfg(target_env = "gnu")]
    // SAFETY: malloc_trim only walks glibc's own free lists.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Takes a `mode tcp` session's sockets out of the event loop and puts it
/// to sleep until [`Driver`] wakes it; when the lot cannot take it, it is
/// woken at once and never sleeps again.
pub(crate) fn sleep_tcp(
    sh: &Arc<Shared>,
    client: Conn,
    server: Conn,
    fe_idx: FrontendId,
    acc: Accepted,
    link: crate::tcp::Link,
    mut woken: crate::tcp::Woken,
) {
    // Checked by the session before it asked (`can_take`): the failures
    // below cannot happen; the session then ends as a failed accept would.
    let fail = |sh: &Arc<Shared>, link: &crate::tcp::Link, acc: &Accepted| {
        link.be.release(link.srv);
        crate::session::finish(sh, fe_idx, acc);
    };
    let client = match Plain::from_conn(client) {
        Ok(Ok(c)) => c,
        Ok(Err(_)) | Err(_) => return fail(sh, &link, &acc),
    };
    let server = match Plain::from_conn(server) {
        Ok(Ok(c)) => c,
        Ok(Err(_)) | Err(_) => return fail(sh, &link, &acc),
    };
    let reg = acc.reg;
    woken.may_sleep = true;
    let t = crate::tcp::Sleeper {
        client,
        server,
        fe_idx,
        acc,
        link,
        woken,
    };
    let deadline = t.deadline(sh);
    match put(deadline, Slept::Tcp(t)) {
        None => crate::sessions::set_asleep(reg, true),
        Some(Slept::Tcp(mut t)) => {
            t.woken.may_sleep = false;
            wake(sh, Slept::Tcp(t));
        }
        Some(h) => wake(sh, h),
    }
}

/// Starts the task that takes a sleeping session over again.
fn wake(sh: &Arc<Shared>, s: Slept) {
    match s {
        Slept::Http(s) => {
            crate::sessions::set_asleep(s.acc.reg, false);
            if s.sock.tls.is_some() {
                crate::profile::spawn::<crate::profile::Https, _>(super::entry::wake_http(
                    sh.clone(),
                    s,
                ));
            } else {
                crate::profile::spawn::<crate::profile::Http, _>(super::entry::wake_http(
                    sh.clone(),
                    s,
                ));
            }
        }
        Slept::Tcp(t) => {
            crate::sessions::set_asleep(t.acc.reg, false);
            crate::profile::spawn::<crate::profile::Tcp, _>(crate::tcp::wake(sh.clone(), t));
        }
    }
}

/// Watches the sockets of this thread's sleeping sessions.
pub struct Driver {
    poll: Option<AsyncFd<Poll>>,
    events: Events,
    woken: Vec<Slept>,
    due: Vec<(usize, Slept)>,
}

impl Driver {
    /// Sets up this thread's lot. Without one (the epoll instance could not
    /// be made), sessions stay awake.
    pub fn new() -> Driver {
        let poll = Poll::new().and_then(|p| {
            let registry = p.registry().try_clone()?;
            let p = crate::sys::register_poll(p)?;
            LOT.with(|l| {
                *l.borrow_mut() = Some(Lot {
                    sleepers: Wheel::new(),
                    registry,
                    slept: 0,
                })
            });
            Ok(p)
        });
        if let Err(e) = &poll {
            crate::log::console(
                "WARNING",
                &format!("idle HTTP clients keep their tasks: no epoll instance: {e}"),
            );
        }
        Driver {
            poll: poll.ok(),
            events: Events::with_capacity(256),
            woken: Vec::new(),
            due: Vec::new(),
        }
    }

    /// Resolves when a sleeper's socket may be readable (never, without
    /// a lot).
    pub async fn readable(&self) {
        match &self.poll {
            Some(p) => {
                if let Ok(mut g) = p.readable().await {
                    // Cleared before the events are read: one that comes
                    // after the read raises readiness again.
                    g.clear_ready();
                }
            }
            None => std::future::pending().await,
        }
    }

    /// Wakes the sessions whose sockets are readable.
    pub fn wake_readable(&mut self, sh: &Arc<Shared>) {
        let Some(p) = self.poll.as_mut() else { return };
        loop {
            if p.get_mut()
                .poll(&mut self.events, Some(Duration::ZERO))
                .is_err()
            {
                break;
            }
            let n = self.events.iter().count();
            LOT.with(|l| {
                let mut l = l.borrow_mut();
                let Some(lot) = l.as_mut() else { return };
                for ev in self.events.iter() {
                    // Both sockets of a `mode tcp` session may report: the
                    // first takes it out, the second finds the slot empty.
                    if let Some(mut s) = lot.sleepers.remove_present(ev.token().0 / 2) {
                        lot.unwatch(s.fds());
                        s.by_bytes();
                        self.woken.push(s);
                    }
                }
            });
            if n < self.events.capacity() {
                break;
            }
        }
        for s in self.woken.drain(..) {
            wake(sh, s);
        }
    }

    /// Wakes the sessions whose deadline passed by `now`, or all of them
    /// on a stop.
    pub fn wake_due(&mut self, sh: &Arc<Shared>, now: Instant, stopping: bool) {
        if self.poll.is_none() {
            return;
        }
        LOT.with(|l| {
            let mut l = l.borrow_mut();
            let Some(lot) = l.as_mut() else { return };
            if stopping {
                lot.sleepers.take_all(&mut self.due);
            } else {
                lot.sleepers.advance(now, &mut self.due);
            }
            for (slot, s) in self.due.drain(..) {
                lot.unwatch(s.fds());
                lot.sleepers.remove(slot);
                self.woken.push(s);
            }
        });
        for s in self.woken.drain(..) {
            wake(sh, s);
        }
    }
}

impl Driver {
    /// Wakes the `mode tcp` sessions whose server's sessions were killed
    /// since they fell asleep.
    pub fn wake_killed(&mut self, sh: &Arc<Shared>) {
        if self.poll.is_none() {
            return;
        }
        LOT.with(|l| {
            let mut l = l.borrow_mut();
            let Some(lot) = l.as_mut() else { return };
            lot.sleepers.take_where(
                |s| matches!(s, Slept::Tcp(t) if t.server_killed()),
                &mut self.due,
            );
            for (slot, s) in self.due.drain(..) {
                lot.unwatch(s.fds());
                lot.sleepers.remove(slot);
                self.woken.push(s);
            }
        });
        for s in self.woken.drain(..) {
            wake(sh, s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_wake_by_the_client_doubles_the_idle_time_before_sleeping() {
        let ms = |n| sleep_after(n).as_millis();
        assert_eq!([ms(0), ms(1), ms(2), ms(4)], [200, 400, 800, 3200]);
        assert_eq!(ms(5), 3200);
        assert_eq!(ms(u8::MAX), 3200);
    }
}
