//! TLS towards servers (`server … ssl`) through the real binary: verified
//! chains, SNI from an expression, name checks, client certificates, TLS
//! health checks, `mode tcp` re-encryption; and the load generator's https
//! mode resuming sessions or not.

use crate::common::http::Origin;
use crate::common::tls::*;
use crate::common::*;
use std::process::Command;
use std::time::Duration;

/// see (SNI, version), on a fresh port.
fn tls_origin(pki: &Pki) -> (Weir, u16) {
    let port = free_port();
    let cfg = tls_cfg(port, &format!("crt {}", pki.path("certs")), None, "");
    (Weir::start(&cfg, port), port)
}

/// weir in `mode http` in front of `server_line`.
fn front(server_line: &str, be_extra: &str, global: &str) -> (Weir, u16) {
    let port = free_port();
    let cfg = format!(
        "global\n    nbthread 1\n{global}\ndefaults\n    mode http\n    timeout connect 2s\n    timeout client 5s\n    timeout server 5s\n\
         frontend fe\n    bind 127.0.0.1:{port}\n    default_backend be\nbackend be\n{be_extra}\n    {server_line}\n"
    );
    (Weir::start(&cfg, port), port)
}

fn get(port: u16, host: &str) -> (u16, String) {
    let o = run(
        &[
            "curl",
            "-s",
            "-H",
            &format!("Host: {host}"),
            "-w",
            "\n%{http_code}",
            &format!("http://127.0.0.1:{port}/"),
        ],
        b"",
    );
    let t = String::from_utf8_lossy(&o.stdout).into_owned();
    let (body, code) = t.rsplit_once('\n').unwrap_or(("", "0"));
    (code.trim().parse().unwrap_or(0), body.to_string())
}

#[test]
fn tls_to_servers_verify_sni_and_names() {
    let pki = Pki::new();
    let (_o, oport) = tls_origin(&pki);
    let ca = pki.path("ca.pem");

    // Verified chain, a fixed SNI; several requests over kept connections.
    let (_w, port) = front(
        &format!(
            "server s 127.0.0.1:{oport} ssl verify required ca-file {ca} sni str(www.example.com)"
        ),
        "",
        "",
    );
    for _ in 0..3 {
        let (code, body) = get(port, "x");
        assert_eq!(code, 200, "{body}");
        assert!(body.contains("sni=www.example.com proto=TLSv1.3"), "{body}");
    }
    // The SNI from the request's Host header.
    let (_w2, port2) = front(
        &format!("server s 127.0.0.1:{oport} ssl verify none sni req.hdr(host)"),
        "",
        "",
    );
    let (code, body) = get(port2, "other.test");
    assert_eq!(code, 200, "{body}");
    assert!(body.contains("sni=other.test"), "{body}");
    let (_, body) = get(port2, "a.example.org");
    assert!(
        body.contains("sni=a.example.org"),
        "a different name, a different connection: {body}"
    );
    // The SNI from a variable the request's rules set.
    let (_w6, port6) = front(
        &format!("server s 127.0.0.1:{oport} ssl verify none sni var(txn.name)"),
        "    http-request set-var(txn.name) req.hdr(host),lower",
        "",
    );
    let (_, body) = get(port6, "Named.Test");
    assert!(body.contains("sni=named.test"), "{body}");

    // No name: the chain alone is checked, as HAProxy does.
    let (_w3, port3) = front(
        &format!("server s 127.0.0.1:{oport} ssl verify required ca-file {ca}"),
        "",
        "",
    );
    assert_eq!(get(port3, "x").0, 200);
    // A name the certificate does not carry, or another CA: 503.
    let (_w4, port4) = front(
        &format!(
            "server s 127.0.0.1:{oport} ssl verify required ca-file {ca} verifyhost nope.test"
        ),
        "    retries 0",
        "",
    );
    assert_eq!(get(port4, "x").0, 503);
    let other = pki.path("other.crt");
    let (_w5, port5) = front(
        &format!("server s 127.0.0.1:{oport} ssl ca-file {other} sni str(www.example.com)"),
        "    retries 0",
        "",
    );
    assert_eq!(get(port5, "x").0, 503);
    // TLS towards a server that speaks clear text: 503.
    let origin = Origin::start("plain");
    let (_w6, port6) = front(
        &format!("server s 127.0.0.1:{} ssl verify none", origin.port()),
        "    retries 0",
        "",
    );
    assert_eq!(get(port6, "x").0, 503);
}

