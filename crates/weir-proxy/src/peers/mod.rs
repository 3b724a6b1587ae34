//! The peers of `peers` sections (manual §3.5): each process listens as
//! its local peer and connects to the others, and they keep their shared
//! stick tables in step with HAProxy's peers protocol 2.1 (the codecs are
//! `weir_stick::peers`): table definitions, updates of what changed here,
//! acknowledgements, heartbeats, and a full push when a peer asks to
//! resynchronise. Interoperates with haproxy 2.6.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};

use crate::conn::Conn;
use crate::tls::{BindConfig, ClientTls};

use crate::state::peering::{LinkStatus, PeerBoard, SectionBoard, SessView};
use crate::state::Shared;
use sess::Sess;
use weir_stick::peers::{frame, msg, Hello};

mod sess;
use weir_stick::Table;

/// How often a session looks for local changes it was not woken for.
const PUSH_EVERY: Duration = Duration::from_millis(500);
/// A heartbeat after this long without sending (haproxy's 3 s).
const HEARTBEAT: Duration = Duration::from_secs(3);
/// A session that heard nothing this long is closed (haproxy's 5 s).
const SILENCE: Duration = Duration::from_secs(5);
/// The wait before connecting again to a peer.
const RECONNECT: Duration = Duration::from_secs(2);
/// How long a new process waits for a peer's push (haproxy's 5 s).
const RESYNC_WAIT: Duration = Duration::from_secs(5);
/// Updates pushed per table and turn.
const BATCH: usize = 200;

/// A shared table: its name on the wire and the table.
struct Shared1 {
    wire: String,
    table: Arc<Table>,
}

/// A remote peer: its name, address, and its session.
struct Remote {
    name: String,
    /// Its line in the section (its place on the board).
    line: usize,
    addr: Option<SocketAddr>,
    /// `ssl` on its line: the client side of TLS towards it.
    tls: Option<Arc<ClientTls>>,
    state: std::sync::Mutex<Link>,
}

/// Which session a remote peer has: its number (a session that sees
/// another number ends), and who opened it while it runs.
#[derive(Debug, Default, Clone, Copy)]
struct Link {
    gen: u64,
    live: Option<bool>,
}

impl Remote {
    fn link(&self) -> std::sync::MutexGuard<'_, Link> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes the link for a new session (`ours`: we connected), or
    /// refuses it: when two sessions cross, the one opened by the peer
    /// with the smaller name stays, as both sides decide alike.
    fn claim(&self, local: &str, ours: bool) -> Option<u64> {
        let mut l = self.link();
        let preferred = |by_us: bool| by_us == (local < self.name.as_str());
        if let Some(by_us) = l.live {
            if preferred(by_us) && !preferred(ours) {
                return None;
            }
        }
        l.gen += 1;
        l.live = Some(ours);
        Some(l.gen)
    }

    fn current(&self, gen: u64) -> bool {
        self.link().gen == gen
    }

    fn release(&self, gen: u64) {
        let mut l = self.link();
        if l.gen == gen {
            l.live = None;
        }
    }

    fn busy(&self) -> bool {
        self.link().live.is_some()
    }
}

/// A `peers` section at run time.
struct Section {
    local: String,
    remotes: Vec<Remote>,
    tables: Vec<Shared1>,
    /// Woken by each local change of a shared table.
    changed: Arc<tokio::sync::Notify>,
    /// What `show peers` tells of it; its `synced`: a peer pushed its
    /// tables (after our resync request): a new process asks the first
    /// peer it meets, as haproxy does.
    board: Arc<SectionBoard>,
    /// Where the local peer listens (a process stopping teaches the next
    /// one there).
    addr: Option<SocketAddr>,
    /// `bind … ssl`: peers connecting here speak TLS.
    tls: Option<Arc<BindConfig>>,
    /// How this process reaches its own address (to teach the next one).
    own_tls: Option<Arc<ClientTls>>,
}

