//! The clock as weir's tasks read it: at most once per task poll, as
//! HAProxy reads its `now` once per pass of its loop. A request's path
//! asks for the time a dozen times (timers, log fields, deadlines); each
//! read of the system clock costs a vDSO call, about 6 % of the user time
//! of an HTTP/2 request before this cache.
//!
//! Inside a poll of a task spawned through [`crate::profile`], the first
//! read is cached until the poll ends; everywhere else (the main thread,
//! code outside any task) every read is fresh. The error is bounded by
//! one poll's duration, far below the milliseconds logs and timeouts
//! count in.

use std::cell::Cell;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::time::Instant;

/// This thread's cache: whether a poll is under way, and what it read.
struct Cache {
    polling: Cell<bool>,
    now: Cell<Option<Instant>>,
    wall: Cell<Option<Duration>>,
    /// [`ticks`] of `now` (a request reads them several times).
    ticks: Cell<Option<u32>>,
}

thread_local! {
    static CACHE: Cache = const {
        Cache {
            polling: Cell::new(false),
            now: Cell::new(None),
            wall: Cell::new(None),
            ticks: Cell::new(None),
        }
    };
}

/// The monotonic time.
pub fn now() -> Instant {
    CACHE.with(|c| match c.now.get() {
        Some(t) => t,
        None => {
            let t = Instant::now();
            if c.polling.get() {
                c.now.set(Some(t));
            }
            t
        }
    })
}

/// The time elapsed since `t` (zero if `t` is later than the cached now).
pub fn elapsed(t: Instant) -> Duration {
    now().saturating_duration_since(t)
}

/// The instant `t` from now (far in the future if that overflows), for
/// `tokio::time::timeout_at` and `sleep_until`: unlike `timeout` and
/// `sleep`, they read no clock of their own.
pub fn deadline(t: Duration) -> Instant {
    let n = now();
    n.checked_add(t)
        .unwrap_or_else(|| n + Duration::from_secs(86400 * 365 * 30))
}

/// When the process started (the first call): ages and ticks count from
/// it.
pub fn epoch() -> std::time::Instant {
    static E: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    *E.get_or_init(std::time::Instant::now)
}

/// Milliseconds since [`epoch`] on a wrapping 32-bit tick (stick tables'
/// clock, as HAProxy's `now_ms`).
pub fn ticks() -> u32 {
    CACHE.with(|c| match c.ticks.get() {
        Some(t) => t,
        None => {
            let t = now()
                .into_std()
                .saturating_duration_since(epoch())
                .as_millis() as u32;
            if c.polling.get() {
                c.ticks.set(Some(t));
            }
            t
        }
    })
}

/// The wall-clock time since the Unix epoch.
pub fn wall() -> Duration {
    CACHE.with(|c| match c.wall.get() {
        Some(t) => t,
        None => {
            let t = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap_or_default();
            if c.polling.get() {
                c.wall.set(Some(t));
            }
            t
        }
    })
}

/// A task poll under way on this thread: reads are cached until it ends.
pub struct Poll {
    outer: bool,
}

impl Poll {
    pub fn enter() -> Poll {
        CACHE.with(|c| {
            c.now.set(None);
            c.wall.set(None);
            c.ticks.set(None);
            Poll {
                outer: c.polling.replace(true),
            }
        })
    }
}

impl Drop for Poll {
    fn drop(&mut self) {
        CACHE.with(|c| {
            c.polling.set(self.outer);
            c.now.set(None);
            c.wall.set(None);
            c.ticks.set(None);
        });
    }
}

#[cfg(test)]
#[path = "clock_tests.rs"]
mod tests;
