//! Certificate fetches and client certificate checks through the real
//! binary, against what openssl says of the same certificates: `ssl_c_*`
//! (the client's), `ssl_f_*` (the bind's own), `ssl_s_*` and `ssl_bc_*`
//! (a server's, in response rules); `crl-file` refusing a revoked client,
//! `crt-ignore-err` letting one through with its code in `ssl_c_verify`.

use crate::common::tls::{curl, openssl, run, text, Pki};
use crate::common::*;

/// What openssl prints for `x509 -noout <what>` of `cert`, after `=`.
fn x509(cert: &str, what: &str) -> String {
    let o = run(&["openssl", "x509", "-noout", what, "-in", cert], b"");
    let t = text(&o);
    t.trim()
        .split_once('=')
        .map(|(_, v)| v.to_string())
        .unwrap_or(t)
}

/// A second client certificate from the CA, revoked in `crl.pem`.
fn revoke_second_client(pki: &Pki) {
    let d = pki.dir.as_path();
    std::fs::write(d.join("index.txt"), "").unwrap();
    std::fs::write(d.join("crlnumber"), "01\n").unwrap();
    std::fs::write(
        d.join("ca.cnf"),
        "[ca]\ndefault_ca = c\n[c]\ndatabase = index.txt\ncrlnumber = crlnumber\n\
         default_md = sha256\ndefault_crl_days = 30\n",
    )
    .unwrap();
    pki.issue("client2", "/CN=client-two", Some("client.ext"));
    let ca = ["-config", "ca.cnf", "-keyfile", "ca.key", "-cert", "ca.pem"];
    openssl(d, &[&["ca", "-revoke", "client2.crt"][..], &ca].concat());
    openssl(
        d,
        &[&["ca", "-gencrl", "-out", "crl.pem"][..], &ca].concat(),
    );
}

const ANSWER: &str = "v=%[ssl_c_verify] sha1=%[ssl_c_sha1,hex] serial=%[ssl_c_serial,hex] \
    ver=%[ssl_c_version] cn=%[ssl_c_s_dn(CN)] rfc=%[ssl_c_s_dn(,0,rfc2253)] \
    sig=%[ssl_c_sig_alg] key=%[ssl_c_key_alg] na=%[ssl_c_notafter] \
    fdn=%[ssl_f_s_dn] fsha=%[ssl_f_sha1,hex] fkey=%[ssl_f_key_alg]";

/// weir answering with [`ANSWER`] on `port` (TLS, client certificates
/// checked against the CA and `crl.pem`, with `extra` bind words), and
/// relaying `front` to it with the server's certificate in `x-s`.
fn cfg(pki: &Pki, port: u16, front: u16, extra: &str) -> String {
    format!(
        "defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         frontend fe\n    bind 127.0.0.1:{port} ssl crt {} ca-file {} verify optional crl-file {} alpn http/1.1{extra}\n\
         \x20   http-request return status 200 content-type text/plain lf-string \"{ANSWER}\\n\"\n\
         frontend fe2\n    bind 127.0.0.1:{front}\n    default_backend be\n\
         backend be\n    server s 127.0.0.1:{port} ssl verify none sni str(www.example.com) alpn http/1.1\n\
         \x20   http-response set-header x-s \"%[ssl_s_s_dn(CN)] %[ssl_s_sha1,hex] %[ssl_s_version] %[ssl_bc_alpn] %[ssl_bc]\"\n",
        pki.path("certs/1-www.pem"),
        pki.path("ca.pem"),
        pki.path("crl.pem")
    )
}

