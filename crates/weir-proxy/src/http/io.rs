//! Buffered reading of HTTP/1 streams and body transfer by framing
//! (Content-Length, chunked re-encoded with extensions dropped and trailers
//! kept, until close). Buffers come from the thread's pool and go back as
//! soon as they are empty, so an idle keep-alive connection holds none.

use super::peer::Peer;
use super::splicing::{self, Spliced, Splicing};
use crate::conn::{Conn, Io};
use crate::forward::{get_buffer, put_buffer};
use std::io;
use std::time::Duration;
use weir_proto::h1::{ChunkEvent, ChunkedDecoder, Framing, H1Error};

/// Bytes read from a socket and not yet used.
#[derive(Default)]
pub struct Buf {
    data: Option<Box<[u8]>>,
    pos: usize,
    len: usize,
}

impl Buf {
    /// Starts with bytes already read (after a PROXY header).
    pub fn with(initial: &[u8], size: usize) -> Buf {
        let mut b = Buf::default();
        if !initial.is_empty() {
            let mut d = get_buffer(size.max(initial.len()));
            crate::cut::copy_prefix(&mut d, initial);
            b.data = Some(d);
            b.len = initial.len();
        }
        b
    }
    pub fn bytes(&self) -> &[u8] {
        match &self.data {
            Some(d) => d.get(self.pos..self.len).unwrap_or_default(),
            None => &[],
        }
    }
    pub fn is_empty(&self) -> bool {
        self.pos == self.len
    }
    /// Drops `n` bytes from the front; an emptied buffer goes back to the pool.
    pub fn consume(&mut self, n: usize) {
        self.pos = (self.pos + n).min(self.len);
        if self.pos == self.len {
            self.pos = 0;
            self.len = 0;
            if let Some(d) = self.data.take() {
                put_buffer(d);
            }
        }
    }
    /// True when no more bytes fit (the unread ones fill the buffer).
    pub fn is_full(&self) -> bool {
        self.data
            .as_ref()
            .is_some_and(|d| self.pos == 0 && self.len == d.len())
    }
    /// Reads more bytes (waiting for some). Returns 0 at end of stream.
    /// A full buffer reads nothing and returns an error. An empty buffer
    /// takes memory only once the socket is readable: an idle keep-alive
    /// connection holds none.
    pub async fn fill(&mut self, conn: Peer<'_>, size: usize) -> io::Result<usize> {
        loop {
            if self.data.is_none() {
                std::future::poll_fn(|cx| conn.poll_read_ready(cx)).await?;
            }
            match self.try_fill(conn, size) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if self.data.is_some() {
                        // Bytes are pending in the buffer: wait with it.
                        std::future::poll_fn(|cx| conn.poll_read_ready(cx)).await?;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                r => return r,
            }
        }
    }

    /// One read attempt, without waiting: `WouldBlock` (which clears the
    /// socket's readiness) when nothing is there.
    pub fn try_fill(&mut self, conn: Peer<'_>, size: usize) -> io::Result<usize> {
        self.try_fill_with(size, |d| conn.try_recv(d))
    }

    /// [`Buf::try_fill`] with the read given.
    pub fn try_fill_with(
        &mut self,
        size: usize,
        read: impl FnOnce(&mut [u8]) -> io::Result<usize>,
    ) -> io::Result<usize> {
        let d = self.data.get_or_insert_with(|| get_buffer(size));
        if self.pos > 0 && self.len == d.len() {
            d.copy_within(self.pos..self.len, 0);
            self.len -= self.pos;
            self.pos = 0;
        }
        if self.len == d.len() {
            return Err(io::Error::other("buffer full"));
        }
        let r = read(d.get_mut(self.len..).unwrap_or_default());
        if let Ok(n) = r {
            self.len += n;
        }
        if self.len == 0 {
            // Nothing read: hold no memory.
            if let Some(d) = self.data.take() {
                put_buffer(d);
            }
        }
        r
    }
}

