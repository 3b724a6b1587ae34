//! `mode tcp` forwarding: payloads both ways, half-close, timeouts, resets,
//! unix and IPv6 servers, splice, TCP keep-alive probes (`option
//! clitcpka|srvtcpka` with `*tcpka-idle|intvl|cnt`, read back with `ss`),
//! a proxy's `source` for its servers.

use crate::common::*;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::time::{Duration, Instant};

fn roundtrip(port: u16, payload: &[u8]) -> Vec<u8> {
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut w = c.try_clone().unwrap();
    let data = payload.to_vec();
    let writer = std::thread::spawn(move || {
        w.write_all(&data).unwrap();
        w.shutdown(Shutdown::Write).unwrap();
    });
    let mut got = Vec::new();
    c.read_to_end(&mut got).unwrap();
    writer.join().unwrap();
    got
}

fn payload_both_ways(extra: &str) {
    let srv = Server::echo();
    let port = free_port();
    let cfg = listen_cfg(
        port,
        "",
        extra,
        &format!("    server s1 127.0.0.1:{}", srv.port()),
    );
    let _w = Weir::start(&cfg, port);
    for (size, seed) in [(1usize, 1u64), (100_000, 2), (8 << 20, 3)] {
        let data = random_bytes(size, seed);
        let got = roundtrip(port, &data);
        assert_eq!(got.len(), data.len(), "size {size}");
        assert!(got == data, "payload of {size} bytes corrupted");
    }
}

#[test]
fn large_random_payloads_both_ways_buffers() {
    payload_both_ways("");
}

#[test]
fn large_random_payloads_both_ways_splice() {
    payload_both_ways("    option splice-auto");
}

#[test]
fn half_close_is_passed_on_and_the_other_direction_continues() {
    // The server answers only after it has seen the client's FIN.
    let srv = Server::start(|mut c| {
        let mut all = Vec::new();
        c.read_to_end(&mut all).unwrap();
        let reply = format!("got {} bytes after your FIN", all.len());
        std::thread::sleep(Duration::from_millis(50));
        c.write_all(reply.as_bytes()).unwrap();
    });
    let (_w, port) = proxy_to("s1", srv.port(), "");
    let mut c = client(port);
    c.write_all(&[7u8; 5000]).unwrap();
    c.shutdown(Shutdown::Write).unwrap();
    let mut s = String::new();
    c.read_to_string(&mut s).unwrap();
    assert_eq!(s, "got 5000 bytes after your FIN");
}

#[test]
fn server_half_close_keeps_client_to_server_open() {
    // The server sends a banner and shuts its write side, then keeps reading.
    let (tx, rx) = std::sync::mpsc::channel::<usize>();
    let tx = std::sync::Mutex::new(tx);
    let srv = Server::start(move |mut c| {
        c.write_all(b"banner").unwrap();
        c.shutdown(Shutdown::Write).unwrap();
        let mut all = Vec::new();
        c.read_to_end(&mut all).unwrap();
        tx.lock().unwrap().send(all.len()).unwrap();
    });
    let (_w, port) = proxy_to("s1", srv.port(), "");
    let mut c = client(port);
    let mut s = String::new();
    c.read_to_string(&mut s).unwrap();
    assert_eq!(s, "banner", "EOF from the server reaches the client");
    c.write_all(&[1u8; 3000]).unwrap();
    c.shutdown(Shutdown::Write).unwrap();
    // (the harness's readiness probe also reached the server, with 0 bytes)
    let got = wait_for(
        "the server to see the client's bytes",
        Duration::from_secs(5),
        || rx.try_iter().find(|&n| n > 0),
    );
    assert_eq!(got, 3000);
}

#[test]
fn client_timeout_closes_idle_connection() {
    let srv = Server::start(|mut c| {
        let mut b = [0u8; 16];
        let _ = c.read(&mut b);
    });
    let port = free_port();
    let cfg = format!(
        "{LOG_TCP}  timeout connect 1s\n  timeout client 300ms\n  timeout server 10s\n\
         listen px\n  bind 127.0.0.1:{port}\n  server s1 127.0.0.1:{}\n",
        srv.port()
    );
    let w = Weir::start(&cfg, port);
    let mut c = client(port);
    let t = Instant::now();
    let mut b = [0u8; 8];
    let n = c.read(&mut b).unwrap_or(0);
    assert_eq!(n, 0);
    let e = t.elapsed();
    assert!(
        e >= Duration::from_millis(250) && e < Duration::from_secs(3),
        "{e:?}"
    );
    let out = w.wait_output(" cD ", Duration::from_secs(3));
    assert!(out.contains("px px/s1"), "{out}");
}

