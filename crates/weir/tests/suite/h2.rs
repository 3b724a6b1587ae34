//! HTTP/2 towards clients through the real binary: curl with prior
//! knowledge (`proto h2`) and over TLS (ALPN), rules and logs as for
//! HTTP/1.1, bodies both ways by checksum, trailers both ways, multiplexed
//! load with h2load, h2spec on both kinds of bind, and the defences (rapid
//! reset, CONTINUATION and PING floods, malformed requests, idle timeout).

use crate::common::h2::*;
use crate::common::http::{fnv, Origin};
use crate::common::tls::{run, text, Pki};
use crate::common::*;
use std::path::PathBuf;
use std::time::Duration;

/// A `proto h2` frontend (with `fe` lines) to the origin, logging to
/// `syslog` with `option httplog`, and `bind_extra` binds.
fn h2_cfg(port: u16, origin: u16, syslog: u16, fe: &str, bind_extra: &str) -> String {
    format!(
        "global\n    nbthread 2\n    log 127.0.0.1:{syslog} local0\n\
         defaults\n    mode http\n    log global\n    option httplog\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         frontend fe\n    bind 127.0.0.1:{port} proto h2\n{bind_extra}{fe}    default_backend be\n\
         backend be\n    server o 127.0.0.1:{origin}\n"
    )
}

fn curl_h2c(port: u16, path: &str, extra: &[&str]) -> String {
    let url = format!("http://127.0.0.1:{port}{path}");
    let mut args = vec!["curl", "-sS", "--http2-prior-knowledge"];
    args.extend_from_slice(extra);
    args.push(&url);
    text(&run(&args, b""))
}

#[test]
fn h2c_requests_meet_the_same_rules_and_logs() {
    let o = Origin::start("o1");
    let log = Syslog::start();
    let port = free_port();
    let fe = "    http-request set-header x-ver %[req.ver]\n\
              \x20   http-request deny if { path /denied }\n\
              \x20   http-request redirect location /new if { path /old }\n\
              \x20   http-response set-header x-fe-ver %[req.ver]\n";
    let _w = Weir::start(&h2_cfg(port, o.port(), log.port(), fe, ""), port);

    let t = curl_h2c(
        port,
        "/a?b=1",
        &["-D", "-", "-H", "Cookie: a=1", "-H", "Cookie: b=2"],
    );
    assert!(t.starts_with("HTTP/2 200"), "{t}");
    assert!(t.contains("x-fe-ver: 2.0"), "{t}");
    assert!(t.contains("uri=/a?b=1\n"), "{t}");
    let head = o.seen.lock().unwrap().last().unwrap().head.clone();
    assert!(head.starts_with("GET /a?b=1 HTTP/1.1\r\n"), "{head}");
    assert!(head.contains("x-ver: 2.0\r\n"), "{head}");
    assert!(
        head.contains(&format!("host: 127.0.0.1:{port}\r\n")),
        "{head}"
    );
    assert!(
        head.lines()
            .any(|l| l.starts_with("cookie: ") && l.contains("a=1") && l.contains("b=2")),
        "cookies in one field: {head}"
    );
    let line = log.wait_line(
        &format!("\"GET http://127.0.0.1:{port}/a?b=1 HTTP/2.0\""),
        Duration::from_secs(5),
    );
    assert!(
        line.contains(" fe be/o ") && line.contains(" 200 "),
        "{line}"
    );

    let t = curl_h2c(
        port,
        "/denied",
        &["-o", "/dev/null", "-w", "%{http_version} %{http_code}"],
    );
    assert_eq!(t, "2 403");
    let t = curl_h2c(port, "/old", &["-D", "-", "-o", "/dev/null"]);
    assert!(
        t.starts_with("HTTP/2 302") && t.contains("location: /new"),
        "{t}"
    );
    log.wait_line("\"GET http://127.0.0.1:", Duration::from_secs(5));
    log.wait_line(" 403 ", Duration::from_secs(5));
}

