//! The runtime API through the real binary: commands on a unix stats
//! socket (and a TCP one at level user), answers checked against live
//! traffic: counters move as requests pass, a disabled server gets none and
//! shows MAINT, a weight change shifts the split; levels, prompt mode, bad
//! input, `socat`, and the `show stat` header against haproxy 2.6's.

use crate::common::http::{Client, Origin};
use crate::common::tls::{run, text};
use crate::common::*;
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn cfg(sock: &Path, user_port: u16, port: u16, o1: u16, o2: u16) -> String {
    format!(
        "global\n    nbthread 2\n    stats socket {} mode 600 level admin\n    stats socket 127.0.0.1:{user_port} level user\n\
         defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         frontend fe\n    bind 127.0.0.1:{port}\n    http-request deny if {{ path /denied }}\n    default_backend be\n\
         backend be\n    balance roundrobin\n    server o1 127.0.0.1:{o1}\n    server o2 127.0.0.1:{o2}\n    server dead 127.0.0.1:9 check inter 200ms fall 1\n",
        sock.display()
    )
}

/// `show stat` rows.
fn stat(sock: &Path) -> Vec<std::collections::HashMap<String, String>> {
    show_stat(sock)
}

fn field(rows: &[std::collections::HashMap<String, String>], sv: &str, col: &str) -> String {
    let r = rows
        .iter()
        .find(|r| r["svname"] == sv)
        .unwrap_or_else(|| panic!("{sv}: {rows:?}"));
    r[col].clone()
}

fn num(rows: &[std::collections::HashMap<String, String>], sv: &str, col: &str) -> u64 {
    field(rows, sv, col)
        .parse()
        .unwrap_or_else(|_| panic!("{sv} {col}: {rows:?}"))
}

/// Requests each origin saw.
fn split(o1: &Origin, o2: &Origin) -> (usize, usize) {
    (o1.seen.lock().unwrap().len(), o2.seen.lock().unwrap().len())
}

#[test]
fn counters_follow_traffic_and_commands_steer_it() {
    let (o1, o2) = (Origin::start("o1"), Origin::start("o2"));
    let dir = tempdir("runtime-api");
    let sock: PathBuf = dir.join("admin.sock");
    let (port, user_port) = (free_port(), free_port());
    let _w = Weir::start(&cfg(&sock, user_port, port, o1.port(), o2.port()), port);

    // The dead server is marked down by its check.
    wait_for(
        "the check marks 'dead' DOWN",
        std::time::Duration::from_secs(5),
        || (field(&stat(&sock), "dead", "status") == "DOWN").then_some(()),
    );
    let mut c = Client::connect(port);
    for _ in 0..10 {
        assert_eq!(c.get("/").status, 200);
    }
    assert_eq!(c.get("/denied").status, 403);
    drop(c);
    let rows = wait_for(
        "counters after the exchanges",
        std::time::Duration::from_secs(5),
        || {
            let rows = stat(&sock);
            (num(&rows, "FRONTEND", "req_tot") == 11).then_some(rows)
        },
    );
    assert_eq!(num(&rows, "FRONTEND", "hrsp_2xx"), 10);
    assert_eq!(num(&rows, "FRONTEND", "hrsp_4xx"), 1);
    assert_eq!(num(&rows, "FRONTEND", "dreq"), 1);
    assert_eq!(num(&rows, "FRONTEND", "stot"), 1, "one connection");
    assert!(num(&rows, "FRONTEND", "bin") > 100);
    assert_eq!(num(&rows, "o1", "stot") + num(&rows, "o2", "stot"), 10);
    assert_eq!(num(&rows, "BACKEND", "hrsp_2xx"), 10);
    assert_eq!(field(&rows, "o1", "status"), "no check");
    assert_eq!(field(&rows, "dead", "check_status"), "L4CON");
    assert_eq!(field(&rows, "BACKEND", "act"), "2");
    assert_eq!(field(&rows, "BACKEND", "algo"), "roundrobin");

    // show info agrees.
    let info = ask(&sock, "show info\n");
    assert!(info.starts_with("Name: weir\n"), "{info}");
    assert!(
        info.contains("\nNbthread: 2\n") && info.contains("\nCumReq: 11\n"),
        "{info}"
    );

    // A server in maintenance gets nothing, and shows MAINT.
    assert_eq!(ask(&sock, "disable server be/o2\n"), "\n");
    let before = split(&o1, &o2);
    let mut c = Client::connect(port);
    for _ in 0..6 {
        assert_eq!(c.get("/").status, 200);
    }
    let after = split(&o1, &o2);
    assert_eq!((after.0 - before.0, after.1 - before.1), (6, 0));
    assert_eq!(field(&stat(&sock), "o2", "status"), "MAINT");
    // `up` leaves out the servers that are down or in maintenance,
    // `no-maint` those in maintenance; frontends and backends stay.
    let names = |line: &str| -> Vec<String> {
        ask(&sock, line)
            .lines()
            .skip(1)
            .filter(|l| !l.is_empty())
            .map(|l| l.split(',').nth(1).unwrap_or("").to_string())
            .collect()
    };
    assert_eq!(
        names("show stat be -1 -1 up\n"),
        ["o1", "BACKEND"],
        "up: o2 (MAINT) and dead (DOWN) left out"
    );
    assert_eq!(
        names("show stat -1 -1 -1 no-maint\n"),
        ["FRONTEND", "o1", "dead", "BACKEND"]
    );
    assert_eq!(ask(&sock, "set server be/o2 state ready\n"), "\n");
    assert_eq!(field(&stat(&sock), "o2", "status"), "no check");

    // Weights 3:1 split 40 requests 30/10 under roundrobin.
    assert_eq!(
        ask(
            &sock,
            "set server be/o1 weight 3; set weight be/o2 1; get weight be/o1\n"
        ),
        "\n\n3 (initial 1)\n\n"
    );
    let before = split(&o1, &o2);
    for _ in 0..40 {
        assert_eq!(c.get("/").status, 200);
    }
    let after = split(&o1, &o2);
    assert_eq!((after.0 - before.0, after.1 - before.1), (30, 10));
    assert_eq!(field(&stat(&sock), "o1", "weight"), "3");

    // Drain: weight 0 for new traffic, the weight comes back when ready.
    ask(&sock, "set server be/o1 state drain\n");
    let before = split(&o1, &o2);
    for _ in 0..4 {
        assert_eq!(c.get("/").status, 200);
    }
    let after = split(&o1, &o2);
    assert_eq!((after.0 - before.0, after.1 - before.1), (0, 4));
    assert_eq!(field(&stat(&sock), "o1", "status"), "DRAIN");
    ask(&sock, "set server be/o1 state ready\n");
    assert_eq!(ask(&sock, "get weight be/o1\n"), "3 (initial 1)\n\n");

    // show servers state.
    let t = ask(&sock, "show servers state be\n");
    let lines: Vec<&str> = t.lines().collect();
    assert_eq!(lines[0], "1");
    assert!(lines[2].contains(" be 1 o1 127.0.0.1 2 0 3 1 "), "{t}");
    assert!(lines[4].contains(" dead 127.0.0.1 0 "), "{t}");
}

