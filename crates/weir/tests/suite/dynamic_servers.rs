//! Servers at run time, beside haproxy 2.6: `add server` and `del server`
//! answers, the server list they leave (`show servers state`) and the
//! traffic an added server takes; `track` passing a health check's verdict
//! and a maintenance on; agent checks (`agent-check`) setting weight,
//! limit and states, with their log lines.

use crate::common::*;
use std::io::{Read, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// A syslog line without its header (priority, date, pid) and with check
/// durations left out.
fn bare(line: &str) -> String {
    let l = line.split_once("]: ").map_or(line, |x| x.1);
    match l.split_once("check duration: ") {
        Some((a, b)) => format!(
            "{a}check duration: -{}",
            b.split_once("ms").map_or(b, |x| x.1)
        ),
        None => l.to_string(),
    }
}

/// The names the servers behind `port` wrote to `n` connections.
fn names(port: u16, n: usize) -> Vec<String> {
    (0..n).map(|_| fetch(port).unwrap_or_default()).collect()
}

fn cli_cfg(sock: &std::path::Path, port: u16, fixed: u16, syslog: u16, one: u16) -> String {
    format!(
        "global\n    stats socket {} level admin\n\
         defaults\n    mode tcp\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         listen front\n    bind 127.0.0.1:{port}\n    log 127.0.0.1:{syslog} local0\n    balance roundrobin\n\
         \x20   tcp-request content accept if {{ srv_is_up(front/s1) }}\n\
         \x20   server s1 127.0.0.1:{one}\n\
         listen fixed\n    bind 127.0.0.1:{fixed}\n    balance static-rr\n    server f 127.0.0.1:{one}\n",
        sock.display()
    )
}

/// One proxy's answers to the same runtime API session, its server lists
/// and the traffic at each step.
fn add_and_delete(sock: &std::path::Path, port: u16, two: u16) -> Vec<String> {
    let mut out = Vec::new();
    let mut say = |line: String| {
        let a = ask(sock, &format!("{line}\n"));
        out.push(format!("{line} => {}", a.trim_end()));
    };
    say("add server nope/x 127.0.0.1:1".into());
    say("add server front/s2".into());
    say("add server fixed/s2 127.0.0.1:1".into());
    say(format!("add server front/s2 127.0.0.1:{two} cookie x"));
    say(format!("add server front/s2 127.0.0.1:{two} bogus"));
    say(format!("add server front/s2 127.0.0.1:{two} weight 3"));
    say(format!("add server front/s2 127.0.0.1:{two}"));
    say("del server front/nope".into());
    let mut out2 = std::mem::take(&mut out);
    out2.extend(servers_state_lines(sock, "front"));
    let before = names(port, 4);
    out2.push(format!("in maintenance: {before:?}"));
    let mut say = |line: &str| {
        let a = ask(sock, &format!("{line}\n"));
        out2.push(format!("{line} => {}", a.trim_end()));
    };
    say("enable server front/s2");
    // (haproxy applies a state change just after its answer.)
    let s2_is = |op_admin: &str| {
        wait_for("the new state", Duration::from_secs(5), || {
            servers_state_lines(sock, "front")
                .iter()
                .any(|l| l.contains(&format!(" s2 127.0.0.1 {op_admin} ")))
                .then_some(())
        })
    };
    s2_is("2 0");
    let after = names(port, 8);
    let took = after.iter().filter(|n| *n == "two").count();
    let mut say = |line: &str| {
        let a = ask(sock, &format!("{line}\n"));
        out2.push(format!("{line} => {}", a.trim_end()));
    };
    say("del server front/s2");
    say("del server front/s1");
    say("disable server front/s2");
    s2_is("0 1");
    // (The last exchanges through s2 may still be ending.)
    conns_settled(sock);
    say("del server front/s2");
    out2.push(format!("enabled, weight 3 of 4, took {took} of 8"));
    out2.extend(servers_state_lines(sock, "front"));
    out2.push(format!("deleted: {:?}", names(port, 3)));
    let a = ask(sock, &format!("add server front/s2 127.0.0.1:{two}\n"));
    out2.push(format!("again => {}", a.trim_end()));
    out2.extend(servers_state_lines(sock, "front"));
    out2
}

#[test]
fn add_server_and_del_server_as_haproxy() {
    let (one, two) = (Server::named("one"), Server::named("two"));
    let dir = tempdir("dynsrv");
    let (hs, ws) = (dir.join("h.sock"), dir.join("w.sock"));
    let (hp, hf, wp, wf) = (free_port(), free_port(), free_port(), free_port());
    let (hlog, wlog) = (Syslog::start(), Syslog::start());
    let Some(_h) = Haproxy::start(&cli_cfg(&hs, hp, hf, hlog.port(), one.port()), hp) else {
        panic!("haproxy is not installed: tests/run installs it");
    };
    let _w = Weir::start(&cli_cfg(&ws, wp, wf, wlog.port(), one.port()), wp);
    let theirs = add_and_delete(&hs, hp, two.port());
    let ours = add_and_delete(&ws, wp, two.port());
    for (o, t) in ours.iter().zip(&theirs) {
        assert_eq!(o, t, "weir's line, then haproxy's");
    }
    assert_eq!(ours.len(), theirs.len());
    let has = |what: &str| assert!(ours.iter().any(|l| l.contains(what)), "{what}: {ours:#?}");
    has("add server front/s2 => 'server' expects <name> and <addr>[:<port>] as arguments.");
    has("=> Backend must use a dynamic load balancing to support dynamic servers.");
    has("weight 3 => New server registered.");
    has("in maintenance: [\"one\", \"one\", \"one\", \"one\"]");
    has("del server front/s1 => This server cannot be removed at runtime due to other configuration elements pointing to it.");
    has("del server front/s2 => Only servers in maintenance mode can be deleted.");
    has("del server front/s2 => Server deleted.");
    has("deleted: [\"one\", \"one\", \"one\"]");
    has("took 6 of 8");
    has("again => New server registered.");
    for log in [&hlog, &wlog] {
        let l = log.wait_line("front/s2 is UP/READY", Duration::from_secs(5));
        assert!(
            l.ends_with("Server front/s2 is UP/READY (leaving forced maintenance)."),
            "{l}"
        );
    }
}

/// An agent answering the n-th connection with `replies[n]` (the last one
/// from then on), after reading what the proxy sends.
fn agent(replies: &'static [&'static str]) -> (Server, Arc<AtomicUsize>) {
    let n = Arc::new(AtomicUsize::new(0));
    let n2 = n.clone();
    let s = Server::start(move |mut c| {
        let i = n2.fetch_add(1, Ordering::Relaxed);
        let _ = c.set_read_timeout(Some(Duration::from_millis(200)));
        let mut b = [0u8; 64];
        let _ = c.read(&mut b);
        let r = replies[i.min(replies.len() - 1)];
        let _ = c.write_all(format!("{r}\n").as_bytes());
    });
    (s, n)
}

