//! X.509 certificates from DER (pure): the fields the `ssl_c_*`,
//! `ssl_f_*` and `ssl_s_*` fetches give (version, serial, algorithms,
//! validity), and distinguished names in the `/C=FR/O=x/CN=y` form
//! HAProxy's `*_s_dn` and `*_i_dn` give.

/// One DER element: (tag, contents, rest). `None` on malformed input.
pub(crate) fn tlv(b: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, b) = b.split_first()?;
    let (&l0, mut b) = b.split_first()?;
    let len = if l0 < 0x80 {
        usize::from(l0)
    } else {
        let n = usize::from(l0 & 0x7f);
        if n == 0 || n > 3 {
            return None;
        }
        let (digits, rest) = b.split_at_checked(n)?;
        b = rest;
        digits
            .iter()
            .fold(0usize, |len, &x| (len << 8) | usize::from(x))
    };
    let (contents, rest) = b.split_at_checked(len)?;
    Some((tag, contents, rest))
}

fn oid_name(oid: &[u8]) -> String {
    match oid {
        [0x55, 0x04, 0x03] => "CN".into(),
        [0x55, 0x04, 0x06] => "C".into(),
        [0x55, 0x04, 0x07] => "L".into(),
        [0x55, 0x04, 0x08] => "ST".into(),
        [0x55, 0x04, 0x0a] => "O".into(),
        [0x55, 0x04, 0x0b] => "OU".into(),
        [0x55, 0x04, 0x05] => "serialNumber".into(),
        [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x09, 0x01] => "emailAddress".into(),
        [0x09, 0x92, 0x26, 0x89, 0x93, 0xf2, 0x2c, 0x64, 0x01, 0x19] => "DC".into(),
        _ => dotted(oid),
    }
}

pub(crate) fn dotted(oid: &[u8]) -> String {
    let mut parts: Vec<u64> = Vec::new();
    let mut v = 0u64;
    for &b in oid {
        v = (v << 7) | u64::from(b & 0x7f);
        if b & 0x80 == 0 {
            if parts.is_empty() {
                let first = (v / 40).min(2);
                parts.push(first);
                parts.push(v - first * 40);
            } else {
                parts.push(v);
            }
            v = 0;
        }
    }
    parts
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(".")
}

/// The attributes of a Name's contents (the SEQUENCE's inside), in order.
fn attributes(mut name: &[u8]) -> Option<Vec<(String, String)>> {
    let mut out = Vec::new();
    while !name.is_empty() {
        let (tag, set, rest) = tlv(name)?;
        if tag != 0x31 {
            return None;
        }
        name = rest;
        let mut set = set;
        while !set.is_empty() {
            let (tag, atv, rest) = tlv(set)?;
            if tag != 0x30 {
                return None;
            }
            set = rest;
            let (otag, oid, after) = tlv(atv)?;
            if otag != 0x06 {
                return None;
            }
            let (_, value, _) = tlv(after)?;
            out.push((oid_name(oid), String::from_utf8_lossy(value).into_owned()));
        }
    }
    Some(out)
}