#[test]
fn levels_prompt_and_bad_input() {
    let (o1, o2) = (Origin::start("o1"), Origin::start("o2"));
    let dir = tempdir("runtime-api-levels");
    let sock = dir.join("admin.sock");
    let (port, user_port) = (free_port(), free_port());
    let _w = Weir::start(&cfg(&sock, user_port, port, o1.port(), o2.port()), port);

    // The TCP socket is at level user: reads yes, changes no.
    let tcp = |line: &str| {
        let mut s = std::net::TcpStream::connect(("127.0.0.1", user_port)).unwrap();
        s.write_all(line.as_bytes()).unwrap();
        let mut t = String::new();
        s.read_to_string(&mut t).unwrap();
        t
    };
    assert_eq!(tcp("disable server be/o1\n"), "Permission denied\n\n");
    assert_eq!(tcp("show cli level\n"), "user\n\n");
    assert!(tcp("show stat\n").starts_with("# pxname,svname,"));
    assert!(!tcp("help\n").contains("disable server"));
    assert_eq!(
        ask(&sock, "show cli level; operator; show cli level\n"),
        "admin\n\n\noperator\n\n"
    );

    // Bad input: one line each, and the socket keeps answering.
    assert_eq!(
        ask(&sock, "disable server be\n"),
        "Require 'backend/server'.\n\n"
    );
    assert_eq!(ask(&sock, "disable server be/zz\n"), "No such server.\n\n");
    assert_eq!(
        ask(&sock, "set server be/o1 weight 300\n"),
        "Absolute weight can only be between 0 and 256 inclusive.\n\n"
    );
    let t = ask(&sock, "show nothing\n");
    assert!(
        t.starts_with("Unknown command, but maybe one of the following ones is a better match:\n"),
        "{t}"
    );
    assert!(t.ends_with("\n\n") && t.contains("  show stat"), "{t}");

    // Prompt mode keeps the connection for several lines.
    let mut u = UnixStream::connect(&sock).unwrap();
    u.write_all(b"prompt\nget weight be/o1\nshow backend\nquit\n")
        .unwrap();
    let mut t = String::new();
    u.read_to_string(&mut t).unwrap();
    assert_eq!(t, "\n> 1 (initial 1)\n\n> # name\nbe\n\n> ");

    // A line that never ends is cut off, and others are still served.
    let mut flood = UnixStream::connect(&sock).unwrap();
    let junk = vec![b'x'; 200 * 1024];
    let _ = flood.write_all(&junk);
    let mut t = String::new();
    let _ = flood.read_to_string(&mut t);
    assert!(t.starts_with("Command line too long."), "{t}");
    assert_eq!(ask(&sock, "show cli level\n"), "admin\n\n");

    // socat, as operators use it.
    let addr = format!("UNIX-CONNECT:{}", sock.display());
    let out = text(&run(&["socat", "-", &addr], b"show info\n"));
    assert!(out.starts_with("Name: weir\n"), "{out}");
}

