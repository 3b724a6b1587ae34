//! The stick-table side of the rules (manual §7.3.3 and §4.2): the
//! `sc_*`, `sc0_*`…, `src_*` and `table_*` fetches, the `in_table` and
//! `table_*` converters, the `track-sc*` and `sc-*` actions, and how a
//! sample becomes a table's key. The runtime gives the tables and the
//! stream's tracked entries through [`Ctx`].

use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;

use weir_stick::{DataType, Entry, Key, KeyType, Table};

use crate::sample::{Ctx, Expr, Sample};

/// How many counters a stream tracks (`track-sc0` to `track-sc2`).
pub const SLOTS: usize = 3;

/// What a fetch or converter reads from an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum What {
    /// A stored count or rate (`conn_cnt`, `http_req_rate`, `server_id` …).
    Data(DataType),
    /// `kbytes_in`, `kbytes_out`: the byte counts in kilobytes.
    Kbytes {
        out: bool,
    },
    GetGpc(usize),
    GpcRate(usize),
    GetGpt(usize),
    /// Increments the counter, and gives it.
    IncGpc(usize),
    /// Clears the counter, and gives its old value.
    ClrGpc(usize),
    /// `sc_tracked`: whether the counter is tracked.
    Tracked,
    /// How many streams track the entry.
    Trackers,
    /// `src_updt_conn_cnt`: counts a connection, and gives the count.
    UpdtConnCnt,
    /// `table_expire`, `table_idle`: milliseconds to expiry, since the
    /// last touch.
    Expire,
    Idle,
    /// `in_table`.
    InTable,
}

/// Where a stick fetch finds its entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum From {
    /// A tracked counter (`sc_*(<n>)`, `sc<n>_*`).
    Slot(usize),
    /// The client's source address (`src_*`).
    Src,
    /// No entry: a figure of the table (`table_avl`, `table_cnt`).
    Table(TableFigure),
}

/// A stick fetch: where, what, and the table named (`None`: the tracked
/// entry's table, or the current proxy's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StickFetch {
    pub from: From,
    pub what: What,
    pub table: Option<String>,
}

/// `table_avl`, `table_cnt`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableFigure {
    Avl,
    Cnt,
}

/// A stick converter: the sample is a key of `table`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StickConv {
    pub what: What,
    pub table: String,
    /// `table_expire`/`table_idle`'s default for a missing key.
    pub default: Option<i64>,
}

/// What names after a prefix mean (`conn_rate` in `src_conn_rate`).
fn what_of(rest: &str, idx: Option<usize>) -> Option<What> {
    use DataType::*;
    Some(match (rest, idx) {
        ("get_gpc", Some(i)) => What::GetGpc(i),
        ("gpc_rate", Some(i)) => What::GpcRate(i),
        ("get_gpt", Some(i)) => What::GetGpt(i),
        ("inc_gpc", Some(i)) => What::IncGpc(i),
        ("clr_gpc", Some(i)) => What::ClrGpc(i),
        (_, Some(_)) => return None,
        ("get_gpc0", _) => What::GetGpc(0),
        ("get_gpc1", _) => What::GetGpc(1),
        ("gpc0_rate", _) => What::GpcRate(0),
        ("gpc1_rate", _) => What::GpcRate(1),
        ("get_gpt0", _) => What::GetGpt(0),
        ("inc_gpc0", _) => What::IncGpc(0),
        ("inc_gpc1", _) => What::IncGpc(1),
        ("clr_gpc0", _) => What::ClrGpc(0),
        ("clr_gpc1", _) => What::ClrGpc(1),
        ("kbytes_in", _) => What::Kbytes { out: false },
        ("kbytes_out", _) => What::Kbytes { out: true },
        ("tracked", _) => What::Tracked,
        ("trackers", _) => What::Trackers,
        ("updt_conn_cnt", _) => What::UpdtConnCnt,
        (name, _) => {
            let t = DataType::by_name(name)?;
            match t {
                ConnCnt | ConnCur | ConnRate | SessCnt | SessRate | HttpReqCnt | HttpReqRate
                | HttpErrCnt | HttpErrRate | HttpFailCnt | HttpFailRate | BytesInRate
                | BytesOutRate => What::Data(t),
                _ => return None,
            }
        }
    })
}

