//! The `server` and `default-server` lines of the model: a server's
//! settings, the defaults its line starts from, and their option types.

use super::*;

/// `proxy-v2-options`: what a `send-proxy-v2` header adds after the
/// addresses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProxyV2Options {
    /// `authority`: the name the client asked for (its PROXY header's own
    /// authority, else its TLS SNI).
    pub authority: bool,
    /// `unique-id`: the request's unique id (the server connection is then
    /// the request's alone).
    pub unique_id: bool,
    /// `crc32c`: a checksum of the whole header.
    pub crc32c: bool,
    /// `ssl` (also `send-proxy-v2-ssl`): what the client had of TLS.
    pub ssl: bool,
    /// `cert-cn` (also `send-proxy-v2-ssl-cn`): the client certificate's
    /// common name, in the `ssl` TLV.
    pub cert_cn: bool,
    /// `ssl-cipher`, `cert-sig`, `cert-key`: the suite, and the signature
    /// and key algorithms of the certificate the bind line presented.
    pub ssl_cipher: bool,
    pub cert_sig: bool,
    pub cert_key: bool,
}

impl ProxyV2Options {
    /// Whether the header carries the `ssl` TLV (any of its options asks
    /// for it, as in haproxy).
    pub fn ssl_tlv(&self) -> bool {
        self.ssl || self.cert_cn || self.ssl_cipher || self.cert_sig || self.cert_key
    }
    /// Whether any option is set: haproxy then sends a PROXY header even
    /// without a `send-proxy*` word (a v1 one).
    pub fn any(&self) -> bool {
        self.authority || self.unique_id || self.crc32c || self.ssl_tlv()
    }
}

/// PROXY protocol version sent to a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendProxy {
    V1,
    V2,
}

/// A `server` (or `default-server`) line.
#[derive(Debug, Clone)]
pub struct Server {
    pub name: String,
    pub addr: ServerAddr,
    pub loc: Loc,
    /// The address of `dispatch`: a server of its own, logged as
    /// `<NOSRV>`, that the statistics and the CLI do not show, and whose
    /// connections serve only the client that opened them.
    pub dispatch: bool,
    /// The `id` written in the configuration.
    pub id: Option<u32>,
    /// The id weir and HAProxy report (`sid`): `id`, or the one assigned
    /// once the configuration is read (see `parse::ids`).
    pub uid: u32,
    pub weight: u32,
    pub check: bool,
    pub inter: Duration,
    pub fastinter: Option<Duration>,
    pub downinter: Option<Duration>,
    pub rise: u32,
    pub fall: u32,
    pub check_port: Option<u16>,
    pub check_addr: Option<String>,
    pub backup: bool,
    pub disabled: bool,
    /// `init-addr`: how the address is found at start, in order (empty:
    /// haproxy's default, `last,libc`).
    pub init_addr: Vec<InitAddr>,
    pub maxconn: Option<u32>,
    /// `minconn`: the least of a limit that follows the backend's load
    /// (`fullconn`) up to `maxconn`.
    pub minconn: Option<u32>,
    pub maxqueue: Option<u32>,
    /// The PROXY header it gets first (see [`ServerDefaults::send_proxy`]).
    pub send_proxy: Option<SendProxy>,
    /// `redir <prefix>`: GET and HEAD requests for it are answered with a
    /// 302 to the prefix and their path instead.
    pub redir: Option<String>,
    /// `proxy-v2-options`: the TLVs a v2 header carries.
    pub proxy_v2: ProxyV2Options,
    /// `proto h2`: HTTP/2 with prior knowledge (clear text or over TLS).
    pub h2: bool,
    /// `proto fcgi`: FastCGI, to the backend's `use-fcgi-app`.
    pub fcgi: bool,
    /// `check-proto h1|h2`: the HTTP version of checks (none: `proto`'s).
    pub check_h2: Option<bool>,
    /// `ws`: the protocol of WebSocket upgrades.
    pub ws: WsMode,
    pub source: Option<ServerAddr>,
    /// `namespace <name>`: the network namespace its connections are made in.
    pub namespace: Option<String>,
    pub shutdown_on_down: bool,
    /// `on-marked-up shutdown-backup-sessions`: when this server comes up,
    /// the backup servers' sessions are closed.
    pub shutdown_backup_on_up: bool,
    pub slowstart: Option<Duration>,
    /// `pool-max-conn`: idle connections kept per thread (`None`: no limit).
    pub pool_max_conn: Option<usize>,
    /// `pool-purge-delay`: how long an idle connection is kept (`None`:
    /// forever).
    pub pool_purge_delay: Option<Duration>,
    /// `cookie <value>`: the value persistence cookies carry for it.
    pub cookie: Option<String>,
    /// `agent-check` and its settings.
    pub agent: Agent,
    /// `check-send-proxy`: its checks start with a PROXY header.
    pub check_send_proxy: bool,
    /// `check-via-socks4`: its checks go through its `socks4` proxy.
    pub check_via_socks4: bool,
    /// `socks4 <ip>:<port>`: connections go through this SOCKS4 proxy.
    pub socks4: Option<std::net::SocketAddr>,
    /// `resolvers` and the `resolve-*` settings.
    pub resolve: Resolve,
    /// `observe`, `error-limit`, `on-error`: health from the traffic.
    pub observe: Observe,
    /// Made by `server-template`: one slot of a name's records.
    pub template: bool,
    /// `track [<backend>/]<server>`: its state follows that server's
    /// checks (backend `None`: its own).
    pub track: Option<(Option<String>, String)>,
    /// TLS towards the server (`ssl`, or `check-ssl` for checks only).
    pub tls: crate::tls::ServerTls,
}

