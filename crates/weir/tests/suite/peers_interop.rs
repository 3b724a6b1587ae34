//! Peers interoperability with Debian's haproxy 2.6: weir and haproxy as
//! the two peers of one `peers` section; entries and counters written on
//! one appear on the other within a second, both ways, and a restarted
//! peer learns the tables again from the other.

use crate::common::*;
use std::path::Path;
use std::time::{Duration, Instant};

/// One side's configuration: `me` is its peer name; a peers-section
/// table and a backend table synchronised with it; a frontend tracking
/// the `x-k` header in the first.
fn cfg(me: &str, sock: &Path, fe: u16, w_peer: u16, h_peer: u16) -> String {
    cfg_tls(me, sock, fe, w_peer, h_peer, None)
}

/// [`cfg`], the peers speaking TLS with certificate `pem` when given.
fn cfg_tls(me: &str, sock: &Path, fe: u16, w_peer: u16, h_peer: u16, pem: Option<&str>) -> String {
    let port = if me == "W" { w_peer } else { h_peer };
    let (default_server, ssl) = match pem {
        Some(p) => (
            format!("    default-server ssl crt {p} verify none\n"),
            format!(" ssl crt {p}"),
        ),
        None => (String::new(), String::new()),
    };
    // The local peer's line has no address beside `bind`.
    let line = |name: &str, p: u16| {
        if name == me {
            format!("    server {name}\n")
        } else {
            format!("    server {name} 127.0.0.1:{p}\n")
        }
    };
    let (w_line, h_line) = (line("W", w_peer), line("H", h_peer));
    format!(
        "global\n    stats socket {} level admin\n    localpeer {me}\n\
         defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         peers mypeers\n    bind 127.0.0.1:{port}{ssl}\n{default_server}\
         {w_line}{h_line}\
         \x20   table t type string len 16 size 100 expire 1m store gpc0,http_req_cnt,conn_rate(10s)\n\
         frontend fe\n    bind 127.0.0.1:{fe}\n\
         \x20   http-request track-sc0 req.hdr(x-k) table mypeers/t\n\
         \x20   http-request return status 200\n\
         backend ips\n    stick-table type ip size 100 expire 1m peers mypeers store gpc0,http_req_rate(10s)\n",
        sock.display()
    )
}

/// `show table <t> key <k>`'s entry line without its address and expiry.
fn entry(sock: &Path, table: &str, key: &str) -> Option<String> {
    let t = ask(sock, &format!("show table {table} key {key}\n"));
    let line = t.lines().find(|l| l.contains(&format!("key={key} ")))?;
    let rest = line.split_once(": ")?.1;
    Some(
        rest.split(' ')
            .filter(|w| !w.starts_with("exp=") && !w.starts_with("use="))
            .collect::<Vec<_>>()
            .join(" "),
    )
}

/// Waits until `sock` shows `want` for `key`; how long it took.
fn seen_within(sock: &Path, table: &str, key: &str, want: &str) -> Duration {
    let start = Instant::now();
    wait_for(
        &format!("{key} = {want} on {}", sock.display()),
        Duration::from_secs(10),
        || entry(sock, table, key).filter(|e| e == want).map(|_| ()),
    );
    start.elapsed()
}

fn get(port: u16, key: &str) {
    let mut c = crate::common::http::Client::connect(port);
    c.send(
        format!("GET / HTTP/1.1\r\nHost: a\r\nx-k: {key}\r\nConnection: close\r\n\r\n").as_bytes(),
    );
    assert_eq!(c.response("GET").status, 200);
}

