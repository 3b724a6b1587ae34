//! Idle HTTP/1.1 clients whose sessions sleep (no task, no place in the
//! event loop): `show sess` marks them `asleep=1`; a request wakes the
//! session where it stopped (its `sess.*` variables, its request count,
//! pipelined requests); its keep-alive and first-request deadlines, a
//! client that leaves, `shutdown session` and a soft stop all still end it
//! as they would an awake one.

use crate::common::http::Client;
use crate::common::http::Origin;
use crate::common::*;
use std::io::{Read, Write};
use std::path::Path;
use std::time::{Duration, Instant};

/// Waits until no session of `src` is listed.
fn gone(sock: &Path, src: &str) {
    wait_for(
        &format!("the session of {src} to end"),
        Duration::from_secs(5),
        || (!ask(sock, "show sess\n").contains(&format!("src={src} "))).then_some(()),
    )
}

/// Reads until weir ends the connection (a FIN, or a reset for a killed
/// session).
fn ended(c: &mut Client) -> bool {
    let mut b = [0u8; 64];
    loop {
        match c.r.read(&mut b) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(e) => return e.kind() == std::io::ErrorKind::ConnectionReset,
        }
    }
}

fn src(c: &Client) -> String {
    c.w.local_addr().unwrap().to_string()
}

fn cfg(sock: &Path, port: u16, origin: u16, log: u16, timeouts: &str) -> String {
    format!(
        "global\n    nbthread 2\n    stats socket {} level admin\n\
         defaults\n    mode http\n    log 127.0.0.1:{log} local0\n    option httplog\n\
         timeout connect 1s\n    timeout client 10s\n    timeout server 10s\n{timeouts}\n\
         frontend fe\n    bind 127.0.0.1:{port}\n\
         http-request set-var(sess.first) path if {{ http_first_req }}\n\
         http-response set-header X-First %[var(sess.first)]\n\
         default_backend be\n\
         backend be\n    server o1 127.0.0.1:{origin}\n",
        sock.display()
    )
}

#[test]
fn a_sleeping_session_wakes_where_it_stopped() {
    let origin = Origin::start("o1");
    let log = Syslog::start();
    let dir = tempdir("idle-sleep");
    let sock = dir.join("admin.sock");
    let port = free_port();
    let w = Weir::start(
        &cfg(
            &sock,
            port,
            origin.port(),
            log.port(),
            "    timeout http-keep-alive 30s",
        ),
        port,
    );

    let mut c = Client::connect(port);
    let me = src(&c);
    let r = c.get("/first");
    assert_eq!(r.status, 200);
    assert_eq!(r.header("x-first"), Some("/first"));
    let line = sess_line(&sock, &me, " asleep=1 ");
    assert!(line.contains(" fe=fe "), "{line}");
    let one = ask(
        &sock,
        &format!("show sess {}\n", line.split(':').next().unwrap()),
    );
    assert!(one.contains(" asleep=1\n"), "{one}");

    // Two pipelined requests wake it; its `sess.*` variable lived on.
    c.send(b"GET /second HTTP/1.1\r\nHost: t\r\n\r\nGET /third HTTP/1.1\r\nHost: t\r\n\r\n");
    for path in ["/second", "/third"] {
        let r = c.response("GET");
        assert_eq!(r.status, 200, "{path}");
        assert_eq!(r.header("x-first"), Some("/first"), "{path}");
    }
    log.wait_line("\"GET /third HTTP/1.1\"", Duration::from_secs(5));

    // It sleeps again, and wakes again.
    sess_line(&sock, &me, " asleep=1 ");
    assert_eq!(c.get("/fourth").status, 200);

    // A client that leaves while its session sleeps frees its slot.
    sess_line(&sock, &me, " asleep=1 ");
    drop(c);
    gone(&sock, &me);
    wait_for("scur back to 0", Duration::from_secs(5), || {
        ask(&sock, "show stat\n")
            .lines()
            .find(|l| l.starts_with("fe,FRONTEND,"))
            .and_then(|l| l.split(',').nth(4).map(str::to_string))
            .filter(|scur| scur == "0")
    });

    // `shutdown session` ends a sleeping one.
    let mut k = Client::connect(port);
    let kid_src = src(&k);
    assert_eq!(k.get("/k").status, 200);
    let line = sess_line(&sock, &kid_src, " asleep=1 ");
    let kid = line.split(':').next().unwrap().to_string();
    assert_eq!(ask(&sock, &format!("shutdown session {kid}\n")), "\n");
    assert!(ended(&mut k), "the killed sleeping client was closed");
    gone(&sock, &kid_src);

    // A soft stop wakes a sleeping keep-alive client: its next request is
    // answered with `Connection: close`, and weir exits.
    let mut s = Client::connect(port);
    assert_eq!(s.get("/s").status, 200);
    sess_line(&sock, &src(&s), " asleep=1 ");
    let mut w = w;
    w.signal(libc::SIGUSR1);
    w.wait_output("soft stop", Duration::from_secs(5));
    let r = s.get("/s");
    assert_eq!(r.header("connection"), Some("close"));
    assert!(s.closed(), "closed after its answer");
    assert_eq!(w.wait_exit(Duration::from_secs(5)), Some(0));
}