/// How a persistence cookie is handled (`cookie <name> insert|rewrite|prefix`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CookieMode {
    Insert,
    Rewrite,
    Prefix,
}

/// A backend's `cookie` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CookieCfg {
    pub name: String,
    pub mode: CookieMode,
    pub indirect: bool,
    pub nocache: bool,
    pub postonly: bool,
    pub preserve: bool,
    pub httponly: bool,
    pub secure: bool,
    pub domains: Vec<String>,
    pub attrs: Vec<String>,
    /// `maxidle` / `maxlife` in seconds (insert mode): the cookie carries
    /// its last-seen and first-seen dates.
    pub maxidle: Option<u64>,
    pub maxlife: Option<u64>,
    /// `dynamic`: servers without a `cookie` value get one made from their
    /// address and the backend's `dynamic-cookie-key`.
    pub dynamic: bool,
}

/// The settings `default-server` may give to every later `server`.
#[derive(Debug, Clone)]
pub struct ServerDefaults {
    pub weight: u32,
    pub check: bool,
    pub inter: Duration,
    pub fastinter: Option<Duration>,
    pub downinter: Option<Duration>,
    pub rise: u32,
    pub fall: u32,
    pub check_port: Option<u16>,
    pub check_addr: Option<String>,
    pub backup: bool,
    pub disabled: bool,
    pub init_addr: Vec<InitAddr>,
    pub maxconn: Option<u32>,
    /// `minconn`: the least of a limit that follows the backend's load
    /// (`fullconn`) up to `maxconn`.
    pub minconn: Option<u32>,
    pub maxqueue: Option<u32>,
    /// `send-proxy` and `send-proxy-v2` (and the `-ssl` forms): the two
    /// flags haproxy keeps, which the `no-` words clear one by one (see
    /// [`ServerDefaults::send_proxy`]).
    pub send_proxy_v1: bool,
    pub send_proxy_v2: bool,
    /// `redir <prefix>`.
    pub redir: Option<String>,
    /// `proxy-v2-options`: the TLVs a v2 header carries.
    pub proxy_v2: ProxyV2Options,
    pub h2: bool,
    pub fcgi: bool,
    pub check_h2: Option<bool>,
    pub ws: WsMode,
    pub source: Option<ServerAddr>,
    /// `namespace <name>`: the network namespace its connections are made in.
    pub namespace: Option<String>,
    pub shutdown_on_down: bool,
    /// `on-marked-up shutdown-backup-sessions`: when this server comes up,
    /// the backup servers' sessions are closed.
    pub shutdown_backup_on_up: bool,
    pub slowstart: Option<Duration>,
    pub pool_max_conn: Option<usize>,
    pub pool_purge_delay: Option<Duration>,
    pub tls: crate::tls::ServerTls,
    pub agent: Agent,
    pub check_send_proxy: bool,
    pub check_via_socks4: bool,
    pub socks4: Option<std::net::SocketAddr>,
    pub resolve: Resolve,
    pub observe: Observe,
}

