//! Balancing through the real proxy: weights, leastconn, first, source,
//! backups, queueing at server maxconn and `timeout queue`, retries and
//! redispatch.

use crate::common::*;
use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

fn tally(port: u16, n: usize) -> HashMap<String, usize> {
    let mut m = HashMap::new();
    for _ in 0..n {
        *m.entry(fetch(port).unwrap()).or_insert(0) += 1;
    }
    m
}

#[test]
fn roundrobin_weights_1_2_3_are_exact_over_60_connections() {
    let (a, b, c) = (Server::named("a"), Server::named("b"), Server::named("c"));
    let port = free_port();
    let servers = format!(
        "    balance roundrobin\n    server a 127.0.0.1:{} weight 1\n    server b 127.0.0.1:{} weight 2\n    server c 127.0.0.1:{} weight 3",
        a.port(), b.port(), c.port()
    );
    // Two threads accept: the balancing state is shared by both.
    let _w = Weir::start(&listen_cfg(port, "", "", &servers), port);
    let t = tally(port, 60);
    assert_eq!((t["a"], t["b"], t["c"]), (10, 20, 30), "{t:?}");
}

#[test]
fn backup_serves_only_when_actives_are_gone() {
    let (a, bk) = (Server::named("a"), Server::named("bk"));
    let port = free_port();
    let servers = format!(
        "    server a 127.0.0.1:{} weight 1 disabled\n    server bk 127.0.0.1:{} backup",
        a.port(),
        bk.port()
    );
    let _w = Weir::start(&listen_cfg(port, "", "", &servers), port);
    assert_eq!(tally(port, 5)["bk"], 5);
    let servers = format!(
        "    server a 127.0.0.1:{}\n    server bk 127.0.0.1:{} backup",
        a.port(),
        bk.port()
    );
    let port = free_port();
    let _w = Weir::start(&listen_cfg(port, "", "", &servers), port);
    assert_eq!(tally(port, 5)["a"], 5);
}

#[test]
fn source_hash_is_sticky() {
    let (a, b) = (Server::named("a"), Server::named("b"));
    let port = free_port();
    let servers = format!(
        "    balance source\n    server a 127.0.0.1:{}\n    server b 127.0.0.1:{}",
        a.port(),
        b.port()
    );
    let _w = Weir::start(&listen_cfg(port, "", "", &servers), port);
    let t = tally(port, 10);
    assert_eq!(
        t.len(),
        1,
        "one client address always lands on one server: {t:?}"
    );
}

/// A server that holds each connection until the client closes it.
fn holding(name: &'static str) -> Server {
    Server::start(move |mut c| {
        let _ = c.write_all(name.as_bytes());
        let mut b = [0u8; 16];
        let _ = c.read(&mut b);
    })
}

fn open(port: u16) -> (TcpStream, String) {
    let mut c = client(port);
    let mut b = [0u8; 2];
    let n = c.read(&mut b).unwrap();
    let s = String::from_utf8_lossy(&b[..n]).into_owned();
    (c, s)
}

#[test]
fn leastconn_sends_new_connections_to_the_idle_server() {
    let (a, b) = (holding("a"), holding("b"));
    let port = free_port();
    let servers = format!(
        "    balance leastconn\n    server a 127.0.0.1:{}\n    server b 127.0.0.1:{}",
        a.port(),
        b.port()
    );
    let w = Weir::start(
        &listen_cfg(
            port,
            "  log stdout format raw local0",
            "    log global\n    option tcplog",
            &servers,
        ),
        port,
    );
    let (c1, s1) = open(port);
    let (c2, s2) = open(port);
    assert_ne!(s1, s2, "the second goes to the other server");
    drop(c1);
    // The session's log line is written after its server slot is released.
    w.wait_output(&format!("px/{s1} "), Duration::from_secs(3));
    let (_c3, s3) = open(port);
    assert_eq!(s3, s1, "the freed server is the least loaded");
    drop(c2);
}

#[test]
fn first_fills_servers_in_order() {
    let (a, b) = (holding("a"), holding("b"));
    let port = free_port();
    let servers = format!("    balance first\n    server a 127.0.0.1:{} maxconn 2\n    server b 127.0.0.1:{} maxconn 2", a.port(), b.port());
    let _w = Weir::start(&listen_cfg(port, "", "", &servers), port);
    let conns: Vec<(TcpStream, String)> = (0..4).map(|_| open(port)).collect();
    let names: Vec<&str> = conns.iter().map(|(_, s)| s.as_str()).collect();
    assert_eq!(names, ["a", "a", "b", "b"]);
}

