//! SPOE (`filter spoe`, haproxy's doc/SPOE.txt): the messages of an
//! engine go to its agent on their events and by `send-spoe-group`
//! rules, in NOTIFY frames; the actions of the agent's ACK set variables.
//! One exchange at a time on a connection; idle connections are kept by
//! each worker thread for the next exchange (`timeout idle`).

use crate::http::rules::{ExCtx, Vars};
use crate::state::{BackendRt, ServerTarget, Shared};
use std::cell::RefCell;
use std::collections::HashMap;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::Instant;
use weir_config::model::{SpoeEngine, SpoeEvent};
use weir_config::Proxy;
use weir_proto::spop::{self, Action, AgentFrame, Typed};
use weir_rules::Sample;

/// Why an exchange with an agent failed: the value of `set-on-error`
/// (haproxy's: 1 a timeout, 3 a frame too big, 255 unknown, 256 + the
/// status of an agent's or a protocol error).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Failure(i64);

const TIMEOUT: Failure = Failure(1);
const TOO_BIG: Failure = Failure(3);
const UNKNOWN: Failure = Failure(255);

/// How long an exchange may take when `timeout processing` is not set.
const UNSET_PROCESSING: Duration = Duration::from_secs(30);

/// An agent connection past its hello.
struct AgentConn {
    stream: TcpStream,
    max_frame: u32,
    idle_since: Instant,
    /// Bytes came after the last ACK: not reused (its frames would be
    /// read out of step).
    unclean: bool,
}

thread_local! {
    /// Idle agent connections of this worker thread, by engine
    /// (proxy name and engine id).
    static IDLE: RefCell<HashMap<(String, String), Vec<AgentConn>>> = RefCell::default();
    /// Stream ids of this thread's exchanges.
    static NEXT_ID: std::cell::Cell<u64> = const { std::cell::Cell::new(1) };
}

/// The messages of `px`'s engines for `event` whose conditions hold,
/// each engine's to its agent; the answers set variables in `ctx`'s.
/// Nothing to send: nothing waits.
pub async fn on_event(sh: &Shared, px: &Proxy, event: SpoeEvent, ctx: &ExCtx<'_>) {
    for engine in &px.spoe {
        let names: Vec<&str> = engine
            .agent
            .messages
            .iter()
            .filter_map(|n| engine.messages.iter().find(|m| m.name == *n))
            .filter(|m| {
                m.event
                    .as_ref()
                    .is_some_and(|(e, c)| *e == event && c.as_ref().is_none_or(|c| c.eval(ctx)))
            })
            .map(|m| m.name.as_str())
            .collect();
        if !names.is_empty() {
            process(sh, px, engine, &names, ctx).await;
        }
    }
}

/// `send-spoe-group <engine> <group>` from `px`'s rules.
pub async fn send_group(sh: &Shared, px: &Proxy, engine: &str, group: &str, ctx: &ExCtx<'_>) {
    let Some(e) = px.spoe.iter().find(|e| e.id == engine) else {
        return;
    };
    let Some(g) = e.groups.iter().find(|g| g.name == group) else {
        return;
    };
    let names: Vec<&str> = g.messages.iter().map(String::as_str).collect();
    process(sh, px, e, &names, ctx).await;
}

/// One NOTIFY of `names` and its answer, within `timeout processing`;
/// the times and the error go to the agent's variables.
async fn process(sh: &Shared, px: &Proxy, e: &SpoeEngine, names: &[&str], ctx: &ExCtx<'_>) {
    let Some(vars) = ctx.vars else {
        return;
    };
    let a = &e.agent;
    // After an error, the engine is off for the rest of the transaction
    // (unless `option continue-on-error`), as in haproxy; the mark is a
    // transaction variable no configuration can name.
    let off = format!("txn.\u{1}spoe.{}", e.id);
    if vars.get(&off).is_some() {
        return;
    }
    let txn_var = |v: &str| format!("txn.{}.{v}", a.var_prefix);
    if let Some(v) = &a.set_on_error {
        if !a.continue_on_error {
            vars.unset(&txn_var(v));
        }
    }
    let start = crate::clock::now();
    let messages = encode(e, names, ctx);
    let work = exchange(sh, px, e, &messages);
    // Without `timeout processing`, an agent that never answers still
    // does not hold the stream forever.
    let limit = a.processing.unwrap_or(UNSET_PROCESSING);
    let r = tokio::time::timeout(limit, work)
        .await
        .unwrap_or(Err(TIMEOUT));
    match r {
        Ok(actions) => apply(vars, &a.var_prefix, actions),
        Err(Failure(code)) => {
            if let Some(v) = &a.set_on_error {
                vars.set(&txn_var(v), Sample::Int(code));
            }
            if !a.continue_on_error {
                vars.set(&off, Sample::Bool(true));
            }
        }
    }
    let took = crate::clock::elapsed(start).as_millis() as i64;
    if let Some(v) = &a.set_process_time {
        vars.set(&txn_var(v), Sample::Int(took));
    }
    if let Some(v) = &a.set_total_time {
        let total = vars.get(&txn_var(v)).and_then(|s| s.to_int()).unwrap_or(0);
        vars.set(&txn_var(v), Sample::Int(total + took));
    }
}

