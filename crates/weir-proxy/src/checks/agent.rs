//! Agent checks (`agent-check`): every `agent-inter`, a TCP connection to
//! the agent, `agent-send` written, one line read; its words set the
//! server's weight (`75%`), limit (`maxconn:30`), administrative state
//! (`ready`, `drain`, `maint`) and operational state (`up`, `down`,
//! `fail`, `stopped`), as haproxy's agent does. An agent that cannot be
//! reached changes nothing (the health check judges reachability).

use super::{settle, Ordering};
use crate::log::level;
use crate::state::{admin, BackendRt, ServerId, ServerRt, ServerTarget, Shared};
use crate::stats::CheckResult;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use weir_admin::cli::AdminState;

/// The longest reply read: a line beyond it is judged on what came.
const MAX_REPLY: usize = 1024;

/// What one reply asks for; `None` where it says nothing.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Reply {
    pub weight_pct: Option<u32>,
    pub maxconn: Option<u32>,
    pub admin: Option<AdminState>,
    /// `up`, or `down`/`fail`/`stopped`: the word, for the log line.
    pub op: Option<(bool, String)>,
}

/// Reads an agent's line: words split by spaces, tabs and commas, up to
/// the first line end; a word that starts with `#` starts a description
/// of the state (`fail #disk full` is logged as `fail (disk full)`).
/// Unknown words are left.
pub(crate) fn parse_reply(text: &[u8]) -> Reply {
    let line = text
        .split(|b| matches!(b, b'\r' | b'\n'))
        .next()
        .unwrap_or(text);
    let line = String::from_utf8_lossy(line);
    let (line, desc) = split_description(&line);
    let mut r = Reply::default();
    for w in line.split([' ', '\t', ',']).filter(|w| !w.is_empty()) {
        let lower = w.to_ascii_lowercase();
        match lower.as_str() {
            "ready" => r.admin = Some(AdminState::Ready),
            "drain" => r.admin = Some(AdminState::Drain),
            "maint" => r.admin = Some(AdminState::Maint),
            "up" => r.op = Some((true, lower)),
            "down" | "fail" | "stopped" => {
                let word = match &desc {
                    Some(d) => format!("{lower} ({d})"),
                    None => lower,
                };
                r.op = Some((false, word));
            }
            _ => {
                if let Some(n) = lower.strip_prefix("maxconn:") {
                    r.maxconn = n.parse().ok().or(r.maxconn);
                } else if let Some(p) = lower.strip_suffix('%') {
                    r.weight_pct = p.parse().ok().or(r.weight_pct);
                }
            }
        }
    }
    r
}

/// The words before a word that starts with `#`, and the text after it.
fn split_description(line: &str) -> (&str, Option<String>) {
    let mut at = 0;
    for w in line.split_inclusive([' ', '\t', ',']) {
        if w.starts_with('#') {
            let d = line.get(at + 1..).unwrap_or_default().trim();
            return (line.get(..at).unwrap_or(line), Some(d.to_string()));
        }
        at += w.len();
    }
    (line, None)
}

/// Starts the agent task of server `id` (paused for a server added at run
/// time until `enable agent`) after `offset`; it ends with the process or the server.
pub fn spawn(sh: &Arc<Shared>, be: &Arc<BackendRt>, id: ServerId, offset: Duration) {
    crate::profile::spawn::<crate::profile::Check, _>(run(sh.clone(), be.clone(), id, offset));
}

async fn run(sh: Arc<Shared>, be: Arc<BackendRt>, id: ServerId, offset: Duration) {
    tokio::time::sleep(offset).await;
    let rt = be.server(id);
    let a = &rt.conf.agent;
    let inter = a.inter.unwrap_or(rt.conf.inter);
    let mut stop = sh.stopping.subscribe();
    // The last outcome logged (`option log-health-checks`).
    let mut last: Option<(bool, String)> = None;
    loop {
        if rt.deleted.load(Ordering::Relaxed) {
            return;
        }
        if !rt.agent_paused.load(Ordering::Relaxed) {
            let started = Instant::now();
            let seen = match ask(&sh, &be, rt).await {
                Ok(text) => apply(&sh, &be, id, &parse_reply(&text), started, &mut last),
                // Unreachable: nothing changes but what the runtime API shows.
                Err((reason, info)) => CheckResult {
                    ok: false,
                    reason: reason.into(),
                    detail: info.map(|i| format!(", info: \"{i}\"")).unwrap_or_default(),
                    duration: started.elapsed(),
                    log_info: false,
                },
            };
            let down = rt.agent_down.load(Ordering::Relaxed);
            if let Ok(mut v) = rt.agent_view.lock() {
                v.record(&seen, !down, u32::from(!down));
            }
        }
        tokio::select! {
            _ = tokio::time::sleep(inter) => {}
            _ = stop.wait_for(|v| *v) => return,
        }
    }
}

