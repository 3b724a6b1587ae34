//! HTTP/2 towards clients on weir's own codec ([`weir_proto::h2::server`]):
//! the connection's state sits behind one lock shared by the connection
//! task, which reads frames and writes what the codec queued, and its
//! streams, each an [`H2Stream`] that the HTTP/1.1 exchange reads the
//! request body from and writes the response to (in HTTP/1.1 framing).

use super::body::{DataSink, Out};
use super::convert;
use std::borrow::Cow;
use std::io::{self, Write};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use tokio::sync::Notify;
use weir_proto::h1::{self, H1Error, Limits, RequestHead, ResponseHead};
use weir_proto::h2::frame::ErrorCode;
use weir_proto::h2::server::{Server, Sink};
use weir_rules::TlsInfo;

fn gone() -> io::Error {
    io::ErrorKind::ConnectionReset.into()
}

/// A request the codec completed.
pub struct Fresh {
    pub id: u32,
    /// Its head, or the error the exchange answers (with the request as
    /// text for the capture).
    pub head: Result<RequestHead, (H1Error, Vec<u8>)>,
}

/// Response bytes queued for the client (in the codec's output and the
/// connection task's) above which streams wait: a client that opens large
/// windows and does not read cannot make weir hold whole responses.
pub const MAX_BACKLOG: usize = 256 * 1024;

/// One stream's side of the shared state.
struct Slot {
    id: u32,
    req: Option<convert::RequestBuilder>,
    /// Request body bytes in HTTP/1.1 framing, not read yet.
    body: Vec<u8>,
    at: usize,
    /// DATA bytes received and not yet given back to the window.
    unreleased: usize,
    chunked: bool,
    /// An extended CONNECT: its DATA are a tunnel's bytes, whose end the
    /// reader sees.
    upgrade: bool,
    /// The `Sec-WebSocket-Accept` a server switching protocols must send
    /// (weir made the key).
    ws_accept: Option<Vec<u8>>,
    /// The whole request arrived.
    ended: bool,
    /// The client reset the stream, or the connection failed.
    broken: bool,
    /// The response head, gathered until whole (`None` once sent).
    res_head: Option<Vec<u8>>,
    res: Out,
    /// Response bytes (HTTP/1.1 framing) taken but beyond the windows.
    res_pending: Vec<u8>,
    /// The stream's task ended with bytes still pending: the connection
    /// task sends them, then lets the stream go.
    detached: bool,
    reset_on_close: bool,
    /// Trailer fields as HTTP/1.1 lines, until the trailers end.
    trailer_lines: Vec<u8>,
    reader: Option<Waker>,
    writer: Option<Waker>,
    resetter: Option<Waker>,
}

impl Slot {
    fn new(id: u32) -> Slot {
        Slot {
            id,
            req: Some(convert::RequestBuilder::default()),
            body: Vec::new(),
            at: 0,
            unreleased: 0,
            chunked: false,
            upgrade: false,
            ws_accept: None,
            ended: false,
            broken: false,
            res_head: Some(Vec::new()),
            res: Out::Done,
            res_pending: Vec::new(),
            detached: false,
            reset_on_close: false,
            trailer_lines: Vec::new(),
            reader: None,
            writer: None,
            resetter: None,
        }
    }
    fn wake(&mut self) {
        if let Some(w) = self.reader.take() {
            w.wake();
        }
        if let Some(w) = self.writer.take() {
            w.wake();
        }
        if let Some(w) = self.resetter.take() {
            w.wake();
        }
    }
    fn res_done(&self) -> bool {
        self.res_head.is_none() && matches!(self.res, Out::Done) && self.res_pending.is_empty()
    }

