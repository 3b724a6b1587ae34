//! `generate-certificates`: a client naming a host no certificate serves
//! gets one made for it, signed by the `ca-sign-file` CA, which openssl
//! verifies for that host name; beside haproxy, which makes the same
//! subject; the cache of `tune.ssl.ssl-ctx-cache-size` keeps what it made.

use crate::common::tls::{curl, s_client, text, Pki};
use crate::common::*;

/// The CA certificate and its key in one PEM, as `ca-sign-file` reads it.
fn ca_sign(pki: &Pki) -> String {
    let mut all = std::fs::read(pki.dir.join("ca.pem")).unwrap();
    all.extend(std::fs::read(pki.dir.join("ca.key")).unwrap());
    let path = pki.dir.join("ca-sign.pem");
    std::fs::write(&path, all).unwrap();
    path.to_string_lossy().into_owned()
}

/// A bind line serving www.example.com and v1.test (an X.509 v1
/// certificate, known by its CN alone), making the others.
fn cfg(pki: &Pki, port: u16, global: &str) -> String {
    pki.issue("v1", "/CN=v1.test", None);
    let mut v1 = std::fs::read(pki.dir.join("v1.crt")).unwrap();
    v1.extend(std::fs::read(pki.dir.join("v1.key")).unwrap());
    std::fs::write(pki.dir.join("v1.pem"), v1).unwrap();
    format!(
        "global\n{global}defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         frontend fe\n    bind 127.0.0.1:{port} ssl crt {} crt {} generate-certificates ca-sign-file {}\n\
         \x20   http-request return status 200 content-type text/plain lf-string \"dn=%[ssl_f_s_dn]|cn=%[ssl_f_s_dn(CN)]|idn=%[ssl_f_i_dn]|sha=%[ssl_f_sha1,hex]|\\n\"\n",
        pki.path("certs/1-www.pem"),
        pki.path("v1.pem"),
        ca_sign(pki),
    )
}

/// What openssl says of the chain presented for `name`, verified against
/// the CA for that host name: (verified, leaf subject, chain length).
fn verify(pki: &Pki, port: u16, name: &str) -> (bool, String, usize) {
    let ca = pki.path("ca.pem");
    let o = s_client(
        port,
        name,
        &[
            "-verify_hostname",
            name,
            "-verify_return_error",
            "-CAfile",
            &ca,
            "-showcerts",
        ],
        b"Q\n",
    );
    let t = text(&o);
    let subject = t
        .lines()
        .find_map(|l| l.trim().strip_prefix("0 s:"))
        .unwrap_or("")
        .to_string();
    let chain = t.matches("BEGIN CERTIFICATE").count();
    (t.contains("Verify return code: 0 (ok)"), subject, chain)
}

/// The answer's field `key` for a request naming `name`.
fn field(port: u16, name: &str, key: &str) -> String {
    let t = text(&curl(port, name, "/", &[]));
    t.split('|')
        .find_map(|w| w.strip_prefix(&format!("{key}=")))
        .unwrap_or_else(|| panic!("{key} in {t}"))
        .to_string()
}

#[test]
fn a_certificate_is_made_for_an_unknown_name_as_haproxy_makes_it() {
    let pki = Pki::new();
    let seen = beside_haproxy(|start| {
        let port = free_port();
        let _p = start(&cfg(&pki, port, ""), port);
        let made = verify(&pki, port, "unknown.test");
        let loaded = verify(&pki, port, "www.example.com");
        let fetched = (
            field(port, "unknown.test", "dn"),
            field(port, "unknown.test", "cn"),
            field(port, "unknown.test", "idn"),
            field(port, "www.example.com", "dn"),
            field(port, "v1.test", "dn"),
        );
        (made, loaded, fetched)
    });
    let ((ok, subject, chain), (www_ok, _, _), (dn, cn, idn, www_dn, v1_dn)) = seen;
    assert!(ok && www_ok, "both chains verify for their names");
    assert_eq!(
        subject,
        "O = weir tests, CN = weir test CA, CN = unknown.test"
    );
    assert_eq!(chain, 2, "the made leaf comes with the CA");
    assert_eq!(dn, "/O=weir tests/CN=weir test CA/CN=unknown.test");
    assert_eq!(cn, "weir test CA", "the first CN is the CA's");
    assert_eq!(idn, "/O=weir tests/CN=weir test CA");
    assert_eq!(www_dn, "/CN=www.example.com");
    assert_eq!(v1_dn, "/CN=v1.test", "a v1 certificate serves its CN");
}

