//! `mode tcp` sessions whose both sides went quiet sleep (no task, no place
//! in the event loop): `show sess` marks them `asleep=1`; a byte from
//! either side wakes them and forwarding goes on; the log line counts the
//! bytes of every waking period; their inactivity timeouts, a client that
//! leaves, `shutdown session` and `shutdown sessions server` end them as
//! they would an awake one; a bounded random soak of sleeps, wakes and
//! closes loses no byte and leaves weir quiet.

use crate::common::*;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::time::{Duration, Instant};

fn cfg(sock: &Path, port: u16, server: u16, log: u16, timeouts: &str) -> String {
    format!(
        "global\n    nbthread 2\n    stats socket {} level admin\n\
         defaults\n    mode tcp\n    log 127.0.0.1:{log} local0\n    option tcplog\n\
         timeout connect 1s\n{timeouts}\n\
         listen px\n    bind 127.0.0.1:{port}\n    server s1 127.0.0.1:{server}\n",
        sock.display()
    )
}

/// weir in front of a server the test plays, logging to a syslog.
struct Setup {
    server: TcpListener,
    log: Syslog,
    sock: std::path::PathBuf,
    port: u16,
    w: Weir,
}

impl Setup {
    fn start(name: &str, timeouts: &str) -> Setup {
        let server = TcpListener::bind("127.0.0.1:0").unwrap();
        let log = Syslog::start();
        let sock = tempdir(name).join("admin.sock");
        let port = free_port();
        let sport = server.local_addr().unwrap().port();
        let w = Weir::start(&cfg(&sock, port, sport, log.port(), timeouts), port);
        Setup {
            server,
            log,
            sock,
            port,
            w,
        }
    }
    fn open(&self) -> Pair {
        Pair::open(self.port, &self.server)
    }
}

/// A client through weir and the server side of its connection.
struct Pair {
    c: TcpStream,
    s: TcpStream,
    src: String,
}

impl Pair {
    fn open(port: u16, server: &TcpListener) -> Pair {
        let c = TcpStream::connect(("127.0.0.1", port)).unwrap();
        let (s, _) = server.accept().unwrap();
        for t in [&c, &s] {
            t.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        }
        let src = c.local_addr().unwrap().to_string();
        Pair { c, s, src }
    }
}

fn read_exact(t: &mut TcpStream, n: usize) -> Vec<u8> {
    let mut b = vec![0u8; n];
    t.read_exact(&mut b).unwrap();
    b
}

/// Reads until the connection ends (a FIN, or a reset).
fn ended(t: &mut TcpStream) -> bool {
    let mut b = [0u8; 64];
    loop {
        match t.read(&mut b) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(e) => return e.kind() == std::io::ErrorKind::ConnectionReset,
        }
    }
}

#[test]
fn a_sleeping_tcp_session_forwards_on_both_ways_and_logs_once() {
    let st = Setup::start(
        "tcp-sleep",
        "    timeout client 30s\n    timeout server 30s",
    );
    let (sock, log) = (&st.sock, &st.log);

    let mut p = st.open();
    p.c.write_all(b"hello").unwrap();
    assert_eq!(read_exact(&mut p.s, 5), b"hello");
    let line = sess_line(sock, &p.src, " asleep=1 ");
    assert!(line.contains(" fe=px "), "{line}");

    // The server speaks first after the sleep: it wakes the session.
    p.s.write_all(b"from the server").unwrap();
    assert_eq!(read_exact(&mut p.c, 15), b"from the server");
    // Asleep again, then woken by the client.
    sess_line(sock, &p.src, " asleep=1 ");
    p.c.write_all(b"again!").unwrap();
    assert_eq!(read_exact(&mut p.s, 6), b"again!");
    // A sleep is not a timeout: the session is still there, asleep.
    sess_line(sock, &p.src, " asleep=1 ");

    // Both close; one log line with the bytes of every waking period.
    drop(p.c);
    assert!(ended(&mut p.s));
    drop(p.s);
    let line = log.wait_line(&format!("{} ", p.src), Duration::from_secs(5));
    assert!(line.contains(" px px/s1 "), "{line}");
    assert!(
        line.contains(" 15 -- "),
        "bytes to the client, then the state: {line}"
    );
    assert_eq!(
        log.lines
            .lock()
            .unwrap()
            .iter()
            .filter(|l| l.contains(&p.src))
            .count(),
        1,
        "one log line"
    );
    let stat = ask(sock, "show stat\n");
    let fe = stat
        .lines()
        .find(|l| l.starts_with("px,FRONTEND,"))
        .unwrap();
    let f: Vec<&str> = fe.split(',').collect();
    assert_eq!(f[8], "11", "bytes in: {fe}");
    assert_eq!(f[9], "15", "bytes out: {fe}");
}

