//! JSON Web Tokens (pure but for the signature checks, which aws-lc-rs
//! makes): `jwt_header_query` and `jwt_payload_query` (a part of a token,
//! decoded, whole or through a JSON path), `jwt_verify` (a JWS signature
//! with haproxy 2.6's return codes) and the `http_auth_bearer` fetch.

use crate::json::Step;
use crate::sample::{Ctx, Sample};
use crate::x509;
use aws_lc_rs::{hmac, signature};
use std::sync::Arc;

/// A string argument: given, or a variable's value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Arg {
    Const(String),
    Var(String),
}

impl Arg {
    fn parse(v: &str) -> Arg {
        if crate::vars::is_var(v) {
            Arg::Var(v.to_string())
        } else {
            Arg::Const(v.to_string())
        }
    }
    fn get(&self, ctx: &dyn Ctx) -> Option<Vec<u8>> {
        match self {
            Arg::Const(c) => Some(c.as_bytes().to_vec()),
            Arg::Var(v) => ctx.var(v).map(|s| s.to_bytes()),
        }
    }
}

/// A public key read when the configuration loads: the algorithm's OID
/// and the key (an RSAPublicKey, or an EC point).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicKey {
    alg: Vec<u8>,
    key: Vec<u8>,
}

/// The JWT converters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JwtConv {
    /// `jwt_header_query` (part 0) or `jwt_payload_query` (part 1), with
    /// a path and `int`, or the whole JSON.
    Query {
        part: usize,
        path: Option<Vec<Step>>,
        int: bool,
    },
    /// `jwt_verify(<alg>,<key>)`; the key file's public key when `key`
    /// names one that loaded.
    Verify {
        alg: Arg,
        key: Arg,
        public: Option<Arc<PublicKey>>,
    },
}

/// The JWT converter `name(a)`; `None` for another name. `load` reads
/// the key files of `jwt_verify` (one that does not load is taken as an
/// HMAC secret, as haproxy does).
pub fn parse(
    name: &str,
    a: &[String],
    load: &dyn Fn(&str) -> Result<String, String>,
) -> Option<Result<JwtConv, String>> {
    let part = match name {
        "jwt_header_query" => 0,
        "jwt_payload_query" => 1,
        "jwt_verify" => return Some(verify_args(a, load)),
        _ => return None,
    };
    let path = match a.first().filter(|p| !p.is_empty()) {
        Some(p) => match crate::json::parse_path(p) {
            Ok(steps) => Some(steps),
            Err(e) => return Some(Err(format!("converter '{name}': {e}"))),
        },
        None => None,
    };
    let int = match a.get(1).map(String::as_str) {
        None | Some("") => false,
        Some("int") => true,
        Some(t) => {
            return Some(Err(format!(
                "converter '{name}': unknown output type '{t}' (only 'int')"
            )))
        }
    };
    Some(Ok(JwtConv::Query { part, path, int }))
}

fn verify_args(
    a: &[String],
    load: &dyn Fn(&str) -> Result<String, String>,
) -> Result<JwtConv, String> {
    let [alg, key] = a else {
        return Err("converter 'jwt_verify' expects an algorithm and a key".into());
    };
    let alg = Arg::parse(alg);
    if let Arg::Const(a) = &alg {
        // A constant algorithm is checked now, as haproxy does.
        match verify(b"", a.as_bytes(), b"", None) {
            -1 => return Err(format!("converter 'jwt_verify': unknown JWT algorithm: {a}")),
            -2 => {
                return Err(format!(
                    "converter 'jwt_verify': JWS algorithm '{a}' is not managed (RSASSA-PSS and none, as haproxy 2.6)"
                ))
            }
            _ => {}
        }
    }
    let key = Arg::parse(key);
    let public = match &key {
        Arg::Const(path) => load(path).ok().and_then(|pem| public_key(&pem)),
        Arg::Var(_) => None,
    };
    Ok(JwtConv::Verify {
        alg,
        key,
        public: public.map(Arc::new),
    })
}

/// The public key of a PEM `PUBLIC KEY` or of its first `CERTIFICATE`.
fn public_key(pem: &str) -> Option<PublicKey> {
    let (label, der) = pem_block(pem)?;
    let (alg, key) = match label {
        "PUBLIC KEY" => x509::public_key(&der)?,
        "CERTIFICATE" => x509::parse(&der).map(|c| (c.key_alg, c.key))?,
        _ => return None,
    };
    Some(PublicKey {
        alg: alg.to_vec(),
        key: key.to_vec(),
    })
}

/// The first PEM block: its label and contents.
fn pem_block(pem: &str) -> Option<(&str, Vec<u8>)> {
    let start = pem.find("-----BEGIN ")? + "-----BEGIN ".len();
    let label_end = start + pem.get(start..)?.find("-----")?;
    let label = pem.get(start..label_end)?;
    let body_start = label_end + 5;
    let end = body_start + pem.get(body_start..)?.find("-----END ")?;
    let b64: Vec<u8> = pem
        .get(body_start..end)?
        .bytes()
        .filter(|b| !b.is_ascii_whitespace())
        .collect();
    Some((label, crate::strconv::b64dec(&b64)?))
}

