//! TLS termination on `bind … ssl` lines, on rustls with the aws-lc-rs
//! provider: one server configuration per bind line, built at start-up
//! (certificates, SNI, versions, suites, groups, client certificates,
//! session resumption), and the TLS stream the sessions run over.

mod accept;
pub(crate) mod certs;
pub(crate) mod client;
// A call into AWS-LC (see its SAFETY comments).
#[allow(unsafe_code)]
mod ecsign;
mod forge;
pub(crate) mod route;
pub mod store;
mod stream;
pub mod tickets;
mod traffic;
mod v1;
mod verify;

pub use accept::accept;
pub use client::{client_config, ClientTls};
pub use route::{bind_config, BindConfig};
pub use stream::{connect, connect_alpn, Dormant, HandshakeError, TlsStream};

use rustls::crypto::{aws_lc_rs, CryptoProvider, SupportedKxGroup};
use rustls::server::{ServerSessionMemoryCache, WebPkiClientVerifier};
use rustls::{RootCertStore, ServerConfig, SupportedCipherSuite, SupportedProtocolVersion};
use std::sync::Arc;
use weir_config::tls::{with_base, BindTls, Group, Suite, TlsGlobal, TlsVersion, Verify};
use weir_config::Config;

fn suite(s: Suite) -> SupportedCipherSuite {
    use aws_lc_rs::cipher_suite as c;
    match s {
        Suite::Tls13Aes256Gcm => c::TLS13_AES_256_GCM_SHA384,
        Suite::Tls13Aes128Gcm => c::TLS13_AES_128_GCM_SHA256,
        Suite::Tls13Chacha20 => c::TLS13_CHACHA20_POLY1305_SHA256,
        Suite::EcdheEcdsaAes256Gcm => c::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
        Suite::EcdheEcdsaAes128Gcm => c::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
        Suite::EcdheEcdsaChacha20 => c::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
        Suite::EcdheRsaAes256Gcm => c::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
        Suite::EcdheRsaAes128Gcm => c::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
        Suite::EcdheRsaChacha20 => c::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
    }
}

fn group(g: Group) -> &'static dyn SupportedKxGroup {
    use aws_lc_rs::kx_group as k;
    match g {
        Group::X25519 => k::X25519,
        Group::P256 => k::SECP256R1,
        Group::P384 => k::SECP384R1,
        Group::X25519Mlkem768 => k::X25519MLKEM768,
    }
}

/// The provider for one bind: weir's suites and groups, narrowed by the
/// bind line or the global defaults.
fn provider(t: &BindTls, g: &TlsGlobal) -> CryptoProvider {
    narrowed(
        t.ciphers.as_ref().or(g.bind_ciphers.as_ref()),
        t.ciphersuites.as_ref().or(g.bind_ciphersuites.as_ref()),
        t.curves.as_ref().or(g.bind_curves.as_ref()),
    )
}

/// weir's suites and groups, narrowed by the lists given (TLS 1.2 suites,
/// TLS 1.3 suites, groups).
fn narrowed(
    tls12: Option<&Vec<Suite>>,
    tls13: Option<&Vec<Suite>>,
    curves: Option<&Vec<Group>>,
) -> CryptoProvider {
    let base = aws_lc_rs::default_provider();
    // Without a list, AES-128-GCM comes first in each version: the same
    // security level in practice, and its SHA-256 key schedule runs on the
    // CPU's SHA instructions, where SHA-384 does not (40 µs less per
    // handshake here; docs/design.md).
    let rank = |s: &SupportedCipherSuite| match s.suite() {
        rustls::CipherSuite::TLS13_AES_128_GCM_SHA256
        | rustls::CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256
        | rustls::CipherSuite::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 => 0,
        _ => 1,
    };
    let mut defaults = base.cipher_suites.clone();
    defaults.sort_by_key(rank);
    let mut suites: Vec<SupportedCipherSuite> = Vec::new();
    match tls13 {
        Some(l) => suites.extend(l.iter().map(|s| suite(*s))),
        None => suites.extend(
            defaults
                .iter()
                .filter(|s| s.version() == &rustls::version::TLS13),
        ),
    }
    match tls12 {
        Some(l) => suites.extend(l.iter().map(|s| suite(*s))),
        None => suites.extend(
            defaults
                .iter()
                .filter(|s| s.version() == &rustls::version::TLS12),
        ),
    }
    let kx_groups = match curves {
        Some(l) => l.iter().map(|x| group(*x)).collect(),
        None => base.kx_groups.clone(),
    };
    CryptoProvider {
        cipher_suites: suites,
        kx_groups,
        ..base
    }
}

