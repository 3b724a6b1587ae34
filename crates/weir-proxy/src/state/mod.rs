//! Live state shared by every thread: per-proxy counters (atomics), each
//! backend's server set behind a short lock, queue wake-ups, stop signals.

use crate::log::Logger;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::sync::{watch, Notify};
use weir_balance::{Rng, ServerSet};
use weir_config::addr::PortSpec;
use weir_config::{Config, SendProxy};

pub mod admin;
pub mod build;
pub mod cache;
pub mod ids;
pub mod live;
pub mod observe;
pub mod peering;
pub mod procvars;
pub mod saved;
pub mod tables;
pub mod track;
pub mod workers;
pub use build::{build, resolve, Carried, Limits};
pub use ids::{BackendId, FrontendId, ProxyId, Roles, ServerId};

/// Where a server is reached.
#[derive(Debug, Clone)]
pub enum ServerTarget {
    Inet {
        addr: SocketAddr,
        port: PortSpec,
    },
    /// A path, or an abstract name after a NUL (`abns@`).
    Unix(String),
}

/// A unix server address as the runtime API shows it (`abns@<name>` for
/// an abstract one).
pub fn unix_text(p: &str) -> String {
    match p.strip_prefix('\0') {
        Some(name) => format!("abns@{name}"),
        None => p.to_string(),
    }
}

