//! PROXY protocol: accept-proxy on binds (v1, v2, bad headers) and
//! send-proxy / send-proxy-v2 towards servers.

use crate::common::*;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::mpsc;
use std::sync::Mutex;
use std::time::Duration;

/// A server that reports the first `n` bytes it receives (or all until EOF).
fn capture(n: usize) -> (Server, mpsc::Receiver<Vec<u8>>) {
    let (tx, rx) = mpsc::channel();
    let tx = Mutex::new(tx);
    let srv = Server::start(move |mut c| {
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut got = Vec::new();
        let mut b = [0u8; 1024];
        while got.len() < n {
            match c.read(&mut b) {
                Ok(0) | Err(_) => break,
                Ok(k) => got.extend_from_slice(&b[..k]),
            }
        }
        let _ = c.write_all(b"ok");
        let _ = tx.lock().unwrap().send(got);
    });
    (srv, rx)
}

fn recv_nonempty(rx: &mpsc::Receiver<Vec<u8>>) -> Vec<u8> {
    loop {
        let v = rx
            .recv_timeout(Duration::from_secs(5))
            .expect("server saw nothing");
        if !v.is_empty() {
            return v;
        }
    }
}

#[test]
fn send_proxy_v1_and_v2_carry_the_client_addresses() {
    let (srv, rx) = capture(1);
    let (_w, port) = proxy_to("s", srv.port(), "send-proxy");
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let local = c.local_addr().unwrap();
    c.write_all(b"payload").unwrap();
    let mut b = [0u8; 2];
    c.read_exact(&mut b).unwrap();
    let got = String::from_utf8(recv_nonempty(&rx)).unwrap();
    let want = format!("PROXY TCP4 127.0.0.1 127.0.0.1 {} {port}\r\n", local.port());
    assert!(got.starts_with(&want), "{got:?} vs {want:?}");

    let (srv, rx) = capture(28);
    let (_w, port) = proxy_to("s", srv.port(), "send-proxy-v2");
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let local = c.local_addr().unwrap();
    c.write_all(b"x").unwrap();
    c.read_exact(&mut b).unwrap();
    let got = recv_nonempty(&rx);
    assert_eq!(&got[..12], b"\r\n\r\n\0\r\nQUIT\n");
    assert_eq!(got[12], 0x21);
    assert_eq!(got[13], 0x11);
    assert_eq!(&got[16..20], &[127, 0, 0, 1]);
    assert_eq!(u16::from_be_bytes([got[24], got[25]]), local.port());
    assert_eq!(u16::from_be_bytes([got[26], got[27]]), port);
}

#[test]
fn accept_proxy_v1_and_v2_then_forward_the_rest() {
    let (srv, rx) = capture(1 << 20);
    let port = free_port();
    let cfg = format!(
        "{LOG_TCP}  timeout connect 1s\n  timeout client 5s\n  timeout server 5s\n\
         listen px\n  bind 127.0.0.1:{port} accept-proxy\n  server s 127.0.0.1:{} send-proxy\n",
        srv.port()
    );
    let w = Weir::start(&cfg, port);
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.write_all(b"PROXY TCP4 192.0.2.7 198.51.100.9 40000 443\r\nhello")
        .unwrap();
    c.shutdown(std::net::Shutdown::Write).unwrap();
    let mut s = String::new();
    c.read_to_string(&mut s).unwrap();
    let got = String::from_utf8(recv_nonempty(&rx)).unwrap();
    assert_eq!(
        got, "PROXY TCP4 192.0.2.7 198.51.100.9 40000 443\r\nhello",
        "addresses passed through, header not forwarded twice"
    );
    let out = w.wait_output("192.0.2.7:40000 [", Duration::from_secs(3));
    assert!(out.contains("px px/s"), "{out}");

    let mut v2 = b"\r\n\r\n\0\r\nQUIT\n".to_vec();
    v2.extend_from_slice(&[
        0x21, 0x11, 0x00, 0x0c, 10, 1, 2, 3, 10, 3, 2, 1, 0x13, 0x88, 0x00, 0x50,
    ]);
    v2.extend_from_slice(b"v2data");
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.write_all(&v2).unwrap();
    c.shutdown(std::net::Shutdown::Write).unwrap();
    let mut s = String::new();
    c.read_to_string(&mut s).unwrap();
    let got = String::from_utf8(recv_nonempty(&rx)).unwrap();
    assert_eq!(got, "PROXY TCP4 10.1.2.3 10.3.2.1 5000 80\r\nv2data");
}

