//! Bidirectional forwarding between a client and a server: half-close
//! passed on in each direction, HAProxy's inactivity timeouts (`client`,
//! `server`, `tunnel`, `client-fin`, `server-fin`), userspace buffers taken
//! from a per-thread pool only while bytes are in flight, or splice(2).

use crate::conn::{Conn, Io};
use crate::splice::{self, Pipe};
use crate::term::{Cause, State, Term};
use std::cell::RefCell;
use std::future::Future;
use std::io;
use std::os::fd::AsRawFd;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::Interest;
use tokio::time::{Instant, Sleep};

/// Free buffers of one size.
type SizeClass = (usize, Vec<Box<[u8]>>);

thread_local! {
    /// Free buffers of this thread, one list per size.
    static BUFFERS: RefCell<Vec<SizeClass>> = const { RefCell::new(Vec::new()) };
}
/// Bytes of free buffers a thread keeps per size (16 KiB buffers: 256 of
/// them; 256 KiB bulk chunks: 16).
const BUFFER_POOL_BYTES: usize = 4 << 20;

/// Once a direction fills a whole `tune.bufsize` buffer in one read it is a
/// bulk transfer: it reads in chunks of this size while the receiver keeps
/// up, which divides system calls and loopback segments per byte (measured
/// in docs/design.md). A receiver that falls behind sends the direction back
/// to `tune.bufsize` reads. Idle connections hold no buffer at all.
pub const BULK_CHUNK: usize = 256 * 1024;

pub(crate) fn get_buffer(size: usize) -> Box<[u8]> {
    BUFFERS
        .with(|b| {
            b.borrow_mut()
                .iter_mut()
                .find(|(s, _)| *s == size)
                .and_then(|(_, l)| l.pop())
        })
        .unwrap_or_else(|| vec![0u8; size].into_boxed_slice())
}

pub(crate) fn put_buffer(buf: Box<[u8]>) {
    BUFFERS.with(|b| {
        let mut b = b.borrow_mut();
        let size = buf.len();
        match b.iter_mut().find(|(s, _)| *s == size) {
            Some((_, l)) if (l.len() + 1) * size <= BUFFER_POOL_BYTES => l.push(buf),
            Some(_) => {}
            None => b.push((size, vec![buf])),
        }
    });
}

/// Inactivity timeouts of a forwarding session (`None` = infinite).
#[derive(Debug, Clone, Copy, Default)]
pub struct FwdTimeouts {
    pub client: Option<Duration>,
    pub server: Option<Duration>,
    pub client_fin: Option<Duration>,
    pub server_fin: Option<Duration>,
    pub tunnel: Option<Duration>,
    /// `option independent-streams` on the frontend: only the client's
    /// own bytes refresh its read timeout (bytes sent to it do not).
    pub client_reads_only: bool,
    /// The same on the backend, for the server.
    pub server_reads_only: bool,
}

impl FwdTimeouts {
    /// The timeouts between a frontend's client and a backend's server.
    pub fn between(fe: &weir_config::Proxy, be: &weir_config::Proxy) -> FwdTimeouts {
        FwdTimeouts {
            client: fe.timeouts.client,
            server: be.timeouts.server,
            client_fin: fe.timeouts.client_fin,
            server_fin: be.timeouts.server_fin,
            tunnel: be.timeouts.tunnel,
            client_reads_only: fe.options.independent_streams,
            server_reads_only: be.options.independent_streams,
        }
    }

    /// Whether a side's read timeout is kept apart (see
    /// [`Duplex::read_deadline`]).
    pub fn reads_apart(&self) -> bool {
        self.tunnel.is_none() && (self.client_reads_only || self.server_reads_only)
    }

    /// The client's and the server's timeouts, those of a half-closed
    /// session when `half`.
    fn sides(&self, half: bool) -> (Option<Duration>, Option<Duration>) {
        if half {
            (
                self.client_fin.or(self.client),
                self.server_fin.or(self.server),
            )
        } else {
            (self.client, self.server)
        }
    }
}

/// How forwarding ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// Both directions closed normally.
    Done,
    ClientTimeout,
    ServerTimeout,
    /// The client reset or failed.
    ClientError,
    ServerError,
    /// Idle for the time given to [`Duplex::nap_after`], nothing in flight
    /// and both directions open: the session may sleep
    /// ([`crate::http::lot`]) and resume with [`Duplex::resume`].
    Idle,
}

