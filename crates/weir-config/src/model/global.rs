//! The `global` section's settings: process, limits, tuning, TLS
//! defaults, logging targets, the stats sockets.

use super::*;
use crate::addr::BindAddr;
use crate::diag::Loc;
use std::time::Duration;

/// `global` section settings.
#[derive(Debug, Clone)]
pub struct Global {
    pub daemon: bool,
    /// `default-path`: the directory the files named by the configuration
    /// and loaded once it is read (certificates, Lua scripts) are found
    /// from, when it is not the process's own.
    pub default_path: Option<std::path::PathBuf>,
    /// `tune.comp.maxlevel`: the compression level (1, fastest, by
    /// default).
    pub comp_maxlevel: u32,
    /// `lua-load`, `lua-prepend-path`, `tune.lua.*`.
    pub lua: LuaConf,
    /// `set-var` / `set-var-fmt` lines: `proc.*` variables set at start, in
    /// order.
    pub set_vars: Vec<(weir_rules::vars::VarSet, weir_rules::vars::VarValue)>,
    pub maxconn: Option<u32>,
    /// `unix-bind`: defaults of unix listening sockets.
    pub unix_bind: UnixBind,
    /// `external-check`: `option external-check` may run commands.
    pub external_check: bool,
    /// `maxconnrate`, `maxsessrate`, `maxsslrate`: accepts a second.
    pub maxconnrate: Option<u32>,
    pub maxsessrate: Option<u32>,
    pub maxsslrate: Option<u32>,
    /// `maxsslconn`: TLS clients at once.
    pub maxsslconn: Option<u32>,
    pub nbthread: Option<usize>,
    /// Set when `nbproc N>1` was given: run N threads instead.
    pub nbproc: Option<usize>,
    pub cpu_map: Vec<CpuMap>,
    pub ulimit_n: Option<u64>,
    pub user: Option<String>,
    pub group: Option<String>,
    pub uid: Option<u32>,
    pub gid: Option<u32>,
    pub chroot: Option<String>,
    pub pidfile: Option<String>,
    /// `server-state-file`: where `load-server-state-from-file global`
    /// reads the servers' saved state.
    pub server_state_file: Option<String>,
    /// `server-state-base`: the directory of relative state file names.
    pub server_state_base: Option<String>,
    pub logs: Vec<LogTarget>,
    pub log_tag: Option<String>,
    pub log_send_hostname: Option<String>,
    pub stats_sockets: Vec<StatsSocket>,
    /// `stats timeout`: how long a runtime API client may stay silent.
    pub stats_timeout: Option<std::time::Duration>,
    /// `ssl-default-bind-*`, `tune.ssl.*`, `crt-base`, `ca-base`.
    pub tls: crate::tls::TlsGlobal,
    pub bufsize: usize,
    /// `tune.maxrewrite`: the room a full buffer leaves for rewrites
    /// (see [`Global::rewrite_room`]).
    pub maxrewrite: Option<usize>,
    /// `tune.http.maxhdr`: most header lines in a request or response.
    pub maxhdr: usize,
    /// `no-memory-trimming`: freed memory is not given back to the system
    /// (`malloc_trim`) after a burst of sessions fell asleep.
    pub no_memory_trimming: bool,
    /// `tune.http.logurilen`: the request line in logs is cut to it.
    pub logurilen: usize,
    /// `tune.http.cookielen`: the most characters `capture cookie` keeps.
    pub cookielen: usize,
    /// `tune.h2.*`.
    pub h2: H2Tune,
    pub maxaccept: i32,
    /// `tune.runqueue-depth`: tasks a worker runs between two looks at
    /// I/O readiness.
    pub runqueue_depth: u32,
    /// `tune.maxpollevents`: most readiness events taken from one poll
    /// (None: the runtime's default, 1024).
    pub maxpollevents: Option<u32>,
    pub hard_stop_after: Option<Duration>,
    /// The local peer's name (`localpeer`, or `-L`; the host name when
    /// neither is given).
    pub localpeer: Option<String>,
    pub grace: Option<Duration>,
    pub spread_checks: u32,
    pub quiet: bool,
    pub zero_warning: bool,
    pub strict_limits: bool,
    pub fd_hard_limit: Option<u64>,
    pub noreuseport: bool,
    pub nosplice: bool,
    pub pipesize: Option<usize>,
    /// `tune.rcvbuf.client|server`, `tune.sndbuf.client|server`: socket
    /// buffer sizes set on client and server sockets.
    pub sockbufs: SockBufs,
    /// `h1-case-adjust <from> <to>` and `h1-case-adjust-file`: header
    /// names (lower case) and the spelling they take under `option
    /// h1-case-adjust-bogus-client|server`.
    pub h1_case_adjust: Vec<(String, String)>,
    /// `h1-accept-payload-with-any-method`: HTTP/1.0 GET, HEAD and DELETE
    /// requests may carry a body (refused with a 413 otherwise).
    pub h1_accept_payload_with_any_method: bool,
    /// `pp2-never-send-local`: health checks' PROXY v2 headers say PROXY
    /// (haproxy before 2.2) instead of LOCAL.
    pub pp2_never_send_local: bool,
    /// `profiling.tasks on|off|auto`: the task profiler's mode at start.
    pub profiling_tasks: Option<String>,
    /// `master-worker` in `global` (or `-W` on the command line).
    pub master_worker: bool,
    /// `master-worker no-exit-on-failure`: a failing worker does not stop
    /// the master and the other processes.
    pub no_exit_on_failure: bool,
    /// `mworker-max-reloads`: an old worker that survived more reloads is
    /// terminated.
    pub mworker_max_reloads: Option<u32>,
    pub node: Option<String>,
    pub description: Option<String>,
    /// Variables set or unset by `setenv`/`presetenv`/`unsetenv`, to export.
    pub setenv: Vec<(String, Option<String>)>,
}

