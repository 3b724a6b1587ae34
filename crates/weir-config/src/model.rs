//! The typed, validated configuration that the runtime reads (frozen in an `Arc`).

use crate::addr::{BindAddr, ServerAddr};
use crate::diag::Loc;
use crate::logformat::LogFormat;
use std::time::Duration;

mod check;
mod comp;
mod fcgi;
mod global;
mod log;
mod resolvers;
mod server;
mod spoe;
pub use check::*;
pub use comp::*;
pub use fcgi::*;
pub use global::*;
pub use log::*;
pub use resolvers::*;
pub use server::*;
pub use spoe::*;

/// A whole configuration: `global` plus every proxy, defaults already applied.
#[derive(Debug, Clone, Default)]
pub struct Config {
    pub global: Global,
    pub proxies: Vec<Proxy>,
    /// `userlist` sections.
    pub userlists: Vec<std::sync::Arc<weir_rules::auth::Userlist>>,
    /// Files loaded, in order.
    pub files: Vec<String>,
    /// `peers` sections.
    pub peers: Vec<PeersSection>,
    /// `ring` sections.
    pub rings: Vec<Ring>,
    /// `log-forward` sections.
    pub log_forwards: Vec<LogForward>,
    /// `resolvers` sections.
    pub resolvers: Vec<Resolvers>,
    /// `mailers` sections.
    pub mailers: Vec<Mailers>,
    /// `cache` sections.
    pub caches: Vec<Cache>,
    /// `program` sections (master-worker mode only).
    pub programs: Vec<Program>,
    /// `fcgi-app` sections.
    pub fcgi_apps: Vec<FcgiApp>,
}

/// A `program` section: a command the master process runs beside its
/// workers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program {
    pub name: String,
    pub loc: Loc,
    /// `command <cmd> [args…]`.
    pub command: Vec<String>,
    pub user: Option<String>,
    pub group: Option<String>,
    /// `option start-on-reload` (the default): a reload starts a new one.
    pub start_on_reload: bool,
}

/// A `mailers` section: the SMTP servers email alerts go to.
#[derive(Debug, Clone)]
pub struct Mailers {
    pub name: String,
    pub loc: Loc,
    /// `mailer <name> <ip>:<port>`.
    pub mailers: Vec<(String, std::net::SocketAddr)>,
    /// `timeout mail`: a mail's whole exchange (10 s by default).
    pub timeout: std::time::Duration,
}

/// A proxy's `email-alert` settings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EmailAlert {
    pub mailers: Option<String>,
    pub from: Option<String>,
    pub to: Option<String>,
    /// The highest syslog level (0 emerg … 7 debug) mailed (alert).
    pub level: Option<u8>,
    pub myhostname: Option<String>,
}

/// A `peers` section: where the local peer listens, the others, and the
/// tables declared in it (named `<section>/<table>`).
#[derive(Debug, Clone)]
pub struct PeersSection {
    pub name: String,
    pub loc: Loc,
    pub bind: Option<crate::addr::BindAddr>,
    /// `bind … ssl crt …`: peers connecting here speak TLS.
    pub bind_tls: Option<crate::tls::BindTls>,
    /// Where `bind` was written.
    pub bind_loc: Option<Loc>,
    /// `default-server`'s TLS options, the start of each peer's.
    pub default_tls: crate::tls::ServerTls,
    /// `default-bind`'s options, the start of `bind`'s (and the local
    /// listener's when a `peer` line gives its address).
    pub default_bind: Vec<String>,
    pub peers: Vec<PeerDef>,
    pub tables: Vec<StickTable>,
    pub disabled: bool,
}

/// A `peer <name> <addr>` or `server <name> [<addr>]` line.
#[derive(Debug, Clone)]
pub struct PeerDef {
    pub name: String,
    pub addr: Option<crate::addr::ServerAddr>,
    /// TLS towards this peer (`ssl`, `crt`, `verify` …).
    pub tls: crate::tls::ServerTls,
    pub loc: Loc,
}

