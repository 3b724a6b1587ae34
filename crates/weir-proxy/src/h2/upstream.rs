//! HTTP/2 towards servers (`server … proto h2`, or `alpn h2` picked in the
//! TLS handshake): each worker thread keeps one connection per server,
//! driven by a task of its own, and every exchange sent there gets a stream
//! on it ([`H2Up`]): the exchange gives it the request head as it is
//! ([`H2Up::send_request`]) and takes the response head the same way
//! ([`H2Up::poll_response`]), never as text; bodies cross in HTTP/1.1
//! framing (chunked, with the trailers, when they have no length). An
//! HTTP/1.1 upgrade (a WebSocket) goes as RFC 8441's extended CONNECT
//! where the server offers it, and its acceptance comes back as `101`.

use super::body::{gone, In, Out, Writer};
use super::convert;
use crate::conn::Conn;
use crate::conn_io::{ConnIo, Preface};
use crate::state::ProxyId;
use crate::state::ServerId;
use bytes::Bytes;
use h2::client::{ResponseFuture, SendRequest};
use h2::Reason;
use std::cell::RefCell;
use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use weir_proto::h1::{self, H1Error, RequestHead, ResponseHead};

/// A live connection to a server, shared by this thread's exchanges.
#[derive(Clone)]
pub struct Shared {
    sender: SendRequest<Bytes>,
    /// Its server's connection generation.
    pub gen: u32,
    pub server_addr: Option<SocketAddr>,
    pub source_addr: Option<SocketAddr>,
    /// The connection's TLS session (`ssl_bc_*`, `ssl_s_*`).
    tls: Option<Arc<weir_rules::TlsInfo>>,
    /// When the server's SETTINGS came.
    preface: Arc<Preface>,
}

thread_local! {
    /// This thread's connections, by (backend proxy, server).
    static CONNS: RefCell<HashMap<(ProxyId, ServerId), Shared>> = RefCell::new(HashMap::new());
}

/// This thread's connection to the server, once it can open a stream
/// (waiting while the server's stream limit is reached). `None` when there
/// is none, or it failed (it is forgotten).
pub async fn reuse(be: ProxyId, srv: ServerId, gen: u32) -> Option<Shared> {
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
    srv: ServerId,
    conn: Conn,
    server_addr: Option<SocketAddr>,
    source_addr: Option<SocketAddr>,
    gen: u32,
) -> io::Result<Shared> {
    let tls = conn.tls_info().cloned().map(Arc::new);
    // As towards clients: a request's DATA must not wait behind its
    // unacknowledged HEADERS (see `super::serve`).
    if let Some(s) = conn.tcp() {
        let _ = s.set_nodelay(true);
    }
    let preface = Arc::new(Preface::default());
    let io = ConnIo::new(Box::new(conn), Vec::new()).watch(preface.clone());
    let (sender, mut connection) = h2::client::Builder::new()
        .handshake::<_, Bytes>(io)
        .await
        .map_err(io::Error::other)?;
    let seen = preface.clone();
    crate::profile::spawn::<crate::profile::H2Server, _>(async move {
        // The connection window opens wide once the server's SETTINGS are
        // acknowledged, as haproxy's: servers that check the order of
        // the first frames see SETTINGS, then their ACK.
        tokio::select! {
            _ = &mut connection => {
                // Ended before the server's SETTINGS: nobody waits on.
                seen.end();
                return;
            }
            _ = seen.wait() => {}
        }
        connection.set_target_window_size((1 << 31) - 1);
        let _ = connection.await;
    });
    let sender = sender.ready().await.map_err(io::Error::other)?;
    let sh = Shared {
        sender,
        gen,
        server_addr,
        source_addr,
        tls,
        preface,
    };
    CONNS.with(|m| m.borrow_mut().insert((be, srv), sh.clone()));
    Ok(sh)
}

struct Up {
    sender: Option<SendRequest<Bytes>>,
    scheme: &'static str,
    /// The target's authority when the request has no `host`.
    authority: String,
    /// The request.
    req: Writer,
    /// The request's method (the response's framing depends on it).
    method: String,
    resp: Option<ResponseFuture>,
    /// The response head, until taken.
    res_head: Option<Result<ResponseHead, H1Error>>,
    res: Option<In>,
    broken: bool,
    reset_on_close: bool,
    preface: Arc<Preface>,
    /// An upgrade sent as extended CONNECT: the protocol, and the accept
    /// value for the client's WebSocket key.
    upgrade: Option<(Vec<u8>, Option<Vec<u8>>)>,
}

/// One request's stream to a server, read and written like a transport
/// (the HTTP layer's `Peer::H2Up`).
pub struct H2Up {
    st: Mutex<Up>,
    tls: Option<Arc<weir_rules::TlsInfo>>,
}

impl std::fmt::Debug for H2Up {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("H2Up")
    }
}

impl H2Up {
    pub fn new(sh: Shared) -> H2Up {
        H2Up {
            tls: sh.tls.clone(),
            st: Mutex::new(Up {
                sender: Some(sh.sender),
                scheme: if sh.tls.is_some() { "https" } else { "http" },
                authority: sh.server_addr.map(|a| a.to_string()).unwrap_or_default(),
                req: Writer::new(),
                method: String::new(),
                resp: None,
                res_head: None,
                res: None,
                broken: false,
                reset_on_close: false,
                preface: sh.preface,
                upgrade: None,
            }),
        }
    }

