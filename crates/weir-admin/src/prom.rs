//! The Prometheus exporter (`http-request use-service
//! prometheus-exporter`): HAProxy 2.6's metric names, types and labels, so
//! dashboards made for HAProxy work unchanged. Every metric is a `show
//! info` field or a `show stat` column under another name; this table maps
//! one to the other, and a value weir leaves empty is not exported.

use crate::stat::Row;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Gauge,
    Counter,
}

/// One metric: its name after `haproxy_<object>_`, its type, the field or
/// column it reads, and its help text. `ms`: the source is in
/// milliseconds and the metric in seconds.
#[derive(Clone, Copy)]
struct M {
    name: &'static str,
    kind: Kind,
    src: &'static str,
    help: &'static str,
    ms: bool,
    /// Exported as `NaN` when the column is empty (a figure that does not
    /// apply to the object: no check, no limit), as HAProxy does.
    nan: bool,
}

impl M {
    const fn or_nan(self) -> M {
        M { nan: true, ..self }
    }
}

const fn g(name: &'static str, src: &'static str, help: &'static str) -> M {
    M {
        name,
        kind: Kind::Gauge,
        src,
        help,
        ms: false,
        nan: false,
    }
}
const fn c(name: &'static str, src: &'static str, help: &'static str) -> M {
    M {
        name,
        kind: Kind::Counter,
        src,
        help,
        ms: false,
        nan: false,
    }
}
const fn s(name: &'static str, src: &'static str, help: &'static str) -> M {
    M {
        name,
        kind: Kind::Gauge,
        src,
        help,
        ms: true,
        nan: false,
    }
}

/// `haproxy_process_*`, from `show info`.
const PROCESS: &[M] = &[
    g("nbthread", "Nbthread", "Worker threads."),
    g("nbproc", "Nbproc", "Processes (always 1)."),
    g(
        "relative_process_id",
        "Process_num",
        "This process's number.",
    ),
    g("uptime_seconds", "Uptime_sec", "Seconds since start."),
    g("max_fds", "Ulimit-n", "The file descriptor limit."),
    g("max_sockets", "Maxsock", "Most sockets at once."),
    g("max_connections", "Maxconn", "The global connection limit."),
    g(
        "hard_max_connections",
        "Hard_maxconn",
        "The connection limit at start.",
    ),
    g(
        "current_connections",
        "CurrConns",
        "Client connections open now.",
    ),
    c(
        "connections_total",
        "CumConns",
        "Client connections accepted since start.",
    ),
    c(
        "requests_total",
        "CumReq",
        "HTTP requests received since start.",
    ),
    c(
        "ssl_connections_total",
        "CumSslConns",
        "TLS handshakes completed since start.",
    ),
    g("stopping", "Stopping", "1 while stopping softly."),
    g("jobs", "Jobs", "Connections and listeners alive."),
    g("listeners", "Listeners", "Listening sockets."),
    c(
        "bytes_out_total",
        "TotalBytesOut",
        "Bytes sent to clients since start.",
    ),
    g(
        "start_time_seconds",
        "Start_time_sec",
        "Start time, in seconds since the epoch.",
    ),
    g(
        "current_connection_rate",
        "ConnRate",
        "Connections accepted in the last second.",
    ),
    g(
        "max_connection_rate",
        "MaxConnRate",
        "Most connections accepted in one second.",
    ),
    g(
        "current_session_rate",
        "SessRate",
        "Sessions started in the last second.",
    ),
    g(
        "max_session_rate",
        "MaxSessRate",
        "Most sessions started in one second.",
    ),
];

/// `haproxy_frontend_*`.
/// The frontend metrics a listener has too (`option socket-stats`), by
/// their sources; the others (rates, HTTP requests) are the frontend's.
const LISTENER_SOURCES: &[&str] = &[
    "scur", "smax", "slim", "stot", "bin", "bout", "dreq", "dresp", "ereq", "dcon", "dses", "wrew",
    "eint",
];

