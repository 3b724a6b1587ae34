//! HTTP/2 towards clients (`alpn h2` on `bind … ssl`, `proto h2` in clear
//! text): the connection task drives the codec and enforces the limits;
//! each stream runs as a task of its own through the HTTP/1.1 exchange
//! (rules, balancing, logs) over a [`stream::H2Stream`].
//!
//! Defences: `tune.h2.max-concurrent-streams` is announced and also counts
//! streams the client reset while weir still works on them, so rapid resets
//! (CVE-2023-44487) cannot pile up work: streams over the limit are refused,
//! and a client that keeps opening them gets GOAWAY ENHANCE_YOUR_CALM. The
//! codec bounds header blocks (CONTINUATION floods: `tune.bufsize`), queued
//! control frames (SETTINGS and PING floods) and resets it must send.

mod body;
mod convert;
mod io;
pub mod stream;
pub mod upstream;

use crate::conn::Conn;
use crate::session::Accepted;
use crate::state::Shared;
use bytes::Bytes;
use h2::server::SendResponse;
use h2::{Reason, RecvStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use stream::H2Stream;
use tokio::sync::Notify;
use tokio::time::Instant;
use weir_proto::h1::Limits;

/// Streams refused over the limit before the client is told to calm down.
const MAX_REFUSED: usize = 200;

/// A connection's running stream tasks, and a wake-up when the last one
/// ends (the idle and closing timers start from then).
#[derive(Default)]
struct Tasks {
    n: AtomicUsize,
    ended: Notify,
}

/// Counts one stream task while it runs.
struct Alive(Arc<Tasks>);

impl Drop for Alive {
    fn drop(&mut self) {
        if self.0.n.fetch_sub(1, Ordering::Relaxed) == 1 {
            self.0.ended.notify_one();
        }
    }
}

/// Serves one HTTP/2 client connection until it closes, a protocol error
/// ends it (GOAWAY with the error's code), it stays idle past `timeout
/// http-keep-alive`, or weir stops (GOAWAY, then the running streams end).
pub async fn serve(
    sh: &Arc<Shared>,
    fe_idx: usize,
    client: &Conn,
    acc: &Accepted,
    initial: Vec<u8>,
    accept_wall: Duration,
) {
    // Frames leave as the codec writes them: with Nagle's algorithm, a
    // response's DATA written after its HEADERS waits for the client's
    // delayed ACK (40 ms) whenever HEADERS is still unacknowledged.
    if let Some(s) = client.tcp().filter(|_| !acc.nodelay) {
        let _ = s.set_nodelay(true);
    }
    let g = &sh.cfg.global.h2;
    let fe_px = &sh.cfg.proxies[sh.frontends[fe_idx].proxy];
    let (head_t, idle_t) = crate::http::head_timeouts(fe_px);
    let limit = match g.max_concurrent_streams {
        0 => u32::MAX,
        n => n,
    };
    let frame = g.max_frame_size.min(sh.bufsize.max(16384) as u32);
    let mut b = h2::server::Builder::new();
    b.initial_window_size(g.initial_window_size)
        .initial_connection_window_size((1 << 31) - 1)
        .max_frame_size(frame)
        .header_table_size(g.header_table_size)
        .max_header_list_size(sh.bufsize as u32)
        .max_concurrent_streams(limit)
        .max_send_buffer_size(sh.bufsize.max(16384));
    let hs = b.handshake::<_, Bytes>(io::ConnIo::new(client, initial));
    let mut conn = match crate::http::io::timed(head_t, hs).await {
        Some(Ok(c)) => c,
        Some(Err(_)) => return linger(client).await,
        None => return,
    };
    let alive = Arc::new(Tasks::default());
    let mut refused = 0usize;
    let mut ordinal = 0u64;
    let mut stopping = sh.stopping.subscribe();
    let mut killing = sh.killing.subscribe();
    let mut idle_since = crate::clock::now();
    let mut closing = false;
    let mut fresh = Vec::new();
    let mut ended = false;
    while !ended {
        let idle = alive.n.load(Ordering::Relaxed) == 0;
        // Idle: `timeout http-keep-alive`; closing with no stream left: a
        // moment for the client to take the GOAWAY (and answer its PING).
        let deadline = if closing {
            idle.then_some(idle_since + LINGER)
        } else {
            idle_t.filter(|_| idle).map(|t| idle_since + t)
        };
        let ev = tokio::select! {
            r = std::future::poll_fn(|cx| accept_some(&mut conn, cx, &mut fresh)) => Ev::Streams(r),
            _ = sleep_until(deadline) => Ev::Close,
            _ = stopping.wait_for(|s| *s), if !closing => Ev::Close,
            _ = killing.wait_for(|k| *k) => Ev::Kill,
            _ = alive.ended.notified() => Ev::Ended,
        };
        match ev {
            // The codec sent GOAWAY for an error, or the client left: the
            // streams that came before still run.
            Ev::Streams(end) => ended = end.is_some(),
            Ev::Close if closing => break,
            Ev::Close => {
                conn.graceful_shutdown();
                closing = true;
                idle_since = crate::clock::now();
                continue;
            }
            Ev::Kill => {
                client.set_reset_on_close();
                return;
            }
            Ev::Ended => {
                idle_since = crate::clock::now();
                continue;
            }
        }
        if !fresh.is_empty() {
            idle_since = crate::clock::now();
        }
        for (req, mut respond) in fresh.drain(..) {
            if alive.n.load(Ordering::Relaxed) >= limit as usize {
                respond.send_reset(Reason::REFUSED_STREAM);
                refused += 1;
                if refused > MAX_REFUSED && !closing {
                    conn.abrupt_shutdown(Reason::ENHANCE_YOUR_CALM);
                    closing = true;
                }
                continue;
            }
            alive.n.fetch_add(1, Ordering::Relaxed);
            let task = StreamTask {
                sh: sh.clone(),
                fe_idx,
                acc: acc.clone(),
                tls: client.tls_info().cloned(),
                ordinal,
                accept_wall,
                _alive: Alive(alive.clone()),
            };
            ordinal += 1;
            crate::profile::spawn::<crate::profile::H2Stream, _>(task.run(req, respond));
        }
    }
    // Let the codec send what it queued (GOAWAY) before the socket closes.
    let closed = crate::http::io::timed(
        Some(LINGER),
        std::future::poll_fn(|cx| conn.poll_closed(cx)),
    )
    .await;
    drop(conn);
    if !matches!(closed, Some(Ok(()))) {
        linger(client).await;
    }
}

/// How long a connection ending on an error drains what the client still
/// sends.
const LINGER: Duration = Duration::from_secs(1);

/// Closes after an error with a FIN, not a reset: the write side first,
/// then what the client still sends is read and dropped for a moment (a
/// close with unread bytes would reset the connection, and the client
/// could lose the GOAWAY that explains it).
async fn linger(client: &Conn) {
    let _ = client.shutdown_write();
    let mut buf = [0u8; 2048];
    let _ = crate::http::io::timed(Some(LINGER), async {
        for _ in 0..64 {
            if !matches!(client.recv(&mut buf).await, Ok(n) if n > 0) {
                break;
            }
        }
    })
    .await;
}

/// A request the codec received, with the handle to answer it.
type Incoming = (http::Request<RecvStream>, SendResponse<Bytes>);

/// Streams accepted in one go, at most this many (then the other wake-ups
/// get their turn).
const BATCH: usize = 64;

/// Takes the streams the codec holds into `fresh`; ready once it has some,
/// or when the connection ended (`Some`: an error, or the client left).
fn accept_some(
    conn: &mut h2::server::Connection<io::ConnIo<&Conn>, Bytes>,
    cx: &mut std::task::Context<'_>,
    fresh: &mut Vec<Incoming>,
) -> std::task::Poll<Option<()>> {
    use std::task::Poll;
    while fresh.len() < BATCH {
        match conn.poll_accept(cx) {
            Poll::Ready(Some(Ok(r))) => fresh.push(r),
            Poll::Ready(Some(Err(_)) | None) => return Poll::Ready(Some(())),
            Poll::Pending => break,
        }
    }
    if fresh.is_empty() {
        Poll::Pending
    } else {
        Poll::Ready(None)
    }
}

/// What the connection task wakes up for.
enum Ev {
    /// Streams arrived (in `fresh`); `Some`: the connection ended after them.
    Streams(Option<()>),
    Close,
    Kill,
    /// A stream task ended.
    Ended,
}

async fn sleep_until(t: Option<Instant>) {
    match t {
        Some(t) => tokio::time::sleep_until(t).await,
        None => std::future::pending().await,
    }
}

/// What one stream's task needs.
struct StreamTask {
    sh: Arc<Shared>,
    fe_idx: usize,
    acc: Accepted,
    tls: Option<weir_rules::TlsInfo>,
    /// Streams of the connection before this one.
    ordinal: u64,
    accept_wall: Duration,
    _alive: Alive,
}

impl StreamTask {
    async fn run(self, req: http::Request<RecvStream>, mut respond: SendResponse<Bytes>) {
        let (parts, body) = req.into_parts();
        let has_body = !body.is_end_stream();
        let head = match convert::request_head(&parts, has_body) {
            Ok(h) => h,
            Err(_) => {
                respond.send_reset(Reason::PROTOCOL_ERROR);
                return;
            }
        };
        let chunked = has_body
            && parts.method != http::Method::CONNECT
            && !parts.headers.contains_key(http::header::CONTENT_LENGTH);
        let limits = Limits {
            max_head: self.sh.bufsize,
            max_headers: self.sh.maxhdr,
        };
        let conn = Conn::H2(Box::new(H2Stream::new(
            body,
            respond,
            parts.method.clone(),
            chunked,
            limits,
            self.tls,
        )));
        crate::http::serve_stream(
            &self.sh,
            self.fe_idx,
            &conn,
            &self.acc,
            head,
            self.accept_wall,
            self.ordinal,
        )
        .await;
    }
}