#[test]
fn bad_proxy_header_closes_and_logs() {
    let srv = Server::echo();
    let port = free_port();
    let cfg = format!(
        "global\n  log stdout format raw local0\ndefaults\n  mode tcp\n  log global\n  timeout connect 1s\n  timeout client 2s\n  timeout server 5s\n\
         listen px\n  bind 127.0.0.1:{port} accept-proxy\n  server s 127.0.0.1:{}\n",
        srv.port()
    );
    let w = Weir::start(&cfg, port);
    let before = srv.accepted.load(std::sync::atomic::Ordering::Relaxed);
    let mut c = client(port);
    c.write_all(b"GET / HTTP/1.1\r\n\r\n").unwrap();
    let mut b = [0u8; 4];
    assert!(matches!(c.read(&mut b), Ok(0) | Err(_)));
    let out = w.wait_output(
        "does not look like a PROXY protocol header",
        Duration::from_secs(3),
    );
    assert!(
        out.contains("px/1: "),
        "the listener by its number, as HAProxy: {out}"
    );
    assert_eq!(
        srv.accepted.load(std::sync::atomic::Ordering::Relaxed),
        before,
        "never reached a server"
    );
    // A good client right after is served.
    let mut ok = TcpStream::connect(("127.0.0.1", port)).unwrap();
    ok.write_all(b"PROXY UNKNOWN\r\nping").unwrap();
    ok.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    ok.read_exact(&mut b).unwrap();
    assert_eq!(&b, b"ping");
}

#[test]
fn accept_proxy_v2_with_large_tlvs() {
    // Load balancers add TLVs (TLS details, ids): a 1,000-byte v2 header is
    // accepted, and bytes after it are forwarded.
    let srv = Server::echo();
    let port = free_port();
    let cfg = format!(
        "defaults\n  mode tcp\n  timeout connect 1s\n  timeout client 5s\n  timeout server 5s\n\
         listen px\n  bind 127.0.0.1:{port} accept-proxy\n  server s 127.0.0.1:{}\n",
        srv.port()
    );
    let _w = Weir::start(&cfg, port);
    let tlv_len: u16 = 1000 - 16 - 12 - 3;
    let mut v2 = b"\r\n\r\n\0\r\nQUIT\n".to_vec();
    v2.extend_from_slice(&[0x21, 0x11]);
    v2.extend_from_slice(&(12 + 3 + tlv_len).to_be_bytes());
    v2.extend_from_slice(&[10, 0, 0, 1, 10, 0, 0, 2, 0x13, 0x88, 0x00, 0x50]);
    v2.push(0xE0);
    v2.extend_from_slice(&tlv_len.to_be_bytes());
    v2.extend(std::iter::repeat_n(b'z', tlv_len as usize));
    assert_eq!(v2.len(), 1000);
    v2.extend_from_slice(b"after");
    let mut c = client(port);
    c.write_all(&v2).unwrap();
    let mut b = [0u8; 5];
    c.read_exact(&mut b).unwrap();
    assert_eq!(&b, b"after");
}

