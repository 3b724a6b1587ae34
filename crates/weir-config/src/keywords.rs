//! Every HAProxy keyword weir knows, as data: its name, the sections it may
//! appear in and whether weir supports it, partly supports it (saying what
//! differs) or refuses it by name. `docs/compatibility.md` is checked
//! against these tables by a test.

/// How far weir implements a keyword.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Supported,
    /// Accepted; the text says what differs from HAProxy.
    Partly(&'static str),
    /// Known and refused with "not supported by weir yet".
    Refused,
}

/// What `tcp-request connection|session` do in weir.
const TCP_ACTIONS: &str = "accept, reject, set-var, set-var-fmt, unset-var, set-src, set-dst, set-src-port, set-dst-port, silent-drop (a reset), expect-proxy layer4 (connection), track-sc0..2 and sc-inc-gpc*, sc-set-gpt*, sc-add-gpc (stick tables; see the notes below), set-mark and set-tos (on the client's socket once the rules end: the netfilter mark, which needs `CAP_NET_ADMIN` (without it nothing changes, as in haproxy), and the IP TOS or IPv6 traffic class; compared with haproxy's through `ss`); expect-netscaler-cip is refused by name";
/// What `tcp-request content` does in weir.
const LUA_LOAD: &str = "Lua 5.3 (as Debian's haproxy), one state shared by every thread as haproxy's `lua-load`; see \"Lua\" below for the API weir offers";
const TCP_CONTENT: &str = "in `mode http`, on each request before the `http-request` rules (frontend, then backend); in `mode tcp`, once before connecting, waiting up to `tcp-request inspect-delay` for the client's bytes a condition needs (a rule whose condition could change with more bytes waits, as haproxy's ACL misses do; the rules before it are not run again): accept, reject, set-var, set-var-fmt, unset-var, set-src/dst(-port), capture, set-log-level (accepted), silent-drop, `switch-mode http [proto h1|h2]` (the connection goes on in HTTP with the frontend's `http-request` rules; its first request is not run through these rules again, later ones are, in HTTP; `bind … proto none` closes instead); track-sc0..2, sc-inc-gpc*, sc-set-gpt*, sc-add-gpc, do-resolve (the rules after it wait for the address; in `mode http` weir runs these rules on each parsed request, where haproxy's see no request without an inspect delay); set-mark, set-tos (as in the connection rules), set-nice (accepted: weir's tasks have no priorities); use-service (but `lua.<name>`), set-priority-class and set-priority-offset are refused by name";

/// One keyword of a table.
#[derive(Debug, Clone, Copy)]
pub struct Keyword {
    pub name: &'static str,
    /// Sections: `G` global, or `D`efaults/`F`rontend/`L`isten/`B`ackend
    /// columns as in the manual's matrix §4.1 (`-` where not allowed).
    pub sections: &'static str,
    pub status: Status,
}

const fn kw(name: &'static str, sections: &'static str, status: Status) -> Keyword {
    Keyword {
        name,
        sections,
        status,
    }
}

/// Section names weir recognises; only the first five are implemented.
pub const SECTIONS: &[(&str, Status)] = &[
    ("backend", Status::Supported),
    ("cache", Status::Supported),
    ("defaults", Status::Supported),
    ("fcgi-app", Status::Partly("`docroot`, `index`, `path-info`, `set-param`, `pass-header`, `acl`, `log-stderr`, `option keep-conn`; `option get-values`, `mpxs-conns` and `max-reqs` are accepted with a note: weir sends one request at a time on a connection, and does not ask the application (see \"FastCGI\" below)")),
    ("frontend", Status::Supported),
    ("global", Status::Supported),
    ("http-errors", Status::Supported),
    ("listen", Status::Supported),
    ("log-forward", Status::Partly("`bind` (TCP, with TLS; octet-counted and line-ended messages), `dgram-bind` (UDP, without options), `log` targets (`ring@…` included; without `format` a message goes as it came), `log global`, `maxconn`, `backlog`, `timeout client`")),
    ("mailers", Status::Supported),
    ("peers", Status::Partly("see the peers keywords below")),
    ("program", Status::Supported),
    ("resolvers", Status::Partly("`nameserver <id> [udp@|tcp@]<ip>:<port>` (over TCP: one connection per name server, kept open, queries pipelined), `parse-resolv-conf`, `accepted_payload_size` (EDNS0), `resolve_retries`, `timeout resolve|retry`, `hold valid|nx|other|refused|timeout|obsolete`. A server's name is asked again once `hold valid` has passed since its last valid answer; A and AAAA (the preferred family first, the other when it has none), SRV for names starting with `_` (targets' addresses from the additional records, else asked); each server of a name in a backend (a `server-template`, or `server` lines naming one host) takes its own record, keeps it while it is answered, and goes to maintenance \"resolution\" when none is left or an error lasted past its `hold`; SRV ports and weights (`weight/256+1`) are taken; answers with another id, another question, cut (TC) or that do not decode are dropped and counted (`show resolvers`). A record missing from a valid answer stays with its server for `hold obsolete` after it was last seen; CNAME chains are not followed (haproxy's additional records are); `do-resolve` in `http-request` and `tcp-request content` rules; `set server … fqdn` moves a server to another name")),
    ("ring", Status::Partly("`description`, `format`, `maxlen`, `size`, `timeout connect|server`, `server` with TLS options and `log-proto legacy|octet-count`; `backing-file` is refused; lines are kept until every server took them (a full ring drops new lines)")),
    ("userlist", Status::Supported),
];

/// `global` section keywords (manual §3).
pub const GLOBAL: &[Keyword] = &[
    kw("busy-polling", "G", Status::Partly("accepted; no effect")),
    kw("ca-base", "G", Status::Supported),
    kw("chroot", "G", Status::Supported),
    kw("cluster-secret", "G", Status::Partly("accepted with a note: it keys QUIC's retry tokens, and weir (as Debian's haproxy 2.6) has no QUIC")),
    kw("cpu-map", "G", Status::Supported),
    kw("crt-base", "G", Status::Supported),
    kw("daemon", "G", Status::Supported),
    kw("default-path", "G", Status::Partly("`current`, `config`, `parent`, `origin <path>`: files named by the configuration start from that directory (as haproxy, per configuration file); the files loaded once the configuration is read (certificates, Lua scripts, `server-state-file`, and also a relative `stats socket` or `pidfile`, which haproxy opens from where it started) start from the one directory weir takes for all files: files that would each need another are refused")),
    kw("description", "G", Status::Supported),
    kw("deviceatlas-json-file", "G", Status::Refused),
    kw("deviceatlas-log-level", "G", Status::Refused),
    kw("deviceatlas-properties-cookie", "G", Status::Refused),
    kw("deviceatlas-separator", "G", Status::Refused),
    kw("expose-experimental-directives", "G", Status::Partly("accepted; the directives it unlocks in HAProxy 2.6 that weir supports (`normalize-uri`) need nothing")),
    kw("external-check", "G", Status::Supported),
    kw("fd-hard-limit", "G", Status::Supported),
    kw("gid", "G", Status::Supported),
    kw("grace", "G", Status::Supported),
    kw("group", "G", Status::Supported),
    kw("h1-accept-payload-with-any-method", "G", Status::Supported),
    kw("h1-case-adjust", "G", Status::Partly("names listed take their spelling towards HTTP/1 peers under the `option h1-case-adjust-bogus-*` options; other names keep the case they came with (haproxy sends them in lower case)")),
    kw("h1-case-adjust-file", "G", Status::Supported),
    kw("h2-workaround-bogus-websocket-clients", "G", Status::Supported),
    kw("hard-stop-after", "G", Status::Supported),
    kw("httpclient.resolvers.id", "G", Status::Partly("accepted with a note: the HTTP client of Lua scripts resolves names with the system's resolver")),
    kw("httpclient.resolvers.prefer", "G", Status::Partly("accepted with a note: the HTTP client of Lua scripts resolves names with the system's resolver")),
    kw("httpclient.ssl.ca-file", "G", Status::Partly("accepted with a note: the HTTP client of Lua scripts speaks plain HTTP only (an https URL is an error)")),
    kw("httpclient.ssl.verify", "G", Status::Partly("accepted with a note: the HTTP client of Lua scripts speaks plain HTTP only (an https URL is an error)")),
    kw("insecure-fork-wanted", "G", Status::Partly("accepted; no effect")),
    kw("insecure-setuid-wanted", "G", Status::Partly("accepted; no effect")),
    kw("issuers-chain-path", "G", Status::Supported),
    kw("localpeer", "G", Status::Supported),
    kw("log", "G", Status::Supported),
    kw("log-send-hostname", "G", Status::Supported),
    kw("log-tag", "G", Status::Supported),
    kw("lua-load", "G", Status::Partly(LUA_LOAD)),
    kw("lua-load-per-thread", "G", Status::Supported),
    kw("lua-prepend-path", "G", Status::Supported),
    kw("master-worker", "G", Status::Supported),
    kw("max-spread-checks", "G", Status::Partly("accepted with a note: weir spreads each server's first check within its own 'inter'")),
    kw("maxcompcpuusage", "G", Status::Partly("accepted with a note: weir does not measure compression's CPU usage; responses are compressed whatever the load")),
    kw("maxcomprate", "G", Status::Partly("accepted with a note: weir does not limit the compression rate")),
    kw("maxconn", "G", Status::Supported),
    kw("maxconnrate", "G", Status::Supported),
    kw("maxpipes", "G", Status::Partly("accepted with a note: weir keeps its spare splice pipes per thread and makes one when a splice needs it")),
    kw("maxsessrate", "G", Status::Supported),
    kw("maxsslconn", "G", Status::Partly("bounds the clients of `bind … ssl` lines at once (they wait in the accept queue, as at `maxconn`); connections to servers over TLS do not count, where haproxy counts both sides")),
    kw("maxsslrate", "G", Status::Supported),
    kw("maxzlibmem", "G", Status::Partly("accepted with a note: weir's compressors hold what each response needs, without a global memory bound")),
    kw("mworker-max-reloads", "G", Status::Supported),
    kw("nbproc", "G", Status::Partly("weir runs threads, not processes: `nbproc N` runs N threads and warns once (HAProxy 2.6 refuses it)")),
    kw("nbthread", "G", Status::Supported),
    kw("no-memory-trimming", "G", Status::Supported),
    kw("node", "G", Status::Supported),
    kw("noepoll", "G", Status::Partly("accepted; weir always uses epoll")),
    kw("noevports", "G", Status::Partly("accepted; no effect")),
    kw("nogetaddrinfo", "G", Status::Partly("accepted with a note: weir resolves names at start with getaddrinfo either way")),
    kw("nokqueue", "G", Status::Partly("accepted; no effect")),
    kw("nopoll", "G", Status::Partly("accepted; no effect")),
    kw("noreuseport", "G", Status::Supported),
    kw("nosplice", "G", Status::Supported),
    kw("numa-cpu-mapping", "G", Status::Partly("accepted with a note: weir does not bind its threads to one NUMA node by itself (use `cpu-map`)")),
    kw("pidfile", "G", Status::Supported),
    kw("pp2-never-send-local", "G", Status::Supported),
    kw("presetenv", "G", Status::Supported),
    kw("profiling.tasks", "G", Status::Partly("`on` and `off` as `set profiling tasks` (see the runtime API); `auto` is off")),
    kw("quiet", "G", Status::Supported),
    kw("resetenv", "G", Status::Supported),
    kw("server-state-base", "G", Status::Supported),
    kw("server-state-file", "G", Status::Partly("read at start: each server's address and port, weight (unless the configured one changed), forced maintenance or drain, and a down state for a checked server; written with `show servers state`")),
    kw("set-dumpable", "G", Status::Partly("accepted; no effect")),
    kw("set-var", "G", Status::Supported),
    kw("set-var-fmt", "G", Status::Supported),
    kw("setenv", "G", Status::Supported),
    kw("spread-checks", "G", Status::Partly("parsed and validated; checks are always spread evenly over `inter`, without the random percentage")),
    kw("ssl-default-bind-ciphers", "G", Status::Partly("an OpenSSL suite or curve weir does not offer is left out with a warning (Debian's stock list with two DHE suites loads); only a list that leaves nothing is an error")),
    kw("ssl-default-bind-ciphersuites", "G", Status::Supported),
    kw("ssl-default-bind-curves", "G", Status::Partly("an OpenSSL suite or curve weir does not offer is left out with a warning (Debian's stock list with two DHE suites loads); only a list that leaves nothing is an error")),
    kw("ssl-default-bind-options", "G", Status::Partly("version options (`ssl-min-ver`, `ssl-max-ver`, `no-tlsv1x`, `force-tlsv1x`), `no-tls-tickets`, `prefer-client-ciphers`; weir speaks TLSv1.2 and TLSv1.3 only")),
    kw("ssl-default-server-ciphers", "G", Status::Partly("an OpenSSL suite or curve weir does not offer is left out with a warning (Debian's stock list with two DHE suites loads); only a list that leaves nothing is an error")),
    kw("ssl-default-server-ciphersuites", "G", Status::Supported),
    kw("ssl-default-server-options", "G", Status::Partly("version options, `no-tls-tickets`; weir speaks TLSv1.2 and TLSv1.3 only")),
    kw("ssl-dh-param-file", "G", Status::Partly("accepted with a note: weir offers no DHE suite, so DH parameters are not used")),
    kw("ssl-engine", "G", Status::Refused),
    kw("ssl-load-extra-del-ext", "G", Status::Supported),
    kw("ssl-mode-async", "G", Status::Refused),
    kw("ssl-propquery", "G", Status::Refused),
    kw("ssl-provider", "G", Status::Refused),
    kw("ssl-provider-path", "G", Status::Refused),
    kw("ssl-server-verify", "G", Status::Supported),
    kw("ssl-skip-self-issued-ca", "G", Status::Supported),
    kw("stats", "G", Status::Partly("`stats socket` serves the runtime API (see below: the commands weir runs and how they differ); `user`/`uid` and `group`/`gid` set a unix socket's owner, `stats timeout` how long a client may stay silent (10 s by default); `stats maxconn` is accepted and not enforced")),
    kw("strict-limits", "G", Status::Supported),
    kw("tune.buffers.limit", "G", Status::Partly("accepted with a note: weir allocates buffers as connections need them, without a pool to bound")),
    kw("tune.buffers.reserve", "G", Status::Partly("accepted with a note: weir allocates buffers as connections need them, without a pool to bound")),
    kw("tune.bufsize", "G", Status::Supported),
    kw("tune.comp.maxlevel", "G", Status::Supported),
    kw("tune.fail-alloc", "G", Status::Refused),
    kw("tune.fd.edge-triggered", "G", Status::Partly("accepted with a note: weir's event loop is always edge-triggered")),
    kw("tune.h2.header-table-size", "G", Status::Supported),
    kw("tune.h2.initial-window-size", "G", Status::Supported),
    kw("tune.h2.max-concurrent-streams", "G", Status::Supported),
    kw("tune.h2.max-frame-size", "G", Status::Supported),
    kw("tune.http.cookielen", "G", Status::Supported),
    kw("tune.http.logurilen", "G", Status::Supported),
    kw("tune.http.maxhdr", "G", Status::Supported),
    kw("tune.idle-pool.shared", "G", Status::Partly("accepted (`on` or `off`); weir's idle server connections stay in their thread's pool, as with `off`")),
    kw("tune.idletimer", "G", Status::Partly("accepted with a note: weir's splicing does not depend on the stream's idle time")),
    kw("tune.lua.forced-yield", "G", Status::Partly("accepted with a note: weir does not interrupt a Lua function that runs without yielding")),
    kw("tune.lua.maxmem", "G", Status::Supported),
    kw("tune.lua.service-timeout", "G", Status::Supported),
    kw("tune.lua.session-timeout", "G", Status::Supported),
    kw("tune.lua.task-timeout", "G", Status::Supported),
    kw("tune.maxaccept", "G", Status::Supported),
    kw("tune.maxpollevents", "G", Status::Partly("the most readiness events one poll takes; weir's default is 1024, HAProxy's 200")),
    kw("tune.maxrewrite", "G", Status::Partly("the room rewrites have in a message whose first reads filled its buffer (1024 by default, at most half of `tune.bufsize`): weir counts a message's head and the body bytes read with it as haproxy's buffer holds them, and a rewrite that does not fit fails (a 500 under `strict-mode on`, left out under `off`; counted as `wrew`, the 500 as `eint`), as in haproxy")),
    kw("tune.pattern.cache-size", "G", Status::Partly("accepted with a note: weir keeps no cache of pattern match results")),
    kw("tune.peers.max-updates-at-once", "G", Status::Partly("accepted with a note: weir's peers send every pending update of a table in one pass")),
    kw("tune.pipesize", "G", Status::Supported),
    kw("tune.pool-high-fd-ratio", "G", Status::Partly("accepted with a note: weir bounds idle server connections with pool-max-conn and pool-purge-delay, not by file descriptors")),
    kw("tune.pool-low-fd-ratio", "G", Status::Partly("accepted with a note: weir bounds idle server connections with pool-max-conn and pool-purge-delay, not by file descriptors")),
    kw("tune.quic.frontend.conn-tx-buffers.limit", "G", Status::Refused),
    kw("tune.quic.frontend.max-idle-timeout", "G", Status::Refused),
    kw("tune.quic.frontend.max-streams-bidi", "G", Status::Refused),
    kw("tune.quic.retry-threshold", "G", Status::Refused),
    kw("tune.rcvbuf.client", "G", Status::Supported),
    kw("tune.rcvbuf.server", "G", Status::Supported),
    kw("tune.recv_enough", "G", Status::Partly("accepted with a note: weir reads what the socket holds in one call")),
    kw("tune.runqueue-depth", "G", Status::Partly("the tasks a worker thread runs between two looks at I/O readiness (default 200)")),
    kw("tune.sched.low-latency", "G", Status::Partly("accepted with a note: weir's threads have no task classes to reorder")),
    kw("tune.sndbuf.client", "G", Status::Supported),
    kw("tune.sndbuf.server", "G", Status::Supported),
    kw("tune.ssl.cachesize", "G", Status::Supported),
    kw("tune.ssl.capture-buffer-size", "G", Status::Partly("accepted with a note: weir does not capture the ClientHello's cipher list")),
    kw("tune.ssl.capture-cipherlist-size", "G", Status::Partly("accepted with a note: weir does not capture the ClientHello's cipher list")),
    kw("tune.ssl.default-dh-param", "G", Status::Partly("accepted with a note: weir offers no DHE suite, so DH parameters are not used")),
    kw("tune.ssl.force-private-cache", "G", Status::Partly("accepted with a note: weir's TLS session cache is one per process already")),
    kw("tune.ssl.hard-maxrecord", "G", Status::Supported),
    kw("tune.ssl.keylog", "G", Status::Partly("accepted with a note: weir has none of the fetches it enables (`ssl_fc_client_random`, `ssl_fc_session_key`, the traffic secrets), which are refused by name")),
    kw("tune.ssl.lifetime", "G", Status::Supported),
    kw("tune.ssl.maxrecord", "G", Status::Partly("records carry at most this much plaintext at the start of each answer (until 64 KiB were sent after the client last sent something), where haproxy lifts the limit once it sees a stream streaming")),
    kw("tune.ssl.ssl-ctx-cache-size", "G", Status::Supported),
    kw("tune.vars.global-max-size", "G", Status::Partly("accepted with a note: weir does not bound the memory of variables (each value is bounded by the buffer size)")),
    kw("tune.vars.proc-max-size", "G", Status::Partly("accepted with a note: weir does not bound the memory of variables (each value is bounded by the buffer size)")),
    kw("tune.vars.reqres-max-size", "G", Status::Partly("accepted with a note: weir does not bound the memory of variables (each value is bounded by the buffer size)")),
    kw("tune.vars.sess-max-size", "G", Status::Partly("accepted with a note: weir does not bound the memory of variables (each value is bounded by the buffer size)")),
    kw("tune.vars.txn-max-size", "G", Status::Partly("accepted with a note: weir does not bound the memory of variables (each value is bounded by the buffer size)")),
    kw("tune.zlib.memlevel", "G", Status::Partly("accepted with a note: weir's deflate (miniz_oxide) has no memory level to set")),
    kw("tune.zlib.windowsize", "G", Status::Partly("accepted with a note: weir's deflate always uses a 32 KiB window")),
    kw("uid", "G", Status::Supported),
    kw("ulimit-n", "G", Status::Supported),
    kw("unix-bind", "G", Status::Partly("prefix, mode, user/uid, group/gid for the unix sockets of bind lines (the stats socket keeps its own, as in haproxy)")),
    kw("unsetenv", "G", Status::Supported),
    kw("user", "G", Status::Supported),
    kw("wurfl-cache-size", "G", Status::Refused),
    kw("wurfl-data-file", "G", Status::Refused),
    kw("wurfl-information-list", "G", Status::Refused),
    kw("wurfl-information-list-separator", "G", Status::Refused),
    kw("zero-warning", "G", Status::Supported),
];

