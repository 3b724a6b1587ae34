//! TLS termination through the real binary with real clients (curl,
//! openssl s_client, socat): certificates made by openssl for each run, SNI
//! selection and strict-sni, versions and suites, ALPN, client
//! certificates, session resumption, `mode tcp` offload, certificate errors
//! at start-up, and failed handshakes that leave other clients alone.

mod common;

use common::http::{fnv, Origin};
use common::*;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

/// Runs a command bounded by 20 s, with `stdin` as its input.
fn run(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new("timeout")
        .arg("20")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut i = child.stdin.take().expect("stdin");
    let input = stdin.to_vec();
    let w = std::thread::spawn(move || {
        let _ = i.write_all(&input);
    });
    let out = child.wait_with_output().expect("wait");
    let _ = w.join();
    out
}

fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .current_dir(dir)
        .args(args)
        .output()
        .expect("openssl");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Test PKI: a CA; an ECDSA server certificate for www.example.com and
/// *.example.org (chain + key in one PEM, as HAProxy has them); a
/// self-signed RSA one for other.test; a client certificate from the CA.
struct Pki {
    dir: PathBuf,
}

impl Pki {
    fn new() -> Pki {
        let dir = tempdir("tls-pki");
        let d = dir.as_path();
        openssl(
            d,
            &[
                "req",
                "-x509",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:P-256",
                "-nodes",
                "-keyout",
                "ca.key",
                "-out",
                "ca.pem",
                "-days",
                "30",
                "-subj",
                "/O=weir tests/CN=weir test CA",
            ],
        );
        // Server certificate signed by the CA.
        openssl(
            d,
            &[
                "req",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:P-256",
                "-nodes",
                "-keyout",
                "www.key",
                "-out",
                "www.csr",
                "-subj",
                "/CN=www.example.com",
            ],
        );
        std::fs::write(
            d.join("www.ext"),
            "subjectAltName=DNS:www.example.com,DNS:*.example.org\n",
        )
        .unwrap();
        openssl(
            d,
            &[
                "x509",
                "-req",
                "-in",
                "www.csr",
                "-CA",
                "ca.pem",
                "-CAkey",
                "ca.key",
                "-CAcreateserial",
                "-out",
                "www.crt",
                "-days",
                "30",
                "-extfile",
                "www.ext",
            ],
        );
        // Client certificate.
        openssl(
            d,
            &[
                "req",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:P-256",
                "-nodes",
                "-keyout",
                "client.key",
                "-out",
                "client.csr",
                "-subj",
                "/C=FR/O=weir/CN=client-one",
            ],
        );
        std::fs::write(d.join("client.ext"), "extendedKeyUsage=clientAuth\n").unwrap();
        openssl(
            d,
            &[
                "x509",
                "-req",
                "-in",
                "client.csr",
                "-CA",
                "ca.pem",
                "-CAkey",
                "ca.key",
                "-CAcreateserial",
                "-out",
                "client.crt",
                "-days",
                "30",
                "-extfile",
                "client.ext",
            ],
        );
        // RSA, self-signed.
        openssl(
            d,
            &[
                "req",
                "-x509",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-keyout",
                "other.key",
                "-out",
                "other.crt",
                "-days",
                "30",
                "-subj",
                "/CN=other.test",
                "-addext",
                "subjectAltName=DNS:other.test",
            ],
        );
        let cat = |parts: &[&str], out: &str| {
            let mut all = Vec::new();
            for p in parts {
                all.extend(std::fs::read(d.join(p)).unwrap());
            }
            std::fs::write(d.join(out), all).unwrap();
        };
        std::fs::create_dir_all(d.join("certs")).unwrap();
        cat(&["www.crt", "ca.pem", "www.key"], "certs/1-www.pem");
        cat(&["other.crt", "other.key"], "certs/2-other.pem");
        Pki { dir }
    }
    fn path(&self, name: &str) -> String {
        self.dir.join(name).to_string_lossy().into_owned()
    }
}

