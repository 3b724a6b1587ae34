//! `show sess`: one line per client connection in HAProxy 2.6's layout
//! (`0x…: proto=… src=… fe=… be=… srv=… … age=…`), and the detailed
//! multi-line block of `show sess <id>` and `show sess all`, rendered from
//! values the caller gathers.

/// What `show sess` is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessSel {
    /// One line per session.
    List,
    /// The detailed block of every session.
    All,
    /// The detailed block of one session.
    One(u64),
}

/// Reads a session identifier as `show sess` prints it (`0x…`, or bare hex).
pub fn parse_id(s: &str) -> Option<u64> {
    let hex = s
        .strip_prefix("0x")
        .or_else(|| s.strip_prefix("0X"))
        .unwrap_or(s);
    u64::from_str_radix(hex, 16).ok().filter(|v| *v != 0)
}

/// A named object and its numeric id (`fe`, `be`, `srv`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named {
    pub name: String,
    pub id: u32,
}

/// One live client connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessRow {
    pub id: u64,
    /// Its number among the thread's sessions (HAProxy's `id=`).
    pub uniq: u64,
    /// `tcpv4`, `tcpv6` or `unix_stream`.
    pub proto: &'static str,
    /// `ip:port`, or `unix:1`.
    pub src: String,
    /// The address it reached (`addr=` of the listener).
    pub dst: String,
    pub frontend: Named,
    pub mode: &'static str,
    pub backend: Option<Named>,
    pub server: Option<Named>,
    /// The server's address, once a server was chosen.
    pub server_addr: Option<String>,
    pub age_secs: u64,
    /// The accept date as the detailed block prints it.
    pub accepted: String,
    pub fd: i32,
    /// The worker thread (1-based) that owns it.
    pub thread: usize,
    /// Asked to end by `shutdown session`, not ended yet.
    pub killed: bool,
    /// Idle, its session asleep (no task of its own until the client sends).
    pub asleep: bool,
}

/// A duration as HAProxy prints ages: the two largest units (`6s`,
/// `1m3s`, `2h5m`, `3d4h`).
pub fn human_time(secs: u64) -> String {
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

fn name_or<'a>(n: &'a Option<Named>, none: &'a str) -> &'a str {
    n.as_ref().map_or(none, |n| n.name.as_str())
}

/// `show sess`: one line per session.
pub fn lines(rows: &[SessRow]) -> String {
    let mut out = String::new();
    for r in rows {
        out.push_str(&format!(
            "0x{:x}: proto={} src={} fe={} be={} srv={} ts=00 epoch=0 age={} thr={}{}{} scf=[fd={}]\n",
            r.id,
            r.proto,
            r.src,
            r.frontend.name,
            name_or(&r.backend, "<NONE>"),
            name_or(&r.server, "<none>"),
            human_time(r.age_secs),
            r.thread,
            if r.killed { " killed=1" } else { "" },
            if r.asleep { " asleep=1" } else { "" },
            r.fd,
        ));
    }
    out
}

/// `show sess <id>` and `show sess all`: the detailed block of each.
pub fn details(rows: &[SessRow]) -> String {
    let mut out = String::new();
    for r in rows {
        out.push_str(&format!(
            "0x{:x}: [{}] id={} proto={} source={}\n",
            r.id, r.accepted, r.uniq, r.proto, r.src
        ));
        out.push_str(&format!(
            "  frontend={} (id={} mode={}), addr={}\n",
            r.frontend.name, r.frontend.id, r.mode, r.dst
        ));
        match &r.backend {
            Some(b) => out.push_str(&format!(
                "  backend={} (id={} mode={})\n",
                b.name, b.id, r.mode
            )),
            None => out.push_str("  backend=<NONE> (id=-1 mode=-)\n"),
        }
        match &r.server {
            Some(s) => out.push_str(&format!(
                "  server={} (id={}) addr={}\n",
                s.name,
                s.id,
                r.server_addr.as_deref().unwrap_or("-")
            )),
            None => out.push_str("  server=<NONE> (id=-1)\n"),
        }
        out.push_str(&format!(
            "  thread={} age={} killed={} asleep={}\n",
            r.thread,
            human_time(r.age_secs),
            u8::from(r.killed),
            u8::from(r.asleep)
        ));
        out.push_str(&format!("  scf fd={}\n", r.fd));
    }
    out
}

#[cfg(test)]
#[path = "sess_tests.rs"]
mod tests;
