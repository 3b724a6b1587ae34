//! HTTP/2 towards clients (`alpn h2` on `bind … ssl`, `proto h2` in clear
//! text) on weir's own codec: the connection task reads frames into the
//! codec ([`front::Front`]) and writes what it queued; each stream runs
//! the exchange (rules, balancing, logs) over a [`front::H2Stream`], as a
//! future the connection task polls itself (its [`StreamSet`]). Its request head is decoded from the HPACK fields
//! straight into the request model HTTP/1.1 heads are parsed into (never
//! written as text and parsed again); its body is read in HTTP/1.1 framing.
//!
//! Defences (in [`weir_proto::h2::server`]): `tune.h2.max-concurrent-streams`
//! is announced and also counts streams the client reset while weir still
//! works on them, so rapid resets (CVE-2023-44487) cannot pile up work:
//! streams over the limit are refused, and a client that keeps opening them
//! gets GOAWAY ENHANCE_YOUR_CALM. Header blocks are bounded (CONTINUATION
//! floods: `tune.bufsize`), and so are the answers waiting to be written
//! (SETTINGS and PING floods, or a client that does not read).

mod body;
mod convert;
pub mod front;
pub mod upstream;
pub(crate) mod ws;

pub(crate) use convert::upgrade_protocol;

use crate::conn::Conn;
use crate::http::rules::Vars;
use crate::session::Accepted;
use crate::state::FrontendId;
use crate::state::Shared;
use front::{Front, H2Stream};
use futures_util::stream::{FuturesUnordered, StreamExt};
use std::borrow::Cow;
use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;
use weir_proto::h1::Limits;
use weir_proto::h2::frame::ErrorCode;
use weir_proto::h2::server::{Config, Server};

/// The most bytes read from the client in one turn (then the other
/// wake-ups get theirs).
const READ_TURN: usize = 64 * 1024;
/// Bytes waiting for the client to read them above which weir stops
/// reading it: a client that floods without reading (PING, SETTINGS)
/// stalls on its own sends instead of growing weir's memory.
const MAX_UNSENT: usize = 256 * 1024;

thread_local! {
    /// The socket read buffer, shared by the thread's connections: an idle
    /// connection holds no read buffer.
    static SCRATCH: RefCell<Vec<u8>> = RefCell::new(vec![0u8; 16 * 1024]);
}