impl End {
    /// The termination state a log line shows for it.
    pub fn term(self) -> Term {
        match self {
            End::Done => Term::NORMAL,
            End::ClientTimeout => Term::new(Cause::ClientTimeout, State::Data),
            End::ServerTimeout => Term::new(Cause::ServerTimeout, State::Data),
            End::ClientError => Term::new(Cause::Client, State::Data),
            End::ServerError => Term::new(Cause::Server, State::Data),
            End::Idle => Term::NORMAL,
        }
    }
}

/// Bytes moved and how it ended.
#[derive(Debug, Clone, Copy)]
pub struct Outcome {
    pub end: End,
    pub client_to_server: u64,
    pub server_to_client: u64,
}

/// Where a forwarding session stands between two [`Duplex`] runs (it
/// slept in between): bytes so far and each side's last activity, which
/// the inactivity timeouts count from.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    pub client_to_server: u64,
    pub server_to_client: u64,
    pub last_client: Instant,
    pub last_server: Instant,
}

struct Dir {
    buf: Option<Box<[u8]>>,
    pos: usize,
    len: usize,
    pipe: Option<Pipe>,
    splice: bool,
    eof: bool,
    shut: bool,
    bytes: u64,
    /// Set once a read filled a whole buffer: read in bigger chunks.
    bulk: bool,
}

impl Dir {
    /// Bytes read before forwarding began, to be written first.
    fn preload(&mut self, bytes: &[u8], bufsize: usize) {
        if !bytes.is_empty() {
            let mut b = vec![0u8; bytes.len().max(bufsize)].into_boxed_slice();
            crate::cut::copy_prefix(&mut b, bytes);
            self.len = bytes.len();
            self.bytes += bytes.len() as u64;
            self.buf = Some(b);
        }
    }

    fn new(splice: bool) -> Self {
        Dir {
            buf: None,
            pos: 0,
            len: 0,
            pipe: None,
            splice,
            eof: false,
            shut: false,
            bytes: 0,
            bulk: false,
        }
    }
    fn pending(&self) -> bool {
        self.pos < self.len || self.pipe.as_ref().is_some_and(|p| p.len > 0)
    }
}

impl Dir {
    /// Writes what waits (in the pipe, or the buffer) to `dst`. A short
    /// write from the buffer means the receiver is slower than the sender:
    /// back to small reads, and the rest parked in a small buffer so that a
    /// stalled direction does not pin a bulk chunk.
    fn write_to<I: Io + ?Sized>(&mut self, dst: &I, bufsize: usize) -> io::Result<usize> {
        if let Some(p) = self.pipe.as_mut() {
            let (rd, len) = (p.rd, p.len);
            return spliced(dst, Interest::WRITABLE, |fd| splice::splice(rd, fd, len))
                .inspect(|&n| p.len -= n);
        }
        let Some(b) = self.buf.as_ref() else {
            return Ok(0);
        };
        // A short write means the socket buffer is full (the write cleared
        // readiness without another call).
        let chunk = b.get(self.pos..self.len).unwrap_or_default();
        let r = dst.try_send(chunk);
        let wrote = *r.as_ref().unwrap_or(&0);
        let short = r.is_err() || wrote < chunk.len();
        self.pos += wrote;
        if short {
            self.bulk = false;
            self.shrink(bufsize);
        }
        r
    }

    /// Moves what is left of a bulk buffer into a small one.
    fn shrink(&mut self, bufsize: usize) {
        let rest = self.len - self.pos;
        let Some(big) = self
            .buf
            .as_ref()
            .filter(|b| b.len() > bufsize && rest <= bufsize)
        else {
            return;
        };
        let mut small = get_buffer(bufsize);
        if let (Some(to), Some(from)) = (small.get_mut(..rest), big.get(self.pos..self.len)) {
            to.copy_from_slice(from);
        }
        if let Some(big) = self.buf.replace(small) {
            put_buffer(big);
        }
        self.pos = 0;
        self.len = rest;
    }

    /// Gives the buffer and the pipe back once all was sent.
    fn release_if_sent(&mut self) {
        if self.pending() {
            return;
        }
        self.pos = 0;
        self.len = 0;
        if let Some(b) = self.buf.take() {
            put_buffer(b);
        }
        if let Some(p) = self.pipe.take() {
            splice::put_pipe(p);
        }
    }