#[test]
fn show_stat_header_matches_haproxy_26() {
    if std::process::Command::new("haproxy")
        .arg("-v")
        .output()
        .is_err()
    {
        panic!("haproxy is not installed: tests/run installs it");
    }
    let dir = tempdir("runtime-api-haproxy");
    let (hs, ws) = (dir.join("h.sock"), dir.join("w.sock"));
    let (hp, wp) = (free_port(), free_port());
    let conf = |sock: &Path, port: u16| {
        format!(
            "global\n    stats socket {} level admin\n\
             defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
             listen px\n    bind 127.0.0.1:{port}\n    server s 127.0.0.1:9\n",
            sock.display()
        )
    };
    let hcfg = dir.join("h.cfg");
    std::fs::write(&hcfg, conf(&hs, hp)).unwrap();
    let mut h = std::process::Command::new("haproxy")
        .args(["-db", "-q", "-f"])
        .arg(&hcfg)
        .spawn()
        .unwrap();
    let _w = Weir::start(&conf(&ws, wp), wp);
    wait_for(
        "haproxy's socket",
        std::time::Duration::from_secs(5),
        || UnixStream::connect(&hs).ok(),
    );
    let theirs = ask(&hs, "show stat\n");
    let ours = ask(&ws, "show stat\n");
    let theirs_typed = ask(&hs, "show stat typed\n") + &ask(&hs, "show info typed\n");
    let ours_typed = ask(&ws, "show stat typed\n") + &ask(&ws, "show info typed\n");
    let ours_json = [ask(&ws, "show stat json\n"), ask(&ws, "show info json\n")];
    let _ = h.kill();
    let _ = h.wait();
    // Typed lines: each field weir writes carries haproxy's position, tags
    // and type for the same kind of object.
    let meta = |t: &str| -> std::collections::HashMap<(String, String), String> {
        t.lines()
            .filter_map(|l| {
                let (head, rest) = l.split_once(':')?;
                let mut p: Vec<&str> = head.split('.').collect();
                let kind = p[0].to_string();
                p.pop();
                let name = p.last()?.to_string();
                let tags: Vec<&str> = rest.splitn(3, ':').take(2).collect();
                Some((
                    (kind, name),
                    format!("{}:{}", p[p.len() - 2], tags.join(":")),
                ))
            })
            .collect()
    };
    let (ours_m, theirs_m) = (meta(&ours_typed), meta(&theirs_typed));
    let mut compared = 0;
    for (k, v) in &ours_m {
        if let Some(tv) = theirs_m.get(k) {
            assert_eq!(v, tv, "{k:?}");
            compared += 1;
        }
    }
    assert!(compared > 100, "{compared} fields compared");
    if std::process::Command::new("python3")
        .arg("-V")
        .output()
        .is_ok()
    {
        for j in &ours_json {
            let out = run(
                &["python3", "-c", "import json,sys; json.load(sys.stdin)"],
                j.as_bytes(),
            );
            assert!(out.status.success(), "{}: {j}", text(&out));
        }
    }
    assert_eq!(ours.lines().next(), theirs.lines().next());
    // The same rows, with the same number of fields each.
    let shape = |t: &str| -> Vec<(String, usize)> {
        t.lines()
            .skip(1)
            .filter(|l| !l.is_empty())
            .map(|l| {
                (
                    l.split(',').take(2).collect::<Vec<_>>().join(","),
                    l.split(',').count(),
                )
            })
            .collect()
    };
    assert_eq!(shape(&ours), shape(&theirs));
}

