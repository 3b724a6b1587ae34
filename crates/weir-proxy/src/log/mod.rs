//! Log sinks (UDP syslog, unix datagram, stdout/stderr, rings), syslog
//! framing (rfc3164, rfc5424, short, raw), the relay of received
//! messages (`log-forward`) and rendering of compiled log formats.

pub mod ring;

use crate::ids::ServerId;
use crate::sys;
use crate::term::Term;
use std::fmt::Write as _;
use std::net::UdpSocket;
use std::os::unix::net::UnixDatagram;
use std::sync::Arc;
use weir_config::logformat::{LogFormat, Piece, Var};
use weir_config::{LogDest, LogFormatKind, LogTarget};

/// Syslog severities used by weir.
pub mod level {
    pub const EMERG: u8 = 0;
    pub const ALERT: u8 = 1;
    pub const WARNING: u8 = 4;
    pub const NOTICE: u8 = 5;
    pub const INFO: u8 = 6;
    pub const ERR: u8 = 3;
}

enum Out {
    Udp(UdpSocket),
    Unix(UnixDatagram, String),
    /// A non-blocking description of stdout/stderr: a reader that stalls
    /// loses lines instead of stalling the event loop.
    Stream(std::fs::File),
    /// stdout/stderr is a socket (systemd's journal): a copy of the
    /// descriptor, written with non-blocking sends.
    Socket(std::os::fd::OwnedFd),
    Ring(Arc<ring::Ring>),
}

/// One opened `log` target.
pub struct Sink {
    target: LogTarget,
    out: Out,
    /// Lines that reached this target (`sample` picks from them).
    count: std::sync::atomic::AtomicU32,
}

/// The targets of one proxy (or of `global`), with the identity stamped on
/// each message.
#[derive(Clone, Default)]
pub struct Logger {
    sinks: Vec<Arc<Sink>>,
    tag: Arc<str>,
    host: Arc<str>,
    pid: u32,
}

/// Opens a target. Errors name the target.
pub fn open_sink(
    t: &LogTarget,
    resolve: &dyn Fn(&weir_config::addr::ServerAddr) -> Result<std::net::SocketAddr, String>,
    rings: &dyn Fn(&str) -> Option<Arc<ring::Ring>>,
) -> Result<Arc<Sink>, String> {
    let out = match &t.dest {
        LogDest::Ring(name) => Out::Ring(rings(name).ok_or_else(|| format!("no ring '{name}'"))?),
        LogDest::Stdout => std_out(1)?,
        LogDest::Stderr => std_out(2)?,
        LogDest::Udp(a) => {
            let addr = resolve(a)?;
            let bind = if addr.is_ipv4() {
                "0.0.0.0:0"
            } else {
                "[::]:0"
            };
            let s = UdpSocket::bind(bind).map_err(|e| format!("cannot create log socket: {e}"))?;
            s.connect(addr)
                .map_err(|e| format!("cannot reach log server {addr}: {e}"))?;
            s.set_nonblocking(true).map_err(|e| e.to_string())?;
            Out::Udp(s)
        }
        LogDest::Unix(path) => {
            let s =
                UnixDatagram::unbound().map_err(|e| format!("cannot create log socket: {e}"))?;
            s.set_nonblocking(true).map_err(|e| e.to_string())?;
            Out::Unix(s, path.clone())
        }
    };
    Ok(Arc::new(Sink {
        target: t.clone(),
        out,
        count: std::sync::atomic::AtomicU32::new(0),
    }))
}

