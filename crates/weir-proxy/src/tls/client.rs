//! TLS towards servers (`server … ssl`): one client configuration per
//! server line, with HAProxy's verification rules — `verify required`
//! checks the chain against `ca-file`, and the name only when `sni` or
//! `verifyhost` gives one; `verify none` checks nothing but the handshake
//! signatures. Sessions are resumed unless `no-ssl-reuse`.

use super::store::{FileRef, Reader, Store};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::{Resumption, Tls12Resumption, WebPkiServerVerifier};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use std::collections::BTreeSet;
use std::sync::{Arc, RwLock};
use weir_config::tls::{with_base, ServerTls, TlsGlobal, Verify};

/// What a server's connections need for TLS.
#[derive(Debug)]
pub struct ClientTls {
    /// The server line's TLS settings, to rebuild from.
    t: ServerTls,
    live: RwLock<Arc<Built>>,
    /// `sni <expr>`, evaluated per connection.
    pub sni: Option<weir_rules::Expr>,
}

/// A client configuration and the files it was built from.
#[derive(Debug)]
pub struct Built {
    cfg: Arc<ClientConfig>,
    used: BTreeSet<FileRef>,
}

impl ClientTls {
    /// The configuration in force.
    pub fn config(&self) -> Arc<ClientConfig> {
        self.live
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .cfg
            .clone()
    }

    /// Whether it was built from `file`.
    pub fn uses(&self, file: &FileRef) -> bool {
        self.live
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .used
            .contains(file)
    }

    /// Builds it again from the store's files (its sessions are not
    /// kept: a new certificate must be presented), to be put in force
    /// with [`ClientTls::install`].
    pub fn rebuild(&self, g: &TlsGlobal, files: &Store) -> Result<Arc<Built>, Vec<String>> {
        built(&self.t, g, files).map(Arc::new)
    }

    pub fn install(&self, b: Arc<Built>) {
        *self.live.write().unwrap_or_else(|e| e.into_inner()) = b;
    }
}

#[derive(Debug)]
struct Verifier {
    provider: Arc<CryptoProvider>,
    /// `None`: `verify none`.
    roots: Option<Arc<RootCertStore>>,
    /// Checks chain and name, for `sni`/`verifyhost`.
    named: Option<Arc<WebPkiServerVerifier>>,
    verifyhost: Option<String>,
    /// `crl-file`.
    crls: Vec<webpki::CertRevocationList<'static>>,
    /// For an X.509 v1 certificate, which webpki does not read.
    v1: Option<super::v1::V1Roots>,
    /// webpki does not read the revocation lists: they are checked by
    /// `v1` after webpki's verdict (webpki has none).
    own_crls: bool,
}

/// Whether a v1 certificate (no subjectAltName) names `host` in its
/// subject's CN, exactly or by a `*.` wildcard of one label.
fn v1_names(ee: &[u8], host: &ServerName<'_>) -> bool {
    let ServerName::DnsName(h) = host else {
        return false;
    };
    let h = h.as_ref().to_ascii_lowercase();
    let cn = weir_rules::x509::parse(ee)
        .and_then(|c| weir_rules::x509::common_name(c.subject))
        .map(|c| c.to_ascii_lowercase());
    match cn {
        Some(cn) if cn == h => true,
        Some(cn) => match (cn.strip_prefix("*."), h.split_once('.')) {
            (Some(parent), Some((_, rest))) => parent == rest,
            _ => false,
        },
        None => false,
    }
}