#[test]
fn bodies_and_trailers_cross_intact() {
    let o = Origin::start("o1");
    let log = Syslog::start();
    let port = free_port();
    let _w = Weir::start(&h2_cfg(port, o.port(), log.port(), "", ""), port);
    let dir = tempdir("h2-bodies");

    // Up with a length, and without one (chunked towards the server).
    let body = random_bytes(1 << 20, 7);
    let file = dir.join("up.bin");
    std::fs::write(&file, &body).unwrap();
    let t = curl_h2c(
        port,
        "/up",
        &["--data-binary", &format!("@{}", file.display())],
    );
    assert!(t.contains(&format!("body_len={}\n", body.len())), "{t}");
    assert!(t.contains(&format!("body_fnv={}\n", fnv(&body))), "{t}");
    let url = format!("http://127.0.0.1:{port}/stdin");
    let out = run(
        &["curl", "-sS", "--http2-prior-knowledge", "-T", "-", &url],
        &body,
    );
    let t = text(&out);
    assert!(t.contains(&format!("body_fnv={}\n", fnv(&body))), "{t}");
    let seen = o.seen.lock().unwrap().last().unwrap().clone();
    assert!(
        seen.head.contains("transfer-encoding: chunked"),
        "{}",
        seen.head
    );

    // Down: 3 MB with a length, and chunked with a trailer.
    let down = dir.join("down.bin");
    let t = curl_h2c(
        port,
        "/?s=3000000",
        &["-o", &down.display().to_string(), "-w", "%{size_download}"],
    );
    assert_eq!(t, "3000000");
    let got = std::fs::read(&down).unwrap();
    assert!(got
        .iter()
        .enumerate()
        .all(|(i, &b)| b == b'a' + (i % 26) as u8));
    let t = curl_h2c(
        port,
        "/chunked?s=5000",
        &["-D", "-", "-o", &down.display().to_string()],
    );
    assert!(t.starts_with("HTTP/2 200"), "{t}");
    assert!(
        t.contains("x-trailer: yes"),
        "the trailer comes through: {t}"
    );
    assert_eq!(std::fs::read(&down).unwrap().len(), 5000);

    // Request trailers reach the server as chunked trailers.
    let mut c = Raw::connect(port);
    let h = block(&[
        (":method", "POST"),
        (":scheme", "http"),
        (":path", "/trailers"),
        (":authority", "localhost"),
        ("te", "trailers"),
    ]);
    let mut out = frame(HEADERS, END_HEADERS, 1, &h);
    out.extend(frame(DATA, 0, 1, b"hello"));
    out.extend(frame(
        HEADERS,
        END_HEADERS | END_STREAM,
        1,
        &block(&[("x-check", "42")]),
    ));
    assert!(c.send(&out));
    let frames = c.until(Duration::from_secs(5), |f| {
        f.stream == 1 && f.flags & END_STREAM != 0
    });
    assert!(
        frames.iter().any(|f| f.kind == HEADERS && f.stream == 1),
        "{frames:?}"
    );
    let seen = o.seen.lock().unwrap().last().unwrap().clone();
    assert_eq!(seen.body, b"hello");
    assert!(
        seen.trailers.iter().any(|t| t.trim_end() == "x-check: 42"),
        "{:?}",
        seen.trailers
    );
}

#[test]
fn h2_over_tls_by_alpn_and_multiplexed_load() {
    let pki = Pki::new();
    let o = Origin::start("o1");
    let log = Syslog::start();
    let (port, tls_port) = (free_port(), free_port());
    let bind = format!(
        "    bind 127.0.0.1:{tls_port} ssl crt {} alpn h2,http/1.1\n",
        pki.path("certs/1-www.pem")
    );
    let mut w = Weir::spawn(&h2_cfg(port, o.port(), log.port(), "", &bind), &[]);
    w.wait_listening(port);
    w.wait_listening(tls_port);

    let url = format!("https://127.0.0.1:{tls_port}/x");
    let t = text(&run(&["curl", "-sSk", "--http2", "-D", "-", &url], b""));
    assert!(t.starts_with("HTTP/2 200"), "{t}");
    log.wait_line(
        &format!("\"GET https://127.0.0.1:{tls_port}/x HTTP/2.0\""),
        Duration::from_secs(5),
    );

    // 2000 requests, 10 at a time on each of 4 connections.
    for url in [
        format!("https://127.0.0.1:{tls_port}/?s=100"),
        format!("http://127.0.0.1:{port}/?s=100"),
    ] {
        let out = run(&["h2load", "-n", "2000", "-c", "4", "-m", "10", &url], b"");
        let t = text(&out);
        assert!(t.contains("2000 succeeded, 0 failed"), "{url}: {t}");
        assert!(t.contains("status codes: 2000 2xx"), "{url}: {t}");
    }
    // Large answers, 10 at a time on each of 2 connections (h2load opens
    // windows of 1 GiB): megabytes wait to be written while the client's
    // WINDOW_UPDATEs come in, which is no flood.
    for url in [
        format!("https://127.0.0.1:{tls_port}/?s=300000"),
        format!("http://127.0.0.1:{port}/?s=300000"),
    ] {
        let out = run(&["h2load", "-n", "100", "-c", "2", "-m", "10", &url], b"");
        let t = text(&out);
        assert!(t.contains("100 succeeded, 0 failed"), "{url}: {t}");
    }
}