/// A server's live data.
pub struct ServerRt {
    pub name: String,
    /// Its configuration: the `server` line, or the `add server` command.
    pub conf: Arc<weir_config::Server>,
    /// Added through the runtime API (`add server`).
    pub dynamic: bool,
    /// Removed through the runtime API (`del server`): gone from every
    /// list and pick; its slot stays, so ids are never reused for another.
    pub deleted: AtomicBool,
    /// Named by other parts of the configuration (`track`, `use-server`,
    /// a fetch's argument): `del server` refuses it.
    pub referenced: bool,
    /// The server whose state it follows (`track`), linked once every
    /// backend is built.
    pub tracks: std::sync::OnceLock<(BackendId, ServerId)>,
    /// The servers that track it, the last linked first (haproxy's order
    /// when it passes a state on).
    pub trackers: Mutex<Vec<(BackendId, ServerId)>>,
    pub target: Mutex<ServerTarget>,
    pub source: Option<SocketAddr>,
    pub send_proxy: Option<SendProxy>,
    pub proxy_v2: weir_config::ProxyV2Options,
    /// The address of `dispatch` (see `weir_config::Server::dispatch`).
    pub dispatch: bool,
    pub cur_conns: AtomicU32,
    pub queued: AtomicU32,
    pub total: AtomicU64,
    /// Most connections at once (`smax`).
    pub smax: AtomicU32,
    /// `show stat` counters.
    pub counters: crate::stats::Counters,
    /// Health check results for the runtime API.
    pub check: Mutex<crate::stats::CheckView>,
    /// Runtime API state: the weight set by the user (restored when a
    /// drained server is made ready), drain, checks paused.
    pub uweight: AtomicU32,
    /// Bumped when its connections must not be reused (`set server addr`,
    /// `shutdown sessions server`): idle and held connections of an older
    /// generation are closed instead.
    pub conn_gen: AtomicU32,
    pub drain: AtomicBool,
    /// The drain came from its agent (`show stat`: `DRAIN (agent)`).
    pub drain_by_agent: AtomicBool,
    /// A passed HTTP check said to take no new traffic (`L7OKC`: a 404
    /// with `http-check disable-on-404`, or `ok-status L7OKC`): haproxy's
    /// NOLB, out of balancing until a plain pass.
    pub nolb: AtomicBool,
    /// Started without an address (`init-addr … none`): in maintenance
    /// until one is set, as haproxy's "MAINT (resolution)".
    pub no_addr: AtomicBool,
    pub checks_paused: AtomicBool,
    /// The name it resolves (`srv_fqdn`): its configured host name, or
    /// the target an SRV record gave it.
    pub fqdn: Mutex<Option<String>>,
    /// `set server … fqdn` gave it another name to resolve (the resolver
    /// task moves it to that name's group).
    pub fqdn_moved: AtomicBool,
    /// Its name came from an SRV record (haproxy's admin bit 0x40).
    pub from_srv: AtomicBool,
    /// Errors in a row seen in its traffic (`observe`).
    pub errors_in_row: AtomicU32,
    /// The `error-limit` reached, for its check: the count and the last
    /// error.
    pub observed: Mutex<Option<(u32, observe::Seen)>>,
    /// Wakes its check when `error-limit` is reached.
    pub observe_wake: Notify,
    /// `disable agent`: its agent check is not run.
    pub agent_paused: AtomicBool,
    /// Its agent said "down", "fail" or "stopped" (and not "up" since):
    /// it is down whatever its health check says.
    pub agent_down: AtomicBool,
    /// The agent's last exchange as the runtime API shows it (`agent_*`
    /// and `last_agt` columns).
    pub agent_view: Mutex<crate::stats::CheckView>,
    /// Set when the server leaves maintenance: as HAProxy's, it comes back
    /// up and its check counts again from "just up".
    pub check_restart: AtomicBool,
    /// `set server … health up|down`: the health the check task takes at
    /// its next round (0: none, 1: up, 2: down).
    pub health_forced: std::sync::atomic::AtomicU8,
    /// What the runtime API changed of the server's check and agent
    /// targets.
    pub targets: std::sync::Mutex<CheckTargets>,
    pub maxqueue: Option<u32>,
    /// Woken when sessions on this server must be killed (marked down with
    /// `on-marked-down shutdown-sessions`).
    pub kill: Notify,
    /// Times its sessions were killed: a `mode tcp` session asleep
    /// ([`crate::tcp`]) compares it with the count it fell asleep with.
    pub kills: AtomicU32,
    pub shutdown_on_down: bool,
    /// Its TLS settings (`ssl`, or `ssl` turned off by `no-ssl`): used
    /// while [`ServerRt::use_ssl`] is positive (read it through
    /// [`ServerRt::tls`]).
    pub tls_ctx: Option<Arc<crate::tls::ClientTls>>,
    /// haproxy's `srv_use_ssl`: 1 with TLS, 0 without, -1 turned off by
    /// `no-ssl` (`set server … ssl on|off` changes it).
    pub use_ssl: std::sync::atomic::AtomicI8,
    /// TLS on its health checks (`ssl` without a check port or address,
    /// or `check-ssl`).
    pub check_tls: Option<Arc<crate::tls::ClientTls>>,
    /// HTTP/2 towards it (`mode http`): always (`proto h2`), or when the TLS
    /// handshake picks it (`alpn` offering `h2`).
    pub h2: H2Use,
    /// How its WebSocket upgrades go (`ws`).
    pub ws: WsRoute,
}

/// A server's protocol for WebSocket upgrades (`ws auto|h1|h2`), and the
/// TLS configuration whose ALPN offers it (the server's own when `None`
/// differs in nothing).
#[derive(Debug)]
pub struct WsRoute {
    pub h2: H2Use,
    pub tls: Option<Arc<crate::tls::ClientTls>>,
}

/// When a server's connections speak HTTP/2.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum H2Use {
    Never,
    Always,
    IfNegotiated,
}

impl ServerRt {
    /// TLS on its connections, while it is on.
    pub fn tls(&self) -> Option<&Arc<crate::tls::ClientTls>> {
        self.tls_ctx
            .as_ref()
            .filter(|_| self.use_ssl.load(Ordering::Relaxed) > 0)
    }
    /// Its connections differ by an SNI computed per request: one serves
    /// only requests with the same SNI.
    pub fn private_sni(&self) -> bool {
        self.tls().and_then(|t| t.sni.as_ref()).is_some_and(|e| {
            !matches!(e.fetch, weir_rules::sample::Fetch::Str(_)) || !e.convs.is_empty()
        })
    }
    /// The SNI for a connection to it, evaluated on `ctx`.
    pub fn sni(&self, ctx: &dyn weir_rules::Ctx) -> Option<String> {
        let e = self.tls()?.sni.as_ref()?;
        let v = e.eval(ctx)?.to_bytes();
        String::from_utf8(v).ok().filter(|s| !s.is_empty())
    }
}

