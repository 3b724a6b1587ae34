//! The master process (`-W`, `-Ws`, `master-worker`): starts a worker
//! (this same program on the configuration), holds its listening sockets,
//! and reloads on SIGUSR2 or the master CLI's `reload` by loading the
//! configuration again and starting a new worker that takes those sockets
//! (never binding them again), then telling the old one to finish. Runs
//! the `program` sections and serves the master CLI (`-S`).

pub mod channel;
mod cli;
mod notify;
pub mod procs;

use crate::state::Shared;
use channel::{Link, Msg};
use procs::{Kind, Stage, Table};
use std::collections::HashMap;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use weir_config::Config;

/// How the command line started the master.
#[derive(Debug, Default)]
pub struct MasterOptions {
    /// This program, started again for each worker.
    pub exe: PathBuf,
    /// A worker's arguments (the master's own options removed).
    pub worker_args: Vec<String>,
    /// `-S <addr>[,<option>…]`: master CLI listeners.
    pub clis: Vec<String>,
    pub pidfile: Option<String>,
    pub daemon: bool,
    /// `-Ws`: tell systemd (`$NOTIFY_SOCKET`) when ready, reloading, stopping.
    pub systemd: bool,
    pub quiet: bool,
}

/// Loads the configuration again for a reload: it, or the lines saying
/// why not.
pub type Loader = Box<dyn Fn() -> Result<Config, Vec<String>>>;

/// What the master CLI sessions share with the main loop.
struct Master {
    pid: i32,
    start: Instant,
    table: Mutex<Table>,
    links: Mutex<HashMap<i32, Arc<Link>>>,
    reload: mpsc::UnboundedSender<()>,
}

impl Master {
    fn table(&self) -> std::sync::MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }
    fn link(&self, pid: i32) -> Option<Arc<Link>> {
        let links = self.links.lock().unwrap_or_else(|e| e.into_inner());
        links.get(&pid).cloned()
    }
    fn set_link(&self, pid: i32, link: Option<Arc<Link>>) {
        let mut links = self.links.lock().unwrap_or_else(|e| e.into_inner());
        match link {
            Some(l) => links.insert(pid, l),
            None => links.remove(&pid),
        };
    }
}

/// What the children's watchers report.
enum Event {
    Ready(i32),
    Exit(i32, i32),
}

/// `-q`: the master's notices are not printed.
static QUIET: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

fn notice(msg: &str) {
    if !QUIET.load(std::sync::atomic::Ordering::Relaxed) {
        crate::log::console("NOTICE", msg);
    }
}
fn warning(msg: &str) {
    crate::log::console("WARNING", msg);
}
fn alert(msg: &str) {
    crate::log::console("ALERT", msg);
}

/// Runs the master until its last worker is gone; its exit code.
pub fn run(cfg: Config, opts: MasterOptions, load: Loader) -> Result<i32, Vec<String>> {
    QUIET.store(opts.quiet, std::sync::atomic::Ordering::Relaxed);
    let clis = cli::bind(&opts.clis)?;
    if opts.daemon {
        crate::sys::daemonize(opts.pidfile.as_deref())
            .map_err(|e| vec![format!("[ALERT] cannot daemonize: {e}")])?;
    } else if let Some(p) = &opts.pidfile {
        std::fs::write(p, format!("{}\n", std::process::id()))
            .map_err(|e| vec![format!("[ALERT] cannot create pidfile {p}: {e}")])?;
    }
    std::env::set_var("HAPROXY_MWORKER", "1");
    std::env::set_var("HAPROXY_MASTER_CLI", opts.clis.join(";"));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| vec![format!("[ALERT] cannot start the master's event loop: {e}")])?;
    let (reload_tx, reload_rx) = mpsc::unbounded_channel();
    let m = Arc::new(Master {
        pid: std::process::id() as i32,
        start: Instant::now(),
        table: Mutex::new(Table::default()),
        links: Mutex::new(HashMap::new()),
        reload: reload_tx,
    });
    let (events_tx, events) = mpsc::unbounded_channel();
    let notifier = notify::Notifier::from_env(opts.systemd);
    let mut run = Run {
        m: m.clone(),
        cfg,
        opts,
        load,
        held: Vec::new(),
        events: events_tx,
        notifier,
        exit_code: None,
        stopping: false,
    };
    Ok(rt.block_on(async move {
        for (l, level) in clis {
            tokio::spawn(cli::serve(m.clone(), l, level));
        }
        run.main(events, reload_rx).await
    }))
}

