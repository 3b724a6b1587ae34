//! The stats page: one HTML document laid out as HAProxy's (process
//! information, a legend, then one table per proxy with its frontend, its
//! servers and its backend, coloured by state), rendered from `show stat`
//! rows. With admin rights each backend table is a form whose action
//! changes the checked servers. The page's requests (`;csv`, `;norefresh`,
//! `;up`, `;st=…`) and the admin form's body are parsed here too.

use crate::stat::Row;

/// What the page shows besides the rows.
#[derive(Debug, Clone, Default)]
pub struct PageInfo {
    /// `stats uri`: where links and the admin form point.
    pub uri: String,
    pub pid: u32,
    /// Empty with `stats hide-version`.
    pub version: String,
    /// The "General process information" box, a line each
    /// ([`process_lines`]).
    pub process: Vec<String>,
    pub refresh_secs: Option<u64>,
    pub show_legends: bool,
    pub admin: bool,
    /// The outcome of the last admin action (`;st=DONE` …), shown on top.
    pub notice: Option<&'static str>,
    /// `stats show-node`: the node named in the title and the report line.
    pub node: Option<String>,
    /// `stats show-desc`: the description after the report line.
    pub desc: Option<String>,
}

/// The process box's lines, as HAProxy words them, from `show info`'s
/// fields (`field` answers a field's name; a missing one reads 0).
pub fn process_lines(field: impl Fn(&str) -> Option<String>) -> Vec<String> {
    let f = |k: &str| field(k).unwrap_or_else(|| "0".into());
    let memmax = match f("Memmax_MB").as_str() {
        "0" => "unlimited".to_string(),
        mb => format!("{mb} MB"),
    };
    let kbps = f("BytesOutRate").parse::<u64>().unwrap_or(0) as f64 * 8.0 / 1000.0;
    vec![
        format!(
            "pid = {} (process #1, nbproc = 1, nbthread = {})",
            f("Pid"),
            f("Nbthread")
        ),
        format!("uptime = {}", f("Uptime")),
        format!("system limits: memmax = {memmax}; ulimit-n = {}", f("Ulimit-n")),
        format!(
            "maxsock = {}; maxconn = {}; maxpipes = {}",
            f("Maxsock"),
            f("Maxconn"),
            f("Maxpipes")
        ),
        format!(
            "current conns = {}; current pipes = {}/{}; conn rate = {}/sec; bit rate = {kbps:.3} kbps",
            f("CurrConns"),
            f("PipesUsed"),
            f("PipesFree"),
            f("ConnRate")
        ),
        format!(
            "Running tasks: {}/{}; idle = {} %",
            f("Run_queue"),
            f("Tasks"),
            f("Idle_pct")
        ),
    ]
}

/// A duration in seconds as HAProxy's page writes it: its two largest
/// units (`3d4h`, `5h6m`, `12m3s`, `7s`).
pub fn human(secs: u64) -> String {
    let (d, h, m, s) = (secs / 86400, secs / 3600 % 24, secs / 60 % 60, secs % 60);
    if d > 0 {
        format!("{d}d{h}h")
    } else if h > 0 {
        format!("{h}h{m}m")
    } else if m > 0 {
        format!("{m}m{s}s")
    } else {
        format!("{s}s")
    }
}

/// A request to the page, from the part of the URI after `stats uri`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PageRequest {
    pub csv: bool,
    pub json: bool,
    pub norefresh: bool,
    /// Only servers that are up.
    pub up: bool,
    /// `st=<code>`: an admin action's outcome.
    pub status: Option<String>,
    /// `scope=<text>`: only the proxies whose name holds it (any case).
    pub scope: Option<String>,
}

impl PageRequest {
    /// Reads `;csv`, `;norefresh`, `;up`, `;st=…` (in any order, in the
    /// path or the query, as haproxy finds them) and `scope=…`.
    pub fn parse(rest: &str) -> PageRequest {
        let mut r = PageRequest::default();
        for (i, part) in rest.split(';').enumerate() {
            // A token ends where the query or one of its parameters starts.
            let token = part.split(['?', '&']).next().unwrap_or("");
            match token {
                _ if i == 0 => {}
                "csv" => r.csv = true,
                "json" => r.json = true,
                "norefresh" => r.norefresh = true,
                "up" => r.up = true,
                p if p.starts_with("st=") => r.status = p.get(3..).map(str::to_string),
                _ => {}
            }
        }
        let query = rest.split_once('?').map_or("", |(_, q)| q);
        r.scope = query
            .split(['&', ';'])
            .find_map(|p| p.strip_prefix("scope="))
            .filter(|s| !s.is_empty())
            .map(str::to_string);
        r
    }