impl Logger {
    pub fn new(sinks: Vec<Arc<Sink>>, tag: &str, host: &str) -> Self {
        Logger {
            sinks,
            tag: tag.into(),
            host: host.into(),
            pid: std::process::id(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.sinks.is_empty()
    }
    /// Relays a received message to every target ([`Sink::relay`]).
    pub fn relay(&self, original: &[u8], now: &weir_proto::syslog::Now) {
        let m = weir_proto::syslog::parse(original);
        for s in &self.sinks {
            s.relay(&m, original, now);
        }
    }
    /// Sends `msg` at `severity` to every target whose levels allow it.
    /// Never blocks: a full socket drops the message.
    pub fn send(&self, severity: u8, msg: &str) {
        self.send_sd(severity, msg, None);
    }

    /// [`Logger::send`] with the structured data `rfc5424` lines carry
    /// (`log-format-sd`; `-` without).
    pub fn send_sd(&self, severity: u8, msg: &str, sd: Option<&str>) {
        if self.sinks.is_empty() {
            return;
        }
        let now = crate::clock::wall();
        for s in &self.sinks {
            let t = &s.target;
            if severity > t.max_level {
                continue;
            }
            if let Some(sample) = &t.sample {
                let n = s.count.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if !sample.keeps(n) {
                    continue;
                }
            }
            let sev = severity.max(t.min_level);
            let pri = u32::from(t.facility) * 8 + u32::from(sev);
            let mut line = String::with_capacity(msg.len() + 64);
            let iso = || {
                let (y, mon, day, h, m, sec, off) = sys::local_time(now.as_secs() as i64);
                format!(
                    "{y:04}-{mon:02}-{day:02}T{h:02}:{m:02}:{sec:02}.{:06}{}",
                    now.subsec_micros(),
                    tz(off, true)
                )
            };
            match s.format() {
                LogFormatKind::Raw => {}
                LogFormatKind::Short => {
                    let _ = write!(line, "<{sev}>");
                }
                LogFormatKind::Priority => {
                    let _ = write!(line, "<{pri}>");
                }
                LogFormatKind::Iso => {
                    let _ = write!(line, "{} ", iso());
                }
                LogFormatKind::Timed => {
                    let _ = write!(line, "<{sev}>{} ", iso());
                }
                f @ (LogFormatKind::Rfc3164 | LogFormatKind::Local) => {
                    let (_, mon, day, h, m, sec, _) = sys::local_time(now.as_secs() as i64);
                    let _ = write!(
                        line,
                        "<{pri}>{} {day:>2} {h:02}:{m:02}:{sec:02} ",
                        month(mon)
                    );
                    if !self.host.is_empty() && f == LogFormatKind::Rfc3164 {
                        let _ = write!(line, "{} ", self.host);
                    }
                    let _ = write!(line, "{}[{}]: ", self.tag, self.pid);
                }
                LogFormatKind::Rfc5424 => {
                    let host = if self.host.is_empty() {
                        "-"
                    } else {
                        &self.host
                    };
                    let _ = write!(
                        line,
                        "<{pri}>1 {} {host} {} {} - {} ",
                        iso(),
                        self.tag,
                        self.pid,
                        sd.filter(|d| !d.is_empty()).unwrap_or("-")
                    );
                }
            }
            line.push_str(msg);
            s.emit(line.into_bytes());
        }
    }
}

impl Sink {
    /// The format lines are written in: the line's, or its ring's, or
    /// rfc3164.
    fn format(&self) -> LogFormatKind {
        match (&self.target.format, &self.out) {
            (Some(f), _) => *f,
            (None, Out::Ring(r)) => r.format,
            (None, _) => LogFormatKind::Rfc3164,
        }
    }

    /// Writes one whole message, cut at the target's `len` (and its
    /// ring's `maxlen`).
    fn emit(&self, mut line: Vec<u8>) {
        let mut max = self.target.max_len;
        if let Out::Ring(r) = &self.out {
            max = max.min(r.maxlen);
        }
        line.truncate(max);
        // A line end after the `len` bytes, as haproxy sends each message
        // (a ring's senders frame its lines themselves).
        if !matches!(self.out, Out::Ring(_)) {
            line.push(b'\n');
        }
        match &self.out {
            Out::Udp(sock) => {
                let _ = sock.send(&line);
            }
            Out::Unix(sock, path) => {
                let _ = sock.send_to(&line, path);
            }
            Out::Stream(f) => {
                // One write(2) per line keeps lines from different threads
                // whole; EAGAIN (a full pipe) drops the line.
                use std::io::Write;
                let _ = (&*f).write(&line);
            }
            Out::Socket(fd) => {
                let flags = libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL;
                let _ = socket2::SockRef::from(fd).send_with_flags(&line, flags);
            }
            Out::Ring(r) => r.push(&line),
        }
    }

    /// Relays a received message (`log-forward`): dropped above the
    /// target's level or outside its sample, written in its format (as it
    /// came when the line gives none).
    pub fn relay(
        &self,
        m: &weir_proto::syslog::Message<'_>,
        original: &[u8],
        now: &weir_proto::syslog::Now,
    ) {
        use weir_proto::syslog::{render, severity};
        let t = &self.target;
        if severity(m) > t.max_level {
            return;
        }
        if let Some(sample) = &t.sample {
            let n = self
                .count
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            if !sample.keeps(n) {
                return;
            }
        }
        let fmt = match (&t.format, &self.out) {
            (None, Out::Ring(r)) => Some(r.format),
            (f, _) => *f,
        };
        self.emit(render(m, original, fmt, t.facility, now));
    }
}

/// The present moment as relayed messages without a date get it.
pub fn syslog_now() -> weir_proto::syslog::Now {
    let now = crate::clock::wall();
    let (y, mon, day, h, m, sec, off) = sys::local_time(now.as_secs() as i64);
    weir_proto::syslog::Now {
        year: y,
        rfc3164: format!("{} {day:>2} {h:02}:{m:02}:{sec:02}", month(mon)),
        rfc5424: format!(
            "{y:04}-{mon:02}-{day:02}T{h:02}:{m:02}:{sec:02}.{:06}{}",
            now.subsec_micros(),
            tz(off, true)
        ),
    }
}

/// Prints a runtime message on stderr as HAProxy does (`[WARNING]  (pid) :
/// msg`). Never panics (a closed stderr is ignored) and never blocks the
/// event loop (a full pipe drops the line).
pub fn console(tag: &str, msg: &str) {
    console_line(&format!(
        "[{tag}]{:pad$}({}) : {msg}\n",
        "",
        std::process::id(),
        pad = 9usize.saturating_sub(tag.len()).max(1)
    ));
}

/// Writes `line` (with its newline) on stderr in one write, at the end of
/// the file when stderr is one (a master and its workers share it).
pub fn console_line(line: &str) {
    use std::io::Write;
    let mut err = ERR.lock().unwrap_or_else(|e| e.into_inner());
    if err.is_none() {
        *err = Some(nonblocking_std(2).ok());
    }
    match err.as_ref().and_then(Option::as_ref) {
        Some(f) => {
            let _ = (&*f).write(line.as_bytes());
        }
        None => {
            let _ = std::io::stderr().write_all(line.as_bytes());
        }
    }
}

/// stderr for runtime messages: opened on first use, and again after
/// [`console_reopen`].
static ERR: std::sync::Mutex<Option<Option<std::fs::File>>> = std::sync::Mutex::new(None);

/// stderr changed (a daemon's is /dev/null): runtime messages follow it.
pub fn console_reopen() {
    *ERR.lock().unwrap_or_else(|e| e.into_inner()) = None;
}

/// stdout (1) or stderr (2) as a log target: for a regular file, a copy
/// of the descriptor (its offset shared with the other writers of the
/// file, whose lines are not written over; a file never blocks); for a
/// socket (systemd's journal, which /proc cannot open again), a copy sent
/// to without blocking; else (a pipe, a terminal) a second, non-blocking
/// description of it ([`nonblocking_std`]).
fn std_out(fd: i32) -> Result<Out, String> {
    use std::os::fd::AsFd;
    let name = if fd == 1 { "stdout" } else { "stderr" };
    // A copy of the descriptor the standard handle holds.
    let own = match fd {
        1 => std::io::stdout().as_fd().try_clone_to_owned(),
        _ => std::io::stderr().as_fd().try_clone_to_owned(),
    }
    .map_err(|e| format!("cannot use {name} for logging: {e}"))?;
    if socket2::SockRef::from(&own).r#type().is_ok() {
        return Ok(Out::Socket(own));
    }
    let file = std::fs::File::from(own);
    if file.metadata().is_ok_and(|m| m.file_type().is_file()) {
        return Ok(Out::Stream(file));
    }
    nonblocking_std(fd).map(Out::Stream)
}

/// Opens a second, non-blocking, appending description of stdout (1) or
/// stderr (2) through /proc, so the process's own descriptor stays blocking.
fn nonblocking_std(fd: i32) -> Result<std::fs::File, String> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .append(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(format!("/proc/self/fd/{fd}"))
        .map_err(|e| {
            format!(
                "cannot open {} for logging: {e}",
                if fd == 1 { "stdout" } else { "stderr" }
            )
        })
}

pub use weir_proto::syslog::MONTHS;

/// The name of month `mon` (1 to 12).
fn month(mon: u32) -> &'static str {
    MONTHS
        .get((mon as usize + 11) % 12)
        .copied()
        .unwrap_or("Jan")
}

