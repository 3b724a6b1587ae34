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
