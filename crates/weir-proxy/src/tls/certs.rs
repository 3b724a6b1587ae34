//! Certificates for `bind … ssl`: PEM files holding a chain and its key (as
//! HAProxy has them), directories of such files, `crt-list` files, OCSP
//! responses from `<crt>.ocsp`, and the SNI index that picks a certificate
//! for each handshake (exact names, then wildcards, then the default).

use rustls::crypto::CryptoProvider;
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use std::collections::HashMap;
use std::sync::Arc;

/// What a PEM text holds: certificates (end entity first) and a key.
#[derive(Debug, Default)]
pub struct PemParts {
    pub chain: Vec<CertificateDer<'static>>,
    pub key: Option<PrivateKeyDer<'static>>,
}

/// Reads the certificates and the key of a PEM text (pure); `Err` when
/// a PEM block is malformed.
pub fn parse_pem(bytes: &[u8]) -> Result<PemParts, String> {
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(bytes)
        .collect::<Result<_, _>>()
        .map_err(|e| format!("{e:?}"))?;
    let key = PrivateKeyDer::from_pem_slice(bytes).ok();
    Ok(PemParts { chain, key })
}

/// The file a certificate's key is read from when its PEM has none:
/// `<file>.key`, or with `ssl-load-extra-del-ext` the file's name with
/// `.key` for its extension.
pub fn key_path(path: &str, del_ext: bool) -> String {
    let file_start = path.rfind('/').map_or(0, |i| i + 1);
    match path.rfind('.').filter(|&i| del_ext && i > file_start) {
        Some(dot) => format!("{}.key", &path[..dot]),
        None => format!("{path}.key"),
    }
}

/// Loads one PEM file: its certificates and its key, from the same file
/// or from its key file as HAProxy allows, and its `.ocsp` response.
pub fn read_pem(path: &str, del_ext: bool) -> Result<(PemParts, Option<Vec<u8>>), String> {
    let bytes = std::fs::read(path)
        .map_err(|e| format!("unable to load SSL certificate from PEM file '{path}': {e}"))?;
    let mut parts = parse_pem(&bytes)
        .map_err(|e| format!("unable to load SSL certificate from PEM file '{path}': {e}"))?;
    if parts.chain.is_empty() {
        return Err(format!(
            "unable to load SSL certificate from PEM file '{path}': no certificate found"
        ));
    }
    if parts.key.is_none() {
        let kp = key_path(path, del_ext);
        parts.key = Some(PrivateKeyDer::from_pem_file(&kp).map_err(|_| {
            format!("unable to load SSL private key from PEM file '{path}' (nor from '{kp}')")
        })?);
    }
    let ocsp = std::fs::read(format!("{path}.ocsp"))
        .ok()
        .filter(|o| !o.is_empty());
    Ok((parts, ocsp))
}