/// Proxy keywords (manual §4.1 matrix) plus the legacy timeouts weir accepts.
pub const PROXY: &[Keyword] = &[
    kw("acl", "-FLB", Status::Supported),
    kw("backlog", "DFL-", Status::Partly("parsed and validated; set the backlog with `bind ... backlog` (which defaults to the frontend's maxconn)")),
    kw("balance", "D-LB", Status::Partly("roundrobin, static-rr, leastconn, first, source, random, uri (len, depth, whole, path-only), url_param (without check_post), hdr(name) (use_domain_only), hash <expr> (in mode tcp on the client's first bytes), rdp-cookie[(<name>)] (the RDP connection request's cookie, `mstshash` by default; round robin without one, and in mode http); in mode tcp the layer 7 ones fall back to round robin with a warning, as in haproxy")),
    kw("bind", "-FL-", Status::Partly("every option weir knows is in the bind table below, with its status")),
    kw("bind-process", "DFLB", Status::Partly("accepted for old configurations and ignored with a warning (threads, not processes)")),
    kw("capture cookie", "-FL-", Status::Supported),
    kw("capture request header", "-FL-", Status::Supported),
    kw("capture response header", "-FL-", Status::Supported),
    kw("clitcpka-cnt", "DFL-", Status::Supported),
    kw("clitcpka-idle", "DFL-", Status::Supported),
    kw("clitcpka-intvl", "DFL-", Status::Supported),
    kw("clitimeout", "DFL-", Status::Partly("legacy spelling of `timeout client`, accepted with a warning")),
    kw("compression", "DFLB", Status::Partly("`algo` (identity, gzip, deflate, raw-deflate), `type`, `offload`; see \"HTTP compression\" below")),
    kw("contimeout", "D-LB", Status::Partly("legacy spelling of `timeout connect`, accepted with a warning (HAProxy 2.6 refuses it)")),
    kw("cookie", "D-LB", Status::Partly("insert, rewrite, prefix with indirect, nocache, postonly, preserve, httponly, secure, domain, attr, maxidle and maxlife (dates in HAProxy's own format), dynamic (see `dynamic-cookie-key`); a server without a cookie value gets haproxy's deleting `Set-Cookie` in insert mode")),
    kw("declare capture", "-FL-", Status::Supported),
    kw("default-server", "D-LB", Status::Supported),
    kw("default_backend", "DFL-", Status::Partly("a `mode tcp` frontend may name a `mode http` backend: its clients go on in HTTP (haproxy's implicit upgrade); an HTTP frontend cannot use a TCP backend")),
    kw("description", "-FLB", Status::Supported),
    kw("disabled", "DFLB", Status::Supported),
    kw("dispatch", "--LB", Status::Partly("in a section without `server` lines (beside them it is refused): every connection goes to that address, logged as `<NOSRV>`, and a connection serves only the client that opened it")),
    kw("dynamic-cookie-key", "D-LB", Status::Partly("the cookie of a server without a `cookie` value is hex(xxh64(key, its address, its port)), as haproxy makes it, from the address the server has at start; `set server … addr` and DNS do not make it again, and the runtime API's `set dynamic-cookie-key`, `enable|disable dynamic-cookie` are not there")),
    kw("email-alert from", "DFLB", Status::Supported),
    kw("email-alert level", "DFLB", Status::Supported),
    kw("email-alert mailers", "DFLB", Status::Supported),
    kw("email-alert myhostname", "DFLB", Status::Supported),
    kw("email-alert to", "DFLB", Status::Supported),
    kw("enabled", "DFLB", Status::Supported),
    kw("error-log-format", "DFL-", Status::Partly("the lines of connections that fail before any request (a PROXY header, a TLS handshake: `fc_err` and `fc_err_str` give haproxy's numbers and words) and of HTTP/1 requests that never come whole (`<BADREQ>`); `ssl_fc_sni`, `%sslv`, `%sslc` and `ssl_fc_err` know nothing of a handshake that failed (haproxy shows what OpenSSL had)")),
    kw("errorfile", "DFLB", Status::Partly("a complete HTTP/1 response, or an empty file (`/dev/null`): the connection closes without an answer; a backend's error without a page of its own takes the frontend's")),
    kw("errorfiles", "DFLB", Status::Supported),
    kw("errorloc", "DFLB", Status::Supported),
    kw("errorloc302", "DFLB", Status::Supported),
    kw("errorloc303", "DFLB", Status::Supported),
    kw("external-check command", "D-LB", Status::Supported),
    kw("external-check path", "D-LB", Status::Supported),
    kw("filter", "-FLB", Status::Partly("`compression`, `cache <name>` (checked as haproxy checks them: the cache exists, compression after the cache, each needs its own line beside another filter), `trace … quiet` (forwards unchanged; without `quiet` it is refused, weir prints no trace messages), `spoe` (see \"SPOE\" below), `fcgi-app <name>` (names the backend's application, as `use-fcgi-app`); `opentracing` and `bwlim-*` are refused by name")),
    kw("force-persist", "--LB", Status::Supported),
    kw("fullconn", "D-LB", Status::Supported),
    kw("hash-balance-factor", "D-LB", Status::Partly("bounds the load of `hash-type consistent` picks (`balance source`, `uri`, `url_param`, `hdr`): a server over its weighted share of the current connections times the factor gives way to the next one on the ring; `balance random` (power of draws in weir) does not use it")),
    kw("hash-type", "D-LB", Status::Partly("map-based and consistent with sdbm, djb2, crc32 and avalanche as documented; `wt6` is weir's own mixing function, not bit-identical; `consistent` builds weir's own ring (a key keeps its server, but not haproxy's choice of it); in `mode tcp`, `balance hash` of a payload fetch hashes it with `map-based` too (haproxy 2.6 goes round robin there)")),
    kw("http-after-response", "DFLB", Status::Partly("the actions of `http-response` (header actions, set-status, set-var, allow …), on the server's responses and on the answers weir makes from rules (deny, return, redirect, auth, tarpit, an `http-response` deny) and the stats page; not yet on the error pages of a failed exchange (400, 408, 502, 503, 504)")),
    kw("http-check comment", "D-LB", Status::Supported),
    kw("http-check connect", "D-LB", Status::Partly("`port`, `addr`, `send-proxy`, `via-socks4`, `ssl`, `sni`, `alpn`, `proto h1|h2`, `default`, `linger`, `comment`; a port expression is refused (a number only)")),
    kw("http-check disable-on-404", "D-LB", Status::Supported),
    kw("http-check expect", "D-LB", Status::Partly("`[!] status|rstatus|hdr|fhdr|string|rstring|string-lf`, `comment`, `ok-status`, `error-status`, `tout-status`, `on-success`/`on-error` (log-format), `status-code` (an expression); `min-recv` is read but an HTTP rule waits for the head (and the body when its pattern reads it)")),
    kw("http-check send", "D-LB", Status::Supported),
    kw("http-check send-state", "D-LB", Status::Supported),
    kw("http-check set-var", "D-LB", Status::Supported),
    kw("http-check unset-var", "D-LB", Status::Supported),
    kw("http-error", "DFLB", Status::Partly("status with content-type, string, file, errorfile, errorfiles (a section defined above the line), default-errorfiles, hdr, lf-string and lf-file; a reply with formats is rendered on the request for the answers rules make (`deny`, `tarpit`, `return … default-errorfiles`); errors weir makes outside the rules (a server's 502/503/504, a request that does not parse) use the static pages only")),
    kw("http-request", "DFLB", Status::Partly("strict-mode on|off, allow, deny (`deny_status`/`status`, and the answer options of `return`), reject, silent-drop (the client's connection is reset; haproxy, when privileged, closes it sending nothing at all), set-mark, set-tos (the client's socket, as `tcp-request connection` does; not under HTTP/2), set-nice (accepted: weir's tasks have no priorities), tarpit, return (an empty header or an empty body's content type left out, as haproxy does; `errorfiles <name>` needs the `http-errors` section defined above the rule), redirect, set-header, add-header, del-header (`-m str|beg|end|sub|reg`), replace-header, replace-value, set-path, set-pathq, set-query, set-uri (an absolute-form target keeps its scheme and authority), replace-path, replace-pathq, replace-uri, set-src, set-dst, set-src-port, set-dst-port (the addresses the log, later rules, `option forwardfor` and `option originalto` see), set-method, set-var and set-var-fmt (with the `ifexists`, `ifnotexists`, `ifempty`, `ifnotempty`, `ifset`, `ifnotset`, `ifgt`, `iflt` conditions), unset-var, set-log-level (accepted), wait-for-body (a body not there in time is a 408, as in haproxy), auth, normalize-uri (every 2.6 normalizer), set-timeout server|tunnel (not in a frontend, as in haproxy), capture with `len` or `id` (any capture slot of the frontend, numbered in the order the lines come; a backend's rule names by `id` the slots of the frontend the request came through; a sample that fails leaves the slot as it was), use-service prometheus-exporter, send-spoe-group (see \"SPOE\" below), do-resolve(<var>,<resolvers>[,ipv4|ipv6]) (the request waits for the name's first address, kept for `hold valid` in the section's cache; nothing is stored on an error); others are refused by name")),
    kw("http-response", "DFLB", Status::Partly("strict-mode on|off, allow, deny (with `return`'s answer options), return, silent-drop (nothing is sent and the client's connection is reset, where a privileged haproxy closes it sending nothing at all; logged with the server's status, `PR` and no `Tr`, as haproxy logs it), set-mark, set-tos, set-nice (as in `http-request`), redirect (replaces the server's response), capture <sample> id <n> (any response capture slot of the frontend, a backend's rule too), send-spoe-group (see \"SPOE\" below), set-header, add-header, del-header (`-m`), replace-header, replace-value, set-status, set-var, set-var-fmt (with conditions), unset-var, wait-for-body (the first whose condition holds on the head reads the body — whole, `at-least` bytes or a full buffer — before the rules run; in time, or a 504)")),
    kw("http-reuse", "D-LB", Status::Partly("never, safe, aggressive and always; idle connections are kept per thread and per server, and a thread with none for a server takes one from another thread (HTTP/1; TLS ones with unsent bytes stay); a request after a first one takes the connection left last, where haproxy prefers one that served several (http_reuse_safe.vtc). A connection serves only requests it fits, as haproxy's connection hash: the same SNI for a server with `sni <expr>`, the same destination for a server at `0.0.0.0` or without a fixed port (port 0 is no port), the same PROXY header addresses for a `send-proxy` server (one with `proxy-v2-options unique-id` is never reused); `dispatch` connections stay with their client")),
    kw("http-send-name-header", "D-LB", Status::Supported),
    kw("id", "-FLB", Status::Supported),
    kw("ignore-persist", "--LB", Status::Partly("the persistence cookie is not followed; stick tables are not supported")),
    kw("load-server-state-from-file", "D-LB", Status::Supported),
    kw("log", "DFLB", Status::Supported),
    kw("log-format", "DFL-", Status::Partly("the %-variables of `mode tcp` and `mode http`, `%{+Q}`/`%{-Q}` and `%o` defaults, `%[sample]` expressions (in `mode tcp` taken once the session is connected, or as it ends before; haproxy takes them as it logs); `+X` and `+E` accepted and not applied")),
    kw("log-format-sd", "DFL-", Status::Supported),
    kw("log-tag", "DFLB", Status::Supported),
    kw("max-keep-alive-queue", "D-LB", Status::Partly("accepted with a note: a keep-alive client's request whose last server (`option prefer-last-server`) is full goes to another server whatever the value, as haproxy 2.6 was seen to send it with and without the keyword")),
    kw("max-session-srv-conns", "DFL-", Status::Partly("0: a client session keeps no private server connection (`http-reuse never`) between its requests; above 0, weir keeps the last one where haproxy keeps up to that many, to different servers")),
    kw("maxconn", "DFL-", Status::Supported),
    kw("mode", "DFLB", Status::Supported),
    kw("monitor fail", "-FL-", Status::Supported),
    kw("monitor-uri", "DFL-", Status::Supported),
    kw("option abortonclose", "D-LB", Status::Partly("`mode tcp` while connecting; `mode http` for a clear-text HTTP/1.1 client whose request has no body, in the queue (`CQ`), during connect retries (`CC`) and while waiting for the response (`CH`, logged 400); a TLS client is not watched yet (an HTTP/2 stream's reset is, with or without the option)")),
    kw("option accept-invalid-http-request", "DFL-", Status::Partly("a request target may carry a fragment (`#…`) and the characters RFC 3986 leaves out (double quote, angle brackets, backslash, caret, backquote, braces, vertical bar), refused with 400 otherwise, as in haproxy (bytes above 127 stay refused); weir stays strict on header names, versions and framing (it never relaxes what could smuggle a request)")),
    kw("option accept-invalid-http-response", "D-LB", Status::Partly("accepted; weir stays strict on framing")),
    kw("option allbackups", "D-LB", Status::Supported),
    kw("option checkcache", "D-LB", Status::Partly("as haproxy 2.6 does it: a response to a GET or HEAD (any method with `Cache-Control: public`) with a status of 200, 203, 204, 206, 300, 301, 404, 405, 410, 414 or 501, a lifetime or a validator (`max-age`, `s-maxage`, `Expires`, `Last-Modified`, `ETag`), not `private`, `no-cache`, `no-store`, `max-age=0` nor `Pragma: no-cache`, with a `Set-Cookie` that `no-cache=\"set-cookie\"` does not cover, is blocked (`PH--`, an alert on stderr and in the backend's logs); the answer is haproxy's error page of the response's status (haproxy 2.6 sends its 200 page, not the 502 its manual names)")),
    kw("option clitcpka", "DFL-", Status::Supported),
    kw("option contstats", "DFL-", Status::Partly("accepted; counters are always continuous")),
    kw("option disable-h2-upgrade", "DFL-", Status::Supported),
    kw("option dontlog-normal", "DFL-", Status::Supported),
    kw("option dontlognull", "DFL-", Status::Supported),
    kw("option external-check", "D-LB", Status::Partly("the command runs with HAProxy's arguments and environment (nothing else of weir's), within 'inter'; 'insecure-fork-wanted' is not needed")),
    kw("option forwardfor", "DFLB", Status::Supported),
    kw("option h1-case-adjust-bogus-client", "DFL-", Status::Supported),
    kw("option h1-case-adjust-bogus-server", "D-LB", Status::Supported),
    kw("option http-buffer-request", "DFLB", Status::Supported),
    kw("option http-ignore-probes", "DFL-", Status::Supported),
    kw("option http-keep-alive", "DFLB", Status::Supported),
    kw("option http-no-delay", "DFLB", Status::Partly("accepted: weir already sends HTTP data as soon as it has it (TCP_NODELAY, never MSG_MORE), so it changes nothing")),
    kw("option http-pretend-keepalive", "D-LB", Status::Supported),
    kw("option http-restrict-req-hdr-names", "DFLB", Status::Supported),
    kw("option http-server-close", "DFLB", Status::Supported),
    kw("option http-use-proxy-header", "DFL-", Status::Partly("accepted with a note: it changes nothing, as in haproxy 2.6 (a `Proxy-Connection` field decides nothing there either, with the option or without, as observed)")),
    kw("option httpchk", "D-LB", Status::Supported),
    kw("option httpclose", "DFLB", Status::Supported),
    kw("option httplog", "DFL-", Status::Partly("HAProxy's layout; in `mode tcp` it falls back to `tcplog` with a warning, as HAProxy does; `clf` logs HAProxy's CLF layout")),
    kw("option httpslog", "DFL-", Status::Partly("haproxy 2.6's HTTPS format; `ssl_fc_err`, `ssl_c_ca_err` and `fc_err` read 0 on the sessions it logs (a failed handshake has a log line of its own, or `error-log-format`'s) and `ssl_c_err` is `ssl_c_verify`")),
    kw("option idle-close-on-response", "DFL-", Status::Partly("what weir always does at soft stop (an idle keep-alive connection's next request gets `Connection: close`); `no option idle-close-on-response` does not bring back haproxy's default of closing idle connections at once")),
    kw("option independent-streams", "DFLB", Status::Partly("in `mode tcp` (and HTTP tunnels) a side's read timeout is refreshed only by what it sends: when it passes, that direction is shut and the session goes on, logged `cD`/`sD` as haproxy; in a backend in `mode http`, the server's time to answer counts from the request's head, not from the body's last bytes (without the option, data sent to the server refreshes it, as haproxy). weir refreshes a side's write timeout with any progress, as haproxy")),
    kw("option ldap-check", "D-LB", Status::Supported),
    kw("option log-health-checks", "D-LB", Status::Supported),
    kw("option log-separate-errors", "DFL-", Status::Supported),
    kw("option logasap", "DFL-", Status::Supported),
    kw("option mysql-check", "D-LB", Status::Supported),
    kw("option nolinger", "DFLB", Status::Partly("client and server sockets close with a reset (SO_LINGER 0 from the start); haproxy shuts its side down first on an orderly close, so its client reads a FIN before the reset, weir's client the reset alone")),
    kw("option originalto", "DFLB", Status::Supported),
    kw("option persist", "D-LB", Status::Supported),
    kw("option pgsql-check", "D-LB", Status::Supported),
    kw("option prefer-last-server", "D-LB", Status::Partly("while the client's connection is awake: one that slept (idle 200 ms) starts over with the balancer")),
    kw("option redis-check", "D-LB", Status::Supported),
    kw("option redispatch", "D-LB", Status::Supported),
    kw("option smtpchk", "D-LB", Status::Supported),
    kw("option socket-stats", "DFL-", Status::Partly("a `show stat` row per bind line (type 3, `sock-N` or its `name`): sessions, bytes, denied and bad requests, TLS sessions; a bind line with several addresses has one row, where haproxy has one per address; the stats page's table shows no listener rows (its CSV and JSON exports do)")),
    kw("option splice-auto", "DFLB", Status::Partly("splices both ways whenever both sides are plain TCP, without haproxy's guess of which transfers are worth it")),
    kw("option splice-request", "DFLB", Status::Partly("`mode tcp` data, and in `mode http` the part of an HTTP/1 request body of known length not read with its head, between plain TCP sockets (counted in `h1_spliced_bytes_in|out`); chunked bodies and TLS or HTTP/2 sides are copied")),
    kw("option splice-response", "DFLB", Status::Partly("`mode tcp` data, and in `mode http` the part of an HTTP/1 response body of known length or ending with the connection not read with its head, between plain TCP sockets (counted in `h1_spliced_bytes_in|out`); chunked bodies and TLS or HTTP/2 sides are copied")),
    kw("option spop-check", "D-LB", Status::Supported),
    kw("option srvtcpka", "D-LB", Status::Supported),
    kw("option ssl-hello-chk", "D-LB", Status::Partly("a TLS 1.2 ClientHello (haproxy sends SSLv3's); a handshake or alert record in answer passes")),
    kw("option tcp-check", "D-LB", Status::Supported),
    kw("option tcp-smart-accept", "DFL-", Status::Partly("accepted; no effect")),
    kw("option tcp-smart-connect", "D-LB", Status::Partly("accepted; no effect")),
    kw("option tcpka", "DFLB", Status::Supported),
    kw("option tcplog", "DFLB", Status::Supported),
    kw("option transparent", "D-LB", Status::Partly("in a backend without server lines: connects to the client's destination address and port (after set-dst/set-dst-port; the address the connection reached, not netfilter's original destination of a REDIRECT, which haproxy reads with SO_ORIGINAL_DST), logged as <NOSRV>, each connection private to its client; beside server lines (the fallback for requests without a persistence cookie) it is refused")),
    kw("persist rdp-cookie", "D-LB", Status::Partly("`persist rdp-cookie[(<name>)]` (`msts` by default): the server whose IPv4 address and port the cookie names (as a broker in token redirection mode writes them), when it is up or `option persist`/`force-persist` holds; a `use-server` rule that matches comes first, a stick table's server after it")),
    kw("rate-limit sessions", "DFL-", Status::Supported),
    kw("redirect", "-FLB", Status::Supported),
    kw("retries", "D-LB", Status::Supported),
    kw("retry-on", "D-LB", Status::Partly("conn-failure, empty-response, junk-response, response-timeout, status codes, all-retryable-errors, none; a request with a body is retried only for conn-failure; 0rtt-rejected is accepted and has no effect")),
    kw("server", "--LB", Status::Partly("the options of `mode tcp` (see the server table)")),
    kw("server-state-file-name", "D-LB", Status::Supported),
    kw("server-template", "--LB", Status::Supported),
    kw("source", "D-LB", Status::Partly("`source <addr>[:<port>]` for servers without one of their own; `usesrc` and `interface` are refused")),
    kw("srvtcpka-cnt", "D-LB", Status::Supported),
    kw("srvtcpka-idle", "D-LB", Status::Supported),
    kw("srvtcpka-intvl", "D-LB", Status::Supported),
    kw("srvtimeout", "D-LB", Status::Partly("legacy spelling of `timeout server`, accepted with a warning")),
    kw("stats admin", "-FLB", Status::Partly("the page's admin forms: ready, drain, maint, and health checks on/off (`dhlth`/`ehlth`); agent and `shutdown` actions are refused")),
    kw("stats auth", "DFLB", Status::Supported),
    kw("stats enable", "DFLB", Status::Supported),
    kw("stats hide-version", "DFLB", Status::Supported),
    kw("stats http-request", "-FLB", Status::Supported),
    kw("stats realm", "DFLB", Status::Supported),
    kw("stats refresh", "DFLB", Status::Supported),
    kw("stats scope", "DFLB", Status::Supported),
    kw("stats show-desc", "DFLB", Status::Supported),
    kw("stats show-legends", "DFLB", Status::Supported),
    kw("stats show-modules", "DFLB", Status::Refused),
    kw("stats show-node", "DFLB", Status::Supported),
    kw("stats uri", "DFLB", Status::Supported),
    kw("stick match", "--LB", Status::Supported),
    kw("stick on", "--LB", Status::Supported),
    kw("stick store-request", "--LB", Status::Supported),
    kw("stick store-response", "--LB", Status::Supported),
    kw("stick-table", "-FLB", Status::Partly("every type, size, expire, nopurge, srvkey, `peers` and store data type of 2.6")),
    kw("tcp-check comment", "D-LB", Status::Supported),
    kw("tcp-check connect", "D-LB", Status::Partly("`port`, `addr`, `send-proxy`, `via-socks4`, `ssl`, `sni`, `alpn`, `default`, `linger`, `comment`; a port expression is refused (a number only)")),
    kw("tcp-check expect", "D-LB", Status::Supported),
    kw("tcp-check send", "D-LB", Status::Supported),
    kw("tcp-check send-binary", "D-LB", Status::Supported),
    kw("tcp-check send-binary-lf", "D-LB", Status::Supported),
    kw("tcp-check send-lf", "D-LB", Status::Supported),
    kw("tcp-check set-var", "D-LB", Status::Supported),
    kw("tcp-check unset-var", "D-LB", Status::Supported),
    kw("tcp-request connection", "DFL-", Status::Partly(TCP_ACTIONS)),
    kw("tcp-request content", "DFLB", Status::Partly(TCP_CONTENT)),
    kw("tcp-request inspect-delay", "DFLB", Status::Partly("in `mode tcp`, how long `tcp-request content` rules wait for the client's bytes (`req.len`, `req.payload`, `req.payload_lv`, `req.proto_http`/`HTTP`, `req.ssl_*`, `req.rdp_cookie*`/`RDP_COOKIE`, `wait_end`/`WAIT_END`); the bytes then go to the server first. In `mode http` the rules see the parsed request and do not wait")),
    kw("tcp-request session", "DFL-", Status::Partly(TCP_ACTIONS)),
    kw("tcp-response content", "D-LB", Status::Partly("in `mode http`, on the response head before the `http-response` rules; in `mode tcp`, once the server is connected, before anything of its is forwarded: with `tcp-response inspect-delay`, the client's bytes read so far go to the server and a rule whose condition could change with more of the server's bytes (`res.len`, `res.payload`, `res.payload_lv`, `WAIT_END`) waits for them, up to the delay, a full buffer or the server's end; `fix_is_valid` and `mqtt_is_valid` decide at once on a whole message, as haproxy's. Actions: accept, reject, close, set-var, set-var-fmt, unset-var, silent-drop, set-mark, set-tos, set-nice (as in `tcp-request content`)")),
    kw("tcp-response inspect-delay", "D-LB", Status::Supported),
    kw("timeout check", "D-LB", Status::Supported),
    kw("timeout client", "DFL-", Status::Supported),
    kw("timeout client-fin", "DFL-", Status::Supported),
    kw("timeout connect", "D-LB", Status::Supported),
    kw("timeout http-keep-alive", "DFLB", Status::Supported),
    kw("timeout http-request", "DFLB", Status::Supported),
    kw("timeout queue", "D-LB", Status::Supported),
    kw("timeout server", "D-LB", Status::Supported),
    kw("timeout server-fin", "D-LB", Status::Supported),
    kw("timeout tarpit", "DFLB", Status::Supported),
    kw("timeout tunnel", "D-LB", Status::Supported),
    kw("transparent", "D-LB", Status::Partly("the deprecated spelling of `option transparent` (see there)")),
    kw("unique-id-format", "DFL-", Status::Partly("log-format variables, in `mode http` per request and in `mode tcp` per session (made once its backend is chosen: `%ID`, `unique-id`, a PROXY v2 header's TLV); the `+X` (hex) flag is accepted and not applied")),
    kw("unique-id-header", "DFL-", Status::Supported),
    kw("use-fcgi-app", "--LB", Status::Supported),
    kw("use-server", "--LB", Status::Supported),
    kw("use_backend", "-FL-", Status::Partly("as `default_backend`: a `mode tcp` frontend choosing a `mode http` backend goes on in HTTP")),
];

