//! The `txn` object of actions and fetches: the stream's fetches (`f`,
//! `sf`), converters (`c`, `sc`), HTTP messages (`http`), variables and
//! private data, over a [`TxnState`] the call owns while it runs.

use super::LuaRt;
use crate::http::rules::{ExCtx, Vars};
use crate::ids::FrontendId;
use crate::state::Shared;
use mlua::{AnyUserData, Function, Lua, MultiValue, Table, UserData, Value};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use weir_proto::h1::{Header, RequestHead, ResponseHead};
use weir_rules::Sample;

/// What a Lua call sees of a stream and may change; handed back to the
/// caller when the call ends.
#[derive(Default)]
pub struct TxnState {
    pub fe: Option<FrontendId>,
    /// The backend chosen (an index of `Shared::backends`).
    pub be: Option<usize>,
    pub src: Option<SocketAddr>,
    pub dst: Option<SocketAddr>,
    pub req: Option<RequestHead>,
    pub res: Option<ResponseHead>,
    pub srv: Option<String>,
    pub vars: Option<Vars>,
    pub body: Option<Vec<u8>>,
    /// A message was changed (the caller marks it dirty).
    pub req_changed: bool,
    pub res_changed: bool,
    /// `txn:done()`: the stream ends here.
    pub done: bool,
    /// `txn:done(reply)`: the answer's status and bytes.
    pub reply: Option<(u16, Vec<u8>)>,
    /// A service's answer and the body it reads.
    pub applet: super::AppletIo,
}

/// `txn:set_priv()`'s value, kept with the exchange's variables.
pub struct Priv(pub mlua::RegistryKey);

impl TxnState {
    /// Evaluates `f` with the view of the stream this state holds.
    pub fn with_ctx<R>(&self, sh: &Shared, f: impl FnOnce(&ExCtx<'_>) -> R) -> R {
        let ctx = ExCtx {
            be: self.be.and_then(|i| sh.backends.get(i)).map(|b| &**b),
            src: self.src,
            dst: self.dst,
            req: self.req.as_ref(),
            res: self.res.as_ref(),
            srv: self.srv.as_deref(),
            vars: self.vars.as_ref(),
            body: self.body.as_deref(),
            ..ExCtx::bare(sh, self.fe.unwrap_or(FrontendId::new(0)))
        };
        f(&ctx)
    }

    /// The state of a view (a copy of what it holds).
    pub fn of(ctx: &ExCtx<'_>) -> TxnState {
        TxnState {
            fe: Some(ctx.fe_idx),
            be: ctx
                .be
                .and_then(|b| ctx.sh.backends.iter().position(|x| std::ptr::eq(&**x, b))),
            src: ctx.src,
            dst: ctx.dst,
            req: ctx.req.cloned(),
            res: ctx.res.cloned(),
            srv: ctx.srv.map(str::to_string),
            vars: ctx.vars.cloned(),
            body: ctx.body.map(<[u8]>::to_vec),
            ..TxnState::default()
        }
    }
}

/// The handle a `txn` table keeps on its state.
pub(super) struct StateRef(pub Arc<Mutex<TxnState>>);

impl UserData for StateRef {}

/// What a call may do: a fetch or converter only reads.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Fetch,
    Action,
}

const STATE: &str = "__weir_state";

/// The state behind `t` (a `txn`, `txn.f`, `txn.http` … table).
pub(super) fn state_of(t: &Table) -> mlua::Result<Arc<Mutex<TxnState>>> {
    let ud: AnyUserData = t.raw_get(STATE)?;
    let r = ud.borrow::<StateRef>()?;
    Ok(r.0.clone())
}

pub(super) fn lock(s: &Arc<Mutex<TxnState>>) -> std::sync::MutexGuard<'_, TxnState> {
    s.lock().unwrap_or_else(|e| e.into_inner())
}

