//! The lines a server's administrative state changes log (`disable
//! server`, `set server … state`), beside haproxy 2.6.

use crate::common::*;
use std::time::Duration;

/// The lines a change of a server's administrative state logs, beside
/// haproxy: maintenance in and out, drain in and out, a backup server,
/// and a backend left without servers.
#[test]
fn state_changes_log_as_haproxy() {
    let run = |start: &dyn Fn(&str, u16) -> Box<dyn std::any::Any>, sock: &std::path::Path| {
        let log = Syslog::start();
        let port = free_port();
        let cfg = format!(
            "global\n    stats socket {} level admin\n\
             defaults\n    mode http\n    timeout connect 1s\n    timeout client 1s\n    timeout server 1s\n\
             frontend f\n    bind 127.0.0.1:{port}\n    default_backend b\n\
             backend b\n    log 127.0.0.1:{} daemon\n    server s1 127.0.0.1:9\n    server s2 127.0.0.1:9 backup\n",
            sock.display(),
            log.port()
        );
        let _p = start(&cfg, port);
        // Each change's last line is awaited before the next is asked:
        // haproxy applies a change after answering the command.
        for (c, last) in [
            ("disable server b/s1", "s1 is going DOWN"),
            ("disable server b/s2", "has no server available"),
            ("enable server b/s1", "s1 is UP/READY"),
            ("set server b/s2 state drain", "s2 remains in forced drain"),
            ("set server b/s1 state drain", "s1 enters drain"),
            ("set server b/s1 state ready", "leaving forced drain"),
        ] {
            ask(sock, &format!("{c}\n"));
            log.wait_line(last, Duration::from_secs(5));
        }
        let lines = log.lines.lock().unwrap().clone();
        lines
            .iter()
            .filter_map(|l| {
                let (pri, rest) = l.split_once('>')?;
                Some(format!("{pri}> {}", rest.split_once("]: ")?.1))
            })
            .filter(|l| !l.contains(" started."))
            .collect::<Vec<_>>()
    };
    let dir = tempdir("state-logs");
    Haproxy::bin().expect("haproxy is not installed: tests/run installs it");
    let theirs = run(
        &|cfg, port| Box::new(Haproxy::start(cfg, port).unwrap()),
        &dir.join("h.sock"),
    );
    let mine = run(
        &|cfg, port| Box::new(Weir::start(cfg, port)),
        &dir.join("w.sock"),
    );
    assert_eq!(mine, theirs);
    assert_eq!(theirs.len(), 9, "{theirs:?}");
}
