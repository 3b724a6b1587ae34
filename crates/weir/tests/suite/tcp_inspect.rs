//! `tcp-request content` inspection in `mode tcp` through the real binary,
//! beside haproxy 2.6 on the same configuration: routing by the SNI of a
//! real TLS ClientHello (made by rustls), by whether the bytes are HTTP,
//! by a length-prefixed field; rejecting on a payload; waiting for a
//! request that comes in pieces, and deciding at `inspect-delay` on one
//! that never completes.

use crate::common::*;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn cfg(port: u16, servers: &[(&str, u16)]) -> String {
    let mut c = format!(
        "defaults\n    mode tcp\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         frontend fe\n    bind 127.0.0.1:{port}\n    tcp-request inspect-delay 1s\n\
         \x20   tcp-request content reject if {{ req.payload(0,4) -m bin 44454e59 }}\n\
         \x20   tcp-request content accept if {{ req_ssl_hello_type 1 }}\n\
         \x20   tcp-request content accept if HTTP\n\
         \x20   tcp-request content accept if {{ req.payload_lv(0,1) -m found }}\n\
         \x20   use_backend a if {{ req_ssl_sni -i a.example.com }}\n\
         \x20   use_backend b if {{ req.ssl_sni -m end .b.example.com }}\n\
         \x20   use_backend http if HTTP\n\
         \x20   use_backend lv if {{ req.payload_lv(0,1) -m bin 616263 }}\n\
         \x20   default_backend other\n"
    );
    for (name, p) in servers {
        c.push_str(&format!("backend {name}\n    server s 127.0.0.1:{p}\n"));
    }
    c
}

/// A ClientHello for `sni`, as rustls sends it.
fn client_hello(sni: &str) -> Vec<u8> {
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let cfg = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(rustls::RootCertStore::empty())
        .with_no_client_auth();
    let name = rustls::pki_types::ServerName::try_from(sni.to_string()).unwrap();
    let mut c = rustls::ClientConnection::new(Arc::new(cfg), name).unwrap();
    let mut out = Vec::new();
    c.write_tls(&mut out).unwrap();
    out
}

/// Sends `parts` (pausing `gap` between them) and reads what comes back
/// until the connection closes.
fn exchange(port: u16, parts: &[&[u8]], gap: Duration) -> String {
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            std::thread::sleep(gap);
        }
        let _ = c.write_all(p);
    }
    let mut got = Vec::new();
    let _ = c.read_to_end(&mut got);
    String::from_utf8_lossy(&got).into_owned()
}

#[test]
fn content_inspection_as_haproxy() {
    let names = ["a", "b", "http", "lv", "other"];
    let servers: Vec<Server> = names.iter().map(|n| Server::named(n)).collect();
    let sp: Vec<(&str, u16)> = names
        .iter()
        .zip(&servers)
        .map(|(n, s)| (*n, s.port()))
        .collect();
    let (wp, hp) = (free_port(), free_port());
    let Some(_h) = Haproxy::start(&cfg(hp, &sp), hp) else {
        panic!("haproxy is not installed: tests/run installs it");
    };
    let _w = Weir::start(&cfg(wp, &sp), wp);
    let a = client_hello("a.example.com");
    let b = client_hello("www.b.example.com");
    let c = client_hello("c.example.com");
    let get: &[u8] = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n";
    let gap = Duration::from_millis(200);
    let cases: Vec<(&str, Vec<&[u8]>, &str)> = vec![
        ("sni a", vec![&a], "a"),
        ("sni *.b", vec![&b], "b"),
        ("sni c", vec![&c], "other"),
        ("hello in two pieces", vec![&a[..10], &a[10..]], "a"),
        ("http", vec![get], "http"),
        (
            "http in pieces",
            vec![&get[..9], &get[9..20], &get[20..]],
            "http",
        ),
        ("length-value", vec![b"\x03abcdef"], "lv"),
        ("refused", vec![b"DENY me"], ""),
    ];
    for (what, parts, want) in &cases {
        let ours = exchange(wp, parts, gap);
        let theirs = exchange(hp, parts, gap);
        assert_eq!(ours, theirs, "{what}: weir against haproxy");
        assert_eq!(ours, *want, "{what}");
    }
    // A request that never completes is decided when the delay ends.
    let t0 = Instant::now();
    assert_eq!(exchange(wp, &[b"GET / HT"], gap), "other");
    let waited = t0.elapsed();
    assert!(
        waited >= Duration::from_millis(900) && waited < Duration::from_secs(3),
        "{waited:?}"
    );
    assert_eq!(exchange(hp, &[b"GET / HT"], gap), "other");
}