/// A new `txn` table over `st`.
pub(super) fn object(rt: &LuaRt, st: Arc<Mutex<TxnState>>, kind: Kind) -> mlua::Result<Table> {
    let lua = &rt.lua;
    let ud = lua.create_userdata(StateRef(st))?;
    let txn = lua.create_table()?;
    txn.raw_set(STATE, ud.clone())?;
    for (field, mt) in [
        ("f", "weir.f"),
        ("sf", "weir.sf"),
        ("c", "weir.c"),
        ("sc", "weir.sc"),
        ("http", "weir.http"),
    ] {
        let t = lua.create_table()?;
        t.raw_set(STATE, ud.clone())?;
        t.set_metatable(Some(lua.named_registry_value::<Table>(mt)?))?;
        txn.raw_set(field, t)?;
    }
    let _ = kind;
    txn.set_metatable(Some(lua.named_registry_value::<Table>("weir.txn")?))?;
    Ok(txn)
}

/// Builds the shared method tables (`txn`, `f`, `sf`, `c`, `sc`, `http`)
/// once, in the registry.
pub(super) fn install(rt: &LuaRt) -> mlua::Result<()> {
    let lua = &rt.lua;
    let sh = rt.sh.clone();
    let shared = move || sh.get().and_then(std::sync::Weak::upgrade);
    // `f`/`sf`: any fetch by name (`req_hdr` is `req.hdr`).
    for (mt, as_string) in [("weir.f", false), ("weir.sf", true)] {
        let shared = shared.clone();
        let maker = lua.create_function(move |lua, (cache, name): (Table, String)| {
            let shared = shared.clone();
            let n = name.clone();
            let f = lua.create_function(move |lua, (this, args): (Table, MultiValue)| {
                let st = state_of(&this)?;
                let Some(sh) = shared() else {
                    return Ok(Value::Nil);
                };
                let args = strings(&args);
                let v = lock(&st).with_ctx(&sh, |ctx| fetch_by_name(&n, &args, ctx));
                out(lua, v, as_string)
            })?;
            cache.raw_set(name, f.clone())?;
            Ok(f)
        })?;
        lazy_methods(lua, mt, maker)?;
    }
    // `c`/`sc`: any converter by name, on its first argument.
    for (mt, as_string) in [("weir.c", false), ("weir.sc", true)] {
        let shared = shared.clone();
        let maker = lua.create_function(move |lua, (cache, name): (Table, String)| {
            let shared = shared.clone();
            let n = name.clone();
            let f = lua.create_function(
                move |lua, (this, input, args): (Table, Value, MultiValue)| {
                    let st = state_of(&this)?;
                    let Some(sh) = shared() else {
                        return Ok(Value::Nil);
                    };
                    let Some(input) = super::to_sample(&input) else {
                        return out(lua, None, as_string);
                    };
                    let args = strings(&args);
                    let v = lock(&st).with_ctx(&sh, |ctx| convert_by_name(&n, input, &args, ctx));
                    out(lua, v, as_string)
                },
            )?;
            cache.raw_set(name, f.clone())?;
            Ok(f)
        })?;
        lazy_methods(lua, mt, maker)?;
    }
    install_txn_methods(rt)?;
    super::applet::install(rt)?;
    super::http::install(rt)
}

/// A metatable `mt` whose methods are made on first use by `maker(cache,
/// name)` and kept.
fn lazy_methods(lua: &Lua, mt: &str, maker: Function) -> mlua::Result<()> {
    let cache = lua.create_table()?;
    let cache_mt = lua.create_table()?;
    cache_mt.set("__index", maker)?;
    cache.set_metatable(Some(cache_mt))?;
    let meta = lua.create_table()?;
    meta.set("__index", cache)?;
    lua.set_named_registry_value(mt, meta)
}

fn strings(args: &MultiValue) -> Vec<String> {
    args.iter()
        .map(|v| match v {
            Value::String(s) => s.to_string_lossy(),
            Value::Integer(i) => i.to_string(),
            Value::Number(n) => n.to_string(),
            Value::Boolean(b) => b.to_string(),
            _ => String::new(),
        })
        .collect()
}