/// Loads `crt` paths and `crt-list` files into an SNI index.
fn load_certs(
    t: &BindTls,
    g: &TlsGlobal,
    r: &store::Reader<'_>,
    forge: Option<Arc<forge::Forge>>,
) -> Result<certs::SniIndex, Vec<String>> {
    let mut idx = certs::SniIndex::default();
    idx.strict = t.strict_sni;
    idx.forge = forge;
    let mut errs = Vec::new();
    let add_file = |idx: &mut certs::SniIndex, path: &str, filters: &[String]| {
        r.cert(path).map(|ck| {
            let (neg, pos): (Vec<String>, Vec<String>) =
                filters.iter().cloned().partition(|f| f.starts_with('!'));
            let neg: Vec<String> = neg.iter().map(|f| f[1..].to_string()).collect();
            let names = if pos.is_empty() {
                certs::names(&ck)
            } else {
                pos
            };
            idx.add(ck, &names, &neg);
        })
    };
    for crt in &t.crts {
        let path = with_base(g.crt_base.as_deref(), crt);
        if std::path::Path::new(&path).is_dir() {
            match r.dir_files(&path) {
                Ok(files) => {
                    for f in files {
                        errs.extend(add_file(&mut idx, &f, &[]).err());
                    }
                }
                Err(e) => errs.push(e),
            }
        } else {
            errs.extend(add_file(&mut idx, &path, &[]).err());
        }
    }
    for list in &t.crt_lists {
        match r.crt_list(list) {
            Ok(lines) => {
                for l in lines {
                    let path = with_base(g.crt_base.as_deref(), &l.crt);
                    errs.extend(add_file(&mut idx, &path, &l.filters).err());
                }
            }
            Err(e) => errs.push(e),
        }
    }
    if errs.is_empty() && idx.is_empty() && !t.strict_sni {
        errs.push("no certificate loaded".into());
    }
    if errs.is_empty() {
        Ok(idx)
    } else {
        Err(errs)
    }
}

/// The protocol versions options leave (TLSv1.2 and TLSv1.3 at most).
fn versions(
    opts: &weir_config::tls::TlsOptions,
) -> Result<Vec<&'static SupportedProtocolVersion>, Vec<String>> {
    let v: Vec<&'static SupportedProtocolVersion> = opts
        .versions()
        .into_iter()
        .map(|v| match v {
            TlsVersion::Tls13 => &rustls::version::TLS13,
            _ => &rustls::version::TLS12,
        })
        .collect();
    if v.is_empty() {
        return Err(vec![
            "no TLS version left: weir speaks TLSv1.2 and TLSv1.3 only".into(),
        ]);
    }
    Ok(v)
}

/// How a bind verifies client certificates: against `ca-file` and
/// `ca-verify-file` (only the first named to clients), `crl-file`, and
/// `crt-ignore-err`; `None` without `verify` or a CA.
fn client_verifier(
    t: &BindTls,
    g: &TlsGlobal,
    r: &store::Reader<'_>,
    p: &Arc<CryptoProvider>,
) -> Result<Option<Arc<dyn rustls::server::danger::ClientCertVerifier>>, Vec<String>> {
    // The files load (or the line is refused) whether they verify or not.
    let ca_path = |f: &String| with_base(g.ca_base.as_deref(), f);
    let named = match &t.ca_file {
        Some(ca) => r.ca(&ca_path(ca)).map_err(|e| vec![e])?,
        None => Vec::new(),
    };
    let mut anchors = named.clone();
    if let Some(f) = &t.ca_verify_file {
        anchors.extend(r.ca(&ca_path(f)).map_err(|e| vec![e])?);
    }
    let crls = match &t.crl_file {
        Some(f) => r.crl(&ca_path(f)).map_err(|e| vec![e])?,
        None => Vec::new(),
    };
    let verify = t.verify.unwrap_or(Verify::None);
    if verify == Verify::None || anchors.is_empty() {
        return Ok(None);
    }
    let mut roots = RootCertStore::empty();
    let (added, _) = roots.add_parsable_certificates(anchors.iter().cloned());
    if added == 0 {
        return Err(vec!["no CA certificate found".into()]);
    }
    let mut hints = RootCertStore::empty();
    hints.add_parsable_certificates(named);
    let v1 = v1::V1Roots {
        anchors,
        crls: crls.iter().map(|c| c.to_vec()).collect(),
        algs: p.signature_verification_algorithms,
    };
    let own_crls = !v1::webpki_reads(&crls);
    let vb = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), p.clone())
        .clear_root_hint_subjects()
        .add_root_hint_subjects(hints.subjects());
    let vb = if verify == Verify::Optional {
        vb.allow_unauthenticated()
    } else {
        vb
    };
    let vb = if own_crls { vb } else { vb.with_crls(crls) };
    let inner = vb
        .build()
        .map_err(|e| vec![format!("client certificate verification: {e}")])?;
    Ok(Some(Arc::new(verify::ClientVerifier {
        inner,
        v1,
        own_crls,
        ignore: t.crt_ignore_err.clone(),
    })))
}