    /// Splices what `src` has into a pipe; whether anything was read.
    fn splice_from<I: Io + ?Sized>(
        &mut self,
        src: &I,
        pipesize: Option<usize>,
    ) -> Result<bool, Fail> {
        let Ok(mut p) = splice::get_pipe(pipesize) else {
            self.splice = false;
            return Ok(false);
        };
        let wr = p.wr;
        let max = pipesize.unwrap_or(splice::DEFAULT_PIPE_SIZE).max(4096);
        match spliced(src, Interest::READABLE, |fd| splice::splice(fd, wr, max)) {
            Ok(0) => {
                self.eof = true;
                splice::put_pipe(p);
                Ok(false)
            }
            Ok(n) => {
                p.len = n;
                self.bytes += n as u64;
                self.pipe = Some(p);
                Ok(true)
            }
            Err(e)
                if e.kind() == io::ErrorKind::WouldBlock
                    || e.kind() == io::ErrorKind::Interrupted =>
            {
                splice::put_pipe(p);
                Ok(false)
            }
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                // Not spliceable after all: fall back to buffers.
                splice::put_pipe(p);
                self.splice = false;
                Ok(false)
            }
            Err(_) => Err(Fail::Src),
        }
    }

    /// Reads what `src` has into a buffer (a bulk one once reads fill
    /// buffers); whether anything was read. A short read clears readiness:
    /// the socket is drained.
    fn read_from<I: Io + ?Sized>(&mut self, src: &I, bufsize: usize) -> Result<bool, Fail> {
        let size = if self.bulk {
            bufsize.max(BULK_CHUNK)
        } else {
            bufsize
        };
        let mut b = get_buffer(size);
        match src.try_recv(&mut b) {
            Ok(0) => {
                self.eof = true;
                put_buffer(b);
                Ok(false)
            }
            Ok(n) => {
                if n == b.len() {
                    self.bulk = true;
                }
                self.pos = 0;
                self.len = n;
                self.bytes += n as u64;
                self.buf = Some(b);
                Ok(true)
            }
            Err(e)
                if e.kind() == io::ErrorKind::WouldBlock
                    || e.kind() == io::ErrorKind::Interrupted =>
            {
                put_buffer(b);
                Ok(false)
            }
            Err(_) => {
                put_buffer(b);
                Err(Fail::Src)
            }
        }
    }
}

/// Runs a splice on `io`'s socket: only a transport has one (a stream of a
/// multiplexed connection never splices).
fn spliced<I: Io + ?Sized>(
    io: &I,
    interest: Interest,
    f: impl FnOnce(std::os::fd::RawFd) -> io::Result<usize>,
) -> io::Result<usize> {
    match io.transport() {
        Some(c) => {
            let fd = c.as_raw_fd();
            c.try_io(interest, || f(fd))
        }
        None => Err(io::ErrorKind::Unsupported.into()),
    }
}

/// Which side an I/O error came from.
enum Fail {
    Src,
    Dst,
}

/// The forwarding future. Poll it to completion.
pub struct Duplex<'a, I: Io = Conn> {
    client: &'a I,
    server: &'a I,
    c2s: Dir,
    s2c: Dir,
    last_client: Instant,
    last_server: Instant,
    /// The last bytes read from each side (its read timeout, kept apart
    /// with `option independent-streams`).
    read_client: Instant,
    read_server: Instant,
    /// A read timeout that shut its direction while the other went on:
    /// how the session is logged once it ends.
    first: Option<End>,
    t: FwdTimeouts,
    sleep: Pin<Box<Sleep>>,
    armed: Option<Instant>,
    bufsize: usize,
    pipesize: Option<usize>,
    /// Ends with [`End::Idle`] once idle this long (see [`End::Idle`]).
    nap: Option<Duration>,
    /// When this run started: a nap counts from it too. A session just
    /// woken by readable bytes must not sleep again before tokio's event
    /// loop has seen the socket (it would be woken again at once).
    began: Instant,
}

/// Options of one forwarding session.
#[derive(Debug, Clone, Copy)]
pub struct FwdOptions {
    pub bufsize: usize,
    pub splice_request: bool,
    pub splice_response: bool,
    pub pipesize: Option<usize>,
}