    /// Sends `bytes` of the response after what already waits, as far as
    /// the windows allow; the rest waits (nothing is copied when it all
    /// fits, as a short response's body does).
    fn send_or_keep(&mut self, srv: &mut Server, mut bytes: &[u8]) -> io::Result<()> {
        if self.res_pending.is_empty() {
            while !bytes.is_empty() && !matches!(self.res, Out::Done) {
                let k = bytes.len().min(srv.send_capacity(self.id));
                let Some((now, rest)) = bytes.split_at_checked(k).filter(|_| k > 0) else {
                    break;
                };
                body(srv, self.id, &mut self.res, now)?;
                bytes = rest;
            }
            if matches!(self.res, Out::Done) {
                return Ok(());
            }
        }
        if !bytes.is_empty() {
            self.res_pending.extend_from_slice(bytes);
            self.flush(srv)?;
        }
        Ok(())
    }

    /// Sends what waits of the response as far as the windows allow.
    fn flush(&mut self, srv: &mut Server) -> io::Result<()> {
        while !self.res_pending.is_empty() {
            let k = self.res_pending.len().min(srv.send_capacity(self.id));
            if k == 0 {
                break;
            }
            let chunk = self.res_pending.get(..k).unwrap_or_default();
            let r = body(srv, self.id, &mut self.res, chunk);
            self.res_pending.drain(..k);
            r?;
            if matches!(self.res, Out::Done) {
                self.res_pending.clear();
            }
        }
        Ok(())
    }
}

/// The state a connection shares with its streams.
pub struct State {
    pub srv: Server,
    /// The most unread request body bytes a stream may hold: chunk framing
    /// of tiny DATA frames would otherwise turn a window of 64 KiB into
    /// six times that.
    body_cap: usize,
    /// The limits a request head is held to (`tune.bufsize`,
    /// `tune.http.maxhdr`).
    limits: Limits,
    slots: Vec<Slot>,
    /// The connection failed or ended: every stream is broken.
    pub gone: bool,
    /// Bytes the connection task holds, not yet written.
    pub backlog: usize,
    /// A stream waits for the backlog to shrink.
    pub blocked: bool,
}

impl State {
    /// Whether any stream is open (its task may still answer).
    pub fn busy(&self) -> bool {
        !self.slots.is_empty()
    }

    fn slot(&mut self, id: u32) -> Option<&mut Slot> {
        self.slots.iter_mut().find(|s| s.id == id)
    }

    /// Too much waits for the client to read: streams hold back.
    fn congested(&mut self) -> bool {
        self.backlog + self.srv.output().len() > MAX_BACKLOG
    }

    /// The connection task wrote: `backlog` bytes still wait. Streams held
    /// back are woken once it is under half the limit.
    pub fn drained(&mut self, backlog: usize) {
        self.backlog = backlog;
        if self.blocked && !self.congested() && backlog < MAX_BACKLOG / 2 {
            self.blocked = false;
            for s in &mut self.slots {
                if let Some(w) = s.writer.take() {
                    w.wake();
                }
            }
        }
    }
}

/// A connection's shared state and the connection task's wake-up.
pub struct Front {
    st: Mutex<State>,
    /// Streams queued frames (or gave a window back): the task writes.
    pub kick: Notify,
}

impl Front {
    /// `body_cap`: the most request body bytes (in HTTP/1.1 framing) a
    /// stream may hold unread.
    pub fn new(srv: Server, body_cap: usize, limits: Limits) -> Front {
        Front {
            st: Mutex::new(State {
                srv,
                body_cap,
                limits,
                slots: Vec::new(),
                gone: false,
                backlog: 0,
                blocked: false,
            }),
            kick: Notify::new(),
        }
    }

    pub fn lock(&self) -> MutexGuard<'_, State> {
        self.st.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Feeds the client's bytes; returns how many were used and the new
    /// requests (stream, HTTP/1.1 head), or the connection error.
    pub fn feed(
        &self,
        input: &[u8],
    ) -> Result<(usize, Vec<Fresh>), weir_proto::h2::server::ConnError> {
        let mut st = self.lock();
        let State {
            srv,
            slots,
            body_cap,
            limits,
            ..
        } = &mut *st;
        let mut sink = Events {
            slots,
            body_cap: *body_cap,
            limits: *limits,
            fresh: Vec::new(),
            bad: Vec::new(),
            dropped: Vec::new(),
            over: Vec::new(),
        };
        let r = srv.feed(input, &mut sink);
        let (fresh, bad, dropped, over) = (sink.fresh, sink.bad, sink.dropped, sink.over);
        for id in over {
            srv.reset(id, ErrorCode::EnhanceYourCalm);
        }
        for id in bad {
            srv.reset(id, ErrorCode::Protocol);
            srv.done(id);
            slots.retain(|s| s.id != id);
        }
        for id in dropped {
            srv.done(id);
        }
        let congested = st.congested();
        let State { srv, slots, .. } = &mut *st;
        settle(srv, slots, congested);
        r.map(|n| (n, fresh))
    }