/// The main loop's state.
struct Run {
    m: Arc<Master>,
    cfg: Config,
    opts: MasterOptions,
    load: Loader,
    /// The listening sockets of the worker serving now (given to the next).
    held: Vec<OwnedFd>,
    events: mpsc::UnboundedSender<Event>,
    notifier: notify::Notifier,
    /// The master's exit code, once a child's status set it.
    exit_code: Option<i32>,
    stopping: bool,
}

impl Run {
    async fn main(
        &mut self,
        mut events: mpsc::UnboundedReceiver<Event>,
        mut reloads: mpsc::UnboundedReceiver<()>,
    ) -> i32 {
        use tokio::signal::unix::{signal, SignalKind};
        let (Ok(mut usr1), Ok(mut usr2), Ok(mut term), Ok(mut int), Ok(mut hup)) = (
            signal(SignalKind::user_defined1()),
            signal(SignalKind::user_defined2()),
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
            signal(SignalKind::hangup()),
        ) else {
            alert("cannot install signal handlers");
            return 1;
        };
        crate::sys::block_stop_signals(false);
        self.start_programs(true);
        if let Err(e) = self.start_worker() {
            alert(&format!("cannot start a worker: {e}"));
            return 1;
        }
        loop {
            tokio::select! {
                _ = usr2.recv() => self.reload(),
                Some(()) = reloads.recv() => self.reload(),
                _ = usr1.recv() => self.stop(libc::SIGUSR1),
                _ = term.recv() => self.stop(libc::SIGTERM),
                _ = int.recv() => self.stop(libc::SIGINT),
                _ = hup.recv() => self.signal_workers(libc::SIGHUP, |_| true),
                Some(ev) = events.recv() => match ev {
                    Event::Ready(pid) => self.ready(pid).await,
                    Event::Exit(pid, status) => {
                        if let Some(code) = self.exited(pid, status) {
                            return code;
                        }
                    }
                },
            }
        }
    }

    fn now(&self) -> Duration {
        self.m.start.elapsed()
    }

    /// Starts a worker on the held sockets; it is `Starting` until ready.
    fn start_worker(&mut self) -> std::io::Result<i32> {
        let (mine, theirs) = channel::pair()?;
        channel::set_inherited(theirs.as_raw_fd(), true)?;
        let mut cmd = tokio::process::Command::new(&self.opts.exe);
        cmd.args(&self.opts.worker_args)
            .env(channel::ENV, theirs.as_raw_fd().to_string());
        let spawned = cmd.spawn();
        drop(theirs);
        let child = spawned?;
        let pid = child.id().map_or(0, |p| p as i32);
        let secret = crate::tls::tickets::secret();
        if let Err(e) = channel::send_start(&mine, &secret, &self.held) {
            warning(&format!(
                "cannot hand the listening sockets to worker {pid} ({e}); it binds them"
            ));
        }
        let link = Arc::new(Link::new(mine)?);
        self.m.set_link(pid, Some(link.clone()));
        self.watch(child, pid);
        let events = self.events.clone();
        tokio::spawn(async move {
            loop {
                match link.recv().await {
                    Ok(Msg::Ready) => {
                        let _ = events.send(Event::Ready(pid));
                    }
                    Ok(Msg::Closed) | Err(_) => return,
                    Ok(_) => {}
                }
            }
        });
        self.m.table().children.push(procs::Child {
            pid,
            kind: Kind::Worker,
            stage: Stage::Starting,
            reloads: 0,
            started: self.now(),
        });
        notice(&format!("New worker ({pid}) forked"));
        Ok(pid)
    }

    /// Reports the child's exit to the main loop.
    fn watch(&self, mut child: tokio::process::Child, pid: i32) {
        let events = self.events.clone();
        tokio::spawn(async move {
            use std::os::unix::process::ExitStatusExt;
            let status = match child.wait().await {
                Ok(s) => procs::status_code(s.code(), s.signal()),
                Err(_) => 255,
            };
            let _ = events.send(Event::Exit(pid, status));
        });
    }