/// base64url without padding; `None` for anything else (a length of 1
/// modulo 4 included).
fn b64url(s: &[u8]) -> Option<Vec<u8>> {
    if s.len() % 4 == 1 {
        return None;
    }
    let std: Vec<u8> = s
        .iter()
        .map(|&c| match c {
            b'-' => Some(b'+'),
            b'_' => Some(b'/'),
            c if c.is_ascii_alphanumeric() => Some(c),
            _ => None,
        })
        .collect::<Option<_>>()?;
    crate::strconv::b64dec(&std)
}

/// Applies a JWT converter to the token `v`.
pub fn apply(c: &JwtConv, v: Sample, ctx: &dyn Ctx) -> Option<Sample> {
    let token = v.to_bytes();
    match c {
        JwtConv::Query { part, path, int } => {
            let b64 = token.split(|&b| b == b'.').nth(*part)?;
            let json = b64url(b64)?;
            match path {
                None => Some(Sample::Str(json)),
                Some(p) => crate::conv::json_value(crate::json::query(&json, p)?, *int),
            }
        }
        JwtConv::Verify { alg, key, public } => {
            let alg = alg.get(ctx)?;
            let key = key.get(ctx)?;
            Some(Sample::Int(verify(&token, &alg, &key, public.as_deref())))
        }
    }
}

/// haproxy's codes: 1 verified, 0 not, -1 unknown algorithm, -2 one
/// haproxy 2.6 does not manage (PS*), -3 invalid token, -5 no key.
pub fn verify(token: &[u8], alg: &[u8], secret: &[u8], public: Option<&PublicKey>) -> i64 {
    let kind = match alg {
        b"HS256" | b"HS384" | b"HS512" => Kind::Hmac,
        b"RS256" | b"RS384" | b"RS512" => Kind::Rsa,
        b"ES256" | b"ES384" | b"ES512" => Kind::Ec,
        b"PS256" | b"PS384" | b"PS512" => return -2,
        b"none" => return -2,
        _ => return -1,
    };
    let parts: Vec<&[u8]> = token.split(|&b| b == b'.').collect();
    let [head, payload, sig] = parts[..] else {
        return -3;
    };
    let Some(sig) = b64url(sig).filter(|s| !s.is_empty()) else {
        return -3;
    };
    let signed = token
        .get(..head.len() + 1 + payload.len())
        .unwrap_or_default();
    let ok = match kind {
        Kind::Hmac => {
            let a = match alg {
                b"HS256" => hmac::HMAC_SHA256,
                b"HS384" => hmac::HMAC_SHA384,
                _ => hmac::HMAC_SHA512,
            };
            hmac::verify(&hmac::Key::new(a, secret), signed, &sig).is_ok()
        }
        Kind::Rsa | Kind::Ec => {
            let Some(pk) = public else {
                return -5;
            };
            let (v, len): (&dyn signature::VerificationAlgorithm, usize) = match alg {
                b"RS256" => (&signature::RSA_PKCS1_2048_8192_SHA256, 0),
                b"RS384" => (&signature::RSA_PKCS1_2048_8192_SHA384, 0),
                b"RS512" => (&signature::RSA_PKCS1_2048_8192_SHA512, 0),
                b"ES256" => (&signature::ECDSA_P256_SHA256_FIXED, 64),
                b"ES384" => (&signature::ECDSA_P384_SHA384_FIXED, 96),
                _ => (&signature::ECDSA_P521_SHA512_FIXED, 132),
            };
            // An ECDSA signature is R and S side by side (RFC 7518 §3.4):
            // one that cannot be cut in halves is not a token, one of
            // another size does not verify (haproxy's codes).
            if len != 0 && sig.len() % 2 == 1 {
                return -3;
            }
            if len != 0 && sig.len() != len {
                return 0;
            }
            signature::UnparsedPublicKey::new(v, &pk.key)
                .verify(signed, &sig)
                .is_ok()
        }
    };
    i64::from(ok)
}

#[derive(Clone, Copy)]
enum Kind {
    Hmac,
    Rsa,
    Ec,
}

/// `http_auth_bearer([<header>])`: the token after `Bearer` in the
/// `Authorization` header (or `header`), blanks skipped.
pub fn bearer(ctx: &dyn Ctx, header: Option<&str>) -> Option<Sample> {
    let name = header.unwrap_or("authorization");
    let hs = ctx.req_headers();
    let (_, v) = hs.iter().find(|(n, _)| n.eq_ignore_ascii_case(name))?;
    let v = v.trim_ascii_start();
    let (scheme, rest) = v.split_at_checked(6)?;
    if !scheme.eq_ignore_ascii_case(b"bearer") || rest.first().is_some_and(|&b| b != b' ') {
        return None;
    }
    Some(Sample::Str(rest.trim_ascii().to_vec()))
}

#[cfg(test)]
#[path = "jwt_tests.rs"]
mod tests;
