//! HTTP/2 towards servers through the real binary: `server … proto h2` to
//! weir-bench's HTTP/2 origin (bodies and trailers both ways, gRPC-style
//! requests, one multiplexed connection per thread, a dead server), and
//! `alpn h2` over TLS picked in the handshake (weir itself as the origin).

use crate::common::http::Client;
use crate::common::tls::{run, text, Pki};
use crate::common::*;
use std::time::Duration;

fn cfg(h1: u16, h2c: u16, server: &str, syslog: u16, extra: &str) -> String {
    format!(
        "global\n    nbthread 2\n    log 127.0.0.1:{syslog} local0\n\
         defaults\n    mode http\n    log global\n    option httplog\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         frontend fe\n    bind 127.0.0.1:{h1}\n    bind 127.0.0.1:{h2c} proto h2\n    default_backend be\n\
         backend be\n    server s1 {server}\n{extra}"
    )
}

/// Established connections from weir to local port `port`.
fn conns_to(port: u16) -> usize {
    let t = std::fs::read_to_string("/proc/net/tcp").unwrap();
    let want = format!(":{port:04X}");
    t.lines()
        .skip(1)
        .filter(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            f.len() > 3 && f[2].ends_with(&want) && f[3] == "01"
        })
        .count()
}

#[test]
fn proto_h2_servers_carry_bodies_trailers_and_many_streams() {
    let sport = free_port();
    let backend = Backend::start("h2", sport);
    let log = Syslog::start();
    let (h1, h2c) = (free_port(), free_port());
    let c = cfg(
        h1,
        h2c,
        &format!("127.0.0.1:{sport} proto h2"),
        log.port(),
        "",
    );
    let mut w = Weir::spawn(&c, &[]);
    w.wait_listening(h1);
    w.wait_listening(h2c);

    // An HTTP/1.1 client: the answer comes chunked, the trailer with it.
    let mut cl = Client::connect(h1);
    let r = cl.get("/hello?x=1");
    assert_eq!(r.status, 200);
    assert_eq!(r.header("x-method"), Some("GET"));
    assert_eq!(r.header("x-path"), Some("/hello?x=1"));
    assert_eq!(
        r.header("x-authority"),
        Some("t"),
        "host becomes :authority"
    );
    let line = log.wait_line(" be/s1 ", Duration::from_secs(5));
    assert!(
        line.contains(" 200 ") && line.contains("GET /hello?x=1 HTTP/1.1"),
        "{line}"
    );

    // A chunked upload with a trailer: body and trailer reach the server,
    // which echoes both back.
    cl.send(b"POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\nTE: trailers\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\nx-check: 42\r\n\r\n");
    let mut head = String::new();
    let mut rest = Vec::new();
    {
        use std::io::{BufRead, Read};
        loop {
            let mut l = String::new();
            cl.r.read_line(&mut l).unwrap();
            head.push_str(&l);
            if l == "\r\n" {
                break;
            }
        }
        let mut buf = [0u8; 256];
        while !rest.ends_with(b"\r\n\r\n") {
            let n = cl.r.read(&mut buf).unwrap();
            assert!(n > 0, "{head}");
            rest.extend_from_slice(&buf[..n]);
        }
    }
    let body = String::from_utf8_lossy(&rest).into_owned();
    assert!(head.contains("x-body-len: 11\r\n"), "{head}");
    assert!(body.contains("hello world"), "{body}");
    assert!(
        body.contains("x-check: 42\r\n") && body.contains("x-served: h2\r\n"),
        "{body}"
    );

    // gRPC-style over HTTP/2 at both ends: body echoed, trailers kept.
    let dir = tempdir("h2-servers");
    let blob = random_bytes(300_000, 11);
    let file = dir.join("blob");
    std::fs::write(&file, &blob).unwrap();
    let down = dir.join("down");
    let url = format!("http://127.0.0.1:{h2c}/pkg.Svc/Call");
    let out = run(
        &[
            "curl",
            "-sS",
            "--http2-prior-knowledge",
            "-D",
            "-",
            "-o",
            &down.display().to_string(),
            "-H",
            "content-type: application/grpc",
            "-H",
            "te: trailers",
            "--data-binary",
            &format!("@{}", file.display()),
            &url,
        ],
        b"",
    );
    let t = text(&out);
    assert!(t.starts_with("HTTP/2 200"), "{t}");
    assert!(t.contains("content-type: application/grpc"), "{t}");
    assert!(t.contains("x-served: h2"), "the trailer: {t}");
    assert_eq!(std::fs::read(&down).unwrap(), blob);

    // Many streams, few connections: one per thread.
    let out = run(
        &[
            "h2load",
            "-n",
            "2000",
            "-c",
            "4",
            "-m",
            "10",
            &format!("http://127.0.0.1:{h2c}/?s=100"),
        ],
        b"",
    );
    let t = text(&out);
    assert!(t.contains("2000 succeeded, 0 failed"), "{t}");
    let n = conns_to(sport);
    assert!((1..=2).contains(&n), "{n} connections to the server");

    // The server dies: 503 after the retries, quickly, no hang.
    drop(backend);
    let started = std::time::Instant::now();
    let mut cl = Client::connect(h1);
    let r = cl.get("/after");
    assert_eq!(r.status, 503);
    assert!(started.elapsed() < Duration::from_secs(5));
    let _backend = Backend::start("h2", sport);
    let r = Client::connect(h1).get("/back");
    assert_eq!(r.status, 200, "a new connection once it is back");
}

