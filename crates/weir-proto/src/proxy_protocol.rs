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

/// The TLVs of a v2 header that weir reads (others are skipped, once
/// their framing checked).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tlvs {
    /// `PP2_TYPE_AUTHORITY` (0x02): the host name the client asked for.
    pub authority: Option<Vec<u8>>,
    /// `PP2_TYPE_UNIQUE_ID` (0x05): the sender's unique id of the request.
    pub unique_id: Option<Vec<u8>>,
}

/// `PP2_TYPE_AUTHORITY`.
pub const TLV_AUTHORITY: u8 = 0x02;
/// `PP2_TYPE_UNIQUE_ID`.
pub const TLV_UNIQUE_ID: u8 = 0x05;
/// `PP2_TYPE_CRC32C`: a CRC-32C of the whole header, this field zeroed.
pub const TLV_CRC32C: u8 = 0x03;
/// `PP2_TYPE_ALPN`: the protocol the client's TLS handshake chose.
pub const TLV_ALPN: u8 = 0x01;
/// `PP2_TYPE_SSL`: what the client's connection had of TLS (see [`Ssl`]).
pub const TLV_SSL: u8 = 0x20;

/// The value of a `PP2_TYPE_SSL` TLV: its `client` bits, its `verify`
/// code, and the sub-TLVs it carries (each `None` is left out).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Ssl<'a> {
    /// `PP2_CLIENT_SSL` (1), `PP2_CLIENT_CERT_CONN` (2),
    /// `PP2_CLIENT_CERT_SESS` (4).
    pub client: u8,
    /// 0 when a client certificate passed verification (or none came).
    pub verify: u32,
    /// `PP2_SUBTYPE_SSL_VERSION` (0x21): `TLSv1.3`.
    pub version: Option<&'a [u8]>,
    /// `PP2_SUBTYPE_SSL_CN` (0x22): the client certificate's common name.
    pub cn: Option<&'a [u8]>,
    /// `PP2_SUBTYPE_SSL_KEY_ALG` (0x25): `EC256`, `RSA2048`.
    pub key_alg: Option<&'a [u8]>,
    /// `PP2_SUBTYPE_SSL_SIG_ALG` (0x24): `ecdsa-with-SHA256`.
    pub sig_alg: Option<&'a [u8]>,
    /// `PP2_SUBTYPE_SSL_CIPHER` (0x23): the suite's OpenSSL name.
    pub cipher: Option<&'a [u8]>,
}

impl Ssl<'_> {
    /// The whole TLV, sub-TLVs in the order HAProxy 2.6 writes them.
    pub fn tlv(&self) -> Vec<u8> {
        let mut v = vec![self.client];
        v.extend_from_slice(&self.verify.to_be_bytes());
        let subs = [
            (0x21, self.version),
            (0x22, self.cn),
            (0x25, self.key_alg),
            (0x24, self.sig_alg),
            (0x23, self.cipher),
        ];
        for (kind, value) in subs {
            if let Some(value) = value {
                v.extend(tlv(kind, value));
            }
        }
        tlv(TLV_SSL, &v)
    }
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
    /// A v1 header whose protocol is not `TCP4`, `TCP6` or `UNKNOWN`.
    #[error("unknown protocol in a PROXY v1 header (expects TCP4, TCP6 or UNKNOWN)")]
    UnknownProto,
    #[error("malformed PROXY v2 header: {0}")]
    BadV2(&'static str),
}

/// Parses a header at the start of `buf`.
pub fn parse(buf: &[u8]) -> Result<Option<(ProxyHeader, usize)>, ProxyError> {
    Ok(parse_with_tlvs(buf)?.map(|(h, _, n)| (h, n)))
}

/// Parses a header at the start of `buf`, with the TLVs weir reads.
pub fn parse_with_tlvs(buf: &[u8]) -> Result<Option<(ProxyHeader, Tlvs, usize)>, ProxyError> {
    let Some(&first) = buf.first() else {
        return Ok(None);
    };
    if first == b'P' {
        let head = buf
            .get(..buf.len().min(V1_PREFIX.len()))
            .unwrap_or_default();
        if !V1_PREFIX.starts_with(head) {
            return Err(ProxyError::NotProxy);
        }
        return Ok(parse_v1(buf)?.map(|(h, n)| (h, Tlvs::default(), n)));
    }
    if first == b'\r' {
        let n = buf.len().min(V2_SIGNATURE.len());
        if buf.get(..n) != V2_SIGNATURE.get(..n) {
            return Err(ProxyError::NotProxy);
        }
        return parse_v2(buf);
    }
    Err(ProxyError::NotProxy)
}