impl Config {
    pub fn proxy(&self, name: &str) -> Option<&Proxy> {
        self.proxies.iter().find(|p| p.name == name)
    }
    pub fn proxy_index(&self, name: &str) -> Option<usize> {
        self.proxies.iter().position(|p| p.name == name)
    }
    /// The names of the servers of proxy `pi` that other parts of the
    /// configuration point to: a `track`, a `use-server` rule, a fetch's
    /// argument (`del server` refuses them, as haproxy does).
    pub fn server_refs(&self, pi: usize) -> std::collections::HashSet<String> {
        let mut out = std::collections::HashSet::new();
        let Some(px) = self.proxies.get(pi) else {
            return out;
        };
        out.extend(px.use_servers.iter().map(|u| u.name.clone()));
        for (i, p) in self.proxies.iter().enumerate() {
            for (b, s) in &p.fetched_servers {
                let named = if b.is_empty() { i == pi } else { *b == px.name };
                if named {
                    out.insert(s.clone());
                }
            }
            for s in &p.servers {
                if let Some(t) = &s.track {
                    let named = t.0.as_deref().map_or(i == pi, |b| b == px.name);
                    if named {
                        out.insert(t.1.clone());
                    }
                }
            }
        }
        out
    }
}

/// `mode tcp` or `mode http`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    #[default]
    Tcp,
    Http,
}

/// Which role a proxy section plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProxyKind {
    Frontend,
    Backend,
    Listen,
    Defaults,
}

impl ProxyKind {
    pub fn is_frontend(self) -> bool {
        matches!(self, ProxyKind::Frontend | ProxyKind::Listen)
    }
    pub fn is_backend(self) -> bool {
        matches!(self, ProxyKind::Backend | ProxyKind::Listen)
    }
    pub fn keyword(self) -> &'static str {
        match self {
            ProxyKind::Frontend => "frontend",
            ProxyKind::Backend => "backend",
            ProxyKind::Listen => "listen",
            ProxyKind::Defaults => "defaults",
        }
    }
}

/// The balancing algorithm of a backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Balance {
    #[default]
    RoundRobin,
    StaticRr,
    LeastConn,
    First,
    Source,
    Random {
        draws: u32,
    },
    /// `uri`, `url_param`, `hdr`: hash of a request part (the proxy's
    /// `balance_key`); round robin when the part is absent.
    Key,
}

/// Which request part `balance uri|url_param|hdr|hash` hashes.
#[derive(Debug, Clone, PartialEq)]
pub enum BalanceKey {
    /// `balance uri [len N] [depth N] [whole] [path-only]`.
    Uri {
        len: Option<usize>,
        depth: Option<usize>,
        whole: bool,
        path_only: bool,
    },
    /// `balance url_param <name>`.
    UrlParam(String),
    /// `balance hdr(<name>) [use_domain_only]`.
    Hdr { name: String, domain_only: bool },
    /// `balance hash <expr>`: the expression's value.
    Hash(weir_rules::Expr),
    /// `balance rdp-cookie[(<name>)]`: the value of the RDP cookie (`mstshash`
    /// by default) in the client's first bytes.
    RdpCookie(String),
}

/// `hash-type` method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HashMethod {
    #[default]
    MapBased,
    Consistent,
}

/// `hash-type` hash function.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HashFunction {
    #[default]
    Sdbm,
    Djb2,
    Wt6,
    Crc32,
}

/// `hash-type <method> [function] [avalanche]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct HashType {
    pub method: HashMethod,
    pub function: HashFunction,
    pub avalanche: bool,
}

/// Timeouts of a proxy (`None` = not set, which HAProxy treats as infinite).
#[derive(Debug, Clone, Default)]
pub struct Timeouts {
    pub connect: Option<Duration>,
    pub client: Option<Duration>,
    pub server: Option<Duration>,
    pub queue: Option<Duration>,
    pub tunnel: Option<Duration>,
    pub client_fin: Option<Duration>,
    pub server_fin: Option<Duration>,
    pub check: Option<Duration>,
    pub http_request: Option<Duration>,
    pub http_keep_alive: Option<Duration>,
    pub tarpit: Option<Duration>,
}