fn out(lua: &Lua, v: Option<Sample>, as_string: bool) -> mlua::Result<Value> {
    match (v, as_string) {
        (None, false) => Ok(Value::Nil),
        (None, true) => Ok(Value::String(lua.create_string("")?)),
        (Some(v), false) => super::from_sample(lua, &v),
        (Some(v), true) => Ok(Value::String(lua.create_string(v.to_bytes())?)),
    }
}

/// The fetch a method name spells: as written, then with its first or
/// every `_` read as `.` (`req_hdr` → `req.hdr`).
fn fetch_by_name(name: &str, args: &[String], ctx: &dyn weir_rules::Ctx) -> Option<Sample> {
    let call = |n: &str| {
        if args.is_empty() {
            n.to_string()
        } else {
            format!("{n}({})", args.join(","))
        }
    };
    let candidates = [
        name.to_string(),
        name.replacen('_', ".", 1),
        name.replace('_', "."),
    ];
    let expr = candidates
        .iter()
        .find_map(|n| weir_rules::Expr::parse(&call(n), &|_| Err("no files".into())).ok())?;
    expr.eval(ctx)
}

fn convert_by_name(
    name: &str,
    input: Sample,
    args: &[String],
    ctx: &dyn weir_rules::Ctx,
) -> Option<Sample> {
    let text = if args.is_empty() {
        format!("str(x),{name}")
    } else {
        format!("str(x),{name}({})", args.join(","))
    };
    let expr = weir_rules::Expr::parse(&text, &|_| Err("no files".into())).ok()?;
    expr.convs_on(input, ctx)
}

/// The `txn` methods: variables, private data, logs, `done`.
fn install_txn_methods(rt: &LuaRt) -> mlua::Result<()> {
    let lua = &rt.lua;
    let m = lua.create_table()?;
    let known = rt.proc_vars.clone();
    m.set(
        "set_var",
        lua.create_function(
            move |_, (this, name, v, ifexist): (Table, String, Value, Option<bool>)| {
                let st = state_of(&this)?;
                Ok(set_var(&st, &known, &name, &v, ifexist.unwrap_or(false)))
            },
        )?,
    )?;
    m.set(
        "get_var",
        lua.create_function(|lua, (this, name): (Table, String)| {
            let st = state_of(&this)?;
            let v = lock(&st).vars.as_ref().and_then(|v| v.get(&name));
            match v {
                Some(v) => super::from_sample(lua, &v),
                None => Ok(Value::Nil),
            }
        })?,
    )?;
    m.set(
        "unset_var",
        lua.create_function(|_, (this, name): (Table, String)| {
            let st = state_of(&this)?;
            if let Some(v) = lock(&st).vars.as_ref() {
                v.unset(&name);
            }
            Ok(true)
        })?,
    )?;
    m.set(
        "get_priv",
        lua.create_function(|lua, this: Table| {
            let st = state_of(&this)?;
            let key = lock(&st).vars.as_ref().and_then(|v| v.lua_priv.clone());
            match key {
                Some(k) => lua.registry_value::<Value>(&k.0),
                None => Ok(Value::Nil),
            }
        })?,
    )?;
    m.set(
        "set_priv",
        lua.create_function(|lua, (this, v): (Table, Value)| {
            let st = state_of(&this)?;
            let key = lua.create_registry_value(v)?;
            if let Some(vars) = lock(&st).vars.as_mut() {
                vars.lua_priv = Some(Arc::new(Priv(key)));
            }
            Ok(())
        })?,
    )?;
    m.set(
        "done",
        lua.create_function(|_, (this, reply): (Table, Option<Table>)| {
            let st = state_of(&this)?;
            let reply = reply.map(|r| reply_bytes(&r)).transpose()?;
            let mut g = lock(&st);
            g.done = true;
            g.reply = reply;
            Err::<(), _>(mlua::Error::RuntimeError(super::DONE.into()))
        })?,
    )?;
    m.set(
        "reply",
        lua.load(REPLY).set_name("=weir.reply").eval::<Function>()?,
    )?;
    m.set(
        "set_loglevel",
        lua.create_function(|_, _: MultiValue| Ok(()))?,
    )?;
    super::core::log_methods(lua, &m)?;
    let meta = lua.create_table()?;
    meta.set("__index", m)?;
    lua.set_named_registry_value("weir.txn", meta)
}