/// `C = FR, O = Org, CN = name` from a Name's contents (OpenSSL's
/// `XN_FLAG_ONELINE`).
pub fn spaced(name: &[u8]) -> String {
    attributes(name)
        .unwrap_or_default()
        .iter()
        .map(|(k, v)| format!("{k} = {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `/C=FR/O=Org/CN=name` from a Name's contents.
pub fn oneline(name: &[u8]) -> String {
    attributes(name)
        .unwrap_or_default()
        .iter()
        .map(|(k, v)| format!("/{k}={v}"))
        .collect()
}

/// The value of `entry` (`CN`, `OU`…, or a dotted OID), its `occ`th from
/// the start of the Name, or from its end when negative.
pub fn entry(name: &[u8], entry: &str, occ: i64) -> Option<String> {
    let attrs = attributes(name)?;
    let mut hits = attrs
        .into_iter()
        .filter(|(k, _)| k.eq_ignore_ascii_case(entry))
        .map(|(_, v)| v);
    let n = usize::try_from(occ.unsigned_abs()).ok()?.checked_sub(1)?;
    if occ > 0 {
        hits.nth(n)
    } else {
        hits.rev().nth(n)
    }
}

/// RFC 2253's form of a Name: the last attribute first, `,` between, the
/// special characters escaped (OpenSSL's `XN_FLAG_RFC2253`).
pub fn rfc2253(name: &[u8]) -> String {
    let esc = |v: &str| {
        let mut out = String::with_capacity(v.len());
        for (i, ch) in v.chars().enumerate() {
            let edge = (i == 0 && (ch == ' ' || ch == '#')) || (i + 1 == v.len() && ch == ' ');
            if edge || ",+\"<>;\\".contains(ch) {
                out.push('\\');
            }
            out.push(ch);
        }
        out
    };
    attributes(name)
        .unwrap_or_default()
        .iter()
        .rev()
        .map(|(k, v)| format!("{k}={}", esc(v)))
        .collect::<Vec<_>>()
        .join(",")
}

/// The last CN of a Name's contents.
pub fn common_name(name: &[u8]) -> Option<String> {
    attributes(name)?
        .into_iter()
        .rev()
        .find(|(k, _)| k == "CN")
        .map(|(_, v)| v)
}

/// The first CN of a Name's contents (what a PROXY header's `ssl` TLV
/// carries).
pub fn first_common_name(name: &[u8]) -> Option<String> {
    attributes(name)?
        .into_iter()
        .find(|(k, _)| k == "CN")
        .map(|(_, v)| v)
}

/// The fields of a certificate the fetches read, borrowed from its DER.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cert<'a> {
    /// 1 to 3 (an absent version field is 1).
    pub version: i64,
    /// The serial number's content bytes.
    pub serial: &'a [u8],
    /// The signature algorithm's OID.
    pub sig_alg: &'a [u8],
    /// The issuer's and subject's Name contents.
    pub issuer: &'a [u8],
    pub subject: &'a [u8],
    /// The validity's times as written (`YYMMDDhhmmssZ` or generalized).
    pub not_before: &'a [u8],
    pub not_after: &'a [u8],
    /// The public key's algorithm OID.
    pub key_alg: &'a [u8],
    /// The public key itself (an RSAPublicKey, or an EC point).
    pub key: &'a [u8],
}

/// The fields of a DER certificate; `None` when it is not one.
pub fn parse(der: &[u8]) -> Option<Cert<'_>> {
    let (0x30, cert, _) = tlv(der)? else {
        return None;
    };
    let (0x30, mut tbs, _) = tlv(cert)? else {
        return None;
    };
    let mut version = 1;
    if tbs.first() == Some(&0xa0) {
        let (_, v, rest) = tlv(tbs)?;
        let (0x02, n, _) = tlv(v)? else {
            return None;
        };
        version = n.iter().fold(0i64, |a, &b| (a << 8) | i64::from(b)) + 1;
        tbs = rest;
    }
    let (0x02, serial, rest) = tlv(tbs)? else {
        return None;
    };
    let (0x30, sig, rest) = tlv(rest)? else {
        return None;
    };
    let (0x06, sig_alg, _) = tlv(sig)? else {
        return None;
    };
    let (0x30, issuer, rest) = tlv(rest)? else {
        return None;
    };
    let (0x30, validity, rest) = tlv(rest)? else {
        return None;
    };
    let (_, not_before, after) = tlv(validity)?;
    let (_, not_after, _) = tlv(after)?;
    let (0x30, subject, rest) = tlv(rest)? else {
        return None;
    };
    let (0x30, spki, _) = tlv(rest)? else {
        return None;
    };
    let (key_alg, key) = key_of(spki)?;
    Some(Cert {
        version,
        serial,
        sig_alg,
        issuer,
        subject,
        not_before,
        not_after,
        key_alg,
        key,
    })
}

/// A SubjectPublicKeyInfo's contents: the algorithm's OID and the key.
fn key_of(spki: &[u8]) -> Option<(&[u8], &[u8])> {
    let (0x30, alg, rest) = tlv(spki)? else {
        return None;
    };
    let (0x06, key_alg, _) = tlv(alg)? else {
        return None;
    };
    let (0x03, bits, _) = tlv(rest)? else {
        return None;
    };
    let (&0, key) = bits.split_first()? else {
        return None;
    };
    Some((key_alg, key))
}

/// The three parts of a signed DER object (a certificate or a CRL): the
/// signed data whole (tag and length too), the signature algorithm's
/// contents, and the signature's bytes.
pub fn signed_parts(der: &[u8]) -> Option<(&[u8], &[u8], &[u8])> {
    let (0x30, outer, _) = tlv(der)? else {
        return None;
    };
    let (0x30, _, after_tbs) = tlv(outer)? else {
        return None;
    };
    let tbs = outer.get(..outer.len() - after_tbs.len())?;
    let (0x30, alg, rest) = tlv(after_tbs)? else {
        return None;
    };
    let (0x03, bits, _) = tlv(rest)? else {
        return None;
    };
    let (&0, sig) = bits.split_first()? else {
        return None;
    };
    Some((tbs, alg, sig))
}

/// Whether a certificate's basicConstraints make it a CA (`None` without
/// the extension, as in an X.509 v1 certificate).
pub fn is_ca(der: &[u8]) -> Option<bool> {
    let value = extension(der, &[0x55, 0x1d, 0x13])?;
    let (_, bc, _) = tlv(value)?;
    Some(matches!(tlv(bc), Some((0x01, [b], _)) if *b != 0))
}

/// The value (the OCTET STRING's contents) of a certificate's extension.
pub(crate) fn extension<'a>(der: &'a [u8], wanted: &[u8]) -> Option<&'a [u8]> {
    let mut tbs = tlv(from_spki(der)?)?.2;
    while let Some((tag, v, rest)) = tlv(tbs) {
        tbs = rest;
        if tag != 0xa3 {
            continue;
        }
        let (_, mut exts, _) = tlv(v)?;
        while let Some((_, ext, after)) = tlv(exts) {
            exts = after;
            let (0x06, oid, mut val) = tlv(ext)? else {
                continue;
            };
            if oid != wanted {
                continue;
            }
            if let Some((0x01, _, after)) = tlv(val) {
                val = after;
            }
            return tlv(val).map(|(_, octets, _)| octets);
        }
    }
    None
}

