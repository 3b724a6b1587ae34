//! The process's allocator: glibc's malloc, except that over-aligned
//! blocks are carved out of an ordinary `malloc` instead of coming from
//! `posix_memalign`.
//!
//! tokio aligns every task to 128 bytes, so each spawned task (a client
//! connection, an HTTP/2 stream) is an over-aligned block. glibc serves
//! those through `_int_memalign`, which over-allocates, splits the chunk,
//! frees both ends and consolidates the fast bins: about 5 % of weir's
//! user time per HTTP/2 request (perf). Asking `malloc` for `align` bytes
//! more and keeping the block's own address just below the aligned one
//! takes the ordinary fast path; it costs up to `align` bytes per task.
//!
//! On worker threads, freed blocks of up to 8 KiB go to a per-thread cache
//! first ([`cache`]): glibc's own keeps 7 blocks a size up to 1032 bytes,
//! while an HTTP/2 connection ends and starts its streams in bursts (the
//! responses of one read, the requests of the next) of tens of blocks a
//! size, two of them over 1032 bytes; the rest went through `_int_free`
//! and `_int_malloc`, which consolidates the fast bins first.

use std::alloc::{GlobalAlloc, Layout};

/// What `malloc` guarantees on 64-bit glibc.
const MALLOC_ALIGN: usize = 16;

/// glibc's allocator with cheap over-aligned blocks (see the module).
pub struct Malloc;

/// `malloc(size)`, from the thread's cache where it can.
fn raw_alloc(size: usize) -> *mut u8 {
    match cache::class(size) {
        Some(class) => cache::take(class).unwrap_or_else(|| {
            // SAFETY: plain malloc, of the class's full size.
            unsafe { libc::malloc(cache::usable(class)) }.cast()
        }),
        // SAFETY: plain malloc.
        None => unsafe { libc::malloc(size) }.cast(),
    }
}

/// `free` of a block of `size` bytes that `raw_alloc`, `raw_calloc` or
/// `raw_realloc` returned.
///
/// # Safety
/// `block` came from them with this size and is not used after this.
unsafe fn raw_free(block: *mut u8, size: usize) {
    if let Some(class) = cache::class(size) {
        // SAFETY: the caller's block, of the class's full size.
        if unsafe { cache::keep(block, class) } {
            return;
        }
    }
    // SAFETY: the caller's block, from malloc.
    unsafe { libc::free(block.cast()) };
}

/// `calloc(1, size)`, of a cached class's full size where it has one.
fn raw_calloc(size: usize) -> *mut u8 {
    let size = cache::class(size).map_or(size, cache::usable);
    // SAFETY: plain calloc.
    unsafe { libc::calloc(1, size) }.cast()
}

/// `realloc` of a block of `old` bytes to `new`: nothing within one
/// cached class, a cached block of the new class where the thread keeps
/// one, else glibc's `realloc` (to the class's full size, so that every
/// block the cache takes holds its class's size).
///
/// # Safety
/// `block` came from `raw_alloc`, `raw_calloc` or `raw_realloc` with `old`.
unsafe fn raw_realloc(block: *mut u8, old: usize, new: usize) -> *mut u8 {
    let class = cache::class(new);
    if class.is_some() && class == cache::class(old) {
        return block;
    }
    if let Some(fresh) = class.and_then(cache::take) {
        // SAFETY: both blocks hold `min(old, new)` bytes; the old one goes
        // back as the caller's.
        unsafe {
            std::ptr::copy_nonoverlapping(block, fresh, old.min(new));
            raw_free(block, old);
        }
        return fresh;
    }
    let size = class.map_or(new, cache::usable);
    // SAFETY: the caller's block, from malloc.
    unsafe { libc::realloc(block.cast(), size) }.cast()
}

/// Where the start of the `malloc` block behind an over-aligned one is kept.
fn back_link(aligned: *mut u8) -> *mut *mut libc::c_void {
    aligned.wrapping_sub(std::mem::size_of::<usize>()).cast()
}

// SAFETY: every block comes from glibc's malloc/calloc/realloc and goes
// back to free exactly once, through the address malloc returned.
unsafe impl GlobalAlloc for Malloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.align() <= MALLOC_ALIGN {
            // malloc's blocks are 16-byte aligned.
            return raw_alloc(layout.size());
        }
        // malloc's block is 16-aligned, so rounding `raw + align` down to
        // `align` leaves between 16 and `align` bytes before the aligned
        // address: room for the back link.
        let Some(size) = layout.size().checked_add(layout.align()) else {
            return std::ptr::null_mut();
        };
        let raw = raw_alloc(size);
        if raw.is_null() {
            return raw;
        }
        let offset = layout.align() - (raw as usize & (layout.align() - 1));
        let aligned = raw.wrapping_add(offset);
        // SAFETY: `offset` is at least 16, so the link lies inside the block.
        unsafe { back_link(aligned).write(raw.cast()) };
        aligned
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if layout.align() <= MALLOC_ALIGN {
            return raw_calloc(layout.size());
        }
        // SAFETY: forwarded with the caller's layout.
        let p = unsafe { self.alloc(layout) };
        if !p.is_null() {
            // SAFETY: `p` has `layout.size()` writable bytes.
            unsafe { p.write_bytes(0, layout.size()) };
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if layout.align() <= MALLOC_ALIGN {
            // SAFETY: `ptr` came from `alloc`, `alloc_zeroed` or `realloc`
            // with this size.
            unsafe { raw_free(ptr, layout.size()) };
        } else {
            // SAFETY: `alloc` wrote the block's address there; it asked
            // for `size + align` bytes.
            unsafe { raw_free(back_link(ptr).read().cast(), layout.size() + layout.align()) };
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if layout.align() <= MALLOC_ALIGN {
            // SAFETY: `ptr` came from `alloc`, `alloc_zeroed` or `realloc`.
            return unsafe { raw_realloc(ptr, layout.size(), new_size) };
        }
        // SAFETY: a new block, the bytes both hold copied, the old freed.
        unsafe {
            let new = self.alloc(Layout::from_size_align_unchecked(new_size, layout.align()));
            if !new.is_null() {
                std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                self.dealloc(ptr, layout);
            }
            new
        }
    }
}

pub mod cache;

#[cfg(test)]
#[path = "alloc_tests.rs"]
mod tests;

/// A value `make` builds, in a box allocated first: the compiler then
/// builds it in place. `Box::pin(f)` built a large future (a keep-alive
/// turn: 4.8 KB) on the stack and copied all of it into the box, about
/// 500 instructions a request; allocated first, nothing is copied.
#[inline(always)]
pub fn boxed<T>(make: impl FnOnce() -> T) -> std::pin::Pin<Box<T>> {
    let place = Box::new_uninit();
    Box::into_pin(Box::write(place, make()))
}
