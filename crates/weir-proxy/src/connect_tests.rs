//! Unit tests of `connect.rs`.

use super::redispatch_on;

#[test]
fn redispatch_schedule() {
    // default -1: the last retry only
    let on: Vec<u32> = (1..=3).filter(|&k| redispatch_on(k, 3, true, -1)).collect();
    assert_eq!(on, vec![3]);
    let on: Vec<u32> = (1..=4).filter(|&k| redispatch_on(k, 4, true, -2)).collect();
    assert_eq!(on, vec![3]);
    let on: Vec<u32> = (1..=4).filter(|&k| redispatch_on(k, 4, true, 1)).collect();
    assert_eq!(on, vec![1, 2, 3, 4]);
    let on: Vec<u32> = (1..=4).filter(|&k| redispatch_on(k, 4, true, 2)).collect();
    assert_eq!(on, vec![2, 4]);
    assert!(!redispatch_on(3, 3, false, -1));
}
