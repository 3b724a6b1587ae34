//! Idle HTTP clients without a timer of their own: each waiting session
//! leaves its waker in a per-thread timing wheel (one bucket per tick), and
//! one task per thread turns the wheel every tick, waking the sessions of
//! the bucket whose deadline passed, and every session on a stop. Adding
//! and removing a session is O(1); a tick looks at one bucket only. An
//! idle keep-alive client then costs its socket, its small session state
//! and one wheel slot.

use crate::conn::Conn;
use crate::state::Shared;
use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;
use tokio::sync::watch;
use tokio::time::Instant;

/// How often the wheel turns: the precision of keep-alive and first
/// request timeouts while no byte has come.
const TICK: Duration = Duration::from_millis(50);
/// Buckets in the wheel (one turn: 12.8 s); a later deadline waits in its
/// bucket for further turns.
const BUCKETS: usize = 256;

struct Entry {
    deadline: Option<Instant>,
    waker: Waker,
    /// Where the slot number sits in the wheel: (bucket, index).
    at: Option<(usize, usize)>,
}

struct Wheel {
    /// The time of tick 0.
    origin: Instant,
    /// The next tick to turn: nothing is placed before it.
    next: usize,
    entries: Vec<Option<Entry>>,
    free: Vec<usize>,
    buckets: Vec<Vec<usize>>,
}

impl Wheel {
    fn new() -> Wheel {
        Wheel {
            origin: Instant::now(),
            next: 0,
            entries: Vec::new(),
            free: Vec::new(),
            buckets: (0..BUCKETS).map(|_| Vec::new()).collect(),
        }
    }

    fn tick_of(&self, t: Instant) -> usize {
        (t.saturating_duration_since(self.origin).as_millis() / TICK.as_millis()) as usize
    }

    /// Puts `slot` in the bucket of its deadline.
    fn place(&mut self, slot: usize) {
        let Some(Some(e)) = self.entries.get(slot) else {
            return;
        };
        let Some(d) = e.deadline else { return };
        // A deadline within a tick already turned goes in the next one.
        let b = self.tick_of(d).max(self.next) % BUCKETS;
        self.buckets[b].push(slot);
        let at = Some((b, self.buckets[b].len() - 1));
        if let Some(Some(e)) = self.entries.get_mut(slot) {
            e.at = at;
        }
    }

    /// Takes `slot` out of its bucket (the last one moves into its place).
    fn unplace(&mut self, slot: usize) {
        let Some(Some(e)) = self.entries.get_mut(slot) else {
            return;
        };
        let Some((b, i)) = e.at.take() else { return };
        let bucket = &mut self.buckets[b];
        if i >= bucket.len() {
            return;
        }
        bucket.swap_remove(i);
        if let Some(&moved) = bucket.get(i) {
            if let Some(Some(m)) = self.entries.get_mut(moved) {
                m.at = Some((b, i));
            }
        }
    }

    /// Turns every tick up to `now` (a late wake-up skips none), taking
    /// the wakers of the sessions due.
    fn advance(&mut self, now: Instant, due: &mut Vec<Waker>) {
        let last = self.tick_of(now);
        while self.next <= last {
            let tick = self.next;
            self.next += 1;
            self.turn(tick, now, due);
        }
    }

    /// Wakes the sessions due at `now` from the bucket of `tick`.
    fn turn(&mut self, tick: usize, now: Instant, due: &mut Vec<Waker>) {
        let b = tick % BUCKETS;
        let slots = std::mem::take(&mut self.buckets[b]);
        for slot in slots {
            let expired = match self.entries.get_mut(slot) {
                Some(Some(e)) => {
                    e.at = None;
                    e.deadline.is_some_and(|d| d <= now)
                }
                _ => continue,
            };
            if expired {
                if let Some(e) = self.entries[slot].take() {
                    due.push(e.waker);
                }
            } else {
                // Due on a later turn of the wheel.
                self.place(slot);
            }
        }
    }

    /// Wakes every waiting session (a stop).
    fn wake_all(&mut self, due: &mut Vec<Waker>) {
        for b in &mut self.buckets {
            b.clear();
        }
        for e in self.entries.iter_mut() {
            if let Some(en) = e.take() {
                due.push(en.waker);
            }
        }
    }
}

thread_local! {
    static WHEEL: RefCell<Wheel> = RefCell::new(Wheel::new());
}

