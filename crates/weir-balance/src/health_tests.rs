//! Unit tests of `health.rs`.

use super::*;

#[test]
fn first_failure_takes_a_fresh_server_down() {
    let mut h = Health::new(2, 3);
    assert!(h.is_up());
    assert_eq!(h.on_result(false), Some(false));
}

#[test]
fn fully_up_needs_fall_failures() {
    let mut h = Health::new(2, 3);
    assert_eq!(h.on_result(true), None);
    assert!(!h.transitioning());
    assert_eq!(h.on_result(false), None);
    assert!(h.transitioning());
    assert_eq!(h.on_result(false), None);
    assert_eq!(h.on_result(false), Some(false));
    assert_eq!(h.on_result(false), None);
}

#[test]
fn rise_successes_bring_it_back() {
    let mut h = Health::new(3, 1);
    assert_eq!(h.on_result(false), Some(false));
    assert_eq!(h.on_result(true), None);
    assert_eq!(h.on_result(true), None);
    assert!(h.transitioning());
    assert_eq!(h.on_result(true), Some(true));
    // a failure in between resets the climb
    let mut h = Health::new(2, 1);
    h.on_result(false);
    h.on_result(true);
    h.on_result(false);
    assert_eq!(h.on_result(true), None);
    assert_eq!(h.on_result(true), Some(true));
}

#[test]
fn slowstart_ramps_linearly() {
    use std::time::Duration;
    let p = Duration::from_secs(10);
    assert_eq!(slowstart_weight(100, Duration::ZERO, p), 1);
    assert_eq!(slowstart_weight(100, Duration::from_secs(5), p), 50);
    assert_eq!(slowstart_weight(100, Duration::from_secs(10), p), 100);
    assert_eq!(slowstart_weight(100, Duration::from_secs(99), p), 100);
    assert_eq!(slowstart_weight(3, Duration::from_millis(100), p), 1);
    assert_eq!(slowstart_weight(0, Duration::from_secs(1), p), 0);
}

#[test]
fn a_server_saved_down_needs_rise_successes() {
    let mut h = Health::down(2, 3);
    assert!(!h.is_up());
    assert_eq!(h.on_result(true), None);
    assert_eq!(h.on_result(true), Some(true));
    assert_eq!(h.value(), 4);
}
