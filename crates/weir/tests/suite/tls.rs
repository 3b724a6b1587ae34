//! TLS termination through the real binary with real clients (curl,
//! openssl s_client, socat): certificates made by openssl for each run, SNI
//! selection and strict-sni, versions and suites, ALPN, client
//! certificates, session resumption, OCSP stapling, `mode tcp` offload and
//! SNI routing, certificate errors at start-up, and failed handshakes that
//! leave other clients alone.

use crate::common::http::{fnv, Origin};
use crate::common::tls::*;
use crate::common::*;
use std::io::Write;
use std::time::Duration;
#[test]
fn https_requests_bodies_and_sni_selection() {
    let pki = Pki::new();
    let origin = Origin::start("o1");
    let port = free_port();
    let cfg = tls_cfg(
        port,
        &format!("crt {}", pki.path("certs")),
        Some(origin.port()),
        "",
    );
    let _w = Weir::start(&cfg, port);

    // Large bodies both ways, intact, on one kept-alive connection.
    let body = random_bytes(1 << 20, 3);
    let file = pki.dir.join("body.bin");
    std::fs::write(&file, &body).unwrap();
    let data = format!("@{}", file.display());
    let o = curl(
        port,
        "www.example.com",
        "/up",
        &[
            "--data-binary",
            &data,
            "-H",
            "Content-Type: application/octet-stream",
        ],
    );
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains(&format!("body_len={}", body.len())), "{t}");
    assert!(t.contains(&format!("body_fnv={}", fnv(&body))), "{t}");
    assert!(t.contains("subject: CN=www.example.com"), "{t}");

    let url2 = format!("https://www.example.com:{port}/?s=3000000");
    let o = curl(
        port,
        "www.example.com",
        "/?s=5",
        &["-o", "/dev/null", "-w", "%{size_download}\n", &url2],
    );
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.lines().any(|l| l.ends_with("3000000")), "{t}");
    assert!(
        t.contains("Re-using existing connection") || t.contains("Reusing existing"),
        "keep-alive under TLS: {t}"
    );

    // SNI: the wildcard, the RSA certificate, and the default (the first
    // file of the directory) for a name no certificate has.
    let o = curl(port, "a.example.org", "/", &[]);
    assert!(
        text(&o).contains("subject: CN=www.example.com"),
        "{}",
        text(&o)
    );
    let o = curl(port, "other.test", "/", &[]);
    assert!(text(&o).contains("subject: CN=other.test"), "{}", text(&o));
    let o = curl(port, "unknown.test", "/", &[]);
    assert!(
        text(&o).contains("subject: CN=www.example.com"),
        "{}",
        text(&o)
    );
    // *.example.org does not cover a deeper name.
    let o = curl(port, "a.b.example.org", "/", &[]);
    assert!(o.status.success());
}

#[test]
fn fetches_versions_suites_and_alpn() {
    let pki = Pki::new();
    let port = free_port();
    let cfg = tls_cfg(
        port,
        &format!("crt {} alpn h2,http/1.1", pki.path("certs/1-www.pem")),
        None,
        "",
    );
    let w = Weir::start(&cfg, port);
    let o = curl(port, "www.example.com", "/", &["--http2"]);
    let t = text(&o);
    assert!(
        t.contains("sni=www.example.com proto=TLSv1.3 cipher=TLS_AES_"),
        "{t}"
    );
    assert!(t.contains("alpn=h2 fc=1 crt=0"), "{t}");
    assert!(t.contains("< HTTP/2 200"), "{t}");
    let o = curl(port, "www.example.com", "/", &["--http1.1"]);
    assert!(text(&o).contains("alpn=http/1.1 fc=1"), "{}", text(&o));
    let o = curl(
        port,
        "www.example.com",
        "/",
        &[
            "--tls-max",
            "1.2",
            "--ciphers",
            "ECDHE-ECDSA-CHACHA20-POLY1305",
        ],
    );
    assert!(
        text(&o).contains("proto=TLSv1.2 cipher=ECDHE-ECDSA-CHACHA20-POLY1305"),
        "{}",
        text(&o)
    );
    drop(w);

    // Versions and suites narrowed on the line and by the global defaults.
    let port = free_port();
    let cfg = tls_cfg(
        port,
        &format!(
            "crt {} ssl-max-ver TLSv1.2 ciphers ECDHE-ECDSA-AES128-GCM-SHA256",
            pki.path("certs/1-www.pem")
        ),
        None,
        "    ssl-default-bind-options ssl-min-ver TLSv1.2\n",
    );
    let _w = Weir::start(&cfg, port);
    let o = curl(port, "www.example.com", "/", &[]);
    assert!(
        text(&o).contains("proto=TLSv1.2 cipher=ECDHE-ECDSA-AES128-GCM-SHA256"),
        "{}",
        text(&o)
    );
    let o = curl(port, "www.example.com", "/", &["--tlsv1.3"]);
    assert!(!o.status.success(), "TLSv1.3 is off: {}", text(&o));
    let o = curl(
        port,
        "www.example.com",
        "/",
        &[
            "--tls-max",
            "1.2",
            "--ciphers",
            "ECDHE-ECDSA-AES256-GCM-SHA384",
        ],
    );
    assert!(!o.status.success(), "that suite is off: {}", text(&o));
    let o = curl(port, "www.example.com", "/", &["--tls-max", "1.1"]);
    assert!(!o.status.success(), "TLSv1.1 is never spoken: {}", text(&o));
}

