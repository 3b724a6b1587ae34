//! `stick-table` (manual §4.2) and the checks that every table a rule
//! names exists (haproxy's "unable to find table").

use super::State;
use crate::diag::Loc;
use crate::model::{Proxy, StickKind, StickRule, StickTable};
use crate::units::{parse_duration, parse_size};
use weir_stick::data::{parse_store, split_store};
use weir_stick::{KeyType, Schema, StoreSpec, TableDef};

/// This family's keyword; `Ok(false)` for another family's.
pub(super) fn tables(
    st: &mut State<'_>,
    p: &mut Proxy,
    name: &str,
    args: &[String],
    _negate: bool,
    loc: &Loc,
) -> Result<bool, String> {
    let kind = match name {
        "stick on" => StickKind::On,
        "stick match" => StickKind::Match,
        "stick store-request" => StickKind::StoreRequest,
        "stick store-response" => StickKind::StoreResponse,
        "stick-table" => {
            stick_table(st, p, args, loc)?;
            return Ok(true);
        }
        _ => return Ok(false),
    };
    let (head, cond) = weir_rules::split_cond(args);
    let (key, table) = match head {
        [k] => (k, None),
        [k, t, n] if t == "table" => (k, Some(n.clone())),
        [] => return Err("missing fetch method".into()),
        _ => return Err("expects '<pattern> [table <table>] [{if|unless} <condition>]'".into()),
    };
    p.stick_rules.push(StickRule {
        kind,
        key: weir_rules::Expr::parse(key, &super::http::load)?,
        table,
        cond: super::http::cond(p, cond)?,
        loc: loc.clone(),
    });
    Ok(true)
}

/// `stick-table …`.
fn stick_table(
    st: &mut State<'_>,
    p: &mut Proxy,
    args: &[String],
    loc: &Loc,
) -> Result<(), String> {
    let (table, warnings) = parse(&p.name, args, loc).map_err(|e| format!("{e}."))?;
    for w in warnings {
        st.diags.warn(loc, format!("stick-table: {w}"));
    }
    p.stick_table = Some(table);
    Ok(())
}

fn ms(text: &str) -> Option<u32> {
    parse_duration(text)
        .ok()
        .and_then(|d| u32::try_from(d.as_millis()).ok())
}

/// Parses `stick-table`'s arguments; gives the table and warnings.
pub(super) fn parse(
    name: &str,
    args: &[String],
    loc: &Loc,
) -> Result<(StickTable, Vec<String>), String> {
    let mut key = None;
    let mut size = None;
    let mut expire = None;
    let mut nopurge = false;
    let mut srvkey_addr = false;
    let mut peers = None;
    let mut specs: Vec<StoreSpec> = Vec::new();
    let mut warnings = Vec::new();
    let mut i = 0;
    let arg = |i: usize, what: &str| {
        args.get(i)
            .ok_or_else(|| format!("'stick-table': missing argument after '{what}'"))
    };
    while let Some(w) = args.get(i) {
        match w.as_str() {
            "type" => {
                let rest = args.get(i + 1..).unwrap_or_default();
                let (t, used) = KeyType::parse(rest).map_err(|e| {
                    if rest.is_empty() {
                        "stick-table: missing type".to_string()
                    } else {
                        format!("stick-table: {e}")
                    }
                })?;
                key = Some(t);
                i += used;
            }
            "size" => {
                let v = arg(i + 1, "size")?;
                size = Some(parse_size(v).map_err(|e| format!("stick-table: {e}"))?);
                i += 1;
            }
            "expire" => {
                let v = arg(i + 1, "expire")?;
                let d = parse_duration(v).map_err(|_| {
                    let bad = v.chars().find(|c| !c.is_ascii_digit()).unwrap_or(' ');
                    format!("stick-table: unexpected character '{bad}' in argument of 'expire'")
                })?;
                expire = Some(u32::try_from(d.as_millis()).unwrap_or(u32::MAX));
                i += 1;
            }
            "nopurge" => nopurge = true,
            "srvkey" => {
                srvkey_addr = match arg(i + 1, "srvkey")?.as_str() {
                    "addr" => true,
                    "name" => false,
                    o => return Err(format!("stick-table: unknown srvkey '{o}'")),
                };
                i += 1;
            }
            "peers" => {
                peers = Some(arg(i + 1, "peers")?.clone());
                i += 1;
            }
            "store" => {
                for item in split_store(arg(i + 1, "store")?) {
                    let spec = parse_store(item, &ms).map_err(|e| {
                        let n = item.split('(').next().unwrap_or(item);
                        if e.starts_with("unknown data type") {
                            format!("stick-table: unknown store option '{n}'")
                        } else if !item.contains('(') {
                            format!("stick-table: missing argument to store option '{n}'")
                        } else {
                            format!("stick-table: {e}")
                        }
                    })?;
                    if specs.iter().any(|s| s.ty == spec.ty) {
                        warnings.push(format!(
                            "store option '{}' already enabled, ignored",
                            spec.ty.name()
                        ));
                    } else {
                        specs.push(spec);
                    }
                }
                i += 1;
            }
            o => return Err(format!("stick-table: unknown argument '{o}'")),
        }
        i += 1;
    }
    let size = size.ok_or("stick-table: missing size")?;
    let key = key.ok_or("stick-table: missing type")?;
    let schema = Schema::new(&specs).map_err(|e| {
        if e.contains("cannot be stored beside") {
            let arr = e.split('\'').nth(1).unwrap_or("gpc");
            format!("stick-table: simultaneous usage of '{arr}' and '{arr}[0/1]' in a same table is not permitted as '{arr}' overrides '{arr}[0/1]'")
        } else {
            format!("stick-table: {e}")
        }
    })?;
    let def = TableDef {
        name: name.to_string(),
        key,
        size: usize::try_from(size).unwrap_or(usize::MAX),
        expire,
        nopurge,
        srvkey_addr,
        schema,
    };
    Ok((
        StickTable {
            def,
            peers,
            loc: loc.clone(),
        },
        warnings,
    ))
}

/// The tables `stick` rules use store the server (`server_id`, and its
/// name or address as `server_key`), as HAProxy enables them.
pub(super) fn store_servers(st: &mut State<'_>) {
    let used: Vec<String> = st
        .config
        .proxies
        .iter()
        .flat_map(|p| {
            p.stick_rules
                .iter()
                .map(move |r| r.table.clone().unwrap_or_else(|| p.name.clone()))
        })
        .collect();
    for p in &mut st.config.proxies {
        if let Some(t) = p.stick_table.as_mut().filter(|_| used.contains(&p.name)) {
            t.def.schema = t.def.schema.with_server(true);
        }
    }
    for t in st.config.peers.iter_mut().flat_map(|s| &mut s.tables) {
        if used.contains(&t.def.name) {
            t.def.schema = t.def.schema.with_server(true);
        }
    }
}