fn tz(off: i64, colon: bool) -> String {
    let sign = if off < 0 { '-' } else { '+' };
    let a = off.abs();
    if colon {
        format!("{sign}{:02}:{:02}", a / 3600, (a % 3600) / 60)
    } else {
        format!("{sign}{:02}{:02}", a / 3600, (a % 3600) / 60)
    }
}

/// Everything a tcp-mode log line can show.
#[derive(Debug, Clone, Default)]
pub struct LogRecord<'a> {
    /// The listener (its place in the frontend's bind lines), for its
    /// `option socket-stats` counters.
    pub listener: Option<usize>,
    /// The listener speaks TLS (`%ft` marks it with `~`).
    pub tls: bool,
    pub client: Option<std::net::SocketAddr>,
    pub frontend_addr: Option<std::net::SocketAddr>,
    pub frontend: &'a str,
    pub backend: &'a str,
    pub server: Option<&'a str>,
    pub server_addr: Option<std::net::SocketAddr>,
    pub source_addr: Option<std::net::SocketAddr>,
    /// Accept time since the epoch.
    pub accept: std::time::Duration,
    pub tw: i64,
    pub tc: i64,
    pub tt: i64,
    pub bytes_in: u64,
    pub bytes_out: u64,
    pub term: Term,
    pub actconn: u32,
    pub feconn: u32,
    pub beconn: u32,
    pub srvconn: u32,
    pub retries: u32,
    pub redispatched: bool,
    /// Of `retries`, those on the same server (`wretr`), and the server
    /// they (or the redispatch) are counted on.
    pub srv_retries: u32,
    pub failed_srv: Option<ServerId>,
    /// The server reset its connection before a response head (counted
    /// as two response errors, as haproxy counts it).
    pub srv_reset: bool,
    pub srv_queue: u32,
    pub be_queue: u32,
    pub hostname: &'a str,
    /// An HTTP stream: the HTTP variables render; otherwise they are `-`.
    pub http: bool,
    /// When the request started (since the epoch): `%tr`.
    pub req_date: std::time::Duration,
    pub th: i64,
    pub ti: i64,
    /// `%TR`: time to receive the request head.
    pub t_req: i64,
    /// `%Tr`: time the server took to send its response head.
    pub t_res: i64,
    pub ta: i64,
    /// Status code sent to the client; -1 when none.
    pub status: i32,
    /// The request line, or `<BADREQ>`.
    pub request: &'a str,
    /// Third and fourth characters of `%tsc` (cookie persistence).
    pub cookie_flags: [u8; 2],
    pub req_counter: u64,
    /// Values of the format's `%[sample]` pieces, in order (`-` when absent).
    pub samples: Vec<String>,
    /// Captured request / response headers (`capture … header`); `None`
    /// without captures.
    pub req_caps: Option<Vec<String>>,
    pub res_caps: Option<Vec<String>>,
    /// `capture cookie`: the request's and the response's cookie (`%CC`,
    /// `%CS`), when the frontend captures one.
    pub cookie_caps: Option<Box<[Option<String>; 2]>>,
    /// When the request's first byte came (for `option logasap`).
    pub started: Option<tokio::time::Instant>,
    /// `option logasap`: logged before the end, so the total time and the
    /// bytes are what they were then (`+` before them); `logged` once done.
    pub early: bool,
    pub logged: bool,
    /// `%ID`.
    pub unique_id: Option<String>,
    /// Rewrites of the exchange that found no room (`wrew`): all of
    /// them, and those once a backend was chosen.
    pub failed_rewrites: [u32; 2],
}

