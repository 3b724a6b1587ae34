//! OCSP responses from DER (pure, RFC 6960): the fields a stapled
//! response is checked and indexed by (its status, its single responses'
//! certificate IDs and validity), and the text `openssl ocsp -resp_text`
//! prints for one, which the runtime API's `show ssl ocsp-response` gives.

use crate::x509::text::{long_sig_name, serial, time};
use crate::x509::{dotted, spaced, tlv};
use std::fmt::Write;

/// id-pkix-ocsp-basic.
const BASIC: &[u8] = &[0x2b, 0x06, 0x01, 0x05, 0x05, 0x07, 0x30, 0x01, 0x01];
/// id-pkix-ocsp-nonce.
const NONCE: &[u8] = &[0x2b, 0x06, 0x01, 0x05, 0x05, 0x07, 0x30, 0x01, 0x02];

/// A decoded response, borrowed from its DER.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response<'a> {
    /// `responseStatus`: 0 is successful.
    pub status: u8,
    /// The basic response (none unless successful).
    pub basic: Option<Basic<'a>>,
}

/// A BasicOCSPResponse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Basic<'a> {
    pub version: u64,
    pub responder: Responder<'a>,
    pub produced_at: &'a [u8],
    pub responses: Vec<Single<'a>>,
    /// The `responseExtensions`' Extensions contents (empty when none).
    pub extensions: &'a [u8],
    pub sig_alg: &'a [u8],
    /// The signature bits (without the unused-bits byte).
    pub signature: &'a [u8],
    /// The certificates it carries, DER each.
    pub certs: Vec<&'a [u8]>,
}

/// Who signed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Responder<'a> {
    /// A Name's contents.
    Name(&'a [u8]),
    /// The SHA-1 hash of its key.
    Key(&'a [u8]),
}

/// One certificate's status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Single<'a> {
    /// The whole CertID element, as the response's key.
    pub cert_id: &'a [u8],
    pub hash_alg: &'a [u8],
    pub name_hash: &'a [u8],
    pub key_hash: &'a [u8],
    pub serial: &'a [u8],
    pub status: Status<'a>,
    pub this_update: &'a [u8],
    pub next_update: Option<&'a [u8]>,
    pub extensions: &'a [u8],
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status<'a> {
    Good,
    /// When, and the CRL reason code when given.
    Revoked(&'a [u8], Option<u8>),
    Unknown,
}

impl Single<'_> {
    /// The key haproxy indexes responses by: the CertID's DER in
    /// lower-case hex.
    pub fn key(&self) -> String {
        hex(self.cert_id, false, "")
    }
}

/// Decodes a DER OCSPResponse; `None` when it is not one.
pub fn parse(der: &[u8]) -> Option<Response<'_>> {
    let (0x30, resp, _) = tlv(der)? else {
        return None;
    };
    let (0x0a, status, rest) = tlv(resp)? else {
        return None;
    };
    let status = *status.first()?;
    if status != 0 {
        return Some(Response {
            status,
            basic: None,
        });
    }
    let (0xa0, explicit, _) = tlv(rest)? else {
        return None;
    };
    let (0x30, bytes, _) = tlv(explicit)? else {
        return None;
    };
    let (0x06, kind, rest) = tlv(bytes)? else {
        return None;
    };
    let (0x04, basic, _) = tlv(rest)? else {
        return None;
    };
    if kind != BASIC {
        return None;
    }
    Some(Response {
        status,
        basic: Some(parse_basic(basic)?),
    })
}

fn parse_basic(der: &[u8]) -> Option<Basic<'_>> {
    let (0x30, basic, _) = tlv(der)? else {
        return None;
    };
    let (0x30, mut data, rest) = tlv(basic)? else {
        return None;
    };
    let (0x30, alg, rest) = tlv(rest)? else {
        return None;
    };
    let (0x06, sig_alg, _) = tlv(alg)? else {
        return None;
    };
    let (0x03, bits, rest) = tlv(rest)? else {
        return None;
    };
    let mut certs = Vec::new();
    if let Some((0xa0, list, _)) = tlv(rest) {
        let (0x30, mut list, _) = tlv(list)? else {
            return None;
        };
        while !list.is_empty() {
            let (_, _, after) = tlv(list)?;
            certs.push(list.get(..list.len() - after.len())?);
            list = after;
        }
    }
    let mut version = 0;
    if let Some((0xa0, v, after)) = tlv(data) {
        let (0x02, v, _) = tlv(v)? else {
            return None;
        };
        version = v.iter().fold(0u64, |a, &b| (a << 8) | u64::from(b));
        data = after;
    }
    let (responder, rest) = match tlv(data)? {
        (0xa1, name, rest) => {
            let (0x30, name, _) = tlv(name)? else {
                return None;
            };
            (Responder::Name(name), rest)
        }
        (0xa2, key, rest) => {
            let (0x04, key, _) = tlv(key)? else {
                return None;
            };
            (Responder::Key(key), rest)
        }
        _ => return None,
    };
    let (0x18, produced_at, rest) = tlv(rest)? else {
        return None;
    };
    let (0x30, mut list, rest) = tlv(rest)? else {
        return None;
    };
    let mut responses = Vec::new();
    while !list.is_empty() {
        let (0x30, single, after) = tlv(list)? else {
            return None;
        };
        responses.push(parse_single(single)?);
        list = after;
    }
    Some(Basic {
        version,
        responder,
        produced_at,
        responses,
        extensions: extensions(rest, 0xa1)?,
        sig_alg,
        signature: bits.get(1..)?,
        certs,
    })
}

