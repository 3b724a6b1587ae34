//! Events per second shared by every thread, and how long to wait before
//! one more stays under a limit: what `maxconnrate`, `maxsessrate`,
//! `maxsslrate` and `rate-limit sessions` hold accepts to. The rate is
//! HAProxy's sliding estimate: this second's events plus the last
//! second's, weighted by the part of the last second still in the window.

use std::sync::Mutex;

/// The counts of the current and the previous second.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Window {
    /// The current second (milliseconds since any fixed origin / 1000).
    sec: u64,
    curr: u32,
    prev: u32,
}

impl Window {
    /// The window as it stands at `now_ms`.
    fn at(self, now_ms: u64) -> Window {
        let sec = now_ms / 1000;
        match sec.saturating_sub(self.sec) {
            0 => self,
            1 => Window {
                sec,
                curr: 0,
                prev: self.curr,
            },
            _ => Window {
                sec,
                curr: 0,
                prev: 0,
            },
        }
    }

    /// The estimated rate at `now_ms` (same second as the window).
    fn rate(self, now_ms: u64) -> u64 {
        let left = 1000 - now_ms % 1000;
        u64::from(self.curr) + u64::from(self.prev) * left / 1000
    }
}

/// A per-second event counter under a limit.
#[derive(Debug)]
pub struct Gate {
    pub limit: u32,
    w: Mutex<Window>,
}

impl Gate {
    pub fn new(limit: u32) -> Gate {
        Gate {
            limit,
            w: Mutex::new(Window::default()),
        }
    }

    fn window(&self, now_ms: u64) -> Window {
        let mut w = self.w.lock().unwrap_or_else(|e| e.into_inner());
        *w = w.at(now_ms);
        *w
    }

    /// The estimated events per second at `now_ms`.
    pub fn rate(&self, now_ms: u64) -> u64 {
        self.window(now_ms).rate(now_ms)
    }

    /// Counts one event.
    pub fn count(&self, now_ms: u64) {
        let mut w = self.w.lock().unwrap_or_else(|e| e.into_inner());
        *w = w.at(now_ms);
        w.curr = w.curr.saturating_add(1);
    }

    /// Milliseconds to wait before one more event keeps the rate under
    /// the limit (0: now).
    pub fn wait_ms(&self, now_ms: u64) -> u64 {
        wait(self.window(now_ms), self.limit, now_ms)
    }
}

/// [`Gate::wait_ms`] on a window.
fn wait(w: Window, limit: u32, now_ms: u64) -> u64 {
    let limit = u64::from(limit);
    if w.rate(now_ms) < limit {
        return 0;
    }
    let (curr, prev) = (u64::from(w.curr), u64::from(w.prev));
    let into = now_ms % 1000;
    // Within this second, as the last second's weight fades: the first
    // millisecond `m` where curr + prev * (1000 - m) / 1000 < limit.
    if curr < limit && prev > 0 {
        let room = limit - curr;
        // prev * (1000 - m) < room * 1000  <=>  m > 1000 - room * 1000 / prev
        let m = (1000 * prev).saturating_sub(room * 1000) / prev + 1;
        let m = m.min(1000);
        if m < 1000 {
            return m.saturating_sub(into).max(1);
        }
    }
    // Next second: this second's count weighs in as the last one.
    let to_next = 1000 - into;
    if curr < limit {
        return to_next;
    }
    let room = limit;
    if room == 0 {
        return 1000;
    }
    let m = (1000 * curr).saturating_sub(room * 1000) / curr + 1;
    to_next + m.min(1000)
}

#[cfg(test)]
#[path = "freq_tests.rs"]
mod tests;
