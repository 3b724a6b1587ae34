//! `mode http`: keep-alive on both sides, pipelining, bodies intact both
//! ways, connection modes, WebSocket through an Upgrade, error statuses for
//! bad clients and bad servers, errorfile, forwardfor, httplog lines.

use crate::common::http::{fnv, http_cfg, Client, Origin};
use crate::common::*;
use std::io::{Read, Write};
use std::time::Duration;

fn weir_for(origin: &Origin, fe_extra: &str, be_extra: &str) -> (Weir, u16) {
    let port = free_port();
    let be = format!("{be_extra}\n    server s1 127.0.0.1:{}", origin.port());
    (Weir::start(&http_cfg(port, "", fe_extra, &be), port), port)
}

#[test]
fn keep_alive_reuses_one_server_connection() {
    let o = Origin::start("a");
    let (_w, port) = weir_for(&o, "", "");
    let mut c = Client::connect(port);
    for i in 0..5 {
        let r = c.get(&format!("/r{i}"));
        assert_eq!(r.status, 200);
        assert_eq!(r.field("uri").as_deref(), Some(format!("/r{i}").as_str()));
    }
    assert_eq!(
        o.connections(),
        1,
        "one server connection for five requests"
    );
    // A second client's requests may reuse the idle connection (safe reuse
    // forbids it only for a first request).
    drop(c);
    let mut c2 = Client::connect(port);
    assert_eq!(c2.get("/x").status, 200);
    assert_eq!(c2.get("/y").status, 200);
    assert!(o.connections() <= 2);
}

#[test]
fn pipelined_requests_are_answered_in_order() {
    let o = Origin::start("a");
    let (_w, port) = weir_for(&o, "", "");
    let mut c = Client::connect(port);
    let mut all = Vec::new();
    for i in 0..4 {
        all.extend_from_slice(format!("GET /p{i} HTTP/1.1\r\nHost: t\r\n\r\n").as_bytes());
    }
    c.send(&all);
    for i in 0..4 {
        let r = c.response("GET");
        assert_eq!(r.field("uri").as_deref(), Some(format!("/p{i}").as_str()));
    }
}

#[test]
fn bodies_arrive_intact_both_ways() {
    let o = Origin::start("a");
    let (_w, port) = weir_for(&o, "", "");
    let mut c = Client::connect(port);
    // 3 MB upload with Content-Length.
    let body = random_bytes(3 << 20, 7);
    c.send(
        format!(
            "POST /up HTTP/1.1\r\nHost: t\r\nContent-Length: {}\r\n\r\n",
            body.len()
        )
        .as_bytes(),
    );
    c.send(&body);
    let r = c.response("POST");
    assert_eq!(r.field("body_len"), Some(body.len().to_string()));
    assert_eq!(r.field("body_fnv"), Some(fnv(&body).to_string()));
    // Chunked upload, odd chunk sizes, an extension, a trailer.
    let mut chunked =
        b"POST /upc HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
    let body2 = random_bytes(100_000, 9);
    for part in body2.chunks(7777) {
        chunked.extend_from_slice(format!("{:X};x=y\r\n", part.len()).as_bytes());
        chunked.extend_from_slice(part);
        chunked.extend_from_slice(b"\r\n");
    }
    chunked.extend_from_slice(b"0\r\nX-T: 1\r\n\r\n");
    c.send(&chunked);
    let r = c.response("POST");
    assert_eq!(r.field("body_fnv"), Some(fnv(&body2).to_string()));
    let seen = o.seen.lock().unwrap().last().cloned().unwrap();
    assert!(seen.head.contains("Transfer-Encoding: chunked"));
    // 8 MB download, then a chunked one.
    let r = c.get("/?s=8000000");
    assert_eq!(r.body.len(), 8_000_000);
    assert_eq!(
        fnv(&r.body),
        fnv(&(0..8_000_000)
            .map(|i| b'a' + (i % 26) as u8)
            .collect::<Vec<u8>>())
    );
    let r = c.get("/chunked?s=25000");
    assert_eq!(r.body.len(), 25000);
    assert_eq!(r.header("transfer-encoding"), Some("chunked"));
    // The connection still works.
    assert_eq!(c.get("/after").status, 200);
}

