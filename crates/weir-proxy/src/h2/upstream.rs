//! HTTP/2 towards servers (`server … proto h2`, or `alpn h2` picked in the
//! TLS handshake): each worker thread keeps one connection per server,
//! driven by a task of its own, and every exchange sent there gets a stream
//! on it, seen as an HTTP/1.1 connection ([`H2Up`]): writes take the
//! request the exchange sends, reads give back the response in HTTP/1.1
//! framing (chunked, with the trailers, when it has no length).

use super::body::{gone, In, Out, Started, Writer};
use super::convert;
use super::io::ConnIo;
use crate::conn::Conn;
use crate::state::ProxyId;
use bytes::Bytes;
use h2::client::{ResponseFuture, SendRequest};
use h2::Reason;
use std::cell::RefCell;
use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Mutex, MutexGuard};
use std::task::{Context, Poll};
use weir_proto::h1::{self, Limits};

/// A live connection to a server, shared by this thread's exchanges.
#[derive(Clone)]
pub struct Shared {
    sender: SendRequest<Bytes>,
    /// Its server's connection generation.
    gen: u32,
    pub server_addr: Option<SocketAddr>,
    pub source_addr: Option<SocketAddr>,
    tls: bool,
}

thread_local! {
    /// This thread's connections, by (backend proxy, server).
    static CONNS: RefCell<HashMap<(ProxyId, usize), Shared>> = RefCell::new(HashMap::new());
}

/// This thread's connection to the server, once it can open a stream
/// (waiting while the server's stream limit is reached). `None` when there
/// is none, or it failed (it is forgotten).
pub async fn reuse(be: ProxyId, srv: usize, gen: u32) -> Option<Shared> {
    let mut sh = CONNS.with(|m| m.borrow().get(&(be, srv)).cloned())?;
    if sh.gen != gen {
        CONNS.with(|m| m.borrow_mut().remove(&(be, srv)));
        return None;
    }
    match sh.sender.ready().await {
        Ok(s) => {
            sh.sender = s;
            Some(sh)
        }
        Err(_) => {
            CONNS.with(|m| m.borrow_mut().remove(&(be, srv)));
            None
        }
    }
}

/// Starts HTTP/2 on a new connection to the server; the connection is run
/// by a task of its own and kept for this thread's next exchanges.
pub async fn handshake(
    be: ProxyId,
    srv: usize,
    conn: Conn,
    server_addr: Option<SocketAddr>,
    source_addr: Option<SocketAddr>,
    gen: u32,
) -> io::Result<Shared> {
    let tls = conn.tls_info().is_some();
    // As towards clients: a request's DATA must not wait behind its
    // unacknowledged HEADERS (see `super::serve`).
    if let Some(s) = conn.tcp() {
        let _ = s.set_nodelay(true);
    }
    let (sender, connection) = h2::client::Builder::new()
        .initial_connection_window_size((1 << 31) - 1)
        .handshake::<_, Bytes>(ConnIo::new(Box::new(conn), Vec::new()))
        .await
        .map_err(io::Error::other)?;
    crate::profile::spawn::<crate::profile::H2Server, _>(async move {
        let _ = connection.await;
    });
    let sender = sender.ready().await.map_err(io::Error::other)?;
    let sh = Shared {
        sender,
        gen,
        server_addr,
        source_addr,
        tls,
    };
    CONNS.with(|m| m.borrow_mut().insert((be, srv), sh.clone()));
    Ok(sh)
}

struct Up {
    sender: Option<SendRequest<Bytes>>,
    scheme: &'static str,
    /// The target's authority when the request has no `host`.
    authority: String,
    limits: Limits,
    /// The request.
    req: Writer,
    head_req: bool,
    resp: Option<ResponseFuture>,
    /// The response head as HTTP/1.1, until read.
    res_head: Vec<u8>,
    res_pos: usize,
    res: Option<In>,
    broken: bool,
    reset_on_close: bool,
}

/// One request's stream to a server behind the [`Conn`] interface.
pub struct H2Up {
    st: Mutex<Up>,
}

impl std::fmt::Debug for H2Up {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("H2Up")
    }
}