const BIND_PARTLY_THREAD: &str =
    "thread sets `N`, `N-M`, `all`, `odd`, `even` (thread groups are not supported)";

/// `bind` line options (manual §5.1).
/// `peers` section keywords (manual §3.5).
pub const PEERS: &[Keyword] = &[
    kw(
        "bind",
        "-",
        Status::Partly(
            "an address and port, or `fd@<n>`, with the bind line's TLS options (`ssl`, `crt`, `ca-file`, `verify`, `alpn`, versions, ciphers …); other bind options are refused by name",
        ),
    ),
    kw("default-bind", "-", Status::Partly("the local listener's TLS options (`ssl`, `crt` … as on `bind`), whether a `bind` line or the local `peer` line gives its address; other bind options are refused by name")),
    kw(
        "default-server",
        "-",
        Status::Partly("the server line's TLS options (`ssl`, `crt`, `verify`, `ca-file`, `sni` …), which each peer's line starts from; other server options are refused by name"),
    ),
    kw("disabled", "-", Status::Supported),
    kw("enable", "-", Status::Supported),
    kw(
        "log",
        "-",
        Status::Partly("accepted; weir logs no peers events yet"),
    ),
    kw(
        "peer",
        "-",
        Status::Partly("a name and an address, with the server line's TLS options; other server options are refused by name"),
    ),
    kw(
        "server",
        "-",
        Status::Partly("a name (the local peer) or a name and an address, with the server line's TLS options; other server options are refused by name"),
    ),
    kw("shards", "-", Status::Partly("accepted with a note: each weir thread has its own `SO_REUSEPORT` socket on every bind line already (haproxy's `shards by-thread`), whatever the number; only the value is checked (1..64 or `by-thread`)")),
    kw("table", "-", Status::Supported),
];