#[test]
fn weir_and_haproxy_keep_tables_in_step() {
    let dir = tempdir("peers-interop");
    let (ws, hs) = (dir.join("w.sock"), dir.join("h.sock"));
    let (wfe, hfe, wp, hp) = (free_port(), free_port(), free_port(), free_port());
    let Some(h) = Haproxy::start(&cfg("H", &hs, hfe, wp, hp), hfe) else {
        panic!("haproxy is not installed: tests/run installs it");
    };
    let mut w = Weir::start(&cfg("W", &ws, wfe, wp, hp), wfe);
    // Written on weir (by traffic and by the CLI), seen on haproxy.
    for _ in 0..3 {
        get(wfe, "from-weir");
    }
    let want = "key=from-weir gpc0=0 conn_rate(10000)=3 http_req_cnt=3";
    assert_eq!(entry(&ws, "mypeers/t", "from-weir").as_deref(), Some(want));
    let took = seen_within(&hs, "mypeers/t", "from-weir", want);
    assert!(
        took < Duration::from_secs(1),
        "weir → haproxy took {took:?}"
    );
    ask(&ws, "set table ips key 10.0.0.7 data.gpc0 5\n");
    seen_within(
        &hs,
        "ips",
        "10.0.0.7",
        "key=10.0.0.7 gpc0=5 http_req_rate(10000)=0",
    );
    // Written on haproxy, seen on weir.
    get(hfe, "from-haproxy");
    ask(&hs, "set table mypeers/t key from-haproxy data.gpc0 9\n");
    let want = "key=from-haproxy gpc0=9 conn_rate(10000)=1 http_req_cnt=1";
    let took = seen_within(&ws, "mypeers/t", "from-haproxy", want);
    assert!(
        took < Duration::from_secs(1),
        "haproxy → weir took {took:?}"
    );
    // haproxy restarts: it learns the tables from weir.
    drop(h);
    let h = Haproxy::start(&cfg("H", &hs, hfe, wp, hp), hfe).unwrap();
    seen_within(
        &hs,
        "mypeers/t",
        "from-weir",
        "key=from-weir gpc0=0 conn_rate(10000)=3 http_req_cnt=3",
    );
    seen_within(
        &hs,
        "ips",
        "10.0.0.7",
        "key=10.0.0.7 gpc0=5 http_req_rate(10000)=0",
    );
    // weir restarts: it asks haproxy for the tables.
    w.signal(libc::SIGTERM);
    w.wait_exit(Duration::from_secs(5));
    let _w = Weir::start(&cfg("W", &ws, wfe, wp, hp), wfe);
    seen_within(
        &ws,
        "mypeers/t",
        "from-haproxy",
        "key=from-haproxy gpc0=9 conn_rate(10000)=1 http_req_cnt=1",
    );
    seen_within(
        &ws,
        "mypeers/t",
        "from-weir",
        "key=from-weir gpc0=0 conn_rate(10000)=3 http_req_cnt=3",
    );
    drop(h);
}

/// What weir answers on its peers port to `bytes`, until it closes.
fn answer(port: u16, bytes: &[u8]) -> Vec<u8> {
    use std::io::{Read, Write};
    let mut c = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(8))).unwrap();
    c.write_all(bytes).unwrap();
    let mut got = Vec::new();
    let _ = c.read_to_end(&mut got);
    got
}

#[test]
fn bad_peers_are_refused_and_cut_off() {
    let dir = tempdir("peers-bad");
    let ws = dir.join("w.sock");
    let (wfe, wp, hp) = (free_port(), free_port(), free_port());
    let _w = Weir::start(&cfg("W", &ws, wfe, wp, hp), wfe);
    assert_eq!(answer(wp, b"GET / HTTP/1.1\r\nHost: a\r\n\r\n"), b"501\n");
    assert_eq!(answer(wp, b"HAProxyS 9.0\nW\nH 1 0\n"), b"502\n");
    assert_eq!(answer(wp, b"HAProxyS 2.1\nX\nH 1 0\n"), b"503\n");
    assert_eq!(answer(wp, b"HAProxyS 2.1\nW\nnobody 1 0\n"), b"504\n");
    // A known peer that then sends garbage: an error message, then closed.
    let got = answer(wp, b"HAProxyS 2.1\nW\nH 1 0\n\x0a\x82\xff\xff\xff\xff\x0f");
    assert!(got.starts_with(b"200\n"), "{got:?}");
    assert!(got.ends_with(&[1, 0]), "{got:?}");
    // Traffic goes on.
    get(wfe, "still-served");
    assert!(entry(&ws, "mypeers/t", "still-served").is_some());
}

