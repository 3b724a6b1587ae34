//! weir-proxy: the runtime. Start-up (limits, binding, daemon, privileges),
//! per-thread event loops, `mode tcp` sessions, health checks, logging and
//! signals. See `docs/design.md` for the threading model.
// Network input never panics: no unwrap or expect outside tests.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)
)]

#[allow(unsafe_code)]
pub mod alloc;
pub mod bind;
pub mod capture;
pub mod checks;
pub mod clock;
pub mod conn;
pub mod conn_io;
pub mod connect;
pub mod cut;
pub mod dns;
pub mod fcgi;
pub mod forward;
pub mod freq;
pub mod h2;
pub mod http;
pub mod ids;
pub mod limits;
#[allow(unsafe_code)]
pub mod listen;
pub mod log;
mod logfwd;
pub mod lua;
pub mod mail;
#[allow(unsafe_code)]
pub mod master;
mod peers;
pub mod profile;
pub mod rates;
mod runtime;
pub mod sendq;
pub mod session;
#[allow(unsafe_code)]
pub mod sessions;
#[allow(unsafe_code)]
pub mod splice;
pub mod spoe;
pub mod state;
pub mod stats;
pub(crate) mod stats_socket;
pub mod sticky;
#[allow(unsafe_code)]
pub mod sys;
#[allow(unsafe_code)]
pub mod takeover;
pub mod tcp;
pub mod term;
pub mod timers;
pub mod tls;
pub mod worker;

#[cfg(test)]
#[path = "layers_tests.rs"]
mod layers;

use crate::log::level;
use crate::state::Shared;
use crate::worker::ThreadListener;
use std::sync::Arc;
use weir_config::Config;

/// How the command line wants weir to run.
#[derive(Debug, Default)]
pub struct StartOptions {
    /// `-d`/`-db`: stay in the foreground even if `daemon` is set.
    pub foreground: bool,
    /// `-d`: debug mode; the proxies' "started" notices stay out of their
    /// logs, as haproxy's do.
    pub debug: bool,
    /// `-D`: daemonize.
    pub daemon: bool,
    pub pidfile: Option<String>,
    pub quiet: bool,
    /// `-sf`: processes told to finish (SIGUSR1) once weir listens.
    pub soft_stop_pids: Vec<i32>,
    /// `-st`: processes told to terminate (SIGTERM) once weir listens.
    pub hard_stop_pids: Vec<i32>,
    /// `-x <socket>`: take the listening sockets of the process answering
    /// there instead of binding new ones.
    pub takeover: Option<String>,
    /// A worker's link to its master (`-W`): the listening sockets come
    /// from it, the runtime API is served on it, and a SIGINT or SIGTERM
    /// ends the process with 128 + the signal, as haproxy's workers.
    pub master: Option<std::os::fd::OwnedFd>,
}

