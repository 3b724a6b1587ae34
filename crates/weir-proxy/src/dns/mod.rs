//! Name resolution at run time (`resolvers` sections, manual §5.3.2): one
//! task per section resolves the names its servers carry — A and AAAA
//! (the preferred family first), SRV for `_service._proto.name` — every
//! `hold valid`, waking every `timeout resolve`; it asks every name server
//! over UDP, takes the first answer to the question asked (`wire`), and
//! gives each server of a name its record (`assign`): a new address, a
//! port and a weight from SRV, or none (maintenance "resolution") once an
//! error has lasted past its `hold` period.

pub mod assign;
mod lookup;
mod query;
pub mod wire;
pub use lookup::lookup;

use crate::log::level;
use crate::state::{admin, BackendRt, ServerId, Shared};
use assign::Rec;
use query::Querier;
use std::net::IpAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;
use weir_config::addr::{Host, ServerAddr};
use weir_config::Resolvers;
use wire::{Answer, Kind};

/// The servers of one backend resolved through one name.
struct Group {
    be: Arc<BackendRt>,
    name: String,
    members: Vec<ServerId>,
    /// The record each member holds (its key), as last given.
    held: Vec<Option<String>>,
    /// When an answer last had each member's record (`hold obsolete`
    /// keeps it that long after).
    seen: Vec<Option<Instant>>,
    opts: weir_config::Resolve,
    last_valid: Option<Instant>,
    last_try: Option<Instant>,
}

/// What a resolution came to.
enum Outcome {
    Valid(Vec<Rec>),
    Nx,
    Refused,
    Other,
    Timeout,
}

/// Starts the task of every `resolvers` section some server uses.
pub fn spawn_all(sh: &Arc<Shared>) {
    for (ri, r) in sh.cfg.resolvers.iter().enumerate() {
        let groups = groups_of(sh, &r.name);
        if !groups.is_empty() {
            tokio::spawn(run(sh.clone(), ri, groups));
        }
    }
}

/// The groups of servers that resolve their names through section `name`.
fn groups_of(sh: &Shared, name: &str) -> Vec<Group> {
    let mut out: Vec<Group> = Vec::new();
    for be in &sh.backends {
        for (id, s) in be.servers() {
            if s.conf.resolve.resolvers.as_deref() != Some(name) {
                continue;
            }
            let ServerAddr::Inet {
                host: Host::Name(host),
                ..
            } = &s.conf.addr
            else {
                continue;
            };
            let host = host.to_ascii_lowercase();
            let held = s.target();
            let key = match held {
                crate::state::ServerTarget::Inet { addr, .. }
                    if !s.no_addr.load(Ordering::Relaxed) =>
                {
                    Some(addr.ip().to_string())
                }
                _ => None,
            };
            match out
                .iter_mut()
                .find(|g| Arc::ptr_eq(&g.be, be) && g.name == host)
            {
                Some(g) => {
                    g.members.push(id);
                    g.held.push(key);
                    g.seen.push(None);
                }
                None => out.push(Group {
                    be: be.clone(),
                    name: host,
                    members: vec![id],
                    held: vec![key],
                    seen: vec![None],
                    opts: s.conf.resolve.clone(),
                    last_valid: None,
                    last_try: None,
                }),
            }
        }
    }
    out
}

async fn run(sh: Arc<Shared>, ri: usize, mut groups: Vec<Group>) {
    let Some(r) = sh.cfg.resolvers.get(ri) else {
        return;
    };
    let Some(stats) = sh.dns.get(ri) else {
        return;
    };
    let mut q = match Querier::new(r, stats).await {
        Ok(q) => q,
        Err(e) => {
            sh.global_logger.send(
                level::ALERT,
                &format!("resolvers {}: cannot open a socket: {e}", r.name),
            );
            return;
        }
    };
    let mut stop = sh.stopping.subscribe();
    loop {
        moved(&mut groups);
        for g in groups.iter_mut() {
            let due = match (g.last_valid, g.last_try) {
                (Some(v), _) if v.elapsed() < r.hold.valid => false,
                (_, Some(t)) => t.elapsed() >= r.resolve,
                (_, None) => true,
            };
            if !due {
                continue;
            }
            g.last_try = Some(Instant::now());
            let out = resolve(&mut q, g).await;
            apply(r, g, out);
        }
        tokio::select! {
            _ = tokio::time::sleep(r.resolve) => {}
            _ = stats.wake.notified() => {}
            _ = stop.wait_for(|v| *v) => return,
        }
    }
}