#[test]
fn limits_pausing_and_clearing_counters() {
    let (o1, o2) = (Origin::start("o1"), Origin::start("o2"));
    let dir = tempdir("runtime-api-limits");
    let sock = dir.join("admin.sock");
    let (port, user_port) = (free_port(), free_port());
    let _w = Weir::start(&cfg(&sock, user_port, port, o1.port(), o2.port()), port);

    // A paused frontend accepts nothing until enabled again; the waiting
    // client is then served.
    assert_eq!(ask(&sock, "disable frontend fe\n"), "\n");
    assert_eq!(field(&stat(&sock), "FRONTEND", "status"), "PAUSED");
    let mut waiting = Client::connect(port);
    waiting.send(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n");
    waiting
        .w
        .set_read_timeout(Some(std::time::Duration::from_millis(300)))
        .unwrap();
    let mut b = [0u8; 1];
    let r = waiting.r.get_mut().read(&mut b);
    assert!(r.is_err(), "no answer while paused: {r:?}");
    assert_eq!(ask(&sock, "enable frontend fe\n"), "\n");
    waiting
        .w
        .set_read_timeout(Some(std::time::Duration::from_secs(5)))
        .unwrap();
    assert_eq!(waiting.response("GET").status, 200);
    assert_eq!(field(&stat(&sock), "FRONTEND", "status"), "OPEN");
    assert_eq!(
        ask(&sock, "disable frontend nope\n"),
        "No such frontend.\n\n"
    );

    // Limits.
    assert_eq!(
        ask(&sock, "set maxconn global 0\n"),
        "Value out of range.\n\n"
    );
    assert_eq!(ask(&sock, "set maxconn global 50\n"), "\n");
    assert!(ask(&sock, "show info\n").contains("\nMaxconn: 50\n"));
    ask(
        &sock,
        "set maxconn frontend fe 7; set maxconn server be/o1 3\n",
    );
    let rows = stat(&sock);
    assert_eq!(field(&rows, "FRONTEND", "slim"), "7");
    assert_eq!(field(&rows, "o1", "slim"), "3");
    ask(&sock, "set maxconn server be/o1 0\n");
    assert_eq!(field(&stat(&sock), "o1", "slim"), "");

    // Counters start again from zero, and keep counting.
    assert!(num(&stat(&sock), "FRONTEND", "req_tot") >= 1);
    assert_eq!(
        std::net::TcpStream::connect(("127.0.0.1", user_port))
            .and_then(|mut s| {
                s.write_all(b"clear counters all\n")?;
                let mut t = String::new();
                s.read_to_string(&mut t)?;
                Ok(t)
            })
            .unwrap(),
        "Permission denied\n\n"
    );
    assert_eq!(ask(&sock, "clear counters all\n"), "\n");
    let rows = stat(&sock);
    assert_eq!(num(&rows, "FRONTEND", "req_tot"), 0);
    assert_eq!(num(&rows, "o1", "stot") + num(&rows, "o2", "stot"), 0);
    assert_eq!(Client::connect(port).get("/").status, 200);
    wait_for(
        "the next request counted",
        std::time::Duration::from_secs(5),
        || (num(&stat(&sock), "FRONTEND", "req_tot") == 1).then_some(()),
    );
}

#[test]
fn show_errors_keeps_the_last_invalid_request_and_response() {
    let (o1, o2) = (Origin::start("o1"), Origin::start("o2"));
    let dir = tempdir("runtime-api-errors");
    let sock = dir.join("admin.sock");
    let (port, user_port) = (free_port(), free_port());
    let _w = Weir::start(&cfg(&sock, user_port, port, o1.port(), o2.port()), port);
    assert!(ask(&sock, "show errors\n").starts_with("Total events captured on ["));

    let mut c = Client::connect(port);
    c.send(b"GET /a b HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n");
    assert_eq!(c.response("GET").status, 400);
    assert_eq!(Client::connect(port).get("/garbage").status, 502);

    let t = ask(&sock, "show errors\n");
    assert!(t.contains(" : 2\n"), "{t}");
    assert!(t.contains("] frontend fe (#2): invalid request\n"), "{t}");
    assert!(t.contains("  00000  GET /a b HTTP/1.1\\r\\n\n"), "{t}");
    assert!(t.contains("] backend be (#3): invalid response\n"), "{t}");
    assert!(t.contains(", server o") && t.contains("event #1"), "{t}");
    let req_only = ask(&sock, "show errors fe request\n");
    assert!(req_only.contains("invalid request") && !req_only.contains("invalid response"));
    let t = ask(&sock, "show errors be\n");
    assert!(t.contains("invalid response") && !t.contains("invalid request"));
    let user = {
        let mut s = std::net::TcpStream::connect(("127.0.0.1", user_port)).unwrap();
        s.write_all(b"show errors\n").unwrap();
        let mut t = String::new();
        s.read_to_string(&mut t).unwrap();
        t
    };
    assert_eq!(
        user, "Permission denied\n\n",
        "request bytes are not for level user"
    );
}

#[test]
fn profiling_activity_and_threads() {
    let (o1, o2) = (Origin::start("o1"), Origin::start("o2"));
    let dir = tempdir("runtime-api-profiling");
    let sock = dir.join("admin.sock");
    let (port, user_port) = (free_port(), free_port());
    let _w = Weir::start(&cfg(&sock, user_port, port, o1.port(), o2.port()), port);
    assert!(
        ask(&sock, "show profiling\n").starts_with("Per-task CPU profiling              : auto")
    );
    // `profiling.tasks on` in the configuration: on from the start.
    let sock2 = dir.join("admin2.sock");
    let port2 = free_port();
    let _w2 = Weir::start(
        &format!(
            "global\n    profiling.tasks on\n    stats socket {} level admin\n\
             defaults\n    mode http\n    timeout client 1s\n\
             frontend f\n    bind 127.0.0.1:{port2}\n    http-request return status 200\n",
            sock2.display()
        ),
        port2,
    );
    assert!(ask(&sock2, "show profiling\n").starts_with("Per-task CPU profiling              : on"));
    assert_eq!(
        ask(&sock, "set profiling tasks maybe\n"),
        "Expects 'on', 'auto', or 'off'.\n\n"
    );
    assert_eq!(ask(&sock, "set profiling tasks on\n"), "\n");
    for _ in 0..3 {
        let mut c = Client::connect(port);
        for _ in 0..5 {
            assert_eq!(c.get("/").status, 200);
        }
    }
    let t = ask(&sock, "show profiling\n");
    assert!(
        t.contains(
            "  function                      calls   cpu_tot   cpu_avg   lat_tot   lat_avg\n"
        ),
        "{t}"
    );
    let http = t
        .lines()
        .find(|l| l.trim_start().starts_with("http_session"))
        .unwrap_or_else(|| panic!("{t}"));
    let f: Vec<&str> = http.split_whitespace().collect();
    let calls: u64 = f[1].parse().unwrap();
    assert!(calls >= 15, "a poll per request at least: {http}");
    assert!(f[2].ends_with('s') && f[3].ends_with('s'), "{http}");
    ask(&sock, "set profiling tasks off\n");
    let a = ask(&sock, "show activity\n");
    let accepted = a
        .lines()
        .find_map(|l| l.strip_prefix("accepted: "))
        .unwrap_or_else(|| panic!("{a}"));
    let total: u64 = accepted.split_whitespace().next().unwrap().parse().unwrap();
    assert!(total >= 3, "{a}");
    assert!(
        accepted.contains('[') && a.starts_with("thread_id: 0 (1..2)\n"),
        "{a}"
    );
    let th = ask(&sock, "show threads\n");
    assert!(
        th.contains("Thread weir-1 : tid=") && th.contains("Thread weir-2 : tid="),
        "{th}"
    );
}

#[test]
fn new_addresses_and_shut_sessions_do_not_reuse_old_connections() {
    let (o1, o2) = (Origin::start("o1"), Origin::start("o2"));
    let dir = tempdir("runtime-api-addr");
    let sock = dir.join("admin.sock");
    let (port, tport) = (free_port(), free_port());
    let cfg = format!(
        "global\n    nbthread 1\n    stats socket {} level admin\n\
         defaults\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         frontend fe\n    mode http\n    bind 127.0.0.1:{port}\n    default_backend be\n\
         backend be\n    mode http\n    http-reuse always\n    server s 127.0.0.1:{}\n\
         listen tcp\n    mode tcp\n    bind 127.0.0.1:{tport}\n    server t 127.0.0.1:{}\n",
        sock.display(),
        o1.port(),
        o1.port()
    );
    let _w = Weir::start(&cfg, port);

    // The keep-alive client's server connection to o1 is held or pooled;
    // after the change its next request goes to o2 all the same.
    let mut c = Client::connect(port);
    assert_eq!(c.get("/").field("server").as_deref(), Some("o1"));
    let t = ask(
        &sock,
        &format!("set server be/s addr 127.0.0.1 port {}\n", o2.port()),
    );
    assert!(
        t.starts_with("IP changed from '127.0.0.1' to '127.0.0.1', port changed from"),
        "{t}"
    );
    assert_eq!(c.get("/").field("server").as_deref(), Some("o2"));
    assert_eq!(
        Client::connect(port).get("/").field("server").as_deref(),
        Some("o2")
    );

    // A live mode tcp session ends when its server's sessions are shut.
    let mut t = Client::connect(tport);
    assert_eq!(t.get("/").status, 200);
    assert_eq!(ask(&sock, "shutdown sessions server tcp/t\n"), "\n");
    // Ended with a FIN or, as weir aborts killed sessions, a reset.
    let mut b = [0u8; 1];
    let r = t.r.get_mut().read(&mut b);
    assert!(
        matches!(&r, Ok(0))
            || matches!(&r, Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset),
        "the session was ended: {r:?}"
    );
}

/// `show sess` lines as (id, whole line).
fn sessions(sock: &Path) -> Vec<(String, String)> {
    ask(sock, "show sess\n")
        .lines()
        .filter(|l| l.starts_with("0x"))
        .map(|l| (l.split(':').next().unwrap().to_string(), l.to_string()))
        .collect()
}

/// The session whose line has every one of `parts`.
fn session_with(sock: &Path, parts: &[&str]) -> (String, String) {
    wait_for(
        &format!("a session with {parts:?}"),
        Duration::from_secs(5),
        || {
            sessions(sock)
                .into_iter()
                .find(|(_, l)| parts.iter().all(|p| l.contains(p)))
        },
    )
}

/// Reads until the peer ends the connection (a FIN or a reset).
fn ended(s: &mut std::net::TcpStream) -> bool {
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut b = [0u8; 64];
    loop {
        match s.read(&mut b) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(e) => return e.kind() == std::io::ErrorKind::ConnectionReset,
        }
    }
}