    /// The server connection's TLS session.
    pub fn tls(&self) -> Option<&weir_rules::TlsInfo> {
        self.tls.as_deref()
    }

    fn lock(&self) -> MutexGuard<'_, Up> {
        self.st.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The response head, once it came (`Err` when the stream failed or
    /// the response breaks HTTP/1.1's rules).
    pub fn poll_response(&self, cx: &mut Context<'_>) -> Poll<Result<ResponseHead, H1Error>> {
        let mut guard = self.lock();
        let st = &mut *guard;
        if !st.poll_head(cx) {
            return Poll::Pending;
        }
        match st.res_head.take() {
            Some(r) => Poll::Ready(r),
            None => Poll::Ready(Err(H1Error::BadResponse("stream failed"))),
        }
    }

    /// Ready when response body bytes wait, the response ended, or the
    /// stream failed.
    pub fn poll_read_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let mut guard = self.lock();
        let st = &mut *guard;
        if !st.poll_head(cx) {
            return Poll::Pending;
        }
        if st.broken {
            return Poll::Ready(Ok(()));
        }
        match st.res.as_mut() {
            Some(i) => i.poll_fill(cx).map(Ok),
            None => Poll::Ready(Ok(())),
        }
    }

    pub fn try_read(&self, buf: &mut [u8]) -> io::Result<usize> {
        let mut guard = self.lock();
        let st = &mut *guard;
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

    /// Whether the server accepts extended CONNECT (RFC 8441), once its
    /// SETTINGS came.
    pub async fn can_upgrade(&self) -> bool {
        let preface = self.lock().preface.clone();
        preface.wait().await;
        self.lock()
            .sender
            .as_ref()
            .is_some_and(SendRequest::is_extended_connect_protocol_enabled)
    }

    /// Sends the request's head (its body follows through
    /// [`H2Up::try_write`], in HTTP/1.1 framing). `InvalidData` for what
    /// HTTP/2 cannot carry (a CONNECT tunnel, `*`). An upgrade goes as
    /// extended CONNECT, whose stream then carries the tunnel's bytes.
    pub fn send_request(&self, req: &RequestHead) -> io::Result<()> {
        let mut guard = self.lock();
        let st = &mut *guard;
        let r = convert::upstream_request(req, st.scheme, &st.authority)
            .ok_or_else(|| io::Error::from(io::ErrorKind::InvalidData))?;
        st.upgrade = convert::upgrade_protocol(req).map(|p| {
            let key = req.headers.iter().find(|h| h.is("sec-websocket-key"));
            (p.to_vec(), key.map(|k| super::ws::accept(k.value())))
        });
        let body = if st.upgrade.is_some() {
            Out::Open
        } else {
            Out::new(req.framing)
        };
        st.method.clone_from(&req.method);
        let end = matches!(body, Out::Done);
        let mut sender = st.sender.take().ok_or_else(gone)?;
        let (resp, send) = sender.send_request(r, end).map_err(|_| gone())?;
        st.resp = Some(resp);
        st.req.start(send, body);
        Ok(())
    }

    /// Takes request body bytes up to the window.
    pub fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
        self.lock().req.write(buf)
    }

    /// Ends the stream's request side (a tunnel whose client ended its).
    pub fn shutdown_write(&self) -> io::Result<()> {
        self.lock().req.finish()
    }

    pub fn set_reset_on_close(&self) {
        self.lock().reset_on_close = true;
    }
}

impl Up {
    /// Polls for the response head; true once it came or the stream
    /// failed (false: the request is not sent, or no answer yet).
    fn poll_head(&mut self, cx: &mut Context<'_>) -> bool {
        let Some(f) = self.resp.as_mut() else {
            return self.res.is_some() || self.res_head.is_some() || self.broken;
        };
        match Pin::new(f).poll(cx) {
            Poll::Ready(Ok(r)) => {
                self.resp = None;
                let (parts, recv) = r.into_parts();
                let head_req = self.method == "HEAD";
                let ended = recv.is_end_stream();
                let switched = match &self.upgrade {
                    Some((p, accept)) if parts.status.is_success() => {
                        Some(convert::switched_parts(&parts, p, accept.as_deref()))
                    }
                    _ => None,
                };
                let (parts, chunked) = match switched {
                    Some(p) => (p, false),
                    None => convert::response_parts(&parts, ended, head_req),
                };
                let mut head = h1::response_head(parts, &self.method, false);
                if head_req && !ended {
                    // Bodiless, but the exchange ends with the stream: the
                    // server may still be reading the body it dropped, and
                    // the next request must not race it.
                    if let Ok(h) = head.as_mut() {
                        h.framing = h1::Framing::UntilClose;
                    }
                }
                self.res_head = Some(head);
                self.res = Some(In::new(recv, chunked));
                true
            }
            Poll::Ready(Err(_)) => {
                self.resp = None;
                self.broken = true;
                true
            }
            Poll::Pending => false,
        }
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