/// Moves the servers `set server … fqdn` gave another name to that name's
/// group (made when none resolves it yet), to be resolved at once.
fn moved(groups: &mut Vec<Group>) {
    let mut out = Vec::new();
    for g in groups.iter_mut() {
        let mut k = 0;
        while let Some(&id) = g.members.get(k) {
            let s = g.be.server(id);
            if !s.fqdn_moved.swap(false, Ordering::Relaxed) {
                k += 1;
                continue;
            }
            let name = s
                .fqdn
                .lock()
                .ok()
                .and_then(|f| f.clone())
                .unwrap_or_default();
            g.members.remove(k);
            g.seen.remove(k);
            let held = g.held.remove(k);
            out.push((
                g.be.clone(),
                name.to_ascii_lowercase(),
                id,
                held,
                g.opts.clone(),
            ));
        }
    }
    groups.retain(|g| !g.members.is_empty());
    for (be, name, id, held, opts) in out {
        match groups
            .iter_mut()
            .find(|g| Arc::ptr_eq(&g.be, &be) && g.name == name)
        {
            Some(g) => {
                g.members.push(id);
                g.held.push(held);
                g.seen.push(None);
                g.last_valid = None;
                g.last_try = None;
            }
            None => groups.push(Group {
                be,
                name,
                members: vec![id],
                held: vec![held],
                seen: vec![None],
                opts,
                last_valid: None,
                last_try: None,
            }),
        }
    }
}

/// `set server <bk>/<srv> fqdn <name>`: the answer; the server's resolver
/// task takes the new name at once.
pub fn set_fqdn(sh: &Shared, be: &BackendRt, s: &crate::state::ServerRt, name: &str) -> String {
    let who = format!("{}/{}", be.name, s.name);
    let Some(ri) = s
        .conf
        .resolve
        .resolvers
        .as_deref()
        .and_then(|r| sh.cfg.resolvers.iter().position(|x| x.name == r))
    else {
        return "set server <b>/<s> fqdn failed because no resolution is configured.\n".into();
    };
    let valid = !name.is_empty()
        && name.len() <= 255
        && name.trim_end_matches('.').split('.').all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && l.bytes()
                    .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_')
        });
    if !valid {
        return format!("could not update {who} FQDN by 'stats socket command'\n");
    }
    let before = s
        .fqdn
        .lock()
        .ok()
        .and_then(|mut f| f.replace(name.to_string()))
        .unwrap_or_else(|| "(null)".into());
    s.fqdn_moved.store(true, Ordering::Relaxed);
    if let Some(st) = sh.dns.get(ri) {
        st.wake.notify_one();
    }
    format!("{who} changed its FQDN from {before} to {name} by 'stats socket command'\n")
}

/// A name's records: SRV with their targets' addresses, or addresses of
/// the preferred family (the other when it has none).
async fn resolve(q: &mut Querier<'_>, g: &Group) -> Outcome {
    let families = if g.opts.prefer_v4 {
        [Kind::A, Kind::Aaaa]
    } else {
        [Kind::Aaaa, Kind::A]
    };
    if g.name.starts_with('_') {
        return match q.ask(&g.name, Kind::Srv).await {
            Some((Answer::Records { srvs, extra, .. }, _)) => {
                let mut recs = Vec::new();
                // A target missing from the additional records is asked
                // in the family those records use first (one query, not
                // two, for each when they are all of one family).
                let v4 = extra.values().flatten().any(IpAddr::is_ipv4);
                let v6 = extra.values().flatten().any(IpAddr::is_ipv6);
                let families = match (v4, v6) {
                    (true, false) => [Kind::A, Kind::Aaaa],
                    (false, true) => [Kind::Aaaa, Kind::A],
                    _ => families,
                };
                // (haproxy hands the records out last first.)
                let missing: Vec<&str> = srvs
                    .iter()
                    .filter(|s| !extra.contains_key(&s.target))
                    .map(|s| s.target.as_str())
                    .collect();
                let asked = first_ips(q, &missing, families).await;
                for s in srvs.iter().rev() {
                    let found = match extra.get(&s.target).and_then(|v| v.first()) {
                        Some(ip) => Some((*ip, "DNS additional record".to_string())),
                        None => asked.get(s.target.as_str()).cloned(),
                    };
                    if let Some((ip, how)) = found {
                        recs.push(Rec {
                            key: format!("{}:{}", s.target, s.port),
                            ip,
                            port: Some(s.port),
                            weight: Some(s.weight),
                            target: Some(s.target.clone()),
                            how,
                        });
                    }
                }
                Outcome::Valid(recs)
            }
            other => error_of(other.map(|a| a.0)),
        };
    }
    for kind in families {
        match q.ask(&g.name, kind).await {
            Some((Answer::Records { mut ips, .. }, how)) if !ips.is_empty() => {
                assign::prefer(&mut ips, &g.opts.nets);
                return Outcome::Valid(
                    ips.into_iter()
                        .map(|ip| Rec {
                            key: ip.to_string(),
                            ip,
                            port: None,
                            weight: None,
                            target: None,
                            how: how.clone(),
                        })
                        .collect(),
                );
            }
            Some((Answer::Records { .. }, _)) => continue,
            other => return error_of(other.map(|a| a.0)),
        }
    }
    Outcome::Valid(Vec::new())
}

