//! Health from the traffic (`observe layer7`, `error-limit`, `on-error`)
//! beside haproxy 2.6: a server whose health check passes but whose
//! answers to clients are 500s is judged by those answers.

use crate::common::*;
use std::io::{BufRead, BufReader, Write};
use std::time::Duration;

/// Answers `GET /health` with 200 and anything else with 500, one
/// request per connection.
fn sick_origin() -> Server {
    Server::start(|c| {
        let mut w = c.try_clone().unwrap();
        let mut r = BufReader::new(c);
        let mut line = String::new();
        if r.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        loop {
            let mut h = String::new();
            if r.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
                break;
            }
        }
        let status = if line.starts_with("GET /health ") {
            "200 OK"
        } else {
            "500 Internal Server Error"
        };
        let _ = w.write_all(
            format!("HTTP/1.1 {status}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                .as_bytes(),
        );
    })
}

fn cfg(port: u16, syslog: u16, origin: u16, action: &str) -> String {
    format!(
        "defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n    option log-health-checks\n\
         listen fe\n    bind 127.0.0.1:{port}\n    log 127.0.0.1:{syslog} local0\n    option httpchk GET /health\n\
         \x20   server s 127.0.0.1:{origin} check inter 10s rise 1 fall 2 observe layer7 error-limit 3 on-error {action}\n"
    )
}

/// The check and state lines of server fe/s, without headers, durations
/// and the count of sessions active (haproxy acts within the session that
/// saw the last error; weir's check does, just after it may have ended).
fn lines(log: &Syslog) -> Vec<String> {
    log.lines
        .lock()
        .unwrap()
        .iter()
        .filter(|l| l.contains("fe/s "))
        .map(|l| {
            let l = l.split_once("]: ").map_or(l.as_str(), |x| x.1);
            let l = match l.split_once("check duration: ") {
                Some((a, b)) => format!(
                    "{a}check duration: -{}",
                    b.split_once("ms").map_or(b, |x| x.1)
                ),
                None => l.to_string(),
            };
            match l.split_once(" sessions active") {
                Some((a, b)) => format!(
                    "{} N sessions active{b}",
                    a.rsplit_once(' ').map_or(a, |x| x.0)
                ),
                None => l,
            }
        })
        .collect()
}

#[test]
fn consecutive_errors_act_on_the_server_as_haproxy() {
    let origin = sick_origin();
    for (action, wanted) in [
        ("mark-down", "Server fe/s is DOWN"),
        (
            "fail-check",
            "Health check for server fe/s failed, reason: Health analyze",
        ),
    ] {
        let (hp, wp) = (free_port(), free_port());
        let (hlog, wlog) = (Syslog::start(), Syslog::start());
        let Some(_h) = Haproxy::start(&cfg(hp, hlog.port(), origin.port(), action), hp) else {
            panic!("haproxy is not installed: tests/run installs it");
        };
        let _w = Weir::start(&cfg(wp, wlog.port(), origin.port(), action), wp);
        for (port, log) in [(hp, &hlog), (wp, &wlog)] {
            // The first check passes at start.
            log.wait_line(
                "Health check for server fe/s succeeded",
                Duration::from_secs(5),
            );
            for _ in 0..3 {
                let r = exchange_once(
                    port,
                    "GET /x HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
                );
                assert!(r.is_some_and(|r| r.0 == "500"), "{action}");
            }
            log.wait_line(wanted, Duration::from_secs(5));
        }
        assert_eq!(
            lines(&wlog),
            lines(&hlog),
            "{action}: weir's, then haproxy's"
        );
    }
}