const REPLIES: &[&str] = &[
    "up",
    "75%,maxconn:30,maint,down",
    "ready",
    "up",
    "drain",
    "ready 100%",
    "fail #disk full",
    "up",
];

fn agent_cfg(
    sock: &std::path::Path,
    port: u16,
    syslog: u16,
    agent: u16,
    one: u16,
    closed: u16,
) -> String {
    format!(
        "global\n    stats socket {} level admin\n\
         defaults\n    mode tcp\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         listen front\n    bind 127.0.0.1:{port}\n    log 127.0.0.1:{syslog} local0\n    option log-health-checks\n\
         \x20   server t 127.0.0.1:{closed} check inter 100ms rise 1 fall 1\n\
         \x20   server f 127.0.0.1:{one} track t\n\
         \x20   server g 127.0.0.1:{one} weight 100 agent-check agent-port {agent} agent-send \"hello\\n\" agent-inter 100ms\n",
        sock.display()
    )
}

/// The log lines naming `front/<srv>`, in order, bare.
fn lines_of(log: &Syslog, srv: &str) -> Vec<String> {
    let needle = format!("front/{srv} ");
    log.lines
        .lock()
        .unwrap()
        .iter()
        .filter(|l| l.contains(&needle))
        .map(|l| bare(l))
        .collect()
}