/// An HTTP origin behind `send-proxy(-v2)`: it records the PROXY header of
/// each connection, then answers every request on it with `ok`.
fn proxied_origin() -> (u16, std::sync::Arc<Mutex<Vec<Vec<u8>>>>) {
    use std::io::{BufRead, BufReader};
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let heads = std::sync::Arc::new(Mutex::new(Vec::new()));
    let h2 = heads.clone();
    std::thread::spawn(move || {
        for c in l.incoming().flatten() {
            let heads = h2.clone();
            std::thread::spawn(move || {
                let mut w = c.try_clone().unwrap();
                let mut r = BufReader::new(c);
                let mut head = vec![0u8; 16];
                if r.read_exact(&mut head).is_err() {
                    return;
                }
                if head.starts_with(b"PROXY ") {
                    let mut rest = Vec::new();
                    let _ = r.read_until(b'\n', &mut rest);
                    head.extend(rest);
                } else {
                    let mut tail = vec![0u8; usize::from(u16::from_be_bytes([head[14], head[15]]))];
                    let _ = r.read_exact(&mut tail);
                    head.extend(tail);
                }
                heads.lock().unwrap().push(head);
                let mut line = String::new();
                loop {
                    line.clear();
                    match r.read_line(&mut line) {
                        Ok(0) | Err(_) => return,
                        Ok(_) if line == "\r\n" => {
                            let _ = w.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
                        }
                        Ok(_) => {}
                    }
                }
            });
        }
    });
    (port, heads)
}

fn http_proxy_to(origin: u16, global: &str, fe: &str, server_opts: &str) -> (Weir, u16) {
    let port = free_port();
    let cfg = format!(
        "global\n    nbthread 1\n{global}\ndefaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         listen px\n    bind 127.0.0.1:{port}\n{fe}\n    server s 127.0.0.1:{origin} {server_opts}\n"
    );
    (Weir::start(&cfg, port), port)
}

#[test]
fn send_proxy_in_http_mode_names_each_client_on_its_own_connection() {
    // The header goes first on each server connection, and a connection
    // that named one client carries only that client's requests.
    let (origin, heads) = proxied_origin();
    let (_w, port) = http_proxy_to(origin, "", "", "send-proxy");
    let mut ports = Vec::new();
    for _ in 0..2 {
        let mut c = crate::common::http::Client::connect(port);
        ports.push(c.w.local_addr().unwrap().port());
        assert_eq!(c.get("/a").status, 200);
        assert_eq!(c.get("/b").status, 200);
    }
    let heads = heads.lock().unwrap().clone();
    let want: Vec<String> = ports
        .iter()
        .map(|p| format!("PROXY TCP4 127.0.0.1 127.0.0.1 {p} {port}\r\n"))
        .collect();
    let got: Vec<String> = heads
        .iter()
        .map(|h| String::from_utf8_lossy(h).into())
        .collect();
    assert_eq!(got, want);
}

