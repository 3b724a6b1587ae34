//! A bind line's TLS configurations: the one most clients get, and one per
//! `crt-list` line with `[options]` (its certificate with those bind
//! options), picked by the SNI of the client's hello. They are rebuilt
//! from the store when a file they were built from changes at run time.

use super::forge::Forge;
use super::store::{FileRef, Reader, Store};
use super::traffic::RecordLimits;
use super::{certs, server_config};
use rustls::ServerConfig;
use std::collections::BTreeSet;
use std::sync::{Arc, RwLock};
use weir_config::tls::{with_base, BindTls, TlsGlobal};

/// A configuration and the certificates it serves by name.
#[derive(Clone)]
pub struct Bound {
    pub cfg: Arc<ServerConfig>,
    pub certs: Arc<certs::SniIndex>,
    /// How it verifies client certificates (again for a resumed session,
    /// whose verdict rustls does not keep).
    pub verifier: Option<Arc<dyn rustls::server::danger::ClientCertVerifier>>,
}

/// One `crt-list` line with options: the names it serves and its
/// configuration.
struct Route {
    names: Vec<String>,
    excluded: Vec<String>,
    cfg: Bound,
}

/// Every configuration of a bind line, built together.
pub struct Routes {
    /// Every certificate of the line, with the line's options.
    default: Bound,
    routes: Vec<Route>,
    /// The files they were built from.
    used: BTreeSet<FileRef>,
}

/// The configurations of one `bind … ssl` line.
pub struct BindConfig {
    /// The line's TLS settings, to rebuild from.
    t: BindTls,
    /// `generate-certificates`: its CA and the certificates made, kept
    /// across rebuilds.
    forge: Option<Arc<Forge>>,
    /// `tune.ssl.maxrecord`, `tune.ssl.hard-maxrecord`.
    records: RecordLimits,
    live: RwLock<Arc<Routes>>,
}

impl std::fmt::Debug for BindConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "BindConfig({} routes)", self.now().routes.len())
    }
}

