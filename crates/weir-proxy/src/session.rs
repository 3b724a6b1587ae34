//! What every client session has, whatever its protocol: the accepted
//! connection's addresses, the PROXY header and TLS prologue, the log line
//! of a connection that never got further, and the end-of-session
//! accounting. The protocols' tasks (`http::entry`, `tcp::entry`) start
//! here.

use crate::conn::Conn;
use crate::log::{level, render, LogRecord};
use crate::state::FrontendId;
use crate::state::Shared;
use crate::stats::Ctr;
use crate::term::ConnError;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use weir_proto::netscaler;
use weir_proto::proxy_protocol::{self, ProxyHeader};

/// Addresses of an accepted connection.
#[derive(Debug, Clone)]
pub struct Accepted {
    pub peer: Option<SocketAddr>,
    pub local: Option<SocketAddr>,
    pub accept_proxy: bool,
    /// The listener it came through (shared by its connections).
    pub bind: Arc<BindInfo>,
    /// Its entry in the thread's session table (`show sess`).
    pub reg: crate::sessions::Reg,
    /// TCP_NODELAY is on already (inherited from its listener).
    pub nodelay: bool,
    /// The TLVs of its PROXY v2 header that weir reads, when it had some
    /// (`fc_pp_authority`, `fc_pp_unique_id`).
    pub pp: Option<Arc<proxy_protocol::Tlvs>>,
    /// The connection's own addresses (`fc_src`, `fc_dst`), kept only when
    /// `tcp-request session` rules gave the session others.
    pub fc: Option<Box<(Option<SocketAddr>, Option<SocketAddr>)>>,
    /// A `mode tcp` client that went on in HTTP (`switch-mode http`, or an
    /// HTTP backend): `Some(false)` HTTP/1.1 only.
    pub switched: Option<bool>,
}

impl Accepted {
    /// The name the client asked for, as `proxy-v2-options authority`
    /// sends it on: its own PROXY header's authority, else the SNI of its
    /// TLS session (`tls`). Borrowed: asked on every connect.
    pub fn authority<'a>(&'a self, tls: Option<&'a weir_rules::TlsInfo>) -> Option<&'a [u8]> {
        let own = self.pp.as_deref().and_then(|t| t.authority.as_deref());
        own.or_else(|| tls?.sni.as_deref().map(str::as_bytes))
    }
    /// The client connection's own source or destination address.
    pub fn conn_addr(&self, dst: bool) -> Option<SocketAddr> {
        let (peer, local) = self
            .fc
            .as_deref()
            .copied()
            .unwrap_or((self.peer, self.local));
        if dst {
            local
        } else {
            peer
        }
    }
}

pub use crate::state::BindInfo;

pub(crate) fn ms(d: Duration) -> i64 {
    d.as_millis() as i64
}

/// How reading one kind of header before the session's bytes fails (its
/// `fc_err` words).
struct HeaderErrors {
    /// Closed before any byte.
    empty: ConnError,
    /// Reset before any byte.
    abort: ConnError,
    /// Nothing came in time.
    timeout: ConnError,
    /// A header begun and never ended.
    truncated: ConnError,
    /// More than the buffer holds.
    too_long: ConnError,
}

const PROXY_ERRORS: HeaderErrors = HeaderErrors {
    empty: ConnError::PRX_EMPTY,
    abort: ConnError::PRX_ABORT,
    timeout: ConnError::PRX_TIMEOUT,
    truncated: ConnError::PRX_TRUNCATED,
    too_long: ConnError::PRX_BAD_HDR,
};

const CIP_ERRORS: HeaderErrors = HeaderErrors {
    empty: ConnError::CIP_EMPTY,
    abort: ConnError::CIP_ABORT,
    timeout: ConnError::CIP_TIMEOUT,
    truncated: ConnError::CIP_TRUNCATED,
    too_long: ConnError::CIP_TRUNCATED,
};