/// Which side a transfer failed on, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XferError {
    SrcClosed,
    SrcError,
    SrcTimeout,
    DstError,
    DstTimeout,
    /// The body is not valid for its framing (bad chunk).
    Invalid(H1Error),
}

/// Runs `fut` with an optional timeout: `None` when it passed. Not an
/// `async fn`: one would keep `fut` twice (as its argument and as the
/// value awaited), in every state of an exchange that waits on I/O.
pub fn timed<F: std::future::Future>(t: Option<Duration>, fut: F) -> Timed<F> {
    match t {
        Some(t) => Timed::Bounded {
            inner: fut,
            deadline: crate::clock::deadline(t),
            timer: crate::timers::Lease::default(),
        },
        None => Timed::Unbounded { inner: fut },
    }
}

pin_project_lite::pin_project! {
    /// A future under an optional timeout (see [`timed`]). The timer is
    /// one of the thread's stock, taken only if the future has to wait.
    #[project = TimedProj]
    pub enum Timed<F> {
        Bounded { #[pin] inner: F, deadline: tokio::time::Instant, timer: crate::timers::Lease },
        Unbounded { #[pin] inner: F },
    }
}

impl<F: std::future::Future> std::future::Future for Timed<F> {
    type Output = Option<F::Output>;

    fn poll(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        match self.project() {
            TimedProj::Bounded {
                inner,
                deadline,
                timer,
            } => timer.poll_within(inner, *deadline, cx),
            TimedProj::Unbounded { inner } => inner.poll(cx).map(Some),
        }
    }
}

/// Writes `bytes` to `dst` within `t`. Most sends complete at once, and
/// those take no timer (no clock read, no timer-wheel entry): only what the
/// socket did not take waits under `t`. A small send on a plain TCP socket
/// is held to the end of the pass and written with the others
/// ([`crate::sendq`]).
pub async fn send(dst: Peer<'_>, bytes: &[u8], t: Option<Duration>) -> Result<(), XferError> {
    if let Peer::Conn(c) = dst {
        let hold =
            |cx: &mut std::task::Context<'_>| std::task::Poll::Ready(c.hold(bytes, cx.waker()));
        if std::future::poll_fn(hold).await {
            return Ok(());
        }
    }
    let mut rest = bytes;
    while !rest.is_empty() {
        match dst.try_send(rest) {
            Ok(0) => break,
            Ok(n) => rest = rest.get(n..).unwrap_or_default(),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
            Err(_) => return Err(XferError::DstError),
        }
    }
    if rest.is_empty() && !dst.has_pending() {
        return Ok(());
    }
    match timed(t, dst.send_all(rest)).await {
        Some(Ok(())) => Ok(()),
        Some(Err(_)) => Err(XferError::DstError),
        None => Err(XferError::DstTimeout),
    }
}

pub(super) async fn more(
    buf: &mut Buf,
    src: Peer<'_>,
    size: usize,
    t: Option<Duration>,
) -> Result<(), XferError> {
    match timed(t, buf.fill(src, size)).await {
        Some(Ok(0)) => Err(XferError::SrcClosed),
        Some(Ok(_)) => Ok(()),
        Some(Err(_)) => Err(XferError::SrcError),
        None => Err(XferError::SrcTimeout),
    }
}

/// A body of a framing (a length or chunks) read from a buffer and its
/// peer piece by piece: what compression and the cache see of a body
/// they forward in their own form.
pub(super) struct BodyReader {
    left: Option<u64>,
    chunks: Option<ChunkedDecoder>,
    /// The chunked body's trailer lines.
    pub trailers: Vec<Vec<u8>>,
}

impl BodyReader {
    /// A reader of `framing`; a body of another framing reads as empty.
    pub fn new(framing: Framing) -> BodyReader {
        let (left, chunks) = match framing {
            Framing::ContentLength(n) => (Some(n), None),
            Framing::Chunked => (None, Some(ChunkedDecoder::default())),
            _ => (Some(0), None),
        };
        BodyReader {
            left,
            chunks,
            trailers: Vec::new(),
        }
    }

    /// The next bytes of the body (possibly none of a chunk boundary);
    /// `None` once it ended.
    pub async fn next(
        &mut self,
        buf: &mut Buf,
        src: Peer<'_>,
        size: usize,
        read: Option<Duration>,
    ) -> Result<Option<Vec<u8>>, XferError> {
        if let Some(left) = self.left.as_mut() {
            if *left == 0 {
                return Ok(None);
            }
            if buf.is_empty() {
                more(buf, src, size, read).await?;
            }
            let avail = buf.bytes();
            let k = (avail.len() as u64).min(*left) as usize;
            let part = avail.get(..k).unwrap_or(avail).to_vec();
            buf.consume(k);
            *left -= k as u64;
            return Ok(Some(part));
        }
        let Some(dec) = self.chunks.as_mut() else {
            return Ok(None);
        };
        if dec.is_done() {
            return Ok(None);
        }
        loop {
            let (events, used) = dec
                .feed(buf.bytes())
                .map_err(|_| XferError::Invalid(H1Error::BadResponse("invalid chunked body")))?;
            let mut data = Vec::new();
            for ev in events {
                match ev {
                    ChunkEvent::Data(r) => {
                        data.extend_from_slice(buf.bytes().get(r).unwrap_or_default())
                    }
                    ChunkEvent::Trailer(t) => self.trailers.push(t),
                    ChunkEvent::End => {}
                }
            }
            buf.consume(used);
            if !data.is_empty() || dec.is_done() {
                return Ok(Some(data));
            }
            if buf.is_full() {
                return Err(XferError::Invalid(H1Error::BadResponse(
                    "chunk line too long",
                )));
            }
            more(buf, src, size, read).await?;
        }
    }

    /// The end of a chunked body as it goes on: the last chunk and the
    /// trailers.
    pub fn last_chunk(&self) -> Vec<u8> {
        let mut out = b"0\r\n".to_vec();
        for t in &self.trailers {
            out.extend_from_slice(t);
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(b"\r\n");
        out
    }
}

/// Forwards a body of `framing` (a length or chunks) from `buf` + `src`
/// to `dst`, each piece through `through` (given `None` once at the end,
/// for what is left to send); with `chunked`, as chunks and the last one
/// (the server's trailers after it). The bytes it counts as received,
/// as haproxy counts them: the data read, and a chunked body's end
/// ([`weir_proto::h1::htx`]), whatever `through` made of them.
#[allow(clippy::too_many_arguments)]
pub(super) async fn forward_through(
    src: Peer<'_>,
    buf: &mut Buf,
    dst: Peer<'_>,
    framing: Framing,
    size: usize,
    t: XferTimeouts<'_>,
    chunked: bool,
    mut through: impl FnMut(Option<Vec<u8>>) -> Vec<u8>,
) -> Result<u64, XferError> {
    let mut body = BodyReader::new(framing);
    let mut received = 0u64;
    let out = |piece: Vec<u8>| if chunked { chunk(&piece) } else { piece };
    while let Some(data) = body.next(buf, src, size, t.read).await? {
        received += data.len() as u64;
        let bytes = out(through(Some(data)));
        if !bytes.is_empty() {
            send(dst, &bytes, t.write).await?;
            t.stamp();
        }
    }
    if framing == Framing::Chunked {
        received += weir_proto::h1::htx::trailers(&body.trailers);
    }
    let mut end = out(through(None));
    if chunked {
        end.extend_from_slice(&body.last_chunk());
    }
    if !end.is_empty() {
        send(dst, &end, t.write).await?;
        t.stamp();
    }
    Ok(received)
}

/// `data` as one chunk (nothing for no data).
pub(super) fn chunk(data: &[u8]) -> Vec<u8> {
    if data.is_empty() {
        return Vec::new();
    }
    let mut out = format!("{:x}\r\n", data.len()).into_bytes();
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
    out
}

/// Timeouts of one transfer direction, and where it stamps the bytes it
/// sends (see [`Activity`]).
#[derive(Debug, Clone, Copy)]
pub struct XferTimeouts<'a> {
    pub read: Option<Duration>,
    pub write: Option<Duration>,
    pub sent: Option<&'a Activity>,
}

impl XferTimeouts<'_> {
    /// Bytes went to the destination.
    pub(super) fn stamp(&self) {
        if let Some(a) = self.sent {
            a.stamp();
        }
    }
}

/// When bytes last went to a peer: haproxy refreshes a socket's read
/// timeout with the data sent over it (unless `option
/// independent-streams`), so a server's time to answer counts from the
/// request body's last bytes, not its first. An atomic, for the upload's
/// future (`Send`) beside the response's on the same task.
#[derive(Debug, Default)]
pub struct Activity(std::sync::atomic::AtomicU64);

impl Activity {
    /// Now (the cached clock), in nanoseconds from the process's epoch,
    /// plus one (zero: never).
    pub fn stamp(&self) {
        let since = crate::clock::now()
            .into_std()
            .saturating_duration_since(crate::clock::epoch());
        let n = u64::try_from(since.as_nanos()).unwrap_or(u64::MAX - 1) + 1;
        self.0.store(n, std::sync::atomic::Ordering::Relaxed);
    }

    /// The last stamp.
    pub fn last(&self) -> Option<tokio::time::Instant> {
        let n = self
            .0
            .load(std::sync::atomic::Ordering::Relaxed)
            .checked_sub(1)?;
        let at = crate::clock::epoch() + Duration::from_nanos(n);
        Some(tokio::time::Instant::from_std(at))
    }
}

/// `fut` under timeout `t` counted from the later of now and `seen`'s
/// last stamp: activity while it waits pushes the deadline on. `None`
/// once the deadline passed with no activity since.
pub async fn timed_after<F: std::future::Future>(
    t: Option<Duration>,
    seen: Option<&Activity>,
    fut: F,
) -> Option<F::Output> {
    let (Some(t), Some(seen)) = (t, seen) else {
        return timed(t, fut).await;
    };
    let start = crate::clock::now();
    let mut fut = std::pin::pin!(fut);
    let mut timer = crate::timers::Lease::default();
    loop {
        let from = seen.last().map_or(start, |l| l.max(start));
        let deadline = from.checked_add(t).unwrap_or(from);
        let waited = std::future::poll_fn(|cx| timer.poll_within(fut.as_mut(), deadline, cx));
        match waited.await {
            Some(v) => return Some(v),
            None if seen.last().is_some_and(|l| l > from) => {}
            None => return None,
        }
    }
}

/// Copies a body of `framing` from `buf` + `src` to `dst`. Bytes after the
/// body stay in `buf` (a pipelined request). Returns the body's bytes as
/// haproxy counts them received (a chunked body's data and end, not its
/// framing). `request` selects the error flavour of a bad chunk.
/// With `sp`, what is not buffered yet of a body of known length or one
/// that ends with the connection is spliced, between plain TCP sockets.
#[allow(clippy::too_many_arguments)]
pub async fn transfer(
    src: Peer<'_>,
    buf: &mut Buf,
    dst: Peer<'_>,
    framing: Framing,
    size: usize,
    t: XferTimeouts<'_>,
    request: bool,
    sp: Option<Splicing<'_>>,
) -> Result<u64, XferError> {
    let sp = sp.and_then(|sp| Some((splicing::sockets(src, dst)?, sp)));
    copy_body(src, buf, Some(dst), framing, size, t, request, sp).await
}

/// Reads a response body of `framing` from `buf` + `src` to its end and
/// drops it (the client asked with HEAD; the server connection stays
/// usable). Returns the bytes read.
pub async fn drain(
    src: Peer<'_>,
    buf: &mut Buf,
    framing: Framing,
    size: usize,
    t: XferTimeouts<'_>,
) -> Result<u64, XferError> {
    copy_body(src, buf, None, framing, size, t, false, None).await
}

/// Writes `bytes` to `dst` (and stamps it), or nowhere.
async fn put(dst: Option<Peer<'_>>, bytes: &[u8], t: &XferTimeouts<'_>) -> Result<(), XferError> {
    match dst {
        Some(d) => {
            send(d, bytes, t.write).await?;
            t.stamp();
            Ok(())
        }
        None => Ok(()),
    }
}

/// The sockets under both peers and the splicing allowed between them.
type SpliceWay<'a> = ((&'a Conn, &'a Conn), Splicing<'a>);

