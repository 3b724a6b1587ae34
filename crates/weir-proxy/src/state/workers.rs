//! The worker threads' event loops, registered as they start, for jobs that
//! must run on a given thread (`show sess`) and their load (`show info`).

use std::sync::OnceLock;

/// The worker threads' event loops, for jobs that must run on them.
#[derive(Default)]
pub struct Workers(Vec<OnceLock<tokio::runtime::Handle>>);

impl Workers {
    pub fn new(n: usize) -> Workers {
        Workers((0..n).map(|_| OnceLock::new()).collect())
    }
    /// Called by worker thread `slot` (1-based) once its loop runs.
    pub fn set(&self, slot: usize, h: tokio::runtime::Handle) {
        if let Some(c) = slot.checked_sub(1).and_then(|i| self.0.get(i)) {
            let _ = c.set(h);
        }
    }
    /// The worker loops' load, summed: their live tasks, the tasks other
    /// threads queued for them, and the time they spent running tasks.
    pub fn load(&self) -> Load {
        let mut l = Load::default();
        for h in self.0.iter().filter_map(OnceLock::get) {
            let m = h.metrics();
            l.tasks += m.num_alive_tasks();
            l.queued += m.global_queue_depth();
            l.busy += m.worker_total_busy_duration(0);
        }
        l
    }
    pub(crate) fn get(&self, slot: usize) -> Option<&tokio::runtime::Handle> {
        slot.checked_sub(1)
            .and_then(|i| self.0.get(i))
            .and_then(OnceLock::get)
    }
}

/// What [`Workers::load`] reads (`show info`'s `Tasks`, `Run_queue` and,
/// sampled each second, `Idle_pct`).
#[derive(Debug, Default, Clone, Copy)]
pub struct Load {
    pub tasks: usize,
    pub queued: usize,
    pub busy: std::time::Duration,
}
