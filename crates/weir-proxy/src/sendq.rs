//! Sends held to the end of a pass: a small write on a plain TCP socket
//! that ends what a task has to say for now (a request to its server, a
//! response to its client) waits in its thread's queue, and one task writes
//! every queued send together once the tasks ready before it ran, as
//! HAProxy writes its streams' output after running them. A peer asleep in
//! its event loop is then woken once a pass rather than once a send (each
//! wake-up, and the interrupt that carries it to another CPU, is kernel
//! time of the proxy's).
//!
//! Only threads that [`enable`] the queue hold sends (weir's worker
//! threads); elsewhere every send is written at once. A socket with held
//! bytes says so ([`holds`]): any later write on it and its close write
//! them first, in order ([`push_out`]), and a wait to read from it
//! finishes what the writer found no room for, so that what the peer
//! receives never changes, only when. A thread holds at most 128 sends of
//! 4 KiB, and keeps 32 emptied vectors for the next.

use std::cell::RefCell;
use std::io;
use std::os::fd::RawFd;
use std::task::{Context, Poll, Waker};

/// The most bytes a held send carries (a larger one is written at once).
pub const MOST: usize = 4096;
/// The most sends a thread holds: one more is written at once.
const DEPTH: usize = 128;
/// Emptied vectors a thread keeps.
const SPARE: usize = 32;
/// Descriptors from this one on are never held (the index by descriptor
/// stays small).
const FDS: usize = 1 << 20;

struct Held {
    fd: RawFd,
    bytes: Vec<u8>,
    /// The task that sent: woken when the bytes could not all be written.
    task: Waker,
    /// A write of the queue found no room: the task writes the rest.
    stalled: bool,
}

#[derive(Default)]
struct Queue {
    held: Vec<Held>,
    /// By descriptor: 1 + the place of its held send in `held` (0: none).
    at: Vec<u16>,
    /// Emptied vectors, for the next held sends.
    spare: Vec<Vec<u8>>,
    /// The writing task, while it waits.
    writer: Option<Waker>,
    /// The writer was woken and has not run yet.
    due: bool,
    /// Held sends the writer found no room for.
    stalled: usize,
}

thread_local! {
    static QUEUE: RefCell<Option<Queue>> = const { RefCell::new(None) };
}

/// Starts this thread's queue and returns the task that writes it; run it
/// on the thread's runtime. Dropped (the runtime ends), it writes what is
/// held as far as it goes and stops the queue: sends are written at once
/// from then on.
pub fn enable() -> Writer {
    QUEUE.with(|q| *q.borrow_mut() = Some(Queue::default()));
    Writer(())
}

/// The task that writes a thread's held sends.
pub struct Writer(());

impl std::future::Future for Writer {
    type Output = ();

    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        write_all(cx);
        Poll::Pending
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        let q = QUEUE.with(|q| q.try_borrow_mut().ok().and_then(|mut q| q.take()));
        for mut h in q.map(|q| q.held).unwrap_or_default() {
            let fd = h.fd;
            let _ = drain(&mut h, |b| crate::splice::write_fd(fd, b));
        }
    }
}

/// Runs `f` on this thread's queue; `None` without one (or inside `f`).
fn with_queue<R>(f: impl FnOnce(&mut Queue) -> R) -> Option<R> {
    QUEUE.with(|q| q.try_borrow_mut().ok()?.as_mut().map(f))
}

/// Holds `bytes` for `fd` until the end of the pass; false when they must
/// be written now (no queue on this thread, too many bytes, or a stalled
/// send ahead of them).
pub fn hold(fd: RawFd, bytes: &[u8], task: &Waker) -> bool {
    with_queue(|q| q.hold(fd, bytes, task)).unwrap_or(false)
}

/// Whether bytes are held for `fd` on this thread.
pub fn holds(fd: RawFd) -> bool {
    with_queue(|q| q.find(fd).is_some()).unwrap_or(false)
}

/// Whether a write of the queue left bytes of `fd`'s for its task.
pub fn stalled(fd: RawFd) -> bool {
    let any = |q: &mut Queue| {
        q.stalled > 0
            && q.find(fd)
                .and_then(|i| q.held.get(i))
                .is_some_and(|h| h.stalled)
    };
    with_queue(any).unwrap_or(false)
}

