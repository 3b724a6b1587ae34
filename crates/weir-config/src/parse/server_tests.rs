//! Unit tests of `server.rs`: TLS options of `bind` and `server` lines,
//! agent checks, `add server`'s lines.

use super::super::tests::{errors, ok};

#[test]
fn tls_bind_options() {
    use crate::tls::{Group, Suite, TlsVersion, Verify};
    let c = ok("global\n  ssl-default-bind-options ssl-min-ver TLSv1.2 no-tls-tickets\n  ssl-default-bind-ciphersuites TLS_AES_128_GCM_SHA256\n  tune.ssl.lifetime 600\n  tune.ssl.cachesize 100\nfrontend f\n  bind :443 ssl crt /a.pem crt /b alpn h2,http/1.1 ssl-max-ver TLSv1.3 ciphers ECDHE+AESGCM:!RSA curves X25519:P-256 ca-file /ca.pem verify optional strict-sni\n  default_backend b\nbackend b\n");
    let g = &c.global.tls;
    assert_eq!(g.bind_opts.min_ver, Some(TlsVersion::Tls12));
    assert!(g.bind_opts.no_tickets);
    assert_eq!(g.bind_ciphersuites, Some(vec![Suite::Tls13Aes128Gcm]));
    assert_eq!((g.lifetime, g.cachesize), (600, 100));
    let t = c.proxies[0].binds[0].tls.as_ref().expect("tls");
    assert_eq!(t.crts, ["/a.pem", "/b"]);
    assert_eq!(
        t.alpn.as_deref(),
        Some(&["h2".to_string(), "http/1.1".into()][..])
    );
    assert_eq!(
        t.ciphers,
        Some(vec![Suite::EcdheEcdsaAes256Gcm, Suite::EcdheEcdsaAes128Gcm])
    );
    assert_eq!(t.curves, Some(vec![Group::X25519, Group::P256]));
    assert_eq!(t.verify, Some(Verify::Optional));
    assert!(t.strict_sni);
    assert_eq!(
        t.opts.or(&g.bind_opts).versions(),
        [TlsVersion::Tls12, TlsVersion::Tls13]
    );

    let e = errors("frontend f\n  bind :443 ssl\n");
    assert!(
        e.iter().any(|m| m.contains("'ssl' needs a certificate")),
        "{e:?}"
    );
    let e = errors("frontend f\n  bind :443 ssl crt /a.pem ciphers DHE-RSA-AES128-SHA\n");
    assert!(
        e.iter()
            .any(|m| m.contains(":2]") && m.contains("no TLSv1.2 cipher weir offers is left")),
        "{e:?}"
    );
    let e = errors("frontend f\n  bind :443 ssl crt /a.pem ciphersuites TLS_AES_128_CCM_SHA256\n");
    assert!(e.iter().any(|m| m.contains("not offered by weir")), "{e:?}");
    let e = errors("frontend f\n  bind :443 ssl crt /a.pem curves X448\n");
    assert_eq!(e.len(), 2, "the value is not read as a keyword: {e:?}");
    assert!(
        e.iter()
            .any(|m| m.contains("no curve weir offers is left in 'X448'")),
        "{e:?}"
    );
    let e = errors("frontend f\n  bind :443 ssl crt /a.pem verify required\n");
    assert!(e.iter().any(|m| m.contains("needs a 'ca-file'")), "{e:?}");
    let e = errors("frontend f\n  bind :443 ssl crt /a.pem ssl-min-ver TLSv9\n");
    assert!(
        e.iter().any(|m| m.contains("unknown version 'TLSv9'")),
        "{e:?}"
    );
}

#[test]
fn tls_server_options() {
    use crate::tls::{TlsVersion, Verify};
    let c = ok("global\n  ssl-server-verify none\n  ssl-default-server-options ssl-min-ver TLSv1.3\nbackend b\n  default-server ssl verify required ca-file /ca.pem\n  server a 127.0.0.1:443 sni str(api.test) alpn h2,http/1.1 crt /c.pem no-ssl-reuse\n  server b 127.0.0.1:443 no-ssl check-ssl verify none\n");
    assert_eq!(c.global.tls.server_verify, Verify::None);
    assert_eq!(c.global.tls.server_opts.min_ver, Some(TlsVersion::Tls13));
    let b = c.proxy("b").unwrap();
    let a = &b.servers[0].tls;
    assert!(a.enabled && a.no_reuse && !a.check_ssl);
    assert_eq!(a.verify, Some(Verify::Required));
    assert_eq!(a.ca_file.as_deref(), Some("/ca.pem"));
    assert_eq!(a.sni.as_deref(), Some("str(api.test)"));
    assert_eq!(a.crt.as_deref(), Some("/c.pem"));
    let s = &b.servers[1].tls;
    assert!(!s.enabled && s.check_ssl);
    assert_eq!(s.verify, Some(Verify::None));
    let e = errors("backend b\n  server a 127.0.0.1:443 ssl verify maybe\n");
    assert!(
        e.iter()
            .any(|m| m.contains("'verify' expects 'none' or 'required'")),
        "{e:?}"
    );
}

#[test]
fn an_agent_check_needs_its_port() {
    let e = errors("backend b\n  server s 127.0.0.1:80 agent-check\n");
    assert!(
        e[0].contains("t.cfg:2") && e[0].contains("server s does not have agent port"),
        "{e:?}"
    );
    let c = ok("backend b\n  server s 127.0.0.1:80 agent-check agent-port 81 agent-send \"hi\\n\" agent-inter 5s\n");
    let a = &c.proxies[0].servers[0].agent;
    assert!(a.enabled && a.port == Some(81) && a.send == "hi\n");
    assert_eq!(a.inter, Some(std::time::Duration::from_secs(5)));
}

#[test]
fn add_server_takes_a_server_line_without_default_server() {
    let w = |s: &str| s.split_whitespace().map(String::from).collect::<Vec<_>>();
    let s = crate::dynamic_server("s1", &w("127.0.0.1:80 check weight 7 track be/s0")).unwrap();
    assert!(
        s.check && s.weight == 7 && s.rise == 2,
        "defaults are haproxy's, not the backend's"
    );
    assert_eq!(s.track, Some((Some("be".into()), "s0".into())));
    assert_eq!(s.init_addr, vec![crate::InitAddr::None]);
    let e = |a: &str| crate::dynamic_server("s1", &w(a)).unwrap_err();
    assert_eq!(
        e(""),
        "'server' expects <name> and <addr>[:<port>] as arguments."
    );
    assert_eq!(
        e("127.0.0.1:80 cookie x"),
        "'cookie' option is not accepted for dynamic server"
    );
    assert_eq!(e("127.0.0.1:80 bogus"), "unknown keyword 'bogus'.");
    let named = crate::dynamic_server("s1", &w("${A}:${P}")).unwrap();
    assert!(
        matches!(named.addr, crate::addr::ServerAddr::Inet { host: crate::addr::Host::Name(ref h), .. } if h == "${A}")
    );
}
