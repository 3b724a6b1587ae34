//! One stick table shared by every thread: entries in shards, each behind
//! its own lock, found by key; expiry from the last touch, and the least
//! recently used unreferenced entries evicted when the table is full.

use std::fmt::Write as _;
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::data::{DataType, Schema, Value};
use crate::freq::FreqCtr;
use crate::key::{Key, KeyType};

/// The shards of a table: a power of two.
const SHARDS: usize = 16;

/// A table as configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableDef {
    pub name: String,
    pub key: KeyType,
    pub size: usize,
    /// Milliseconds an entry lives after its last touch.
    pub expire: Option<u32>,
    pub nopurge: bool,
    /// `srvkey addr`: `server_key` holds servers' addresses, not names.
    pub srvkey_addr: bool,
    pub schema: Schema,
}

/// The clock tables read: milliseconds on a wrapping tick.
pub type Clock = Arc<dyn Fn() -> u32 + Send + Sync>;

/// An event counted on the entries a stream tracks (its count and its
/// rate, where stored).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    Conn,
    Sess,
    HttpReq,
    HttpErr,
    HttpFail,
    BytesIn(u64),
    BytesOut(u64),
}

impl Event {
    fn columns(self) -> (DataType, DataType, u64) {
        use DataType::*;
        match self {
            Event::Conn => (ConnCnt, ConnRate, 1),
            Event::Sess => (SessCnt, SessRate, 1),
            Event::HttpReq => (HttpReqCnt, HttpReqRate, 1),
            Event::HttpErr => (HttpErrCnt, HttpErrRate, 1),
            Event::HttpFail => (HttpFailCnt, HttpFailRate, 1),
            Event::BytesIn(n) => (BytesInCnt, BytesInRate, n),
            Event::BytesOut(n) => (BytesOutCnt, BytesOutRate, n),
        }
    }

    /// The event's bit in [`Table::counted`].
    fn bit(self) -> u8 {
        match self {
            Event::Conn => 1,
            Event::Sess => 2,
            Event::HttpReq => 4,
            Event::HttpErr => 8,
            Event::HttpFail => 16,
            Event::BytesIn(_) => 32,
            Event::BytesOut(_) => 64,
        }
    }

    /// One event of each kind.
    const ALL: [Event; 7] = [
        Event::Conn,
        Event::Sess,
        Event::HttpReq,
        Event::HttpErr,
        Event::HttpFail,
        Event::BytesIn(0),
        Event::BytesOut(0),
    ];
}

/// One entry: its key, how many streams track it, when it expires and
/// was last touched (read without a lock), and its values.
#[derive(Debug)]
pub struct Entry {
    key: Key,
    refs: AtomicU32,
    /// The tick it expires at, or `NEVER`.
    expire: AtomicU64,
    /// Its last touch, for eviction.
    seen: AtomicU32,
    values: Mutex<Vec<Value>>,
}

/// `Entry::expire` of an entry that never expires.
const NEVER: u64 = u64::MAX;

impl Entry {
    /// Its key.
    pub fn key(&self) -> &Key {
        &self.key
    }

    /// How many trackers hold it (`use=`).
    pub fn refs(&self) -> u32 {
        self.refs.load(Ordering::Relaxed)
    }

    fn values(&self) -> MutexGuard<'_, Vec<Value>> {
        self.values.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn expire_at(&self) -> Option<u32> {
        let x = self.expire.load(Ordering::Relaxed);
        (x != NEVER).then_some(x as u32)
    }
}

type Shard = hashbrown::HashTable<Arc<Entry>>;

/// A stick table.
pub struct Table {
    def: TableDef,
    shards: Box<[Mutex<Shard>; SHARDS]>,
    /// Keys are the clients' data: a seeded hash (foldhash, as hashbrown's
    /// default).
    pick: hashbrown::DefaultHashBuilder,
    used: AtomicUsize,
    /// The events whose count or rate the table stores (bits of
    /// [`Event::bit`]), and where `conn_cur` is: asked on every request.
    counted: u8,
    conn_cur: Option<usize>,
    clock: Clock,
    /// Local changes in order, for the peers (kept once the table is
    /// shared: once `on_change` is set).
    log: Mutex<UpdateLog>,
    /// Called after each local change of a shared table (wakes the
    /// peers' sessions).
    on_change: std::sync::OnceLock<Box<dyn Fn() + Send + Sync>>,
}