#[test]
fn a_sleeping_tcp_session_keeps_its_timeout() {
    let st = Setup::start(
        "tcp-sleep-timeout",
        "    timeout client 1200ms\n    timeout server 30s",
    );
    let (sock, log) = (&st.sock, &st.log);
    let mut p = st.open();
    p.c.write_all(b"x").unwrap();
    read_exact(&mut p.s, 1);
    let t0 = Instant::now();
    sess_line(sock, &p.src, " asleep=1 ");
    assert!(ended(&mut p.c), "the idle client was closed");
    let waited = t0.elapsed();
    assert!(
        waited >= Duration::from_millis(1100) && waited < Duration::from_secs(4),
        "closed after {waited:?}"
    );
    let line = log.wait_line(&format!("{} ", p.src), Duration::from_secs(5));
    assert!(line.contains(" cD "), "a client timeout: {line}");
}

#[test]
fn kills_end_sleeping_tcp_sessions() {
    let st = Setup::start(
        "tcp-sleep-kill",
        "    timeout client 30s\n    timeout server 30s",
    );
    let (sock, log) = (&st.sock, &st.log);

    // `shutdown session`.
    let mut a = st.open();
    a.c.write_all(b"a").unwrap();
    read_exact(&mut a.s, 1);
    let line = sess_line(sock, &a.src, " asleep=1 ");
    let id = line.split(':').next().unwrap();
    ask(sock, &format!("shutdown session {id}\n"));
    assert!(ended(&mut a.c));
    assert!(ended(&mut a.s));
    let l = log.wait_line(&format!("{} ", a.src), Duration::from_secs(5));
    assert!(l.contains(" KD "), "{l}");

    // `shutdown sessions server`: every session of the server, asleep or
    // not.
    let mut b = st.open();
    let mut c = st.open();
    for p in [&mut b, &mut c] {
        p.c.write_all(b"b").unwrap();
        read_exact(&mut p.s, 1);
        sess_line(sock, &p.src, " asleep=1 ");
    }
    ask(sock, "shutdown sessions server px/s1\n");
    for p in [&mut b, &mut c] {
        assert!(ended(&mut p.c));
        let l = log.wait_line(&format!("{} ", p.src), Duration::from_secs(5));
        assert!(l.contains(" DD "), "{l}");
    }
}

/// CPU time (user and system, in clock ticks) weir has used so far.
fn cpu_ticks(pid: i32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    let f: Vec<&str> = after.split(' ').collect();
    f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap()
}

#[test]
fn clients_leaving_while_asleep_end_their_sessions_quietly() {
    let st = Setup::start(
        "tcp-sleep-leave",
        "    timeout client 30s\n    timeout server 30s",
    );
    let sock = &st.sock;
    let mut pairs: Vec<Pair> = (0..50).map(|_| st.open()).collect();
    for p in &pairs {
        sess_line(sock, &p.src, " asleep=1 ");
    }
    let before = cpu_ticks(st.w.pid());
    // Each client leaves: its server sees the close passed on, then leaves
    // too, and the session ends (woken by the close, not by a timeout).
    for p in &mut pairs {
        p.c.shutdown(std::net::Shutdown::Both).unwrap();
    }
    for p in &mut pairs {
        assert!(ended(&mut p.s), "the close reached the server");
    }
    drop(pairs);
    wait_for("every session to end", Duration::from_secs(5), || {
        (!ask(sock, "show sess\n").contains(" fe=px ")).then_some(())
    });
    // Woken sessions do not go back to sleep before they read what woke
    // them (they would be woken again at once, round and round).
    std::thread::sleep(Duration::from_millis(500));
    let used = cpu_ticks(st.w.pid()) - before;
    assert!(used < 50, "weir used {used} ticks of CPU for 50 closes");
}

#[test]
fn a_sleeping_tls_offload_session_keeps_its_keys() {
    use crate::common::tls::Pki;
    let pki = Pki::new();
    let server = TcpListener::bind("127.0.0.1:0").unwrap();
    let dir = tempdir("tcp-sleep-tls");
    let sock = dir.join("admin.sock");
    let port = free_port();
    let sport = server.local_addr().unwrap().port();
    // seed 004's TLS offload for a non-HTTP protocol: `mode tcp` with
    // `ssl` on the bind line.
    let cfg = format!(
        "global\n    nbthread 1\n    stats socket {} level admin\n\
         defaults\n    mode tcp\n    timeout connect 1s\n    timeout client 30s\n    timeout server 30s\n\
         listen mqtt\n    bind 127.0.0.1:{port} ssl crt {}\n    server s1 127.0.0.1:{sport}\n",
        sock.display(),
        pki.path("certs")
    );
    let _w = Weir::start(&cfg, port);
    let mut s = crate::common::tls::SClient::start(port, "www.test");
    s.stdin.write_all(b"CONNECT\n").unwrap();
    let (mut srv, _) = server.accept().unwrap();
    srv.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    assert_eq!(read_exact(&mut srv, 8), b"CONNECT\n");
    let asleep = || {
        wait_for("the TLS session asleep", Duration::from_secs(5), || {
            ask(&sock, "show sess\n")
                .lines()
                .any(|l| l.contains(" fe=mqtt ") && l.contains(" asleep=1 "))
                .then_some(())
        })
    };
    asleep();
    // The server wakes it: weir seals with the keys it set aside.
    srv.write_all(b"CONNACK\n").unwrap();
    wait_for("the CONNACK", Duration::from_secs(5), || {
        s.text().contains("CONNACK\n").then_some(())
    });
    asleep();
    // The client wakes it: weir opens with them.
    s.stdin.write_all(b"PUBLISH\n").unwrap();
    assert_eq!(read_exact(&mut srv, 8), b"PUBLISH\n");
}

