//! Worker threads: each runs its own single-threaded event loop with its own
//! listeners, accepting within the global, frontend and bind `maxconn`
//! limits and pausing (not crashing) when file descriptors run out.

use crate::conn::Conn;
use crate::listen::Listener;
use crate::session::Accepted;
use crate::state::FrontendId;
use crate::state::Shared;
use std::io;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// One listener given to one thread.
pub struct ThreadListener {
    pub frontend: FrontendId,
    pub listener: Listener,
    pub accept_proxy: bool,
    pub maxconn: u32,
    /// Shared by the listener's sockets on every thread.
    pub bind: Arc<crate::session::BindInfo>,
    /// `option clitcpka` with its probe settings.
    pub clitcpka: Option<weir_config::TcpKa>,
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
    // Dropped after the runtime: its blocks go back to glibc last.
    let _cache = crate::alloc::cache::enable();
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
        // Reused timers, given back before the runtime ends.
        let _timers = crate::timers::enable();
        // Sends held to the end of a pass, written together.
        tokio::spawn(crate::sendq::enable());
        // This thread's own Lua state (`lua-load-per-thread`).
        crate::lua::enter_thread(&sh, id);
        let mut tasks = Vec::new();
        // Wakes this thread's idle HTTP clients at their deadlines, and
        // its sleeping sessions (HTTP and `mode tcp`).
        crate::profile::spawn::<crate::profile::Idle, _>(crate::http::idle::sweep(sh.clone()));
        // A thread with no listener of its own serves the process's other
        // duties (its CLI, checks, peers, log relays) until it is stopped,
        // as haproxy's.
        if listeners.is_empty() {
            let mut stop = sh.stopping.subscribe();
            let _ = stop.wait_for(|s| *s).await;
        }
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
fn try_reserve(
    sh: &Shared,
    fe: FrontendId,
    bind: &crate::session::BindInfo,
    bind_max: u32,
) -> bool {
    let bind_conns = &bind.conns;
    let take = |c: &AtomicU32, max: u32| {
        c.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |v| {
            (v < max).then_some(v + 1)
        })
        .is_ok()
    };
    if !take(&sh.actconn, sh.maxconn_now.load(Ordering::Relaxed)) {
        return false;
    }
    let f = sh.frontend(fe);
    if f.paused.load(Ordering::Relaxed) || !take(&f.conns, f.maxconn.load(Ordering::Relaxed)) {
        sh.actconn.fetch_sub(1, Ordering::SeqCst);
        return false;
    }
    if !take(bind_conns, bind_max) {
        sh.frontend(fe).conns.fetch_sub(1, Ordering::SeqCst);
        sh.actconn.fetch_sub(1, Ordering::SeqCst);
        return false;
    }
    // `maxsslconn`: TLS clients at once.
    if bind.tls.is_some() && !take(&sh.sslconns, sh.maxsslconn) {
        bind_conns.fetch_sub(1, Ordering::SeqCst);
        sh.frontend(fe).conns.fetch_sub(1, Ordering::SeqCst);
        sh.actconn.fetch_sub(1, Ordering::SeqCst);
        return false;
    }
    let f = sh.frontend(fe);
    crate::state::raise_max(&f.smax, f.conns.load(Ordering::Relaxed));
    true
}