/// A revocation list's issuer (Name contents) and revoked serials.
pub fn crl_entries(der: &[u8]) -> Option<(&[u8], Vec<&[u8]>)> {
    let (_, list, _) = tlv(der)?;
    let (_, mut tbs, _) = tlv(list)?;
    if let Some((0x02, _, rest)) = tlv(tbs) {
        tbs = rest;
    }
    let (_, _, rest) = tlv(tbs)?;
    let (0x30, issuer, rest) = tlv(rest)? else {
        return None;
    };
    let (_, _, mut rest) = tlv(rest)?;
    if let Some((0x17 | 0x18, _, after)) = tlv(rest) {
        rest = after;
    }
    let mut serials = Vec::new();
    if let Some((0x30, mut revoked, _)) = tlv(rest) {
        while let Some((_, entry, after)) = tlv(revoked) {
            revoked = after;
            serials.push(tlv(entry)?.1);
        }
    }
    Some((issuer, serials))
}

/// A UTCTime or GeneralizedTime as seconds since the epoch.
pub fn time_secs(t: &[u8]) -> Option<u64> {
    let s = std::str::from_utf8(t).ok()?.strip_suffix('Z')?;
    let (year, rest) = match s.len() {
        12 => {
            let yy: i64 = s.get(..2)?.parse().ok()?;
            (if yy >= 50 { 1900 + yy } else { 2000 + yy }, s.get(2..)?)
        }
        14 => (s.get(..4)?.parse().ok()?, s.get(4..)?),
        _ => return None,
    };
    let n = |i: usize| rest.get(i..i + 2).and_then(|x| x.parse::<i64>().ok());
    let (mo, d, h, mi, sec) = (n(0)?, n(2)?, n(4)?, n(6)?, n(8)?);
    // Days from the civil date (proleptic Gregorian).
    let (y, m) = if mo <= 2 {
        (year - 1, mo + 9)
    } else {
        (year, mo - 3)
    };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * m + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    u64::try_from(days * 86_400 + h * 3600 + mi * 60 + sec).ok()
}

