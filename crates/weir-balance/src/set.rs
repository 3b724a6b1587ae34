//! The server set of one backend: states, weights, connection counts, and
//! the pick for each algorithm (roundrobin, static-rr, leastconn, first,
//! source, random). Backup servers serve only when no active one is up.

use crate::hash::{self, Ring};
use crate::rng::Rng;
use weir_config::{Balance, HashType};

/// Which algorithm a set runs.
pub type Algo = Balance;

/// Static facts about a server.
#[derive(Debug, Clone)]
pub struct ServerInfo {
    pub id: u32,
    pub weight: u32,
    pub backup: bool,
    pub maxconn: Option<u32>,
    /// `minconn`: with `maxconn`, the limit ramps from it up to `maxconn`
    /// as the backend's load reaches `fullconn`.
    pub minconn: Option<u32>,
}

/// The backend's load a dynamic limit (`minconn`) follows: its sessions
/// now, and `fullconn`, where every server reaches its `maxconn`.
#[derive(Debug, Clone, Copy)]
struct Ramp {
    load: u32,
    fullconn: u32,
}

impl Ramp {
    /// A server's limit now: `maxconn` at full load (or without a
    /// `minconn` below it), else `maxconn × load / fullconn`, never under
    /// `minconn` (as haproxy 2.6 sizes it).
    fn limit(self, max: u32, min: Option<u32>) -> u32 {
        match min {
            Some(min) if min != max && self.load < self.fullconn => {
                let share = u64::from(max) * u64::from(self.load) / u64::from(self.fullconn.max(1));
                min.max(u32::try_from(share).unwrap_or(max))
            }
            _ => max,
        }
    }
}

#[derive(Debug, Clone)]
struct Slot {
    info: ServerInfo,
    up: bool,
    maint: bool,
    /// Maintenance inherited from the server it tracks.
    imaint: bool,
    /// Up but taking no new traffic (a check's NOLB).
    nolb: bool,
    weight: u32,
    conns: u32,
    /// Smooth weighted round-robin accumulator.
    current: i64,
}

impl Slot {
    fn usable(&self) -> bool {
        self.up && !self.maint && !self.imaint && !self.nolb && self.weight > 0
    }
    fn has_room(&self, ramp: Ramp) -> bool {
        self.info
            .maxconn
            .is_none_or(|m| self.conns < ramp.limit(m, self.info.minconn))
    }
}

/// The outcome of a pick.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pick {
    /// Connect to this server (its slot is taken by `take`).
    Server(usize),
    /// Every usable server is full: wait in the backend queue.
    QueueBackend,
    /// The hash chose this server and it is full: wait in its queue.
    QueueServer(usize),
    /// No usable server at all.
    NoServer,
}

/// A backend's servers and its balancing state.
#[derive(Debug, Clone)]
pub struct ServerSet {
    slots: Vec<Slot>,
    algo: Algo,
    hash_type: HashType,
    allbackups: bool,
    rr_next: usize,
    ring: Ring,
    ring_dirty: bool,
    /// `hash-balance-factor`: with consistent hashing, no server takes
    /// more than this percentage of the average load (0: no bound).
    balance_factor: u32,
    /// What dynamic limits follow (see [`ServerSet::note_load`]).
    ramp: Ramp,
    /// Scratch lists reused by every pick (none is allocated per request).
    pool_buf: Vec<usize>,
    avail_buf: Vec<usize>,
}

impl ServerSet {
    pub fn new(
        algo: Algo,
        hash_type: HashType,
        allbackups: bool,
        servers: Vec<ServerInfo>,
    ) -> Self {
        let slots = servers
            .into_iter()
            .map(|info| Slot {
                weight: info.weight,
                info,
                up: true,
                maint: false,
                imaint: false,
                nolb: false,
                conns: 0,
                current: 0,
            })
            .collect();
        ServerSet {
            slots,
            algo,
            hash_type,
            allbackups,
            rr_next: 0,
            ramp: Ramp {
                load: 0,
                fullconn: 1,
            },
            ring: Ring::default(),
            balance_factor: 0,
            ring_dirty: true,
            pool_buf: Vec::new(),
            avail_buf: Vec::new(),
        }
    }

    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether servers may be added at run time: every algorithm whose
    /// picks do not depend on a fixed list (not `static-rr`, nor a
    /// map-based hash), as haproxy's dynamic servers.
    pub fn takes_new_servers(&self) -> bool {
        let hashed = matches!(self.algo, Balance::Source | Balance::Key);
        self.algo != Balance::StaticRr
            && !(hashed && self.hash_type.method == weir_config::HashMethod::MapBased)
    }

