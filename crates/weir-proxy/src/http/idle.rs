//! Idle HTTP clients without a timer of their own: each waiting session
//! leaves its waker in a per-thread timing wheel (one bucket per tick), and
//! one task per thread turns the wheel every tick, waking the sessions of
//! the bucket whose deadline passed, and every session on a stop. Adding
//! and removing a session is O(1); a tick looks at one bucket only. An
//! idle keep-alive client then costs its socket, its small session state
//! and one wheel slot — and, once idle for a while, only a slot in the
//! thread's lot of sleeping sessions ([`super::lot`]).

use super::peer::Peer;
use crate::conn::Io;
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

/// How often a thread gives back the kept blocks it did not need since
/// (see `alloc::cache`).
const CACHE_CHECK: Duration = Duration::from_millis(500);
/// Buckets in the wheel (one turn: 12.8 s); a later deadline waits in its
/// bucket for further turns.
const BUCKETS: usize = 256;

struct Entry<T> {
    deadline: Option<Instant>,
    item: T,
    /// Where the slot number sits in the wheel: (bucket, index).
    at: Option<(usize, usize)>,
}

/// Items with deadlines, each in the bucket of its tick. A slot stays
/// reserved until [`Wheel::remove`] frees it, even after [`Wheel::advance`]
/// took its item out.
pub(crate) struct Wheel<T> {
    /// The time of tick 0.
    origin: Instant,
    /// The next tick to turn: nothing is placed before it.
    next: usize,
    entries: Vec<Option<Entry<T>>>,
    free: Vec<usize>,
    buckets: Vec<Vec<usize>>,
}

impl<T> Wheel<T> {
    pub(crate) fn new() -> Wheel<T> {
        Wheel {
            origin: crate::clock::now(),
            next: 0,
            entries: Vec::new(),
            free: Vec::new(),
            buckets: (0..BUCKETS).map(|_| Vec::new()).collect(),
        }
    }

    fn tick_of(&self, t: Instant) -> usize {
        (t.saturating_duration_since(self.origin).as_millis() / TICK.as_millis()) as usize
    }

    /// Stores `item` in a free slot, placed by its deadline (none: it
    /// waits until removed); returns the slot.
    pub(crate) fn insert(&mut self, deadline: Option<Instant>, item: T) -> usize {
        let entry = Some(Entry {
            deadline,
            item,
            at: None,
        });
        let free = self.free.pop();
        let i = match free.and_then(|i| self.entries.get_mut(i).map(|e| (i, e))) {
            Some((i, e)) => {
                *e = entry;
                i
            }
            None => {
                self.entries.push(entry);
                self.entries.len() - 1
            }
        };
        self.place(i);
        i
    }

    /// Stores `item` again in `slot` (reserved, its item taken by a turn).
    fn refill(&mut self, slot: usize, deadline: Option<Instant>, item: T) {
        if let Some(e) = self.entries.get_mut(slot) {
            *e = Some(Entry {
                deadline,
                item,
                at: None,
            });
            self.place(slot);
        }
    }

    /// Takes the item of `slot` out (if a turn has not) and frees the slot.
    pub(crate) fn remove(&mut self, slot: usize) -> Option<T> {
        self.unplace(slot);
        let e = self.entries.get_mut(slot)?;
        let item = e.take().map(|e| e.item);
        self.free.push(slot);
        item
    }

    /// Takes the item of `slot` out and frees the slot, only if it holds
    /// one: a slot already freed stays free once (two events of one batch
    /// may name the same slot; freeing it twice would give it to two
    /// items later).
    pub(crate) fn remove_present(&mut self, slot: usize) -> Option<T> {
        if !matches!(self.entries.get(slot), Some(Some(_))) {
            return None;
        }
        self.remove(slot)
    }