impl Section {
    /// Changes what `show peers` tells of remote peer `r`.
    fn note(&self, r: &Remote, f: impl FnOnce(&mut crate::state::peering::PeerLive)) {
        if let Some(p) = self.board.peers.get(r.line) {
            f(&mut p.live());
        }
    }

    fn live(&self, r: &Remote) -> Option<crate::state::peering::PeerLive> {
        self.board.peers.get(r.line).map(|p| p.live().clone())
    }
}

/// The sections whose local peer is this process, with their listeners.
pub struct Bound {
    sections: Vec<(Arc<Section>, Option<std::net::TcpListener>)>,
}

impl Bound {
    /// Whether a section listens.
    pub fn listens(&self) -> bool {
        self.sections.iter().any(|(_, l)| l.is_some())
    }
}

/// The local peer's name: `localpeer`/`-L`, else the host name.
fn local_name(sh: &Shared) -> String {
    sh.cfg
        .global
        .localpeer
        .clone()
        .unwrap_or_else(|| sh.hostname.clone())
}

/// Binds each section's local peer and marks its tables shared; the
/// problems found (a bind that fails) are errors, a section without the
/// local peer only a warning.
pub fn bind(sh: &Shared, quiet: bool) -> Result<Bound, Vec<String>> {
    let me = local_name(sh);
    let mut out = Vec::new();
    let mut boards = Vec::new();
    let mut errors = Vec::new();
    for (si, sec) in sh.cfg.peers.iter().enumerate().filter(|(_, s)| !s.disabled) {
        let Some(li) = sec.peers.iter().position(|p| p.name == me) else {
            crate::limits::warn(
                quiet,
                &format!(
                    "[WARNING] peers section '{}' has no peer named '{me}' (the local peer): it is not used",
                    sec.name
                ),
            );
            continue;
        };
        let mut tables: Vec<Shared1> = sec
            .tables
            .iter()
            .filter_map(|t| {
                let table = sh.tables.named(&t.def.name)?.clone();
                let short = t.def.name.split_once('/').map_or("", |(_, n)| n);
                Some(Shared1 {
                    wire: format!("/{short}"),
                    table,
                })
            })
            .collect();
        for p in &sh.cfg.proxies {
            let Some(t) = p
                .stick_table
                .as_ref()
                .filter(|t| t.peers.as_deref() == Some(&sec.name))
            else {
                continue;
            };
            if let Some(table) = sh.tables.named(&t.def.name) {
                tables.push(Shared1 {
                    wire: p.name.clone(),
                    table: table.clone(),
                });
            }
        }
        let changed = Arc::new(tokio::sync::Notify::new());
        for t in &tables {
            let c = changed.clone();
            t.table.share(Box::new(move || c.notify_waiters()));
        }
        let peer_tls = |i: usize| {
            let t = sh.peers_tls.get(si)?;
            t.peers.get(i)?.clone()
        };
        let remotes = sec
            .peers
            .iter()
            .enumerate()
            .filter(|(_, p)| p.name != me)
            .map(|(pi, p)| Remote {
                name: p.name.clone(),
                line: pi,
                addr: p.addr.as_ref().and_then(server_addr),
                tls: peer_tls(pi),
                state: std::sync::Mutex::new(Link::default()),
            })
            .collect();
        let tls = sh.peers_tls.get(si).and_then(|t| t.bind.clone());
        // The next process is reached as the local peer's line says, and
        // over TLS whenever the bind speaks it.
        let own_tls = peer_tls(li).or_else(|| {
            tls.as_ref()?;
            let t = weir_config::tls::ServerTls {
                enabled: true,
                verify: Some(weir_config::tls::Verify::None),
                ..Default::default()
            };
            crate::tls::client_config(&t, &sh.cfg.global.tls, &sh.tls_files)
                .ok()
                .map(Arc::new)
        });
        let local = sec.peers.get(li);
        let listener = match (
            &sec.bind,
            local.and_then(|l| l.addr.as_ref()).and_then(server_addr),
        ) {
            (Some(b), _) => match listen_on(b) {
                Ok(l) => Some(l),
                Err(e) => {
                    errors.push(format!("[ALERT] peers section '{}': {e}", sec.name));
                    None
                }
            },
            (None, Some(a)) => match reusable(a) {
                Ok(l) => Some(l),
                Err(e) => {
                    errors.push(format!(
                        "[ALERT] peers section '{}': cannot bind [{a}]: {e}",
                        sec.name
                    ));
                    None
                }
            },
            (None, None) => None,
        };
        let addr = listener.as_ref().and_then(|l| l.local_addr().ok());
        let board = Arc::new(SectionBoard {
            name: sec.name.clone(),
            started: sh.started,
            peers: sec
                .peers
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    let addr = if i == li {
                        addr
                    } else {
                        p.addr.as_ref().and_then(server_addr)
                    };
                    PeerBoard::new(p.name.clone(), i == li, addr)
                })
                .collect(),
            tables: tables
                .iter()
                .map(|t| (t.table.name().to_string(), t.table.clone()))
                .collect(),
            synced: std::sync::atomic::AtomicBool::new(false),
            resync_until: std::time::Instant::now() + RESYNC_WAIT,
            calls: std::sync::atomic::AtomicU64::new(0),
        });
        boards.push(board.clone());
        let section = Section {
            local: me.clone(),
            remotes,
            tables,
            changed,
            board,
            addr,
            tls,
            own_tls,
        };
        out.push((Arc::new(section), listener));
    }
    sh.peering.set(boards);
    if errors.is_empty() {
        Ok(Bound { sections: out })
    } else {
        Err(errors)
    }
}