/// Builds the server configuration of one `bind … ssl` line, with its
/// certificates by name. Errors are messages without location (the caller
/// adds the bind's `file:line`).
pub fn server_config(
    t: &BindTls,
    g: &TlsGlobal,
    r: &store::Reader<'_>,
    forge: Option<Arc<forge::Forge>>,
) -> Result<route::Bound, Vec<String>> {
    let p = Arc::new(provider(t, g));
    let opts = t.opts.or(&g.bind_opts);
    let versions = versions(&opts)?;
    let idx = Arc::new(load_certs(t, g, r, forge)?);
    let builder = ServerConfig::builder_with_provider(p.clone())
        .with_protocol_versions(&versions)
        .map_err(|e| vec![format!("inconsistent TLS settings: {e}")])?;
    let verifier = client_verifier(t, g, r, &p)?;
    let builder = match &verifier {
        None => builder.with_no_client_auth(),
        Some(v) => builder.with_client_cert_verifier(v.clone()),
    };
    let mut cfg = builder.with_cert_resolver(idx.clone());
    cfg.alpn_protocols = alpn_list(t.alpn.as_deref());
    cfg.ignore_client_order = !opts.prefer_client_ciphers;
    // The keys pass to weir's own record layer after the handshake.
    cfg.enable_secret_extraction = true;
    cfg.session_storage = ServerSessionMemoryCache::new(g.cachesize.max(1));
    if !opts.no_tickets {
        // Keys shared with the next process (see `tickets`).
        cfg.ticketer = match &t.ticket_keys {
            Some(path) => Arc::new(tickets::from_file(path, g.lifetime).map_err(|e| vec![e])?),
            None => Arc::new(tickets::Derived::new(g.lifetime)),
        };
    }
    Ok(route::Bound {
        cfg: Arc::new(cfg),
        certs: idx,
        verifier,
    })
}

/// An `alpn` list as rustls takes it.
pub(crate) fn alpn_list(list: Option<&[String]>) -> Vec<Vec<u8>> {
    list.unwrap_or_default()
        .iter()
        .map(|a| a.as_bytes().to_vec())
        .collect()
}

/// Checks every `bind … ssl` and `server … ssl` line (certificates load,
/// settings agree): one `[ALERT]` line per problem, with its `file:line`.
pub fn check(cfg: &Config) -> Vec<String> {
    let mut out = Vec::new();
    let files = store::Store::new(&cfg.global.tls);
    for px in &cfg.proxies {
        if px.kind.is_backend() {
            for s in &px.servers {
                if s.tls.enabled || s.tls.check_ssl {
                    if let Err(es) = client_config(&s.tls, &cfg.global.tls, &files) {
                        out.extend(es.iter().map(|e| server_alert(s, px, e)));
                    }
                }
            }
        }
        if !px.kind.is_frontend() || px.disabled {
            continue;
        }
        for b in &px.binds {
            if let Some(t) = &b.tls {
                if let Err(es) = bind_config(t, &cfg.global.tls, &files) {
                    out.extend(es.into_iter().map(|e| alert(b, px, &e)));
                }
            }
        }
    }
    // The peers, log-forward and ring sections' TLS, for its errors.
    peers_tls(cfg, &files, &mut out);
    log_tls(cfg, &files, &mut out);
    out
}

/// TLS of `log-forward` bind lines (per section, per line) and `ring`
/// servers (per ring, per server).
#[derive(Debug, Default)]
pub struct LogTls {
    pub binds: Vec<Vec<Option<Arc<BindConfig>>>>,
    pub servers: Vec<Vec<Option<Arc<ClientTls>>>>,
}

