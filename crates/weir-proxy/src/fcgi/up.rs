//! A connection to a FastCGI application that an exchange writes and
//! reads as it would an HTTP/1.1 server's: [`FcgiUp::begin`] takes the
//! request's parameters, the body bytes written after it (in HTTP/1.1
//! framing) go as `FCGI_STDIN`, and the application's `FCGI_STDOUT` reads
//! back as an HTTP/1.1 response — its CGI head made a status line and
//! fields (with a `date` when it has none, as haproxy adds), its body
//! chunked unless the head gave a length. `FCGI_STDERR` lines go to the
//! application's `log-stderr` targets. One request at a time, id 1.

use super::{App, Request};
use crate::conn::{Conn, Io};
use std::io;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll};
use weir_proto::fcgi::{self, kind};
use weir_proto::h1::{ChunkEvent, ChunkedDecoder, Framing};

/// The request id of every request (one at a time on a connection).
const ID: u16 = 1;
/// The most a CGI head may take.
const MAX_HEAD: usize = 64 * 1024;

/// A FastCGI server connection carrying one exchange at a time.
pub struct FcgiUp {
    conn: Conn,
    app: Arc<App>,
    st: Mutex<St>,
}

impl std::fmt::Debug for FcgiUp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FcgiUp")
    }
}

/// The request body still to come, as the exchange frames it.
enum Body {
    /// None left: what is written is dropped.
    Done,
    Length(u64),
    /// Chunked, with the bytes of a chunk line not yet whole.
    Chunked(ChunkedDecoder, Vec<u8>),
}

/// Where the response stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// The CGI head is being read (into `head`).
    Head,
    /// Body bytes go on, chunked or as they are; none for a bodyless
    /// answer.
    Body { chunked: bool, bodyless: bool },
    /// `FCGI_END_REQUEST` came (or the connection failed).
    Done,
}

struct St {
    /// Records made, waiting for room in the socket, and how many of
    /// their bytes went.
    out: Vec<u8>,
    sent: usize,
    body: Body,
    /// Bytes from the application, not yet a whole record.
    inb: Vec<u8>,
    /// The CGI head so far.
    head: Vec<u8>,
    /// HTTP/1.1 bytes for the exchange, and how many it took.
    res: Vec<u8>,
    taken: usize,
    phase: Phase,
    /// The request was HEAD.
    head_req: bool,
    /// The application ended the request cleanly (the connection may
    /// carry another).
    ended: bool,
    /// The connection failed or closed.
    broken: bool,
    /// The CGI head could not be read (an invalid response, not a
    /// server's failure).
    bad_head: bool,
}

impl FcgiUp {
    pub fn new(conn: Conn, app: Arc<App>) -> FcgiUp {
        FcgiUp {
            conn,
            app,
            st: Mutex::new(St {
                out: Vec::new(),
                sent: 0,
                body: Body::Done,
                inb: Vec::new(),
                head: Vec::new(),
                res: Vec::new(),
                taken: 0,
                phase: Phase::Done,
                head_req: false,
                ended: true,
                broken: false,
                bad_head: false,
            }),
        }
    }

    fn st(&self) -> MutexGuard<'_, St> {
        self.st.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The transport, once the exchange is over (for the idle pool).
    pub fn into_conn(self) -> Conn {
        self.conn
    }

    pub fn conn(&self) -> &Conn {
        &self.conn
    }

    /// The application's CGI head was invalid: the response is refused
    /// (`PH`), as haproxy refuses it, rather than failed.
    pub fn bad_head(&self) -> bool {
        self.st().bad_head
    }

    /// Whether another request may follow on this connection: the last
    /// one ended cleanly, and the application was asked to keep it.
    pub fn reusable(&self) -> bool {
        let st = self.st();
        self.app.conf.keep_conn && st.ended && !st.broken && st.inb.is_empty()
    }

    /// Starts a request: `FCGI_BEGIN_REQUEST`, its parameters, and the end
    /// of `FCGI_STDIN` at once when it has no body (`framing`).
    pub fn begin(&self, req: &Request, framing: Framing) {
        let mut st = self.st();
        let st = &mut *st;
        fcgi::push_begin(&mut st.out, ID, self.app.conf.keep_conn);
        fcgi::push_stream(&mut st.out, kind::PARAMS, ID, &req.params);
        fcgi::push_end(&mut st.out, kind::PARAMS, ID);
        st.body = match framing {
            Framing::ContentLength(n) if n > 0 => Body::Length(n),
            Framing::Chunked => Body::Chunked(ChunkedDecoder::default(), Vec::new()),
            _ => {
                fcgi::push_end(&mut st.out, kind::STDIN, ID);
                Body::Done
            }
        };
        st.head.clear();
        st.res.clear();
        if req.go_ahead {
            st.res.extend_from_slice(b"HTTP/1.1 100 Continue\r\n\r\n");
        }
        st.taken = 0;
        st.phase = Phase::Head;
        st.head_req = req.head;
        st.ended = false;
        st.bad_head = false;
    }