/// Reads a header that `parse` reads (`Ok(None)`: more bytes needed)
/// after the bytes `buf` holds already; returns it and any bytes read
/// past it. A header may be as long as `cap` (the connection's buffer
/// size, as in HAProxy); anything longer is refused. A header begun and
/// never ended is "truncated" however it ends (HAProxy says so as soon as
/// a part of it came alone; weir waits for the rest).
async fn read_header<T>(
    client: &Conn,
    timeout: Option<Duration>,
    cap: usize,
    mut buf: Vec<u8>,
    errs: &HeaderErrors,
    mut parse: impl FnMut(&[u8]) -> Result<Option<(T, usize)>, ConnError>,
) -> Result<(T, Vec<u8>), ConnError> {
    let mut chunk = [0u8; 536];
    let fut = async {
        loop {
            if let Some((h, used)) = parse(&buf)? {
                return Ok((h, buf.get(used..).unwrap_or_default().to_vec()));
            }
            if buf.len() >= cap {
                return Err(errs.too_long);
            }
            let want = chunk.len().min(cap - buf.len());
            match client.read(chunk.get_mut(..want).unwrap_or_default()).await {
                Ok(0) if buf.is_empty() => return Err(errs.empty),
                Ok(0) => return Err(errs.truncated),
                Ok(n) => buf.extend_from_slice(chunk.get(..n).unwrap_or_default()),
                Err(_) if buf.is_empty() => return Err(errs.abort),
                Err(_) => return Err(errs.truncated),
            }
        }
    };
    let Some(t) = timeout else {
        return fut.await;
    };
    let r = tokio::time::timeout_at(crate::clock::deadline(t), fut).await;
    match r {
        Ok(r) => r,
        Err(_) if buf.is_empty() => Err(errs.timeout),
        Err(_) => Err(errs.truncated),
    }
}

/// The session's ends as a header names them; the connection's own
/// (`fc_src`, `fc_dst`) stay what it and its rules had.
fn readdress(acc: &mut Accepted, src: SocketAddr, dst: SocketAddr) {
    if acc.fc.is_none() {
        acc.fc = Some(Box::new((acc.peer, acc.local)));
    }
    acc.peer = Some(src);
    acc.local = Some(dst);
    crate::sessions::set_peer(acc.reg, src);
}

/// Reads the headers the bind asks for, in haproxy's order: a PROXY
/// header, then a NetScaler Client IP header (`accept-netscaler-cip`).
/// Updates the addresses and returns the bytes read past them, or logs
/// the failure and returns None (the session ends).
pub(crate) async fn prologue(
    sh: &Shared,
    fe_idx: FrontendId,
    client: &Conn,
    acc: &mut Accepted,
    accept_wall: Duration,
) -> Option<Vec<u8>> {
    let cip = acc.bind.cip_magic;
    if !acc.accept_proxy && cip.is_none() {
        return Some(Vec::new());
    }
    let timeout = sh.proxy(sh.frontend(fe_idx).proxy).timeouts.client;
    let cap = sh.bufsize;
    let mut rest = Vec::new();
    if acc.accept_proxy {
        let parse = |b: &[u8]| match proxy_protocol::parse_with_tlvs(b) {
            Ok(r) => Ok(r.map(|(h, tlvs, used)| ((h, tlvs), used))),
            Err(e) => Err(ConnError::of_proxy(&e)),
        };
        match read_header(client, timeout, cap, rest, &PROXY_ERRORS, parse).await {
            Ok(((h, tlvs), r)) => {
                if let ProxyHeader::Inet { src, dst } = h {
                    readdress(acc, src, dst);
                }
                if tlvs != proxy_protocol::Tlvs::default() {
                    acc.pp = Some(Arc::new(tlvs));
                }
                rest = r;
            }
            Err(e) => {
                log_embryonic(sh, fe_idx, acc, accept_wall, e);
                return None;
            }
        }
    }
    if let Some(magic) = cip {
        let parse = |b: &[u8]| netscaler::parse(b, magic).map_err(ConnError::of_cip);
        match read_header(client, timeout, cap, rest, &CIP_ERRORS, parse).await {
            Ok((h, r)) => {
                readdress(acc, h.src, h.dst);
                rest = r;
            }
            Err(e) => {
                log_embryonic(sh, fe_idx, acc, accept_wall, e);
                return None;
            }
        }
    }
    Some(rest)
}