/// curl through weir with `name` resolved to 127.0.0.1 (so SNI is sent).
fn curl(port: u16, name: &str, path: &str, extra: &[&str]) -> Output {
    let url = format!("https://{name}:{port}{path}");
    let resolve = format!("{name}:{port}:127.0.0.1");
    let mut args = vec!["curl", "-sS", "-k", "-v", "--resolve", &resolve];
    args.extend_from_slice(extra);
    args.push(&url);
    run(&args, b"")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A `mode http` frontend with `bind_opts` after `ssl`, answering with
/// what the TLS fetches say (or passing to `origin` when given).
fn tls_cfg(port: u16, bind_opts: &str, origin: Option<u16>, global: &str) -> String {
    let route = match origin {
        Some(p) => format!("    default_backend be\nbackend be\n    server o 127.0.0.1:{p}\n"),
        None => "    http-request return status 200 content-type text/plain lf-string \"sni=%[ssl_fc_sni] proto=%[ssl_fc_protocol] cipher=%[ssl_fc_cipher] alpn=%[ssl_fc_alpn] fc=%[ssl_fc] crt=%[ssl_c_used] dn=%[ssl_c_s_dn] idn=%[ssl_c_i_dn]\\n\"\n".into(),
    };
    format!(
        "global\n    nbthread 2\n{global}\ndefaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         frontend fe\n    bind 127.0.0.1:{port} ssl {bind_opts}\n{route}"
    )
}

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
    assert!(
        t.contains("alpn=http/1.1 fc=1 crt=0"),
        "h2 is left out in mode http: {t}"
    );
    assert!(w.stderr().contains("'alpn' offers h2"), "{}", w.stderr());
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
    let cfg = tls_cfg(
        port,
        &format!("crt {} strict-sni", pki.path("certs")),
        None,
        &format!("    log 127.0.0.1:{} local0\n", log.port()),
    )
    .replace("    mode http\n", "    mode http\n    log global\n");
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
    let o = run(
        &[
            "openssl",
            "s_client",
            "-connect",
            &addr,
            "-servername",
            "nope.test",
        ],
        b"",
    );
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
    // A crt-list with filters, and one with per-line options (refused).
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
        format!("{} [alpn h2] other.test\n", pki.path("certs/2-other.pem")),
    )
    .unwrap();
    let (code, _, err) = check_cfg(&cfg);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("line 1: per-certificate options"), "{err}");
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
    let line = log.wait_line("be/plain is DOWN", Duration::from_secs(10));
    assert!(line.contains("Layer6"), "{line}");
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

#[test]
fn ocsp_response_is_stapled() {
    let pki = Pki::new();
    let d = pki.dir.as_path();
    // An OCSP response for the www certificate, signed by the CA itself.
    let serial = Command::new("openssl")
        .args(["x509", "-in", "www.crt", "-noout", "-serial"])
        .current_dir(d)
        .output()
        .expect("openssl");
    let serial = String::from_utf8_lossy(&serial.stdout)
        .trim()
        .trim_start_matches("serial=")
        .to_string();
    std::fs::write(
        d.join("index.txt"),
        format!("V\t301231000000Z\t\t{serial}\tunknown\t/CN=www.example.com\n"),
    )
    .unwrap();
    openssl(
        d,
        &[
            "ocsp", "-issuer", "ca.pem", "-cert", "www.crt", "-reqout", "req.der",
        ],
    );
    openssl(
        d,
        &[
            "ocsp",
            "-index",
            "index.txt",
            "-rsigner",
            "ca.pem",
            "-rkey",
            "ca.key",
            "-CA",
            "ca.pem",
            "-reqin",
            "req.der",
            "-respout",
            "certs/1-www.pem.ocsp",
            "-ndays",
            "1",
        ],
    );
    let port = free_port();
    let cfg = tls_cfg(port, &format!("crt {}", pki.path("certs")), None, "");
    let _w = Weir::start(&cfg, port);
    let addr = format!("127.0.0.1:{port}");
    let o = run(
        &[
            "openssl",
            "s_client",
            "-connect",
            &addr,
            "-servername",
            "www.example.com",
            "-status",
        ],
        b"",
    );
    let t = text(&o);
    assert!(t.contains("OCSP Response Status: successful"), "{t}");
    assert!(t.contains("Cert Status: good"), "{t}");
    // The RSA certificate has no .ocsp file: nothing is stapled.
    let o = run(
        &[
            "openssl",
            "s_client",
            "-connect",
            &addr,
            "-servername",
            "other.test",
            "-status",
        ],
        b"",
    );
    assert!(
        text(&o).contains("OCSP response: no response sent"),
        "{}",
        text(&o)
    );
}

/// The load generator's https mode (`target/release/weir-bench`, built
/// with the workspace): sessions resumed by default, full handshakes with
/// `--tls-full`, as weir's `ssl_fc_is_resumed` logs them.
#[test]
fn load_generator_resumes_or_not() {
    let bench = std::env::current_exe()
        .ok()
        .and_then(|p| Some(p.parent()?.parent()?.join("weir-bench")))
        .filter(|p| p.exists())
        .expect("weir-bench is built with the workspace");
    let pki = Pki::new();
    let log = Syslog::start();
    let port = free_port();
    let cfg = tls_cfg(
        port,
        &format!("crt {}", pki.path("certs/1-www.pem")),
        None,
        &format!("    log 127.0.0.1:{} local0\n", log.port()),
    )
    .replace(
        "    mode http\n",
        "    mode http\n    log global\n    log-format \"resumed=%[ssl_fc_is_resumed] %ST\"\n",
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
    let cfg = tls_cfg(
        port,
        &format!("crt {}", pki.path("certs")),
        None,
        &format!("    log 127.0.0.1:{} local0\n", log.port()),
    )
    .replace(
        "    mode http\n",
        "    mode http\n    log global\n    option dontlognull\n",
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
