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
        super::filter::filters_checked(cfg, p, diags);
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
