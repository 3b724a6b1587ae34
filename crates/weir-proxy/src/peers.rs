//! The peers of `peers` sections (manual §3.5): each process listens as
//! its local peer and connects to the others, and they keep their shared
//! stick tables in step with HAProxy's peers protocol 2.1 (the codecs are
//! `weir_stick::peers`): table definitions, updates of what changed here,
//! acknowledgements, heartbeats, and a full push when a peer asks to
//! resynchronise. Interoperates with haproxy 2.6.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};

use crate::conn::Conn;
use crate::tls::{BindConfig, ClientTls};

use crate::state::Shared;
use weir_stick::peers::{
    decode_update, encode_ack, encode_int, encode_update, frame, msg, Dict, Hello, Message,
    TableDef,
};
use weir_stick::Table;

/// How often a session looks for local changes it was not woken for.
const PUSH_EVERY: Duration = Duration::from_millis(500);
/// A heartbeat after this long without sending (haproxy's 3 s).
const HEARTBEAT: Duration = Duration::from_secs(3);
/// A session that heard nothing this long is closed (haproxy's 5 s).
const SILENCE: Duration = Duration::from_secs(5);
/// The wait before connecting again to a peer.
const RECONNECT: Duration = Duration::from_secs(2);
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
    /// A peer pushed its tables (after our resync request): a new process
    /// asks the first peer it meets, as haproxy does.
    synced: std::sync::atomic::AtomicBool,
    /// Where the local peer listens (a process stopping teaches the next
    /// one there).
    addr: Option<SocketAddr>,
    /// `bind … ssl`: peers connecting here speak TLS.
    tls: Option<Arc<BindConfig>>,
    /// How this process reaches its own address (to teach the next one).
    own_tls: Option<Arc<ClientTls>>,
}

/// The sections whose local peer is this process, with their listeners.
pub struct Bound {
    sections: Vec<(Arc<Section>, Option<std::net::TcpListener>)>,
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
        let section = Section {
            local: me.clone(),
            remotes,
            tables,
            changed,
            synced: std::sync::atomic::AtomicBool::new(false),
            addr,
            tls,
            own_tls,
        };
        out.push((Arc::new(section), listener));
    }
    if errors.is_empty() {
        Ok(Bound { sections: out })
    } else {
        Err(errors)
    }
}

