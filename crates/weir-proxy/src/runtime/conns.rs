//! `show servers conn [<backend>]`: each server's connections in use and
//! idle, per thread, in haproxy 2.6's columns.

use crate::http::pool;
use crate::state::{ServerTarget, Shared};
use std::fmt::Write;
use std::sync::atomic::Ordering;

/// The dump, or haproxy's answer for a backend that is not there.
pub(super) fn show(sh: &Shared, only: Option<&str>) -> String {
    if only.is_some_and(|n| !sh.backends.iter().any(|b| b.name == n)) {
        return "Can't find backend.\n".into();
    }
    let n = sh.nthreads.max(1);
    let mut out = format!(
        "# bkname/svname bkid/svid addr port - purge_delay used_cur used_max need_est unsafe_nb safe_nb idle_lim idle_cur idle_per_thr[{n}]\n"
    );
    for be in &sh.backends {
        if only.is_some_and(|o| o != be.name) {
            continue;
        }
        for (id, s) in be.servers() {
            let conf = &s.conf;
            if conf.dispatch {
                continue;
            }
            let (addr, port) = match s.target() {
                ServerTarget::Inet { addr, .. } => (addr.ip().to_string(), addr.port()),
                ServerTarget::Unix(p) => (crate::state::unix_text(&p), 0),
            };
            let idle = pool::census(be.proxy, id);
            let mut per = vec![0usize; n];
            for (t, c) in &idle.per_thread {
                if let Some(slot) = t.checked_sub(1).and_then(|t| per.get_mut(t)) {
                    *slot += c;
                }
            }
            // (weir keeps no estimate of the connections a server needs:
            // the most it had at once stands for it.)
            let used_max = s.smax.load(Ordering::Relaxed);
            let _ = write!(
                out,
                "{}/{} {}/{} {addr} {port} - {} {} {used_max} {used_max} {} {} {} {}",
                be.name,
                s.name,
                sh.proxy(be.proxy).uid,
                conf.uid,
                conf.pool_purge_delay.map_or(0, |d| d.as_millis()),
                s.cur_conns.load(Ordering::Relaxed),
                idle.unproven,
                idle.proven,
                conf.pool_max_conn.map_or(-1, |m| m as i64),
                idle.total(),
            );
            for c in per {
                let _ = write!(out, " {c}");
            }
            out.push('\n');
        }
    }
    out
}
