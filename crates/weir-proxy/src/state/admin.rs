//! Changes to a server's administrative state, weight and address, made
//! by the runtime API and by a server state file read at start, through
//! the server set the balancer and the health checks use.

use super::{BackendRt, ServerRt, ServerTarget};
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::Ordering;
use weir_admin::cli::AdminState;

/// Sets server `i`'s weight as the user asked (a draining server keeps
/// 0 until it is ready again).
pub fn set_weight(be: &BackendRt, i: usize, s: &ServerRt, w: u32) {
    s.uweight.store(w, Ordering::Relaxed);
    if !s.drain.load(Ordering::Relaxed) {
        be.set().set_weight(i, w);
    }
    if w > 0 {
        be.slot_freed.notify_waiters();
    }
}

/// [`set_state`], and the servers that track it inherit a maintenance.
pub fn set_state_tracked(
    sh: &super::Shared,
    be: &BackendRt,
    i: usize,
    s: &ServerRt,
    st: AdminState,
) {
    let was = be.set().state(i).is_some_and(|x| x.1);
    set_state(be, i, s, st);
    let now = st == AdminState::Maint;
    if was != now {
        super::track::pass_maint(sh, be, s, now);
    }
}

/// Puts server `i` in maintenance, drain, or back to ready, and logs the
/// change as haproxy does.
pub fn set_state(be: &BackendRt, i: usize, s: &ServerRt, st: AdminState) {
    let (was_maint, backup) = be
        .set()
        .state(i)
        .map_or((false, false), |(_, m, _, b)| (m, b));
    let agent_down = s.agent_down.load(Ordering::Relaxed);
    let was_up = be.set().state(i).is_none_or(|st| st.0);
    let was_drain = s.drain.load(Ordering::Relaxed);
    {
        let mut set = be.set();
        if st != AdminState::Maint && set.state(i).is_some_and(|(_, maint, _, _)| maint) {
            leave_maint(&mut set, i, s);
        }
        match st {
            AdminState::Maint => {
                set.set_maint(i, true);
                entered_maint(s);
            }
            AdminState::Drain => {
                s.drain.store(true, Ordering::Relaxed);
                set.set_maint(i, false);
                set.set_weight(i, 0);
            }
            AdminState::Ready => {
                s.drain.store(false, Ordering::Relaxed);
                s.drain_by_agent.store(false, Ordering::Relaxed);
                set.set_maint(i, false);
                set.set_weight(i, s.uweight.load(Ordering::Relaxed));
            }
        }
    }
    if st == AdminState::Ready {
        be.slot_freed.notify_waiters();
    }
    let down = agent_down || (st == AdminState::Maint && !was_up);
    log_state(be, s, st, (was_maint, was_drain), backup, down);
}

/// The lines haproxy logs when the administrative state changes (from
/// maintenance or drain, as `was` says).
fn log_state(
    be: &BackendRt,
    s: &ServerRt,
    st: AdminState,
    (maint, drain): (bool, bool),
    backup: bool,
    down: bool,
) {
    let op = if down { "DOWN" } else { "UP" };
    use crate::log::level;
    let who = format!(
        "{}Server {}/{}",
        if backup { "Backup " } else { "" },
        be.name,
        s.name
    );
    let (act, bck) = be.set().usable_counts();
    let none = act == 0 && bck == 0;
    let cur = s.cur_conns.load(Ordering::Relaxed);
    let lines: Vec<(u8, String)> = match (st, maint, drain) {
        (AdminState::Maint, false, _) if down => vec![(
            level::NOTICE,
            format!("{who} was DOWN and now enters maintenance."),
        )],
        (AdminState::Maint, false, _) => vec![(
            level::ALERT,
            format!(
                "{who} is going DOWN for maintenance. {act} active and {bck} backup servers left.{} {cur} sessions active, 0 requeued, 0 remaining in queue.",
                if act == 0 && bck > 0 { " Running on backup." } else { "" }
            ),
        )],
        (AdminState::Ready, true, _) => vec![(
            level::NOTICE,
            format!("{who} is {op}/READY (leaving forced maintenance)."),
        )],
        (AdminState::Drain, true, _) => vec![
            (level::NOTICE, format!("{who} is {op}/DRAIN (leaving forced maintenance).")),
            (level::NOTICE, format!("{who} remains in forced drain mode.")),
        ],
        (AdminState::Drain, false, false) => vec![(
            level::NOTICE,
            format!("{who} enters drain state. {act} active and {bck} backup servers online. 0 sessions requeued, 0 total in queue."),
        )],
        (AdminState::Ready, false, true) => vec![(
            level::NOTICE,
            format!("{who} is UP (leaving forced drain)."),
        )],
        _ => Vec::new(),
    };
    // (A server that was down already takes nothing away.)
    let going = !lines.is_empty()
        && matches!(st, AdminState::Maint | AdminState::Drain)
        && !(st == AdminState::Maint && down);
    for (sev, line) in lines {
        be.logger.send(sev, &line);
        if let Some(a) = &be.alerts {
            a.send(sev, &line);
        }
    }
    if going && none {
        be.logger.send(
            level::EMERG,
            &format!("{} {} has no server available!", be.kind_word, be.name),
        );
    }
}

/// A server entering maintenance has no health left (`show servers
/// state` reads 0); its check, if any, gives it back on leaving.
pub fn entered_maint(s: &ServerRt) {
    if let Ok(mut v) = s.check.lock() {
        v.health = 0;
    }
}

/// A server leaving maintenance is up at once, its check restarting from
/// "just up" (`rise`), as in HAProxy.
fn leave_maint(set: &mut weir_balance::ServerSet, i: usize, s: &ServerRt) {
    // (Unless its agent said it is down.)
    set.set_up(i, !s.agent_down.load(Ordering::Relaxed));
    s.check_restart.store(true, Ordering::Relaxed);
    if let Ok(mut v) = s.check.lock() {
        if v.enabled {
            v.up = true;
            v.health = v.rise;
        }
    }
}

/// Changes server `s`'s address (and port); returns the former one.
/// Connections to the old address are not reused.
pub fn set_addr(s: &ServerRt, ip: IpAddr, port: Option<u16>) -> Result<SocketAddr, &'static str> {
    let Ok(mut t) = s.target.lock() else {
        return Err("The server is busy, try again.");
    };
    let ServerTarget::Inet { addr, port: spec } = &mut *t else {
        return Err("A UNIX socket server has no IP address to change.");
    };
    let old = *addr;
    addr.set_ip(ip);
    if let Some(p) = port {
        addr.set_port(p);
        *spec = weir_config::addr::PortSpec::Fixed(p);
    }
    s.conn_gen.fetch_add(1, Ordering::Relaxed);
    // (A server started without an address leaves its maintenance.)
    s.no_addr.store(false, Ordering::Relaxed);
    Ok(old)
}

/// A checked server saved as down starts down: its check must see it
/// rise again before it takes traffic.
pub fn set_down(be: &BackendRt, i: usize, s: &ServerRt) {
    let Ok(mut v) = s.check.lock() else {
        return;
    };
    if !v.enabled {
        return;
    }
    v.up = false;
    v.health = 0;
    be.set().set_up(i, false);
}