/// Runs weir on `cfg`: limits → live state → bind → detach → workers →
/// main loop (signals) until stopped. Returns the process exit code; errors
/// before anything runs are returned as messages (one per problem).
pub fn run(mut cfg: Config, mut opts: StartOptions) -> Result<i32, Vec<String>> {
    state::build::dynamic_cookies(&mut cfg);
    let cfg = Arc::new(cfg);
    sys::block_stop_signals(true);
    let quiet = opts.quiet || cfg.global.quiet;
    let limits = limits::plan(&cfg.global, quiet).map_err(|e| vec![e])?;
    profile::init(limits.nthreads);
    if let Some(m) = &cfg.global.profiling_tasks {
        profile::set_mode(m);
    }
    // What a master or the process before hands on, before TLS is built:
    // the session ticket secret (and a master's listening sockets).
    let link = opts.master.take();
    let from_master = link.as_ref().map(master::channel::recv_start);
    match &from_master {
        Some(Ok((secret, _))) => {
            tls::tickets::adopt(*secret);
        }
        _ => {
            let old = opts.soft_stop_pids.iter().chain(&opts.hard_stop_pids);
            if let Some(s) = old
                .clone()
                .find_map(|&pid| takeover::fetch_private_secret(pid).ok())
            {
                tls::tickets::adopt(s);
            }
        }
    }
    let sh = Arc::new(state::build(cfg, limits, state::Carried::default())?);
    if let Some(rt) = lua::load_all(&sh.cfg)? {
        let _ = sh.lua.set(Arc::new(rt));
    }
    for w in state::saved::load(&sh) {
        limits::warn(quiet, &w);
    }
    http::service::register(runtime::services());
    lua::attach(&sh);
    let from_master = from_master.map(|r| r.map(|(_, fds)| fds));
    let bound = bind::bind_all(&sh, inherit(from_master, &opts, quiet))?;
    let peers = peers::bind(&sh, quiet)?;
    let forwards = logfwd::bind(&sh)?;
    // As haproxy: a process with nothing to listen on does not start (a
    // stats socket, a peers or log-forward listener is enough).
    if bound.per_thread.iter().all(Vec::is_empty)
        && bound.stats.is_empty()
        && !peers.listens()
        && !forwards.listens()
    {
        return Err(vec![format!(
            "[ALERT]    ({}) : [haproxy.main()] No enabled listener found (check for 'bind' directives) ! Exiting.",
            std::process::id()
        )]);
    }
    detach(&sh.cfg.global, &opts)?;
    for (pids, sig) in [
        (&opts.soft_stop_pids, libc::SIGUSR1),
        (&opts.hard_stop_pids, libc::SIGTERM),
    ] {
        for &pid in pids {
            if let Err(e) = sys::signal_pid(pid, sig) {
                limits::warn(quiet, &format!("failed to signal old process {pid}: {e}"));
            }
        }
    }
    for fe in sh.frontends.iter().filter(|_| !opts.debug) {
        fe.logger
            .send(level::NOTICE, &format!("Proxy {} started.", fe.name));
    }
    let (handles, mut done_rx) = start_workers(&sh, bound.per_thread)?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| vec![format!("[ALERT] cannot start the main event loop: {e}")])?;
    let nthreads = sh.nthreads;
    let code = rt.block_on(async move {
        checks::spawn_all(&sh);
        dns::spawn_all(&sh);
        lua::spawn_tasks(&sh);
        tokio::spawn(rates::run(sh.clone()));
        let teachers = peers::spawn(peers, &sh.stopping);
        logfwd::spawn(&sh, forwards);
        for (l, level, exposed) in bound.stats {
            crate::profile::spawn::<crate::profile::Cli, _>(stats_socket::serve(
                sh.clone(),
                l,
                level,
                exposed,
            ));
        }
        let worker = link.is_some();
        match link {
            Some(link) => {
                tokio::spawn(master::serve_link(sh.clone(), link, bound.exposed));
            }
            None => stats_socket::serve_private(&sh, bound.exposed),
        }
        let code = main_loop(&sh, &mut done_rx, nthreads, quiet, worker).await;
        // A soft stop hands the stick tables to the next process first.
        if *sh.stopping.borrow() && !*sh.killing.borrow() {
            for t in teachers {
                let _ = tokio::time::timeout(std::time::Duration::from_secs(6), t).await;
            }
        }
        code
    });
    drop(rt);
    for h in handles {
        let _ = h.join();
    }
    Ok(code)
}

/// The listening sockets of a previous process: the master's (a worker),
/// or those `-x` names.
fn inherit(
    from_master: Option<std::io::Result<Vec<std::os::fd::OwnedFd>>>,
    opts: &StartOptions,
    quiet: bool,
) -> takeover::Inherited {
    let (got, from) = match (from_master, &opts.takeover) {
        (Some(fds), _) => (fds, "the master".to_string()),
        (None, Some(path)) => (
            std::os::unix::net::UnixStream::connect(path).and_then(takeover::fetch_fds),
            format!("'{path}'"),
        ),
        // `-sf` alone: the old weir's sockets, through its private name.
        (None, None) => match opts
            .soft_stop_pids
            .iter()
            .chain(&opts.hard_stop_pids)
            .find_map(|&pid| takeover::fetch_private(pid).ok())
        {
            Some(fds) => return takeover::Inherited::from_fds(fds),
            None => return takeover::Inherited::default(),
        },
    };
    match got {
        Ok(fds) => takeover::Inherited::from_fds(fds),
        Err(e) => {
            limits::warn(
                quiet,
                &format!("failed to get the listening sockets from {from} ({e}); binding new ones"),
            );
            takeover::Inherited::default()
        }
    }
}

/// Detaches (daemon, pidfile), then confines (chroot, user and group).
fn detach(g: &weir_config::Global, opts: &StartOptions) -> Result<(), Vec<String>> {
    let fail = |m: String| vec![m];
    let daemon = (g.daemon || opts.daemon) && !opts.foreground;
    let pidfile = opts.pidfile.clone().or_else(|| g.pidfile.clone());
    if daemon {
        sys::daemonize(pidfile.as_deref())
            .map_err(|e| fail(format!("[ALERT] cannot daemonize: {e}")))?;
    } else if let Some(p) = &pidfile {
        std::fs::write(p, format!("{}\n", std::process::id()))
            .map_err(|e| fail(format!("[ALERT] cannot create pidfile {p}: {e}")))?;
    }
    let uid = match (&g.user, g.uid) {
        (Some(u), _) => Some(
            sys::lookup_user(u)
                .map_err(|e| fail(format!("[ALERT] {e}")))?
                .0,
        ),
        (None, u) => u,
    };
    let gid = match (&g.group, g.gid) {
        (Some(gr), _) => Some(sys::lookup_group(gr).map_err(|e| fail(format!("[ALERT] {e}")))?),
        (None, gid) => gid,
    };
    if let Some(dir) = &g.chroot {
        sys::chroot(dir).map_err(|e| fail(format!("[ALERT] cannot chroot to '{dir}': {e}")))?;
    }
    sys::drop_privileges(uid, gid).map_err(|e| fail(format!("[ALERT] cannot drop privileges: {e}")))
}