/// Turns this thread's wheel forever (the runtime ends it).
pub async fn sweep(sh: Arc<Shared>) {
    let mut due: Vec<Waker> = Vec::new();
    loop {
        tokio::time::sleep(TICK).await;
        let now = Instant::now();
        let stopping = *sh.stopping.borrow();
        WHEEL.with(|w| {
            let mut w = w.borrow_mut();
            if stopping {
                w.wake_all(&mut due);
                return;
            }
            w.advance(now, &mut due);
        });
        // Woken outside the borrow: a woken session re-registers itself.
        for d in due.drain(..) {
            d.wake();
        }
    }
}

/// Resolves to true once `client` is readable, to false when `deadline`
/// passes or `signal` is set first.
pub(super) struct IdleWait<'a> {
    client: &'a Conn,
    signal: &'a watch::Sender<bool>,
    deadline: Option<Instant>,
    slot: Option<usize>,
}

impl<'a> IdleWait<'a> {
    pub(super) fn new(
        client: &'a Conn,
        signal: &'a watch::Sender<bool>,
        deadline: Option<Instant>,
    ) -> Self {
        IdleWait {
            client,
            signal,
            deadline,
            slot: None,
        }
    }

    /// Leaves the waker in the wheel: a new slot, or the same slot again
    /// (a new waker, or placed again after the sweeper took it).
    fn register(&mut self, waker: &Waker) {
        let deadline = self.deadline;
        let slot = self.slot;
        let placed = WHEEL.try_with(|w| {
            let mut w = w.borrow_mut();
            match slot.and_then(|i| w.entries.get_mut(i)) {
                Some(Some(e)) => {
                    if !e.waker.will_wake(waker) {
                        e.waker = waker.clone();
                    }
                    None
                }
                Some(e) => {
                    *e = Some(Entry {
                        deadline,
                        waker: waker.clone(),
                        at: None,
                    });
                    let i = slot.unwrap_or_default();
                    w.place(i);
                    Some(i)
                }
                None => {
                    let entry = Some(Entry {
                        deadline,
                        waker: waker.clone(),
                        at: None,
                    });
                    let i = match w.free.pop() {
                        Some(i) => {
                            w.entries[i] = entry;
                            i
                        }
                        None => {
                            w.entries.push(entry);
                            w.entries.len() - 1
                        }
                    };
                    w.place(i);
                    Some(i)
                }
            }
        });
        if let Ok(Some(i)) = placed {
            self.slot = Some(i);
        }
    }
}

impl Future for IdleWait<'_> {
    type Output = bool;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<bool> {
        if self.client.poll_read_ready(cx).is_ready() {
            return Poll::Ready(true);
        }
        if *self.signal.borrow() || self.deadline.is_some_and(|d| d <= Instant::now()) {
            return Poll::Ready(false);
        }
        let waker = cx.waker().clone();
        self.register(&waker);
        Poll::Pending
    }
}

impl Drop for IdleWait<'_> {
    fn drop(&mut self) {
        if let Some(i) = self.slot {
            // The thread's wheel may be gone already at thread exit.
            let _ = WHEEL.try_with(|w| {
                let mut w = w.borrow_mut();
                w.unplace(i);
                if let Some(e) = w.entries.get_mut(i) {
                    *e = None;
                    w.free.push(i);
                }
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn waker() -> Waker {
        Waker::noop().clone()
    }

    #[test]
    fn the_wheel_wakes_due_entries_and_keeps_later_ones() {
        let mut w = Wheel::new();
        let t0 = w.origin;
        for (i, ms) in [100u64, 13_000, 120].into_iter().enumerate() {
            w.entries.push(Some(Entry {
                deadline: Some(t0 + Duration::from_millis(ms)),
                waker: waker(),
                at: None,
            }));
            w.place(i);
        }
        // Slot 2 removed before it is due (its session got bytes).
        w.unplace(2);
        w.entries[2] = None;
        let mut due = Vec::new();
        w.advance(t0 + Duration::from_millis(130), &mut due);
        assert_eq!(due.len(), 1);
        assert!(w.entries[0].is_none() && w.entries[1].is_some());
        // 13 s is past one turn of the wheel: still waiting after it.
        w.advance(t0 + Duration::from_millis(12_990), &mut due);
        assert_eq!(due.len(), 1);
        // A deadline in a tick already turned is placed in the next one.
        w.entries.push(Some(Entry {
            deadline: Some(t0 + Duration::from_millis(12_995)),
            waker: waker(),
            at: None,
        }));
        w.place(3);
        w.advance(t0 + Duration::from_millis(13_000), &mut due);
        assert_eq!(due.len(), 3);
        assert!(w.buckets.iter().all(Vec::is_empty));
    }
}