    /// Puts `slot` in the bucket of its deadline.
    fn place(&mut self, slot: usize) {
        let Some(Some(e)) = self.entries.get(slot) else {
            return;
        };
        let Some(d) = e.deadline else { return };
        // A deadline within a tick already turned goes in the next one.
        let b = self.tick_of(d).max(self.next) % BUCKETS;
        let Some(bucket) = self.buckets.get_mut(b) else {
            return;
        };
        bucket.push(slot);
        let at = Some((b, bucket.len() - 1));
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
        let Some(bucket) = self.buckets.get_mut(b) else {
            return;
        };
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
    /// out the items due, with their slots.
    pub(crate) fn advance(&mut self, now: Instant, due: &mut Vec<(usize, T)>) {
        let last = self.tick_of(now);
        while self.next <= last {
            let tick = self.next;
            self.next += 1;
            self.turn(tick, now, due);
        }
    }

    /// Takes the items due at `now` from the bucket of `tick`.
    fn turn(&mut self, tick: usize, now: Instant, due: &mut Vec<(usize, T)>) {
        let b = tick % BUCKETS;
        let Some(bucket) = self.buckets.get_mut(b) else {
            return;
        };
        let slots = std::mem::take(bucket);
        for slot in slots {
            let expired = match self.entries.get_mut(slot) {
                Some(Some(e)) => {
                    e.at = None;
                    e.deadline.is_some_and(|d| d <= now)
                }
                _ => continue,
            };
            if expired {
                if let Some(e) = self.entries.get_mut(slot).and_then(Option::take) {
                    due.push((slot, e.item));
                }
            } else {
                // Due on a later turn of the wheel.
                self.place(slot);
            }
        }
    }

    /// Takes every item out (a stop), with its slot.
    pub(crate) fn take_all(&mut self, due: &mut Vec<(usize, T)>) {
        for b in &mut self.buckets {
            b.clear();
        }
        for (slot, e) in self.entries.iter_mut().enumerate() {
            if let Some(en) = e.take() {
                due.push((slot, en.item));
            }
        }
    }

    /// Takes out the items `pick` chooses, with their slots.
    pub(crate) fn take_where(&mut self, pick: impl Fn(&T) -> bool, due: &mut Vec<(usize, T)>) {
        for slot in 0..self.entries.len() {
            if matches!(self.entries.get(slot), Some(Some(e)) if pick(&e.item)) {
                self.unplace(slot);
                if let Some(e) = self.entries.get_mut(slot).and_then(Option::take) {
                    due.push((slot, e.item));
                }
            }
        }
    }

    /// How many slots hold an item.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.entries.iter().filter(|e| e.is_some()).count()
    }
}

thread_local! {
    static WHEEL: RefCell<Wheel<Waker>> = RefCell::new(Wheel::new());
}

/// Turns this thread's wheel forever (the runtime ends it), and runs its
/// lot of sleeping sessions ([`super::park`]).
pub async fn sweep(sh: Arc<Shared>) {
    let mut due: Vec<(usize, Waker)> = Vec::new();
    let mut lot = super::lot::Driver::new();
    let mut seen_kills = sh.server_kills.load(std::sync::atomic::Ordering::Relaxed);
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut cache_check = crate::clock::now();
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            _ = lot.readable() => {
                lot.wake_readable(&sh);
                continue;
            }
        }
        let now = crate::clock::now();
        let stopping = *sh.stopping.borrow();
        // Idle sessions wait for a hard stop only (a soft stop answers
        // their next request with `Connection: close`).
        let killing = *sh.killing.borrow();
        WHEEL.with(|w| {
            let mut w = w.borrow_mut();
            if killing {
                w.take_all(&mut due);
            } else {
                w.advance(now, &mut due);
            }
        });
        // Woken outside the borrow: a woken session re-registers itself.
        for (_, d) in due.drain(..) {
            d.wake();
        }
        lot.wake_due(&sh, now, stopping);
        if !sh.cfg.global.no_memory_trimming {
            super::lot::trim_after_sleeps();
        }
        if now >= cache_check {
            crate::alloc::cache::release_unused();
            cache_check = now + CACHE_CHECK;
        }
        let kills = sh.server_kills.load(std::sync::atomic::Ordering::Relaxed);
        if kills != seen_kills {
            seen_kills = kills;
            lot.wake_killed(&sh);
        }
    }
}

/// How an idle wait ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Woke {
    /// The client sent bytes (or closed).
    Readable,
    /// The deadline passed, or the signal was set.
    Ended,
    /// Idle long enough to sleep without a task ([`super::park`]).
    Sleep,
}

/// Waits until `client` is readable, `deadline` passes or `signal` is
/// set, or (given `sleep_at`) the session may go to sleep.
pub(super) struct IdleWait<'a> {
    client: Peer<'a>,
    signal: &'a watch::Sender<bool>,
    deadline: Option<Instant>,
    sleep_at: Option<Instant>,
    slot: Option<usize>,
}

impl<'a> IdleWait<'a> {
    pub(super) fn new(
        client: Peer<'a>,
        signal: &'a watch::Sender<bool>,
        deadline: Option<Instant>,
        sleep_at: Option<Instant>,
    ) -> Self {
        IdleWait {
            client,
            signal,
            deadline,
            sleep_at,
            slot: None,
        }
    }