    /// Whether proxy `name` is in the request's `scope` (all without one).
    pub fn in_scope(&self, name: &str) -> bool {
        self.scope
            .as_ref()
            .is_none_or(|s| name.to_ascii_lowercase().contains(&s.to_ascii_lowercase()))
    }
}

/// An admin form's action.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageAction {
    Ready,
    Drain,
    Maint,
    DisableHealth,
    EnableHealth,
}

/// A posted admin form: the backend (`b`, a name or `#<id>`), the action,
/// the checked servers (`s`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageForm {
    pub backend: String,
    pub action: PageAction,
    pub servers: Vec<String>,
}

/// The outcome codes an admin action redirects with (`;st=<code>`), and
/// the notice each shows.
pub const OUTCOMES: &[(&str, &str)] = &[
    ("DONE", "The action was applied."),
    ("NONE", "Nothing to do: no server was selected."),
    ("PART", "The action was applied to some servers only."),
    ("ERRP", "The request could not be understood."),
    ("UNKN", "Unknown action."),
    ("DENY", "Not allowed."),
];

fn url_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        let hex = b
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (c, hex) {
            (b'+', _) => out.push(b' '),
            (b'%', Some(v)) => {
                out.push(v);
                i += 2;
            }
            (c, _) => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl PageForm {
    /// Parses an `application/x-www-form-urlencoded` body; `Err` carries
    /// the outcome code to redirect with.
    pub fn parse(body: &[u8]) -> Result<PageForm, &'static str> {
        let text = std::str::from_utf8(body).map_err(|_| "ERRP")?;
        let (mut backend, mut action, mut servers) = (None, None, Vec::new());
        for kv in text.split('&').filter(|kv| !kv.is_empty()) {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            let v = url_decode(v);
            match k {
                "b" => backend = Some(v),
                "s" => servers.push(v),
                "action" => {
                    action = Some(match v.as_str() {
                        "ready" => PageAction::Ready,
                        "drain" => PageAction::Drain,
                        "maint" => PageAction::Maint,
                        "dhlth" => PageAction::DisableHealth,
                        "ehlth" => PageAction::EnableHealth,
                        _ => return Err("UNKN"),
                    })
                }
                _ => {}
            }
        }
        let backend = backend.ok_or("ERRP")?;
        let action = action.ok_or("ERRP")?;
        if servers.is_empty() {
            return Err("NONE");
        }
        Ok(PageForm {
            backend,
            action,
            servers,
        })
    }
}

