//! Rates and time averages for `show stat`, `show info` and Prometheus:
//! a task on the main thread reads the counters once a second and keeps a
//! short history of them, so the request path does nothing more than
//! count. A rate is what the last second added; a time average covers the
//! last [`WINDOW`] seconds with traffic, and stays at its last value while
//! nothing passes.

use crate::state::ServerId;
use crate::state::Shared;
use crate::state::{BackendId, FrontendId};
use crate::stats::{Counters, Ctr};
use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::Mutex;
use std::time::Duration;

/// Seconds of history a time average covers.
pub const WINDOW: usize = 16;

/// One second's totals of an object.
#[derive(Debug, Clone, Copy, Default)]
struct Snap {
    sess: u64,
    req: u64,
    /// Bytes sent to clients (the process's bit rate).
    bout: u64,
    /// (sum, count) of queue, connect, response and total times.
    times: [(u64, u64); 4],
}

/// What the runtime API shows for one object.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct View {
    /// Sessions (frontends: connections) in the last second, and the most
    /// seen in one second.
    pub rate: u64,
    pub rate_max: u64,
    /// HTTP requests in the last second, and the most in one second.
    pub req_rate: u64,
    pub req_rate_max: u64,
    /// Bytes sent to clients in the last second.
    pub bout_rate: u64,
    /// Average queue, connect, response and total times in ms.
    pub times: [u64; 4],
    /// Seconds since the last session, once there was one.
    pub lastsess: Option<u64>,
}

#[derive(Debug, Default)]
struct Track {
    hist: VecDeque<Snap>,
    view: View,
}

impl Track {
    fn push(&mut self, now: Snap) {
        if let Some(prev) = self.hist.back().copied() {
            let v = &mut self.view;
            v.rate = now.sess.saturating_sub(prev.sess);
            v.req_rate = now.req.saturating_sub(prev.req);
            v.bout_rate = now.bout.saturating_sub(prev.bout);
            v.rate_max = v.rate_max.max(v.rate);
            v.req_rate_max = v.req_rate_max.max(v.req_rate);
            v.lastsess = match (v.rate, v.lastsess) {
                (r, _) if r > 0 => Some(0),
                (_, Some(s)) => Some(s + 1),
                (_, None) => None,
            };
        }
        self.hist.push_back(now);
        if self.hist.len() > WINDOW + 1 {
            self.hist.pop_front();
        }
        if let Some(old) = self.hist.front() {
            let pairs = now.times.iter().zip(old.times.iter());
            for (avg, (new, old)) in self.view.times.iter_mut().zip(pairs) {
                let (sum, n) = (new.0.wrapping_sub(old.0), new.1.wrapping_sub(old.1));
                if n > 0 && n < u64::MAX / 2 {
                    *avg = sum / n;
                }
            }
        }
    }
}

/// Each object's history: frontends, backends and their servers, by index.
#[derive(Debug, Default)]
pub struct Rates {
    inner: Mutex<Tracks>,
}

#[derive(Debug, Default)]
struct Tracks {
    fe: Vec<Track>,
    be: Vec<Track>,
    srv: Vec<Vec<Track>>,
    /// The process: its frontends together (`show info`).
    process: Track,
    /// The workers' busy time at the last sample, and when it was taken.
    busy: Option<(std::time::Instant, Duration)>,
    /// The share of the last second the workers spent waiting for events.
    idle_pct: u64,
}

fn snap(c: &Counters, sess: u64) -> Snap {
    let pair = |s: Ctr, n: Ctr| (c.get(s), c.get(n));
    Snap {
        sess,
        req: c.get(Ctr::Requests),
        bout: c.get(Ctr::BytesOut),
        times: [
            pair(Ctr::QSum, Ctr::QN),
            pair(Ctr::CSum, Ctr::CN),
            pair(Ctr::RSum, Ctr::RN),
            pair(Ctr::TSum, Ctr::TN),
        ],
    }
}

fn grow(v: &mut Vec<Track>, n: usize) {
    if v.len() < n {
        v.resize_with(n, Track::default);
    }
}

