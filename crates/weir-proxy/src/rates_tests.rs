use super::*;

fn at(sess: u64, req: u64, t: u64, n: u64) -> Snap {
    Snap {
        sess,
        req,
        bout: req * 100,
        times: [(0, 0), (0, 0), (0, 0), (t, n)],
    }
}

#[test]
fn rates_are_last_second_and_maxima_stay() {
    let mut tr = Track::default();
    tr.push(at(0, 0, 0, 0));
    assert_eq!(tr.view, View::default(), "no rate before a second passed");
    tr.push(at(30, 10, 300, 30));
    assert_eq!((tr.view.rate, tr.view.req_rate), (30, 10));
    assert_eq!(tr.view.bout_rate, 1000);
    assert_eq!(tr.view.times[3], 10);
    assert_eq!(tr.view.lastsess, Some(0));
    tr.push(at(35, 10, 400, 35));
    assert_eq!((tr.view.rate, tr.view.rate_max), (5, 30));
    assert_eq!(tr.view.times[3], 400 / 35);
    // Idle: no rate, the average and the maxima stay, lastsess counts.
    tr.push(at(35, 10, 400, 35));
    tr.push(at(35, 10, 400, 35));
    assert_eq!((tr.view.rate, tr.view.rate_max), (0, 30));
    assert_eq!(tr.view.times[3], 400 / 35);
    assert_eq!(tr.view.lastsess, Some(2));
}

#[test]
fn averages_forget_what_left_the_window() {
    let mut tr = Track::default();
    tr.push(at(0, 0, 0, 0));
    tr.push(at(1, 0, 1000, 1));
    for _ in 0..WINDOW {
        let last = *tr.hist.back().unwrap();
        tr.push(at(
            last.sess + 1,
            0,
            last.times[3].0 + 10,
            last.times[3].1 + 1,
        ));
    }
    assert_eq!(tr.view.times[3], 10, "the 1000 ms one has left the window");
}

#[test]
fn idle_share_is_of_every_thread_s_time() {
    let s = Duration::from_secs;
    assert_eq!(idle_pct(s(1), s(0), 2), 100);
    assert_eq!(idle_pct(s(1), Duration::from_millis(500), 2), 75);
    assert_eq!(idle_pct(s(1), s(2), 2), 0);
    assert_eq!(
        idle_pct(s(1), s(5), 2),
        0,
        "a late sample never goes below 0"
    );
    assert_eq!(idle_pct(s(0), s(0), 2), 100);
}