#[test]
fn sessions_are_listed_and_shut_one_by_one() {
    let o1 = Origin::start("o1");
    let echo = Server::echo();
    let log = Syslog::start();
    let dir = tempdir("runtime-api-sess");
    let sock = dir.join("admin.sock");
    let (port, tport) = (free_port(), free_port());
    let cfg = format!(
        "global\n    nbthread 2\n    stats socket {} level admin\n\
         defaults\n    timeout connect 1s\n    timeout client 20s\n    timeout server 20s\n\
         frontend fe\n    mode http\n    bind 127.0.0.1:{port}\n    default_backend be\n\
         backend be\n    mode http\n    server o1 127.0.0.1:{}\n\
         listen tcp\n    mode tcp\n    log 127.0.0.1:{} local0\n    option tcplog\n    bind 127.0.0.1:{tport}\n    server t 127.0.0.1:{}\n",
        sock.display(),
        o1.port(),
        log.port(),
        echo.port()
    );
    let _w = Weir::start(&cfg, port);
    assert!(listening(tport));

    // An established mode tcp session, and an idle keep-alive client.
    let mut t = client(tport);
    t.write_all(b"ping").unwrap();
    let mut b = [0u8; 4];
    t.read_exact(&mut b).unwrap();
    let tsrc = t.local_addr().unwrap().to_string();
    let mut h = Client::connect(port);
    assert_eq!(h.get("/").status, 200);
    let hsrc = h.r.get_ref().local_addr().unwrap().to_string();

    let (tid, tline) = session_with(&sock, &[&format!("src={tsrc} ")]);
    assert!(
        tline.contains(" proto=tcpv4 ") && tline.contains(" fe=tcp be=tcp srv=t "),
        "{tline}"
    );
    let (hid, hline) = session_with(&sock, &[&format!("src={hsrc} ")]);
    assert!(hline.contains(" fe=fe be=be srv=o1 "), "{hline}");
    assert_ne!(tid, hid);

    // The details of one, and of all.
    let one = ask(&sock, &format!("show sess {tid}\n"));
    assert!(one.starts_with(&format!("{tid}: [")), "{one}");
    assert!(one.contains(&format!("source={tsrc}\n")), "{one}");
    assert!(one.contains("  frontend=tcp (id="), "{one}");
    assert!(
        one.contains(&format!(
            "  server=t (id=1) addr=127.0.0.1:{}\n",
            echo.port()
        )),
        "{one}"
    );
    let all = ask(&sock, "show sess all\n");
    assert!(
        all.contains(&format!("{tid}: [")) && all.contains(&format!("{hid}: [")),
        "{all}"
    );
    assert_eq!(ask(&sock, "show sess 0x1234\n"), "Session not found.\n\n");
    assert_eq!(
        ask(&sock, "operator; show sess; shutdown session 0x1\n")
            .trim_end()
            .lines()
            .last(),
        Some("Permission denied")
    );

    // Killing the tcp session ends it, logged with 'K'; the other client
    // is untouched.
    assert_eq!(ask(&sock, &format!("shutdown session {tid}\n")), "\n");
    assert!(ended(&mut t), "the killed session's client saw its end");
    let line = log.wait_line(&format!("{tsrc} "), Duration::from_secs(5));
    assert!(line.contains(" KD "), "{line}");
    assert_eq!(h.get("/").status, 200);
    assert_eq!(
        ask(&sock, &format!("shutdown session {tid}\n")),
        "No such session (use 'show sess').\n\n"
    );

    // An idle keep-alive client is ended too.
    assert_eq!(ask(&sock, &format!("shutdown session {hid}\n")), "\n");
    assert!(
        ended(h.r.get_mut()),
        "the killed keep-alive client was closed"
    );
    wait_for("no session left", Duration::from_secs(5), || {
        sessions(&sock).is_empty().then_some(())
    });

    // A request waiting on a slow server is ended at once, not when the
    // server answers.
    let mut s = Client::connect(port);
    s.send(b"GET /slow?ms=8000 HTTP/1.1\r\nHost: x\r\n\r\n");
    let ssrc = s.r.get_ref().local_addr().unwrap().to_string();
    let (sid, _) = session_with(&sock, &[&format!("src={ssrc} "), " srv=o1 "]);
    let t0 = std::time::Instant::now();
    assert_eq!(ask(&sock, &format!("shutdown session {sid}\n")), "\n");
    assert!(
        ended(s.r.get_mut()),
        "the killed exchange's client saw its end"
    );
    assert!(t0.elapsed() < Duration::from_secs(4), "{:?}", t0.elapsed());
}

