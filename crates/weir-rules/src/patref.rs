//! Pattern files shared by name: the lines of an ACL's `-f` file or of a
//! map file, which the runtime API changes (`add`, `del`, `set`, `clear`
//! `map|acl`), and each user's compiled form of them ([`Compiled`]),
//! rebuilt when the lines change. A lookup costs one relaxed load and a
//! per-thread cache check; nothing is locked or counted on a shared line.
//!
//! Files are interned in a process-wide registry by name and content, so
//! every user of one file sees one set of lines, as in HAProxy.

use crate::matching::{self, Method, Pattern};
use std::any::Any;
use std::cell::RefCell;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

/// One line: its id (`#<id>` in the runtime API), key and value (maps).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub id: u64,
    pub key: String,
    pub value: String,
}

/// One user's answer to [`PatRef::probe`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Probe {
    pub method: Method,
    pub icase: bool,
    /// The first line that matches.
    pub hit: Option<Entry>,
}

#[derive(Debug, Default)]
struct Lines {
    entries: Vec<Entry>,
    next: u64,
    /// (method, icase) of the users: a new key must compile for each.
    users: Vec<(Method, bool)>,
}

/// A pattern file's lines.
#[derive(Debug)]
pub struct PatRef {
    /// Its unique id (`#<id>` names it in the runtime API).
    pub id: u32,
    /// The file name as the configuration gives it.
    pub name: String,
    /// A map (key and value per line), else an ACL file.
    pub is_map: bool,
    /// The text it was loaded from (for interning).
    source: String,
    gen: AtomicU64,
    lines: Mutex<Lines>,
}

static REGISTRY: Mutex<Vec<Weak<PatRef>>> = Mutex::new(Vec::new());
static NEXT_REF: AtomicU32 = AtomicU32::new(0);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Splits a map line into key and value (the rest, trimmed).
fn split_line(line: &str, is_map: bool) -> (String, String) {
    if is_map {
        let (k, v) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        (k.to_string(), v.trim().to_string())
    } else {
        (line.to_string(), String::new())
    }
}

impl PatRef {
    /// The shared lines of file `name` loaded as `text` (`#` comments and
    /// blank lines skipped).
    pub fn intern(name: &str, is_map: bool, text: &str) -> Arc<PatRef> {
        let mut reg = lock(&REGISTRY);
        reg.retain(|w| w.strong_count() > 0);
        if let Some(p) = reg
            .iter()
            .filter_map(Weak::upgrade)
            .find(|p| p.name == name && p.is_map == is_map && p.source == text)
        {
            return p;
        }
        let mut lines = Lines::default();
        for line in text.lines().map(str::trim) {
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (key, value) = split_line(line, is_map);
            lines.entries.push(Entry {
                id: lines.next,
                key,
                value,
            });
            lines.next += 1;
        }
        let p = Arc::new(PatRef {
            id: NEXT_REF.fetch_add(1, Ordering::Relaxed),
            name: name.to_string(),
            is_map,
            source: text.to_string(),
            gen: AtomicU64::new(0),
            lines: Mutex::new(lines),
        });
        reg.push(Arc::downgrade(&p));
        p
    }

    /// Every live file, by id.
    pub fn all() -> Vec<Arc<PatRef>> {
        let mut v: Vec<Arc<PatRef>> = lock(&REGISTRY).iter().filter_map(Weak::upgrade).collect();
        v.sort_by_key(|p| p.id);
        v
    }

    /// `get map|acl`: for each user of the file, the first line that
    /// `sample` matches under that user's method.
    pub fn probe(&self, sample: &str) -> Vec<Probe> {
        let l = lock(&self.lines);
        let s = crate::sample::Sample::Str(sample.as_bytes().to_vec());
        l.users
            .iter()
            .map(|&(method, icase)| Probe {
                method,
                icase,
                hit: l
                    .entries
                    .iter()
                    .find(|e| {
                        matching::compile(method, &e.key, icase)
                            .is_ok_and(|p| matching::matches(method, icase, &s, &p))
                    })
                    .cloned(),
            })
            .collect()
    }

    /// The lines now.
    pub fn entries(&self) -> Vec<Entry> {
        lock(&self.lines).entries.clone()
    }

    fn changed(&self) {
        self.gen.fetch_add(1, Ordering::Release);
    }

    /// Checks that `key` compiles for every user of the file.
    fn check(lines: &Lines, key: &str) -> Result<(), String> {
        for (m, icase) in &lines.users {
            matching::compile(*m, key, *icase)?;
        }
        Ok(())
    }

    /// Adds a line; its id, or why the key is not a valid pattern.
    pub fn add(&self, key: &str, value: &str) -> Result<u64, String> {
        let mut l = lock(&self.lines);
        Self::check(&l, key)?;
        let id = l.next;
        l.next += 1;
        l.entries.push(Entry {
            id,
            key: key.to_string(),
            value: value.to_string(),
        });
        drop(l);
        self.changed();
        Ok(id)
    }