impl BindConfig {
    fn now(&self) -> Arc<Routes> {
        self.live.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The configuration for a client that sent `sni`: a line naming it
    /// exactly, then one whose `*.` wildcard covers it, else the default.
    pub fn pick(&self, sni: Option<&str>) -> Bound {
        let now = self.now();
        // Most binds have no line with options: nothing to compare.
        if now.routes.is_empty() {
            return now.default.clone();
        }
        let Some(name) = sni.map(str::to_ascii_lowercase) else {
            return now.default.clone();
        };
        let wild = name.split_once('.').map(|(_, d)| format!("*.{d}"));
        let serves =
            |r: &&Route, n: &str| !r.excluded.contains(&name) && r.names.iter().any(|x| x == n);
        let hit = now.routes.iter().find(|r| serves(r, &name)).or_else(|| {
            let w = wild.as_deref()?;
            now.routes.iter().find(|r| serves(r, w))
        });
        hit.map_or_else(|| now.default.clone(), |r| r.cfg.clone())
    }

    /// Whether it was built from `file`.
    pub fn uses(&self, file: &FileRef) -> bool {
        self.now().used.contains(file)
    }

    /// The bind line's TLS settings.
    pub fn settings(&self) -> &BindTls {
        &self.t
    }

    /// How much plaintext its sessions' records carry.
    pub fn records(&self) -> RecordLimits {
        self.records
    }

    /// The line's default certificate (none with `strict-sni`).
    pub fn default_cert(&self) -> Option<Arc<rustls::sign::CertifiedKey>> {
        self.now().default.certs.default_cert()
    }

    /// Builds its configurations again from the store's files, to be put
    /// in force with [`BindConfig::install`].
    pub fn rebuild(&self, g: &TlsGlobal, files: &Store) -> Result<Arc<Routes>, Vec<String>> {
        routes(&self.t, g, files, self.forge.clone()).map(Arc::new)
    }

    pub fn install(&self, r: Arc<Routes>) {
        *self.live.write().unwrap_or_else(|e| e.into_inner()) = r;
    }
}

/// Builds a bind line's configurations. Errors are messages without
/// location (the caller adds the bind's `file:line`).
pub fn bind_config(t: &BindTls, g: &TlsGlobal, files: &Store) -> Result<BindConfig, Vec<String>> {
    let forge = forge(t, g)?;
    Ok(BindConfig {
        t: t.clone(),
        live: RwLock::new(Arc::new(routes(t, g, files, forge.clone())?)),
        forge,
        records: RecordLimits {
            soft: g.max_record,
            hard: g.hard_max_record,
        },
    })
}

/// The CA of `generate-certificates` (`ca-sign-file`, read once).
fn forge(t: &BindTls, g: &TlsGlobal) -> Result<Option<Arc<Forge>>, Vec<String>> {
    if !t.generate_certificates {
        return Ok(None);
    }
    let Some(file) = &t.ca_sign_file else {
        return Err(vec![
            "cannot enable certificate generation, no CA certificate File configured".into(),
        ]);
    };
    let path = with_base(g.ca_base.as_deref(), file);
    let p = super::provider(t, g);
    Forge::load(&path, &p, g.ctx_cache_size)
        .map(|f| Some(Arc::new(f)))
        .map_err(|e| vec![e])
}

fn routes(
    t: &BindTls,
    g: &TlsGlobal,
    files: &Store,
    forge: Option<Arc<Forge>>,
) -> Result<Routes, Vec<String>> {
    let r = Reader::new(files);
    let default = server_config(t, g, &r, forge)?;
    let mut routes = Vec::new();
    let mut errs = Vec::new();
    for list in &t.crt_lists {
        // An unreadable list was reported by `server_config`.
        let Ok(lines) = r.crt_list(list) else {
            continue;
        };
        for l in lines.iter().filter(|l| !l.opts.is_empty()) {
            match route(t, g, l, &r) {
                Ok(r) => routes.push(r),
                Err(es) => errs.extend(
                    es.into_iter()
                        .map(|e| format!("crt-list '{list}' line {}: {e}", l.line)),
                ),
            }
        }
    }
    if errs.is_empty() {
        Ok(Routes {
            default,
            routes,
            used: r.used(),
        })
    } else {
        Err(errs)
    }
}

/// A `crt-list` line's options over the bind line's settings.
pub fn line_tls(t: &BindTls, opts: &[String]) -> Result<BindTls, String> {
    let mut lt = t.clone();
    lt.crt_lists = Vec::new();
    let mut i = 0;
    while let Some(w) = opts.get(i).map(String::as_str) {
        if matches!(
            w,
            "crt" | "crt-list" | "strict-sni" | "generate-certificates" | "ca-sign-file"
        ) {
            return Err(format!("'{w}' is not a crt-list option"));
        }
        match lt.apply(w, opts.get(i + 1).map(String::as_str)) {
            Some(Ok(n)) => i += n,
            Some(Err(e)) => return Err(e),
            None => return Err(format!("'{w}' is not a crt-list option")),
        }
    }
    Ok(lt)
}

/// The configuration of one `crt-list` line with options: the bind line's
/// options, then the line's, over its one certificate.
fn route(
    t: &BindTls,
    g: &TlsGlobal,
    l: &certs::CrtListLine,
    r: &Reader<'_>,
) -> Result<Route, Vec<String>> {
    let mut lt = line_tls(t, &l.opts).map_err(|e| vec![e])?;
    lt.crts = vec![l.crt.clone()];
    // The line was picked by name: its one certificate serves whatever
    // name picked it (`strict-sni` applies to the choice of line).
    lt.strict_sni = false;
    let cfg = server_config(&lt, g, r, None)?;
    let path = with_base(g.crt_base.as_deref(), &l.crt);
    let ck = r.cert(&path).map_err(|e| vec![e])?;
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
        cfg,
    })
}
