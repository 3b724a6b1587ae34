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

use std::alloc::{GlobalAlloc, Layout};

/// What `malloc` guarantees on 64-bit glibc.
const MALLOC_ALIGN: usize = 16;

/// glibc's allocator with cheap over-aligned blocks (see the module).
pub struct Malloc;

/// Where the start of the `malloc` block behind an over-aligned one is kept.
fn back_link(aligned: *mut u8) -> *mut *mut libc::c_void {
    aligned.wrapping_sub(std::mem::size_of::<usize>()).cast()
}

// SAFETY: every block comes from glibc's malloc/calloc/realloc and goes
// back to free exactly once, through the address malloc returned.
unsafe impl GlobalAlloc for Malloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.align() <= MALLOC_ALIGN {
            // SAFETY: plain malloc; its blocks are 16-byte aligned.
            return unsafe { libc::malloc(layout.size()) }.cast();
        }
        // malloc's block is 16-aligned, so rounding `raw + align` down to
        // `align` leaves between 16 and `align` bytes before the aligned
        // address: room for the back link.
        let Some(size) = layout.size().checked_add(layout.align()) else {
            return std::ptr::null_mut();
        };
        // SAFETY: plain malloc.
        let raw: *mut u8 = unsafe { libc::malloc(size) }.cast();
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
            // SAFETY: plain calloc.
            return unsafe { libc::calloc(1, layout.size()) }.cast();
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
            // SAFETY: `ptr` came from malloc/calloc/realloc.
            unsafe { libc::free(ptr.cast()) };
        } else {
            // SAFETY: `alloc` wrote the malloc block's address there.
            unsafe { libc::free(back_link(ptr).read()) };
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if layout.align() <= MALLOC_ALIGN {
            // SAFETY: `ptr` came from malloc/calloc/realloc.
            return unsafe { libc::realloc(ptr.cast(), new_size) }.cast();
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

#[cfg(test)]
#[path = "alloc_tests.rs"]
mod tests;
