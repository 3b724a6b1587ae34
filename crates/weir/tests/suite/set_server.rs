//! `set server <bk>/<srv> check-addr|check-port|agent-addr|agent-port|
//! agent-send|agent|health` beside haproxy: the answers, the "changed from
//! CLI" state lines, and `show servers state` after them.

use crate::common::*;
use std::io::Read;
use std::time::Duration;

/// The commands, in order, and the state line each brings (if any).
const STEPS: &[(&str, Option<&str>)] = &[
    ("set server px/s check-addr 127.0.0.2", None),
    ("set server px/s check-addr bad", None),
    ("set server px/s check-port x", None),
    ("set server px/n check-port 82", None),
    ("set server px/s agent-addr nosuch.invalid", None),
    ("set server px/n agent-send hello", None),
    ("set server px/n agent-addr 127.0.0.1", None),
    ("set server px/s agent x", None),
    ("set server px/s health x", None),
    (
        "set server px/s health down",
        Some("px/s is DOWN, changed from CLI"),
    ),
    (
        "set server px/s health stopping",
        Some("px/s is stopping, changed from CLI"),
    ),
    (
        "set server px/s health up",
        Some("px/s is UP, changed from CLI"),
    ),
    (
        "set server px/n health down",
        Some("px/n is DOWN, changed from CLI"),
    ),
    (
        "set server px/n health up",
        Some("px/n is UP, changed from CLI"),
    ),
    (
        "set server px/s agent down",
        Some("px/s is DOWN, changed from CLI"),
    ),
    (
        "set server px/s agent up",
        Some("px/s is UP, changed from CLI"),
    ),
    (
        "set server px/n health stopping",
        Some("px/n is stopping, changed from CLI"),
    ),
    ("set server px/n agent down", None),
];

#[test]
fn set_server_checks_and_health_as_haproxy() {
    Haproxy::bin().expect("haproxy is not installed: tests/run installs it");
    // A check target; an agent that never answers (whenever its turn
    // comes, it changes nothing: the states are the commands').
    let target = Server::start(|_| {});
    let agent = Server::start(|mut c| {
        let mut b = [0u8; 64];
        while matches!(c.read(&mut b), Ok(n) if n > 0) {}
    });
    let run = |start: Start<'_>| -> (Vec<String>, Vec<String>) {
        let log = Syslog::start();
        let port = free_port();
        let sock = tempdir("set-server").join(format!("s{port}.sock"));
        let cfg = format!(
            "global\n  stats socket {} level admin\ndefaults\n  mode tcp\n  timeout connect 1s\n  timeout client 5s\n  timeout server 5s\n\
             listen px\n  bind 127.0.0.1:{port}\n  log 127.0.0.1:{} local0\n\
             \x20 server s 127.0.0.1:{} check inter 60s agent-check agent-port {} agent-inter 60s\n\
             \x20 server n 127.0.0.1:{}\n",
            sock.display(),
            log.port(),
            target.port(),
            agent.port(),
            target.port()
        );
        let _p = start(&cfg, port);
        let mut answers = Vec::new();
        for (cmd, line) in STEPS {
            answers.push(format!("{cmd} -> {:?}", ask(&sock, &format!("{cmd}\n"))));
            if let Some(l) = line {
                log.wait_line(l, Duration::from_secs(5));
            }
        }
        for cmd in [
            "set server px/s agent-addr 127.0.0.3 port 99",
            "set server px/s agent-send hello",
            "set server px/s check-port 82",
        ] {
            answers.push(format!("{cmd} -> {:?}", ask(&sock, &format!("{cmd}\n"))));
        }
        let state = servers_state_lines(&sock, "px");
        let lines: Vec<String> = log
            .lines
            .lock()
            .unwrap()
            .iter()
            .filter(|l| l.contains("Server px/"))
            .map(|l| {
                l.split_once("]: ")
                    .map_or(l.as_str(), |(_, t)| t)
                    .to_string()
            })
            .collect();
        answers.extend(state);
        (answers, lines)
    };
    let theirs = run(&|cfg, port| Box::new(Haproxy::start(cfg, port).unwrap()));
    let mine = run(&|cfg, port| Box::new(Weir::start(cfg, port)));
    assert_eq!(mine.0, theirs.0, "answers and show servers state");
    assert_eq!(mine.1, theirs.1, "state lines");
    assert!(
        theirs.0.iter().any(|a| a.contains("invalid addr 'bad'")),
        "{:#?}",
        theirs.0
    );
}

/// `check-port` and `check-addr … port` move the checks at once: to a
/// closed port the server goes down, back to an open one it comes up
/// (haproxy and weir alike).
#[test]
fn set_server_check_port_moves_the_checks() {
    Haproxy::bin().expect("haproxy is not installed: tests/run installs it");
    let target = Server::start(|_| {});
    let closed = free_port();
    let run = |start: Start<'_>| {
        let log = Syslog::start();
        let port = free_port();
        let sock = tempdir("set-check").join(format!("s{port}.sock"));
        let cfg = format!(
            "global\n  stats socket {} level admin\ndefaults\n  mode tcp\n  timeout connect 1s\n  timeout client 5s\n  timeout server 5s\n\
             listen px\n  bind 127.0.0.1:{port}\n  log 127.0.0.1:{} local0\n  server s 127.0.0.1:{} check inter 100ms rise 1 fall 1\n",
            sock.display(),
            log.port(),
            target.port()
        );
        let _p = start(&cfg, port);
        assert_eq!(
            ask(&sock, &format!("set server px/s check-port {closed}\n")),
            "\n"
        );
        log.wait_line("px/s is DOWN", Duration::from_secs(5));
        let back = format!(
            "set server px/s check-addr 127.0.0.1 port {}\n",
            target.port()
        );
        assert_eq!(ask(&sock, &back), "\n");
        log.wait_line("px/s is UP", Duration::from_secs(5));
    };
    beside_haproxy(run);
}