/// `txn:reply([{status, reason, headers, body}])`: a reply object with
/// `set_status`, `add_header`, `del_header`, `set_body`, for
/// `txn:done(reply)`.
const REPLY: &str = r#"
local Reply = {}
Reply.__index = Reply
function Reply:set_status(status, reason) self.status = status; self.reason = reason end
function Reply:add_header(name, value)
  local n = string.lower(name)
  self.headers[n] = self.headers[n] or {}
  table.insert(self.headers[n], value)
end
function Reply:del_header(name) self.headers[string.lower(name)] = nil end
function Reply:set_body(body) self.body = body end
return function(txn, t)
  t = t or {}
  local r = setmetatable({ status = t.status or 200, reason = t.reason, headers = {}, body = t.body or "" }, Reply)
  for name, vals in pairs(t.headers or {}) do
    if type(vals) == "table" then
      for _, v in ipairs(vals) do r:add_header(name, v) end
    else
      r:add_header(name, vals)
    end
  end
  return r
end
"#;

/// The HTTP/1.1 answer a reply object describes (its length added).
fn reply_bytes(r: &Table) -> mlua::Result<(u16, Vec<u8>)> {
    let status: u16 = r.get::<Option<u16>>("status")?.unwrap_or(200);
    let reason = r
        .get::<Option<String>>("reason")?
        .unwrap_or_else(|| weir_proto::h1::status::generated_reason(status).to_string());
    let body = r
        .get::<Option<mlua::LuaString>>("body")?
        .map(|b| b.as_bytes().to_vec())
        .unwrap_or_default();
    let mut out = format!("HTTP/1.1 {status} {reason}\r\n").into_bytes();
    if let Some(hs) = r.get::<Option<Table>>("headers")? {
        for pair in hs.pairs::<String, Table>() {
            let (name, vals) = pair?;
            if name.eq_ignore_ascii_case("content-length") {
                continue;
            }
            for v in vals.sequence_values::<mlua::LuaString>() {
                out.extend_from_slice(format!("{name}: ").as_bytes());
                out.extend_from_slice(&v?.as_bytes());
                out.extend_from_slice(b"\r\n");
            }
        }
    }
    // (No length on the answers that have no body.)
    if !(status < 200 || status == 204 || status == 304) {
        out.extend_from_slice(format!("content-length: {}\r\n", body.len()).as_bytes());
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(&body);
    } else {
        out.extend_from_slice(b"\r\n");
    }
    Ok((status, out))
}

/// `set_var(name, value[, ifexist])`: false for a name that is no
/// variable, or with `ifexist` a `proc` variable the configuration does
/// not name.
pub(super) fn set_var(
    st: &Arc<Mutex<TxnState>>,
    known: &[String],
    name: &str,
    v: &Value,
    ifexist: bool,
) -> bool {
    if !weir_rules::vars::is_var(name) {
        return false;
    }
    let Some(sample) = super::to_sample(v) else {
        return false;
    };
    let g = lock(st);
    let Some(vars) = g.vars.as_ref() else {
        return false;
    };
    if ifexist
        && name.starts_with("proc.")
        && vars.get(name).is_none()
        && !known.iter().any(|k| k == name)
    {
        return false;
    }
    vars.set(name, sample);
    true
}

/// A header list as Lua sees it: `{name = {[0] = v1, [1] = v2}}`, names
/// in lower case.
pub(super) fn headers_table(lua: &Lua, hs: &[Header]) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    let mut counts: std::collections::HashMap<String, i64> = Default::default();
    for h in hs {
        let name = h.name().to_ascii_lowercase();
        let n = counts.entry(name.clone()).or_insert(0);
        let vals: Table = match t.raw_get::<Option<Table>>(name.as_str())? {
            Some(v) => v,
            None => {
                let v = lua.create_table()?;
                t.raw_set(name.as_str(), v.clone())?;
                v
            }
        };
        vals.raw_set(*n, lua.create_string(h.value())?)?;
        *n += 1;
    }
    Ok(t)
}
