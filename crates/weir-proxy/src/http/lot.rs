//! Sleeping sessions: an HTTP/1.1 client (plain or over TLS) idle for a
//! while ([`sleep_after`]: 200 ms at first) gives up its task and its
//! registration in the event loop, and waits as one slot
//! of its thread's lot — its socket, its addresses and a few counters —
//! with the socket watched by a second epoll instance of the thread's own.
//! It wakes (a new task takes it over, exactly where it stopped) when the
//! client sends or closes, when its deadline passes, or on a stop; the
//! session itself then decides what that means, as if it had never slept.

use super::idle::Wheel;
use super::Asleep;
use crate::conn::Conn;
use crate::session::Accepted;
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
    /// cannot sleep (HTTP/2, or TLS bytes waiting to be sent), `Ok(Err)`
    /// when deregistering failed (the socket is closed then).
    fn from_conn(c: Conn) -> Result<std::io::Result<Plain>, Conn> {
        let (io, tls) = match c {
            Conn::Tls(t) if !t.has_pending() => {
                let (io, d) = t.into_dormant();
                (io, Some(d))
            }
            c => (c, None),
        };
        let sock = match io {
            Conn::Tcp(s) => s.into_std().map(Sock::Tcp),
            Conn::Unix(s) => s.into_std().map(Sock::Unix),
            other => {
                return Err(match tls {
                    Some(d) => Conn::Tls(Box::new(crate::tls::TlsStream::from_dormant(other, *d))),
                    None => other,
                })
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
            _ => false,
        }
    }
}

/// What a sleeping session keeps.
pub(crate) struct Sleeper {
    pub sock: Plain,
    pub fe_idx: usize,
    pub acc: Accepted,
    pub accept_wall: Duration,
    pub asleep: Asleep,
}

struct Lot {
    sleepers: Wheel<Sleeper>,
    registry: Registry,
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
    fe_idx: usize,
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
    let refused = LOT
        .try_with(|l| {
            let mut l = l.borrow_mut();
            let Some(lot) = l.as_mut() else {
                return Some(s);
            };
            let (fd, reg) = (s.sock.fd(), s.acc.reg);
            let slot = lot.sleepers.insert(deadline, s);
            match lot
                .registry
                .register(&mut SourceFd(&fd), Token(slot), Interest::READABLE)
            {
                Ok(()) => {
                    crate::sessions::set_asleep(reg, true);
                    None
                }
                // Out of epoll watches, say: the session goes on awake.
                Err(_) => lot.sleepers.remove(slot),
            }
        })
        .unwrap_or(None);
    if let Some(mut s) = refused {
        s.asleep.may_sleep = false;
        wake(sh, s);
    }
    true
}

/// Starts the task that takes a sleeping session over again.
fn wake(sh: &Arc<Shared>, s: Sleeper) {
    crate::sessions::set_asleep(s.acc.reg, false);
    if s.sock.tls.is_some() {
        crate::profile::spawn::<crate::profile::Https, _>(crate::session::wake_http(sh.clone(), s));
    } else {
        crate::profile::spawn::<crate::profile::Http, _>(crate::session::wake_http(sh.clone(), s));
    }
}

/// Watches the sockets of this thread's sleeping sessions.
pub struct Driver {
    poll: Option<AsyncFd<Poll>>,
    events: Events,
    woken: Vec<Sleeper>,
    due: Vec<(usize, Sleeper)>,
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
                    if let Some(mut s) = lot.sleepers.remove(ev.token().0) {
                        let _ = lot.registry.deregister(&mut SourceFd(&s.sock.fd()));
                        s.asleep.by_bytes = true;
                        s.asleep.naps = s.asleep.naps.saturating_add(1);
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
                let _ = lot.registry.deregister(&mut SourceFd(&s.sock.fd()));
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
