//! Lua scripts (`lua-load`): one Lua 5.3 state shared by every thread (as
//! haproxy's `lua-load`), the functions scripts register with `core`
//! (actions, fetches, converters, services, tasks, init functions), and
//! the calls weir makes into them. Calls that may wait (actions, services,
//! tasks) run as coroutines polled by the caller's event loop; the state
//! is locked only while Lua code runs, never across a wait.

mod applet;
mod core;
mod http;
mod httpclient;
mod proxy;
mod socket;
mod txn;

pub use applet::{http_service, tcp_service, AppletIo, AppletOut};

/// The error `core.done()` and `txn:done()` raise to end a script's
/// function at once (not logged).
const DONE: &str = "weir: done";

/// Whether `e` is the end `core.done()` asked for.
fn is_done(e: &mlua::Error) -> bool {
    e.to_string().contains(DONE)
}
pub use txn::{Priv, TxnState};

use crate::state::Shared;
use mlua::{Function, Lua, MultiValue, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;
use weir_config::model::{LuaConf, LuaUse};
use weir_config::Config;
use weir_rules::Sample;

/// What scripts registered, by name (actions by rule set and name: one
/// name may be an `http-req` and an `http-res` action of its own each).
#[derive(Default)]
struct Registry {
    actions: HashMap<(String, String), Action>,
    fetches: HashMap<String, Function>,
    converters: HashMap<String, Function>,
    services: HashMap<String, Service>,
    tasks: Vec<Function>,
    inits: Vec<Function>,
}

/// `core.register_action`: the function (it gets every argument of the
/// rule).
#[derive(Clone)]
struct Action {
    func: Function,
}

/// `core.register_service`: `http` or `tcp`, and the function.
#[derive(Clone)]
struct Service {
    http: bool,
    func: Function,
}

/// The scripts' state and what they registered.
pub struct LuaRt {
    lua: Lua,
    reg: Arc<Mutex<Registry>>,
    /// The process's state, once built (proxies, servers, variables).
    sh: Arc<OnceLock<Weak<Shared>>>,
    /// `tune.lua.session-timeout` (actions) and `service-timeout`.
    pub action_timeout: Duration,
    pub service_timeout: Duration,
    pub task_timeout: Option<Duration>,
    /// The `proc.*` variables the configuration names.
    proc_vars: Arc<Vec<String>>,
    /// 0 for the state shared by every thread, else the thread whose own
    /// state it is (`lua-load-per-thread`): `core.thread`.
    thread: usize,
}

thread_local! {
    /// This thread's own state (`lua-load-per-thread`), once its loop runs.
    static MINE: std::cell::RefCell<Option<Arc<LuaRt>>> = const { std::cell::RefCell::new(None) };
}

impl LuaRt {
    /// Loads the scripts of `conf` in order: the `lua-load` ones into the
    /// state shared by every thread (`thread` 0), or the
    /// `lua-load-per-thread` ones into thread `thread`'s own; `None` when
    /// there is none. An error names the line.
    pub fn load(conf: &LuaConf, thread: usize) -> Result<Option<LuaRt>, Vec<String>> {
        let loads: Vec<_> = conf
            .loads
            .iter()
            .filter(|l| l.per_thread == (thread > 0))
            .collect();
        if loads.is_empty() {
            return Ok(None);
        }
        let lua = Lua::new();
        if conf.maxmem > 0 {
            let _ = lua.set_memory_limit(conf.maxmem);
        }
        let rt = LuaRt {
            lua,
            reg: Arc::default(),
            sh: Arc::default(),
            action_timeout: conf.session_timeout.unwrap_or(Duration::from_secs(4)),
            service_timeout: conf.service_timeout.unwrap_or(Duration::from_secs(4)),
            task_timeout: conf.task_timeout,
            proc_vars: Arc::new(conf.proc_vars.clone()),
            thread,
        };
        let mut errors = Vec::new();
        if let Err(e) = rt.prepare(conf) {
            errors.push(format!("[ALERT]    ({}) : lua: {e}", std::process::id()));
            return Err(errors);
        }
        for l in loads {
            if let Err(e) = rt.run_file(&l.file, &l.args) {
                errors.push(format!("[ALERT] parsing [{}] : {e}", l.loc));
                return Err(errors);
            }
        }
        Ok(Some(rt))
    }

    /// Paths, the `core` table and the globals haproxy gives scripts.
    fn prepare(&self, conf: &LuaConf) -> mlua::Result<()> {
        let package: mlua::Table = self.lua.globals().get("package")?;
        for (p, cpath) in &conf.prepend {
            let key = if *cpath { "cpath" } else { "path" };
            let cur: String = package.get(key)?;
            package.set(key, format!("{p};{cur}"))?;
        }
        core::install(self)
    }

    /// Runs a script file; the error as haproxy words it.
    fn run_file(&self, file: &str, args: &[String]) -> Result<(), String> {
        let code = std::fs::read(file).map_err(|e| {
            let why = match e.kind() {
                std::io::ErrorKind::NotFound => "No such file or directory".to_string(),
                _ => e.to_string(),
            };
            format!("error in Lua file '{file}': cannot open {file}: {why}")
        })?;
        let f = self
            .lua
            .load(code)
            .set_name(format!("@{file}"))
            .into_function()
            .map_err(|e| {
                let m = match &e {
                    mlua::Error::SyntaxError { message, .. } => message.clone(),
                    e => e.to_string(),
                };
                format!("error in Lua file '{file}': {m}")
            })?;
        let args: MultiValue = args
            .iter()
            .map(|a| self.lua.create_string(a).map(Value::String))
            .collect::<mlua::Result<_>>()
            .map_err(|e| e.to_string())?;
        f.call::<()>(args)
            .map_err(|e| format!("lua runtime error: {}", first_line(&e)))
    }

    /// Whether `r` names what this state registered for its use.
    fn has(&self, r: &weir_config::model::LuaRef) -> bool {
        let reg = self.registry();
        match r.what {
            LuaUse::Fetch => reg.fetches.contains_key(&r.name),
            LuaUse::Converter => reg.converters.contains_key(&r.name),
            LuaUse::HttpService => reg.services.get(&r.name).is_some_and(|s| s.http),
            LuaUse::TcpService => reg.services.get(&r.name).is_some_and(|s| !s.http),
            LuaUse::HttpReq | LuaUse::HttpRes | LuaUse::TcpReq | LuaUse::TcpRes => {
                let kind = match r.what {
                    LuaUse::HttpReq => "http-req",
                    LuaUse::HttpRes => "http-res",
                    LuaUse::TcpReq => "tcp-req",
                    _ => "tcp-res",
                };
                reg.actions
                    .contains_key(&(kind.to_string(), r.name.clone()))
            }
        }
    }

    fn registry(&self) -> std::sync::MutexGuard<'_, Registry> {
        self.reg.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs the `core.register_init` functions (once the proxies exist).
    fn run_inits(&self) {
        let inits = self.registry().inits.clone();
        for f in inits {
            if let Err(e) = f.call::<()>(()) {
                crate::log::console("ALERT", &format!("Lua init: {e}"));
            }
        }
    }

    /// The value of fetch `name` for a stream whose state is `st`.
    fn fetch(&self, name: &str, st: TxnState, args: &[String]) -> Option<Sample> {
        let f = self.registry().fetches.get(name).cloned()?;
        let txn = txn::object(self, Arc::new(Mutex::new(st)), txn::Kind::Fetch).ok()?;
        let a = call_args(&self.lua, Value::Table(txn), args).ok()?;
        match f.call::<Value>(a) {
            Ok(v) => to_sample(&v),
            Err(e) => {
                runtime_error("sample-fetch", name, &e);
                None
            }
        }
    }

    /// Converter `name` applied to `v`.
    fn convert(&self, name: &str, v: &Sample, args: &[String]) -> Option<Sample> {
        let f = self.registry().converters.get(name).cloned()?;
        let a = call_args(&self.lua, from_sample(&self.lua, v).ok()?, args).ok()?;
        match f.call::<Value>(a) {
            Ok(v) => to_sample(&v),
            Err(e) => {
                runtime_error("converter", name, &e);
                None
            }
        }
    }
}

/// The first line of a script's error (without mlua's traceback).
fn first_line(e: &mlua::Error) -> String {
    let msg = match e {
        mlua::Error::CallbackError { cause, .. } => cause.to_string(),
        e => e.to_string(),
    };
    msg.lines().next().unwrap_or_default().to_string()
}

/// Logs a script's error as haproxy does (`Lua <what> '<name>': runtime
/// error: …`).
fn runtime_error(what: &str, name: &str, e: &mlua::Error) {
    let msg = first_line(e);
    crate::log::console(
        "ALERT",
        &format!("Lua {what} '{name}': [state-id 0] runtime error: {msg}."),
    );
}

/// Loads the scripts of `cfg` (for `-c` and at start): the shared state,
/// or the errors as lines (a script's, or a `lua.<name>` no script
/// registered for its use). The per-thread scripts are loaded once here
/// to be checked; each thread loads its own when it starts.
pub fn load_all(cfg: &Config) -> Result<Option<LuaRt>, Vec<String>> {
    let conf = &cfg.global.lua;
    let shared = LuaRt::load(conf, 0)?;
    let own = LuaRt::load(conf, 1)?;
    let errors: Vec<String> = conf
        .refs
        .iter()
        .filter(|r| ![&shared, &own].iter().any(|s| s.as_ref().is_some_and(|s| s.has(r))))
        .map(|r| {
            let what = match r.what {
                LuaUse::Fetch => "sample fetch",
                LuaUse::Converter => "converter",
                LuaUse::HttpService | LuaUse::TcpService => "service",
                _ => "action",
            };
            format!(
                "[ALERT] parsing [{}] : unknown Lua {what} 'lua.{}' (no script registered it for this use)",
                r.loc, r.name
            )
        })
        .collect();
    if errors.is_empty() {
        Ok(shared)
    } else {
        Err(errors)
    }
}

/// [`load_all`] for `-c`: the errors.
pub fn check(cfg: &Config) -> Vec<String> {
    load_all(cfg).err().unwrap_or_default()
}

/// Starts thread `id`'s own state (`lua-load-per-thread`), on its event
/// loop: its init functions run, its tasks start.
pub fn enter_thread(sh: &Arc<Shared>, id: usize) {
    let rt = match LuaRt::load(&sh.cfg.global.lua, id) {
        Ok(Some(rt)) => Arc::new(rt),
        Ok(None) => return,
        Err(e) => {
            // (Loaded once before start: only a file changed since fails.)
            for l in e {
                crate::log::console_line(&format!("{l}\n"));
            }
            return;
        }
    };
    MINE.with(|m| *m.borrow_mut() = Some(rt.clone()));
    rt.attach(sh);
    rt.start_tasks();
}

/// The shared state, once set at start.
fn shared_rt(sh: &Shared) -> Option<Arc<LuaRt>> {
    sh.lua.get()?.clone().downcast::<LuaRt>().ok()
}

/// The state that registered what `has` looks for: this thread's own
/// first, then the shared one.
fn pick(sh: &Shared, has: impl Fn(&Registry) -> bool) -> Option<Arc<LuaRt>> {
    let mine = MINE
        .with(|m| m.borrow().clone())
        .filter(|rt| has(&rt.registry()));
    mine.or_else(|| shared_rt(sh).filter(|rt| has(&rt.registry())))
}

/// Gives the shared state the built process (`core.backends`, …), runs
/// its init functions.
pub fn attach(sh: &Arc<Shared>) {
    if let Some(rt) = shared_rt(sh) {
        rt.attach(sh);
    }
}

/// Starts the shared state's `core.register_task` functions on the
/// current event loop.
pub fn spawn_tasks(sh: &Arc<Shared>) {
    if let Some(rt) = shared_rt(sh) {
        rt.start_tasks();
    }
}

impl LuaRt {
    fn attach(&self, sh: &Arc<Shared>) {
        let _ = self.sh.set(Arc::downgrade(sh));
        if let Err(e) = proxy::install(self, sh) {
            crate::log::console("ALERT", &format!("Lua: {e}"));
        }
        self.run_inits();
    }

    fn start_tasks(self: &Arc<Self>) {
        let tasks = self.registry().tasks.clone();
        for f in tasks {
            tokio::spawn(task(self.clone(), f));
        }
    }
}

/// A `core.register_task` function, run to its end (or its
/// `tune.lua.task-timeout`).
async fn task(rt: Arc<LuaRt>, f: Function) {
    {
        {
            let Ok(th) = rt.lua.create_thread(f) else {
                return;
            };
            let Ok(run) = th.into_async::<()>(()) else {
                return;
            };
            let r = match rt.task_timeout {
                Some(t) => tokio::time::timeout(t, run).await.unwrap_or(Ok(())),
                None => run.await,
            };
            if let Err(e) = r {
                if !is_done(&e) {
                    runtime_error("task", "", &e);
                }
            }
        }
    }
}

/// A value a script gives as bytes (strings, numbers in text; nothing
/// for other types).
fn bytes_of(v: &Value) -> Vec<u8> {
    match v {
        Value::String(s) => s.as_bytes().to_vec(),
        Value::Integer(i) => i.to_string().into_bytes(),
        Value::Number(n) => n.to_string().into_bytes(),
        _ => Vec::new(),
    }
}

/// A call's arguments: `first` (the `txn`, or a converter's input), then
/// the rule's arguments as strings.
fn call_args(lua: &Lua, first: Value, args: &[String]) -> mlua::Result<MultiValue> {
    let mut all = vec![first];
    for a in args {
        all.push(Value::String(lua.create_string(a)?));
    }
    Ok(MultiValue::from_iter(all))
}

/// A fetch's value from Lua: strings, integers (a float as its integer
/// part), booleans; nothing for nil and other types.
fn to_sample(v: &Value) -> Option<Sample> {
    match v {
        Value::String(s) => Some(Sample::Str(s.as_bytes().to_vec())),
        Value::Integer(i) => Some(Sample::Int(*i)),
        Value::Number(n) => Some(Sample::Int(*n as i64)),
        Value::Boolean(b) => Some(Sample::Bool(*b)),
        _ => None,
    }
}

/// A sample as Lua sees it: integers as integers, booleans as booleans,
/// everything else as a string.
fn from_sample(lua: &Lua, v: &Sample) -> mlua::Result<Value> {
    Ok(match v {
        Sample::Int(i) => Value::Integer(*i),
        Sample::Bool(b) => Value::Boolean(*b),
        Sample::Str(s) | Sample::Bin(s) => Value::String(lua.create_string(s)?),
        Sample::Ip(a) => Value::String(lua.create_string(a.to_string())?),
    })
}

/// Calls from the rules engine: `lua.<name>` fetches and converters, for
/// a view of a stream.
pub fn fetch_for(
    sh: &Shared,
    call: &weir_rules::lua::LuaCall,
    st: impl FnOnce() -> TxnState,
) -> Option<Sample> {
    let rt = pick(sh, |r| r.fetches.contains_key(&call.name))?;
    rt.fetch(&call.name, st(), &call.args)
}

/// Converter `call` applied to `v`.
pub fn convert_for(sh: &Shared, call: &weir_rules::lua::LuaCall, v: &Sample) -> Option<Sample> {
    let rt = pick(sh, |r| r.converters.contains_key(&call.name))?;
    rt.convert(&call.name, v, &call.args)
}

/// Runs action `call` of a rule set of `kind` (`http-req`, `http-res`,
/// `tcp-req`, `tcp-res`) on `st`, waiting as the script waits (up to
/// `tune.lua.session-timeout`); the state as the action left it.
pub async fn run_action(
    sh: &Shared,
    kind: &str,
    call: &weir_rules::lua::LuaCall,
    st: TxnState,
) -> TxnState {
    let Some((rt, a)) = action_of(sh, kind, &call.name) else {
        return st;
    };
    let cell = Arc::new(Mutex::new(st));
    let r = action_call(&rt, &a, &cell, &call.args).await;
    if let Err(e) = r {
        if !is_done(&e) {
            runtime_error("action", &call.name, &e);
        }
    }
    // The coroutine is done (or dropped): the state is ours again.
    let taken = std::mem::take(&mut *cell.lock().unwrap_or_else(|e| e.into_inner()));
    taken
}

/// The state that registered action `name` for rule set `kind`, and the
/// action.
fn action_of(sh: &Shared, kind: &str, name: &str) -> Option<(Arc<LuaRt>, Action)> {
    let key = (kind.to_string(), name.to_string());
    let rt = pick(sh, |r| r.actions.contains_key(&key))?;
    let a = rt.registry().actions.get(&key).cloned()?;
    Some((rt, a))
}

async fn action_call(
    rt: &LuaRt,
    a: &Action,
    cell: &Arc<Mutex<TxnState>>,
    args: &[String],
) -> mlua::Result<()> {
    let txn = txn::object(rt, cell.clone(), txn::Kind::Action)?;
    let argv = call_args(&rt.lua, Value::Table(txn), args)?;
    let th = rt.lua.create_thread(a.func.clone())?;
    let run = th.into_async::<()>(argv)?;
    match tokio::time::timeout(rt.action_timeout, run).await {
        Ok(r) => r,
        Err(_) => Err(mlua::Error::RuntimeError("execution timeout".into())),
    }
}

/// Runs `http-response` action `call` at once, on a copy of what `ctx`
/// sees (an action there cannot wait: one that tries is an error).
pub fn response_action(
    sh: &Shared,
    call: &weir_rules::lua::LuaCall,
    ctx: &crate::http::rules::ExCtx<'_>,
) -> TxnState {
    let st = TxnState::of(ctx);
    let Some((rt, a)) = action_of(sh, "http-res", &call.name) else {
        return st;
    };
    let cell = Arc::new(Mutex::new(st));
    let r = (|| {
        let txn = txn::object(&rt, cell.clone(), txn::Kind::Action)?;
        a.func
            .call::<()>(call_args(&rt.lua, Value::Table(txn), &call.args)?)
    })();
    if let Err(e) = r {
        if !is_done(&e) {
            runtime_error("action", &call.name, &e);
        }
    }
    let taken = std::mem::take(&mut *cell.lock().unwrap_or_else(|e| e.into_inner()));
    taken
}
