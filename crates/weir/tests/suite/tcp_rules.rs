//! `tcp-request connection|session|content` and `tcp-response content`
//! rules, differential against haproxy 2.6: the same configuration through
//! both, the same clients, then what each client got (an answer with the
//! variables and addresses the rules set, or a closed connection) and the
//! denial counters of `show stat` (`dcon`, `dses`, `dreq`, `dresp`).

use crate::common::*;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::time::Duration;

/// The listeners: a plain one, then one per rule to trigger.
const PORTS: usize = 7;

fn cfg(sock: &Path, ports: &[u16], origin: u16) -> String {
    let binds: String = ports
        .iter()
        .map(|p| format!("    bind 127.0.0.1:{p}\n"))
        .collect();
    let p = |i: usize| ports[i];
    format!(
        "global\n    stats socket {} level admin\n\
         defaults rules\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         \x20   tcp-request connection set-var(sess.from_defaults) str(yes)\n\
         frontend fe from rules\n{binds}\
         \x20   tcp-request connection reject if {{ dst_port {} }}\n\
         \x20   tcp-request connection set-src ipv4(10.1.2.3) if {{ dst_port {} }}\n\
         \x20   tcp-request connection expect-proxy layer4 if {{ dst_port {} }}\n\
         \x20   tcp-request connection set-var(sess.conn) str(c)\n\
         \x20   tcp-request session reject if {{ dst_port {} }}\n\
         \x20   tcp-request session set-var(sess.sess) src\n\
         \x20   tcp-request content reject if {{ dst_port {} }}\n\
         \x20   tcp-request content set-var-fmt(txn.content) \"%[var(sess.conn)]-%[dst_port]\"\n\
         \x20   http-request set-header x-vars \"%[var(sess.from_defaults)],%[var(sess.conn)],%[var(sess.sess)],%[var(txn.content)]\"\n\
         \x20   http-request set-header x-src %[src]\n\
         \x20   http-response set-header x-res %[var(txn.res)]\n\
         \x20   default_backend be\n\
         defaults back\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         backend be from back\n\
         \x20   tcp-response content reject if {{ dst_port {} }}\n\
         \x20   tcp-response content set-var(txn.res) str(r)\n\
         \x20   server s 127.0.0.1:{origin}\n",
        sock.display(),
        p(1),
        p(2),
        p(3),
        p(4),
        p(5),
        p(6),
    )
}

/// One request on `port` (after `prefix`, a PROXY header); what came back:
/// the answer's status, `x-res` and body, or `closed`.
fn outcome(port: u16, prefix: &str) -> String {
    let raw = format!("{prefix}GET /x HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
    let Some((status, head, body)) = exchange_once(port, &raw) else {
        return "closed".into();
    };
    let res = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("x-res: ")
                .map(str::to_string)
        })
        .unwrap_or_default();
    format!("{status} res={res} {body}")
}

/// What each listener gives, in order.
fn outcomes(ports: &[u16]) -> Vec<String> {
    (0..PORTS)
        .map(|i| {
            let prefix = if i == 3 {
                format!("PROXY TCP4 192.0.2.7 127.0.0.1 4000 {}\r\n", ports[i])
            } else {
                String::new()
            };
            outcome(ports[i], &prefix)
        })
        .collect()
}

/// The frontend's and the backend's denial counters.
fn denials(sock: &Path) -> Vec<String> {
    show_stat(sock)
        .into_iter()
        .filter(|r| r["svname"] == "FRONTEND" || r["svname"] == "BACKEND")
        .map(|r| {
            let cols = ["dcon", "dses", "dreq", "dresp"];
            let v: Vec<String> = cols.iter().map(|c| format!("{c}={}", r[*c])).collect();
            format!("{}/{} {}", r["pxname"], r["svname"], v.join(" "))
        })
        .collect()
}