impl H2Up {
    pub fn new(sh: Shared, limits: Limits) -> H2Up {
        H2Up {
            st: Mutex::new(Up {
                sender: Some(sh.sender),
                scheme: if sh.tls { "https" } else { "http" },
                authority: sh.server_addr.map(|a| a.to_string()).unwrap_or_default(),
                limits,
                req: Writer::new(),
                head_req: false,
                resp: None,
                res_head: Vec::new(),
                res_pos: 0,
                res: None,
                broken: false,
                reset_on_close: false,
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Up> {
        self.st.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Ready when response bytes wait, the response ended, or the stream
    /// failed.
    pub fn poll_read_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let mut guard = self.lock();
        let st = &mut *guard;
        loop {
            if st.res_pos < st.res_head.len() || st.broken {
                return Poll::Ready(Ok(()));
            }
            if let Some(f) = st.resp.as_mut() {
                match Pin::new(f).poll(cx) {
                    Poll::Ready(Ok(r)) => {
                        st.resp = None;
                        let (parts, recv) = r.into_parts();
                        let (head, chunked) =
                            convert::response_head(&parts, recv.is_end_stream(), st.head_req);
                        st.res_head = head;
                        st.res = Some(In::new(recv, chunked));
                        continue;
                    }
                    Poll::Ready(Err(_)) => {
                        st.resp = None;
                        st.broken = true;
                        continue;
                    }
                    Poll::Pending => return Poll::Pending,
                }
            }
            return match st.res.as_mut() {
                Some(i) => i.poll_fill(cx).map(Ok),
                // The request is not sent yet.
                None => Poll::Pending,
            };
        }
    }

    pub fn try_read(&self, buf: &mut [u8]) -> io::Result<usize> {
        let mut guard = self.lock();
        let st = &mut *guard;
        if st.res_pos < st.res_head.len() {
            let n = buf.len().min(st.res_head.len() - st.res_pos);
            buf[..n].copy_from_slice(&st.res_head[st.res_pos..st.res_pos + n]);
            st.res_pos += n;
            return Ok(n);
        }
        match st.res.as_mut() {
            Some(i) if i.has_bytes() => Ok(i.take(buf)),
            Some(i) if i.broken => Err(gone()),
            Some(i) if i.ended() => Ok(0),
            _ if st.broken => Err(gone()),
            _ => Err(io::ErrorKind::WouldBlock.into()),
        }
    }

    pub fn poll_write_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.lock().req.poll_ready(cx)
    }

    /// Takes request bytes: all of a head, body bytes up to the window.
    pub fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
        let mut guard = self.lock();
        let st = &mut *guard;
        let mut req = std::mem::replace(&mut st.req, Writer::new());
        let r = req.write(buf, |acc| st.request(acc));
        st.req = req;
        r
    }

    pub fn set_reset_on_close(&self) {
        self.lock().reset_on_close = true;
    }
}

impl Up {
    /// Sends the request once `acc` holds its whole head.
    fn request(&mut self, acc: &[u8]) -> io::Result<Option<Started>> {
        let bad = || io::Error::from(io::ErrorKind::InvalidData);
        let (req, used) = match h1::parse_request(acc, &self.limits) {
            Ok(Some(r)) => r,
            Ok(None) if acc.len() > self.limits.max_head => return Err(bad()),
            Ok(None) => return Ok(None),
            Err(_) => return Err(bad()),
        };
        let r = convert::upstream_request(&req, self.scheme, &self.authority).ok_or_else(bad)?;
        let body = Out::new(req.framing);
        self.head_req = req.method == "HEAD";
        let end = matches!(body, Out::Done);
        let mut sender = self.sender.take().ok_or_else(gone)?;
        let (resp, send) = sender.send_request(r, end).map_err(|_| gone())?;
        self.resp = Some(resp);
        Ok(Some((send, body, used)))
    }
}

impl Drop for H2Up {
    /// A stream left before its request was sent or its response read is
    /// cancelled.
    fn drop(&mut self) {
        let st = self.st.get_mut().unwrap_or_else(|e| e.into_inner());
        let unread = !st.res.as_ref().is_some_and(|i| i.ended());
        let unsent = !matches!(st.req.body, Out::Done);
        if let Some(s) = st.req.send.as_mut() {
            if st.reset_on_close || unread || unsent {
                s.send_reset(Reason::CANCEL);
            }
        }
    }
}
