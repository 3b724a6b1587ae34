//! Certificates and revocation lists as the runtime API's `show ssl
//! cert|ca-file|crl-file` print them (HAProxy 2.6's text: OpenSSL's dates,
//! hex serials, one-line names).

use super::{oneline, parse, tlv};

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// A UTCTime or GeneralizedTime as OpenSSL prints it:
/// `Jan  7 23:02:38 2016 GMT`.
pub fn time(t: &[u8]) -> String {
    let s = String::from_utf8_lossy(t);
    let digits: String = s.chars().take_while(char::is_ascii_digit).collect();
    let (year, rest) = match digits.len() {
        12 => {
            let yy: u32 = digits[..2].parse().unwrap_or(0);
            (if yy >= 50 { 1900 + yy } else { 2000 + yy }, &digits[2..])
        }
        14 => (digits[..4].parse().unwrap_or(0), &digits[4..]),
        _ => return s.into_owned(),
    };
    let n = |i: usize| rest.get(i..i + 2).and_then(|x| x.parse::<usize>().ok());
    let (Some(mo), Some(d), Some(h), Some(mi), Some(sec)) = (n(0), n(2), n(4), n(6), n(8)) else {
        return s.into_owned();
    };
    let month = MONTHS.get(mo.wrapping_sub(1)).copied().unwrap_or("???");
    format!("{month} {d:>2} {h:02}:{mi:02}:{sec:02} {year} GMT")
}

/// A serial number in upper-case hex, without its sign byte.
pub fn serial(b: &[u8]) -> String {
    let b = match b {
        [0, rest @ ..] if !rest.is_empty() => rest,
        _ => b,
    };
    b.iter().map(|x| format!("{x:02X}")).collect()
}

/// The subjectAltName entries: `DNS:a, IP Address:1.2.3.4`.
fn san(exts: &[u8]) -> String {
    let mut out = Vec::new();
    let mut rest = exts;
    while let Some((0x30, ext, after)) = tlv(rest) {
        rest = after;
        let Some((0x06, oid, mut v)) = tlv(ext) else {
            continue;
        };
        if oid != [0x55, 0x1d, 0x11] {
            continue;
        }
        if let Some((0x01, _, after)) = tlv(v) {
            v = after;
        }
        let Some((0x04, octets, _)) = tlv(v) else {
            continue;
        };
        let Some((0x30, mut names, _)) = tlv(octets) else {
            continue;
        };
        while let Some((tag, val, after)) = tlv(names) {
            names = after;
            let text = String::from_utf8_lossy(val);
            out.push(match tag {
                0x82 => format!("DNS:{text}"),
                0x81 => format!("email:{text}"),
                0x86 => format!("URI:{text}"),
                0x87 => match <[u8; 4]>::try_from(val) {
                    Ok(v4) => format!("IP Address:{}", std::net::Ipv4Addr::from(v4)),
                    Err(_) => match <[u8; 16]>::try_from(val) {
                        Ok(v6) => format!("IP Address:{}", std::net::Ipv6Addr::from(v6)),
                        Err(_) => continue,
                    },
                },
                _ => continue,
            });
        }
    }
    out.join(", ")
}

/// The key as HAProxy names it: `RSA2048`, `EC256`, `EC384`.
fn algorithm(spki: &[u8]) -> String {
    let Some((0x30, alg, rest)) = tlv(spki) else {
        return String::new();
    };
    let Some((0x06, oid, params)) = tlv(alg) else {
        return String::new();
    };
    match oid {
        [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01] => {
            let bits = tlv(rest)
                .and_then(|(_, bits, _)| bits.split_first())
                .and_then(|(_, key)| tlv(key))
                .and_then(|(_, seq, _)| tlv(seq))
                .map_or(0, |(_, modulus, _)| {
                    let m = match modulus {
                        [0, r @ ..] => r,
                        m => m,
                    };
                    m.first()
                        .map_or(0, |f| m.len() * 8 - f.leading_zeros() as usize)
                });
            format!("RSA{bits}")
        }
        [0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01] => {
            let size = match tlv(params) {
                Some((0x06, [0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07], _)) => "256",
                Some((0x06, [0x2b, 0x81, 0x04, 0x00, 0x22], _)) => "384",
                Some((0x06, [0x2b, 0x81, 0x04, 0x00, 0x23], _)) => "521",
                _ => "",
            };
            format!("EC{size}")
        }
        other => super::key_alg_name(other),
    }
}