fn server_addr(a: &weir_config::addr::ServerAddr) -> Option<SocketAddr> {
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

fn listen_on(b: &weir_config::addr::BindAddr) -> Result<std::net::TcpListener, String> {
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
    let Some(gen) = sec
        .remotes
        .get(idx)
        .and_then(|r| r.claim(&sec.local, false))
    else {
        // A crossing session we keep: try again later.
        let _ = send(&s, b"300\n").await;
        return;
    };
    if !send(&s, b"200\n").await {
        if let Some(r) = sec.remotes.get(idx) {
            r.release(gen);
        }
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
        if let Some(s) = open(addr, r.tls.as_deref()).await {
            let hello = Hello {
                remote: r.name.clone(),
                local: sec.local.clone(),
                pid: std::process::id(),
            };
            if send(&s, &hello.bytes()).await {
                if let Some(rest) = status(&s).await {
                    // A crossing session the other side opened may win.
                    if let Some(gen) = r.claim(&sec.local, true) {
                        session(&sec, i, gen, s, rest).await;
                    }
                }
            }
        }
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

/// A remote table as its definition said, and the local table it is.
struct RemoteTable {
    def: TableDef,
    local: usize,
}

/// What a session knows of each side.
struct Sess<'a> {
    sec: &'a Section,
    out: Vec<u8>,
    /// Per local table: defined on this session, last update sent.
    defined: Vec<bool>,
    sent: Vec<u32>,
    /// The local table updates last went for.
    current_out: Option<usize>,
    remote: HashMap<u64, RemoteTable>,
    current_in: Option<u64>,
    last_in: Option<u32>,
    acks: HashMap<u64, u32>,
    tx_dict: Dict,
    rx_dict: Dict,
}

async fn session(sec: &Section, idx: usize, gen: u64, s: Conn, mut buf: Vec<u8>) {
    let Some(r) = sec.remotes.get(idx) else {
        return;
    };
    let mut st = Sess::new(sec);
    if !sec.synced.load(std::sync::atomic::Ordering::Relaxed) {
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
    loop {
        if !r.current(gen) {
            break;
        }
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
                    break;
                }
                st.push();
                if st.out.is_empty() && crate::clock::elapsed(last_tx) > HEARTBEAT {
                    frame(msg::CONTROL, msg::HEARTBEAT, &[], &mut st.out);
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
    r.release(gen);
}

impl<'a> Sess<'a> {
    fn new(sec: &'a Section) -> Sess<'a> {
        Sess {
            sec,
            out: Vec::new(),
            defined: vec![false; sec.tables.len()],
            sent: vec![0; sec.tables.len()],
            current_out: None,
            remote: HashMap::new(),
            current_in: None,
            last_in: None,
            acks: HashMap::new(),
            tx_dict: Dict::default(),
            rx_dict: Dict::default(),
        }
    }

    /// Handles the whole messages in `buf`; false: the session ends.
    fn read(&mut self, buf: &mut Vec<u8>) -> bool {
        let mut used = 0;
        loop {
            let rest = buf.get(used..).unwrap_or_default();
            match Message::parse(rest) {
                Ok(Some((m, n))) => {
                    if !self.handle(m) {
                        return false;
                    }
                    used += n;
                }
                Ok(None) => break,
                Err(_) => {
                    frame(msg::ERROR, 0, &[], &mut self.out);
                    return false;
                }
            }
        }
        buf.drain(..used);
        for (t, u) in self.acks.drain() {
            frame(msg::TABLE, msg::ACK, &encode_ack(t, u), &mut self.out);
        }
        true
    }

    fn handle(&mut self, m: Message<'_>) -> bool {
        match (m.class, m.kind) {
            (msg::CONTROL, msg::RESYNC_REQUEST) => {
                self.push_all();
                frame(msg::CONTROL, msg::RESYNC_FINISHED, &[], &mut self.out);
            }
            (msg::CONTROL, msg::RESYNC_FINISHED | msg::RESYNC_PARTIAL) => {
                if m.kind == msg::RESYNC_FINISHED {
                    self.sec
                        .synced
                        .store(true, std::sync::atomic::Ordering::Relaxed);
                }
                frame(msg::CONTROL, msg::RESYNC_CONFIRM, &[], &mut self.out);
            }
            (msg::CONTROL, _) => {}
            (msg::ERROR, _) => return false,
            (msg::TABLE, msg::DEFINE) => {
                let Ok(def) = TableDef::decode(m.data) else {
                    return false;
                };
                let local = self
                    .sec
                    .tables
                    .iter()
                    .position(|t| t.wire == def.name && def.keys_fit(t.table.def().key));
                self.current_in = Some(def.id);
                self.last_in = None;
                match local {
                    // (A peer defines each of its tables once a session.)
                    Some(_) if self.remote.len() >= 4 * self.sec.tables.len() + 16 => {
                        frame(msg::ERROR, 0, &[], &mut self.out);
                        return false;
                    }
                    Some(local) => {
                        self.remote.insert(def.id, RemoteTable { def, local });
                    }
                    None => {
                        self.remote.remove(&def.id);
                    }
                }
            }
            (msg::TABLE, msg::SWITCH) => {
                let id = weir_stick::peers::decode_int(m.data)
                    .ok()
                    .flatten()
                    .map(|(v, _)| v);
                self.current_in = id;
                self.last_in = None;
            }
            (
                msg::TABLE,
                msg::UPDATE | msg::INC_UPDATE | msg::UPDATE_TIMED | msg::INC_UPDATE_TIMED,
            ) => {
                let Some(id) = self.current_in else {
                    return true;
                };
                let Some(rt) = self.remote.get(&id) else {
                    return true;
                };
                let Some(local) = self.sec.tables.get(rt.local) else {
                    return true;
                };
                let key = local.table.def().key;
                let Ok(u) = decode_update(m.kind, m.data, &rt.def, key, &mut self.rx_dict) else {
                    return false;
                };
                let n =
                    u.id.unwrap_or_else(|| self.last_in.map_or(1, |l| l.wrapping_add(1)));
                self.last_in = Some(n);
                local.table.apply_remote(&u.key, &u.values);
                self.acks.insert(id, n);
            }
            (msg::TABLE, _) => {}
            _ => {}
        }
        true
    }

    /// Defines local table `i` on this session (once), or switches to it.
    fn select(&mut self, i: usize) {
        if self.current_out == Some(i) {
            return;
        }
        let Some(t) = self.sec.tables.get(i) else {
            return;
        };
        let id = i as u64 + 1;
        if self.defined.get(i).copied().unwrap_or(false) {
            let mut d = Vec::new();
            encode_int(id, &mut d);
            frame(msg::TABLE, msg::SWITCH, &d, &mut self.out);
        } else {
            let td = t.table.def();
            let def = TableDef::of(id, &t.wire, td.key, &td.schema, td.expire);
            frame(
                msg::TABLE,
                msg::DEFINE,
                &def.encode(&td.schema),
                &mut self.out,
            );
            if let Some(d) = self.defined.get_mut(i) {
                *d = true;
            }
        }
        self.current_out = Some(i);
    }

    fn update(&mut self, i: usize, n: u32, e: &weir_stick::Entry) {
        let Some(t) = self.sec.tables.get(i) else {
            return;
        };
        let td = t.table.def();
        let def = TableDef::of(i as u64 + 1, &t.wire, td.key, &td.schema, td.expire);
        let vals = t.table.values_of(e);
        let data = encode_update(
            Some(n),
            e.key(),
            &def,
            &td.schema,
            &vals,
            t.table.now(),
            &mut self.tx_dict,
        );
        frame(msg::TABLE, msg::UPDATE, &data, &mut self.out);
    }

    /// Local changes since the last push, each table in turn.
    fn push(&mut self) {
        for i in 0..self.sec.tables.len() {
            let Some(t) = self.sec.tables.get(i) else {
                continue;
            };
            let after = self.sent.get(i).copied().unwrap_or(0);
            let ups = t.table.updates_after(after, BATCH);
            if ups.is_empty() {
                continue;
            }
            self.select(i);
            for (n, e) in &ups {
                self.update(i, *n, e);
            }
            if let (Some(s), Some((n, _))) = (self.sent.get_mut(i), ups.last()) {
                *s = *n;
            }
        }
    }

    /// Every entry of every shared table (a peer asked to resynchronise).
    fn push_all(&mut self) {
        for i in 0..self.sec.tables.len() {
            let Some(t) = self.sec.tables.get(i) else {
                continue;
            };
            let all = t.table.entries();
            let last = t.table.last_update();
            self.select(i);
            for e in &all {
                self.update(i, last, e);
            }
            if let Some(s) = self.sent.get_mut(i) {
                *s = (*s).max(last);
            }
        }
    }
}