    /// When the wheel must wake this wait: the earlier of its times.
    fn wake_at(&self) -> Option<Instant> {
        match (self.deadline, self.sleep_at) {
            (Some(d), Some(s)) => Some(d.min(s)),
            (d, s) => d.or(s),
        }
    }

    /// Leaves the waker in the wheel: a new slot, or the same slot again
    /// (a new waker, or placed again after the sweeper took it).
    fn register(&mut self, waker: &Waker) {
        let at = self.wake_at();
        let slot = self.slot;
        let placed = WHEEL.try_with(|w| {
            let mut w = w.borrow_mut();
            match slot.and_then(|i| w.entries.get_mut(i).map(|e| (i, e))) {
                Some((_, Some(e))) => {
                    if !e.item.will_wake(waker) {
                        e.item = waker.clone();
                    }
                    None
                }
                Some((i, None)) => {
                    w.refill(i, at, waker.clone());
                    None
                }
                None => Some(w.insert(at, waker.clone())),
            }
        });
        if let Ok(Some(i)) = placed {
            self.slot = Some(i);
        }
    }
}

impl Future for IdleWait<'_> {
    type Output = Woke;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Woke> {
        if self.client.poll_read_ready(cx).is_ready() {
            return Poll::Ready(Woke::Readable);
        }
        let now = crate::clock::now();
        if *self.signal.borrow() || self.deadline.is_some_and(|d| d <= now) {
            return Poll::Ready(Woke::Ended);
        }
        if self.sleep_at.is_some_and(|s| s <= now) {
            return Poll::Ready(Woke::Sleep);
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
            let _ = WHEEL.try_with(|w| w.borrow_mut().remove(i));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wheel_takes_due_items_and_keeps_later_ones() {
        let mut w: Wheel<u32> = Wheel::new();
        let t0 = w.origin;
        for (i, ms) in [100u64, 13_000, 120].into_iter().enumerate() {
            let slot = w.insert(Some(t0 + Duration::from_millis(ms)), i as u32);
            assert_eq!(slot, i);
        }
        // A slot without a deadline waits until removed.
        let forever = w.insert(None, 99);
        // Slot 2 removed before it is due (its session got bytes).
        assert_eq!(w.remove(2), Some(2));
        let mut due = Vec::new();
        w.advance(t0 + Duration::from_millis(130), &mut due);
        assert_eq!(due, vec![(0, 0)]);
        assert_eq!(w.len(), 2);
        // 13 s is past one turn of the wheel: still waiting after it.
        w.advance(t0 + Duration::from_millis(12_990), &mut due);
        assert_eq!(due.len(), 1);
        // A deadline in a tick already turned is placed in the next one;
        // slot 2 was freed and is used again.
        assert_eq!(w.insert(Some(t0 + Duration::from_millis(12_995)), 7), 2);
        w.advance(t0 + Duration::from_millis(13_000), &mut due);
        assert_eq!(due, vec![(0, 0), (1, 1), (2, 7)]);
        assert!(w.buckets.iter().all(Vec::is_empty));
        // Taken slots stay reserved until removed.
        assert_eq!(w.insert(None, 5), 4);
        assert_eq!(w.remove(0), None);
        assert_eq!(w.insert(None, 6), 0);
        due.clear();
        w.take_all(&mut due);
        assert_eq!(due, vec![(0, 6), (forever, 99), (4, 5)]);
    }

    #[test]
    fn a_slot_named_twice_is_freed_once() {
        let mut w: Wheel<u32> = Wheel::new();
        let slot = w.insert(None, 1);
        assert_eq!(w.remove_present(slot), Some(1));
        assert_eq!(w.remove_present(slot), None);
        // Two new items get two slots.
        let (a, b) = (w.insert(None, 2), w.insert(None, 3));
        assert_ne!(a, b);
        assert_eq!(
            (w.remove_present(a), w.remove_present(b)),
            (Some(2), Some(3))
        );
    }

    #[test]
    fn take_where_takes_the_chosen_items_out_of_their_buckets() {
        let mut w: Wheel<u32> = Wheel::new();
        let t0 = w.origin;
        for v in 0..4u32 {
            w.insert(Some(t0 + Duration::from_millis(100)), v);
        }
        let mut due = Vec::new();
        w.take_where(|v| v % 2 == 1, &mut due);
        assert_eq!(due, vec![(1, 1), (3, 3)]);
        for (slot, _) in due.drain(..) {
            w.remove(slot);
        }
        w.advance(t0 + Duration::from_millis(200), &mut due);
        assert_eq!(due, vec![(0, 0), (2, 2)]);
    }
}
