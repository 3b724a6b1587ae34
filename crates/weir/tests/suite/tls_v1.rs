//! X.509 version 1 certificates (no extensions, as `openssl x509 -req`
//! makes them without `-extfile`) and version 1 revocation lists (as
//! `openssl ca -gencrl` writes them without a CRL number), which webpki
//! does not read and OpenSSL does: client certificates checked on a bind
//! and a server's certificate checked by `verify required`, each answer
//! compared with haproxy 2.6's on the same files; and `option httpslog`'s
//! TLS fields beside haproxy's.

use crate::common::tls::{curl, openssl, text, Pki};
use crate::common::*;

/// Revokes `names` (issued by the test CA) in a version 1 list,
/// `crl1.pem`.
fn v1_crl(pki: &Pki, names: &[&str]) {
    let d = pki.dir.as_path();
    std::fs::write(d.join("index1.txt"), "").unwrap();
    std::fs::write(
        d.join("ca1.cnf"),
        "[ca]\ndefault_ca = c\n[c]\ndatabase = index1.txt\ndefault_md = sha256\ndefault_crl_days = 30\n",
    )
    .unwrap();
    let ca = [
        "-config", "ca1.cnf", "-keyfile", "ca.key", "-cert", "ca.pem",
    ];
    for name in names {
        let crt = format!("{name}.crt");
        openssl(d, &[&["ca", "-revoke", &crt][..], &ca].concat());
    }
    openssl(
        d,
        &[&["ca", "-gencrl", "-out", "crl1.pem"][..], &ca].concat(),
    );
    let o = crate::common::tls::run(
        &[
            "openssl",
            "crl",
            "-noout",
            "-text",
            "-in",
            &pki.path("crl1.pem"),
        ],
        b"",
    );
    assert!(text(&o).contains("Version 1"), "{}", text(&o));
}

/// A bind asking for client certificates (CA, version 1 list, errors let
/// through) answering with `ssl_c_verify`; a clear frontend relaying to a
/// bind serving a v1 certificate with `verify required` (good CA) and to
/// one with the wrong CA.
fn cfg(pki: &Pki, tls: u16, v1tls: u16, clear: u16) -> String {
    format!(
        "defaults\n    mode http\n    timeout connect 2s\n    timeout client 5s\n    timeout server 5s\n\
         frontend tls\n    bind 127.0.0.1:{tls} ssl crt {} ca-file {ca} crl-file {} verify optional crt-ignore-err all\n\
         \x20   http-request return status 200 content-type text/plain lf-string \"v=%[ssl_c_verify] cn=%[ssl_c_s_dn(CN)] ver=%[ssl_c_version]\\n\"\n\
         frontend v1tls\n    bind 127.0.0.1:{v1tls} ssl crt {}\n\
         \x20   http-request return status 200 content-type text/plain string served\n\
         frontend clear\n    bind 127.0.0.1:{clear}\n\
         \x20   use_backend wrong if {{ path /wrong }}\n    default_backend good\n\
         backend good\n    retries 0\n    server s 127.0.0.1:{v1tls} ssl verify required ca-file {ca} sni str(v1.example.com)\n\
         backend wrong\n    retries 0\n    server s 127.0.0.1:{v1tls} ssl verify required ca-file {}\n",
        pki.path("certs/1-www.pem"),
        pki.path("crl1.pem"),
        pki.path("v1server.pem"),
        pki.path("other.crt"),
        ca = pki.path("ca.pem"),
    )
}