/// Whether `rest` takes an element index first (`get_gpc(<idx>,…)`).
fn indexed(rest: &str) -> bool {
    matches!(
        rest,
        "get_gpc" | "gpc_rate" | "get_gpt" | "inc_gpc" | "clr_gpc"
    )
}

fn idx_arg(name: &str, a: &[String]) -> Result<usize, String> {
    a.first()
        .and_then(|s| s.parse::<usize>().ok())
        .filter(|&i| i < weir_stick::data::MAX_ARRAY)
        .ok_or_else(|| format!("fetch method '{name}' expects an element index first"))
}

fn slot_arg(name: &str, s: Option<&String>) -> Result<usize, String> {
    s.and_then(|s| s.parse::<usize>().ok())
        .filter(|&n| n < SLOTS)
        .ok_or_else(|| {
            format!(
                "fetch method '{name}' expects a counter number between 0 and {}",
                SLOTS - 1
            )
        })
}

fn table_arg(a: &[String], at: usize) -> Option<String> {
    a.get(at).filter(|t| !t.is_empty()).cloned()
}

/// The fetch `name(a)` of this module, or `None` when `name` is not one.
pub fn parse_fetch(name: &str, a: &[String]) -> Option<Result<StickFetch, String>> {
    let figure = match name {
        "table_avl" => Some(TableFigure::Avl),
        "table_cnt" => Some(TableFigure::Cnt),
        _ => None,
    };
    if let Some(fig) = figure {
        return Some(Ok(StickFetch {
            from: From::Table(fig),
            what: What::Data(DataType::ConnCnt),
            table: table_arg(a, 0),
        }));
    }
    let (from, rest) = if let Some(r) = name.strip_prefix("sc_") {
        (None, r)
    } else if let Some(r) = name.strip_prefix("src_") {
        (Some(From::Src), r)
    } else {
        let (n, r) = name.strip_prefix("sc")?.split_once('_')?;
        let n: usize = n.parse().ok().filter(|&n| n < SLOTS)?;
        (Some(From::Slot(n)), r)
    };
    let idx = indexed(rest);
    what_of(rest, idx.then_some(0))?;
    Some((|| {
        let i = if idx { idx_arg(name, a)? } else { 0 };
        let what = what_of(rest, idx.then_some(i))
            .ok_or_else(|| format!("unknown fetch method '{name}'"))?;
        let skip = usize::from(idx);
        let (from, table) = match from {
            Some(From::Src) if what == What::Tracked || what == What::Trackers => {
                return Err(format!("unknown fetch method '{name}'"))
            }
            Some(f) => (f, table_arg(a, skip)),
            None => (
                From::Slot(slot_arg(name, a.get(skip))?),
                table_arg(a, skip + 1),
            ),
        };
        if what == What::UpdtConnCnt && from != From::Src {
            return Err(format!("unknown fetch method '{name}'"));
        }
        Ok(StickFetch { from, what, table })
    })())
}

/// The converter `name(a)` of this module, or `None` when `name` is not
/// one.
pub fn parse_conv(name: &str, a: &[String]) -> Option<Result<StickConv, String>> {
    let rest = if name == "in_table" {
        "in_table"
    } else {
        name.strip_prefix("table_")?
    };
    let (what, skip) = match rest {
        "in_table" => (What::InTable, 0),
        "gpc" | "gpc_rate" | "gpt" => {
            let i = match idx_arg(name, a) {
                Ok(i) => i,
                Err(e) => return Some(Err(e.replace("fetch method", "converter"))),
            };
            let w = match rest {
                "gpc" => What::GetGpc(i),
                "gpc_rate" => What::GpcRate(i),
                _ => What::GetGpt(i),
            };
            (w, 1)
        }
        "gpc0" => (What::GetGpc(0), 0),
        "gpc1" => (What::GetGpc(1), 0),
        "gpc0_rate" => (What::GpcRate(0), 0),
        "gpc1_rate" => (What::GpcRate(1), 0),
        "gpt0" => (What::GetGpt(0), 0),
        "server_id" => (What::Data(DataType::ServerId), 0),
        "expire" => (What::Expire, 0),
        "idle" => (What::Idle, 0),
        "trackers" => (What::Trackers, 0),
        other => match what_of(other, None) {
            Some(w @ (What::Data(_) | What::Kbytes { .. })) => (w, 0),
            _ => return None,
        },
    };
    Some((|| {
        let table =
            table_arg(a, skip).ok_or_else(|| format!("converter '{name}' expects a table name"))?;
        let default = match (what, a.get(skip + 1)) {
            (What::Expire | What::Idle, Some(d)) => Some(
                d.parse()
                    .map_err(|_| format!("converter '{name}': invalid default '{d}'"))?,
            ),
            (_, None) => None,
            (_, Some(x)) => return Err(format!("converter '{name}': unexpected argument '{x}'")),
        };
        Ok(StickConv {
            what,
            table,
            default,
        })
    })())
}

