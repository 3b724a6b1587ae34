//! The `core` table scripts see: registration of actions, fetches,
//! converters, services, tasks and init functions; logs; sleeps; the
//! clock; TCP sockets (`core.tcp()`).

use super::{Action, LuaRt, Service};
use mlua::{Function, Lua, MultiValue, Table, Value};
use std::time::Duration;

/// Syslog severities by name, as `core.<level>`.
const LEVELS: [&str; 8] = [
    "emerg", "alert", "crit", "err", "warning", "notice", "info", "debug",
];

/// Sets the global `core`.
pub(super) fn install(rt: &LuaRt) -> mlua::Result<()> {
    let lua = &rt.lua;
    let core = lua.create_table()?;
    for (i, l) in LEVELS.iter().enumerate() {
        core.set(*l, i as i64)?;
    }
    core.set("thread", rt.thread)?;
    register(rt, &core)?;
    log_methods(lua, &core)?;
    core.set(
        "log",
        lua.create_function(|_, (level, msg): (i64, String)| {
            send_log(level, &msg);
            Ok(())
        })?,
    )?;
    core.set(
        "msleep",
        lua.create_async_function(|_, ms: u64| async move {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            Ok(())
        })?,
    )?;
    core.set(
        "sleep",
        lua.create_async_function(|_, s: u64| async move {
            tokio::time::sleep(Duration::from_secs(s)).await;
            Ok(())
        })?,
    )?;
    core.set(
        "yield",
        lua.create_async_function(|_, ()| async move {
            tokio::task::yield_now().await;
            Ok(())
        })?,
    )?;
    core.set(
        "now",
        lua.create_function(|lua, ()| {
            let d = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default();
            let t = lua.create_table()?;
            t.set("sec", d.as_secs())?;
            t.set("usec", d.subsec_micros())?;
            Ok(t)
        })?,
    )?;
    core.set(
        "done",
        lua.create_function(|_, _: MultiValue| {
            Err::<(), _>(mlua::Error::RuntimeError(super::DONE.into()))
        })?,
    )?;
    core.set(
        "tcp",
        lua.create_function(|_, ()| Ok(super::socket::Socket::default()))?,
    )?;
    core.set(
        "httpclient",
        lua.create_function(|_, ()| Ok(super::httpclient::HttpClient))?,
    )?;
    helpers(lua, &core)?;
    for t in ["backends", "frontends", "proxies"] {
        core.set(t, lua.create_table()?)?;
    }
    lua.globals().set("core", core)?;
    super::txn::install(rt)
}

