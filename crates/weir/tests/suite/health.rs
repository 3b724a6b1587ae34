//! Layer-4 and HTTP health checks: down within fall × inter, traffic moves
//! without client errors, back up, shutdown-sessions, httpchk statuses.

use crate::common::*;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[test]
fn stopped_server_is_marked_down_within_fall_times_inter_without_client_errors() {
    let mut a = Server::named("a");
    let b = Server::named("b");
    let a_port = a.port();
    let port = free_port();
    let cfg = format!(
        "global\n  nbthread 2\ndefaults\n  mode tcp\n  retries 3\n  option redispatch 1\n  timeout connect 200ms\n  timeout client 5s\n  timeout server 5s\n\
         listen px\n  bind 127.0.0.1:{port}\n  server a 127.0.0.1:{a_port} check inter 200ms fall 2 rise 2\n  server b 127.0.0.1:{} check inter 200ms fall 2 rise 2\n",
        b.port()
    );
    let w = Weir::start(&cfg, port);
    // Clients keep connecting the whole time; none may fail.
    let stop = Arc::new(AtomicBool::new(false));
    let errors = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(AtomicUsize::new(0));
    let client = {
        let (stop, errors, done) = (stop.clone(), errors.clone(), done.clone());
        std::thread::spawn(move || {
            let end = Instant::now() + Duration::from_secs(20);
            while !stop.load(Ordering::Relaxed) && Instant::now() < end {
                match fetch(port) {
                    Ok(s) if s == "a" || s == "b" => {}
                    _ => {
                        errors.fetch_add(1, Ordering::Relaxed);
                    }
                }
                done.fetch_add(1, Ordering::Relaxed);
            }
        })
    };
    wait_for("some traffic", Duration::from_secs(5), || {
        (done.load(Ordering::Relaxed) > 20).then_some(())
    });
    let stopped = Instant::now();
    a.stop();
    w.wait_output("Server px/a is DOWN", Duration::from_secs(3));
    let took = stopped.elapsed();
    assert!(
        took <= Duration::from_millis(2 * 200 + 250),
        "marked down after {took:?}"
    );
    let out = w.stderr();
    assert!(
        out.contains(
            "Server px/a is DOWN, reason: Layer4 connection problem, info: \"Connection refused\""
        ),
        "{out}"
    );
    assert!(out.contains("1 active and 0 backup servers left."), "{out}");
    let after = done.load(Ordering::Relaxed);
    wait_for("traffic after the failover", Duration::from_secs(5), || {
        (done.load(Ordering::Relaxed) > after + 20).then_some(())
    });
    stop.store(true, Ordering::Relaxed);
    client.join().unwrap();
    assert_eq!(errors.load(Ordering::Relaxed), 0, "clients saw errors");
    for _ in 0..10 {
        assert_eq!(fetch(port).unwrap(), "b");
    }
    // Back up after `rise` good checks.
    let l = TcpListener::bind(("127.0.0.1", a_port)).unwrap();
    let _a2 = Server::start_on(l, |mut c| {
        let _ = c.write_all(b"a");
    });
    w.wait_output("Server px/a is UP", Duration::from_secs(3));
    let seen: Vec<String> = (0..4).map(|_| fetch(port).unwrap()).collect();
    assert!(seen.iter().any(|s| s == "a"), "{seen:?}");
}

#[test]
fn all_servers_down_logs_no_server_available() {
    let port = free_port();
    let dead = free_port();
    let cfg = format!(
        "defaults\n  mode tcp\n  timeout connect 200ms\n  timeout client 5s\n  timeout server 5s\n\
         listen px\n  bind 127.0.0.1:{port}\n  server a 127.0.0.1:{dead} check inter 100ms\n"
    );
    let w = Weir::start(&cfg, port);
    // (haproxy calls a listen section a proxy there.)
    w.wait_output("proxy px has no server available!", Duration::from_secs(3));
    assert_eq!(fetch(port).unwrap(), "", "closed at once");
    let cfg = format!(
        "defaults
  mode tcp
  timeout connect 200ms
  timeout client 5s
  timeout server 5s
         frontend fe
  bind 127.0.0.1:{port}
  default_backend be
         backend be
  server a 127.0.0.1:{dead} check inter 100ms
"
    );
    let port2 = free_port();
    let w2 = Weir::start(
        &cfg.replace(&format!(":{port}"), &format!(":{port2}")),
        port2,
    );
    w2.wait_output(
        "backend be has no server available!",
        Duration::from_secs(3),
    );
}