pub(crate) fn server_addr(a: &weir_config::addr::ServerAddr) -> Option<SocketAddr> {
    use std::net::ToSocketAddrs;
    use weir_config::addr::{Host, PortSpec, ServerAddr};
    let ServerAddr::Inet {
        host,
        port: PortSpec::Fixed(port),
        ..
    } = a
    else {
        return None;
    };
    match host {
        Host::Ip(ip) => Some(SocketAddr::new(*ip, *port)),
        Host::Name(n) => (n.as_str(), *port).to_socket_addrs().ok()?.next(),
        Host::Any => None,
    }
}

pub(crate) fn listen_on(b: &weir_config::addr::BindAddr) -> Result<std::net::TcpListener, String> {
    use crate::listen::{expand, Expanded};
    match expand(b).map_err(|e| e.to_string())? {
        Expanded::Tcp(addrs) => {
            let a = addrs.first().copied().ok_or("no address")?;
            reusable(a).map_err(|e| format!("cannot bind [{a}]: {e}"))
        }
        Expanded::Fd(n) => match crate::listen::from_fd(n) {
            Ok(crate::listen::Listener::Tcp(l)) => Ok(l),
            Ok(_) => Err(format!("fd@{n} is not a TCP socket")),
            Err(e) => Err(format!("cannot use fd@{n}: {e}")),
        },
        Expanded::Unix(..) => Err("peers listen on TCP only".into()),
    }
}

/// A listening socket the next process can bind too (`SO_REUSEPORT`),
/// so that this one can teach it its tables when it stops.
fn reusable(a: SocketAddr) -> std::io::Result<std::net::TcpListener> {
    use socket2::{Domain, Socket, Type};
    let s = Socket::new(Domain::for_address(a), Type::STREAM, None)?;
    s.set_reuse_address(true)?;
    s.set_reuse_port(true)?;
    s.bind(&a.into())?;
    s.listen(128)?;
    Ok(s.into())
}