/// The keys changed locally, by update number.
#[derive(Debug, Default)]
struct UpdateLog {
    last: u32,
    order: std::collections::BTreeMap<u32, Key>,
    /// Each key's place in `order`.
    at: hashbrown::HashMap<Key, u32>,
}

impl std::fmt::Debug for Table {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Table").field("def", &self.def).finish()
    }
}

/// Whether `at` has passed `now` on the wrapping tick.
fn passed(now: u32, at: u32) -> bool {
    now.wrapping_sub(at) as i32 >= 0
}

impl Table {
    pub fn new(def: TableDef, clock: Clock) -> Table {
        let hasher = hashbrown::DefaultHashBuilder::default();
        let counted = Event::ALL
            .iter()
            .filter(|&&ev| stores(&def.schema, ev))
            .fold(0, |bits, ev| bits | ev.bit());
        Table {
            counted,
            conn_cur: def.schema.find(DataType::ConnCur, 0),
            def,
            shards: Box::new(std::array::from_fn(|_| Mutex::new(Shard::new()))),
            pick: hasher,
            used: AtomicUsize::new(0),
            clock,
            log: Mutex::new(UpdateLog::default()),
            on_change: std::sync::OnceLock::new(),
        }
    }

    pub fn def(&self) -> &TableDef {
        &self.def
    }

    pub fn name(&self) -> &str {
        &self.def.name
    }

    /// Entries in the table (`table_cnt`).
    pub fn used(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }

    /// The table's clock, now.
    pub fn now(&self) -> u32 {
        (self.clock)()
    }

    fn hash(&self, key: &Key) -> u64 {
        self.pick.hash_one(key)
    }

    /// The shard of hash `h` (bits the shard's own table does not use
    /// much: its low bits pick buckets, its top ones tag them).
    fn shard(&self, h: u64) -> MutexGuard<'_, Shard> {
        let i = (h >> 32) as usize & (SHARDS - 1);
        let [first, ..] = &*self.shards;
        let m = self.shards.get(i).unwrap_or(first);
        m.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn expired(e: &Entry, now: u32) -> bool {
        e.refs() == 0 && e.expire_at().is_some_and(|at| passed(now, at))
    }

    /// The live entry of `key` in a locked shard; an expired one goes.
    fn find(&self, shard: &mut Shard, h: u64, key: &Key, now: u32) -> Option<Arc<Entry>> {
        let found = shard.find_entry(h, |e| e.key == *key).ok()?;
        if Self::expired(found.get(), now) {
            found.remove();
            self.used.fetch_sub(1, Ordering::Relaxed);
            self.forget(key);
            return None;
        }
        Some(found.get().clone())
    }

    /// The live entry of `key`, without touching it.
    pub fn lookup(&self, key: &Key) -> Option<Arc<Entry>> {
        let h = self.hash(key);
        self.find(&mut self.shard(h), h, key, self.now())
    }

    /// The entry of `key`, made when missing: `None` when the table is
    /// full and nothing can be evicted (or `nopurge`).
    pub fn get_or_create(&self, key: &Key) -> Option<Arc<Entry>> {
        let now = self.now();
        let h = self.hash(key);
        if let Some(e) = self.find(&mut self.shard(h), h, key, now) {
            return Some(e);
        }
        if self.used() >= self.def.size && (self.def.nopurge || self.evict(now) == 0) {
            return None;
        }
        let mut shard = self.shard(h);
        if let Some(e) = shard.find(h, |e| e.key == *key) {
            return Some(e.clone());
        }
        let e = Arc::new(Entry {
            key: key.clone(),
            refs: AtomicU32::new(0),
            expire: AtomicU64::new(
                self.def
                    .expire
                    .map_or(NEVER, |x| u64::from(now.wrapping_add(x))),
            ),
            seen: AtomicU32::new(now),
            values: Mutex::new(self.def.schema.empty()),
        });
        shard.insert_unique(h, e.clone(), |e| self.pick.hash_one(&e.key));
        self.used.fetch_add(1, Ordering::Relaxed);
        Some(e)
    }