fn parse_v1(buf: &[u8]) -> Result<Option<(ProxyHeader, usize)>, ProxyError> {
    let window = buf.get(..buf.len().min(V1_MAX_LEN)).unwrap_or_default();
    // The line ends at its first CR (a bare LF does not end it: HAProxy
    // waits for the CR, and calls a header that never has one truncated).
    let Some(cr) = window.iter().position(|&b| b == b'\r') else {
        return if buf.len() >= V1_MAX_LEN {
            Err(ProxyError::TooLong)
        } else {
            Ok(None)
        };
    };
    match window.get(cr + 1) {
        None if buf.len() <= cr + 1 => return Ok(None),
        Some(b'\n') => {}
        _ => return Err(ProxyError::BadV1("line must end with CRLF")),
    }
    let line = std::str::from_utf8(window.get(V1_PREFIX.len()..cr).unwrap_or_default())
        .map_err(|_| ProxyError::BadV1("not ASCII"))?;
    let consumed = cr + 2;
    let mut parts = line.split(' ');
    let proto = parts.next().unwrap_or("");
    if proto == "UNKNOWN" {
        return Ok(Some((ProxyHeader::Unknown, consumed)));
    }
    if proto != "TCP4" && proto != "TCP6" {
        return Err(ProxyError::UnknownProto);
    }
    let fields: Vec<&str> = parts.collect();
    let &[src, dst, sport, dport] = fields.as_slice() else {
        return Err(ProxyError::BadV1(
            "expects 'PROXY TCP4|TCP6 <src> <dst> <sport> <dport>'",
        ));
    };
    let (src, dst) = match proto {
        "TCP4" => (
            IpAddr::V4(
                src.parse::<Ipv4Addr>()
                    .map_err(|_| ProxyError::BadV1("bad IPv4 source"))?,
            ),
            IpAddr::V4(
                dst.parse::<Ipv4Addr>()
                    .map_err(|_| ProxyError::BadV1("bad IPv4 destination"))?,
            ),
        ),
        "TCP6" => (
            IpAddr::V6(
                src.parse::<Ipv6Addr>()
                    .map_err(|_| ProxyError::BadV1("bad IPv6 source"))?,
            ),
            IpAddr::V6(
                dst.parse::<Ipv6Addr>()
                    .map_err(|_| ProxyError::BadV1("bad IPv6 destination"))?,
            ),
        ),
        _ => return Err(ProxyError::UnknownProto),
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
    let (sp, dp) = (port(sport)?, port(dport)?);
    Ok(Some((
        ProxyHeader::Inet {
            src: SocketAddr::new(src, sp),
            dst: SocketAddr::new(dst, dp),
        },
        consumed,
    )))
}

fn parse_v2(buf: &[u8]) -> Result<Option<(ProxyHeader, Tlvs, usize)>, ProxyError> {
    let Some(head) = buf.first_chunk::<16>() else {
        return Ok(None);
    };
    let ver_cmd = head[12];
    // Another version is not this protocol (as HAProxy answers it).
    if ver_cmd >> 4 != 2 {
        return Err(ProxyError::NotProxy);
    }
    let fam = head[13];
    let len = u16::from_be_bytes([head[14], head[15]]) as usize;
    let total = 16 + len;
    let Some(body) = buf.get(16..total) else {
        return Ok(None);
    };
    match ver_cmd & 0x0f {
        0 => return Ok(Some((ProxyHeader::Local, Tlvs::default(), total))),
        1 => {}
        _ => return Err(ProxyError::BadV2("unsupported command")),
    }
    let (header, addr_len) = match fam >> 4 {
        1 => {
            let Some(&[s0, s1, s2, s3, d0, d1, d2, d3, sp0, sp1, dp0, dp1]) =
                body.first_chunk::<12>()
            else {
                return Err(ProxyError::BadV2("address block too short for IPv4"));
            };
            let src = IpAddr::V4(Ipv4Addr::new(s0, s1, s2, s3));
            let dst = IpAddr::V4(Ipv4Addr::new(d0, d1, d2, d3));
            let header = ProxyHeader::Inet {
                src: SocketAddr::new(src, u16::from_be_bytes([sp0, sp1])),
                dst: SocketAddr::new(dst, u16::from_be_bytes([dp0, dp1])),
            };
            (header, 12)
        }
        2 => {
            let short = ProxyError::BadV2("address block too short for IPv6");
            let (src, rest) = body.split_first_chunk::<16>().ok_or(short.clone())?;
            let (dst, rest) = rest.split_first_chunk::<16>().ok_or(short.clone())?;
            let &[sp0, sp1, dp0, dp1] = rest.first_chunk::<4>().ok_or(short)?;
            let header = ProxyHeader::Inet {
                src: SocketAddr::new(
                    IpAddr::V6(Ipv6Addr::from(*src)),
                    u16::from_be_bytes([sp0, sp1]),
                ),
                dst: SocketAddr::new(
                    IpAddr::V6(Ipv6Addr::from(*dst)),
                    u16::from_be_bytes([dp0, dp1]),
                ),
            };
            (header, 36)
        }
        // A family weir does not carry: the whole block is skipped.
        0 | 3 => (ProxyHeader::Unknown, body.len()),
        _ => return Err(ProxyError::BadV2("unsupported address family")),
    };
    if fam & 0x0f > 2 {
        return Err(ProxyError::BadV2("unsupported transport protocol"));
    }
    let tlvs = tlvs(body.get(addr_len..).unwrap_or_default())?;
    Ok(Some((header, tlvs, total)))
}

/// The TLVs after the address block: they must fill it exactly.
fn tlvs(mut rest: &[u8]) -> Result<Tlvs, ProxyError> {
    let mut out = Tlvs::default();
    while !rest.is_empty() {
        let bad = ProxyError::BadV2("a TLV overruns the header");
        let (&[kind, l0, l1], after) = rest.split_first_chunk::<3>().ok_or(bad.clone())?;
        let (value, after) = after
            .split_at_checked(usize::from(u16::from_be_bytes([l0, l1])))
            .ok_or(bad)?;
        match kind {
            TLV_AUTHORITY => out.authority = Some(value.to_vec()),
            TLV_UNIQUE_ID => out.unique_id = Some(value.to_vec()),
            _ => {}
        }
        rest = after;
    }
    Ok(out)
}

/// One TLV, as `encode_v2_with` appends them; nothing for a value too
/// long for one.
pub fn tlv(kind: u8, value: &[u8]) -> Vec<u8> {
    let Ok(len) = u16::try_from(value.len()) else {
        return Vec::new();
    };
    let mut out = vec![kind];
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(value);
    out
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
    encode_v2_with(src, dst, &[])
}

/// A v2 LOCAL header (no addresses: the client's are unknown) with
/// `tlvs`.
pub fn encode_v2_local(tlvs: &[u8]) -> Vec<u8> {
    let mut out = V2_SIGNATURE.to_vec();
    out.extend_from_slice(&[0x20, 0x00]);
    let tlvs = if tlvs.len() > usize::from(u16::MAX) {
        &[][..]
    } else {
        tlvs
    };
    let len = tlvs.len() as u16;
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(tlvs);
    out
}

/// A v2 header followed by `tlvs` (whole TLVs, as [`tlv`] makes them).
pub fn encode_v2_with(src: SocketAddr, dst: SocketAddr, tlvs: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(52 + tlvs.len());
    out.extend_from_slice(&V2_SIGNATURE);
    out.push(0x21);
    let mut addrs = Vec::with_capacity(36);
    let fam = match (src, dst) {
        (SocketAddr::V4(s), SocketAddr::V4(d)) => {
            addrs.extend_from_slice(&s.ip().octets());
            addrs.extend_from_slice(&d.ip().octets());
            0x11
        }
        (SocketAddr::V6(s), SocketAddr::V6(d)) => {
            addrs.extend_from_slice(&s.ip().octets());
            addrs.extend_from_slice(&d.ip().octets());
            0x21
        }
        _ => 0x00,
    };
    if fam != 0 {
        addrs.extend_from_slice(&src.port().to_be_bytes());
        addrs.extend_from_slice(&dst.port().to_be_bytes());
    }
    out.push(fam);
    // TLVs that would not fit the 16-bit length are left out whole rather
    // than cut (a cut one would not parse).
    let len = u16::try_from(addrs.len() + tlvs.len());
    let (len, tlvs) = match len {
        Ok(n) => (n, tlvs),
        Err(_) => (addrs.len() as u16, &[][..]),
    };
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(&addrs);
    out.extend_from_slice(tlvs);
    out
}

#[cfg(test)]
#[path = "proxy_protocol_tests.rs"]
mod tests;
