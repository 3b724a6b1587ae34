//! JSON Web Tokens through the real binary, beside haproxy 2.6 on the same
//! configuration: tokens signed by openssl with an ECDSA P-256 key and an
//! RSA key, taken from `Authorization: Bearer` (`http_auth_bearer`),
//! checked by `jwt_verify` against the public key file and the
//! certificate file, and read by `jwt_payload_query`.

use crate::common::http::Client;
use crate::common::tls::openssl;
use crate::common::*;
use std::path::Path;

fn b64u(b: &[u8]) -> String {
    crate::common::http::base64(b, true)
}

/// An ECDSA DER signature as JWS's R||S, each 32 bytes.
fn raw_ecdsa(der: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut at = 2 + usize::from(der[1] & 0x80 != 0);
    for _ in 0..2 {
        let len = usize::from(der[at + 1]);
        let int = &der[at + 2..at + 2 + len];
        let int = &int[int.len().saturating_sub(32)..];
        out.extend(std::iter::repeat_n(0, 32 - int.len()));
        out.extend_from_slice(int);
        at += 2 + len;
    }
    out
}

/// A token with `alg` and subject `sub`, signed by openssl with `key`.
fn token(d: &Path, alg: &str, sub: &str, key: &str) -> String {
    let msg = format!(
        "{}.{}",
        b64u(format!(r#"{{"alg":"{alg}","typ":"JWT"}}"#).as_bytes()),
        b64u(format!(r#"{{"sub":"{sub}"}}"#).as_bytes())
    );
    std::fs::write(d.join("msg"), &msg).unwrap();
    openssl(d, &["dgst", "-sha256", "-sign", key, "-out", "sig", "msg"]);
    let sig = std::fs::read(d.join("sig")).unwrap();
    let sig = if alg.starts_with("ES") {
        raw_ecdsa(&sig)
    } else {
        sig
    };
    format!("{msg}.{}", b64u(&sig))
}

/// A P-256 key made for this test, and an ES256 token for `alice` it
/// signed (checked once against haproxy 2.6.12 and openssl).
const EC_KEY: &str = "-----BEGIN EC PRIVATE KEY-----
MHcCAQEEINaAW/25xUJLh4+67p40BMe2UXdJcu+DVmtemTtrIMGdoAoGCCqGSM49
AwEHoUQDQgAECn1s5FTLH3ohJ4Z0uFXXyjd8PxlAEnuvYa3tSlUy2AGphav2lc6U
5Lg1cfhC8crvmn8hHYl2nbAsJpdxhCVH4w==
-----END EC PRIVATE KEY-----
";
const ES_TOKEN: &str = "eyJhbGciOiJFUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJhbGljZSJ9.iZCgtLyNGZf4vn-yRfgh7UoxeTzdJ0qNEzFGWU7X1y2gRJ2dliJEK4GAiEbcrOYalWjp1rOH-LkEbaRw1HQWFg";

#[test]
fn bearer_tokens_verified_as_haproxy_does() {
    let dir = tempdir("jwt");
    let d = dir.as_path();
    // A fixed P-256 key and a token it signed: haproxy 2.6.12 refused, in
    // one CI run, a valid ES256 token made with a fresh key (weir verified
    // it, as openssl does); the differential needs a token haproxy takes.
    std::fs::write(d.join("ec.key"), EC_KEY).unwrap();
    openssl(d, &["ec", "-in", "ec.key", "-pubout", "-out", "ec.pub"]);
    openssl(d, &["genrsa", "-out", "rsa.key", "2048"]);
    openssl(d, &["rsa", "-in", "rsa.key", "-pubout", "-out", "rsa.pub"]);
    openssl(
        d,
        &[
            "req", "-x509", "-new", "-key", "rsa.key", "-out", "rsa.crt", "-days", "30", "-subj",
            "/CN=jwt",
        ],
    );
    let es = ES_TOKEN.to_string();
    // (A token signed now with the same key verifies in weir too.)
    let fresh = token(d, "ES256", "alice", "ec.key");
    let rs = token(d, "RS256", "bob", "rsa.key");
    let path = |f: &str| d.join(f).to_string_lossy().into_owned();
    let cfg = |port: u16| {
        format!(
            "defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
             frontend fe\n    bind 127.0.0.1:{port}\n\
             \x20   http-request set-var(txn.alg) http_auth_bearer,jwt_header_query('$.alg')\n\
             \x20   http-request return status 200 hdr x-es \"%[http_auth_bearer,jwt_verify(ES256,{})]\" \
             hdr x-rs \"%[http_auth_bearer,jwt_verify(RS256,{})]\" \
             hdr x-var \"%[http_auth_bearer,jwt_verify(txn.alg,{})]\" \
             hdr x-sub \"%[http_auth_bearer,jwt_payload_query('\\$.sub')]\"\n",
            path("ec.pub"),
            path("rsa.pub"),
            path("ec.pub")
        )
    };
    let (wp, hp) = (free_port(), free_port());
    let Some(_h) = Haproxy::start(&cfg(hp), hp) else {
        panic!("haproxy is not installed: tests/run installs it");
    };
    let _w = Weir::start(&cfg(wp), wp);
    let tampered = format!("{}x{}", &es[..es.len() - 2], &es[es.len() - 1..]);
    let cases = [
        (format!("Bearer {es}"), "1 0 1 alice"),
        (format!("bearer   {rs}"), "0 1 0 bob"),
        (format!("Bearer {tampered}"), "0 0 0 alice"),
        (format!("Bearer {es}.x"), "-3 -3 -3 alice"),
        ("Basic YTpi".to_string(), "   "),
    ];
    let answer = |port: u16, auth: &str| {
        let mut c = Client::connect(port);
        c.send(format!("GET / HTTP/1.1\r\nHost: a\r\nAuthorization: {auth}\r\n\r\n").as_bytes());
        let r = c.response("GET");
        ["x-es", "x-rs", "x-var", "x-sub"]
            .map(|h| r.header(h).unwrap_or("").to_string())
            .join(" ")
    };
    for (auth, want) in &cases {
        let (ours, theirs) = (answer(wp, auth), answer(hp, auth));
        assert_eq!(ours, theirs, "{auth}: weir against haproxy");
        assert_eq!(ours, *want, "{auth}");
    }
    assert_eq!(answer(wp, &format!("Bearer {fresh}")), "1 0 1 alice");
    // A certificate's key serves too, as the manual says (haproxy 2.6.12
    // does not load certificate files there: -5).
    let cp = free_port();
    let with_cert = cfg(cp).replace(&path("rsa.pub"), &path("rsa.crt"));
    let _w2 = Weir::start(&with_cert, cp);
    assert_eq!(answer(cp, &format!("Bearer {rs}")), "0 1 0 bob");
}
