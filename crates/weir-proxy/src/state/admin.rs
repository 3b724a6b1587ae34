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

/// Puts server `i` in maintenance, drain, or back to ready.
pub fn set_state(be: &BackendRt, i: usize, s: &ServerRt, st: AdminState) {
    {
        let mut set = be.set();
        if st != AdminState::Maint && set.state(i).is_some_and(|(_, maint, _, _)| maint) {
            leave_maint(&mut set, i, s);
        }
        match st {
            AdminState::Maint => set.set_maint(i, true),
            AdminState::Drain => {
                s.drain.store(true, Ordering::Relaxed);
                set.set_maint(i, false);
                set.set_weight(i, 0);
            }
            AdminState::Ready => {
                s.drain.store(false, Ordering::Relaxed);
                set.set_maint(i, false);
                set.set_weight(i, s.uweight.load(Ordering::Relaxed));
            }
        }
    }
    if st == AdminState::Ready {
        be.slot_freed.notify_waiters();
    }
}

/// A server leaving maintenance is up at once, its check restarting from
/// "just up" (`rise`), as in HAProxy.
fn leave_maint(set: &mut weir_balance::ServerSet, i: usize, s: &ServerRt) {
    set.set_up(i, true);
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