/// Boolean `option`s of a proxy.
#[derive(Debug, Clone, Default)]
pub struct ProxyOptions {
    pub redispatch: bool,
    /// `option redispatch <interval>`: redispatch on every Nth retry (>0) or
    /// on the Nth retry before the last (<0, default -1).
    pub redispatch_interval: i32,
    pub abortonclose: bool,
    /// `option independent-streams`: data sent to this side (the client
    /// of a frontend, the server of a backend) does not refresh its read
    /// timeout.
    pub independent_streams: bool,
    pub splice_auto: bool,
    pub splice_request: bool,
    pub splice_response: bool,
    pub tcplog: bool,
    pub httplog: bool,
    pub dontlognull: bool,
    /// `option logasap`: log once the response head (mode http) or the
    /// server connection (mode tcp) is there.
    pub logasap: bool,
    /// `option http-ignore-probes`: a connection closed or timed out
    /// before its first byte gets no 400/408, no log and no count.
    pub http_ignore_probes: bool,
    /// `option socket-stats`: a stats row per listener.
    pub socket_stats: bool,
    pub dontlog_normal: bool,
    pub log_health_checks: bool,
    pub clitcpka: bool,
    pub srvtcpka: bool,
    /// `clitcpka-cnt|idle|intvl`, `srvtcpka-cnt|idle|intvl`.
    pub clitcpka_params: TcpKa,
    pub srvtcpka_params: TcpKa,
    pub allbackups: bool,
    /// `option httpchk`, `option tcp-check` or a protocol check (none: a
    /// connection check).
    pub check_proto: Option<CheckProto>,
    /// `http-check send-state`: HTTP checks tell the server how it is seen.
    pub check_send_state: bool,
    /// `http-check disable-on-404`: a running server answering 404 to its
    /// HTTP check stops taking new traffic (NOLB).
    pub check_disable_404: bool,
    /// `option httplog clf`.
    pub httplog_clf: bool,
    /// `option httpslog`.
    pub httpslog: bool,
    /// `option persist`: a cookie keeps its server even when it is down.
    pub persist: bool,
    /// `option checkcache`: a cacheable response with a cookie is
    /// blocked.
    pub checkcache: bool,
    /// `option prefer-last-server`: a client's next request goes to its
    /// last server when the algorithm is not deterministic.
    pub prefer_last_server: bool,
    /// `option http-pretend-keepalive`: in a closing mode, requests do not
    /// tell the server `Connection: close` (weir closes after the answer).
    pub pretend_keepalive: bool,
    /// `option nolinger`: sockets close with a reset (SO_LINGER 0).
    pub nolinger: bool,
    /// `option h1-case-adjust-bogus-client|server`: header names sent to
    /// HTTP/1 clients (responses) or servers (requests) take the spelling
    /// of the global `h1-case-adjust` map.
    pub h1_case_adjust_bogus_client: bool,
    pub h1_case_adjust_bogus_server: bool,
    /// `option transparent`: with no `server` line, connections go to the
    /// client's destination address (after `set-dst`/`set-dst-port`).
    pub transparent: bool,
    /// `option log-separate-errors`: failed exchanges log at level err.
    pub log_separate_errors: bool,
    /// `option http-buffer-request`: the body (up to a buffer) is read
    /// before the rules run.
    pub http_buffer_request: bool,
    /// `option disable-h2-upgrade`: a client that opens an HTTP/1.1 bind
    /// with HTTP/2's preface gets a 400 instead of HTTP/2.
    pub disable_h2_upgrade: bool,
}

/// What happens to connections after an HTTP exchange (`option
/// http-keep-alive`, `http-server-close`, `httpclose`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HttpConnMode {
    #[default]
    KeepAlive,
    /// The server connection closes after each response; the client's stays.
    ServerClose,
    /// Both close after each response.
    Close,
}

/// `http-reuse`: which requests may use an idle server connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HttpReuse {
    Never,
    #[default]
    Safe,
    Aggressive,
    Always,
}

/// `option forwardfor [except <net>] [header <name>] [if-none]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForwardFor {
    /// Source network not to add the header for: (address, prefix length).
    pub except: Option<(std::net::IpAddr, u8)>,
    pub header: String,
    pub if_none: bool,
}

