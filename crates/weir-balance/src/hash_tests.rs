//! Unit tests of `hash.rs`.

use super::*;

#[test]
fn known_values() {
    assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    assert_eq!(djb2(b""), 5381);
    assert_eq!(sdbm(b""), 0);
    assert_ne!(avalanche(1), avalanche(2));
}

#[test]
fn ring_moves_few_keys_when_a_server_leaves() {
    let full = Ring::build(&[(0, 1, 1), (1, 2, 1), (2, 3, 1), (3, 4, 1)]);
    let less = Ring::build(&[(0, 1, 1), (1, 2, 1), (2, 3, 1)]);
    let mut moved = 0;
    for k in 0..10_000u32 {
        let h = avalanche(k);
        let a = full.lookup(h).unwrap();
        let b = less.lookup(h).unwrap();
        if a != 3 && a != b {
            moved += 1;
        }
    }
    assert_eq!(moved, 0, "keys of remaining servers stay put");
}
