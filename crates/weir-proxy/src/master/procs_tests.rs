//! Unit tests of `procs.rs`.

use super::*;

fn child(pid: i32, kind: Kind, stage: Stage, reloads: u32, started: u64) -> Child {
    Child {
        pid,
        kind,
        stage,
        reloads,
        started: Duration::from_secs(started),
    }
}

#[test]
fn show_proc_as_haproxy() {
    let mut t = Table::default();
    t.children.push(child(10, Kind::Worker, Stage::Old, 0, 0));
    t.children
        .push(child(11, Kind::Program("foo".into()), Stage::Current, 0, 0));
    t.children
        .push(child(12, Kind::Worker, Stage::Current, 0, 5));
    t.count_reload();
    let text = show_proc(&t, 9, Duration::from_secs(3723), "1.0");
    let want = "#<PID>          <type>          <reloads>       <uptime>        <version>      \n\
9               master          1 [failed: 0]   0d01h02m03s     1.0            \n\
# workers\n\
12              worker          1               0d01h01m58s     1.0            \n\
# old workers\n\
10              worker          1               0d01h02m03s     1.0            \n\
# programs\n\
11              foo             1               0d01h02m03s     -              \n\n";
    assert_eq!(text, want);
    // No old worker, no program: no such headings.
    let mut t = Table::default();
    t.children
        .push(child(12, Kind::Worker, Stage::Current, 0, 0));
    let text = show_proc(&t, 9, Duration::ZERO, "1.0");
    assert!(!text.contains("# old workers") && !text.contains("# programs"));
}

#[test]
fn newest_worker_and_max_reloads() {
    let mut t = Table::default();
    t.children.push(child(1, Kind::Worker, Stage::Old, 3, 0));
    t.children
        .push(child(2, Kind::Worker, Stage::Current, 1, 0));
    assert_eq!(t.newest_worker(), Some(2));
    t.children
        .push(child(3, Kind::Worker, Stage::Starting, 0, 0));
    assert_eq!(t.newest_worker(), Some(3), "a starting worker is @1");
    assert_eq!(t.current_worker(), Some(2));
    assert_eq!(
        t.over_max_reloads(2),
        [1],
        "old workers only, above the limit"
    );
}

#[test]
fn statuses() {
    assert_eq!(status_code(Some(3), None), 3);
    assert_eq!(status_code(None, Some(9)), 137);
    assert_eq!(reason(0), "Exit");
    assert_eq!(reason(130), "Interrupt");
    assert_eq!(reason(138), "User defined signal 1");
    assert!(!is_failure(143) && !is_failure(130) && is_failure(137) && is_failure(1));
    assert!(reported(130) && !reported(143) && !reported(0));
}