    /// Adds a server (`add server`), in maintenance: its index.
    pub fn add(&mut self, info: ServerInfo) -> usize {
        self.slots.push(Slot {
            weight: info.weight,
            info,
            up: true,
            maint: true,
            imaint: false,
            nolb: false,
            conns: 0,
            current: 0,
        });
        self.ring_dirty = true;
        self.slots.len() - 1
    }
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Indices of the servers that may take traffic now: the usable actives,
    /// or else the usable backups (all of them with `allbackups`, otherwise
    /// the first by id).
    fn pool(&self, out: &mut Vec<usize>) {
        out.clear();
        out.extend(
            (0..self.slots.len()).filter(|&i| !self.slots[i].info.backup && self.slots[i].usable()),
        );
        if !out.is_empty() {
            return;
        }
        out.extend(
            (0..self.slots.len()).filter(|&i| self.slots[i].info.backup && self.slots[i].usable()),
        );
        if !self.allbackups {
            out.sort_by_key(|&i| self.slots[i].info.id);
            out.truncate(1);
        }
    }

    /// Bounds consistent hashing's load (`hash-balance-factor`, a
    /// percentage over 100; 0 lifts the bound).
    pub fn set_balance_factor(&mut self, factor: u32) {
        self.balance_factor = factor;
    }

    /// Whether server `i` of `pool` may take one more connection under
    /// the `hash-balance-factor` bound: its share, by weight, of the
    /// connections of the pool (this one included) times the factor,
    /// rounded up, and at least one.
    /// `served` and `total_w`: the pool's connections and weight, summed
    /// once per pick.
    fn under_bound(&self, served: u64, total_w: u64, i: usize) -> bool {
        let w = u64::from(self.slots[i].weight);
        let f = u64::from(self.balance_factor);
        let bound = ((served + 1) * f * w).div_ceil(100 * total_w.max(1)).max(1);
        u64::from(self.slots[i].conns) < bound
    }

    /// Chooses a server for a new connection. `key` is what `balance source`
    /// hashes (the client address bytes); `avoid` is a server that just
    /// failed (redispatch), skipped when another one can serve.
    pub fn pick(&mut self, key: &[u8], rng: &mut Rng, avoid: Option<usize>) -> Pick {
        let mut pool = std::mem::take(&mut self.pool_buf);
        let mut avail = std::mem::take(&mut self.avail_buf);
        self.pool(&mut pool);
        let pick = self.pick_in(&pool, &mut avail, key, rng, avoid);
        self.pool_buf = pool;
        self.avail_buf = avail;
        pick
    }

    fn pick_in(
        &mut self,
        pool: &[usize],
        avail: &mut Vec<usize>,
        key: &[u8],
        rng: &mut Rng,
        avoid: Option<usize>,
    ) -> Pick {
        if pool.is_empty() {
            return Pick::NoServer;
        }
        if self.algo == Balance::Source || (self.algo == Balance::Key && !key.is_empty()) {
            return self.pick_hash(pool, key, avoid);
        }
        avail.clear();
        let ramp = self.ramp;
        avail.extend(
            pool.iter()
                .copied()
                .filter(|&i| self.slots[i].has_room(ramp)),
        );
        if avail.len() > 1 {
            if let Some(a) = avoid {
                avail.retain(|&i| i != a);
            }
        }
        if avail.is_empty() {
            return Pick::QueueBackend;
        }
        let chosen = match self.algo {
            // `Key` without its request part falls back to round robin.
            Balance::RoundRobin | Balance::StaticRr | Balance::Key => self.pick_swrr(avail),
            Balance::LeastConn => self.pick_leastconn(avail),
            Balance::First => {
                avail.sort_by_key(|&i| self.slots[i].info.id);
                avail[0]
            }
            Balance::Random { draws } => self.pick_random(avail, rng, draws),
            Balance::Source => avail[0],
        };
        Pick::Server(chosen)
    }

    fn pick_swrr(&mut self, avail: &[usize]) -> usize {
        let total: i64 = avail.iter().map(|&i| i64::from(self.slots[i].weight)).sum();
        let mut best = avail[0];
        for &i in avail {
            let s = &mut self.slots[i];
            s.current += i64::from(s.weight);
            if s.current > self.slots[best].current {
                best = i;
            }
        }
        self.slots[best].current -= total;
        best
    }

