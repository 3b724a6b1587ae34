//! X.509 version 1 client certificates, which webpki refuses and OpenSSL
//! (so HAProxy) accepts: weir walks their chain itself — the issuer found
//! by name among the client's intermediates and the bind's trust anchors,
//! each signature checked with the issuer's key by the provider's own
//! algorithms, intermediates required to be CAs, validity, and the bind's
//! revocation lists — and gives webpki's errors, so `crt-ignore-err` and
//! `ssl_c_verify` read the same codes as for any other certificate.

use rustls::client::danger::HandshakeSignatureValid;
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::{CertificateDer, SubjectPublicKeyInfoDer, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, Error};
use weir_rules::x509;

/// The longest chain walked.
const MAX_DEPTH: usize = 8;

/// What a v1 chain is checked against.
#[derive(Debug)]
pub struct V1Roots {
    pub anchors: Vec<CertificateDer<'static>>,
    pub crls: Vec<Vec<u8>>,
    pub algs: WebPkiSupportedAlgorithms,
}

/// sha1WithRSAEncryption's AlgorithmIdentifier contents.
const RSA_SHA1: &[u8] = &[
    0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x05, 0x05, 0x00,
];

/// Whether `signed` (a certificate or CRL) was signed by the key of
/// `issuer` (a certificate). `sha1`: an RSA signature over SHA-1 counts
/// too (revocation lists only, as old CAs still sign them so).
fn signed_by(signed: &[u8], issuer: &[u8], algs: &WebPkiSupportedAlgorithms, sha1: bool) -> bool {
    let Some((tbs, alg_id, sig)) = x509::signed_parts(signed) else {
        return false;
    };
    let Some(spki) = x509::spki_der(issuer) else {
        return false;
    };
    if sha1 && alg_id == RSA_SHA1 {
        let Some((_, key)) = x509::public_key(spki) else {
            return false;
        };
        use aws_lc_rs::signature::{
            UnparsedPublicKey, RSA_PKCS1_1024_8192_SHA1_FOR_LEGACY_USE_ONLY,
        };
        return UnparsedPublicKey::new(&RSA_PKCS1_1024_8192_SHA1_FOR_LEGACY_USE_ONLY, key)
            .verify(tbs, sig)
            .is_ok();
    }
    let spki = SubjectPublicKeyInfoDer::from(spki);
    let Ok(key) = webpki::RawPublicKeyEntity::try_from(&spki) else {
        return false;
    };
    algs.all
        .iter()
        .filter(|a| a.signature_alg_id().as_ref() == alg_id)
        .any(|a| key.verify_signature(*a, tbs, sig).is_ok())
}

impl V1Roots {
    /// Checks the chain of `ee` (any version) up to an anchor.
    pub fn verify(
        &self,
        ee: &[u8],
        inter: &[CertificateDer<'_>],
        now: UnixTime,
    ) -> Result<(), CertificateError> {
        let mut path: Vec<&[u8]> = vec![ee];
        let mut cur = ee;
        for _ in 0..MAX_DEPTH {
            let c = x509::parse(cur).ok_or(CertificateError::BadEncoding)?;
            let named = |d: &&[u8]| x509::parse(d).is_some_and(|i| i.subject == c.issuer);
            let anchor = self.anchors.iter().map(|a| a.as_ref()).filter(named);
            let mut found_name = false;
            for a in anchor {
                found_name = true;
                if signed_by(cur, a, &self.algs, false) {
                    return self.finish(&path, a, now);
                }
            }
            let next = inter
                .iter()
                .map(|i| i.as_ref())
                .filter(named)
                .filter(|i| !path.contains(i))
                .find(|i| {
                    found_name = true;
                    signed_by(cur, i, &self.algs, false)
                });
            match next {
                // An intermediate must be a CA (a v1 certificate never is).
                Some(i) if x509::is_ca(i) == Some(true) => {
                    path.push(i);
                    cur = i;
                }
                Some(_) => return Err(CertificateError::UnknownIssuer),
                None if found_name => return Err(CertificateError::BadSignature),
                None => return Err(CertificateError::UnknownIssuer),
            }
        }
        Err(CertificateError::UnknownIssuer)
    }

    /// The path found (`ee` first, the anchor not in it): validity, then
    /// revocation.
    fn finish(&self, path: &[&[u8]], anchor: &[u8], now: UnixTime) -> Result<(), CertificateError> {
        let now = now.as_secs();
        for d in path {
            let c = x509::parse(d).ok_or(CertificateError::BadEncoding)?;
            let nb = x509::time_secs(c.not_before).ok_or(CertificateError::BadEncoding)?;
            let na = x509::time_secs(c.not_after).ok_or(CertificateError::BadEncoding)?;
            if now < nb {
                return Err(CertificateError::NotValidYet);
            }
            if now > na {
                return Err(CertificateError::Expired);
            }
        }
        if self.crls.is_empty() {
            return Ok(());
        }
        for (i, d) in path.iter().enumerate() {
            let issuer = path.get(i + 1).copied().unwrap_or(anchor);
            self.not_revoked(d, issuer)?;
        }
        Ok(())
    }

    /// `cert` is not in a CRL its issuer signed (and such a CRL exists).
    fn not_revoked(&self, cert: &[u8], issuer: &[u8]) -> Result<(), CertificateError> {
        let c = x509::parse(cert).ok_or(CertificateError::BadEncoding)?;
        let mut any = false;
        for crl in &self.crls {
            let Some((crl_issuer, serials)) = x509::crl_entries(crl) else {
                continue;
            };
            if crl_issuer != c.issuer || !signed_by(crl, issuer, &self.algs, true) {
                continue;
            }
            any = true;
            if serials.contains(&c.serial) {
                return Err(CertificateError::Revoked);
            }
        }
        if any {
            Ok(())
        } else {
            Err(CertificateError::UnknownRevocationStatus)
        }
    }
}

/// The handshake's signature by an X.509 v1 certificate, which webpki
/// does not read (OpenSSL does): checked against the certificate's public
/// key. Other certificates keep webpki's error `e`.
pub fn raw_signature(
    msg: &[u8],
    cert: &CertificateDer<'_>,
    dss: &DigitallySignedStruct,
    algs: &WebPkiSupportedAlgorithms,
    e: Error,
) -> Result<HandshakeSignatureValid, Error> {
    if x509::parse(cert).is_none_or(|c| c.version != 1) {
        return Err(e);
    }
    let spki = x509::spki_der(cert)
        .map(|b| SubjectPublicKeyInfoDer::from(b.to_vec()))
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

/// Whether webpki reads every one of these revocation lists (it does not
/// read version 1 lists, which `openssl ca -gencrl` writes by default).
pub fn webpki_reads(crls: &[rustls::pki_types::CertificateRevocationListDer<'_>]) -> bool {
    crls.iter()
        .all(|c| webpki::OwnedCertRevocationList::from_der(c).is_ok())
}
