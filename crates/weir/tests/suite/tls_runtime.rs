//! Certificates, crt-lists and CA files changed at run time through the
//! runtime API (`show|new|set|commit|abort|del ssl …`, `add|del ssl
//! crt-list`): the answers compared with haproxy 2.6's on the same files
//! and commands, and the traffic checked to follow each commit on binds
//! and on servers.

use crate::common::tls::{curl, text, Pki};
use crate::common::*;
use std::path::Path;

/// One PEM file of the test PKI's parts (`www.crt` + `www.key`, …).
fn pem(pki: &Pki, parts: &[&str], out: &str) -> String {
    let mut all = Vec::new();
    for p in parts {
        all.extend(std::fs::read(pki.dir.join(p)).unwrap());
    }
    let path = pki.path(out);
    std::fs::write(&path, all).unwrap();
    path
}

/// A bind serving a crt-list (and answering with the certificate it
/// presented and the client's), a server presenting a client certificate
/// to it through a clear frontend, and an admin socket.
fn cfg(sock: &Path, list: &str, pki: &Pki, tls: u16, clear: u16) -> String {
    format!(
        "global\n    stats socket {} level admin\n\
         defaults\n    mode http\n    timeout connect 2s\n    timeout client 5s\n    timeout server 5s\n\
         frontend tls\n    bind 127.0.0.1:{tls} ssl crt-list {list} ca-file {} verify optional crt-ignore-err all\n\
         \x20   http-request return status 200 content-type text/plain lf-string \"f=%[ssl_f_sha1,hex] c=%[ssl_c_sha1,hex]\\n\"\n\
         frontend clear\n    bind 127.0.0.1:{clear}\n    default_backend be\n\
         backend be\n    server s 127.0.0.1:{tls} ssl crt {} verify none sni str(www.example.com)\n",
        sock.display(),
        pki.path("ca.pem"),
        pki.path("client.pem"),
    )
}

/// The SHA-1 of a certificate file, as the fetches print it.
fn sha1(cert: &str) -> String {
    let o = crate::common::tls::run(
        &["openssl", "x509", "-noout", "-fingerprint", "-in", cert],
        b"",
    );
    text(&o)
        .trim()
        .split_once('=')
        .map(|(_, v)| v.replace(':', ""))
        .unwrap_or_default()
}

/// What the TLS bind answers a client that sent `sni`.
fn answer(port: u16, sni: &str) -> String {
    text(&curl(port, sni, "/", &[]))
}