    /// Removes up to 1/256 of the table (at least one entry): the
    /// unreferenced entries touched least recently. Returns how many went.
    /// One pass over the table keeps only the candidates (a bounded heap,
    /// youngest on top), so a full table that keeps taking new keys costs
    /// no copy of every key.
    fn evict(&self, now: u32) -> usize {
        use std::cmp::Reverse;
        use std::collections::BinaryHeap;
        let n = self.def.size / 256 + 1;
        // (Reverse(age), key): the top is the youngest candidate.
        let mut oldest: BinaryHeap<(Reverse<u32>, Key)> = BinaryHeap::with_capacity(n + 1);
        for m in self.shards.iter() {
            let shard = m.lock().unwrap_or_else(|e| e.into_inner());
            for e in shard.iter().filter(|e| e.refs() == 0) {
                let age = now.wrapping_sub(e.seen.load(Ordering::Relaxed));
                let younger = oldest.peek().is_some_and(|(Reverse(a), _)| age <= *a);
                if oldest.len() < n {
                    oldest.push((Reverse(age), e.key.clone()));
                } else if !younger {
                    oldest.pop();
                    oldest.push((Reverse(age), e.key.clone()));
                }
            }
        }
        let mut gone = 0;
        for (_, k) in oldest {
            let h = self.hash(&k);
            let mut shard = self.shard(h);
            if let Ok(o) = shard.find_entry(h, |e| e.key == k && e.refs() == 0) {
                o.remove();
                gone += 1;
                self.forget(&k);
            }
        }
        self.used.fetch_sub(gone, Ordering::Relaxed);
        gone
    }

    /// Refreshes `e`'s expiry (a track, a stick match or store), a local
    /// change the peers learn.
    pub fn touch(&self, e: &Entry) {
        self.touch_at(e, self.now());
        self.changed(e);
    }

    fn log(&self) -> MutexGuard<'_, UpdateLog> {
        self.log.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// From now on, local changes are kept in order for the peers, and
    /// `wake` is called after each.
    pub fn share(&self, wake: Box<dyn Fn() + Send + Sync>) {
        let _ = self.on_change.set(wake);
    }

    /// Leaves a removed entry's key out of the update log.
    fn forget(&self, key: &Key) {
        if self.on_change.get().is_none() {
            return;
        }
        let mut log = self.log();
        if let Some(n) = log.at.remove(key) {
            log.order.remove(&n);
        }
    }

    /// Notes a local change of `e` (when the table is shared; an
    /// unshared table takes no lock).
    fn changed(&self, e: &Entry) {
        if self.on_change.get().is_none() {
            return;
        }
        let mut log = self.log();
        log.last = log.last.wrapping_add(1).max(1);
        let n = log.last;
        if let Some(old) = log.at.insert(e.key.clone(), n) {
            log.order.remove(&old);
        }
        log.order.insert(n, e.key.clone());
        drop(log);
        if let Some(wake) = self.on_change.get() {
            wake();
        }
    }

    /// The last local change's number.
    pub fn last_update(&self) -> u32 {
        self.log().last
    }

    /// Up to `max` local changes after number `after`, in order, with
    /// their entries (those gone since are left out).
    pub fn updates_after(&self, after: u32, max: usize) -> Vec<(u32, Arc<Entry>)> {
        let keys: Vec<(u32, Key)> = {
            let log = self.log();
            log.order
                .range(after.saturating_add(1)..)
                .take(max)
                .map(|(n, k)| (*n, k.clone()))
                .collect()
        };
        keys.into_iter()
            .filter_map(|(n, k)| self.lookup(&k).map(|e| (n, e)))
            .collect()
    }

    /// An entry's values, for sending.
    pub fn values_of(&self, e: &Entry) -> Vec<Value> {
        e.values().clone()
    }

