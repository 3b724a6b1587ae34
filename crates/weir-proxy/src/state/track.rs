//! `track [<backend>/]<server>`: a server whose state follows another's —
//! its health checks' verdicts and its maintenance — as haproxy's tracking
//! servers do. Links are made once every backend is built, and by
//! `add server`.

use super::{BackendId, BackendRt, ServerId, ServerRt, Shared};
use crate::log::level;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// Links every configured server with `track` to the server it follows;
/// one error per link that cannot be made.
pub fn link(backends: &[Arc<BackendRt>], errors: &mut Vec<String>) {
    for (bi, be) in backends.iter().enumerate() {
        for (id, s) in be.servers() {
            let Some(t) = &s.conf.track else {
                continue;
            };
            let me = (BackendId::new(bi), id);
            if let Err(e) = attach(backends, me, &be.name, t) {
                errors.push(format!(
                    "[ALERT] config : backend '{}', server '{}': {e}",
                    be.name, s.name
                ));
            }
        }
    }
}

/// The server `t` names from backend `own`, and whether it may be tracked.
pub fn target(
    backends: &[Arc<BackendRt>],
    own: &str,
    t: &(Option<String>, String),
) -> Result<(BackendId, ServerId), String> {
    let bname = t.0.as_deref().unwrap_or(own);
    let (bi, be) = backends
        .iter()
        .enumerate()
        .find(|(_, b)| b.name == bname)
        .ok_or_else(|| format!("unable to find required proxy '{bname}' for tracking."))?;
    let id = be
        .server_named(&t.1)
        .ok_or_else(|| format!("unable to find required server '{}' for tracking.", t.1))?;
    let s = be.server(id);
    if s.dynamic {
        return Err(format!(
            "unable to use {bname}/{} for tracking as it is a dynamic server.",
            t.1
        ));
    }
    if !s.conf.check && s.conf.track.is_none() {
        return Err(format!(
            "unable to use {bname}/{} for tracking as it does not have any check nor agent enabled.",
            t.1
        ));
    }
    Ok((BackendId::new(bi), id))
}

/// Makes server `me` follow the server `t` names.
pub fn attach(
    backends: &[Arc<BackendRt>],
    me: (BackendId, ServerId),
    own: &str,
    t: &(Option<String>, String),
) -> Result<(), String> {
    let to = target(backends, own, t)?;
    let (Some(mine), Some(theirs)) = (server(backends, me), server(backends, to)) else {
        return Err("internal: a server to link is missing".into());
    };
    let _ = mine.tracks.set(to);
    if let Ok(mut l) = theirs.trackers.lock() {
        l.push(me);
    }
    // It starts in the state of the server it follows.
    let (up, maint) = backends.get(to.0.index()).map_or((true, false), |b| {
        let set = b.set();
        let i = to.1.index();
        let st = set.state(i).unwrap_or((true, false, 0, false));
        (st.0, st.1 || set.imaint(i))
    });
    if let Some(b) = backends.get(me.0.index()) {
        let mut set = b.set();
        set.set_up(me.1.index(), up);
        set.set_imaint(me.1.index(), maint);
    }
    Ok(())
}

/// Unlinks server `me` from the server it follows (`del server`).
pub fn detach(backends: &[Arc<BackendRt>], me: (BackendId, ServerId)) {
    let Some(to) = server(backends, me).and_then(|s| s.tracks.get().copied()) else {
        return;
    };
    if let Some(Ok(mut l)) = server(backends, to).map(|s| s.trackers.lock()) {
        l.retain(|t| *t != me);
    }
}

fn server(backends: &[Arc<BackendRt>], (b, s): (BackendId, ServerId)) -> Option<&Arc<ServerRt>> {
    backends.get(b.index())?.server_at(s)
}

/// The servers that follow `s`, the last linked first.
fn followers(s: &ServerRt) -> Vec<(BackendId, ServerId)> {
    s.trackers
        .lock()
        .map(|l| l.iter().rev().copied().collect())
        .unwrap_or_default()
}

/// A tracked server's health changed: its followers (and theirs) go up or
/// down with it, each with haproxy's line.
pub fn pass_health(sh: &Shared, from: &BackendRt, s: &ServerRt, up: bool) {
    for (b, i) in followers(s) {
        let Some(be) = sh.backends.get(b.index()) else {
            continue;
        };
        let Some(f) = be.server_at(i) else {
            continue;
        };
        let (act, bck) = {
            let mut set = be.set();
            set.set_up(i.index(), up);
            set.usable_counts()
        };
        let via = format!("via {}/{}", from.name, s.name);
        let line = if up {
            format!(
                "Server {}/{} is UP {via}. {act} active and {bck} backup servers online. 0 sessions requeued, 0 total in queue.",
                be.name, f.name
            )
        } else {
            format!(
                "Server {}/{} is DOWN {via}. {act} active and {bck} backup servers left. {} sessions active, 0 requeued, 0 remaining in queue.",
                be.name,
                f.name,
                f.cur_conns.load(Ordering::Relaxed)
            )
        };
        be.logger
            .send(if up { level::NOTICE } else { level::ALERT }, &line);
        if up {
            be.slot_freed.notify_waiters();
        }
        pass_health(sh, be, f, up);
    }
}

/// A tracked server entered or left maintenance: its followers inherit
/// it, each with haproxy's line.
pub fn pass_maint(sh: &Shared, from: &BackendRt, s: &ServerRt, on: bool) {
    let via = format!("via {}/{}", from.name, s.name);
    for (b, i) in followers(s) {
        let Some(be) = sh.backends.get(b.index()) else {
            continue;
        };
        let Some(f) = be.server_at(i) else {
            continue;
        };
        // (Leaving it, it takes the state of the server it tracks.)
        let tracked_up = f.tracks.get().and_then(|(tb, ti)| {
            let set = sh.backends.get(tb.index())?.set();
            set.state(ti.index()).map(|st| st.0)
        });
        let (forced, was, up, act, bck) = {
            let mut set = be.set();
            if let (false, Some(u)) = (on, tracked_up) {
                set.set_up(i.index(), u);
            }
            let st = set.state(i.index()).unwrap_or((true, false, 0, false));
            let was = set.imaint(i.index());
            set.set_imaint(i.index(), on);
            let (act, bck) = set.usable_counts();
            (st.1, was, st.0, act, bck)
        };
        if was == on || (forced && on) {
            continue;
        }
        let who = format!("Server {}/{}", be.name, f.name);
        let line = match (on, forced, up) {
            (false, true, _) => format!("{who} remains in forced maintenance."),
            (false, false, _) => format!("{who} is UP/READY (leaving maintenance)."),
            (true, _, false) => format!("{who} was DOWN and now enters maintenance {via}."),
            (true, _, true) => format!(
                "{who} is going DOWN for maintenance {via}. {act} active and {bck} backup servers left. {} sessions active, 0 requeued, 0 remaining in queue.",
                f.cur_conns.load(Ordering::Relaxed)
            ),
        };
        let sev = if on && up {
            level::ALERT
        } else {
            level::NOTICE
        };
        be.logger.send(sev, &line);
        if !on {
            be.slot_freed.notify_waiters();
        }
        if !forced {
            pass_maint(sh, be, f, on);
        }
    }
}