/// Writes what is held for `fd` with `write` (the socket's own write,
/// which keeps its readiness right); `WouldBlock` when some remains. An
/// error drops the bytes: nothing can reach that socket any more.
pub fn push_out(fd: RawFd, write: impl FnMut(&[u8]) -> io::Result<usize>) -> io::Result<()> {
    with_queue(|q| {
        let Some(i) = q.find(fd) else {
            return Ok(());
        };
        let r = q.held.get_mut(i).map_or(Ok(true), |h| drain(h, write));
        if !matches!(r, Ok(false)) {
            q.forget(i);
        }
        match r {
            Ok(true) => Ok(()),
            Ok(false) => Err(io::ErrorKind::WouldBlock.into()),
            Err(e) => Err(e),
        }
    })
    .unwrap_or(Ok(()))
}

/// Forgets what is held for `fd` (its socket is closing), after one last
/// try to write it.
pub fn settle(fd: RawFd) {
    with_queue(|q| {
        if let Some(i) = q.find(fd) {
            if let Some(h) = q.held.get_mut(i) {
                let _ = drain(h, |b| crate::splice::write_fd(fd, b));
            }
            q.forget(i);
        }
    });
}

/// Writes what `write` takes of `h`'s bytes: true once all went.
fn drain(h: &mut Held, mut write: impl FnMut(&[u8]) -> io::Result<usize>) -> io::Result<bool> {
    let mut done = 0;
    let r = loop {
        let Some(rest) = h.bytes.get(done..).filter(|r| !r.is_empty()) else {
            break Ok(true);
        };
        match write(rest) {
            Ok(0) => break Ok(false),
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => break Ok(false),
            Err(e) => break Err(e),
        }
    };
    h.bytes.drain(..done.min(h.bytes.len()));
    r
}

impl Queue {
    fn find(&self, fd: RawFd) -> Option<usize> {
        let at = usize::try_from(fd).ok().and_then(|f| self.at.get(f))?;
        usize::from(*at).checked_sub(1)
    }

    /// Files the `i`th held send under its descriptor (`i + 1`), or takes
    /// it out (0).
    fn file(&mut self, fd: RawFd, place: usize) {
        if let Some(a) = usize::try_from(fd).ok().and_then(|f| self.at.get_mut(f)) {
            *a = u16::try_from(place).unwrap_or(0);
        }
    }

    fn hold(&mut self, fd: RawFd, bytes: &[u8], task: &Waker) -> bool {
        if let Some(h) = self.find(fd).and_then(|i| self.held.get_mut(i)) {
            if h.stalled || h.bytes.len() + bytes.len() > MOST {
                return false;
            }
            h.bytes.extend_from_slice(bytes);
            return true;
        }
        let Some(f) = usize::try_from(fd).ok().filter(|&f| f < FDS) else {
            return false;
        };
        if bytes.len() > MOST || self.held.len() >= DEPTH {
            return false;
        }
        if self.at.len() <= f {
            self.at.resize(f + 1, 0);
        }
        let mut v = self.spare.pop().unwrap_or_default();
        v.extend_from_slice(bytes);
        self.held.push(Held {
            fd,
            bytes: v,
            task: task.clone(),
            stalled: false,
        });
        self.file(fd, self.held.len());
        if !self.due {
            self.due = true;
            if let Some(w) = &self.writer {
                w.wake_by_ref();
            }
        }
        true
    }

    /// Drops the `i`th held send, keeping its vector for the next.
    fn forget(&mut self, i: usize) {
        let h = self.held.swap_remove(i);
        self.file(h.fd, 0);
        if let Some(moved) = self.held.get(i).map(|m| m.fd) {
            self.file(moved, i + 1);
        }
        self.stalled = self.stalled.saturating_sub(usize::from(h.stalled));
        let mut v = h.bytes;
        if self.spare.len() < SPARE && v.capacity() <= MOST * 2 {
            v.clear();
            self.spare.push(v);
        }
    }
}

/// The writing task's turn: every held send is written; one that found no
/// room stays, stalled, and its task is woken to finish it.
fn write_all(cx: &mut Context<'_>) {
    with_queue(|q| {
        if !q.writer.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
            q.writer = Some(cx.waker().clone());
        }
        q.due = false;
        let mut i = 0;
        while let Some(h) = q.held.get_mut(i) {
            let fd = h.fd;
            if h.stalled {
                i += 1;
            } else if let Ok(true) = drain(h, |b| crate::splice::write_fd(fd, b)) {
                q.forget(i);
            } else {
                // The task finds the room, or the error, itself.
                h.stalled = true;
                h.task.wake_by_ref();
                q.stalled += 1;
                i += 1;
            }
        }
    });
}

#[cfg(test)]
#[path = "sendq_tests.rs"]
mod tests;
