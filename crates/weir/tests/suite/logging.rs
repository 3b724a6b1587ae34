//! Logs: `option tcplog` lines received over UDP syslog and compared field
//! by field; `log-format`; `dontlognull`.

use crate::common::*;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

#[test]
fn tcplog_over_udp_field_by_field() {
    let syslog = Syslog::start();
    let srv = Server::start(|mut c| {
        let mut b = [0u8; 5];
        c.read_exact(&mut b).unwrap();
        c.write_all(b"0123456789").unwrap();
    });
    let port = free_port();
    let cfg = format!(
        "global\n  log 127.0.0.1:{} local3 info\n  log-tag weirtest\ndefaults\n  mode tcp\n  log global\n  option tcplog\n  timeout connect 1s\n  timeout client 5s\n  timeout server 5s\n\
         frontend fe\n  bind 127.0.0.1:{port}\n  default_backend be\nbackend be\n  server s1 127.0.0.1:{}\n",
        syslog.port(),
        srv.port()
    );
    let _w = Weir::start(&cfg, port);
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let cport = c.local_addr().unwrap().port();
    c.write_all(b"hello").unwrap();
    let mut s = String::new();
    c.read_to_string(&mut s).unwrap();
    assert_eq!(s, "0123456789");
    drop(c);
    let line = syslog.wait_line(" fe be/s1 ", Duration::from_secs(5));
    // <PRI>Mmm dd hh:mm:ss weirtest[pid]: ci:cp [date] ft b/s Tw/Tc/Tt B ts ac/fc/bc/sc/rc sq/bq
    // PRI = facility local3 (19) * 8 + severity info (6)
    assert!(line.starts_with(&format!("<{}>", 19 * 8 + 6)), "{line}");
    let (head, msg) = line.split_once("]: ").unwrap();
    assert!(head.contains(" weirtest["), "{head}");
    let f: Vec<&str> = msg.split(' ').collect();
    assert_eq!(f[0], format!("127.0.0.1:{cport}"));
    assert!(
        f[1].starts_with('[')
            && f[1].ends_with(']')
            && f[1].len() == "[22/Nov/2026:00:41:13.327]".len(),
        "{}",
        f[1]
    );
    assert_eq!(f[2], "fe");
    assert_eq!(f[3], "be/s1");
    let t: Vec<i64> = f[4].split('/').map(|x| x.parse().unwrap()).collect();
    assert_eq!(t.len(), 3);
    assert!(t[0] >= 0 && t[1] >= 0 && t[2] >= t[1], "{t:?}");
    assert_eq!(f[5], "10", "bytes from server to client");
    assert_eq!(f[6], "--");
    assert_eq!(f[7].split('/').count(), 5);
    assert!(f[7].ends_with("/0"), "no retries: {}", f[7]);
    assert_eq!(f[8], "0/0");
    assert_eq!(f.len(), 9, "{msg}");
}

#[test]
fn log_format_and_dontlognull() {
    let syslog = Syslog::start();
    let srv = Server::echo();
    let port = free_port();
    let cfg = format!(
        "global\n  log 127.0.0.1:{} len 200 format raw local0\ndefaults\n  mode tcp\n  log global\n  option dontlognull\n  timeout connect 1s\n  timeout client 5s\n  timeout server 5s\n\
         listen px\n  bind 127.0.0.1:{port}\n  log-format \"%{{+Q}}f %b/%s up=%U down=%B %ts %%\"\n  server s1 127.0.0.1:{}\n",
        syslog.port(),
        srv.port()
    );
    let _w = Weir::start(&cfg, port);
    // An empty connection is not logged (dontlognull)...
    drop(TcpStream::connect(("127.0.0.1", port)).unwrap());
    // ...a real one is.
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.write_all(b"abc").unwrap();
    c.shutdown(std::net::Shutdown::Write).unwrap();
    let mut s = String::new();
    c.read_to_string(&mut s).unwrap();
    let line = syslog.wait_line("up=", Duration::from_secs(5));
    assert_eq!(line, "\"px\" px/s1 up=3 down=3 -- %");
    let lines = syslog.lines.lock().unwrap().clone();
    assert_eq!(
        lines.iter().filter(|l| l.contains("up=")).count(),
        1,
        "{lines:?}"
    );
}

