//! The `ssl_*` fetches: the client connection's TLS session (`ssl_fc_*`),
//! the certificates on either side (`ssl_c_*` the client's, `ssl_f_*` the
//! bind's own, `ssl_s_*` a server's, read from their DER when asked), and
//! the server connection's session (`ssl_bc_*`).

use crate::sample::{Ctx, Sample};
use crate::x509;
use std::sync::Arc;

/// What a finished TLS handshake offers to the `ssl_*` fetches.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TlsInfo {
    pub sni: Option<String>,
    pub alpn: Option<String>,
    /// `TLSv1.2` or `TLSv1.3`.
    pub version: &'static str,
    /// OpenSSL's name of the suite.
    pub cipher: String,
    pub client_cert: bool,
    /// The handshake resumed a session (ticket or id).
    pub resumed: bool,
    /// The peer's certificates (DER), leaf first: a client's on a bind
    /// line, the server's on a connection to a server.
    pub peer_chain: Vec<Vec<u8>>,
    /// The certificate this side presented (a bind's), in DER.
    pub own_cert: Option<Arc<[u8]>>,
    /// `ssl_c_verify`: OpenSSL's code for the client certificate's
    /// verification (0: it passed or none was asked).
    pub verify: i64,
}

/// Whose certificate a fetch reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// `ssl_c_*`: the client's.
    Client,
    /// `ssl_f_*`: the one the bind presented.
    Front,
    /// `ssl_s_*`: the server's.
    Server,
}

/// `*_s_dn`/`*_i_dn` arguments: one entry's value (its `occ`th from the
/// start, from the end when negative), and the RFC 2253 form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DnArgs {
    pub entry: Option<String>,
    pub occ: i64,
    pub rfc2253: bool,
}

/// A certificate field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CertField {
    Der,
    /// The chain: a client's without its leaf (as OpenSSL keeps it), a
    /// server's whole.
    ChainDer,
    Sha1,
    NotAfter,
    NotBefore,
    SigAlg,
    KeyAlg,
    SDn(DnArgs),
    IDn(DnArgs),
    Serial,
    Version,
}

/// The `ssl_*` fetches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SslFetch {
    /// `ssl_fc`: the connection is TLS.
    Fc,
    FcSni,
    FcHasSni,
    FcAlpn,
    FcProtocol,
    FcCipher,
    /// `ssl_c_used` / `ssl_fc_has_crt`: a client certificate was given.
    CUsed,
    /// `ssl_fc_is_resumed`.
    FcIsResumed,
    /// `ssl_c_verify`.
    CVerify,
    Cert(Side, CertField),
    /// `ssl_bc`: the server connection is TLS.
    Bc,
    BcAlpn,
    BcProtocol,
    BcCipher,
    BcIsResumed,
    /// `ssl_fc_err`, `ssl_c_ca_err`, `ssl_c_ca_err_depth`: 0 on a session
    /// whose handshake was done (a failed one is logged on its own).
    NoErr,
    /// `ssl_c_err`: the client certificate's error let through.
    CErr,
    /// `fc_err`: the client connection's error number (0 without one).
    ConnErr,
    /// `fc_err_str`: its words.
    ConnErrStr,
}