    /// Applies what a peer sent for `key`: the values this table stores,
    /// the entry touched (not a local change: not sent back).
    pub fn apply_remote(&self, key: &Key, sent: &[(DataType, usize, crate::peers::Sent)]) {
        use crate::peers::Sent;
        let Some(e) = self.get_or_create(key) else {
            return;
        };
        let now = self.now();
        self.touch_at(&e, now);
        let s = &self.def.schema;
        let mut vals = e.values();
        for (ty, idx, v) in sent {
            let Some(slot) = s.find(*ty, *idx).and_then(|at| vals.get_mut(at)) else {
                continue;
            };
            *slot = match v {
                Sent::Count(n) => Value::Count(*n),
                Sent::Freq {
                    elapsed,
                    curr,
                    prev,
                } => Value::Freq(crate::peers::freq_of(now, *elapsed, *curr, *prev)),
                Sent::Text(t) => Value::Text(t.as_deref().map(Into::into)),
            };
        }
    }

    fn touch_at(&self, e: &Entry, now: u32) {
        e.seen.store(now, Ordering::Relaxed);
        if let Some(x) = self.def.expire {
            e.expire
                .store(u64::from(now.wrapping_add(x)), Ordering::Relaxed);
        }
    }

    /// Milliseconds until `e` expires (`None`: the table has no expiry).
    pub fn expire_in(&self, e: &Entry) -> Option<u32> {
        let now = self.now();
        let at = e.expire_at()?;
        Some(if passed(now, at) {
            0
        } else {
            at.wrapping_sub(now)
        })
    }

    /// Milliseconds since `e` was last touched.
    pub fn idle(&self, e: &Entry) -> u32 {
        self.now().wrapping_sub(e.seen.load(Ordering::Relaxed))
    }

    /// Starts tracking `key`: the entry, referenced, touched and with a
    /// connection counted (`conn_cnt`, `conn_cur`, `conn_rate`).
    pub fn track(self: &Arc<Self>, key: &Key) -> Option<Tracker> {
        self.track_counting(key, &[])
    }

    /// [`Table::track`], with `also` counted on the entry under the same
    /// lock (an HTTP rule's tracker counts its request at once).
    pub fn track_counting(self: &Arc<Self>, key: &Key, also: &[Event]) -> Option<Tracker> {
        let e = self.get_or_create(key)?;
        e.refs.fetch_add(1, Ordering::Relaxed);
        let now = self.now();
        self.touch_at(&e, now);
        let s = &self.def.schema;
        let mut vals = e.values();
        add_at(s, &mut vals, self.conn_cur, 1, now);
        let conn = [Event::Conn];
        for &ev in conn.iter().chain(also).filter(|ev| self.counts(**ev)) {
            count_in(s, &mut vals, ev, now);
        }
        drop(vals);
        self.changed(&e);
        Some(Tracker {
            table: self.clone(),
            entry: e,
        })
    }

    fn update<R>(&self, e: &Entry, f: impl FnOnce(&Schema, &mut Vec<Value>, u32) -> R) -> R {
        let now = self.now();
        f(&self.def.schema, &mut e.values(), now)
    }

    /// Counts `ev` on `e`.
    pub fn count(&self, e: &Entry, ev: Event) {
        self.count_all(e, &[ev])
    }

    /// Whether the table stores a count or a rate of `ev`.
    fn counts(&self, ev: Event) -> bool {
        self.counted & ev.bit() != 0
    }

    /// Counts each of `evs` on `e` (one lock).
    pub fn count_all(&self, e: &Entry, evs: &[Event]) {
        // Nothing stored for them: no lock, no clock.
        if !evs.iter().any(|&ev| self.counts(ev)) {
            return;
        }
        self.update(e, |s, vals, now| {
            for &ev in evs.iter().filter(|ev| self.counts(**ev)) {
                count_in(s, vals, ev, now);
            }
        })
    }

    /// `sc-inc-gpc(idx)`: the counter and its rate, by one; returns the
    /// counter (`None` when neither is stored).
    pub fn inc_gpc(&self, e: &Entry, idx: usize) -> Option<u64> {
        self.add_gpc(e, idx, 1)
    }