/// [`transfer`] and [`drain`]: the body to `dst`, or dropped.
#[allow(clippy::too_many_arguments)]
async fn copy_body(
    src: Peer<'_>,
    buf: &mut Buf,
    dst: Option<Peer<'_>>,
    framing: Framing,
    size: usize,
    t: XferTimeouts<'_>,
    request: bool,
    mut sp: Option<SpliceWay<'_>>,
) -> Result<u64, XferError> {
    match framing {
        Framing::None | Framing::Tunnel => Ok(0),
        Framing::ContentLength(n) => {
            let mut left = n;
            let mut sent = 0u64;
            while left > 0 {
                if buf.is_empty() {
                    if let Some(((s, d), way)) = sp {
                        match splicing::body(s, d, Some(left), t, way).await? {
                            Spliced::Done(k) => return Ok(sent + k),
                            Spliced::Unsupported(k) => {
                                (sent, left, sp) = (sent + k, left - k, None);
                                continue;
                            }
                        }
                    }
                    more(buf, src, size, t.read).await?;
                }
                let avail = buf.bytes();
                let k = (avail.len() as u64).min(left) as usize;
                put(dst, avail.get(..k).unwrap_or(avail), &t).await?;
                buf.consume(k);
                left -= k as u64;
                sent += k as u64;
            }
            Ok(sent)
        }
        Framing::UntilClose => {
            let mut sent = 0u64;
            loop {
                if buf.is_empty() {
                    if let Some(((s, d), way)) = sp.take() {
                        match splicing::body(s, d, None, t, way).await? {
                            Spliced::Done(k) => return Ok(sent + k),
                            Spliced::Unsupported(k) => sent += k,
                        }
                    }
                    match more(buf, src, size, t.read).await {
                        Err(XferError::SrcClosed) => return Ok(sent),
                        r => r?,
                    }
                }
                let k = buf.bytes().len();
                put(dst, buf.bytes(), &t).await?;
                buf.consume(k);
                sent += k as u64;
            }
        }
        Framing::Chunked => {
            let mut dec = ChunkedDecoder::default();
            let mut out: Vec<u8> = Vec::new();
            let mut trailers: Vec<Vec<u8>> = Vec::new();
            let mut sent = 0u64;
            loop {
                let (events, used) = match dec.feed(buf.bytes()) {
                    Ok(r) => r,
                    Err(e) => {
                        let e = if request {
                            e
                        } else {
                            H1Error::BadResponse("invalid chunked body")
                        };
                        return Err(XferError::Invalid(e));
                    }
                };
                out.clear();
                for ev in events {
                    match ev {
                        ChunkEvent::Data(r) => {
                            let data = buf.bytes().get(r).unwrap_or_default();
                            sent += data.len() as u64;
                            out.extend_from_slice(format!("{:x}\r\n", data.len()).as_bytes());
                            out.extend_from_slice(data);
                            out.extend_from_slice(b"\r\n");
                        }
                        ChunkEvent::Trailer(t) => trailers.push(t),
                        ChunkEvent::End => {
                            sent += weir_proto::h1::htx::trailers(&trailers);
                            out.extend_from_slice(b"0\r\n");
                            for t in trailers.drain(..) {
                                out.extend_from_slice(&t);
                                out.extend_from_slice(b"\r\n");
                            }
                            out.extend_from_slice(b"\r\n");
                        }
                    }
                }
                buf.consume(used);
                if !out.is_empty() {
                    put(dst, &out, &t).await?;
                }
                if dec.is_done() {
                    return Ok(sent);
                }
                if buf.is_full() {
                    return Err(XferError::Invalid(H1Error::BadRequest(
                        "chunk line too long",
                    )));
                }
                more(buf, src, size, t.read).await?;
            }
        }
    }
}