#[test]
fn strict_sni_and_failed_handshakes_leave_others_alone() {
    let pki = Pki::new();
    let log = Syslog::start();
    let port = free_port();
    let cfg = logged_tls_cfg(
        port,
        &format!("crt {} strict-sni", pki.path("certs")),
        log.port(),
        "",
    );
    let _w = Weir::start(&cfg, port);

    // A client that sends nothing holds its connection open while others
    // are served; `timeout client` ends it.
    let idle = client(port);
    // Plain text on a TLS port: refused, logged.
    let mut plain = client(port);
    plain
        .write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let mut junk = Vec::new();
    let _ = std::io::Read::read_to_end(&mut plain, &mut junk);
    assert!(
        !String::from_utf8_lossy(&junk).contains("HTTP/1.1 200"),
        "{junk:?}"
    );
    log.wait_line("fe/1: SSL handshake failure", Duration::from_secs(5));

    // strict-sni: an unknown name and no name at all get no certificate.
    let addr = format!("127.0.0.1:{port}");
    let o = s_client(port, "nope.test", &[], b"");
    assert!(
        !text(&o).contains("BEGIN CERTIFICATE") && !text(&o).contains("subject=CN = www"),
        "{}",
        text(&o)
    );
    let o = run(
        &["openssl", "s_client", "-connect", &addr, "-noservername"],
        b"",
    );
    assert!(!text(&o).contains("subject=CN = www"), "{}", text(&o));
    // A known name works meanwhile.
    let o = curl(port, "www.example.com", "/", &[]);
    assert!(text(&o).contains("sni=www.example.com"), "{}", text(&o));

    let mut idle = idle;
    idle.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut rest = Vec::new();
    let t0 = std::time::Instant::now();
    let _ = std::io::Read::read_to_end(&mut idle, &mut rest);
    assert!(
        t0.elapsed() < Duration::from_secs(9),
        "timeout client ends a silent handshake"
    );
    log.wait_line("fe/1: Timeout during SSL handshake", Duration::from_secs(5));
}

