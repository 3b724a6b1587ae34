//! One client connection in `mode tcp`: optional PROXY header, server
//! connection, optional PROXY header to the server, forwarding, the log line.

use crate::conn::Conn;
use crate::connect::{self, Attempts};
use crate::log::{level, render, LogRecord};
use crate::state::FrontendId;
use crate::state::Shared;
use crate::stats::Ctr;
use crate::term::{Cause, State, Term};
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;
use weir_config::SendProxy;
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
}

pub use crate::state::BindInfo;

fn ms(d: Duration) -> i64 {
    d.as_millis() as i64
}

/// Reads a PROXY header; returns the addresses it carries and any bytes
/// read past it. A v2 header with TLVs may be as long as `cap` (the
/// connection's buffer size, as in HAProxy); anything longer is refused.
async fn read_proxy_header(
    client: &Conn,
    timeout: Option<Duration>,
    cap: usize,
) -> Result<(ProxyHeader, Vec<u8>), String> {
    let mut buf: Vec<u8> = Vec::with_capacity(536);
    let mut chunk = [0u8; 536];
    let fut = async {
        loop {
            match proxy_protocol::parse(&buf) {
                Ok(Some((h, used))) => return Ok((h, buf[used..].to_vec())),
                Ok(None) => {}
                Err(e) => return Err(e.to_string()),
            }
            if buf.len() >= cap {
                return Err("PROXY header too long".to_string());
            }
            let want = chunk.len().min(cap - buf.len());
            match client.read(&mut chunk[..want]).await {
                Ok(0) => {
                    return Err("connection closed while waiting for PROXY protocol header".into())
                }
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
                Err(e) => {
                    return Err(format!(
                        "error while waiting for PROXY protocol header: {e}"
                    ))
                }
            }
        }
    };
    match timeout {
        Some(t) => tokio::time::timeout_at(crate::clock::deadline(t), fut)
            .await
            .unwrap_or_else(|_| Err("timeout while waiting for PROXY protocol header".into())),
        None => fut.await,
    }
}

/// Reads the PROXY header when the bind asks for one: updates the
/// addresses and returns the bytes read past it, or logs the failure and
/// returns None (the session ends).
async fn prologue(
    sh: &Shared,
    fe_idx: FrontendId,
    client: &Conn,
    acc: &mut Accepted,
    accept_wall: Duration,
) -> Option<Vec<u8>> {
    if !acc.accept_proxy {
        return Some(Vec::new());
    }
    let fe = &sh.frontends[fe_idx];
    let fe_px = &sh.cfg.proxies[fe.proxy];
    match read_proxy_header(client, fe_px.timeouts.client, sh.bufsize).await {
        Ok((h, rest)) => {
            if let ProxyHeader::Inet { src, dst } = h {
                acc.peer = Some(src);
                acc.local = Some(dst);
                crate::sessions::set_peer(acc.reg, src);
            }
            Some(rest)
        }
        Err(msg) => {
            log_embryonic(sh, fe_idx, acc, accept_wall, &msg);
            None
        }
    }
}

/// Logs a connection that ended before any request (a bad PROXY header, a
/// failed TLS handshake) as HAProxy does.
fn log_embryonic(
    sh: &Shared,
    fe_idx: FrontendId,
    acc: &Accepted,
    accept_wall: Duration,
    msg: &str,
) {
    let fe = &sh.frontends[fe_idx];
    let date = render_date(accept_wall);
    let who = acc.peer.map_or_else(
        || "unix:1".to_string(),
        |p| format!("{}:{}", p.ip(), p.port()),
    );
    fe.logger.send(
        level::INFO,
        &format!("{who} [{date}] {}/{}: {msg}", fe.name, acc.bind.label),
    );
}

