//! A proxy's `filter` lines (manual §9: `compression`, `cache`, `spoe`,
//! `trace`) and `compression` lines, and the checks of filters haproxy
//! makes once the configuration is read.

use super::State;
use crate::diag::Loc;
use crate::model::Proxy;

/// `filter compression|cache <name>|spoe [engine <name>] config <file>|trace
/// [name <n>] [random-forwarding] [random-parsing] [hexdump] quiet`
/// (haproxy's other filters are refused by name).
pub(super) fn filter(
    st: &mut State<'_>,
    p: &mut Proxy,
    args: &[String],
    loc: &Loc,
) -> Result<(), String> {
    use crate::model::Filter;
    let f = match args.split_first() {
        Some((k, opts)) if k == "spoe" => {
            let (mut engine, mut config) = (None, None);
            let mut it = opts.iter();
            while let Some(o) = it.next() {
                match (o.as_str(), it.next()) {
                    ("engine", Some(e)) => engine = Some(e.as_str()),
                    ("config", Some(c)) => config = Some(c.as_str()),
                    (o, _) => return Err(format!("'filter spoe': '{o}' expects an argument ('engine <name>', 'config <file>')")),
                }
            }
            let config = config.ok_or("'filter spoe': missing config file ('config <file>')")?;
            let e = super::spoe::engine(config, engine, loc, &mut st.diags)?;
            if p.spoe.iter().any(|x| x.id == e.id) {
                return Err(format!("SPOE engine '{}' already used by this proxy", e.id));
            }
            let id = e.id.clone();
            p.spoe.push(e);
            Filter::Spoe(id)
        }
        Some((k, [])) if k == "compression" => {
            if p.filters.iter().any(|(f, _)| *f == Filter::Compression) {
                return Err("a proxy supports only one compression filter".into());
            }
            Filter::Compression
        }
        Some((k, [name])) if k == "cache" => {
            let f = Filter::Cache(name.clone());
            if p.filters.iter().any(|(g, _)| *g == f) {
                return Err(format!(
                    "multiple explicit declarations of the cache filter '{name}'"
                ));
            }
            f
        }
        Some((k, _)) if k == "cache" => return Err("'filter cache' expects a cache name".into()),
        Some((k, opts)) if k == "trace" => {
            let mut quiet = false;
            let mut it = opts.iter();
            while let Some(o) = it.next() {
                match o.as_str() {
                    "name" => {
                        it.next().ok_or("'filter trace': 'name' expects a name")?;
                    }
                    "random-forwarding" | "random-parsing" | "hexdump" => {}
                    "quiet" => quiet = true,
                    o => return Err(format!("'filter trace': unknown option '{o}'")),
                }
            }
            if !quiet {
                return Err("'filter trace' without 'quiet' is not supported by weir (it prints no trace messages)".into());
            }
            Filter::Trace
        }
        Some((k, [name])) if k == "fcgi-app" => {
            return super::fcgi::use_app(p, name, loc);
        }
        Some((k, _)) if k == "fcgi-app" => {
            return Err("'filter fcgi-app' expects the name of an fcgi-app section".into())
        }
        Some((k, _)) if ["spoe", "opentracing", "bwlim-in", "bwlim-out"].contains(&k.as_str()) => {
            return Err(format!("filter '{k}' is not supported by weir yet"));
        }
        Some((k, _)) => {
            return Err(format!(
                "unknown filter '{k}' (expects 'compression', 'cache', 'spoe' or 'trace')"
            ))
        }
        None => return Err("'filter' expects a filter name".into()),
    };
    p.filters.push((f, loc.clone()));
    Ok(())
}

/// `compression algo <a>…|type <t>…|offload`.
pub(super) fn compression(p: &mut Proxy, args: &[String]) -> Result<(), String> {
    let c = &mut p.compression;
    match args.split_first() {
        Some((k, list)) if k == "algo" && !list.is_empty() => {
            c.algos.clear();
            for a in list {
                let algo = crate::model::CompAlgo::parse(a).ok_or_else(|| {
                    format!("'{a}' is not a supported algorithm (expects 'identity', 'gzip', 'deflate' or 'raw-deflate')")
                })?;
                c.algos.push(algo);
            }
        }
        Some((k, list)) if k == "type" && !list.is_empty() => {
            c.types.clear();
            c.types.extend(list.iter().cloned());
        }
        Some((k, [])) if k == "offload" => c.offload = true,
        _ => return Err("expects 'algo', 'type' or 'offload'".into()),
    }
    Ok(())
}

/// A proxy's `filter` lines, as haproxy checks them: a cache filter names
/// a cache section, an SPOE agent a backend; beside a filter other than
/// the cache and compression (`trace`, `spoe`), the compression and each cache the rules use need their own
/// `filter` line; the compression cannot come before a cache.
pub(super) fn filters_checked(
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