#[test]
fn maps_and_acl_files_change_at_run_time() {
    let o1 = Origin::start("o1");
    let dir = tempdir("runtime-api-maps");
    let sock = dir.join("admin.sock");
    let (map, lst) = (dir.join("colors.map"), dir.join("blocked.lst"));
    std::fs::write(&map, "# path color\n/a red\n").unwrap();
    std::fs::write(&lst, "10.0.0.1\n").unwrap();
    let port = free_port();
    let cfg = format!(
        "global\n    stats socket {} level admin\n\
         defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         frontend fe\n    bind 127.0.0.1:{port}\n    acl blocked src -f {}\n    http-request deny if blocked\n\
         \x20   http-request set-header x-color %[path,map_str({},none)]\n    default_backend be\n\
         backend be\n    server o 127.0.0.1:{}\n",
        sock.display(),
        lst.display(),
        map.display(),
        o1.port()
    );
    let _w = Weir::start(&cfg, port);
    let color = |path: &str| {
        let r = Client::connect(port).get(path);
        assert_eq!(r.status, 200, "{path}");
        let seen = o1.seen.lock().unwrap().last().unwrap().head.clone();
        seen.lines()
            .find_map(|l| l.strip_prefix("x-color: ").map(|v| v.trim().to_string()))
            .unwrap_or_default()
    };
    let m = map.display().to_string();
    let l = lst.display().to_string();

    let list = ask(&sock, "show map\n");
    assert!(list.starts_with("# id (file) description\n"), "{list}");
    assert!(
        list.contains(&format!(
            "({m}) pattern loaded from file '{m}' entry_cnt=1\n"
        )),
        "{list}"
    );
    let id: u32 = list
        .lines()
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(ask(&sock, &format!("show map {m}\n")), "0x0 /a red\n\n");
    assert_eq!(color("/a"), "red");
    assert_eq!(color("/b"), "none");

    assert_eq!(ask(&sock, &format!("add map {m} /b deep blue\n")), "\n");
    assert_eq!(color("/b"), "deep blue");
    assert_eq!(
        ask(&sock, &format!("get map {m} /b\n")),
        "type=str, case=sensitive, found=yes, idx=list, key=\"/b\", value=\"deep blue\", type=\"str\"\n\n"
    );
    assert_eq!(
        ask(&sock, &format!("get map #{id} /c\n")),
        "type=str, case=sensitive, found=no\n\n"
    );
    assert_eq!(ask(&sock, &format!("set map #{id} /a green\n")), "\n");
    assert_eq!(color("/a"), "green");
    assert_eq!(ask(&sock, &format!("del map {m} #0x0\n")), "\n");
    assert_eq!(color("/a"), "none");
    assert_eq!(
        ask(&sock, &format!("del map {m} /zzz\n")),
        "Key not found.\n\n"
    );
    assert_eq!(ask(&sock, &format!("clear map {m}\n")), "\n");
    assert_eq!(color("/b"), "none");
    // Entries as a payload: the lines after `<<`, up to an empty line.
    assert_eq!(
        ask(
            &sock,
            &format!("add map {m} <<\n/p1 one\n/p2 two  words\n\n")
        ),
        "\n"
    );
    assert_eq!(
        (color("/p1"), color("/p2")),
        ("one".into(), "two  words".into())
    );
    assert_eq!(ask(&sock, &format!("clear map {m}\n")), "\n");
    assert!(ask(&sock, "show map nope.map\n").starts_with("Unknown map"));

    // The ACL file: our address added, we are denied; removed, served.
    assert!(ask(&sock, "show acl\n").contains(&format!("({l})")));
    assert_eq!(ask(&sock, &format!("add acl {l} 127.0.0.1\n")), "\n");
    assert_eq!(Client::connect(port).get("/").status, 403);
    assert_eq!(
        ask(&sock, &format!("get acl {l} 127.0.0.1\n")),
        "type=ip, case=sensitive, match=yes, idx=list, pattern=\"127.0.0.1\"\n\n"
    );
    assert_eq!(ask(&sock, &format!("del acl {l} 127.0.0.1\n")), "\n");
    assert_eq!(Client::connect(port).get("/").status, 200);
    let bad = ask(&sock, &format!("add acl {l} not-an-ip\n"));
    assert!(
        bad.starts_with("'not-an-ip' is not a valid pattern here"),
        "{bad}"
    );
    assert_eq!(ask(&sock, &format!("show acl {l}\n")), "0x0 10.0.0.1\n\n");
}