/// Runs the TLS handshake of a client of a `bind … ssl` line (bytes read
/// with a PROXY header included). A failure is logged and ends the
/// session (`None`).
async fn secure(
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
    let fe_px = &sh.cfg.proxies[sh.frontends[fe_idx].proxy];
    // Bounded by `timeout client` (or, in mode http, `timeout http-request`).
    let t = fe_px.timeouts.client.or(fe_px.timeouts.http_request);
    let counters = &sh.frontends[fe_idx].counters;
    match crate::tls::accept(client, &cfg, &initial, t).await {
        Ok(c) => {
            counters.add(Ctr::SslSess, 1);
            if c.tls_info().is_some_and(|i| i.resumed) {
                counters.add(Ctr::SslReused, 1);
            }
            Some((c, Vec::new()))
        }
        Err((e, silent)) => {
            if !silent {
                counters.add(Ctr::SslFailed, 1);
            }
            // `option dontlognull` hides clients that sent nothing at all,
            // as in HAProxy; a failed handshake is always logged.
            if !(silent && fe_px.options.dontlognull) {
                log_embryonic(sh, fe_idx, acc, accept_wall, &e.message());
            }
            None
        }
    }
}

fn wall_now() -> Duration {
    crate::clock::wall()
}

/// Serves one accepted `mode http` client (see [`crate::http::serve`]).
/// A task of its own, so that an idle keep-alive client carries none of
/// the `mode tcp` session state.
#[allow(clippy::manual_async_fn)] // see the comment inside
pub fn run_http(
    sh: Arc<Shared>,
    fe_idx: FrontendId,
    client: Conn,
    mut acc: Accepted,
) -> impl std::future::Future<Output = ()> {
    // Not an `async fn`: its arguments would be stored twice in the
    // task (rustc keeps a copy of each); a block captures them once.
    async move {
        let accept_wall = wall_now();
        // Boxed: the PROXY header reader's buffer is only needed here.
        if let Some(initial) = Box::pin(prologue(&sh, fe_idx, &client, &mut acc, accept_wall)).await
        {
            // A hard stop is watched inside (only while it matters).
            if acc.bind.h2 {
                Box::pin(crate::h2::serve(
                    &sh,
                    fe_idx,
                    &client,
                    &acc,
                    initial,
                    accept_wall,
                ))
                .await;
            } else if let Some(a) =
                crate::http::serve(&sh, fe_idx, &client, &acc, initial, accept_wall).await
            {
                if crate::http::lot::sleep(&sh, fe_idx, client, acc.clone(), accept_wall, a) {
                    return;
                }
            }
        }
        finish(&sh, fe_idx, &acc);
    }
}

/// Takes over a sleeping `mode http` client ([`crate::http::lot`]) where
/// its session stopped.
#[allow(clippy::manual_async_fn)] // as `run_http`
pub(crate) fn wake_http(
    sh: Arc<Shared>,
    s: crate::http::lot::Sleeper,
) -> impl std::future::Future<Output = ()> {
    async move {
        let crate::http::lot::Sleeper {
            sock,
            fe_idx,
            acc,
            accept_wall,
            asleep,
        } = s;
        // Registering again only fails when the system is out of memory:
        // the client is closed then.
        if let Ok(client) = sock.into_conn() {
            if let Some(a) =
                crate::http::wake(&sh, fe_idx, &client, &acc, accept_wall, asleep).await
            {
                if crate::http::lot::sleep(&sh, fe_idx, client, acc.clone(), accept_wall, a) {
                    return;
                }
            } else {
                client.close_notify();
            }
        }
        finish(&sh, fe_idx, &acc);
    }
}

