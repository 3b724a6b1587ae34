//! weir-proxy: the runtime. Start-up (limits, binding, daemon, privileges),
//! per-thread event loops, `mode tcp` sessions, health checks, logging and
//! signals. See `docs/design.md` for the threading model.

pub mod alloc;
pub mod capture;
pub mod checks;
pub mod clock;
pub mod conn;
pub mod connect;
pub mod forward;
pub mod h2;
pub mod http;
pub mod listen;
pub mod log;
pub mod profile;
pub mod rates;
mod runtime;
pub mod session;
pub mod sessions;
pub mod splice;
pub mod state;
pub mod stats;
mod stats_socket;
pub mod sys;
pub mod takeover;
pub mod tcp;
pub mod tls;
pub mod worker;

use crate::listen::{Expanded, Listener};
use crate::log::{level, Logger};
use crate::state::{BackendRt, FrontendRt, ServerRt, ServerTarget, Shared};
use crate::worker::ThreadListener;
use std::collections::HashMap;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64};
use std::sync::{Arc, Mutex};
use weir_balance::{Rng, ServerInfo, ServerSet};
use weir_config::addr::{Family, Host, PortSpec, ServerAddr};
use weir_config::Config;

/// How the command line wants weir to run.
#[derive(Debug, Clone, Default)]
pub struct StartOptions {
    /// `-d`/`-db`: stay in the foreground even if `daemon` is set.
    pub foreground: bool,
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
}

fn warn(quiet: bool, msg: &str) {
    if !quiet {
        crate::log::console("WARNING", msg);
    }
}

/// Fixed descriptors weir needs besides two per connection.
const FD_RESERVE: u64 = 64;

/// Resolves a server or log address at start-up.
pub fn resolve(a: &ServerAddr) -> Result<SocketAddr, String> {
    match a {
        ServerAddr::Inet { host, family, port } => {
            let p = match port {
                PortSpec::Fixed(p) => *p,
                _ => 0,
            };
            match host {
                Host::Ip(ip) => Ok(SocketAddr::new(*ip, p)),
                Host::Any => Err("missing address".into()),
                Host::Name(n) => (n.as_str(), p)
                    .to_socket_addrs()
                    .map_err(|e| format!("could not resolve address '{n}': {e}"))?
                    .find(|a| match family {
                        Family::V4 => a.is_ipv4(),
                        Family::V6 => a.is_ipv6(),
                        Family::Unspec => true,
                    })
                    .ok_or_else(|| format!("could not resolve address '{n}'")),
            }
        }
        ServerAddr::Unix(p) => Err(format!("'{p}' is not an IP address")),
        ServerAddr::Abns(p) => Err(format!(
            "abstract namespace address '{p}' is not supported for servers"
        )),
    }
}

fn open_logger(
    targets: &[weir_config::LogTarget],
    cache: &mut HashMap<String, Arc<log::Sink>>,
    tag: &str,
    host: &str,
) -> Result<Logger, String> {
    let mut sinks = Vec::new();
    for t in targets {
        let key = format!("{:?}", t);
        let sink = match cache.get(&key) {
            Some(s) => s.clone(),
            None => {
                let s = log::open_sink(t, &resolve)
                    .map_err(|e| format!("[{}] log target: {e}", t.loc))?;
                cache.insert(key, s.clone());
                s
            }
        };
        sinks.push(sink);
    }
    Ok(Logger::new(sinks, tag, host))
}