pub const BIND: &[Keyword] = &[
    kw("accept-netscaler-cip", "-", Status::Partly("the NetScaler Client IP header (legacy and standard layouts, IPv4 and IPv6) names the session's addresses and ports, after a PROXY header when both are asked; refused headers are logged with haproxy's words and `fc_err` numbers (18 to 23). A header split across reads is waited for (haproxy refuses it as truncated at once), as weir does for PROXY headers; `tcp-request connection expect-netscaler-cip` stays refused")),
    kw("accept-proxy", "-", Status::Supported),
    kw("allow-0rtt", "-", Status::Partly("accepted; weir takes no TLS early data, so clients send their request after the handshake (one round trip more, never a replayed request)")),
    kw("alpn", "-", Status::Supported),
    kw("backlog", "-", Status::Supported),
    kw("ca-file", "-", Status::Supported),
    kw("ca-ignore-err", "-", Status::Partly("accepted (`all` or codes); weir cannot tell at which depth of the chain webpki found an error, so every error counts as the certificate's own (`crt-ignore-err`) and this list ignores none")),
    kw("ca-sign-file", "-", Status::Supported),
    kw("ca-sign-pass", "-", Status::Partly("refused with a message: weir reads no encrypted key, so the CA key of `ca-sign-file` must be in clear")),
    kw("ca-verify-file", "-", Status::Supported),
    kw("ciphers", "-", Status::Partly("an OpenSSL suite or curve weir does not offer is left out with a warning (Debian's stock list with two DHE suites loads); only a list that leaves nothing is an error")),
    kw("ciphersuites", "-", Status::Supported),
    kw("crl-file", "-", Status::Partly("PEM revocation lists for client certificates (version 1 lists, which webpki does not read, and SHA-1 RSA signed ones are checked by weir's own chain walk); as with OpenSSL's full CRL check, a certificate of the chain without a list fails (`unable to get certificate CRL`)")),
    kw("crt", "-", Status::Supported),
    kw("crt-ignore-err", "-", Status::Partly("`all` or OpenSSL error codes (weir maps webpki's errors: 7 bad signature, 9 not yet valid, 10 expired, 12 CRL expired, 18 self-signed, 20 unknown issuer, 23 revoked, 3 no CRL, 26 purpose, 1 other): the handshake goes on and `ssl_c_verify` gives the code (the first error found; OpenSSL goes on checking and gives the last, so an untrusted certificate on a bind with a `crl-file` reads 18 or 20 in weir, 3 in haproxy)")),
    kw("crt-list", "-", Status::Partly("lines `<crt> [[options]] [sni filters …]` with `!` exclusions and wildcards; the options are the bind line's TLS words (`alpn`, `ciphers`, `ciphersuites`, `curves`, `ssl-min-ver`, `ssl-max-ver`, `no-tlsv1x`, `verify`, `ca-file`, `crl-file` …); `npn` and `no-ca-names` are refused; entries are added and removed at run time with `add|del ssl crt-list`")),
    kw("curves", "-", Status::Partly("an OpenSSL suite or curve weir does not offer is left out with a warning (Debian's stock list with two DHE suites loads); only a list that leaves nothing is an error")),
    kw("defer-accept", "-", Status::Supported),
    kw("ecdhe", "-", Status::Supported),
    kw("expose-fd", "-", Status::Partly("`expose-fd listeners` on `stats socket`: hands the listeners to `weir -x`, with weir's own exchange")),
    kw("force-sslv3", "-", Status::Partly("weir speaks TLSv1.2 and TLSv1.3 only: a bind left with no version is an error")),
    kw("force-tlsv10", "-", Status::Partly("weir speaks TLSv1.2 and TLSv1.3 only: a bind left with no version is an error")),
    kw("force-tlsv11", "-", Status::Partly("weir speaks TLSv1.2 and TLSv1.3 only: a bind left with no version is an error")),
    kw("force-tlsv12", "-", Status::Supported),
    kw("force-tlsv13", "-", Status::Supported),
    kw("generate-certificates", "-", Status::Partly("a leaf for the client's SNI when no certificate serves it: the CA's name with `CN=<sni>` added, a subjectAltName, the default certificate's key, signed by the `ca-sign-file` key with SHA-256 whatever its curve, as OpenSSL signs haproxy's, valid from a day before to a year after; kept in an LRU cache of `tune.ssl.ssl-ctx-cache-size` per bind line")),
    kw("gid", "-", Status::Supported),
    kw("group", "-", Status::Supported),
    kw("id", "-", Status::Supported),
    kw("interface", "-", Status::Supported),
    kw("level", "-", Status::Supported),
    kw("maxconn", "-", Status::Supported),
    kw("mode", "-", Status::Supported),
    kw("mss", "-", Status::Supported),
    kw("name", "-", Status::Supported),
    kw("namespace", "-", Status::Partly("a network namespace of `ip netns` (`/var/run/netns/<name>`), where the socket is made (weir needs the privilege to enter it, as haproxy); `*` (the namespace a PROXY header names) is refused")),
    kw("nice", "-", Status::Partly("accepted; no effect (weir's scheduler has no task priorities yet)")),
    kw("no-sslv3", "-", Status::Supported),
    kw("no-tls-tickets", "-", Status::Supported),
    kw("no-tlsv10", "-", Status::Supported),
    kw("no-tlsv11", "-", Status::Supported),
    kw("no-tlsv12", "-", Status::Supported),
    kw("no-tlsv13", "-", Status::Supported),
    kw("npn", "-", Status::Refused),
    kw("prefer-client-ciphers", "-", Status::Supported),
    kw("process", "-", Status::Partly("under `nbproc N` a process set selects those threads; otherwise ignored with a warning")),
    kw("proto", "-", Status::Partly("`h2` (clear-text HTTP/2 with prior knowledge) and `h1`, in `mode http`; `none` in `mode tcp` (no `switch-mode http`)")),
    kw("severity-output", "-", Status::Partly("accepted on `stats socket`; used by the runtime API later")),
    kw("ssl", "-", Status::Supported),
    kw("ssl-max-ver", "-", Status::Supported),
    kw("ssl-min-ver", "-", Status::Partly("versions below TLSv1.2 are accepted and have no effect: weir speaks TLSv1.2 and TLSv1.3 only")),
    kw("strict-sni", "-", Status::Supported),
    kw("tcp-ut", "-", Status::Supported),
    kw("tfo", "-", Status::Supported),
    kw("thread", "-", Status::Partly(BIND_PARTLY_THREAD)),
    kw("tls-ticket-keys", "-", Status::Partly("HAProxy's file (three keys or more of 48 or 80 bytes in base64, one per line, all alike; the last three decrypt, the penultimate encrypts); the tickets are weir's own (AES-GCM with the key's AES part), so weir and haproxy do not resume each other's sessions. Without it, the keys are derived every 12 hours from a secret a master gives its workers and an old process gives the one started with `-sf`, so clients resume across reloads")),
    kw("transparent", "-", Status::Supported),
    kw("uid", "-", Status::Supported),
    kw("user", "-", Status::Supported),
    kw("v4v6", "-", Status::Supported),
    kw("v6only", "-", Status::Supported),
    kw("verify", "-", Status::Supported),
];

/// `server` and `default-server` options (manual §5.2).
pub const SERVER: &[Keyword] = &[
    kw("addr", "-", Status::Supported),
    kw("agent-addr", "-", Status::Supported),
    kw("agent-check", "-", Status::Supported),
    kw("agent-inter", "-", Status::Supported),
    kw("agent-port", "-", Status::Supported),
    kw("agent-send", "-", Status::Supported),
    kw("alpn", "-", Status::Supported),
    kw("backup", "-", Status::Supported),
    kw("ca-file", "-", Status::Supported),
    kw("check", "-", Status::Supported),
    kw("check-alpn", "-", Status::Supported),
    kw("check-proto", "-", Status::Partly("`h1` and `h2` (HTTP checks over HTTP/2 with prior knowledge)")),
    kw("check-send-proxy", "-", Status::Supported),
    kw("check-sni", "-", Status::Supported),
    kw("check-ssl", "-", Status::Supported),
    kw("check-via-socks4", "-", Status::Supported),
    kw("ciphers", "-", Status::Partly("a suite weir does not offer is refused on a server line (there is no warning to give there)")),
    kw("ciphersuites", "-", Status::Supported),
    kw("cookie", "-", Status::Supported),
    kw("crl-file", "-", Status::Supported),
    kw("crt", "-", Status::Supported),
    kw("disabled", "-", Status::Supported),
    kw("downinter", "-", Status::Supported),
    kw("enabled", "-", Status::Supported),
    kw("error-limit", "-", Status::Supported),
    kw("fall", "-", Status::Supported),
    kw("fastinter", "-", Status::Supported),
    kw("force-tlsv12", "-", Status::Supported),
    kw("force-tlsv13", "-", Status::Supported),
    kw("id", "-", Status::Supported),
    kw("init-addr", "-", Status::Partly("`libc`, `none` (the server starts in maintenance, without an address) and an address; `last` is skipped (the server state file does not give addresses at start yet)")),
    kw("inter", "-", Status::Supported),
    kw("maxconn", "-", Status::Supported),
    kw("maxqueue", "-", Status::Supported),
    kw("minconn", "-", Status::Partly("with `maxconn`: the server's limit is `maxconn × sessions / fullconn` (the backend's sessions, connected and queued), never under `minconn`, and `maxconn` from `fullconn` sessions on, as haproxy 2.6 sizes it (a `minconn` above `maxconn`, or without one, raises `maxconn` to it, as in haproxy). Differs: a session arriving when the limit has grown may be served before the ones waiting (haproxy queues it behind them)")),
    kw("namespace", "-", Status::Partly("a network namespace of `ip netns` (`/var/run/netns/<name>`), where the socket is made (weir needs the privilege to enter it, as haproxy); `*` (the namespace a PROXY header names) is refused")),
    kw("no-backup", "-", Status::Supported),
    kw("no-check", "-", Status::Supported),
    kw("no-check-ssl", "-", Status::Supported),
    kw("no-send-proxy", "-", Status::Supported),
    kw("no-send-proxy-v2", "-", Status::Supported),
    kw("no-send-proxy-v2-ssl", "-", Status::Supported),
    kw("no-send-proxy-v2-ssl-cn", "-", Status::Supported),
    kw("no-ssl", "-", Status::Supported),
    kw("no-ssl-reuse", "-", Status::Supported),
    kw(
        "no-tfo",
        "-",
        Status::Partly("accepted; weir does not use TCP Fast Open towards servers yet"),
    ),
    kw("no-tls-tickets", "-", Status::Supported),
    kw("no-tlsv10", "-", Status::Supported),
    kw("no-tlsv11", "-", Status::Supported),
    kw("no-tlsv12", "-", Status::Supported),
    kw("no-tlsv13", "-", Status::Supported),
    kw("observe", "-", Status::Partly("`layer4` (connections to it: refused or timed out, or made) and `layer7` (also its responses: a status outside 100–499, 501 and 505, an invalid or timed-out response); the errors act on its health check, which must be on")),
    kw("on-error", "-", Status::Supported),
    kw(
        "on-marked-down",
        "-",
        Status::Partly("`shutdown-sessions` only"),
    ),
    kw("on-marked-up", "-", Status::Supported),
    kw("pool-low-conn", "-", Status::Partly("accepted and changes nothing: weir reuses an idle connection that fits wherever one is, as haproxy does with `pool-low-conn` set (without it, haproxy may open a new one)")),
    kw("pool-max-conn", "-", Status::Supported),
    kw("pool-purge-delay", "-", Status::Partly("an idle server connection unused for the delay is closed (HAProxy closes half of them each delay); 0 keeps them")),
    kw("port", "-", Status::Supported),
    kw("proto", "-", Status::Partly("`h2` (HTTP/2 with prior knowledge, clear or over `ssl`), `h1`, and `fcgi` (a FastCGI application: see \"FastCGI\" below), in `mode http`")),
    kw("proxy-v2-options", "-", Status::Partly("`authority` (the client's own PROXY authority, else its TLS SNI), `unique-id` (the request's unique id; its server connection serves that request alone), `crc32c`, `ssl`, `cert-cn`, `ssl-cipher`, `cert-sig`, `cert-key` (the `ssl` TLV, with haproxy 2.6's bytes: compared with haproxy's in a test); the TLVs come in haproxy's order, and the client's ALPN goes in every v2 header, as haproxy sends it. As in haproxy, an option without a `send-proxy*` word sends a v1 line")),
    kw("redir", "-", Status::Partly("GET and HEAD requests the server gets (by balancing or persistence) are answered `302 Found` with `location: <prefix><path and query>` and `connection: close`, in haproxy 2.6's bytes; other methods go to the server. No persistence cookie is set on the answer, as in haproxy")),
    kw("resolve-net", "-", Status::Supported),
    kw("resolve-opts", "-", Status::Partly("`allow-dup-ip`, `prevent-dup-ip` and `ignore-weight`; without `prevent-dup-ip`, servers of one name may share an address, as haproxy's")),
    kw("resolve-prefer", "-", Status::Supported),
    kw("resolvers", "-", Status::Supported),
    kw("rise", "-", Status::Supported),
    kw("send-proxy", "-", Status::Partly("sent before any TLS handshake; in `mode http` a connection that sent one serves only its client's requests (it is never shared through the idle pool)")),
    kw("send-proxy-v2", "-", Status::Partly("as `send-proxy`")),
    kw("send-proxy-v2-ssl", "-", Status::Supported),
    kw("send-proxy-v2-ssl-cn", "-", Status::Supported),
    kw("slowstart", "-", Status::Supported),
    kw("sni", "-", Status::Supported),
    kw("socks4", "-", Status::Partly("an IPv4 `<ip>:<port>` (no name); connections to IPv4 servers go through the SOCKS4 proxy (user id `HAProxy`, as haproxy's); an IPv6 server cannot be reached that way and its connections fail")),
    kw(
        "source",
        "-",
        Status::Partly("`<addr>[:<port>]` only; `usesrc` (transparent source) is refused"),
    ),
    kw("ssl", "-", Status::Supported),
    kw("ssl-max-ver", "-", Status::Supported),
    kw("ssl-min-ver", "-", Status::Partly("versions below TLSv1.2 have no effect: weir speaks TLSv1.2 and TLSv1.3 only")),
    kw("ssl-reuse", "-", Status::Supported),
    kw(
        "tfo",
        "-",
        Status::Partly("accepted; connections to servers do not use TCP Fast Open yet"),
    ),
    kw("track", "-", Status::Supported),
    kw("verify", "-", Status::Supported),
    kw("verifyhost", "-", Status::Supported),
    kw("weight", "-", Status::Supported),
    kw("ws", "-", Status::Supported),
];

/// Finds a keyword in a table by exact name.
pub fn find(table: &'static [Keyword], name: &str) -> Option<&'static Keyword> {
    table.iter().find(|k| k.name == name)
}

/// Finds the proxy keyword a line starts with, trying two-word then
/// three-word forms (`timeout client`, `capture request header`).
pub fn find_proxy(words: &[String]) -> Option<&'static Keyword> {
    let w = |n: usize| {
        words
            .iter()
            .take(n)
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join(" ")
    };
    // `tcp-check set-var(<name>) …`: the action word carries its name.
    let action = match (words.first().map(String::as_str), words.get(1)) {
        (Some(f @ ("tcp-check" | "http-check")), Some(a)) if a.contains('(') => {
            let a = a.split('(').next().unwrap_or("");
            let a = if a == "set-var-fmt" { "set-var" } else { a };
            find(PROXY, &format!("{f} {a}"))
        }
        // `persist rdp-cookie(<name>)`.
        (Some("persist"), Some(a)) if a.starts_with("rdp-cookie(") => {
            find(PROXY, "persist rdp-cookie")
        }
        _ => None,
    };
    action
        .or_else(|| find(PROXY, &w(3)))
        .or_else(|| find(PROXY, &w(2)))
        .or_else(|| find(PROXY, &w(1)))
}

/// True when `name` starts a multi-word proxy keyword (`timeout`, `option`).
pub fn is_proxy_prefix(name: &str) -> bool {
    PROXY
        .iter()
        .any(|k| k.name.split(' ').next() == Some(name) && k.name.contains(' '))
}

/// Renders every table as the Markdown of `docs/compatibility.md`.
pub fn render_markdown() -> String {
    let mut out = String::new();
    out.push_str("# HAProxy keyword compatibility\n\n");
    out.push_str("Generated from weir's keyword tables (`crates/weir-config/src/keywords.rs`);\n");
    out.push_str("a test fails when this file and the tables disagree. Regenerate with\n");
    out.push_str("`WEIR_BLESS=1 cargo test -p weir-config compatibility_doc`.\n\n");
    out.push_str("- **supported**: behaves as HAProxy 2.6 documents it.\n");
    out.push_str("- **partly**: accepted; the note says what differs.\n");
    out.push_str("- **refused**: known keyword, rejected at load time with \"not supported by weir yet\" (never silently ignored).\n\n");
    let status = |s: Status| match s {
        Status::Supported => ("supported", String::new()),
        Status::Partly(n) => ("partly", n.to_string()),
        Status::Refused => ("refused", String::new()),
    };
    let count = |t: &[Keyword]| {
        let s = t.iter().filter(|k| k.status == Status::Supported).count();
        let p = t
            .iter()
            .filter(|k| matches!(k.status, Status::Partly(_)))
            .count();
        format!("{s} supported, {p} partly, {} refused", t.len() - s - p)
    };
    out.push_str("## Sections\n\n| section | status |\n|---|---|\n");
    for (n, s) in SECTIONS {
        out.push_str(&format!("| `{n}` | {} |\n", status(*s).0));
    }
    for (title, table, with_sections) in [
        ("Global keywords (manual §3)", GLOBAL, false),
        (
            "Proxy keywords (manual §4; sections: D defaults, F frontend, L listen, B backend)",
            PROXY,
            true,
        ),
        ("Peers keywords (manual §3.5)", PEERS, false),
        ("Bind options (manual §5.1)", BIND, false),
        (
            "Server and default-server options (manual §5.2)",
            SERVER,
            false,
        ),
    ] {
        out.push_str(&format!("\n## {title}\n\n{}.\n\n", count(table)));
        if with_sections {
            out.push_str("| keyword | sections | status | notes |\n|---|---|---|---|\n");
        } else {
            out.push_str("| keyword | status | notes |\n|---|---|---|\n");
        }
        for k in table {
            let (st, note) = status(k.status);
            if with_sections {
                out.push_str(&format!(
                    "| `{}` | {} | {st} | {note} |\n",
                    k.name, k.sections
                ));
            } else {
                out.push_str(&format!("| `{}` | {st} | {note} |\n", k.name));
            }
        }
    }
    out.push_str(HTTP_NOTES);
    out.push_str(TLS_NOTES);
    out.push_str(H2_NOTES);
    out.push_str(RUNTIME_NOTES);
    out.push_str(STICK_NOTES);
    out.push_str(LOG_NOTES);
    out.push_str(LUA_NOTES);
    out.push_str(COMPRESSION_NOTES);
    out.push_str(SPOE_NOTES);
    out.push_str(FCGI_NOTES);
    out
}

