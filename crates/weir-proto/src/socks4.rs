//! SOCKS4 (the `socks4` server option): the CONNECT request a client
//! sends to the proxy, and the proxy's 8-byte reply. haproxy sends the
//! user id `HAProxy`; only IPv4 destinations exist in SOCKS4.

use std::net::SocketAddrV4;

/// The reply's length.
pub const REPLY_LEN: usize = 8;

/// The user id haproxy sends (servers behind a SOCKS4 proxy that checks
/// it expect this one).
const USER_ID: &[u8] = b"HAProxy\0";

/// CONNECT to `dst`: version 4, command 1, port and address in network
/// order, the user id.
pub fn connect_request(dst: SocketAddrV4) -> Vec<u8> {
    let mut out = vec![0x04, 0x01];
    out.extend_from_slice(&dst.port().to_be_bytes());
    out.extend_from_slice(&dst.ip().octets());
    out.extend_from_slice(USER_ID);
    out
}

/// The proxy's answer: `Ok` when it granted the connection (`0x5a`),
/// else the code it gave.
pub fn reply(r: &[u8; REPLY_LEN]) -> Result<(), u8> {
    match r {
        [0x00, 0x5a, ..] => Ok(()),
        [_, code, ..] => Err(*code),
    }
}

#[cfg(test)]
#[path = "socks4_tests.rs"]
mod tests;
