//! The objects of `cache` sections: responses kept by their request's
//! key (host and URI) until they expire, within the section's size; the
//! oldest go first when room is needed. Shared by every thread.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use tokio::time::Instant;

/// A cached response.
#[derive(Debug)]
pub struct Object {
    pub status: u16,
    pub reason: String,
    /// Its fields, without the hop's (`connection`, framing).
    pub headers: Vec<(String, Vec<u8>)>,
    pub body: Vec<u8>,
    /// When it was stored, and its age then (the server's `Age`).
    pub stored: Instant,
    pub age: u64,
    pub expires: Instant,
}

impl Object {
    fn size(&self) -> u64 {
        let h: usize = self
            .headers
            .iter()
            .map(|(n, v)| n.len() + v.len() + 4)
            .sum();
        (h + self.body.len()) as u64
    }
}

/// One `cache` section's objects.
pub struct Store {
    pub conf: weir_config::model::Cache,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    /// Objects by key, with the number they were stored under.
    objects: HashMap<Vec<u8>, (u64, Arc<Object>)>,
    /// (key, number) in the order stored, oldest first; an entry whose
    /// object was replaced or dropped since is stale and skipped (the
    /// queue is compacted when stale entries outnumber live ones).
    order: VecDeque<(Vec<u8>, u64)>,
    next: u64,
    used: u64,
}

impl Store {
    pub fn new(conf: weir_config::model::Cache) -> Store {
        Store {
            conf,
            inner: Mutex::default(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The largest object kept: `max-object-size`, at most half the cache.
    pub fn max_object(&self) -> u64 {
        let half = self.conf.total_max_size / 2;
        match self.conf.max_object_size {
            0 => half,
            n => n.min(half),
        }
    }

    /// The fresh object of `key`, if there is one (an expired one is
    /// dropped).
    pub fn get(&self, key: &[u8], now: Instant) -> Option<Arc<Object>> {
        let mut g = self.lock();
        let o = g.objects.get(key)?.1.clone();
        if o.expires > now {
            return Some(o);
        }
        remove(&mut g, key);
        None
    }

    /// Keeps `o` under `key` (replacing what was there), making room by
    /// dropping the oldest objects; false when it cannot fit.
    pub fn put(&self, key: Vec<u8>, o: Object) -> bool {
        let size = o.size();
        if size > self.max_object() || size > self.conf.total_max_size {
            return false;
        }
        let mut g = self.lock();
        remove(&mut g, &key);
        while g.used + size > self.conf.total_max_size {
            let Some((old, n)) = g.order.pop_front() else {
                break;
            };
            if g.objects.get(&old).is_some_and(|(m, _)| *m == n) {
                remove(&mut g, &old);
            }
        }
        let n = g.next;
        g.next += 1;
        g.used += size;
        g.order.push_back((key.clone(), n));
        g.objects.insert(key, (n, Arc::new(o)));
        if g.order.len() > 2 * g.objects.len() + 16 {
            let Inner { objects, order, .. } = &mut *g;
            order.retain(|(k, n)| objects.get(k).is_some_and(|(m, _)| m == n));
        }
        true
    }

    /// Drops the object of `key`.
    pub fn remove(&self, key: &[u8]) {
        remove(&mut self.lock(), key);
    }

    /// Objects and bytes held (`show cache`).
    pub fn usage(&self) -> (usize, u64) {
        let g = self.lock();
        (g.objects.len(), g.used)
    }
}

/// Drops `key`'s object (its queue entry goes stale).
fn remove(g: &mut Inner, key: &[u8]) {
    if let Some((_, o)) = g.objects.remove(key) {
        g.used = g.used.saturating_sub(o.size());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn store(total: u64) -> Store {
        Store::new(weir_config::model::Cache {
            name: "c".into(),
            loc: Default::default(),
            total_max_size: total,
            max_object_size: 0,
            max_age: 60,
            process_vary: false,
            max_secondary_entries: 10,
        })
    }

    fn object(body: usize, now: Instant, life: u64) -> Object {
        Object {
            status: 200,
            reason: "OK".into(),
            headers: Vec::new(),
            body: vec![b'x'; body],
            stored: now,
            age: 0,
            expires: now + Duration::from_secs(life),
        }
    }

    #[test]
    fn oldest_go_first_and_expired_are_not_served() {
        let now = Instant::now();
        let s = store(1000);
        assert_eq!(s.max_object(), 500);
        assert!(!s.put(b"big".to_vec(), object(600, now, 10)));
        assert!(s.put(b"a".to_vec(), object(400, now, 10)));
        assert!(s.put(b"b".to_vec(), object(400, now, 10)));
        assert!(s.put(b"c".to_vec(), object(400, now, 10)));
        assert!(s.get(b"a", now).is_none(), "the oldest made room");
        assert!(s.get(b"b", now).is_some() && s.get(b"c", now).is_some());
        assert!(s.get(b"c", now + Duration::from_secs(11)).is_none());
        assert_eq!(s.usage().0, 1);
        s.remove(b"b");
        assert_eq!(s.usage(), (0, 0));
    }

    #[test]
    fn replacing_an_object_keeps_the_queue_bounded() {
        let now = Instant::now();
        let s = store(1 << 20);
        for _ in 0..10_000 {
            assert!(s.put(b"k".to_vec(), object(10, now, 10)));
        }
        assert_eq!(s.usage().0, 1);
        assert!(
            s.lock().order.len() <= 19,
            "2 × 1 live object + 16, then compacted"
        );
        // The oldest live object still goes first.
        let small = store(1000);
        assert!(small.put(b"a".to_vec(), object(400, now, 10)));
        assert!(small.put(b"b".to_vec(), object(400, now, 10)));
        assert!(
            small.put(b"a".to_vec(), object(400, now, 10)),
            "a again: now the newest"
        );
        assert!(small.put(b"c".to_vec(), object(400, now, 10)));
        assert!(small.get(b"b", now).is_none() && small.get(b"a", now).is_some());
    }
}
