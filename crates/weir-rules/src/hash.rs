//! Byte hashes HAProxy names (sdbm, djb2, CRC-32, CRC-32C, wt6), shared by the hash
//! converters and `hash-type`, and the converters' optional avalanche
//! (Bob Jenkins' 32-bit integer mix, then a multiplication by the prime
//! 3221225473, as haproxy 2.6's converters answer).

/// Plain sdbm over bytes.
pub fn sdbm(data: &[u8]) -> u32 {
    data.iter().fold(0u32, |h, &b| {
        u32::from(b)
            .wrapping_add(h << 6)
            .wrapping_add(h << 16)
            .wrapping_sub(h)
    })
}

/// Bernstein's djb2.
pub fn djb2(data: &[u8]) -> u32 {
    data.iter().fold(5381u32, |h, &b| {
        (h << 5).wrapping_add(h).wrapping_add(u32::from(b))
    })
}

/// IEEE CRC-32 (bitwise; inputs here are a few bytes).
pub fn crc32(data: &[u8]) -> u32 {
    crc_reflected(data, 0xEDB8_8320)
}

/// CRC-32C (Castagnoli), as iSCSI and SCTP use it.
pub fn crc32c(data: &[u8]) -> u32 {
    crc_reflected(data, 0x82F6_3B78)
}

/// The reflected CRC-32 family with the (reversed) polynomial `poly`.
fn crc_reflected(data: &[u8], poly: u32) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ poly
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// HAProxy's "wt6" hash: two 32-bit lanes, each byte complemented into
/// one and added into the other, the lanes rotated by amounts the lanes
/// themselves choose after every byte.
pub fn wt6(data: &[u8]) -> u32 {
    let (mut h0, mut h1) = (0xa53c_965a_u32, 0x5ca6_953a_u32);
    let (mut r0, mut r1) = (6u32, 18u32);
    for &b in data {
        let t = u32::from(b);
        let a = !(h0 ^ t);
        let c = !h1.wrapping_add(t);
        h0 = c.rotate_left(r0);
        h1 = a.rotate_left(r1);
        let mix = ((h0 >> 16) ^ h1) & 0xffff;
        r0 = mix & 0x1f;
        r1 = mix >> 11;
    }
    h0 ^ h1
}

/// The converters' avalanche: Bob Jenkins' full-avalanche integer hash,
/// spread by a large prime (measured against haproxy 2.6: `crc32(1)` and
/// `djb2(1)` agree with it).
pub fn full_avalanche(mut a: u32) -> u32 {
    a = a.wrapping_add(0x7ed5_5d16).wrapping_add(a << 12);
    a = (a ^ 0xc761_c23c) ^ (a >> 19);
    a = a.wrapping_add(0x1656_67b1).wrapping_add(a << 5);
    a = a.wrapping_add(0xd3a2_646c) ^ (a << 9);
    a = a.wrapping_add(0xfd70_46c5).wrapping_add(a << 3);
    a = (a ^ 0xb55a_4f09) ^ (a >> 16);
    a.wrapping_mul(3_221_225_473)
}

/// A server's dynamic persistence cookie (`cookie … dynamic`): hex of
/// xxh64 (seed 0) over the key, the address's bytes and the port as 4
/// big-endian bytes, as haproxy 2.6 makes it.
pub fn dynamic_cookie(key: &str, addr: std::net::SocketAddr) -> String {
    let mut data = key.as_bytes().to_vec();
    match addr.ip() {
        std::net::IpAddr::V4(ip) => data.extend_from_slice(&ip.octets()),
        std::net::IpAddr::V6(ip) => data.extend_from_slice(&ip.octets()),
    }
    data.extend_from_slice(&u32::from(addr.port()).to_be_bytes());
    format!("{:016x}", xxhash_rust::xxh64::xxh64(&data, 0))
}

#[cfg(test)]
#[path = "hash_tests.rs"]
mod tests;
