//! A per-thread cache of freed malloc blocks in front of glibc, on the
//! threads that turn it on (the workers): HAProxy's per-thread pool caches
//! in allocator form.
//!
//! Blocks are kept by class: the size of glibc's chunk for the request
//! (16-byte steps), so a block kept for a class serves every request of
//! that class and asks glibc for no more than it would have. Each class is
//! a list threaded through its free blocks (last in, first out); a class
//! holds at most [`CLASS_DEPTH`] blocks and a thread at most
//! [`THREAD_BYTES`], beyond which blocks go back to glibc.

use std::cell::Cell;

/// The largest class kept.
const MAX_CLASS: usize = 8192;
const CLASSES: usize = MAX_CLASS / 16 + 1;
/// Blocks a class keeps: an HTTP/2 connection with 100 streams in flight
/// frees about that many of a size in one burst.
const CLASS_DEPTH: u32 = 512;
/// Bytes a thread keeps in all.
pub const THREAD_BYTES: usize = 2 << 20;

/// The free blocks of one class.
struct Class {
    head: Cell<*mut u8>,
    len: Cell<u32>,
    /// The fewest blocks held since the last [`release_unused`]: as many
    /// were not needed in that time.
    low: Cell<u32>,
}

/// One thread's cache.
struct ThreadCache {
    on: Cell<bool>,
    bytes: Cell<usize>,
    classes: [Class; CLASSES],
}

thread_local! {
    static CACHE: ThreadCache = const {
        ThreadCache {
            on: Cell::new(false),
            bytes: Cell::new(0),
            classes: [const {
                Class {
                    head: Cell::new(std::ptr::null_mut()),
                    len: Cell::new(0),
                    low: Cell::new(0),
                }
            }; CLASSES],
        }
    };
}

/// The class of a request of `size` bytes, if the cache keeps it: glibc's
/// chunk size for it (`size` plus the 8-byte header, rounded up to 16, at
/// least 32).
pub fn class(size: usize) -> Option<usize> {
    let chunk = (size.checked_add(8 + 15)? & !15).max(32);
    (chunk <= MAX_CLASS).then_some(chunk)
}

/// The bytes every block of `class` holds (what it is asked of malloc).
pub fn usable(class: usize) -> usize {
    class - 8
}

fn slot(c: &ThreadCache, class: usize) -> Option<&Class> {
    c.classes.get(class / 16)
}

/// Takes the first block off a class's list.
fn pop(c: &ThreadCache, s: &Class, class: usize) -> Option<*mut u8> {
    let block = s.head.get();
    if block.is_null() {
        return None;
    }
    // SAFETY: a kept block starts with the address of the next.
    s.head.set(unsafe { block.cast::<*mut u8>().read() });
    let len = s.len.get() - 1;
    s.len.set(len);
    s.low.set(s.low.get().min(len));
    c.bytes.set(c.bytes.get() - class);
    Some(block)
}

/// A kept block of `class`, on a thread with the cache on.
pub fn take(class: usize) -> Option<*mut u8> {
    CACHE
        .try_with(|c| pop(c, slot(c, class)?, class))
        .ok()
        .flatten()
}

/// Keeps a freed block of `class`; false when this thread keeps none or
/// is full (the caller frees it).
///
/// # Safety
/// `block` came from malloc with at least `usable(class)` bytes and is not
/// used after this.
pub unsafe fn keep(block: *mut u8, class: usize) -> bool {
    CACHE
        .try_with(|c| {
            let Some(s) = slot(c, class) else {
                return false;
            };
            if !c.on.get() || s.len.get() >= CLASS_DEPTH || c.bytes.get() + class > THREAD_BYTES {
                return false;
            }
            // SAFETY: the block holds at least 24 bytes (class 32 and up).
            unsafe { block.cast::<*mut u8>().write(s.head.get()) };
            s.head.set(block);
            s.len.set(s.len.get() + 1);
            c.bytes.set(c.bytes.get() + class);
            true
        })
        .unwrap_or(false)
}

/// Turns the calling thread's cache on until the guard drops, when its
/// blocks go back to glibc.
#[must_use]
pub fn enable() -> Enabled {
    let _ = CACHE.try_with(|c| c.on.set(true));
    Enabled(std::marker::PhantomData)
}

/// The cache of the thread that made it is on (see [`enable`]).
pub struct Enabled(std::marker::PhantomData<*const ()>);

impl Drop for Enabled {
    fn drop(&mut self) {
        let _ = CACHE.try_with(|c| c.on.set(false));
        flush();
    }
}

/// Gives the calling thread's kept blocks back to glibc: before a
/// `malloc_trim`, which cannot release a page that holds one.
pub fn flush() {
    give_back(|s| s.len.get());
}

/// Gives back, class by class, as many blocks as stayed unused since the
/// last call (the fewest the class held meanwhile): a thread that went
/// quiet, or whose load dropped, holds no pages for blocks it no longer
/// asks for (called periodically by the worker).
pub fn release_unused() {
    give_back(|s| s.low.get());
}

/// Frees `count(class)` blocks of each class; what a class keeps is then
/// its low mark for the next [`release_unused`].
fn give_back(count: impl Fn(&Class) -> u32) {
    let _ = CACHE.try_with(|c| {
        if c.bytes.get() == 0 {
            return;
        }
        for (i, s) in c.classes.iter().enumerate() {
            for _ in 0..count(s) {
                let Some(block) = pop(c, s, i * 16) else {
                    break;
                };
                // SAFETY: a kept block came from malloc and nobody else
                // holds it.
                unsafe { libc::free(block.cast()) };
            }
            s.low.set(s.len.get());
        }
    });
}

/// Blocks the calling thread keeps (for tests).
pub fn kept() -> usize {
    CACHE
        .try_with(|c| c.classes.iter().map(|s| s.len.get() as usize).sum())
        .unwrap_or(0)
}
