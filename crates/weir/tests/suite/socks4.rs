//! `socks4` and `check-via-socks4` beside haproxy: traffic and health
//! checks reach a server through a SOCKS4 proxy (one this test runs), with
//! the same CONNECT requests as haproxy's; a proxy that refuses makes the
//! check fail.

use crate::common::*;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A SOCKS4 proxy: records each CONNECT request, grants it when `grant`
/// (then relays both ways), refuses it otherwise.
fn socks_proxy(grant: bool, seen: Arc<Mutex<Vec<Vec<u8>>>>) -> Server {
    Server::start(move |mut c| {
        let mut req = [0u8; 16];
        if c.read_exact(&mut req).is_err() {
            return;
        }
        seen.lock().unwrap().push(req.to_vec());
        if !grant {
            let _ = c.write_all(&[0, 0x5b, 0, 0, 0, 0, 0, 0]);
            return;
        }
        let port = u16::from_be_bytes([req[2], req[3]]);
        let ip = std::net::Ipv4Addr::new(req[4], req[5], req[6], req[7]);
        let Ok(mut up) = TcpStream::connect((ip, port)) else {
            return;
        };
        let _ = c.write_all(&[0, 0x5a, 0, 0, 0, 0, 0, 0]);
        let (mut c2, mut up2) = (c.try_clone().unwrap(), up.try_clone().unwrap());
        let t = std::thread::spawn(move || {
            let _ = std::io::copy(&mut up2, &mut c2);
            let _ = c2.shutdown(std::net::Shutdown::Write);
        });
        let _ = std::io::copy(&mut c, &mut up);
        let _ = up.shutdown(std::net::Shutdown::Write);
        let _ = t.join();
    })
}

#[test]
fn socks4_traffic_and_checks_as_haproxy() {
    Haproxy::bin().expect("haproxy is not installed: tests/run installs it");
    let origin = Server::start(|mut c| {
        let mut b = [0u8; 1024];
        let _ = c.read(&mut b);
        let _ = c.write_all(b"HTTP/1.0 200 OK\r\nContent-Length: 6\r\n\r\norigin");
    });
    let run = |start: Start<'_>| -> (String, Vec<String>, Vec<Vec<u8>>) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (good, bad) = (
            socks_proxy(true, seen.clone()),
            socks_proxy(false, Arc::new(Mutex::new(Vec::new()))),
        );
        let log = Syslog::start();
        let port = free_port();
        let cfg = format!(
            "defaults\n  mode http\n  timeout connect 1s\n  timeout client 5s\n  timeout server 5s\n  option log-health-checks\n\
             listen px\n  bind 127.0.0.1:{port}\n  log 127.0.0.1:{} local0\n  option httpchk GET /\n\
             \x20 server ok 127.0.0.1:{o} socks4 127.0.0.1:{} check-via-socks4 check inter 200ms rise 1 fall 1\n\
             \x20 server refused 127.0.0.1:{o} socks4 127.0.0.1:{} check-via-socks4 check inter 200ms rise 1 fall 1\n",
            log.port(),
            good.port(),
            bad.port(),
            o = origin.port()
        );
        let _p = start(&cfg, port);
        log.wait_line("px/refused is DOWN", Duration::from_secs(5));
        log.wait_line("server px/ok succeeded", Duration::from_secs(5));
        let body = crate::common::http::Client::connect(port).get("/").text();
        let lines = log.lines.lock().unwrap().clone();
        let mut lines: Vec<String> = lines
            .iter()
            .filter(|l| l.contains("Health check"))
            .map(|l| {
                let t = l.split_once("]: ").map_or(l.as_str(), |(_, t)| t);
                t.split(", check duration").next().unwrap_or(t).to_string()
            })
            .collect();
        lines.sort();
        lines.dedup();
        let mut reqs = seen.lock().unwrap().clone();
        reqs.dedup();
        (body, lines, reqs)
    };
    let theirs = run(&|cfg, port| Box::new(Haproxy::start(cfg, port).unwrap()));
    let mine = run(&|cfg, port| Box::new(Weir::start(cfg, port)));
    assert_eq!(mine.0, "origin");
    assert_eq!(mine, theirs);
}
