//! Client certificate verification on binds, with the errors a bind ignores
//! (`crt-ignore-err`): webpki's verdict mapped to OpenSSL's codes, an
//! ignored error let through and its code kept for the handshake that
//! asked (`ssl_c_verify`).

use super::v1::{raw_signature, V1Roots};
use rustls::client::danger::HandshakeSignatureValid;
use rustls::pki_types::{CertificateDer, UnixTime};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{CertificateError, DigitallySignedStruct, DistinguishedName, Error, SignatureScheme};
use std::cell::Cell;
use std::sync::Arc;
use weir_config::tls::IgnoreErr;

thread_local! {
    /// The code of the error the last verification on this thread let
    /// through; the handshake reads it right after the step that verified.
    static IGNORED: Cell<Option<i64>> = const { Cell::new(None) };
}

/// Takes the code of an error a verification on this thread let through.
pub fn take_ignored() -> Option<i64> {
    IGNORED.with(Cell::take)
}

/// OpenSSL's `X509_V_ERR_*` code for a verification error of the
/// certificate `der` (one issued by itself and not trusted is 18).
pub fn openssl_code(e: &Error, der: &[u8]) -> i64 {
    use CertificateError as C;
    let Error::InvalidCertificate(c) = e else {
        return 1;
    };
    if weir_rules::x509::parse(der).is_some_and(|c| c.issuer == c.subject) {
        return 18;
    }
    match c {
        C::BadSignature => 7,
        C::NotValidYet | C::NotValidYetContext { .. } => 9,
        C::Expired | C::ExpiredContext { .. } => 10,
        C::ExpiredRevocationList | C::ExpiredRevocationListContext { .. } => 12,
        C::UnknownIssuer => 20,
        C::Revoked => 23,
        C::UnknownRevocationStatus => 3,
        C::InvalidPurpose | C::InvalidPurposeContext { .. } => 26,
        _ => 1,
    }
}

/// A bind's client certificate verifier: webpki's, with X.509 v1
/// certificates checked by weir's own walk ([`V1Roots`]), and every
/// chain's revocation too when webpki cannot read the lists (`own_crls`:
/// webpki then has none); the errors `ignore` covers are let through.
#[derive(Debug)]
pub struct ClientVerifier {
    pub inner: Arc<dyn ClientCertVerifier>,
    pub v1: V1Roots,
    pub own_crls: bool,
    pub ignore: Option<IgnoreErr>,
}

impl ClientVerifier {
    /// The verdict before `crt-ignore-err`.
    fn verdict(
        &self,
        ee: &CertificateDer<'_>,
        inter: &[CertificateDer<'_>],
        now: UnixTime,
    ) -> Result<ClientCertVerified, Error> {
        if weir_rules::x509::parse(ee).is_some_and(|c| c.version == 1) {
            return self
                .v1
                .verify(ee, inter, now)
                .map(|()| ClientCertVerified::assertion())
                .map_err(Error::InvalidCertificate);
        }
        let ok = self.inner.verify_client_cert(ee, inter, now)?;
        if self.own_crls {
            self.v1
                .verify(ee, inter, now)
                .map_err(Error::InvalidCertificate)?;
        }
        Ok(ok)
    }
}

impl ClientCertVerifier for ClientVerifier {
    fn offer_client_auth(&self) -> bool {
        self.inner.offer_client_auth()
    }
    fn client_auth_mandatory(&self) -> bool {
        self.inner.client_auth_mandatory()
    }
    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        self.inner.root_hint_subjects()
    }
    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        now: UnixTime,
    ) -> Result<ClientCertVerified, Error> {
        match self.verdict(end_entity, intermediates, now) {
            Err(e) => {
                let code = openssl_code(&e, end_entity);
                if !self.ignore.as_ref().is_some_and(|i| i.covers(code)) {
                    return Err(e);
                }
                IGNORED.set(Some(code));
                Ok(ClientCertVerified::assertion())
            }
            r => r,
        }
    }
    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        self.inner
            .verify_tls12_signature(message, cert, dss)
            .or_else(|e| raw_signature(message, cert, dss, &self.v1.algs, e))
    }
    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        self.inner
            .verify_tls13_signature(message, cert, dss)
            .or_else(|e| raw_signature(message, cert, dss, &self.v1.algs, e))
    }
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}
