//! The Prometheus exporter through the real binary: `http-request
//! use-service prometheus-exporter` answers with metrics that follow live
//! traffic, under HAProxy 2.6's names and types (compared with a live
//! haproxy's exporter), scoped by `?scope=`, and clean for `promtool check
//! metrics`.

use crate::common::http::{Client, Origin};
use crate::common::tls::{run, text};
use crate::common::*;
use std::collections::BTreeSet;
use std::time::Duration;

fn cfg(stats: u16, port: u16, o1: u16) -> String {
    format!(
        "global\n    nbthread 2\n\
         defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         frontend stats\n    bind 127.0.0.1:{stats}\n    http-request use-service prometheus-exporter if {{ path /metrics }}\n\
         frontend fe\n    bind 127.0.0.1:{port}\n    default_backend be\n\
         backend be\n    server o1 127.0.0.1:{o1}\n    server dead 127.0.0.1:9 check inter 200ms fall 1\n"
    )
}

fn scrape(port: u16, query: &str) -> (u16, String, String) {
    let mut c = Client::connect(port);
    let r = c.get(&format!("/metrics{query}"));
    let ctype = r.header("content-type").unwrap_or("").to_string();
    (r.status, ctype, r.text())
}

/// `# TYPE` lines as (name, type).
fn families(t: &str) -> BTreeSet<(String, String)> {
    t.lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.split_once(' '))
        .map(|(n, k)| (n.to_string(), k.to_string()))
        .collect()
}

#[test]
fn metrics_follow_traffic_under_haproxy_names() {
    let o1 = Origin::start("o1");
    let (stats, port) = (free_port(), free_port());
    let mut w = Weir::spawn(&cfg(stats, port, o1.port()), &[]);
    w.wait_listening(stats);
    w.wait_listening(port);
    let mut c = Client::connect(port);
    for _ in 0..5 {
        assert_eq!(c.get("/").status, 200);
    }
    let (status, ctype, t) = wait_for(
        "the checked and counted metrics",
        Duration::from_secs(5),
        || {
            let s = scrape(stats, "");
            let ready =
                s.2.contains("haproxy_frontend_http_requests_total{proxy=\"fe\"} 5\n")
                    && s.2.contains(
                        "haproxy_server_status{proxy=\"be\",server=\"dead\",state=\"DOWN\"} 1\n",
                    );
            ready.then_some(s)
        },
    );
    assert_eq!(status, 200);
    assert_eq!(ctype, "text/plain; version=0.0.4");
    assert!(t.contains("haproxy_process_nbthread 2\n"), "{t}");
    assert!(t.contains("haproxy_frontend_http_responses_total{proxy=\"fe\",code=\"2xx\"} 5\n"));
    assert!(t.contains("haproxy_server_sessions_total{proxy=\"be\",server=\"o1\"} 5\n"));
    assert!(
        t.contains("haproxy_server_check_status{proxy=\"be\",server=\"dead\",state=\"L4CON\"} 1\n")
    );
    assert!(t.contains("haproxy_backend_active_servers{proxy=\"be\"} 1\n"));

    // Scopes.
    let (_, _, fe_only) = scrape(stats, "?scope=frontend");
    assert!(fe_only.contains("haproxy_frontend_") && !fe_only.contains("haproxy_server_"));
    assert!(!fe_only.contains("haproxy_process_"));
    assert_eq!(scrape(stats, "?scope=bogus").0, 400);
    assert_eq!(scrape(stats, "?scope=").2, "");

    // promtool (Debian `prometheus`; .ci/run installs it) finds nothing.
    if std::process::Command::new("promtool")
        .arg("--version")
        .output()
        .is_ok()
    {
        let out = run(&["promtool", "check", "metrics"], t.as_bytes());
        assert!(out.status.success(), "promtool: {}", text(&out));
    } else {
        panic!("promtool is not installed: tests/run installs it");
    }

    // Every family is one of haproxy 2.6's, with the same type.
    if std::process::Command::new("haproxy")
        .arg("-v")
        .output()
        .is_err()
    {
        panic!("haproxy is not installed: tests/run installs it");
    }
    let dir = tempdir("prom-haproxy");
    let (hs, hp) = (free_port(), free_port());
    let hcfg = dir.join("h.cfg");
    std::fs::write(&hcfg, cfg(hs, hp, o1.port())).unwrap();
    let mut h = std::process::Command::new("haproxy")
        .args(["-db", "-q", "-f"])
        .arg(&hcfg)
        .spawn()
        .unwrap();
    // Once its check has run, as weir's had: some families (the check's
    // duration) appear only then.
    let theirs = wait_for(
        "haproxy's exporter after its check",
        Duration::from_secs(10),
        || {
            std::net::TcpStream::connect(("127.0.0.1", hs)).ok()?;
            let t = scrape(hs, "").2;
            t.contains(
                "haproxy_server_check_status{proxy=\"be\",server=\"dead\",state=\"L4CON\"} 1",
            )
            .then_some(t)
        },
    );
    let _ = h.kill();
    let _ = h.wait();
    let (ours, theirs) = (families(&t), families(&theirs));
    let extra: Vec<_> = ours.difference(&theirs).collect();
    assert!(extra.is_empty(), "not in haproxy 2.6's exporter: {extra:?}");
    assert!(ours.len() > 100, "{} families", ours.len());
}