/// TCP keep-alive probes: how many, after how long idle, how often (the
/// system's settings where unset).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TcpKa {
    pub cnt: Option<u32>,
    pub idle: Option<std::time::Duration>,
    pub intvl: Option<std::time::Duration>,
}

/// Replacement error responses: (status, the whole raw response).
pub type ErrorPages = Vec<(u16, std::sync::Arc<[u8]>)>;

/// `option http-restrict-req-hdr-names`: what becomes of request headers
/// whose names hold characters outside `[A-Za-z0-9-]`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum RestrictNames {
    #[default]
    Preserve,
    Delete,
    /// A 403.
    Reject,
}

/// `tune.rcvbuf.*` and `tune.sndbuf.*` (bytes; `None`: the kernel's).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SockBufs {
    pub rcv_client: Option<u32>,
    pub rcv_server: Option<u32>,
    pub snd_client: Option<u32>,
    pub snd_server: Option<u32>,
}

/// A capture slot of a frontend: a header's value (`capture request|response
/// header <name> len <n>`) or a rule's (`declare capture`, `http-request
/// capture … len <n>`), cut to `len` bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaptureSlot {
    pub header: Option<String>,
    pub len: usize,
}

/// HTTP settings of a proxy.
#[derive(Debug, Clone, Default)]
pub struct HttpSettings {
    pub conn_mode: HttpConnMode,
    pub reuse: HttpReuse,
    pub forwardfor: Option<ForwardFor>,
    /// `errorfile <status> <file>` and `http-error`: the whole raw
    /// response to send.
    pub errorfiles: ErrorPages,
    /// `http-error` replies rendered per response (`lf-string`,
    /// `lf-file`, or a `hdr` value with a format): status and reply.
    pub error_replies: Vec<(u16, weir_rules::Return)>,
    /// The request capture slots in the order their lines came (the
    /// numbers `id`, `capture-req` and `capture.req.hdr` name):
    /// `capture request header`, `declare capture request`, `http-request
    /// capture … len N`, `tcp-request content capture`.
    pub req_captures: Vec<CaptureSlot>,
    /// The response capture slots in the order their lines came:
    /// `capture response header`, `declare capture response`.
    pub res_captures: Vec<CaptureSlot>,
    /// `errorfiles <name> [<code>…]`: resolved after parsing.
    pub errorfiles_refs: Vec<(String, Vec<u16>, crate::diag::Loc)>,
    /// `option accept-invalid-http-request`.
    pub accept_invalid_request: bool,
    /// `option http-restrict-req-hdr-names`.
    pub restrict_names: RestrictNames,
    /// The option was written (else a backend with a FastCGI application
    /// deletes such headers, haproxy's default there).
    pub restrict_names_set: bool,
    /// `option accept-invalid-http-response`.
    pub accept_invalid_response: bool,
    /// `capture cookie <name> len <n>`: the first cookie whose name
    /// starts with `name` (exactly `name` when it ends with `=`).
    pub capture_cookie: Option<(String, usize)>,
    pub unique_id_format: Option<LogFormat>,
    pub unique_id_header: Option<String>,
    pub monitor_uri: Option<String>,
    /// `monitor fail if|unless <cond>`: `monitor-uri` answers 503 when
    /// one holds.
    pub monitor_fail: Vec<weir_rules::Cond>,
    /// `option originalto [except <net>] [header <name>]`.
    pub originalto: Option<ForwardFor>,
    /// `retry-on`: when a request is tried again (`None`: connection
    /// failures only, HAProxy's default).
    pub retry_on: Option<Vec<RetryOn>>,
    /// `http-send-name-header <name>`: the request a server gets carries
    /// its name in this header.
    pub send_name_header: Option<String>,
}

/// A `retry-on` condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetryOn {
    ConnFailure,
    EmptyResponse,
    JunkResponse,
    ResponseTimeout,
    Status(u16),
}