/// The SubjectPublicKeyInfo and extensions of a certificate's DER.
fn spki_and_exts(der: &[u8]) -> Option<(&[u8], &[u8])> {
    let (0x30, spki, mut rest) = tlv(super::from_spki(der)?)? else {
        return None;
    };
    let mut exts: &[u8] = &[];
    while let Some((tag, v, after)) = tlv(rest) {
        rest = after;
        if tag == 0xa3 {
            exts = tlv(v).map_or(&[][..], |(_, e, _)| e);
        }
    }
    Some((spki, exts))
}

/// The key of a DER certificate as HAProxy names it (`EC256`).
pub fn key_algorithm(der: &[u8]) -> Option<String> {
    spki_and_exts(der).map(|(spki, _)| algorithm(spki))
}

/// `Serial:` to `Issuer:` for one certificate.
pub fn cert(der: &[u8]) -> Option<String> {
    let c = parse(der)?;
    let (spki, exts) = spki_and_exts(der)?;
    let sha1 = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA1_FOR_LEGACY_USE_ONLY, der);
    let fp: String = sha1.as_ref().iter().map(|x| format!("{x:02X}")).collect();
    Some(format!(
        "Serial: {}\nnotBefore: {}\nnotAfter: {}\nSubject Alternative Name: {}\nAlgorithm: {}\nSHA1 FingerPrint: {fp}\nSubject: {}\nIssuer: {}\n",
        serial(c.serial),
        time(c.not_before),
        time(c.not_after),
        san(exts),
        algorithm(spki),
        oneline(c.subject),
        oneline(c.issuer),
    ))
}

/// `Chain Subject:` and `Chain Issuer:` for a certificate of a chain.
pub fn chain(der: &[u8]) -> String {
    match parse(der) {
        Some(c) => format!(
            "Chain Subject: {}\nChain Issuer: {}\n",
            oneline(c.subject),
            oneline(c.issuer)
        ),
        None => String::new(),
    }
}

/// A revocation list as OpenSSL prints it (version, algorithm, issuer,
/// updates, revoked serials and dates).
pub fn crl(der: &[u8]) -> Option<String> {
    let (0x30, list, _) = tlv(der)? else {
        return None;
    };
    let (0x30, mut tbs, _) = tlv(list)? else {
        return None;
    };
    let mut version = 1;
    if let Some((0x02, v, rest)) = tlv(tbs) {
        version = v.iter().fold(0i64, |a, &b| (a << 8) | i64::from(b)) + 1;
        tbs = rest;
    }
    let (0x30, sig, rest) = tlv(tbs)? else {
        return None;
    };
    let (0x06, sig_oid, _) = tlv(sig)? else {
        return None;
    };
    let (0x30, issuer, rest) = tlv(rest)? else {
        return None;
    };
    let (_, this_update, mut rest) = tlv(rest)?;
    let mut out = format!(
        "Version {version}\nSignature Algorithm: {}\nIssuer: {}\nLast Update: {}\n",
        long_sig_name(sig_oid),
        oneline(issuer),
        time(this_update)
    );
    if let Some((0x17 | 0x18, next, after)) = tlv(rest) {
        out.push_str(&format!("Next Update: {}\n", time(next)));
        rest = after;
    } else {
        out.push_str("Next Update: NONE\n");
    }
    match tlv(rest) {
        Some((0x30, mut revoked, _)) if !revoked.is_empty() => {
            out.push_str("Revoked Certificates:\n");
            while let Some((_, entry, after)) = tlv(revoked) {
                revoked = after;
                let (_, sn, rest) = tlv(entry)?;
                let (_, date, _) = tlv(rest)?;
                out.push_str(&format!(
                    "    Serial Number: {}\n        Revocation Date: {}\n",
                    serial(sn),
                    time(date)
                ));
            }
        }
        _ => out.push_str("No Revoked Certificates.\n"),
    }
    Some(out)
}

/// A signature algorithm's long name (`sha256WithRSAEncryption`).
pub(crate) fn long_sig_name(oid: &[u8]) -> String {
    match super::sig_alg_name(oid).as_str() {
        "RSA-MD5" => "md5WithRSAEncryption".into(),
        "RSA-SHA1" => "sha1WithRSAEncryption".into(),
        "RSA-SHA224" => "sha224WithRSAEncryption".into(),
        "RSA-SHA256" => "sha256WithRSAEncryption".into(),
        "RSA-SHA384" => "sha384WithRSAEncryption".into(),
        "RSA-SHA512" => "sha512WithRSAEncryption".into(),
        other => other.to_string(),
    }
}
