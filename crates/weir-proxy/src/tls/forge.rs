//! `generate-certificates`: a certificate made during the handshake for a
//! name no loaded certificate serves, issued by the `ca-sign-file` CA on
//! the key of the bind line's default certificate, and kept in an LRU
//! cache of `tune.ssl.ssl-ctx-cache-size` entries.

use super::certs;
use aws_lc_rs::digest;
use rustls::crypto::CryptoProvider;
use rustls::sign::{CertifiedKey, SigningKey};
use rustls::SignatureScheme;
use rustls_pki_types::CertificateDer;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};
use weir_rules::x509::{self, forge};

/// A certificate made for one name: what the handshake presents, and its
/// leaf in DER (what `ssl_f_*` read).
#[derive(Clone)]
pub struct Made {
    pub ck: Arc<CertifiedKey>,
    pub leaf: Arc<[u8]>,
}

/// The certificates made, by name, with the tick of their last use.
#[derive(Default)]
struct Cache {
    made: HashMap<String, (Made, u64)>,
    tick: u64,
}

/// The CA that signs, and the certificates it made.
pub struct Forge {
    ca: CertificateDer<'static>,
    signer: Arc<dyn SigningKey>,
    /// The CA key's DER, for ECDSA with SHA-256 on larger curves.
    key_der: Vec<u8>,
    size: usize,
    cache: Mutex<Cache>,
}

impl std::fmt::Debug for Forge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Forge(cache {})", self.size)
    }
}

/// The schemes a CA key may sign certificates with, by preference.
const SCHEMES: [SignatureScheme; 5] = [
    SignatureScheme::ECDSA_NISTP256_SHA256,
    SignatureScheme::ECDSA_NISTP384_SHA384,
    SignatureScheme::ECDSA_NISTP521_SHA512,
    SignatureScheme::RSA_PKCS1_SHA256,
    SignatureScheme::ED25519,
];

fn scheme_name(s: SignatureScheme) -> &'static str {
    match s {
        SignatureScheme::ECDSA_NISTP256_SHA256 => "ECDSA_NISTP256_SHA256",
        SignatureScheme::ECDSA_NISTP384_SHA384 => "ECDSA_NISTP384_SHA384",
        SignatureScheme::ECDSA_NISTP521_SHA512 => "ECDSA_NISTP521_SHA512",
        SignatureScheme::RSA_PKCS1_SHA256 => "RSA_PKCS1_SHA256",
        SignatureScheme::ED25519 => "ED25519",
        _ => "",
    }
}

/// The SHA-1 of a SubjectPublicKeyInfo's key bits (RFC 5280's key id).
fn key_sha1(spki: &[u8]) -> Option<Vec<u8>> {
    let (_, key) = x509::public_key(spki)?;
    Some(
        digest::digest(&digest::SHA1_FOR_LEGACY_USE_ONLY, key)
            .as_ref()
            .to_vec(),
    )
}

impl Forge {
    /// Loads the CA certificate and its key from `path` (one PEM).
    pub fn load(path: &str, provider: &CryptoProvider, size: usize) -> Result<Forge, String> {
        let (parts, _) = certs::read_pem(path, false)?;
        let ca = parts
            .chain
            .into_iter()
            .next()
            .ok_or_else(|| format!("no CA certificate in '{path}'"))?;
        let key = parts
            .key
            .ok_or_else(|| format!("no CA private key in '{path}'"))?;
        let key_der = key.secret_der().to_vec();
        let signer = provider
            .key_provider
            .load_private_key(key)
            .map_err(|e| format!("CA key of '{path}': {e}"))?;
        if signer.choose_scheme(&SCHEMES).is_none() {
            return Err(format!(
                "CA key of '{path}': weir signs certificates with ECDSA, RSA or Ed25519 keys only"
            ));
        }
        Ok(Forge {
            ca,
            signer,
            key_der,
            size: size.max(1),
            cache: Mutex::new(Cache::default()),
        })
    }

    /// The certificate for `name` on `base`'s key: from the cache, else
    /// made now (`None` when it cannot be: the default certificate serves).
    pub fn get(&self, name: &str, base: &CertifiedKey) -> Option<Made> {
        let name = name.to_ascii_lowercase();
        {
            let mut c = self.cache.lock().unwrap_or_else(|e| e.into_inner());
            c.tick += 1;
            let tick = c.tick;
            if let Some((m, used)) = c.made.get_mut(&name) {
                *used = tick;
                return Some(m.clone());
            }
        }
        let made = self.make(&name, base)?;
        let mut c = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if c.made.len() >= self.size {
            let oldest = c
                .made
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(k, _)| k.clone());
            if let Some(k) = oldest {
                c.made.remove(&k);
            }
        }
        let tick = c.tick;
        c.made.insert(name, (made.clone(), tick));
        Some(made)
    }

    fn make(&self, name: &str, base: &CertifiedKey) -> Option<Made> {
        let spki = x509::spki_der(base.cert.first()?)?;
        let signer = self.signer.choose_scheme(&SCHEMES)?;
        // As OpenSSL signs haproxy's certificates: SHA-256 whatever the
        // curve (ecdsa-with-SHA256 with a P-384 or P-521 CA key too).
        let wide_ec = matches!(
            signer.scheme(),
            SignatureScheme::ECDSA_NISTP384_SHA384 | SignatureScheme::ECDSA_NISTP521_SHA512
        );
        let scheme = if wide_ec {
            "ECDSA_NISTP256_SHA256"
        } else {
            scheme_name(signer.scheme())
        };
        let alg = forge::sig_alg_der(scheme)?;
        let mut serial = [0u8; 16];
        aws_lc_rs::rand::fill(&mut serial).ok()?;
        // Positive and minimally encoded.
        serial[0] = (serial[0] & 0x7f) | 0x40;
        let now = SystemTime::now().duration_since(UNIX_EPOCH).ok()?.as_secs() as i64;
        let key_id = key_sha1(spki)?;
        let ca_key_id = forge::key_id(&self.ca).or_else(|| key_sha1(x509::spki_der(&self.ca)?));
        let tbs = forge::tbs(&forge::Leaf {
            name,
            serial: &serial,
            sig_alg: &alg,
            issuer: forge::subject_der(&self.ca)?,
            not_before: now - 86_400,
            not_after: now + 365 * 86_400,
            spki,
            key_id: &key_id,
            ca_key_id: ca_key_id.as_deref(),
        })?;
        let sig = if wide_ec {
            super::ecsign::sign_sha256(&self.key_der, &tbs)?
        } else {
            signer.sign(&tbs).ok()?
        };
        let der = forge::certificate(&tbs, &alg, &sig);
        let leaf: Arc<[u8]> = Arc::from(der.as_slice());
        let chain = vec![CertificateDer::from(der), self.ca.clone()];
        Some(Made {
            ck: Arc::new(CertifiedKey::new(chain, base.key.clone())),
            leaf,
        })
    }
}