    /// Starts the `program` sections (all of them at start; on a reload,
    /// those with `option start-on-reload`).
    fn start_programs(&mut self, first: bool) {
        let programs: Vec<weir_config::Program> = self.cfg.programs.clone();
        for p in programs.iter().filter(|p| first || p.start_on_reload) {
            match self.start_program(p) {
                Ok(pid) => notice(&format!("New program '{}' ({pid}) forked", p.name)),
                Err(e) => alert(&format!("cannot start program '{}': {e}", p.name)),
            }
        }
    }

    fn start_program(&mut self, p: &weir_config::Program) -> std::io::Result<i32> {
        let (first, args) = p
            .command
            .split_first()
            .ok_or_else(|| std::io::Error::other("no command"))?;
        let mut cmd = tokio::process::Command::new(first);
        cmd.args(args);
        if let Some(g) = &p.group {
            cmd.gid(crate::sys::lookup_group(g)?);
        }
        if let Some(u) = &p.user {
            let (uid, gid) = crate::sys::lookup_user(u)?;
            cmd.uid(uid);
            if p.group.is_none() {
                cmd.gid(gid);
            }
        }
        let child = cmd.spawn()?;
        let pid = child.id().map_or(0, |p| p as i32);
        self.watch(child, pid);
        self.m.table().children.push(procs::Child {
            pid,
            kind: Kind::Program(p.name.clone()),
            stage: Stage::Current,
            reloads: 0,
            started: self.now(),
        });
        Ok(pid)
    }

    /// SIGUSR2 or `reload`: the configuration again, then a new worker.
    fn reload(&mut self) {
        if self.stopping {
            return;
        }
        notice("Reloading weir");
        self.notifier.send("RELOADING=1");
        self.m.table().count_reload();
        let cfg = match (self.load)() {
            Ok(c) => c,
            Err(lines) => {
                for l in lines {
                    crate::log::console_line(&format!("{l}\n"));
                }
                self.failed();
                return;
            }
        };
        self.cfg = cfg;
        // A worker still starting from an earlier reload is superseded.
        self.signal_workers(libc::SIGUSR1, |c| c.stage == Stage::Starting);
        self.mark(|c| c.kind == Kind::Worker && c.stage == Stage::Starting);
        // Programs restarted on reload are told to finish first.
        let restarted: Vec<String> = self
            .cfg
            .programs
            .iter()
            .filter(|p| p.start_on_reload)
            .map(|p| p.name.clone())
            .collect();
        let gone = |c: &procs::Child| match &c.kind {
            Kind::Program(n) => c.stage == Stage::Current && restarted.contains(n),
            Kind::Worker => false,
        };
        self.signal_workers(libc::SIGUSR1, gone);
        self.mark(gone);
        self.start_programs(false);
        if let Err(e) = self.start_worker() {
            alert(&format!("cannot start a worker: {e}"));
            self.failed();
            return;
        }
        if let Some(max) = self.cfg.global.mworker_max_reloads {
            let over = self.m.table().over_max_reloads(max);
            for pid in over {
                let _ = crate::sys::signal_pid(pid, libc::SIGTERM);
            }
        }
    }

    /// A reload that did not give a new worker: the old one goes on.
    fn failed(&mut self) {
        warning("Loading failure!");
        {
            let mut t = self.m.table();
            t.failed += 1;
            t.last_failed = true;
        }
        self.notifier.send("READY=1\nSTATUS=Reload failed!");
    }

    /// Marks the matching children old.
    fn mark(&self, which: impl Fn(&procs::Child) -> bool) {
        for c in self.m.table().children.iter_mut().filter(|c| which(c)) {
            c.stage = Stage::Old;
        }
    }

    /// Sends `sig` to the matching children.
    fn signal_workers(&self, sig: i32, which: impl Fn(&procs::Child) -> bool) {
        let pids: Vec<i32> = self
            .m
            .table()
            .children
            .iter()
            .filter(|c| which(c))
            .map(|c| c.pid)
            .collect();
        for pid in pids {
            let _ = crate::sys::signal_pid(pid, sig);
        }
    }