#[test]
fn server_timeout_and_tunnel_timeout() {
    let srv = Server::start(|mut c| {
        let mut b = [0u8; 16];
        let _ = c.read(&mut b);
        std::thread::sleep(Duration::from_secs(5));
    });
    let port = free_port();
    let cfg = format!(
        "{LOG_TCP}  timeout connect 1s\n  timeout client 10s\n  timeout server 300ms\n\
         listen px\n  bind 127.0.0.1:{port}\n  server s1 127.0.0.1:{}\n",
        srv.port()
    );
    let w = Weir::start(&cfg, port);
    let mut c = client(port);
    c.write_all(b"x").unwrap();
    let mut b = [0u8; 8];
    assert_eq!(c.read(&mut b).unwrap_or(0), 0);
    w.wait_output(" sD ", Duration::from_secs(3));

    // `timeout tunnel` supersedes both: a 300ms client timeout does not fire
    // while the tunnel timeout (1s) has not expired, as long as data flows.
    let echo = Server::echo();
    let port = free_port();
    let cfg = format!(
        "defaults\n  mode tcp\n  timeout connect 1s\n  timeout client 300ms\n  timeout server 300ms\n  timeout tunnel 1s\n\
         listen px\n  bind 127.0.0.1:{port}\n  server s1 127.0.0.1:{}\n",
        echo.port()
    );
    let _w = Weir::start(&cfg, port);
    let mut c = client(port);
    std::thread::sleep(Duration::from_millis(600));
    c.write_all(b"still-here").unwrap();
    let mut b = [0u8; 10];
    c.read_exact(&mut b).unwrap();
    assert_eq!(&b, b"still-here");
    let t = Instant::now();
    assert_eq!(c.read(&mut b).unwrap_or(0), 0);
    assert!(
        t.elapsed() >= Duration::from_millis(800),
        "{:?}",
        t.elapsed()
    );
}

#[test]
fn client_reset_is_logged_and_others_unaffected() {
    let srv = Server::echo();
    let port = free_port();
    let cfg = format!(
        "{LOG_TCP}  timeout connect 1s\n  timeout client 10s\n  timeout server 10s\n\
         listen px\n  bind 127.0.0.1:{port}\n  server s1 127.0.0.1:{}\n",
        srv.port()
    );
    let w = Weir::start(&cfg, port);
    let mut other = TcpStream::connect(("127.0.0.1", port)).unwrap();
    other
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    (&c).write_all(b"hello").unwrap();
    let mut b = [0u8; 5];
    (&c).read_exact(&mut b).unwrap();
    socket2::SockRef::from(&c)
        .set_linger(Some(Duration::ZERO))
        .unwrap();
    drop(c);
    w.wait_output(" CD ", Duration::from_secs(3));
    other.write_all(b"alive").unwrap();
    other.read_exact(&mut b).unwrap();
    assert_eq!(&b, b"alive");
}

#[test]
fn unix_socket_server_and_bind() {
    let dir = tempdir("unix");
    let spath = dir.join("srv.sock");
    let l = std::os::unix::net::UnixListener::bind(&spath).unwrap();
    std::thread::spawn(move || {
        for c in l.incoming() {
            let mut c = c.unwrap();
            std::thread::spawn(move || {
                let mut b = [0u8; 64];
                let n = c.read(&mut b).unwrap();
                c.write_all(&b[..n]).unwrap();
            });
        }
    });
    let port = free_port();
    let fpath = dir.join("front.sock");
    // As root (the tests' usual case) the socket can be given away.
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let owner = if root { " uid 65534 group nogroup" } else { "" };
    let cfg = format!(
        "defaults\n  mode tcp\n  timeout connect 1s\n  timeout client 5s\n  timeout server 5s\n\
         listen px\n  bind 127.0.0.1:{port}\n  bind unix@{} mode 600{owner}\n  server s1 {}\n",
        fpath.display(),
        spath.display()
    );
    let _w = Weir::start(&cfg, port);
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.write_all(b"via-tcp").unwrap();
    let mut b = [0u8; 7];
    c.read_exact(&mut b).unwrap();
    assert_eq!(&b, b"via-tcp");
    let mut u = std::os::unix::net::UnixStream::connect(&fpath).unwrap();
    u.write_all(b"via-unix").unwrap();
    let mut b = [0u8; 8];
    u.read_exact(&mut b).unwrap();
    assert_eq!(&b, b"via-unix");
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let meta = std::fs::metadata(&fpath).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    if root {
        let nogroup = std::fs::read_to_string("/etc/group")
            .unwrap()
            .lines()
            .find_map(|l| {
                l.strip_prefix("nogroup:x:")?
                    .split(':')
                    .next()?
                    .parse()
                    .ok()
            })
            .unwrap_or(65534);
        assert_eq!((meta.uid(), meta.gid()), (65534, nogroup), "uid and group");
    }
}

