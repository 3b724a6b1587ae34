//! Binding: every frontend's listening sockets, one per thread that
//! accepts on it (taken from a previous process with `-x` where it has
//! them), and the stats sockets.

use crate::listen::{self, Expanded, Listener};
use crate::state::{FrontendId, Shared};
use crate::takeover;
use crate::worker::ThreadListener;
use std::os::fd::OwnedFd;
use std::sync::Arc;
use weir_admin::cli::Level;

/// A stats socket ready to serve: its level, and the listening sockets it
/// hands to a new process (`expose-fd listeners`).
pub type StatsListener = (Listener, Level, Option<Arc<Vec<OwnedFd>>>);

/// Everything bound: each worker thread's listeners, and the stats
/// sockets.
pub struct Bound {
    pub per_thread: Vec<Vec<ThreadListener>>,
    pub stats: Vec<StatsListener>,
    /// One copy of each listening socket, for `_getsocks`.
    pub exposed: Arc<Vec<std::os::fd::OwnedFd>>,
}

/// Binds the listeners of `sh`'s frontends and the stats sockets, or says
/// what could not be bound (one message each). `inherited`: sockets of a
/// previous process (`-x`, or the master's), taken by address before
/// binding. A copy of each listening socket is kept for `_getsocks` (a
/// master, a `stats socket … expose-fd listeners`, a new process started
/// with `-sf`).
pub fn bind_all(sh: &Shared, mut inherited: takeover::Inherited) -> Result<Bound, Vec<String>> {
    let mut errors = Vec::new();
    let per_thread = frontends(sh, &mut inherited, &mut errors);
    drop(inherited);
    // One copy of each listening socket for the stats sockets that hand
    // them to a new process.
    let g = &sh.cfg.global;
    let exposed = Arc::new(takeover::distinct(
        per_thread.iter().flatten().map(|tl| &tl.listener),
    ));
    let mut stats = Vec::new();
    for s in &g.stats_sockets {
        let level = Level::parse(&s.level).unwrap_or(Level::Operator);
        match stats_socket(s) {
            Ok(Some(l)) => stats.push((l, level, Some(exposed.clone()).filter(|_| s.expose_fd))),
            Ok(None) => {}
            Err(e) => errors.push(format!(
                "[ALERT] parsing [{}] : cannot bind 'stats socket': {e}",
                s.loc
            )),
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(Bound {
        per_thread,
        stats,
        exposed,
    })
}

/// Each thread's listeners for every frontend's bind lines.
fn frontends(
    sh: &Shared,
    inherited: &mut takeover::Inherited,
    errors: &mut Vec<String>,
) -> Vec<Vec<ThreadListener>> {
    let mut per_thread: Vec<Vec<ThreadListener>> = (0..sh.nthreads).map(|_| Vec::new()).collect();
    let reuseport = !sh.cfg.global.noreuseport;
    let g = &sh.cfg.global.sockbufs;
    let bufs = (g.rcv_client, g.snd_client);
    for (fe_idx, fe) in sh.frontends.iter().enumerate() {
        let px = sh.proxy(fe.proxy);
        for (b, fb) in px.binds.iter().zip(&fe.binds) {
            for a in &b.addrs {
                match listen::for_threads(a, b, &fb.threads, reuseport, fb.backlog, bufs, inherited)
                {
                    Ok(ls) => {
                        for (t, l) in ls {
                            let Some(mine) = per_thread.get_mut(t) else {
                                continue;
                            };
                            mine.push(ThreadListener {
                                frontend: FrontendId::new(fe_idx),
                                listener: l,
                                accept_proxy: b.accept_proxy,
                                maxconn: fb.maxconn,
                                bind: fb.info.clone(),
                                clitcpka: px.options.clitcpka.then_some(px.options.clitcpka_params),
                            });
                        }
                    }
                    Err(e) => errors.push(format!(
                        "[ALERT] parsing [{}] : {} '{}': {e}",
                        b.loc,
                        px.kind.keyword(),
                        px.name
                    )),
                }
            }
        }
    }
    per_thread
}

/// Binds one `stats socket` (none for a TCP address that expands to no
/// address).
pub fn stats_socket(s: &weir_config::StatsSocket) -> std::io::Result<Option<Listener>> {
    match listen::expand(&s.addr)? {
        Expanded::Unix(p, abns) => {
            let perms = listen::UnixPerms {
                mode: s.mode,
                user: s.user.as_deref(),
                group: s.group.as_deref(),
            };
            listen::bind_unix(&p, abns, perms, 16)
                .map(Some)
                .map_err(|e| std::io::Error::new(e.kind(), format!("{e} [{p}]")))
        }
        Expanded::Tcp(a) => match a.first() {
            Some(addr) => {
                let b = weir_config::Bind::new(Vec::new(), s.loc.clone());
                listen::bind_tcp(*addr, &b, false, 16, (None, None)).map(Some)
            }
            None => Ok(None),
        },
        Expanded::Fd(n) => listen::from_fd(n).map(Some),
    }
}