#[test]
fn certificates_crt_lists_and_ca_files_change_at_run_time_as_in_haproxy() {
    let pki = Pki::new();
    pki.issue("www2", "/CN=www.example.com", Some("www.ext"));
    pki.issue("client2", "/CN=client-two", Some("client.ext"));
    let www = pem(&pki, &["www.crt", "ca.pem", "www.key"], "www.pem");
    let other = pem(&pki, &["other.crt", "other.key"], "other.pem");
    let www2 = pem(&pki, &["www2.crt", "www2.key"], "www2-src.pem");
    let client = pem(&pki, &["client.crt", "client.key"], "client.pem");
    let client2 = pem(&pki, &["client2.crt", "client2.key"], "client2-src.pem");
    let list = pki.path("certs.crt-list");
    std::fs::write(
        &list,
        format!("{www} www.example.com\n{other} [ssl-min-ver TLSv1.2] other.test\n"),
    )
    .unwrap();
    let dir = tempdir("tls-runtime");
    let (ws, hs) = (dir.join("w.sock"), dir.join("h.sock"));
    let (wt, wc, ht, hc) = (free_port(), free_port(), free_port(), free_port());
    let _w = Weir::start(&cfg(&ws, &list, &pki, wt, wc), wc);
    let h = Haproxy::start(&cfg(&hs, &list, &pki, ht, hc), hc);
    let read = |f: &str| std::fs::read_to_string(f).unwrap();
    let fresh = pki.path("fresh.pem");
    let ca = pki.path("ca.pem");
    // The same commands, the same answers.
    let same = [
        "show ssl cert\n".to_string(),
        format!("show ssl cert {www}\n"),
        format!("show ssl cert {other}\n"),
        "show ssl crt-list\n".into(),
        format!("show ssl crt-list {list}\n"),
        format!("show ssl crt-list -n {list}\n"),
        format!("show ssl ca-file {ca}\n"),
        format!("set ssl cert {www} <<\n{}\n", read(&www2)),
        "show ssl cert\n".into(),
        format!("show ssl cert *{www}\n"),
        format!("abort ssl cert {other}\n"),
        format!("abort ssl cert {www}\n"),
        format!("commit ssl cert {www}\n"),
        format!("set ssl cert {www} <<\nnot a certificate\n\n"),
        format!(
            "set ssl cert {} <<\n{}\n",
            pki.path("nope.pem"),
            read(&www2)
        ),
        format!("set ssl cert {www} <<\n{}\n", read(&pki.path("www2.crt"))),
        format!("commit ssl cert {www}\n"),
        format!("abort ssl cert {www}\n"),
        format!("new ssl cert {fresh}\n"),
        format!("new ssl cert {fresh}\n"),
        format!("show ssl cert {fresh}\n"),
        format!("set ssl cert {fresh} <<\n{}\n", read(&www2)),
        format!("commit ssl cert {fresh}\n"),
        format!("show ssl cert {fresh}\n"),
        format!("del ssl cert {www}\n"),
        format!("add ssl crt-list {list} <<\n{fresh} [verify none] fresh.example.com\n\n"),
        format!("add ssl crt-list {list} <<\n{fresh}\n{other}\n\n"),
        format!("add ssl crt-list {list} {}\n", pki.path("nope.pem")),
        format!("show ssl crt-list -n {list}\n"),
        format!("del ssl crt-list {list} {fresh}:9\n"),
        format!("del ssl crt-list {list} {fresh}\n"),
        format!("show ssl crt-list -n {list}\n"),
        format!("del ssl cert {fresh}\n"),
        format!("show ssl cert {fresh}\n"),
    ];
    if h.is_some() {
        for c in &same {
            assert_eq!(ask(&ws, c), ask(&hs, c), "answers to {c}");
        }
    } else {
        panic!("haproxy is not installed: .ci/run installs it");
    }
    // haproxy 2.6 puts a payload for another certificate into the
    // transaction in progress; weir refuses it.
    ask(&ws, &format!("set ssl cert {www} <<\n{}\n", read(&www2)));
    let other_set = ask(&ws, &format!("set ssl cert {other} <<\n{}\n", read(&www2)));
    assert!(
        other_set.starts_with(&format!("The ongoing transaction is about '{www}'")),
        "{other_set}"
    );
    ask(&ws, &format!("abort ssl cert {www}\n"));
    // What the bind presents follows a commit: same name, new certificate.
    let before = answer(wt, "www.example.com");
    assert!(before.contains(&format!("f={} ", sha1(&www))), "{before}");
    let set = ask(&ws, &format!("set ssl cert {www} <<\n{}\n", read(&www2)));
    assert!(set.starts_with("Transaction created"), "{set}");
    // Not before the commit.
    assert!(answer(wt, "www.example.com").contains(&format!("f={} ", sha1(&www))));
    let commit = ask(&ws, &format!("commit ssl cert {www}\n"));
    assert!(commit.ends_with("\nSuccess!\n\n"), "{commit}");
    let after = answer(wt, "www.example.com");
    assert!(after.contains(&format!("f={} ", sha1(&www2))), "{after}");
    // A server's client certificate follows too (its sessions dropped).
    let c = crate::common::http::Client::connect(wc).get("/");
    assert!(
        c.text().contains(&format!("c={}", sha1(&client))),
        "{}",
        c.text()
    );
    ask(
        &ws,
        &format!("set ssl cert {client} <<\n{}\n", read(&client2)),
    );
    let commit = ask(&ws, &format!("commit ssl cert {client}\n"));
    assert!(commit.contains("Success!"), "{commit}");
    let c = crate::common::http::Client::connect(wc).get("/");
    assert!(
        c.text().contains(&format!("c={}", sha1(&client2))),
        "{}",
        c.text()
    );
    // A crt-list entry added at run time serves its name; deleted, it
    // does not (the default certificate answers instead).
    ask(&ws, &format!("new ssl cert {fresh}\n"));
    ask(&ws, &format!("set ssl cert {fresh} <<\n{}\n", read(&www2)));
    ask(&ws, &format!("commit ssl cert {fresh}\n"));
    let add = ask(
        &ws,
        &format!("add ssl crt-list {list} <<\n{fresh} fresh.example.org\n\n"),
    );
    assert!(add.contains("Success!"), "{add}");
    assert!(answer(wt, "fresh.example.org").contains(&format!("f={} ", sha1(&www2))));
    // The bind's default certificate cannot be deleted.
    let del = ask(&ws, &format!("del ssl crt-list {list} {www}\n"));
    assert!(
        del.contains("cannot be deleted, it is used as default certificate"),
        "{del}"
    );
    // A CA file changed at run time: the client certificate verifies
    // against it, or not.
    let not_ca = pem(&pki, &["other.crt"], "not-ca.pem");
    ask(
        &ws,
        &format!("set ssl ca-file {ca} <<\n{}\n", read(&not_ca)),
    );
    let commit = ask(&ws, &format!("commit ssl ca-file {ca}\n"));
    assert!(commit.contains("Success!"), "{commit}");
    let cert = ["--cert", &client, "--key", &client];
    let o = text(&curl(wt, "www.example.com", "/", &cert));
    assert!(o.contains(&format!("c={}", sha1(&client))), "{o}");
    let v = ask(&ws, &format!("show ssl ca-file {ca}\n"));
    assert!(v.contains("Subject: /CN=other.test"), "{v}");
}

