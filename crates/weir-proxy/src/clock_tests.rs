use super::*;

/// Waits until the system clock moved past `t` (busy, a few ns).
fn after(t: Instant) {
    while Instant::now() <= t {
        std::hint::spin_loop();
    }
}

#[test]
fn a_poll_reads_the_clock_once() {
    let p = Poll::enter();
    let (t, w) = (now(), wall());
    after(t);
    assert_eq!(now(), t);
    assert_eq!(wall(), w);
    assert_eq!(elapsed(t), Duration::ZERO);
    drop(p);
    assert!(now() > t, "the cache ends with the poll");
}

#[test]
fn a_deadline_is_now_plus_the_delay_or_far_away() {
    let _p = Poll::enter();
    let n = now();
    assert_eq!(deadline(Duration::from_secs(5)), n + Duration::from_secs(5));
    assert!(deadline(Duration::MAX) > n + Duration::from_secs(86400 * 365));
}

#[test]
fn outside_a_poll_every_read_is_fresh() {
    let t = now();
    after(t);
    assert!(now() > t);
    assert!(elapsed(t) > Duration::ZERO);
}

#[test]
fn a_nested_poll_starts_fresh_and_the_outer_one_reads_again() {
    let outer = Poll::enter();
    let t = now();
    after(t);
    {
        let _inner = Poll::enter();
        let u = now();
        assert!(u > t);
        after(u);
        assert_eq!(now(), u);
    }
    let v = now();
    assert!(v > t, "the outer poll reads afresh after the inner one");
    after(v);
    assert_eq!(now(), v, "and caches again");
    drop(outer);
    assert!(now() > v);
}

#[test]
fn ticks_are_read_once_a_poll_too() {
    epoch();
    let p = Poll::enter();
    let (k, t) = (ticks(), now());
    after(t + Duration::from_millis(2));
    assert_eq!(ticks(), k, "cached with the poll's now");
    drop(p);
    assert!(ticks().wrapping_sub(k) >= 2, "fresh again after the poll");
}