#[test]
fn rates_and_time_averages_follow_traffic() {
    let o1 = Origin::start("o1");
    let dir = tempdir("runtime-api-rates");
    let sock = dir.join("admin.sock");
    let port = free_port();
    let cfg = format!(
        "global\n    stats socket {} level admin\n\
         defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         frontend fe\n    bind 127.0.0.1:{port}\n    default_backend be\n\
         backend be\n    server o1 127.0.0.1:{}\n",
        sock.display(),
        o1.port()
    );
    let _w = Weir::start(&cfg, port);
    let row = |sv: &str| {
        stat(&sock)
            .into_iter()
            .find(|r| r["svname"] == sv)
            .unwrap_or_else(|| panic!("{sv}"))
    };
    let n = |r: &std::collections::HashMap<String, String>, col: &str| -> i64 {
        r[col].parse().unwrap_or_else(|_| panic!("{col}: {r:?}"))
    };
    assert_eq!(n(&row("o1"), "lastsess"), -1, "no session yet");

    // 20 quick requests fall in one or two sampled seconds.
    let mut c = Client::connect(port);
    for _ in 0..20 {
        assert_eq!(c.get("/").status, 200);
    }
    wait_for("the rates to be sampled", Duration::from_secs(5), || {
        let (fe, o) = (row("FRONTEND"), row("o1"));
        (n(&fe, "req_rate_max") >= 10 && n(&o, "rate_max") >= 10).then_some(())
    });
    let fe = row("FRONTEND");
    assert!(
        n(&fe, "req_rate_max") <= 20 && n(&fe, "conn_rate_max") == 1,
        "{fe:?}"
    );
    let info = ask(&sock, "show info\n");
    assert!(info.contains("\nMaxConnRate: 1\n"), "{info}");

    // Slow answers: the response time average and maximum follow them.
    for _ in 0..3 {
        assert_eq!(Client::connect(port).get("/slow?ms=300").status, 200);
    }
    let o = wait_for(
        "the averages to include the slow ones",
        Duration::from_secs(5),
        || {
            let o = row("o1");
            (n(&o, "rtime") >= 300 * 3 / 23).then_some(o)
        },
    );
    assert!(
        n(&o, "rtime_max") >= 300 && n(&o, "ttime_max") >= 300,
        "{o:?}"
    );
    assert!(
        n(&o, "rtime") < 300 && n(&o, "ttime") >= n(&o, "rtime"),
        "{o:?}"
    );
    assert!((0..5).contains(&n(&o, "lastsess")), "{o:?}");
    let be = row("BACKEND");
    assert!(
        n(&be, "rtime_max") >= 300 && n(&be, "rate_max") >= 10,
        "{be:?}"
    );

    // `clear counters` starts the maxima again.
    assert_eq!(ask(&sock, "clear counters\n"), "\n");
    let o = row("o1");
    assert_eq!(n(&o, "rtime_max"), 0, "{o:?}");
    assert!(n(&o, "rate_max") < 10, "{o:?}");
}