/// One `bind` line (possibly several addresses).
#[derive(Debug, Clone)]
pub struct Bind {
    pub addrs: Vec<BindAddr>,
    pub loc: Loc,
    pub name: Option<String>,
    /// `id`: the listener's id (`so_id`, `sid`); numbered in the proxy
    /// without one.
    pub id: Option<u32>,
    pub transparent: bool,
    pub v4v6: bool,
    pub v6only: bool,
    pub interface: Option<String>,
    /// `namespace <name>`: the network namespace the socket lives in.
    pub namespace: Option<String>,
    pub backlog: Option<u32>,
    pub maxconn: Option<u32>,
    pub defer_accept: bool,
    pub tfo: bool,
    pub accept_proxy: bool,
    /// `accept-netscaler-cip <magic>`: a NetScaler Client IP header comes
    /// first (after a PROXY header, with both).
    pub accept_cip: Option<u32>,
    /// Thread ids (1-based) allowed to accept on this bind; `None` = all.
    pub threads: Option<Vec<usize>>,
    pub mode: Option<u32>,
    /// `user`/`uid` and `group`/`gid`: a unix socket's owner (a name or
    /// a number).
    pub user: Option<String>,
    pub group: Option<String>,
    /// `mss <n>`: TCP maximum segment size announced to clients.
    pub mss: Option<u32>,
    /// `tcp-ut <time>`: TCP_USER_TIMEOUT of accepted connections.
    pub tcp_ut: Option<Duration>,
    /// TLS termination (`ssl crt …`).
    pub tls: Option<crate::tls::BindTls>,
    /// `proto h2`: clear-text HTTP/2 with prior knowledge.
    pub h2: bool,
    /// `proto h1`: HTTP/1.1 only (no HTTP/2 from its preface).
    pub h1_only: bool,
    /// `proto none`: raw TCP only (no `switch-mode http`).
    pub no_http: bool,
}

impl Bind {
    /// A bind line with no option set.
    pub fn new(addrs: Vec<BindAddr>, loc: Loc) -> Self {
        Bind {
            addrs,
            loc,
            name: None,
            id: None,
            transparent: false,
            v4v6: false,
            v6only: false,
            interface: None,
            namespace: None,
            backlog: None,
            maxconn: None,
            defer_accept: false,
            tfo: false,
            accept_proxy: false,
            accept_cip: None,
            threads: None,
            mode: None,
            user: None,
            group: None,
            mss: None,
            tls: None,
            h2: false,
            h1_only: false,
            no_http: false,
            tcp_ut: None,
        }
    }
}

/// `use_backend <name> [if|unless <cond>]`.
#[derive(Debug, Clone)]
pub struct UseBackend {
    pub name: String,
    /// A `%[...]` name, resolved per request (an unknown result selects
    /// the default backend).
    pub dynamic: Option<weir_rules::Fmt>,
    pub loc: Loc,
    pub cond: Option<weir_rules::Cond>,
}

/// The stats page of a proxy (`stats enable`, `stats uri` …), with
/// HAProxy's defaults. Any `stats` keyword of the page enables it.
#[derive(Debug, Clone)]
pub struct StatsPage {
    /// `stats uri`: the prefix that selects the page.
    pub uri: String,
    /// `stats realm` (for `stats auth`).
    pub realm: String,
    /// `stats auth <user>:<password>`: when any, Basic auth is required.
    pub auth: Vec<(String, String)>,
    /// `stats refresh`: the page reloads itself this often.
    pub refresh: Option<Duration>,
    pub hide_version: bool,
    pub show_legends: bool,
    /// `stats show-node [<name>]`: `Some("")` for the global `node`.
    pub show_node: Option<String>,
    /// `stats show-desc [<text>]`: `Some("")` for the global
    /// `description`.
    pub show_desc: Option<String>,
    /// `stats scope`: only these proxies are shown (all when empty; `.`
    /// names the proxy itself).
    pub scope: Vec<String>,
    /// `stats admin if|unless <cond>`: the page may change servers when
    /// one holds.
    pub admin: Vec<weir_rules::Cond>,
    /// `stats http-request allow|deny|auth [realm <r>] [cond]`: the first
    /// rule whose condition holds decides.
    pub rules: Vec<StatsRule>,
    /// `stats realm` was given (it excludes `stats http-request`).
    pub realm_set: bool,
}

