//! OCSP stapling managed through the runtime API, beside haproxy 2.6: a
//! certificate's `<crt>.ocsp` is stapled, `show ssl ocsp-response` lists
//! and prints it, `set ssl ocsp-response` replaces it at once for new
//! handshakes, `set ssl cert <crt>.ocsp` + `commit` do so through a
//! transaction, and bad responses are refused with haproxy's words.

use crate::common::tls::Pki;
use crate::common::*;
use std::path::Path;

fn b64(der: &[u8]) -> String {
    crate::common::http::base64(der, false)
}

/// The `Cert Status:` of the response a handshake staples.
fn stapled(port: u16) -> String {
    let o = crate::common::tls::s_client(port, "www.example.com", &["-status"], b"Q\n");
    let t = String::from_utf8_lossy(&o.stdout).into_owned();
    t.lines()
        .find_map(|l| l.trim().strip_prefix("Cert Status: "))
        .unwrap_or("none")
        .to_string()
}

/// An answer up to the certificates a response carries (which weir
/// prints in its short form).
fn head(answer: &str) -> String {
    answer
        .split("\nCertificate:\n")
        .next()
        .unwrap_or_default()
        .to_string()
}

/// The whole story on one proxy; its answers.
fn story(port: u16, sock: &Path, crt: &str, good: &[u8], revoked: &[u8]) -> Vec<String> {
    let mut out = vec![stapled(port)];
    let ids = ask(sock, "show ssl ocsp-response\n");
    let key = ids
        .lines()
        .find_map(|l| l.strip_prefix("Certificate ID key : "))
        .unwrap_or_else(|| panic!("{ids}"))
        .to_string();
    out.push(ids.clone());
    out.push(head(&ask(sock, &format!("show ssl ocsp-response {key}\n"))));
    let cert = ask(sock, &format!("show ssl cert {crt}\n"));
    out.push(
        cert.lines()
            .filter(|l| l.starts_with("OCSP"))
            .collect::<Vec<_>>()
            .join("\n"),
    );
    out.push(ask(
        sock,
        &format!("set ssl ocsp-response {}\n", b64(revoked)),
    ));
    out.push(stapled(port));
    out.push(head(&ask(sock, &format!("show ssl cert {crt}.ocsp\n"))));
    out.push(ask(
        sock,
        &format!("set ssl cert {crt}.ocsp <<\n{}\n\n", b64(good)),
    ));
    out.push(head(&ask(sock, &format!("show ssl cert *{crt}.ocsp\n"))));
    out.push(stapled(port));
    let commit = ask(sock, &format!("commit ssl cert {crt}\n"));
    out.push(
        commit
            .lines()
            .rfind(|l| !l.is_empty())
            .unwrap_or_default()
            .to_string(),
    );
    out.push(stapled(port));
    for bad in [
        "set ssl ocsp-response\n",
        "set ssl ocsp-response %%%\n",
        "set ssl ocsp-response bm90IGFuIG9jc3A=\n",
        "show ssl ocsp-response 00\n",
    ] {
        out.push(ask(sock, bad));
    }
    out
}

#[test]
fn stapled_responses_are_shown_and_replaced_as_haproxy_does() {
    let pki = Pki::new();
    let (good, revoked) = (pki.ocsp_response(false), pki.ocsp_response(true));
    let dir = tempdir("tls-ocsp");
    let crt = dir.join("www.pem").to_string_lossy().into_owned();
    std::fs::copy(pki.path("certs/1-www.pem"), &crt).unwrap();
    std::fs::write(format!("{crt}.ocsp"), &good).unwrap();
    let cfg = |port: u16, sock: &Path| {
        format!(
            "global\n    stats socket {} level admin\n\
             defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
             frontend fe\n    bind 127.0.0.1:{port} ssl crt {crt}\n    http-request return status 200\n",
            sock.display()
        )
    };
    let (hp, wp) = (free_port(), free_port());
    let (hs, ws) = (dir.join("h.sock"), dir.join("w.sock"));
    let Some(_h) = Haproxy::start(&cfg(hp, &hs), hp) else {
        panic!("haproxy is not installed: tests/run installs it");
    };
    let _w = Weir::start(&cfg(wp, &ws), wp);
    let theirs = story(hp, &hs, &crt, &good, &revoked);
    let ours = story(wp, &ws, &crt, &good, &revoked);
    for (i, (o, t)) in ours.iter().zip(&theirs).enumerate() {
        assert_eq!(o, t, "answer {i}: weir's, then haproxy's");
    }
    assert_eq!(ours.len(), theirs.len());
    assert_eq!(ours[0], "good");
    assert_eq!(ours[4], "OCSP Response updated!\n\n");
    assert_eq!(ours[5], "revoked");
    assert!(ours[6].contains("Cert Status: revoked\n    Revocation Time: Jan  1 00:00:00 2024 GMT\n    Revocation Reason: keyCompromise (0x1)\n"), "{}", ours[6]);
    assert!(ours[8].contains("Cert Status: good"), "{}", ours[8]);
    assert_eq!(
        ours[9], "revoked",
        "a transaction staples nothing before its commit"
    );
    assert_eq!(ours[10], "Success!");
    assert_eq!(ours[11], "good");
}