/// A server that answers the line it gets: `greet` at once, `part` in
/// two pieces, `bad` wrongly, `silent` with one byte and then nothing.
fn banner_server() -> Server {
    Server::start(|mut c| {
        let mut line = Vec::new();
        let mut b = [0u8; 1];
        while c.read(&mut b).is_ok_and(|n| n == 1) && b[0] != b'\n' {
            line.push(b[0]);
        }
        let pause = Duration::from_millis(300);
        match line.as_slice() {
            b"greet" => {
                let _ = c.write_all(b"OK hello");
            }
            b"part" => {
                let _ = c.write_all(b"O");
                std::thread::sleep(pause);
                let _ = c.write_all(b"K rest");
            }
            b"bad" => {
                let _ = c.write_all(b"NO");
            }
            _ => {
                let _ = c.write_all(b"x");
                std::thread::sleep(Duration::from_secs(2));
            }
        }
    })
}

#[test]
fn response_inspection_as_haproxy() {
    let srv = banner_server();
    let cfg = |port: u16| {
        format!(
            "defaults\n    mode tcp\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
             listen li\n    bind 127.0.0.1:{port}\n    tcp-response inspect-delay 1s\n\
             \x20   tcp-response content accept if {{ res.payload(0,2) -m str OK }}\n\
             \x20   tcp-response content reject if {{ res.len gt 0 }}\n\
             \x20   server s 127.0.0.1:{}\n",
            srv.port()
        )
    };
    let (wp, hp) = (free_port(), free_port());
    let Some(_h) = Haproxy::start(&cfg(hp), hp) else {
        panic!("haproxy is not installed: tests/run installs it");
    };
    let _w = Weir::start(&cfg(wp), wp);
    let gap = Duration::ZERO;
    for (line, want) in [
        (&b"greet\n"[..], "OK hello"),
        (b"part\n", "OK rest"),
        (b"bad\n", ""),
    ] {
        let ours = exchange(wp, &[line], gap);
        assert_eq!(ours, exchange(hp, &[line], gap), "weir against haproxy");
        assert_eq!(ours, want);
    }
    // A reply that never decides the rule is judged when the delay ends.
    let t0 = Instant::now();
    assert_eq!(exchange(wp, &[b"silent\n"], gap), "");
    let waited = t0.elapsed();
    assert!(
        waited >= Duration::from_millis(900) && waited < Duration::from_millis(1900),
        "{waited:?}"
    );
    assert_eq!(exchange(hp, &[b"silent\n"], gap), "");
}

/// An MQTT CONNECT: protocol level `level`, a client id, and with `user`
/// a user name and (MQTT 5.0) a maximum packet size property of 4096.
fn mqtt_connect(level: u8, user: Option<&str>) -> Vec<u8> {
    let data = |b: &[u8]| {
        let mut v = (b.len() as u16).to_be_bytes().to_vec();
        v.extend_from_slice(b);
        v
    };
    let mut b = data(b"MQTT");
    b.extend([level, if user.is_some() { 0x82 } else { 0x02 }, 0, 60]);
    if level == 5 {
        b.extend([5, 0x27, 0, 0, 0x10, 0]);
    }
    b.extend(data(b"sensor-1"));
    if let Some(u) = user {
        b.extend(data(u.as_bytes()));
    }
    let mut m = vec![0x10, b.len() as u8];
    m.extend(b);
    m
}