/// One `stats http-request` rule.
#[derive(Debug, Clone)]
pub struct StatsRule {
    pub action: StatsAction,
    pub cond: Option<weir_rules::Cond>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StatsAction {
    Allow,
    Deny,
    /// Asks for credentials, in this realm (else the page's).
    Auth(Option<String>),
}

impl Default for StatsPage {
    fn default() -> Self {
        StatsPage {
            uri: "/haproxy?stats".into(),
            realm: "HAProxy Statistics".into(),
            auth: Vec::new(),
            refresh: None,
            hide_version: false,
            show_legends: false,
            show_node: None,
            show_desc: None,
            scope: Vec::new(),
            admin: Vec::new(),
            rules: Vec::new(),
            realm_set: false,
        }
    }
}

/// A frontend, backend or listen section, with its defaults applied.
#[derive(Debug, Clone)]
pub struct Proxy {
    pub name: String,
    pub kind: ProxyKind,
    pub loc: Loc,
    /// The `id` written in the configuration.
    pub id: Option<u32>,
    /// The id weir and HAProxy report (`iid`): `id`, or the one assigned
    /// once the configuration is read (see `parse::ids`).
    pub uid: u32,
    pub disabled: bool,
    pub mode: Mode,
    pub binds: Vec<Bind>,
    pub default_backend: Option<(String, Loc)>,
    pub use_backends: Vec<UseBackend>,
    /// `acl` declarations in order; several with one name are OR'ed.
    pub acls: Vec<(String, Vec<weir_rules::Acl>)>,
    pub http_request: Vec<weir_rules::Rule<weir_rules::ReqAction>>,
    pub http_response: Vec<weir_rules::Rule<weir_rules::ResAction>>,
    pub http_after_response: Vec<weir_rules::Rule<weir_rules::ResAction>>,
    /// `redirect` rules, evaluated after `http-request` rules.
    pub redirects: Vec<weir_rules::Rule<weir_rules::ReqAction>>,
    pub balance: Balance,
    pub balance_key: Option<BalanceKey>,
    pub cookie: Option<CookieCfg>,
    /// `persist rdp-cookie[(<name>)]`: the RDP cookie (`msts` by default)
    /// naming the server a client goes back to.
    pub persist_rdp_cookie: Option<String>,
    /// `dynamic-cookie-key`: the secret of `cookie … dynamic`.
    pub dynamic_cookie_key: Option<String>,
    /// The `http-check` rules (with `option httpchk`'s request).
    pub http_check: TcpCheckRules,
    pub tcp_check: TcpCheckRules,
    pub hash_type: HashType,
    pub servers: Vec<Server>,
    pub default_server: ServerDefaults,
    /// `source <addr>[:<port>]`: the address of connections to servers
    /// without a `source` of their own.
    pub source: Option<crate::addr::ServerAddr>,
    pub maxconn: Option<u32>,
    /// `rate-limit sessions`: new connections a second the frontend takes.
    pub rate_limit_sessions: Option<u32>,
    /// `email-alert …`: server state changes mailed.
    pub email_alert: EmailAlert,
    /// `compression algo|type|offload`.
    pub compression: Compression,
    /// `filter` lines, in order, with where each was written.
    pub filters: Vec<(Filter, Loc)>,
    /// `filter spoe` engines.
    pub spoe: Vec<SpoeEngine>,
    /// `use-fcgi-app <name>`: the `fcgi-app` section its `proto fcgi`
    /// servers run (with the line).
    pub use_fcgi_app: Option<(String, Loc)>,
    /// `external-check command|path`.
    pub external_check: ExternalCheck,
    /// `hash-balance-factor`: consistent hashing's load bound, a
    /// percentage over 100 (0: none).
    pub hash_balance_factor: u32,
    /// `max-session-srv-conns`: 0, a client session keeps no private
    /// server connection between its requests (weir keeps one otherwise).
    pub max_session_srv_conns: Option<u32>,
    pub fullconn: Option<u32>,
    pub retries: u32,
    pub options: ProxyOptions,
    pub timeouts: Timeouts,
    pub logs: Vec<LogTarget>,
    /// `log global` was given: global targets are added when finalizing.
    pub log_global: bool,
    pub log_tag: Option<String>,
    /// The format used for this proxy's traffic logs (`option tcplog`,
    /// `log-format`, or the default), set when finalizing.
    pub log_format: Option<LogFormat>,
    /// `log-format-sd`: the structured data of `rfc5424` log lines.
    pub log_format_sd: Option<LogFormat>,
    /// `error-log-format`: the format of the lines of connections that
    /// failed before any request (a TLS handshake, a PROXY header) and of
    /// HTTP requests that never came whole (`<BADREQ>`).
    pub error_log_format: Option<LogFormat>,
    pub description: Option<String>,
    pub http: HttpSettings,
    /// `tcp-request` and `tcp-response` rules.
    pub tcp: TcpRules,
    /// The stats page (`stats enable`, `stats uri` …), when enabled.
    pub stats: Option<StatsPage>,
    /// `load-server-state-from-file`.
    pub load_state: LoadState,
    /// `server-state-file-name` (`None`: the backend's name).
    pub state_file_name: Option<String>,
    /// `use-server <name> if|unless <cond>`, in order.
    pub use_servers: Vec<UseServer>,
    /// Servers its rules' fetches name (`srv_conn(<bk>/<srv>)` …), as
    /// (backend, server); the backend is empty for its own.
    pub fetched_servers: Vec<(String, String)>,
    /// `force-persist if|unless <cond>`: a persistence (cookie,
    /// `use-server`) keeps its server even when it is down.
    pub force_persist: Vec<weir_rules::Cond>,
    /// `ignore-persist if|unless <cond>`: the persistence cookie is not
    /// followed.
    pub ignore_persist: Vec<weir_rules::Cond>,
    /// `stick-table`: the proxy's own table.
    pub stick_table: Option<StickTable>,
    /// `stick on|match|store-request|store-response` rules, in order.
    pub stick_rules: Vec<StickRule>,
}

/// What a `stick` rule does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StickKind {
    /// `stick match`: the server an entry names, if usable.
    Match,
    /// `stick on`: `match`, then `store-request`.
    On,
    /// `stick store-request`: the server chosen, stored under the key.
    StoreRequest,
    /// `stick store-response`: the same, with a key from the response.
    StoreResponse,
}

