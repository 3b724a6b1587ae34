//! Request-side decisions of an exchange: `option forwardfor`, the key
//! `balance uri|url_param|hdr` hashes, the connection mode of a
//! frontend/backend pair.

use super::head;
use std::net::IpAddr;
use weir_config::{HttpConnMode, Proxy};
use weir_proto::h1::{Header, RequestHead};

/// Settings of one frontend/backend pair, resolved once per exchange.
pub(super) struct Plan<'a> {
    pub fe: &'a Proxy,
    pub be: &'a Proxy,
}

/// Adds `X-Forwarded-For` (or the configured name) as `option forwardfor`
/// asks. Returns whether the head changed.
/// With `original`, adds `X-Original-To` (`option originalto`) with the
/// address the client connected to instead.
pub(super) fn forwardfor(
    plan: &Plan<'_>,
    req: &mut RequestHead,
    peer: Option<IpAddr>,
    original: bool,
) -> bool {
    let Some(ip) = peer else { return false };
    let mut changed = false;
    let mut done: Vec<&str> = Vec::new();
    for px in [plan.fe, plan.be] {
        let opt = if original {
            &px.http.originalto
        } else {
            &px.http.forwardfor
        };
        let Some(ff) = opt else {
            continue;
        };
        if done.iter().any(|h| h.eq_ignore_ascii_case(&ff.header)) {
            continue;
        }
        done.push(&ff.header);
        if ff
            .except
            .is_some_and(|(n, len)| weir_rules::matching::in_net(ip, n, len))
        {
            continue;
        }
        if ff.if_none && head::get(&req.headers, &ff.header).is_some() {
            continue;
        }
        req.headers
            .push(Header::new(&ff.header, ip.to_string().as_bytes()));
        changed = true;
    }
    changed
}

/// The request part `balance uri|url_param|hdr` hashes (empty when
/// absent: the balancer falls back to round robin).
pub(super) fn balance_key(
    k: &weir_config::BalanceKey,
    req: &RequestHead,
    ctx: &dyn weir_rules::Ctx,
) -> Vec<u8> {
    use weir_config::BalanceKey;
    match k {
        // An HTTP request has no RDP cookie: round robin.
        BalanceKey::RdpCookie(_) => Vec::new(),
        // Nothing to hash: round robin.
        BalanceKey::Hash(e) => e.eval(ctx).map(|s| s.to_bytes()).unwrap_or_default(),
        BalanceKey::Uri {
            len,
            depth,
            whole,
            path_only,
        } => {
            let mut u = req.uri.as_str();
            if *path_only {
                if let Some(i) = u.find("://") {
                    u = u[i + 3..].find('/').map_or("/", |j| &u[i + 3 + j..]);
                }
            }
            if !*whole {
                u = u.split('?').next().unwrap_or(u);
            }
            if let Some(d) = depth {
                if let Some((i, _)) = u.match_indices('/').nth(*d) {
                    u = &u[..i];
                }
            }
            let b = u.as_bytes();
            len.and_then(|l| b.get(..l)).unwrap_or(b).to_vec()
        }
        BalanceKey::UrlParam(name) => req
            .uri
            .split_once('?')
            .and_then(|(_, q)| {
                q.split('&')
                    .find_map(|kv| kv.strip_prefix(name.as_str())?.strip_prefix('='))
            })
            .map(|v| v.as_bytes().to_vec())
            .unwrap_or_default(),
        BalanceKey::Hdr { name, domain_only } => {
            let v = req
                .headers
                .iter()
                .rev()
                .find(|h| h.is(name))
                .map(|h| h.value().to_vec())
                .unwrap_or_default();
            if !*domain_only {
                return v;
            }
            let host = v.split(|&b| b == b':').next().unwrap_or(&[]);
            // The label before the last one (the whole host when single).
            let mut labels = host.rsplit(|&b| b == b'.');
            labels.nth(1).unwrap_or(host).to_vec()
        }
    }
}

pub(super) trait ConnModeExt {
    fn max_with(self, other: Self) -> Self;
}

impl ConnModeExt for HttpConnMode {
    /// The stricter of a frontend's and a backend's modes.
    fn max_with(self, other: Self) -> Self {
        let rank = |m: HttpConnMode| match m {
            HttpConnMode::KeepAlive => 0,
            HttpConnMode::ServerClose => 1,
            HttpConnMode::Close => 2,
        };
        if rank(other) > rank(self) {
            other
        } else {
            self
        }
    }
}
