//! Which server of a group (the servers of one backend resolved by one
//! name: a `server-template`, or `server` lines naming the same host)
//! takes which record: a server keeps a record still answered, the
//! records left go to servers without one, in order; a server with no
//! record left loses its address. Pure, so that it is tested alone.

use std::net::IpAddr;

/// One record a server may take: an address (and, from SRV, a port and a
/// weight, and the target's name as its key).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rec {
    /// What identifies it across answers: the address, or for SRV the
    /// target and port.
    pub key: String,
    pub ip: IpAddr,
    pub port: Option<u16>,
    pub weight: Option<u16>,
    /// The SRV target it names.
    pub target: Option<String>,
    /// Where the address came from, as logged: `<section>/<server>`, or
    /// `DNS additional record`.
    pub how: String,
}

/// The record each server of the group takes now (`None`: none), from
/// what each held (`held`, by key) and the answer's records in order.
/// Without `allow_dup`, no two servers take one record; with it, servers
/// left over share the records in turn.
pub fn assign(held: &[Option<String>], recs: &[Rec], allow_dup: bool) -> Vec<Option<usize>> {
    // (Linear in servers and records: a thousand of each is common.)
    let index: std::collections::HashMap<&str, usize> = recs
        .iter()
        .enumerate()
        .rev()
        .map(|(i, r)| (r.key.as_str(), i))
        .collect();
    let mut taken = vec![false; recs.len()];
    let mut out: Vec<Option<usize>> = held
        .iter()
        .map(|h| {
            let i = *index.get(h.as_deref()?)?;
            // (Two servers holding one record: the first keeps it.)
            let t = taken.get_mut(i)?;
            if *t && !allow_dup {
                return None;
            }
            *t = true;
            Some(i)
        })
        .collect();
    let mut free = (0..recs.len()).filter(|r| !taken.get(*r).copied().unwrap_or(true));
    for o in out.iter_mut().filter(|o| o.is_none()) {
        *o = free.next();
    }
    if allow_dup && !recs.is_empty() {
        let mut again = (0..recs.len()).cycle();
        for o in out.iter_mut().filter(|o| o.is_none()) {
            *o = again.next();
        }
    }
    out
}

/// Orders a name's addresses as a server prefers them: those of the
/// `resolve-net` networks first (in their order), then the rest; the
/// family asked for first (`resolve-prefer`) is the caller's.
pub fn prefer(ips: &mut [IpAddr], nets: &[(IpAddr, u8)]) {
    let rank = |ip: &IpAddr| {
        nets.iter()
            .position(|(n, bits)| in_net(ip, n, *bits))
            .unwrap_or(nets.len())
    };
    ips.sort_by_key(rank);
}

fn in_net(ip: &IpAddr, net: &IpAddr, bits: u8) -> bool {
    match (ip, net) {
        (IpAddr::V4(a), IpAddr::V4(n)) => {
            let mask = u32::MAX
                .checked_shl(32 - u32::from(bits.min(32)))
                .unwrap_or(0);
            u32::from(*a) & mask == u32::from(*n) & mask
        }
        (IpAddr::V6(a), IpAddr::V6(n)) => {
            let mask = u128::MAX
                .checked_shl(128 - u32::from(bits.min(128)))
                .unwrap_or(0);
            u128::from(*a) & mask == u128::from(*n) & mask
        }
        _ => false,
    }
}

/// haproxy's weight for an SRV record's (0 to 65535 onto 1 to 256).
pub fn srv_weight(w: u16) -> u32 {
    u32::from(w) / 256 + 1
}

#[cfg(test)]
#[path = "assign_tests.rs"]
mod tests;