impl StickKind {
    /// Whether the rule looks a server up.
    pub fn matches(self) -> bool {
        matches!(self, StickKind::Match | StickKind::On)
    }
    /// Whether the rule stores the server at the request.
    pub fn stores_request(self) -> bool {
        matches!(self, StickKind::On | StickKind::StoreRequest)
    }
}

/// A `stick` rule: its key, its table (`None`: the backend's own) and its
/// condition.
#[derive(Debug, Clone)]
pub struct StickRule {
    pub kind: StickKind,
    pub key: weir_rules::Expr,
    pub table: Option<String>,
    pub cond: Option<weir_rules::Cond>,
    pub loc: Loc,
}

/// A `stick-table` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StickTable {
    pub def: weir_stick::TableDef,
    /// `peers <section>`: replicated with that section's peers.
    pub peers: Option<String>,
    pub loc: Loc,
}

/// Where a backend's servers take their saved state from at start
/// (`load-server-state-from-file`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadState {
    None,
    /// The global `server-state-file`.
    Global,
    /// `server-state-file-name`, or the backend's name.
    Local,
}

/// `use-server <server> if|unless <condition>`.
#[derive(Debug, Clone)]
pub struct UseServer {
    /// The server's name, checked when the configuration is read.
    pub name: String,
    /// A `%[...]` name, resolved per request (a name that is no server
    /// falls back to load balancing, and no later rule applies).
    pub dynamic: Option<weir_rules::Fmt>,
    pub cond: weir_rules::Cond,
    pub loc: Loc,
}