/// One exchange with the agent: its reply, or why there is none (the
/// reason's long form, and the error's text).
async fn ask(
    sh: &Shared,
    be: &BackendRt,
    rt: &ServerRt,
) -> Result<Vec<u8>, (&'static str, Option<String>)> {
    const L4CON: &str = "Layer4 connection problem";
    let a = &rt.conf.agent;
    // (What the runtime API set first.)
    let set = rt.targets.lock().map(|t| t.clone()).unwrap_or_default();
    let port = set.agent_port.or(a.port).ok_or((L4CON, None))?;
    let ip = match (set.agent_addr, &a.addr) {
        (Some(ip), _) => ip,
        (None, Some(text)) => text.parse().map_err(|_| (L4CON, None))?,
        (None, None) => match rt.target() {
            ServerTarget::Inet { addr, .. } => addr.ip(),
            ServerTarget::Unix(_) => return Err((L4CON, None)),
        },
    };
    let send = set.agent_send.as_deref().unwrap_or(&a.send);
    let px = sh.proxy(be.proxy);
    let wait = px
        .timeouts
        .check
        .or(px.timeouts.connect)
        .unwrap_or(rt.conf.inter)
        .max(Duration::from_millis(1));
    let deadline = tokio::time::Instant::now() + wait;
    let ns = rt.conf.namespace.as_deref();
    let connect = crate::connect::tcp_in(ns, std::net::SocketAddr::new(ip, port));
    let mut c = match tokio::time::timeout_at(deadline, connect).await {
        Ok(Ok(c)) => c,
        Ok(Err(e)) => return Err((L4CON, Some(crate::checks::os_error_text(&e)))),
        Err(_) => return Err(("Layer4 timeout", None)),
    };
    let exchange = async {
        if !send.is_empty() {
            c.write_all(send.as_bytes()).await.ok()?;
        }
        let mut got = Vec::new();
        let mut buf = [0u8; 256];
        while got.len() < MAX_REPLY && !got.iter().any(|b| matches!(b, b'\r' | b'\n')) {
            match c.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => got.extend_from_slice(buf.get(..n).unwrap_or_default()),
            }
        }
        Some(got)
    };
    match tokio::time::timeout_at(deadline, exchange).await {
        Ok(Some(g)) if !g.is_empty() => Ok(g),
        Ok(_) => Err(("Layer7 invalid response", None)),
        Err(_) => Err(("Layer7 timeout", None)),
    }
}

/// Applies a reply in haproxy's order: weight, limit, administrative
/// state, then the operational state with its log line.
fn apply(
    sh: &Shared,
    be: &Arc<BackendRt>,
    id: ServerId,
    r: &Reply,
    started: Instant,
    last: &mut Option<(bool, String)>,
) -> CheckResult {
    let rt = be.server(id);
    let i = id.index();
    if let Some(p) = r.weight_pct {
        let w = (u64::from(rt.conf.weight) * u64::from(p) / 100).min(256) as u32;
        admin::set_weight(be, i, rt, w);
    }
    if let Some(m) = r.maxconn {
        be.set().set_maxconn(i, (m > 0).then_some(m));
        be.slot_freed.notify_waiters();
    }
    if let Some(st) = r.admin {
        admin::set_state_tracked(sh, be, i, rt, st);
        rt.drain_by_agent
            .store(st == AdminState::Drain, Ordering::Relaxed);
    }
    let Some((up, word)) = &r.op else {
        // A reply without a state word: haproxy's "CHECKED".
        return CheckResult {
            ok: true,
            reason: "No status change".into(),
            detail: String::new(),
            duration: started.elapsed(),
            log_info: false,
        };
    };
    rt.agent_down.store(!up, Ordering::Relaxed);
    let res = CheckResult {
        ok: *up,
        reason: if *up {
            "Layer7 check passed"
        } else {
            "Layer7 wrong status"
        }
        .into(),
        detail: format!(", code: 0, info: \"via agent : {word}\""),
        duration: started.elapsed(),
        log_info: true,
    };
    let outcome = (*up, word.clone());
    if sh.proxy(be.proxy).options.log_health_checks && last.as_ref() != Some(&outcome) {
        let line = format!(
            "Agent check for server {}/{} {}, reason: {}{}, check duration: {}ms, status: {}.",
            be.name,
            rt.name,
            if *up { "succeeded" } else { "failed" },
            res.reason,
            res.detail,
            res.duration.as_millis(),
            if *up { "1/1 UP" } else { "0/1 DOWN" }
        );
        be.logger.send(level::NOTICE, &line);
    }
    *last = Some(outcome);
    settle(sh, be, id, &res);
    res
}

#[cfg(test)]
#[path = "agent_tests.rs"]
mod tests;