    /// Fewest connections relative to weight; ties rotate.
    fn pick_leastconn(&mut self, avail: &[usize]) -> usize {
        let n = avail.len();
        let start = self.rr_next % n;
        let mut best = avail[start];
        for k in 1..n {
            let i = avail[(start + k) % n];
            let (a, b) = (&self.slots[i], &self.slots[best]);
            if u64::from(a.conns) * u64::from(b.weight) < u64::from(b.conns) * u64::from(a.weight) {
                best = i;
            }
        }
        self.rr_next = self.rr_next.wrapping_add(1);
        best
    }

    /// Power of `draws` choices among weighted random draws.
    fn pick_random(&self, avail: &[usize], rng: &mut Rng, draws: u32) -> usize {
        let total: u64 = avail.iter().map(|&i| u64::from(self.slots[i].weight)).sum();
        let mut best: Option<usize> = None;
        for _ in 0..draws.max(1) {
            let mut r = rng.below(total.max(1));
            let mut cand = avail[0];
            for &i in avail {
                let w = u64::from(self.slots[i].weight);
                if r < w {
                    cand = i;
                    break;
                }
                r -= w;
            }
            best = Some(match best {
                None => cand,
                Some(b) => {
                    let (x, y) = (&self.slots[cand], &self.slots[b]);
                    if u64::from(x.conns) * u64::from(y.weight)
                        < u64::from(y.conns) * u64::from(x.weight)
                    {
                        cand
                    } else {
                        b
                    }
                }
            });
        }
        best.unwrap_or(avail[0])
    }

    fn pick_hash(&mut self, pool: &[usize], key: &[u8], avoid: Option<usize>) -> Pick {
        let h = hash::hash(self.hash_type.function, self.hash_type.avalanche, key);
        let target = if hash::is_consistent(self.hash_type.method) {
            if self.ring_dirty {
                let entries: Vec<(usize, u32, u32)> = pool
                    .iter()
                    .map(|&i| (i, self.slots[i].info.id, self.slots[i].weight))
                    .collect();
                self.ring = Ring::build(&entries);
                self.ring_dirty = false;
            }
            let bounded = self.balance_factor > 0;
            let (served, total_w) = match bounded {
                true => pool.iter().fold((0u64, 0u64), |(c, w), &p| {
                    let s = &self.slots[p];
                    (c + u64::from(s.conns), w + u64::from(s.weight))
                }),
                false => (0, 0),
            };
            let ok = |s: usize| {
                (avoid != Some(s) || pool.len() == 1)
                    && (!bounded || self.under_bound(served, total_w, s))
            };
            match (avoid, bounded) {
                (None, false) => self.ring.lookup(h),
                (Some(a), false) => self.ring.lookup_avoiding(h, a),
                // Every server at its bound: the first choice all the same.
                (_, true) => self
                    .ring
                    .lookup_where(h, ok)
                    .or_else(|| self.ring.lookup(h)),
            }
        } else {
            // The server at `h % total weight` in the list where each server
            // takes as many places as its weight.
            let skip = |i: usize| Some(i) == avoid && pool.len() > 1;
            let weights = pool
                .iter()
                .filter(|&&i| !skip(i))
                .map(|&i| (i, u64::from(self.slots[i].weight)));
            let total: u64 = weights.clone().map(|(_, w)| w).sum();
            let mut at = u64::from(h) % total.max(1);
            let mut found = None;
            for (i, w) in weights {
                if at < w {
                    found = Some(i);
                    break;
                }
                at -= w;
            }
            found
        };
        match target {
            None => Pick::NoServer,
            Some(t) if self.slots[t].has_room(self.ramp) => Pick::Server(t),
            Some(t) => Pick::QueueServer(t),
        }
    }

