//! `show table`, `clear table` and `set table` on the live stick tables,
//! in HAProxy 2.6's words.

use std::sync::Arc;

use crate::state::Shared;
use weir_admin::table::{header, Filter, TableAct, TableCmd};
use weir_stick::{DataType, Entry, Key, KeyType, ReadValue, Table};

/// Runs a table command; `operator`: the session may see and change
/// entries.
pub fn run(sh: &Shared, cmd: &TableCmd, operator: bool) -> String {
    let Some(name) = cmd.table.as_deref() else {
        return sh.tables.all().iter().rev().map(|t| head(t)).collect();
    };
    let Some(t) = sh.tables.named(name) else {
        return "No such table\n".into();
    };
    match cmd.act {
        TableAct::Show => show(t, cmd, operator),
        TableAct::Clear if !operator => String::new(),
        TableAct::Clear => clear(t, cmd),
        TableAct::Set => set(t, cmd),
    }
}

/// The table's heading; expired entries go first, so that `used:`
/// counts the entries listed below it (haproxy's expiry task removes
/// them as they expire).
fn head(t: &Table) -> String {
    t.purge();
    header(t.name(), t.def().key.name(), t.def().size, t.used())
}

/// The column a `data.<name>` names in `t` (HAProxy's type names only).
fn column(t: &Table, name: &str) -> Result<usize, &'static str> {
    let ty = DataType::by_name(name).ok_or("Unknown data type")?;
    t.def()
        .schema
        .find(ty, 0)
        .ok_or("Data type not stored in this table")
}

/// The filters' columns, or the message for the first bad one.
fn columns<'f>(t: &Table, filters: &'f [Filter]) -> Result<Vec<(usize, &'f Filter)>, String> {
    filters
        .iter()
        .enumerate()
        .map(|(i, f)| {
            column(t, &f.data)
                .map(|c| (c, f))
                .map_err(|e| format!("Filter entry #{}: {e}\n", i + 1))
        })
        .collect()
}

fn matches(t: &Table, e: &Entry, cols: &[(usize, &Filter)]) -> bool {
    cols.iter().all(|(c, f)| match t.read(e, *c) {
        Some(ReadValue::Num(n)) => f.op.holds(n as i64, f.value),
        _ => false,
    })
}

fn key_of(t: &Table, text: &str) -> Option<Key> {
    Key::parse(t.def().key, text)
}

/// Entries in key order.
fn sorted(t: &Table) -> Vec<Arc<Entry>> {
    let mut all = t.entries();
    all.sort_by(|a, b| a.key().cmp(b.key()));
    all
}

fn show(t: &Table, cmd: &TableCmd, operator: bool) -> String {
    let cols = match columns(t, &cmd.filters) {
        Ok(c) => c,
        Err(e) => return e,
    };
    let mut out = head(t);
    if !operator {
        out.push_str("# contents not dumped due to insufficient privileges\n");
        return out;
    }
    let lines: Vec<String> = match &cmd.key {
        Some(k) => key_of(t, k)
            .and_then(|k| t.lookup(&k))
            .map(|e| t.dump(&e))
            .into_iter()
            .collect(),
        None => sorted(t)
            .iter()
            .filter(|e| matches(t, e, &cols))
            .map(|e| t.dump(e))
            .collect(),
    };
    for l in lines {
        out.push_str(&l);
        out.push('\n');
    }
    out
}

fn clear(t: &Table, cmd: &TableCmd) -> String {
    let cols = match columns(t, &cmd.filters) {
        Ok(c) => c,
        Err(e) => return e,
    };
    match &cmd.key {
        Some(k) => {
            if let Some(k) = key_of(t, k) {
                t.clear(|e| *e.key() == k);
            }
        }
        None => {
            t.clear(|e| matches(t, e, &cols));
        }
    }
    String::new()
}

fn set(t: &Table, cmd: &TableCmd) -> String {
    if matches!(t.def().key, KeyType::Binary(_)) {
        return "Inserting keys into tables of type other than ip, ipv6, string and integer is not supported\n".into();
    }
    let Some(e) = cmd
        .key
        .as_deref()
        .and_then(|k| key_of(t, k))
        .and_then(|k| t.get_or_create(&k))
    else {
        return String::new();
    };
    t.touch(&e);
    for (name, value) in &cmd.data {
        let c = match column(t, name) {
            Ok(c) => c,
            Err(m) => return format!("{m}\n"),
        };
        let v: i64 = match value.parse() {
            Ok(v)
                if t.def()
                    .schema
                    .column(c)
                    .is_some_and(|c| c.ty != DataType::ServerKey) =>
            {
                v
            }
            _ => return "Require a valid integer value to store\n".into(),
        };
        let long = t.def().schema.column(c).is_some_and(|c| c.ty.is_long());
        let n = if long { v as u64 } else { u64::from(v as u32) };
        t.write(&e, c, ReadValue::Num(n));
    }
    String::new()
}