#[test]
fn agent_checks_and_tracking_as_haproxy() {
    let one = Server::named("one");
    let (ha, hn) = agent(REPLIES);
    let (wa, wn) = agent(REPLIES);
    let dir = tempdir("agent");
    let (hs, ws) = (dir.join("h.sock"), dir.join("w.sock"));
    let (hp, wp) = (free_port(), free_port());
    let (hlog, wlog) = (Syslog::start(), Syslog::start());
    let closed = free_port();
    let hc = agent_cfg(&hs, hp, hlog.port(), ha.port(), one.port(), closed);
    let Some(_h) = Haproxy::start(&hc, hp) else {
        panic!("haproxy is not installed: tests/run installs it");
    };
    let wc = agent_cfg(&ws, wp, wlog.port(), wa.port(), one.port(), closed);
    let _w = Weir::start(&wc, wp);
    // Every reply given, and the last "up" told.
    for (log, n) in [(&hlog, &hn), (&wlog, &wn)] {
        wait_for("every agent reply", Duration::from_secs(10), || {
            let ups = lines_of(log, "g")
                .iter()
                .filter(|l| l.contains("via agent : up"))
                .count();
            (n.load(Ordering::Relaxed) > REPLIES.len() && ups >= 3).then_some(())
        });
    }
    let (theirs, ours) = (lines_of(&hlog, "g"), lines_of(&wlog, "g"));
    assert_eq!(ours, theirs, "weir's lines, then haproxy's");
    let has = |what: &str| assert!(ours.iter().any(|l| l.contains(what)), "{what}: {ours:#?}");
    has("Agent check for server front/g failed, reason: Layer7 wrong status, code: 0, info: \"via agent : down\"");
    has("Server front/g is DOWN/READY (leaving forced maintenance).");
    has("info: \"via agent : fail (disk full)\", check duration: -, status: 0/1 DOWN.");
    has("Server front/g enters drain state.");
    for who in ["t", "f"] {
        assert_eq!(lines_of(&wlog, who), lines_of(&hlog, who), "front/{who}");
    }
    assert!(lines_of(&wlog, "f")
        .iter()
        .any(|l| l.starts_with("Server front/f is DOWN via front/t. ")));
    // Maintenance is passed on to the tracker, and back.
    for sock in [&hs, &ws] {
        ask(sock, "disable server front/t\n");
        ask(sock, "enable server front/t\n");
    }
    for log in [&hlog, &wlog] {
        wait_for("the tracker down again", Duration::from_secs(5), || {
            let downs = lines_of(log, "f")
                .iter()
                .filter(|l| l.contains("is DOWN via front/t"))
                .count();
            (downs == 2).then_some(())
        });
    }
    assert_eq!(lines_of(&wlog, "f"), lines_of(&hlog, "f"));
    // (Each has its own agent: its port is left out.)
    let no_agent_port = |v: Vec<String>| -> Vec<String> {
        v.iter()
            .map(|l| l.rsplit_once(' ').map_or(l.as_str(), |x| x.0).to_string())
            .collect()
    };
    assert_eq!(
        no_agent_port(servers_state_lines(&ws, "front")),
        no_agent_port(servers_state_lines(&hs, "front"))
    );
}

/// A persistence cookie that names a deleted server names none: the
/// request is balanced, even with `option persist`.
#[test]
fn a_cookie_for_a_deleted_server_is_not_followed() {
    use crate::common::http::{Client, Origin};
    let (o1, o2) = (Origin::start("o1"), Origin::start("o2"));
    let dir = tempdir("dyncookie");
    let sock = dir.join("w.sock");
    let port = free_port();
    let cfg = format!(
        "global\n    stats socket {} level admin\n\
         defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         listen fe\n    bind 127.0.0.1:{port}\n    option persist\n    cookie SRV insert indirect\n\
         \x20   server s1 127.0.0.1:{} cookie a\n    server s2 127.0.0.1:{} cookie b\n",
        sock.display(),
        o1.port(),
        o2.port()
    );
    let _w = Weir::start(&cfg, port);
    let ask_with = |cookie: &str| {
        let mut c = Client::connect(port);
        c.send(
            format!(
                "GET / HTTP/1.1\r\nHost: t\r\nCookie: SRV={cookie}\r\nConnection: close\r\n\r\n"
            )
            .as_bytes(),
        );
        c.response("GET")
            .header("x-server")
            .unwrap_or("-")
            .to_string()
    };
    assert_eq!(ask_with("b"), "o2");
    assert_eq!(ask(&sock, "disable server fe/s2\n").trim(), "");
    // The last exchange's server connection may still be closing when the
    // client has its answer: `del server` refuses until it is gone.
    wait_for("s2 deleted", Duration::from_secs(5), || {
        let a = ask(&sock, "del server fe/s2\n");
        match a.trim() {
            "Server deleted." => Some(()),
            "Server still has connections attached to it, cannot remove it." => None,
            other => panic!("{other}"),
        }
    });
    for _ in 0..4 {
        assert_eq!(ask_with("b"), "o1", "never the deleted server");
    }
}
