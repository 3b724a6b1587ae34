//! `server-state-file` and `load-server-state-from-file`: the state
//! haproxy 2.6 wrote with `show servers state` after runtime API changes is
//! taken over by weir at start (the same rows, and traffic follows them).

use crate::common::http::{Client, Origin};
use crate::common::*;
use std::path::Path;
use std::time::Duration;

#[test]
fn a_server_state_file_written_by_haproxy_is_taken_over() {
    let Some(_) = Haproxy::bin() else {
        panic!("haproxy is not installed: tests/run installs it");
    };
    let dir = tempdir("server-state");
    let (hs, ws, state) = (dir.join("h.sock"), dir.join("w.sock"), dir.join("state"));
    let (o1, o2) = (Origin::start("o1"), Origin::start("o2"));
    let moved = Origin::start_on(std::net::TcpListener::bind("127.0.0.2:0").unwrap(), "moved");
    let dead = free_port();
    let (hp, wp) = (free_port(), free_port());
    // haproxy checks every 100 ms; weir's first check is a minute away, so
    // what weir shows at start comes from the file.
    let conf = |sock: &Path, port: u16, inter: &str| {
        format!(
            "global\n    stats socket {} level admin\n    server-state-base {}\n    server-state-file state\n\
             defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n    load-server-state-from-file global\n\
             listen px\n    bind 127.0.0.1:{port}\n\
             \x20   server s1 127.0.0.1:{}\n    server s2 127.0.0.1:{} weight 10\n\
             \x20   server s3 127.0.0.1:{dead} check inter {inter} fall 1\n    server s4 127.0.0.1:{}\n",
            sock.display(),
            dir.display(),
            o1.port(),
            o2.port(),
            o1.port()
        )
    };
    let h = Haproxy::start(&conf(&hs, hp, "100ms"), hp);
    for cmd in [
        "set server px/s1 state drain".to_string(),
        "set server px/s2 weight 4".to_string(),
        format!("set server px/s2 addr 127.0.0.2 port {}", moved.port()),
        "set server px/s4 state maint".to_string(),
    ] {
        ask(&hs, &format!("{cmd}\n"));
    }
    let saved = wait_for("s3 down at haproxy", Duration::from_secs(5), || {
        let t = ask(&hs, "show servers state\n");
        t.lines()
            .any(|l| l.split(' ').nth(3) == Some("s3") && l.split(' ').nth(5) == Some("0"))
            .then_some(t)
    });
    drop(h);
    std::fs::write(&state, &saved).unwrap();
    let _w = Weir::start(&conf(&ws, wp, "60s"), wp);
    let ours = ask(&ws, "show servers state\n");
    // (srv_addr, op_state, admin_state, uweight, srv_port) per server.
    let row = |t: &str, name: &str| -> Vec<String> {
        let l = t
            .lines()
            .find(|l| l.split(' ').nth(3) == Some(name))
            .unwrap();
        let f: Vec<&str> = l.split(' ').collect();
        [4, 5, 6, 7, 18].iter().map(|&i| f[i].to_string()).collect()
    };
    for name in ["s1", "s2", "s3", "s4"] {
        assert_eq!(
            row(&ours, name),
            row(&saved, name),
            "{name}:\n{saved}\n{ours}"
        );
    }
    assert_eq!(row(&ours, "s2")[0], "127.0.0.2");
    // s1 drains, s3 is down, s4 in maintenance: s2, moved, takes it all.
    for _ in 0..4 {
        let r = Client::connect(wp).get("/");
        assert_eq!(r.header("x-server"), Some("moved"), "{}", r.head);
    }
}

/// `init-addr none` on a name that does not resolve: the server starts in
/// maintenance without an address, shown as haproxy shows it; a
/// `set server … addr` brings it in.
#[test]
fn init_addr_none_starts_in_maintenance_as_haproxy() {
    let origin = crate::common::http::Origin::start("a");
    let dir = tempdir("init-addr");
    let (ws, hs) = (dir.join("w.sock"), dir.join("h.sock"));
    let (wp, hp) = (free_port(), free_port());
    let cfg = |sock: &std::path::Path, port: u16| {
        format!(
            "global\n    stats socket {} level admin\n\
             defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
             frontend fe\n    bind 127.0.0.1:{port}\n    default_backend be\n\
             backend be\n    server a 127.0.0.1:{}\n\
             \x20   server b unresolvable.invalid:{} init-addr none\n\
             \x20   server c 127.0.0.1:1 init-addr 10.9.8.7 disabled\n",
            sock.display(),
            origin.port(),
            origin.port()
        )
    };
    let Some(_h) = Haproxy::start(&cfg(&hs, hp), hp) else {
        panic!("haproxy is not installed: tests/run installs it");
    };
    let _w = Weir::start(&cfg(&ws, wp), wp);
    let view = |sock: &std::path::Path| -> Vec<String> {
        let stat: Vec<String> = show_stat(sock)
            .into_iter()
            .filter(|r| r.get("pxname").map(String::as_str) == Some("be"))
            .map(|r| format!("{} {} {}", r["svname"], r["status"], r["addr"]))
            .collect();
        let state = ask(sock, "show servers state be\n");
        let states = state
            .lines()
            .filter(|l| !l.starts_with('#') && !l.is_empty() && l.contains(" be "))
            .map(|l| l.split(' ').skip(3).take(4).collect::<Vec<_>>().join(" "));
        stat.into_iter().chain(states).collect()
    };
    let (ours, theirs) = (view(&ws), view(&hs));
    assert_eq!(ours, theirs, "weir's, then haproxy's");
    assert!(
        ours.iter().any(|l| l == "b MAINT (resolution) "),
        "{ours:?}"
    );
    // Requests go to `a` only (`c` is disabled), until `b`
    // gets an address.
    let mut c = Client::connect(wp);
    for _ in 0..4 {
        assert_eq!(c.get("/").header("x-server"), Some("a"));
    }
    let said = ask(
        &ws,
        &format!("set server be/b addr 127.0.0.1 port {}\n", origin.port()),
    );
    assert!(said.starts_with("IP changed from"), "{said}");
    let stat = show_stat(&ws);
    let b = stat.iter().find(|r| r["svname"] == "b").unwrap();
    assert_eq!(b["status"], "no check", "{b:?}");
}