/// A small deterministic generator for the soak below.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

#[test]
fn sessions_sleeping_and_waking_at_random_lose_nothing() {
    let st = Setup::start(
        "tcp-sleep-soak",
        "    timeout client 30s\n    timeout server 30s",
    );
    let mut rng = Lcg(7);
    let mut pairs: Vec<Pair> = (0..60).map(|_| st.open()).collect();
    let (mut moved, mut reopened) = (0usize, 0usize);
    // Bounded: four seconds of random steps, with pauses long enough for
    // the idle pairs' sessions to fall asleep between two of their steps.
    let end = Instant::now() + Duration::from_secs(4);
    while Instant::now() < end {
        let i = rng.next(pairs.len() as u64) as usize;
        let n = 1 + rng.next(3000) as usize;
        let p = &mut pairs[i];
        match rng.next(11) {
            0..=3 => {
                let data = random_bytes(n, moved as u64);
                p.c.write_all(&data).unwrap();
                assert_eq!(read_exact(&mut p.s, n), data, "client to server");
            }
            4..=7 => {
                let data = random_bytes(n, moved as u64 + 1);
                p.s.write_all(&data).unwrap();
                assert_eq!(read_exact(&mut p.c, n), data, "server to client");
            }
            8 => {
                // Both sides at once (two events for one sleeping slot).
                let (up, down) = (random_bytes(n, 3), random_bytes(n, 4));
                p.c.write_all(&up).unwrap();
                p.s.write_all(&down).unwrap();
                assert_eq!(read_exact(&mut p.s, n), up, "both ways, up");
                assert_eq!(read_exact(&mut p.c, n), down, "both ways, down");
            }
            9 => {
                p.c.shutdown(std::net::Shutdown::Write).unwrap();
                assert!(ended(&mut p.s), "the client's close reached the server");
                pairs[i] = st.open();
                reopened += 1;
            }
            _ => {
                p.s.shutdown(std::net::Shutdown::Write).unwrap();
                assert!(ended(&mut p.c), "the server's close reached the client");
                pairs[i] = st.open();
                reopened += 1;
            }
        }
        moved += n;
        std::thread::sleep(Duration::from_millis(rng.next(15)));
    }
    assert!(reopened > 10, "{reopened} sessions ended and were replaced");
    let asleep = ask(&st.sock, "show sess\n").matches(" asleep=1 ").count();
    assert!(asleep > 0, "some sessions were asleep at the end");
    drop(pairs);
    wait_for("every session to end", Duration::from_secs(5), || {
        (!ask(&st.sock, "show sess\n").contains(" fe=px ")).then_some(())
    });
    let before = cpu_ticks(st.w.pid());
    std::thread::sleep(Duration::from_millis(500));
    let used = cpu_ticks(st.w.pid()) - before;
    assert!(used < 10, "weir used {used} ticks while idle");
}

#[test]
fn both_sides_waking_a_sleeper_at_once_leave_the_lot_sound() {
    let st = Setup::start(
        "tcp-sleep-both",
        "    timeout client 30s\n    timeout server 30s",
    );
    for round in 0..5 {
        // Both sockets of one sleeper become readable together: the lot
        // sees two events for one slot.
        let mut a = st.open();
        sess_line(&st.sock, &a.src, " asleep=1 ");
        a.c.write_all(b"ping").unwrap();
        a.s.write_all(b"pong").unwrap();
        assert_eq!(read_exact(&mut a.s, 4), b"ping", "round {round}");
        assert_eq!(read_exact(&mut a.c, 4), b"pong", "round {round}");
        // Two sessions that fall asleep after it still get a slot each.
        let mut b = st.open();
        let mut c = st.open();
        sess_line(&st.sock, &b.src, " asleep=1 ");
        sess_line(&st.sock, &c.src, " asleep=1 ");
        b.c.write_all(b"to b").unwrap();
        assert_eq!(read_exact(&mut b.s, 4), b"to b", "round {round}");
        c.s.write_all(b"to c").unwrap();
        assert_eq!(read_exact(&mut c.c, 4), b"to c", "round {round}");
    }
}