#[test]
fn a_sleeping_session_keeps_its_deadlines() {
    let origin = Origin::start("o1");
    let log = Syslog::start();
    let dir = tempdir("idle-sleep-deadlines");
    let sock = dir.join("admin.sock");
    let port = free_port();
    let _w = Weir::start(
        &cfg(
            &sock,
            port,
            origin.port(),
            log.port(),
            "    timeout http-keep-alive 900ms\n    timeout http-request 1200ms",
        ),
        port,
    );

    // Keep-alive: closed when `timeout http-keep-alive` passes, not when
    // the session went to sleep (after 200 ms).
    let mut c = Client::connect(port);
    let me = src(&c);
    assert_eq!(c.get("/").status, 200);
    let t0 = Instant::now();
    sess_line(&sock, &me, " asleep=1 ");
    assert!(c.closed(), "the idle client was closed");
    let waited = t0.elapsed();
    assert!(
        waited >= Duration::from_millis(800) && waited < Duration::from_secs(3),
        "closed after {waited:?}"
    );
    gone(&sock, &me);

    // First request: a client that sends nothing gets its 408 when
    // `timeout http-request` passes, logged as a client timeout.
    let mut f = Client::connect(port);
    let fsrc = src(&f);
    let t0 = Instant::now();
    sess_line(&sock, &fsrc, " asleep=1 ");
    let r = f.response("GET");
    let waited = t0.elapsed();
    assert_eq!(r.status, 408);
    assert!(
        waited >= Duration::from_millis(1100) && waited < Duration::from_secs(4),
        "408 after {waited:?}"
    );
    let line = log.wait_line(&format!("{fsrc} "), Duration::from_secs(5));
    assert!(line.contains(" 408 ") && line.contains(" cR-- "), "{line}");
}

#[test]
fn a_sleeping_tls_session_keeps_its_keys() {
    use crate::common::tls::Pki;
    let pki = Pki::new();
    let dir = tempdir("idle-sleep-tls");
    let sock = dir.join("admin.sock");
    let port = free_port();
    let cfg = crate::common::tls::tls_cfg(
        port,
        &format!("crt {}", pki.path("certs")),
        None,
        &format!(
            "    stats socket {} level admin\n    nbthread 1",
            sock.display()
        ),
    )
    .replace("    nbthread 2\n", "")
    .replace("timeout client 5s", "timeout client 10s");
    let _w = Weir::start(&cfg, port);

    let mut s = crate::common::tls::SClient::start(port, "www.test");
    let got = s.got.clone();
    let answers = |n: usize| {
        wait_for(&format!("{n} answers"), Duration::from_secs(5), || {
            (got.lock().unwrap().matches("sni=www.test").count() >= n).then_some(())
        })
    };
    let req = b"GET / HTTP/1.1\r\nHost: www.test\r\n\r\n";
    s.stdin.write_all(req).unwrap();
    answers(1);
    // Asleep: the TLS session set aside with its socket out of the loop.
    wait_for("the TLS session asleep", Duration::from_secs(5), || {
        ask(&sock, "show sess\n")
            .lines()
            .any(|l| l.contains(" fe=fe ") && l.contains(" asleep=1 "))
            .then_some(())
    });
    // Woken by the next request, it decrypts and answers with the same keys.
    s.stdin.write_all(req).unwrap();
    answers(2);
    wait_for("asleep again", Duration::from_secs(5), || {
        ask(&sock, "show sess\n")
            .contains(" asleep=1 ")
            .then_some(())
    });
    s.stdin.write_all(req).unwrap();
    answers(3);
    let text = s.text();
    assert_eq!(text.matches("HTTP/1.1 200").count(), 3, "{text}");
}