#[test]
fn on_marked_down_shutdown_sessions_kills_established_sessions() {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let sport = l.local_addr().unwrap().port();
    let mut srv = Server::start_on(l, |mut c| {
        let _ = c.write_all(b"hi");
        let mut b = [0u8; 16];
        let _ = c.read(&mut b);
    });
    let port = free_port();
    let cfg = format!(
        "defaults\n  mode tcp\n  timeout connect 200ms\n  timeout client 30s\n  timeout server 30s\n\
         listen px\n  bind 127.0.0.1:{port}\n  server a 127.0.0.1:{sport} check inter 100ms fall 1 on-marked-down shutdown-sessions\n"
    );
    let w = Weir::start(&cfg, port);
    let mut c = client(port);
    let mut b = [0u8; 2];
    c.read_exact(&mut b).unwrap();
    srv.stop(); // the listener goes away; the established connection stays
    w.wait_output("Server px/a is DOWN", Duration::from_secs(3));
    let t = Instant::now();
    let r = c.read(&mut b);
    assert!(matches!(r, Ok(0) | Err(_)), "session killed: {r:?}");
    assert!(t.elapsed() < Duration::from_secs(2));
}

/// `on-marked-up shutdown-backup-sessions`: when the primary server comes
/// back, the sessions on the backup server are closed (beside haproxy).
#[test]
fn on_marked_up_shutdown_backup_sessions_as_haproxy() {
    let run = |start: Start<'_>| {
        let backup = Server::start(|mut c| {
            let _ = c.write_all(b"bk");
            let mut b = [0u8; 16];
            let _ = c.read(&mut b);
        });
        let primary = TcpListener::bind("127.0.0.1:0").unwrap();
        let pport = primary.local_addr().unwrap().port();
        drop(primary);
        let log = Syslog::start();
        let port = free_port();
        let cfg = format!(
            "defaults\n  mode tcp\n  timeout connect 200ms\n  timeout client 30s\n  timeout server 30s\n\
             listen px\n  bind 127.0.0.1:{port}\n  log 127.0.0.1:{} local0\n\
             \x20 server a 127.0.0.1:{pport} check inter 100ms rise 1 fall 1 on-marked-up shutdown-backup-sessions\n\
             \x20 server b 127.0.0.1:{} backup\n",
            log.port(),
            backup.port()
        );
        let _p = start(&cfg, port);
        log.wait_line("px/a is DOWN", Duration::from_secs(5));
        let mut c = client(port);
        let mut b = [0u8; 2];
        c.read_exact(&mut b).unwrap();
        assert_eq!(&b, b"bk");
        // The primary comes back: the session on the backup is closed.
        let l = TcpListener::bind(("127.0.0.1", pport)).unwrap();
        let _a = Server::start_on(l, |mut c| {
            let _ = c.write_all(b"pr");
        });
        log.wait_line("px/a is UP", Duration::from_secs(5));
        c.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
        let r = c.read(&mut b);
        let closed = match &r {
            Ok(n) => *n == 0,
            Err(e) => e.kind() == std::io::ErrorKind::ConnectionReset,
        };
        assert!(closed, "the session on the backup is closed: {r:?}");
    };
    Haproxy::bin().expect("haproxy is not installed: tests/run installs it");
    beside_haproxy(run);
}

fn http_server(status: &'static str) -> Server {
    Server::start(move |mut c| {
        let mut b = [0u8; 1024];
        let n = c.read(&mut b).unwrap_or(0);
        if n > 0 && b.starts_with(b"GET /health HTTP/1.1") {
            let _ =
                c.write_all(format!("HTTP/1.1 {status}\r\nContent-Length: 0\r\n\r\n").as_bytes());
        } else {
            let _ = c.write_all(b"HTTP/1.1 400 Bad Request\r\n\r\n");
        }
    })
}

