//! `txn.http`: the request and response heads of an HTTP stream, read
//! and changed by a script (`req_get_headers`, `req_set_header`,
//! `res_set_status` …).

use super::txn::{headers_table, lock, state_of, TxnState};
use super::LuaRt;
use mlua::{Table, Value};
use weir_proto::h1::Header;

/// Which message a method works on.
#[derive(Clone, Copy)]
enum Msg {
    Req,
    Res,
}

fn headers(st: &mut TxnState, m: Msg) -> Option<&mut Vec<Header>> {
    match m {
        Msg::Req => st.req.as_mut().map(|r| &mut r.headers),
        Msg::Res => st.res.as_mut().map(|r| &mut r.headers),
    }
}

fn changed(st: &mut TxnState, m: Msg) {
    match m {
        Msg::Req => st.req_changed = true,
        Msg::Res => st.res_changed = true,
    }
}

/// A header edit: `del` removes every `name`, then `add` appends one.
fn edit(this: &Table, m: Msg, name: &str, value: Option<&[u8]>, del: bool) -> mlua::Result<()> {
    let st = state_of(this)?;
    let mut g = lock(&st);
    let Some(hs) = headers(&mut g, m) else {
        return Ok(());
    };
    if del {
        hs.retain(|h| !h.is(name));
    }
    if let Some(v) = value {
        // In lower case, as haproxy writes names.
        hs.push(Header::new(&name.to_ascii_lowercase(), v));
    }
    changed(&mut g, m);
    Ok(())
}

use super::bytes_of as bytes;

/// Builds the `txn.http` method table.
pub(super) fn install(rt: &LuaRt) -> mlua::Result<()> {
    let lua = &rt.lua;
    let m = lua.create_table()?;
    for (prefix, msg) in [("req", Msg::Req), ("res", Msg::Res)] {
        m.set(
            format!("{prefix}_get_headers"),
            lua.create_function(move |lua, this: Table| {
                let st = state_of(&this)?;
                let mut g = lock(&st);
                let hs = headers(&mut g, msg).cloned().unwrap_or_default();
                headers_table(lua, &hs)
            })?,
        )?;
        m.set(
            format!("{prefix}_add_header"),
            lua.create_function(move |_, (this, n, v): (Table, String, Value)| {
                edit(&this, msg, &n, Some(&bytes(&v)), false)
            })?,
        )?;
        m.set(
            format!("{prefix}_set_header"),
            lua.create_function(move |_, (this, n, v): (Table, String, Value)| {
                edit(&this, msg, &n, Some(&bytes(&v)), true)
            })?,
        )?;
        m.set(
            format!("{prefix}_del_header"),
            lua.create_function(move |_, (this, n): (Table, String)| {
                edit(&this, msg, &n, None, true)
            })?,
        )?;
        m.set(
            format!("{prefix}_rep_header"),
            lua.create_function(
                move |_, (this, n, re, with): (Table, String, String, String)| {
                    replace(&this, msg, &n, &re, &with)
                },
            )?,
        )?;
    }
    m.set(
        "res_set_status",
        lua.create_function(|_, (this, status, reason): (Table, u16, Option<String>)| {
            let st = state_of(&this)?;
            let mut g = lock(&st);
            if let Some(r) = g.res.as_mut() {
                r.status = status;
                r.reason = reason.unwrap_or_else(|| {
                    weir_proto::h1::status::generated_reason(status).to_string()
                });
                g.res_changed = true;
            }
            Ok(())
        })?,
    )?;
    for part in ["method", "path", "query", "uri"] {
        m.set(
            format!("req_set_{part}"),
            lua.create_function(move |_, (this, v): (Table, String)| set_line(&this, part, v))?,
        )?;
    }
    let meta = lua.create_table()?;
    meta.set("__index", m)?;
    lua.set_named_registry_value("weir.http", meta)
}

/// `req_rep_header`/`res_rep_header`: each value of `name` with `re`
/// replaced by `with` (`\1` … the groups).
fn replace(this: &Table, m: Msg, name: &str, re: &str, with: &str) -> mlua::Result<()> {
    let re = regex::bytes::Regex::new(re).map_err(|e| mlua::Error::RuntimeError(e.to_string()))?;
    let with = with.replace("\\", "$");
    let st = state_of(this)?;
    let mut g = lock(&st);
    let Some(hs) = headers(&mut g, m) else {
        return Ok(());
    };
    for h in hs.iter_mut().filter(|h| h.is(name)) {
        let v = re.replace_all(h.value(), with.as_bytes()).into_owned();
        h.set_value(&v);
    }
    changed(&mut g, m);
    Ok(())
}

/// `req_set_method|path|query|uri`.
fn set_line(this: &Table, part: &str, v: String) -> mlua::Result<()> {
    let st = state_of(this)?;
    let mut g = lock(&st);
    let Some(r) = g.req.as_mut() else {
        return Ok(());
    };
    let (path, query) = match r.uri.split_once('?') {
        Some((p, q)) => (p.to_string(), Some(q.to_string())),
        None => (r.uri.clone(), None),
    };
    match part {
        "method" => r.method = v,
        "uri" => r.uri = v,
        "path" => {
            r.uri = match query {
                Some(q) => format!("{v}?{q}"),
                None => v,
            }
        }
        _ => {
            let q = v.strip_prefix('?').unwrap_or(&v);
            r.uri = if q.is_empty() {
                path
            } else {
                format!("{path}?{q}")
            };
        }
    }
    g.req_changed = true;
    Ok(())
}