/// A process alone in its peers section, with a table and a frontend
/// counting requests by `x-k` in it; its CLI at `sock`.
fn alone(sock: &Path, fe: u16, peer: u16) -> String {
    format!(
        "global\n    stats socket {} level admin\n    localpeer A\n\
         defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         peers p\n    peer A 127.0.0.1:{peer}\n    table t type string size 100 store gpc0,http_req_cnt\n\
         frontend fe\n    bind 127.0.0.1:{fe}\n\
         \x20   http-request track-sc0 req.hdr(x-k) table p/t\n\
         \x20   http-request sc-inc-gpc0(0) if {{ path /inc }}\n\
         \x20   http-request return status 200\n",
        sock.display()
    )
}

#[test]
fn a_reload_hands_the_tables_to_the_new_process() {
    let dir = tempdir("peers-reload");
    let sock = dir.join("s.sock");
    let (fe, peer) = (free_port(), free_port());
    let mut old = Weir::start(&alone(&sock, fe, peer), fe);
    for _ in 0..3 {
        get(fe, "kept");
    }
    let mut c = crate::common::http::Client::connect(fe);
    c.send(b"GET /inc HTTP/1.1\r\nHost: a\r\nx-k: kept\r\nConnection: close\r\n\r\n");
    assert_eq!(c.response("GET").status, 200);
    let want = "key=kept gpc0=1 http_req_cnt=4";
    assert_eq!(entry(&sock, "p/t", "kept").as_deref(), Some(want));
    let pid = old.pid().to_string();
    let new = Weir::spawn(&alone(&sock, fe, peer), &["-sf", &pid]);
    assert_eq!(
        old.wait_exit(Duration::from_secs(10)),
        Some(0),
        "old process finished"
    );
    // The CLI socket is the new process's now: its table has the counts.
    seen_within(&sock, "p/t", "kept", want);
    get(fe, "kept");
    seen_within(&sock, "p/t", "kept", "key=kept gpc0=1 http_req_cnt=5");
    drop(new);
}

/// The same over TLS (`bind … ssl crt`, `default-server ssl crt … verify
/// none`, as HAProxy's peers/tls_basic_sync): entries go both ways, a
/// plain-text hello on the TLS port gets no answer, and a reload hands the
/// tables over TLS to the new process.
#[test]
fn weir_and_haproxy_keep_tables_in_step_over_tls() {
    let pki = crate::common::tls::Pki::new();
    let pem = pki.path("certs/1-www.pem");
    let dir = tempdir("peers-tls");
    let (ws, hs) = (dir.join("w.sock"), dir.join("h.sock"));
    let (wfe, hfe, wp, hp) = (free_port(), free_port(), free_port(), free_port());
    let conf = |me: &str, sock: &Path| {
        cfg_tls(
            me,
            sock,
            if me == "W" { wfe } else { hfe },
            wp,
            hp,
            Some(&pem),
        )
    };
    let Some(h) = Haproxy::start(&conf("H", &hs), hfe) else {
        panic!("haproxy is not installed: tests/run installs it");
    };
    let w = Weir::start(&conf("W", &ws), wfe);
    get(wfe, "tls-weir");
    seen_within(
        &hs,
        "mypeers/t",
        "tls-weir",
        "key=tls-weir gpc0=0 conn_rate(10000)=1 http_req_cnt=1",
    );
    get(hfe, "tls-haproxy");
    seen_within(
        &ws,
        "mypeers/t",
        "tls-haproxy",
        "key=tls-haproxy gpc0=0 conn_rate(10000)=1 http_req_cnt=1",
    );
    // A peer that does not speak TLS gets no status line.
    let got = answer(wp, b"HAProxyS 2.1\nW\nH 1 0\n");
    assert!(!got.starts_with(b"200"), "{got:?}");
    // A reload: the new process learns the tables over TLS.
    let pid = w.pid().to_string();
    let mut old = w;
    let new = Weir::spawn(&conf("W", &ws), &["-sf", &pid]);
    assert_eq!(old.wait_exit(Duration::from_secs(10)), Some(0));
    seen_within(
        &ws,
        "mypeers/t",
        "tls-weir",
        "key=tls-weir gpc0=0 conn_rate(10000)=1 http_req_cnt=1",
    );
    drop(new);
    drop(h);
}