/// Whether a stick fetch or converter gives a boolean.
pub fn is_bool(w: What) -> bool {
    matches!(w, What::Tracked | What::InTable)
}

/// The key `s` makes in a table of `ty`, as haproxy casts it (`None`:
/// it does not fit, no entry is made).
pub fn key_of(ty: KeyType, s: &Sample) -> Option<Key> {
    Some(match ty {
        KeyType::Ip => match s {
            Sample::Ip(IpAddr::V4(a)) => Key::V4(*a),
            Sample::Ip(IpAddr::V6(a)) => Key::V4(a.to_ipv4_mapped()?),
            Sample::Int(n) => Key::V4(Ipv4Addr::from(*n as u32)),
            Sample::Str(_) | Sample::Bin(_) => Key::V4(parsed(s)?),
            Sample::Bool(_) => return None,
        },
        KeyType::Ipv6 => match s {
            Sample::Ip(IpAddr::V4(a)) => Key::V6(a.to_ipv6_mapped()),
            Sample::Ip(IpAddr::V6(a)) => Key::V6(*a),
            Sample::Int(n) => Key::V6(Ipv4Addr::from(*n as u32).to_ipv6_mapped()),
            Sample::Str(_) | Sample::Bin(_) => Key::V6(parsed(s)?),
            Sample::Bool(_) => return None,
        },
        KeyType::Integer => match s {
            Sample::Ip(IpAddr::V4(a)) => Key::Int(u32::from(*a)),
            Sample::Ip(IpAddr::V6(_)) => return None,
            Sample::Str(_) | Sample::Bin(_) => Key::Int(leading_int(&s.to_bytes())? as u32),
            _ => Key::Int(s.to_int()? as u32),
        },
        KeyType::String(_) => Key::string(ty, &s.to_bytes()),
        KeyType::Binary(_) => Key::binary(ty, &s.to_bin()),
    })
}

/// A text sample read as an address.
fn parsed<T: std::str::FromStr>(s: &Sample) -> Option<T> {
    std::str::from_utf8(&s.to_bytes()).ok()?.trim().parse().ok()
}

/// A string's leading integer, as haproxy's string-to-integer cast reads
/// it (an optional sign, then digits; nothing without a digit).
fn leading_int(b: &[u8]) -> Option<i64> {
    let (neg, digits) = match b.first() {
        Some(b'-') => (true, b.get(1..)?),
        Some(b'+') => (false, b.get(1..)?),
        _ => (false, b),
    };
    let n = digits.iter().take_while(|c| c.is_ascii_digit()).count();
    let v: i64 = std::str::from_utf8(digits.get(..n)?).ok()?.parse().ok()?;
    Some(if neg { -v } else { v })
}

/// What `what` reads from `e` of `t` (`None`: not stored there).
fn read(t: &Table, e: &Entry, what: What) -> Option<Sample> {
    use weir_stick::ReadValue;
    let s = &t.def().schema;
    let num = |at: Option<usize>| match t.read(e, at?)? {
        ReadValue::Num(n) => Some(Sample::Int(n as i64)),
        ReadValue::Text(_) => None,
    };
    match what {
        What::Data(ty) => num(s.find(ty, 0)),
        What::Kbytes { out } => {
            let ty = if out {
                DataType::BytesOutCnt
            } else {
                DataType::BytesInCnt
            };
            num(s.find(ty, 0)).map(|v| Sample::Int(v.to_int().unwrap_or(0) >> 10))
        }
        What::GetGpc(i) => num(s.gpc(i)),
        What::GpcRate(i) => num(s.gpc_rate(i)),
        What::GetGpt(i) => num(s.gpt(i)),
        What::IncGpc(i) => {
            let known = s.gpc(i).is_some() || s.gpc_rate(i).is_some();
            known.then(|| Sample::Int(t.inc_gpc(e, i).unwrap_or(0) as i64))
        }
        What::ClrGpc(i) => t.clr_gpc(e, i).map(|v| Sample::Int(v as i64)),
        What::Trackers => Some(Sample::Int(i64::from(e.refs()))),
        What::UpdtConnCnt => {
            t.count(e, weir_stick::Event::Conn);
            num(s.find(DataType::ConnCnt, 0))
        }
        What::Expire => t.expire_in(e).map(|v| Sample::Int(i64::from(v))),
        What::Idle => Some(Sample::Int(i64::from(t.idle(e)))),
        What::Tracked | What::InTable => Some(Sample::Bool(true)),
    }
}