/// Takes a connection slot whatever the limits (a client accepted while
/// stopping).
fn force_reserve(sh: &Shared, fe: FrontendId, bind: &crate::session::BindInfo) {
    sh.actconn.fetch_add(1, Ordering::SeqCst);
    let f = sh.frontend(fe);
    let n = f.conns.fetch_add(1, Ordering::SeqCst) + 1;
    bind.conns.fetch_add(1, Ordering::SeqCst);
    if bind.tls.is_some() {
        sh.sslconns.fetch_add(1, Ordering::SeqCst);
    }
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
    let px = sh.proxy(sh.frontend(fe).proxy);
    let nodelay = px.mode == weir_config::Mode::Http && listener.set_nodelay();
    let mut stop = sh.stopping.subscribe();
    let maxaccept = sh.cfg.global.maxaccept.max(1) as u32;
    let mut burst = 0u32;
    let tl_info = ListenerInfo {
        fe,
        accept_proxy,
        bind: bind.clone(),
        clitcpka,
        nodelay,
        nolinger: px.options.nolinger,
    };
    loop {
        let stopped = *stop.borrow();
        if stopped {
            return drain(&sh, &tl_info, &listener, fixed).await;
        }
        // Limits: wait below them rather than accept and drop.
        let below = || {
            let f = sh.frontend(fe);
            sh.actconn.load(Ordering::SeqCst) < sh.maxconn_now.load(Ordering::Relaxed)
                && !f.paused.load(Ordering::Relaxed)
                && f.conns.load(Ordering::SeqCst) < f.maxconn.load(Ordering::Relaxed)
                && bind.conns.load(Ordering::SeqCst) < bind_max
                && (bind.tls.is_none() || sh.sslconns.load(Ordering::SeqCst) < sh.maxsslconn)
        };
        if !wait_until(&sh, &mut stop, below).await {
            return drain(&sh, &tl_info, &listener, fixed).await;
        }
        // Rate limits: wait until one more accept stays under them.
        let wait = rate_wait(&sh, fe, bind.tls.is_some());
        if wait > 0 {
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_millis(wait)) => {}
                _ = stop.wait_for(|s| *s) => {}
            }
            continue;
        }
        let accepted = tokio::select! {
            r = accept(&listener, fixed) => Some(r),
            _ = stop.wait_for(|s| *s) => None,
        };
        let Some(accepted) = accepted else {
            return drain(&sh, &tl_info, &listener, fixed).await;
        };
        match accepted {
            Ok((conn, peer, local)) => {
                crate::profile::accepted();
                // Another thread may have filled the last slot while this one
                // was waiting in accept() (or the frontend was disabled):
                // hold the client until one frees. A stop meanwhile serves
                // it beyond the limits rather than drop a client accepted.
                let stopping =
                    !wait_until(&sh, &mut stop, || try_reserve(&sh, fe, &bind, bind_max)).await;
                if stopping {
                    force_reserve(&sh, fe, &bind);
                }
                rate_count(&sh, fe, bind.tls.is_some());
                start_session(&sh, &tl_info, conn, peer, local);
                if stopping {
                    return drain(&sh, &tl_info, &listener, fixed).await;
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
                        sh.frontend(fe).name,
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

/// The rate gates an accept on a listener of `fe` passes (`tls`: a
/// `bind … ssl` line's).
fn gates(sh: &Shared, fe: FrontendId, tls: bool) -> impl Iterator<Item = &crate::freq::Gate> {
    let ssl = sh.ssl_gate.as_ref().filter(|_| tls);
    [
        sh.conn_gate.as_ref(),
        ssl,
        sh.frontend(fe).rate_gate.as_ref(),
    ]
    .into_iter()
    .flatten()
}

/// Milliseconds before one more accept keeps every rate under its limit
/// (no clock read without a limit).
fn rate_wait(sh: &Shared, fe: FrontendId, tls: bool) -> u64 {
    let mut gates = gates(sh, fe, tls).peekable();
    if gates.peek().is_none() {
        return 0;
    }
    let now = crate::clock::epoch().elapsed().as_millis() as u64;
    gates.map(|g| g.wait_ms(now)).max().unwrap_or(0)
}

/// Counts an accept in the rates it passed.
fn rate_count(sh: &Shared, fe: FrontendId, tls: bool) {
    let mut gates = gates(sh, fe, tls).peekable();
    if gates.peek().is_none() {
        return;
    }
    let now = crate::clock::epoch().elapsed().as_millis() as u64;
    for g in gates {
        g.count(now);
    }
}

/// What a session needs of the listener that accepted it.
struct ListenerInfo {
    fe: FrontendId,
    accept_proxy: bool,
    bind: Arc<crate::session::BindInfo>,
    clitcpka: Option<weir_config::TcpKa>,
    nodelay: bool,
    /// `option nolinger`: set on each connection (a listener's option is
    /// not inherited by connections the kernel made before it was set).
    nolinger: bool,
}

/// Starts the session of a connection accepted (and counted) on `l`.
fn start_session(
    sh: &Arc<Shared>,
    l: &ListenerInfo,
    conn: Conn,
    peer: Option<std::net::SocketAddr>,
    local: Option<std::net::SocketAddr>,
) {
    let fe = l.fe;
    sh.frontend(fe).total.fetch_add(1, Ordering::Relaxed);
    if let Some(s) = &l.bind.stats {
        s.total.fetch_add(1, Ordering::Relaxed);
        crate::state::raise_max(&s.smax, l.bind.conns.load(Ordering::Relaxed));
    }
    if let (Some(ka), Conn::Tcp(s)) = (&l.clitcpka, &conn) {
        crate::sys::keepalive(socket2::SockRef::from(s), ka);
    }
    if let (true, Conn::Tcp(s)) = (l.nolinger, &conn) {
        // Closes with a reset.
        let _ = socket2::SockRef::from(s).set_linger(Some(Duration::ZERO));
    }
    let acc = Accepted {
        peer,
        local,
        accept_proxy: l.accept_proxy,
        bind: l.bind.clone(),
        reg: crate::sessions::register(std::os::fd::AsRawFd::as_raw_fd(&conn), fe),
        nodelay: l.nodelay,
        pp: None,
        fc: None,
        switched: None,
    };
    let sh = sh.clone();
    if sh.proxy(sh.frontend(fe).proxy).mode != weir_config::Mode::Http {
        crate::profile::spawn::<crate::profile::Tcp, _>(crate::tcp::entry::run(sh, fe, conn, acc));
    } else if acc.bind.tls.is_some() {
        crate::profile::spawn::<crate::profile::Https, _>(crate::http::entry::run_https(
            sh, fe, conn, acc,
        ));
    } else {
        crate::profile::spawn::<crate::profile::Http, _>(crate::http::entry::run_http(
            sh, fe, conn, acc,
        ));
    }
}

/// How long a draining listener waits for one more handshake that was
/// under way when it stopped taking new ones.
const DRAIN_GRACE: Duration = Duration::from_millis(100);
/// The longest a listener drains: a unix socket's clients (which no filter
/// stops) or a kernel that keeps queueing cannot hold the stop open.
const DRAIN_MAX: Duration = Duration::from_secs(1);

/// Soft stop: the connections the kernel queued on this listener are
/// served, not reset when it closes. A filter first drops new handshakes'
/// SYNs (their clients try again a second later and find the port closed,
/// or a new process on it), letting the handshakes under way complete;
/// then the queue is accepted until it stays empty for [`DRAIN_GRACE`].
/// Sockets handed to a new process just close, as it accepts what they
/// hold; a hard stop closes at once.
async fn drain(
    sh: &Arc<Shared>,
    l: &ListenerInfo,
    listener: &AnyListener,
    fixed: Option<std::net::SocketAddr>,
) {
    let killed = *sh.killing.borrow();
    if killed || sh.handed_over.load(Ordering::SeqCst) {
        return;
    }
    let grace = match listener {
        AnyListener::Tcp(t) => match refuse_syns(t) {
            Ok(()) => DRAIN_GRACE,
            Err(e) => {
                crate::log::console(
                    "WARNING",
                    &format!("soft stop: cannot close the accept queue before draining it: {e}"),
                );
                Duration::ZERO
            }
        },
        // Nothing stops a unix client's connect: take what is there.
        AnyListener::Unix(_) => Duration::ZERO,
    };
    let end = tokio::time::Instant::now() + DRAIN_MAX;
    while tokio::time::Instant::now() < end {
        match tokio::time::timeout(grace, accept(listener, fixed)).await {
            Ok(Ok((conn, peer, local))) => {
                crate::profile::accepted();
                force_reserve(sh, l.fe, &l.bind);
                start_session(sh, l, conn, peer, local);
            }
            // A client that left before its turn: the next one.
            Ok(Err(e)) if e.kind() == io::ErrorKind::ConnectionAborted => {}
            Ok(Err(_)) | Err(_) => return,
        }
    }
}

/// Attaches a socket filter to a TCP listener that drops packets with SYN
/// and not ACK: no new handshake starts, those under way complete.
fn refuse_syns(t: &tokio::net::TcpListener) -> io::Result<()> {
    let op = |code: u32, jt: u8, jf: u8, k: u32| libc::sock_filter {
        code: code as u16,
        jt,
        jf,
        k,
    };
    // The filter sees the TCP header: its flags are byte 13.
    let prog = [
        op(libc::BPF_LD | libc::BPF_B | libc::BPF_ABS, 0, 0, 13),
        op(libc::BPF_ALU | libc::BPF_AND | libc::BPF_K, 0, 0, 0x12),
        op(libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K, 0, 1, 0x02),
        op(libc::BPF_RET | libc::BPF_K, 0, 0, 0),
        op(libc::BPF_RET | libc::BPF_K, 0, 0, u32::MAX),
    ];
    socket2::SockRef::from(t).attach_filter(&prog)
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