impl ServerRt {
    /// Its connections go where the client connected (an address of
    /// `0.0.0.0`, or no fixed port).
    pub fn takes_client_dst(&self) -> bool {
        let t = self.target.lock().unwrap_or_else(|p| p.into_inner());
        match &*t {
            ServerTarget::Inet { addr, port } => {
                addr.ip().is_unspecified() || !matches!(port, PortSpec::Fixed(_))
            }
            ServerTarget::Unix(_) => false,
        }
    }
    pub fn target(&self) -> ServerTarget {
        self.target
            .lock()
            .map(|t| t.clone())
            .unwrap_or_else(|p| p.into_inner().clone())
    }
}

/// A backend's balancing state and the random source its picks draw from,
/// behind one lock.
pub struct Lb {
    pub set: ServerSet,
    pub rng: Rng,
}

impl std::ops::Deref for Lb {
    type Target = ServerSet;
    fn deref(&self) -> &ServerSet {
        &self.set
    }
}

impl std::ops::DerefMut for Lb {
    fn deref_mut(&mut self) -> &mut ServerSet {
        &mut self.set
    }
}

/// A backend's live data.
pub struct BackendRt {
    pub name: String,
    /// How haproxy's messages name it: "backend", or "proxy" for a
    /// `listen` section.
    pub kind_word: &'static str,
    pub proxy: ProxyId,
    pub set: Mutex<Lb>,
    /// Its servers by [`ServerId`], configured then added (`add server`):
    /// a list that only grows, read without a lock; deleted servers keep
    /// their slot. Read it through [`BackendRt::servers`].
    pub slots: boxcar::Vec<Arc<ServerRt>>,
    pub conns: AtomicU32,
    pub queued: AtomicU32,
    pub smax: AtomicU32,
    pub counters: crate::stats::Counters,
    /// Woken when a server slot frees up or a server comes back.
    pub slot_freed: Notify,
    /// Seconds it had no usable server (sampled once a second).
    pub downtime: AtomicU64,
    pub logger: Logger,
    /// Some server has `sni <expr>`: SNIs are computed per session (and
    /// only then).
    pub has_sni: AtomicBool,
    /// HTTP/1.1 head limits (`tune.bufsize`, `tune.http.maxhdr`), for the
    /// HTTP/2 streams to its servers.
    pub limits: weir_proto::h1::Limits,
    /// Some log format names `%bi` or `%bp`: the local address of each
    /// server connection is read (a `getsockname` each, otherwise saved).
    pub log_source: bool,
    /// `tune.rcvbuf.server` and `tune.sndbuf.server`, set on each server
    /// socket.
    pub sockbufs: (Option<u32>, Option<u32>),
    /// `option nolinger`: server sockets close with a reset.
    pub nolinger: bool,
    /// `email-alert`: its server state changes mailed.
    pub alerts: Option<crate::mail::Alerts>,
    /// `use-fcgi-app`: the application its `proto fcgi` servers run.
    pub fcgi: Option<Arc<crate::fcgi::App>>,
}

impl BackendRt {
    /// Each server's SNI for a session evaluated on `ctx` (empty when no
    /// server has an `sni` expression).
    pub fn snis(&self, ctx: &dyn weir_rules::Ctx) -> Vec<Option<String>> {
        if !self.has_sni.load(Ordering::Relaxed) {
            return Vec::new();
        }
        self.slots.iter().map(|(_, s)| s.sni(ctx)).collect()
    }

