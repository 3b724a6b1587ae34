//! HTTP/1 bodies spliced (`option splice-request|response|auto`), beside
//! haproxy 2.6: every byte arrives, a request pipelined after a spliced
//! body is still read as one, and `h1_spliced_bytes_in|out` count what
//! went through the pipe; without the options, or with `nosplice`, nothing
//! is spliced.

use crate::common::http::{fnv, sized, Client, Origin};
use crate::common::*;
use std::collections::HashMap;
use std::io::Read;
use std::path::Path;

/// A proxy on `port` to `origin` with `opts` in its defaults and `global`.
fn cfg(port: u16, origin: u16, sock: &Path, global: &str, opts: &str) -> String {
    format!(
        "global\n    stats socket {}\n{global}\
         defaults\n    mode http\n    timeout connect 1s\n    timeout client 10s\n    timeout server 10s\n{opts}\
         listen li\n    bind 127.0.0.1:{port}\n    server s 127.0.0.1:{origin}\n",
        sock.display()
    )
}

/// A 1 MiB POST with a GET for 2 MB pipelined behind it, then a body that
/// ends with the connection; checks every byte, returns the spliced
/// counters of the frontend and the backend (in, out).
fn story(port: u16, sock: &Path) -> [(u64, u64); 2] {
    let body = random_bytes(1 << 20, 7);
    let mut c = Client::connect(port);
    let mut req = format!(
        "POST /up HTTP/1.1\r\nHost: t\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    req.extend_from_slice(&body);
    req.extend_from_slice(b"GET /?s=2000000 HTTP/1.1\r\nHost: t\r\n\r\n");
    c.send(&req);
    let r = c.response("POST");
    let report = String::from_utf8_lossy(&r.body).into_owned();
    assert!(
        report.contains(&format!("body_len={}\n", body.len())),
        "{report}"
    );
    assert!(
        report.contains(&format!("body_fnv={}\n", fnv(&body))),
        "{report}"
    );
    let r = c.response("GET");
    assert_eq!(r.status, 200);
    assert!(r.body == sized(2_000_000), "the 2 MB body differs");
    let mut c = Client::connect(port);
    c.send(b"GET /noclen?s=1500000 HTTP/1.1\r\nHost: t\r\n\r\n");
    let mut all = Vec::new();
    c.r.read_to_end(&mut all).unwrap();
    let at = all.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    assert!(
        all[at..] == sized(1_500_000),
        "the body ending with the connection differs"
    );
    conns_settled(sock);
    let rows = show_stat(sock);
    let get = |sv: &str| -> (u64, u64) {
        let row: &HashMap<String, String> = rows
            .iter()
            .find(|r| r["pxname"] == "li" && r["svname"] == sv)
            .unwrap();
        let n = |k: &str| {
            row[k]
                .parse::<u64>()
                .unwrap_or_else(|_| panic!("{k}: {:?}", row[k]))
        };
        (n("h1_spliced_bytes_in"), n("h1_spliced_bytes_out"))
    };
    [get("FRONTEND"), get("BACKEND")]
}

#[test]
fn bodies_are_spliced_whole_as_haproxy_splices_them() {
    let origin = Origin::start("o");
    let dir = tempdir("http-splice");
    let spliced = "    option splice-request\n    option splice-response\n";
    let (hp, wp) = (free_port(), free_port());
    let (hs, ws) = (dir.join("h.sock"), dir.join("w.sock"));
    let Some(_h) = Haproxy::start(&cfg(hp, origin.port(), &hs, "", spliced), hp) else {
        panic!("haproxy is not installed: tests/run installs it");
    };
    let _w = Weir::start(&cfg(wp, origin.port(), &ws, "", spliced), wp);
    for (who, [(fi, fo), (bi, bo)]) in [("haproxy", story(hp, &hs)), ("weir", story(wp, &ws))] {
        // Most of each body goes through the pipe; what came with a head
        // is copied. The 2 MB and 1.5 MB bodies go down, the 1 MiB up.
        assert!(fi > 500_000 && fi <= 1 << 20, "{who}: frontend in {fi}");
        assert!(bo == fi, "{who}: backend out {bo}, frontend in {fi}");
        assert!(bi > 3_000_000 && bi <= 3_500_000, "{who}: backend in {bi}");
        assert!(fo == bi, "{who}: frontend out {fo}, backend in {bi}");
    }
}

#[test]
fn nothing_is_spliced_without_the_options_or_with_nosplice() {
    let origin = Origin::start("o");
    let dir = tempdir("http-nosplice");
    let auto = "    option splice-auto\n";
    for (global, opts) in [("", ""), ("    nosplice\n", auto)] {
        let port = free_port();
        let sock = dir.join(format!("w{port}.sock"));
        let _w = Weir::start(&cfg(port, origin.port(), &sock, global, opts), port);
        assert_eq!(story(port, &sock), [(0, 0), (0, 0)], "{global}{opts}");
    }
    // And `splice-auto` alone splices both ways.
    let port = free_port();
    let sock = dir.join("auto.sock");
    let _w = Weir::start(&cfg(port, origin.port(), &sock, "", auto), port);
    let [(fi, fo), (bi, bo)] = story(port, &sock);
    assert!(fi > 0 && fo > 0 && bi > 0 && bo > 0);
}