/// The values of a format's `%[sample]` pieces on `ctx`, in order (empty
/// where a fetch finds nothing): a record's `samples`.
pub fn sample_values(f: &LogFormat, ctx: &dyn weir_rules::Ctx) -> Vec<String> {
    if f.samples == 0 {
        return Vec::new();
    }
    f.pieces
        .iter()
        .filter_map(|p| match p {
            Piece::Sample { expr, .. } => Some(
                expr.eval(ctx)
                    .map(|v| String::from_utf8_lossy(&v.to_bytes()).into_owned())
                    .unwrap_or_default(),
            ),
            _ => None,
        })
        .collect()
}

/// Renders a compiled format for one record (a sample that finds nothing
/// logs as `-`).
pub fn render(fmt: &LogFormat, r: &LogRecord<'_>) -> String {
    render_as(fmt, r, "-")
}

/// [`render`], with `absent` for a sample that finds nothing
/// (`unique-id-format` writes nothing there).
pub fn render_as(fmt: &LogFormat, r: &LogRecord<'_>, absent: &str) -> String {
    let mut out = String::with_capacity(160);
    // A variable that renders nothing (no captured headers) takes the
    // separator after it along, as HAProxy does.
    let mut skip_space = false;
    for p in &fmt.pieces {
        match p {
            Piece::Lit(s) => {
                let s = if skip_space {
                    s.strip_prefix(' ').unwrap_or(s)
                } else {
                    s
                };
                out.push_str(s);
                skip_space = false;
            }
            Piece::Sample { quote, index, .. } => {
                if *quote {
                    out.push('"');
                }
                match r.samples.get(*index).filter(|v| !v.is_empty()) {
                    Some(v) => out.push_str(v),
                    None => out.push_str(absent),
                }
                if *quote {
                    out.push('"');
                }
                skip_space = false;
            }
            Piece::Var {
                var: v @ (Var::HdrReqList | Var::HdrResList),
                quote: true,
            } => {
                // Each captured header quoted on its own.
                let c = if *v == Var::HdrReqList {
                    &r.req_caps
                } else {
                    &r.res_caps
                };
                let items: Vec<String> = c.iter().flatten().map(|h| format!("\"{h}\"")).collect();
                out.push_str(&items.join(" "));
                skip_space = false;
            }
            Piece::Var {
                var: v @ (Var::CookieReq | Var::CookieRes),
                quote: true,
            } => {
                out.push('"');
                out.push_str(cookie_cap(r, *v == Var::CookieRes).unwrap_or(""));
                out.push('"');
                skip_space = false;
            }
            Piece::Var { var, quote } => {
                if *quote {
                    out.push('"');
                }
                let before = out.len();
                render_var(&mut out, *var, r);
                skip_space =
                    out.len() == before && !*quote && (out.is_empty() || out.ends_with(' '));
                if *quote {
                    out.push('"');
                }
            }
        }
    }
    out
}