/// An HTTP/2 request's fields meet HTTP/1.1's limits: more than
/// `tune.http.maxhdr` (101) of them is a 431, as over HTTP/1.1; 90 pass.
#[test]
fn too_many_fields_get_431_as_over_http1() {
    let o = Origin::start("o1");
    let log = Syslog::start();
    let port = free_port();
    let _w = Weir::start(&h2_cfg(port, o.port(), log.port(), "", ""), port);
    for (n, want) in [(110, "431"), (90, "200")] {
        let mut args: Vec<String> = vec![
            "-o".into(),
            "/dev/null".into(),
            "-w".into(),
            "%{http_code}".into(),
        ];
        for i in 0..n {
            args.push("-H".into());
            args.push(format!("x-f{i}: v"));
        }
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        assert_eq!(curl_h2c(port, "/", &a), want, "{n} fields");
    }
    // One field larger than `tune.bufsize` (16 KiB; varied bytes, so that
    // HPACK's Huffman code cannot shrink it under the buffer) is a 431 too.
    let big: String = (0..20_000u32)
        .map(|i| char::from(b"aZ3_q-Kx9.Lm0~pW"[(i * 7 % 16) as usize]))
        .collect();
    let h = format!("x-big: {big}");
    let a = ["-o", "/dev/null", "-w", "%{http_code}", "-H", h.as_str()];
    assert_eq!(curl_h2c(port, "/", &a), "431", "a 20 KB field");
}

/// A fresh HTTP/2 connection's first answer leaves at once: with Nagle's
/// algorithm on the client socket, a response's DATA frame waited for the
/// client's delayed ACK of its HEADERS (40 ms) on most new connections.
/// 30 connections, each with one request (weir-bench's h2 client), over
/// TLS by ALPN and by prior knowledge: about 0.03 s in all, 0.8-1.3 s with
/// the stalls.
#[test]
fn fresh_h2_connections_answer_without_delayed_ack_stalls() {
    let pki = Pki::new();
    let o = Origin::start("o1");
    let log = Syslog::start();
    let (port, tls_port) = (free_port(), free_port());
    let bind = format!(
        "    bind 127.0.0.1:{tls_port} ssl crt {} alpn h2,http/1.1\n",
        pki.path("certs/1-www.pem")
    );
    let mut w = Weir::spawn(&h2_cfg(port, o.port(), log.port(), "", &bind), &[]);
    w.wait_listening(port);
    w.wait_listening(tls_port);
    for (p, tls) in [(tls_port, true), (port, false)] {
        let mut cmd = std::process::Command::new(weir_bench());
        cmd.args(["idle", "-c", "30", "-d", "0", "--h2", "--request", "/x"]);
        if tls {
            cmd.args(["--tls", "--sni", "www.example.com"]);
        }
        let out = cmd.arg(format!("127.0.0.1:{p}")).output().unwrap();
        let t = String::from_utf8_lossy(&out.stdout).to_string();
        let secs: f64 = t
            .split(" connections in ")
            .nth(1)
            .and_then(|r| r.split('s').next())
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("tls {tls}: {t}"));
        assert!(t.starts_with("established 30 of 30 "), "tls {tls}: {t}");
        assert!(secs < 0.5, "tls {tls}: 30 requests took {secs} s: {t}");
    }
}