/// TLS between peers declared by `peer` lines, the local listener's
/// certificate from `default-bind` (the manual's way): entries go both
/// ways between weir and haproxy.
#[test]
fn peer_lines_with_default_bind_speak_tls_with_haproxy() {
    let pki = crate::common::tls::Pki::new();
    let pem = pki.path("certs/1-www.pem");
    let dir = tempdir("peers-default-bind");
    let (ws, hs) = (dir.join("w.sock"), dir.join("h.sock"));
    let (wfe, hfe, wp, hp) = (free_port(), free_port(), free_port(), free_port());
    let conf = |me: &str, sock: &Path| {
        let fe = if me == "W" { wfe } else { hfe };
        let port = if me == "W" { wp } else { hp };
        let peer_lines = format!(
            "    default-bind ssl crt {pem}\n    peer W 127.0.0.1:{wp}\n    peer H 127.0.0.1:{hp}\n"
        );
        let c = cfg_tls(me, sock, fe, wp, hp, Some(&pem));
        let c = c.replace(&format!("    bind 127.0.0.1:{port} ssl crt {pem}\n"), "");
        let c = c
            .replace("    server W\n", "")
            .replace("    server H\n", "");
        let c = c
            .replace(&format!("    server W 127.0.0.1:{wp}\n"), "")
            .replace(&format!("    server H 127.0.0.1:{hp}\n"), "");
        let c = c.replace("    table t ", &format!("{peer_lines}    table t "));
        let bind = format!("    bind 127.0.0.1:{port}");
        assert!(!c.contains("    server ") && !c.contains(&bind), "{c}");
        c
    };
    let Some(h) = Haproxy::start(&conf("H", &hs), hfe) else {
        panic!("haproxy is not installed: tests/run installs it");
    };
    let w = Weir::start(&conf("W", &ws), wfe);
    get(wfe, "dbind-weir");
    let want = |k: &str| format!("key={k} gpc0=0 conn_rate(10000)=1 http_req_cnt=1");
    seen_within(&hs, "mypeers/t", "dbind-weir", &want("dbind-weir"));
    get(hfe, "dbind-haproxy");
    seen_within(&ws, "mypeers/t", "dbind-haproxy", &want("dbind-haproxy"));
    // The listener speaks TLS only.
    let got = answer(wp, b"HAProxyS 2.1\nW\nH 1 0\n");
    assert!(!got.starts_with(b"200"), "{got:?}");
    drop(w);
    drop(h);
}

/// A peers certificate that does not load is an error with its line, in
/// `-c` as at start.
#[test]
fn a_peers_certificate_that_does_not_load_is_an_error_with_its_line() {
    let cfg = "peers p\n    bind 127.0.0.1:1 ssl crt /nonexistent/peer.pem\n    server A\n    server B 127.0.0.1:2 ssl crt /nonexistent/client.pem verify none\n";
    let (code, _, err) = check_cfg(cfg);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("haproxy.cfg:2] : 'bind' in peers section 'p' : ")
            && err.contains("/nonexistent/peer.pem"),
        "{err}"
    );
    assert!(
        err.contains("haproxy.cfg:4] : peer 'B' in peers section 'p' : ")
            && err.contains("/nonexistent/client.pem"),
        "{err}"
    );
}