fn ip_or_dash(out: &mut String, a: Option<std::net::SocketAddr>, port: bool) {
    match a {
        Some(a) if port => {
            let _ = write!(out, "{}", a.port());
        }
        Some(a) => {
            let _ = write!(out, "{}", a.ip());
        }
        None if port => out.push('-'),
        None => out.push_str("unix"),
    }
}

/// A time since the epoch as HAProxy's local dates with milliseconds
/// (`23/Nov/2026:08:25:06.236`).
pub fn local_date_ms(t: std::time::Duration) -> String {
    let mut out = String::with_capacity(24);
    date(&mut out, t, false, false);
    out
}

fn date(out: &mut String, accept: std::time::Duration, gmt: bool, local_zone: bool) {
    let secs = accept.as_secs() as i64;
    let (y, mon, day, h, m, s, off) = if gmt {
        let (y, mon, day) = civil_from_days(secs.div_euclid(86400));
        let rem = secs.rem_euclid(86400);
        (
            y,
            mon,
            day,
            (rem / 3600) as u32,
            ((rem % 3600) / 60) as u32,
            (rem % 60) as u32,
            0,
        )
    } else {
        sys::local_time(secs)
    };
    let mname = month(mon);
    if gmt || local_zone {
        let _ = write!(
            out,
            "{day:02}/{mname}/{y:04}:{h:02}:{m:02}:{s:02} {}",
            tz(off, false)
        );
    } else {
        let _ = write!(
            out,
            "{day:02}/{mname}/{y:04}:{h:02}:{m:02}:{s:02}.{:03}",
            accept.subsec_millis()
        );
    }
}