/// FastCGI (checked by `crates/weir/tests/suite/fcgi.rs`, beside haproxy
/// with PHP-FPM).
const FCGI_NOTES: &str = "
## FastCGI (manual §10)

- `fcgi-app <name>` sections (`docroot`, `index`, `path-info <regex>`, `set-param <name> <fmt> [if|unless <cond>]`, `pass-header <name> [if|unless <cond>]`, `acl`, `log-stderr global|<target>`, `[no] option keep-conn`), `use-fcgi-app <name>` (or `filter fcgi-app <name>`) in a backend, `server … proto fcgi`; the configuration is checked as haproxy checks it (no `docroot`, an unknown application, an application without a FastCGI server or the reverse, `mode tcp`, two applications in one backend), in its words.
- Each request goes as `FCGI_BEGIN_REQUEST` (Responder, `FCGI_KEEP_CONN` unless `no option keep-conn`), one `FCGI_PARAMS` stream and `FCGI_STDIN`. The parameters are haproxy 2.6's (compared through PHP-FPM's `$_SERVER`): every request field as `HTTP_<NAME>` (a backend with an application deletes request fields named outside `[A-Za-z0-9-]` unless `option http-restrict-req-hdr-names` says otherwise, as haproxy does: `X_A` would pass as `X-A`) but `Authorization`, `Proxy-Authorization`, the hop-by-hop fields, `Expect` (a `100 Continue` is answered at once, as haproxy answers it), `Content-Length` and `Content-Type` (unless `pass-header` names them); `CONTENT_LENGTH` (0 without a body), `CONTENT_TYPE`, `AUTH_TYPE` and `REMOTE_USER` for Basic credentials, `GATEWAY_INTERFACE`, `DOCUMENT_ROOT`, `SCRIPT_NAME` (the URL-decoded path, cut by `path-info`'s first capture, with `index` after a final `/`), `PATH_INFO` and `PATH_TRANSLATED` (its second capture), `REQUEST_URI`, `REQUEST_METHOD`, `QUERY_STRING` (when not empty), `SERVER_NAME` (the `Host`, else the local address), `SERVER_PORT`, `SERVER_PROTOCOL`, `REMOTE_ADDR`, `REMOTE_PORT`, `SCRIPT_FILENAME`, `HTTPS=on` over TLS; `set-param` names are upper-cased, an empty value sets nothing, and a name of these replaces its default (`SCRIPT_FILENAME` follows a new `SCRIPT_NAME`). A chunked request body is waited for (a buffer's worth, as haproxy does) so that its length can be given; one larger than the buffer is refused with 400 (`PH`), as haproxy refuses it. `SERVER_PROTOCOL` is `HTTP/2.0` for an HTTP/2 client. A decoded path with a newline or NUL is answered 500 (`IH`) when `path-info` is set, as haproxy answers.
- The application's CGI head gives the status (`Status:`, a `Location:` alone is a 302; an invalid head is a 502 logged `PH`; a connection that closes or an `FCGI_END_REQUEST` that refuses the request, a 502 `SH`, or a truncated body `SD`, as haproxy logs them) and the fields (names in lower case, as haproxy writes them); a `date` is added when it has none. The body goes chunked to HTTP/1.1 clients unless the head gave a length (haproxy adds a `content-length` when the whole answer is in its buffer). `FCGI_STDERR` lines go to the `log-stderr` targets at level `err`, tagged with the application's name (haproxy 2.6.12 crashes with `log-stderr global`, and logs bytes that are not the message with an address). A connection the application keeps (`option keep-conn`) goes back to the idle pool after a clean `FCGI_END_REQUEST`.
- Differs: weir sends one request at a time on a connection: `option mpxs-conns`, `option max-reqs` and `option get-values` are accepted with a note (weir does not multiplex and does not ask for `FCGI_MAX_REQS`); `SERVER_SOFTWARE` is `weir/<version>`.
";

/// SPOE (checked by `crates/weir/tests/suite/spoe.rs`, beside haproxy).
const SPOE_NOTES: &str = "
## SPOE (`filter spoe`, haproxy's doc/SPOE.txt)

