//! Accept rate limits beside haproxy: `maxconnrate` (global) and
//! `rate-limit sessions` (a frontend) hold accepts to so many a second,
//! and `show info` / `show stat` give the limits.

use crate::common::*;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// Seconds `n` clients, one after the other, take to get their answer.
fn serve_in_turn(port: u16, n: usize) -> f64 {
    let t = Instant::now();
    for _ in 0..n {
        // A refused connect is retried (and said): one full-suite run saw
        // one, which neither proxy gave when run alone; the timing and
        // the answers below are what this test is about.
        let mut c = wait_for(
            "a connection",
            Duration::from_secs(5),
            || match TcpStream::connect(("127.0.0.1", port)) {
                Ok(c) => Some(c),
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                    eprintln!("port {port}: connect refused, retrying");
                    None
                }
                Err(e) => panic!("port {port}: {e}"),
            },
        );
        c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        c.write_all(b"GET / HTTP/1.1\r\nhost: a\r\nconnection: close\r\n\r\n")
            .unwrap();
        let mut out = String::new();
        let _ = c.read_to_string(&mut out);
        assert!(out.starts_with("HTTP/1.1 200"), "{out}");
    }
    t.elapsed().as_secs_f64()
}

fn cfg(port: u16, sock: &std::path::Path, global: &str, fe: &str) -> String {
    format!(
        "global\n    stats socket {} level admin\n{global}defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         listen l\n    bind 127.0.0.1:{port}\n{fe}    http-request return status 200 content-type text/plain string ok\n",
        sock.display()
    )
}

#[test]
fn accepts_are_held_to_their_rate_as_haproxy() {
    let dir = tempdir("accept-rates");
    let seen = beside_haproxy(|start| {
        let mut out = Vec::new();
        for (global, fe) in [
            ("", ""),
            ("    maxconnrate 20\n", ""),
            ("", "    rate-limit sessions 20\n"),
        ] {
            let port = free_port();
            let sock = dir.join(format!("s{port}"));
            let _p = start(&cfg(port, &sock, global, fe), port);
            let secs = serve_in_turn(port, 50);
            // 20 at once, then 20 a second: 1.5 s at least; a burst of 50
            // without a limit takes well under one.
            let held = secs > 1.2;
            assert!(secs < 6.0, "{global}{fe}: {secs}s");
            let info = ask(&sock, "show info\n");
            let lim = info
                .lines()
                .find_map(|l| l.strip_prefix("ConnRateLimit: "))
                .unwrap_or("?")
                .to_string();
            let stat = show_stat(&sock);
            let fe_lim = stat
                .iter()
                .find(|r| r.get("svname").map(String::as_str) == Some("FRONTEND"))
                .and_then(|r| r.get("rate_lim").cloned())
                .unwrap_or_default();
            out.push((held, lim, fe_lim));
        }
        out
    });
    assert_eq!(
        seen,
        [
            (false, "0".to_string(), "0".to_string()),
            (true, "20".to_string(), "0".to_string()),
            (true, "0".to_string(), "20".to_string()),
        ]
    );
}

#[test]
fn maxsslconn_holds_tls_clients_until_one_leaves() {
    // Not beside haproxy: 2.6 leaves the listener paused once the limit
    // was hit and a held keep-alive client leaves (measured: the waiting
    // client is never served).
    use crate::common::tls::{Pki, SClient};
    let pki = Pki::new();
    let dir = tempdir("maxsslconn");
    let port = free_port();
    let sock = dir.join("s");
    let cfg = format!(
        "global\n    stats socket {} level admin\n    maxsslconn 2\n\
         defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         listen l\n    bind 127.0.0.1:{port} ssl crt {}\n    http-request return status 200 content-type text/plain string ok\n",
        sock.display(),
        pki.path("certs/1-www.pem")
    );
    let _w = Weir::start(&cfg, port);
    let ask_one = |c: &mut SClient| {
        c.stdin
            .write_all(b"GET / HTTP/1.1\r\nhost: a\r\n\r\n")
            .unwrap();
    };
    let answered = |c: &SClient| c.text().contains("HTTP/1.1 200");
    let mut held: Vec<SClient> = (0..2)
        .map(|_| SClient::start(port, "www.example.com"))
        .collect();
    for c in held.iter_mut() {
        ask_one(c);
    }
    wait_for("two answers", Duration::from_secs(5), || {
        held.iter().all(answered).then_some(())
    });
    let mut third = SClient::start(port, "www.example.com");
    ask_one(&mut third);
    let info = |k: &str| {
        ask(&sock, "show info\n")
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{k}: ")).map(str::to_string))
            .unwrap_or_default()
    };
    assert_eq!(
        (info("CurrSslConns"), info("MaxSslConns")),
        ("2".into(), "2".into())
    );
    // The third waits in the accept queue while two are held (a bounded
    // look for something that must not happen).
    std::thread::sleep(Duration::from_millis(500));
    assert!(!answered(&third), "{}", third.text());
    drop(held.remove(0));
    wait_for("the third answer", Duration::from_secs(5), || {
        answered(&third).then_some(())
    });
    assert_eq!(info("CurrSslConns"), "2");
}