#[test]
fn httpchk_judges_the_status_line() {
    let (ok, bad) = (
        http_server("200 OK"),
        http_server("503 Service Unavailable"),
    );
    let port = free_port();
    let cfg = format!(
        "defaults\n  mode tcp\n  timeout connect 200ms\n  timeout client 5s\n  timeout server 5s\n\
         listen px\n  bind 127.0.0.1:{port}\n  option httpchk GET /health HTTP/1.1\n  server ok 127.0.0.1:{} check inter 100ms\n  server bad 127.0.0.1:{} check inter 100ms\n",
        ok.port(), bad.port()
    );
    let w = Weir::start(&cfg, port);
    let out = w.wait_output("Server px/bad is DOWN", Duration::from_secs(3));
    assert!(
        out.contains("reason: Layer7 wrong status, code: 503, info: \"Service Unavailable\""),
        "{out}"
    );
    assert!(!out.contains("Server px/ok is DOWN"), "{out}");
}

#[test]
fn slowstart_ramps_a_returning_server_up() {
    let mut a = Server::named("a");
    let b = Server::named("b");
    let a_port = a.port();
    let port = free_port();
    let sock = tempdir("slowstart").join("s.sock");
    let cfg = format!(
        "global\n  stats socket {}\ndefaults\n  mode tcp\n  timeout connect 200ms\n  timeout client 5s\n  timeout server 5s\n\
         listen px\n  bind 127.0.0.1:{port}\n  server a 127.0.0.1:{a_port} weight 20 check inter 100ms rise 1 fall 1 slowstart 3s\n  server b 127.0.0.1:{} weight 20\n",
        sock.display(),
        b.port()
    );
    // `show stat`'s throttle column (the stats page's Thrtle): the share
    // of its weight server a has while it ramps up; empty otherwise.
    let throttle = || {
        show_stat(&sock)
            .into_iter()
            .find(|r| r["svname"] == "a")
            .map(|r| r["throttle"].clone())
            .unwrap_or_default()
    };
    let w = Weir::start(&cfg, port);
    a.stop();
    w.wait_output("Server px/a is DOWN", Duration::from_secs(3));
    let l = TcpListener::bind(("127.0.0.1", a_port)).unwrap();
    let _a2 = Server::start_on(l, |mut c| {
        let _ = c.write_all(b"a");
    });
    assert_eq!(throttle(), "", "a is down, not ramping");
    w.wait_output("Server px/a is UP", Duration::from_secs(3));
    let ramp: u32 = throttle()
        .parse()
        .expect("a ramps up: throttle is a percentage");
    assert!(ramp < 50, "a just came back: throttle {ramp} %");
    let early = (0..40).filter(|_| fetch(port).unwrap() == "a").count();
    assert!(
        early <= 12,
        "a just came back: it gets a small share ({early}/40)"
    );
    wait_for("the ramp to finish", Duration::from_secs(10), || {
        let late = (0..40).filter(|_| fetch(port).unwrap() == "a").count();
        (late >= 17).then_some(late)
    });
    wait_for("the throttle to clear", Duration::from_secs(5), || {
        throttle().is_empty().then_some(())
    });
}

