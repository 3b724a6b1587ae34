//! A bind line's TLS configurations: the one most clients get, and one per
//! `crt-list` line with `[options]` (its certificate with those bind
//! options), picked by the SNI of the client's hello.

use super::{certs, provider, server_config};
use rustls::ServerConfig;
use std::sync::Arc;

/// A configuration and the certificates it serves by name.
#[derive(Clone)]
pub struct Bound {
    pub cfg: Arc<ServerConfig>,
    pub certs: Arc<certs::SniIndex>,
}
use weir_config::tls::{with_base, BindTls, TlsGlobal};

/// One `crt-list` line with options: the names it serves and its
/// configuration.
struct Route {
    names: Vec<String>,
    excluded: Vec<String>,
    cfg: Bound,
}

/// The configurations of one `bind … ssl` line.
pub struct BindConfig {
    /// Every certificate of the line, with the line's options.
    pub default: Bound,
    routes: Vec<Route>,
}

impl std::fmt::Debug for BindConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "BindConfig({} routes)", self.routes.len())
    }
}

impl BindConfig {
    /// Some `crt-list` line has options: the hello must be read first.
    pub fn routed(&self) -> bool {
        !self.routes.is_empty()
    }

    /// The configuration for a client that sent `sni`: a line naming it
    /// exactly, then one whose `*.` wildcard covers it, else the default.
    pub fn pick(&self, sni: Option<&str>) -> Bound {
        let Some(name) = sni.map(str::to_ascii_lowercase) else {
            return self.default.clone();
        };
        let wild = name.split_once('.').map(|(_, d)| format!("*.{d}"));
        let serves =
            |r: &&Route, n: &str| !r.excluded.contains(&name) && r.names.iter().any(|x| x == n);
        let hit = self.routes.iter().find(|r| serves(r, &name)).or_else(|| {
            let w = wild.as_deref()?;
            self.routes.iter().find(|r| serves(r, w))
        });
        hit.map_or_else(|| self.default.clone(), |r| r.cfg.clone())
    }
}

/// Builds a bind line's configurations. Errors are messages without
/// location (the caller adds the bind's `file:line`).
pub fn bind_config(t: &BindTls, g: &TlsGlobal) -> Result<BindConfig, Vec<String>> {
    let (cfg, certs) = server_config(t, g)?;
    let default = Bound {
        cfg: Arc::new(cfg),
        certs,
    };
    let mut routes = Vec::new();
    let mut errs = Vec::new();
    for list in &t.crt_lists {
        // An unreadable list was reported by `server_config`.
        let Ok(text) = std::fs::read_to_string(list) else {
            continue;
        };
        let Ok(lines) = certs::parse_crt_list(&text) else {
            continue;
        };
        for l in lines.iter().filter(|l| !l.opts.is_empty()) {
            match route(t, g, l) {
                Ok(r) => routes.push(r),
                Err(es) => errs.extend(
                    es.into_iter()
                        .map(|e| format!("crt-list '{list}' line {}: {e}", l.line)),
                ),
            }
        }
    }
    if errs.is_empty() {
        Ok(BindConfig { default, routes })
    } else {
        Err(errs)
    }
}

/// The configuration of one `crt-list` line with options: the bind line's
/// options, then the line's, over its one certificate.
fn route(t: &BindTls, g: &TlsGlobal, l: &certs::CrtListLine) -> Result<Route, Vec<String>> {
    let mut lt = t.clone();
    lt.crts = vec![l.crt.clone()];
    lt.crt_lists = Vec::new();
    let mut i = 0;
    while let Some(w) = l.opts.get(i).map(String::as_str) {
        if matches!(w, "crt" | "crt-list" | "strict-sni") {
            return Err(vec![format!("'{w}' is not a crt-list option")]);
        }
        match lt.apply(w, l.opts.get(i + 1).map(String::as_str)) {
            Some(Ok(n)) => i += n,
            Some(Err(e)) => return Err(vec![e]),
            None => return Err(vec![format!("'{w}' is not a crt-list option")]),
        }
    }
    let (cfg, certs) = server_config(&lt, g)?;
    let path = with_base(g.crt_base.as_deref(), &l.crt);
    let ck = certs::load_pem(&path, &provider(&lt, g)).map_err(|e| vec![e])?;
    let (neg, pos): (Vec<&String>, Vec<&String>) =
        l.filters.iter().partition(|f| f.starts_with('!'));
    let names = if pos.is_empty() {
        certs::names(&ck)
    } else {
        pos.into_iter().cloned().collect()
    };
    Ok(Route {
        names,
        excluded: neg.iter().map(|f| f[1..].to_string()).collect(),
        cfg: Bound {
            cfg: Arc::new(cfg),
            certs,
        },
    })
}