/// Serves one HTTP/2 client connection until it closes, a protocol error
/// ends it (GOAWAY with the error's code), it stays idle past `timeout
/// http-keep-alive`, or weir stops (GOAWAY, then the running streams end).
pub async fn serve(
    sh: &Arc<Shared>,
    fe_idx: FrontendId,
    client: &Conn,
    acc: &Accepted,
    initial: Vec<u8>,
    accept_wall: Duration,
    vars: Vars,
) {
    // Frames leave as the codec writes them: with Nagle's algorithm, a
    // response's DATA written after its HEADERS waits for the client's
    // delayed ACK (40 ms) whenever HEADERS is still unacknowledged.
    if let Some(s) = client.tcp().filter(|_| !acc.nodelay) {
        let _ = s.set_nodelay(true);
    }
    let fe_px = sh.proxy(sh.frontend(fe_idx).proxy);
    let (head_t, idle_t) = crate::http::head_timeouts(fe_px);
    let limits = Limits {
        max_head: sh.bufsize,
        max_headers: sh.maxhdr,
        relaxed_target: fe_px.http.accept_invalid_request,
        any_method_payload: sh.cfg.global.h1_accept_payload_with_any_method,
    };
    let (cfg, body_cap) = codec_config(sh);
    let streams = Streams {
        sh,
        fe_idx,
        acc,
        accept_wall,
        vars: &vars,
        limits,
        tls: client.tls_info().cloned(),
        ordinal: 0,
    };
    let mut l = Link {
        front: Arc::new(Front::new(Server::new(cfg), body_cap, limits)),
        streams,
        set: None,
        pending: initial,
        wbuf: Vec::new(),
        wat: 0,
        since: crate::clock::now(),
        closing: false,
        ended: false,
        failed: false,
    };
    l.feed_pending();
    let mut stopping = sh.stopping.subscribe();
    let mut killing = sh.killing.subscribe();
    loop {
        l.write(client);
        let unsent = !l.wbuf.is_empty() || client.has_pending();
        if l.failed || (l.ended && !unsent) {
            break;
        }
        let active = {
            let mut st = l.front.lock();
            st.drained(l.wbuf.len() - l.wat);
            let active = st.srv.active();
            if active == 0 && !unsent && st.srv.output().is_empty() {
                // Idle: the buffers kept while streams ran go.
                *st.srv.output() = Vec::new();
                l.wbuf = Vec::new();
            }
            active
        };
        if active > 0 {
            l.since = crate::clock::now();
        }
        if l.closing && active == 0 && !unsent {
            break;
        }
        let deadline = l.deadline(active, head_t, idle_t);
        let reading = !l.ended && l.wbuf.len() - l.wat < MAX_UNSENT;
        let ev = tokio::select! {
            // Streams first: what they queue is seen by `kick` below in
            // the same turn.
            biased;
            _ = std::future::poll_fn(|cx| poll_streams(&mut l.set, cx)), if l.set.is_some() => Ev::Kick,
            r = std::future::poll_fn(|cx| client.poll_read_ready(cx)), if reading => Ev::Read(r.is_ok()),
            r = std::future::poll_fn(|cx| client.poll_write_ready(cx)), if unsent => Ev::Write(r.is_ok()),
            _ = l.front.kick.notified() => Ev::Kick,
            _ = sleep_until(deadline) => Ev::Close,
            _ = stopping.wait_for(|s| *s), if !l.closing => Ev::Stop,
            _ = killing.wait_for(|k| *k) => Ev::Kill,
        };
        match ev {
            Ev::Read(false) | Ev::Write(false) => break,
            Ev::Read(true) => l.read(client),
            Ev::Write(true) | Ev::Kick => {}
            Ev::Close if l.closing || l.ended => break,
            Ev::Close | Ev::Stop => {
                l.front.lock().srv.goaway(ErrorCode::NoError);
                l.closing = true;
                l.since = crate::clock::now();
            }
            Ev::Kill => {
                l.front.fail_all();
                client.set_reset_on_close();
                finish(l.set);
                return;
            }
        }
    }
    l.front.fail_all();
    finish(l.set);
    if l.ended || l.failed {
        linger(client).await;
    }
}

/// Polls every stream that was woken; ready once one or more ended and
/// the others wait, so that what they all queued leaves in one write. The
/// set goes once empty: an idle connection holds none.
fn poll_streams(
    set: &mut Option<StreamSet>,
    cx: &mut std::task::Context<'_>,
) -> std::task::Poll<()> {
    let Some(s) = set else {
        return std::task::Poll::Pending;
    };
    let mut ended = false;
    loop {
        match s.poll_next_unpin(cx) {
            std::task::Poll::Ready(Some(())) => ended = true,
            std::task::Poll::Ready(None) => {
                *set = None;
                return std::task::Poll::Ready(());
            }
            std::task::Poll::Pending if ended => return std::task::Poll::Ready(()),
            std::task::Poll::Pending => return std::task::Poll::Pending,
        }
    }
}

/// Streams still running when their connection ends (they see it
/// failed) finish in a task of their own, so that the client's socket
/// closes now, as it would with no stream left.
fn finish(set: Option<StreamSet>) {
    if let Some(mut set) = set.filter(|s| !s.is_empty()) {
        crate::profile::spawn::<crate::profile::H2Stream, _>(async move {
            while set.next().await.is_some() {}
        });
    }
}

/// The codec's settings from `global`'s `tune.h2.*`, and how much unread
/// body a stream may hold.
fn codec_config(sh: &Shared) -> (Config, usize) {
    let g = &sh.cfg.global.h2;
    let limit = match g.max_concurrent_streams {
        0 => u32::MAX,
        n => n,
    };
    let cfg = Config {
        max_concurrent_streams: limit,
        initial_window: g.initial_window_size,
        max_frame: g.max_frame_size.min(sh.bufsize.max(16384) as u32),
        header_table_size: g.header_table_size,
        // Blocks are decoded up to four buffers (the HPACK table must stay
        // in step): a request whose head then exceeds `tune.bufsize` gets a
        // 431 from the exchange, as over HTTP/1.1; a larger block is a
        // flood and ends the connection.
        max_header_block: 4 * sh.bufsize.max(16384),
        extended_connect: !g.no_extended_connect,
    };
    // A stream may hold four windows of unread body (in HTTP/1.1
    // framing): what a client's honest frames fill, never a flood of
    // one-byte DATA frames.
    let body_cap = 4 * cfg.initial_window as usize + 64 * 1024;
    (cfg, body_cap)
}