#[test]
fn made_certificates_are_kept_in_a_bounded_cache() {
    let pki = Pki::new();
    let port = free_port();
    let _w = Weir::start(
        &cfg(&pki, port, "    tune.ssl.ssl-ctx-cache-size 1\n"),
        port,
    );
    let a = field(port, "a.test", "sha");
    assert_eq!(field(port, "a.test", "sha"), a, "kept");
    let b = field(port, "b.test", "sha");
    assert_ne!(a, b, "one per name");
    assert_ne!(
        field(port, "a.test", "sha"),
        a,
        "made again once pushed out"
    );
}

#[test]
fn generation_without_a_ca_is_refused_with_its_line() {
    let pki = Pki::new();
    let port = free_port();
    let c = cfg(&pki, port, "").replace(" ca-sign-file ", " crt ");
    let (code, out, err) = check_cfg(&c);
    assert_ne!(code, 0);
    let t = format!("{out}{err}");
    assert!(
        t.contains(":8] : 'bind' in frontend 'fe'")
            && t.contains("no CA certificate File configured"),
        "{t}"
    );
}

/// A P-384 CA signs what it makes with SHA-256, as OpenSSL signs
/// haproxy's (`ecdsa-with-SHA256`), and openssl verifies the chain;
/// beside haproxy.
#[test]
fn a_p384_ca_signs_with_sha256_as_haproxy_does() {
    let pki = Pki::new();
    let dir = &pki.dir;
    let run = |args: &[&str]| {
        let st = std::process::Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .output()
            .expect("openssl is installed by tests/run");
        assert!(
            st.status.success(),
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&st.stderr)
        );
    };
    run(&[
        "ecparam",
        "-name",
        "secp384r1",
        "-genkey",
        "-noout",
        "-out",
        "ca384.key",
    ]);
    run(&[
        "req",
        "-x509",
        "-new",
        "-key",
        "ca384.key",
        "-subj",
        "/CN=p384 CA",
        "-days",
        "30",
        "-out",
        "ca384.pem",
    ]);
    let mut both = std::fs::read(dir.join("ca384.pem")).unwrap();
    both.extend(std::fs::read(dir.join("ca384.key")).unwrap());
    std::fs::write(dir.join("ca384-sign.pem"), both).unwrap();
    let seen = beside_haproxy(|start| {
        let port = free_port();
        let cfg = format!(
            "defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
             frontend fe\n    bind 127.0.0.1:{port} ssl crt {} generate-certificates ca-sign-file {}\n\
             \x20   http-request return status 200 content-type text/plain lf-string \"alg=%[ssl_f_sig_alg]|\\n\"\n",
            pki.path("certs/1-www.pem"),
            dir.join("ca384-sign.pem").display(),
        );
        let _p = start(&cfg, port);
        let ca = dir.join("ca384.pem").display().to_string();
        let o = s_client(
            port,
            "made.test",
            &[
                "-verify_hostname",
                "made.test",
                "-verify_return_error",
                "-CAfile",
                &ca,
            ],
            b"Q\n",
        );
        (
            text(&o).contains("Verify return code: 0 (ok)"),
            field(port, "made.test", "alg"),
        )
    });
    assert_eq!(seen, (true, "ecdsa-with-SHA256".to_string()));
}
