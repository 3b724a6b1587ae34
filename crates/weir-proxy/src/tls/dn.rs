//! X.509 distinguished names from DER (pure): the `/C=FR/O=x/CN=y` form
//! HAProxy's `ssl_c_s_dn` and `ssl_c_i_dn` give, and the subject CN.

/// One DER element: (tag, contents, rest). `None` on malformed input.
fn tlv(b: &[u8]) -> Option<(u8, &[u8], &[u8])> {
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

fn dotted(oid: &[u8]) -> String {
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

/// `/C=FR/O=Org/CN=name` from a Name's contents.
pub fn oneline(name: &[u8]) -> String {
    attributes(name)
        .unwrap_or_default()
        .iter()
        .map(|(k, v)| format!("/{k}={v}"))
        .collect()
}

/// The last CN of a Name's contents.
pub fn common_name(name: &[u8]) -> Option<String> {
    attributes(name)?
        .into_iter()
        .rev()
        .find(|(k, _)| k == "CN")
        .map(|(_, v)| v)
}

#[cfg(test)]
#[path = "dn_tests.rs"]
mod tests;
