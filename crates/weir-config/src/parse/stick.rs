//! `stick-table` (manual §4.2) and the checks that every table a rule
//! names exists (haproxy's "unable to find table").

use super::State;
use crate::diag::Loc;
use crate::model::{Proxy, StickKind, StickRule, StickTable};
use crate::units::{parse_duration, parse_size};
use weir_stick::data::{parse_store, split_store};
use weir_stick::{KeyType, Schema, StoreSpec, TableDef};

/// A table a proxy's line names (`None`: the proxy's own), and what named
/// it, for the message.
#[derive(Debug, Clone)]
pub(crate) struct TableRef {
    pub proxy: String,
    pub table: Option<String>,
    pub by: String,
    pub loc: Loc,
}

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
fn parse(name: &str, args: &[String], loc: &Loc) -> Result<(StickTable, Vec<String>), String> {
    let mut key = None;
    let mut size = None;
    let mut expire = None;
    let mut nopurge = false;
    let mut srvkey_addr = false;
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
                return Err(
                    "stick-table: 'peers' (table replication) is not supported by weir yet".into(),
                )
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
        schema,
    };
    Ok((
        StickTable {
            def,
            srvkey_addr,
            loc: loc.clone(),
        },
        warnings,
    ))
}

/// The tables a rule's words name: `track-sc* … [table <t>]` and the
/// stick fetches and converters in its expressions.
pub(crate) fn refs_in(proxy: &str, words: &[String], loc: &Loc) -> Vec<TableRef> {
    let mut out = Vec::new();
    let r = |table: Option<String>, by: String| TableRef {
        proxy: proxy.to_string(),
        table,
        by,
        loc: loc.clone(),
    };
    if words.first().is_some_and(|w| w == "stick") {
        let (head, _) = weir_rules::split_cond(words.get(2..).unwrap_or_default());
        let table = match head {
            [_, t, n] if t == "table" => Some(n.clone()),
            _ => None,
        };
        out.push(r(
            table,
            format!("stick {}", words.get(1).map_or("", |w| w.as_str())),
        ));
    }
    for (i, w) in words.iter().enumerate() {
        if let Some(n) = w.strip_prefix("track-sc").filter(|n| n.len() == 1) {
            let table = match (words.get(i + 2), words.get(i + 3)) {
                (Some(t), Some(name)) if t == "table" => Some(name.clone()),
                _ => None,
            };
            out.push(r(table, format!("track-sc{n}")));
        }
        for (name, args) in calls(w) {
            if let Some(Ok(f)) = weir_rules::stick::parse_fetch(&name, &args) {
                let own = !matches!(f.from, weir_rules::stick::From::Slot(_));
                if f.table.is_some() || own {
                    out.push(r(f.table, format!("ACL keyword '{name}'")));
                }
            } else if let Some(Ok(c)) = weir_rules::stick::parse_conv(&name, &args) {
                out.push(r(Some(c.table), format!("conversion keyword '{name}'")));
            }
        }
    }
    out
}

/// The `name(args)` calls and bare names in a word whose names could be
/// stick fetches or converters.
fn calls(w: &str) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    let b = w.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'.';
    let mut i = 0;
    while i < b.len() {
        let starts = b.get(i).copied().is_some_and(ident)
            && (i == 0 || !b.get(i - 1).copied().is_some_and(|c| ident(c) || c == b'-'));
        if !starts {
            i += 1;
            continue;
        }
        let end = (i..b.len())
            .find(|&j| !b.get(j).copied().is_some_and(ident))
            .unwrap_or(b.len());
        let name = w.get(i..end).unwrap_or_default();
        let stick = name.starts_with("sc") || name.starts_with("src_") || name.contains("table");
        let (args, next) = if b.get(end) == Some(&b'(') {
            let close = w.get(end..).and_then(|r| r.find(')')).map(|k| end + k);
            match close {
                Some(c) => (
                    w.get(end + 1..c)
                        .unwrap_or_default()
                        .split(',')
                        .map(|s| s.trim().to_string())
                        .filter(|s| !s.is_empty())
                        .collect(),
                    c + 1,
                ),
                None => (Vec::new(), end),
            }
        } else {
            (Vec::new(), end)
        };
        if stick {
            out.push((name.to_string(), args));
        }
        i = next.max(i + 1);
    }
    out
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
}

/// Checks every table reference against the proxies' tables.
pub(super) fn check_refs(st: &mut State<'_>, refs: &[TableRef]) {
    for r in refs {
        let want = r.table.as_deref().unwrap_or(&r.proxy);
        let found = st
            .config
            .proxies
            .iter()
            .any(|p| p.name == want && p.stick_table.is_some());
        if !found {
            st.diags.alert(
                &r.loc,
                format!(
                    "unable to find table '{want}' referenced by {} in proxy '{}'",
                    r.by, r.proxy
                ),
            );
        }
    }
}
