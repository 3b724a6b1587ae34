//! Worker threads: each runs its own single-threaded event loop with its own
//! listeners, accepting within the global, frontend and bind `maxconn`
//! limits and pausing (not crashing) when file descriptors run out.

use crate::conn::Conn;
use crate::listen::Listener;
use crate::session::{self, Accepted};
use crate::state::Shared;
use std::io;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// One listener given to one thread.
pub struct ThreadListener {
    pub frontend: usize,
    pub listener: Listener,
    pub accept_proxy: bool,
    pub maxconn: u32,
    /// Shared by the listener's sockets on every thread.
    pub bind: Arc<crate::session::BindInfo>,
    pub clitcpka: bool,
}

/// Runs a worker thread's loop until soft stop completes or hard stop.
pub fn run_thread(
    sh: Arc<Shared>,
    id: usize,
    cpus: Option<Vec<usize>>,
    listeners: Vec<ThreadListener>,
) -> io::Result<()> {
    if let Some(c) = &cpus {
        if let Err(e) = crate::sys::pin_current_thread(c) {
            crate::log::console(
                "WARNING",
                &format!("thread {id}: cannot bind to CPUs {c:?}: {e}"),
            );
        }
    }
    crate::stats::set_thread_slot(id);
    let g = &sh.cfg.global;
    let mut b = tokio::runtime::Builder::new_current_thread();
    // Tasks run between two looks at I/O: a larger batch lets the
    // responses of one poll reach an HTTP/2 connection before it writes,
    // so they leave in one send (HAProxy's run queue works the same way).
    b.enable_all().event_interval(g.runqueue_depth.max(1));
    if let Some(n) = g.maxpollevents {
        b.max_io_events_per_tick(n.max(1) as usize);
    }
    let rt = b.build()?;
    sh.workers.set(id, rt.handle().clone());
    rt.block_on(async move {
        let mut tasks = Vec::new();
        // Wakes this thread's idle HTTP clients at their deadlines, and
        // its sleeping sessions (HTTP and `mode tcp`).
        crate::profile::spawn::<crate::profile::Idle, _>(crate::http::idle::sweep(sh.clone()));
        for l in listeners {
            tasks.push(crate::profile::spawn::<crate::profile::Accept, _>(
                accept_loop(sh.clone(), l),
            ));
        }
        for t in tasks {
            let _ = t.await;
        }
        // Soft stop: listeners are closed; wait for this thread's sessions.
        let mut kill = sh.killing.subscribe();
        sh.accept_paused.fetch_add(1, Ordering::SeqCst);
        loop {
            let notified = sh.conn_freed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if sh.actconn.load(Ordering::SeqCst) == 0 {
                break;
            }
            tokio::select! {
                _ = notified => {}
                _ = kill.wait_for(|k| *k) => {
                    // give killed sessions a moment to log
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    break;
                }
                _ = tokio::time::sleep(Duration::from_millis(200)) => {}
            }
        }
        sh.accept_paused.fetch_sub(1, Ordering::SeqCst);
    });
    Ok(())
}

/// Waits until `ready()` holds, woken by closing connections; false on stop.
/// Only a loop that has to wait announces itself in `accept_paused`, so
/// closing connections notify nobody (and take no lock) in the common case.
async fn wait_until(
    sh: &Shared,
    stop: &mut tokio::sync::watch::Receiver<bool>,
    mut ready: impl FnMut() -> bool,
) -> bool {
    if ready() {
        return true;
    }
    sh.accept_paused.fetch_add(1, Ordering::SeqCst);
    let ok = loop {
        let notified = sh.conn_freed.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        // Checked after announcing: a close either sees us paused or we see it.
        if ready() {
            break true;
        }
        tokio::select! {
            _ = notified => {}
            _ = stop.wait_for(|s| *s) => break false,
        }
    };
    sh.accept_paused.fetch_sub(1, Ordering::SeqCst);
    ok
}