/// What a missing entry gives: `0` (haproxy's), `false` for booleans.
fn missing(what: What) -> Sample {
    if is_bool(what) {
        Sample::Bool(false)
    } else {
        Sample::Int(0)
    }
}

/// Whether `what` makes the entry when it is missing (`src_inc_gpc0`,
/// `src_clr_gpc0`, `src_updt_conn_cnt`).
fn creates(what: What) -> bool {
    matches!(what, What::IncGpc(_) | What::ClrGpc(_) | What::UpdtConnCnt)
}

/// Evaluates a stick fetch.
pub fn fetch(f: &StickFetch, ctx: &dyn Ctx) -> Option<Sample> {
    match f.from {
        From::Table(fig) => {
            let t = ctx.stick_table(f.table.as_deref())?;
            let used = t.used() as i64;
            Some(Sample::Int(match fig {
                TableFigure::Cnt => used,
                TableFigure::Avl => (t.def().size as i64 - used).max(0),
            }))
        }
        From::Slot(n) => {
            let Some(tr) = ctx.tracked(n) else {
                return (f.what == What::Tracked).then_some(Sample::Bool(false));
            };
            let te = tr.entry();
            match f.table.as_deref() {
                None => read(tr.table(), te, f.what),
                Some(name) => {
                    let t = ctx.stick_table(Some(name))?;
                    match t.lookup(te.key()) {
                        Some(e) => read(t, &e, f.what),
                        None => Some(missing(f.what)),
                    }
                }
            }
        }
        From::Src => {
            let t = ctx.stick_table(f.table.as_deref())?;
            let key = key_of(t.def().key, &Sample::Ip(ctx.src()?.ip()))?;
            let e = if creates(f.what) {
                t.get_or_create(&key)
            } else {
                t.lookup(&key)
            };
            match e {
                Some(e) => read(t, &e, f.what),
                None => Some(missing(f.what)),
            }
        }
    }
}

/// Applies a stick converter to `s`.
pub fn convert(c: &StickConv, s: &Sample, ctx: &dyn Ctx) -> Option<Sample> {
    let t = ctx.stick_table(Some(&c.table))?;
    let key = key_of(t.def().key, s)?;
    match t.lookup(&key) {
        Some(e) => read(t, &e, c.what),
        None => match c.what {
            What::Expire | What::Idle => c.default.map(Sample::Int),
            w => Some(missing(w)),
        },
    }
}

/// A stick-table action of `tcp-request`, `http-request` or
/// `http-response` rules.
#[derive(Debug, Clone, PartialEq)]
pub enum StickAction {
    /// `track-sc<slot> <key> [table <t>]`.
    Track {
        slot: usize,
        key: Expr,
        table: Option<String>,
    },
    /// `sc-inc-gpc(<idx>,<slot>)`, `sc-inc-gpc0(<slot>)` …
    IncGpc { idx: usize, slot: usize },
    /// `sc-add-gpc(<idx>,<slot>) <expr>`.
    AddGpc {
        idx: usize,
        slot: usize,
        value: Expr,
    },
    /// `sc-set-gpt(<idx>,<slot>) <expr>`, `sc-set-gpt0(<slot>) <expr>`.
    SetGpt {
        idx: usize,
        slot: usize,
        value: Expr,
    },
}