/// What starts a task for each new stream of a connection.
struct Streams<'a> {
    sh: &'a Arc<Shared>,
    fe_idx: FrontendId,
    acc: &'a Accepted,
    accept_wall: Duration,
    /// The connection's variables (from `tcp-request` rules).
    vars: &'a Vars,
    limits: Limits,
    tls: Option<weir_rules::TlsInfo>,
    /// Streams started so far.
    ordinal: u64,
}

impl Streams<'_> {
    /// Starts a stream for each new request: pushed into the connection's
    /// own set of streams, polled by its task (no task per stream).
    fn start(&mut self, front: &Arc<Front>, fresh: Vec<front::Fresh>, set: &mut Option<StreamSet>) {
        for f in fresh {
            let method = match f.head.as_ref().map(|h| h.method.as_str()) {
                Ok("GET") => Cow::Borrowed("GET"),
                Ok("HEAD") => Cow::Borrowed("HEAD"),
                Ok("POST") => Cow::Borrowed("POST"),
                Ok(m) => Cow::Owned(m.to_string()),
                Err(_) => Cow::Borrowed("GET"),
            };
            let conn = H2Stream::new(front.clone(), f.id, method, self.limits, self.tls.clone());
            let task = StreamTask {
                sh: self.sh.clone(),
                fe_idx: self.fe_idx,
                acc: self.acc.clone(),
                ordinal: self.ordinal,
                accept_wall: self.accept_wall,
                // Each stream starts from the connection's variables.
                vars: (!self.vars.is_empty()).then(|| Box::new(self.vars.clone())),
            };
            self.ordinal += 1;
            set.get_or_insert_with(FuturesUnordered::new)
                .push(Box::pin(task.run(conn, f)));
        }
    }
}

/// The streams of one connection, polled by the connection's task: a
/// response a stream queues is written in the same turn, and starting or
/// ending a stream costs no task of the runtime's.
type StreamSet = FuturesUnordered<Pin<Box<dyn Future<Output = ()> + Send>>>;

/// The connection task's state between two wake-ups.
/// The most write buffer a busy connection keeps between writes.
const KEPT_WBUF: usize = 64 * 1024;

struct Link<'a> {
    front: Arc<Front>,
    streams: Streams<'a>,
    /// The running streams (none while idle).
    set: Option<StreamSet>,
    /// Bytes read that the codec has not taken yet.
    pending: Vec<u8>,
    /// Frames to write, from `wat` on.
    wbuf: Vec<u8>,
    wat: usize,
    /// The last activity (for the idle and linger deadlines).
    since: Instant,
    /// GOAWAY sent for a soft stop or an idle close.
    closing: bool,
    /// The codec ended the connection (GOAWAY queued), or the client left.
    ended: bool,
    /// The socket failed.
    failed: bool,
}

