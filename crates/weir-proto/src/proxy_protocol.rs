//! PROXY protocol v1 (text) and v2 (binary) headers, as in HAProxy's
//! `proxy-protocol.txt`: strict parsing and encoding.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// The v2 signature.
pub const V2_SIGNATURE: [u8; 12] = *b"\r\n\r\n\0\r\nQUIT\n";
const V1_PREFIX: &[u8] = b"PROXY ";
/// Longest legal v1 line, CRLF included.
pub const V1_MAX_LEN: usize = 107;

/// What a PROXY header says about the original connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProxyHeader {
    /// v2 LOCAL command: the connection is the sender's own (health checks).
    Local,
    /// v1 `UNKNOWN` or a v2 family weir does not carry (unix, unspec).
    Unknown,
    /// A proxied TCP (or UDP) connection over IPv4 or IPv6.
    Inet { src: SocketAddr, dst: SocketAddr },
}

/// Why a header was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProxyError {
    #[error("received something which does not look like a PROXY protocol header")]
    NotProxy,
    #[error("PROXY v1 header is longer than 107 bytes")]
    TooLong,
    #[error("malformed PROXY v1 header: {0}")]
    BadV1(&'static str),
    #[error("malformed PROXY v2 header: {0}")]
    BadV2(&'static str),
}

/// Parses a header at the start of `buf`.
pub fn parse(buf: &[u8]) -> Result<Option<(ProxyHeader, usize)>, ProxyError> {
    let Some(&first) = buf.first() else {
        return Ok(None);
    };
    if first == b'P' {
        if !V1_PREFIX.starts_with(&buf[..buf.len().min(V1_PREFIX.len())]) {
            return Err(ProxyError::NotProxy);
        }
        return parse_v1(buf);
    }
    if first == b'\r' {
        let n = buf.len().min(V2_SIGNATURE.len());
        if buf[..n] != V2_SIGNATURE[..n] {
            return Err(ProxyError::NotProxy);
        }
        return parse_v2(buf);
    }
    Err(ProxyError::NotProxy)
}

fn parse_v1(buf: &[u8]) -> Result<Option<(ProxyHeader, usize)>, ProxyError> {
    let window = &buf[..buf.len().min(V1_MAX_LEN)];
    let Some(cr) = window.iter().position(|&b| b == b'\r' || b == b'\n') else {
        return if buf.len() >= V1_MAX_LEN {
            Err(ProxyError::TooLong)
        } else {
            Ok(None)
        };
    };
    if window[cr] != b'\r' {
        return Err(ProxyError::BadV1("line must end with CRLF"));
    }
    match window.get(cr + 1) {
        None if buf.len() <= cr + 1 => return Ok(None),
        Some(b'\n') => {}
        _ => return Err(ProxyError::BadV1("line must end with CRLF")),
    }
    let line = std::str::from_utf8(&window[V1_PREFIX.len()..cr])
        .map_err(|_| ProxyError::BadV1("not ASCII"))?;
    let consumed = cr + 2;
    let mut parts = line.split(' ');
    let proto = parts.next().unwrap_or("");
    if proto == "UNKNOWN" {
        return Ok(Some((ProxyHeader::Unknown, consumed)));
    }
    let fields: Vec<&str> = parts.collect();
    if fields.len() != 4 {
        return Err(ProxyError::BadV1(
            "expects 'PROXY TCP4|TCP6 <src> <dst> <sport> <dport>'",
        ));
    }
    let (src, dst) = match proto {
        "TCP4" => (
            IpAddr::V4(
                fields[0]
                    .parse::<Ipv4Addr>()
                    .map_err(|_| ProxyError::BadV1("bad IPv4 source"))?,
            ),
            IpAddr::V4(
                fields[1]
                    .parse::<Ipv4Addr>()
                    .map_err(|_| ProxyError::BadV1("bad IPv4 destination"))?,
            ),
        ),
        "TCP6" => (
            IpAddr::V6(
                fields[0]
                    .parse::<Ipv6Addr>()
                    .map_err(|_| ProxyError::BadV1("bad IPv6 source"))?,
            ),
            IpAddr::V6(
                fields[1]
                    .parse::<Ipv6Addr>()
                    .map_err(|_| ProxyError::BadV1("bad IPv6 destination"))?,
            ),
        ),
        _ => {
            return Err(ProxyError::BadV1(
                "unknown protocol (expects TCP4, TCP6 or UNKNOWN)",
            ))
        }
    };
    let port = |s: &str| -> Result<u16, ProxyError> {
        if s.is_empty()
            || s.len() > 5
            || !s.bytes().all(|b| b.is_ascii_digit())
            || (s.len() > 1 && s.starts_with('0'))
        {
            return Err(ProxyError::BadV1("bad port"));
        }
        s.parse::<u16>().map_err(|_| ProxyError::BadV1("bad port"))
    };
    let (sp, dp) = (port(fields[2])?, port(fields[3])?);
    Ok(Some((
        ProxyHeader::Inet {
            src: SocketAddr::new(src, sp),
            dst: SocketAddr::new(dst, dp),
        },
        consumed,
    )))
}

fn parse_v2(buf: &[u8]) -> Result<Option<(ProxyHeader, usize)>, ProxyError> {
    if buf.len() < 16 {
        return Ok(None);
    }
    let ver_cmd = buf[12];
    if ver_cmd >> 4 != 2 {
        return Err(ProxyError::BadV2("unsupported version"));
    }
    let fam = buf[13];
    let len = u16::from_be_bytes([buf[14], buf[15]]) as usize;
    let total = 16 + len;
    if buf.len() < total {
        return Ok(None);
    }
    let body = &buf[16..total];
    match ver_cmd & 0x0f {
        0 => return Ok(Some((ProxyHeader::Local, total))),
        1 => {}
        _ => return Err(ProxyError::BadV2("unsupported command")),
    }
    let header = match fam >> 4 {
        1 => {
            if body.len() < 12 {
                return Err(ProxyError::BadV2("address block too short for IPv4"));
            }
            let ip = |o: usize| {
                IpAddr::V4(Ipv4Addr::new(
                    body[o],
                    body[o + 1],
                    body[o + 2],
                    body[o + 3],
                ))
            };
            let port = |o: usize| u16::from_be_bytes([body[o], body[o + 1]]);
            ProxyHeader::Inet {
                src: SocketAddr::new(ip(0), port(8)),
                dst: SocketAddr::new(ip(4), port(10)),
            }
        }
        2 => {
            if body.len() < 36 {
                return Err(ProxyError::BadV2("address block too short for IPv6"));
            }
            let ip = |o: usize| {
                let mut a = [0u8; 16];
                a.copy_from_slice(&body[o..o + 16]);
                IpAddr::V6(Ipv6Addr::from(a))
            };
            let port = |o: usize| u16::from_be_bytes([body[o], body[o + 1]]);
            ProxyHeader::Inet {
                src: SocketAddr::new(ip(0), port(32)),
                dst: SocketAddr::new(ip(16), port(34)),
            }
        }
        0 | 3 => ProxyHeader::Unknown,
        _ => return Err(ProxyError::BadV2("unsupported address family")),
    };
    match fam & 0x0f {
        0..=2 => Ok(Some((header, total))),
        _ => Err(ProxyError::BadV2("unsupported transport protocol")),
    }
}

/// A v1 line for a connection from `src` to `dst` (`UNKNOWN` when the
/// families differ).
pub fn encode_v1(src: SocketAddr, dst: SocketAddr) -> Vec<u8> {
    match (src, dst) {
        (SocketAddr::V4(s), SocketAddr::V4(d)) => format!(
            "PROXY TCP4 {} {} {} {}\r\n",
            s.ip(),
            d.ip(),
            s.port(),
            d.port()
        )
        .into_bytes(),
        (SocketAddr::V6(s), SocketAddr::V6(d)) => format!(
            "PROXY TCP6 {} {} {} {}\r\n",
            s.ip(),
            d.ip(),
            s.port(),
            d.port()
        )
        .into_bytes(),
        _ => b"PROXY UNKNOWN\r\n".to_vec(),
    }
}

/// A v2 header (PROXY command, TCP over the addresses' family; LOCAL-less).
pub fn encode_v2(src: SocketAddr, dst: SocketAddr) -> Vec<u8> {
    let mut out = Vec::with_capacity(52);
    out.extend_from_slice(&V2_SIGNATURE);
    out.push(0x21);
    match (src, dst) {
        (SocketAddr::V4(s), SocketAddr::V4(d)) => {
            out.push(0x11);
            out.extend_from_slice(&12u16.to_be_bytes());
            out.extend_from_slice(&s.ip().octets());
            out.extend_from_slice(&d.ip().octets());
            out.extend_from_slice(&s.port().to_be_bytes());
            out.extend_from_slice(&d.port().to_be_bytes());
        }
        (SocketAddr::V6(s), SocketAddr::V6(d)) => {
            out.push(0x21);
            out.extend_from_slice(&36u16.to_be_bytes());
            out.extend_from_slice(&s.ip().octets());
            out.extend_from_slice(&d.ip().octets());
            out.extend_from_slice(&s.port().to_be_bytes());
            out.extend_from_slice(&d.port().to_be_bytes());
        }
        _ => {
            out.push(0x00);
            out.extend_from_slice(&0u16.to_be_bytes());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v4(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    /// Every strict prefix of a valid header asks for more bytes.
    fn every_prefix(bytes: &[u8]) {
        for n in 0..bytes.len() {
            assert_eq!(parse(&bytes[..n]), Ok(None), "prefix {n} of {bytes:?}");
        }
    }

    #[test]
    fn v1_round_trip_and_prefixes() {
        let (s, d) = (v4("192.168.0.1:56324"), v4("10.0.0.2:443"));
        let mut bytes = encode_v1(s, d);
        assert_eq!(bytes, b"PROXY TCP4 192.168.0.1 10.0.0.2 56324 443\r\n");
        every_prefix(&bytes);
        let n = bytes.len();
        bytes.extend_from_slice(b"GET / HTTP/1.0\r\n");
        assert_eq!(
            parse(&bytes),
            Ok(Some((ProxyHeader::Inet { src: s, dst: d }, n)))
        );
        let (s6, d6) = (
            "[2001:db8::1]:1000".parse().unwrap(),
            "[::1]:80".parse().unwrap(),
        );
        let b6 = encode_v1(s6, d6);
        every_prefix(&b6);
        assert_eq!(
            parse(&b6),
            Ok(Some((ProxyHeader::Inet { src: s6, dst: d6 }, b6.len())))
        );
        assert_eq!(
            parse(b"PROXY UNKNOWN\r\n"),
            Ok(Some((ProxyHeader::Unknown, 15)))
        );
        assert_eq!(
            parse(b"PROXY UNKNOWN ffff::1 ::1 1 2\r\n")
                .unwrap()
                .unwrap()
                .0,
            ProxyHeader::Unknown
        );
    }

    #[test]
    fn v1_rejects() {
        for bad in [
            &b"GET / HTTP/1.1\r\n"[..],
            b"PROXX TCP4",
            b"PROXY TCP5 1.1.1.1 2.2.2.2 1 2\r\n",
            b"PROXY TCP4 1.1.1.1 2.2.2.2 1\r\n",
            b"PROXY TCP4 1.1.1.1 2.2.2.2 1 65536\r\n",
            b"PROXY TCP4 1.1.1.1 2.2.2.2 01 2\r\n",
            b"PROXY TCP4 ::1 2.2.2.2 1 2\r\n",
            b"PROXY TCP6 1.1.1.1 ::1 1 2\r\n",
            b"PROXY TCP4 1.1.1.1 2.2.2.2 1 2\n",
            b"PROXY TCP4 1.1.1.1 2.2.2.2 1 2\rX",
            b"PROXY TCP4  1.1.1.1 2.2.2.2 1 2\r\n",
        ] {
            assert!(parse(bad).is_err(), "{:?}", String::from_utf8_lossy(bad));
        }
        let long = [b"PROXY ".as_slice(), &[b'A'; 200]].concat();
        assert_eq!(parse(&long), Err(ProxyError::TooLong));
    }

    #[test]
    fn v2_round_trip_and_prefixes() {
        let (s, d) = (v4("1.2.3.4:5"), v4("6.7.8.9:10"));
        let mut bytes = encode_v2(s, d);
        assert_eq!(bytes.len(), 28);
        every_prefix(&bytes);
        bytes.push(0xff);
        assert_eq!(
            parse(&bytes),
            Ok(Some((ProxyHeader::Inet { src: s, dst: d }, 28)))
        );
        let (s6, d6) = (
            "[2001:db8::1]:1000".parse().unwrap(),
            "[::1]:80".parse().unwrap(),
        );
        let b6 = encode_v2(s6, d6);
        every_prefix(&b6);
        assert_eq!(
            parse(&b6),
            Ok(Some((ProxyHeader::Inet { src: s6, dst: d6 }, 52)))
        );
    }

    #[test]
    fn v2_local_tlvs_and_rejects() {
        let mut local = V2_SIGNATURE.to_vec();
        local.extend_from_slice(&[0x20, 0x00, 0x00, 0x00]);
        assert_eq!(parse(&local), Ok(Some((ProxyHeader::Local, 16))));
        // IPv4 with a 3-byte TLV after the addresses.
        let mut tlv = encode_v2(v4("1.1.1.1:1"), v4("2.2.2.2:2"));
        tlv[15] = 15;
        tlv.extend_from_slice(&[0x04, 0x00, 0x00]);
        assert_eq!(parse(&tlv).unwrap().unwrap().1, 31);
        let mut bad = encode_v2(v4("1.1.1.1:1"), v4("2.2.2.2:2"));
        bad[12] = 0x31;
        assert!(parse(&bad).is_err());
        let mut bad = encode_v2(v4("1.1.1.1:1"), v4("2.2.2.2:2"));
        bad[12] = 0x22;
        assert!(parse(&bad).is_err());
        let mut short = encode_v2(v4("1.1.1.1:1"), v4("2.2.2.2:2"));
        short[15] = 4;
        short.truncate(20);
        assert!(parse(&short).is_err());
        assert_eq!(parse(b"\r\n\r\n\0\r\nQUIX\n"), Err(ProxyError::NotProxy));
    }

    /// The fuzz target's properties over deterministic random mutations of
    /// valid headers (the `fuzz/` target explores further with libFuzzer).
    #[test]
    fn mutations_never_panic_and_round_trip() {
        let mut x: u64 = 0x1234_5678_9abc_def1;
        let mut rnd = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let seeds = [
            encode_v1(v4("1.2.3.4:5"), v4("6.7.8.9:10")),
            encode_v2(v4("1.2.3.4:5"), v4("6.7.8.9:10")),
            encode_v2("[::1]:1".parse().unwrap(), "[::2]:2".parse().unwrap()),
            b"PROXY UNKNOWN\r\n".to_vec(),
        ];
        for i in 0..200_000 {
            let mut d = seeds[i % seeds.len()].clone();
            for _ in 0..(rnd() % 4) {
                let pos = (rnd() as usize) % (d.len() + 1);
                match rnd() % 3 {
                    0 if pos < d.len() => d[pos] = rnd() as u8,
                    1 => d.insert(pos, rnd() as u8),
                    _ if pos < d.len() => {
                        d.remove(pos);
                    }
                    _ => {}
                }
            }
            if let Ok(Some((h, used))) = parse(&d) {
                assert!(used <= d.len());
                if let ProxyHeader::Inet { src, dst } = h {
                    assert_eq!(parse(&encode_v1(src, dst)).unwrap().unwrap().0, h);
                    assert_eq!(parse(&encode_v2(src, dst)).unwrap().unwrap().0, h);
                }
            }
        }
    }
}