#[test]
fn server_maxconn_queues_until_a_slot_frees() {
    let srv = holding("a");
    let port = free_port();
    let servers = format!(
        "    timeout queue 5s\n    server a 127.0.0.1:{} maxconn 1",
        srv.port()
    );
    let _w = Weir::start(&listen_cfg(port, "", "", &servers), port);
    let (c1, _) = open(port);
    let accepted_before = srv.accepted.load(std::sync::atomic::Ordering::Relaxed);
    let mut c2 = TcpStream::connect(("127.0.0.1", port)).unwrap();
    c2.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let mut b = [0u8; 1];
    assert!(
        c2.read(&mut b).is_err(),
        "queued: the server has not seen it"
    );
    assert_eq!(
        srv.accepted.load(std::sync::atomic::Ordering::Relaxed),
        accepted_before
    );
    drop(c1);
    c2.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    assert_eq!(c2.read(&mut b).unwrap(), 1, "served once the slot freed");
    assert_eq!(&b, b"a");
}

#[test]
fn queue_timeout_closes_the_waiting_client() {
    let srv = holding("a");
    let port = free_port();
    let cfg = format!(
        "{LOG_TCP}  timeout connect 1s\n  timeout client 10s\n  timeout server 10s\n  timeout queue 300ms\n\
         listen px\n  bind 127.0.0.1:{port}\n  server a 127.0.0.1:{} maxconn 1\n",
        srv.port()
    );
    let w = Weir::start(&cfg, port);
    let (_c1, _) = open(port);
    let mut c2 = TcpStream::connect(("127.0.0.1", port)).unwrap();
    c2.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let t = Instant::now();
    let mut b = [0u8; 1];
    assert_eq!(c2.read(&mut b).unwrap_or(0), 0);
    assert!(
        t.elapsed() >= Duration::from_millis(250),
        "{:?}",
        t.elapsed()
    );
    let out = w.wait_output(" sQ ", Duration::from_secs(3));
    assert!(out.contains("px px/"), "{out}");
}

#[test]
fn a_failed_connect_is_redispatched_to_a_live_server() {
    let live = Server::named("live");
    let dead_port = free_port();
    let port = free_port();
    let cfg = format!(
        "{LOG_TCP}  retries 2\n  option redispatch\n  timeout connect 100ms\n  timeout client 10s\n  timeout server 10s\n\
         listen px\n  bind 127.0.0.1:{port}\n  balance roundrobin\n  server dead 127.0.0.1:{dead_port}\n  server live 127.0.0.1:{}\n",
        live.port()
    );
    let w = Weir::start(&cfg, port);
    for _ in 0..4 {
        assert_eq!(
            fetch(port).unwrap(),
            "live",
            "no client sees the dead server"
        );
    }
    // With another usable server and round robin, haproxy 2.6 redispatches
    // at the first failure instead of retrying the dead one: '+1'.
    let out = w.wait_output("px/live", Duration::from_secs(3));
    assert!(
        out.contains("/+1 ") && !out.contains("/+2 "),
        "a redispatched session logs '+<retries>': {out}"
    );
}

#[test]
fn without_redispatch_retries_exhaust_and_the_client_is_closed() {
    let dead_port = free_port();
    let port = free_port();
    let cfg = format!(
        "{LOG_TCP}  retries 2\n  timeout connect 100ms\n  timeout client 10s\n  timeout server 10s\n\
         listen px\n  bind 127.0.0.1:{port}\n  server dead 127.0.0.1:{dead_port}\n"
    );
    let w = Weir::start(&cfg, port);
    let t = Instant::now();
    assert_eq!(fetch(port).unwrap(), "");
    assert!(
        t.elapsed() >= Duration::from_millis(180),
        "two turn-around pauses: {:?}",
        t.elapsed()
    );
    let out = w.wait_output(" SC ", Duration::from_secs(3));
    assert!(out.contains("px/dead") && out.contains("/2 "), "{out}");
}

#[test]
fn server_source_address_is_used() {
    // The server reports the address the connection came from.
    let srv = Server::start(|mut c| {
        let peer = c.peer_addr().unwrap();
        let _ = c.write_all(peer.ip().to_string().as_bytes());
    });
    let port = free_port();
    let servers = format!("    server s 127.0.0.1:{} source 127.0.0.77", srv.port());
    let _w = Weir::start(&listen_cfg(port, "", "", &servers), port);
    assert_eq!(fetch(port).unwrap(), "127.0.0.77");
}