/// A proxy's `tcp-request`/`tcp-response` rules (those of its `defaults`
/// section first) and inspection delays.
#[derive(Debug, Clone, Default)]
pub struct TcpRules {
    pub connection: Vec<weir_rules::Rule<weir_rules::TcpAction>>,
    pub session: Vec<weir_rules::Rule<weir_rules::TcpAction>>,
    pub content: Vec<weir_rules::Rule<weir_rules::TcpAction>>,
    pub response: Vec<weir_rules::Rule<weir_rules::TcpAction>>,
    /// `tcp-request inspect-delay`.
    pub inspect_delay: Option<Duration>,
    /// `tcp-response inspect-delay`.
    pub response_inspect_delay: Option<Duration>,
}

impl TcpRules {
    /// The rules of one set.
    pub fn of(&self, set: weir_rules::TcpRuleSet) -> &[weir_rules::Rule<weir_rules::TcpAction>] {
        use weir_rules::TcpRuleSet::*;
        match set {
            Connection => &self.connection,
            Session => &self.session,
            Content => &self.content,
            Response => &self.response,
        }
    }

    fn is_empty(&self) -> bool {
        self.connection.is_empty()
            && self.session.is_empty()
            && self.content.is_empty()
            && self.response.is_empty()
    }
}

impl Proxy {
    /// A proxy with HAProxy's built-in defaults.
    pub fn new(name: &str, kind: ProxyKind, loc: Loc) -> Self {
        Proxy {
            name: name.to_string(),
            kind,
            loc,
            id: None,
            uid: 0,
            disabled: false,
            mode: Mode::Tcp,
            binds: Vec::new(),
            default_backend: None,
            use_backends: Vec::new(),
            acls: Vec::new(),
            http_request: Vec::new(),
            http_response: Vec::new(),
            http_after_response: Vec::new(),
            redirects: Vec::new(),
            balance: Balance::RoundRobin,
            balance_key: None,
            cookie: None,
            persist_rdp_cookie: None,
            dynamic_cookie_key: None,
            http_check: TcpCheckRules::default(),
            tcp_check: TcpCheckRules::default(),
            hash_type: HashType::default(),
            servers: Vec::new(),
            default_server: ServerDefaults::default(),
            source: None,
            maxconn: None,
            rate_limit_sessions: None,
            email_alert: EmailAlert::default(),
            compression: Compression::default(),
            filters: Vec::new(),
            spoe: Vec::new(),
            use_fcgi_app: None,
            external_check: ExternalCheck::default(),
            hash_balance_factor: 0,
            max_session_srv_conns: None,
            fullconn: None,
            retries: 3,
            options: ProxyOptions {
                redispatch_interval: -1,
                ..ProxyOptions::default()
            },
            timeouts: Timeouts::default(),
            logs: Vec::new(),
            log_global: false,
            log_tag: None,
            log_format: None,
            log_format_sd: None,
            error_log_format: None,
            description: None,
            http: HttpSettings::default(),
            tcp: TcpRules::default(),
            stats: None,
            load_state: LoadState::None,
            state_file_name: None,
            use_servers: Vec::new(),
            fetched_servers: Vec::new(),
            force_persist: Vec::new(),
            ignore_persist: Vec::new(),
            stick_table: None,
            stick_rules: Vec::new(),
        }
    }

    /// Whether the section holds TCP or HTTP rules (a `defaults` section
    /// with rules may serve frontends or backends, not both).
    pub fn has_rules(&self) -> bool {
        !self.tcp.is_empty()
            || !self.http_request.is_empty()
            || !self.http_response.is_empty()
            || !self.http_after_response.is_empty()
    }

    /// Copies what a `defaults` section passes on into a new proxy.
    pub fn from_defaults(defaults: &Proxy, name: &str, kind: ProxyKind, loc: Loc) -> Self {
        let mut p = defaults.clone();
        p.name = name.to_string();
        p.kind = kind;
        p.loc = loc;
        p.id = None;
        p.binds.clear();
        p.servers.clear();
        p.use_backends.clear();
        p.description = None;
        p.http_check.own = false;
        p.tcp_check.own = false;
        if !kind.is_frontend() {
            p.default_backend = None;
        }
        p
    }
}