    /// Its servers, deleted ones left out, with their ids.
    pub fn servers(&self) -> impl Iterator<Item = (ServerId, &Arc<ServerRt>)> + '_ {
        self.slots
            .iter()
            .filter(|(_, s)| !s.deleted.load(Ordering::Relaxed))
            .map(|(i, s)| (ServerId::new(i), s))
    }
    /// How many servers it ever had (deleted ones included): the bound of
    /// its ids.
    pub fn slot_count(&self) -> usize {
        self.slots.count()
    }
    /// The server of id `id` (deleted or not), when there is one.
    pub fn server_at(&self, id: ServerId) -> Option<&Arc<ServerRt>> {
        self.slots.get(id.index())
    }
}

impl BackendRt {
    /// The name of server `id`, for the log line.
    pub fn server_name(&self, id: Option<ServerId>) -> Option<&str> {
        id.map(|i| self.server(i).name.as_str())
    }
    /// The server of this name (`use-server`, the runtime API).
    pub fn server_named(&self, name: &str) -> Option<ServerId> {
        self.servers().find(|(_, s)| s.name == name).map(|(i, _)| i)
    }
    /// Locks the server set; a poisoned lock (a panic elsewhere) is still usable.
    pub fn set(&self) -> MutexGuard<'_, Lb> {
        self.set.lock().unwrap_or_else(|p| p.into_inner())
    }
    /// A server slot was released: account it and wake queued sessions.
    pub fn release(&self, srv: ServerId) {
        self.set().release(srv.index());
        self.server(srv).cur_conns.fetch_sub(1, Ordering::Relaxed);
        self.conns.fetch_sub(1, Ordering::Relaxed);
        if self.queued.load(Ordering::Relaxed) > 0 {
            self.slot_freed.notify_waiters();
        }
    }
}

/// Where a `use_backend` rule sends a request.
pub enum Target {
    /// A backend index resolved at start.
    Static(BackendId),
    /// A `%[...]` name rendered per request; the backends of the
    /// frontend's mode by name.
    Dynamic(
        weir_rules::Fmt,
        std::collections::HashMap<String, BackendId>,
    ),
}

/// What the connections of one bind line share.
#[derive(Debug)]
pub struct BindInfo {
    /// The bind line's connection counter (for its `maxconn`).
    pub conns: AtomicU32,
    /// Its own figures, with `option socket-stats` (`None` without).
    pub stats: Option<ListenerStats>,
    /// `bind … ssl`: the handshake to run before anything else.
    pub tls: Option<Arc<crate::tls::BindConfig>>,
    /// How logs name the listener: its `name`, or its number in the proxy.
    pub label: String,
    /// `bind … name <name>` (`so_name`).
    pub name: Option<String>,
    /// Its id (`so_id`): `id`, or its number in the proxy.
    pub id: u32,
    /// Its place in the frontend's bind lines
    /// ([`FrontendRt::binds`](crate::state::FrontendRt)).
    pub index: usize,
    /// `proto h2`: clients speak HTTP/2 from the first byte.
    pub h2: bool,
    /// HTTP/2's preface opening an HTTP/1.1 connection switches it to
    /// HTTP/2 (not with `proto h1`, nor `option disable-h2-upgrade`).
    pub h2_upgrade: bool,
    /// `proto none` (`mode tcp`): its clients never go on in HTTP.
    pub no_http: bool,
    /// `transparent`: connections may be to addresses other than the
    /// listener's own.
    pub transparent: bool,
    /// `accept-netscaler-cip <magic>`: the NetScaler Client IP header's
    /// magic number.
    pub cip_magic: Option<u32>,
}

/// A listener's figures for its `show stat` row (`option socket-stats`).
#[derive(Debug)]
pub struct ListenerStats {
    /// Its first address, as `show stat` gives it.
    pub addr: String,
    pub smax: AtomicU32,
    pub total: AtomicU64,
    /// Bytes, denied and bad requests, TLS sessions.
    pub counters: crate::stats::Counters,
}

/// A bind line of a frontend: what its sockets share, and how they are
/// bound.
pub struct FrontBind {
    pub info: Arc<BindInfo>,
    /// The worker threads (0-based) that accept on it (`thread`).
    pub threads: Vec<usize>,
    /// `maxconn` of the bind line (the frontend's when not set).
    pub maxconn: u32,
    /// The listen queue's length (`backlog`).
    pub backlog: u32,
}