#[test]
fn client_certificates() {
    let pki = Pki::new();
    let port = free_port();
    let cfg = tls_cfg(
        port,
        &format!(
            "crt {} ca-file {} verify required",
            pki.path("certs/1-www.pem"),
            pki.path("ca.pem")
        ),
        None,
        "",
    );
    let w = Weir::start(&cfg, port);
    let o = curl(port, "www.example.com", "/", &[]);
    assert!(
        !o.status.success(),
        "no certificate, no service: {}",
        text(&o)
    );
    let (cert, key) = (pki.path("client.crt"), pki.path("client.key"));
    let o = curl(
        port,
        "www.example.com",
        "/",
        &["--cert", &cert, "--key", &key],
    );
    let t = text(&o);
    assert!(
        t.contains("crt=1 dn=/C=FR/O=weir/CN=client-one idn=/O=weir tests/CN=weir test CA"),
        "{t}"
    );
    // A certificate from another CA is refused.
    let (ocert, okey) = (pki.path("other.crt"), pki.path("other.key"));
    let o = curl(
        port,
        "www.example.com",
        "/",
        &["--cert", &ocert, "--key", &okey],
    );
    assert!(!o.status.success(), "{}", text(&o));
    drop(w);

    let port = free_port();
    let cfg = tls_cfg(
        port,
        &format!(
            "crt {} ca-file {} verify optional",
            pki.path("certs/1-www.pem"),
            pki.path("ca.pem")
        ),
        None,
        "",
    );
    let _w = Weir::start(&cfg, port);
    let o = curl(port, "www.example.com", "/", &[]);
    assert!(text(&o).contains("crt=0"), "{}", text(&o));
    let o = curl(
        port,
        "www.example.com",
        "/",
        &["--cert", &cert, "--key", &key],
    );
    assert!(
        text(&o).contains("crt=1 dn=/C=FR/O=weir/CN=client-one"),
        "{}",
        text(&o)
    );
}

#[test]
fn sessions_resume_by_ticket_and_by_id() {
    let pki = Pki::new();
    let origin = Origin::start("o1");
    for opts in ["", " no-tls-tickets"] {
        let port = free_port();
        let cfg = tls_cfg(
            port,
            &format!("crt {}{opts}", pki.path("certs/1-www.pem")),
            Some(origin.port()),
            "",
        );
        let _w = Weir::start(&cfg, port);
        let addr = format!("127.0.0.1:{port}");
        let sess = pki.dir.join(format!("sess{}", opts.len()));
        let sess = sess.to_str().unwrap();
        let req = b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
        for v in ["-tls1_2", "-tls1_3"] {
            if v == "-tls1_3" && !opts.is_empty() {
                continue; // TLSv1.3 resumption is by ticket.
            }
            let o = run(
                &[
                    "openssl",
                    "s_client",
                    v,
                    "-connect",
                    &addr,
                    "-servername",
                    "www.example.com",
                    "-ign_eof",
                    "-sess_out",
                    sess,
                ],
                req,
            );
            assert!(text(&o).contains("server=o1"), "{}", text(&o));
            let o = run(
                &[
                    "openssl",
                    "s_client",
                    v,
                    "-connect",
                    &addr,
                    "-servername",
                    "www.example.com",
                    "-ign_eof",
                    "-sess_in",
                    sess,
                ],
                req,
            );
            let t = text(&o);
            assert!(t.contains("Reused, TLSv1."), "{v}{opts}: {t}");
            assert!(t.contains("server=o1"), "{t}");
        }
    }
}