/// The h2spec binary: `H2SPEC`, what `tests/run` builds, or the PATH.
fn h2spec() -> String {
    if let Ok(p) = std::env::var("H2SPEC") {
        return p;
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/tools/h2spec");
    if root.exists() {
        return root.display().to_string();
    }
    "h2spec".into()
}

#[test]
fn h2spec_passes_every_case_on_h2c_and_tls() {
    let pki = Pki::new();
    let o = Origin::start("o1");
    let log = Syslog::start();
    let (port, tls_port) = (free_port(), free_port());
    let bind = format!(
        "    bind 127.0.0.1:{tls_port} ssl crt {} alpn h2\n",
        pki.path("certs/1-www.pem")
    );
    let mut w = Weir::spawn(&h2_cfg(port, o.port(), log.port(), "", &bind), &[]);
    w.wait_listening(port);
    w.wait_listening(tls_port);
    let bin = h2spec();
    for (p, tls) in [(port, false), (tls_port, true)] {
        let p = p.to_string();
        let mut args = vec![bin.as_str(), "-h", "127.0.0.1", "-p", &p, "-o", "5"];
        if tls {
            args.extend(["-t", "-k"]);
        }
        let out = run(&args, b"");
        let t = text(&out);
        assert!(
            t.contains("145 tests, 145 passed, 0 skipped, 0 failed"),
            "h2spec (tls: {tls}; install it with tests/run): {t}"
        );
    }
}

/// Resident memory of `pid`, in KiB.
fn rss_kib(pid: i32) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    s.lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap()
}

/// A client that opens every window to 2 GiB, asks for 100 MB and reads
/// nothing: weir stops taking response bytes once a bounded amount waits
/// for the client (the servers wait instead), and others are served.
#[test]
fn a_client_that_opens_its_windows_and_never_reads_costs_bounded_memory() {
    let o = Origin::start("o1");
    let log = Syslog::start();
    let port = free_port();
    let w = Weir::start(&h2_cfg(port, o.port(), log.port(), "", ""), port);
    let rss0 = rss_kib(w.pid());
    let mut c = Raw::connect(port);
    let mut b = frame(SETTINGS, 0, 0, &[0, 4, 0x7f, 0xff, 0xff, 0xff]);
    b.extend(frame(8, 0, 0, &0x7fff_0000u32.to_be_bytes()));
    for i in 0..20 {
        b.extend(get(1 + 2 * i, "/?s=5000000"));
    }
    assert!(c.send(&b));
    wait_for(
        "the 20 requests at the origin",
        Duration::from_secs(10),
        || (o.connections() >= 20).then_some(()),
    );
    // Whatever weir would take, it takes within a moment: watch it.
    let end = std::time::Instant::now() + Duration::from_millis(1500);
    let mut peak = 0;
    while std::time::Instant::now() < end {
        peak = peak.max(rss_kib(w.pid()));
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        peak < rss0 + 32 * 1024,
        "memory stays bounded: {peak} KiB at most, {rss0} KiB before"
    );
    let t = curl_h2c(port, "/other", &["-o", "/dev/null", "-w", "%{http_code}"]);
    assert_eq!(t, "200");
    drop(c);
}