/// A chain without the self-issued certificates (roots) after its leaf
/// (`ssl-skip-self-issued-ca`: clients have their roots).
pub fn without_self_issued(chain: &[CertificateDer<'static>]) -> Vec<CertificateDer<'static>> {
    let self_issued =
        |c: &CertificateDer<'_>| weir_rules::x509::parse(c).is_some_and(|x| x.subject == x.issuer);
    chain
        .iter()
        .enumerate()
        .filter(|(i, c)| *i == 0 || !self_issued(c))
        .map(|(_, c)| c.clone())
        .collect()
}

/// The certified key of a chain and its key, with its OCSP response.
pub fn certify(
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
    ocsp: Option<Vec<u8>>,
    provider: &CryptoProvider,
) -> Result<CertifiedKey, String> {
    let mut ck = certified(chain, key, provider)?;
    ck.ocsp = ocsp;
    Ok(ck)
}

/// The chain with its key, once the key is known to be the certificate's:
/// compared as the certificate's public key (read by weir's own DER
/// reader, so an X.509 v1 certificate, which webpki refuses, loads as
/// OpenSSL loads it), else as rustls checks it.
fn certified(
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
    provider: &CryptoProvider,
) -> Result<CertifiedKey, String> {
    let signer = provider
        .key_provider
        .load_private_key(key)
        .map_err(|e| e.to_string())?;
    let cert_key = chain
        .first()
        .and_then(|c| weir_rules::x509::parse(c).map(|c| c.key.to_vec()));
    let own_key = signer
        .public_key()
        .and_then(|spki| weir_rules::x509::public_key(&spki).map(|(_, k)| k.to_vec()));
    match (cert_key, own_key) {
        (Some(a), Some(b)) if a == b => Ok(CertifiedKey::new(chain, signer)),
        (Some(_), Some(_)) => Err("the private key is not the certificate's".into()),
        _ => {
            let ck = CertifiedKey::new(chain, signer);
            ck.keys_match().map_err(|e| e.to_string())?;
            Ok(ck)
        }
    }
}

/// The DNS names a certificate serves: its subjectAltName DNS entries and
/// its subject CN, lower-cased (HAProxy indexes both).
pub fn names(ck: &CertifiedKey) -> Vec<String> {
    let Some(der) = ck.cert.first() else {
        return Vec::new();
    };
    let mut out: Vec<String> = Vec::new();
    if let Ok(ee) = webpki::EndEntityCert::try_from(der) {
        out.extend(ee.valid_dns_names().map(|n| n.to_ascii_lowercase()));
    }
    // The CN, read by weir's own DER reader: webpki refuses an X.509 v1
    // certificate, whose CN OpenSSL indexes all the same.
    let cn = weir_rules::x509::parse(der).and_then(|c| weir_rules::x509::common_name(c.subject));
    if let Some(cn) = cn.map(|c| c.to_ascii_lowercase()) {
        if !out.contains(&cn) {
            out.push(cn);
        }
    }
    out
}

/// Files of a `crt` directory, in name order, without the companion files
/// HAProxy skips (`.key`, `.ocsp`, `.issuer`, `.sctl`).
pub fn dir_files(dir: &str) -> Result<Vec<String>, String> {
    let rd =
        std::fs::read_dir(dir).map_err(|e| format!("unable to scan directory '{dir}': {e}"))?;
    let mut files: Vec<String> = rd
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .filter(|p| {
            !matches!(
                p.extension().and_then(|x| x.to_str()),
                Some("key" | "ocsp" | "issuer" | "sctl")
            )
        })
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    files.sort();
    Ok(files)
}

/// One line of a `crt-list` file: a certificate, its bind options in
/// brackets (words as on a `bind` line), and its SNI filters (`!name`
/// excludes; none = the certificate's own names).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrtListLine {
    pub crt: String,
    pub opts: Vec<String>,
    pub filters: Vec<String>,
    pub line: usize,
}

/// Parses a `crt-list` file's text (pure): `<crt> [[<options>]] [<filter>…]`.
pub fn parse_crt_list(text: &str) -> Result<Vec<CrtListLine>, String> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let mut words = line.split_whitespace().peekable();
        let Some(crt) = words.next() else { continue };
        let mut opts = Vec::new();
        if words.peek().is_some_and(|w| w.starts_with('[')) {
            let mut closed = false;
            for w in words.by_ref() {
                let w = w.strip_prefix('[').unwrap_or(w);
                let (w, end) = match w.strip_suffix(']') {
                    Some(w) => (w, true),
                    None => (w, false),
                };
                if !w.is_empty() {
                    opts.push(w.to_string());
                }
                if end {
                    closed = true;
                    break;
                }
            }
            if !closed {
                return Err(format!("line {}: '[' without its ']'", i + 1));
            }
        }
        let filters = words.map(str::to_ascii_lowercase).collect();
        out.push(CrtListLine {
            crt: crt.to_string(),
            opts,
            filters,
            line: i + 1,
        });
    }
    Ok(out)
}

