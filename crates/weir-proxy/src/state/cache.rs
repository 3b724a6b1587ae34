//! The objects of `cache` sections: responses kept by their request's
//! key (host and URI) until they expire, within the section's size; the
//! oldest go first when room is needed. A key holds one response, or
//! (`process-vary on`) up to `max-secondary-entries` variants of one that
//! varies on the request's fields. Shared by every thread.

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
    /// What the request's varied fields must be for it to be served
    /// (a response with `Vary`; `None` without).
    pub vary: Option<Secondary>,
}

/// A variant's secondary key: what it was answered for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Secondary {
    /// The varied fields other than `Accept-Encoding` (lower-case
    /// names), with the request's values (`None`: absent).
    pub fields: Vec<(&'static str, Option<Vec<u8>>)>,
    /// With `Vary: accept-encoding`, the response's content codings (a
    /// bit each; identity's bit when it has none): a request must accept
    /// them all.
    pub codings: Option<u16>,
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
    /// Objects by key (its variants, or its one object), each with the
    /// number it was stored under.
    objects: HashMap<Vec<u8>, Vec<(u64, Arc<Object>)>>,
    count: usize,
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

    /// The first fresh object of `key` that `fits` the request, if there
    /// is one (expired ones are dropped).
    pub fn get(
        &self,
        key: &[u8],
        now: Instant,
        fits: impl Fn(&Object) -> bool,
    ) -> Option<Arc<Object>> {
        let mut g = self.lock();
        let all = g.objects.get(key)?;
        let found = all
            .iter()
            .find(|(_, o)| o.expires > now && fits(o))
            .map(|(_, o)| o.clone());
        if all.iter().any(|(_, o)| o.expires <= now) {
            drop_where(&mut g, key, |o| o.expires <= now);
        }
        found
    }

    /// Keeps `o` under `key`, making room by dropping the oldest objects;
    /// false when it cannot fit. It replaces what the key held, or with a
    /// secondary key, the variant with the same one (and what the key
    /// held without); a key holds at most `max-secondary-entries`
    /// variants (a new one beyond is not kept, as in haproxy).
    pub fn put(&self, key: Vec<u8>, o: Object) -> bool {
        let size = o.size();
        if size > self.max_object() || size > self.conf.total_max_size {
            return false;
        }
        let mut g = self.lock();
        match &o.vary {
            None => drop_where(&mut g, &key, |_| true),
            Some(v) => {
                drop_where(&mut g, &key, |old| {
                    old.vary.as_ref().is_none_or(|w| w == v) || old.expires <= o.stored
                });
                let held = g.objects.get(&key).map_or(0, Vec::len);
                if held >= self.conf.max_secondary_entries.max(1) as usize {
                    return false;
                }
            }
        }
        while g.used + size > self.conf.total_max_size {
            let Some((old, n)) = g.order.pop_front() else {
                break;
            };
            drop_where_number(&mut g, &old, n);
        }
        let n = g.next;
        g.next += 1;
        g.used += size;
        g.count += 1;
        g.order.push_back((key.clone(), n));
        g.objects.entry(key).or_default().push((n, Arc::new(o)));
        if g.order.len() > 2 * g.count + 16 {
            let Inner { objects, order, .. } = &mut *g;
            order.retain(|(k, n)| {
                objects
                    .get(k)
                    .is_some_and(|v| v.iter().any(|(m, _)| m == n))
            });
        }
        true
    }

    /// Drops the objects of `key`.
    pub fn remove(&self, key: &[u8]) {
        drop_where(&mut self.lock(), key, |_| true);
    }

    /// Objects and bytes held (`show cache`).
    pub fn usage(&self) -> (usize, u64) {
        let g = self.lock();
        (g.count, g.used)
    }
}

/// Drops `key`'s objects that `gone` picks (their queue entries go stale).
fn drop_where(g: &mut Inner, key: &[u8], gone: impl Fn(&Object) -> bool) {
    let Some(all) = g.objects.get_mut(key) else {
        return;
    };
    let (mut freed, mut n) = (0, 0);
    all.retain(|(_, o)| {
        let keep = !gone(o);
        if !keep {
            freed += o.size();
            n += 1;
        }
        keep
    });
    if all.is_empty() {
        g.objects.remove(key);
    }
    g.used = g.used.saturating_sub(freed);
    g.count -= n;
}

/// Drops the object stored under number `n` at `key`, if still there.
fn drop_where_number(g: &mut Inner, key: &[u8], n: u64) {
    let Some(all) = g.objects.get_mut(key) else {
        return;
    };
    if let Some(i) = all.iter().position(|(m, _)| *m == n) {
        let (_, o) = all.swap_remove(i);
        g.used = g.used.saturating_sub(o.size());
        g.count -= 1;
        if all.is_empty() {
            g.objects.remove(key);
        }
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
            vary: None,
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
        assert!(s.get(b"a", now, |_| true).is_none(), "the oldest made room");
        assert!(s.get(b"b", now, |_| true).is_some() && s.get(b"c", now, |_| true).is_some());
        assert!(s
            .get(b"c", now + Duration::from_secs(11), |_| true)
            .is_none());
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
        assert!(
            small.get(b"b", now, |_| true).is_none() && small.get(b"a", now, |_| true).is_some()
        );
    }

    fn variant(body: usize, now: Instant, referer: &[u8]) -> Object {
        Object {
            vary: Some(Secondary {
                fields: vec![("referer", Some(referer.to_vec()))],
                codings: None,
            }),
            ..object(body, now, 10)
        }
    }

    #[test]
    fn variants_share_a_key_up_to_the_limit() {
        let now = Instant::now();
        let mut s = store(1 << 20);
        s.conf.max_secondary_entries = 2;
        let is = |r: &'static [u8]| {
            move |o: &Object| {
                o.vary
                    .as_ref()
                    .is_some_and(|v| v.fields[0].1.as_deref() == Some(r))
            }
        };
        assert!(s.put(b"k".to_vec(), variant(1, now, b"a")));
        assert!(s.put(b"k".to_vec(), variant(2, now, b"b")));
        assert!(
            !s.put(b"k".to_vec(), variant(3, now, b"c")),
            "over max-secondary-entries"
        );
        assert!(
            s.put(b"k".to_vec(), variant(4, now, b"a")),
            "replaces its variant"
        );
        assert_eq!(s.get(b"k", now, is(b"a")).map(|o| o.body.len()), Some(4));
        assert_eq!(s.get(b"k", now, is(b"b")).map(|o| o.body.len()), Some(2));
        assert!(s.get(b"k", now, is(b"c")).is_none());
        assert_eq!(s.usage(), (2, 6));
        assert!(
            s.put(b"k".to_vec(), object(5, now, 10)),
            "no Vary: replaces them all"
        );
        assert_eq!(s.usage(), (1, 5));
        s.remove(b"k");
        assert_eq!(s.usage(), (0, 0));
    }
}