#[test]
fn tcp_rules_in_http_mode_as_haproxy() {
    let org = x_headers_origin(false);
    let dir = tempdir("tcp-rules");
    let (ws, hs) = (dir.join("w.sock"), dir.join("h.sock"));
    let wports: Vec<u16> = (0..PORTS).map(|_| free_port()).collect();
    let hports: Vec<u16> = (0..PORTS).map(|_| free_port()).collect();
    let Some(_h) = Haproxy::start(&cfg(&hs, &hports, org.port()), hports[0]) else {
        panic!("haproxy is not installed: tests/run installs it");
    };
    let mut w = Weir::spawn(&cfg(&ws, &wports, org.port()), &[]);
    for p in &wports {
        w.wait_listening(*p);
    }
    let ours = outcomes(&wports);
    let theirs = outcomes(&hports);
    // The answers name the client's own port in `txn.content`: compare
    // them with each side's ports put back to indices.
    let norm = |v: Vec<String>, ports: &[u16]| -> Vec<String> {
        v.into_iter()
            .map(|s| {
                ports
                    .iter()
                    .enumerate()
                    .fold(s, |s, (i, p)| s.replace(&p.to_string(), &format!("P{i}")))
            })
            .collect()
    };
    let (ours, theirs) = (norm(ours, &wports), norm(theirs, &hports));
    assert_eq!(ours, theirs, "weir's outcomes, then haproxy's");
    // What the rules did, as the test expects it (so that both agreeing
    // on nothing cannot pass).
    assert!(ours[0].starts_with("200 res=r "), "{ours:?}");
    assert!(ours[0].contains("x-vars: yes,c,127.0.0.1,c-P0"), "{ours:?}");
    assert_eq!(ours[1], "closed", "connection reject");
    assert!(ours[2].contains("x-src: 10.1.2.3"), "set-src: {ours:?}");
    assert!(
        ours[3].contains("x-src: 192.0.2.7"),
        "expect-proxy: {ours:?}"
    );
    assert_eq!(ours[4], "closed", "session reject");
    assert_eq!(ours[5], "closed", "content reject");
    assert_eq!(ours[6], "closed", "response reject");
    let ws_den = wait_for("weir's counters", Duration::from_secs(5), || {
        let d = denials(&ws);
        d.iter().any(|l| l.contains("dresp=1")).then_some(d)
    });
    let hs_den = wait_for("haproxy's counters", Duration::from_secs(5), || {
        let d = denials(&hs);
        d.iter().any(|l| l.contains("dresp=1")).then_some(d)
    });
    assert_eq!(ws_den, hs_den, "weir's denial counters, then haproxy's");
    assert!(
        ws_den[0].contains("dcon=1 dses=1 dreq=1 dresp=1"),
        "{ws_den:?}"
    );
}

#[test]
fn tcp_rules_in_tcp_mode() {
    let echo = Server::start(|mut c| {
        let mut b = [0u8; 64];
        while let Ok(n) = c.read(&mut b) {
            if n == 0 || c.write_all(&b[..n]).is_err() {
                break;
            }
        }
    });
    let (open, denied, dropped) = (free_port(), free_port(), free_port());
    let cfg = format!(
        "defaults\n    mode tcp\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         listen l\n    bind 127.0.0.1:{open}\n    bind 127.0.0.1:{denied}\n    bind 127.0.0.1:{dropped}\n\
         \x20   tcp-request inspect-delay 1s\n\
         \x20   tcp-request content reject if {{ dst_port {denied} }}\n\
         \x20   tcp-request connection silent-drop if {{ dst_port {dropped} }}\n\
         \x20   server s {}\n",
        echo.addr
    );
    let mut w = Weir::spawn(&cfg, &[]);
    for p in [open, denied, dropped] {
        w.wait_listening(p);
    }
    // (The refused clients send nothing: unread bytes would turn any
    // close into a reset.)
    let talk = |port: u16, say: &[u8]| -> std::io::Result<Vec<u8>> {
        let mut c = TcpStream::connect(("127.0.0.1", port))?;
        c.set_read_timeout(Some(Duration::from_secs(5)))?;
        c.write_all(say)?;
        let mut b = vec![0u8; 4];
        let n = c.read(&mut b)?;
        b.truncate(n);
        Ok(b)
    };
    assert_eq!(talk(open, b"ping").unwrap(), b"ping");
    assert_eq!(talk(denied, b"").unwrap(), b"", "content reject closes");
    let e = talk(dropped, b"").expect_err("silent-drop resets");
    assert_eq!(e.kind(), std::io::ErrorKind::ConnectionReset, "{e}");
}

