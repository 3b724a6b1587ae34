//! Lua services (`use-service lua.<name>`): the `applet` object of an
//! HTTP service (the request's line, headers and body; `set_status`,
//! `add_header`, `start_response`, `send`) and of a TCP service (`send`,
//! `receive`, `getline` on the client connection). An HTTP service's
//! head and each `send` go to the exchange as they are made
//! ([`AppletOut`]), which writes them to the client.

use super::txn::{headers_table, lock, state_of, StateRef, TxnState};
use super::LuaRt;
use crate::state::Shared;
use mlua::{Table, Value};
use std::sync::{Arc, Mutex};

/// An HTTP service's state: its status and headers until the response
/// starts, the request body it reads, where its output goes.
#[derive(Default)]
pub struct AppletIo {
    pub status: Option<(u16, Option<String>)>,
    pub headers: Vec<(String, Vec<u8>)>,
    pub started: bool,
    /// The request body and how much of it was read.
    pub input: Vec<u8>,
    pub read: usize,
    /// Where the head and the body go.
    pub tx: Option<tokio::sync::mpsc::Sender<AppletOut>>,
}

/// What an HTTP service sends, in order: its head once, then body bytes.
pub enum AppletOut {
    Head {
        status: u16,
        reason: Option<String>,
        headers: Vec<(String, Vec<u8>)>,
    },
    Data(Vec<u8>),
}

/// Runs HTTP service `name` on the request in `st`, its output going to
/// `tx`; the state as the function left it, and whether it answered.
pub async fn http_service(
    sh: &Shared,
    name: &str,
    mut st: TxnState,
    tx: tokio::sync::mpsc::Sender<AppletOut>,
) -> (TxnState, bool) {
    let Some(rt) = super::pick(sh, |r| r.services.contains_key(name)) else {
        return (st, false);
    };
    let Some(svc) = rt.registry().services.get(name).cloned().filter(|s| s.http) else {
        return (st, false);
    };
    st.applet.input = st.body.clone().unwrap_or_default();
    st.applet.tx = Some(tx);
    let cell = Arc::new(Mutex::new(st));
    let r = run(&rt, &svc.func, &cell).await;
    if let Err(e) = &r {
        if !super::is_done(e) {
            super::runtime_error("service", name, e);
        }
    }
    let mut st = std::mem::take(&mut *lock(&cell));
    // (The applet object may outlive the call in Lua's heap: the output
    // ends here.)
    st.applet.tx = None;
    let started = st.applet.started;
    (st, started)
}

/// Starts the response once: its head goes out; the sender, to go on.
async fn start(st: &Arc<Mutex<TxnState>>) -> Option<tokio::sync::mpsc::Sender<AppletOut>> {
    let (head, tx) = {
        let mut g = lock(st);
        let a = &mut g.applet;
        let tx = a.tx.clone()?;
        if a.started {
            (None, tx)
        } else {
            a.started = true;
            let (status, reason) = a.status.take().unwrap_or((200, None));
            let headers = std::mem::take(&mut a.headers);
            (
                Some(AppletOut::Head {
                    status,
                    reason,
                    headers,
                }),
                tx,
            )
        }
    };
    if let Some(h) = head {
        tx.send(h).await.ok()?;
    }
    Some(tx)
}

async fn run(rt: &LuaRt, f: &mlua::Function, cell: &Arc<Mutex<TxnState>>) -> mlua::Result<()> {
    let applet = http_object(rt, cell.clone())?;
    let th = rt.lua.create_thread(f.clone())?;
    let run = th.into_async::<()>(applet)?;
    match tokio::time::timeout(rt.service_timeout, run).await {
        Ok(r) => r,
        Err(_) => Err(mlua::Error::RuntimeError("execution timeout".into())),
    }
}

/// The `applet` of an HTTP service.
fn http_object(rt: &LuaRt, cell: Arc<Mutex<TxnState>>) -> mlua::Result<Table> {
    let lua = &rt.lua;
    let t = lua.create_table()?;
    {
        let g = lock(&cell);
        if let Some(r) = &g.req {
            let (path, qs) = r.uri.split_once('?').unwrap_or((&r.uri, ""));
            t.raw_set("method", r.method.as_str())?;
            t.raw_set("path", path)?;
            t.raw_set("qs", qs)?;
            t.raw_set("version", if r.minor == 0 { "1.0" } else { "1.1" })?;
            // (Without `connection`: a hop's header, as haproxy's HTX drops.)
            let hs: Vec<_> = r
                .headers
                .iter()
                .filter(|h| !h.is("connection"))
                .cloned()
                .collect();
            t.raw_set("headers", headers_table(lua, &hs)?)?;
        }
        t.raw_set("length", g.body.as_ref().map_or(0, Vec::len))?;
    }
    t.raw_set("__weir_state", lua.create_userdata(StateRef(cell))?)?;
    t.set_metatable(Some(lua.named_registry_value::<Table>("weir.applet")?))?;
    Ok(t)
}

use super::bytes_of as text;

/// `txn`'s methods an applet has too: variables, private data, logs.
fn txn_methods(lua: &mlua::Lua, t: &Table) -> mlua::Result<()> {
    let txn: Table = lua
        .named_registry_value::<Table>("weir.txn")?
        .get("__index")?;
    for name in [
        "set_var",
        "get_var",
        "unset_var",
        "get_priv",
        "set_priv",
        "Debug",
        "Info",
        "Warning",
        "Alert",
    ] {
        t.raw_set(name, txn.get::<Value>(name)?)?;
    }
    Ok(())
}