/// Takes one connection slot globally, on the frontend and on the bind, or
/// none at all when any of them is full.
fn try_reserve(sh: &Shared, fe: usize, bind_conns: &AtomicU32, bind_max: u32) -> bool {
    let take = |c: &AtomicU32, max: u32| {
        c.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |v| {
            (v < max).then_some(v + 1)
        })
        .is_ok()
    };
    if !take(&sh.actconn, sh.maxconn_now.load(Ordering::Relaxed)) {
        return false;
    }
    let f = &sh.frontends[fe];
    if f.paused.load(Ordering::Relaxed) || !take(&f.conns, f.maxconn.load(Ordering::Relaxed)) {
        sh.actconn.fetch_sub(1, Ordering::SeqCst);
        return false;
    }
    if !take(bind_conns, bind_max) {
        sh.frontends[fe].conns.fetch_sub(1, Ordering::SeqCst);
        sh.actconn.fetch_sub(1, Ordering::SeqCst);
        return false;
    }
    let f = &sh.frontends[fe];
    crate::state::raise_max(&f.smax, f.conns.load(Ordering::Relaxed));
    true
}

/// Takes a connection slot whatever the limits (a client accepted while
/// stopping).
fn force_reserve(sh: &Shared, fe: usize, bind_conns: &AtomicU32) {
    sh.actconn.fetch_add(1, Ordering::SeqCst);
    let f = &sh.frontends[fe];
    let n = f.conns.fetch_add(1, Ordering::SeqCst) + 1;
    bind_conns.fetch_add(1, Ordering::SeqCst);
    crate::state::raise_max(&f.smax, n);
}

fn is_resource_error(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EMFILE) | Some(libc::ENFILE) | Some(libc::ENOBUFS) | Some(libc::ENOMEM)
    )
}

/// A registered listening socket of either family.
pub(crate) enum AnyListener {
    Tcp(tokio::net::TcpListener),
    Unix(tokio::net::UnixListener),
}

