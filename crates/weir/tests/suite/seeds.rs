//! The configurations printed in the seed benchmark reports
//! (`tests/fixtures/seeds/`): `weir -c` accepts each one and weir runs each
//! one with real servers behind it.

use crate::common::http::{Client, Origin};
use crate::common::*;
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::time::Duration;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/seeds")
}

fn fixture(name: &str) -> String {
    std::fs::read_to_string(fixtures().join(name)).unwrap()
}

fn named_on(addr: &str, name: &'static str) -> Server {
    Server::start_on(TcpListener::bind(addr).unwrap(), move |mut c| {
        use std::io::Write;
        let _ = c.write_all(name.as_bytes());
    })
}

fn fetch_from(addr: &str) -> String {
    use std::io::Read;
    let mut c = TcpStream::connect(addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut s = String::new();
    c.read_to_string(&mut s).unwrap();
    s
}

/// Waits until `addr` itself listens (a server of the test may hold its
/// port on another address).
fn wait_bound(addr: &str) {
    let a: std::net::SocketAddrV4 = addr.parse().unwrap();
    wait_for(
        &format!("weir to listen on {addr}"),
        Duration::from_secs(10),
        || listening_on(a).then_some(()),
    );
}

/// Starts weir on a fixture with `/var/run/` moved into a temp dir.
fn start_fixture(name: &str, bind: &str) -> Weir {
    let dir = tempdir("seed");
    let text = fixture(name).replace("/var/run/", &format!("{}/", dir.display()));
    let w = Weir::spawn(&text, &[]);
    wait_bound(bind);
    w
}

#[test]
fn every_seed_configuration_passes_check_mode() {
    let mut n = 0;
    for e in std::fs::read_dir(fixtures()).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "cfg") {
            let (code, out, err) = run_weir(&["-c", "-f", p.to_str().unwrap()]);
            assert_eq!(code, 0, "{}: {err}", p.display());
            assert!(out.contains("Configuration file is valid"));
            n += 1;
        }
    }
    assert_eq!(n, 5);
}

#[test]
fn seed_000_iperf_listeners_run() {
    let _srv = named_on("127.0.0.11:5001", "real1");
    for name in [
        "000-iperf-listen.cfg",
        "000-nbproc4.cfg",
        "000-nbthread4.cfg",
    ] {
        let w = start_fixture(name, "127.0.0.10:5001");
        assert_eq!(fetch_from("127.0.0.10:5001"), "real1", "{name}");
        if name != "000-iperf-listen.cfg" {
            let threads = std::fs::read_dir(format!("/proc/{}/task", w.pid()))
                .unwrap()
                .count();
            assert!(threads >= 5, "{name}: 4 workers + main, got {threads}");
        }
        drop(w);
        wait_for("the port to be released", Duration::from_secs(5), || {
            TcpListener::bind("127.0.0.10:5001").ok().map(|_| ())
        });
    }
}

#[test]
fn seed_002_spirent_runs() {
    if std::process::Command::new("id")
        .arg("haproxy")
        .output()
        .map_or(true, |o| !o.status.success())
    {
        eprintln!("no 'haproxy' user (Debian's haproxy package creates it); skipping the run");
        return;
    }
    let _s: Vec<Origin> = [
        ("127.0.0.21:8080", "real1"),
        ("127.0.0.22:8080", "real2"),
        ("127.0.0.23:8080", "real3"),
        ("127.0.0.24:8080", "real4"),
    ]
    .into_iter()
    .map(|(a, n)| Origin::start_on(TcpListener::bind(a).unwrap(), n))
    .collect();
    let w = start_fixture("002-spirent.cfg", "127.0.0.20:8080");
    // A new connection per request, as the Spirent test does.
    let mut seen: Vec<String> = (0..4)
        .map(|_| {
            let r = Client::connect_addr("127.0.0.20:8080").get("/");
            r.field("server").unwrap_or_default()
        })
        .collect();
    seen.sort();
    assert_eq!(
        seen,
        ["real1", "real2", "real3", "real4"],
        "roundrobin over the four servers"
    );
    // privileges were dropped to the haproxy user
    let status = std::fs::read_to_string(format!("/proc/{}/status", w.pid())).unwrap();
    let uid_line = status.lines().find(|l| l.starts_with("Uid:")).unwrap();
    assert!(
        !uid_line.split_whitespace().skip(1).all(|u| u == "0"),
        "{uid_line}"
    );
}

#[test]
fn seed_003_dpbench_runs() {
    let srv = Origin::start_on(TcpListener::bind("127.0.0.31:8000").unwrap(), "s1");
    let _w = start_fixture("003-dpbench.cfg", "127.0.0.30:8000");
    // Keep-alive requests with empty bodies, as dpbench sends them.
    let mut c = Client::connect_addr("127.0.0.30:8000");
    for _ in 0..3 {
        let r = c.get("/?s=0");
        assert_eq!(r.status, 200);
        assert!(r.body.is_empty());
    }
    assert_eq!(srv.connections(), 1);
}
