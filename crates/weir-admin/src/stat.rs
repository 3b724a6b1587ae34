//! HAProxy 2.6's output formats: `show stat` CSV (the same columns in the
//! same order, so existing parsers work), `show info` lines and `show
//! servers state`, rendered from values the caller fills in.

/// `show stat` columns, in HAProxy 2.6's order: the 103 base columns, `-`,
/// then its stats modules' columns (TLS, HTTP/2, HTTP/1).
pub const COLUMNS: &[&str] = &[
    "pxname",
    "svname",
    "qcur",
    "qmax",
    "scur",
    "smax",
    "slim",
    "stot",
    "bin",
    "bout",
    "dreq",
    "dresp",
    "ereq",
    "econ",
    "eresp",
    "wretr",
    "wredis",
    "status",
    "weight",
    "act",
    "bck",
    "chkfail",
    "chkdown",
    "lastchg",
    "downtime",
    "qlimit",
    "pid",
    "iid",
    "sid",
    "throttle",
    "lbtot",
    "tracked",
    "type",
    "rate",
    "rate_lim",
    "rate_max",
    "check_status",
    "check_code",
    "check_duration",
    "hrsp_1xx",
    "hrsp_2xx",
    "hrsp_3xx",
    "hrsp_4xx",
    "hrsp_5xx",
    "hrsp_other",
    "hanafail",
    "req_rate",
    "req_rate_max",
    "req_tot",
    "cli_abrt",
    "srv_abrt",
    "comp_in",
    "comp_out",
    "comp_byp",
    "comp_rsp",
    "lastsess",
    "last_chk",
    "last_agt",
    "qtime",
    "ctime",
    "rtime",
    "ttime",
    "agent_status",
    "agent_code",
    "agent_duration",
    "check_desc",
    "agent_desc",
    "check_rise",
    "check_fall",
    "check_health",
    "agent_rise",
    "agent_fall",
    "agent_health",
    "addr",
    "cookie",
    "mode",
    "algo",
    "conn_rate",
    "conn_rate_max",
    "conn_tot",
    "intercepted",
    "dcon",
    "dses",
    "wrew",
    "connect",
    "reuse",
    "cache_lookups",
    "cache_hits",
    "srv_icur",
    "src_ilim",
    "qtime_max",
    "ctime_max",
    "rtime_max",
    "ttime_max",
    "eint",
    "idle_conn_cur",
    "safe_conn_cur",
    "used_conn_cur",
    "need_conn_est",
    "uweight",
    "agg_server_status",
    "agg_server_check_status",
    "agg_check_status",
    "-",
    "ssl_sess",
    "ssl_reused_sess",
    "ssl_failed_handshake",
    "h2_headers_rcvd",
    "h2_data_rcvd",
    "h2_settings_rcvd",
    "h2_rst_stream_rcvd",
    "h2_goaway_rcvd",
    "h2_detected_conn_protocol_errors",
    "h2_detected_strm_protocol_errors",
    "h2_rst_stream_resp",
    "h2_goaway_resp",
    "h2_open_connections",
    "h2_backend_open_streams",
    "h2_total_connections",
    "h2_backend_total_streams",
    "h1_open_connections",
    "h1_open_streams",
    "h1_total_connections",
    "h1_total_streams",
    "h1_bytes_in",
    "h1_bytes_out",
    "h1_spliced_bytes_in",
    "h1_spliced_bytes_out",
];

/// `type` column values.
pub const TYPE_FRONTEND: u32 = 0;
pub const TYPE_BACKEND: u32 = 1;
pub const TYPE_SERVER: u32 = 2;
pub const TYPE_LISTENER: u32 = 3;

/// One `show stat` line: a value per column, empty where nothing applies.
#[derive(Debug, Clone)]
pub struct Row {
    vals: Vec<String>,
}

impl Default for Row {
    fn default() -> Self {
        Row::new()
    }
}

impl Row {
    pub fn new() -> Row {
        Row {
            vals: vec![String::new(); COLUMNS.len()],
        }
    }

    /// Sets column `col` (a name from [`COLUMNS`]; other names are ignored).
    pub fn set(&mut self, col: &str, v: impl ToString) -> &mut Row {
        let i = COLUMNS.iter().position(|c| *c == col);
        if let Some(slot) = i.and_then(|i| self.vals.get_mut(i)) {
            *slot = csv_field(&v.to_string());
        }
        self
    }

    /// Sets several columns to the same value.
    pub fn set_all(&mut self, cols: &[&str], v: impl ToString) -> &mut Row {
        let v = v.to_string();
        for c in cols {
            self.set(c, &v);
        }
        self
    }

    /// The value of column `col`.
    pub fn get(&self, col: &str) -> Option<&str> {
        let i = COLUMNS.iter().position(|c| *c == col)?;
        self.vals.get(i).map(String::as_str)
    }