/// Certificates by the names they serve.
#[derive(Debug, Default)]
pub struct SniIndex {
    exact: HashMap<String, Vec<Arc<CertifiedKey>>>,
    /// `*.example.com` stored under `example.com`.
    wild: HashMap<String, Vec<Arc<CertifiedKey>>>,
    default: Option<Arc<CertifiedKey>>,
    /// `strict-sni`: no default certificate.
    pub strict: bool,
    /// Each certificate's leaf in DER, by the address of its key (what
    /// `ssl_f_*` read: shared, not copied per connection).
    leaves: HashMap<usize, Arc<[u8]>>,
    /// `generate-certificates`: makes one for a name nothing serves.
    pub forge: Option<Arc<super::forge::Forge>>,
}

impl SniIndex {
    /// Adds a certificate under `names` (negative filters excluded); the
    /// first certificate added is the default one.
    pub fn add(&mut self, ck: Arc<CertifiedKey>, names: &[String], excluded: &[String]) {
        if self.default.is_none() {
            self.default = Some(ck.clone());
        }
        if let Some(leaf) = ck.cert.first() {
            let der: Arc<[u8]> = Arc::from(leaf.as_ref());
            self.leaves.insert(Arc::as_ptr(&ck) as usize, der);
        }
        for n in names {
            if excluded.contains(n) {
                continue;
            }
            let (map, key) = match n.strip_prefix("*.") {
                Some(rest) => (&mut self.wild, rest),
                None => (&mut self.exact, n.as_str()),
            };
            map.entry(key.to_string()).or_default().push(ck.clone());
        }
    }

    /// The certificate for a server name (`None` aborts the handshake).
    fn pick(
        &self,
        name: Option<&str>,
        schemes: &[rustls::SignatureScheme],
    ) -> Option<Arc<CertifiedKey>> {
        // Several certificates for one name (ECDSA and RSA): the first whose
        // key the client can verify.
        let usable = |list: &Vec<Arc<CertifiedKey>>| {
            list.iter()
                .find(|c| c.key.choose_scheme(schemes).is_some())
                .or_else(|| list.first())
                .cloned()
        };
        if let Some(name) = name {
            let name = name.to_ascii_lowercase();
            if let Some(c) = self.exact.get(&name).and_then(usable) {
                return Some(c);
            }
            if let Some((_, parent)) = name.split_once('.') {
                if let Some(c) = self.wild.get(parent).and_then(usable) {
                    return Some(c);
                }
            }
            if let Some(m) = self.made(&name) {
                return Some(m.ck);
            }
        }
        if self.strict {
            return None;
        }
        self.default.clone()
    }

    /// A certificate made for `name` (`generate-certificates`) on the
    /// default certificate's key.
    fn made(&self, name: &str) -> Option<super::forge::Made> {
        self.forge.as_ref()?.get(name, self.default.as_ref()?)
    }

    /// The leaf certificate (DER) the handshake of `hello` presents.
    pub fn leaf(&self, hello: &ClientHello<'_>) -> Option<Arc<[u8]>> {
        let ck = self.pick(hello.server_name(), hello.signature_schemes())?;
        match self.leaves.get(&(Arc::as_ptr(&ck) as usize)) {
            Some(l) => Some(l.clone()),
            None => Some(self.made(hello.server_name()?)?.leaf),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.default.is_none()
    }

    /// The certificate a client without a known name gets (none with
    /// `strict-sni`).
    pub fn default_cert(&self) -> Option<Arc<CertifiedKey>> {
        self.default.clone().filter(|_| !self.strict)
    }
}

impl ResolvesServerCert for SniIndex {
    fn resolve(&self, hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        self.pick(hello.server_name(), hello.signature_schemes())
    }
}

#[cfg(test)]
#[path = "certs_tests.rs"]
mod tests;
