//! Proxy and server ids as HAProxy numbers them: a written `id` is kept
//! (two equal ones are an error), the others get the first free id from a
//! counter that moves past every proxy or server, numbered or not.

use crate::diag::Diagnostics;
use crate::model::{Config, Proxy, Server};
use std::collections::HashMap;

/// Checks the written ids and assigns every proxy's and server's `uid`.
/// The runtime API's stats socket is a proxy in HAProxy: it takes the
/// first id when `global` declares one, so `iid`s match haproxy's.
pub(super) fn assign(cfg: &mut Config, diags: &mut Diagnostics) {
    check_proxy_ids(&cfg.proxies, diags);
    let cli = !cfg.global.stats_sockets.is_empty();
    let written = cfg.proxies.iter().map(|p| p.id);
    let uids = number(
        std::iter::once(cli.then_some(None))
            .flatten()
            .chain(written),
    );
    let skip = usize::from(cli);
    for (p, uid) in cfg.proxies.iter_mut().zip(uids.into_iter().skip(skip)) {
        p.uid = uid;
    }
    for p in &mut cfg.proxies {
        check_server_ids(p, diags);
        let uids = number(p.servers.iter().map(|s| s.id));
        for (s, uid) in p.servers.iter_mut().zip(uids) {
            s.uid = uid;
        }
    }
}

/// HAProxy's numbering: written ids are taken; each other item gets the
/// first id not taken at or above a counter that starts at 1 and moves
/// one past each item's position, numbered or not.
fn number(written: impl Iterator<Item = Option<u32>> + Clone) -> Vec<u32> {
    let mut taken: std::collections::HashSet<u32> = written.clone().flatten().collect();
    let mut next = 1u32;
    let mut out = Vec::new();
    for id in written {
        let uid = match id {
            Some(id) => id,
            None => {
                while taken.contains(&next) {
                    next += 1;
                }
                taken.insert(next);
                next
            }
        };
        out.push(uid);
        next += 1;
    }
    out
}

fn check_proxy_ids(proxies: &[Proxy], diags: &mut Diagnostics) {
    let mut seen: HashMap<u32, &Proxy> = HashMap::new();
    for p in proxies {
        let Some(id) = p.id else { continue };
        match seen.get(&id) {
            Some(prev) => diags.alert(
                &p.loc,
                format!(
                    "{} {} reuses same custom id as {} {} (declared at {})",
                    p.kind.keyword(),
                    p.name,
                    prev.kind.keyword(),
                    prev.name,
                    prev.loc
                ),
            ),
            None => {
                seen.insert(id, p);
            }
        }
    }
}

fn check_server_ids(p: &Proxy, diags: &mut Diagnostics) {
    let mut seen: HashMap<u32, &Server> = HashMap::new();
    for s in &p.servers {
        let Some(id) = s.id else { continue };
        match seen.get(&id) {
            Some(prev) => diags.alert(
                &s.loc,
                format!(
                    "'server {}/{}' : 'id' : custom id {id} already used at {} ('server {}')",
                    p.name, s.name, prev.loc, prev.name
                ),
            ),
            None => {
                seen.insert(id, s);
            }
        }
    }
}

#[cfg(test)]
#[path = "ids_tests.rs"]
mod tests;