- `filter spoe [engine <name>] config <file>`: the file's scope `[<name>]` (or the whole file without an engine name), one `spoe-agent` (`messages`, `groups`, `use-backend` (a backend that must exist), `timeout hello|idle|processing` (a warning when one is missing; without `processing`, an exchange gives up after 30 s where haproxy waits), `option var-prefix`, `option set-on-error`, `option set-process-time`, `option set-total-time`, `option continue-on-error`, `max-frame-size`, `register-var-names`, `log global`), `spoe-message` sections (`args [name=]<sample> …` (a sample that gives nothing goes as NULL), `acl`, `event <name> [if|unless <cond>]`) and `spoe-group` sections (`messages`); errors name the file's lines, and missing agents, messages, groups and backends are refused as haproxy refuses them. `http-request send-spoe-group`, `http-response send-spoe-group` and `tcp-request content send-spoe-group <engine> <group>` (the engine in the same proxy, the group the agent's; the rules after it wait for the agent).
- Events: `on-client-session` (in `mode tcp` when the session starts; in `mode http` before the first request's rules), `on-frontend-tcp-request` (before the frontend's `tcp-request content` rules; in `mode http` on each request), `on-frontend-http-request`, `on-backend-http-request` (the frontend's engines and the backend's; not a listen's), `on-http-response` (before the `http-response` rules). The session, request or response waits for the agent; the messages of one event go in one NOTIFY frame, their samples taken on what the payload holds then.
- SPOP 2.0 over TCP to a server the backend's balancing picks (`option spop-check` checks them): the hello, NOTIFY, ACK (`set-var` and `unset-var` in every scope, under `<scope>.<var-prefix>.<name>`), AGENT-DISCONNECT. weir announces no capability (no pipelining, async or fragmentation: one exchange at a time on a connection) and keeps idle connections per worker thread for `timeout idle`. An error sets `txn.<var-prefix>.<set-on-error>` as haproxy does (1 a timeout, an agent that cannot be reached included; 3 a frame too big; 256 + a SPOP status; 255 otherwise). After an error the engine is off for the rest of the transaction, unless `option continue-on-error`.
- Differs: the agent's variables are all set (as with `option force-set-var`: haproxy sets only names the configuration knows); the options `async`, `pipelining`, `send-frag-payload`, `dontlog-normal`, `force-set-var` are accepted with a note (capabilities weir does not announce); no SPOE log lines (`log global` is accepted, the stream's log line is unchanged); agent connections do not count as the backend's sessions in its statistics. Not supported, refused by name: the `on-server-session`, `on-backend-tcp-request` and `on-tcp-response` events, `maxconnrate`, `maxerrrate`, `max-waiting-frames`, an agent's own `log` targets.
";

/// HTTP compression (checked by `crates/weir/tests/suite/compression.rs`,
/// beside haproxy, and the `compression/*` reg-tests).
const COMPRESSION_NOTES: &str = "
## HTTP compression (manual §4.2 `compression`)

- `compression algo identity|gzip|deflate|raw-deflate …`, `compression type <type> …`, `compression offload` in defaults, frontends, listens and backends: the backend's algorithms and types when it has some, else the frontend's; `offload` from either. The algorithm is the one the request's `Accept-Encoding` gives the best q-value (`*` stands for the first configured; ties keep the first listed); `identity` when it is configured and no other is accepted (the body then goes chunked, unchanged). With `offload`, the request loses its `Accept-Encoding` once an algorithm was chosen from it.
- Not compressed, as in haproxy 2.6: HTTP/1.0 requests, `User-Agent: Mozilla/4…` (except MSIE 6 with SV1 and MSIE 7 and later), HEAD, a status other than 200–203, an HTTP/1.0 response, a body that ends with the connection, a `Content-Encoding` already there, `Cache-Control: no-transform`, a `multipart` type or one not in `compression type` (no `Content-Type` with a type list), several `ETag`s or an invalid one.
- A compressed response loses `Content-Length`, goes chunked (DATA frames to HTTP/2 clients), gets `Content-Encoding`, `Vary: Accept-Encoding` and a weak `ETag` (`W/` added to a strong one). The level is `tune.comp.maxlevel` (1 by default, as haproxy's); output is flushed as each read of the server's body is compressed. `maxcompcpuusage` and `maxcomprate` are accepted with a note (no CPU or rate limit). Request bodies are not compressed (`compression direction` is 2.8's), and the `filter compression` line only orders it after the cache (the one order haproxy takes).

## HTTP cache (manual §6)

- `cache <name>` sections (`total-max-size` in megabytes, `max-object-size` in bytes (at most half the cache), `max-age` (60 s), `process-vary`, `max-secondary-entries`), `http-request cache-use <name>`, `http-response cache-store <name>` (a cache no section defines is an error with the line), `res.cache_hit`, `res.cache_name`. One store per section shared by every thread; the oldest objects go first when room is needed. With `process-vary on`, a response varying on `Accept-Encoding`, or on it and `Referer` (haproxy 2.6's two; it never serves one varying on `Referer` alone), is kept as one of at most `max-secondary-entries` variants of its key: a variant answers a request with the same `Referer`, and whose `Accept-Encoding` accepts the variant's content codings (identity unless refused, `*`, `q=0`; a coding IANA does not register, a coding the request refused, or more than 16 accepted values and it is not kept); any other varied field and the response is not kept, as in haproxy.
- Kept: a 200 answer to a GET, not `private`, `no-cache` nor `no-store` (nor asked `no-store`), with `s-maxage`, `max-age`, `Expires` (against `Date`), or else a validator (`ETag`, `Last-Modified`: the cache's `max-age`), for what is left of its life after its `Age` (an invalid `Age` or one past its life: not kept), at most the cache's `max-age`; a body up to the object size (a larger one goes through, not kept). A compressed response is not kept. A successful unsafe request (`POST`, `PUT`, `DELETE` …) through `cache-store` drops its key's object.
- Served: to a GET or HEAD without `Cache-Control: no-cache`/`Pragma: no-cache`, with an `Age`, a length, and through the response rules as a server's answer (`res.cache_hit` is 1 there); `If-None-Match` (weak comparison, `*`) and `If-Modified-Since` (against `Last-Modified`, else `Date`) get a 304. Logged as haproxy logs the cache's applet (no queue, no connect time).
- Differs: objects are served with a `Content-Length` (haproxy keeps a chunked body chunked); `show cache` is not in the runtime API.
";

/// Lua (checked by `crates/weir/tests/suite/lua.rs`, beside haproxy, and
/// by the `lua/*` reg-tests).
const LUA_NOTES: &str = "
## Lua (manual §3.2 `lua-load`; HAProxy's Lua API)

- Lua 5.3, as Debian's haproxy is built with (built into weir, no system library needed). `lua-load <file> [args]` loads into one state shared by every thread (calls take its lock only while Lua code runs, never while a script waits); `lua-load-per-thread <file> [args]` loads into a state of each thread's own (`core.thread` is the thread's number, 0 in the shared state); a name registered in the thread's own state is found first. `lua-prepend-path`, `tune.lua.maxmem`, `tune.lua.session-timeout` (actions, 4 s), `tune.lua.service-timeout` (4 s), `tune.lua.task-timeout` (none); `tune.lua.forced-yield` is accepted with a note (a function that never yields is not interrupted). A file that cannot be read or compiled, or that fails while it loads, stops the start with the `lua-load` line, in haproxy's words; a `lua.<name>` that no script registered for that use (action kind, fetch, converter, HTTP or TCP service) is refused with its line.
- `core`: `register_action` (`http-req`, `http-res`, `tcp-req`, `tcp-res`, with the rule's arguments), `register_fetches`, `register_converters`, `register_service` (`http`, `tcp`), `register_task` (with arguments), `register_init`; `Debug`, `Info`, `Warning`, `Alert`, `log` (on stderr as haproxy prints them: `[info] 331/131540 (pid) : …`, the day of the year then the time; `Debug` is not printed), the level constants, `msleep`, `sleep`, `yield`, `now`, `done`, `thread`, `backends`/`frontends`/`proxies` (each with `name`, `uuid`, `servers`, `get_stats()`, `get_mode()`; servers with `name`, `puid`, `get_name`, `get_addr`, `get_weight`, `is_draining`, `get_stats()`: `show stat`'s columns by name), `tcp()` (`connect`, `connect_ssl` (the server is not verified, as haproxy's), `send`, `receive` with `*l`, `*a` or a size and a prefix, `close`, `settimeout`), `httpclient()` (`get`, `post`, `put`, `head`, `delete` with `url`, `headers`, `body`, `dst` (`unix@…`, an address), `timeout`; `http://` only: an `https` URL is an error). `tokenize`, `concat` (`add`, `dump`), `parse_addr`, `match_addr`. A server a script called a method on can no longer be deleted with `del server`, as in haproxy.
- `txn` (actions, and fetches' first argument): `f`/`sf` (any fetch by its name, `_` for `.`: `txn.f:req_hdr(\"host\")`), `c`/`sc` (any converter), `http` (`req_get_headers`, `req_set_header`, `req_add_header`, `req_del_header`, `req_rep_header`, `req_set_method|path|query|uri`, the `res_*` header methods, `res_set_status`), `get_var`/`set_var` (with `ifexist`: a `proc` variable the configuration does not name is not created)/`unset_var`, `get_priv`/`set_priv` (kept for the exchange), `reply()` (a reply object: `set_status`, `add_header`, `del_header`, `set_body`) and `done([reply])` (the reply answers in the request's or response's place), the log methods. One name may be registered as an action of several rule sets, each its own function (as `cors.lua` does). HTTP applets: `method`, `path`, `qs`, `version`, `length`, `headers`, `set_status`, `add_header`, `start_response`, `send`, `receive`, `getline`, variables and private data; TCP applets: `send`, `receive`, `getline`, variables (which the session's log line sees).
- Request actions may wait (sockets, the HTTP client, sleeps): the request waits with them. `http-response` actions run at once and cannot wait (one that tries is a logged error). A script's runtime error is logged (`Lua action 'x': [state-id 0] runtime error: …`) and the stream goes on, as in haproxy.
- Services: an HTTP service's head goes through the response rules as a server's (a rule that answers replaces it) and leaves with `start_response()` or the first `send()`; each `send()` goes to the client at once, chunked to HTTP/1.1 clients unless the script set a length; a service that answers nothing gets a 500. Logged as haproxy logs an applet (no queue, connected at once, `Tr` the time to the head). A request body is the service's to read when it came with the head. `tune.lua.service-timeout` bounds a service's whole run (4 s by default, as haproxy's).
- Not supported: `core.register_cli`, `core.add_acl`/`del_acl`/`set_map`/`del_map`, `core.get_info`, `core.set_var` (absent from haproxy 2.6 too), the `Map`, `Regex` and `Channel` classes (`txn.req`, `txn.res`), `txn.http:req_set_*` on HTTP/2 pseudo-headers beyond path and method, `filter` classes, `core.queue`/`event_sub` (2.8 API). A script calling one gets Lua's error for a missing field.
";

/// Log forwarding and rings (checked by
/// `crates/weir/tests/suite/log_forward.rs`, beside haproxy).
const LOG_NOTES: &str = "
## Log forwarding and rings (manual §3.9, §3.10)

- `log-forward` sections receive syslog on `dgram-bind` (UDP) and `bind` (TCP, with TLS options; RFC 6587 octet counting or one message per line) and relay each message to their `log` targets as haproxy 2.6 does: without `format` a message goes as it came; with one it is read (RFC 3164: the first word after the date is the host, then `tag[pid]: ` or `tag: ` when present; RFC 5424: every field) and written again, keeping its priority (a message without one gets the target's facility and severity 0) and its date (RFC 3164 dates get the current year and `-00:00` in RFC 5424; a message without a date gets the local time). A target's level drops what is above it. `tests/suite/log_forward.rs` compares every target's messages with haproxy's for the same input.
- `ring` sections keep the lines their `log ring@<name>` targets write (in the ring's `format`, cut at `maxlen`) until every `server` of the ring took them; each server gets them over TCP (TLS with `ssl`), one per line or octet-counted (`log-proto octet-count`), again every second while it is away. With servers, a full ring (`size`) drops new lines; without, the oldest.
- Every message weir sends over UDP or a unix socket ends with a line end, as haproxy's (the `len` bytes, then the line end).
- A `log` line's `format` is one of haproxy 2.6's: `rfc3164` (the default), `local` (without the host name), `rfc5424`, `short` (`<severity>`), `priority` (`<facility*8+severity>`), `iso` (the ISO date), `timed` (`<severity>` and the ISO date) and `raw`; `tests/suite/logging.rs` compares each with haproxy's lines.
";

/// The runtime API on `stats socket` (checked by
/// `crates/weir/tests/suite/runtime_api.rs`).
/// Stick tables: what weir does of them and what differs.
const STICK_NOTES: &str = "
## Stick tables (manual §4.2 `stick-table`, §7.3.3)

- `stick-table type ip|ipv6|integer|string [len N]|binary [len N] size N[k|m|g] [expire T] [nopurge] [srvkey name|addr] [store …]` in frontends, listens and backends (a backend may hold only a table); every data type of 2.6 (`server_id`, `server_key`, `gpt0`, `gpt(N)`, `gpc0`, `gpc1`, `gpc(N)`, their rates, `conn_*`, `sess_*`, `http_req_*`, `http_err_*`, `http_fail_*`, `bytes_in_*`, `bytes_out_*`), with HAProxy's frequency counters (the same rate for the same event times). `peers <section>` shares the table with the section's peers (below). One table serves every thread (16 shards, each behind its own lock); expired entries are swept once a second and never seen after their expiry; a full table evicts its least recently used unreferenced entries (1/256 of its size at a time), or refuses new ones with `nopurge`.
- Tracking: `track-sc0..2 <key> [table <t>]` in `tcp-request connection|session|content`, `http-request` and `http-response`; a slot already tracked stays as it is. A tracker counts a connection (`conn_cnt`, `conn_cur`, `conn_rate`) when it starts and releases `conn_cur` when its session (connection and session rules) or its stream (the others) ends; a session accepted counts `sess_*` on the connection's trackers; each HTTP request counts `http_req_*` on the trackers present after the frontend's `tcp-request content` rules and on an `http-request`/`http-response` tracker when it starts; `http_err_*` counts a server's 4xx, a request denied, tarpitted, invalid or cut short and a 401 of `auth`; `http_fail_*` a server's 5xx other than 501 and 505 and a response that failed; bytes count once an exchange (or a `mode tcp` session) ends.
- Actions `sc-inc-gpc(<idx>,<sc>)`, `sc-inc-gpc0|1(<sc>)`, `sc-set-gpt(<idx>,<sc>) <expr|int>`, `sc-set-gpt0(<sc>) <expr|int>`, and `sc-add-gpc(<idx>,<sc>) <expr|int>` (from HAProxy 2.7).
- Fetches `sc_*(<sc>[,<table>])`, `sc0_*`, `sc1_*`, `sc2_*` and `src_*([<table>])` for every §7.3.3 counter (`bytes_in_rate`, `bytes_out_rate`, `conn_cnt`, `conn_cur`, `conn_rate`, `get_gpc0|1`, `get_gpc(<idx>,…)`, `gpc0_rate`, `gpc1_rate`, `gpc_rate(<idx>,…)`, `get_gpt0`, `get_gpt(<idx>,…)`, `http_err_*`, `http_fail_*`, `http_req_*`, `inc_gpc*`, `clr_gpc*`, `kbytes_in`, `kbytes_out`, `sess_cnt`, `sess_rate`, `sc_tracked`, `sc_trackers`, `src_updt_conn_cnt`), `table_avl`, `table_cnt`; converters `in_table` and `table_*` (the same counters, `table_server_id`, `table_trackers`, `table_expire`, `table_idle`). As in HAProxy: a counter not tracked gives nothing, a missing entry gives 0, a data type not stored gives nothing; a table a rule names must exist (`unable to find table`).
- Runtime API: `show table [<t> [data.<type> <op> <v>]… | key <k>]`, `clear table <t> [filters | key <k>]`, `set table <t> key <k> [data.<type> <v>]…` in HAProxy 2.6's words (entries in key order; contents from the operator level up).
- Persistence: `stick on|match|store-request|store-response <pattern> [table <t>] [if|unless <cond>]` in backends and listens (`mode http` and `mode tcp`): the first matching entry's server is used when it is up (or `force-persist`/`option persist`), unless a `use-server` rule or a cookie chose one; the first store rule of each table stores the server once connected (`store-response` on the response head). Entries hold `server_id` and `server_key` (enabled on the tables stick rules use, as in HAProxy); a server is found by its name (or with `srvkey addr` its address) first, then by its id.
- Prometheus: the `sticktable` scope (`haproxy_sticktable_size`, `haproxy_sticktable_used`).
- Peers (manual §3.5): `peers` sections with `bind` (an address or `fd@<n>`), `peer`/`server` lines (the local one named by `localpeer` or `-L`, else the host name), `table` lines (tables named `<section>/<table>`), `disabled`/`enable`; `stick-table … peers <section>`. weir speaks HAProxy's peers protocol 2.1 (checked byte for byte against haproxy 2.6's messages, and beside a real haproxy in `tests/suite/peers_interop.rs`): it listens as the local peer and connects to the others (again every 2 s while a peer is away), sends table definitions and every local change (tracker releases, stick stores, `sc-*` actions, `set table`) as it happens, applies the updates it receives (last writer wins, as in HAProxy; learned entries are not sent on), acknowledges them, sends heartbeats every 3 s and drops a session silent for 5 s; a new process asks the first peer it meets for a full push, and answers such requests with all its entries. When two peers connect to each other at once, the session opened by the peer with the smaller name stays. A peer that sends what is not a hello gets HAProxy's status (501, 502, 503, 504); garbage after the handshake ends its session with an error message.
- Reloads: the local peer's address is bound with `SO_REUSEPORT`, so the next process (`-sf`) binds it too; on its soft stop the old process stops listening there, connects to it as the local peer and pushes every entry (ending with a resync-finished), and exits once that is done or 6 s passed — the new process keeps the counters (`tests/suite/peers_interop.rs`). With `fd@` binds there is no hand-over.
- TLS between peers: `bind … ssl crt …` on the local side and `ssl` (with `crt`, `verify`, `ca-file` …) on the peers' lines or `default-server`, as HAProxy's `peers/tls_basic_sync` tests run them; a peer that does not complete the handshake gets nothing. A reload's hand-over speaks TLS too when the bind does.
- `show peers [-] [<section>]` lays out each section, its peers (newest first, as haproxy lists them) and their sessions in haproxy 2.6's lines: link status, last handshake, reconnect and heartbeat timers, heartbeats sent and received, sessions opened, silences, protocol errors and crossing sessions refused, the transport of an accepted session, and per shared table the peer's id for it, the data types it stores, the last update pushed, acknowledged and received (`tests/suite/peers_interop.rs` compares its lines with haproxy's). The addresses shown are weir's own records'; the flags carry the bits haproxy shows for the states weir has (waiting for a push, done, pushed by a peer; a session established). `show peers dict` is refused: weir keeps no dictionary cache beyond the session.
- Not yet: `shards`; the new process serves while it learns (an entry it changes before the old process's push is overwritten by it).
";

const RUNTIME_NOTES: &str = "
## Runtime API (`stats socket`)

- One line per connection, or `prompt` for an interactive session (`> `); commands separated by `;`, `\\` escaping; every answer ends with a blank line. Levels `user`, `operator` (the default) and `admin` are enforced (`Permission denied`), and `user`/`operator` lower a session's level. Unknown commands list the commands sharing their first word, or all of them; bad arguments get one line.
- Commands: `help`, `prompt`, `quit`, `show cli level`, `show info` (HAProxy 2.6's fields in its order; `Name: weir`; `ConnRate`/`SessRate` and their maxima are sampled as below, SSL and byte rates, pools and `Idle_pct` are not measured and read 0 or 100), `show stat [<px> <type> <sid>] [typed|json]` (CSV with HAProxy 2.6's 128 columns in its order, the header byte for byte, so parsers keep working; `typed` and `json` with HAProxy's positions, tags and types per field, compared with haproxy's in a test; `up` leaves out servers that are down or in maintenance, `no-maint` those in maintenance), `show info [typed|json]`, `show servers state [<bk>]`, `show servers conn [<bk>]` (haproxy's columns: idle connections that carried one request (`unsafe_nb`) or more (`safe_nb`), per thread; `used_cur` is the server's current connections; weir keeps no estimate of the connections a server needs, so `need_est` repeats `used_max`, the most it had at once since start), `show backend`, `show env [var]`, `get weight`, `set weight`, `set server <bk>/<srv> state ready|drain|maint`, `weight N[%]`, `addr A [port P]` (idle, held and HTTP/2 connections to the old address are not reused), `show map|acl [<file>|#<id>]`, `add map <map> <key> <value>`, `add acl <acl> <pattern>`, `del map|acl <file> <key>|#<ref>`, `set map <map> <key>|#<ref> <value>`, `clear map|acl <file>` (files named by path or `#<id>`; every user of a file sees one set of lines, a new key must compile for each user's match method; each user rebuilds its compiled patterns when the lines change, and a lookup costs one relaxed load and a per-thread cache check; `get map|acl <file> <value>` answers a line per user of the file with its match method and the first entry the value matches (`idx=list`: weir's patterns are lists); `prepare`/`commit` versions and `@<ver>` are not supported, and inline ACL patterns are not listed), `shutdown sessions server <bk>/<srv>` (its `mode tcp` sessions end at once, its idle connections are not reused; HTTP exchanges in flight finish), `enable|disable server`, `enable|disable health`, `set maxconn global|frontend|server` (global up to the limit at start; 0 lifts a server's), `enable|disable frontend` (its listeners stop accepting: new clients wait in the kernel's backlog, status `PAUSED`), `clear counters` (the maxima) and `clear counters all` (every counter, admin), `set profiling tasks on|off|auto` and `show profiling` (per task kind — accept loop, tcp/http/https sessions (with their HTTP/2 streams, which their connection polls; `h2_stream` counts only streams that outlive their connection), HTTP/2 server connections, checks, CLI …: calls counted exactly, one poll in four per thread timed for `cpu` and wake-to-poll `lat`, totals scaled to the calls; `auto` is off; `set profiling memory` is refused), `show activity` (`tasksw` and `accepted`, total and per thread), `show threads` (each thread's name, id and CPU time from `/proc`), `show errors [<px>] [request|response]` (operator: the last invalid request of each frontend and invalid response of each backend, HAProxy's headings and escaped byte dump; weir's reason replaces HAProxy's parser-state lines and the error position).
- Servers at run time (admin): `add server <bk>/<srv> <addr> [options]` takes the options haproxy 2.6 takes there (others are refused by name, as haproxy does: `'cookie' option is not accepted for dynamic server`), nothing from `default-server`, a name is not resolved (`init-addr none`: the server waits without an address until `set server … addr`), only in backends whose algorithm is not `static-rr` nor a map-based hash; the new server is in maintenance, its health and agent checks paused (`enable server`, `enable health`, `enable agent`), its id the first free one; its checks go over TLS only with `check-ssl`, and carry a PROXY header only with `check-send-proxy`. `del server <bk>/<srv>` removes a server in maintenance with no connection in use or queued that nothing names (`track`, `use-server`, a `srv_*(<bk>/<srv>)` fetch); a deleted server's slot stays until the process ends (ids are not reused while it runs). A backend's server list grows without a lock on the request path. Answers are haproxy's, compared with haproxy's in a test. `set server <bk>/<srv> ssl on|off` (for a server whose TLS settings were prepared by `ssl` on its line or its `default-server`; `srv_use_ssl` reads -1 after `no-ssl`), `set server … fqdn <name>` moves a server with `resolvers` to that name, resolved at once (haproxy's answer; a server without resolvers is refused in haproxy's words). `set server <bk>/<srv> check-addr <ip> [port <p>]|check-port <p>|agent-addr <ip> [port <p>]|agent-port <p>|agent-send <text>` move the checks and the agent at once (addresses are IPs, not names); `set server … health up|stopping|down` and `agent up|down` force the state with haproxy's 'changed from CLI' lines (`stopping` is NOLB); answers and `show servers state` (`srv_check_addr`, `srv_check_port`, `srv_agent_addr`, `srv_agent_port`) compared with haproxy's in a test. `show resolvers [<section>]` prints each name server's counters in haproxy's layout (`cname`, `too_big` and `update` read 0).
- Tracking and agents: `track [<bk>/]<srv>` follows a checked server's health and its maintenance (`via <bk>/<srv>` in the lines, the last linked tracker first); `agent-check` with `agent-port`, `agent-addr`, `agent-send`, `agent-inter`: each reply's words `N%`, `maxconn:N`, `ready`, `drain`, `maint`, `up`, `down`/`fail`/`stopped` (with a `#` description) as haproxy applies them, logged as haproxy's (`Agent check for server …`, compared in a test); an agent that cannot be reached or answers nothing it knows changes nothing. The agent columns of `show stat` are left empty.
- `show stat` fills scur/smax/slim/stot, bin/bout, dreq/dresp/ereq, econ/eresp, wretr/wredis, status (OPEN, UP, DOWN, `UP 1/3`, MAINT, DRAIN, `no check`), weight/act/bck/uweight, the check columns (chkfail, chkdown, lastchg, downtime, check_status/code/duration/desc, last_chk, rise/fall/health), lbtot, type, hrsp_*, req_tot, cli_abrt/srv_abrt, addr, cookie, mode and algo; rate/rate_max, req_rate/req_rate_max, conn_rate/conn_rate_max, qtime/ctime/rtime/ttime with their `_max`, and lastsess. qmax, rate_lim and the TLS/HTTP/2/HTTP/1 module columns are left empty or 0. Counters are per worker thread (one writer each, summed when read) and count an exchange or a session when it ends. Rates and averages come from a task on the main thread that reads the counters once a second: a rate is what the last second added (HAProxy's is a sliding estimate), a time average covers the exchanges of the last 16 seconds (HAProxy's covers the last 1024) and keeps its value while nothing passes; `ttime` is HAProxy's `Tt`, which for a keep-alive request includes the idle time before it; the `_max` times are per-thread maxima, and `clear counters` starts them and the rate maxima again.
- Prometheus: `http-request use-service prometheus-exporter [if …]` answers with HAProxy 2.6's metric names, types and labels (`haproxy_process_*`, `haproxy_frontend_*`, `haproxy_backend_*`, `haproxy_server_*`, `…_status` and `haproxy_server_check_status` with a `state` label, `…_http_responses_total` with `code`, `haproxy_listener_*` with a `listener` label for the listeners of proxies with `option socket-stats`, `haproxy_sticktable_size|used`), and `?scope=global|frontend|backend|server|listener|sticktable` (an unknown scope is a 400). Each metric reads the `show info` field or `show stat` column HAProxy's does; a figure that does not apply (no check, no `maxconn`, `maxqueue` or `pool-max-conn`, no ramp-up) is `NaN`, as in HAProxy, and one weir does not measure is left out rather than exported as 0 (a backend's downtime counts the seconds it had no usable server, sampled each second): 125 of haproxy's 187 families are there (missing: SSL and byte rates, TLS and compression figures, pools, peers). The output passes `promtool check metrics`. Help texts are weir's own.
- TLS files (admin): `show ssl cert|ca-file|crl-file [<file>[:<n>]]` (HAProxy 2.6's text, compared with haproxy's in a test: serial, dates, subject alternative names, key, SHA-1, subject, issuer, chain; a CA file's certificates and a CRL file's lists one by one; `*<file>` shows a transaction), `new ssl …`, `set ssl … <file> <<` (a PEM payload; `<cert>.key`, or `<cert without extension>.key` with `ssl-load-extra-del-ext`, sets only the key), `commit ssl …` (every bind line and server built from the file is rebuilt, and all of them change at once or, when one cannot be built, none), `abort ssl …`, `del ssl …` (an unused file); `show ssl crt-list [-n] [<list>]`, `add ssl crt-list <list> <line>` (one line, as payload or a certificate on the command line; the certificate must be in the store), `del ssl crt-list <list> <cert>[:<line>]` (not a bind line's default certificate). One transaction per kind, as in haproxy; a `set` naming another file than the transaction's is refused (haproxy 2.6 puts that payload in the transaction in progress). A commit ends the resumable sessions of the contexts it rebuilds; files are not read from disk after start-up (the store's copies are). `@system-ca` is not listed: weir reads no system CA bundle unless a `ca-file` names it.
- Stats page: `stats enable`, `uri` (default `/haproxy?stats`, a prefix), `realm`, `auth` (Basic; 401 with the realm), `refresh`, `hide-version`, `show-legends`, `scope` (`.` for the proxy itself), `admin if|unless <cond>`, in a frontend or the backend a request goes to (after `http-request` rules). One HTML page in HAProxy's layout and state colours (process information, legend, a table per proxy with frontend, servers and backend), `;csv` (the `show stat` CSV), `;up`, `;norefresh`. With admin rights, each table with servers is a form (`b` = backend name or `#id`, `s` = servers, `action` = `ready|drain|maint|dhlth|ehlth`); the answer is a 303 to `<uri>;st=DONE|PART|NONE|ERRP|UNKN|DENY`, shown as a notice. `;json` and the agent actions are not supported. Tested in headless Chromium.
- Stats page `;json`: the `show stat json` document.
- Sessions: `show sess` lists the client connections (one line each: HAProxy's `0x…: proto= src= fe= be= srv= ts= epoch= age=` fields, then weir's `thr=`, `asleep=1` for an idle HTTP/1.1 client whose session sleeps (see docs/design.md) and `scf=[fd=…]`; no `calls`, `rate`, `cpu`, `lat` nor buffer flags), `show sess <id>` and `show sess all` the detailed block (accept date, frontend, backend, server and addresses, thread, age; weir's own layout, as HAProxy's is undocumented). An HTTP/2 connection is one session, not one per stream, and stats socket clients are not listed. `shutdown session <id>` (admin) ends one at once, whether idle, connecting, forwarding or waiting on a server; a `mode tcp` session is logged with `K` (`KC`, `KD`), an HTTP exchange cut this way is not logged (nor is one cut by a hard stop). Each worker keeps a table of its connections that only it writes (24 bytes a connection, no lock on the connection path); the command runs a job on each worker and waits for it.
- Seamless reloads: `stats socket … expose-fd listeners` hands the listening sockets of `bind` lines to a new process started with `-x <socket>` (with `-sf <old pid>`), which takes each one whose address a bind line of its own names (TCP by address and port, unix sockets by path) instead of binding a new one, so clients waiting in a listen queue are served by the new process. The exchange on the socket is weir's own (`_getsocks`; it does not interoperate with HAProxy's); a socket without `expose-fd listeners` answers `Permission denied`, and a failed `-x` is a warning and new sockets are bound. Options of a taken socket (`backlog`, `tfo`, `interface` …) stay as the old process set them; sockets no bind line takes are closed.
- `-sf <pid>` (or `-st`) without `-x`: the new process takes the listening sockets of the weir it names all the same, through that process's private abstract unix socket (`weir-listeners-<pid>`, answered only to root or the process's own user), so a script that reloads with `-sf` alone loses no client waiting in a listen queue. Against a haproxy (or when that fails) new sockets are bound, as before.

## Master-worker, reloads and soft stop

- `-W`, `-Ws` and `master-worker [no-exit-on-failure]` in `global` start a master process, which runs the worker: weir itself, started again on the same command line less the master's own options (`-W`, `-Ws`, `-S`, `-D`, `-p`, `-sf`, `-st`, `-x`, `-C`). The master holds the listening sockets and gives them to each new worker, which never binds them again; `SIGUSR2` (or the master CLI's `reload`) loads the configuration again (with its TLS files) and, when it loads, starts a new worker, sends `SIGUSR1` to the previous one once the new one serves, and takes the new one's sockets. A configuration that does not load, or a worker that exits before it serves (a port taken by another program), leaves the running worker alone (`Loading failure!`, `show proc`'s `[failed: N]`, the prompt `master[ReloadFailed]>`). `SIGINT`, `SIGTERM`, `SIGUSR1` go to every worker and program; the master's exit code and lines (`Current worker (pid) exited with code 130 (Interrupt)`, `exit-on-failure: killing every processes with SIGTERM`, `All workers exited. Exiting... (130)`) are haproxy's, compared in a test. Differs: haproxy's master executes itself again on reload (so a new binary is picked up by the master too); weir's master stays and starts the program file at its path again for each worker. The master's own messages say `Reloading weir`, not `Reloading HAProxy`.
- `-Ws`: `READY=1` (with `MAINPID`), `RELOADING=1`, `STOPPING=1` and a `STATUS=` line to `$NOTIFY_SOCKET` (a path or an `@abstract` name), for `Type=notify` units; workers and programs do not see the variable.
- `-S <addr>[,<option>…]` (a path, `ipv4@`/`ipv6@` address, `abns@` or `fd@`; options as `stats socket`'s: `level`, `mode`, `user`, `group`): the master CLI. `show proc` (haproxy's layout: master with its reloads and failures, `# workers`, `# old workers`, `# programs`), `@<n>` (1: the current worker, or the one starting), `@!<pid>` (any worker, old ones included), `@` / `@master`, a prefix alone sends the following commands there (and names the prompt), `prompt`, `quit`, `reload` (operator or admin; closes the connection), `show version`, `show cli level`, `operator`, `user` (a worker gets the session's level). Commands are forwarded to a worker's runtime API as written (`\\;` escapes kept). Not supported: `expert-mode`, `experimental-mode`, `mcli-debug-mode`, `show cli sockets`, `show startup-logs`.
- `program` sections: `command`, `user`, `group`, `[no] option start-on-reload`; refused without master-worker mode, as in haproxy. A reload sends `SIGUSR1` to the programs it starts again. `mworker-max-reloads N`: an old worker still running after more than N reloads gets `SIGTERM`.
- Soft stop (`SIGUSR1`, a reload): listeners close at once (their queued clients are served by the next process or accepted before the close), running exchanges finish, and an idle HTTP/1 keep-alive connection is not closed while its client may be sending on it (haproxy 2.6 closes it, and a request sent at that moment fails): its next request is answered with `Connection: close`, or it ends at its keep-alive timeout or at `hard-stop-after`, as it would have anyway (haproxy's `option idle-close-on-response`, off by default there). An old process may therefore live up to `timeout http-keep-alive` after a reload. `bench/reloads.py` counts the requests lost to 10 reloads by each method (master-worker and `-sf`) under 20 clients, with and without keep-alive: 0 for weir in each (README of `bench/`).
";

/// HTTP/2 on both sides and how it differs from HAProxy 2.6 (checked by
/// `crates/weir/tests/suite/h2.rs` and `h2_servers.rs`).
const H2_NOTES: &str = "
## HTTP/2

- Towards clients: over TLS when the client picks `h2` from the bind's `alpn` list, and in clear text with `bind … proto h2` (prior knowledge; no `Upgrade: h2c`). h2spec passes 145 of 145 cases on both. Each stream goes through the same rules, ACLs, balancing and logs as an HTTP/1.1 request; `req.ver` is `2.0`, and `httplog` lines show the request in absolute form (`GET https://host/path HTTP/2.0`), as HAProxy does. Requests go to HTTP/1.1 servers in origin form with `host` from `:authority`; cookies split over several fields are joined with `; `; a body without `content-length` goes chunked, with the client's trailers as chunked trailers.
- Limits: `tune.h2.max-concurrent-streams` (100; 0 lifts it), `tune.h2.initial-window-size` (65535), `tune.h2.header-table-size` (4096), `tune.h2.max-frame-size` (16384, and never above `tune.bufsize`); a header list larger than `tune.bufsize` gets 431. weir announces the largest connection window and relies on the stream windows.
- Defences: streams that a client resets still count against the stream limit while weir works on them (and a reset stream aborts the wait for its server), streams opened over it are refused, and a client that keeps doing so, or resets streams faster than weir accepts them (CVE-2023-44487), gets GOAWAY `ENHANCE_YOUR_CALM`; an endless header block (CONTINUATION flood) gets GOAWAY; PING and SETTINGS floods are answered at the pace the client reads, and weir stops reading a client that does not. A malformed request (a connection-specific field, `te` other than `trailers`) resets its stream with `PROTOCOL_ERROR`; a protocol error on the connection ends it with GOAWAY and the matching code, then a FIN. An idle connection gets GOAWAY(NO_ERROR) after `timeout http-keep-alive` (or `http-request`, `client`).
- Towards servers: `server … proto h2` (clear text, or over `ssl`), or `ssl … alpn h2,…` when the server picks `h2`. Each worker thread keeps one connection per server and sends each exchange as a stream on it (HAProxy's `http-reuse` rules do not apply to these); trailers pass both ways, so gRPC works. A `CONNECT` request cannot go to an HTTP/2 server and gets an error. An `Upgrade` request (a WebSocket) goes as extended CONNECT (RFC 8441) with `:scheme https`, as haproxy sends it, once the server's SETTINGS offer it (weir waits for them on a new connection); the server's 2xx comes back as `101` with the `Sec-WebSocket-Accept` of the client's key, and the stream carries the tunnel both ways. A server that does not offer it gets no stream and the client a 502 (haproxy also sends that server an RST_STREAM on a stream it never opened; the h2 crate weir speaks to servers with cannot, so `protocol_upgrade.vtc` fails there only). `ws auto|h1|h2` on a server picks the protocol of WebSocket upgrades: `h1` a connection in HTTP/1.1 (offering only `http/1.1` where TLS offers a list), `h2` HTTP/2 (offering only `h2`), `auto` the server's own except that an `alpn` list with `http/1.1` offers only that for them, as haproxy does (a TLS server offering `h2,http/1.1` often has no RFC 8441).
- WebSocket over HTTP/2 (RFC 8441) towards clients: weir announces `SETTINGS_ENABLE_CONNECT_PROTOCOL` (not with `h2-workaround-bogus-websocket-clients`); an extended CONNECT with `:protocol` goes to HTTP/1.1 servers as `GET` with `Connection: upgrade` and `Upgrade: <protocol>`, a WebSocket without `sec-websocket-key` gets one weir makes, and a server's `101` that does not prove it is a 502, as in haproxy; the `101` reaches the client as `200` and the stream's DATA are the tunnel (its END_STREAM ends the tunnel's client side).
- HTTP/2 with prior knowledge on an HTTP/1.1 bind: a client whose first bytes are HTTP/2's preface is served in HTTP/2, as haproxy does, unless the bind says `proto h1` or the frontend `option disable-h2-upgrade` (then a 400).
- Not supported: server push, `Upgrade: h2c`.
";

/// TLS termination: what `bind … ssl` does and how it differs from HAProxy
/// 2.6 on OpenSSL (each checked by `crates/weir/tests/suite/tls.rs`).
const TLS_NOTES: &str = "
## TLS termination (`bind … ssl`) and how it differs from HAProxy 2.6

- The TLS library is rustls with the aws-lc-rs provider. Versions: TLSv1.2 and TLSv1.3 only (HAProxy 2.6's default minimum is TLSv1.2 too); `ssl-min-ver` below TLSv1.2 has no effect, and a bind left with no version is a configuration error.
- After a client's handshake, rustls hands its keys over (its kernel-TLS interface) and weir seals and opens the records itself, with the same AEADs: an idle TLS client keeps its keys and no buffer. TLS 1.3 key updates are followed both ways (a client's `update_requested` gets weir's own key update; weir updates its keys before a suite's confidentiality limit); a TLS 1.2 renegotiation attempt, a record that does not decrypt, an oversized record or more than 32 records in a row that carry no data end that connection with the matching alert (`unexpected_message`, `bad_record_mac`, `record_overflow`).
- Suites: TLSv1.3 `TLS_AES_256_GCM_SHA384`, `TLS_AES_128_GCM_SHA256`, `TLS_CHACHA20_POLY1305_SHA256`; TLSv1.2 `ECDHE-{ECDSA,RSA}-{AES256-GCM-SHA384,AES128-GCM-SHA256,CHACHA20-POLY1305}`. `ciphers` takes OpenSSL cipher strings (names, `+`-joined aliases such as `EECDH+AESGCM`, `!`/`-`/`+` prefixes, `@STRENGTH`); a suite *named* explicitly that weir does not offer (`DHE-RSA-…`, CBC suites, CCM) is a configuration error with its line, where OpenSSL would drop it silently. Groups (`curves`): `X25519`, `P-256`, `P-384`, `X25519MLKEM768`.
- Certificates: `crt` takes a PEM file (chain and key together, or the key in `<file>.key`) or a directory (every file but `.key`, `.ocsp`, `.issuer`, `.sctl`, in name order); the first certificate loaded is the default one. SNI picks by the subjectAltName DNS names and the subject CN (`*.example.com` covers one label), and among several certificates for one name the first whose key type the client accepts (ECDSA or RSA). `crt-list` lines are `<crt> [[options]] [sni filter …]` with `!name` exclusions; a line's options apply over the bind line's to the names it serves (the client's SNI picks them, exact names before wildcards), and a session resumed under one line's options is not resumed under another's. An unreadable file, a missing key or a key that does not match its certificate stops the start with the bind's `file:line` (`weir -c` checks them too).
- OCSP stapling sends `<crt>.ocsp` (DER) as found at start-up, or as replaced through the runtime API: `show ssl ocsp-response [<id>]` (the certificate IDs, or one response as haproxy prints it: OpenSSL's text, except that the certificates a response carries are shown in `show ssl cert`'s short form), `set ssl ocsp-response <base64>` (also as a `<<` payload; checked as haproxy does — successful, basic, still valid — then stapled at once by every certificate whose response has the same certificate ID), `set ssl cert <crt>.ocsp <<` + `commit ssl cert <crt>` (through the certificate's transaction; checked at commit), `show ssl cert [*]<crt>.ocsp`, and `OCSP Response Key:` in `show ssl cert`. weir does not fetch responses itself (`ocsp-update` is 2.8's).
- Client certificates: `ca-file` (and `ca-verify-file`, trusted but not named to clients) with `verify required|optional`, `crl-file`; X.509 version 1 certificates (which webpki refuses) are verified by weir's own chain walk — issuer by name, signatures by the provider's algorithms, CA intermediates, validity, revocation — on binds and for servers' certificates (name from the subject's CN); a resumed session's certificate is verified again for `ssl_c_verify`; a certificate that does not verify ends the handshake unless `crt-ignore-err` covers its error, whose OpenSSL code `ssl_c_verify` then gives (0 otherwise).
- Certificate fetches: `ssl_c_*` (the client's), `ssl_f_*` (the one the bind presented) and `ssl_s_*` (a server's, in response rules and logs): `der`, `chain_der` (not `ssl_f_`; a client's without its leaf, as OpenSSL keeps it), `sha1`, `notbefore`, `notafter` (as written, `YYMMDDhhmmssZ`), `serial`, `version`, `sig_alg`, `key_alg` (OpenSSL's short names), `s_dn` and `i_dn` (`/C=…/CN=…`, or one entry's value with `(<entry>[,<occ>])`, or RFC 2253 with a third argument `rfc2253`); the server connection's `ssl_bc`, `ssl_bc_alpn`, `ssl_bc_protocol`, `ssl_bc_cipher`, `ssl_bc_is_resumed` (not over a `proto h2` server connection).
- Resumption: stateless tickets (keys from `tls-ticket-keys`, or derived every 12 hours from a secret shared by a master's workers and handed from an old process to the one started with `-sf`, so clients resume across reloads; `no-tls-tickets` turns them off) and a session cache of `tune.ssl.cachesize` entries; `tune.ssl.lifetime` is the lifetime announced with tickets.
- ALPN: a client that picks `h2` speaks HTTP/2 (in `mode http`); `mode tcp` offers the list as given and forwards the bytes.
- Fetches: `ssl_fc`, `ssl_fc_sni`, `ssl_fc_has_sni`, `ssl_fc_alpn`, `ssl_fc_protocol`, `ssl_fc_cipher` (OpenSSL's names), `ssl_c_used`/`ssl_fc_has_crt`, `ssl_fc_is_resumed`, `ssl_c_verify`, `ssl_c_s_dn`, `ssl_c_i_dn` (`/C=…/O=…/CN=…`); `fc_err` and `fc_err_str` (HAProxy's number and words for a client connection's error: a PROXY header refused, a TLS handshake failed, as `error-log-format` shows them; 0 and `Success` on a connection that got further).
- X.509 version 1 certificates (OpenSSL's `x509 -req` without extensions) load as a bind's certificate and as `server … crt`, as with OpenSSL; a client presenting one to weir fails verification (webpki refuses them; `crt-ignore-err` lets it through with code 1), and a server presenting one cannot be spoken to, even with `verify none` (its handshake signature is checked with webpki).
- TLS to servers (`server … ssl`): `verify required` (the default, from `ssl-server-verify`) needs a `ca-file`, as in HAProxy; the chain is checked, and the name only when `sni` or `verifyhost` gives one. `sni <expr>` is evaluated per request; connections whose SNI is not a constant `str(…)` are not shared through the idle pool. `crt` presents a client certificate, `alpn` is offered (a server that picks `h2` is spoken to in HTTP/2), sessions are resumed unless `no-ssl-reuse`. Health checks use TLS with `ssl` (unless `port`/`addr` move them) or `check-ssl`; a failed handshake is `Layer6 invalid response`. The handshake counts in `timeout connect`; a failure is a connection failure (retries, redispatch, 503).
- A failed handshake is logged as HAProxy 2.6 logs it, `<client> [<date>] <frontend>/<listener>: SSL handshake failure` (the listener's `name`, or its number in the proxy), or `Connection closed during SSL handshake`, or `Timeout during SSL handshake` after `timeout client`; it ends only that connection. With `option dontlognull`, a client that sent nothing at all is not logged (as in HAProxy); a failed handshake always is.
";

/// The HTTP engine's rule language and its documented differences from
/// HAProxy 2.6 (each checked by `crates/weir/tests/suite/http_differential.rs`).
const HTTP_NOTES: &str = "
## HTTP rules (manual §7)

- Fetches: `src`, `src_port`, `dst`, `dst_port`, `method`, `path`, `pathq`, `url`, `query`, `base`, `url_param`/`urlp`, `req.ver`, `hdr`/`req.hdr`, `req.fhdr`, `hdr_cnt`, `hdr_val`, `res.hdr`, `res.fhdr`, `req.cook`/`cook`, `status`, `nbsrv`, `be_conn`, `fe_conn`, `srv_name`, `var`, `always_true`, `always_false`, `http_first_req`, `str`, `int`, `http_auth`, `http_auth_group`, `http_auth_user`, `http_auth_pass`, `http_auth_type`, `http_auth_bearer([<header>])`, `internal.strm.is_htx`; in `mode tcp` under `tcp-request inspect-delay` (and for `use_backend` after): `req.len`, `req.payload(<off>,<len>)`, `req.payload_lv(<off>,<len>[,<off2>])` (matched in hex with `-m bin`), `req.proto_http`, `wait_end`, `req.ssl_hello_type`, `req.ssl_ver`, `req.ssl_sni`, `req.ssl_alpn` (the first protocol), `req.ssl_ec_ext`, `req.ssl_st_ext` and their `req_*` spellings (a ClientHello must fit its first record, as in haproxy), `req.rdp_cookie([<name>])` and `req.rdp_cookie_cnt([<name>])` (and `rdp_cookie`, `rdp_cookie_cnt`: the cookie line after an RDP connection request's 11 bytes of headers, read as haproxy 2.6 reads it, compared in `tests/suite/tcp_inspect.rs`); in `tcp-response content` rules under `tcp-response inspect-delay`: `res.len`, `res.payload(<off>,<len>)`, `res.payload_lv(<off>,<len>[,<off2>])`; predefined ACLs `HTTP` (`req.proto_http`), `REQ_CONTENT`, `WAIT_END`, `RDP_COOKIE`; internal state: `fe_name`, `fe_id`, `be_name`, `be_id`, `srv_id` (ids as HAProxy numbers them), `env`, `date([offset[,s|ms|us]])`, `bin`, `bool`, `req.cook_cnt`, `req.cook_val`, `capture.req.method`, `capture.req.uri`, `capture.req.ver`, `capture.req.hdr(N)`, `capture.res.hdr(N)`, `so_name`, `fc_src`, `fc_dst`, `fc_src_port`, `fc_dst_port` (the connection's own addresses: only `tcp-request connection` rules change them), `fc_pp_authority`, `fc_pp_unique_id` (a PROXY v2 header's TLVs; `mode http`), `be_server_timeout`, `be_tunnel_timeout`, `cur_server_timeout`, `cur_tunnel_timeout`, `fe_client_timeout`, `uuid`, `req.hdr_ip`/`hdr_ip`, `req.hdrs`, `res.hdrs`, `req.hdr_names`, `res.hdr_names` (names in lower case, without a `Connection: close|keep-alive` header, as haproxy's rules see them), `req.fhdr_cnt`, `res.fhdr_cnt`, `res.hdr_cnt`/`shdr_cnt`, `res.hdr_val`/`shdr_val`, `res.hdr_ip`/`shdr_ip`, `res.cook`/`scook`, `res.cook_cnt`/`scook_cnt` (every `name=value` pair of `Set-Cookie`, attributes too, as haproxy counts), `res.cook_val`/`scook_val`, `baseq`, `base32` and `url32` (SDBM with full avalanche), `url_ip`, `url_port`, `urlp_val`, the live figures `queue`, `avg_queue`, `be_conn_free`, `connslots` (-1 when a server has no limit), `be_sess_rate`, `fe_sess_rate`, `fe_req_rate`, `srv_conn`, `srv_conn_free`, `srv_is_up`, `srv_queue`, `srv_weight`, `srv_iweight`, `srv_uweight`, `srv_sess_rate`, `dst_conn`, `stopping`, `thread`, `proc`, `fc_http_major`, `res.ver`/`resp_ver`, `capture.res.ver`, `hostname`, `rand([<range>])`, `date_us` (rates per second as `show stat` samples them; compared with haproxy in `tests/suite/fetches_differential.rs`), `so_id` (a bind line's `id`, else its number in the proxy), `bc_src`, `bc_dst`, `bc_src_port`, `bc_dst_port` (the server connection's addresses once a response came; not on an HTTP/2 server stream), `bc_http_major`, `fe_defbe`, `src_is_local` and `dst_is_local` (an address this host can bind), `req.body_size` (`Content-Length`, else the body buffered), `last_rule_file`, `last_rule_line` (the last rule that ended a `tcp-request content`, `tcp-response content`, `http-request` or `http-response` set of the stream; haproxy's `http-after-response` rules do not see a `redirect` or `return` there, weir's do), `req.len` in `mode http` (the size haproxy's internal message takes: 25 bytes and the request line's three parts, each header's name and value as the rules see them, one byte, and the body buffered), `var(<name>[,<default>])` (weir answers them whether the frontend logs or not; haproxy only when it logs the request line). Not yet: fetches are not checked against the rule's context (haproxy refuses `be_name` in a frontend's `http-request`; weir answers the frontend's name there). `req.body`, `req.body_len` and `req.body_param` see the body buffered by `option http-buffer-request` or `http-request wait-for-body` (up to `tune.bufsize`; chunked bodies decoded).
- ACL keywords with an implied match: any fetch with `_beg`, `_end`, `_sub`, `_reg`, `_dir`, `_dom`, `_len`, `_ip`, `_str`, `_found` (`path_beg`, `hdr_dom(host)` …); flags `-i -m -f -n -u -M --`; methods `str beg end sub reg dir dom len int ip found bool`; integer operators `eq ge gt le lt` and ranges; predefined ACLs `TRUE FALSE HTTP HTTP_1.0 HTTP_1.1 HTTP_URL_ABS HTTP_URL_SLASH HTTP_URL_STAR HTTP_CONTENT LOCALHOST METH_*`.
- Converters: `lower`, `upper`, `length`, `base64`, `b64dec`, `ub64enc`, `ub64dec`, `hex`, `url_dec` (with `in_form`), `url_enc`, `field`, `word`, `regsub` (HAProxy's `\\1` back-references), `ipmask`, `concat`, `add_item`, `bytes`, `json` (`ascii`, `utf8`, `utf8s`, `utf8p`, `utf8ps`), `fix_is_valid` and `fix_tag_value(<tag>)` (FIX messages, as `req.payload(0,0)` gives them in `mode tcp`), `jwt_header_query` and `jwt_payload_query` (`[<path>[,int]]`: a token's part decoded, whole as the manual says — haproxy 2.6.12 gives nothing without a path — or through `json_query`), `jwt_verify(<alg>,<key>)` (HS256/384/512 with the key as secret, RS256/384/512 and ES256/384/512 with a PEM public key or certificate file read at load time; haproxy 2.6's codes: 1, 0, -1 unknown algorithm, -2 PS* and `none`, -3 invalid token, -5 no key; a constant unknown or PS* algorithm is a configuration error, as in haproxy), `json_query(<path>[,int])` (`$`, `.name` with `\\.` for a dot, `[n]`; strings, booleans, numbers as `%g` or cut to an integer; objects, arrays and `null` give nothing, as in haproxy), `map`/`map_str`/`map_beg`/`map_end`/`map_sub`/`map_reg`/`map_dir`/`map_dom`/`map_ip`/`map_int` (files read at load time), `crc32`, `crc32c`, `djb2`, `sdbm`, `wt6` (with HAProxy's avalanche when the argument is 1), `xxh32`, `xxh64`, `xxh3`, `sha1`, `sha2`, `digest` and `hmac` (sha1, sha224, sha256, sha384, sha512; other OpenSSL digests are refused by name), `add`, `sub`, `mul`, `div`, `mod`, `and`, `or`, `xor` (a constant or a variable), `neg`, `cpl`, `not`, `bool`, `odd`, `even`, `iif`, `strcmp`, `secure_memcmp`, `be2dec`, `be2hex`, `ltrim`, `rtrim`, `cut_crlf`, `host_only`, `port_only`, `hex2i` (nothing for what is not hex, as haproxy answers), `htonl`, `language`, `http_date` (with `ms`/`us` fractions), `utime` and `ltime` (strftime's conversions, the C locale's names), `set-var(<name>[,<cond>…])` and `unset-var(<name>)` (the sample passes on unchanged); `mqtt_is_valid` and `mqtt_field_value(<type>,<field>)` (the first CONNECT or CONNACK of MQTT 3.1, 3.1.1 and 5.0, their fields and 5.0 properties by number; user properties are not offered, as in haproxy); `protobuf(<field>[,<type>])` and `ungrpc(<field>[,<type>])` (a protocol buffers field by its dotted number path, in a message or in gRPC messages, as an integer of the type's wire form or its raw bytes without a type; haproxy 2.6's answers on malformed input, mismatched wire types and floats beyond 64 bits); the stick-table converters `in_table` and `table_*` (see \"Stick tables\"); `capture-req(<id>)` and `capture-res(<id>)` (the sample into the frontend's capture slot `id` for the log, cut to the slot's length, and passed on; an id without a slot fails the sample, as in haproxy; slots are numbered in the order their lines come, whatever their kind); `aes_gcm_dec(<bits>,<nonce>,<key>,<aead_tag>)` (AES-128/192/256-GCM with base64 constants or variables; a tag that does not verify or a key of another size gives nothing, as in haproxy; weir takes the standard 96-bit nonce and 128-bit tag only, where haproxy also takes other nonce lengths and tags cut to 4–15 bytes); `debug` is refused by name; arguments quoted as §2.2 says (a `]` inside quotes or parentheses does not end a `%[` expression). An ACL on a converted sample matches as the last converter's output type (an integer, a boolean, an address). Compared with haproxy 2.6 expression by expression (`tests/suite/converters_differential.rs`). Converters that read binary (`hex`, `base64`, `ub64enc`, `bytes`, the digests, MACs and hashes, `be2dec`, `be2hex`) see an integer or boolean as its 8 bytes big-endian and an address as its octets, as haproxy casts them. Binary samples (from `b64dec`, `ub64dec`, `bytes`, the digests and MACs, `bin()`, `req.payload*`, `res.payload*`, `req.body`, the `ssl_*_der`, `ssl_*_sha1` and `ssl_*_serial` fetches) are a type of their own, as in haproxy: read as a string (a string converter, a header value, a log field, `get var`) they end at their first NUL byte; binary converters (`hex`, `base64`, the hashes, `bytes`, `fix_*`, `mqtt_*`) see them whole. A converter whose input cannot be cast from the sample before it is refused at load time with haproxy's words (`converter 'add' cannot be applied`): a binary or IPv6 address into the integer converters, a binary or boolean into `ipmask`; where the type is only known at run time (a variable, most fetches) nothing is refused.
- `userlist` sections: `user` with `insecure-password` or a SHA-256/SHA-512 crypt `password` (`$5$`, `$6$`; other crypt(3) schemes such as MD5 `$1$`, bcrypt or yescrypt are refused with the line), `groups`, and `group … users`.
- Regular expressions use Rust's `regex` syntax (no back-references or look-around inside patterns), a subset of PCRE: a pattern it cannot compile is a configuration error with its line. `-vv` lists `PCRE2` and `PCRE2_JIT` so that `.if feature(PCRE2)` keeps the lines written for a regex-capable haproxy.

## HTTP behaviour that differs from HAProxy 2.6

- Message framing is read exactly as RFC 9110/9112 write it, so that no server behind weir can read a request differently (request smuggling; crates/weir/tests/suite/smuggling.rs runs 73 hostile requests through weir and, beside it, haproxy 2.6):
  - optional whitespace is space and tab only: a `Transfer-Encoding` or `Content-Length` value padded with any other byte (a non-breaking space, NEL, U+3000, a vertical tab) is a 400, as in HAProxy;
  - `Content-Length` is digits only; identical values, repeated in fields or in one list, are merged into one field before the request is forwarded (as HAProxy); different values are a 400;
  - a request's `Transfer-Encoding` must end with `chunked`, once: otherwise 400; another coding before it (`gzip, chunked`) is a 422, as in HAProxy 2.6; with `Content-Length` too, the length is removed and the connection closes after the response; `Transfer-Encoding: chunked` over HTTP/1.0 is read, then the connection closes (as HAProxy);
  - one `Host` (identical repeats merged, different ones 400); an absolute-form target must agree with `Host`, a scheme's default port (`:80`, `:443`) counting as none, and loses that port (then `Host` too), as HAProxy 2.6 normalises them; `CONNECT` needs `host:port`, and its `Host` loses a default port; `TE` keeps only `trailers` (HAProxy's reg-tests `h1_host_normalization`, `http_transfer_encoding` and `http_request_buffer` pass against weir); a `#fragment`, a byte outside visible ASCII, or an authority-form target outside `CONNECT` is a 400;
  - a head whose bytes are not exactly what weir would write (bare LF line ends, several spaces in the request line, no or several spaces after a colon, merged fields) is written anew in canonical form before it goes to the server; it is never passed through as received. Responses from servers are read and rewritten the same way (an invalid length or coding, or a status below 100, from a server is a 502);
  - the chunked bytes that arrive with a head are checked before anything is sent to a server, and a chunk-size line that cannot become valid is refused at once; a bad chunk later is answered 400 with `connection: close` (the same bytes as HAProxy 2.6), logged with `PH` as HAProxy does, kept for `show errors`, and the server connection is closed, never reused.
- HTTP/2 requests are checked before they become HTTP/1.1 heads: `content-length` against the DATA received, no connection-specific field, no CR, LF or NUL in a field, lower-case names, a `:path` in origin form or `*` (anything else resets the stream, as HAProxy), and a `:scheme` that is a scheme (an invalid one resets the stream; HAProxy answers 400); `host` beside `:authority` is dropped, and `:authority` loses its scheme's default port.
- weir is stricter on requests HAProxy 2.6 forwards: a NUL or other control byte in a header value, an obs-fold continuation line, a bare LF inside a chunked body, and a version other than HTTP/1.0 or 1.1 get a 400 (RFC 9112 lets a proxy reject them; a server behind might read them differently).
- Statuses for oversized requests are the specific ones: a request line longer than `tune.bufsize` gets 414, too many or too large headers 431, where HAProxy 2.6 answers 400 to both.
- A server that answers before the request body has all arrived has its answer relayed at once, and the rest of the body still goes up (as HAProxy 2.6 does); the connection stays usable when both ends complete.
- Pipelined requests sent before the client half-closes are all answered; HAProxy 2.6 may answer only the first.
- Chunked bodies are re-encoded (extensions dropped, trailers kept), as HAProxy does; bodies are never buffered whole.
- The `Connection` field: where weir says `close` (or `keep-alive` to an HTTP/1.0 client, to the server under `option pretend-keepalive`), it takes out only the field's `close` and `keep-alive` tokens and keeps the others (`upgrade`, names of hop-by-hop fields), as HAProxy does. A server's `Connection: keep-alive` reaches an HTTP/1.1 client kept alive as the server sent it, where HAProxy drops the token: a response head nothing changes goes out as its bytes came, not written anew on every response (nginx and Apache send the field on each one). Likewise a client's `keep-alive` token reaches the server.
- After an answer weir makes from a rule (`deny`, `return`, `redirect`, `auth`, and a response rule's `deny`, `return` or `redirect` in place of the server's) on a bodyless request, the client's connection carries the next request, as haproxy's does; it closes after a `tarpit`, a `reject`, and the 400 and 408 pages (which say `connection: close`, as haproxy's). An ACL on `var()` without a converter needs `-m`, as in haproxy.
- `%U` and `%B` (and the `bin`/`bout` statistics and the stick tables' `bytes_in_*`/`bytes_out_*` of HTTP exchanges) count what HAProxy 2.6 counts: the size of its internal (HTX) form of what was received, not the bytes on the wire: a head is 20 bytes plus its start line's three parts and each field's name and value (no `: `, no line ends; a `Connection` field without its `close` and `keep-alive` tokens), plus 1; a body its data (a chunked body's framing left out, its end 1 plus its trailers' names and values); counted as the message came, before any rule rewrote it; weir's own answers (errors, `return`, redirects) as made. Compared with haproxy's exactly over HTTP/1.0, 1.1 and HTTP/2 (crates/weir/tests/suite/byte_counts.rs). A server's interim `1xx` responses count into `%B`, as in haproxy. Every other `httplog` and `httplog clf` field matches HAProxy's (crates/weir/tests/suite/httplog_differential.rs).
";

#[cfg(test)]
#[path = "keywords_tests.rs"]
mod tests;