/// Starts each section's listener and connectors on the current runtime;
/// gives the listeners' tasks, which end once a soft stop taught the next
/// process (the caller waits for them before exiting).
pub fn spawn(
    b: Bound,
    stopping: &tokio::sync::watch::Sender<bool>,
) -> Vec<tokio::task::JoinHandle<()>> {
    let mut out = Vec::new();
    for (sec, listener) in b.sections {
        if let Some(l) = listener {
            if l.set_nonblocking(true).is_ok() {
                if let Ok(l) = TcpListener::from_std(l) {
                    out.push(tokio::spawn(accept(sec.clone(), l, stopping.subscribe())));
                }
            }
        }
        for i in 0..sec.remotes.len() {
            tokio::spawn(connect(sec.clone(), i));
        }
    }
    out
}

async fn accept(
    sec: Arc<Section>,
    l: TcpListener,
    mut stopping: tokio::sync::watch::Receiver<bool>,
) {
    loop {
        tokio::select! {
            r = l.accept() => {
                let Ok((s, _)) = r else {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                };
                tokio::spawn(incoming(sec.clone(), s));
            }
            _ = async { stopping.wait_for(|s| *s).await.is_ok() } => {
                drop(l);
                if let Some(a) = sec.addr {
                    let _ = tokio::time::timeout(SILENCE, teach(&sec, a)).await;
                }
                return;
            }
        }
    }
}

/// A stopping process teaches the process after it (listening on the
/// same address) every entry of its shared tables, as haproxy's old
/// process does through the local peer.
async fn teach(sec: &Section, a: SocketAddr) {
    let Some(s) = open(a, sec.own_tls.as_deref()).await else {
        return;
    };
    let hello = Hello {
        remote: sec.local.clone(),
        local: sec.local.clone(),
        pid: std::process::id(),
    };
    if !send(&s, &hello.bytes()).await || status(&s).await.is_none() {
        return;
    }
    let mut st = Sess::new(sec);
    st.push_all();
    frame(msg::CONTROL, msg::RESYNC_FINISHED, &[], &mut st.out);
    if !send(&s, &st.out).await {
        return;
    }
    // Until the next process confirms (or closes).
    let mut b = [0u8; 64];
    let _ = tokio::time::timeout(Duration::from_secs(2), s.read(&mut b)).await;
}

/// The process before this one, teaching its tables (it says it is us):
/// its updates are learned until it closes.
async fn learn(sec: &Section, s: Conn, mut buf: Vec<u8>) {
    let mut st = Sess::new(sec);
    let mut chunk = vec![0u8; 16 * 1024];
    loop {
        if !st.read(&mut buf) {
            break;
        }
        if !st.out.is_empty() {
            let out = std::mem::take(&mut st.out);
            if !send(&s, &out).await {
                break;
            }
        }
        match tokio::time::timeout(SILENCE, s.read(&mut chunk)).await {
            Ok(Ok(n)) if n > 0 => buf.extend_from_slice(chunk.get(..n).unwrap_or_default()),
            _ => break,
        }
    }
}

/// A peer connecting to us: its hello, our status, then the session.
async fn incoming(sec: Arc<Section>, s: TcpStream) {
    let Some(s) = admit(s, sec.tls.as_deref()).await else {
        return;
    };
    let mut buf = Vec::new();
    let hello = loop {
        let mut chunk = [0u8; 512];
        let n = match tokio::time::timeout(SILENCE, s.read(&mut chunk)).await {
            Ok(Ok(n)) if n > 0 => n,
            _ => return,
        };
        buf.extend_from_slice(chunk.get(..n).unwrap_or_default());
        match Hello::parse(&buf) {
            Ok(Some((h, used))) => {
                buf.drain(..used);
                break h;
            }
            Ok(None) => continue,
            Err(code) => {
                let _ = send(&s, format!("{code}\n").as_bytes()).await;
                return;
            }
        }
    };
    if hello.remote != sec.local {
        let _ = send(&s, b"503\n").await;
        return;
    }
    if hello.local == sec.local {
        // The process before us, stopping.
        if send(&s, b"200\n").await {
            learn(&sec, s, buf).await;
        }
        return;
    }
    let Some(idx) = sec.remotes.iter().position(|r| r.name == hello.local) else {
        let _ = send(&s, b"504\n").await;
        return;
    };
    let Some(r) = sec.remotes.get(idx) else {
        return;
    };
    let Some(gen) = r.claim(&sec.local, false) else {
        // A crossing session we keep: try again later.
        sec.note(r, |l| l.coll += 1);
        let _ = send(&s, b"300\n").await;
        return;
    };
    sec.note(r, |l| {
        l.new_conn += 1;
        l.last_hdshk = Some(std::time::Instant::now());
    });
    if !send(&s, b"200\n").await {
        r.release(gen);
        return;
    }
    session(&sec, idx, gen, s, buf).await;
}