/// A frontend's live data.
pub struct FrontendRt {
    pub name: String,
    pub proxy: ProxyId,
    pub conns: AtomicU32,
    /// Its connection limit (`set maxconn frontend` changes it).
    pub maxconn: AtomicU32,
    /// `disable frontend`: its listeners stop accepting.
    pub paused: AtomicBool,
    /// The default backend (`default_backend`, or a listen section itself).
    pub backend: Option<BackendId>,
    /// `use_backend` rules in order: target and condition.
    pub switching: Vec<(Target, Option<weir_rules::Cond>)>,
    /// A `mode tcp` frontend that may choose an HTTP backend (its clients
    /// then go on in HTTP).
    pub reaches_http: bool,
    /// Its bind lines, in the configuration's order.
    pub binds: Vec<FrontBind>,
    pub logger: Logger,
    pub total: AtomicU64,
    pub smax: AtomicU32,
    pub counters: crate::stats::Counters,
    /// `rate-limit sessions`: its accepts a second.
    pub rate_gate: Option<crate::freq::Gate>,
}

/// Everything the threads share.
pub struct Shared {
    pub cfg: Arc<Config>,
    /// The Lua scripts' shared state (`lua-load`), when there are some:
    /// the `lua` layer's, set once at start (opaque here).
    pub lua: std::sync::OnceLock<Arc<dyn std::any::Any + Send + Sync>>,
    /// Servers (backend index, id) a script called a method on: `del
    /// server` refuses them, as haproxy.
    pub lua_pins: Mutex<std::collections::HashSet<(usize, ServerId)>>,
    pub frontends: Vec<FrontendRt>,
    pub backends: Vec<Arc<BackendRt>>,
    /// Each proxy's frontend and backend, by [`ProxyId`].
    pub roles: Vec<Roles>,
    pub actconn: AtomicU32,
    /// The connection limit set at start (`Hard_maxconn`).
    pub maxconn: u32,
    /// The limit in force (`set maxconn global`, at most `maxconn`).
    pub maxconn_now: AtomicU32,
    /// `maxconnrate`/`maxsessrate` (one count: a connection is a session
    /// in weir) and `maxsslrate`: accepts a second, over every listener.
    pub conn_gate: Option<crate::freq::Gate>,
    pub ssl_gate: Option<crate::freq::Gate>,
    /// Clients on `bind … ssl` lines now (`CurrSslConns`), and at most
    /// (`maxsslconn`; `u32::MAX` without).
    pub sslconns: AtomicU32,
    pub maxsslconn: u32,
    /// Woken when a client connection closes while accept loops wait at a
    /// limit (they may resume).
    pub conn_freed: Notify,
    /// Loops waiting for a connection to close (accept loops at a limit, soft
    /// stop); closes notify only when non-zero.
    pub accept_paused: AtomicU32,
    /// Flips to true on soft stop: listeners close.
    pub stopping: watch::Sender<bool>,
    /// Flips to true on hard stop: sessions are killed.
    pub killing: watch::Sender<bool>,
    pub hostname: String,
    pub bufsize: usize,
    /// `tune.http.maxhdr`.
    pub maxhdr: usize,
    pub pipesize: Option<usize>,
    pub nosplice: bool,
    pub global_logger: Logger,
    pub accept_paused_warned: AtomicBool,
    /// The listening sockets went to a new process (`_getsocks`): at soft
    /// stop they close without draining, as that process accepts what the
    /// kernel queued on them.
    pub handed_over: AtomicBool,
    /// When weir started (for `show info`).
    pub started: std::time::SystemTime,
    /// The last invalid message of each proxy (`show errors`).
    pub errors: crate::capture::ErrorLog,
    /// `proc.*` variables.
    pub proc_vars: procvars::ProcVars,
    /// `cache` sections' objects, by section name.
    pub caches: std::collections::HashMap<String, Arc<cache::Store>>,
    pub nthreads: usize,
    /// The worker threads' loops (`show sess` runs jobs on them).
    pub workers: workers::Workers,
    /// Kills of any server's sessions so far: a thread's sweep looks for
    /// sleepers to wake when it moved.
    pub server_kills: AtomicU32,
    /// Rates and time averages, sampled once a second.
    pub rates: crate::rates::Rates,
    /// The TLS files (`show|set|commit ssl …`).
    pub tls_files: crate::tls::store::Store,
    /// The stick tables.
    pub tables: tables::Tables,
    /// TLS between peers, per `peers` section of the configuration.
    pub peers_tls: Vec<crate::tls::PeersTls>,
    /// The peers sections' sessions, for `show peers`.
    pub peering: peering::Board,
    /// The `ring` sections' buffers, in the configuration's order.
    pub rings: Vec<Arc<crate::log::ring::Ring>>,
    /// Each `log-forward` section's targets.
    pub forwarders: Vec<crate::log::Logger>,
    /// TLS of `log-forward` binds and `ring` servers.
    pub log_tls: crate::tls::LogTls,
    /// Each `resolvers` section's counters, in the configuration's order.
    pub dns: Vec<crate::stats::ResolverStats>,
}