    /// Removes the lines `sel` names (`#<id>` or a key); how many.
    pub fn del(&self, sel: &str) -> usize {
        let mut l = lock(&self.lines);
        let before = l.entries.len();
        l.entries.retain(|e| !selected(e, sel));
        let n = before - l.entries.len();
        drop(l);
        if n > 0 {
            self.changed();
        }
        n
    }

    /// Sets the value of the lines `sel` names; how many.
    pub fn set(&self, sel: &str, value: &str) -> usize {
        let mut l = lock(&self.lines);
        let mut n = 0;
        for e in l.entries.iter_mut().filter(|e| selected(e, sel)) {
            e.value = value.to_string();
            n += 1;
        }
        drop(l);
        if n > 0 {
            self.changed();
        }
        n
    }

    /// Removes every line.
    pub fn clear(&self) {
        lock(&self.lines).entries.clear();
        self.changed();
    }
}

/// Whether `sel` (`#<id>` or a key) names `e`.
fn selected(e: &Entry, sel: &str) -> bool {
    match sel.strip_prefix('#').and_then(|i| i.parse::<u64>().ok()) {
        Some(id) => e.id == id,
        None => e.key == sel,
    }
}

/// What a user builds from the lines.
pub type Build<T> = fn(&[Entry], Method, bool) -> T;

/// One user's compiled form of a file's lines.
pub struct Compiled<T> {
    pub pref: Arc<PatRef>,
    pub method: Method,
    pub icase: bool,
    build: Build<T>,
    /// Its index in the per-thread caches.
    slot: usize,
    /// The latest build, for threads whose cache is stale.
    cur: Mutex<(u64, Arc<T>)>,
}

impl<T> std::fmt::Debug for Compiled<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Compiled({})", self.pref.name)
    }
}

static NEXT_SLOT: AtomicUsize = AtomicUsize::new(0);

type Cached = Option<(u64, Arc<dyn Any + Send + Sync>)>;

thread_local! {
    static CACHE: RefCell<Vec<Cached>> = const { RefCell::new(Vec::new()) };
}

impl<T: Send + Sync + 'static> Compiled<T> {
    /// A user of `pref` matching with `method` (and `icase`).
    pub fn new(pref: Arc<PatRef>, method: Method, icase: bool, build: Build<T>) -> Compiled<T> {
        let (gen, built) = {
            let mut l = lock(&pref.lines);
            l.users.push((method, icase));
            (
                pref.gen.load(Ordering::Acquire),
                build(&l.entries, method, icase),
            )
        };
        Compiled {
            pref,
            method,
            icase,
            build,
            slot: NEXT_SLOT.fetch_add(1, Ordering::Relaxed),
            cur: Mutex::new((gen, Arc::new(built))),
        }
    }

    /// Runs `f` on the current compiled form.
    pub fn with<R>(&self, f: impl FnOnce(&T) -> R) -> R {
        let gen = self.pref.gen.load(Ordering::Acquire);
        CACHE.with(|c| {
            let mut c = c.borrow_mut();
            if c.len() <= self.slot {
                c.resize_with(self.slot + 1, || None);
            }
            let Some(entry) = c.get_mut(self.slot) else {
                return f(&self.latest_typed(gen));
            };
            if !matches!(entry, Some((g, _)) if *g == gen) {
                *entry = Some((gen, self.latest(gen)));
            }
            match entry.as_ref().and_then(|(_, t)| t.downcast_ref::<T>()) {
                Some(t) => f(t),
                None => f(&self.latest_typed(gen)),
            }
        })
    }

    fn latest_typed(&self, gen: u64) -> Arc<T> {
        let mut cur = lock(&self.cur);
        if cur.0 != gen {
            let l = lock(&self.pref.lines);
            *cur = (
                gen,
                Arc::new((self.build)(&l.entries, self.method, self.icase)),
            );
        }
        cur.1.clone()
    }

    fn latest(&self, gen: u64) -> Arc<dyn Any + Send + Sync> {
        self.latest_typed(gen)
    }
}

/// A map's compiled lines: (pattern, value); keys that do not compile for
/// the method are left out.
pub fn build_map(entries: &[Entry], method: Method, icase: bool) -> Vec<(Pattern, String)> {
    entries
        .iter()
        .filter_map(|e| {
            Some((
                matching::compile(method, &e.key, icase).ok()?,
                e.value.clone(),
            ))
        })
        .collect()
}

/// An ACL file's compiled patterns.
pub fn build_acl(entries: &[Entry], method: Method, icase: bool) -> Vec<Pattern> {
    entries
        .iter()
        .filter_map(|e| matching::compile(method, &e.key, icase).ok())
        .collect()
}

#[cfg(test)]
#[path = "patref_tests.rs"]
mod tests;