#[test]
fn floods_and_rapid_resets_get_goaway_and_spare_others() {
    let o = Origin::start("o1");
    let log = Syslog::start();
    let port = free_port();
    let fe = "    timeout http-keep-alive 300ms\n";
    let w = Weir::start(&h2_cfg(port, o.port(), log.port(), fe, ""), port);
    let rss0 = rss_kib(w.pid());

    // A malformed request resets its stream only.
    let mut c = Raw::connect(port);
    let bad = block(&[
        (":method", "GET"),
        (":scheme", "http"),
        (":path", "/"),
        ("connection", "close"),
    ]);
    c.send(&frame(HEADERS, END_HEADERS | END_STREAM, 1, &bad));
    c.send(&get(3, "/fine"));
    let f = c.until(Duration::from_secs(5), |f| {
        f.stream == 3 && f.kind == HEADERS
    });
    let rst = f.iter().find(|f| f.kind == RST_STREAM && f.stream == 1);
    assert_eq!(rst.map(Frame::code), Some(1), "PROTOCOL_ERROR: {f:?}");
    assert!(
        f.iter().any(|f| f.stream == 3 && f.kind == HEADERS),
        "{f:?}"
    );

    // Rapid reset: streams opened and cancelled at once.
    let mut c = Raw::connect(port);
    let mut out = Vec::new();
    for i in 0..5000u32 {
        let id = 1 + 2 * i;
        out.extend(get(id, "/?ms=50"));
        out.extend(frame(RST_STREAM, 0, id, &8u32.to_be_bytes()));
    }
    c.send(&out);
    let f = c.until(Duration::from_secs(5), |f| f.kind == GOAWAY);
    let goaway = f.iter().find(|f| f.kind == GOAWAY);
    assert_eq!(
        goaway.map(Frame::code),
        Some(11),
        "ENHANCE_YOUR_CALM: {f:?}"
    );
    assert!(
        o.seen.lock().unwrap().len() < 200,
        "cancelled streams did little work"
    );

    // CONTINUATION flood: an endless header block.
    let mut c = Raw::connect(port);
    let mut out = frame(HEADERS, 0, 1, &block(&[(":method", "GET")]));
    let junk = block(&[("x-junk", &"v".repeat(200))]);
    for _ in 0..20_000 {
        out.extend(frame(CONTINUATION, 0, 1, &junk));
    }
    c.send(&out);
    let f = c.until(Duration::from_secs(5), |f| f.kind == GOAWAY);
    assert!(f.iter().any(|f| f.kind == GOAWAY), "{f:?}");

    // PING flood from a client that never reads: weir stops reading it
    // instead of queueing answers, and serves others meanwhile.
    let mut flooder = Raw::connect(port);
    let ping = frame(PING, 0, 0, b"12345678");
    let pings: Vec<u8> = ping.repeat(4096);
    let sender = std::thread::spawn(move || {
        flooder
            .s
            .set_write_timeout(Some(Duration::from_secs(3)))
            .unwrap();
        let mut sent = 0usize;
        while sent < 200 << 20 && flooder.send(&pings) {
            sent += pings.len();
        }
        sent
    });
    let t = curl_h2c(port, "/other", &["-o", "/dev/null", "-w", "%{http_code}"]);
    assert_eq!(t, "200");
    let sent = sender.join().unwrap();
    assert!(
        sent < 200 << 20,
        "weir kept reading a client that never reads"
    );
    assert!(
        rss_kib(w.pid()) < rss0 + 64 * 1024,
        "memory stays bounded: {} KiB after, {rss0} KiB before",
        rss_kib(w.pid())
    );

    // An idle connection gets GOAWAY(NO_ERROR) after http-keep-alive.
    let mut c = Raw::connect(port);
    let f = c.until(Duration::from_secs(5), |f| f.kind == GOAWAY);
    assert_eq!(
        f.iter().find(|f| f.kind == GOAWAY).map(Frame::code),
        Some(0)
    );
}

#[test]
fn soft_stop_sends_goaway_and_finishes_running_streams() {
    let o = Origin::start("o1");
    let log = Syslog::start();
    let port = free_port();
    let mut w = Weir::start(&h2_cfg(port, o.port(), log.port(), "", ""), port);
    let mut c = Raw::connect(port);
    // Longer than the moment a closing connection lingers for (1 s).
    c.send(&get(1, "/slow?ms=2500"));
    // The request reached the server before the stop.
    wait_for("the request at the origin", Duration::from_secs(5), || {
        (!o.seen.lock().unwrap().is_empty()).then_some(())
    });
    w.signal(libc::SIGUSR1);
    let f = c.until(Duration::from_secs(5), |f| {
        f.stream == 1 && f.flags & END_STREAM != 0
    });
    let goaway = f.iter().find(|f| f.kind == GOAWAY);
    assert_eq!(goaway.map(Frame::code), Some(0), "{f:?}");
    assert!(
        f.iter().any(|f| f.stream == 1 && f.kind == HEADERS),
        "the running stream is answered: {f:?}"
    );
    let t0 = std::time::Instant::now();
    let r = w.wait_exit(Duration::from_secs(15));
    assert_eq!(r, Some(0), "after {:?}: {}", t0.elapsed(), w.stderr());
}