    /// Sends what waits in `out`; `WouldBlock` while some remains.
    fn flush(&self, st: &mut St) -> io::Result<()> {
        while let Some(rest) = st.out.get(st.sent..).filter(|r| !r.is_empty()) {
            match self.conn.try_send(rest) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => st.sent += n,
                Err(e) => return Err(e),
            }
        }
        st.out.clear();
        st.sent = 0;
        self.conn.try_flush()
    }

    /// Turns body bytes (in their HTTP/1.1 framing) into `FCGI_STDIN`.
    fn stdin(st: &mut St, buf: &[u8]) -> io::Result<()> {
        match &mut st.body {
            Body::Done => {}
            Body::Length(left) => {
                let n = (*left).min(buf.len() as u64);
                let data = buf.get(..n as usize).unwrap_or_default();
                fcgi::push_stream(&mut st.out, kind::STDIN, ID, data);
                *left -= n;
                if *left == 0 {
                    fcgi::push_end(&mut st.out, kind::STDIN, ID);
                    st.body = Body::Done;
                }
            }
            Body::Chunked(dec, carry) => {
                carry.extend_from_slice(buf);
                let (events, used) = dec
                    .feed(carry)
                    .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))?;
                let mut end = false;
                for ev in events {
                    match ev {
                        ChunkEvent::Data(r) => {
                            let data = carry.get(r).unwrap_or_default();
                            fcgi::push_stream(&mut st.out, kind::STDIN, ID, data);
                        }
                        ChunkEvent::Trailer(_) => {}
                        ChunkEvent::End => end = true,
                    }
                }
                carry.drain(..used.min(carry.len()));
                if end {
                    fcgi::push_end(&mut st.out, kind::STDIN, ID);
                    st.body = Body::Done;
                }
            }
        }
        Ok(())
    }

    /// Decodes the whole records in `inb` into `res`.
    fn decode(&self, st: &mut St) -> io::Result<()> {
        let mut at = 0;
        loop {
            let rest = st.inb.get(at..).unwrap_or_default();
            let (rec, used) = match fcgi::parse_record(rest) {
                Ok(Some((r, used))) => ((r.kind, r.id, r.content.to_vec()), used),
                Ok(None) => break,
                Err(e) => return Err(io::Error::new(io::ErrorKind::InvalidData, e.to_string())),
            };
            at += used;
            let (k, id, content) = rec;
            if id != ID {
                // Management records (id 0) and strays are ignored.
                continue;
            }
            match k {
                kind::STDOUT => self.stdout(st, &content)?,
                kind::STDERR => self.stderr(&content),
                kind::END_REQUEST => {
                    let end = fcgi::end_request(&content)
                        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))?;
                    self.end(st, end.protocol_status)?;
                }
                _ => {}
            }
        }
        st.inb.drain(..at.min(st.inb.len()));
        Ok(())
    }

    /// `FCGI_STDOUT` bytes: the CGI head, then the body.
    fn stdout(&self, st: &mut St, data: &[u8]) -> io::Result<()> {
        match st.phase {
            Phase::Head => {
                st.head.extend_from_slice(data);
                let parsed = match fcgi::parse_cgi_head(&st.head) {
                    Ok(None) if st.head.len() > MAX_HEAD => Err("CGI head too long".to_string()),
                    p => p.map_err(|e| e.to_string()),
                };
                let (head, used) = match parsed {
                    Ok(Some(h)) => h,
                    Ok(None) => return Ok(()),
                    Err(e) => {
                        st.bad_head = true;
                        return Err(io::Error::new(io::ErrorKind::InvalidData, e));
                    }
                };
                let phase = response_head(&mut st.res, &head, st.head_req);
                st.phase = phase;
                let body = st.head.split_off(used.min(st.head.len()));
                st.head.clear();
                body_bytes(st, &body);
            }
            Phase::Body { .. } => body_bytes(st, data),
            Phase::Done => {}
        }
        Ok(())
    }

    /// One `FCGI_STDERR` record, logged as the application's line.
    fn stderr(&self, data: &[u8]) {
        let text = String::from_utf8_lossy(data);
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            self.app.stderr.send(3, line);
        }
    }

    /// `FCGI_END_REQUEST`: the chunked body's end; an application that
    /// refused the request, or ended without a head, fails it.
    fn end(&self, st: &mut St, protocol_status: u8) -> io::Result<()> {
        if protocol_status != 0 || st.phase == Phase::Head {
            st.broken = true;
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "FastCGI request ended without a response",
            ));
        }
        if st.phase
            == (Phase::Body {
                chunked: true,
                bodyless: false,
            })
        {
            st.res.extend_from_slice(b"0\r\n\r\n");
        }
        st.phase = Phase::Done;
        st.ended = true;
        Ok(())
    }

    fn pending_out(&self) -> bool {
        !self.st().out.is_empty() || self.conn.has_pending()
    }
}