/// Days since 1970-01-01 to (year, month, day), in the log's types.
fn civil_from_days(z: i64) -> (i32, u32, u32) {
    let (y, m, d) = weir_rules::textconv::civil_from_days(z);
    (y as i32, m as u32, d as u32)
}

fn render_var(out: &mut String, var: Var, r: &LogRecord<'_>) {
    match var {
        Var::ClientIp => ip_or_dash(out, r.client, false),
        Var::ClientPort => ip_or_dash(out, r.client, true),
        Var::FrontendIp => ip_or_dash(out, r.frontend_addr, false),
        Var::FrontendPort => ip_or_dash(out, r.frontend_addr, true),
        Var::FrontendName => out.push_str(r.frontend),
        Var::FrontendNameTransport => {
            out.push_str(r.frontend);
            if r.tls {
                out.push('~');
            }
        }
        Var::BackendName => out.push_str(r.backend),
        Var::ServerName => out.push_str(r.server.unwrap_or("<NOSRV>")),
        Var::ServerIp => ip_or_dash(out, r.server_addr, false),
        Var::ServerPort => ip_or_dash(out, r.server_addr, true),
        Var::BackendSrcIp => ip_or_dash(out, r.source_addr, false),
        Var::BackendSrcPort => ip_or_dash(out, r.source_addr, true),
        Var::AcceptDate => date(out, r.accept, false, false),
        Var::AcceptDateGmt => date(out, r.accept, true, false),
        Var::AcceptDateLocal => date(out, r.accept, false, true),
        Var::AcceptTimestamp => {
            let _ = write!(out, "{}", r.accept.as_secs());
        }
        Var::AcceptMs => {
            let _ = write!(out, "{:03}", r.accept.subsec_millis());
        }
        Var::Tw => {
            let _ = write!(out, "{}", r.tw);
        }
        Var::Tc => {
            let _ = write!(out, "{}", r.tc);
        }
        Var::Tt => {
            let _ = write!(out, "{}{}", if r.early { "+" } else { "" }, r.tt);
        }
        Var::Td => {
            let td = if r.tc < 0 {
                -1
            } else {
                r.tt - r.tw.max(0) - r.tc
            };
            let _ = write!(out, "{td}");
        }
        Var::BytesRead => {
            let _ = write!(out, "{}{}", if r.early { "+" } else { "" }, r.bytes_out);
        }
        Var::BytesUploaded => {
            let _ = write!(out, "{}", r.bytes_in);
        }
        Var::TermState => {
            out.push(r.term.cause as u8 as char);
            out.push(r.term.state as u8 as char);
        }
        Var::ActConn => {
            let _ = write!(out, "{}", r.actconn);
        }
        Var::FeConn => {
            let _ = write!(out, "{}", r.feconn);
        }
        Var::BeConn => {
            let _ = write!(out, "{}", r.beconn);
        }
        Var::SrvConn => {
            let _ = write!(out, "{}", r.srvconn);
        }
        Var::Retries => {
            if r.redispatched {
                out.push('+');
            }
            let _ = write!(out, "{}", r.retries);
        }
        Var::SrvQueue => {
            let _ = write!(out, "{}", r.srv_queue);
        }
        Var::BackendQueue => {
            let _ = write!(out, "{}", r.be_queue);
        }
        Var::Pid => {
            let _ = write!(out, "{}", std::process::id());
        }
        Var::Hostname => out.push_str(r.hostname),
        Var::ReqDate => date(out, req_date(r), false, false),
        Var::ReqDateGmt => date(out, req_date(r), true, false),
        Var::ReqDateLocal => date(out, req_date(r), false, true),
        Var::HttpOnly(_) => out.push('-'),
        Var::Nothing => {}
        // (The handshake time and the unique id exist in both modes.)
        Var::Th => num(out, r.th),
        Var::UniqueId => out.push_str(r.unique_id.as_deref().unwrap_or("-")),
        v if !r.http => match v {
            Var::HdrReq | Var::HdrRes | Var::HdrReqList | Var::HdrResList => {}
            Var::TermStateCookie => {
                out.push(r.term.cause as u8 as char);
                out.push(r.term.state as u8 as char);
                out.push_str("--");
            }
            _ => out.push('-'),
        },
        Var::Ti => num(out, r.ti),
        Var::TR => num(out, r.t_req),
        Var::Tq => num(
            out,
            if r.t_req < 0 {
                -1
            } else {
                r.th + r.ti + r.t_req
            },
        ),
        Var::Tr => num(out, r.t_res),
        Var::Ta => {
            if r.early {
                out.push('+');
            }
            num(out, r.ta);
        }
        Var::Status => num(out, i64::from(r.status)),
        Var::CookieReq | Var::CookieRes => {
            out.push_str(cookie_cap(r, var == Var::CookieRes).unwrap_or("-"));
        }
        Var::TermStateCookie => {
            for b in r.term.bytes().iter().chain(r.cookie_flags.iter()) {
                out.push(*b as char);
            }
        }
        Var::HdrReq | Var::HdrReqList => caps(out, r.req_caps.as_deref(), var == Var::HdrReqList),
        Var::HdrRes | Var::HdrResList => caps(out, r.res_caps.as_deref(), var == Var::HdrResList),
        Var::Request => out.push_str(r.request),
        Var::Method => out.push_str(request_part(r.request, 0)),
        Var::Uri => out.push_str(request_part(r.request, 1)),
        Var::Version => out.push_str(request_part(r.request, 2)),
        Var::Path | Var::PathOnly => {
            let uri = request_part(r.request, 1);
            let path = uri.split('?').next().unwrap_or(uri);
            let path = if matches!(var, Var::PathOnly) {
                strip_authority(path)
            } else {
                path
            };
            out.push_str(path);
        }
        Var::Query => {
            let uri = request_part(r.request, 1);
            if let Some(q) = uri.find('?') {
                out.push_str(&uri[q..]);
            }
        }
        Var::ReqCounter => num(out, r.req_counter as i64),
    }
}