/// TLS 1.3 session tickets wait to leave with the first response (one
/// send fewer per connection); a client that sends nothing after its
/// handshake must still get them, and a client whose request came with
/// its Finished gets them with the answer. Both tickets resume.
#[test]
fn tls13_tickets_reach_silent_and_talking_clients() {
    use std::process::{Command, Stdio};
    let pki = Pki::new();
    let origin = Origin::start("o1");
    let port = free_port();
    let cfg = tls_cfg(
        port,
        &format!("crt {}", pki.path("certs/1-www.pem")),
        Some(origin.port()),
        "",
    );
    let _w = Weir::start(&cfg, port);
    let addr = format!("127.0.0.1:{port}");
    let resume = |sess: &str| {
        let o = run(
            &[
                "openssl",
                "s_client",
                "-tls1_3",
                "-connect",
                &addr,
                "-servername",
                "www.example.com",
                "-ign_eof",
                "-sess_in",
                sess,
            ],
            b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        );
        let t = text(&o);
        assert!(t.contains("Reused, TLSv1.3"), "{t}");
        assert!(t.contains("server=o1"), "{t}");
    };

    // Silent: the handshake, then nothing; s_client writes the session
    // file when a ticket arrives.
    let silent = pki.dir.join("silent.sess");
    let mut child = Command::new("openssl")
        .args(["s_client", "-tls1_3", "-connect", &addr])
        .args(["-servername", "www.example.com", "-sess_out"])
        .arg(&silent)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for(
        "a ticket for a silent client",
        Duration::from_secs(5),
        || {
            std::fs::read_to_string(&silent)
                .ok()
                .filter(|t| t.contains("END SSL SESSION PARAMETERS"))
        },
    );
    let _ = child.kill();
    let _ = child.wait();
    resume(silent.to_str().unwrap());

    // Talking: the request goes at once, the ticket comes with the answer.
    let talking = pki.dir.join("talking.sess");
    let o = run(
        &[
            "openssl",
            "s_client",
            "-tls1_3",
            "-connect",
            &addr,
            "-servername",
            "www.example.com",
            "-ign_eof",
            "-sess_out",
            talking.to_str().unwrap(),
        ],
        b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    assert!(text(&o).contains("server=o1"), "{}", text(&o));
    resume(talking.to_str().unwrap());
}

#[test]
fn tcp_mode_offload_to_a_plain_server() {
    let pki = Pki::new();
    let echo = Server::echo();
    let port = free_port();
    let cfg = format!(
        "global\n    nbthread 1\ndefaults\n    mode tcp\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         listen mqtt\n    bind 127.0.0.1:{port} ssl crt {} alpn h2,mqtt\n    server e 127.0.0.1:{}\n",
        pki.path("certs/1-www.pem"),
        echo.port()
    );
    let _w = Weir::start(&cfg, port);
    let data = random_bytes(300_000, 9);
    let target = format!("OPENSSL:127.0.0.1:{port},verify=0,snihost=www.example.com");
    let o = run(&["socat", "-t", "5", "-", &target], &data);
    assert_eq!(
        o.stdout.len(),
        data.len(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.stdout == data, "bytes intact through TLS offload");
    // mode tcp offers the ALPN list as given.
    let addr = format!("127.0.0.1:{port}");
    let o = run(
        &["openssl", "s_client", "-connect", &addr, "-alpn", "h2"],
        b"",
    );
    assert!(text(&o).contains("ALPN protocol: h2"), "{}", text(&o));
}

#[test]
fn certificate_errors_stop_the_start_with_file_and_line() {
    let pki = Pki::new();
    let garbage = pki.dir.join("garbage.pem");
    std::fs::write(&garbage, "not a pem\n").unwrap();
    let mismatch = pki.dir.join("mismatch.pem");
    let mut m = std::fs::read(pki.dir.join("www.crt")).unwrap();
    m.extend(std::fs::read(pki.dir.join("client.key")).unwrap());
    std::fs::write(&mismatch, m).unwrap();
    let cases = [
        (pki.path("missing.pem"), "unable to load SSL certificate"),
        (
            garbage.to_string_lossy().into_owned(),
            "no certificate found",
        ),
        (
            mismatch.to_string_lossy().into_owned(),
            "inconsistent certificate and private key",
        ),
        (pki.path("www.crt"), "unable to load SSL private key"),
    ];
    for (crt, msg) in cases {
        let cfg = format!(
            "defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
             frontend fe\n    bind 127.0.0.1:1 ssl crt {crt}\n"
        );
        let (code, _, err) = check_cfg(&cfg);
        assert_eq!(code, 1, "{err}");
        assert!(
            err.contains("haproxy.cfg:6]") && err.contains(msg),
            "{msg}: {err}"
        );
        // Started for real: nothing binds, exit 1.
        let port = free_port();
        let dir = tempdir("tls-bad");
        let path = dir.join("haproxy.cfg");
        std::fs::write(
            &path,
            cfg.replace("127.0.0.1:1 ", &format!("127.0.0.1:{port} ")),
        )
        .unwrap();
        let (code, _, err) = run_weir(&["-f", path.to_str().unwrap()]);
        assert_eq!(code, 1, "{err}");
        assert!(
            err.contains(msg) && err.contains("nothing started"),
            "{err}"
        );
    }
    // A crt-list with filters, and one with a per-line option weir does
    // not know.
    let list = pki.dir.join("list.txt");
    std::fs::write(
        &list,
        format!("{} other.test\n", pki.path("certs/2-other.pem")),
    )
    .unwrap();
    let cfg = format!(
        "defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         frontend fe\n    bind 127.0.0.1:1 ssl crt-list {}\n",
        list.display()
    );
    let (code, _, err) = check_cfg(&cfg);
    assert_eq!(code, 0, "{err}");
    std::fs::write(
        &list,
        format!(
            "{} [alpn h2 bogus 1] other.test\n",
            pki.path("certs/2-other.pem")
        ),
    )
    .unwrap();
    let (code, _, err) = check_cfg(&cfg);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("line 1: 'bogus' is not a crt-list option"),
        "{err}"
    );
    assert!(
        err.contains("parsing ["),
        "with the bind's file:line: {err}"
    );
}

#[test]
fn crt_list_line_options_apply_to_their_names() {
    let pki = Pki::new();
    let list = pki.dir.join("opts.txt");
    std::fs::write(
        &list,
        format!(
            "{}\n{} [alpn h2 ssl-max-ver TLSv1.2 ciphers ECDHE-RSA-CHACHA20-POLY1305] other.test\n",
            pki.path("certs/1-www.pem"),
            pki.path("certs/2-other.pem")
        ),
    )
    .unwrap();
    let port = free_port();
    let cfg = tls_cfg(
        port,
        &format!("crt-list {} alpn http/1.1", list.display()),
        None,
        "",
    );
    let _w = Weir::start(&cfg, port);
    // The line's options for its name…
    let o = curl(port, "other.test", "/", &["--http2"]);
    let t = text(&o);
    assert!(t.contains("subject: CN=other.test"), "{t}");
    assert!(
        t.contains("proto=TLSv1.2 cipher=ECDHE-RSA-CHACHA20-POLY1305 alpn=h2"),
        "{t}"
    );
    // …and the bind line's for the others.
    let o = curl(port, "www.example.com", "/", &["--http2"]);
    let t = text(&o);
    assert!(
        t.contains("proto=TLSv1.3") && t.contains("alpn=http/1.1"),
        "{t}"
    );
}

#[test]
fn crt_list_filters_choose_the_certificate() {
    let pki = Pki::new();
    let list = pki.dir.join("list.txt");
    std::fs::write(
        &list,
        format!(
            "{} !www.example.com\n{} www.example.com api.test\n",
            pki.path("certs/1-www.pem"),
            pki.path("certs/2-other.pem")
        ),
    )
    .unwrap();
    let port = free_port();
    let cfg = tls_cfg(port, &format!("crt-list {}", list.display()), None, "");
    let _w = Weir::start(&cfg, port);
    let o = curl(port, "www.example.com", "/", &[]);
    assert!(text(&o).contains("subject: CN=other.test"), "{}", text(&o));
    let o = curl(port, "api.test", "/", &[]);
    assert!(text(&o).contains("subject: CN=other.test"), "{}", text(&o));
    let o = curl(port, "x.example.org", "/", &[]);
    assert!(
        text(&o).contains("subject: CN=www.example.com"),
        "{}",
        text(&o)
    );
}

/// A TLS origin: weir terminating TLS and answering with what the fetches
#[test]
fn ocsp_response_is_stapled() {
    let pki = Pki::new();
    let d = pki.dir.as_path();
    // An OCSP response for the www certificate, signed by the CA itself.
    std::fs::write(d.join("certs/1-www.pem.ocsp"), pki.ocsp_response(false)).unwrap();
    let port = free_port();
    let cfg = tls_cfg(port, &format!("crt {}", pki.path("certs")), None, "");
    let _w = Weir::start(&cfg, port);
    let o = s_client(port, "www.example.com", &["-status"], b"");
    let t = text(&o);
    assert!(t.contains("OCSP Response Status: successful"), "{t}");
    assert!(t.contains("Cert Status: good"), "{t}");
    // The RSA certificate has no .ocsp file: nothing is stapled.
    let o = s_client(port, "other.test", &["-status"], b"");
    assert!(
        text(&o).contains("OCSP response: no response sent"),
        "{}",
        text(&o)
    );
}

#[test]
fn tcp_mode_routes_by_the_terminated_sni() {
    let pki = Pki::new();
    let (one, two) = (Server::named("one"), Server::named("two"));
    let port = free_port();
    let cfg = format!(
        "defaults\n    mode tcp\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         frontend f\n    bind 127.0.0.1:{port} ssl crt {}\n    use_backend b2 if {{ ssl_fc_sni -i other.test }}\n    default_backend b1\n\
         backend b1\n    server one 127.0.0.1:{}\nbackend b2\n    server two 127.0.0.1:{}\n",
        pki.path("certs"),
        one.port(),
        two.port()
    );
    let _w = Weir::start(&cfg, port);
    for (name, want) in [("other.test", "two"), ("www.example.com", "one")] {
        let target = format!("OPENSSL:127.0.0.1:{port},verify=0,snihost={name}");
        let o = run(&["socat", "-t", "5", "-", &target], b"");
        assert_eq!(
            String::from_utf8_lossy(&o.stdout),
            want,
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

#[test]
fn dontlognull_hides_silent_clients_not_failed_handshakes() {
    let pki = Pki::new();
    let log = Syslog::start();
    let port = free_port();
    let cfg = logged_tls_cfg(
        port,
        &format!("crt {}", pki.path("certs")),
        log.port(),
        "    option dontlognull\n",
    );
    let _w = Weir::start(&cfg, port);
    // A client that connects and leaves without a byte: no line (as
    // haproxy 2.6 with dontlognull).
    drop(client(port));
    // Then one that sends clear text: its failure is logged.
    let mut plain = client(port);
    plain
        .write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let mut junk = Vec::new();
    let _ = std::io::Read::read_to_end(&mut plain, &mut junk);
    log.wait_line("fe/1: SSL handshake failure", Duration::from_secs(5));
    let lines = log.lines.lock().unwrap().clone();
    assert!(
        !lines
            .iter()
            .any(|l| l.contains("Connection closed during SSL handshake")),
        "{lines:?}"
    );
}

#[test]
fn x509_v1_certificates_load_as_with_openssl() {
    // `openssl x509 -req` without extensions makes a version 1 certificate,
    // which webpki refuses; OpenSSL (and so haproxy) loads it.
    let pki = Pki::new();
    pki.issue("v1", "/CN=v1.example.com", None);
    let d = pki.dir.as_path();
    let pem = [
        std::fs::read(d.join("v1.crt")).unwrap(),
        std::fs::read(d.join("v1.key")).unwrap(),
    ]
    .concat();
    std::fs::write(d.join("v1.pem"), pem).unwrap();
    let text = run(
        &[
            "openssl",
            "x509",
            "-noout",
            "-text",
            "-in",
            &pki.path("v1.crt"),
        ],
        b"",
    );
    assert!(
        text_of(&text).contains("Version: 1 (0x0)"),
        "{}",
        text_of(&text)
    );
    // As a bind's certificate.
    let port = free_port();
    let cfg = format!(
        "defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         frontend fe\n    bind 127.0.0.1:{port} ssl crt {}\n\
         \x20   http-request return status 200 content-type text/plain lf-string \"dn=%[ssl_f_s_dn] ver=%[ssl_f_version]\\n\"\n",
        pki.path("v1.pem")
    );
    let _w = Weir::start(&cfg, port);
    let o = run(&["curl", "-sk", &format!("https://127.0.0.1:{port}/")], b"");
    assert_eq!(text_of(&o), "dn=/CN=v1.example.com ver=1\n");
    // As a client certificate, to haproxy (OpenSSL) checking it.
    let (hp, front) = (free_port(), free_port());
    let hcfg = format!(
        "defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         frontend fe\n    bind 127.0.0.1:{hp} ssl crt {} ca-file {} verify required\n\
         \x20   http-request return status 200 content-type text/plain lf-string \"dn=%[ssl_c_s_dn]\"\n",
        pki.path("certs/1-www.pem"),
        pki.path("ca.pem")
    );
    let Some(_h) = Haproxy::start(&hcfg, hp) else {
        panic!("haproxy is not installed: tests/run installs it");
    };
    let cfg = format!(
        "defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         frontend fe2\n    bind 127.0.0.1:{front}\n    default_backend be\n\
         backend be\n    server s 127.0.0.1:{hp} ssl verify none crt {}\n",
        pki.path("v1.pem")
    );
    let _w2 = Weir::start(&cfg, front);
    let r = crate::common::http::Client::connect(front).get("/");
    assert_eq!(
        (r.status, r.text()),
        (200, "dn=/CN=v1.example.com".to_string())
    );
}

fn text_of(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}
