//! The stick tables of the configuration (one per `stick-table` line),
//! shared by every thread, and what a session or a stream tracks in them
//! (`track-sc0` to `track-sc2`).

use std::collections::HashMap;
use std::sync::Arc;

use weir_config::Config;
use weir_rules::stick::SLOTS;
use weir_stick::{Clock, Event, Key, Table, Tracker};

/// Every table, by name.
#[derive(Debug, Default)]
pub struct Tables {
    /// In the configuration's order.
    list: Vec<Arc<Table>>,
    by_name: HashMap<String, Arc<Table>>,
    /// Each proxy's own table, by its place in the configuration.
    by_proxy: Vec<Option<Arc<Table>>>,
}

impl Tables {
    /// The tables `cfg` declares, on weir's clock.
    pub fn build(cfg: &Config) -> Tables {
        let clock: Clock = Arc::new(crate::clock::ticks);
        let list: Vec<Arc<Table>> = cfg
            .proxies
            .iter()
            .filter_map(|p| p.stick_table.as_ref())
            .chain(cfg.peers.iter().flat_map(|s| &s.tables))
            .map(|t| Arc::new(Table::new(t.def.clone(), clock.clone())))
            .collect();
        let by_name: HashMap<String, Arc<Table>> = list
            .iter()
            .map(|t| (t.name().to_string(), t.clone()))
            .collect();
        let by_proxy = cfg
            .proxies
            .iter()
            .map(|p| p.stick_table.as_ref().and(by_name.get(&p.name).cloned()))
            .collect();
        Tables {
            list,
            by_name,
            by_proxy,
        }
    }

    /// The place of `px` in `cfg` (a proxy of this configuration), to find
    /// its table again without its name.
    pub fn place(cfg: &Config, px: &weir_config::Proxy) -> Option<usize> {
        let size = std::mem::size_of::<weir_config::Proxy>().max(1);
        let at = (px as *const weir_config::Proxy as usize)
            .wrapping_sub(cfg.proxies.as_ptr() as usize)
            / size;
        cfg.proxies
            .get(at)
            .is_some_and(|p| std::ptr::eq(p, px))
            .then_some(at)
    }

    /// The own table of the proxy at `place`.
    pub fn of_place(&self, place: usize) -> Option<&Arc<Table>> {
        self.by_proxy.get(place)?.as_ref()
    }

    /// The table named `name`.
    pub fn named(&self, name: &str) -> Option<&Arc<Table>> {
        self.by_name.get(name)
    }

    /// Every table, in the configuration's order.
    pub fn all(&self) -> &[Arc<Table>] {
        &self.list
    }

    /// Removes expired entries (run once a second).
    pub fn purge(&self) {
        for t in &self.list {
            t.purge();
        }
    }
}

/// The counters a session (`tcp-request connection|session`) and its
/// current stream (the other rule sets) track. A copy (an HTTP/2
/// stream's) shares the session's counters and tracks none of its own
/// yet.
#[derive(Debug, Default)]
pub struct Trackers {
    /// The session's (none made until it tracks one: a request's
    /// variables are made anew for each exchange).
    sess: Option<Arc<[Option<Tracker>; SLOTS]>>,
    stream: [Option<Tracker>; SLOTS],
}

impl Clone for Trackers {
    fn clone(&self) -> Self {
        Trackers {
            sess: self.sess.clone(),
            stream: Default::default(),
        }
    }
}

impl Trackers {
    /// Whether nothing is tracked.
    pub fn is_empty(&self) -> bool {
        self.all().next().is_none()
    }

    /// Every tracked counter: the stream's, then the session's.
    pub fn all(&self) -> impl Iterator<Item = &Tracker> {
        let sess = self.sess.iter().flat_map(|s| s.iter());
        self.stream.iter().chain(sess).flatten()
    }

    /// Counter `slot`: the stream's, else the session's.
    pub fn get(&self, slot: usize) -> Option<&Tracker> {
        self.stream
            .get(slot)
            .and_then(Option::as_ref)
            .or_else(|| self.sess.as_ref()?.get(slot)?.as_ref())
    }

    /// `track-sc<slot>`: starts tracking `key` in `table` unless the slot
    /// is taken (then the rule does nothing, as in HAProxy); `sess` for the
    /// session's rule sets. `also`: events counted on the entry at once.
    /// Gives the new tracker.
    pub fn track(
        &mut self,
        slot: usize,
        sess: bool,
        table: &Arc<Table>,
        key: &Key,
        also: &[Event],
    ) -> Option<&Tracker> {
        if self.get(slot).is_some() {
            return None;
        }
        // The session's counters are shared only once its streams start,
        // after the rule sets that track them.
        let place = if sess {
            Arc::get_mut(self.sess.get_or_insert_with(Default::default))?
        } else {
            &mut self.stream
        };
        let cell = place.get_mut(slot)?;
        let t = table.track_counting(key, also)?;
        *cell = Some(t);
        cell.as_ref()
    }

    /// Counts `ev` on every tracked entry.
    pub fn count(&self, ev: Event) {
        self.count_all(&[ev])
    }

    /// Counts each of `evs` on every tracked entry (one lock each).
    pub fn count_all(&self, evs: &[Event]) {
        for t in self.all() {
            t.count_all(evs);
        }
    }

    /// Ends the stream's counters (its connection leaves `conn_cur`).
    pub fn end_stream(&mut self) {
        for t in self.stream.iter_mut().filter(|t| t.is_some()) {
            *t = None;
        }
    }
}