    /// Marks every stream broken (the connection is gone).
    pub fn fail_all(&self) {
        let mut st = self.lock();
        st.gone = true;
        for s in &mut st.slots {
            s.broken = true;
            s.wake();
        }
    }
}

/// Sends pending response bytes where windows allow; a detached stream
/// whose response is out (or that broke) is let go.
fn settle(srv: &mut Server, slots: &mut Vec<Slot>, congested: bool) {
    let mut i = 0;
    while let Some(s) = slots.get_mut(i) {
        if !congested && !s.res_pending.is_empty() && !s.broken && s.flush(srv).is_err() {
            s.broken = true;
            srv.reset(s.id, ErrorCode::Internal);
        }
        if s.detached && (s.res_pending.is_empty() || s.broken) {
            let id = s.id;
            if matches!(s.res, Out::Open) && !s.broken {
                srv.send_data(id, &[], true);
            }
            srv.done(id);
            slots.swap_remove(i);
            continue;
        }
        i += 1;
    }
}

/// The codec's events, applied to the streams' slots.
struct Events<'a> {
    slots: &'a mut Vec<Slot>,
    body_cap: usize,
    limits: Limits,
    /// Streams whose unread body went over `body_cap` (reset after).
    over: Vec<u32>,
    /// Request heads complete in this feed.
    fresh: Vec<Fresh>,
    /// Requests HTTP/1.1 cannot carry (reset after the feed).
    bad: Vec<u32>,
    /// Streams reset before their head was complete.
    dropped: Vec<u32>,
}

impl Events<'_> {
    fn slot(&mut self, id: u32) -> Option<&mut Slot> {
        self.slots.iter_mut().find(|s| s.id == id)
    }
}

impl Sink for Events<'_> {
    fn field(&mut self, stream: u32, name: &[u8], value: &[u8]) {
        if self.slot(stream).is_none() {
            self.slots.push(Slot::new(stream));
        }
        if let Some(s) = self.slot(stream) {
            match &mut s.req {
                Some(r) => r.field(name, value),
                // Trailers: lines of the last chunk.
                None if s.chunked => {
                    s.trailer_lines.extend_from_slice(name);
                    s.trailer_lines.extend_from_slice(b": ");
                    s.trailer_lines.extend_from_slice(value);
                    s.trailer_lines.extend_from_slice(b"\r\n");
                }
                None => {}
            }
        }
    }

    fn head(&mut self, stream: u32, end_stream: bool) {
        if self.slot(stream).is_none() {
            self.slots.push(Slot::new(stream));
        }
        let limits = self.limits;
        let Some(s) = self.slot(stream) else { return };
        let built = s
            .req
            .take()
            .and_then(|r| r.finish(end_stream, &limits, super::ws::new_key));
        match built {
            Some(b) => {
                s.chunked = b.chunked;
                s.upgrade = b.upgrade;
                s.ws_accept = b.ws_key.map(|k| super::ws::accept(&k));
                s.ended = end_stream;
                self.fresh.push(Fresh {
                    id: stream,
                    head: b.head,
                });
            }
            None => self.bad.push(stream),
        }
    }

    fn trailers(&mut self, stream: u32) {
        if let Some(s) = self.slot(stream) {
            if s.chunked {
                if s.at == s.body.len() {
                    s.body.clear();
                    s.at = 0;
                }
                s.body.extend_from_slice(b"0\r\n");
                let lines = std::mem::take(&mut s.trailer_lines);
                s.body.extend_from_slice(&lines);
                s.body.extend_from_slice(b"\r\n");
            }
            s.ended = true;
            s.wake();
        }
    }

    fn data(&mut self, stream: u32, data: &[u8], end_stream: bool) {
        let cap = self.body_cap;
        let Some(s) = self.slot(stream) else { return };
        if s.broken {
            return;
        }
        if s.at == s.body.len() {
            s.body.clear();
            s.at = 0;
        }
        s.unreleased += data.len();
        if s.chunked {
            if !data.is_empty() {
                let _ = write!(s.body, "{:x}\r\n", data.len());
                s.body.extend_from_slice(data);
                s.body.extend_from_slice(b"\r\n");
            }
            if end_stream {
                s.body.extend_from_slice(b"0\r\n\r\n");
            }
        } else {
            s.body.extend_from_slice(data);
        }
        s.ended |= end_stream;
        let over = s.body.len() - s.at > cap;
        s.broken |= over;
        s.wake();
        if over {
            self.over.push(stream);
        }
    }

    fn reset(&mut self, stream: u32, _code: u32) {
        let Some(i) = self.slots.iter().position(|s| s.id == stream) else {
            return;
        };
        let Some(s) = self.slots.get_mut(i) else {
            return;
        };
        if s.req.is_some() {
            // No task took it: nobody else will let it go.
            self.slots.swap_remove(i);
            self.dropped.push(stream);
            return;
        }
        s.broken = true;
        s.wake();
    }

    fn window(&mut self, stream: u32) {
        for s in self.slots.iter_mut() {
            if stream == 0 || s.id == stream {
                if let Some(w) = s.writer.take() {
                    w.wake();
                }
            }
        }
    }
}