#[test]
fn bind_maxconn_limits_that_bind_only() {
    let srv = holding("h");
    let (p1, p2) = (free_port(), free_port());
    let cfg = format!(
        "global\n  nbthread 1\ndefaults\n  mode tcp\n  timeout connect 1s\n  timeout client 10s\n  timeout server 10s\n\
         listen px\n  bind 127.0.0.1:{p1} maxconn 1\n  bind 127.0.0.1:{p2}\n  server s 127.0.0.1:{}\n",
        srv.port()
    );
    let _w = Weir::start(&cfg, p1);
    let (_c1, _) = open(p1);
    let mut c2 = TcpStream::connect(("127.0.0.1", p1)).unwrap();
    c2.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let mut b = [0u8; 1];
    assert!(c2.read(&mut b).is_err(), "the first bind is full");
    let (_c3, s3) = open(p2);
    assert_eq!(s3, "h", "the other bind still accepts");
}

#[test]
fn bind_thread_restricts_accepting_threads() {
    let srv = Server::named("t");
    let port = free_port();
    let cfg = format!(
        "global\n  nbthread 2\ndefaults\n  mode tcp\n  timeout connect 1s\n  timeout client 10s\n  timeout server 10s\n\
         listen px\n  bind 127.0.0.1:{port} thread 2\n  server s 127.0.0.1:{}\n",
        srv.port()
    );
    let w = Weir::start(&cfg, port);
    for _ in 0..5 {
        assert_eq!(fetch(port).unwrap(), "t");
    }
    // Only one listening socket exists for that port (thread 2's).
    let fds = std::fs::read_dir(format!("/proc/{}/fd", w.pid()))
        .unwrap()
        .count();
    let inodes: Vec<String> = std::fs::read_to_string("/proc/net/tcp")
        .unwrap()
        .lines()
        .filter(|l| l.contains(&format!(":{:04X} 00000000:0000 0A", port)))
        .map(String::from)
        .collect();
    assert_eq!(inodes.len(), 1, "one listener: {inodes:?} ({fds} fds)");
}

#[test]
fn abortonclose_drops_a_queued_client_that_left() {
    let srv = holding("a");
    let port = free_port();
    let cfg = format!(
        "{LOG_TCP}  option abortonclose\n  timeout connect 1s\n  timeout client 10s\n  timeout server 10s\n  timeout queue 10s\n\
         listen px\n  bind 127.0.0.1:{port}\n  server a 127.0.0.1:{} maxconn 1\n",
        srv.port()
    );
    let w = Weir::start(&cfg, port);
    let (c1, _) = open(port);
    let c2 = TcpStream::connect(("127.0.0.1", port)).unwrap();
    c2.shutdown(std::net::Shutdown::Both).unwrap();
    drop(c2);
    w.wait_output(" CQ ", Duration::from_secs(3));
    let before = srv.accepted.load(std::sync::atomic::Ordering::Relaxed);
    drop(c1);
    // The slot frees; nothing queued is left to use it.
    let (_c3, s3) = open(port);
    assert_eq!(s3, "a");
    assert_eq!(
        srv.accepted.load(std::sync::atomic::Ordering::Relaxed),
        before + 1,
        "only the new client reached the server"
    );
}

#[test]
fn without_abortonclose_a_queued_clients_data_and_fin_are_delivered() {
    let (tx, rx) = std::sync::mpsc::channel::<Vec<u8>>();
    let tx = std::sync::Mutex::new(tx);
    let srv = Server::start(move |mut c| {
        let _ = c.write_all(b"a");
        let mut all = Vec::new();
        let _ = c.read_to_end(&mut all);
        let _ = tx.lock().unwrap().send(all);
    });
    let port = free_port();
    let servers = format!(
        "    timeout queue 10s\n    server a 127.0.0.1:{} maxconn 1",
        srv.port()
    );
    let _w = Weir::start(&listen_cfg(port, "", "", &servers), port);
    let (c1, _) = open(port);
    let mut c2 = TcpStream::connect(("127.0.0.1", port)).unwrap();
    c2.write_all(b"sent-while-queued").unwrap();
    c2.shutdown(std::net::Shutdown::Write).unwrap();
    drop(c1);
    let got = wait_for("the queued client's bytes", Duration::from_secs(5), || {
        rx.try_iter().find(|v| !v.is_empty())
    });
    assert_eq!(
        got, b"sent-while-queued",
        "data and FIN passed on once connected"
    );
}

/// A server that answers each request after `hold`, counting requests.
fn slow_counting(hold: Duration) -> (Server, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::io::BufRead;
    let n = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let n2 = n.clone();
    let s = Server::start(move |c| {
        let mut r = std::io::BufReader::new(c.try_clone().unwrap());
        loop {
            let mut line = String::new();
            if r.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
                break;
            }
        }
        n2.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        std::thread::sleep(hold);
        let mut w = c;
        let _ = w.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok");
    });
    (s, n)
}