/// A session's log record as it starts: its listener, addresses and
/// frontend (the backend's name too, until one is chosen).
pub(crate) fn record<'a>(
    sh: &'a Shared,
    fe_idx: FrontendId,
    acc: &Accepted,
    accept_wall: Duration,
) -> LogRecord<'a> {
    let fe = sh.frontend(fe_idx);
    LogRecord {
        listener: Some(acc.bind.index),
        tls: acc.bind.tls.is_some(),
        client: acc.peer,
        frontend_addr: acc.local,
        frontend: &fe.name,
        backend: &fe.name,
        accept: accept_wall,
        tw: -1,
        tc: -1,
        term: crate::term::Term::NORMAL,
        hostname: &sh.hostname,
        ..LogRecord::default()
    }
}

/// Logs a connection that ended before any request (a bad PROXY header, a
/// failed TLS handshake) as HAProxy does: its fixed line, or the
/// frontend's `error-log-format` (at level `err` with `option
/// log-separate-errors`).
fn log_embryonic(
    sh: &Shared,
    fe_idx: FrontendId,
    acc: &Accepted,
    accept_wall: Duration,
    err: ConnError,
) {
    let fe = sh.frontend(fe_idx);
    if fe.logger.is_empty() {
        return;
    }
    let px = sh.proxy(fe.proxy);
    let lvl = if px.options.log_separate_errors {
        level::ERR
    } else {
        level::INFO
    };
    let Some(f) = &px.error_log_format else {
        let date = render_date(accept_wall);
        let who = acc.peer.map_or_else(
            || "unix:1".to_string(),
            |p| format!("{}:{}", p.ip(), p.port()),
        );
        let line = format!(
            "{who} [{date}] {}/{}: {}",
            fe.name, acc.bind.label, err.text
        );
        fe.logger.send(lvl, &line);
        return;
    };
    let took = ms(wall_now().saturating_sub(accept_wall));
    let view = ConnView {
        acc,
        err,
        fe: (&fe.name, i64::from(px.uid)),
    };
    let rec = LogRecord {
        req_date: accept_wall,
        // A handshake that timed out has no time of its own (as haproxy).
        th: if err.timed_out() { -1 } else { took },
        tw: -1,
        tc: -1,
        t_req: -1,
        t_res: -1,
        ta: if err.timed_out() { took } else { 0 },
        tt: took,
        term: crate::term::Term::new(crate::term::Cause::Proxy, crate::term::State::Request),
        cookie_flags: *b"--",
        http: px.mode == weir_config::Mode::Http,
        status: 0,
        request: "<BADREQ>",
        actconn: sh.actconn.load(Ordering::Relaxed),
        feconn: fe.conns.load(Ordering::Relaxed),
        samples: crate::log::sample_values(f, &view),
        ..record(sh, fe_idx, acc, accept_wall)
    };
    fe.logger.send(lvl, &render(f, &rec));
}

/// What an `error-log-format`'s samples see of a connection that failed:
/// its addresses, its frontend and its error (`fc_err`, `fc_err_str`).
struct ConnView<'a> {
    acc: &'a Accepted,
    err: ConnError,
    fe: (&'a str, i64),
}

impl weir_rules::Ctx for ConnView<'_> {
    fn src(&self) -> Option<SocketAddr> {
        self.acc.peer
    }
    fn dst(&self) -> Option<SocketAddr> {
        self.acc.local
    }
    fn conn_error(&self) -> (i64, &'static str) {
        (self.err.code, self.err.text)
    }
    fn frontend(&self) -> Option<(String, i64)> {
        Some((self.fe.0.to_string(), self.fe.1))
    }
}