/// HTTP/2 settings (`tune.h2.*`), with HAProxy's defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct H2Tune {
    /// `tune.h2.header-table-size`: the HPACK table size announced.
    pub header_table_size: u32,
    /// `tune.h2.initial-window-size`: each stream's receive window.
    pub initial_window_size: u32,
    /// `tune.h2.max-concurrent-streams`: streams a client may open at once
    /// (0: no limit).
    pub max_concurrent_streams: u32,
    /// `tune.h2.max-frame-size`: the largest frame announced.
    pub max_frame_size: u32,
    /// `h2-workaround-bogus-websocket-clients`: clients are not offered
    /// WebSocket over HTTP/2 (no SETTINGS_ENABLE_CONNECT_PROTOCOL).
    pub no_extended_connect: bool,
}

impl Default for H2Tune {
    fn default() -> Self {
        H2Tune {
            header_table_size: 4096,
            initial_window_size: 65535,
            max_concurrent_streams: 100,
            max_frame_size: 16384,
            no_extended_connect: false,
        }
    }
}

impl Global {
    /// The reserve a message's first reads leave free for rewrites:
    /// `tune.maxrewrite`, 1024 by default, at most half of `bufsize`.
    pub fn rewrite_room(&self) -> usize {
        self.maxrewrite.unwrap_or(1024).min(self.bufsize / 2)
    }
}