    /// `sc-add-gpc(idx, n)`.
    pub fn add_gpc(&self, e: &Entry, idx: usize, n: u64) -> Option<u64> {
        let r = self.update(e, |s, vals, now| {
            let c = s.gpc(idx);
            let r = s.gpc_rate(idx);
            add_at(s, vals, r, n, now);
            add_at(s, vals, c, n, now);
            c.and_then(|c| vals.get(c)).and_then(value_count)
        });
        self.changed(e);
        r
    }

    /// `sc-clr-gpc(idx)`: the counter to 0; returns its old value.
    pub fn clr_gpc(&self, e: &Entry, idx: usize) -> Option<u64> {
        let r = self.update(e, |s, vals, _| {
            let v = s.gpc(idx).and_then(|c| vals.get_mut(c))?;
            let old = value_count(v);
            *v = Value::Count(0);
            old
        });
        self.changed(e);
        r
    }

    /// `sc-set-gpt(idx, v)`: false when the tag is not stored.
    pub fn set_gpt(&self, e: &Entry, idx: usize, v: u64) -> bool {
        let r = self.update(e, |s, vals, _| {
            match s.gpt(idx).and_then(|c| vals.get_mut(c)) {
                Some(slot) => {
                    *slot = Value::Count(v.min(u64::from(u32::MAX)));
                    true
                }
                None => false,
            }
        });
        self.changed(e);
        r
    }

    /// Column `at`'s value now (rates read at the current tick).
    pub fn read(&self, e: &Entry, at: usize) -> Option<ReadValue> {
        self.update(e, |s, vals, now| {
            let col = s.column(at)?;
            Some(match vals.get(at)? {
                Value::Count(c) => ReadValue::Num(*c),
                Value::Freq(f) => ReadValue::Num(u64::from(f.read(now, col.period))),
                Value::Text(t) => ReadValue::Text(t.as_deref().map(str::to_string)),
            })
        })
    }

    /// Sets column `at` (`set table … data.<type> <v>`, `stick store`):
    /// a count, a rate's current period, or a text.
    pub fn write(&self, e: &Entry, at: usize, v: ReadValue) {
        self.update(e, |_, vals, now| {
            if let Some(slot) = vals.get_mut(at) {
                *slot = match (&*slot, v) {
                    (Value::Freq(_), ReadValue::Num(n)) => {
                        Value::Freq(FreqCtr::with(now, u32::try_from(n).unwrap_or(u32::MAX)))
                    }
                    (Value::Text(_), ReadValue::Text(t)) => Value::Text(t.map(Into::into)),
                    (_, ReadValue::Num(n)) => Value::Count(n),
                    (_, ReadValue::Text(_)) => return,
                };
            }
        });
        self.changed(e);
    }

    /// Removes the expired unreferenced entries; returns how many went.
    pub fn purge(&self) -> usize {
        let now = self.now();
        self.remove_where(|e| Self::expired(e, now))
    }

    /// Removes the unreferenced entries `keep` says no to (`clear table`);
    /// returns how many went.
    pub fn clear(&self, remove: impl Fn(&Entry) -> bool) -> usize {
        self.remove_where(|e| e.refs() == 0 && remove(e))
    }

    fn remove_where(&self, remove: impl Fn(&Entry) -> bool) -> usize {
        let shared = self.on_change.get().is_some();
        let mut gone = 0;
        let mut keys = Vec::new();
        for m in self.shards.iter() {
            let mut shard = m.lock().unwrap_or_else(|e| e.into_inner());
            let before = shard.len();
            shard.retain(|e| {
                let r = remove(e);
                if r && shared {
                    keys.push(e.key.clone());
                }
                !r
            });
            gone += before - shard.len();
        }
        self.used.fetch_sub(gone, Ordering::Relaxed);
        for k in &keys {
            self.forget(k);
        }
        gone
    }

    /// Every live entry (a snapshot).
    pub fn entries(&self) -> Vec<Arc<Entry>> {
        let now = self.now();
        let mut all = Vec::with_capacity(self.used());
        for m in self.shards.iter() {
            let shard = m.lock().unwrap_or_else(|e| e.into_inner());
            all.extend(shard.iter().filter(|e| !Self::expired(e, now)).cloned());
        }
        all
    }