/// A failed handshake as HAProxy numbers it: a client that closed before
/// finishing, a timeout, anything else (a reset too) a handshake failure.
fn handshake_error(e: &crate::tls::HandshakeError) -> ConnError {
    use crate::tls::HandshakeError;
    match e {
        HandshakeError::Timeout => ConnError::SSL_TIMEOUT,
        HandshakeError::Closed => ConnError::SSL_EMPTY,
        HandshakeError::Tls(_) | HandshakeError::Io(_) => ConnError::SSL_HANDSHAKE,
    }
}

/// Runs the TLS handshake of a client of a `bind … ssl` line (bytes read
/// with a PROXY header included). A failure is logged and ends the
/// session (`None`).
pub(crate) async fn secure(
    sh: &Shared,
    fe_idx: FrontendId,
    client: Conn,
    acc: &Accepted,
    initial: Vec<u8>,
    accept_wall: Duration,
) -> Option<(Conn, Vec<u8>)> {
    let Some(cfg) = acc.bind.tls.clone() else {
        return Some((client, initial));
    };
    let fe_px = sh.proxy(sh.frontend(fe_idx).proxy);
    // Bounded by `timeout client` (or, in mode http, `timeout http-request`).
    let t = fe_px.timeouts.client.or(fe_px.timeouts.http_request);
    let fe = sh.frontend(fe_idx);
    let count = |c: Ctr| crate::stats::add_front(fe, &acc.bind, c, 1);
    match crate::tls::accept(client, &cfg, &initial, t).await {
        Ok(c) => {
            count(Ctr::SslSess);
            if c.tls_info().is_some_and(|i| i.resumed) {
                count(Ctr::SslReused);
            }
            Some((c, Vec::new()))
        }
        Err((e, silent)) => {
            if !silent {
                count(Ctr::SslFailed);
            }
            // `option dontlognull` hides clients that sent nothing at all,
            // as in HAProxy; a failed handshake is always logged.
            if !(silent && fe_px.options.dontlognull) {
                log_embryonic(sh, fe_idx, acc, accept_wall, handshake_error(&e));
            }
            None
        }
    }
}

pub(crate) fn wall_now() -> Duration {
    crate::clock::wall()
}

fn render_date(accept: Duration) -> String {
    let fmt = weir_config::logformat::compile("%t").map(|f| {
        let rec = LogRecord {
            accept,
            ..LogRecord::default()
        };
        render(&f, &rec)
    });
    fmt.unwrap_or_default()
}

pub(crate) fn log_session(sh: &Shared, fe_idx: FrontendId, rec: &LogRecord<'_>) {
    let fe = sh.frontend(fe_idx);
    if fe.logger.is_empty() {
        return;
    }
    let px = sh.proxy(fe.proxy);
    if px.options.dontlognull && rec.bytes_in == 0 {
        return;
    }
    if px.options.dontlog_normal && rec.term.is_normal() {
        return;
    }
    if let Some(f) = &px.log_format {
        let sd = px.log_format_sd.as_ref().map(|sd| render(sd, rec));
        fe.logger
            .send_sd(level::INFO, &render(f, rec), sd.as_deref());
    }
}

pub(crate) fn finish(sh: &Shared, fe_idx: FrontendId, acc: &Accepted) {
    crate::sessions::unregister(acc.reg);
    acc.bind.conns.fetch_sub(1, Ordering::SeqCst);
    if acc.bind.tls.is_some() {
        sh.sslconns.fetch_sub(1, Ordering::SeqCst);
    }
    sh.frontend(fe_idx).conns.fetch_sub(1, Ordering::SeqCst);
    sh.actconn.fetch_sub(1, Ordering::SeqCst);
    if sh.accept_paused.load(Ordering::SeqCst) > 0 {
        sh.conn_freed.notify_waiters();
    }
}
