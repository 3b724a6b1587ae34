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
                return Ok(ServerCertVerified::assertion());
            }
        };
        match &self.named {
            Some(v) => v.verify_server_cert(ee, inter, &host, ocsp, now),
            None => Ok(ServerCertVerified::assertion()),
        }
    }
    fn verify_tls12_signature(
        &self,
        m: &[u8],
        c: &CertificateDer<'_>,
        d: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algs = &self.provider.signature_verification_algorithms;
        verify_tls12_signature(m, c, d, algs).or_else(|e| raw_signature(m, c, d, algs, e))
    }
    fn verify_tls13_signature(
        &self,
        m: &[u8],
        c: &CertificateDer<'_>,
        d: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algs = &self.provider.signature_verification_algorithms;
        verify_tls13_signature(m, c, d, algs).or_else(|e| raw_signature(m, c, d, algs, e))
    }
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// The handshake's signature by an X.509 v1 certificate, which webpki
/// does not read (OpenSSL does): checked against the certificate's public
/// key. Other certificates keep webpki's error `e`.
fn raw_signature(
    msg: &[u8],
    cert: &CertificateDer<'_>,
    dss: &DigitallySignedStruct,
    algs: &rustls::crypto::WebPkiSupportedAlgorithms,
    e: rustls::Error,
) -> Result<HandshakeSignatureValid, rustls::Error> {
    if weir_rules::x509::parse(cert).is_none_or(|c| c.version != 1) {
        return Err(e);
    }
    let spki = weir_rules::x509::spki_der(cert)
        .map(|b| rustls::pki_types::SubjectPublicKeyInfoDer::from(b.to_vec()))
        .ok_or_else(|| e.clone())?;
    let key = webpki::RawPublicKeyEntity::try_from(&spki).map_err(|_| e.clone())?;
    let candidates = algs
        .mapping
        .iter()
        .find(|(s, _)| *s == dss.scheme)
        .map_or(&[][..], |(_, a)| *a);
    candidates
        .iter()
        .find(|alg| key.verify_signature(**alg, msg, dss.signature()).is_ok())
        .map(|_| HandshakeSignatureValid::assertion())
        .ok_or(e)
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
    let roots = match (verify, &t.ca_file) {
        (Verify::None, _) => None,
        (_, None) => {
            return Err(vec![
                "verify is enabled by default but no CA file is given: set 'ca-file', or 'verify none' on the server line, or 'ssl-server-verify none' in the global section".into(),
            ])
        }
        (_, Some(ca)) => Some(Arc::new(super::load_roots(
            &r,
            &with_base(g.ca_base.as_deref(), ca),
        )?)),
    };
    let crls = match &t.crl_file {
        Some(f) => r
            .crl(&with_base(g.ca_base.as_deref(), f))
            .map_err(|e| vec![e])?,
        None => Vec::new(),
    };
    let named = match &roots {
        Some(roots) => Some(
            WebPkiServerVerifier::builder_with_provider(roots.clone(), p.clone())
                .with_crls(crls.iter().cloned())
                .build()
                .map_err(|e| vec![format!("server verification: {e}")])?,
        ),
        None => None,
    };
    let owned = crls
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
