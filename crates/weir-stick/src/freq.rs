//! HAProxy's frequency counter over a period: events of the current
//! period, plus those of the previous one weighted by how much of the
//! current period is still to come (manual §11.1, `conn_rate(<period>)`).

/// A rate over a period, on a wrapping millisecond tick.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FreqCtr {
    /// Where the current period started.
    tick: u32,
    curr: u32,
    prev: u32,
}

impl FreqCtr {
    /// Counts `inc` events at `now`.
    pub fn add(&mut self, now: u32, period: u32, inc: u32) {
        let period = period.max(1);
        if self.curr == 0 && self.prev == 0 {
            self.tick = now;
            self.curr = inc;
            return;
        }
        let elapsed = now.wrapping_sub(self.tick);
        if elapsed < period {
            self.curr = self.curr.saturating_add(inc);
            return;
        }
        if elapsed / 2 < period {
            self.prev = self.curr;
            self.tick = self.tick.wrapping_add(period);
        } else {
            self.prev = 0;
            self.tick = now;
        }
        self.curr = inc;
    }

    /// The rate at `now`, in events per period.
    pub fn read(&self, now: u32, period: u32) -> u32 {
        let period = period.max(1);
        let elapsed = now.wrapping_sub(self.tick);
        let (past, curr, remain) = if elapsed < period {
            (self.prev, self.curr, period - elapsed)
        } else if elapsed / 2 < period {
            (
                self.curr,
                0,
                period.saturating_mul(2).saturating_sub(elapsed),
            )
        } else {
            return 0;
        };
        let weighted = u64::from(past) * u64::from(remain) / u64::from(period);
        curr.saturating_add(u32::try_from(weighted).unwrap_or(u32::MAX))
    }

    /// The counter as the peers protocol carries it: start tick, current
    /// and previous period's counts.
    pub fn parts(&self) -> (u32, u32, u32) {
        (self.tick, self.curr, self.prev)
    }

    /// A counter from its parts (see [`FreqCtr::parts`]).
    pub fn from_parts(tick: u32, curr: u32, prev: u32) -> FreqCtr {
        FreqCtr { tick, curr, prev }
    }

    /// A counter set to `curr` events in a period starting at `now`
    /// (`set table … data.conn_rate <v>`).
    pub fn with(now: u32, curr: u32) -> FreqCtr {
        FreqCtr {
            tick: now,
            curr,
            prev: 0,
        }
    }
}