/// The messages `names` with their arguments evaluated (a sample that
/// gives nothing is NULL).
fn encode<'e>(
    e: &'e SpoeEngine,
    names: &[&'e str],
    ctx: &ExCtx<'_>,
) -> Vec<(&'e str, Vec<(&'e str, Typed)>)> {
    names
        .iter()
        .filter_map(|n| e.messages.iter().find(|m| m.name == *n))
        .map(|m| {
            let args = m
                .args
                .iter()
                .map(|(k, expr)| (k.as_str(), expr.eval(ctx).map_or(Typed::Null, typed)))
                .collect();
            (m.name.as_str(), args)
        })
        .collect()
}

/// A sample as SPOP carries it.
fn typed(s: Sample) -> Typed {
    match s {
        Sample::Str(b) => Typed::Str(b),
        Sample::Bin(b) => Typed::Bin(b),
        Sample::Int(n) => Typed::Int64(n),
        Sample::Bool(b) => Typed::Bool(b),
        Sample::Ip(std::net::IpAddr::V4(a)) => Typed::Ipv4(a.octets()),
        Sample::Ip(std::net::IpAddr::V6(a)) => Typed::Ipv6(a.octets()),
    }
}

/// The agent's actions on the exchange's variables, under the agent's
/// prefix (`<scope>.<prefix>.<name>`).
fn apply(vars: &Vars, prefix: &str, actions: Vec<Action>) {
    for a in actions {
        match a {
            Action::SetVar(scope, name, v) => {
                let name = format!(
                    "{}.{prefix}.{}",
                    scope.prefix(),
                    String::from_utf8_lossy(&name)
                );
                if let Some(s) = sample(v) {
                    vars.set(&name, s);
                }
            }
            Action::UnsetVar(scope, name) => {
                vars.unset(&format!(
                    "{}.{prefix}.{}",
                    scope.prefix(),
                    String::from_utf8_lossy(&name)
                ));
            }
        }
    }
}

fn sample(v: Typed) -> Option<Sample> {
    Some(match v {
        Typed::Null => return None,
        Typed::Bool(b) => Sample::Bool(b),
        Typed::Int32(n) => Sample::Int(n.into()),
        Typed::Uint32(n) => Sample::Int(n.into()),
        Typed::Int64(n) => Sample::Int(n),
        Typed::Uint64(n) => Sample::Int(n as i64),
        Typed::Ipv4(a) => Sample::Ip(std::net::Ipv4Addr::from(a).into()),
        Typed::Ipv6(a) => Sample::Ip(std::net::Ipv6Addr::from(a).into()),
        Typed::Str(b) => Sample::Str(b),
        Typed::Bin(b) => Sample::Bin(b),
    })
}

/// Sends the NOTIFY on an idle connection (a new one if none, or if the
/// idle one turns out closed) and reads its ACK.
async fn exchange(
    sh: &Shared,
    px: &Proxy,
    e: &SpoeEngine,
    messages: &[(&str, Vec<(&str, Typed)>)],
) -> Result<Vec<Action>, Failure> {
    let key = (px.name.clone(), e.id.clone());
    let sid = NEXT_ID.with(|n| {
        let v = n.get();
        n.set(v + 1);
        v
    });
    let reused = take_idle(&key, e.agent.idle);
    let fresh = reused.is_none();
    let mut conn = match reused {
        Some(c) => c,
        None => open_retrying(sh, e).await?,
    };
    let frame = spop::notify(sid, 1, messages, conn.max_frame).ok_or(TOO_BIG)?;
    let r = ack(&mut conn, &frame, sid).await;
    let r = match r {
        // A kept connection the agent closed meanwhile: once more on a
        // new one.
        Err(Failure(f)) if !fresh && f == UNKNOWN.0 => {
            conn = open(sh, e).await?;
            ack(&mut conn, &frame, sid).await
        }
        r => r,
    };
    if r.is_ok() && !conn.unclean {
        conn.idle_since = crate::clock::now();
        IDLE.with(|i| i.borrow_mut().entry(key).or_default().push(conn));
    }
    r
}