#[test]
fn ipv6_server_and_bind() {
    let Ok(l) = std::net::TcpListener::bind("[::1]:0") else {
        eprintln!("no IPv6 loopback here; skipping");
        return;
    };
    let srv = Server::start_on(l, |mut c| {
        let _ = c.write_all(b"v6");
    });
    let port = free_port();
    let cfg = format!(
        "defaults\n  mode tcp\n  timeout connect 1s\n  timeout client 5s\n  timeout server 5s\n\
         listen px\n  bind 127.0.0.1:{port}\n  bind [::1]:{port}\n  server s1 [::1]:{}\n",
        srv.port()
    );
    let _w = Weir::start(&cfg, port);
    assert_eq!(fetch(port).unwrap(), "v6");
    let mut c = TcpStream::connect(("::1", port)).unwrap();
    let mut s = String::new();
    c.read_to_string(&mut s).unwrap();
    assert_eq!(s, "v6");
}

#[test]
fn slow_reader_gets_every_byte_in_order() {
    // The server pushes 4 MB as fast as it can; the client drains slowly, so
    // weir's writes to the client come up short and it must keep the rest.
    let data = random_bytes(4 << 20, 11);
    let body = data.clone();
    let srv = Server::start(move |mut c| {
        let _ = c.write_all(&body);
    });
    let (_w, port) = proxy_to("s1", srv.port(), "");
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut got = Vec::with_capacity(data.len());
    let mut b = vec![0u8; 7000];
    let mut reads = 0;
    loop {
        let n = c.read(&mut b).unwrap();
        if n == 0 {
            break;
        }
        got.extend_from_slice(&b[..n]);
        reads += 1;
        if reads % 64 == 0 && got.len() < (1 << 20) {
            // let weir's socket buffer fill while we dawdle
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    assert_eq!(got.len(), data.len());
    assert!(got == data, "slow reader got corrupted data");
}

fn tcplog_cfg(port: u16, timeouts: &str, server: &str) -> String {
    format!(
        "{LOG_TCP}{timeouts}\n\
         listen px\n  bind 127.0.0.1:{port}\n  server s1 {server}\n"
    )
}

#[test]
fn connect_timeout_is_logged_sc() {
    // A listener whose accept queue is full drops new SYNs: connects hang.
    let sock = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    sock.bind(
        &"127.0.0.1:0"
            .parse::<std::net::SocketAddr>()
            .unwrap()
            .into(),
    )
    .unwrap();
    sock.listen(0).unwrap();
    let addr = sock.local_addr().unwrap().as_socket().unwrap();
    let mut fillers = Vec::new();
    for _ in 0..4 {
        let s = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
        s.set_nonblocking(true).unwrap();
        let _ = s.connect(&addr.into());
        fillers.push(s);
    }
    let port = free_port();
    let cfg = tcplog_cfg(
        port,
        "  retries 0\n  timeout connect 200ms\n  timeout client 5s\n  timeout server 5s",
        &addr.to_string(),
    );
    let w = Weir::start(&cfg, port);
    let t = Instant::now();
    assert_eq!(fetch(port).unwrap(), "");
    assert!(
        t.elapsed() >= Duration::from_millis(180),
        "{:?}",
        t.elapsed()
    );
    let out = w.wait_output(" sC ", Duration::from_secs(3));
    assert!(
        out.contains("px px/s1 0/-1/"),
        "Tc is -1 when the connect never completed: {out}"
    );
    drop(sock);
}

#[test]
fn server_reset_is_logged_sd() {
    let srv = Server::start(|mut c| {
        let mut b = [0u8; 5];
        c.read_exact(&mut b).unwrap();
        socket2::SockRef::from(&c)
            .set_linger(Some(Duration::ZERO))
            .unwrap();
    });
    let port = free_port();
    let w = Weir::start(
        &tcplog_cfg(
            port,
            "  timeout connect 1s\n  timeout client 5s\n  timeout server 5s",
            &format!("127.0.0.1:{}", srv.port()),
        ),
        port,
    );
    let mut c = client(port);
    c.write_all(b"hello").unwrap();
    let mut b = [0u8; 4];
    assert!(matches!(c.read(&mut b), Ok(0) | Err(_)));
    w.wait_output(" SD ", Duration::from_secs(3));
}

#[test]
fn client_fin_timeout_applies_once_half_closed() {
    // The server never answers; once the client has sent its FIN, the
    // shorter `timeout client-fin`/`server-fin` apply instead of 10s.
    let srv = Server::start(|mut c| {
        let mut all = Vec::new();
        let _ = c.read_to_end(&mut all);
        std::thread::sleep(Duration::from_secs(10));
    });
    let port = free_port();
    let cfg = tcplog_cfg(
        port,
        "  timeout connect 1s\n  timeout client 10s\n  timeout server 10s\n  timeout client-fin 300ms\n  timeout server-fin 300ms",
        &format!("127.0.0.1:{}", srv.port()),
    );
    let w = Weir::start(&cfg, port);
    let mut c = client(port);
    c.write_all(b"bye").unwrap();
    c.shutdown(Shutdown::Write).unwrap();
    let t = Instant::now();
    let mut b = [0u8; 4];
    assert_eq!(c.read(&mut b).unwrap_or(0), 0);
    let e = t.elapsed();
    assert!(
        e >= Duration::from_millis(250) && e < Duration::from_secs(3),
        "{e:?}"
    );
    let out = w.wait_output(" px/s1 ", Duration::from_secs(3));
    assert!(out.contains(" sD ") || out.contains(" cD "), "{out}");
}

#[test]
fn bind_mss_is_announced_to_clients() {
    use std::os::fd::AsRawFd;
    let srv = Server::named("m");
    let port = free_port();
    let cfg = format!(
        "defaults\n  mode tcp\n  timeout connect 1s\n  timeout client 5s\n  timeout server 5s\n\
         listen px\n  bind 127.0.0.1:{port} mss 1000 tcp-ut 20s\n  server s1 127.0.0.1:{}\n",
        srv.port()
    );
    let _w = Weir::start(&cfg, port);
    let c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let mut mss: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: getsockopt writes an int into `mss`, whose size we pass.
    let rc = unsafe {
        libc::getsockopt(
            c.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_MAXSEG,
            (&mut mss as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    assert_eq!(rc, 0);
    assert!(
        mss > 0 && mss <= 1000,
        "client's MSS follows the listener's: {mss}"
    );
}

/// The keep-alive timer `ss` shows on the established sockets matching
/// `filter` (seconds left before the next probe), once one shows it.
fn keepalive_timer(filter: &str) -> f64 {
    wait_for(
        &format!("a keepalive timer on {filter}"),
        Duration::from_secs(5),
        || {
            let o = std::process::Command::new("ss")
                .args(["-tnoH", "state", "established", filter])
                .output()
                .expect("ss (iproute2) runs");
            let text = String::from_utf8_lossy(&o.stdout).into_owned();
            let t = text.split("timer:(keepalive,").nth(1)?;
            let v = t.split(',').next()?;
            // Seconds: `119min` for the system's 2 hours; Debian 12's ss
            // writes seconds under a minute as `5.996ms`, others as `5.9sec`.
            if let Some(m) = v.strip_suffix("min") {
                m.parse::<f64>().ok().map(|m| m * 60.0)
            } else {
                v.trim_end_matches(|c: char| c.is_ascii_alphabetic())
                    .parse()
                    .ok()
            }
        },
    )
}

#[test]
fn tcp_keepalive_probes_follow_the_tcpka_settings() {
    // The server holds the connection until the client leaves.
    let srv = Server::start(|mut c| {
        let mut all = Vec::new();
        let _ = c.read_to_end(&mut all);
    });
    let port = free_port();
    let cfg = listen_cfg(
        port,
        "",
        "    option clitcpka\n    option srvtcpka\n    clitcpka-idle 7s\n    clitcpka-intvl 3\n    clitcpka-cnt 4\n    srvtcpka-idle 9\n",
        &format!("    server s 127.0.0.1:{}", srv.port()),
    );
    let _w = Weir::start(&cfg, port);
    let mut c = client(port);
    c.write_all(b"x").unwrap();
    // weir's side of the client connection, then of the server's.
    let cli = keepalive_timer(&format!("( sport = :{port} )"));
    assert!(cli > 0.0 && cli <= 7.0, "client side: {cli}s");
    let srv_side = keepalive_timer(&format!("( dport = :{} )", srv.port()));
    assert!(
        srv_side > 7.0 && srv_side <= 9.0,
        "server side: {srv_side}s"
    );
    drop(c);
}

#[test]
fn a_proxys_source_goes_to_servers_without_their_own() {
    // The server says which address the connection came from.
    let srv = Server::start(|mut c| {
        let peer = c
            .peer_addr()
            .map(|a| a.ip().to_string())
            .unwrap_or_default();
        let _ = c.write_all(peer.as_bytes());
    });
    let port = free_port();
    let cfg = listen_cfg(
        port,
        "",
        "    balance roundrobin\n    source 127.0.0.2\n",
        &format!(
            "    server a 127.0.0.1:{p}\n    server b 127.0.0.1:{p} source 127.0.0.3",
            p = srv.port()
        ),
    );
    let _w = Weir::start(&cfg, port);
    let mut seen: Vec<String> = (0..2)
        .map(|_| {
            let mut s = String::new();
            let _ = client(port).read_to_string(&mut s);
            s
        })
        .collect();
    seen.sort();
    assert_eq!(seen, ["127.0.0.2", "127.0.0.3"]);
}
