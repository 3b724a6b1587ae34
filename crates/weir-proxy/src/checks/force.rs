//! What the runtime API forces on a server's checks (`set server …
//! health|agent|check-addr|check-port|agent-addr|agent-port|agent-send`),
//! with haproxy 2.6's answers and "changed from CLI" state lines.

use super::{set_nolb, set_state, settle_told};
use crate::state::{BackendRt, ServerId, Shared};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use weir_admin::cli_set::{CheckSet, Health};

const FROM_CLI: &str = ", changed from CLI";

/// Applies `c` to server `id`; the answer (empty when done).
pub(crate) fn apply(sh: &Shared, be: &Arc<BackendRt>, id: ServerId, c: &CheckSet) -> String {
    let rt = be.server(id);
    let (checked, agent) = (rt.conf.check, rt.conf.agent.enabled);
    let port = |p: &str| {
        p.parse::<u16>()
            .map_err(|_| "provided port is not an integer".to_string())
    };
    let ip = |a: &str| {
        a.parse::<std::net::IpAddr>()
            .map_err(|_| format!("invalid addr '{a}'"))
    };
    let set = |f: &dyn Fn(&mut crate::state::CheckTargets)| {
        if let Ok(mut t) = rt.targets.lock() {
            f(&mut t);
        }
        String::new()
    };
    // (Some answers end without the empty line, as haproxy's do.)
    let done: Result<String, String> = (|| {
        Ok(match c {
            CheckSet::CheckAddr(..) | CheckSet::CheckPort(_) if !checked => {
                return Err("health checks are not enabled on this server".into())
            }
            CheckSet::AgentAddr(..) | CheckSet::AgentPort(_) if !agent => {
                return Err("agent checks are not enabled on this server".into())
            }
            CheckSet::AgentSend(_) | CheckSet::Agent(_) if !agent => {
                "agent checks are not enabled on this server.\n".into()
            }
            CheckSet::CheckAddr(a, p) => {
                let (a, p) = (ip(a)?, p.as_deref().map(port).transpose()?);
                set(&|t| {
                    t.check_addr = Some(a);
                    t.check_port = p.or(t.check_port);
                })
            }
            CheckSet::CheckPort(p) => {
                let p = port(p)?;
                set(&|t| t.check_port = Some(p))
            }
            CheckSet::AgentAddr(a, p) => {
                let (a, p) = (ip(a)?, p.as_deref().map(port).transpose()?);
                set(&|t| {
                    t.agent_addr = Some(a);
                    t.agent_port = p.or(t.agent_port);
                })
            }
            CheckSet::AgentPort(p) => {
                let p = port(p)?;
                set(&|t| t.agent_port = Some(p))
            }
            CheckSet::AgentSend(v) => set(&|t| t.agent_send = Some(v.clone())),
            CheckSet::Agent(up) => {
                rt.agent_down.store(!up, Ordering::Relaxed);
                settle_told(sh, be, id, FROM_CLI);
                String::new()
            }
            CheckSet::Health(h) => {
                health(sh, be, id, *h);
                String::new()
            }
        })
    })();
    done.unwrap_or_else(|e| e)
}

/// `health up|stopping|down`: the server's state and its check's health
/// (full, or none), and NOLB for `stopping`.
fn health(sh: &Shared, be: &Arc<BackendRt>, id: ServerId, h: Health) {
    let rt = be.server(id);
    let up = h != Health::Down;
    // (A server without checks has a health too, as haproxy shows it.)
    if let Ok(mut v) = rt.check.lock() {
        v.health = if up { v.rise + v.fall - 1 } else { 0 };
        if v.enabled {
            v.up = up;
        }
    }
    rt.health_forced
        .store(if up { 1 } else { 2 }, Ordering::Relaxed);
    let was_nolb = rt.nolb.load(Ordering::Relaxed);
    match h {
        Health::Down => {
            if was_nolb {
                set_nolb(sh, be, id, false, None);
            }
            set_state(sh, be, id, false, FROM_CLI);
        }
        Health::Stopping => {
            let was_up = be.set().is_up(id.index());
            if !was_up {
                // (Up first, silently: the line says "stopping".)
                be.set().set_up(id.index(), true);
            }
            if !was_nolb {
                set_nolb(sh, be, id, true, Some(FROM_CLI));
            }
        }
        Health::Up if was_nolb => set_nolb(sh, be, id, false, Some(FROM_CLI)),
        Health::Up => set_state(sh, be, id, true, FROM_CLI),
    }
}