#[test]
fn mqtt_converters_as_haproxy() {
    let names = ["a", "other"];
    let servers: Vec<Server> = names.iter().map(|n| Server::named(n)).collect();
    let cfg = |port: u16| {
        format!(
            "defaults\n    mode tcp\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
             frontend fe\n    bind 127.0.0.1:{port}\n    tcp-request inspect-delay 3s\n\
             \x20   tcp-request content reject unless {{ req.payload(0,0),mqtt_is_valid }}\n\
             \x20   tcp-request content set-var(sess.u) req.payload(0,0),mqtt_field_value(connect,username)\n\
             \x20   tcp-request content set-var(sess.m) req.payload(0,0),mqtt_field_value(1,39)\n\
             \x20   use_backend a if {{ var(sess.u) -m str alice }} {{ var(sess.m) -m str 4096 }}\n\
             \x20   default_backend other\n\
             backend a\n    server s 127.0.0.1:{}\nbackend other\n    server s 127.0.0.1:{}\n",
            servers[0].port(),
            servers[1].port()
        )
    };
    let (wp, hp) = (free_port(), free_port());
    let Some(_h) = Haproxy::start(&cfg(hp), hp) else {
        panic!("haproxy is not installed: tests/run installs it");
    };
    let _w = Weir::start(&cfg(wp), wp);
    let v5 = mqtt_connect(5, Some("alice"));
    let v4 = mqtt_connect(4, None);
    let mut flagged = v4.clone();
    flagged[0] = 0x11;
    let gap = Duration::from_millis(200);
    let t0 = Instant::now();
    for (what, parts, want) in [
        ("v5 with user", vec![&v5[..]], "a"),
        ("v5 in two pieces", vec![&v5[..9], &v5[9..]], "a"),
        ("v3.1.1 without user", vec![&v4[..]], "other"),
        ("PINGREQ", vec![&[0xc0u8, 0][..]], ""),
        ("header flags", vec![&flagged[..]], ""),
    ] {
        let ours = exchange(wp, &parts, gap);
        assert_eq!(
            ours,
            exchange(hp, &parts, gap),
            "{what}: weir against haproxy"
        );
        assert_eq!(ours, want, "{what}");
    }
    // A bad packet is refused at once, not at the end of the delay.
    assert!(t0.elapsed() < Duration::from_secs(3), "{:?}", t0.elapsed());
}

/// A client that sends more than the server takes while the response
/// rules wait: every byte reaches the server once (what did not go
/// during the inspection goes with the forwarding, none twice).
#[test]
fn response_inspection_loses_and_repeats_no_client_byte() {
    const SIZE: usize = 16 << 20;
    let srv = Server::start(|mut c| {
        // Nothing read (nor said) before the inspection ends.
        std::thread::sleep(Duration::from_millis(1500));
        let mut got = Vec::new();
        let _ = c.read_to_end(&mut got);
        let sum: u64 = got.iter().map(|&b| u64::from(b)).sum();
        let _ = c.write_all(format!("got {} {sum}", got.len()).as_bytes());
    });
    let port = free_port();
    let cfg = format!(
        "defaults\n    mode tcp\n    timeout connect 1s\n    timeout client 10s\n    timeout server 10s\n\
         listen li\n    bind 127.0.0.1:{port}\n    tcp-response inspect-delay 1s\n\
         \x20   tcp-response content accept if {{ res.len gt 0 }}\n\
         \x20   server s 127.0.0.1:{}\n",
        srv.port()
    );
    let _w = Weir::start(&cfg, port);
    let data: Vec<u8> = (0..SIZE).map(|i| (i % 251) as u8).collect();
    let want_sum: u64 = data.iter().map(|&b| u64::from(b)).sum();
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut w = c.try_clone().unwrap();
    let sender = std::thread::spawn(move || {
        let _ = w.write_all(&data);
        let _ = w.shutdown(std::net::Shutdown::Write);
    });
    let mut got = String::new();
    let _ = c.read_to_string(&mut got);
    sender.join().unwrap();
    assert_eq!(got, format!("got {SIZE} {want_sum}"));
}