#[test]
fn pseudo_headers_and_windows_as_haproxy() {
    let o = Origin::start("o1");
    let log = Syslog::start();
    let port = free_port();
    let w = Weir::start(&h2_cfg(port, o.port(), log.port(), "", ""), port);
    let mut c = Raw::connect(port);
    let req = |id: u32, scheme: Option<&str>, end: bool| {
        let mut f = vec![(":method", if end { "GET" } else { "POST" })];
        f.extend(scheme.map(|s| (":scheme", s)));
        f.extend([(":path", "/p"), (":authority", "localhost")]);
        let flags = END_HEADERS | if end { END_STREAM } else { 0 };
        frame(HEADERS, flags, id, &block(&f))
    };
    // A `:scheme` that is no scheme is a bad request (400, as haproxy
    // answers); a missing one resets the stream.
    let mut out = req(1, Some("http://localhost/?"), true);
    out.extend(req(3, None, true));
    // A body that ended is acknowledged on its stream before the response.
    out.extend(req(5, Some("http"), false));
    out.extend(frame(DATA, END_STREAM, 5, b"hello"));
    // The log shows the request with its own scheme.
    out.extend(req(7, Some("https"), true));
    assert!(c.send(&out));
    let mut ended = 0;
    let f = c.until(Duration::from_secs(5), |f| {
        // (A SETTINGS ACK's flag is END_STREAM's bit: streams only.)
        let ends = matches!(f.kind, DATA | HEADERS) && f.flags & END_STREAM != 0;
        ended += usize::from(f.stream != 0 && (ends || f.kind == RST_STREAM));
        ended == 4
    });
    let on = |id: u32, kind: u8| f.iter().position(|f| f.stream == id && f.kind == kind);
    assert!(
        on(1, HEADERS).is_some() && on(1, RST_STREAM).is_none(),
        "{f:?}"
    );
    log.wait_line(" 400 ", Duration::from_secs(5));
    let rst = f.iter().find(|f| f.kind == RST_STREAM && f.stream == 3);
    assert_eq!(rst.map(Frame::code), Some(1), "PROTOCOL_ERROR: {f:?}");
    let winup = on(5, 8).expect("a WINDOW_UPDATE on stream 5");
    let frame5 = &f[winup];
    assert_eq!(frame5.payload, 5u32.to_be_bytes(), "{frame5:?}");
    assert!(on(5, HEADERS).is_some_and(|h| h > winup), "{f:?}");
    log.wait_line("GET https://localhost/p HTTP/2.0", Duration::from_secs(5));
    drop(w);
}

#[test]
fn a_stream_whose_connection_ends_is_still_logged() {
    let o = Origin::start("o1");
    let log = Syslog::start();
    let port = free_port();
    let w = Weir::start(&h2_cfg(port, o.port(), log.port(), "", ""), port);
    let mut c = Raw::connect(port);
    c.send(&get(1, "/slow?ms=600"));
    wait_for("the request at the origin", Duration::from_secs(5), || {
        (!o.seen.lock().unwrap().is_empty()).then_some(())
    });
    // The client leaves while its stream waits for the server: the
    // stream still ends (its server's answer is dropped) and is logged.
    drop(c);
    let line = log.wait_line("/slow?ms=600", Duration::from_secs(5));
    assert!(
        line.contains(" fe be/o ") && line.contains(" CH-- "),
        "{line}"
    );
    // The connection's end spares the others.
    let mut c = Raw::connect(port);
    c.send(&get(1, "/after"));
    let f = c.until(Duration::from_secs(5), |f| {
        f.stream == 1 && f.flags & END_STREAM != 0
    });
    assert!(
        f.iter().any(|f| f.stream == 1 && f.kind == HEADERS),
        "{f:?}"
    );
    drop(w);
}

#[test]
fn http2_preface_on_an_http1_bind_speaks_http2_unless_refused() {
    let (p1, p2, p3) = (free_port(), free_port(), free_port());
    let answer = "    http-request return status 200 content-type text/plain lf-string \"ver=%[req.ver]\\n\"\n";
    let cfg = format!(
        "defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         frontend a\n    bind 127.0.0.1:{p1}\n{answer}\
         frontend b\n    bind 127.0.0.1:{p2} proto h1\n{answer}\
         frontend c\n    bind 127.0.0.1:{p3}\n    option disable-h2-upgrade\n{answer}"
    );
    let _w = Weir::start(&cfg, p1);
    // HTTP/2 with prior knowledge, and HTTP/1.1, on the same bind.
    assert_eq!(curl_h2c(p1, "/", &[]), "ver=2.0\n");
    let o = run(&["curl", "-sS", &format!("http://127.0.0.1:{p1}/")], b"");
    assert_eq!(text(&o), "ver=1.1\n");
    // `proto h1` and `option disable-h2-upgrade`: the preface is a bad
    // request.
    for p in [p2, p3] {
        let mut c = crate::common::http::Client::connect(p);
        c.send(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
        assert_eq!(c.response("GET").status, 400, "port {p}");
    }
}