/// The Extensions contents under context tag `tag` at the start of `b`
/// (empty when absent).
fn extensions(b: &[u8], tag: u8) -> Option<&[u8]> {
    match tlv(b) {
        Some((t, exts, _)) if t == tag => {
            let (0x30, exts, _) = tlv(exts)? else {
                return None;
            };
            Some(exts)
        }
        _ => Some(&[]),
    }
}

fn parse_single(der: &[u8]) -> Option<Single<'_>> {
    let (0x30, id, rest) = tlv(der)? else {
        return None;
    };
    let cert_id = der.get(..der.len() - rest.len())?;
    let (0x30, alg, id_rest) = tlv(id)? else {
        return None;
    };
    let (0x06, hash_alg, _) = tlv(alg)? else {
        return None;
    };
    let (0x04, name_hash, id_rest) = tlv(id_rest)? else {
        return None;
    };
    let (0x04, key_hash, id_rest) = tlv(id_rest)? else {
        return None;
    };
    let (0x02, serial, _) = tlv(id_rest)? else {
        return None;
    };
    let (status, rest) = match tlv(rest)? {
        (0x80, _, rest) => (Status::Good, rest),
        (0xa1, info, rest) => {
            let (0x18, when, after) = tlv(info)? else {
                return None;
            };
            let reason = match tlv(after) {
                Some((0xa0, r, _)) => match tlv(r)? {
                    (0x0a, code, _) => code.first().copied(),
                    _ => None,
                },
                _ => None,
            };
            (Status::Revoked(when, reason), rest)
        }
        (0x82, _, rest) => (Status::Unknown, rest),
        _ => return None,
    };
    let (0x18, this_update, mut rest) = tlv(rest)? else {
        return None;
    };
    let mut next_update = None;
    if let Some((0xa0, next, after)) = tlv(rest) {
        let (0x18, next, _) = tlv(next)? else {
            return None;
        };
        next_update = Some(next);
        rest = after;
    }
    Some(Single {
        cert_id,
        hash_alg,
        name_hash,
        key_hash,
        serial,
        status,
        this_update,
        next_update,
        extensions: extensions(rest, 0xa1)?,
    })
}

/// A response given in base64 (lines of it, as `openssl base64` writes
/// them).
pub fn from_base64(text: &str) -> Option<Vec<u8>> {
    let clean: Vec<u8> = text.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    if clean.is_empty() {
        return None;
    }
    crate::strconv::b64dec(&clean)
}

/// Bytes in hex, upper-case when `upper`, `sep` between them.
fn hex(b: &[u8], upper: bool, sep: &str) -> String {
    b.iter()
        .map(|x| {
            if upper {
                format!("{x:02X}")
            } else {
                format!("{x:02x}")
            }
        })
        .collect::<Vec<_>>()
        .join(sep)
}

fn status_name(s: u8) -> &'static str {
    match s {
        0 => "successful",
        1 => "malformedrequest",
        2 => "internalerror",
        3 => "trylater",
        5 => "sigrequired",
        6 => "unauthorized",
        _ => "(UNKNOWN)",
    }
}

fn reason_name(r: u8) -> &'static str {
    match r {
        0 => "unspecified",
        1 => "keyCompromise",
        2 => "cACompromise",
        3 => "affiliationChanged",
        4 => "superseded",
        5 => "cessationOfOperation",
        6 => "certificateHold",
        8 => "removeFromCRL",
        _ => "(UNKNOWN)",
    }
}

fn hash_name(oid: &[u8]) -> String {
    match oid {
        [0x2b, 0x0e, 0x03, 0x02, 0x1a] => "sha1".into(),
        [0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, n] => match n {
            1 => "sha256".into(),
            2 => "sha384".into(),
            3 => "sha512".into(),
            4 => "sha224".into(),
            _ => dotted(oid),
        },
        _ => dotted(oid),
    }
}

