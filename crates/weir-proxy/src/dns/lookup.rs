//! `do-resolve`: one name asked of a `resolvers` section on behalf of a
//! request, its first address kept in the section's cache for `hold
//! valid`, as haproxy's resolutions are shared.

use super::query::Querier;
use super::wire::Kind;
use crate::state::Shared;
use std::net::IpAddr;
use std::time::Instant;

/// The address of `name` through section `section` (`ipv6`: asked first,
/// the other family when it has none); `None` on any error.
pub async fn lookup(sh: &Shared, section: &str, name: &str, ipv6: bool) -> Option<IpAddr> {
    let ri = sh.cfg.resolvers.iter().position(|r| r.name == section)?;
    let (r, stats) = (sh.cfg.resolvers.get(ri)?, sh.dns.get(ri)?);
    let name = name.trim_end_matches('.').to_ascii_lowercase();
    if name.is_empty() {
        return None;
    }
    let key = (name.clone(), ipv6);
    if let Some((ip, at)) = stats.cache.lock().ok()?.get(&key).copied() {
        if at.elapsed() < r.hold.valid {
            return Some(ip);
        }
    }
    let mut q = Querier::new(r, stats).await.ok()?;
    let families = match ipv6 {
        true => [Kind::Aaaa, Kind::A],
        false => [Kind::A, Kind::Aaaa],
    };
    let (ip, _) = super::first_ips(&mut q, &[&name], families)
        .await
        .remove(name.as_str())?;
    if let Ok(mut c) = stats.cache.lock() {
        // (A bounded cache: names come from requests.)
        if c.len() >= 4096 {
            c.clear();
        }
        c.insert(key, (ip, Instant::now()));
    }
    Some(ip)
}