/// The first address of each name (the first family, then the other for
/// those it gave none), with where it came from.
pub(super) async fn first_ips<'n>(
    q: &mut Querier<'_>,
    names: &[&'n str],
    families: [Kind; 2],
) -> std::collections::HashMap<&'n str, (IpAddr, String)> {
    let mut found = std::collections::HashMap::new();
    for kind in families {
        let left: Vec<&str> = names
            .iter()
            .copied()
            .filter(|n| !found.contains_key(n))
            .collect();
        if left.is_empty() {
            break;
        }
        for (n, got) in left.iter().zip(q.ask_many(&left, kind).await) {
            if let Some((Answer::Records { ips, .. }, how)) = got {
                if let Some(ip) = ips.first() {
                    found.insert(*n, (*ip, how));
                }
            }
        }
    }
    found
}

fn error_of(a: Option<Answer>) -> Outcome {
    match a {
        Some(Answer::NxDomain) => Outcome::Nx,
        Some(Answer::Refused) => Outcome::Refused,
        Some(Answer::Other) => Outcome::Other,
        Some(Answer::Records { .. }) => Outcome::Valid(Vec::new()),
        None => Outcome::Timeout,
    }
}

/// Gives each server of the group its record, or takes its address away
/// once an error has lasted longer than its hold period.
fn apply(r: &Resolvers, g: &mut Group, out: Outcome) {
    let (recs, why) = match out {
        Outcome::Valid(recs) => {
            g.last_valid = Some(Instant::now());
            let why = match g.name.starts_with('_') {
                true => "entry removed from SRV record",
                false => "No IP for server ",
            };
            (recs, why)
        }
        other => {
            let (hold, why) = match other {
                Outcome::Nx => (r.hold.nx, "DNS NX status"),
                Outcome::Refused => (r.hold.refused, "DNS refused status"),
                Outcome::Timeout => (r.hold.timeout, "DNS timeout status"),
                _ => (r.hold.other, "unspecified DNS error"),
            };
            if g.last_valid.is_some_and(|v| v.elapsed() < hold) {
                return;
            }
            (Vec::new(), why)
        }
    };
    let allow_dup = g.opts.allow_dup_ip && !g.opts.prevent_dup_ip;
    // A record the answer no longer has stays `hold obsolete` after it
    // was last seen; the others are given from the answer.
    let now = Instant::now();
    let mut open = Vec::new();
    for (k, held) in g.held.iter().enumerate() {
        let listed = held
            .as_ref()
            .is_some_and(|h| recs.iter().any(|r| &r.key == h));
        let seen = g.seen.get_mut(k);
        if let (true, Some(s)) = (listed, seen) {
            *s = Some(now);
            open.push(k);
            continue;
        }
        let kept = held.is_some()
            && g.seen
                .get(k)
                .copied()
                .flatten()
                .is_some_and(|t| t.elapsed() < r.hold.obsolete);
        if !kept {
            open.push(k);
        }
    }
    let open_held: Vec<Option<String>> = open
        .iter()
        .map(|k| g.held.get(*k).cloned().flatten())
        .collect();
    let picks = assign::assign(&open_held, &recs, allow_dup);
    for (&k, pick) in open.iter().zip(picks) {
        let rec = pick.and_then(|p| recs.get(p));
        let key = rec.map(|x| x.key.clone());
        let (Some(held), Some(&id)) = (g.held.get(k), g.members.get(k)) else {
            continue;
        };
        if *held == key {
            continue;
        }
        match rec {
            Some(rec) => give(g, id, rec),
            None => take(g, id, why),
        }
        if let Some(s) = g.seen.get_mut(k) {
            *s = key.as_ref().map(|_| now);
        }
        if let Some(h) = g.held.get_mut(k) {
            *h = key;
        }
    }
}

