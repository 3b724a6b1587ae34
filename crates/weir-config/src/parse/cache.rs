//! `cache` sections (manual §6.2): the size of the cache, of its objects,
//! the longest time an object is kept, and how `Vary` is handled.

use super::State;
use crate::diag::Loc;
use crate::model::Cache;
use crate::units::parse_u32;

/// Opens `cache <name>`.
pub(super) fn open(st: &mut State<'_>, words: &[String], loc: &Loc) -> bool {
    match words.get(1) {
        Some(n) if words.len() == 2 => {
            if st.config.caches.iter().any(|c| c.name == *n) {
                st.diags.alert(loc, format!("Duplicate cache name '{n}'."));
            }
            st.config.caches.push(Cache {
                name: n.clone(),
                loc: loc.clone(),
                total_max_size: 0,
                max_object_size: 0,
                max_age: 60,
                process_vary: false,
                max_secondary_entries: 10,
            });
            true
        }
        _ => {
            st.diags.alert(loc, "'cache' expects exactly one name");
            false
        }
    }
}

/// One line of the current `cache` section.
pub(super) fn line(st: &mut State<'_>, words: &[String], loc: &Loc) {
    let Some(c) = st.config.caches.last_mut() else {
        return;
    };
    let kw = words.first().map_or("", String::as_str);
    let r = match (kw, words.get(1..).unwrap_or_default()) {
        ("total-max-size", [n]) => parse_u32(n, kw).map(|n| c.total_max_size = u64::from(n) << 20),
        ("max-object-size", [n]) => parse_u32(n, kw).map(|n| c.max_object_size = u64::from(n)),
        ("max-age", [n]) => parse_u32(n, kw).map(|n| c.max_age = u64::from(n)),
        ("max-secondary-entries", [n]) => {
            parse_u32(n, kw).map(|n| c.max_secondary_entries = n)
        }
        ("process-vary", [v]) if v == "on" || v == "off" => {
            c.process_vary = v == "on";
            Ok(())
        }
        ("process-vary", _) => Err("'process-vary' expects 'on' or 'off'".into()),
        (
            "total-max-size" | "max-object-size" | "max-age" | "max-secondary-entries",
            _,
        ) => Err(format!("'{kw}' expects a number")),
        _ => Err(format!(
            "unknown keyword '{kw}' in 'cache' section (expects 'total-max-size', 'max-object-size', 'max-age', 'process-vary' or 'max-secondary-entries')"
        )),
    };
    if let Err(e) = r {
        st.diags.alert(loc, e);
    }
}

/// Every `cache-use` and `cache-store` names a `cache` section (haproxy's
/// words when one does not).
pub(super) fn names_checked(cfg: &crate::model::Config, diags: &mut crate::diag::Diagnostics) {
    for p in &cfg.proxies {
        filters_checked(cfg, p, diags);
        let uses = p.http_request.iter().filter_map(|r| match &r.action {
            weir_rules::ReqAction::CacheUse(n) => Some((n, &r.at)),
            _ => None,
        });
        let stores = p.http_response.iter().filter_map(|r| match &r.action {
            weir_rules::ResAction::CacheStore(n) => Some((n, &r.at)),
            _ => None,
        });
        for (name, at) in uses.chain(stores) {
            if cfg.caches.iter().any(|c| c.name == *name) {
                continue;
            }
            let loc = at.as_ref().map_or_else(
                || p.loc.clone(),
                |a| Loc {
                    file: a.file.to_string(),
                    line: a.line as usize,
                },
            );
            diags.alert(&loc, format!("unable to find cache '{name}'"));
        }
    }
}

/// A proxy's `filter` lines, as haproxy checks them: a cache filter names
/// a cache section, an SPOE agent a backend; beside a filter other than
/// the cache and compression (`trace`, `spoe`), the compression and each cache the rules use need their own
/// `filter` line; the compression cannot come before a cache.
fn filters_checked(
    cfg: &crate::model::Config,
    p: &crate::model::Proxy,
    diags: &mut crate::diag::Diagnostics,
) {
    use crate::model::Filter;
    let who = format!("{} '{}'", p.kind.keyword(), p.name);
    let mut compression_at = None;
    for (f, loc) in &p.filters {
        match f {
            Filter::Compression => compression_at = Some(loc),
            Filter::Cache(name) => {
                if !cfg.caches.iter().any(|c| c.name == *name) {
                    diags.alert(
                        loc,
                        format!("{who}: unable to find the cache '{name}' referenced by the filter 'cache'"),
                    );
                }
                if let Some(at) = compression_at {
                    diags.alert(
                        at,
                        format!("{who}: unable to enable the compression filter before the cache '{name}'"),
                    );
                }
            }
            Filter::Trace | Filter::Spoe(_) => {}
        }
    }
    let req_groups = p.http_request.iter().filter_map(|r| match &r.action {
        weir_rules::ReqAction::SendSpoeGroup(id, g) => Some((id, g, &r.at)),
        _ => None,
    });
    let res_groups = p.http_response.iter().filter_map(|r| match &r.action {
        weir_rules::ResAction::SendSpoeGroup(id, g) => Some((id, g, &r.at)),
        _ => None,
    });
    for (id, g, at) in req_groups.chain(res_groups) {
        let loc = at.as_ref().map_or_else(
            || p.loc.clone(),
            |a| Loc {
                file: a.file.to_string(),
                line: a.line as usize,
            },
        );
        match p.spoe.iter().find(|e| e.id == *id) {
            None => diags.alert(&loc, format!("{who}: unable to find SPOE engine '{id}'")),
            Some(e) if !e.agent.groups.contains(g) => diags.alert(
                &loc,
                format!("{who}: unable to find SPOE group '{g}' into SPOE engine '{id}'"),
            ),
            Some(_) => {}
        }
    }
    for e in &p.spoe {
        let b = &e.agent.backend;
        if !cfg
            .proxies
            .iter()
            .any(|x| x.name == *b && x.kind.is_backend())
        {
            diags.alert(
                &e.loc,
                format!(
                    "{who}: unknown backend '{b}' used by SPOE agent '{}' declared at {}",
                    e.agent.name, e.agent.loc
                ),
            );
        }
    }
    if !p
        .filters
        .iter()
        .any(|(f, _)| matches!(f, Filter::Trace | Filter::Spoe(_)))
    {
        return;
    }
    if p.compression != crate::model::Compression::default() && compression_at.is_none() {
        diags.alert(
            &p.loc,
            format!("{who}: require an explicit filter declaration to use HTTP compression"),
        );
    }
    let uses = p.http_request.iter().filter_map(|r| match &r.action {
        weir_rules::ReqAction::CacheUse(n) => Some(n),
        _ => None,
    });
    let stores = p.http_response.iter().filter_map(|r| match &r.action {
        weir_rules::ResAction::CacheStore(n) => Some(n),
        _ => None,
    });
    let mut named: Vec<&String> = uses.chain(stores).collect();
    named.sort();
    named.dedup();
    for name in named {
        if !p
            .filters
            .iter()
            .any(|(f, _)| matches!(f, Filter::Cache(n) if n == name))
        {
            diags.alert(
                &p.loc,
                format!("{who}: require an explicit filter declaration to use the cache '{name}'"),
            );
        }
    }
}