/// A commit whose new certificate cannot serve changes nothing, and says
/// why.
#[test]
fn a_commit_that_cannot_build_changes_nothing() {
    let pki = Pki::new();
    let www = pem(&pki, &["www.crt", "ca.pem", "www.key"], "www.pem");
    pem(&pki, &["client.crt", "client.key"], "client.pem");
    let list = pki.path("one.crt-list");
    std::fs::write(&list, format!("{www}\n")).unwrap();
    let dir = tempdir("tls-runtime-bad");
    let sock = dir.join("w.sock");
    let (t, c) = (free_port(), free_port());
    let _w = Weir::start(&cfg(&sock, &list, &pki, t, c), t);
    // The other certificate with this one's key: they do not match.
    let mixed = pem(&pki, &["other.crt", "www.key"], "mixed.pem");
    let set = ask(
        &sock,
        &format!(
            "set ssl cert {www} <<\n{}\n",
            std::fs::read_to_string(&mixed).unwrap()
        ),
    );
    assert!(set.starts_with("Transaction created"), "{set}");
    let commit = ask(&sock, &format!("commit ssl cert {www}\n"));
    assert!(commit.contains(&format!("Can't commit {www}!")), "{commit}");
    assert!(answer(t, "www.example.com").contains(&format!("f={} ", sha1(&www))));
}

/// A client certificate refused in a TLS 1.3 handshake whose last flight
/// came in one read: the alert goes out, the process keeps serving (a
/// panic in the alert's path once took the connection's thread down).
#[test]
fn a_refused_client_certificate_in_one_flight_is_answered_with_an_alert() {
    let pki = Pki::new();
    let www = pem(&pki, &["www.crt", "ca.pem", "www.key"], "www.pem");
    let other = pem(&pki, &["other.crt", "other.key"], "other.pem");
    let dir = tempdir("tls-runtime-alert");
    let (t, c) = (free_port(), free_port());
    let cfg = format!(
        "defaults\n    mode http\n    timeout connect 2s\n    timeout client 5s\n    timeout server 5s\n\
         frontend tls\n    bind 127.0.0.1:{t} ssl crt {www} ca-file {} verify required\n\
         \x20   http-request return status 200 content-type text/plain string ok\n\
         frontend clear\n    bind 127.0.0.1:{c}\n    default_backend be\n\
         backend be\n    retries 0\n    server s 127.0.0.1:{t} ssl crt {other} verify none\n",
        pki.path("ca.pem")
    );
    let w = Weir::start(&cfg, c);
    let _ = dir;
    for _ in 0..3 {
        let r = crate::common::http::Client::connect(c).get("/");
        assert!(r.status == 502 || r.status == 503, "{}", r.status);
    }
    let ok = pki.path("client.crt");
    let key = pki.path("client.key");
    let o = text(&curl(
        t,
        "www.example.com",
        "/",
        &["--cert", &ok, "--key", &key],
    ));
    assert!(o.contains("ok"), "{o}");
    let err = w.stderr();
    assert!(!err.contains("panicked"), "{err}");
}
