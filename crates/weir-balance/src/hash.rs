//! Hash functions of `hash-type` (sdbm, djb2, crc32, wt6) and the optional
//! avalanche mix, plus the consistent-hash ring.

use weir_config::{HashFunction, HashMethod};

pub use weir_rules::hash::{crc32, djb2, sdbm};

/// weir's take on a "wide-tree" hash: rotate-xor-multiply per byte. It is not
/// bit-identical to HAProxy's wt6, only equally well spread.
pub fn wt6(data: &[u8]) -> u32 {
    data.iter().fold(0x2545_F491u32, |h, &b| {
        (h.rotate_left(6) ^ u32::from(b)).wrapping_mul(0x9E37_79B1)
    })
}

/// A 32-bit finaliser that spreads every input bit over the output.
pub fn avalanche(mut h: u32) -> u32 {
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

/// Hashes `data` as `hash-type` says.
pub fn hash(function: HashFunction, avalanche_on: bool, data: &[u8]) -> u32 {
    let h = match function {
        HashFunction::Sdbm => sdbm(data),
        HashFunction::Djb2 => djb2(data),
        HashFunction::Crc32 => crc32(data),
        HashFunction::Wt6 => wt6(data),
    };
    if avalanche_on {
        avalanche(h)
    } else {
        h
    }
}

/// Points per unit of weight on the consistent ring.
const POINTS_PER_WEIGHT: u32 = 16;

/// A consistent-hash ring over (server index, weight) pairs.
#[derive(Debug, Clone, Default)]
pub struct Ring {
    points: Vec<(u32, usize)>,
}

impl Ring {
    pub fn build(servers: &[(usize, u32, u32)]) -> Self {
        let mut points = Vec::new();
        for &(idx, id, weight) in servers {
            for k in 0..weight * POINTS_PER_WEIGHT {
                points.push((avalanche(id.wrapping_mul(0x9E37_79B1) ^ avalanche(k)), idx));
            }
        }
        points.sort_unstable();
        Ring { points }
    }
    /// The server owning `h`: the first point at or after it, wrapping.
    pub fn lookup(&self, h: u32) -> Option<usize> {
        let i = self.points.partition_point(|(p, _)| *p < h);
        let at = i.checked_rem(self.points.len())?;
        self.points.get(at).map(|&(_, s)| s)
    }
    /// Like `lookup` but skipping `avoid` (for redispatch).
    pub fn lookup_avoiding(&self, h: u32, avoid: usize) -> Option<usize> {
        self.lookup_where(h, |s| s != avoid)
    }
    /// The first server from `h` on, around the ring, that `ok` accepts.
    pub fn lookup_where(&self, h: u32, ok: impl Fn(usize) -> bool) -> Option<usize> {
        let n = self.points.len();
        let start = self.points.partition_point(|(p, _)| *p < h);
        (0..n)
            .filter_map(|k| self.points.get((start + k) % n).map(|&(_, s)| s))
            .find(|&s| ok(s))
    }
}

/// True for consistent hashing.
pub fn is_consistent(m: HashMethod) -> bool {
    m == HashMethod::Consistent
}

#[cfg(test)]
#[path = "hash_tests.rs"]
mod tests;