/// A line's shape: its words with every number, address and name left
/// out (`0x…: id=W(remote,active) …` → `: id=(,) …`).
fn shape(line: &str) -> String {
    line.split_whitespace()
        .map(|w| match w.split_once(['=', ':']) {
            Some((k, _)) if !k.starts_with("0x") => k.to_string(),
            _ if w.starts_with("0x") || w.starts_with('[') => "#".into(),
            _ => w.to_string(),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// On haproxy's session in weir's `show peers`, the shared table `t`:
/// all weir sent was acknowledged, and both sides sent something.
fn acked(t: &str) -> Option<()> {
    let block = t
        .split("\n  0x")
        .find(|b| b.contains("id=H(remote,active)"))?;
    let line = block
        .lines()
        .skip_while(|l| !l.contains("local_id=1 remote_id=1 "))
        .nth(1)?;
    let n = |k: &str| -> Option<u32> {
        line.split_whitespace()
            .find_map(|w| w.strip_prefix(k))?
            .parse()
            .ok()
    };
    let (a, p, g) = (n("last_acked=")?, n("last_pushed=")?, n("last_get=")?);
    (a == p && p > 0 && g > 0).then_some(())
}

/// `show peers` as haproxy lays it out: the same lines for the same
/// section beside haproxy's own dump, with weir's values where they
/// matter (the link established, what each side sent and received).
#[test]
fn show_peers_as_haproxy_dumps_them() {
    let dir = tempdir("peers-show");
    let (ws, hs) = (dir.join("w.sock"), dir.join("h.sock"));
    let (wfe, hfe, wp, hp) = (free_port(), free_port(), free_port(), free_port());
    let Some(h) = Haproxy::start(&cfg("H", &hs, hfe, wp, hp), hfe) else {
        panic!("haproxy is not installed: tests/run installs it");
    };
    let _w = Weir::start(&cfg("W", &ws, wfe, wp, hp), wfe);
    get(wfe, "k1");
    get(hfe, "k2");
    seen_within(
        &ws,
        "mypeers/t",
        "k2",
        "key=k2 gpc0=0 conn_rate(10000)=1 http_req_cnt=1",
    );
    seen_within(
        &hs,
        "mypeers/t",
        "k1",
        "key=k1 gpc0=0 conn_rate(10000)=1 http_req_cnt=1",
    );
    // weir's view of haproxy: established, updates both ways, all of
    // weir's acknowledged.
    let mine = wait_for(
        "weir's acknowledged update",
        Duration::from_secs(10),
        || {
            let t = ask(&ws, "show peers\n");
            acked(&t).map(|()| t)
        },
    );
    let h_block = mine
        .split("\n  0x")
        .find(|b| b.contains("id=H(remote,active)"))
        .unwrap();
    assert!(h_block.contains("last_status=ESTA"), "{mine}");
    assert!(h_block.contains("state=EST"), "{mine}");
    assert!(
        h_block.contains("remote_table:") && h_block.contains("id=mypeers/t local_id=1 remote_id="),
        "{mine}"
    );
    let w_block = mine
        .split("\n  0x")
        .find(|b| b.contains("id=W(local,inactive)"))
        .unwrap();
    assert!(
        w_block.contains("last_status=NONE last_hdshk=<NEVER>"),
        "{mine}"
    );
    // The same lines as haproxy's dump (the transport line is the
    // accepting side's only).
    let theirs = ask(&hs, "show peers\n");
    let shapes = |t: &str| {
        let mut v: Vec<String> = t
            .lines()
            .filter(|l| !l.trim_start().starts_with("xprt="))
            .map(shape)
            .collect();
        v.sort();
        v
    };
    assert_eq!(
        shapes(&mine),
        shapes(&theirs),
        "weir:\n{mine}\nhaproxy:\n{theirs}"
    );
    assert_eq!(ask(&ws, "show peers nosuch\n"), "No such peers\n\n");
    let sections = |t: String| t.lines().filter(|l| l.contains(" id=mypeers ")).count();
    assert_eq!(sections(ask(&ws, "show peers mypeers\n")), 1);
    assert_eq!(sections(ask(&ws, "show peers - mypeers\n")), 1);
    drop(h);
}