/// The `ssl_*` fetch `name` with arguments `a`; `None` for another name.
pub fn parse(name: &str, a: &[String]) -> Option<Result<SslFetch, String>> {
    let plain = match name {
        "ssl_fc" => Some(SslFetch::Fc),
        "ssl_fc_sni" => Some(SslFetch::FcSni),
        "ssl_fc_has_sni" => Some(SslFetch::FcHasSni),
        "ssl_fc_alpn" => Some(SslFetch::FcAlpn),
        "ssl_fc_protocol" => Some(SslFetch::FcProtocol),
        "ssl_fc_cipher" => Some(SslFetch::FcCipher),
        "ssl_c_used" | "ssl_fc_has_crt" => Some(SslFetch::CUsed),
        "ssl_c_verify" => Some(SslFetch::CVerify),
        "ssl_fc_is_resumed" => Some(SslFetch::FcIsResumed),
        "ssl_bc" => Some(SslFetch::Bc),
        "ssl_bc_alpn" => Some(SslFetch::BcAlpn),
        "ssl_bc_protocol" => Some(SslFetch::BcProtocol),
        "ssl_bc_cipher" => Some(SslFetch::BcCipher),
        "ssl_bc_is_resumed" => Some(SslFetch::BcIsResumed),
        "ssl_fc_err" | "ssl_c_ca_err" | "ssl_c_ca_err_depth" => Some(SslFetch::NoErr),
        "ssl_c_err" => Some(SslFetch::CErr),
        "fc_err" => Some(SslFetch::ConnErr),
        "fc_err_str" => Some(SslFetch::ConnErrStr),
        _ => None,
    };
    if let Some(f) = plain {
        return Some(Ok(f));
    }
    let (side, field) = match name.split_at_checked(6)? {
        ("ssl_c_", f) => (Side::Client, f),
        ("ssl_f_", f) => (Side::Front, f),
        ("ssl_s_", f) => (Side::Server, f),
        _ => return None,
    };
    let field = match field {
        "der" => CertField::Der,
        "chain_der" if side != Side::Front => CertField::ChainDer,
        "sha1" => CertField::Sha1,
        "notafter" => CertField::NotAfter,
        "notbefore" => CertField::NotBefore,
        "sig_alg" => CertField::SigAlg,
        "key_alg" => CertField::KeyAlg,
        "serial" => CertField::Serial,
        "version" => CertField::Version,
        "s_dn" | "i_dn" => {
            let dn = match dn_args(name, a) {
                Ok(d) => d,
                Err(e) => return Some(Err(e)),
            };
            if field == "s_dn" {
                CertField::SDn(dn)
            } else {
                CertField::IDn(dn)
            }
        }
        _ => return None,
    };
    Some(Ok(SslFetch::Cert(side, field)))
}

fn dn_args(name: &str, a: &[String]) -> Result<DnArgs, String> {
    let entry = a.first().filter(|e| !e.is_empty()).cloned();
    let occ = match a.get(1).filter(|o| !o.is_empty()) {
        Some(o) => o
            .parse()
            .map_err(|_| format!("fetch method '{name}': invalid occurrence '{o}'"))?,
        None => 1,
    };
    let rfc2253 = match a.get(2).map(String::as_str) {
        None | Some("") => false,
        Some("rfc2253") => true,
        Some(f) => {
            return Err(format!(
                "fetch method '{name}': unknown format '{f}' (only rfc2253)"
            ))
        }
    };
    Ok(DnArgs {
        entry,
        occ,
        rfc2253,
    })
}