impl Rates {
    /// Takes one second's totals of every object.
    pub fn sample(&self, sh: &Shared) {
        let mut t = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let t = &mut *t;
        grow(&mut t.fe, sh.frontends.len());
        let mut all = Snap::default();
        for (fe, hist) in sh.frontends.iter().zip(t.fe.iter_mut()) {
            let s = snap(&fe.counters, fe.total.load(Ordering::Relaxed));
            all.sess = all.sess.wrapping_add(s.sess);
            all.req = all.req.wrapping_add(s.req);
            all.bout = all.bout.wrapping_add(s.bout);
            hist.push(s);
        }
        t.process.push(all);
        let now = (std::time::Instant::now(), sh.workers.load().busy);
        if let Some((at, busy)) = t.busy.replace(now) {
            t.idle_pct = idle_pct(now.0 - at, now.1.saturating_sub(busy), sh.nthreads);
        }
        grow(&mut t.be, sh.backends.len());
        t.srv.resize_with(sh.backends.len(), Vec::new);
        for ((be, hist), srv) in sh.backends.iter().zip(&mut t.be).zip(&mut t.srv) {
            hist.push(snap(&be.counters, be.counters.get(Ctr::Sessions)));
            grow(srv, be.slot_count());
            for ((_, s), hist) in be.slots.iter().zip(srv.iter_mut()) {
                hist.push(snap(&s.counters, s.total.load(Ordering::Relaxed)));
            }
        }
    }

    fn read(&self, f: impl FnOnce(&Tracks) -> Option<&Track>) -> View {
        let t = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        f(&t).map(|t| t.view).unwrap_or_default()
    }
    pub fn frontend(&self, i: FrontendId) -> View {
        self.read(|t| t.fe.get(i.index()))
    }
    pub fn backend(&self, i: BackendId) -> View {
        self.read(|t| t.be.get(i.index()))
    }
    pub fn server(&self, be: BackendId, srv: ServerId) -> View {
        self.read(|t| t.srv.get(be.index())?.get(srv.index()))
    }
    pub fn process(&self) -> View {
        self.read(|t| Some(&t.process))
    }

    /// `show info`'s `Idle_pct`: 100 before the first two samples.
    pub fn idle_pct(&self) -> u64 {
        let t = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if t.busy.is_some() && t.process.hist.len() > 1 {
            t.idle_pct
        } else {
            100
        }
    }

    /// `clear counters`: the per-second maxima start again.
    pub fn clear_max(&self) {
        let mut t = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let t = &mut *t;
        let all =
            t.fe.iter_mut()
                .chain(t.be.iter_mut())
                .chain(t.srv.iter_mut().flatten())
                .chain(std::iter::once(&mut t.process));
        for tr in all {
            tr.view.rate_max = tr.view.rate;
            tr.view.req_rate_max = tr.view.req_rate;
        }
    }
}

/// The share of `wall` that `threads` threads, busy for `busy` in all,
/// spent idle, in percent.
fn idle_pct(wall: Duration, busy: Duration, threads: usize) -> u64 {
    let avail = wall.as_nanos() * threads.max(1) as u128;
    if avail == 0 {
        return 100;
    }
    let busy = busy.as_nanos().min(avail);
    ((avail - busy) * 100 / avail) as u64
}

/// Samples every second until the process stops (and sweeps the stick
/// tables' expired entries).
pub async fn run(sh: std::sync::Arc<Shared>) {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut stop = sh.stopping.subscribe();
    loop {
        tokio::select! {
            _ = tick.tick() => {
                sh.rates.sample(&sh);
                sh.tables.purge();
                // A backend's downtime: the seconds it had no usable server.
                for be in sh.backends.iter().filter(|b| b.servers().next().is_some()) {
                    if be.set().usable_counts() == (0, 0) {
                        be.downtime.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                }
            }
            _ = stop.wait_for(|s| *s) => return,
        }
    }
}

#[cfg(test)]
#[path = "rates_tests.rs"]
mod tests;