/// A certificate's TBS fields from its SubjectPublicKeyInfo on (past the
/// version, serial, signature, issuer, validity and subject).
fn from_spki(der: &[u8]) -> Option<&[u8]> {
    let (_, cert, _) = tlv(der)?;
    let (_, mut tbs, _) = tlv(cert)?;
    if tbs.first() == Some(&0xa0) {
        tbs = tlv(tbs)?.2;
    }
    for _ in 0..5 {
        tbs = tlv(tbs)?.2;
    }
    Some(tbs)
}

/// A certificate's SubjectPublicKeyInfo, whole (tag and length too).
pub fn spki_der(der: &[u8]) -> Option<&[u8]> {
    let tbs = from_spki(der)?;
    let (0x30, _, rest) = tlv(tbs)? else {
        return None;
    };
    tbs.get(..tbs.len() - rest.len())
}

/// The algorithm OID and key of a DER SubjectPublicKeyInfo (a PEM
/// `PUBLIC KEY`).
pub fn public_key(der: &[u8]) -> Option<(&[u8], &[u8])> {
    let (0x30, spki, _) = tlv(der)? else {
        return None;
    };
    key_of(spki)
}

/// A signature algorithm's name as OpenSSL shortens it (`RSA-SHA256`).
pub fn sig_alg_name(oid: &[u8]) -> String {
    const RSA: [u8; 8] = [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01];
    const ECDSA: [u8; 6] = [0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04];
    let name = match oid {
        [rsa @ .., last] if rsa == RSA => match last {
            0x04 => "RSA-MD5",
            0x05 => "RSA-SHA1",
            0x0a => "RSASSA-PSS",
            0x0b => "RSA-SHA256",
            0x0c => "RSA-SHA384",
            0x0d => "RSA-SHA512",
            0x0e => "RSA-SHA224",
            _ => return dotted(oid),
        },
        [ec @ .., 0x01] if ec == ECDSA => "ecdsa-with-SHA1",
        [ec @ .., 0x03, n] if ec == ECDSA => match n {
            0x01 => "ecdsa-with-SHA224",
            0x02 => "ecdsa-with-SHA256",
            0x03 => "ecdsa-with-SHA384",
            0x04 => "ecdsa-with-SHA512",
            _ => return dotted(oid),
        },
        [0x2b, 0x65, 0x70] => "ED25519",
        [0x2b, 0x65, 0x71] => "ED448",
        _ => return dotted(oid),
    };
    name.to_string()
}

/// A public key algorithm's name as OpenSSL shortens it
/// (`rsaEncryption`, `id-ecPublicKey`).
pub fn key_alg_name(oid: &[u8]) -> String {
    match oid {
        [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01] => "rsaEncryption".into(),
        [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x0a] => "RSASSA-PSS".into(),
        [0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01] => "id-ecPublicKey".into(),
        [0x2b, 0x65, 0x70] => "ED25519".into(),
        [0x2b, 0x65, 0x71] => "ED448".into(),
        _ => dotted(oid),
    }
}

#[path = "x509_text.rs"]
pub mod text;

#[path = "x509_forge.rs"]
pub mod forge;

#[cfg(test)]
#[path = "x509_tests.rs"]
mod tests;

/// The test certificate of `x509_tests.rs`, for other modules' tests.
#[cfg(test)]
pub(crate) fn tests_cert_b64() -> &'static [u8] {
    tests::CERT_B64
}