/// The HTTP/1.1 head of a CGI head, and how its body goes on.
fn response_head(res: &mut Vec<u8>, head: &fcgi::CgiHead, head_req: bool) -> Phase {
    let reason = if head.reason.is_empty() {
        weir_proto::h1::status::reason(head.status)
    } else {
        head.reason.as_str()
    };
    res.extend_from_slice(format!("HTTP/1.1 {} {reason}\r\n", head.status).as_bytes());
    let mut length = false;
    let mut date = false;
    for (n, v) in &head.headers {
        let n = n.to_ascii_lowercase();
        if matches!(
            n.as_str(),
            "transfer-encoding" | "connection" | "keep-alive"
        ) {
            continue;
        }
        length |= n == "content-length";
        date |= n == "date";
        res.extend_from_slice(n.as_bytes());
        res.extend_from_slice(b": ");
        res.extend_from_slice(v);
        res.extend_from_slice(b"\r\n");
    }
    if !date {
        let now = crate::clock::wall().as_secs() as i64;
        res.extend_from_slice(b"date: ");
        res.extend_from_slice(weir_rules::textconv::http_date(now).as_bytes());
        res.extend_from_slice(b"\r\n");
    }
    let bodyless = head_req || matches!(head.status, 100..=199 | 204 | 304);
    let chunked = !length && !bodyless;
    if chunked {
        res.extend_from_slice(b"transfer-encoding: chunked\r\n");
    }
    res.extend_from_slice(b"\r\n");
    Phase::Body { chunked, bodyless }
}

/// Body bytes as the response frames them.
fn body_bytes(st: &mut St, data: &[u8]) {
    match st.phase {
        Phase::Body {
            bodyless: false,
            chunked,
        } if !data.is_empty() => {
            if chunked {
                st.res
                    .extend_from_slice(format!("{:x}\r\n", data.len()).as_bytes());
            }
            st.res.extend_from_slice(data);
            if chunked {
                st.res.extend_from_slice(b"\r\n");
            }
        }
        _ => {}
    }
}

impl Io for FcgiUp {
    fn poll_read_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        {
            let st = self.st();
            if st.taken < st.res.len() || st.phase == Phase::Done || st.broken {
                return Poll::Ready(Ok(()));
            }
        }
        self.conn.poll_read_ready(cx)
    }
    fn poll_write_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.pending_out() {
            return self.conn.poll_write_ready(cx);
        }
        Poll::Ready(Ok(()))
    }
    fn try_recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        let mut guard = self.st();
        let st = &mut *guard;
        let mut tmp = [0u8; 16 * 1024];
        loop {
            if let Some(ready) = st.res.get(st.taken..).filter(|r| !r.is_empty()) {
                let n = ready.len().min(buf.len());
                buf.get_mut(..n)
                    .unwrap_or_default()
                    .copy_from_slice(ready.get(..n).unwrap_or_default());
                st.taken += n;
                if st.taken == st.res.len() {
                    st.res.clear();
                    st.taken = 0;
                }
                return Ok(n);
            }
            if st.phase == Phase::Done || st.broken {
                return Ok(0);
            }
            match self.conn.try_recv(&mut tmp) {
                Ok(0) => {
                    st.broken = true;
                    st.phase = Phase::Done;
                }
                Ok(n) => {
                    st.inb.extend_from_slice(tmp.get(..n).unwrap_or_default());
                    if let Err(e) = self.decode(st) {
                        st.broken = true;
                        st.phase = Phase::Done;
                        return Err(e);
                    }
                }
                Err(e) => return Err(e),
            }
        }
    }
    fn try_send(&self, buf: &[u8]) -> io::Result<usize> {
        let mut guard = self.st();
        let st = &mut *guard;
        if !st.out.is_empty() {
            self.flush(st)?;
        }
        Self::stdin(st, buf)?;
        match self.flush(st) {
            Ok(()) => Ok(buf.len()),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(buf.len()),
            Err(e) => Err(e),
        }
    }
    fn shutdown_write(&self) -> io::Result<()> {
        // The request's end is its empty `FCGI_STDIN`; the connection
        // stays open for the response.
        Ok(())
    }
    fn set_reset_on_close(&self) {
        self.conn.set_reset_on_close()
    }
    fn transport(&self) -> Option<&Conn> {
        None
    }
    fn has_pending(&self) -> bool {
        self.pending_out()
    }
    fn try_flush(&self) -> io::Result<()> {
        let mut st = self.st();
        self.flush(&mut st)
    }
}