/// Connects to remote peer `i` whenever it has no session.
async fn connect(sec: Arc<Section>, i: usize) {
    let Some(r) = sec.remotes.get(i) else {
        return;
    };
    let Some(addr) = r.addr else {
        return;
    };
    loop {
        if r.busy() {
            tokio::time::sleep(RECONNECT).await;
            continue;
        }
        sec.note(r, |l| {
            l.status = LinkStatus::Conn;
            l.new_conn += 1;
            l.last_hdshk = Some(std::time::Instant::now());
            l.reconnect = None;
        });
        if let Some(s) = open(addr, r.tls.as_deref()).await {
            let hello = Hello {
                remote: r.name.clone(),
                local: sec.local.clone(),
                pid: std::process::id(),
            };
            if send(&s, &hello.bytes()).await {
                if let Some(rest) = status(&s).await {
                    // A crossing session the other side opened may win.
                    match r.claim(&sec.local, true) {
                        Some(gen) => session(&sec, i, gen, s, rest).await,
                        None => sec.note(r, |l| l.coll += 1),
                    }
                }
            }
        }
        sec.note(r, |l| {
            l.reconnect = Some(std::time::Instant::now() + RECONNECT)
        });
        tokio::time::sleep(RECONNECT).await;
    }
}

/// A connection to a peer at `a`, over TLS when its line says `ssl`.
async fn open(a: SocketAddr, tls: Option<&ClientTls>) -> Option<Conn> {
    let s = match tokio::time::timeout(SILENCE, TcpStream::connect(a)).await {
        Ok(Ok(s)) => s,
        _ => return None,
    };
    let _ = s.set_nodelay(true);
    let Some(t) = tls else {
        return Some(Conn::Tcp(s));
    };
    let name = crate::tls::server_name(None, Some(a));
    crate::tls::connect(Conn::Tcp(s), t.config(), name, Some(SILENCE))
        .await
        .ok()
}

/// A peer's connection to us, over TLS when the `bind` line says `ssl`
/// (a failed handshake ends it).
async fn admit(s: TcpStream, tls: Option<&BindConfig>) -> Option<Conn> {
    let _ = s.set_nodelay(true);
    let Some(cfg) = tls else {
        return Some(Conn::Tcp(s));
    };
    crate::tls::accept(Conn::Tcp(s), cfg, &[], Some(SILENCE))
        .await
        .ok()
}

/// Writes `b` whole, or gives up after the silence a session tolerates
/// (a peer that stops reading cannot hold a session for ever).
async fn send(c: &Conn, b: &[u8]) -> bool {
    matches!(
        tokio::time::timeout(SILENCE, c.send_all(b)).await,
        Ok(Ok(()))
    )
}

/// Reads the status line of our hello: the bytes after it on "200".
async fn status(s: &Conn) -> Option<Vec<u8>> {
    let mut buf = Vec::new();
    loop {
        let mut chunk = [0u8; 512];
        let n = match tokio::time::timeout(SILENCE, s.read(&mut chunk)).await {
            Ok(Ok(n)) if n > 0 => n,
            _ => return None,
        };
        buf.extend_from_slice(chunk.get(..n).unwrap_or_default());
        if let Some(nl) = buf.iter().position(|&c| c == b'\n') {
            let code = buf.get(..nl).unwrap_or_default();
            return (code == b"200").then(|| buf.get(nl + 1..).unwrap_or_default().to_vec());
        }
        if buf.len() > 64 {
            return None;
        }
    }
}