/// Escapes text for HTML.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "body{font-family:arial,helvetica,sans-serif;font-size:12px;color:#000;background:#fff}\
h1{font-size:18px;margin:4px 0;color:#fff;background:#20507a;padding:4px}\
h2{font-size:14px;margin:8px 0 2px}\
table.tbl{border-collapse:collapse;border:1px solid #999;margin-bottom:8px}\
table.tbl th,table.tbl td{border:1px solid #999;padding:1px 4px;text-align:right;white-space:nowrap}\
table.tbl th.pxname{background:#b00040;color:#ffff40;text-align:left;font-size:13px}\
table.tbl th{background:#20507a;color:#fff}\
td.name{text-align:left}\
tr.frontend td,tr.backend td{background:#e8e8d0;font-weight:bold}\
tr.active_up td{background:#c0ffc0}\
tr.active_going_down td{background:#ffffa0}\
tr.active_going_up td{background:#ffd020}\
tr.active_down td{background:#ff9090}\
tr.active_no_check td{background:#e0e0e0}\
tr.maintain td{background:#c07820}\
tr.draining td{background:#20a0ff}\
tr.backup_up td{background:#b0d0ff}\
tr.backup_down td{background:#ff9090}\
table.legend td{padding:1px 6px;text-align:left}\
.notice{border:1px solid #20507a;padding:4px;margin:6px 0;background:#ffffe0}";

/// The CSS class of a server row: its state and whether it is a backup.
pub fn row_class(r: &Row) -> &'static str {
    let st = r.get("status").unwrap_or("");
    let backup = r.get("bck") == Some("1");
    match st {
        "MAINT" => "maintain",
        "DRAIN" => "draining",
        "no check" => {
            if backup {
                "backup_up"
            } else {
                "active_no_check"
            }
        }
        s if s.starts_with("UP ") => "active_going_down",
        s if s.starts_with("DOWN ") => "active_going_up",
        s if s.starts_with("UP") => {
            if backup {
                "backup_up"
            } else {
                "active_up"
            }
        }
        _ => {
            if backup {
                "backup_down"
            } else {
                "active_down"
            }
        }
    }
}

/// A cell's text: the `show stat` value, or what the page makes of it
/// (durations, the time in the current state, the last check's time).
fn cell_text(r: &Row, col: &str) -> String {
    let v = r.get(col).unwrap_or("");
    let secs = |c: &str| r.get(c).and_then(|v| v.parse::<u64>().ok());
    match col {
        "lastsess" => match v.parse::<i64>() {
            Ok(n) if n >= 0 => human(n as u64),
            Ok(_) => "?".into(),
            Err(_) => String::new(),
        },
        "downtime" => secs(col).map(human).unwrap_or_default(),
        "status" => match secs("lastchg") {
            Some(t) => format!("{} {v}", human(t)),
            None => v.to_string(),
        },
        "check_status" if !v.is_empty() => match r.get("check_duration") {
            Some(ms) if !ms.is_empty() => format!("{v} in {ms}ms"),
            _ => v.to_string(),
        },
        "throttle" if r.get("type") == Some("2") => {
            if v.is_empty() {
                "-".into()
            } else {
                format!("{v} %")
            }
        }
        _ => v.to_string(),
    }
}

fn cell(r: &Row, col: &str) -> String {
    format!("<td>{}</td>", esc(&cell_text(r, col)))
}

/// The table columns after the name, grouped as HAProxy groups them.
const GROUPS: &[(&str, &[(&str, &str)])] = &[
    (
        "Queue",
        &[("Cur", "qcur"), ("Max", "qmax"), ("Limit", "qlimit")],
    ),
    (
        "Session rate",
        &[("Cur", "rate"), ("Max", "rate_max"), ("Limit", "rate_lim")],
    ),
    (
        "Sessions",
        &[
            ("Cur", "scur"),
            ("Max", "smax"),
            ("Limit", "slim"),
            ("Total", "stot"),
            ("LbTot", "lbtot"),
            ("Last", "lastsess"),
        ],
    ),
    ("Bytes", &[("In", "bin"), ("Out", "bout")]),
    ("Denied", &[("Req", "dreq"), ("Resp", "dresp")]),
    (
        "Errors",
        &[("Req", "ereq"), ("Conn", "econ"), ("Resp", "eresp")],
    ),
    ("Warnings", &[("Retr", "wretr"), ("Redis", "wredis")]),
    (
        "Server",
        &[
            ("Status", "status"),
            ("LastChk", "check_status"),
            ("Wght", "weight"),
            ("Act", "act"),
            ("Bck", "bck"),
            ("Chk", "chkfail"),
            ("Dwn", "chkdown"),
            ("Dwntme", "downtime"),
            ("Thrtle", "throttle"),
        ],
    ),
];

fn table_head(out: &mut String, px: &str, admin: bool) {
    let ncols: usize = GROUPS.iter().map(|g| g.1.len()).sum::<usize>() + 1 + usize::from(admin);
    out.push_str(&format!(
        "<table class=\"tbl\" id=\"px-{0}\"><tr><th class=\"pxname\" colspan=\"{ncols}\"><a name=\"{0}\">{0}</a></th></tr>\n<tr>",
        esc(px)
    ));
    if admin {
        out.push_str("<th rowspan=\"2\"></th>");
    }
    out.push_str("<th rowspan=\"2\"></th>");
    for (g, cols) in GROUPS {
        out.push_str(&format!("<th colspan=\"{}\">{g}</th>", cols.len()));
    }
    out.push_str("</tr>\n<tr>");
    for (_, cols) in GROUPS {
        for (h, _) in *cols {
            out.push_str(&format!("<th>{h}</th>"));
        }
    }
    out.push_str("</tr>\n");
}

fn table_row(out: &mut String, r: &Row, class: &str, admin: bool, checkbox: bool) {
    let name = r.get("svname").unwrap_or("");
    let label = match name {
        "FRONTEND" => "Frontend",
        "BACKEND" => "Backend",
        n => n,
    };
    out.push_str(&format!("<tr class=\"{class}\" data-sv=\"{}\">", esc(name)));
    if admin {
        if checkbox {
            out.push_str(&format!(
                "<td><input type=\"checkbox\" name=\"s\" value=\"{}\"></td>",
                esc(name)
            ));
        } else {
            out.push_str("<td></td>");
        }
    }
    out.push_str(&format!("<td class=\"name\">{}</td>", esc(label)));
    for (_, cols) in GROUPS {
        for (_, col) in *cols {
            out.push_str(&cell(r, col));
        }
    }
    out.push_str("</tr>\n");
}

/// The whole page for `rows` (in `show stat` order).
pub fn html(info: &PageInfo, rows: &[Row], req: &PageRequest) -> String {
    let mut out = String::with_capacity(8192 + rows.len() * 600);
    out.push_str("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">");
    let on_node = info
        .node
        .as_deref()
        .map(|n| format!(" on {}", esc(n)))
        .unwrap_or_default();
    out.push_str(&format!(
        "<title>Statistics Report for weir pid {}{on_node}</title>",
        info.pid
    ));
    if let (Some(s), false) = (info.refresh_secs, req.norefresh) {
        out.push_str(&format!("<meta http-equiv=\"refresh\" content=\"{s}\">"));
    }
    out.push_str(&format!("<style>{STYLE}</style></head><body>\n"));
    let version = if info.version.is_empty() {
        String::new()
    } else {
        format!(" version {}", esc(&info.version))
    };
    out.push_str(&format!("<h1>weir{version}</h1>\n"));
    let desc = info
        .desc
        .as_deref()
        .map(|d| format!(": {}", esc(d)))
        .unwrap_or_default();
    out.push_str(&format!(
        "<h2>Statistics Report for pid {}{on_node}{desc}</h2>\n<table class=\"info\"><tr><td>\
         <b>General process information</b>",
        info.pid
    ));
    for line in &info.process {
        out.push_str(&format!("<br>{}", esc(line)));
    }
    out.push_str("</td><td>");
    out.push_str(
        "<table class=\"legend tbl\">\
         <tr class=\"active_up\"><td>active UP</td></tr>\
         <tr class=\"active_going_down\"><td>active UP, going down</td></tr>\
         <tr class=\"active_going_up\"><td>active DOWN, going up</td></tr>\
         <tr class=\"active_down\"><td>active or backup DOWN</td></tr>\
         <tr class=\"active_no_check\"><td>not checked</td></tr>\
         <tr class=\"maintain\"><td>MAINT (administratively down)</td></tr>\
         <tr class=\"draining\"><td>DRAIN (no new traffic)</td></tr>\
         <tr class=\"backup_up\"><td>backup UP</td></tr></table>",
    );
    let u = esc(&info.uri);
    out.push_str(&format!(
        "</td><td><b>Display options:</b><ul><li><a href=\"{u};up\">Hide DOWN servers</a></li>\
         <li><a href=\"{u};norefresh\">Disable refresh</a></li><li><a href=\"{u}\">Refresh now</a></li>\
         <li><a href=\"{u};csv\">CSV export</a></li></ul></td></tr></table>\n"
    ));
    if let Some(n) = info.notice {
        out.push_str(&format!("<p class=\"notice\">{}</p>\n", esc(n)));
    }
    // Only tables with servers are admin forms.
    let with_servers: std::collections::HashSet<&str> = rows
        .iter()
        .filter(|r| r.get("type") == Some("2"))
        .filter_map(|r| r.get("pxname"))
        .collect();
    let mut open: Option<(String, bool)> = None;
    for r in rows {
        let px = r.get("pxname").unwrap_or("").to_string();
        if open.as_ref().map(|o| &o.0) != Some(&px) {
            if let Some((_, admin)) = open.take() {
                close_table(&mut out, admin);
            }
            let admin = info.admin && with_servers.contains(px.as_str());
            if admin {
                out.push_str(&format!(
                    "<form method=\"post\" action=\"{u}\"><input type=\"hidden\" name=\"b\" value=\"{}\">",
                    esc(&px)
                ));
            }
            table_head(&mut out, &px, admin);
            open = Some((px.clone(), admin));
        }
        let admin = open.as_ref().is_some_and(|o| o.1);
        if r.get("type") == Some("3") {
            // Listener rows (`option socket-stats`): in the CSV and JSON
            // exports only.
            continue;
        }
        match r.get("svname") {
            Some("FRONTEND") => table_row(&mut out, r, "frontend", admin, false),
            Some("BACKEND") => table_row(&mut out, r, "backend", admin, false),
            _ => table_row(&mut out, r, row_class(r), admin, true),
        }
    }
    if let Some((_, admin)) = open {
        close_table(&mut out, admin);
    }
    if info.show_legends {
        out.push_str("<p>Legend: Cur = current, Max = highest seen, Limit = configured limit, LbTot = times picked by the balancer, Chk = failed checks, Dwn = UP to DOWN transitions, Dwntme = total time down.</p>\n");
    }
    out.push_str("</body></html>\n");
    out
}

fn close_table(out: &mut String, admin: bool) {
    out.push_str("</table>\n");
    if admin {
        out.push_str(
            "<p>Choose the action to perform on the checked servers: <select name=\"action\">\
             <option value=\"\"></option><option value=\"ready\">Set state to READY</option>\
             <option value=\"drain\">Set state to DRAIN</option><option value=\"maint\">Set state to MAINT</option>\
             <option value=\"dhlth\">Health: disable checks</option><option value=\"ehlth\">Health: enable checks</option>\
             </select> <input type=\"submit\" value=\"Apply\"></p></form>\n",
        );
    }
}

#[cfg(test)]
#[path = "page_tests.rs"]
mod tests;