/// An idle connection of `key` younger than `idle`.
fn take_idle(key: &(String, String), idle: Option<Duration>) -> Option<AgentConn> {
    IDLE.with(|i| {
        let mut i = i.borrow_mut();
        let list = i.get_mut(key)?;
        let now = crate::clock::now();
        list.retain(|c| idle.is_none_or(|t| now.saturating_duration_since(c.idle_since) < t));
        list.pop()
    })
}

/// Writes `frame` and reads frames until the ACK of stream `sid`.
async fn ack(conn: &mut AgentConn, frame: &[u8], sid: u64) -> Result<Vec<Action>, Failure> {
    conn.stream.write_all(frame).await.map_err(|_| UNKNOWN)?;
    let mut buf = Vec::new();
    loop {
        match spop::agent_frame(&buf, conn.max_frame) {
            Ok(Some((f, used))) => {
                buf.drain(..used);
                match f {
                    AgentFrame::Ack {
                        sid: s,
                        fid: 1,
                        actions,
                    } if s == sid => return Ok(actions),
                    AgentFrame::Disconnect(status, _) => {
                        return Err(Failure(256 + i64::from(status)))
                    }
                    _ => {}
                }
            }
            Ok(None) => {
                buf.reserve(4096);
                match conn.stream.read_buf(&mut buf).await {
                    Ok(0) | Err(_) => return Err(UNKNOWN),
                    Ok(_) => {}
                }
            }
            Err(err) => return Err(Failure(256 + i64::from(err.status()))),
        }
    }
}

/// A new connection, tried again while `timeout processing` (which
/// bounds the caller) lets it, as haproxy waits for an agent: an agent
/// that cannot be reached is a timeout (1). Without that timeout, the
/// first failure is the answer.
async fn open_retrying(sh: &Shared, e: &SpoeEngine) -> Result<AgentConn, Failure> {
    loop {
        match open(sh, e).await {
            Err(_) if e.agent.processing.is_some() => {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            r => return r,
        }
    }
}

/// A new connection to a server of the agent's backend, past the hello
/// (`timeout hello`).
async fn open(sh: &Shared, e: &SpoeEngine) -> Result<AgentConn, Failure> {
    let be = sh
        .backends
        .iter()
        .find(|b| b.name == e.agent.backend)
        .ok_or(UNKNOWN)?;
    let addr = server_addr(be).ok_or(UNKNOWN)?;
    let connect_timeout = sh
        .proxy(be.proxy)
        .timeouts
        .connect
        .unwrap_or(Duration::from_secs(5));
    let mut stream = tokio::time::timeout(connect_timeout, TcpStream::connect(addr))
        .await
        .map_err(|_| TIMEOUT)?
        .map_err(|_| UNKNOWN)?;
    let _ = stream.set_nodelay(true);
    let engine_id = format!("weir-{}-{}", std::process::id(), e.id);
    let hello = spop::hello(e.agent.max_frame_size, &engine_id);
    let handshake = async {
        stream.write_all(&hello).await.map_err(|_| UNKNOWN)?;
        let mut buf = Vec::new();
        loop {
            match spop::agent_hello(&buf) {
                Ok(Some(_)) => return Ok(()),
                Ok(None) => {}
                Err(_) => return Err(Failure(256 + 4)),
            }
            buf.reserve(1024);
            match stream.read_buf(&mut buf).await {
                Ok(0) | Err(_) => return Err(UNKNOWN),
                Ok(_) => {}
            }
        }
    };
    match e.agent.hello {
        Some(t) => tokio::time::timeout(t, handshake)
            .await
            .unwrap_or(Err(TIMEOUT))?,
        None => handshake.await?,
    }
    Ok(AgentConn {
        stream,
        max_frame: e.agent.max_frame_size,
        idle_since: crate::clock::now(),
        unclean: false,
    })
}

/// The address of a server of `be` its balancing picks (a TCP one).
fn server_addr(be: &BackendRt) -> Option<std::net::SocketAddr> {
    let pick = {
        let mut lb = be.set();
        let crate::state::Lb { set, rng } = &mut *lb;
        set.pick(b"", rng, None)
    };
    let weir_balance::Pick::Server(i) = pick else {
        return None;
    };
    let s = be.server_at(crate::state::ServerId::new(i))?;
    let t = s.target.lock().unwrap_or_else(|e| e.into_inner());
    match &*t {
        ServerTarget::Inet { addr, .. } => Some(*addr),
        ServerTarget::Unix(_) => None,
    }
}