/// The action `name args` of this module, or `None` when `name` is not
/// one. `expr` parses a sample expression.
pub fn parse_action(
    name: &str,
    args: &[String],
    expr: &dyn Fn(&str) -> Result<Expr, String>,
) -> Option<Result<StickAction, String>> {
    if let Some(n) = name.strip_prefix("track-sc") {
        let slot = n.parse::<usize>().ok().filter(|&n| n < SLOTS);
        return Some((|| {
            let slot = slot.ok_or_else(|| {
                format!(
                    "'{name}': track-sc number exceeding {} (the counters are track-sc0 to track-sc{})",
                    SLOTS - 1,
                    SLOTS - 1
                )
            })?;
            let (key, rest) = args
                .split_first()
                .ok_or_else(|| format!("'{name}' expects a sample expression"))?;
            let table = match rest {
                [] => None,
                [t, n] if t == "table" => Some(n.clone()),
                _ => return Err(format!("'{name}' expects '<key> [table <table>]'")),
            };
            Ok(StickAction::Track {
                slot,
                key: expr(key)?,
                table,
            })
        })());
    }
    let (base, inner) = match name.split_once('(') {
        Some((b, r)) => (b, r.strip_suffix(')').unwrap_or(r)),
        None => (name, ""),
    };
    let (kind, legacy) = match base {
        "sc-inc-gpc" | "sc-add-gpc" | "sc-set-gpt" => (base, None),
        "sc-inc-gpc0" => ("sc-inc-gpc", Some(0)),
        "sc-inc-gpc1" => ("sc-inc-gpc", Some(1)),
        "sc-set-gpt0" => ("sc-set-gpt", Some(0)),
        _ => return None,
    };
    Some((|| {
        let nums: Vec<Option<usize>> = inner.split(',').map(|s| s.trim().parse().ok()).collect();
        let (idx, slot) = match (legacy, nums.as_slice()) {
            (Some(i), [Some(s)]) => (i, *s),
            (None, [Some(i), Some(s)]) => (*i, *s),
            _ => {
                return Err(format!(
                    "'{base}' expects {}",
                    if legacy.is_some() {
                        "'(<sc-id>)'"
                    } else {
                        "'(<idx>,<sc-id>)'"
                    }
                ))
            }
        };
        if slot >= SLOTS {
            return Err(format!("'{base}': invalid stick counter '{slot}'"));
        }
        if idx >= weir_stick::data::MAX_ARRAY {
            return Err(format!("'{base}': invalid index '{idx}'"));
        }
        let value = || -> Result<Expr, String> {
            match args {
                [v] => match v.parse::<i64>() {
                    Ok(n) => Ok(Expr {
                        fetch: crate::sample::Fetch::Int(n),
                        convs: Vec::new(),
                    }),
                    Err(_) => expr(v),
                },
                _ => Err(format!("'{base}' expects a value")),
            }
        };
        Ok(match kind {
            "sc-inc-gpc" if args.is_empty() => StickAction::IncGpc { idx, slot },
            "sc-inc-gpc" => return Err(format!("'{base}' takes no value")),
            "sc-add-gpc" => StickAction::AddGpc {
                idx,
                slot,
                value: value()?,
            },
            _ => StickAction::SetGpt {
                idx,
                slot,
                value: value()?,
            },
        })
    })())
}

/// A `track-sc*` the rules decided: the runtime starts it on the
/// stream's or the session's counters.
#[derive(Debug)]
pub struct TrackReq {
    pub slot: usize,
    pub table: Arc<Table>,
    pub key: Key,
}

/// Runs a stick action on `ctx`: the `sc-*` ones change the tracked
/// entries at once; a `track-sc*` whose slot is free and whose key fits
/// the table gives what to track.
pub fn act(a: &StickAction, ctx: &dyn Ctx) -> Option<TrackReq> {
    let value = |e: &Expr| {
        e.eval(ctx)
            .and_then(|s| s.to_int())
            .map(|v| v.max(0) as u64)
    };
    match a {
        StickAction::Track { slot, key, table } => {
            if ctx.tracked(*slot).is_some() {
                return None;
            }
            let table = ctx.stick_table(table.as_deref())?;
            let key = key_of(table.def().key, &key.eval(ctx)?)?;
            Some(TrackReq {
                slot: *slot,
                table: table.clone(),
                key,
            })
        }
        StickAction::IncGpc { idx, slot } => {
            let t = ctx.tracked(*slot)?;
            t.table().inc_gpc(t.entry(), *idx);
            None
        }
        StickAction::AddGpc {
            idx,
            slot,
            value: v,
        } => {
            let t = ctx.tracked(*slot)?;
            t.table().add_gpc(t.entry(), *idx, value(v)?);
            None
        }
        StickAction::SetGpt {
            idx,
            slot,
            value: v,
        } => {
            let t = ctx.tracked(*slot)?;
            t.table().set_gpt(t.entry(), *idx, value(v)?);
            None
        }
    }
}

#[cfg(test)]
#[path = "stick_tests.rs"]
mod tests;