/// What traffic tells of a server's health (`observe layer4|layer7`):
/// `limit` consecutive errors (`error-limit`) call for `action`
/// (`on-error`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Observe {
    /// `None`: not observed; `Some(false)` layer 4, `Some(true)` layer 7.
    pub layer7: Option<bool>,
    pub limit: u32,
    pub action: OnError,
}

impl Default for Observe {
    fn default() -> Self {
        Observe {
            layer7: None,
            limit: 10,
            action: OnError::FailCheck,
        }
    }
}

/// `on-error`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnError {
    FastInter,
    FailCheck,
    SuddenDeath,
    MarkDown,
}

/// How a server's name is resolved at run time (`resolvers`,
/// `resolve-prefer`, `resolve-net`, `resolve-opts`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Resolve {
    /// The `resolvers` section asked (none: resolved once at start).
    pub resolvers: Option<String>,
    /// `resolve-prefer ipv4` (ipv6 is haproxy's default).
    pub prefer_v4: bool,
    /// `resolve-net`: networks preferred, in order.
    pub nets: Vec<(std::net::IpAddr, u8)>,
    pub allow_dup_ip: bool,
    pub ignore_weight: bool,
    pub prevent_dup_ip: bool,
}

/// An agent check (`agent-check`, `agent-addr`, `agent-port`,
/// `agent-send`, `agent-inter`): a side channel whose one-line answers
/// set a server's weight, limit and states.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Agent {
    /// `agent-check` (`no-agent-check` turns it off).
    pub enabled: bool,
    pub addr: Option<String>,
    pub port: Option<u16>,
    /// Sent as is once connected.
    pub send: String,
    /// Between two checks (the server's `inter` when unset).
    pub inter: Option<Duration>,
}

impl ServerDefaults {
    /// The PROXY header a server gets: v2 while `send-proxy-v2` (or a
    /// `-ssl` form) holds, else v1 while `send-proxy` or any
    /// `proxy-v2-options` option does, as haproxy 2.6 decides (so
    /// `proxy-v2-options` alone sends a v1 line there too).
    pub fn send_proxy(&self) -> Option<SendProxy> {
        if self.send_proxy_v2 {
            Some(SendProxy::V2)
        } else if self.send_proxy_v1 || self.proxy_v2.any() {
            Some(SendProxy::V1)
        } else {
            None
        }
    }
}

impl Default for ServerDefaults {
    fn default() -> Self {
        ServerDefaults {
            weight: 1,
            check: false,
            inter: Duration::from_secs(2),
            fastinter: None,
            downinter: None,
            rise: 2,
            fall: 3,
            check_port: None,
            check_addr: None,
            backup: false,
            disabled: false,
            init_addr: Vec::new(),
            maxconn: None,
            minconn: None,
            maxqueue: None,
            send_proxy_v1: false,
            send_proxy_v2: false,
            redir: None,
            proxy_v2: ProxyV2Options::default(),
            h2: false,
            fcgi: false,
            check_h2: None,
            ws: WsMode::Auto,
            source: None,
            namespace: None,
            shutdown_on_down: false,
            shutdown_backup_on_up: false,
            slowstart: None,
            pool_max_conn: None,
            pool_purge_delay: Some(Duration::from_secs(5)),
            tls: crate::tls::ServerTls::default(),
            agent: Agent::default(),
            check_send_proxy: false,
            check_via_socks4: false,
            socks4: None,
            resolve: Resolve::default(),
            observe: Observe::default(),
        }
    }
}

/// `ws auto|h1|h2` on a server: the protocol WebSocket upgrades take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WsMode {
    /// The server's own, but HTTP/1.1 where `alpn` offers it.
    #[default]
    Auto,
    H1,
    H2,
}

/// One way `init-addr` finds a server's address at start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InitAddr {
    /// From the server state file.
    Last,
    /// Resolved by the system's resolver.
    Libc,
    /// No address: the server starts in maintenance.
    None,
    /// This address.
    Ip(std::net::IpAddr),
}