/// Server `id` gets the address (and port, weight) of `rec`.
fn give(g: &Group, id: ServerId, rec: &Rec) {
    let be = &g.be;
    let s = be.server(id);
    let was_unaddressed = s.no_addr.load(Ordering::Relaxed);
    let old = match admin::set_addr(s, rec.ip, rec.port) {
        Ok(old) => old,
        Err(_) => return,
    };
    if let (Some(w), false) = (rec.weight, g.opts.ignore_weight) {
        admin::set_weight(be, id.index(), s, assign::srv_weight(w));
    }
    let who = format!("{}/{}", be.name, s.name);
    let log = |line: String| be.logger.send(level::NOTICE, &line);
    match was_unaddressed {
        true => log(format!(
            "{who} changed its IP from (none) to {} by {}.",
            rec.ip, rec.how
        )),
        false if old.ip() != rec.ip => log(format!(
            "{who} changed its IP from {} to {} by {}.",
            old.ip(),
            rec.ip,
            rec.how
        )),
        false => {}
    }
    if let Some(t) = &rec.target {
        let before = s.fqdn.lock().ok().and_then(|mut f| f.replace(t.clone()));
        s.from_srv.store(true, Ordering::Relaxed);
        if before.as_deref() != Some(t.as_str()) {
            let was = before.unwrap_or_else(|| "(null)".into());
            log(format!(
                "{who} changed its FQDN from {was} to {t} by 'SRV record'"
            ));
        }
    }
    if was_unaddressed {
        be.set().set_maint(id.index(), false);
        be.slot_freed.notify_waiters();
        let name = rec.target.as_deref().unwrap_or(&g.name);
        log(format!(
            "Server {who} ('{name}') is UP/READY (resolves again)."
        ));
        if rec.target.is_none() {
            log(format!(
                "Server {who} administratively READY thanks to valid DNS answer."
            ));
        }
    }
}

/// Server `id` loses its address: maintenance until a record comes back.
fn take(g: &Group, id: ServerId, why: &str) {
    let be = &g.be;
    let s = be.server(id);
    if s.no_addr.swap(true, Ordering::Relaxed) {
        return;
    }
    s.conn_gen.fetch_add(1, Ordering::Relaxed);
    // (A slot an SRV record filled forgets its target and port.)
    if s.from_srv.load(Ordering::Relaxed) {
        if let Ok(mut f) = s.fqdn.lock() {
            *f = None;
        }
        if let Ok(mut t) = s.target.lock() {
            if let crate::state::ServerTarget::Inet { addr, .. } = &mut *t {
                addr.set_port(0);
            }
        }
    }
    let (act, bck) = {
        let mut set = be.set();
        set.set_maint(id.index(), true);
        set.usable_counts()
    };
    admin::entered_maint(s);
    be.logger.send(
        level::ALERT,
        &format!(
            "Server {}/{} is going DOWN for maintenance ({why}). {act} active and {bck} backup servers left. {} sessions active, 0 requeued, 0 remaining in queue.",
            be.name,
            s.name,
            s.cur_conns.load(Ordering::Relaxed)
        ),
    );
}

/// `show resolvers [<section>]`, in haproxy's layout.
pub fn show(sh: &Shared, only: Option<&str>) -> String {
    if only.is_some_and(|n| !sh.dns.iter().any(|r| r.name == n)) {
        return "Can't find that resolvers section\n".into();
    }
    let mut out = String::new();
    for r in sh.dns.iter().filter(|r| only.is_none_or(|n| n == r.name)) {
        out.push_str(&format!("Resolvers section {}\n", r.name));
        for s in &r.servers {
            let v = |c: &std::sync::atomic::AtomicU64| c.load(Ordering::Relaxed);
            out.push_str(&format!(" nameserver {}:\n", s.id));
            for (k, c) in [
                ("sent", &s.sent),
                ("snd_error", &s.snd_error),
                ("valid", &s.valid),
                ("update", &s.update),
            ] {
                out.push_str(&format!("  {:<13}{}\n", format!("{k}:"), v(c)));
            }
            out.push_str("  cname:       0\n  cname_error: 0\n");
            let any_err = v(&s.nx) + v(&s.timeout) + v(&s.refused) + v(&s.other) + v(&s.invalid);
            out.push_str(&format!("  any_err:     {any_err}\n"));
            for (k, c) in [
                ("nx", &s.nx),
                ("timeout", &s.timeout),
                ("refused", &s.refused),
                ("other", &s.other),
                ("invalid", &s.invalid),
            ] {
                out.push_str(&format!("  {:<13}{}\n", format!("{k}:"), v(c)));
            }
            out.push_str("  too_big:     0\n");
            for (k, c) in [("truncated", &s.truncated), ("outdated", &s.outdated)] {
                out.push_str(&format!("  {:<13}{}\n", format!("{k}:"), v(c)));
            }
        }
    }
    out
}