const FRONTEND: &[M] = &[
    g("current_sessions", "scur", "Client connections open now."),
    g(
        "max_sessions",
        "smax",
        "Most client connections open at once.",
    ),
    g("limit_sessions", "slim", "The connection limit (maxconn)."),
    c("sessions_total", "stot", "Client connections accepted."),
    g(
        "max_session_rate",
        "rate_max",
        "Most connections accepted in one second.",
    ),
    g(
        "connections_rate_max",
        "conn_rate_max",
        "Most connections accepted in one second.",
    ),
    g(
        "http_requests_rate_max",
        "req_rate_max",
        "Most HTTP requests received in one second.",
    ),
    c("bytes_in_total", "bin", "Bytes received from clients."),
    c("bytes_out_total", "bout", "Bytes sent to clients."),
    c("requests_denied_total", "dreq", "Requests denied by rules."),
    c(
        "responses_denied_total",
        "dresp",
        "Responses denied by rules.",
    ),
    c(
        "request_errors_total",
        "ereq",
        "Invalid, aborted or timed-out requests.",
    ),
    c("http_requests_total", "req_tot", "HTTP requests received."),
    c("connections_total", "conn_tot", "Connections accepted."),
    c(
        "intercepted_requests_total",
        "intercepted",
        "Requests answered by the proxy itself.",
    ),
    c(
        "denied_connections_total",
        "dcon",
        "Connections refused by tcp-request connection rules.",
    ),
    c(
        "denied_sessions_total",
        "dses",
        "Sessions refused by tcp-request session rules.",
    ),
    c(
        "failed_header_rewriting_total",
        "wrew",
        "Header rewrites that failed.",
    ),
    c("internal_errors_total", "eint", "Internal errors."),
];

/// `haproxy_backend_*` and `haproxy_server_*` alike.
const BACKEND_AND_SERVER: &[M] = &[
    g(
        "current_queue",
        "qcur",
        "Requests waiting in the queue now.",
    ),
    g("max_queue", "qmax", "Most requests waiting at once."),
    g("current_sessions", "scur", "Server connections in use now."),
    g(
        "max_sessions",
        "smax",
        "Most server connections in use at once.",
    ),
    g("limit_sessions", "slim", "The connection limit.").or_nan(),
    c(
        "sessions_total",
        "stot",
        "Exchanges and sessions sent there.",
    ),
    g(
        "max_session_rate",
        "rate_max",
        "Most exchanges and sessions sent there in one second.",
    ),
    g(
        "last_session_seconds",
        "lastsess",
        "Seconds since the last exchange or session sent there.",
    ),
    c(
        "bytes_in_total",
        "bin",
        "Bytes received from clients for it.",
    ),
    c("bytes_out_total", "bout", "Bytes sent to clients from it."),
    c(
        "responses_denied_total",
        "dresp",
        "Responses denied by rules.",
    ),
    c(
        "connection_errors_total",
        "econ",
        "Failed connections to servers.",
    ),
    c(
        "response_errors_total",
        "eresp",
        "Bad, missing or timed-out server responses.",
    ),
    c("retry_warnings_total", "wretr", "Connection retries."),
    c(
        "redispatch_warnings_total",
        "wredis",
        "Redispatches to another server.",
    ),
    g(
        "weight",
        "weight",
        "Effective weight (a backend: of the servers in use).",
    ),
    c("check_up_down_total", "chkdown", "UP to DOWN transitions.").or_nan(),
    g(
        "check_last_change_seconds",
        "lastchg",
        "Seconds since the last state change.",
    ),
    c("downtime_seconds_total", "downtime", "Seconds spent DOWN.").or_nan(),
    c(
        "loadbalanced_total",
        "lbtot",
        "Times the balancer picked a server.",
    ),
    c(
        "client_aborts_total",
        "cli_abrt",
        "Transfers the client aborted.",
    ),
    c(
        "server_aborts_total",
        "srv_abrt",
        "Transfers the server aborted.",
    ),
    s(
        "queue_time_average_seconds",
        "qtime",
        "Average time in the queue.",
    ),
    s(
        "connect_time_average_seconds",
        "ctime",
        "Average connect time.",
    ),
    s(
        "response_time_average_seconds",
        "rtime",
        "Average response time.",
    ),
    s("total_time_average_seconds", "ttime", "Average total time."),
    c(
        "failed_header_rewriting_total",
        "wrew",
        "Header rewrites that failed.",
    ),
    c(
        "connection_attempts_total",
        "connect",
        "Connection attempts to servers.",
    ),
    c(
        "connection_reuses_total",
        "reuse",
        "Server connections reused.",
    ),
    s(
        "max_queue_time_seconds",
        "qtime_max",
        "Longest time in the queue.",
    ),
    s(
        "max_connect_time_seconds",
        "ctime_max",
        "Longest connect time.",
    ),
    s(
        "max_response_time_seconds",
        "rtime_max",
        "Longest response time.",
    ),
    s("max_total_time_seconds", "ttime_max", "Longest total time."),
    c("internal_errors_total", "eint", "Internal errors."),
    g(
        "uweight",
        "uweight",
        "User weight (a backend: of its servers).",
    ),
];