impl<'a, I: Io> Duplex<'a, I> {
    /// Starts forwarding; `initial` holds client bytes already read (after a
    /// PROXY header, or while connecting) that go to the server first, and
    /// `client_eof` says the client already closed its side.
    pub fn new(
        client: &'a I,
        server: &'a I,
        t: FwdTimeouts,
        o: FwdOptions,
        initial: &[u8],
        client_eof: bool,
    ) -> Self {
        let tcp = |c: &I| c.transport().is_some_and(Conn::is_tcp);
        let both_tcp = tcp(client) && tcp(server);
        let mut c2s = Dir::new(o.splice_request && both_tcp);
        let s2c = Dir::new(o.splice_response && both_tcp);
        c2s.preload(initial, o.bufsize);
        c2s.eof = client_eof;
        let now = crate::clock::now();
        Duplex {
            client,
            server,
            c2s,
            s2c,
            last_client: now,
            last_server: now,
            read_client: now,
            read_server: now,
            first: None,
            t,
            sleep: Box::pin(tokio::time::sleep_until(
                now + Duration::from_secs(86400 * 365),
            )),
            armed: None,
            bufsize: o.bufsize,
            pipesize: o.pipesize,
            nap: None,
            began: now,
        }
    }

    /// The server's bytes read before forwarding began (by `tcp-response
    /// content` rules), written to the client first; `sent` client bytes
    /// went to the server then, and `server_eof` says the server ended.
    pub fn with_reply(mut self, reply: &[u8], server_eof: bool, sent: u64) -> Self {
        self.s2c.preload(reply, self.bufsize);
        self.s2c.eof = server_eof;
        self.c2s.bytes += sent;
        self
    }

    /// Forwarding that goes on from `p`, after the session slept.
    pub fn resume(
        client: &'a I,
        server: &'a I,
        t: FwdTimeouts,
        o: FwdOptions,
        p: Progress,
    ) -> Self {
        let mut d = Duplex::new(client, server, t, o, &[], false);
        d.c2s.bytes = p.client_to_server;
        d.s2c.bytes = p.server_to_client;
        d.last_client = p.last_client;
        d.last_server = p.last_server;
        (d.read_client, d.read_server) = (p.last_client, p.last_server);
        d
    }

    /// Ends with [`End::Idle`] once nothing moved for `after`.
    pub fn nap_after(mut self, after: Option<Duration>) -> Self {
        self.nap = after;
        self
    }

    /// Bytes so far and the last activity of each side.
    pub fn progress(&self) -> Progress {
        Progress {
            client_to_server: self.c2s.bytes,
            server_to_client: self.s2c.bytes,
            last_client: self.last_client,
            last_server: self.last_server,
        }
    }

    /// When the session may sleep: idle since both sides' last activity,
    /// nothing in flight either way (no buffer, no pipe, nothing the TLS
    /// layer holds), both directions open.
    fn nap_at(&self) -> Option<Instant> {
        let after = self.nap?;
        let quiet = |d: &Dir| d.buf.is_none() && d.pipe.is_none() && !d.eof && !d.shut;
        let held = self.client.has_pending() || self.server.has_pending();
        (quiet(&self.c2s) && quiet(&self.s2c) && !held)
            .then(|| self.last_client.max(self.last_server).max(self.began) + after)
    }