    /// A connection to server `i` starts.
    pub fn take(&mut self, i: usize) {
        if let Some(s) = self.slots.get_mut(i) {
            s.conns += 1;
        }
    }
    /// A connection to server `i` ended.
    pub fn release(&mut self, i: usize) {
        if let Some(s) = self.slots.get_mut(i) {
            s.conns = s.conns.saturating_sub(1);
        }
    }
    /// True when server `i` may take one more connection now.
    pub fn has_room(&self, i: usize) -> bool {
        self.slots
            .get(i)
            .is_some_and(|s| s.usable() && s.has_room(self.ramp))
    }
    /// Whether server `i` is under its `maxconn`, whatever its state and
    /// weight: a persistence (cookie, `use-server`) decides on those.
    pub fn below_maxconn(&self, i: usize) -> bool {
        self.slots.get(i).is_some_and(|s| s.has_room(self.ramp))
    }
    pub fn conns(&self, i: usize) -> u32 {
        self.slots.get(i).map_or(0, |s| s.conns)
    }
    /// A health check changed server `i`'s state.
    pub fn set_up(&mut self, i: usize, up: bool) {
        if let Some(s) = self.slots.get_mut(i) {
            s.up = up;
            s.current = 0;
            self.ring_dirty = true;
        }
    }
    /// Maintenance (`disabled`, runtime commands).
    pub fn set_maint(&mut self, i: usize, maint: bool) {
        if let Some(s) = self.slots.get_mut(i) {
            s.maint = maint;
            self.ring_dirty = true;
        }
    }
    /// Maintenance inherited from a tracked server (`track`).
    pub fn set_imaint(&mut self, i: usize, on: bool) {
        if let Some(s) = self.slots.get_mut(i) {
            s.imaint = on;
            self.ring_dirty = true;
        }
    }
    /// A check said server `i` takes no new traffic (NOLB), or again does.
    pub fn set_nolb(&mut self, i: usize, on: bool) {
        if let Some(s) = self.slots.get_mut(i) {
            s.nolb = on;
            s.current = 0;
            self.ring_dirty = true;
        }
    }
    /// Whether server `i` is in maintenance through the server it tracks.
    pub fn imaint(&self, i: usize) -> bool {
        self.slots.get(i).is_some_and(|s| s.imaint)
    }
    /// A new effective weight; ignored by `static-rr` once running, as in HAProxy,
    /// except to go to or from 0.
    pub fn set_weight(&mut self, i: usize, w: u32) {
        let static_rr = self.algo == Balance::StaticRr;
        if let Some(s) = self.slots.get_mut(i) {
            if static_rr && w != 0 && s.weight != 0 {
                return;
            }
            s.weight = w;
            self.ring_dirty = true;
        }
    }
    /// `fullconn`: the backend load at which servers with a `minconn`
    /// reach their `maxconn`.
    pub fn set_fullconn(&mut self, n: u32) {
        self.ramp.fullconn = n.max(1);
    }
    /// The backend's sessions now (connected and waiting), which the
    /// limits of servers with a `minconn` follow: given before a pick.
    pub fn note_load(&mut self, sessions: u32) {
        self.ramp.load = sessions;
    }
    /// A new connection limit for server `i` (`None`: no limit).
    pub fn set_maxconn(&mut self, i: usize, m: Option<u32>) {
        if let Some(s) = self.slots.get_mut(i) {
            s.info.maxconn = m;
        }
    }
    /// Server `i`'s connection limit.
    pub fn maxconn(&self, i: usize) -> Option<u32> {
        self.slots.get(i).and_then(|s| s.info.maxconn)
    }
    /// Server `i`'s (health up, maintenance, effective weight, backup).
    pub fn state(&self, i: usize) -> Option<(bool, bool, u32, bool)> {
        self.slots
            .get(i)
            .map(|s| (s.up, s.maint, s.weight, s.info.backup))
    }
    pub fn is_up(&self, i: usize) -> bool {
        self.slots
            .get(i)
            .is_some_and(|s| s.up && !s.maint && !s.imaint)
    }
    /// The weight of the farm: the usable active servers' (the usable
    /// backup servers' when no active one is).
    pub fn usable_weight(&self) -> u32 {
        let sum = |backup: bool| -> u32 {
            self.slots
                .iter()
                .filter(|s| s.info.backup == backup && s.usable())
                .map(|s| s.weight)
                .sum()
        };
        match sum(false) {
            0 => sum(true),
            w => w,
        }
    }
    /// (usable active servers, usable backup servers).
    pub fn usable_counts(&self) -> (usize, usize) {
        let act = self
            .slots
            .iter()
            .filter(|s| !s.info.backup && s.usable())
            .count();
        let bck = self
            .slots
            .iter()
            .filter(|s| s.info.backup && s.usable())
            .count();
        (act, bck)
    }
}

#[cfg(test)]
#[path = "set_tests.rs"]
mod tests;