/// The samples of an `ssl_*` fetch.
pub fn fetch(ctx: &dyn Ctx, k: &SslFetch) -> Vec<Sample> {
    let (t, bt) = (ctx.tls(), ctx.srv_tls());
    let text = |v: Option<&str>| {
        v.filter(|v| !v.is_empty())
            .map(|v| Sample::Str(v.as_bytes().to_vec()))
            .into_iter()
            .collect()
    };
    match k {
        SslFetch::Fc => vec![Sample::Bool(t.is_some())],
        SslFetch::FcHasSni => vec![Sample::Bool(t.is_some_and(|t| t.sni.is_some()))],
        SslFetch::CUsed => vec![Sample::Bool(t.is_some_and(|t| t.client_cert))],
        SslFetch::FcIsResumed => vec![Sample::Bool(t.is_some_and(|t| t.resumed))],
        SslFetch::CVerify | SslFetch::CErr => {
            t.map(|t| Sample::Int(t.verify)).into_iter().collect()
        }
        SslFetch::NoErr => t.map(|_| Sample::Int(0)).into_iter().collect(),
        SslFetch::ConnErr => vec![Sample::Int(ctx.conn_error().0)],
        SslFetch::ConnErrStr => text(Some(ctx.conn_error().1)),
        SslFetch::FcSni => text(t.and_then(|t| t.sni.as_deref())),
        SslFetch::FcAlpn => text(t.and_then(|t| t.alpn.as_deref())),
        SslFetch::FcProtocol => text(t.map(|t| t.version)),
        SslFetch::FcCipher => text(t.map(|t| t.cipher.as_str())),
        SslFetch::Bc => vec![Sample::Bool(bt.is_some())],
        SslFetch::BcAlpn => text(bt.and_then(|t| t.alpn.as_deref())),
        SslFetch::BcProtocol => text(bt.map(|t| t.version)),
        SslFetch::BcCipher => text(bt.map(|t| t.cipher.as_str())),
        SslFetch::BcIsResumed => vec![Sample::Bool(bt.is_some_and(|t| t.resumed))],
        SslFetch::Cert(side, f) => {
            let (info, leaf) = match side {
                Side::Client => (t, t.and_then(|t| t.peer_chain.first().map(Vec::as_slice))),
                Side::Front => (t, t.and_then(|t| t.own_cert.as_deref())),
                Side::Server => (bt, bt.and_then(|t| t.peer_chain.first().map(Vec::as_slice))),
            };
            let Some(leaf) = leaf else {
                return Vec::new();
            };
            let chain = || {
                let skip = usize::from(*side == Side::Client);
                info.map(|t| t.peer_chain.iter().skip(skip).flatten().copied().collect())
            };
            cert_field(leaf, f, chain).into_iter().collect()
        }
    }
}

/// A validity time as HAProxy gives it: `YYMMDDhhmmssZ`, a generalized
/// time (`YYYYMMDDhhmmssZ`, years from 2050) without its century.
fn utc_form(t: &[u8]) -> &[u8] {
    match t {
        [_, _, rest @ ..] if t.len() == 15 => rest,
        _ => t,
    }
}

/// One field of the certificate `der`.
fn cert_field(der: &[u8], f: &CertField, chain: impl Fn() -> Option<Vec<u8>>) -> Option<Sample> {
    let bytes = |b: &[u8]| Some(Sample::Str(b.to_vec()));
    // The DER forms, the fingerprint and the serial are binaries.
    let bin = |b: &[u8]| Some(Sample::Bin(b.to_vec()));
    match f {
        CertField::Der => return bin(der),
        CertField::ChainDer => return chain().filter(|c| !c.is_empty()).map(Sample::Bin),
        CertField::Sha1 => {
            let d = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA1_FOR_LEGACY_USE_ONLY, der);
            return bin(d.as_ref());
        }
        _ => {}
    }
    let c = x509::parse(der)?;
    let text = |s: String| Some(Sample::Str(s.into_bytes()));
    match f {
        CertField::NotAfter => bytes(utc_form(c.not_after)),
        CertField::NotBefore => bytes(utc_form(c.not_before)),
        CertField::SigAlg => text(x509::sig_alg_name(c.sig_alg)),
        CertField::KeyAlg => text(x509::key_alg_name(c.key_alg)),
        CertField::Serial => bin(c.serial),
        CertField::Version => Some(Sample::Int(c.version)),
        CertField::SDn(a) => dn(c.subject, a),
        CertField::IDn(a) => dn(c.issuer, a),
        CertField::Der | CertField::ChainDer | CertField::Sha1 => None,
    }
}

/// A Name as the fetch's arguments ask.
fn dn(name: &[u8], a: &DnArgs) -> Option<Sample> {
    let s = match &a.entry {
        Some(e) => x509::entry(name, e, a.occ)?,
        None if a.rfc2253 => x509::rfc2253(name),
        None => x509::oneline(name),
    };
    (!s.is_empty()).then(|| Sample::Str(s.into_bytes()))
}

#[cfg(test)]
#[path = "ssl_tests.rs"]
mod tests;