/// `show servers state` and the ids of `show stat`, against haproxy 2.6 on
/// the same configuration: ids as HAProxy assigns them (the stats socket
/// takes the first proxy id, unnumbered items skip written ids), forced-id
/// flags, check status and result numbers, maintenance from the
/// configuration and from the runtime API, paused checks, drain. Only the
/// seconds since the last change (column 10) are left out.
#[test]
fn servers_state_and_ids_as_haproxy() {
    let live = crate::common::http::Origin::start("o");
    let dead = free_port();
    let cfg = |sock: &Path, port: u16| {
        format!(
            "global\n    stats socket {} level admin\n\
             defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
             backend a\n    server s1 127.0.0.1:{l}\n    server s2 127.0.0.1:{l} id 1 check inter 100ms\n\
             \x20   server s3 127.0.0.1:{dead} check inter 100ms fall 1\n    server s4 127.0.0.1:{l} check inter 100ms disabled\n\
             backend b\n    id 3\n    option httpchk GET /\n    server s1 127.0.0.1:{l} check inter 100ms\n\
             \x20   server s2 127.0.0.1:{l} ssl verify none weight 7\n\
             backend c\n    server s1 127.0.0.1:{l}\n\
             frontend f\n    bind 127.0.0.1:{port}\n    default_backend c\n",
            sock.display(),
            l = live.port()
        )
    };
    let dir = tempdir("servers-state-differential");
    let (ws, hs) = (dir.join("w.sock"), dir.join("h.sock"));
    let (wp, hp) = (free_port(), free_port());
    let Some(_h) = Haproxy::start(&cfg(&hs, hp), hp) else {
        panic!("haproxy is not installed: tests/run installs it");
    };
    let _w = Weir::start(&cfg(&ws, wp), wp);
    let state = |sock: &Path| -> Vec<String> {
        ask(sock, "show servers state\n")
            .lines()
            .map(|l| {
                let mut f: Vec<&str> = l.split(' ').collect();
                if f.len() == 25 {
                    f[9] = "-";
                }
                f.join(" ")
            })
            .collect()
    };
    // The state of `server` (`be/name`) on `sock` has `col` = `v`.
    let has = |sock: &Path, server: &str, col: usize, v: &str| {
        let (be, name) = server.split_once('/').unwrap();
        state(sock).iter().any(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            f.len() == 25 && f[1] == be && f[3] == name && f[col] == v
        })
    };
    let settled = |what: &str, server: &str, col: usize, v: &str| {
        wait_for(what, Duration::from_secs(5), || {
            (has(&ws, server, col, v) && has(&hs, server, col, v)).then_some(())
        })
    };
    let agree = |when: &str| {
        // Checks run every 100 ms on both; wait until they agree.
        let end = std::time::Instant::now() + Duration::from_secs(5);
        let (mut w, mut h) = (state(&ws), state(&hs));
        while w != h && std::time::Instant::now() < end {
            std::thread::sleep(Duration::from_millis(20));
            (w, h) = (state(&ws), state(&hs));
        }
        assert_eq!(w.join("\n"), h.join("\n"), "{when}: weir, then haproxy");
    };
    // First checks done: a/s3 is down (L4CON), b/s1 passed (L7OK).
    settled("a/s3 down", "a/s3", 10, "8");
    settled("b/s1 checked", "b/s1", 10, "15");
    agree("after start");
    let ids = |sock: &Path| -> Vec<[String; 4]> {
        show_stat(sock)
            .iter()
            .map(|r| ["pxname", "svname", "iid", "sid"].map(|c| r[c].clone()))
            .collect()
    };
    assert_eq!(ids(&ws), ids(&hs));
    for cmd in [
        "disable server a/s1\n",
        "disable server a/s2\n",
        "set server c/s1 state drain\n",
        "disable health a/s3\n",
        "enable server a/s4\n",
    ] {
        assert_eq!(ask(&ws, cmd), ask(&hs, cmd), "{cmd}");
    }
    // a/s4 left maintenance and passed its first check.
    settled("a/s4 checked", "a/s4", 10, "6");
    agree("after the runtime commands");
}

/// Without `prompt`, lines sent together are each answered before the
/// session ends, as haproxy does.
#[test]
fn lines_sent_together_are_each_answered() {
    let dir = tempdir("cli-lines");
    let cfg = |sock: &std::path::Path, port: u16| {
        format!(
            "global\n    stats socket {} level admin\n\
             defaults\n    mode http\n    timeout connect 1s\n    timeout client 1s\n    timeout server 1s\n\
             frontend f\n    bind 127.0.0.1:{port}\n    default_backend b\nbackend b\n    server s 127.0.0.1:9\n",
            sock.display()
        )
    };
    let (ws, hs) = (dir.join("w.sock"), dir.join("h.sock"));
    let (wp, hp) = (free_port(), free_port());
    let Some(_h) = Haproxy::start(&cfg(&hs, hp), hp) else {
        panic!("haproxy is not installed: tests/run installs it");
    };
    let _w = Weir::start(&cfg(&ws, wp), wp);
    for sock in [&hs, &ws] {
        let t = ask(sock, "show servers state\nshow backend\n");
        assert!(
            t.contains("# be_id be_name") && t.contains("# name\nb\n"),
            "{t}"
        );
    }
    // One line: one answer, then the end.
    assert!(!ask(&ws, "show backend\n").contains("be_id"));
}