/// Serves one accepted `mode http` client of a `bind … ssl` line: the
/// handshake, the exchanges, close_notify. A task type of its own, so that
/// neither kind of client carries room for the other's path.
#[allow(clippy::manual_async_fn)] // see the comment inside
pub fn run_https(
    sh: Arc<Shared>,
    fe_idx: FrontendId,
    client: Conn,
    mut acc: Accepted,
) -> impl std::future::Future<Output = ()> {
    // Not an `async fn`: its arguments would be stored twice in the
    // task (rustc keeps a copy of each); a block captures them once.
    async move {
        let accept_wall = wall_now();
        if let Some(initial) = Box::pin(prologue(&sh, fe_idx, &client, &mut acc, accept_wall)).await
        {
            if let Some((client, initial)) =
                Box::pin(secure(&sh, fe_idx, client, &acc, initial, accept_wall)).await
            {
                let alpn_h2 = client.tls_info().and_then(|t| t.alpn.as_deref()) == Some("h2");
                if alpn_h2 || acc.bind.h2 {
                    Box::pin(crate::h2::serve(
                        &sh,
                        fe_idx,
                        &client,
                        &acc,
                        initial,
                        accept_wall,
                    ))
                    .await;
                } else if let Some(a) =
                    crate::http::serve(&sh, fe_idx, &client, &acc, initial, accept_wall).await
                {
                    if crate::http::lot::sleep(&sh, fe_idx, client, acc.clone(), accept_wall, a) {
                        return;
                    }
                    finish(&sh, fe_idx, &acc);
                    return;
                }
                client.close_notify();
            }
        }
        finish(&sh, fe_idx, &acc);
    }
}

/// Serves one accepted `mode tcp` client until both sides are closed, then
/// logs it. Counters (`actconn`, frontend connections) were taken by the
/// acceptor and are released here.
#[allow(clippy::manual_async_fn)] // see the comment inside
pub fn run(
    sh: Arc<Shared>,
    fe_idx: FrontendId,
    client: Conn,
    mut acc: Accepted,
) -> impl std::future::Future<Output = ()> {
    // Not an `async fn`: its arguments would be stored twice in the
    // task (rustc keeps a copy of each); a block captures them once.
    async move {
        let accept_wall = wall_now();
        let started = crate::clock::now();
        let Some(initial) = Box::pin(prologue(&sh, fe_idx, &client, &mut acc, accept_wall)).await
        else {
            finish(&sh, fe_idx, &acc);
            return;
        };
        let Some((client, initial)) =
            Box::pin(secure(&sh, fe_idx, client, &acc, initial, accept_wall)).await
        else {
            finish(&sh, fe_idx, &acc);
            return;
        };
        // The session's details stay here, lent (not a second copy).
        run_tcp(
            sh.clone(),
            fe_idx,
            client,
            &acc,
            initial,
            accept_wall,
            started,
        )
        .await;
    }
}