/// One client stream, read and written like a transport (the HTTP
/// layer's `Peer::H2`).
pub struct H2Stream {
    front: Arc<Front>,
    id: u32,
    method: Cow<'static, str>,
    limits: Limits,
    tls: Option<TlsInfo>,
}

impl std::fmt::Debug for H2Stream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "H2Stream({})", self.id)
    }
}

impl H2Stream {
    pub fn new(
        front: Arc<Front>,
        id: u32,
        method: Cow<'static, str>,
        limits: Limits,
        tls: Option<TlsInfo>,
    ) -> H2Stream {
        H2Stream {
            front,
            id,
            method,
            limits,
            tls,
        }
    }

    pub fn tls(&self) -> Option<&TlsInfo> {
        self.tls.as_ref()
    }

    /// Ready when request bytes wait, the request ended and the response is
    /// complete, or the stream broke.
    pub fn poll_read_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let mut st = self.front.lock();
        let dead = st.gone;
        let Some(s) = st.slot(self.id) else {
            return Poll::Ready(Ok(()));
        };
        if s.at < s.body.len() || s.broken || dead || (s.ended && (s.res_done() || s.upgrade)) {
            return Poll::Ready(Ok(()));
        }
        s.reader = Some(cx.waker().clone());
        Poll::Pending
    }

    pub fn try_read(&self, buf: &mut [u8]) -> io::Result<usize> {
        let mut st = self.front.lock();
        let dead = st.gone;
        let State { srv, slots, .. } = &mut *st;
        let Some(s) = slots.iter_mut().find(|s| s.id == self.id) else {
            return Err(gone());
        };
        if s.at < s.body.len() {
            let n = crate::cut::copy_prefix(buf, s.body.get(s.at..).unwrap_or_default());
            s.at += n;
            if s.at == s.body.len() {
                s.body.clear();
                s.at = 0;
                let k = std::mem::take(&mut s.unreleased);
                srv.release(self.id, k);
                drop(st);
                self.front.kick.notify_one();
            }
            return Ok(n);
        }
        if s.broken || dead {
            return Err(gone());
        }
        if s.ended && (s.res_done() || s.upgrade) {
            return Ok(0);
        }
        Err(io::ErrorKind::WouldBlock.into())
    }

    pub fn poll_write_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let mut st = self.front.lock();
        let dead = st.gone;
        let congested = st.congested();
        let State {
            srv,
            slots,
            blocked,
            ..
        } = &mut *st;
        let Some(s) = slots.iter_mut().find(|s| s.id == self.id) else {
            return Poll::Ready(Err(gone()));
        };
        if s.broken || dead {
            return Poll::Ready(Err(gone()));
        }
        if s.res_head.is_some() || matches!(s.res, Out::Done) {
            return Poll::Ready(Ok(()));
        }
        if congested {
            *blocked = true;
            s.writer = Some(cx.waker().clone());
            return Poll::Pending;
        }
        if s.flush(srv).is_err() {
            return Poll::Ready(Err(io::ErrorKind::InvalidData.into()));
        }
        if s.res_pending.is_empty() && srv.send_capacity(self.id) > 0 {
            return Poll::Ready(Ok(()));
        }
        s.writer = Some(cx.waker().clone());
        Poll::Pending
    }

    /// Takes response bytes: all of a head, body bytes up to the windows.
    pub fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
        let r = self.write(buf);
        self.front.kick.notify_one();
        r
    }

    fn write(&self, buf: &[u8]) -> io::Result<usize> {
        let mut st = self.front.lock();
        if st.gone {
            return Err(gone());
        }
        let congested = st.congested();
        let State { srv, slots, .. } = &mut *st;
        let Some(s) = slots.iter_mut().find(|s| s.id == self.id) else {
            return Err(gone());
        };
        if s.broken {
            return Err(gone());
        }
        if let Some(mut acc) = s.res_head.take() {
            acc.extend_from_slice(buf);
            loop {
                let (res, used) = match h1::parse_response(&acc, &self.limits, &self.method) {
                    Ok(Some(r)) => r,
                    Ok(None) if acc.len() > self.limits.max_head => {
                        return Err(io::ErrorKind::InvalidData.into())
                    }
                    Ok(None) => {
                        s.res_head = Some(acc);
                        return Ok(buf.len());
                    }
                    Err(_) => return Err(io::ErrorKind::InvalidData.into()),
                };
                if (100..200).contains(&res.status) && res.status != 101 {
                    send_head(srv, self.id, &res, false);
                    acc.drain(..used);
                    continue;
                }
                s.res = Out::new(res.framing);
                send_head(srv, self.id, &res, matches!(s.res, Out::Done));
                if !matches!(s.res, Out::Done) {
                    s.send_or_keep(srv, acc.get(used..).unwrap_or_default())?;
                }
                return Ok(buf.len());
            }
        }
        if matches!(s.res, Out::Done) {
            return Ok(buf.len());
        }
        s.flush(srv)?;
        if !s.res_pending.is_empty() {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        let k = buf.len().min(srv.send_capacity(self.id));
        let k = if congested { 0 } else { k };
        if k == 0 {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        body(srv, self.id, &mut s.res, buf.get(..k).unwrap_or(buf))?;
        Ok(k)
    }

    /// Sends a final response head the exchange already parsed, with the
    /// first body bytes.
    pub fn respond(&self, res: &ResponseHead, first: &[u8]) -> io::Result<()> {
        let r = (|| {
            let mut st = self.front.lock();
            if st.gone {
                return Err(gone());
            }
            let State { srv, slots, .. } = &mut *st;
            let s = slots
                .iter_mut()
                .find(|s| s.id == self.id)
                .ok_or_else(gone)?;
            if s.broken || s.res_head.take().is_none() {
                return Err(gone());
            }
            s.res = Out::new(res.framing);
            send_head(srv, self.id, res, matches!(s.res, Out::Done));
            if !matches!(s.res, Out::Done) {
                s.send_or_keep(srv, first)?;
            }
            Ok(())
        })();
        self.front.kick.notify_one();
        r
    }

    /// Ends a response that had no length.
    pub fn shutdown_write(&self) -> io::Result<()> {
        {
            let mut st = self.front.lock();
            let State { srv, slots, .. } = &mut *st;
            if let Some(s) = slots.iter_mut().find(|s| s.id == self.id) {
                // With bytes pending, the end goes after them (`settle`).
                if matches!(s.res, Out::Open) && s.res_pending.is_empty() {
                    s.res = Out::Done;
                    srv.send_data(self.id, &[], true);
                }
            }
        }
        self.front.kick.notify_one();
        Ok(())
    }

    /// Ready once the client reset the stream (or the connection failed).
    pub fn poll_reset(&self, cx: &mut Context<'_>) -> Poll<()> {
        let mut st = self.front.lock();
        let dead = st.gone;
        match st.slot(self.id) {
            Some(s) if !s.broken && !dead => {
                s.resetter = Some(cx.waker().clone());
                Poll::Pending
            }
            _ => Poll::Ready(()),
        }
    }

    pub fn set_reset_on_close(&self) {
        if let Some(s) = self.front.lock().slot(self.id) {
            s.reset_on_close = true;
        }
    }

    /// Whether a server's `101` to the stream's upgrade proves it read the
    /// WebSocket key weir made (RFC 6455 §4.2.2; haproxy answers 502
    /// otherwise). True when weir made no key.
    pub fn upgrade_ok(&self, res: &ResponseHead) -> bool {
        let mut st = self.front.lock();
        let Some(want) = st.slot(self.id).and_then(|s| s.ws_accept.clone()) else {
            return true;
        };
        res.headers
            .iter()
            .any(|h| h.is("sec-websocket-accept") && h.value() == want.as_slice())
    }
}

impl Drop for H2Stream {
    /// An unfinished response resets the stream (one without a length ends
    /// normally); the stream then stops counting for the connection.
    fn drop(&mut self) {
        {
            let mut st = self.front.lock();
            let State { srv, slots, .. } = &mut *st;
            if let Some(i) = slots.iter().position(|s| s.id == self.id) {
                let Some(s) = slots.get_mut(i) else {
                    return;
                };
                if !s.res_pending.is_empty() && !s.reset_on_close && !s.broken {
                    // The rest leaves as the client opens its window.
                    s.detached = true;
                    drop(st);
                    self.front.kick.notify_one();
                    return;
                }
                let s = slots.swap_remove(i);
                if matches!(s.res, Out::Open) && !s.reset_on_close && !s.broken {
                    srv.send_data(self.id, &[], true);
                } else if s.res_head.is_some() {
                    srv.reset(self.id, ErrorCode::Internal);
                } else if s.reset_on_close || !matches!(s.res, Out::Done) {
                    srv.reset(self.id, ErrorCode::Cancel);
                }
            }
            srv.done(self.id);
        }
        self.front.kick.notify_one();
    }
}

/// Queues a response head. A server switching protocols (an extended
/// CONNECT's upgrade) answers `200` in HTTP/2 (RFC 8441 §5).
fn send_head(srv: &mut Server, id: u32, res: &ResponseHead, end_stream: bool) {
    let status = if res.status == 101 { 200 } else { res.status };
    srv.send_head(id, status, convert::response_fields(res), end_stream);
}

/// Sends body bytes in HTTP/1.1 framing (no more than the windows allow)
/// as DATA, ending the stream with the body, with trailers when a chunked
/// body had some.
fn body(srv: &mut Server, id: u32, out: &mut Out, input: &[u8]) -> io::Result<()> {
    out.write(&mut Own { srv, id }, input)
}

/// A stream of weir's own codec as the destination of a body.
struct Own<'a> {
    srv: &'a mut Server,
    id: u32,
}

impl DataSink for Own<'_> {
    fn data(&mut self, bytes: &[u8], end: bool) -> io::Result<()> {
        self.srv.send_data(self.id, bytes, end);
        Ok(())
    }
    fn trailers(&mut self, lines: &[Vec<u8>]) -> io::Result<()> {
        let fields = convert::trailer_fields(lines);
        self.srv
            .send_trailers(self.id, fields.iter().map(|(n, v)| (&n[..], &v[..])));
        Ok(())
    }
}

#[cfg(test)]
#[path = "front_tests.rs"]
mod tests;
