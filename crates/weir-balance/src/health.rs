//! The rise/fall health counter of a checked server (manual "rise", "fall").
//! A server starts UP at the threshold, so one failed first check brings it
//! down; once fully up it takes `fall` failures, and `rise` successes to return.

/// Health of one server as consecutive check results move it.
#[derive(Debug, Clone)]
pub struct Health {
    rise: u32,
    fall: u32,
    health: u32,
    up: bool,
}

impl Health {
    pub fn new(rise: u32, fall: u32) -> Self {
        let rise = rise.max(1);
        Health {
            rise,
            fall: fall.max(1),
            health: rise,
            up: true,
        }
    }
    /// A server that starts down (its saved state said so): `rise`
    /// successes bring it up.
    pub fn down(rise: u32, fall: u32) -> Self {
        Health {
            health: 0,
            up: false,
            ..Health::new(rise, fall)
        }
    }
    pub fn is_up(&self) -> bool {
        self.up
    }
    /// The rise/fall counter: 0 (down) to rise + fall - 1 (fully up).
    pub fn value(&self) -> u32 {
        self.health
    }
    /// Feeds one check result; returns the new state when it changed.
    pub fn on_result(&mut self, ok: bool) -> Option<bool> {
        let full = self.rise + self.fall - 1;
        if ok {
            if self.up {
                self.health = full;
                return None;
            }
            self.health += 1;
            if self.health >= self.rise {
                self.up = true;
                self.health = full;
                return Some(true);
            }
            None
        } else {
            if !self.up {
                self.health = 0;
                return None;
            }
            self.health = self.health.saturating_sub(1);
            if self.health < self.rise {
                self.up = false;
                self.health = 0;
                return Some(false);
            }
            None
        }
    }
    /// True while moving between states (checks then use `fastinter`).
    pub fn transitioning(&self) -> bool {
        if self.up {
            self.health < self.rise + self.fall - 1
        } else {
            self.health > 0
        }
    }
    /// `on-error sudden-death`: an up server keeps one failure left
    /// before it goes down.
    pub fn sudden_death(&mut self) {
        if self.up {
            self.health = self.rise;
        }
    }
    /// Forces a state (runtime commands, `disabled` servers).
    pub fn force(&mut self, up: bool) {
        self.up = up;
        self.health = if up { self.rise + self.fall - 1 } else { 0 };
    }
}

#[cfg(test)]
#[path = "health_tests.rs"]
mod tests;

/// The weight a server has `elapsed` into its `slowstart` ramp after coming
/// back up: it grows linearly from 1 to `full` (never 0, so the server gets
/// some traffic from the start).
pub fn slowstart_weight(
    full: u32,
    elapsed: std::time::Duration,
    period: std::time::Duration,
) -> u32 {
    if period.is_zero() || elapsed >= period || full == 0 {
        return full;
    }
    let w = (u128::from(full) * elapsed.as_millis()) / period.as_millis().max(1);
    (w as u32).clamp(1, full)
}