/// `haproxy_backend_*` only.
const BACKEND: &[M] = &[
    c("requests_denied_total", "dreq", "Requests denied by rules."),
    g("active_servers", "act", "Active servers in use."),
    g("backup_servers", "bck", "Backup servers in use."),
    c(
        "http_requests_total",
        "req_tot",
        "HTTP requests sent to this backend.",
    ),
];

/// `haproxy_server_*` only.
const SERVER: &[M] = &[
    c("check_failures_total", "chkfail", "Failed health checks.").or_nan(),
    g("queue_limit", "qlimit", "The server's maxqueue.").or_nan(),
    g(
        "current_throttle",
        "throttle",
        "Percent of its weight a server ramping up has.",
    )
    .or_nan(),
    g(
        "idle_connections_limit",
        "src_ilim",
        "The server's pool-max-conn.",
    )
    .or_nan(),
    g("check_code", "check_code", "HTTP status of the last check."),
    s(
        "check_duration_seconds",
        "check_duration",
        "Duration of the last check.",
    ),
    g(
        "idle_connections_current",
        "srv_icur",
        "Idle connections now.",
    ),
    g(
        "unsafe_idle_connections_current",
        "idle_conn_cur",
        "Idle connections not safe to reuse now.",
    ),
    g(
        "safe_idle_connections_current",
        "safe_conn_cur",
        "Idle connections safe to reuse now.",
    ),
    g(
        "used_connections_current",
        "used_conn_cur",
        "Connections in use now.",
    ),
    g(
        "need_connections_current",
        "need_conn_est",
        "Connections estimated to be needed.",
    ),
];

/// `haproxy_server_check_status` states, in HAProxy's order.
const CHECK_STATES: &[&str] = &[
    "HANA", "SOCKERR", "L4OK", "L4TOUT", "L4CON", "L6OK", "L6TOUT", "L6RSP", "L7TOUT", "L7RSP",
    "L7OK", "L7OKC", "L7STS", "PROCERR", "PROCTOUT", "PROCOK",
];

/// What a request asks for: `?scope=global|frontend|backend|server|sticktable`
/// (repeatable; none means all, an empty one means none of them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scope {
    pub global: bool,
    pub frontend: bool,
    pub backend: bool,
    pub server: bool,
    pub sticktable: bool,
    pub listener: bool,
}

impl Scope {
    /// Reads the query string (without `?`); `None` for an unknown scope
    /// (answered 400, as HAProxy does).
    pub fn parse(query: &str) -> Option<Scope> {
        let mut any = false;
        let mut sc = Scope {
            global: false,
            frontend: false,
            backend: false,
            server: false,
            sticktable: false,
            listener: false,
        };
        for kv in query.split('&') {
            if kv == "scope" {
                // A scope without a value: haproxy answers 400.
                return None;
            }
            let Some(v) = kv.strip_prefix("scope=") else {
                continue;
            };
            any = true;
            match v {
                "global" => sc.global = true,
                "frontend" => sc.frontend = true,
                "backend" => sc.backend = true,
                "server" => sc.server = true,
                "sticktable" => sc.sticktable = true,
                "listener" => sc.listener = true,
                "" => {}
                _ => return None,
            }
        }
        if !any {
            sc = Scope {
                global: true,
                frontend: true,
                backend: true,
                server: true,
                sticktable: true,
                listener: true,
            };
        }
        Some(sc)
    }
}

/// `proxy="…"` and, for servers, `server="…"`, escaped as the format wants.
fn labels(row: &Row, server: impl Into<Second>) -> String {
    let server = server.into();
    let esc = |v: &str| {
        v.replace('\\', "\\\\")
            .replace('"', "\\\"")
            .replace('\n', "\\n")
    };
    let px = esc(row.get("pxname").unwrap_or(""));
    match server.0 {
        Some(l) => format!(
            "proxy=\"{px}\",{l}=\"{}\"",
            esc(row.get("svname").unwrap_or(""))
        ),
        None => format!("proxy=\"{px}\""),
    }
}