#[test]
fn alpn_h2_to_tls_servers_when_they_pick_it() {
    let pki = Pki::new();
    let log = Syslog::start();
    let (h1, h2c, origin) = (free_port(), free_port(), free_port());
    for (alpn, want) in [
        ("h2,http/1.1", "ver=2.0 alpn=h2"),
        ("http/1.1", "ver=1.1 alpn=http/1.1"),
    ] {
        let extra = format!(
            "frontend origin\n    bind 127.0.0.1:{origin} ssl crt {} alpn h2,http/1.1\n    \
             http-request return status 200 content-type text/plain lf-string \"ver=%[req.ver] alpn=%[ssl_fc_alpn]\\n\"\n",
            pki.path("certs/1-www.pem")
        );
        let server = format!("127.0.0.1:{origin} ssl verify none alpn {alpn}");
        let mut w = Weir::spawn(&cfg(h1, h2c, &server, log.port(), &extra), &[]);
        w.wait_listening(h1);
        w.wait_listening(origin);
        let r = Client::connect(h1).get("/");
        assert_eq!(r.status, 200);
        assert_eq!(r.text().trim(), want);
        drop(w);
    }
}

/// An origin that serves one connection at a time (as VTest's servers do):
/// each request gets a 20000-byte body in two halves 50 ms apart. Returns
/// its port and how many connections it accepted.
fn serial_origin() -> (u16, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::io::{BufRead, BufReader, Write};
    use std::sync::atomic::{AtomicUsize, Ordering};
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let accepted = std::sync::Arc::new(AtomicUsize::new(0));
    let a = accepted.clone();
    std::thread::spawn(move || {
        for c in l.incoming().flatten() {
            a.fetch_add(1, Ordering::Relaxed);
            let mut w = c.try_clone().unwrap();
            let mut r = BufReader::new(c);
            'requests: loop {
                let mut line = String::new();
                loop {
                    line.clear();
                    match r.read_line(&mut line) {
                        Ok(0) | Err(_) => break 'requests,
                        Ok(_) if line == "\r\n" => break,
                        Ok(_) => {}
                    }
                }
                let half = vec![b'x'; 10000];
                let _ = w.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 20000\r\n\r\n");
                let _ = w.write_all(&half);
                std::thread::sleep(Duration::from_millis(50));
                let _ = w.write_all(&half);
            }
        }
    });
    (port, accepted)
}

#[test]
fn head_rewritten_to_get_ends_its_stream_after_the_body_it_drops() {
    // HTTP/1.1 client -> weir (server proto h2) -> weir (h2 frontend that
    // turns HEAD into GET) -> a serial origin. Each HEAD's response ends
    // once the origin's body was read, so the next request finds the same
    // server connection free instead of opening one the origin never takes.
    let (origin, accepted) = serial_origin();
    let (front, inner) = (free_port(), free_port());
    let cfg = format!(
        "global\n    nbthread 1\n\
         defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 2s\n\
         listen inner\n    bind 127.0.0.1:{inner} proto h2\n    http-request set-method GET\n    server s1 127.0.0.1:{origin}\n\
         listen front\n    bind 127.0.0.1:{front}\n    server s1 127.0.0.1:{inner} proto h2\n"
    );
    let _w = Weir::start(&cfg, front);
    let mut c = Client::connect(front);
    for i in 0..3 {
        c.send(format!("HEAD /r{i} HTTP/1.1\r\nHost: t\r\n\r\n").as_bytes());
        let r = c.response("HEAD");
        assert_eq!(r.status, 200, "request {i}");
        assert_eq!(r.header("content-length"), Some("20000"));
    }
    assert_eq!(accepted.load(std::sync::atomic::Ordering::Relaxed), 1);
}