async fn accept_loop(sh: Arc<Shared>, tl: ThreadListener) {
    let ThreadListener {
        frontend: fe,
        listener,
        accept_proxy,
        maxconn: bind_max,
        bind,
        clitcpka,
    } = tl;
    let listener = match AnyListener::register(listener) {
        Ok(l) => l,
        Err(e) => {
            crate::log::console("ALERT", &format!("cannot register listener: {e}"));
            return;
        }
    };
    let fixed = listener.fixed_local().filter(|_| !bind.transparent);
    // `mode http` answers leave as they are written: TCP_NODELAY set once
    // on the listener is inherited by every connection it accepts (one
    // setsockopt per connection fewer).
    let nodelay = sh.cfg.proxies[sh.frontends[fe].proxy].mode == weir_config::Mode::Http
        && listener.set_nodelay();
    let mut stop = sh.stopping.subscribe();
    let maxaccept = sh.cfg.global.maxaccept.max(1) as u32;
    let mut burst = 0u32;
    loop {
        if *stop.borrow() {
            return;
        }
        // Limits: wait below them rather than accept and drop.
        let below = || {
            let f = &sh.frontends[fe];
            sh.actconn.load(Ordering::SeqCst) < sh.maxconn_now.load(Ordering::Relaxed)
                && !f.paused.load(Ordering::Relaxed)
                && f.conns.load(Ordering::SeqCst) < f.maxconn.load(Ordering::Relaxed)
                && bind.conns.load(Ordering::SeqCst) < bind_max
        };
        if !wait_until(&sh, &mut stop, below).await {
            return;
        }
        let accepted = tokio::select! {
            r = accept(&listener, fixed) => r,
            _ = stop.wait_for(|s| *s) => return,
        };
        match accepted {
            Ok((conn, peer, local)) => {
                crate::profile::accepted();
                // Another thread may have filled the last slot while this one
                // was waiting in accept() (or the frontend was disabled):
                // hold the client until one frees. A stop meanwhile serves
                // it beyond the limits rather than drop a client accepted.
                let stopping = !wait_until(&sh, &mut stop, || {
                    try_reserve(&sh, fe, &bind.conns, bind_max)
                })
                .await;
                if stopping {
                    force_reserve(&sh, fe, &bind.conns);
                }
                sh.frontends[fe].total.fetch_add(1, Ordering::Relaxed);
                if clitcpka {
                    if let Conn::Tcp(s) = &conn {
                        let _ = socket2::SockRef::from(s).set_keepalive(true);
                    }
                }
                let acc = Accepted {
                    peer,
                    local,
                    accept_proxy,
                    bind: bind.clone(),
                    reg: crate::sessions::register(std::os::fd::AsRawFd::as_raw_fd(&conn), fe),
                    nodelay,
                };
                if sh.cfg.proxies[sh.frontends[fe].proxy].mode == weir_config::Mode::Http {
                    if acc.bind.tls.is_some() {
                        crate::profile::spawn::<crate::profile::Https, _>(session::run_https(
                            sh.clone(),
                            fe,
                            conn,
                            acc,
                        ));
                    } else {
                        crate::profile::spawn::<crate::profile::Http, _>(session::run_http(
                            sh.clone(),
                            fe,
                            conn,
                            acc,
                        ));
                    }
                } else {
                    crate::profile::spawn::<crate::profile::Tcp, _>(session::run(
                        sh.clone(),
                        fe,
                        conn,
                        acc,
                    ));
                }
                if stopping {
                    return;
                }
                burst += 1;
                if burst >= maxaccept {
                    burst = 0;
                    tokio::task::yield_now().await;
                }
            }
            Err(e) if is_resource_error(&e) => {
                if !sh.accept_paused_warned.swap(true, Ordering::Relaxed) {
                    let msg = format!(
                        "Proxy {} reached system resource limits ({e}) at {} connections; pausing accept for 100ms",
                        sh.frontends[fe].name,
                        sh.actconn.load(Ordering::Relaxed)
                    );
                    crate::log::console("WARNING", &msg);
                    sh.global_logger.send(crate::log::level::WARNING, &msg);
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
                sh.accept_paused_warned.store(false, Ordering::Relaxed);
            }
            Err(_) => {
                // ECONNABORTED and friends: the client is gone, keep going.
            }
        }
    }
}

impl AnyListener {
    /// Sets TCP_NODELAY for the connections accepted from now on; whether
    /// it took.
    fn set_nodelay(&self) -> bool {
        match self {
            AnyListener::Tcp(l) => {
                let s = socket2::SockRef::from(l);
                s.set_nodelay(true).is_ok() && s.nodelay().unwrap_or(false)
            }
            AnyListener::Unix(_) => false,
        }
    }

    /// The local address of every connection accepted here, when the
    /// socket is bound to one address rather than a wildcard.
    fn fixed_local(&self) -> Option<std::net::SocketAddr> {
        match self {
            AnyListener::Tcp(l) => l.local_addr().ok().filter(|a| !a.ip().is_unspecified()),
            AnyListener::Unix(_) => None,
        }
    }

    /// Registers a bound socket with this thread's event loop.
    pub(crate) fn register(l: Listener) -> io::Result<AnyListener> {
        match l {
            Listener::Tcp(l) => tokio::net::TcpListener::from_std(l).map(AnyListener::Tcp),
            Listener::Unix(l) => tokio::net::UnixListener::from_std(l).map(AnyListener::Unix),
        }
    }
}

type AcceptResult = io::Result<(
    Conn,
    Option<std::net::SocketAddr>,
    Option<std::net::SocketAddr>,
)>;

/// Accepts one connection with its peer and local addresses (none for
/// unix). `fixed`: the listener's own address when it is not a wildcard,
/// which every connection it accepts shares (no `getsockname` then).
pub(crate) async fn accept(l: &AnyListener, fixed: Option<std::net::SocketAddr>) -> AcceptResult {
    match l {
        AnyListener::Tcp(l) => {
            let (s, peer) = l.accept().await?;
            let local = fixed.or_else(|| s.local_addr().ok());
            Ok((Conn::Tcp(s), Some(peer), local))
        }
        AnyListener::Unix(l) => {
            let (s, _) = l.accept().await?;
            Ok((Conn::Unix(s), None, None))
        }
    }
}