#[test]
fn connection_session_and_request_addresses_stay_apart() {
    // `fc_src`/`fc_dst` are the connection's: only `tcp-request
    // connection` rules change them; `src`/`dst` follow the session's
    // rules and then each request's, which start again from the session's
    // on the next request. A PROXY header names the session's ends. The
    // 503 of a frontend without a backend runs `http-after-response` too.
    let port = free_port();
    let show = |p: &str| {
        format!(
            "    http-after-response set-header {p}-fc %[fc_src]/%[fc_dst]\n    http-after-response set-header {p}-s %[src]/%[dst]\n"
        )
    };
    let cfg = format!(
        "defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         frontend fe\n    bind 127.0.0.1:{port}\n\
         \x20   tcp-request connection set-src ipv4(10.0.0.1)\n    tcp-request connection set-dst ipv4(10.0.0.2)\n\
         \x20   tcp-request session set-src ipv4(10.1.0.1)\n    tcp-request session set-var(sess.fc) fc_src\n\
         \x20   http-request set-src hdr(x-src) if {{ req.hdr(x-src) -m found }}\n\
         \x20   http-after-response set-header sess-fc %[var(sess.fc)]\n{}",
        show("r")
    );
    let _w = Weir::start(&cfg, port);
    let mut c = crate::common::http::Client::connect(port);
    c.send(b"GET / HTTP/1.1\r\nHost: t\r\nx-src: 192.168.0.1\r\n\r\n");
    let r = c.response("GET");
    assert_eq!(r.status, 503);
    assert_eq!(r.header("sess-fc"), Some("10.0.0.1"));
    assert_eq!(r.header("r-fc"), Some("10.0.0.1/10.0.0.2"));
    assert_eq!(r.header("r-s"), Some("192.168.0.1/10.0.0.2"));
    let mut c = crate::common::http::Client::connect(port);
    let r = c.get("/");
    assert_eq!(r.header("r-s"), Some("10.1.0.1/10.0.0.2"));

    // With `accept-proxy`, the header's addresses are the session's.
    let port = free_port();
    let cfg = format!(
        "defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         frontend fe\n    bind 127.0.0.1:{port} accept-proxy\n    tcp-request connection set-src ipv4(10.1.0.1)\n{}",
        show("p")
    );
    let _w = Weir::start(&cfg, port);
    let mut c = crate::common::http::Client::connect(port);
    c.send(b"PROXY TCP4 192.168.0.1 192.168.0.2 1000 80\r\n");
    let r = c.get("/");
    assert_eq!(r.header("p-fc"), Some("10.1.0.1/127.0.0.1"));
    assert_eq!(r.header("p-s"), Some("192.168.0.1/192.168.0.2"));
}

/// The netfilter mark and TOS `ss` shows for the socket at local port
/// `port` whose peer is at port `peer` (`-`: none shown).
fn marks(port: u16, peer: u16) -> String {
    let out = std::process::Command::new("ss")
        .args(["-tnHe", "--tos", "state", "established"])
        .arg(format!("( sport = :{port} and dport = :{peer} )"))
        .output()
        .expect("ss (iproute2) is needed: tests/run installs it");
    let text = String::from_utf8_lossy(&out.stdout);
    let field = |name: &str| {
        text.split_whitespace()
            .find_map(|w| w.strip_prefix(name))
            .unwrap_or("-")
            .to_string()
    };
    format!("mark={} tos={}", field("fwmark:"), field("tos:"))
}

#[test]
fn set_mark_and_set_tos_mark_the_client_socket_as_haproxy() {
    let echo = Server::start(|mut c| {
        let mut b = [0u8; 256];
        while let Ok(n) = c.read(&mut b) {
            let ok = match &b[..n] {
                [] => false,
                [b'G', ..] => c
                    .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
                    .is_ok(),
                m => c.write_all(m).is_ok(),
            };
            if !ok {
                break;
            }
        }
    });
    let got = beside_haproxy(|start| {
        let (tcp, http) = (free_port(), free_port());
        let cfg = format!(
            "defaults\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
             listen t\n    mode tcp\n    bind 127.0.0.1:{tcp}\n\
             \x20   tcp-request connection set-tos 0x48\n    tcp-request content set-mark 7\n    tcp-request content set-nice 5\n\
             \x20   server s {}\n\
             listen h\n    mode http\n    bind 127.0.0.1:{http}\n\
             \x20   http-request set-mark 0x2a if {{ path /mark }}\n    http-response set-tos 32 if {{ status 200 }}\n\
             \x20   server s {}\n",
            echo.addr, echo.addr
        );
        let _p = start(&cfg, tcp);
        let mut out = Vec::new();
        let mut c = TcpStream::connect(("127.0.0.1", tcp)).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        c.write_all(b"ping").unwrap();
        let mut b = [0u8; 4];
        c.read_exact(&mut b).unwrap();
        out.push(marks(tcp, c.local_addr().unwrap().port()));
        for path in ["/", "/mark"] {
            let mut c = TcpStream::connect(("127.0.0.1", http)).unwrap();
            c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            c.write_all(format!("GET {path} HTTP/1.1\r\nhost: a\r\n\r\n").as_bytes())
                .unwrap();
            let mut b = [0u8; 40];
            c.read_exact(&mut b).unwrap();
            out.push(marks(http, c.local_addr().unwrap().port()));
        }
        out
    });
    assert_eq!(
        got,
        ["mark=0x7 tos=0x48", "mark=- tos=0x20", "mark=0x2a tos=0x20"]
    );
}
