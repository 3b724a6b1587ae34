//! DER for a certificate made at handshake time (`generate-certificates`):
//! a leaf for one server name, issued by a CA whose Name is copied, with
//! the key of the bind line's default certificate (pure; the signature is
//! the caller's).

use super::tlv;

/// What a forged leaf is made of.
#[derive(Debug, Clone)]
pub struct Leaf<'a> {
    /// The server name it serves (subject CN and subjectAltName).
    pub name: &'a str,
    /// The serial number's content bytes (positive: top bit clear).
    pub serial: &'a [u8],
    /// The signature AlgorithmIdentifier, whole (tag and length too).
    pub sig_alg: &'a [u8],
    /// The CA certificate's subject Name, whole.
    pub issuer: &'a [u8],
    /// Seconds since the epoch.
    pub not_before: i64,
    pub not_after: i64,
    /// The SubjectPublicKeyInfo, whole.
    pub spki: &'a [u8],
    /// The SHA-1 of the leaf's and the CA's public keys (subject and
    /// authority key identifiers).
    pub key_id: &'a [u8],
    pub ca_key_id: Option<&'a [u8]>,
}

/// One DER element.
fn der(tag: u8, content: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    let n = content.len();
    if n < 0x80 {
        out.push(n as u8);
    } else {
        let bytes = n.to_be_bytes();
        let digits: Vec<u8> = bytes.iter().copied().skip_while(|b| *b == 0).collect();
        out.push(0x80 | digits.len() as u8);
        out.extend_from_slice(&digits);
    }
    out.extend_from_slice(content);
    out
}

fn seq(parts: &[&[u8]]) -> Vec<u8> {
    der(0x30, &parts.concat())
}

const OID_CN: [u8; 3] = [0x55, 0x04, 0x03];

/// The subject: the CA's Name with one more RDN, `CN=<name>`, after its
/// own (so a `*_s_dn(CN)` reads the CA's first, as HAProxy's leaves do).
fn subject(issuer: &[u8], name: &str) -> Option<Vec<u8>> {
    let (0x30, rdns, _) = tlv(issuer)? else {
        return None;
    };
    let cn = seq(&[&der(0x06, &OID_CN), &der(0x0c, name.as_bytes())]);
    let rdn = der(0x31, &cn);
    Some(der(0x30, &[rdns, &rdn].concat()))
}

/// A time as X.509 writes it: UTCTime to 2049, GeneralizedTime after.
fn time(secs: i64) -> Vec<u8> {
    let (y, m, d) = crate::textconv::civil_from_days(secs.div_euclid(86_400));
    let rem = secs.rem_euclid(86_400);
    let hms = format!("{:02}{:02}{:02}Z", rem / 3600, rem % 3600 / 60, rem % 60);
    if (1950..2050).contains(&y) {
        der(0x17, format!("{:02}{m:02}{d:02}{hms}", y % 100).as_bytes())
    } else {
        der(0x18, format!("{y:04}{m:02}{d:02}{hms}").as_bytes())
    }
}

/// One extension: its OID, criticality and value.
fn ext(oid: &[u8], critical: bool, value: &[u8]) -> Vec<u8> {
    let crit = if critical {
        der(0x01, &[0xff])
    } else {
        Vec::new()
    };
    seq(&[&der(0x06, oid), &crit, &der(0x04, value)])
}

fn extensions(l: &Leaf<'_>) -> Vec<u8> {
    // basicConstraints CA:FALSE: an empty sequence.
    let bc = ext(&[0x55, 0x1d, 0x13], true, &seq(&[]));
    // keyUsage digitalSignature, nonRepudiation, keyEncipherment.
    let ku = ext(&[0x55, 0x1d, 0x0f], true, &der(0x03, &[0x05, 0xe0]));
    let san = ext(
        &[0x55, 0x1d, 0x11],
        false,
        &seq(&[&der(0x82, l.name.as_bytes())]),
    );
    let ski = ext(&[0x55, 0x1d, 0x0e], false, &der(0x04, l.key_id));
    let aki = l
        .ca_key_id
        .map(|k| ext(&[0x55, 0x1d, 0x23], false, &seq(&[&der(0x80, k)])))
        .unwrap_or_default();
    der(0xa3, &seq(&[&bc, &ku, &san, &ski, &aki]))
}

/// The TBSCertificate of a leaf, whole; `None` when the issuer is not a
/// Name.
pub fn tbs(l: &Leaf<'_>) -> Option<Vec<u8>> {
    let version = der(0xa0, &der(0x02, &[2]));
    let validity = seq(&[&time(l.not_before), &time(l.not_after)]);
    Some(seq(&[
        &version,
        &der(0x02, l.serial),
        l.sig_alg,
        l.issuer,
        &validity,
        &subject(l.issuer, l.name)?,
        l.spki,
        &extensions(l),
    ]))
}

/// The certificate: the TBS, its algorithm and its signature.
pub fn certificate(tbs: &[u8], sig_alg: &[u8], sig: &[u8]) -> Vec<u8> {
    let bits = [&[0u8][..], sig].concat();
    seq(&[tbs, sig_alg, &der(0x03, &bits)])
}

/// The AlgorithmIdentifier of a signature scheme by its name as rustls
/// spells it (`ECDSA_NISTP256_SHA256`); `None` for one weir does not
/// sign certificates with.
pub fn sig_alg_der(scheme: &str) -> Option<Vec<u8>> {
    const ECDSA: [u8; 7] = [0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03];
    const RSA: [u8; 8] = [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01];
    let null = der(0x05, &[]);
    let (oid, params): (Vec<u8>, &[u8]) = match scheme {
        "ECDSA_NISTP256_SHA256" => ([&ECDSA[..], &[0x02]].concat(), &[]),
        "ECDSA_NISTP384_SHA384" => ([&ECDSA[..], &[0x03]].concat(), &[]),
        "ECDSA_NISTP521_SHA512" => ([&ECDSA[..], &[0x04]].concat(), &[]),
        "RSA_PKCS1_SHA256" => ([&RSA[..], &[0x0b]].concat(), &null),
        "RSA_PKCS1_SHA384" => ([&RSA[..], &[0x0c]].concat(), &null),
        "RSA_PKCS1_SHA512" => ([&RSA[..], &[0x0d]].concat(), &null),
        "ED25519" => (vec![0x2b, 0x65, 0x70], &[]),
        _ => return None,
    };
    Some(seq(&[&der(0x06, &oid), params]))
}

/// A certificate's subjectKeyIdentifier, if it has one.
pub fn key_id(cert_der: &[u8]) -> Option<Vec<u8>> {
    let value = super::extension(cert_der, &[0x55, 0x1d, 0x0e])?;
    match tlv(value)? {
        (0x04, id, _) => Some(id.to_vec()),
        _ => None,
    }
}

/// The whole subject Name of a certificate (tag and length too).
pub fn subject_der(cert_der: &[u8]) -> Option<&[u8]> {
    let (_, cert, _) = tlv(cert_der)?;
    let (_, mut tbs, _) = tlv(cert)?;
    if tbs.first() == Some(&0xa0) {
        tbs = tlv(tbs)?.2;
    }
    // serial, signature, issuer, validity: then the subject.
    for _ in 0..4 {
        tbs = tlv(tbs)?.2;
    }
    let (0x30, _, rest) = tlv(tbs)? else {
        return None;
    };
    tbs.get(..tbs.len() - rest.len())
}

#[cfg(test)]
#[path = "x509_forge_tests.rs"]
mod tests;