/// An RDP connection request (TPKT, X.224 CR) whose first line is `line`.
fn rdp_request(line: &str) -> Vec<u8> {
    let body = [
        &[0u8, 0xe0, 0, 0, 0, 0, 0][..],
        line.as_bytes(),
        b"\x01\x00\x08\x00\x03\x00\x00\x00",
    ]
    .concat();
    let n = u16::try_from(body.len() + 4).unwrap().to_be_bytes();
    [&[3, 0, n[0], n[1]][..], &body].concat()
}

/// The `msts` cookie a terminal server farm's broker gives for `addr`:
/// the address's and port's network bytes read as little-endian numbers.
fn msts(addr: std::net::SocketAddr) -> String {
    let std::net::SocketAddr::V4(a) = addr else {
        unreachable!()
    };
    let ip = u32::from_le_bytes(a.ip().octets());
    let port = u16::from_le_bytes(a.port().to_be_bytes());
    format!("Cookie: msts={ip}.{port}.0000\r\n")
}

/// Sends an RDP connection request with `line` in two pieces (the rules
/// wait for the whole cookie line): the name of the server that answered.
fn ask_rdp(port: u16, line: &str) -> String {
    let r = rdp_request(line);
    exchange(port, &[&r[..20], &r[20..]], Duration::from_millis(50))
}

/// Which server each of 12 users goes to, then user 7 again.
fn users(port: u16) -> (String, String) {
    let all: Vec<String> = (0..12)
        .map(|i| ask_rdp(port, &format!("Cookie: mstshash=user{i}\r\n")))
        .collect();
    (all.join(" "), ask_rdp(port, "Cookie: mstshash=user7\r\n"))
}

#[test]
fn rdp_cookies_persist_and_balance_as_haproxy() {
    let names = ["s1", "s2", "s3"];
    let mut servers: Vec<Server> = names.iter().map(|n| Server::named(n)).collect();
    // One server on another loopback address: the cookie names both.
    servers[1] = Server::start_on(
        std::net::TcpListener::bind("127.0.0.2:0").unwrap(),
        |mut c| {
            let _ = c.write_all(b"s2");
        },
    );
    let lines: String = names
        .iter()
        .zip(&servers)
        .map(|(n, s)| format!("    server {n} {}\n", s.addr))
        .collect();
    let cfg = |sections: &[(&str, u16, &str)]| {
        let mut c = "defaults\n    mode tcp\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n".to_string();
        for (name, port, extra) in sections {
            c.push_str(&format!(
                "listen {name}\n    bind 127.0.0.1:{port}\n    tcp-request inspect-delay 2s\n\
                 \x20   tcp-request content accept if RDP_COOKIE\n{extra}{lines}"
            ));
        }
        c
    };
    let got = beside_haproxy(|start| {
        let ports = [free_port(), free_port()];
        let _p = start(
            &cfg(&[
                (
                    "persist",
                    ports[0],
                    "    persist rdp-cookie\n    balance roundrobin\n",
                ),
                ("by_cookie", ports[1], "    balance rdp-cookie\n"),
            ]),
            ports[0],
        );
        // `RDP_COOKIE` accepts as soon as the cookie line is whole, well
        // before the inspect delay ends.
        let t0 = Instant::now();
        let first = ask_rdp(ports[0], "Cookie: mstshash=someone\r\n");
        assert!(
            t0.elapsed() < Duration::from_millis(1500),
            "{:?}",
            t0.elapsed()
        );
        let mut out = vec![first];
        for s in [1, 2, 0] {
            let line = msts(servers[s].addr);
            out.push(
                (0..3)
                    .map(|_| ask_rdp(ports[0], &line))
                    .collect::<Vec<_>>()
                    .join(" "),
            );
        }
        // A cookie naming no server: round robin.
        out.push(
            (0..3)
                .map(|_| ask_rdp(ports[0], "Cookie: msts=1.2.3\r\n"))
                .collect::<Vec<_>>()
                .join(" "),
        );
        let (spread, again) = users(ports[1]);
        out.extend([spread, again]);
        out
    });
    assert_eq!(
        got[1..4],
        ["s2 s2 s2", "s3 s3 s3", "s1 s1 s1"],
        "persistence: {got:?}"
    );
    // `balance hash` on the cookie (weir only: haproxy 2.6 balances a
    // payload's hash round robin with `hash-type map-based`, and its
    // consistent ring is its own).
    let port = free_port();
    let _w = Weir::start(
        &cfg(&[(
            "by_hash",
            port,
            "    balance hash req.rdp_cookie(mstshash)\n",
        )]),
        port,
    );
    let by_hash = users(port);
    for (spread, again) in [(&got[5], &got[6]), (&by_hash.0, &by_hash.1)] {
        let seen: std::collections::HashSet<&str> = spread.split(' ').collect();
        assert_eq!(
            seen.len(),
            3,
            "the users are spread over every server: {spread}"
        );
        assert_eq!(
            again,
            spread.split(' ').nth(7).unwrap(),
            "user 7 goes back: {spread}"
        );
    }
}