#[test]
fn chunk_extensions_are_dropped_and_trailers_kept() {
    let o = Origin::start("a");
    let (_w, port) = weir_for(&o, "", "");
    let mut c = Client::connect(port);
    c.send(b"GET /chunked?s=1500 HTTP/1.1\r\nHost: t\r\n\r\n");
    let mut raw = Vec::new();
    let mut b = [0u8; 65536];
    while !raw.ends_with(b"0\r\nX-Trailer: yes\r\n\r\n") {
        let n = c.r.read(&mut b).unwrap();
        assert!(n > 0, "closed early: {}", String::from_utf8_lossy(&raw));
        raw.extend_from_slice(&b[..n]);
    }
    let text = String::from_utf8_lossy(&raw);
    assert!(!text.contains("ext=1"), "extensions forwarded: {text}");
    assert!(text.contains("\r\n3e8\r\n") && text.contains("\r\n1f4\r\n"));
}

#[test]
fn head_and_expect_continue() {
    let o = Origin::start("a");
    let (_w, port) = weir_for(&o, "", "");
    let mut c = Client::connect(port);
    c.send(b"HEAD /?s=500 HTTP/1.1\r\nHost: t\r\n\r\n");
    let r = c.response("HEAD");
    assert_eq!(r.header("content-length"), Some("500"));
    assert!(r.body.is_empty());
    // The client waits for 100 Continue before sending its body.
    c.send(b"PUT /e HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n");
    let interim = c.response("PUT");
    assert_eq!(interim.status, 100);
    c.send(b"hello");
    let r = c.response("PUT");
    assert_eq!(r.status, 200);
    assert_eq!(r.field("body_fnv"), Some(fnv(b"hello").to_string()));
}