/// Builds the HTTP applet's method table.
pub(super) fn install(rt: &LuaRt) -> mlua::Result<()> {
    let lua = &rt.lua;
    let m = lua.create_table()?;
    m.set(
        "set_status",
        lua.create_function(|_, (this, status, reason): (Table, u16, Option<String>)| {
            let st = state_of(&this)?;
            lock(&st).applet.status = Some((status, reason));
            Ok(())
        })?,
    )?;
    m.set(
        "add_header",
        lua.create_function(|_, (this, n, v): (Table, String, Value)| {
            let st = state_of(&this)?;
            // Names go out in lower case, as haproxy writes them.
            lock(&st)
                .applet
                .headers
                .push((n.to_ascii_lowercase(), text(&v)));
            Ok(())
        })?,
    )?;
    m.set(
        "start_response",
        lua.create_async_function(|_, this: Table| async move {
            let st = state_of(&this)?;
            start(&st).await;
            Ok(())
        })?,
    )?;
    m.set(
        "send",
        lua.create_async_function(|_, (this, v): (Table, Value)| async move {
            let st = state_of(&this)?;
            // Sending starts the response.
            let data = text(&v);
            let n = data.len();
            if let Some(tx) = start(&st).await {
                if !data.is_empty() {
                    let _ = tx.send(AppletOut::Data(data)).await;
                }
            }
            Ok(n)
        })?,
    )?;
    m.set(
        "receive",
        lua.create_function(|lua, (this, size): (Table, Option<i64>)| {
            let st = state_of(&this)?;
            let mut g = lock(&st);
            let a = &mut g.applet;
            let rest = a.input.get(a.read..).unwrap_or_default();
            let n = size.map_or(rest.len(), |s| (s.max(0) as usize).min(rest.len()));
            let out = lua.create_string(rest.get(..n).unwrap_or_default())?;
            a.read += n;
            Ok(out)
        })?,
    )?;
    m.set(
        "getline",
        lua.create_function(|lua, this: Table| {
            let st = state_of(&this)?;
            let mut g = lock(&st);
            let a = &mut g.applet;
            let rest = a.input.get(a.read..).unwrap_or_default();
            let n = rest
                .iter()
                .position(|&b| b == b'\n')
                .map_or(rest.len(), |i| i + 1);
            let out = lua.create_string(rest.get(..n).unwrap_or_default())?;
            a.read += n;
            Ok(out)
        })?,
    )?;
    // Variables and private data, as `txn`'s.
    txn_methods(lua, &m)?;
    let meta = lua.create_table()?;
    meta.set("__index", m)?;
    lua.set_named_registry_value("weir.applet", meta)
}

/// Runs TCP service `name` on a client connection: the function reads
/// with `receive`/`getline` and writes with `send`; the connection closes
/// when it returns. The state as the function left it, and the bytes it
/// sent.
pub async fn tcp_service<S>(
    sh: &Shared,
    name: &str,
    st: TxnState,
    client: S,
    pending: Vec<u8>,
) -> (TxnState, u64)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let Some(rt) = super::pick(sh, |r| r.services.contains_key(name)) else {
        return (st, 0);
    };
    let Some(svc) = rt
        .registry()
        .services
        .get(name)
        .cloned()
        .filter(|s| !s.http)
    else {
        return (st, 0);
    };
    let io = Arc::new(tokio::sync::Mutex::new(super::socket::Stream::new(
        client, pending,
    )));
    let cell = Arc::new(Mutex::new(st));
    let r = async {
        let t = tcp_object(&rt, cell.clone(), io.clone())?;
        let th = rt.lua.create_thread(svc.func.clone())?;
        let run = th.into_async::<()>(t)?;
        match tokio::time::timeout(rt.service_timeout, run).await {
            Ok(r) => r,
            Err(_) => Err(mlua::Error::RuntimeError("execution timeout".into())),
        }
    }
    .await;
    if let Err(e) = r {
        if !super::is_done(&e) {
            super::runtime_error("service", name, &e);
        }
    }
    let mut io = io.lock().await;
    io.shutdown().await;
    let st = std::mem::take(&mut *lock(&cell));
    (st, io.written)
}

/// The `applet` of a TCP service.
fn tcp_object(
    rt: &LuaRt,
    cell: Arc<Mutex<TxnState>>,
    io: Arc<tokio::sync::Mutex<super::socket::Stream>>,
) -> mlua::Result<Table> {
    let lua = &rt.lua;
    let t = lua.create_table()?;
    t.raw_set("__weir_state", lua.create_userdata(StateRef(cell))?)?;
    txn_methods(lua, &t)?;
    let w = io.clone();
    t.raw_set(
        "send",
        lua.create_async_function(move |_, (_this, v): (Value, Value)| {
            let w = w.clone();
            async move {
                let data = text(&v);
                w.lock().await.write_all(&data).await;
                Ok(data.len())
            }
        })?,
    )?;
    let r = io.clone();
    t.raw_set(
        "receive",
        lua.create_async_function(move |lua, (_this, size): (Value, Option<i64>)| {
            let r = r.clone();
            async move {
                let got = match size {
                    Some(n) => r.lock().await.read_exact_or_eof(n.max(0) as usize).await,
                    None => r.lock().await.read_to_end().await,
                };
                Ok(Value::String(lua.create_string(got)?))
            }
        })?,
    )?;
    let r = io;
    t.raw_set(
        "getline",
        lua.create_async_function(move |lua, _this: Value| {
            let r = r.clone();
            async move {
                let got = r.lock().await.read_line().await;
                Ok(Value::String(lua.create_string(got)?))
            }
        })?,
    )?;
    Ok(t)
}