/// The `mode tcp` part of a session: server connection, forwarding, log.
#[allow(clippy::too_many_arguments, clippy::manual_async_fn)] // see inside
fn run_tcp(
    sh: Arc<Shared>,
    fe_idx: FrontendId,
    client: Conn,
    acc: &Accepted,
    initial: Vec<u8>,
    accept_wall: Duration,
    started: Instant,
) -> impl std::future::Future<Output = ()> + use<'_> {
    // Not an `async fn`: its arguments would be stored twice in every
    // session's task (rustc keeps a copy of each); a block captures them
    // once.
    async move {
        let mut initial = initial;
        let fe = &sh.frontends[fe_idx];
        let fe_px = &sh.cfg.proxies[fe.proxy];
        let mut rec = LogRecord {
            client: acc.peer,
            frontend_addr: acc.local,
            frontend: &fe.name,
            backend: &fe.name,
            accept: accept_wall,
            tw: -1,
            tc: -1,
            term: Term::NORMAL,
            hostname: &sh.hostname,
            ..LogRecord::default()
        };
        let l4 = || crate::http::rules::L4Ctx {
            src: acc.peer,
            dst: acc.local,
            tls: client.tls_info(),
        };
        let Some(be) = sh.select_backend(fe_idx, &l4()).cloned() else {
            rec.term = Term::new(Cause::Proxy, State::Request);
            rec.tt = ms(crate::clock::elapsed(started));
            crate::stats::count(&sh, fe_idx, None, None, &rec, false);
            log_session(&sh, fe_idx, &rec);
            finish(&sh, fe_idx, acc);
            return;
        };
        let be_px = &sh.cfg.proxies[be.proxy];
        rec.backend = &be.name;
        crate::sessions::set_target(acc.reg, be.proxy, None);

        // While the server connection is being made, client bytes are read into
        // `initial` (up to a buffer) so that a client that leaves is noticed:
        // with `option abortonclose` it aborts the attempt (`CQ`/`CC`),
        // otherwise its FIN is passed on once connected, as HAProxy does.
        let abortonclose = fe_px.options.abortonclose || be_px.options.abortonclose;
        let mut client_eof = false;
        // A block: what connecting needs (the balancing key, the attempts,
        // their result) is not kept in the state that forwards for the
        // session's whole life.
        let conn = {
            let key: Vec<u8> = match acc.peer.map(|p| p.ip()) {
                Some(IpAddr::V4(a)) => a.octets().to_vec(),
                Some(IpAddr::V6(a)) => a.octets().to_vec(),
                None => Vec::new(),
            };
            let mut attempts = Attempts::default();
            let mut left_early = false;
            let connected = {
                // Boxed: its state is only needed while connecting, so an established
                // (idle) session does not carry room for it.
                let mut no_reuse = |_| None;
                let sni = be.snis(&l4());
                let mut attempt = Box::pin(connect::connect(
                    &be,
                    be_px,
                    &key,
                    acc.local,
                    &mut attempts,
                    &mut no_reuse,
                    &sni,
                ));
                let mut watching = true;
                loop {
                    tokio::select! {
                        r = &mut attempt => break r,
                        _ = crate::sessions::killed(&sh, acc.reg) => break Err(connect::ConnectFail::Killed),
                        ev = read_early(&client, &mut initial, sh.bufsize), if watching => match ev {
                            Early::More => {}
                            Early::Full => watching = false,
                            Early::Eof if abortonclose => {
                                left_early = true;
                                break Err(connect::ConnectFail::ClientAbort { queued: false });
                            }
                            Early::Eof => {
                                client_eof = true;
                                watching = false;
                            }
                            Early::Error => {
                                left_early = true;
                                break Err(connect::ConnectFail::ClientAbort { queued: false });
                            }
                        },
                    }
                }
            };
            let connected = match connected {
                Err(connect::ConnectFail::ClientAbort { .. }) if left_early => {
                    Err(connect::ConnectFail::ClientAbort {
                        queued: attempts.last_srv.is_none(),
                    })
                }
                r => r,
            };
            rec.retries = attempts.retries;
            rec.redispatched = attempts.redispatched;
            rec.srv_retries = attempts.same_server_retries;
            rec.failed_srv = attempts.failed_srv;
            rec.srv_queue = attempts.srv_queue;
            rec.be_queue = attempts.be_queue;
            rec.tw = ms(attempts.tw);
            let srv_name =
                |i: Option<usize>| i.and_then(|i| be.servers.get(i)).map(|s| s.name.as_str());
            match connected {
                Ok(c) => {
                    rec.tc = attempts.tc.map_or(-1, ms);
                    c
                }
                Err(fail) => {
                    rec.term = fail.term();
                    rec.server = srv_name(attempts.last_srv);
                    rec.tt = ms(crate::clock::elapsed(started));
                    rec.actconn = sh.actconn.load(Ordering::Relaxed);
                    rec.feconn = fe.conns.load(Ordering::Relaxed);
                    rec.beconn = be.conns.load(Ordering::Relaxed);
                    crate::stats::count(&sh, fe_idx, Some(&be), attempts.last_srv, &rec, false);
                    log_session(&sh, fe_idx, &rec);
                    finish(&sh, fe_idx, acc);
                    return;
                }
            }
        };
        let srv = &be.servers[conn.srv];
        crate::sessions::set_target(acc.reg, be.proxy, Some(conn.srv));
        rec.server = Some(&srv.name);
        rec.server_addr = conn.server_addr;
        rec.source_addr = conn.source_addr;
        rec.actconn = sh.actconn.load(Ordering::Relaxed);
        rec.feconn = fe.conns.load(Ordering::Relaxed);
        rec.beconn = be.conns.load(Ordering::Relaxed);
        rec.srvconn = srv.cur_conns.load(Ordering::Relaxed);

        let mut proxy_ok = true;
        if let Some(v) = srv.send_proxy {
            let hdr = match (acc.peer, acc.local) {
                (Some(s), Some(d)) => match v {
                    SendProxy::V1 => proxy_protocol::encode_v1(s, d),
                    SendProxy::V2 => proxy_protocol::encode_v2(s, d),
                },
                _ => match v {
                    SendProxy::V1 => b"PROXY UNKNOWN\r\n".to_vec(),
                    SendProxy::V2 => {
                        let mut h = proxy_protocol::V2_SIGNATURE.to_vec();
                        h.extend_from_slice(&[0x20, 0x00, 0x00, 0x00]);
                        h
                    }
                },
            };
            proxy_ok = conn.conn.send_all(&hdr).await.is_ok();
        }

        let link = crate::tcp::Link {
            be: be.clone(),
            srv: conn.srv,
            started,
            accept_wall,
            tw: rec.tw,
            tc: rec.tc,
            retries: rec.retries,
            redispatched: rec.redispatched,
            srv_retries: rec.srv_retries,
            failed_srv: rec.failed_srv,
            srv_queue: rec.srv_queue,
            be_queue: rec.be_queue,
            server_addr: rec.server_addr,
            source_addr: rec.source_addr,
            actconn: rec.actconn,
            feconn: rec.feconn,
            beconn: rec.beconn,
            srvconn: rec.srvconn,
        };
        if !proxy_ok {
            rec.term = Term::new(Cause::Server, State::Connect);
            drop(conn.conn);
            be.release(conn.srv);
            rec.tt = ms(crate::clock::elapsed(started));
            crate::stats::count(&sh, fe_idx, Some(&be), Some(conn.srv), &rec, false);
            log_session(&sh, fe_idx, &rec);
            drop(client);
            finish(&sh, fe_idx, acc);
            return;
        }
        drop(rec);
        let start = crate::tcp::Start::New {
            initial,
            client_eof,
        };
        crate::tcp::forward(&sh, fe_idx, client, conn.conn, acc, link, start).await;
    }
}

