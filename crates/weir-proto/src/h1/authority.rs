//! The authority a request names (RFC 9110 §4.2, §7.2): an absolute-form
//! target's, or CONNECT's, checked against `Host`, with default ports
//! removed as haproxy 2.6 does (`http://a:80/` is `http://a/` and
//! `Host: a:80` is `Host: a`; for CONNECT, port 80 or 443 is the default
//! of its `Host`).

/// A host and its port as written: `None` without a colon, `Some(b"")`
/// for an empty port (`a:`). IPv6 literals keep their brackets.
fn split(v: &[u8]) -> (&[u8], Option<&[u8]>) {
    let colon = if v.first() == Some(&b'[') {
        v.iter()
            .position(|&b| b == b']')
            .and_then(|end| (v.get(end + 1) == Some(&b':')).then_some(end + 1))
    } else {
        v.iter().rposition(|&b| b == b':')
    };
    match colon {
        Some(c) => (v.get(..c).unwrap_or_default(), v.get(c + 1..)),
        None => (v, None),
    }
}

/// The port a scheme implies: 80 for http, 443 for https.
pub(super) fn scheme_port(scheme: &str) -> Option<&'static [u8]> {
    if scheme.eq_ignore_ascii_case("http") {
        Some(b"80")
    } else if scheme.eq_ignore_ascii_case("https") {
        Some(b"443")
    } else {
        None
    }
}

/// The port a CONNECT target (`host:port`, both required) implies for its
/// `Host`: its own when it is 80 or 443.
pub(super) fn connect_port(target: &[u8]) -> Result<Option<&[u8]>, &'static str> {
    let (host, port) = split(target);
    let Some(port) = port.filter(|p| !p.is_empty() && p.iter().all(u8::is_ascii_digit)) else {
        return Err("CONNECT without a port");
    };
    if host.is_empty() {
        return Err("CONNECT without a host");
    }
    Ok(matches!(port, b"80" | b"443").then_some(port))
}

/// Whether `a` and `b` name the same host (without case) and port, a
/// missing or empty port being `default`.
pub(super) fn same(default: Option<&[u8]>, a: &[u8], b: &[u8]) -> bool {
    let ((ha, pa), (hb, pb)) = (split(a), split(b));
    let pa = pa.filter(|p| !p.is_empty()).or(default);
    let pb = pb.filter(|p| !p.is_empty()).or(default);
    ha.eq_ignore_ascii_case(hb) && pa == pb
}

/// `v` without its port when the port written is `default` (or empty,
/// with `empty_too`); `None` when nothing is to be removed.
pub(super) fn without_default_port(
    v: &[u8],
    default: Option<&[u8]>,
    empty_too: bool,
) -> Option<Vec<u8>> {
    let (host, port) = split(v);
    let strip = port.is_some_and(|p| Some(p) == default || empty_too && p.is_empty());
    strip.then(|| host.to_vec())
}

/// An authority as a request with `scheme` names it once normalised: its
/// default or empty port removed (`None` when nothing changes). For
/// HTTP/2 requests, whose `:authority` becomes `Host`.
pub fn normalized_authority(scheme: &[u8], authority: &[u8]) -> Option<Vec<u8>> {
    let scheme = std::str::from_utf8(scheme).ok()?;
    without_default_port(authority, scheme_port(scheme), true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_ports_and_defaults() {
        assert_eq!(split(b"a:80"), (&b"a"[..], Some(&b"80"[..])));
        assert_eq!(split(b"a:"), (&b"a"[..], Some(&b""[..])));
        assert_eq!(split(b"[::1]:443"), (&b"[::1]"[..], Some(&b"443"[..])));
        assert_eq!(split(b"[::1]"), (&b"[::1]"[..], None));
        assert!(same(Some(b"80"), b"A:80", b"a"));
        assert!(same(Some(b"80"), b"a:80", b"a:"));
        assert!(!same(Some(b"80"), b"a:80", b"a:443"));
        assert!(!same(None, b"a:8080", b"a"));
        let strip = without_default_port;
        assert_eq!(strip(b"a:80", Some(b"80"), false), Some(b"a".to_vec()));
        assert_eq!(strip(b"a:", Some(b"80"), false), None);
        assert_eq!(strip(b"a:", Some(b"80"), true), Some(b"a".to_vec()));
        assert_eq!(strip(b"a:8080", Some(b"80"), true), None);
        assert_eq!(connect_port(b"a:443"), Ok(Some(&b"443"[..])));
        assert_eq!(connect_port(b"a:8443"), Ok(None));
        assert!(connect_port(b"a").is_err() && connect_port(b":80").is_err());
    }
}