/// `core.tokenize` and `core.concat`, as haproxy's (written in Lua).
const HELPERS: &str = r#"
local core = ...
function core.tokenize(str, seps, noblank)
  local out = {}
  local cur = ""
  for i = 1, #str do
    local ch = str:sub(i, i)
    if seps:find(ch, 1, true) then
      if not noblank or cur ~= "" then out[#out + 1] = cur end
      cur = ""
    else
      cur = cur .. ch
    end
  end
  if not noblank or cur ~= "" then out[#out + 1] = cur end
  return out
end
local Concat = {}
Concat.__index = Concat
function Concat:add(s) self.parts[#self.parts + 1] = tostring(s) end
function Concat:dump() return table.concat(self.parts) end
function core.concat() return setmetatable({ parts = {} }, Concat) end
"#;

/// A network of `core.parse_addr`: an address and its prefix length.
#[derive(Clone, Copy)]
struct Net(std::net::IpAddr, u8);

impl mlua::UserData for Net {}

/// `a/bits` as a number of the family's width, masked.
fn masked(ip: std::net::IpAddr, bits: u8) -> u128 {
    let (v, width) = match ip {
        std::net::IpAddr::V4(a) => (u128::from(u32::from(a)), 32),
        std::net::IpAddr::V6(a) => (u128::from(a), 128),
    };
    let bits = u32::from(bits).min(width);
    if bits == 0 {
        return 0;
    }
    let keep = width - bits;
    (v >> keep) << keep
}

/// The helpers: `tokenize`, `concat`, `parse_addr`, `match_addr`.
fn helpers(lua: &Lua, core: &Table) -> mlua::Result<()> {
    lua.load(HELPERS)
        .set_name("=weir.helpers")
        .call::<()>(core.clone())?;
    core.set(
        "parse_addr",
        lua.create_function(|_, text: String| {
            let (a, bits) = match text.split_once('/') {
                Some((a, b)) => (a, b.parse::<u8>().ok()),
                None => (text.as_str(), None),
            };
            let Ok(ip) = a.trim().parse::<std::net::IpAddr>() else {
                return Ok(None);
            };
            let width = if ip.is_ipv4() { 32 } else { 128 };
            match bits.unwrap_or(width) {
                b if b <= width => Ok(Some(Net(ip, b))),
                _ => Ok(None),
            }
        })?,
    )?;
    core.set(
        "match_addr",
        lua.create_function(|_, (a, b): (mlua::AnyUserData, mlua::AnyUserData)| {
            let (a, b) = (*a.borrow::<Net>()?, *b.borrow::<Net>()?);
            if a.0.is_ipv4() != b.0.is_ipv4() {
                return Ok(false);
            }
            let bits = a.1.min(b.1);
            Ok(masked(a.0, bits) == masked(b.0, bits))
        })?,
    )?;
    Ok(())
}

/// `core.register_*`.
fn register(rt: &LuaRt, core: &Table) -> mlua::Result<()> {
    let lua = &rt.lua;
    let reg = rt.reg.clone();
    core.set(
        "register_action",
        lua.create_function(move |_, (name, kinds, func, nargs): (String, Vec<String>, Function, Option<usize>)| {
            for k in &kinds {
                if !["http-req", "http-res", "tcp-req", "tcp-res"].contains(&k.as_str()) {
                    return Err(mlua::Error::RuntimeError(format!(
                        "register_action: '{k}' is not a known action kind ('http-req', 'http-res', 'tcp-req' or 'tcp-res')"
                    )));
                }
            }
            // (The rule's arguments all go to the function, however many
            // it declares.)
            let _ = nargs;
            let a = Action { func };
            let mut r = lock(&reg);
            for k in kinds {
                r.actions.insert((k, name.clone()), a.clone());
            }
            Ok(())
        })?,
    )?;
    let r = rt.reg.clone();
    core.set(
        "register_fetches",
        lua.create_function(move |_, (name, func): (String, Function)| {
            lock(&r).fetches.insert(name, func);
            Ok(())
        })?,
    )?;
    let r = rt.reg.clone();
    core.set(
        "register_converters",
        lua.create_function(move |_, (name, func): (String, Function)| {
            lock(&r).converters.insert(name, func);
            Ok(())
        })?,
    )?;
    let r = rt.reg.clone();
    core.set(
        "register_service",
        lua.create_function(move |_, (name, mode, func): (String, String, Function)| {
            let http = match mode.as_str() {
                "http" => true,
                "tcp" => false,
                m => {
                    return Err(mlua::Error::RuntimeError(format!(
                        "register_service: '{m}' is not a service mode ('http' or 'tcp')"
                    )))
                }
            };
            lock(&r).services.insert(name, Service { http, func });
            Ok(())
        })?,
    )?;
    let r = rt.reg.clone();
    core.set(
        "register_task",
        lua.create_function(move |lua, (func, args): (Function, MultiValue)| {
            let func = if args.is_empty() {
                func
            } else {
                // The task's arguments are bound now.
                let bound = lua
                    .load("local f, args = ...; return function() return f(table.unpack(args)) end")
                    .call::<Function>((func, args.into_iter().collect::<Vec<Value>>()))?;
                bound
            };
            lock(&r).tasks.push(func);
            Ok(())
        })?,
    )?;
    let r = rt.reg.clone();
    core.set(
        "register_init",
        lua.create_function(move |_, func: Function| {
            lock(&r).inits.push(func);
            Ok(())
        })?,
    )?;
    Ok(())
}

fn lock(r: &std::sync::Mutex<super::Registry>) -> std::sync::MutexGuard<'_, super::Registry> {
    r.lock().unwrap_or_else(|e| e.into_inner())
}

/// `Debug`, `Info`, `Warning`, `Alert` on a table (`core`, `txn`,
/// `applet`): as methods of an object and as plain functions of `core`.
pub(super) fn log_methods(lua: &Lua, t: &Table) -> mlua::Result<()> {
    for (name, level) in [("Debug", 7), ("Info", 6), ("Warning", 4), ("Alert", 1)] {
        t.set(
            name,
            lua.create_function(move |_, args: MultiValue| {
                // `core.Info(msg)` or `txn:Info(msg)`: the message is the
                // last argument.
                let msg = match args.iter().last() {
                    Some(Value::String(s)) => s.to_string_lossy(),
                    Some(Value::Integer(i)) => i.to_string(),
                    Some(Value::Number(n)) => n.to_string(),
                    _ => String::new(),
                };
                send_log(level, &msg);
                Ok(())
            })?,
        )?;
    }
    Ok(())
}

/// A script's log message: on stderr as haproxy prints it (`[info]
/// 331/134501 (pid) : msg`), unless the level is `debug`.
fn send_log(level: i64, msg: &str) {
    let tag = LEVELS.get(level as usize).copied().unwrap_or("info");
    if level >= 7 {
        return;
    }
    let (y, mon, day, h, m, s, _) = crate::sys::local_time(crate::clock::wall().as_secs() as i64);
    crate::log::console_line(&format!(
        "[{tag}] {:03}/{h:02}{m:02}{s:02} ({}) : {msg}\n",
        year_day(y, mon, day),
        std::process::id()
    ));
}

/// The day of the year counted from 0 (`tm_yday`) of `day` (1…31) of
/// month `mon` (1…12).
fn year_day(y: i32, mon: u32, day: u32) -> u32 {
    const BEFORE: [u32; 12] = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334];
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let i = (mon.clamp(1, 12) - 1) as usize;
    BEFORE.get(i).copied().unwrap_or(0) + u32::from(leap && mon > 2) + day.saturating_sub(1)
}