#[test]
fn rfc5424_with_hostname_and_short_formats() {
    let syslog = Syslog::start();
    let srv = Server::named("x");
    let port = free_port();
    let cfg = format!(
        "global\n  log-send-hostname edge1\n  log-tag wtag\n  log 127.0.0.1:{sp} format rfc5424 local2\n  log 127.0.0.1:{sp} format short local2\n\
         defaults\n  mode tcp\n  log global\n  option tcplog\n  timeout connect 1s\n  timeout client 5s\n  timeout server 5s\n\
         listen px\n  bind 127.0.0.1:{port}\n  server s1 127.0.0.1:{}\n",
        srv.port(),
        sp = syslog.port()
    );
    let _w = Weir::start(&cfg, port);
    assert_eq!(fetch(port).unwrap(), "x");
    let pri = 18 * 8 + 6;
    let long = syslog.wait_line(&format!("<{pri}>1 "), Duration::from_secs(5));
    let f: Vec<&str> = long.splitn(8, ' ').collect();
    assert_eq!(f[0], format!("<{pri}>1"));
    assert!(
        f[1].len() >= 26 && f[1].contains('T'),
        "RFC 3339 timestamp: {}",
        f[1]
    );
    assert_eq!(
        (f[2], f[3], f[5], f[6]),
        ("edge1", "wtag", "-", "-"),
        "{long}"
    );
    assert!(f[7].contains(" px px/s1 "), "{long}");
    // `short` gives the severity alone, as haproxy's.
    let short = syslog.wait_line("<6>127.0.0.1:", Duration::from_secs(5));
    assert!(short.contains(" px px/s1 "), "{short}");
}