#[test]
fn certificate_fetches_revocation_and_ignored_errors() {
    let pki = Pki::new();
    revoke_second_client(&pki);
    let (port, front) = (free_port(), free_port());
    let w = Weir::start(&cfg(&pki, port, front, ""), port);
    let (cert, key) = (pki.path("client.crt"), pki.path("client.key"));
    let t = text(&curl(
        port,
        "www.example.com",
        "/",
        &["--cert", &cert, "--key", &key],
    ));
    let sha1 = x509(&cert, "-fingerprint").replace(':', "");
    // The serial's DER content, as haproxy gives it: a leading zero byte
    // where its first bit is set (openssl prints the number without it).
    let serial = x509(&cert, "-serial");
    let serial = match serial.chars().next() {
        Some('8'..='9' | 'A'..='F') => format!("00{serial}"),
        _ => serial,
    };
    let www = pki.path("www.crt");
    let wsha1 = x509(&www, "-fingerprint").replace(':', "");
    for want in [
        "v=0 ".to_string(),
        format!("sha1={sha1} "),
        format!("serial={serial} "),
        "ver=3 cn=client-one rfc=CN=client-one,O=weir,C=FR ".into(),
        "sig=ecdsa-with-SHA256 key=id-ecPublicKey ".into(),
        "fdn=/CN=www.example.com ".into(),
        format!("fsha={wsha1} fkey=id-ecPublicKey"),
    ] {
        assert!(t.contains(&want), "{want} in {t}");
    }
    // notAfter as the certificate writes it (UTCTime: YYMMDDhhmmssZ);
    // openssl prints it as a date ending in the year and "GMT".
    let na: String = t
        .split("na=")
        .nth(1)
        .unwrap_or("")
        .chars()
        .take(13)
        .collect();
    let date = x509(&cert, "-enddate");
    let year = date.trim_end_matches(" GMT");
    assert!(
        na.ends_with('Z') && na.starts_with(&year[year.len() - 2..]),
        "{na} vs {date}"
    );
    // The revoked client is refused; so is one from another CA.
    let (c2, k2) = (pki.path("client2.crt"), pki.path("client2.key"));
    let o = curl(port, "www.example.com", "/", &["--cert", &c2, "--key", &k2]);
    assert!(!o.status.success(), "revoked: {}", text(&o));
    let (oc, ok) = (pki.path("other.crt"), pki.path("other.key"));
    let o = curl(port, "www.example.com", "/", &["--cert", &oc, "--key", &ok]);
    assert!(!o.status.success(), "unknown CA: {}", text(&o));
    // A server's certificate in the response rules.
    let r = crate::common::http::Client::connect(front).get("/");
    let xs = r.header("x-s").unwrap_or_default().to_string();
    assert_eq!(xs, format!("www.example.com {wsha1} 3 http/1.1 1"));
    drop(w);

    // With crt-ignore-err all, both go through with OpenSSL's codes.
    let (port, front) = (free_port(), free_port());
    let _w = Weir::start(&cfg(&pki, port, front, " crt-ignore-err all"), port);
    let t = text(&curl(
        port,
        "www.example.com",
        "/",
        &["--cert", &c2, "--key", &k2],
    ));
    assert!(
        t.contains("v=23 ") && t.contains("cn=client-two"),
        "revoked: {t}"
    );
    let t = text(&curl(
        port,
        "www.example.com",
        "/",
        &["--cert", &oc, "--key", &ok],
    ));
    // (Self-signed and not trusted: 18, as OpenSSL says.)
    assert!(
        t.contains("v=18 ") && t.contains("cn=other.test"),
        "unknown CA: {t}"
    );
    let t = text(&curl(
        port,
        "www.example.com",
        "/",
        &["--cert", &cert, "--key", &key],
    ));
    assert!(t.contains("v=0 "), "{t}");
}

/// How many certificates the handshake for www.example.com presents.
fn presented(port: u16) -> usize {
    let o = crate::common::tls::s_client(port, "www.example.com", &["-showcerts"], b"Q\n");
    text(&o).matches("BEGIN CERTIFICATE").count()
}

#[test]
fn self_issued_roots_stay_unsent_with_ssl_skip_self_issued_ca_as_haproxy() {
    let pki = Pki::new();
    let seen = beside_haproxy(|start| {
        let mut out = Vec::new();
        for global in ["", "global\n    ssl-skip-self-issued-ca\n"] {
            let port = free_port();
            let cfg = format!(
                "{global}defaults\n    mode http\n    timeout connect 1s\n    timeout client 3s\n    timeout server 3s\n\
                 frontend fe\n    bind 127.0.0.1:{port} ssl crt {}\n    http-request return status 200\n",
                pki.path("certs/1-www.pem")
            );
            let _p = start(&cfg, port);
            out.push(presented(port));
        }
        out
    });
    assert_eq!(seen, [2, 1], "the leaf and its root, then the leaf alone");
}

#[test]
fn issuers_chain_path_completes_a_lone_leaf_as_haproxy() {
    let pki = Pki::new();
    let dir = tempdir("issuers");
    let leaf = dir.join("leaf.pem");
    let mut pem = std::fs::read(pki.path("www.crt")).unwrap();
    pem.extend(std::fs::read(pki.path("www.key")).unwrap());
    std::fs::write(&leaf, pem).unwrap();
    let issuers = dir.join("issuers");
    std::fs::create_dir_all(&issuers).unwrap();
    std::fs::copy(pki.path("ca.pem"), issuers.join("ca.pem")).unwrap();
    // Another issuer's chain, which must not be picked.
    std::fs::copy(pki.path("other.crt"), issuers.join("other.pem")).unwrap();
    let seen = beside_haproxy(|start| {
        let mut out = Vec::new();
        for global in [
            String::new(),
            format!("global\n    issuers-chain-path {}\n", issuers.display()),
        ] {
            let port = free_port();
            let cfg = format!(
                "{global}defaults\n    mode http\n    timeout connect 1s\n    timeout client 3s\n    timeout server 3s\n\
                 frontend fe\n    bind 127.0.0.1:{port} ssl crt {} crt {}\n    http-request return status 200\n",
                leaf.display(),
                pki.path("certs/1-www.pem")
            );
            let _p = start(&cfg, port);
            out.push(presented(port));
        }
        out
    });
    assert_eq!(seen, [1, 2], "the leaf alone, then with its issuer");
    let (code, _, err) = check_cfg("global\n    issuers-chain-path /nonexistent\n");
    assert_ne!(code, 0);
    assert!(err.contains("expects a directory path"), "{err}");
}