    /// Moves bytes one way until it would block. Returns whether anything
    /// moved (and so the side's activity stamps), or which side failed.
    fn pump(
        cx: &mut Context<'_>,
        src: &I,
        dst: &I,
        d: &mut Dir,
        bufsize: usize,
        pipesize: Option<usize>,
        budget: &mut u32,
    ) -> Result<(bool, bool), Fail> {
        let (mut read_any, mut wrote_any) = (false, false);
        loop {
            if *budget == 0 {
                return Ok((read_any, wrote_any));
            }
            if dst.has_pending() {
                // Encrypted bytes the TLS layer still holds go first.
                match dst.poll_write_ready(cx) {
                    Poll::Pending => return Ok((read_any, wrote_any)),
                    Poll::Ready(Err(_)) => return Err(Fail::Dst),
                    Poll::Ready(Ok(())) => {}
                }
                *budget -= 1;
                match dst.try_flush() {
                    Ok(()) => wrote_any = true,
                    Err(e)
                        if e.kind() == io::ErrorKind::WouldBlock
                            || e.kind() == io::ErrorKind::Interrupted => {}
                    Err(_) => return Err(Fail::Dst),
                }
                continue;
            }
            if d.pending() {
                match dst.poll_write_ready(cx) {
                    Poll::Pending => return Ok((read_any, wrote_any)),
                    Poll::Ready(Err(_)) => return Err(Fail::Dst),
                    Poll::Ready(Ok(())) => {}
                }
                *budget -= 1;
                match d.write_to(dst, bufsize) {
                    Ok(_) => {
                        wrote_any = true;
                        d.release_if_sent();
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(_) => return Err(Fail::Dst),
                }
                continue;
            }
            if d.eof {
                if !d.shut {
                    d.shut = true;
                    // A peer that already closed makes this fail; that is fine.
                    let _ = dst.shutdown_write();
                }
                return Ok((read_any, wrote_any));
            }
            match src.poll_read_ready(cx) {
                Poll::Pending => return Ok((read_any, wrote_any)),
                Poll::Ready(Err(_)) => return Err(Fail::Src),
                Poll::Ready(Ok(())) => {}
            }
            *budget -= 1;
            read_any |= if d.splice {
                d.splice_from(src, pipesize)?
            } else {
                d.read_from(src, bufsize)?
            };
        }
    }

    /// Pumps one direction (client to server when `upstream`) and stamps the
    /// activity of the sides that moved; returns how the session ends when
    /// a side failed.
    fn step(
        &mut self,
        cx: &mut Context<'_>,
        upstream: bool,
        now: Instant,
        budget: &mut u32,
    ) -> Option<End> {
        let Duplex {
            client,
            server,
            c2s,
            s2c,
            last_client,
            last_server,
            read_client,
            read_server,
            bufsize,
            pipesize,
            ..
        } = self;
        let (src, dst, dir, last_src, last_dst, read_src, src_end, dst_end) = if upstream {
            (
                *client,
                *server,
                c2s,
                last_client,
                last_server,
                read_client,
                End::ClientError,
                End::ServerError,
            )
        } else {
            (
                *server,
                *client,
                s2c,
                last_server,
                last_client,
                read_server,
                End::ServerError,
                End::ClientError,
            )
        };
        match Self::pump(cx, src, dst, dir, *bufsize, *pipesize, budget) {
            Ok((read, wrote)) => {
                if read {
                    *last_src = now;
                    *read_src = now;
                }
                if wrote {
                    *last_dst = now;
                }
                None
            }
            Err(Fail::Src) => Some(src_end),
            Err(Fail::Dst) => Some(dst_end),
        }
    }

    fn outcome(&self, end: End) -> Outcome {
        let end = match (end, self.first) {
            (End::Done, Some(first)) => first,
            _ => end,
        };
        Outcome {
            end,
            client_to_server: self.c2s.bytes,
            server_to_client: self.s2c.bytes,
        }
    }

    /// The next inactivity deadline and the side it belongs to. A side
    /// that ended its sending has no timeout left unless bytes wait to be
    /// written to it (haproxy then waits on the other side alone).
    fn deadline(&self) -> Option<(Instant, End)> {
        let runs = (
            !self.c2s.eof || self.s2c.pending(),
            !self.s2c.eof || self.c2s.pending(),
        );
        let half = self.c2s.eof || self.s2c.eof;
        deadline(&self.t, &self.progress(), half, runs)
    }

    /// `option independent-streams`: the next read timeout of a side whose
    /// reads alone refresh it, while that side is still read (`true`: the
    /// client's). Without `timeout tunnel`, which replaces both.
    fn read_deadline(&self) -> Option<(Instant, bool)> {
        if !self.t.reads_apart() {
            return None;
        }
        let (ct, st) = self.t.sides(self.c2s.eof || self.s2c.eof);
        let c = ct
            .filter(|_| self.t.client_reads_only && !self.c2s.eof)
            .map(|d| (self.read_client + d, true));
        let s = st
            .filter(|_| self.t.server_reads_only && !self.s2c.eof)
            .map(|d| (self.read_server + d, false));
        match (c, s) {
            (Some(a), Some(b)) => Some(if a.0 <= b.0 { a } else { b }),
            (a, b) => a.or(b),
        }
    }

    /// Shuts the reading of each side whose read timeout passed, as
    /// haproxy does: the direction ends (its end is passed on once its
    /// bytes are written) and the other goes on; the first such timeout
    /// is how the session is logged. Whether one did.
    fn expire_reads(&mut self, now: Instant) -> bool {
        let mut any = false;
        while let Some((_, client)) = self.read_deadline().filter(|d| d.0 <= now) {
            let (dir, end) = if client {
                (&mut self.c2s, End::ClientTimeout)
            } else {
                (&mut self.s2c, End::ServerTimeout)
            };
            dir.eof = true;
            self.first.get_or_insert(end);
            any = true;
        }
        any
    }
}

/// The next inactivity deadline of a session at `p` (`half`: one
/// direction closed) and the side it belongs to, of the sides whose
/// timeouts `runs` (the client's, the server's).
pub fn deadline(
    t: &FwdTimeouts,
    p: &Progress,
    half: bool,
    runs: (bool, bool),
) -> Option<(Instant, End)> {
    if let Some(tt) = t.tunnel {
        let (last, side) = if p.last_client <= p.last_server {
            (p.last_server, End::ClientTimeout)
        } else {
            (p.last_client, End::ServerTimeout)
        };
        return Some((last + tt, side));
    }
    let (ct, st) = t.sides(half);
    let (ct, st) = (ct.filter(|_| runs.0), st.filter(|_| runs.1));
    let c = ct.map(|d| (p.last_client + d, End::ClientTimeout));
    let s = st.map(|d| (p.last_server + d, End::ServerTimeout));
    match (c, s) {
        (Some(a), Some(b)) => Some(if a.0 <= b.0 { a } else { b }),
        (a, b) => a.or(b),
    }
}

impl<I: Io> Future for Duplex<'_, I> {
    type Output = Outcome;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Outcome> {
        let this = self.get_mut();
        let now = crate::clock::now();
        this.expire_reads(now);
        let mut budget = 64u32;
        for upstream in [true, false] {
            if let Some(end) = this.step(cx, upstream, now, &mut budget) {
                return Poll::Ready(this.outcome(end));
            }
        }
        if this.c2s.shut && this.s2c.shut {
            return Poll::Ready(this.outcome(End::Done));
        }
        if budget == 0 {
            // Let other sessions of this thread run; come back at once.
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        loop {
            let deadline = this.deadline();
            if let Some((_, side)) = deadline.filter(|d| d.0 <= now) {
                // A timeout that passed wins over a nap (a session woken
                // at its deadline must not go back to sleep).
                return Poll::Ready(this.outcome(side));
            }
            if this.expire_reads(now) {
                // A direction to shut: the pumps do it, at once.
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            // What the timer waits for: how the session ends (a timeout,
            // a nap), or `None`, a read timeout that shuts a direction.
            let ends = match (deadline, this.nap_at()) {
                (Some((w, _)), Some(n)) if n < w => Some((n, Some(End::Idle))),
                (Some((w, e)), _) => Some((w, Some(e))),
                (None, Some(n)) => Some((n, Some(End::Idle))),
                (None, None) => None,
            };
            let next = match (ends, this.read_deadline()) {
                (Some(e), Some((r, _))) if r < e.0 => Some((r, None)),
                (None, Some((r, _))) => Some((r, None)),
                (e, _) => e,
            };
            let Some((when, side)) = next else {
                return Poll::Pending;
            };
            // (A read timeout that passed was handled above.)
            if let Some(side) = side.filter(|_| when <= now) {
                return Poll::Ready(this.outcome(side));
            }
            // Timers are armed lazily: activity only pushes deadlines later,
            // so an early wake just re-arms.
            if this.armed.is_none_or(|a| when < a || a <= now) {
                this.sleep.as_mut().reset(when);
                this.armed = Some(when);
            }
            match this.sleep.as_mut().poll(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(()) => {
                    this.armed = None;
                    // A fresh read: the cached one would not move while
                    // this loop waits for the time to reach `when`.
                    let fresh = Instant::now();
                    match side {
                        _ if fresh < when => {}
                        Some(side) => return Poll::Ready(this.outcome(side)),
                        None => {
                            // The pumps shut the direction, at once.
                            this.expire_reads(fresh);
                            cx.waker().wake_by_ref();
                            return Poll::Pending;
                        }
                    }
                }
            }
        }
    }
}

impl<I: Io> Drop for Duplex<'_, I> {
    fn drop(&mut self) {
        for d in [&mut self.c2s, &mut self.s2c] {
            if let Some(b) = d.buf.take() {
                put_buffer(b);
            }
        }
    }
}