#[test]
fn tls_server_errors_and_checks() {
    let pki = Pki::new();
    // verify is required by default: without a CA file it is an error.
    let cfg = "defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\nbackend be\n    server s 127.0.0.1:1 ssl\n";
    let (code, _, err) = check_cfg(cfg);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("haproxy.cfg:7]") && err.contains("no CA file"),
        "{err}"
    );
    let (code, _, err) =
        check_cfg(&cfg.replace("defaults", "global\n    ssl-server-verify none\ndefaults"));
    assert_eq!(code, 0, "{err}");

    // Checks over TLS: up against the TLS origin, down against clear text.
    let (_o, oport) = tls_origin(&pki);
    let origin = Origin::start("plain");
    let log = Syslog::start();
    let global = format!("    log 127.0.0.1:{} local0\n", log.port());
    let be = "    option httpchk GET /\n    option log-health-checks\n    log global";
    let (_w, port) = front(
        &format!("server tls 127.0.0.1:{oport} ssl verify none check inter 200 rise 1 fall 1\n    server plain 127.0.0.1:{} check-ssl verify none check inter 200 rise 1 fall 1", origin.port()),
        be,
        &global,
    );
    // (With `option log-health-checks` the check's own line gives the
    // reason, the server's line none, as in haproxy.)
    let line = log.wait_line(
        "Health check for server be/plain failed",
        Duration::from_secs(10),
    );
    assert!(line.contains("Layer6"), "{line}");
    log.wait_line("be/plain is DOWN.", Duration::from_secs(10));
    for _ in 0..4 {
        let (code, body) = get(port, "x");
        assert_eq!(code, 200, "only the TLS server gets traffic: {body}");
        assert!(body.contains("proto=TLSv1.3"), "{body}");
    }
}

#[test]
fn tcp_mode_tls_to_a_server() {
    let pki = Pki::new();
    let echo = Server::echo();
    // Inner: TLS offload to the echo server; outer: clear text in, TLS out.
    let inner = free_port();
    let icfg = format!(
        "defaults\n    mode tcp\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         listen i\n    bind 127.0.0.1:{inner} ssl crt {}\n    server e 127.0.0.1:{}\n",
        pki.path("certs/1-www.pem"),
        echo.port()
    );
    let _i = Weir::start(&icfg, inner);
    let (_o, port) = proxy_to(
        "inner",
        inner,
        &format!(
            "ssl verify required ca-file {} sni str(www.example.com)",
            pki.path("ca.pem")
        ),
    );
    let data = random_bytes(200_000, 5);
    let target = format!("TCP:127.0.0.1:{port}");
    let o = run(&["socat", "-t", "5", "-", &target], &data);
    assert!(
        o.stdout == data,
        "{} of {} bytes back",
        o.stdout.len(),
        data.len()
    );
}

#[test]
fn client_certificate_towards_a_server() {
    let pki = Pki::new();
    let mut pem = std::fs::read(pki.dir.join("client.crt")).unwrap();
    pem.extend(std::fs::read(pki.dir.join("client.key")).unwrap());
    std::fs::write(pki.dir.join("client.pem"), pem).unwrap();
    let oport = free_port();
    let ocfg = tls_cfg(
        oport,
        &format!(
            "crt {} ca-file {} verify required",
            pki.path("certs/1-www.pem"),
            pki.path("ca.pem")
        ),
        None,
        "",
    );
    let _o = Weir::start(&ocfg, oport);
    let (_w, port) = front(
        &format!(
            "server s 127.0.0.1:{oport} ssl verify none crt {}",
            pki.path("client.pem")
        ),
        "",
        "",
    );
    let (code, body) = get(port, "x");
    assert_eq!(code, 200, "{body}");
    assert!(
        body.contains("crt=1 dn=/C=FR/O=weir/CN=client-one"),
        "{body}"
    );
    let (_w2, port2) = front(
        &format!("server s 127.0.0.1:{oport} ssl verify none"),
        "    retries 0",
        "",
    );
    // Under TLS 1.3 the client's side of the handshake ends before the
    // origin judges the certificate: its alert comes instead of a response.
    assert_eq!(get(port2, "x").0, 502, "the origin wants a certificate");
}

/// The load generator's https mode (`target/release/weir-bench`, built
/// with the workspace): sessions resumed by default, full handshakes with
/// `--tls-full`, as weir's `ssl_fc_is_resumed` logs them.
#[test]
fn load_generator_resumes_or_not() {
    let bench = weir_bench();
    let pki = Pki::new();
    let log = Syslog::start();
    let port = free_port();
    let cfg = logged_tls_cfg(
        port,
        &format!("crt {}", pki.path("certs/1-www.pem")),
        log.port(),
        "    log-format \"resumed=%[ssl_fc_is_resumed] %ST\"\n",
    );
    let _w = Weir::start(&cfg, port);
    let url = format!("https://127.0.0.1:{port}/");
    for (extra, want_resumed) in [(None, true), (Some("--tls-full"), false)] {
        log.lines.lock().unwrap().clear();
        let mut args = vec![
            "load",
            "-c",
            "2",
            "-n",
            "20",
            "--close",
            "--quiet",
            "--sni",
            "www.example.com",
        ];
        args.extend(extra);
        args.push(&url);
        let o = Command::new(&bench)
            .args(&args)
            .output()
            .expect("weir-bench");
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        assert!(
            out.contains("requests 20 ") && out.contains("errors 0 "),
            "{out}"
        );
        let lines = wait_for("20 log lines", Duration::from_secs(5), || {
            let l = log.lines.lock().unwrap().clone();
            (l.len() >= 20).then_some(l)
        });
        let resumed = lines.iter().filter(|l| l.contains("resumed=1 200")).count();
        if want_resumed {
            assert!(resumed >= 16, "most connections resume: {resumed} of 20");
        } else {
            assert_eq!(resumed, 0, "{lines:?}");
        }
    }
}
