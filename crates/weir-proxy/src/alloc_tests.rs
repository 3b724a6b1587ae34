use super::Malloc;
use std::alloc::{GlobalAlloc, Layout};

#[test]
fn over_aligned_blocks_are_aligned_and_hold_their_bytes() {
    for align in [32usize, 64, 128, 4096] {
        for size in [1usize, 24, 127, 128, 129, 3000] {
            let layout = Layout::from_size_align(size, align).unwrap();
            // SAFETY: a non-zero layout; the block is written within its
            // size and freed with the same layout.
            unsafe {
                let p = Malloc.alloc(layout);
                assert!(!p.is_null());
                assert_eq!(p as usize % align, 0, "size {size} align {align}");
                p.write_bytes(0xA5, size);
                let q = Malloc.realloc(p, layout, size * 3);
                assert_eq!(q as usize % align, 0);
                let kept = std::slice::from_raw_parts(q, size);
                assert!(kept.iter().all(|&b| b == 0xA5));
                Malloc.dealloc(q, Layout::from_size_align(size * 3, align).unwrap());
            }
        }
    }
}

#[test]
fn zeroed_blocks_are_zero_at_every_alignment() {
    for align in [8usize, 16, 128] {
        let layout = Layout::from_size_align(1000, align).unwrap();
        // SAFETY: as above.
        unsafe {
            // Dirty a block of the same size first, so that a reused one
            // would show.
            let d = Malloc.alloc(layout);
            d.write_bytes(0xFF, 1000);
            Malloc.dealloc(d, layout);
            let p = Malloc.alloc_zeroed(layout);
            assert_eq!(p as usize % align, 0);
            assert!(std::slice::from_raw_parts(p, 1000).iter().all(|&b| b == 0));
            Malloc.dealloc(p, layout);
        }
    }
}

/// Runs `f` on a thread of its own with the cache on, so that other tests'
/// blocks do not mix in.
fn on_cached_thread(f: impl FnOnce() + Send + 'static) {
    std::thread::spawn(move || {
        let guard = super::cache::enable();
        f();
        drop(guard);
        assert_eq!(super::cache::kept(), 0, "the guard gives every block back");
    })
    .join()
    .unwrap();
}

#[test]
fn a_freed_block_serves_the_next_request_of_its_class() {
    on_cached_thread(|| {
        // Pairs of sizes that glibc serves with one chunk size.
        for (size, other) in [
            (1usize, 24usize),
            (25, 40),
            (1000, 992),
            (4240, 4248),
            (8000, 8008),
        ] {
            let layout = Layout::from_size_align(size, 8).unwrap();
            let same_class = Layout::from_size_align(other, 8).unwrap();
            // SAFETY: blocks written within their size, freed once with
            // their layout.
            unsafe {
                let p = Malloc.alloc(layout);
                p.write_bytes(0x5A, size);
                let before = super::cache::kept();
                Malloc.dealloc(p, layout);
                assert_eq!(super::cache::kept(), before + 1, "size {size}");
                let q = Malloc.alloc(same_class);
                assert_eq!(q, p, "size {size}: the kept block comes back");
                q.write_bytes(0x5A, same_class.size());
                Malloc.dealloc(q, same_class);
                let r = Malloc.alloc(layout);
                Malloc.dealloc(r, layout);
            }
        }
    });
}

#[test]
fn realloc_keeps_a_block_within_its_class_and_moves_the_bytes_across() {
    on_cached_thread(|| {
        let l = |n| Layout::from_size_align(n, 1).unwrap();
        // SAFETY: as above; every block is freed with its last size.
        unsafe {
            // A kept block of the 4 KiB class for the move to take.
            let spare = Malloc.alloc(l(4000));
            Malloc.dealloc(spare, l(4000));
            let p = Malloc.alloc(l(100));
            p.write_bytes(7, 100);
            // 100 and 104 bytes are one class: the block stays.
            assert_eq!(Malloc.realloc(p, l(100), 104), p);
            let q = Malloc.realloc(p, l(104), 4000);
            assert_eq!(q, spare, "the grown block is the kept one");
            assert!(std::slice::from_raw_parts(q, 100).iter().all(|&b| b == 7));
            // The old block went to the cache in turn.
            assert_eq!(super::cache::kept(), 1);
            // Past the largest class, glibc's realloc keeps the bytes too.
            let big = Malloc.realloc(q, l(4000), 100_000);
            assert!(std::slice::from_raw_parts(big, 100).iter().all(|&b| b == 7));
            Malloc.dealloc(big, l(100_000));
        }
    });
}

#[test]
fn a_thread_without_the_cache_keeps_nothing() {
    std::thread::spawn(|| {
        let layout = Layout::from_size_align(4240, 16).unwrap();
        // SAFETY: as above.
        unsafe {
            let p = Malloc.alloc(layout);
            Malloc.dealloc(p, layout);
        }
        assert_eq!(super::cache::kept(), 0);
    })
    .join()
    .unwrap();
}

#[test]
fn a_thread_keeps_at_most_its_byte_budget() {
    on_cached_thread(|| {
        let layout = Layout::from_size_align(8000, 8).unwrap();
        // SAFETY: as above.
        let blocks: Vec<*mut u8> = (0..600).map(|_| unsafe { Malloc.alloc(layout) }).collect();
        for p in blocks {
            // SAFETY: each block once, with its layout.
            unsafe { Malloc.dealloc(p, layout) };
        }
        let kept = super::cache::kept();
        assert!(kept > 100, "kept {kept}");
        assert!(kept * 8016 <= super::cache::THREAD_BYTES, "kept {kept}");
    });
}

#[test]
fn blocks_unused_between_two_looks_are_given_back() {
    on_cached_thread(|| {
        let layout = Layout::from_size_align(300, 8).unwrap();
        // SAFETY: blocks freed once, with their layout.
        unsafe {
            let blocks: Vec<*mut u8> = (0..4).map(|_| Malloc.alloc(layout)).collect();
            for p in blocks {
                Malloc.dealloc(p, layout);
            }
            assert_eq!(super::cache::kept(), 4);
            // New blocks are kept through the first look.
            super::cache::release_unused();
            assert_eq!(super::cache::kept(), 4);
            // Three are needed at once before the next look: one was not.
            let busy: Vec<*mut u8> = (0..3).map(|_| Malloc.alloc(layout)).collect();
            for p in busy {
                Malloc.dealloc(p, layout);
            }
        }
        super::cache::release_unused();
        assert_eq!(super::cache::kept(), 3, "the block never needed went back");
        super::cache::release_unused();
        assert_eq!(super::cache::kept(), 0, "none needed since: all went back");
    });
}