#[test]
fn hash_balance_factor_spreads_a_hot_key_as_haproxy() {
    let seen = beside_haproxy(|start| {
        let mut out = Vec::new();
        for factor in ["", "    hash-balance-factor 150\n"] {
            let (a, na) = slow_counting(Duration::from_millis(700));
            let (b, nb) = slow_counting(Duration::from_millis(700));
            let port = free_port();
            let cfg = format!(
                "defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
                 listen l\n    bind 127.0.0.1:{port}\n    balance uri\n    hash-type consistent\n{factor}\
                 \x20   server a 127.0.0.1:{}\n    server b 127.0.0.1:{}\n",
                a.addr.port(),
                b.addr.port()
            );
            let _p = start(&cfg, port);
            let clients: Vec<_> = (0..8)
                .map(|_| {
                    std::thread::spawn(move || {
                        let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
                        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
                        c.write_all(b"GET /hot HTTP/1.1\r\nhost: a\r\nconnection: close\r\n\r\n")
                            .unwrap();
                        let mut out = String::new();
                        let _ = c.read_to_string(&mut out);
                        out.starts_with("HTTP/1.1 200")
                    })
                })
                .collect();
            let ok = clients.into_iter().all(|t| t.join().unwrap());
            let counts = [
                na.load(std::sync::atomic::Ordering::SeqCst),
                nb.load(std::sync::atomic::Ordering::SeqCst),
            ];
            // Both servers took some of the hot key, or one took it all.
            out.push((
                ok,
                counts.iter().all(|&n| n > 0),
                counts.iter().sum::<usize>(),
            ));
        }
        out
    });
    assert_eq!(seen, [(true, false, 8), (true, true, 8)]);
}

/// A server that holds each request `hold` before answering, and counts
/// the most requests it held at once.
fn concurrency_meter(hold: Duration) -> (Server, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    let cur = std::sync::Arc::new(AtomicUsize::new(0));
    let max = std::sync::Arc::new(AtomicUsize::new(0));
    let m2 = max.clone();
    let s = Server::start(move |mut c| {
        let mut b = [0u8; 1024];
        let _ = c.read(&mut b);
        let now = cur.fetch_add(1, SeqCst) + 1;
        m2.fetch_max(now, SeqCst);
        std::thread::sleep(hold);
        cur.fetch_sub(1, SeqCst);
        let _ = c.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok");
    });
    (s, max)
}

#[test]
fn minconn_follows_the_backend_load_up_to_maxconn_as_haproxy() {
    // (section lines, server options, clients at once): the most requests
    // the server held at once.
    let cases = [
        ("    fullconn 100\n", "minconn 2 maxconn 20", 10),
        ("    fullconn 30\n", "minconn 2 maxconn 20", 10),
        ("    fullconn 20\n", "minconn 2 maxconn 20", 10),
        // Without `fullconn`: a tenth of the frontend's maxconn, rounded
        // up (4, then 3).
        ("    maxconn 35\n", "minconn 1 maxconn 2", 3),
        ("    maxconn 30\n", "minconn 1 maxconn 2", 3),
        // Without `maxconn` (or above it), `minconn` is the limit.
        ("    fullconn 100\n", "minconn 1", 4),
        ("    fullconn 1\n", "minconn 3 maxconn 2", 5),
    ];
    let seen = beside_haproxy(|start| {
        let mut out = Vec::new();
        for (section, opts, clients) in cases {
            let (srv, max) = concurrency_meter(Duration::from_millis(600));
            let port = free_port();
            let cfg = format!(
                "defaults\n    mode http\n    timeout connect 1s\n    timeout client 10s\n    timeout server 10s\n    timeout queue 10s\n\
                 listen l\n    bind 127.0.0.1:{port}\n{section}    server s {} {opts}\n",
                srv.addr
            );
            let _p = start(&cfg, port);
            // Every client is connected before any sends its request, so
            // that the requests reach the proxy together (the limit
            // follows the load they make at once).
            let together = std::sync::Arc::new(std::sync::Barrier::new(clients));
            let all: Vec<_> = (0..clients)
                .map(|_| {
                    let together = together.clone();
                    std::thread::spawn(move || {
                        let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
                        c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
                        together.wait();
                        c.write_all(b"GET / HTTP/1.1\r\nhost: a\r\n\r\n").unwrap();
                        let mut got = [0u8; 12];
                        let _ = c.read_exact(&mut got);
                        got.starts_with(b"HTTP/1.1 200")
                    })
                })
                .collect();
            let ok = all.into_iter().all(|t| t.join().unwrap());
            out.push((ok, max.load(std::sync::atomic::Ordering::SeqCst)));
        }
        out
    });
    assert_eq!(
        seen,
        [
            (true, 2),
            (true, 6),
            (true, 10),
            (true, 1),
            (true, 2),
            (true, 1),
            (true, 3)
        ]
    );
}