    /// The CSV line, with the trailing comma HAProxy writes.
    pub fn csv(&self) -> String {
        let mut out = String::with_capacity(512);
        for v in &self.vals {
            out.push_str(v);
            out.push(',');
        }
        out.push('\n');
        out
    }
}

/// A value made safe for the CSV: commas and line ends would break the
/// columns, so they become spaces.
fn csv_field(v: &str) -> String {
    v.chars()
        .map(|c| {
            if matches!(c, ',' | '\n' | '\r') {
                ' '
            } else {
                c
            }
        })
        .collect()
}

/// The CSV header line: `# ` and the columns, with a trailing comma.
pub fn csv_header() -> String {
    let mut out = String::from("# ");
    for c in COLUMNS {
        out.push_str(c);
        out.push(',');
    }
    out.push('\n');
    out
}

/// `show stat`: the header, the rows, and the blank line that ends every
/// answer.
pub fn csv(rows: &[Row]) -> String {
    let mut out = csv_header();
    for r in rows {
        out.push_str(&r.csv());
    }
    out
}

/// `show info` field names, in HAProxy 2.6's order.
pub const INFO_FIELDS: &[&str] = &[
    "Name",
    "Version",
    "Release_date",
    "Nbthread",
    "Nbproc",
    "Process_num",
    "Pid",
    "Uptime",
    "Uptime_sec",
    "Memmax_MB",
    "PoolAlloc_MB",
    "PoolUsed_MB",
    "PoolFailed",
    "Ulimit-n",
    "Maxsock",
    "Maxconn",
    "Hard_maxconn",
    "CurrConns",
    "CumConns",
    "CumReq",
    "MaxSslConns",
    "CurrSslConns",
    "CumSslConns",
    "Maxpipes",
    "PipesUsed",
    "PipesFree",
    "ConnRate",
    "ConnRateLimit",
    "MaxConnRate",
    "SessRate",
    "SessRateLimit",
    "MaxSessRate",
    "SslRate",
    "SslRateLimit",
    "MaxSslRate",
    "SslFrontendKeyRate",
    "SslFrontendMaxKeyRate",
    "SslFrontendSessionReuse_pct",
    "SslBackendKeyRate",
    "SslBackendMaxKeyRate",
    "SslCacheLookups",
    "SslCacheMisses",
    "CompressBpsIn",
    "CompressBpsOut",
    "CompressBpsRateLim",
    "Tasks",
    "Run_queue",
    "Idle_pct",
    "node",
    "Stopping",
    "Jobs",
    "Unstoppable Jobs",
    "Listeners",
    "ActivePeers",
    "ConnectedPeers",
    "DroppedLogs",
    "BusyPolling",
    "FailedResolutions",
    "TotalBytesOut",
    "TotalSplicdedBytesOut",
    "BytesOutRate",
    "DebugCommandsIssued",
    "CumRecvLogs",
    "Build info",
    "Memmax_bytes",
    "PoolAlloc_bytes",
    "PoolUsed_bytes",
    "Start_time_sec",
    "Tainted",
];

/// `show info`: every field of [`INFO_FIELDS`] in order, `0` where `get`
/// has no value for it.
pub fn info(get: impl Fn(&str) -> Option<String>) -> String {
    let mut out = String::new();
    for f in INFO_FIELDS {
        let v = get(f).unwrap_or_else(|| "0".into());
        out.push_str(f);
        out.push_str(": ");
        out.push_str(&v);
        out.push('\n');
    }
    out
}

/// HAProxy's uptime layout: `1d 2h03m04s`.
pub fn uptime(secs: u64) -> String {
    format!(
        "{}d {}h{:02}m{:02}s",
        secs / 86400,
        secs / 3600 % 24,
        secs / 60 % 60,
        secs % 60
    )
}

/// `show servers state` columns (version 1 of the state file).
pub const SERVER_STATE_COLUMNS: &str = "be_id be_name srv_id srv_name srv_addr srv_op_state srv_admin_state srv_uweight srv_iweight srv_time_since_last_change srv_check_status srv_check_result srv_check_health srv_check_state srv_agent_state bk_f_forced_id srv_f_forced_id srv_fqdn srv_port srvrecord srv_use_ssl srv_check_port srv_check_addr srv_agent_addr srv_agent_port";

