//! `show stat typed|json` and `show info typed|json`: each value with its
//! position, its tags (origin, nature, scope) and its type, as HAProxy 2.6
//! writes them, from the same rows and fields as the plain forms. A column
//! HAProxy never tags in 2.6's output is written with generic tags.

use crate::stat::{Row, COLUMNS};
use crate::typed_meta::{INFO, STAT};

/// The object letter and JSON name of a row (`type` 0, 1, 2, 3).
fn object(r: &Row) -> (char, &'static str, usize) {
    match r.get("type") {
        Some("0") => ('F', "Frontend", 1),
        Some("1") => ('B', "Backend", 2),
        // A listener's columns are tagged as its frontend's.
        Some("3") => ('L', "Listener", 1),
        _ => ('S', "Server", 3),
    }
}

/// Tags and type of column `i` for object column `k` (1 F, 2 B, 3 S); a
/// generic pair when HAProxy gives none.
fn stat_meta(i: usize, k: usize, v: &str) -> (&'static str, &'static str) {
    let (tags, ty) = match (STAT.get(i), k) {
        (Some(m), 1) => (m.1, m.4),
        (Some(m), 2) => (m.2, m.4),
        (Some(m), _) => (m.3, m.4),
        (None, _) => ("", ""),
    };
    match (tags, ty) {
        ("", _) | (_, "") if v.parse::<u64>().is_ok() => ("MGP", "u64"),
        ("", _) | (_, "") => ("SOS", "str"),
        (t, ty) => (t, ty),
    }
}

/// The position HAProxy gives column `i`: the module columns after the
/// CSV's `-` separator are numbered without it.
fn position(i: usize) -> usize {
    match COLUMNS.iter().position(|c| *c == "-") {
        Some(dash) if i > dash => i - 1,
        _ => i,
    }
}

fn ids(r: &Row) -> (&str, &str) {
    (r.get("iid").unwrap_or("0"), r.get("sid").unwrap_or("0"))
}

/// `show stat typed`: one line per set value.
pub fn stat_typed(rows: &[Row]) -> String {
    let mut out = String::new();
    for r in rows {
        let (obj, _, k) = object(r);
        let (iid, sid) = ids(r);
        for (i, col) in COLUMNS.iter().enumerate() {
            let v = r.get(col).unwrap_or("");
            if v.is_empty() {
                continue;
            }
            let (tags, ty) = stat_meta(i, k, v);
            let pos = position(i);
            out.push_str(&format!(
                "{obj}.{iid}.{sid}.{pos}.{col}.1:{tags}:{ty}:{v}\n"
            ));
        }
    }
    out
}

/// A JSON string literal.
fn js(v: &str) -> String {
    let mut out = String::from("\"");
    for c in v.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn tag_names(tags: &str) -> (&'static str, &'static str, &'static str) {
    let b = tags.as_bytes();
    let origin = match b.first() {
        Some(b'M') => "Metric",
        Some(b'S') => "Status",
        Some(b'K') => "Key",
        Some(b'C') => "Config",
        Some(b'P') => "Product",
        _ => "Unknown",
    };
    let nature = match b.get(1) {
        Some(b'A') => "Age",
        Some(b'a') => "Avg",
        Some(b'C') => "Counter",
        Some(b'D') => "Duration",
        Some(b'G') => "Gauge",
        Some(b'L') => "Limit",
        Some(b'M') => "Max",
        Some(b'N') => "Name",
        Some(b'O') => "Output",
        Some(b'R') => "Rate",
        Some(b'T') => "Time",
        _ => "Unknown",
    };
    let scope = match b.get(2) {
        Some(b'C') => "Cluster",
        Some(b'P') => "Process",
        Some(b'S') => "Service",
        Some(b's') => "System",
        _ => "Unknown",
    };
    (origin, nature, scope)
}

/// A JSON value of `ty`: a number when it is one, else a string.
fn json_value(ty: &str, v: &str) -> String {
    let num = ty != "str" && v.parse::<i64>().is_ok();
    let val = if num { v.to_string() } else { js(v) };
    format!("{{\"type\":{},\"value\":{val}}}", js(ty))
}

fn json_field(pos: usize, name: &str, tags: &str, ty: &str, v: &str) -> String {
    let (o, n, s) = tag_names(tags);
    format!(
        "\"field\":{{\"pos\":{pos},\"name\":{}}},\"processNum\":1,\"tags\":{{\"origin\":\"{o}\",\"nature\":\"{n}\",\"scope\":\"{s}\"}},\"value\":{}",
        js(name),
        json_value(ty, v)
    )
}

/// `show stat json`: an array of rows, each an array of its set values.
pub fn stat_json(rows: &[Row]) -> String {
    let mut objs = Vec::new();
    for r in rows {
        let (_, kind, k) = object(r);
        let (iid, sid) = ids(r);
        let mut fields = Vec::new();
        for (i, col) in COLUMNS.iter().enumerate() {
            let v = r.get(col).unwrap_or("");
            if v.is_empty() {
                continue;
            }
            let (tags, ty) = stat_meta(i, k, v);
            fields.push(format!(
                "{{\"objType\":\"{kind}\",\"proxyId\":{iid},\"id\":{sid},{}}}",
                json_field(position(i), col, tags, ty, v)
            ));
        }
        objs.push(format!("[{}]", fields.join(",")));
    }
    format!("[{}]\n", objs.join(",\n"))
}

/// `show info typed`: one line per field `get` has a value for.
pub fn info_typed(get: impl Fn(&str) -> Option<String>) -> String {
    let mut out = String::new();
    for (pos, name, tags, ty) in INFO {
        if let Some(v) = get(name) {
            out.push_str(&format!("{pos}.{name}.1:{tags}:{ty}:{v}\n"));
        }
    }
    out
}

/// `show info json`.
pub fn info_json(get: impl Fn(&str) -> Option<String>) -> String {
    let fields: Vec<String> = INFO
        .iter()
        .filter_map(|(pos, name, tags, ty)| {
            let v = get(name)?;
            Some(format!(
                "{{{}}}",
                json_field(*pos as usize, name, tags, ty, &v)
            ))
        })
        .collect();
    format!("[{}]\n", fields.join(","))
}

#[cfg(test)]
#[path = "typed_tests.rs"]
mod tests;