impl Link<'_> {
    /// Feeds what waits in `pending` to the codec.
    fn feed_pending(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        match self.front.feed(&self.pending) {
            Ok((n, fresh)) => {
                self.pending.drain(..n);
                self.streams.start(&self.front, fresh, &mut self.set);
            }
            Err(_) => self.ended = true,
        }
    }

    /// Writes what the codec queued, as far as the socket takes it.
    fn write(&mut self, client: &Conn) {
        let busy = {
            let mut st = self.front.lock();
            let busy = st.busy();
            let out = st.srv.output();
            if !out.is_empty() {
                if self.wbuf.is_empty() {
                    std::mem::swap(out, &mut self.wbuf);
                    self.wat = 0;
                } else {
                    self.wbuf.extend_from_slice(out);
                    out.clear();
                }
            }
            if !busy && out.is_empty() {
                // The codec's buffer, maybe a former write buffer, goes too.
                *out = Vec::new();
            }
            busy
        };
        while self.wat < self.wbuf.len() {
            match client.try_send(self.wbuf.get(self.wat..).unwrap_or_default()) {
                // A socket that takes nothing while it says it is writable
                // is broken: never spin on it.
                Ok(0) => {
                    self.failed = true;
                    break;
                }
                Ok(n) => self.wat += n,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(_) => {
                    self.failed = true;
                    break;
                }
            }
        }
        if self.wat == self.wbuf.len() {
            // While streams run, the buffer goes back to the codec at the
            // next write (no growth from empty for every batch of frames);
            // an idle connection keeps none.
            if busy && self.wbuf.capacity() <= KEPT_WBUF {
                self.wbuf.clear();
            } else {
                self.wbuf = Vec::new();
            }
            self.wat = 0;
            if client.has_pending() {
                match client.try_flush() {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                    Err(_) => self.failed = true,
                }
            }
        }
    }

    /// When the connection closes if nothing happens. Idle: the head
    /// timeout before the first request, then `timeout http-keep-alive`;
    /// ended: a moment for the last answers to leave; closing (soft stop):
    /// the same once no stream runs (running streams finish first, however
    /// long they take).
    fn deadline(
        &self,
        active: usize,
        head_t: Option<Duration>,
        idle_t: Option<Duration>,
    ) -> Option<Instant> {
        if self.ended {
            Some(self.since + LINGER)
        } else if active > 0 {
            None
        } else if self.closing {
            Some(self.since + LINGER)
        } else if self.streams.ordinal == 0 {
            head_t.map(|t| self.since + t)
        } else {
            idle_t.map(|t| self.since + t)
        }
    }

    /// Reads what the client sent (up to a turn's worth) into the codec,
    /// starting a task for each new stream.
    fn read(&mut self, client: &Conn) {
        let mut turn = 0;
        while turn < READ_TURN && !self.ended {
            let front = &self.front;
            let pending = &mut self.pending;
            let r = SCRATCH.with_borrow_mut(|buf| match client.try_recv(buf) {
                Ok(0) => Err(true),
                Ok(n) => {
                    let got = buf.get(..n).unwrap_or_default();
                    let r = if pending.is_empty() {
                        front.feed(got).map(|(used, fresh)| {
                            pending.extend_from_slice(got.get(used..).unwrap_or_default());
                            fresh
                        })
                    } else {
                        pending.extend_from_slice(got);
                        front.feed(pending).map(|(used, fresh)| {
                            pending.drain(..used);
                            fresh
                        })
                    };
                    r.map(|f| (n, f)).map_err(|_| true)
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Err(false),
                Err(_) => Err(true),
            });
            match r {
                Ok((n, fresh)) => {
                    turn += n;
                    self.streams.start(&self.front, fresh, &mut self.set);
                }
                Err(end) => {
                    self.ended |= end;
                    break;
                }
            }
        }
        if self.ended {
            self.since = crate::clock::now();
        }
    }
}

/// What the connection task wakes up for.
enum Ev {
    /// The socket is readable (`false`: it failed).
    Read(bool),
    /// The socket takes more (`false`: it failed).
    Write(bool),
    /// A stream queued frames.
    Kick,
    Close,
    Stop,
    Kill,
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

async fn sleep_until(t: Option<Instant>) {
    match t {
        Some(t) => tokio::time::sleep_until(t).await,
        None => std::future::pending().await,
    }
}

/// What one stream needs.
struct StreamTask {
    sh: Arc<Shared>,
    fe_idx: FrontendId,
    acc: Accepted,
    /// Streams of the connection before this one.
    ordinal: u64,
    accept_wall: Duration,
    vars: Option<Box<Vars>>,
}

impl StreamTask {
    /// Not an `async fn`: its arguments would be kept twice (moved from
    /// the future's arguments into its locals); a block keeps them once.
    #[allow(clippy::manual_async_fn)]
    fn run(self, stream: H2Stream, f: front::Fresh) -> impl Future<Output = ()> + Send {
        // The exchange's state is boxed when the stream first runs: the
        // future pushed stays small, so starting a stream moves a few
        // hundred bytes instead of the whole exchange (memcpy was 4 % of
        // an HTTP/2 request's CPU).
        async move {
            Box::pin(crate::http::serve_stream(
                &self.sh,
                self.fe_idx,
                crate::http::peer::Peer::H2(&stream),
                &self.acc,
                f.head,
                self.accept_wall,
                self.ordinal,
                self.vars,
            ))
            .await;
        }
    }
}