/// `%hr`: `{a|b}`; `%hrl`: `a b` (nothing without captures).
fn caps(out: &mut String, c: Option<&[String]>, list: bool) {
    let Some(c) = c else { return };
    if list {
        out.push_str(&c.join(" "));
    } else {
        out.push('{');
        out.push_str(&c.join("|"));
        out.push('}');
    }
}

/// The captured request (or response, `res`) cookie.
fn cookie_cap<'r>(r: &'r LogRecord<'_>, res: bool) -> Option<&'r str> {
    let [req, resp] = r.cookie_caps.as_deref()?;
    if res { resp } else { req }.as_deref()
}

fn num(out: &mut String, n: i64) {
    let _ = write!(out, "{n}");
}

fn req_date(r: &LogRecord<'_>) -> std::time::Duration {
    if r.http {
        r.req_date
    } else {
        r.accept
    }
}

/// Word `i` of a request line (`-` when missing).
fn request_part(line: &str, i: usize) -> &str {
    line.split(' ').nth(i).unwrap_or("-")
}

/// The path of an absolute-form URI.
fn strip_authority(path: &str) -> &str {
    match path.find("://") {
        Some(i) => {
            let rest = &path[i + 3..];
            rest.find('/').map_or("/", |j| &rest[j..])
        }
        None => path,
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