async fn session(sec: &Section, idx: usize, gen: u64, s: Conn, mut buf: Vec<u8>) {
    let Some(r) = sec.remotes.get(idx) else {
        return;
    };
    let mut st = Sess::new(sec);
    let (src, addr) = addrs(&s);
    let tls = s.tls_info().is_some();
    let rx_before = sec.live(r).map_or(0, |l| l.rx_hbt);
    sec.note(r, |l| {
        l.status = LinkStatus::Esta;
        l.sess = Some(SessView {
            id: gen,
            incoming: !r.link().live.unwrap_or(true),
            tls,
            src,
            addr,
            ..SessView::default()
        });
    });
    if !sec.board.synced.load(std::sync::atomic::Ordering::Relaxed) {
        frame(msg::CONTROL, msg::RESYNC_REQUEST, &[], &mut st.out);
    }
    // Messages that came with the handshake.
    if !buf.is_empty() && !st.read(&mut buf) {
        let _ = send(&s, &st.out).await;
        r.release(gen);
        return;
    }
    let mut tick = tokio::time::interval(PUSH_EVERY);
    let mut last_rx = crate::clock::now();
    let mut last_tx = crate::clock::now();
    let mut chunk = vec![0u8; 16 * 1024];
    let mut silent = false;
    loop {
        if !r.current(gen) {
            break;
        }
        sec.board.turn();
        sec.note(r, |l| {
            l.rx_hbt = rx_before + st.rx_hbt;
            l.heartbeat = Some((last_tx + HEARTBEAT).into_std());
            // As haproxy's session timer: the silence it tolerates.
            l.reconnect = Some((last_rx + SILENCE).into_std());
            if let Some(v) = &mut l.sess {
                v.calls += 1;
                v.tables = st.tables();
                (v.last_in, v.last_out) = st.last_tables();
            }
        });
        tokio::select! {
            n = s.read(&mut chunk) => {
                let n = match n {
                    Ok(n) if n > 0 => n,
                    _ => break,
                };
                last_rx = crate::clock::now();
                buf.extend_from_slice(chunk.get(..n).unwrap_or_default());
                if !st.read(&mut buf) {
                    // (What it was told, an error message, goes first.)
                    let _ = send(&s, &st.out).await;
                    break;
                }
            }
            _ = sec.changed.notified() => st.push(),
            _ = tick.tick() => {
                if crate::clock::elapsed(last_rx) > SILENCE {
                    silent = true;
                    break;
                }
                st.push();
                if st.out.is_empty() && crate::clock::elapsed(last_tx) > HEARTBEAT {
                    frame(msg::CONTROL, msg::HEARTBEAT, &[], &mut st.out);
                    sec.note(r, |l| l.tx_hbt += 1);
                }
            }
        }
        if !st.out.is_empty() {
            let bytes = std::mem::take(&mut st.out);
            if !send(&s, &bytes).await {
                break;
            }
            last_tx = crate::clock::now();
        }
    }
    sec.note(r, |l| {
        l.sess = None;
        l.heartbeat = None;
        l.no_hbt += u64::from(silent);
        l.proto_err += u64::from(st.proto_err);
    });
    r.release(gen);
}

/// The other end's address and ours.
fn addrs(c: &Conn) -> (Option<SocketAddr>, Option<SocketAddr>) {
    match c {
        Conn::Tls(t) => addrs(t.io()),
        c => c
            .tcp()
            .map_or((None, None), |t| (t.peer_addr().ok(), t.local_addr().ok())),
    }
}
