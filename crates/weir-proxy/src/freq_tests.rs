//! Unit tests of `freq.rs`.

use super::*;

/// The rate a brute force walk finds first under `limit`, from `now`.
fn walked(w: Window, limit: u32, now: u64) -> u64 {
    (0..3000)
        .find(|t| {
            let at = now + t;
            w.at(at).rate(at) < u64::from(limit)
        })
        .unwrap_or(3000)
}

#[test]
fn the_rate_slides_over_the_last_second() {
    let g = Gate::new(10);
    for _ in 0..8 {
        g.count(5_000);
    }
    assert_eq!(g.rate(5_999), 8);
    // Half of the last second is still in the window.
    assert_eq!(g.rate(6_500), 4);
    assert_eq!(g.rate(7_000), 0);
}

#[test]
fn the_wait_is_the_first_moment_under_the_limit() {
    for (curr, prev, limit, into) in [
        (10, 0, 10, 0),
        (10, 0, 10, 700),
        (5, 20, 10, 100),
        (9, 4, 10, 0),
        (30, 30, 10, 400),
        (3, 100, 50, 999),
    ] {
        let now = 42_000 + into;
        let w = Window {
            sec: 42,
            curr,
            prev,
        };
        let want = walked(w, limit, now);
        let got = wait(w, limit, now);
        assert!(
            got >= want.max(if want == 0 { 0 } else { 1 }),
            "{curr}/{prev}/{limit}@{into}: {got} < {want}"
        );
        assert!(
            got <= want + 1,
            "{curr}/{prev}/{limit}@{into}: {got} > {want}"
        );
    }
    let g = Gate::new(3);
    assert_eq!(g.wait_ms(1_000), 0);
}
