//! Client certificate verification with the errors a bind ignores
//! (`crt-ignore-err`): webpki's verdict mapped to OpenSSL's codes, an
//! ignored error let through and its code kept for the handshake that
//! asked (`ssl_c_verify`).

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

/// A verifier that lets through the errors `ignore` covers.
#[derive(Debug)]
pub struct Ignoring {
    pub inner: Arc<dyn ClientCertVerifier>,
    pub ignore: IgnoreErr,
}

impl ClientCertVerifier for Ignoring {
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
        match self
            .inner
            .verify_client_cert(end_entity, intermediates, now)
        {
            Err(e) => {
                let code = openssl_code(&e, end_entity);
                if !self.ignore.covers(code) {
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
        self.inner.verify_tls12_signature(message, cert, dss)
    }
    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}