/// What reading the client during the connect phase found.
enum Early {
    More,
    Full,
    Eof,
    Error,
}

/// Reads client bytes into `buf` (up to `cap`) while the server connection
/// is being made. Nothing is allocated until the client has sent something.
async fn read_early(client: &Conn, buf: &mut Vec<u8>, cap: usize) -> Early {
    if buf.len() >= cap {
        return Early::Full;
    }
    if std::future::poll_fn(|cx| client.poll_read_ready(cx))
        .await
        .is_err()
    {
        return Early::Error;
    }
    let have = buf.len();
    buf.resize(cap, 0);
    let r = client.try_read(&mut buf[have..]);
    let got = *r.as_ref().unwrap_or(&0);
    buf.truncate(have + got);
    if buf.is_empty() {
        // Readiness can be spurious: hold no memory for a client that has
        // sent nothing (idle connections are a headline figure).
        *buf = Vec::new();
    }
    match r {
        Ok(0) => Early::Eof,
        Ok(_) if buf.len() >= cap => Early::Full,
        Ok(_) => Early::More,
        Err(e)
            if e.kind() == std::io::ErrorKind::WouldBlock
                || e.kind() == std::io::ErrorKind::Interrupted =>
        {
            Early::More
        }
        Err(_) => Early::Error,
    }
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
    let fe = &sh.frontends[fe_idx];
    if fe.logger.is_empty() {
        return;
    }
    let px = &sh.cfg.proxies[fe.proxy];
    if px.options.dontlognull && rec.bytes_in == 0 {
        return;
    }
    if px.options.dontlog_normal && rec.term.is_normal() {
        return;
    }
    if let Some(f) = &px.log_format {
        fe.logger.send(level::INFO, &render(f, rec));
    }
}

pub(crate) fn finish(sh: &Shared, fe_idx: FrontendId, acc: &Accepted) {
    crate::sessions::unregister(acc.reg);
    acc.bind.conns.fetch_sub(1, Ordering::SeqCst);
    sh.frontends[fe_idx].conns.fetch_sub(1, Ordering::SeqCst);
    sh.actconn.fetch_sub(1, Ordering::SeqCst);
    if sh.accept_paused.load(Ordering::SeqCst) > 0 {
        sh.conn_freed.notify_waiters();
    }
}