    /// `show table`'s line for `e`: address, key, use, expiry and the
    /// stored values.
    pub fn dump(&self, e: &Arc<Entry>) -> String {
        let now = self.now();
        let exp = e.expire_at().map_or(0, |at| {
            if passed(now, at) {
                0
            } else {
                at.wrapping_sub(now)
            }
        });
        let vals = e.values();
        let mut out = format!(
            "{:p}: key={} use={} exp={exp}",
            Arc::as_ptr(e),
            e.key.display(self.def.key),
            e.refs()
        );
        for (col, v) in self.def.schema.columns().iter().zip(vals.iter()) {
            let name = match col.ty {
                DataType::Gpt => format!("gpt{}", col.idx),
                DataType::Gpc => format!("gpc{}", col.idx),
                DataType::GpcRate => format!("gpc{}_rate", col.idx),
                t => t.name().to_string(),
            };
            let _ = match v {
                Value::Count(c) => write!(out, " {name}={c}"),
                Value::Freq(f) => {
                    write!(out, " {name}({})={}", col.period, f.read(now, col.period))
                }
                Value::Text(t) => write!(out, " {name}={}", t.as_deref().unwrap_or("-")),
            };
        }
        out
    }
}

/// A value as read or written from outside.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadValue {
    Num(u64),
    Text(Option<String>),
}

fn value_count(v: &Value) -> Option<u64> {
    match v {
        Value::Count(c) => Some(*c),
        _ => None,
    }
}

/// Whether `s` stores a count or a rate of `ev`.
fn stores(s: &Schema, ev: Event) -> bool {
    let (cnt, rate, _) = ev.columns();
    s.find(cnt, 0).is_some() || s.find(rate, 0).is_some()
}

/// Counts `ev` in an entry's values: its count and its rate.
fn count_in(s: &Schema, vals: &mut [Value], ev: Event, now: u32) {
    let (cnt, rate, n) = ev.columns();
    add_at(s, vals, s.find(cnt, 0), n, now);
    add_at(s, vals, s.find(rate, 0), n, now);
}

/// Adds `n` at column `at`: to a count (32 bits wrapping, 64 for bytes)
/// or a rate.
fn add_at(s: &Schema, vals: &mut [Value], at: Option<usize>, n: u64, now: u32) {
    let (Some(at), Some(col)) = (at, at.and_then(|a| s.column(a))) else {
        return;
    };
    match vals.get_mut(at) {
        Some(Value::Count(c)) if col.ty.is_long() => *c = c.wrapping_add(n),
        Some(Value::Count(c)) => *c = u64::from((*c as u32).wrapping_add(n as u32)),
        Some(Value::Freq(f)) => f.add(now, col.period, u32::try_from(n).unwrap_or(u32::MAX)),
        _ => {}
    }
}

/// A stream's hold on an entry (`track-sc*`): counts on it while it
/// lives; dropping it ends the connection it counted (`conn_cur`) and
/// touches the entry.
#[derive(Debug)]
pub struct Tracker {
    table: Arc<Table>,
    entry: Arc<Entry>,
}

impl Tracker {
    pub fn table(&self) -> &Arc<Table> {
        &self.table
    }

    pub fn entry(&self) -> &Arc<Entry> {
        &self.entry
    }

    /// Counts `ev` on the tracked entry.
    pub fn count(&self, ev: Event) {
        self.table.count(&self.entry, ev)
    }

    /// Counts each of `evs` on the tracked entry (one lock).
    pub fn count_all(&self, evs: &[Event]) {
        self.table.count_all(&self.entry, evs)
    }
}

impl Drop for Tracker {
    fn drop(&mut self) {
        let now = match self.table.conn_cur {
            Some(i) => self.table.update(&self.entry, |_, vals, now| {
                if let Some(Value::Count(c)) = vals.get_mut(i) {
                    *c = c.saturating_sub(1);
                }
                now
            }),
            // No `conn_cur`: the values are left unlocked.
            None => self.table.now(),
        };
        self.table.touch_at(&self.entry, now);
        self.table.changed(&self.entry);
        self.entry.refs.fetch_sub(1, Ordering::Relaxed);
    }
}