/// Each `format` of a `log` line lays out the same message as haproxy's
/// (the dates and process ids aside).
#[test]
fn every_log_format_as_haproxy() {
    const FORMATS: [&str; 8] = [
        "rfc3164", "local", "rfc5424", "short", "priority", "iso", "timed", "raw",
    ];
    let run = |start: &dyn Fn(&str, u16) -> Box<dyn std::any::Any>| -> Vec<String> {
        let sinks: Vec<Syslog> = FORMATS.iter().map(|_| Syslog::start()).collect();
        let port = free_port();
        let mut cfg = String::from("global\n  log-send-hostname edge1\n");
        for (f, s) in FORMATS.iter().zip(&sinks) {
            cfg += &format!("  log 127.0.0.1:{} format {f} local1\n", s.port());
        }
        cfg += &format!(
            "defaults\n  mode http\n  timeout connect 1s\n  timeout client 1s\n  timeout server 1s\n\
             frontend f\n  bind 127.0.0.1:{port}\n  log global\n  log-format \"hello %ST\"\n  http-request return status 200\n"
        );
        let _p = start(&cfg, port);
        let mut c = crate::common::http::Client::connect(port);
        assert_eq!(c.get("/").status, 200);
        sinks
            .iter()
            .map(|s| {
                let l = s.wait_line("hello 200", Duration::from_secs(5));
                // Dates and process ids differ by nature.
                l.split(' ')
                    .map(|w| {
                        if w.contains("T") && w.contains(':') && w.len() > 20 {
                            // (`timed` puts the severity before it.)
                            let pri = w.split_inclusive('>').next().filter(|p| p.starts_with('<'));
                            format!("{}<date>", pri.unwrap_or(""))
                        } else if !w.is_empty() && w.bytes().all(|b| b.is_ascii_digit()) {
                            "<pid>".to_string()
                        } else if w.chars().filter(|c| *c == ':').count() == 2 && w.len() == 8 {
                            "<time>".to_string()
                        } else {
                            w.split('[').next().unwrap_or(w).to_string()
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect()
    };
    Haproxy::bin().expect("haproxy is not installed: tests/run installs it");
    let theirs = run(&|cfg, port| Box::new(Haproxy::start(cfg, port).unwrap()));
    let mine = run(&|cfg, port| Box::new(Weir::start(cfg, port)));
    assert_eq!(mine, theirs);
}

#[test]
fn a_stalled_stdout_reader_never_stalls_traffic() {
    // weir logs every connection to a pipe that nobody reads: once the pipe
    // is full, lines are dropped, and connections keep being served.
    let srv = Server::named("ok");
    let port = free_port();
    let cfg = format!(
        "{LOG_TCP}  timeout connect 1s\n  timeout client 5s\n  timeout server 5s\n\
         listen px\n  bind 127.0.0.1:{port}\n  log-format \"{}%ci:%cp %b/%s %ts\"\n  server s1 127.0.0.1:{}\n",
        "x".repeat(400),
        srv.port()
    );
    let dir = tempdir("stall");
    let path = dir.join("s.cfg");
    std::fs::write(&path, cfg).unwrap();
    let mut child = std::process::Command::new(WEIR)
        .args(["-db", "-f", path.to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait_for("weir to listen", Duration::from_secs(10), || {
        listening(port).then_some(())
    });
    // ~400 bytes per line: 1,000 connections write 400 kB into a 64 kB pipe.
    let t = std::time::Instant::now();
    for _ in 0..1000 {
        assert_eq!(fetch(port).unwrap(), "ok");
    }
    assert!(t.elapsed() < Duration::from_secs(30));
    let _ = child.kill();
    let _ = child.wait();
}

/// `%bi:%bp` is the address weir's own connection to the server came
/// from: the server reports the peer it saw, and the log must agree, in
/// `mode tcp` and in `mode http`. (weir reads that address only when a log
/// format names it.)
#[test]
fn backend_source_address_in_log_format() {
    for mode in ["tcp", "http"] {
        let syslog = Syslog::start();
        let srv = Server::start(move |mut c| {
            let peer = c.peer_addr().unwrap().to_string();
            let mut b = [0u8; 1024];
            let mut got = Vec::new();
            while !got.windows(4).any(|w| w == b"\r\n\r\n") {
                match c.read(&mut b) {
                    Ok(n) if n > 0 => got.extend_from_slice(&b[..n]),
                    _ => return,
                }
            }
            let body = format!("peer={peer}");
            let _ = write!(
                c,
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        });
        let port = free_port();
        let cfg = format!(
            "global\n  log 127.0.0.1:{} format raw local0\ndefaults\n  mode {mode}\n  log global\n  timeout connect 1s\n  timeout client 5s\n  timeout server 5s\n\
             listen px\n  bind 127.0.0.1:{port}\n  log-format \"src=%bi:%bp {mode}\"\n  server s1 127.0.0.1:{}\n",
            syslog.port(),
            srv.port()
        );
        let _w = Weir::start(&cfg, port);
        let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
        c.write_all(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            .unwrap();
        let mut s = String::new();
        c.read_to_string(&mut s).unwrap();
        let peer = s.split("peer=").nth(1).expect("the server's answer").trim();
        // The session (and its log line) ends once the client closes too:
        // a `mode tcp` session would otherwise wait for `timeout client`.
        drop(c);
        let line = syslog.wait_line(&format!(" {mode}"), Duration::from_secs(5));
        assert!(
            line.contains(&format!("src={peer} {mode}")),
            "{mode}: {line} / {peer}"
        );
    }
}

#[test]
fn log_sampling_and_debug_mode() {
    // `sample 1,3:5`: of every five lines, the first and the third. Under
    // `-d` the "Proxy … started." notice stays out of the logs (it would
    // be the first line otherwise), as haproxy's does.
    let syslog = Syslog::start();
    let origin = crate::common::http::Origin::start("o");
    let port = free_port();
    let cfg = format!(
        "defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         listen px\n    bind 127.0.0.1:{port}\n    log 127.0.0.1:{} sample 1,3:5 local0\n    log-format \"line %HU\"\n    server s 127.0.0.1:{}\n",
        syslog.port(),
        origin.port()
    );
    let mut w = Weir::spawn(&cfg, &["-d"]);
    w.wait_listening(port);
    // One connection: its exchanges are logged in order.
    let mut c = crate::common::http::Client::connect(port);
    for i in 0..10 {
        assert_eq!(c.get(&format!("/r{i}")).status, 200);
    }
    syslog.wait_line("line /r7", Duration::from_secs(5));
    let lines = syslog.lines.lock().unwrap().clone();
    let got: Vec<&str> = lines
        .iter()
        .filter_map(|l| l.split("line ").nth(1))
        .collect();
    assert_eq!(got, ["/r0", "/r2", "/r5", "/r7"], "{lines:?}");
    assert!(!lines.iter().any(|l| l.contains("started")), "{lines:?}");
    let (code, _, err) =
        check_cfg("global\n    log 127.0.0.1:514 sample 2-1:5 local0\ndefaults\n    mode tcp\n");
    assert_ne!(code, 0);
    assert!(err.contains(":2") && err.contains("sample"), "{err}");
}

#[test]
fn logasap_logs_when_the_response_head_leaves() {
    use std::io::{BufRead, BufReader};
    use std::sync::{Arc, Condvar, Mutex};
    let log = Syslog::start();
    let go = Arc::new((Mutex::new(false), Condvar::new()));
    let go2 = go.clone();
    // The server sends its head, then its body only once told.
    let srv = Server::start(move |c| {
        let mut r = BufReader::new(c.try_clone().unwrap());
        let mut w = c;
        loop {
            let mut line = String::new();
            if r.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            if line == "\r\n" {
                break;
            }
        }
        w.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n")
            .unwrap();
        let (m, cv) = &*go2;
        let _open = cv.wait_while(m.lock().unwrap(), |go| !*go).unwrap();
        let _ = w.write_all(b"hello");
    });
    let port = free_port();
    let cfg = format!(
        "defaults\n    mode http\n    option httplog\n    option logasap\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         frontend fe\n    bind 127.0.0.1:{port}\n    log 127.0.0.1:{} local0\n    default_backend be\n\
         backend be\n    server s 127.0.0.1:{}\n",
        log.port(),
        srv.addr.port()
    );
    let _w = Weir::start(&cfg, port);
    let mut c = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.write_all(b"GET /big HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        .unwrap();
    // Logged while the body has not left the server: time and bytes so
    // far, with their '+'.
    let line = log.wait_line("GET /big", Duration::from_secs(5));
    let f: Vec<&str> = line.split_whitespace().collect();
    let i = f.iter().position(|w| *w == "fe").unwrap();
    assert!(
        f[i + 2].split('/').nth(4).unwrap().starts_with('+'),
        "{line}"
    );
    assert_eq!(f[i + 3], "200", "{line}");
    assert!(f[i + 4].starts_with('+') && f[i + 4] != "+0", "{line}");
    assert_eq!(&f[i + 7], &"----", "{line}");
    *go.0.lock().unwrap() = true;
    go.1.notify_all();
    let mut body = Vec::new();
    c.read_to_end(&mut body).unwrap();
    assert!(body.ends_with(b"hello"));
    // No second line at the end: the next request's line is the next one.
    let mut c = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.write_all(b"GET /next HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut rest = Vec::new();
    c.read_to_end(&mut rest).unwrap();
    log.wait_line("GET /next", Duration::from_secs(5));
    let lines = log.lines.lock().unwrap().clone();
    assert_eq!(
        lines.iter().filter(|l| l.contains("GET /big")).count(),
        1,
        "{lines:?}"
    );
}

#[test]
fn logasap_in_tcp_mode_logs_once_connected() {
    let log = Syslog::start();
    // The server holds each connection until its client leaves.
    let srv = Server::start(|mut c| {
        let mut b = [0u8; 64];
        while matches!(c.read(&mut b), Ok(n) if n > 0) {}
    });
    let port = free_port();
    let sock = tempdir("logasap-tcp").join("s.sock");
    let cfg = format!(
        "global\n    stats socket {} level admin\n\
         defaults\n    mode tcp\n    option tcplog\n    option logasap\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         listen l\n    bind 127.0.0.1:{port}\n    log 127.0.0.1:{} local0\n    server s 127.0.0.1:{}\n",
        sock.display(),
        log.port(),
        srv.addr.port()
    );
    let _w = Weir::start(&cfg, port);
    let c = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    let me = format!(":{} ", c.local_addr().unwrap().port());
    // Logged while the connection is open, its time and bytes marked '+'.
    let line = log.wait_line(&me, Duration::from_secs(5));
    let f: Vec<&str> = line.split_whitespace().collect();
    let i = f.iter().position(|w| *w == "l/s").unwrap();
    assert!(
        f[i + 1].split('/').nth(2).unwrap().starts_with('+'),
        "{line}"
    );
    assert_eq!(f[i + 2], "+0", "{line}");
    drop(c);
    // Once it has ended, its end wrote no second line.
    wait_for("the session's end", Duration::from_secs(5), || {
        ask(&sock, "show info\n")
            .contains("\nCurrConns: 0\n")
            .then_some(())
    });
    let c2 = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    let next = format!(":{} ", c2.local_addr().unwrap().port());
    log.wait_line(&next, Duration::from_secs(5));
    drop(c2);
    let lines = log.lines.lock().unwrap().clone();
    assert_eq!(
        lines.iter().filter(|l| l.contains(&me)).count(),
        1,
        "{lines:?}"
    );
}

/// As haproxy, whose line is written before its answer leaves: a client
/// that has read an answer weir made (a `return`, a `deny`, a 503 for
/// want of a server, a 400 for a bad request) finds its log line already
/// sent, so lines keep the order of the answers (VTest's syslog blocks
/// count on it).
#[test]
fn an_answer_weir_makes_leaves_after_its_log_line() {
    let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_nonblocking(true).unwrap();
    let port = free_port();
    let cfg = format!(
        "defaults\n  mode http\n  timeout connect 1s\n  timeout client 5s\n  timeout server 5s\n\
         frontend fe\n  bind 127.0.0.1:{port}\n  log 127.0.0.1:{} format raw local0\n  log-format \"status=%ST uri=%HU\"\n\
         \x20 http-request return status 200 if {{ path /ret }}\n  http-request deny if {{ path /deny }}\n  use_backend none if {{ path /none }}\n  default_backend none\n\
         backend none\n",
        sock.local_addr().unwrap().port()
    );
    let _w = Weir::start(&cfg, port);
    let c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let mut r = std::io::BufReader::new(c.try_clone().unwrap());
    for (path, status) in [("/ret", 200), ("/deny", 403), ("/ret", 200), ("/none", 503)] {
        (&c).write_all(format!("GET {path} HTTP/1.1\r\nhost: x\r\n\r\n").as_bytes())
            .unwrap();
        let res = crate::common::http::read_response(&mut r, "GET").unwrap();
        assert_eq!(res.status, status, "{path}");
        // No wait: the line is there, or it came after the answer.
        let line = next_status_line(&sock)
            .unwrap_or_else(|e| panic!("no log line yet for {path} once answered: {e}"));
        assert_eq!(line, format!("status={status} uri={path}"));
    }
    // A bad request: its 400 and the line, in the same order.
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.write_all(b"GET /bad HTTP/1.1\r\nhost: x\r\nbad header\r\n\r\n")
        .unwrap();
    let mut got = Vec::new();
    c.read_to_end(&mut got).unwrap();
    assert!(
        got.starts_with(b"HTTP/1.1 400"),
        "{:?}",
        String::from_utf8_lossy(&got)
    );
    let line = next_status_line(&sock)
        .unwrap_or_else(|e| panic!("no log line yet for the 400 once answered: {e}"));
    assert!(line.starts_with("status=400"), "{line}");
}

/// The next line received about an exchange (the proxy's start notice
/// skipped), without waiting.
fn next_status_line(sock: &std::net::UdpSocket) -> std::io::Result<String> {
    let mut buf = [0u8; 512];
    loop {
        let n = sock.recv(&mut buf)?;
        let line = String::from_utf8_lossy(&buf[..n]).trim_end().to_string();
        if line.starts_with("status=") {
            return Ok(line);
        }
    }
}

#[test]
fn logged_request_lines_are_cut_at_logurilen_as_haproxy() {
    let uri = format!("/{}", "a".repeat(300));
    let seen = beside_haproxy(|start| {
        let syslog = Syslog::start();
        let port = free_port();
        let cfg = format!(
            "global\n    tune.http.logurilen 100\n    log 127.0.0.1:{} len 4096 local0\n\
             defaults\n    mode http\n    log global\n    log-format \"<%r>%HU\"\n    timeout connect 1s\n    timeout client 3s\n    timeout server 3s\n\
             listen l\n    bind 127.0.0.1:{port}\n    http-request return status 200 content-type text/plain string ok\n",
            syslog.port()
        );
        let _p = start(&cfg, port);
        crate::common::http::Client::connect(port).get(&uri);
        let line = syslog.wait_line("<GET", Duration::from_secs(5));
        line.split_once("]: ")
            .map(|(_, m)| m.to_string())
            .unwrap_or(line)
    });
    let logged = format!("GET {}", &uri[..96]);
    assert_eq!(seen, format!("<{logged}>{}", &uri[..96]));
}

/// weir logging `line <backend>/<server>` to stdout (given), in front of a
/// server answering `ok`: weir, its port and the server.
fn logging_to_stdout(stdout: std::process::Stdio) -> (Weir, u16, Server) {
    let srv = Server::named("ok");
    let port = free_port();
    let cfg = format!(
        "{LOG_TCP}  timeout connect 1s\n  timeout client 5s\n  timeout server 5s\n\
         listen px\n  bind 127.0.0.1:{port}\n  log-format \"line %b/%s\"\n  server s1 127.0.0.1:{}\n",
        srv.port()
    );
    let dir = tempdir("stdout-log");
    let path = dir.join("s.cfg");
    std::fs::write(&path, cfg).unwrap();
    let child = std::process::Command::new(WEIR)
        .args(["-db", "-f", path.to_str().unwrap()])
        .stdout(stdout)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Stopped when dropped, even by a failed assertion.
    let w = Weir {
        child,
        dir,
        cfg: path,
    };
    wait_for("weir to listen", Duration::from_secs(10), || {
        listening(port).then_some(())
    });
    (w, port, srv)
}

#[test]
fn stdout_may_be_a_socket_as_under_the_journal() {
    // systemd gives a service a unix stream socket for stdout: weir logs
    // to it (it used to refuse to start: /proc cannot open a socket again).
    use std::io::BufRead;
    // (`Proxy px started.` comes first.)
    let (ours, theirs) = std::os::unix::net::UnixStream::pair().unwrap();
    let stdout = std::process::Stdio::from(std::os::fd::OwnedFd::from(theirs));
    let (_w, port, _srv) = logging_to_stdout(stdout);
    assert_eq!(fetch(port).unwrap(), "ok");
    ours.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let r = std::io::BufReader::new(ours);
    let line = r
        .lines()
        .map(|l| l.unwrap())
        .find(|l| l.starts_with("line "))
        .unwrap();
    assert_eq!(line, "line px/s1");
}

#[test]
fn stdout_shared_with_other_writers_keeps_their_lines() {
    // `cmd > file` with weir and a script writing to the same file: each
    // line lands after the last, none written over.
    use std::io::Write;
    let out = tempdir("shared-stdout").join("out.log");
    let mut ours = std::fs::File::create(&out).unwrap();
    let theirs = ours.try_clone().unwrap();
    let (w, port, _srv) = logging_to_stdout(theirs.into());
    for i in 0..3 {
        ours.write_all(format!("script {i}\n").as_bytes()).unwrap();
        assert_eq!(fetch(port).unwrap(), "ok");
        wait_for("weir's line", Duration::from_secs(5), || {
            let t = std::fs::read_to_string(&out).unwrap();
            (t.matches("line px/s1").count() == i + 1).then_some(())
        });
    }
    drop(w);
    let t = std::fs::read_to_string(&out).unwrap();
    let lines: Vec<&str> = t.lines().filter(|l| !l.starts_with("Proxy ")).collect();
    assert_eq!(
        lines,
        [
            "script 0",
            "line px/s1",
            "script 1",
            "line px/s1",
            "script 2",
            "line px/s1"
        ],
        "{t}"
    );
}

/// `log-format-sd` beside haproxy: the structured data of `rfc5424`
/// lines (`-` without it), none in other formats.
#[test]
fn structured_data_as_haproxy() {
    let got = beside_haproxy(|start| {
        let (a, b) = (Syslog::start(), Syslog::start());
        let (port, port2) = (free_port(), free_port());
        let cfg = format!(
            "defaults\n  mode http\n  timeout connect 1s\n  timeout client 1s\n  timeout server 1s\n\
             frontend f\n  bind 127.0.0.1:{port}\n  log 127.0.0.1:{} format rfc5424 local1\n\
             \x20 log 127.0.0.1:{} format rfc3164 local1\n  log-format \"sd %ST\"\n\
             \x20 log-format-sd [exampleSDID@1234\\ method=\\\"%HM\\\"\\ status=\\\"%ST\\\"]\n\
             \x20 http-request return status 200\n\
             frontend g\n  bind 127.0.0.1:{port2}\n  log 127.0.0.1:{} format rfc5424 local1\n\
             \x20 log-format \"nosd %ST\"\n  http-request return status 200\n",
            a.port(),
            b.port(),
            a.port()
        );
        let _p = start(&cfg, port);
        assert_eq!(
            crate::common::http::Client::connect(port).get("/").status,
            200
        );
        assert_eq!(
            crate::common::http::Client::connect(port2).get("/").status,
            200
        );
        // Without the date, host and pid.
        let cut = |l: String| {
            let p: Vec<&str> = l.splitn(7, ' ').collect();
            [p[0], p[3], p[5], p[6]].join(" ")
        };
        vec![
            cut(a.wait_line("sd 200", Duration::from_secs(5))),
            cut(a.wait_line("nosd 200", Duration::from_secs(5))),
            b.wait_line("sd 200", Duration::from_secs(5))
                .contains("[exampleSDID")
                .to_string(),
        ]
    });
    assert_eq!(
        got[0],
        "<142>1 haproxy - [exampleSDID@1234 method=\"GET\" status=\"200\"] sd 200"
    );
}

/// `declare capture response` and `http-response capture … id` beside
/// haproxy: the slot after the header ones, cut to its length, in `%hs`
/// and `capture.res.hdr()`.
#[test]
fn response_captures_as_haproxy() {
    let srv = Server::start(|mut c| {
        if read_head(&mut c).is_some() {
            let _ = c.write_all(
                b"HTTP/1.1 200 OK\r\nx-a: AA\r\nx-b: BBBBBBBBBBBB\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            );
        }
    });
    let got = beside_haproxy(|start| {
        let sink = Syslog::start();
        let port = free_port();
        let cfg = format!(
            "defaults\n  mode http\n  timeout connect 1s\n  timeout client 5s\n  timeout server 5s\n\
             frontend fe\n  bind 127.0.0.1:{port}\n  log 127.0.0.1:{} format raw local0\n\
             \x20 log-format \"hr=%hr hs=%hs\"\n\
             \x20 capture request header host len 10\n  capture response header x-a len 10\n\
             \x20 declare capture request len 8\n  declare capture response len 8\n\
             \x20 http-request capture req.hdr(x-q) id 1\n\
             \x20 http-response capture res.hdr(x-b) id 1\n\
             \x20 http-response set-header x-cap \"%[capture.res.hdr(1)]|%[capture.res.hdr(0)]\"\n\
             \x20 default_backend be\n\
             backend be\n  server s1 127.0.0.1:{}\n",
            sink.port(),
            srv.port()
        );
        let _p = start(&cfg, port);
        let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        c.write_all(b"GET / HTTP/1.1\r\nHost: h\r\nx-q: qq\r\nConnection: close\r\n\r\n")
            .unwrap();
        let mut got = String::new();
        let _ = c.read_to_string(&mut got);
        let cap = got
            .lines()
            .find(|l| l.to_ascii_lowercase().starts_with("x-cap:"))
            .unwrap_or_default()
            .to_string();
        vec![cap, sink.wait_line("hs=", Duration::from_secs(5))]
    });
    assert_eq!(got, ["x-cap: BBBBBBBB|AA", "hr={h|qq} hs={AA|BBBBBBBB}"]);
}