#[test]
fn connection_modes() {
    // httpclose: both sides close after each exchange.
    let o = Origin::start("a");
    let (_w, port) = weir_for(&o, "    option httpclose", "");
    let mut c = Client::connect(port);
    let r = c.get("/1");
    assert_eq!(r.header("connection"), Some("close"));
    assert!(c.closed());
    let seen = o.seen.lock().unwrap()[0].head.clone();
    assert!(seen.to_ascii_lowercase().contains("connection: close"));
    // http-server-close: the client connection stays, the server's does not.
    let o = Origin::start("b");
    let (_w2, port) = weir_for(&o, "    option http-server-close", "");
    let mut c = Client::connect(port);
    for _ in 0..3 {
        assert_eq!(c.get("/x").status, 200);
    }
    assert_eq!(o.connections(), 3);
    // A client that asks to close gets a close.
    c.send(b"GET /bye HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
    assert_eq!(c.response("GET").status, 200);
    assert!(c.closed());
    // HTTP/1.0 without keep-alive closes; with keep-alive stays.
    let mut c = Client::connect(port);
    c.send(b"GET /old HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    let r = c.response("GET");
    assert_eq!(r.header("connection"), Some("keep-alive"));
    c.send(b"GET /old2 HTTP/1.0\r\n\r\n");
    assert_eq!(c.response("GET").status, 200);
    assert!(c.closed());
}

#[test]
fn websocket_upgrade_tunnels() {
    let o = Origin::start("a");
    let (_w, port) = weir_for(&o, "", "");
    let mut c = Client::connect(port);
    c.send(b"GET /ws HTTP/1.1\r\nHost: t\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n");
    let r = c.response("GET");
    assert_eq!(r.status, 101);
    for msg in [&b"ping"[..], &random_bytes(70_000, 3)] {
        c.send(msg);
        let mut back = vec![0u8; msg.len()];
        c.r.read_exact(&mut back).unwrap();
        assert_eq!(back, msg);
    }
    // RFC 6455's handshake without its key is refused, as haproxy 2.6
    // refuses it.
    let mut c = Client::connect(port);
    c.send(b"GET /ws HTTP/1.1\r\nHost: t\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n");
    assert_eq!(c.response("GET").status, 400);
}

#[test]
fn bad_requests_get_their_status_and_close() {
    let o = Origin::start("a");
    let (_w, port) = weir_for(&o, "", "");
    let cases: &[(&[u8], u16)] = &[
        (b"GET / HTTP/1.1\r\nHo st: x\r\n\r\n", 400),
        (
            b"GET / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n",
            400,
        ),
        (
            b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked, identity\r\n\r\n",
            400,
        ),
        (b"POST / HTTP/1.1\r\nTransfer-Encoding: foo\r\n\r\n", 400),
        (
            b"POST / HTTP/1.1\r\nTransfer-Encoding: foo, chunked\r\n\r\n",
            422,
        ),
        (b"GET / HTTP/1.1\r\nX: a\0b\r\n\r\n", 400),
        (b"GET / HTTP/1.1\r\nX: a\r\n b\r\n\r\n", 400),
        (
            b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
            400,
        ),
    ];
    for (req, status) in cases {
        let mut c = Client::connect(port);
        c.send(req);
        let r = c.response("GET");
        assert_eq!(r.status, *status, "for {:?}", String::from_utf8_lossy(req));
        assert!(c.closed(), "connection left open after {status}");
    }
    let long = format!("GET /{} HTTP/1.1\r\n\r\n", "a".repeat(20000));
    let mut c = Client::connect(port);
    c.send(long.as_bytes());
    assert_eq!(c.response("GET").status, 414);
    let many = format!("GET / HTTP/1.1\r\n{}\r\n", "A: b\r\n".repeat(150));
    let mut c = Client::connect(port);
    c.send(many.as_bytes());
    assert_eq!(c.response("GET").status, 431);
    // The smuggling attempt in the chunked case never reached the server,
    // and other clients are served.
    assert!(o
        .seen
        .lock()
        .unwrap()
        .iter()
        .all(|s| !s.head.contains("zz")));
    assert_eq!(Client::connect(port).get("/fine").status, 200);
}

#[test]
fn content_length_with_chunked_is_chunked_and_closes() {
    let o = Origin::start("a");
    let (_w, port) = weir_for(&o, "", "");
    let mut c = Client::connect(port);
    c.send(b"POST /te HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n");
    let r = c.response("POST");
    assert_eq!(r.field("body_fnv"), Some(fnv(b"abc").to_string()));
    let seen = o.seen.lock().unwrap()[0].head.to_ascii_lowercase();
    assert!(!seen.contains("content-length"), "{seen}");
    assert_eq!(r.header("connection"), Some("close"));
    assert!(c.closed());
}

#[test]
fn slow_request_head_gets_408() {
    let o = Origin::start("a");
    let (_w, port) = weir_for(&o, "    timeout http-request 300ms", "");
    let mut c = Client::connect(port);
    c.send(b"GET / HTTP/1.1\r\nHost: t\r\n");
    let start = std::time::Instant::now();
    let r = c.response("GET");
    assert_eq!(r.status, 408);
    assert!(start.elapsed() < Duration::from_secs(3));
    assert!(c.closed());
}

#[test]
fn server_failures_map_to_502_503_504() {
    let o = Origin::start("a");
    let (_w, port) = weir_for(&o, "", "    timeout server 300ms");
    let mut c = Client::connect(port);
    assert_eq!(c.get("/garbage").status, 502);
    let mut c = Client::connect(port);
    assert_eq!(c.get("/empty").status, 502);
    let mut c = Client::connect(port);
    let r = c.get("/slow?ms=2000");
    assert_eq!(r.status, 504);
    assert!(r.text().contains("504 Gateway Time-out"));
    // No server listening: 503 after the retries.
    let dead = free_port();
    let port2 = free_port();
    let cfg = http_cfg(
        port2,
        "",
        "",
        &format!("    retries 1\n    server s 127.0.0.1:{dead}"),
    );
    let _w2 = Weir::start(&cfg, port2);
    let mut c = Client::connect(port2);
    let r = c.get("/");
    assert_eq!(r.status, 503);
    assert_eq!(r.header("content-length"), Some("107"));
}

#[test]
fn errorfile_replaces_the_page() {
    let dir = tempdir("errorfile");
    let f = dir.join("503.http");
    std::fs::write(&f, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nsorry").unwrap();
    let dead = free_port();
    let port = free_port();
    let cfg = http_cfg(
        port,
        "",
        "",
        &format!(
            "    retries 0\n    errorfile 503 {}\n    server s 127.0.0.1:{dead}",
            f.display()
        ),
    );
    let _w = Weir::start(&cfg, port);
    let r = Client::connect(port).get("/");
    assert_eq!(r.status, 503);
    assert_eq!(r.text(), "sorry");
    // A missing file is a configuration error with its line.
    let bad = http_cfg(port, "", "    errorfile 503 /nonexistent/x.http", "");
    let (code, _, err) = check_cfg(&bad);
    assert_ne!(code, 0);
    assert!(
        err.contains(":11]") && err.contains("/nonexistent/x.http"),
        "{err}"
    );
}

#[test]
fn forwardfor_adds_the_client_address() {
    let o = Origin::start("a");
    let (_w, port) = weir_for(&o, "    option forwardfor", "");
    let r = Client::connect(port).get("/ff");
    assert!(
        r.text().contains("X-Forwarded-For: 127.0.0.1\r\n"),
        "{}",
        r.text()
    );
    let o = Origin::start("b");
    let (_w2, port) = weir_for(&o, "    option forwardfor except 127.0.0.0/8", "");
    let r = Client::connect(port).get("/ff");
    assert!(!r.text().contains("X-Forwarded-For"), "{}", r.text());
    let o = Origin::start("c");
    let (_w3, port) = weir_for(&o, "    option forwardfor header X-Client if-none", "");
    let mut c = Client::connect(port);
    c.send(b"GET / HTTP/1.1\r\nHost: t\r\nX-Client: 10.1.1.1\r\n\r\n");
    let r = c.response("GET");
    assert!(r.text().contains("X-Client: 10.1.1.1\r\n") && !r.text().contains("127.0.0.1"));
}

#[test]
fn httplog_lines_have_haproxy_fields() {
    let o = Origin::start("a");
    let sys = Syslog::start();
    let port = free_port();
    let cfg = format!(
        "global\n    nbthread 1\n    log 127.0.0.1:{} local0\ndefaults\n    mode http\n    log global\n    option httplog\n    timeout connect 1s\n    timeout client 10s\n    timeout server 10s\n    timeout http-request 300ms\n\
         frontend fe\n    bind 127.0.0.1:{port}\n    default_backend be\nbackend be\n    server s1 127.0.0.1:{}\n",
        sys.port(),
        o.port()
    );
    let _w = Weir::start(&cfg, port);
    let mut c = Client::connect(port);
    assert_eq!(c.get("/logme?x=1").status, 200);
    let line = sys.wait_line("/logme", Duration::from_secs(5));
    let msg = line.split_once("]: ").map(|(_, m)| m).unwrap_or(&line);
    let f: Vec<&str> = msg.split(' ').collect();
    // ci:cp [tr] ft b/s TR/Tw/Tc/Tr/Ta ST B CC CS tsc ac/fc/bc/sc/rc sq/bq "r"
    assert!(f[0].starts_with("127.0.0.1:"), "{msg}");
    assert!(f[1].starts_with('[') && f[1].len() == 26, "{msg}");
    assert_eq!(f[2], "fe");
    assert_eq!(f[3], "be/s1");
    let t: Vec<i64> = f[4].split('/').map(|x| x.parse().unwrap()).collect();
    assert_eq!(t.len(), 5);
    assert!(t.iter().all(|x| *x >= 0) && t[4] >= t[3], "{msg}");
    assert_eq!(f[5], "200");
    let r_bytes: u64 = f[6].parse().unwrap();
    assert!(r_bytes > 100);
    assert_eq!((f[7], f[8], f[9]), ("-", "-", "----"));
    assert_eq!(f[10].split('/').count(), 5);
    assert_eq!(f[11], "0/0");
    assert_eq!(&f[12..], ["\"GET", "/logme?x=1", "HTTP/1.1\""]);
    // A bad request and a slow one.
    let mut c = Client::connect(port);
    c.send(b"GET / HTTP/1.1\r\nBad Header: x\r\n\r\n");
    let _ = c.response("GET");
    let line = sys.wait_line(" 400 ", Duration::from_secs(5));
    assert!(
        line.contains("fe fe/<NOSRV> -1/-1/-1/-1/")
            && line.contains(" PR-- ")
            && line.ends_with("\"<BADREQ>\""),
        "{line}"
    );
    let mut c = Client::connect(port);
    c.send(b"GET / HTTP/1.1\r\n");
    let _ = c.response("GET");
    let line = sys.wait_line(" 408 ", Duration::from_secs(5));
    assert!(line.contains(" cR-- "), "{line}");
    // A server timeout is logged as sH with 504.
    let _ = o;
}

#[test]
fn other_clients_are_unaffected_by_a_bad_one() {
    let o = Origin::start("a");
    let (_w, port) = weir_for(&o, "", "");
    let mut good = Client::connect(port);
    assert_eq!(good.get("/1").status, 200);
    let mut bad = Client::connect(port);
    bad.send(b"\x16\x03\x01garbage\r\n\r\n");
    assert_eq!(bad.response("GET").status, 400);
    let mut half = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    half.write_all(b"GET / HTTP/1.1\r\nHost").unwrap();
    drop(half);
    assert_eq!(good.get("/2").status, 200);
}

#[test]
fn http_errors_sections_and_http_error() {
    let dir = tempdir("http-errors");
    let f = dir.join("503.http");
    std::fs::write(
        &f,
        "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 4\r\n\r\nbusy",
    )
    .unwrap();
    let dead = free_port();
    let port = free_port();
    let cfg = format!(
        "http-errors site\n    errorfile 503 {}\n\
         defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         frontend fe\n    bind 127.0.0.1:{port}\n    http-error status 403 content-type text/plain string nope hdr X-Why rules\n    http-request deny if {{ path /deny }}\n    http-request deny deny_status 503 errorfiles site if {{ path /section }}\n    http-request return status 404 errorfiles site if {{ path /fallback }}\n    default_backend be\n\
         backend be\n    retries 0\n    errorfiles site 503\n    server s 127.0.0.1:{dead}\n",
        f.display()
    );
    let _w = Weir::start(&cfg, port);
    let r = Client::connect(port).get("/x");
    assert_eq!((r.status, r.text().as_str()), (503, "busy"));
    let r = Client::connect(port).get("/deny");
    assert_eq!(
        (r.status, r.text().as_str(), r.header("x-why")),
        (403, "nope", Some("rules"))
    );
    // A rule's `errorfiles`: the section's page for its status, or the
    // proxy's when the section has none.
    let r = Client::connect(port).get("/section");
    assert_eq!((r.status, r.text().as_str()), (503, "busy"));
    assert_eq!(Client::connect(port).get("/fallback").status, 404);
    let (code, _, err) = check_cfg(
        "defaults\n    mode http\nfrontend fe\n    bind :80\n    http-request deny errorfiles later\n",
    );
    assert!(
        code != 0 && err.contains(":5]") && err.contains("no http-errors section 'later'"),
        "{err}"
    );
    let bad = format!(
        "defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         backend be\n    errorfiles nowhere\n    server s 127.0.0.1:{dead}\n"
    );
    let (code, _, err) = check_cfg(&bad);
    assert_ne!(code, 0);
    assert!(
        err.contains(":7]") && err.contains("unknown http-errors section 'nowhere'"),
        "{err}"
    );
}

#[test]
fn tune_http_maxhdr_limits_request_headers() {
    let o = Origin::start("a");
    let port = free_port();
    let be = format!("    server s1 127.0.0.1:{}", o.port());
    let _w = Weir::start(&http_cfg(port, "    tune.http.maxhdr 4", "", &be), port);
    // Four header lines pass, five do not.
    let ok = format!("GET / HTTP/1.1\r\n{}\r\n", "A: b\r\n".repeat(4));
    let mut c = Client::connect(port);
    c.send(ok.as_bytes());
    // The origin answers with three headers: within the limit.
    assert_eq!(c.response("GET").status, 200);
    let many = format!("GET / HTTP/1.1\r\n{}\r\n", "A: b\r\n".repeat(5));
    let mut c = Client::connect(port);
    c.send(many.as_bytes());
    assert_eq!(c.response("GET").status, 431);
    assert_eq!(o.seen.lock().unwrap().len(), 1);
    let (code, _, err) = check_cfg("global\n    tune.http.maxhdr 0\n");
    assert_ne!(code, 0);
    assert!(
        err.contains(":2]") && err.contains("between 1 and 32767"),
        "{err}"
    );
}

#[test]
fn idle_keep_alive_clients_end_on_timeout_and_after_a_soft_stop() {
    let o = Origin::start("a");
    let port = free_port();
    let be = format!("    server s1 127.0.0.1:{}", o.port());
    let cfg = http_cfg(port, "", "    timeout http-keep-alive 300ms", &be);
    let w = Weir::start(&cfg, port);
    // The keep-alive timeout closes an idle client, not before it.
    let mut c = Client::connect(port);
    assert_eq!(c.get("/").status, 200);
    let t = std::time::Instant::now();
    assert!(c.closed());
    let idle = t.elapsed();
    assert!(
        idle >= Duration::from_millis(250) && idle < Duration::from_secs(3),
        "{idle:?}"
    );
    // A client that keeps talking within the timeout is kept.
    let mut c = Client::connect(port);
    for _ in 0..3 {
        assert_eq!(c.get("/").status, 200);
    }
    drop(w);
    // A soft stop does not close an idle keep-alive client (it could be
    // sending a request at that moment, haproxy 2.6's race): its next
    // request is answered with `Connection: close`, or it ends at its
    // keep-alive timeout; then the process exits.
    let port = free_port();
    let cfg = http_cfg(port, "", "    timeout http-keep-alive 1s", &be);
    let mut w = Weir::start(&cfg, port);
    let mut idle_clients: Vec<Client> = (0..5).map(|_| Client::connect(port)).collect();
    for c in &mut idle_clients {
        assert_eq!(c.get("/").status, 200);
    }
    w.signal(libc::SIGUSR1);
    w.wait_output("soft stop", Duration::from_secs(5));
    let t = std::time::Instant::now();
    for c in &mut idle_clients[..3] {
        let r = c.get("/");
        assert_eq!(r.status, 200);
        assert_eq!(r.header("connection"), Some("close"));
        assert!(c.closed());
    }
    for c in &mut idle_clients[3..] {
        assert!(c.closed());
    }
    assert!(
        t.elapsed() >= Duration::from_millis(500),
        "{:?}",
        t.elapsed()
    );
    assert_eq!(w.wait_exit(Duration::from_secs(5)), Some(0));
}

#[test]
fn pool_max_conn_and_purge_delay() {
    // pool-max-conn 0: no idle server connection is kept.
    let o = Origin::start("a");
    let (_w, port) = weir_for(&o, "", "    default-server pool-max-conn 0");
    let mut c = Client::connect(port);
    for _ in 0..3 {
        assert_eq!(c.get("/").status, 200);
    }
    assert_eq!(o.connections(), 3);
    // pool-purge-delay: an idle server connection is closed once unused
    // for the delay (the purge runs each second), then a new one opens.
    let o = Origin::start("b");
    let port = free_port();
    let be = format!(
        "    server s1 127.0.0.1:{} pool-purge-delay 200ms",
        o.port()
    );
    let _w = Weir::start(&http_cfg(port, "", "", &be), port);
    let mut c = Client::connect(port);
    assert_eq!(c.get("/").status, 200);
    assert_eq!(c.get("/").status, 200);
    assert_eq!(o.connections(), 1, "reused within the delay");
    // Time passing is what is tested here: the delay, then one purge tick.
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(c.get("/").status, 200);
    assert_eq!(o.connections(), 2, "purged after the delay");
    let (code, _, err) = check_cfg(
        "defaults\n    mode http\n    timeout client 1s\n    timeout server 1s\n    timeout connect 1s\n\
         backend b\n    server s 127.0.0.1:1 pool-max-conn x\n",
    );
    assert_ne!(code, 0);
    assert!(
        err.contains(":7]") && err.contains("pool-max-conn"),
        "{err}"
    );
}

#[test]
fn idle_server_connections_serve_every_thread() {
    // Two threads: each new client lands on either (the kernel spreads
    // them), and a thread with no idle connection takes the other's, as
    // haproxy's threads do. Without that, 16 clients on two threads open
    // two server connections (all on one thread: odds of 1 in 2^15).
    let o = Origin::start("a");
    let log = Syslog::start();
    let port = free_port();
    let fe = format!(
        "    log 127.0.0.1:{} local0\n    option httplog",
        log.port()
    );
    let be = format!(
        "    http-reuse always\n    server s1 127.0.0.1:{}",
        o.port()
    );
    let cfg = http_cfg(port, "", &fe, &be).replace("nbthread 1", "nbthread 2");
    let _w = Weir::start(&cfg, port);
    for i in 0..16 {
        let mut c = Client::connect(port);
        assert_eq!(c.get(&format!("/{i}")).status, 200);
        // Logged once the exchange is over: its server connection is back
        // in its thread's pool.
        log.wait_line(&format!("GET /{i} "), Duration::from_secs(5));
    }
    assert_eq!(o.connections(), 1, "one server connection for every client");
}

/// A server connection weir is done with (the client asked to close, so
/// it is not kept) ends with a reset, as HAProxy's do: no FIN exchange, no
/// TIME_WAIT on either side. The server sees its next read fail with
/// ECONNRESET instead of returning end-of-stream.
#[test]
fn server_connections_weir_is_done_with_close_with_a_reset() {
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let tx = std::sync::Mutex::new(tx);
    let srv = Server::start(move |mut c| {
        let mut head = Vec::new();
        let mut b = [0u8; 1024];
        while !head.windows(4).any(|w| w == b"\r\n\r\n") {
            match c.read(&mut b) {
                Ok(0) | Err(_) => return,
                Ok(n) => head.extend_from_slice(&b[..n]),
            }
        }
        let _ = c.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
        let _ = c.set_read_timeout(Some(Duration::from_secs(5)));
        let end = match c.read(&mut b) {
            Ok(0) => "fin".to_string(),
            Ok(n) => format!("{n} more bytes"),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => "reset".to_string(),
            Err(e) => format!("error {e}"),
        };
        let _ = tx.lock().unwrap().send(end);
    });
    let port = free_port();
    let be = format!("    server s1 {}", srv.addr);
    let _w = Weir::start(&http_cfg(port, "", "", &be), port);
    let mut c = Client::connect(port);
    c.send(b"GET /x HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
    let r = c.response("GET");
    assert_eq!((r.status, r.body.as_slice()), (200, &b"ok"[..]));
    let end = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("the server saw its connection end");
    assert_eq!(end, "reset");
}

#[test]
fn http_ignore_probes_silences_empty_connections_only() {
    let o = Origin::start("o");
    let log = Syslog::start();
    let (quiet, loud) = (free_port(), free_port());
    let cfg = format!(
        "global\n    nbthread 1\ndefaults\n    mode http\n    option httplog\n    timeout connect 1s\n    timeout client 10s\n    timeout server 10s\n    timeout http-request 300ms\n\
         frontend quiet\n    bind 127.0.0.1:{quiet}\n    option http-ignore-probes\n    log 127.0.0.1:{} local0\n    default_backend be\n\
         frontend loud\n    bind 127.0.0.1:{loud}\n    log 127.0.0.1:{} local0\n    default_backend be\n\
         backend be\n    server s1 127.0.0.1:{}\n",
        log.port(),
        log.port(),
        o.port()
    );
    let _w = Weir::start(&cfg, quiet);
    for port in [quiet, loud] {
        // A connection closed before its first byte, then one that waits
        // past `timeout http-request`.
        drop(std::net::TcpStream::connect(("127.0.0.1", port)).unwrap());
        let mut c = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut got = Vec::new();
        c.read_to_end(&mut got).unwrap();
        let got = String::from_utf8_lossy(&got);
        if port == quiet {
            assert!(got.is_empty(), "no 408 to a probe: {got}");
        } else {
            assert!(got.starts_with("HTTP/1.1 408"), "{got}");
        }
        // A request that was started is still answered and logged.
        let mut c = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        c.write_all(b"GET /mark HTTP/1.1\r\nHost: t\r\n").unwrap();
        let mut got = Vec::new();
        c.read_to_end(&mut got).unwrap();
        assert!(
            got.starts_with(b"HTTP/1.1 408"),
            "{}",
            String::from_utf8_lossy(&got)
        );
    }
    log.wait_line(" loud loud/<NOSRV> ", Duration::from_secs(5));
    wait_for(
        "both partial requests logged",
        Duration::from_secs(5),
        || {
            let lines = log.lines.lock().unwrap();
            (lines.iter().filter(|l| l.contains(" 408 ")).count() == 3).then_some(())
        },
    );
    let lines = log.lines.lock().unwrap().clone();
    let quiet_lines: Vec<_> = lines
        .iter()
        .filter(|l| l.contains(" quiet quiet/"))
        .collect();
    assert_eq!(quiet_lines.len(), 1, "only the started request: {lines:?}");
    let loud_lines = lines.iter().filter(|l| l.contains(" loud loud/")).count();
    assert_eq!(loud_lines, 3, "{lines:?}");
}

/// `rb` and `tb` of the established socket `ss` finds with `filter`.
fn skmem(filter: &str) -> (u64, u64) {
    let out = std::process::Command::new("ss")
        .args(["-tmnH", "state", "established"])
        .args(filter.split(' '))
        .output()
        .expect("ss (iproute2) is needed by this test");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let field = |k: &str| -> u64 {
        let i = text
            .find(&format!(",{k}"))
            .unwrap_or_else(|| panic!("no {k} in {text}"));
        let digits: String = text[i + k.len() + 1..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        digits.parse().unwrap()
    };
    (field("rb"), field("tb"))
}

#[test]
fn socket_buffer_sizes_from_tune_keywords() {
    let o = Origin::start("o");
    let port = free_port();
    let global = "    tune.rcvbuf.client 32768\n    tune.sndbuf.client 40960\n    tune.rcvbuf.server 49152\n    tune.sndbuf.server 57344";
    let be = format!("    server s1 127.0.0.1:{}", o.port());
    let _w = Weir::start(&http_cfg(port, global, "", &be), port);
    let mut c = Client::connect(port);
    assert_eq!(c.get("/").status, 200);
    // Linux keeps twice the size asked for (its bookkeeping).
    assert_eq!(skmem(&format!("sport = :{port}")), (65536, 81920));
    assert_eq!(skmem(&format!("dport = :{}", o.port())), (98304, 114688));
}
