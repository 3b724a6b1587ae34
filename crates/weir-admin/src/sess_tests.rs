use super::*;

fn row() -> SessRow {
    SessRow {
        id: 0x0100_0003_0000_0007,
        uniq: 7,
        proto: "tcpv4",
        src: "127.0.0.1:43836".into(),
        dst: "127.0.0.1:19001".into(),
        frontend: Named {
            name: "t".into(),
            id: 2,
        },
        mode: "tcp",
        backend: Some(Named {
            name: "t".into(),
            id: 2,
        }),
        server: Some(Named {
            name: "s1".into(),
            id: 1,
        }),
        server_addr: Some("127.0.0.1:19002".into()),
        age_secs: 63,
        accepted: "23/Nov/2026:11:52:55.850".into(),
        fd: 13,
        thread: 1,
        killed: false,
        asleep: false,
    }
}

#[test]
fn ids_read_back_as_printed() {
    assert_eq!(parse_id("0x100000300000007"), Some(0x0100_0003_0000_0007));
    assert_eq!(parse_id("ff"), Some(255));
    assert_eq!(parse_id("0x0"), None);
    assert_eq!(parse_id("zz"), None);
    assert_eq!(parse_id(""), None);
}

#[test]
fn ages_use_two_units() {
    assert_eq!(human_time(0), "0s");
    assert_eq!(human_time(63), "1m3s");
    assert_eq!(human_time(3600 * 2 + 300), "2h5m");
    assert_eq!(human_time(86400 * 3 + 3600 * 4 + 5), "3d4h");
}

#[test]
fn a_line_carries_what_parsers_look_for() {
    let out = lines(&[row()]);
    assert_eq!(
        out,
        "0x100000300000007: proto=tcpv4 src=127.0.0.1:43836 fe=t be=t srv=s1 ts=00 epoch=0 age=1m3s thr=1 scf=[fd=13]\n"
    );
    let mut r = row();
    r.backend = None;
    r.server = None;
    r.killed = true;
    r.asleep = true;
    let out = lines(&[r]);
    assert!(out.contains(" be=<NONE> srv=<none> "), "{out}");
    assert!(out.contains(" killed=1 asleep=1 "), "{out}");
}

#[test]
fn details_name_every_party() {
    let out = details(&[row()]);
    let want = [
        "0x100000300000007: [23/Nov/2026:11:52:55.850] id=7 proto=tcpv4 source=127.0.0.1:43836",
        "  frontend=t (id=2 mode=tcp), addr=127.0.0.1:19001",
        "  backend=t (id=2 mode=tcp)",
        "  server=s1 (id=1) addr=127.0.0.1:19002",
        "  thread=1 age=1m3s killed=0 asleep=0",
        "  scf fd=13",
    ];
    assert_eq!(out.lines().collect::<Vec<_>>(), want);
}