/// Raises `max` to `v` when `v` is larger (`smax`, `qmax`).
pub fn raise_max(max: &AtomicU32, v: u32) {
    if v > max.load(Ordering::Relaxed) {
        max.fetch_max(v, Ordering::Relaxed);
    }
}

impl Shared {
    /// The backend a frontend's `use_backend` rules (else its default)
    /// choose for a stream.
    pub fn select_backend(
        &self,
        fe: FrontendId,
        ctx: &dyn weir_rules::Ctx,
    ) -> Option<&Arc<BackendRt>> {
        let f = self.frontends.get(fe.index())?;
        let chosen = f
            .switching
            .iter()
            .find(|(_, c)| c.as_ref().is_none_or(|c| c.eval(ctx)))
            .and_then(|(t, _)| match t {
                Target::Static(b) => Some(*b),
                // An unknown name selects the default backend.
                Target::Dynamic(fmt, names) => {
                    let name = fmt.render(ctx);
                    std::str::from_utf8(&name)
                        .ok()
                        .and_then(|n| names.get(n).copied())
                }
            });
        chosen
            .or(f.backend)
            .and_then(|b| self.backends.get(b.index()))
    }
    /// Kills the sessions on server `srv`: those awake are woken, those
    /// asleep by their thread's sweep.
    pub fn kill_sessions(&self, srv: &ServerRt) {
        srv.kills.fetch_add(1, Ordering::Relaxed);
        self.server_kills.fetch_add(1, Ordering::Relaxed);
        srv.kill.notify_waiters();
    }
    /// The backend of a proxy (a backend or listen section), in O(1).
    pub fn backend_of(&self, px: ProxyId) -> Option<&Arc<BackendRt>> {
        let b = self.roles.get(px.index())?.backend?;
        self.backends.get(b.index())
    }
    /// The frontend of a proxy (a frontend or listen section), in O(1).
    pub fn frontend_of(&self, px: ProxyId) -> Option<(FrontendId, &FrontendRt)> {
        let f = self.roles.get(px.index())?.frontend?;
        Some((f, self.frontends.get(f.index())?))
    }
    pub fn proxy_timeout(d: Option<Duration>) -> Option<Duration> {
        d.filter(|d| !d.is_zero())
    }
}

/// A server's check and agent targets as the runtime API set them (`set
/// server … check-addr|check-port|agent-addr|agent-port|agent-send`); none
/// set: the configuration's.
#[derive(Debug, Clone, Default)]
pub struct CheckTargets {
    pub check_addr: Option<std::net::IpAddr>,
    pub check_port: Option<u16>,
    pub agent_addr: Option<std::net::IpAddr>,
    pub agent_port: Option<u16>,
    pub agent_send: Option<String>,
}