/// Builds the live state, binds everything, detaches if asked, drops
/// privileges and runs until stopped. Returns the process exit code; errors
/// before anything runs are returned as messages (one per problem).
pub fn run(cfg: Config, opts: StartOptions) -> Result<i32, Vec<String>> {
    let cfg = Arc::new(cfg);
    sys::block_stop_signals(true);
    let g = &cfg.global;
    let quiet = opts.quiet || g.quiet;
    let mut errors: Vec<String> = Vec::new();
    let nthreads = g
        .nbthread
        .or(g.nbproc)
        .unwrap_or_else(sys::usable_cpus)
        .max(1);
    profile::init(nthreads);

    // Descriptor limits and the effective maxconn.
    let (_, hard) = sys::nofile_limits().unwrap_or((1024, 1024));
    let hard = g.fd_hard_limit.map_or(hard, |l| l.min(hard));
    let limit = g.ulimit_n.map_or(hard, |n| n.min(hard));
    let mut maxconn = u64::from(g.maxconn.unwrap_or(0));
    if maxconn == 0 {
        maxconn = (limit.saturating_sub(FD_RESERVE) / 2).clamp(1, 100_000);
    }
    let need = maxconn * 2 + FD_RESERVE;
    if need > limit {
        if g.strict_limits {
            errors.push(format!("[ALERT] config : maxconn {maxconn} needs {need} file descriptors but the limit is {limit} (strict-limits is set)"));
        } else if g.ulimit_n.is_some() {
            // As HAProxy: an explicit ulimit-n is obeyed; running out of
            // descriptors then pauses accepting.
            warn(quiet, &format!("FD limit ({limit}) too low for maxconn={maxconn}. Please raise 'ulimit-n' to {need} or more to avoid any trouble."));
        } else {
            let lowered = (limit.saturating_sub(FD_RESERVE) / 2).max(1);
            warn(quiet, &format!("maxconn {maxconn} needs {need} file descriptors but the hard limit is {limit}: lowering maxconn to {lowered}"));
            maxconn = lowered;
        }
    }
    let fd_target = g
        .ulimit_n
        .map_or((maxconn * 2 + FD_RESERVE).min(hard), |n| n.min(hard));
    if let Err(e) = sys::set_nofile(fd_target) {
        warn(
            quiet,
            &format!("cannot set the file descriptor limit to {fd_target}: {e}"),
        );
    }
    let maxconn = maxconn as u32;

    let hostname = sys::hostname();
    let log_host = g
        .log_send_hostname
        .clone()
        .map(|h| if h.is_empty() { hostname.clone() } else { h })
        .unwrap_or_default();
    let mut sink_cache = HashMap::new();
    let global_tag = g.log_tag.clone().unwrap_or_else(|| "haproxy".into());
    let global_logger = open_logger(&g.logs, &mut sink_cache, &global_tag, &log_host)
        .unwrap_or_else(|e| {
            errors.push(e);
            Logger::default()
        });

    // Backends.
    let mut backends = Vec::new();
    let mut backend_index: HashMap<String, usize> = HashMap::new();
    let mut loggers: Vec<Logger> = Vec::new();
    for px in &cfg.proxies {
        let tag = px.log_tag.clone().unwrap_or_else(|| global_tag.clone());
        loggers.push(
            open_logger(&px.logs, &mut sink_cache, &tag, &log_host).unwrap_or_else(|e| {
                errors.push(e);
                Logger::default()
            }),
        );
    }
    // Whether any log line shows a server connection's own address.
    let log_source = cfg.proxies.iter().any(|p| {
        p.log_format.as_ref().is_some_and(|f| {
            f.uses(weir_config::logformat::Var::BackendSrcIp)
                || f.uses(weir_config::logformat::Var::BackendSrcPort)
        })
    });
    for (pi, px) in cfg.proxies.iter().enumerate() {
        if !px.kind.is_backend() {
            continue;
        }
        let mut servers = Vec::new();
        let mut infos = Vec::new();
        for s in &px.servers {
            let target = match &s.addr {
                ServerAddr::Unix(p) => ServerTarget::Unix(p.clone()),
                a => match resolve(a) {
                    Ok(addr) => ServerTarget::Inet {
                        addr,
                        port: match a {
                            ServerAddr::Inet { port, .. } => *port,
                            _ => PortSpec::Same,
                        },
                    },
                    Err(e) => {
                        errors.push(format!(
                            "[ALERT] parsing [{}] : '{} {}' : {e}",
                            s.loc,
                            px.kind.keyword(),
                            px.name
                        ));
                        continue;
                    }
                },
            };
            let source = match &s.source {
                Some(a) => match resolve(a) {
                    Ok(x) => Some(x),
                    Err(e) => {
                        errors.push(format!(
                            "[ALERT] parsing [{}] : server '{}' source: {e}",
                            s.loc, s.name
                        ));
                        None
                    }
                },
                None => None,
            };
            let mut client_tls = |on: bool| {
                if !on {
                    return None;
                }
                match tls::client_config(&s.tls, &cfg.global.tls) {
                    Ok(c) => Some(Arc::new(c)),
                    Err(es) => {
                        errors.extend(es.iter().map(|e| tls::server_alert(s, px, e)));
                        None
                    }
                }
            };
            let srv_tls = client_tls(s.tls.enabled);
            let check_tls = if s.tls.check_ssl
                || (s.tls.enabled && s.check_port.is_none() && s.check_addr.is_none())
            {
                srv_tls.clone().or_else(|| client_tls(true))
            } else {
                None
            };
            servers.push(Arc::new(ServerRt {
                name: s.name.clone(),
                target: Mutex::new(target),
                source,
                send_proxy: s.send_proxy,
                cur_conns: AtomicU32::new(0),
                queued: AtomicU32::new(0),
                total: AtomicU64::new(0),
                smax: AtomicU32::new(0),
                counters: stats::Counters::new(nthreads),
                check: Mutex::new(stats::CheckView::new(s.check, s.rise, s.fall)),
                uweight: AtomicU32::new(s.weight),
                conn_gen: AtomicU32::new(0),
                drain: AtomicBool::new(false),
                checks_paused: AtomicBool::new(false),
                check_restart: AtomicBool::new(false),
                maxqueue: s.maxqueue,
                kill: tokio::sync::Notify::new(),
                kills: AtomicU32::new(0),
                shutdown_on_down: s.shutdown_on_down,
                h2: if px.mode != weir_config::Mode::Http {
                    state::H2Use::Never
                } else if s.h2 {
                    state::H2Use::Always
                } else if srv_tls.is_some() && s.tls.alpn.iter().flatten().any(|a| a == "h2") {
                    state::H2Use::IfNegotiated
                } else {
                    state::H2Use::Never
                },
                tls: srv_tls,
                check_tls,
            }));
            infos.push(ServerInfo {
                id: s.uid,
                weight: s.weight,
                backup: s.backup,
                maxconn: s.maxconn,
            });
        }
        let mut set = ServerSet::new(px.balance, px.hash_type, px.options.allbackups, infos);
        for (si, s) in px.servers.iter().enumerate() {
            if s.disabled {
                set.set_maint(si, true);
            }
        }
        backend_index.insert(px.name.clone(), backends.len());
        let seed = (std::process::id() as u64) << 32 ^ pi as u64 ^ 0x5eed;
        let has_sni = servers
            .iter()
            .any(|s| s.tls.as_ref().is_some_and(|t| t.sni.is_some()));
        backends.push(Arc::new(BackendRt {
            has_sni,
            log_source,
            limits: weir_proto::h1::Limits {
                max_head: cfg.global.bufsize,
                max_headers: cfg.global.maxhdr,
            },
            name: px.name.clone(),
            proxy: pi,
            set: Mutex::new(state::Lb {
                set,
                rng: Rng::new(seed),
            }),
            servers,
            conns: AtomicU32::new(0),
            queued: AtomicU32::new(0),
            smax: AtomicU32::new(0),
            counters: stats::Counters::new(nthreads),
            slot_freed: tokio::sync::Notify::new(),
            logger: loggers[pi].clone(),
        }));
    }

    // Frontends and their listeners, one set per thread.
    let mut frontends = Vec::new();
    let mut per_thread: Vec<Vec<ThreadListener>> = (0..nthreads).map(|_| Vec::new()).collect();
    let reuseport = !g.noreuseport;
    // `-x`: the previous process's sockets, taken by address before binding.
    let mut inherited = match &opts.takeover {
        Some(path) => {
            match takeover::fetch(path) {
                Ok(i) => i,
                Err(e) => {
                    warn(
                    quiet,
                    &format!("failed to get the listening sockets from '{path}' ({e}); binding new ones"),
                );
                    takeover::Inherited::default()
                }
            }
        }
        None => takeover::Inherited::default(),
    };
    for (pi, px) in cfg.proxies.iter().enumerate() {
        if !px.kind.is_frontend() || px.disabled || px.binds.is_empty() {
            continue;
        }
        let same_mode: HashMap<String, usize> = backend_index
            .iter()
            .filter(|(_, &i)| cfg.proxies[backends[i].proxy].mode == px.mode)
            .map(|(n, &i)| (n.clone(), i))
            .collect();
        let switching: Vec<(state::Target, Option<weir_rules::Cond>)> = px
            .use_backends
            .iter()
            .filter_map(|u| {
                let t = match &u.dynamic {
                    Some(f) => state::Target::Dynamic(f.clone(), same_mode.clone()),
                    None => state::Target::Static(*backend_index.get(&u.name)?),
                };
                Some((t, u.cond.clone()))
            })
            .collect();
        let backend = px
            .default_backend
            .as_ref()
            .map(|(b, _)| b.clone())
            .or_else(|| px.kind.is_backend().then(|| px.name.clone()))
            .and_then(|b| backend_index.get(&b).copied());
        let fe_idx = frontends.len();
        let fe_max = px.maxconn.unwrap_or(maxconn).min(maxconn).max(1);
        frontends.push(FrontendRt {
            name: px.name.clone(),
            proxy: pi,
            conns: AtomicU32::new(0),
            maxconn: AtomicU32::new(fe_max),
            paused: AtomicBool::new(false),
            backend,
            switching,
            logger: loggers[pi].clone(),
            total: AtomicU64::new(0),
            smax: AtomicU32::new(0),
            counters: stats::Counters::new(nthreads),
        });
        let mut listener_no = 0usize;
        for b in &px.binds {
            let threads: Vec<usize> = match &b.threads {
                Some(t) => t
                    .iter()
                    .filter(|&&t| t >= 1 && t <= nthreads)
                    .map(|t| t - 1)
                    .collect(),
                None => (0..nthreads).collect(),
            };
            if threads.is_empty() {
                errors.push(format!("[ALERT] parsing [{}] : 'bind' : no thread of 1-{nthreads} is allowed to accept", b.loc));
                continue;
            }
            let bind_max = b.maxconn.unwrap_or(fe_max);
            let tls = match &b.tls {
                Some(t) => match tls::bind_config(t, &cfg.global.tls) {
                    Ok(c) => Some(Arc::new(c)),
                    Err(es) => {
                        errors.extend(es.iter().map(|e| tls::alert(b, px, e)));
                        continue;
                    }
                },
                None => None,
            };
            // Logs name a listener by its `name`, or by its number in the
            // proxy as HAProxy does (a bind line with several addresses
            // goes by its first one's).
            let bind = Arc::new(session::BindInfo {
                conns: AtomicU32::new(0),
                tls,
                label: b
                    .name
                    .clone()
                    .unwrap_or_else(|| (listener_no + 1).to_string()),
                h2: b.h2 && px.mode == weir_config::Mode::Http,
                transparent: b.transparent,
            });
            listener_no += b.addrs.len();
            for a in &b.addrs {
                let push = |l: Listener, t: usize, per_thread: &mut Vec<Vec<ThreadListener>>| {
                    per_thread[t].push(ThreadListener {
                        frontend: fe_idx,
                        listener: l,
                        accept_proxy: b.accept_proxy,
                        maxconn: bind_max,
                        bind: bind.clone(),
                        clitcpka: px.options.clitcpka,
                    });
                };
                let backlog = b.backlog.unwrap_or(fe_max.max(1024));
                match listen::for_threads(a, b, &threads, reuseport, backlog, &mut inherited) {
                    Ok(ls) => {
                        for (t, l) in ls {
                            push(l, t, &mut per_thread);
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

    drop(inherited);
    // One copy of each listening socket for the stats sockets that hand
    // them to a new process (`expose-fd listeners`).
    let exposed = g.stats_sockets.iter().any(|s| s.expose_fd).then(|| {
        Arc::new(takeover::distinct(
            per_thread.iter().flatten().map(|tl| &tl.listener),
        ))
    });
    let mut stats_listeners = Vec::new();
    for s in &g.stats_sockets {
        let r = match listen::expand(&s.addr) {
            Ok(Expanded::Unix(p, abns)) => listen::bind_unix(&p, abns, s.mode, 16).and_then(|l| {
                if !abns {
                    listen::chown_socket(&p, s.user.as_deref(), s.group.as_deref())?;
                }
                Ok(l)
            }),
            Ok(Expanded::Tcp(a)) => match a.first() {
                Some(addr) => {
                    let b = weir_config::Bind::new(Vec::new(), s.loc.clone());
                    listen::bind_tcp(*addr, &b, false, 16)
                }
                None => continue,
            },
            Ok(Expanded::Fd(n)) => listen::from_fd(n),
            Err(e) => Err(e),
        };
        let level =
            weir_admin::cli::Level::parse(&s.level).unwrap_or(weir_admin::cli::Level::Operator);
        match r {
            Ok(l) => stats_listeners.push((l, level, exposed.clone().filter(|_| s.expose_fd))),
            Err(e) => errors.push(format!(
                "[ALERT] parsing [{}] : cannot bind 'stats socket': {e}",
                s.loc
            )),
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }

    // Detach, then confine.
    let daemon = (g.daemon || opts.daemon) && !opts.foreground;
    let pidfile = opts.pidfile.clone().or_else(|| g.pidfile.clone());
    if daemon {
        if let Err(e) = sys::daemonize(pidfile.as_deref()) {
            return Err(vec![format!("[ALERT] cannot daemonize: {e}")]);
        }
    } else if let Some(p) = &pidfile {
        if let Err(e) = std::fs::write(p, format!("{}\n", std::process::id())) {
            return Err(vec![format!("[ALERT] cannot create pidfile {p}: {e}")]);
        }
    }
    let uid = match (&g.user, g.uid) {
        (Some(u), _) => match sys::lookup_user(u) {
            Ok((uid, _)) => Some(uid),
            Err(e) => return Err(vec![format!("[ALERT] {e}")]),
        },
        (None, u) => u,
    };
    let gid = match (&g.group, g.gid) {
        (Some(gr), _) => match sys::lookup_group(gr) {
            Ok(gid) => Some(gid),
            Err(e) => return Err(vec![format!("[ALERT] {e}")]),
        },
        (None, gid) => gid,
    };
    if let Some(dir) = &g.chroot {
        if let Err(e) = sys::chroot(dir) {
            return Err(vec![format!("[ALERT] cannot chroot to '{dir}': {e}")]);
        }
    }
    if let Err(e) = sys::drop_privileges(uid, gid) {
        return Err(vec![format!("[ALERT] cannot drop privileges: {e}")]);
    }

    for (pids, sig) in [
        (&opts.soft_stop_pids, libc::SIGUSR1),
        (&opts.hard_stop_pids, libc::SIGTERM),
    ] {
        for &pid in pids {
            if let Err(e) = sys::signal_pid(pid, sig) {
                warn(quiet, &format!("failed to signal old process {pid}: {e}"));
            }
        }
    }
    let (stopping, _) = tokio::sync::watch::channel(false);
    let (killing, _) = tokio::sync::watch::channel(false);
    let sh = Arc::new(Shared {
        cfg: cfg.clone(),
        frontends,
        backends,
        actconn: AtomicU32::new(0),
        maxconn,
        maxconn_now: AtomicU32::new(maxconn),
        conn_freed: tokio::sync::Notify::new(),
        accept_paused: AtomicU32::new(0),
        stopping,
        killing,
        hostname,
        bufsize: g.bufsize,
        maxhdr: g.maxhdr,
        pipesize: g.pipesize,
        nosplice: g.nosplice,
        global_logger,
        accept_paused_warned: AtomicBool::new(false),
        handed_over: AtomicBool::new(false),
        started: std::time::SystemTime::now(),
        errors: capture::ErrorLog::default(),
        nthreads,
        workers: sessions::Workers::new(nthreads),
        rates: rates::Rates::default(),
    });
    for fe in &sh.frontends {
        fe.logger
            .send(level::NOTICE, &format!("Proxy {} started.", fe.name));
    }

    let cpus = weir_config::parse::thread_cpus(&g.cpu_map, nthreads, g.nbproc.is_some());
    let (done_tx, mut done_rx) = tokio::sync::mpsc::unbounded_channel::<usize>();
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
            });
        match h {
            Ok(h) => handles.push(h),
            Err(e) => return Err(vec![format!("[ALERT] cannot start thread {}: {e}", t + 1)]),
        }
    }
    drop(done_tx);

    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            return Err(vec![format!(
                "[ALERT] cannot start the main event loop: {e}"
            )])
        }
    };
    let code = rt.block_on(async move {
        checks::spawn_all(&sh);
        tokio::spawn(rates::run(sh.clone()));
        for (l, level, exposed) in stats_listeners {
            crate::profile::spawn::<crate::profile::Cli, _>(stats_socket::serve(
                sh.clone(),
                l,
                level,
                exposed,
            ));
        }
        main_loop(&sh, &mut done_rx, nthreads, quiet).await
    });
    drop(rt);
    for h in handles {
        let _ = h.join();
    }
    Ok(code)
}

/// Waits for signals: SIGUSR1 soft stop (after `grace`, until sessions end or
/// `hard-stop-after`), SIGTERM/SIGINT hard stop.
async fn main_loop(
    sh: &Arc<Shared>,
    done: &mut tokio::sync::mpsc::UnboundedReceiver<usize>,
    nthreads: usize,
    quiet: bool,
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
            _ = term.recv() => { hard_stop(sh); return 0; }
            _ = int.recv() => { hard_stop(sh); return 0; }
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