/// The worker threads, and the channel where each says it ended.
type Workers = (
    Vec<std::thread::JoinHandle<()>>,
    tokio::sync::mpsc::UnboundedReceiver<usize>,
);

/// Starts one worker thread per listener set (pinned by `cpu-map`); each
/// reports its index on the channel when it ends.
fn start_workers(
    sh: &Arc<Shared>,
    per_thread: Vec<Vec<ThreadListener>>,
) -> Result<Workers, Vec<String>> {
    let g = &sh.cfg.global;
    let cpus = weir_config::parse::thread_cpus(&g.cpu_map, sh.nthreads, g.nbproc.is_some());
    let (done_tx, done_rx) = tokio::sync::mpsc::unbounded_channel::<usize>();
    let mut handles = Vec::new();
    for (t, listeners) in per_thread.into_iter().enumerate() {
        let sh2 = sh.clone();
        let cpu = cpus.get(t).cloned().flatten();
        let tx = done_tx.clone();
        let h = std::thread::Builder::new()
            .name(format!("weir-{}", t + 1))
            .spawn(move || {
                if let Err(e) = worker::run_thread(sh2, t + 1, cpu, listeners) {
                    crate::log::console("ALERT", &format!("thread {}: {e}", t + 1));
                }
                let _ = tx.send(t);
            })
            .map_err(|e| vec![format!("[ALERT] cannot start thread {}: {e}", t + 1)])?;
        handles.push(h);
    }
    Ok((handles, done_rx))
}

/// Waits for signals: SIGUSR1 soft stop (after `grace`, until sessions end or
/// `hard-stop-after`), SIGTERM/SIGINT hard stop.
async fn main_loop(
    sh: &Arc<Shared>,
    done: &mut tokio::sync::mpsc::UnboundedReceiver<usize>,
    nthreads: usize,
    quiet: bool,
    worker: bool,
) -> i32 {
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut usr1), Ok(mut term), Ok(mut int), Ok(mut hup)) = (
        signal(SignalKind::user_defined1()),
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
        signal(SignalKind::hangup()),
    ) else {
        crate::log::console("ALERT", "cannot install signal handlers");
        return 1;
    };
    sys::block_stop_signals(false);
    let mut finished = 0;
    let mut hard_deadline: Option<tokio::time::Instant> = None;
    loop {
        let hard_wait = async {
            match hard_deadline {
                Some(d) => tokio::time::sleep_until(d).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = usr1.recv() => {
                let g = &sh.cfg.global;
                if let Some(grace) = g.grace {
                    tokio::time::sleep(grace).await;
                }
                if !quiet {
                    crate::log::console("WARNING", &format!("soft stop: closing listeners, waiting for {} sessions", sh.actconn.load(std::sync::atomic::Ordering::Relaxed)));
                }
                for fe in &sh.frontends {
                    fe.logger.send(level::WARNING, &format!(
                        "Proxy {} stopped (cumulated conns: FE: {}, BE: 0).",
                        fe.name, fe.total.load(std::sync::atomic::Ordering::Relaxed)
                    ));
                }
                sh.stopping.send_replace(true);
                if let Some(h) = g.hard_stop_after {
                    hard_deadline = Some(tokio::time::Instant::now() + h);
                }
            }
            _ = term.recv() => { hard_stop(sh); return if worker { 128 + libc::SIGTERM } else { 0 }; }
            _ = int.recv() => { hard_stop(sh); return if worker { 128 + libc::SIGINT } else { 0 }; }
            _ = hup.recv() => {}
            _ = hard_wait => {
                if !quiet {
                    crate::log::console("WARNING", "hard-stop-after reached: killing remaining sessions");
                }
                hard_stop(sh);
                return 0;
            }
            r = done.recv() => {
                match r {
                    Some(_) => {
                        finished += 1;
                        if finished >= nthreads { return 0; }
                    }
                    None => return 0,
                }
            }
        }
    }
}

fn hard_stop(sh: &Shared) {
    sh.stopping.send_replace(true);
    sh.killing.send_replace(true);
    sessions::wake_everyone(sh);
}