/// One server in `show servers state`.
#[derive(Debug, Clone, Default)]
pub struct ServerState {
    pub be_id: u32,
    pub be_name: String,
    pub srv_id: u32,
    pub srv_name: String,
    pub addr: String,
    /// 0 stopped, 1 starting, 2 running, 3 stopping.
    pub op_state: u8,
    /// Bit 0x01: forced maintenance; 0x04 `disabled` in the
    /// configuration (kept once enabled, as HAProxy does); 0x08 forced
    /// drain.
    pub admin_state: u8,
    pub uweight: u32,
    pub iweight: u32,
    pub since_change: u64,
    pub check_status: u8,
    pub check_result: u8,
    pub check_health: u32,
    pub check_state: u8,
    /// The backend's and the server's `id` were written.
    pub be_forced_id: bool,
    pub srv_forced_id: bool,
    pub port: u16,
    pub use_ssl: i8,
    pub check_port: u16,
    /// The check address (`addr`, `set server … check-addr`).
    pub check_addr: Option<String>,
    /// The agent check's state bits (as `check_state`), 0 without one.
    pub agent_state: u8,
    pub agent_addr: Option<String>,
    pub agent_port: u16,
    /// The name it resolves (`srv_fqdn`), and the SRV name that gave it
    /// (`srvrecord`).
    pub fqdn: Option<String>,
    pub srvrecord: Option<String>,
}

/// HAProxy's number for a check status (`srv_check_status`): 1 before the
/// first check or without one.
pub fn check_status_number(code: &str) -> u8 {
    const CODES: [&str; 21] = [
        "UNK", "INI", "START", "CHECKED", "HANA", "SOCKERR", "L4OK", "L4TOUT", "L4CON", "L6OK",
        "L6TOUT", "L6RSP", "L7TOUT", "L7RSP", "L57DATA", "L7OK", "L7OKC", "L7STS", "PROCERR",
        "PROCTOUT", "PROCOK",
    ];
    CODES.iter().position(|c| *c == code).map_or(1, |i| i as u8)
}

/// HAProxy's check result (`srv_check_result`): 0 none yet, 2 failed, 3
/// passed, 4 passed on condition (`L7OKC`).
pub fn check_result_number(code: &str) -> u8 {
    match code {
        "" => 0,
        "L7OKC" => 4,
        c if c.ends_with("OK") => 3,
        _ => 2,
    }
}

/// `show servers state`: the format version, the header, one line each.
pub fn servers_state(servers: &[ServerState]) -> String {
    let mut out = format!("1\n# {SERVER_STATE_COLUMNS}\n");
    for s in servers {
        out.push_str(&format!(
            "{} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {}\n",
            s.be_id,
            s.be_name,
            s.srv_id,
            s.srv_name,
            s.addr,
            s.op_state,
            s.admin_state,
            s.uweight,
            s.iweight,
            s.since_change,
            s.check_status,
            s.check_result,
            s.check_health,
            s.check_state,
            s.agent_state,
            u8::from(s.be_forced_id),
            u8::from(s.srv_forced_id),
            s.fqdn.as_deref().unwrap_or("-"),
            s.port,
            s.srvrecord.as_deref().unwrap_or("-"),
            s.use_ssl,
            s.check_port,
            s.check_addr.as_deref().unwrap_or("-"),
            s.agent_addr.as_deref().unwrap_or("-"),
            s.agent_port,
        ));
    }
    out
}

/// Reads a server state file (`server-state-file`, as `show servers
/// state` wrote it): the version line (1), then a server per line; `#`
/// comments and blank lines are skipped. The fields a new process takes
/// over are read (names, ids, address, states, weights, port); lines that
/// cannot be read are left out with a warning naming their line number.
pub fn parse_servers_state(text: &str) -> Result<(Vec<ServerState>, Vec<String>), String> {
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'));
    match lines.next() {
        Some((_, v)) if v.trim() == "1" => {}
        Some((n, v)) => {
            return Err(format!(
                "line {}: unsupported format version '{}'",
                n + 1,
                v.trim()
            ))
        }
        None => return Ok((Vec::new(), Vec::new())),
    }
    let mut out = Vec::new();
    let mut warnings = Vec::new();
    for (n, line) in lines {
        match saved_server(line) {
            Some(s) => out.push(s),
            None => warnings.push(format!(
                "line {}: invalid server state line, ignored",
                n + 1
            )),
        }
    }
    Ok((out, warnings))
}

fn saved_server(line: &str) -> Option<ServerState> {
    let f: Vec<&str> = line.split_whitespace().collect();
    let num = |i: usize| f.get(i)?.parse::<u32>().ok();
    Some(ServerState {
        be_id: num(0)?,
        be_name: f.get(1)?.to_string(),
        srv_id: num(2)?,
        srv_name: f.get(3)?.to_string(),
        addr: f.get(4)?.to_string(),
        op_state: u8::try_from(num(5)?).ok().filter(|s| *s <= 3)?,
        admin_state: u8::try_from(num(6)?).ok()?,
        uweight: num(7)?,
        iweight: num(8)?,
        port: match f.get(18) {
            Some(p) => p.parse().ok()?,
            None => 0,
        },
        ..ServerState::default()
    })
}

#[cfg(test)]
#[path = "stat_tests.rs"]
mod tests;