#[test]
fn rdp_fetches_and_tcp_log_samples_as_haproxy() {
    // Each connection's fetches, set in variables once the inspect delay
    // ends, and logged by a `mode tcp` log format (whose `%[…]` samples
    // see the session's variables).
    let fetches = [
        "req.rdp_cookie",
        "req.rdp_cookie(mstshash)",
        "req.rdp_cookie(MSTSHASH)",
        "req.rdp_cookie(msts)",
        "req.rdp_cookie_cnt",
        "req.rdp_cookie_cnt(mstshash)",
        "rdp_cookie(mstshash)",
    ];
    let set: String = fetches
        .iter()
        .enumerate()
        .map(|(i, f)| format!("    tcp-request content set-var(sess.v{i}) {f}\n"))
        .collect();
    let fields: Vec<String> = (0..fetches.len())
        .map(|i| format!("%[var(sess.v{i})]"))
        .collect();
    let lines = [
        "Cookie: mstshash=alice\r\n",
        "Cookie: msts=3640205228.15629.0000\r\n",
        "cookie: MSTSHASH=Bob\r\n",
        "Cookie:   mstshash=spaces\r\n",
        "Cookie: mstshash=noend",
        "Cookie: mstshash=\r\n",
        "Cookie: mstshashx=a\r\n",
        "Cookie: x\r\n",
        "Cookie: mstshash=a\rb\r\n",
        "Cookie:\tmstshash=tab\r\n",
    ];
    let server = Server::named("s");
    let got = beside_haproxy(|start| {
        let syslog = Syslog::start();
        let port = free_port();
        let cfg = format!(
            "defaults\n    mode tcp\n    log 127.0.0.1:{} local0\n    log global\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
             listen l\n    bind 127.0.0.1:{port}\n    tcp-request inspect-delay 200ms\n\
             \x20   tcp-request content reject unless WAIT_END\n{set}\
             \x20   log-format \"%[src] {}\"\n    server s {}\n",
            syslog.port(),
            fields.join(" "),
            server.addr,
        );
        let _p = start(&cfg, port);
        let mut out = Vec::new();
        for (i, line) in lines.iter().enumerate() {
            let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
            c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            c.write_all(&rdp_request(line)).unwrap();
            let _ = c.read_to_end(&mut Vec::new());
            drop(c);
            // (Sessions' lines only: weir, started without `-d`, also
            // logs "Proxy l started.", as haproxy does then.)
            let l = syslog.nth_after("]: 127.0.0.1 ", i);
            out.push(l);
        }
        out
    });
    assert_eq!(got[0], "alice alice alice - 1 1 alice", "{got:?}");
}