/// Builds [`LogTls`]; a certificate that does not load is an error with
/// its line.
pub fn log_tls(cfg: &Config, files: &store::Store, errors: &mut Vec<String>) -> LogTls {
    let g = &cfg.global.tls;
    let binds = cfg
        .log_forwards
        .iter()
        .map(|f| {
            f.binds
                .iter()
                .map(|b| {
                    let t = b.tls.as_ref()?;
                    bind_config(t, g, files)
                        .map_err(|es| {
                            errors.extend(es.iter().map(|e| {
                                format!(
                                    "[ALERT] parsing [{}] : 'bind' in log-forward '{}' : {e}",
                                    b.loc, f.name
                                )
                            }))
                        })
                        .ok()
                        .map(Arc::new)
                })
                .collect()
        })
        .collect();
    let servers = cfg
        .rings
        .iter()
        .map(|r| {
            r.servers
                .iter()
                .map(|s| {
                    if !s.tls.enabled {
                        return None;
                    }
                    client_config(&s.tls, g, files)
                        .map_err(|es| {
                            errors.extend(es.iter().map(|e| {
                                format!(
                                    "[ALERT] parsing [{}] : 'server {}' in ring '{}' : {e}",
                                    s.loc, s.name, r.name
                                )
                            }))
                        })
                        .ok()
                        .map(Arc::new)
                })
                .collect()
        })
        .collect();
    LogTls { binds, servers }
}

/// One `peers` section's TLS: the `bind … ssl` side, and the client side
/// towards each peer whose line says `ssl` (in the section's order).
#[derive(Debug, Default)]
pub struct PeersTls {
    pub bind: Option<Arc<BindConfig>>,
    pub peers: Vec<Option<Arc<ClientTls>>>,
}

/// The TLS of each `peers` section: its `bind … ssl` and its peers' `ssl`
/// lines; a certificate that does not load is an error with its line.
pub fn peers_tls(cfg: &Config, files: &store::Store, errors: &mut Vec<String>) -> Vec<PeersTls> {
    let g = &cfg.global.tls;
    let alert = |at: &weir_config::diag::Loc, what: &str, sec: &str, e: &str| {
        format!("[ALERT] parsing [{at}] : {what} in peers section '{sec}' : {e}")
    };
    let mut out = Vec::new();
    for sec in &cfg.peers {
        let bind = sec.bind_tls.as_ref().and_then(|t| {
            let at = sec.bind_loc.as_ref().unwrap_or(&sec.loc);
            bind_config(t, g, files)
                .map_err(|es| errors.extend(es.iter().map(|e| alert(at, "'bind'", &sec.name, e))))
                .ok()
                .map(Arc::new)
        });
        let peers = sec
            .peers
            .iter()
            .map(|p| {
                if !p.tls.enabled {
                    return None;
                }
                let what = format!("peer '{}'", p.name);
                client_config(&p.tls, g, files)
                    .map_err(|es| {
                        errors.extend(es.iter().map(|e| alert(&p.loc, &what, &sec.name, e)))
                    })
                    .ok()
                    .map(Arc::new)
            })
            .collect();
        out.push(PeersTls { bind, peers });
    }
    out
}

/// An `[ALERT]` line about a bind line.
pub fn alert(b: &weir_config::Bind, px: &weir_config::Proxy, e: &str) -> String {
    format!(
        "[ALERT] parsing [{}] : 'bind' in {} '{}' : {e}",
        b.loc,
        px.kind.keyword(),
        px.name
    )
}

/// The name a connection to a server presents: the SNI when it is a DNS
/// name, else the server's address (no SNI is sent for an address); a unix
/// socket server without SNI goes by 127.0.0.1.
pub fn server_name(
    sni: Option<&str>,
    addr: Option<std::net::SocketAddr>,
) -> rustls::pki_types::ServerName<'static> {
    use rustls::pki_types::ServerName;
    match sni.and_then(|n| ServerName::try_from(n.to_string()).ok()) {
        Some(n) => n,
        None => {
            let ip = addr.map_or(std::net::IpAddr::from([127, 0, 0, 1]), |a| a.ip());
            ServerName::IpAddress(ip.into())
        }
    }
}

/// An `[ALERT]` line about a server line.
pub fn server_alert(s: &weir_config::Server, px: &weir_config::Proxy, e: &str) -> String {
    format!(
        "[ALERT] parsing [{}] : 'server {}' in {} '{}' : {e}",
        s.loc,
        s.name,
        px.kind.keyword(),
        px.name
    )
}