impl Verifier {
    /// The revocation lists webpki does not read, checked on the chain.
    fn own_revocation(
        &self,
        ee: &CertificateDer<'_>,
        inter: &[CertificateDer<'_>],
        now: UnixTime,
    ) -> Result<(), rustls::Error> {
        match &self.v1 {
            Some(v1) if self.own_crls => v1
                .verify(ee, inter, now)
                .map_err(rustls::Error::InvalidCertificate),
            _ => Ok(()),
        }
    }
}

impl ServerCertVerifier for Verifier {
    fn verify_server_cert(
        &self,
        ee: &CertificateDer<'_>,
        inter: &[CertificateDer<'_>],
        name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(roots) = &self.roots else {
            return Ok(ServerCertVerified::assertion());
        };
        if let Some(v1) = self
            .v1
            .as_ref()
            .filter(|_| weir_rules::x509::parse(ee).is_some_and(|c| c.version == 1))
        {
            v1.verify(ee, inter, now)
                .map_err(rustls::Error::InvalidCertificate)?;
            let host = match (&self.verifyhost, name) {
                (Some(h), _) => ServerName::try_from(h.as_str()).ok().map(|n| n.to_owned()),
                (None, ServerName::DnsName(_)) => Some(name.to_owned()),
                (None, _) => None,
            };
            if host.is_some_and(|h| !v1_names(ee, &h)) {
                return Err(rustls::Error::InvalidCertificate(
                    rustls::CertificateError::NotValidForName,
                ));
            }
            return Ok(ServerCertVerified::assertion());
        }
        let host = match (&self.verifyhost, name) {
            (Some(h), _) => ServerName::try_from(h.as_str())
                .map_err(|_| rustls::Error::General(format!("bad verifyhost '{h}'")))?
                .to_owned(),
            (None, ServerName::DnsName(_)) => name.to_owned(),
            // No name given: the chain alone is checked, as HAProxy does.
            (None, _) => {
                let cert = webpki::EndEntityCert::try_from(ee)
                    .map_err(|e| rustls::Error::General(format!("bad certificate: {e}")))?;
                let crls: Vec<&webpki::CertRevocationList<'_>> = self.crls.iter().collect();
                let revocation = webpki::RevocationOptionsBuilder::new(&crls)
                    .ok()
                    .map(|b| b.build());
                cert.verify_for_usage(
                    self.provider.signature_verification_algorithms.all,
                    &roots.roots,
                    inter,
                    now,
                    webpki::KeyUsage::server_auth(),
                    revocation,
                    None,
                )
                .map_err(|e| rustls::Error::General(format!("certificate: {e}")))?;
                self.own_revocation(ee, inter, now)?;
                return Ok(ServerCertVerified::assertion());
            }
        };
        let ok = match &self.named {
            Some(v) => v.verify_server_cert(ee, inter, &host, ocsp, now)?,
            None => ServerCertVerified::assertion(),
        };
        self.own_revocation(ee, inter, now)?;
        Ok(ok)
    }
    fn verify_tls12_signature(
        &self,
        m: &[u8],
        c: &CertificateDer<'_>,
        d: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algs = &self.provider.signature_verification_algorithms;
        verify_tls12_signature(m, c, d, algs)
            .or_else(|e| super::v1::raw_signature(m, c, d, algs, e))
    }
    fn verify_tls13_signature(
        &self,
        m: &[u8],
        c: &CertificateDer<'_>,
        d: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algs = &self.provider.signature_verification_algorithms;
        verify_tls13_signature(m, c, d, algs)
            .or_else(|e| super::v1::raw_signature(m, c, d, algs, e))
    }
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// Builds a server's client configuration. Errors are messages without
/// location (the caller adds the server line's `file:line`).
pub fn client_config(
    t: &ServerTls,
    g: &TlsGlobal,
    files: &Store,
) -> Result<ClientTls, Vec<String>> {
    let sni = match &t.sni {
        Some(text) => Some(
            weir_rules::Expr::parse(text, &|_| Err("files are not read in 'sni'".into()))
                .map_err(|e| vec![format!("'sni {text}': {e}")])?,
        ),
        None => None,
    };
    Ok(ClientTls {
        t: t.clone(),
        live: RwLock::new(Arc::new(built(t, g, files)?)),
        sni,
    })
}

fn built(t: &ServerTls, g: &TlsGlobal, files: &Store) -> Result<Built, Vec<String>> {
    let r = Reader::new(files);
    let p = Arc::new(super::narrowed(
        t.ciphers.as_ref().or(g.server_ciphers.as_ref()),
        t.ciphersuites.as_ref().or(g.server_ciphersuites.as_ref()),
        None,
    ));
    let opts = t.opts.or(&g.server_opts);
    let versions = super::versions(&opts)?;
    let verify = t.verify.unwrap_or(g.server_verify);
    let anchors = match (verify, &t.ca_file) {
        (Verify::None, _) => None,
        (_, None) => {
            return Err(vec![
                "verify is enabled by default but no CA file is given: set 'ca-file', or 'verify none' on the server line, or 'ssl-server-verify none' in the global section".into(),
            ])
        }
        (_, Some(ca)) => Some(
            r.ca(&with_base(g.ca_base.as_deref(), ca))
                .map_err(|e| vec![e])?,
        ),
    };
    let roots = match &anchors {
        Some(a) => {
            let mut roots = RootCertStore::empty();
            if roots.add_parsable_certificates(a.iter().cloned()).0 == 0 {
                return Err(vec!["no CA certificate found".into()]);
            }
            Some(Arc::new(roots))
        }
        None => None,
    };
    let crls = match &t.crl_file {
        Some(f) => r
            .crl(&with_base(g.ca_base.as_deref(), f))
            .map_err(|e| vec![e])?,
        None => Vec::new(),
    };
    let own_crls = !super::v1::webpki_reads(&crls);
    let webpki_crls = if own_crls { Vec::new() } else { crls.clone() };
    let named = match &roots {
        Some(roots) => Some(
            WebPkiServerVerifier::builder_with_provider(roots.clone(), p.clone())
                .with_crls(webpki_crls.iter().cloned())
                .build()
                .map_err(|e| vec![format!("server verification: {e}")])?,
        ),
        None => None,
    };
    let owned = webpki_crls
        .iter()
        .map(|c| {
            webpki::OwnedCertRevocationList::from_der(c)
                .map(webpki::CertRevocationList::Owned)
                .map_err(|e| vec![format!("bad CRL: {e}")])
        })
        .collect::<Result<Vec<_>, _>>()?;
    let verifier = Arc::new(Verifier {
        provider: p.clone(),
        roots,
        named,
        verifyhost: t.verifyhost.clone(),
        crls: owned,
        v1: anchors.map(|anchors| super::v1::V1Roots {
            anchors,
            crls: crls.iter().map(|c| c.to_vec()).collect(),
            algs: p.signature_verification_algorithms,
        }),
        own_crls,
    });
    let builder = ClientConfig::builder_with_provider(p.clone())
        .with_protocol_versions(&versions)
        .map_err(|e| vec![format!("inconsistent TLS settings: {e}")])?
        .dangerous()
        .with_custom_certificate_verifier(verifier);
    let mut cfg = match &t.crt {
        Some(crt) => {
            let path = with_base(g.crt_base.as_deref(), crt);
            // Loaded (and its key checked) as a bind's certificate is, so
            // an X.509 v1 certificate loads as with OpenSSL.
            let ck = r.cert(&path).map_err(|e| vec![e])?;
            builder.with_client_cert_resolver(Arc::new(OwnCert(ck)))
        }
        None => builder.with_no_client_auth(),
    };
    cfg.alpn_protocols = super::alpn_list(t.alpn.as_deref());
    cfg.resumption = if t.no_reuse {
        Resumption::disabled()
    } else if opts.no_tickets {
        Resumption::in_memory_sessions(256).tls12_resumption(Tls12Resumption::SessionIdOnly)
    } else {
        Resumption::in_memory_sessions(256)
    };
    Ok(Built {
        cfg: Arc::new(cfg),
        used: r.used(),
    })
}

/// The one client certificate of a `server … crt` line.
#[derive(Debug)]
struct OwnCert(Arc<rustls::sign::CertifiedKey>);

impl rustls::client::ResolvesClientCert for OwnCert {
    fn resolve(
        &self,
        _: &[&[u8]],
        _: &[rustls::SignatureScheme],
    ) -> Option<Arc<rustls::sign::CertifiedKey>> {
        Some(self.0.clone())
    }
    fn has_certs(&self) -> bool {
        true
    }
}