impl Default for Global {
    fn default() -> Self {
        Global {
            daemon: false,
            default_path: None,
            comp_maxlevel: 1,
            lua: LuaConf::default(),
            set_vars: Vec::new(),
            maxconn: None,
            unix_bind: UnixBind::default(),
            external_check: false,
            maxconnrate: None,
            maxsessrate: None,
            maxsslrate: None,
            maxsslconn: None,
            nbthread: None,
            nbproc: None,
            cpu_map: Vec::new(),
            ulimit_n: None,
            user: None,
            group: None,
            uid: None,
            gid: None,
            chroot: None,
            pidfile: None,
            logs: Vec::new(),
            log_tag: None,
            log_send_hostname: None,
            stats_sockets: Vec::new(),
            stats_timeout: None,
            tls: crate::tls::TlsGlobal::default(),
            bufsize: 16384,
            maxrewrite: None,
            maxhdr: 101,
            logurilen: 1024,
            no_memory_trimming: false,
            cookielen: 63,
            h2: H2Tune::default(),
            maxaccept: 64,
            runqueue_depth: 200,
            maxpollevents: None,
            hard_stop_after: None,
            localpeer: None,
            grace: None,
            spread_checks: 0,
            quiet: false,
            zero_warning: false,
            strict_limits: false,
            fd_hard_limit: None,
            noreuseport: false,
            nosplice: false,
            pipesize: None,
            server_state_file: None,
            server_state_base: None,
            sockbufs: SockBufs::default(),
            h1_case_adjust: Vec::new(),
            h1_accept_payload_with_any_method: false,
            pp2_never_send_local: false,
            profiling_tasks: None,
            master_worker: false,
            no_exit_on_failure: false,
            mworker_max_reloads: None,
            node: None,
            description: None,
            setenv: Vec::new(),
        }
    }
}

/// One `cpu-map` line, already split into its sets (1-based ids as written).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuMap {
    pub auto: bool,
    /// Process (or, under `nbproc`, thread) ids; `None` means all.
    pub process: Option<Vec<usize>>,
    /// Thread ids after the `/`; `None` means all threads of the process.
    pub threads: Option<Vec<usize>>,
    pub cpus: Vec<usize>,
    pub loc: Loc,
}

/// `unix-bind`: a prefix for every unix socket path bound, and the mode
/// and owner of those whose line sets none.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UnixBind {
    pub prefix: Option<String>,
    pub mode: Option<u32>,
    pub user: Option<String>,
    pub group: Option<String>,
}

/// A `stats socket` line.
#[derive(Debug, Clone)]
pub struct StatsSocket {
    pub addr: BindAddr,
    pub mode: Option<u32>,
    pub level: String,
    pub user: Option<String>,
    pub group: Option<String>,
    pub expose_fd: bool,
    pub loc: Loc,
}

/// The Lua scripts to load and how they run (manual §3.2 `lua-load`,
/// `tune.lua.*`).
#[derive(Debug, Clone, Default)]
pub struct LuaConf {
    /// `lua-load <file> [args]`, in order, with the line of each.
    pub loads: Vec<LuaLoad>,
    /// `lua-prepend-path <path> [path|cpath]`: (`true` for cpath).
    pub prepend: Vec<(String, bool)>,
    /// `tune.lua.maxmem`, in bytes (0: no limit).
    pub maxmem: usize,
    /// `tune.lua.session-timeout` (actions), `service-timeout`,
    /// `task-timeout`; `None`: haproxy's default (4 s, 4 s, none).
    pub session_timeout: Option<Duration>,
    pub service_timeout: Option<Duration>,
    pub task_timeout: Option<Duration>,
    /// Every `lua.<name>` a rule, format or expression uses, with its
    /// line: checked once the scripts have registered their names.
    pub refs: Vec<LuaRef>,
    /// The `proc.*` variables the configuration names (a script's
    /// `set_var(…, true)` updates only those).
    pub proc_vars: Vec<String>,
}

/// One `lua-load` line.
#[derive(Debug, Clone)]
pub struct LuaLoad {
    /// `lua-load-per-thread`: one state per thread.
    pub per_thread: bool,
    pub file: String,
    pub args: Vec<String>,
    pub loc: Loc,
}

/// What a `lua.<name>` names, as the line uses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LuaUse {
    Fetch,
    Converter,
    /// An action of `http-request`, `http-response`/`http-after-response`,
    /// `tcp-request`, `tcp-response`.
    HttpReq,
    HttpRes,
    TcpReq,
    TcpRes,
    /// `use-service lua.<name>` in HTTP rules, or in TCP ones.
    HttpService,
    TcpService,
}

/// A `lua.<name>` on a configuration line.
#[derive(Debug, Clone)]
pub struct LuaRef {
    pub name: String,
    pub what: LuaUse,
    pub loc: Loc,
}
