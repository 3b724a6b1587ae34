//! The NetScaler Client IP insertion header (`accept-netscaler-cip`), as
//! Debian's `netscaler-client-ip-insertion-protocol.txt` describes it and
//! haproxy 2.6 reads it: a magic number, then a copy of the IP and TCP
//! headers of the client's connection to the NetScaler, whose addresses
//! and ports become the session's.
//!
//! Two layouts: the legacy one (magic, a 32-bit length of the rest, the
//! IP header), and the standard one (magic, a 32-bit total length, a
//! 16-bit type, a 16-bit length of the rest, the IP header). As haproxy,
//! the byte after the first eight tells them apart (an IP version, 4 or
//! 6, starts the legacy layout's IP header), the bytes consumed are
//! those the header's own length field counts, and the total length and
//! type of the standard layout are not checked.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// Why a CIP header is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CipError {
    /// Another magic number than the listener's.
    BadMagic,
    /// An IP version other than 4 or 6.
    BadProto,
}

/// The client's connection as the header describes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CipHeader {
    pub src: SocketAddr,
    pub dst: SocketAddr,
}

/// A TCP header's fixed part: the ports are its first four bytes.
const TCP_HEADER: usize = 20;

fn be16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn be32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// Parses a CIP header at the start of `b` for the listener's `magic`:
/// `Ok(None)` while more bytes are needed, else the header and the bytes
/// it takes. `b` holds at most the connection's buffer: a header that
/// would need more never completes.
pub fn parse(b: &[u8], magic: u32) -> Result<Option<(CipHeader, usize)>, CipError> {
    // The magic is judged once the first eight bytes came, as haproxy.
    let Some(m) = be32(b, 0).filter(|_| b.len() >= 8) else {
        return Ok(None);
    };
    if m != magic {
        return Err(CipError::BadMagic);
    }
    let Some(first) = b.get(8) else {
        return Ok(None);
    };
    let (ip_at, rest_len) = if matches!(first >> 4, 4 | 6) {
        (8, be32(b, 4).map(|l| l as usize))
    } else {
        (12, be16(b, 10).map(usize::from))
    };
    let (Some(rest_len), Some(version)) = (rest_len, b.get(ip_at).map(|v| v >> 4)) else {
        return Ok(None);
    };
    let ip_len = match version {
        4 => usize::from(b.get(ip_at).map_or(0, |v| v & 0x0f)) * 4,
        6 => 40,
        _ => return Err(CipError::BadProto),
    };
    if ip_len < 20 {
        return Err(CipError::BadProto);
    }
    let tcp_at = ip_at + ip_len;
    let used = ip_at.saturating_add(rest_len);
    if b.len() < used.max(tcp_at + TCP_HEADER) {
        return Ok(None);
    }
    let ip = |from: usize| -> Option<IpAddr> {
        Some(if version == 4 {
            let o: [u8; 4] = b.get(ip_at + from..ip_at + from + 4)?.try_into().ok()?;
            IpAddr::V4(Ipv4Addr::from(o))
        } else {
            let o: [u8; 16] = b.get(ip_at + from..ip_at + from + 16)?.try_into().ok()?;
            IpAddr::V6(Ipv6Addr::from(o))
        })
    };
    let (src_at, dst_at) = if version == 4 { (12, 16) } else { (8, 24) };
    let found = (|| {
        let src = SocketAddr::new(ip(src_at)?, be16(b, tcp_at)?);
        let dst = SocketAddr::new(ip(dst_at)?, be16(b, tcp_at + 2)?);
        Some(CipHeader { src, dst })
    })();
    Ok(found.map(|h| (h, used)))
}

#[cfg(test)]
#[path = "netscaler_tests.rs"]
mod tests;