/// Answers checks with `body` after checking what `http-check send` adds
/// (header names in lower case, as haproxy 2.6 sends them).
fn body_server(body: &'static str) -> Server {
    Server::start(move |mut c| {
        let mut b = [0u8; 2048];
        let n = c.read(&mut b).unwrap_or(0);
        let req = String::from_utf8_lossy(&b[..n]).into_owned();
        let ok = req.starts_with("POST /status HTTP/1.1\r\n")
            && req.contains("host: health\r\n")
            && req.ends_with("\r\n\r\nping");
        let status = if ok { "200 OK" } else { "400 Bad Request" };
        let _ = c.write_all(
            format!(
                "HTTP/1.1 {status}\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            )
            .as_bytes(),
        );
    })
}

#[test]
fn http_check_send_and_expect() {
    let (good, bad) = (body_server("state: ready"), body_server("state: draining"));
    let port = free_port();
    let cfg = format!(
        "defaults\n  mode http\n  timeout connect 200ms\n  timeout client 5s\n  timeout server 5s\n\
         listen px\n  bind 127.0.0.1:{port}\n  option httpchk\n  http-check send meth POST uri /status ver HTTP/1.1 hdr Host health body ping\n  http-check expect rstring state:\\ ready\n\
         \x20 server good 127.0.0.1:{} check inter 100ms\n  server bad 127.0.0.1:{} check inter 100ms\n",
        good.port(),
        bad.port()
    );
    let w = Weir::start(&cfg, port);
    let out = w.wait_output("Server px/bad is DOWN", Duration::from_secs(3));
    assert!(
        out.contains("reason: Layer7 invalid response, info: \"HTTP content check did not match\""),
        "{out}"
    );
    assert!(!out.contains("Server px/good is DOWN"), "{out}");
    // A negated status rule.
    let port2 = free_port();
    let cfg2 = format!(
        "defaults\n  mode http\n  timeout connect 200ms\n  timeout client 5s\n  timeout server 5s\n\
         listen px\n  bind 127.0.0.1:{port2}\n  option httpchk GET /\n  http-check expect ! status 400-499\n  server s 127.0.0.1:{} check inter 100ms\n",
        good.port()
    );
    let w2 = Weir::start(&cfg2, port2);
    let out = w2.wait_output("Server px/s is DOWN", Duration::from_secs(3));
    assert!(out.contains("Layer7 wrong status, code: 400"), "{out}");
}

/// `option log-health-checks` beside haproxy: a line for each check whose
/// outcome or health changed (`succeeded … status: 2/2 UP`, `failed …
/// 1/2 UP`, `… 0/2 DOWN`), before the server's own line, which then gives
/// no reason.
#[test]
fn health_check_lines_as_haproxy() {
    let run = |start: Start<'_>| -> Vec<String> {
        let log = Syslog::start();
        let srv = Server::start(|mut c| {
            use std::io::{Read, Write};
            let mut b = [0u8; 1024];
            let _ = c.read(&mut b);
            let _ = c.write_all(b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n");
        });
        let port = free_port();
        let cfg = format!(
            "defaults\n    mode http\n    timeout connect 1s\n    timeout client 1s\n    timeout server 1s\n    option log-health-checks\n\
             frontend f\n    bind 127.0.0.1:{port}\n    default_backend b\n\
             backend b\n    log 127.0.0.1:{} local0\n    option httpchk\n    server srv 127.0.0.1:{} check inter 200ms rise 2 fall 2\n",
            log.port(),
            srv.port()
        );
        let _p = start(&cfg, port);
        log.wait_line("succeeded", Duration::from_secs(10));
        drop(srv);
        log.wait_line("has no server available", Duration::from_secs(10));
        let lines = log.lines.lock().unwrap().clone();
        lines
            .iter()
            .filter(|l| l.contains("b/srv") || l.contains("no server"))
            .map(|l| {
                // Dates, process ids and durations differ by nature.
                let text = l.split_once("]: ").map_or(l.as_str(), |(_, t)| t);
                let pri = l.split('>').next().unwrap_or("");
                let text: Vec<String> = text
                    .split(' ')
                    .map(|w| match w.strip_suffix("ms,") {
                        Some(n) if n.bytes().all(|b| b.is_ascii_digit()) => "Nms,".into(),
                        _ => w.to_string(),
                    })
                    .collect();
                format!("{pri}> {}", text.join(" "))
            })
            .collect()
    };
    Haproxy::bin().expect("haproxy is not installed: tests/run installs it");
    let theirs = beside_haproxy(run);
    assert!(
        theirs.iter().any(|l| l.ends_with("status: 0/2 DOWN.")),
        "{theirs:?}"
    );
}

/// A backup server's state lines, and "Running on backup", beside haproxy.
#[test]
fn backup_server_lines_as_haproxy() {
    let run = |start: Start<'_>| -> Vec<String> {
        let log = Syslog::start();
        let port = free_port();
        let cfg = format!(
            "defaults\n    mode http\n    timeout connect 1s\n    timeout client 1s\n    timeout server 1s\n\
             frontend f\n    bind 127.0.0.1:{port}\n    default_backend b\n\
             backend b\n    log 127.0.0.1:{} daemon\n    server s1 127.0.0.1:1 check inter 200ms\n    server s2 127.0.0.1:1 backup check inter 200ms\n",
            log.port()
        );
        let _p = start(&cfg, port);
        log.wait_line("has no server available", Duration::from_secs(10));
        let lines = log.lines.lock().unwrap().clone();
        let mut out: Vec<String> = lines
            .iter()
            .filter_map(|l| l.split_once("]: ").map(|(_, t)| t.to_string()))
            .filter(|l| !l.contains(" started."))
            // (Durations differ by nature.)
            .map(|l| {
                l.split(' ')
                    .map(|w| match w.strip_suffix("ms.") {
                        Some(n) if n.bytes().all(|b| b.is_ascii_digit()) => "Nms.",
                        _ => w,
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        out.sort();
        out
    };
    Haproxy::bin().expect("haproxy is not installed: tests/run installs it");
    let theirs = beside_haproxy(run);
    assert!(
        theirs.iter().any(|l| l.contains("Running on backup.")),
        "{theirs:?}"
    );
}

/// An agent that answers `reply` to every connection.
fn agent_answering(reply: &'static str) -> Server {
    Server::start(move |mut c| {
        let _ = c.write_all(reply.as_bytes());
    })
}

#[test]
fn agent_columns_of_show_stat_as_haproxy() {
    let dir = tempdir("agent-view");
    let seen = beside_haproxy(|start| {
        let target = Server::start(|_| {});
        let up = agent_answering("up 75%\n");
        let drain = agent_answering("drain 50%\n");
        let gone = free_port();
        let port = free_port();
        let sock = dir.join(format!("s{port}"));
        let server = |name: &str, agent: u16| {
            format!(
                "    server {name} 127.0.0.1:{} check inter 300ms weight 8 agent-check agent-port {agent} agent-inter 300ms\n",
                target.port()
            )
        };
        let cfg = format!(
            "global\n    stats socket {} level admin\ndefaults\n    mode tcp\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
             listen l\n    bind 127.0.0.1:{port}\n{}{}{}",
            sock.display(),
            server("up", up.port()),
            server("drain", drain.port()),
            server("gone", gone)
        );
        let _p = start(&cfg, port);
        const COLS: [&str; 10] = [
            "agent_status",
            "agent_code",
            "agent_desc",
            "last_agt",
            "agent_rise",
            "agent_fall",
            "agent_health",
            "check_status",
            "status",
            "weight",
        ];
        wait_for("every agent's answer", Duration::from_secs(10), || {
            let rows = show_stat(&sock);
            let servers: Vec<Vec<String>> = rows
                .iter()
                .filter(|r| ["up", "drain", "gone"].contains(&r["svname"].as_str()))
                .map(|r| {
                    COLS.iter()
                        .map(|c| r.get(*c).cloned().unwrap_or_default())
                        .collect()
                })
                .collect();
            // haproxy marks a check in progress with `* ` (`* INI` before
            // the first answer): only a snapshot between checks compares.
            let done = |v: &str| !v.is_empty() && !v.starts_with("* ") && v != "INI";
            let settled =
                servers.len() == 3 && servers.iter().all(|s| done(&s[0]) && s[7] == "L4OK");
            settled.then_some(servers)
        })
    });
    assert_eq!(
        seen[0][..4],
        ["L7OK", "0", "Layer7 check passed", "via agent : up"]
    );
    assert_eq!(seen[1][..3], ["CHECKED", "", "No status change"]);
    // Drained by its agent at 50 % of weight 8: it shows the weight kept.
    assert_eq!(seen[1][8..], ["DRAIN (agent)", "4"]);
    assert_eq!(
        seen[2][..4],
        [
            "L4CON",
            "",
            "Layer4 connection problem",
            "Connection refused"
        ]
    );
}