/// The lines of a certificate ID: hash (unless `brief`), issuer hashes,
/// serial, each after `indent`.
pub fn cert_id_lines(s: &Single<'_>, indent: &str, brief: bool) -> String {
    let mut out = String::new();
    if !brief {
        let _ = writeln!(out, "{indent}Hash Algorithm: {}", hash_name(s.hash_alg));
    }
    let _ = writeln!(
        out,
        "{indent}Issuer Name Hash: {}",
        hex(s.name_hash, true, "")
    );
    let _ = writeln!(
        out,
        "{indent}Issuer Key Hash: {}",
        hex(s.key_hash, true, "")
    );
    let _ = writeln!(out, "{indent}Serial Number: {}", serial(s.serial));
    out
}

/// Extensions as OpenSSL lists them: the nonce's value in hex, others by
/// OID with their value in hex.
fn extension_lines(out: &mut String, title: &str, exts: &[u8], indent: usize) {
    if exts.is_empty() {
        return;
    }
    let pad = " ".repeat(indent);
    let _ = writeln!(out, "{pad}{title}:");
    let mut rest = exts;
    while let Some((0x30, ext, after)) = tlv(rest) {
        rest = after;
        let Some((0x06, oid, mut v)) = tlv(ext) else {
            continue;
        };
        let mut critical = "";
        if let Some((0x01, c, after)) = tlv(v) {
            critical = if c.first().is_some_and(|&c| c != 0) {
                "critical"
            } else {
                ""
            };
            v = after;
        }
        let Some((0x04, value, _)) = tlv(v) else {
            continue;
        };
        let name = if oid == NONCE {
            "OCSP Nonce".to_string()
        } else {
            dotted(oid)
        };
        let _ = writeln!(out, "{pad}    {name}: {critical}");
        let _ = writeln!(out, "{pad}        {}", hex(value, true, ""));
    }
}

/// The text `openssl ocsp -resp_text` prints for a response; the
/// certificates it carries follow in weir's short form (`show ssl cert`'s
/// fields), not OpenSSL's full dump.
pub fn text(r: &Response<'_>) -> String {
    let mut out = String::from("OCSP Response Data:\n");
    let _ = writeln!(
        out,
        "    OCSP Response Status: {} (0x{:x})",
        status_name(r.status),
        r.status
    );
    let Some(b) = &r.basic else {
        return out;
    };
    out.push_str("    Response Type: Basic OCSP Response\n");
    let _ = writeln!(out, "    Version: {} (0x{:x})", b.version + 1, b.version);
    let _ = match b.responder {
        Responder::Name(n) => writeln!(out, "    Responder Id: {}", spaced(n)),
        Responder::Key(k) => writeln!(out, "    Responder Id: {}", hex(k, true, "")),
    };
    let _ = writeln!(out, "    Produced At: {}", time(b.produced_at));
    out.push_str("    Responses:\n");
    for s in &b.responses {
        out.push_str("    Certificate ID:\n");
        out.push_str(&cert_id_lines(s, "      ", false));
        match &s.status {
            Status::Good => out.push_str("    Cert Status: good\n"),
            Status::Unknown => out.push_str("    Cert Status: unknown\n"),
            Status::Revoked(when, reason) => {
                out.push_str("    Cert Status: revoked\n");
                let _ = writeln!(out, "    Revocation Time: {}", time(when));
                if let Some(r) = reason {
                    let _ = writeln!(out, "    Revocation Reason: {} (0x{r:x})", reason_name(*r));
                }
            }
        }
        let _ = writeln!(out, "    This Update: {}", time(s.this_update));
        if let Some(n) = s.next_update {
            let _ = writeln!(out, "    Next Update: {}", time(n));
        }
        extension_lines(&mut out, "Response Single Extensions", s.extensions, 8);
        out.push('\n');
    }
    extension_lines(&mut out, "Response Extensions", b.extensions, 4);
    let _ = writeln!(out, "    Signature Algorithm: {}", long_sig_name(b.sig_alg));
    out.push_str("    Signature Value:\n");
    let rows: Vec<String> = b.signature.chunks(18).map(|c| hex(c, false, ":")).collect();
    let _ = writeln!(out, "        {}", rows.join(":\n        "));
    for c in &b.certs {
        out.push_str("Certificate:\n");
        out.push_str(&crate::x509::text::cert(c).unwrap_or_default());
    }
    out
}

/// Checks a response before it is stapled, as haproxy does: successful,
/// basic, with a single response still valid at `now` (seconds since the
/// epoch). The reason in haproxy's words otherwise.
pub fn check(r: &Response<'_>, now: u64) -> Result<(), &'static str> {
    if r.status != 0 {
        return Err("OCSP response status not successful");
    }
    let Some(b) = &r.basic else {
        return Err("Failed to get basic response from OCSP Response");
    };
    let Some(s) = b.responses.first() else {
        return Err("OCSP response contains no single response");
    };
    if s.next_update
        .and_then(crate::x509::time_secs)
        .is_some_and(|n| n < now)
    {
        return Err("OCSP single response: no longer valid.");
    }
    Ok(())
}

#[cfg(test)]
#[path = "ocsp_tests.rs"]
mod tests;