/// The label a row's `svname` goes in, after the proxy's: `server` for
/// servers (`true`), `listener` for listeners, none for proxies.
#[derive(Debug, Clone, Copy)]
struct Second(Option<&'static str>);

impl From<bool> for Second {
    fn from(server: bool) -> Second {
        Second(server.then_some("server"))
    }
}

/// The listeners' label.
const LISTENER_LABEL: Second = Second(Some("listener"));

fn family(out: &mut String, name: &str, kind: Kind, help: &str) {
    let t = match kind {
        Kind::Gauge => "gauge",
        Kind::Counter => "counter",
    };
    out.push_str(&format!("# HELP {name} {help}\n# TYPE {name} {t}\n"));
}

/// A stick table's figures: name, key type, size and entries used.
pub type TableFigures<'a> = (&'a str, &'a str, usize, usize);

/// The `sticktable` scope: each table's size and use (in the order given).
pub fn render_tables(tables: &[TableFigures<'_>]) -> String {
    let mut out = String::new();
    if tables.is_empty() {
        return out;
    }
    for (name, help, size) in [
        ("haproxy_sticktable_size", "Stick table size.", true),
        (
            "haproxy_sticktable_used",
            "Number of entries used in this stick table.",
            false,
        ),
    ] {
        family(&mut out, name, Kind::Gauge, help);
        for (t, ty, sz, used) in tables {
            let v = if size { sz } else { used };
            let t = t.replace('\\', "\\\\").replace('"', "\\\"");
            out.push_str(&format!("{name}{{name=\"{t}\",type=\"{ty}\"}} {v}\n"));
        }
    }
    out
}

/// A numeric value as exported, or `None` when the source is empty or not
/// a number.
fn value(v: &str, ms: bool) -> Option<String> {
    let n: f64 = v.trim().parse().ok()?;
    if ms {
        Some(format!("{:.6}", n / 1000.0))
    } else {
        Some(v.trim().to_string())
    }
}

/// One object kind's metrics over `rows` of it.
fn objects(
    out: &mut String,
    object: &str,
    tables: &[&[M]],
    rows: &[&Row],
    server: impl Into<Second>,
) {
    let server = server.into();
    for m in tables.iter().flat_map(|t| t.iter()) {
        let samples: Vec<String> = rows
            .iter()
            .filter_map(|r| {
                let raw = r.get(m.src)?;
                let v = match value(raw, m.ms) {
                    Some(v) => v,
                    None if m.nan && raw.trim().is_empty() => "NaN".to_string(),
                    None => return None,
                };
                Some(format!(
                    "haproxy_{object}_{}{{{}}} {v}\n",
                    m.name,
                    labels(r, server)
                ))
            })
            .collect();
        if samples.is_empty() {
            continue;
        }
        family(out, &format!("haproxy_{object}_{}", m.name), m.kind, m.help);
        samples.iter().for_each(|s| out.push_str(s));
    }
}

/// `<object>_status` with one sample per state, 1 for the current one.
fn status(
    out: &mut String,
    object: &str,
    rows: &[&Row],
    server: impl Into<Second>,
    states: &[&str],
    of: impl Fn(&str) -> &'static str,
) {
    let server = server.into();
    if rows.is_empty() {
        return;
    }
    let name = format!("haproxy_{object}_status");
    family(
        out,
        &name,
        Kind::Gauge,
        "Current state, one sample per state (1 for the current one).",
    );
    for r in rows {
        let cur = of(r.get("status").unwrap_or(""));
        for st in states {
            out.push_str(&format!(
                "{name}{{{},state=\"{st}\"}} {}\n",
                labels(r, server),
                u8::from(*st == cur)
            ));
        }
    }
}

/// `<object>_http_responses_total` by status class.
fn responses(out: &mut String, object: &str, rows: &[&Row], server: bool) {
    let classes = [
        ("1xx", "hrsp_1xx"),
        ("2xx", "hrsp_2xx"),
        ("3xx", "hrsp_3xx"),
        ("4xx", "hrsp_4xx"),
        ("5xx", "hrsp_5xx"),
        ("other", "hrsp_other"),
    ];
    let mut samples = String::new();
    for r in rows {
        for (code, col) in classes {
            if let Some(v) = r.get(col).and_then(|v| value(v, false)) {
                samples.push_str(&format!(
                    "haproxy_{object}_http_responses_total{{{},code=\"{code}\"}} {v}\n",
                    labels(r, server)
                ));
            }
        }
    }
    if !samples.is_empty() {
        let name = format!("haproxy_{object}_http_responses_total");
        family(out, &name, Kind::Counter, "HTTP responses by status class.");
        out.push_str(&samples);
    }
}

/// The whole exposition: process metrics from `info` (fields it has a
/// value for), then frontends, backends and servers from `rows`.
pub fn render(
    info: &dyn Fn(&str) -> Option<String>,
    version: &str,
    rows: &[Row],
    scope: Scope,
) -> String {
    let mut out = String::with_capacity(16 * 1024);
    if scope.global {
        for m in PROCESS {
            if let Some(v) = info(m.src).and_then(|v| value(&v, false)) {
                let name = format!("haproxy_process_{}", m.name);
                family(&mut out, &name, m.kind, m.help);
                out.push_str(&format!("{name} {v}\n"));
            }
        }
        family(
            &mut out,
            "haproxy_process_build_info",
            Kind::Gauge,
            "Build information (the version label).",
        );
        out.push_str(&format!(
            "haproxy_process_build_info{{version=\"{version}\"}} 1\n"
        ));
    }
    let of = |t: &str| -> Vec<&Row> { rows.iter().filter(|r| r.get("type") == Some(t)).collect() };
    let (fes, bes, srvs, lsts) = (of("0"), of("1"), of("2"), of("3"));
    if scope.frontend {
        status(&mut out, "frontend", &fes, false, &["DOWN", "UP"], |s| {
            if s == "OPEN" {
                "UP"
            } else {
                "DOWN"
            }
        });
        objects(&mut out, "frontend", &[FRONTEND], &fes, false);
        responses(&mut out, "frontend", &fes, false);
    }
    if scope.listener && !lsts.is_empty() {
        let listener: Vec<M> = FRONTEND
            .iter()
            .filter(|m| LISTENER_SOURCES.contains(&m.src))
            .copied()
            .collect();
        objects(&mut out, "listener", &[&listener], &lsts, LISTENER_LABEL);
        status(
            &mut out,
            "listener",
            &lsts,
            LISTENER_LABEL,
            &["WAITING", "OPEN", "FULL"],
            |s| match s {
                "FULL" => "FULL",
                "OPEN" => "OPEN",
                _ => "WAITING",
            },
        );
    }
    if scope.backend {
        status(&mut out, "backend", &bes, false, &["DOWN", "UP"], |s| {
            if s == "UP" {
                "UP"
            } else {
                "DOWN"
            }
        });
        objects(
            &mut out,
            "backend",
            &[BACKEND_AND_SERVER, BACKEND],
            &bes,
            false,
        );
        responses(&mut out, "backend", &bes, false);
    }
    if scope.server {
        status(
            &mut out,
            "server",
            &srvs,
            true,
            &["DOWN", "UP", "MAINT", "DRAIN", "NOLB"],
            |s| match s {
                "MAINT" => "MAINT",
                "DRAIN" => "DRAIN",
                s if s.starts_with("DOWN") => "DOWN",
                _ => "UP",
            },
        );
        objects(
            &mut out,
            "server",
            &[BACKEND_AND_SERVER, SERVER],
            &srvs,
            true,
        );
        responses(&mut out, "server", &srvs, true);
        let checked: Vec<&&Row> = srvs
            .iter()
            .filter(|r| r.get("check_status").is_some_and(|c| !c.is_empty()))
            .collect();
        if !checked.is_empty() {
            let name = "haproxy_server_check_status";
            family(
                &mut out,
                name,
                Kind::Gauge,
                "Last health check result, one sample per status (1 for the current one).",
            );
            for r in checked {
                let cur = r.get("check_status").unwrap_or("");
                for st in CHECK_STATES {
                    out.push_str(&format!(
                        "{name}{{{},state=\"{st}\"}} {}\n",
                        labels(r, true),
                        u8::from(*st == cur)
                    ));
                }
            }
        }
    }
    out
}

#[cfg(test)]
#[path = "prom_tests.rs"]
mod tests;