#[test]
fn version_1_certificates_and_revocation_lists_as_in_haproxy() {
    let pki = Pki::new();
    pki.issue("v1good", "/CN=v1-good", None);
    pki.issue("v1bad", "/CN=v1-revoked", None);
    pki.issue("v1server", "/CN=v1.example.com", None);
    pki.issue("v3bad", "/CN=v3-revoked", Some("client.ext"));
    v1_crl(&pki, &["v1bad", "v3bad"]);
    let join = |parts: &[&str], out: &str| {
        let mut all = Vec::new();
        for p in parts {
            all.extend(std::fs::read(pki.dir.join(p)).unwrap());
        }
        std::fs::write(pki.dir.join(out), all).unwrap();
    };
    join(&["v1server.crt", "v1server.key"], "v1server.pem");
    let (wt, wv, wc) = (free_port(), free_port(), free_port());
    let (ht, hv, hc) = (free_port(), free_port(), free_port());
    let _w = Weir::start(&cfg(&pki, wt, wv, wc), wc);
    let Some(_h) = Haproxy::start(&cfg(&pki, ht, hv, hc), hc) else {
        panic!("haproxy is not installed: .ci/run installs it");
    };
    let ask = |port: u16, who: &str| {
        let (c, k) = (
            pki.path(&format!("{who}.crt")),
            pki.path(&format!("{who}.key")),
        );
        let o = curl(port, "www.example.com", "/", &["--cert", &c, "--key", &k]);
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    for (who, want) in [
        ("v1good", "v=0 cn=v1-good ver=1"),
        ("v1bad", "v=23 cn=v1-revoked ver=1"),
        ("client", "v=0 cn=client-one ver=3"),
        ("v3bad", "v=23 cn=v3-revoked ver=3"),
    ] {
        let (w, h) = (ask(wt, who), ask(ht, who));
        assert_eq!(w.trim(), want, "weir, {who}");
        assert_eq!(w, h, "weir and haproxy, {who}");
    }
    // Self-signed and untrusted: weir gives this first error (OpenSSL
    // goes on to the revocation check and gives its error, 3).
    assert_eq!(ask(wt, "other").trim(), "v=18 cn=other.test ver=3");
    // A server's v1 certificate: good with its CA, refused with another.
    for (path, want) in [("/", 200), ("/wrong", 503)] {
        let w = crate::common::http::Client::connect(wc).get(path);
        let h = crate::common::http::Client::connect(hc).get(path);
        assert_eq!(w.status, want, "weir {path}: {}", w.text());
        assert_eq!(h.status, want, "haproxy {path}");
    }
}

/// `option httpslog`'s TLS fields, from weir and haproxy for the same
/// request (a client certificate from an unknown issuer let through, so
/// that `ssl_c_err` has something to say): the line's tail after the
/// request, where the two must agree.
#[test]
fn httpslog_lines_end_as_haproxys() {
    let pki = Pki::new();
    let run = |start: &dyn Fn(&str, u16) -> Box<dyn std::any::Any>| {
        let log = Syslog::start();
        let port = free_port();
        let cfg = crate::common::tls::logged_tls_cfg(
            port,
            &format!(
                "crt {} ca-file {} verify optional crt-ignore-err all ciphersuites TLS_AES_256_GCM_SHA384 alpn http/1.1",
                pki.path("certs/1-www.pem"),
                pki.path("ca.pem")
            ),
            log.port(),
            "    option httpslog\n",
        );
        let _p = start(&cfg, port);
        let (oc, ok) = (pki.path("other.crt"), pki.path("other.key"));
        let o = curl(
            port,
            "www.example.com",
            "/x",
            &["--cert", &oc, "--key", &ok],
        );
        assert!(o.status.success(), "{}", text(&o));
        let line = log.wait_line("\"GET /x HTTP/1.1\"", std::time::Duration::from_secs(5));
        line.split("\"GET /x HTTP/1.1\" ")
            .nth(1)
            .unwrap_or_default()
            .trim()
            .to_string()
    };
    let ours = run(&|cfg, port| Box::new(Weir::start(cfg, port)));
    let theirs = run(&|cfg, port| match Haproxy::start(cfg, port) {
        Some(h) => Box::new(h),
        None => panic!("haproxy is not installed: .ci/run installs it"),
    });
    assert_eq!(
        ours, "0/0000000000000000/18/0/0 www.example.com/TLSv1.3/TLS_AES_256_GCM_SHA384",
        "weir's line"
    );
    assert_eq!(ours, theirs, "weir's tail, then haproxy's");
}
