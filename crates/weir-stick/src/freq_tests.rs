use crate::freq::FreqCtr;

#[test]
fn counts_within_one_period() {
    let mut f = FreqCtr::default();
    for t in [1000, 1001, 1500, 1999] {
        f.add(t, 1000, 1);
    }
    assert_eq!(f.read(1999, 1000), 4);
}

#[test]
fn previous_period_fades_linearly() {
    let mut f = FreqCtr::default();
    for _ in 0..10 {
        f.add(5000, 1000, 1);
    }
    // Next period started at 6000: 10 past events, none now.
    assert_eq!(f.read(6000, 1000), 10);
    assert_eq!(f.read(6250, 1000), 7);
    assert_eq!(f.read(6500, 1000), 5);
    assert_eq!(f.read(6999, 1000), 0);
    assert_eq!(f.read(7000, 1000), 0);
    f.add(6500, 1000, 2);
    assert_eq!(f.read(6500, 1000), 2 + 5);
}

#[test]
fn two_idle_periods_forget_everything() {
    let mut f = FreqCtr::default();
    f.add(100, 10, 3);
    f.add(130, 10, 1);
    assert_eq!(f.read(130, 10), 1);
    assert_eq!(f.parts(), (130, 1, 0));
}

#[test]
fn the_tick_wraps() {
    let mut f = FreqCtr::default();
    let start = u32::MAX - 100;
    f.add(start, 1000, 1);
    f.add(start.wrapping_add(500), 1000, 1);
    assert_eq!(f.read(start.wrapping_add(900), 1000), 2);
    assert_eq!(f.read(start.wrapping_add(1500), 1000), 1);
}