    /// A worker serves: the one before it finishes, and the master takes
    /// the new one's listening sockets (for the next).
    async fn ready(&mut self, pid: i32) {
        let newest = {
            let t = self.m.table();
            t.get(pid).is_some_and(|c| c.stage == Stage::Starting)
        };
        if !newest {
            return;
        }
        self.signal_workers(libc::SIGUSR1, |c| {
            c.kind == Kind::Worker && c.stage == Stage::Current
        });
        self.mark(|c| c.kind == Kind::Worker && c.stage == Stage::Current);
        {
            let mut t = self.m.table();
            if let Some(c) = t.get_mut(pid) {
                c.stage = Stage::Current;
            }
            t.last_failed = false;
        }
        notice("Loading success.");
        self.notifier
            .send(&format!("READY=1\nMAINPID={}\nSTATUS=Ready.", self.m.pid));
        match self.m.link(pid) {
            Some(link) => match cli::getsocks(&link).await {
                Ok(fds) => self.held = fds,
                Err(e) => warning(&format!(
                    "cannot take the listening sockets of worker {pid} ({e}); the next one binds its own"
                )),
            },
            None => self.held.clear(),
        }
    }

    /// SIGINT, SIGTERM or SIGUSR1 to the master: every child gets it.
    fn stop(&mut self, sig: i32) {
        if !self.stopping {
            warning("Exiting Master process...");
            self.notifier.send("STOPPING=1");
        }
        self.stopping = true;
        self.signal_workers(sig, |_| true);
    }

    /// A child ended; the master's exit code when it should exit now.
    fn exited(&mut self, pid: i32, status: i32) -> Option<i32> {
        self.m.set_link(pid, None);
        let child = self.m.table().remove(pid)?;
        let why = procs::reason(status);
        let name = match &child.kind {
            Kind::Worker => format!("worker ({pid})"),
            Kind::Program(n) => format!("program '{n}' ({pid})"),
        };
        match child.stage {
            Stage::Starting => {
                alert(&format!(
                    "New {name} exited with code {status} ({why}) before it was ready"
                ));
                if self.m.table().current_worker().is_some() {
                    self.failed();
                } else {
                    self.exit_code.get_or_insert(status);
                }
            }
            Stage::Current => {
                alert(&format!("Current {name} exited with code {status} ({why})"));
                if procs::is_failure(status) && !self.cfg.global.no_exit_on_failure {
                    alert("exit-on-failure: killing every processes with SIGTERM");
                    self.stopping = true;
                    self.signal_workers(libc::SIGTERM, |_| true);
                }
                if procs::reported(status) {
                    self.exit_code.get_or_insert(status);
                }
            }
            Stage::Old => warning(&format!("Former {name} exited with code {status} ({why})")),
        }
        self.after_exit()
    }

    /// With no worker left, the programs are stopped; with no child left,
    /// the master exits.
    fn after_exit(&mut self) -> Option<i32> {
        let (workers, children) = {
            let t = self.m.table();
            (t.workers().count(), t.children.len())
        };
        if workers > 0 {
            return None;
        }
        if children > 0 {
            if !self.stopping {
                self.stopping = true;
                self.signal_workers(libc::SIGTERM, |_| true);
            }
            return None;
        }
        let code = self.exit_code.unwrap_or(0);
        warning(&format!("All workers exited. Exiting... ({code})"));
        self.notifier.send("STOPPING=1");
        Some(code)
    }
}

/// A worker's side of its link: says it is ready, serves the runtime API
/// connections the master hands over, and finishes (as on SIGUSR1) when the
/// master is gone.
pub(crate) async fn serve_link(sh: Arc<Shared>, fd: OwnedFd, exposed: Arc<Vec<OwnedFd>>) {
    let Ok(link) = Link::new(fd) else {
        return;
    };
    let _ = link.send(b"READY", None).await;
    loop {
        match link.recv().await {
            Ok(Msg::Conn(fd)) => {
                crate::stats_socket::serve_handed(sh.clone(), fd, Some(exposed.clone()));
            }
            Ok(Msg::Closed) | Err(_) => {
                crate::log::console("WARNING", "the master process is gone: finishing");
                let _ = crate::sys::signal_pid(std::process::id() as i32, libc::SIGUSR1);
                return;
            }
            Ok(_) => {}
        }
    }
}