/// CRC-32C (Castagnoli), bit by bit.
fn crc32c(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0x82F6_3B78
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// The TLVs of a v2 header as (type, value).
fn tlvs_of(h: &[u8]) -> Vec<(u8, Vec<u8>)> {
    // A LOCAL header (family 0) has no addresses; TCP over IPv4 has 12
    // bytes of them.
    let mut rest = &h[if h[13] == 0 { 16 } else { 16 + 12 }..];
    let mut out = Vec::new();
    while rest.len() >= 3 {
        let n = usize::from(u16::from_be_bytes([rest[1], rest[2]]));
        out.push((rest[0], rest[3..3 + n].to_vec()));
        rest = &rest[3 + n..];
    }
    out
}

#[test]
fn proxy_v2_options_send_the_unique_id_and_a_checksum_and_tlvs_are_read() {
    // Each request's unique id goes in its own connection's header, with a
    // CRC-32C over the whole header.
    let (origin, heads) = proxied_origin();
    let (_w, port) = http_proxy_to(
        origin,
        "",
        "    unique-id-format TEST-%[req.hdr(in)]",
        "send-proxy-v2 proxy-v2-options unique-id,crc32c",
    );
    let mut c = crate::common::http::Client::connect(port);
    for v in ["foo", "bar"] {
        c.send(format!("GET / HTTP/1.1\r\nHost: t\r\nin: {v}\r\n\r\n").as_bytes());
        assert_eq!(c.response("GET").status, 200);
    }
    let heads = heads.lock().unwrap().clone();
    assert_eq!(heads.len(), 2, "one connection per request");
    for (h, v) in heads.iter().zip(["foo", "bar"]) {
        let tlvs = tlvs_of(h);
        // The checksum first, as haproxy writes it.
        let (kind, crc) = &tlvs[0];
        assert_eq!(*kind, 0x03);
        assert_eq!(tlvs[1], (0x05, format!("TEST-{v}").into_bytes()));
        let mut zeroed = h.clone();
        zeroed[31..35].fill(0);
        assert_eq!(crc.as_slice(), crc32c(&zeroed).to_be_bytes());
    }
    // A receiving frontend reads the TLVs (`fc_pp_authority`,
    // `fc_pp_unique_id`); a TLV that overruns the header closes the
    // connection.
    let port = free_port();
    let cfg = format!(
        "defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         frontend fe\n    bind 127.0.0.1:{port} accept-proxy\n\
         \x20   http-request return status 200 hdr pp \"%[fc_pp_authority]/%[fc_pp_unique_id]\"\n"
    );
    let _w = Weir::start(&cfg, port);
    let v2 = |tlvs: &[u8]| {
        let mut h = b"\r\n\r\n\0\r\nQUIT\n\x21\x11".to_vec();
        h.extend(u16::try_from(12 + tlvs.len()).unwrap().to_be_bytes());
        h.extend([127, 0, 0, 1, 127, 0, 0, 1, 0, 42, 5, 57]);
        h.extend_from_slice(tlvs);
        h
    };
    let mut c = crate::common::http::Client::connect(port);
    c.send(&v2(b"\x02\x00\x07example\x05\x00\x0212"));
    assert_eq!(c.get("/").header("pp"), Some("example/12"));
    let mut c = crate::common::http::Client::connect(port);
    c.send(&v2(b"\x02\x00\x0aexample"));
    c.send(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n");
    assert!(c.closed());
}

/// The first 16 bytes of a health check's connection to a server with
/// `send-proxy-v2`.
fn check_header(start: Start<'_>, global: &str) -> Vec<u8> {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let srv = l.local_addr().unwrap().port();
    let port = free_port();
    let cfg = format!(
        "global\n{global}defaults\n    mode tcp\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         listen l\n    bind 127.0.0.1:{port}\n    server s 127.0.0.1:{srv} send-proxy-v2 check inter 10s\n"
    );
    let _p = start(&cfg, port);
    let (mut c, _) = l.accept().unwrap();
    c.set_read_timeout(Some(std::time::Duration::from_secs(5)))
        .unwrap();
    let mut b = vec![0u8; 16];
    std::io::Read::read_exact(&mut c, &mut b).unwrap();
    b
}

#[test]
fn checks_send_a_local_proxy_v2_header_as_haproxy() {
    let got = beside_haproxy(|start| {
        let local = check_header(start, "");
        let bogus = check_header(start, "    pp2-never-send-local\n");
        // (The PROXY command's addresses differ per run: its command and
        // family bytes only.)
        (local, bogus[12..14].to_vec())
    });
    assert_eq!(got.0[12..], [0x20, 0x00, 0x00, 0x00], "LOCAL, no address");
    assert_eq!(got.1, [0x21, 0x11], "PROXY over TCP4");
}

/// A server that answers each connection's request with 200 and sends
/// what came before the request (a PROXY header, or nothing) to `tx`.
fn header_origin() -> (Server, mpsc::Receiver<Vec<u8>>) {
    let (tx, rx) = mpsc::channel();
    let tx = Mutex::new(tx);
    let srv = Server::start(move |mut c| {
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut got = Vec::new();
        let mut b = [0u8; 4096];
        while !got.windows(4).any(|w| w == b"\r\n\r\n") {
            match c.read(&mut b) {
                Ok(0) | Err(_) => break,
                Ok(k) => got.extend_from_slice(&b[..k]),
            }
        }
        let at = got
            .windows(4)
            .position(|w| w == b"GET ")
            .unwrap_or(got.len());
        got.truncate(at);
        let _ = tx.lock().unwrap().send(got);
        let _ = c.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok");
    });
    (srv, rx)
}

/// A header with what differs from run to run blanked: the ports, and
/// the checksum that covers them.
fn steady(mut h: Vec<u8>) -> Vec<u8> {
    if h.starts_with(b"PROXY ") {
        let line = String::from_utf8_lossy(&h).into_owned();
        let mut w: Vec<&str> = line.split(' ').collect();
        w[4] = "PORT";
        w[5] = "PORT\r\n";
        return w.join(" ").into_bytes();
    }
    if h.len() >= 28 {
        h[24..28].fill(0);
        if h.get(28) == Some(&0x03) {
            h[31..35].fill(0);
        }
    }
    h
}

#[test]
fn send_proxy_v2_ssl_and_its_options_match_haproxy() {
    let pki = crate::common::tls::Pki::new();
    let (origin, heads) = header_origin();
    let o = origin.addr.port();
    let check_l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let chk = check_l.local_addr().unwrap().port();
    let backends = [
        "    server s 127.0.0.1:{o} send-proxy-v2-ssl-cn proxy-v2-options cert-key,cert-sig,ssl-cipher,authority,crc32c\n",
        "    server s 127.0.0.1:{o} send-proxy-v2\n",
        "    default-server send-proxy-v2-ssl-cn\n    server s 127.0.0.1:{o} no-send-proxy-v2-ssl\n",
        "    server s 127.0.0.1:{o} proxy-v2-options ssl\n",
        "    default-server send-proxy-v2-ssl\n    server s 127.0.0.1:{o} no-send-proxy-v2-ssl-cn\n",
        "    server s 127.0.0.1:{chk} send-proxy-v2-ssl proxy-v2-options crc32c check check-send-proxy inter 10s\n",
    ];
    let got = beside_haproxy(|start| {
        let (port, plain) = (free_port(), free_port());
        let mut cfg = format!(
            "defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
             frontend fe\n    bind 127.0.0.1:{port} ssl crt {} ca-file {} verify optional alpn h2,http/1.1\n\
             \x20   bind 127.0.0.1:{plain}\n    use_backend b%[req.hdr(b)]\n",
            pki.path("certs"),
            pki.path("ca.pem"),
        );
        for (i, b) in backends.iter().enumerate() {
            let b = b
                .replace("{o}", &o.to_string())
                .replace("{chk}", &chk.to_string());
            cfg.push_str(&format!("backend b{i}\n{b}"));
        }
        let _p = start(&cfg, port);
        // The check's header: LOCAL, the checksum and an empty ssl TLV.
        let (mut c, _) = check_l.accept().unwrap();
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut check = vec![0u8; 16];
        c.read_exact(&mut check).unwrap();
        let mut tail = vec![0u8; usize::from(u16::from_be_bytes([check[14], check[15]]))];
        c.read_exact(&mut tail).unwrap();
        check.extend(tail);
        let cert = pki.path("client.crt");
        let key = pki.path("client.key");
        // Suites pinned, so that both proxies pick the same.
        let tls13 = ["--tlsv1.3", "--tls13-ciphers", "TLS_AES_256_GCM_SHA384"];
        let h1 = [&tls13[..], &["--http1.1"]].concat();
        let with_cert = [&tls13[..], &["--http2", "--cert", &cert, "--key", &key]].concat();
        let tls12 = [
            "--tlsv1.2",
            "--tls-max",
            "1.2",
            "--ciphers",
            "ECDHE-RSA-AES256-GCM-SHA384",
        ];
        let asks: [(&str, &str, &[&str]); 8] = [
            ("www.example.com", "0", &h1),
            ("www.example.com", "0", &with_cert),
            ("other.test", "0", &tls12),
            ("www.example.com", "1", &with_cert),
            ("www.example.com", "2", &with_cert),
            ("www.example.com", "3", &with_cert),
            ("www.example.com", "4", &with_cert),
            ("", "0", &[]),
        ];
        let mut out = vec![check];
        for (name, b, extra) in asks {
            let hdr = format!("b: {b}");
            let mut args = vec!["-H", &hdr, "-o", "/dev/null", "-w", "%{http_code}"];
            args.extend_from_slice(extra);
            let o = match name {
                "" => {
                    let url = format!("http://127.0.0.1:{plain}/");
                    args.push(&url);
                    let mut all = vec!["curl", "-sS"];
                    all.extend(args);
                    crate::common::tls::run(&all, b"")
                }
                _ => crate::common::tls::curl(port, name, "/", &args),
            };
            assert!(
                o.stdout.starts_with(b"200"),
                "{name} b{b}: {}",
                crate::common::tls::text(&o)
            );
            out.push(steady(heads.recv_timeout(Duration::from_secs(5)).unwrap()));
        }
        out
    });
    // What these headers carry, beyond matching haproxy's bytes.
    let tlvs = |h: &[u8]| tlvs_of(h).into_iter().map(|(t, _)| t).collect::<Vec<_>>();
    assert_eq!(tlvs(&got[0]), [0x03, 0x20], "the check's: checksum, ssl");
    assert_eq!(
        tlvs(&got[1]),
        [0x03, 0x01, 0x02, 0x20],
        "checksum, alpn, authority, ssl"
    );
    let ssl = &tlvs_of(&got[2])[3].1;
    assert_eq!(
        ssl[0], 7,
        "TLS, a certificate on the connection and session"
    );
    assert!(ssl.windows(10).any(|w| w == b"client-one"));
    assert!(String::from_utf8_lossy(&got[3]).contains("RSA2048"));
    assert_eq!(tlvs(&got[4]), [0x01], "send-proxy-v2: the alpn alone");
    assert!(
        got[5].starts_with(b"PROXY TCP4 "),
        "v2 cleared, cn left: v1"
    );
    assert!(got[6].starts_with(b"PROXY TCP4 "), "an option alone: v1");
    assert_eq!(got[7], b"", "all cleared: no header");
    assert_eq!(
        tlvs_of(&got[8]).last().unwrap().1,
        [0, 0, 0, 0, 0],
        "clear: no bit"
    );
}

#[test]
fn mode_tcp_unique_ids_go_in_the_log_and_the_proxy_header_as_haproxy() {
    let (origin, heads) = header_origin();
    let got = beside_haproxy(|start| {
        let syslog = Syslog::start();
        let port = free_port();
        let cfg = format!(
            "defaults\n    mode tcp\n    log 127.0.0.1:{} local0\n    log global\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
             listen l\n    bind 127.0.0.1:{port}\n    unique-id-format U-%[src]-%b\n\
             \x20   log-format \"id=%ID fetch=%[unique-id]\"\n\
             \x20   server s {} send-proxy-v2 proxy-v2-options unique-id\n",
            syslog.port(),
            origin.addr
        );
        let _p = start(&cfg, port);
        let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        c.write_all(b"GET / HTTP/1.1\r\n\r\n").unwrap();
        let _ = c.read_to_end(&mut Vec::new());
        // The session (and its log line) ends when the client closes too.
        drop(c);
        let head = heads.recv_timeout(Duration::from_secs(5)).unwrap();
        let line = syslog.wait_line("id=", Duration::from_secs(5));
        (
            tlvs_of(&head),
            line.split_once("]: ").unwrap().1.to_string(),
        )
    });
    assert_eq!(got.0, [(0x05, b"U-127.0.0.1-l".to_vec())]);
    assert_eq!(got.1, "id=U-127.0.0.1-l fetch=U-127.0.0.1-l");
}
