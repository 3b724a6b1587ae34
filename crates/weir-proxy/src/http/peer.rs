//! What an exchange reads and writes on either side: a transport (`Conn`)
//! or one stream of a multiplexed HTTP/2 connection — a client's stream
//! ([`H2Stream`]) or a stream to a `proto h2` server ([`H2Up`]). Both carry
//! the message model's heads as they are and the body bytes in HTTP/1.1
//! framing.

use crate::conn::{Conn, Io};
use crate::connect::{Carry, Connected};
use crate::fcgi::up::FcgiUp;
use crate::h2::front::H2Stream;
use crate::h2::upstream::{self, H2Up};
use crate::state::ServerId;
use crate::state::{BackendRt, H2Use};
use std::io;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll};

/// One side of an exchange, borrowed.
#[derive(Debug, Clone, Copy)]
pub enum Peer<'c> {
    Conn(&'c Conn),
    /// A client's HTTP/2 stream.
    H2(&'c H2Stream),
    /// A stream to an HTTP/2 server.
    H2Up(&'c H2Up),
    /// A FastCGI application's connection.
    Fcgi(&'c FcgiUp),
}

impl<'c> Peer<'c> {
    /// The client connection's TLS session.
    pub fn tls_info(self) -> Option<&'c weir_rules::TlsInfo> {
        match self {
            Peer::Conn(c) => c.tls_info(),
            Peer::H2(h) => h.tls(),
            Peer::H2Up(h) => h.tls(),
            Peer::Fcgi(f) => f.conn().tls_info(),
        }
    }
    /// The TCP socket, plain or under TLS (for socket options).
    pub fn tcp(self) -> Option<&'c tokio::net::TcpStream> {
        match self {
            Peer::Conn(c) => c.tcp(),
            Peer::Fcgi(f) => f.conn().tcp(),
            Peer::H2(_) | Peer::H2Up(_) => None,
        }
    }
    /// A plain TCP socket.
    pub fn is_tcp(self) -> bool {
        matches!(self, Peer::Conn(c) if c.is_tcp())
    }
    /// A TCP or unix socket, not under TLS.
    pub fn is_plain(self) -> bool {
        matches!(self, Peer::Conn(Conn::Tcp(_) | Conn::Unix(_)))
    }
    /// A client's HTTP/2 stream.
    pub fn is_h2(self) -> bool {
        matches!(self, Peer::H2(_))
    }
    /// Whether a response to the client's upgrade may go to it (see
    /// [`H2Stream::upgrade_ok`]).
    pub fn upgrade_ok(self, res: &weir_proto::h1::ResponseHead) -> bool {
        // Only a switch needs the stream's key (and its lock).
        if res.status != 101 {
            return true;
        }
        match self {
            Peer::H2(h) => h.upgrade_ok(res),
            Peer::Conn(_) | Peer::H2Up(_) | Peer::Fcgi(_) => true,
        }
    }
    /// Writes all of `buf` (see [`crate::conn::send_all`]).
    pub async fn send_all(self, buf: &[u8]) -> io::Result<()> {
        crate::conn::send_all(&self, buf).await
    }
    /// Resolves when the client reset its HTTP/2 stream; never for a
    /// connection.
    pub async fn aborted(self) {
        match self {
            Peer::H2(h) => std::future::poll_fn(|cx| h.poll_reset(cx)).await,
            Peer::Conn(_) | Peer::H2Up(_) | Peer::Fcgi(_) => std::future::pending().await,
        }
    }
}

impl Io for Peer<'_> {
    fn poll_read_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self {
            Peer::Conn(c) => c.poll_read_ready(cx),
            Peer::H2(h) => h.poll_read_ready(cx),
            Peer::H2Up(h) => h.poll_read_ready(cx),
            Peer::Fcgi(f) => f.poll_read_ready(cx),
        }
    }
    fn poll_write_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self {
            Peer::Conn(c) => c.poll_write_ready(cx),
            Peer::H2(h) => h.poll_write_ready(cx),
            Peer::H2Up(h) => h.poll_write_ready(cx),
            Peer::Fcgi(f) => f.poll_write_ready(cx),
        }
    }
    fn try_recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Peer::Conn(c) => c.try_recv(buf),
            Peer::H2(h) => h.try_read(buf),
            Peer::H2Up(h) => h.try_read(buf),
            Peer::Fcgi(f) => f.try_recv(buf),
        }
    }
    fn try_send(&self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Peer::Conn(c) => c.try_send(buf),
            Peer::H2(h) => h.try_write(buf),
            Peer::H2Up(h) => h.try_write(buf),
            Peer::Fcgi(f) => f.try_send(buf),
        }
    }
    fn shutdown_write(&self) -> io::Result<()> {
        match self {
            Peer::Conn(c) => c.shutdown_write(),
            Peer::H2(h) => h.shutdown_write(),
            Peer::H2Up(h) => h.shutdown_write(),
            Peer::Fcgi(f) => f.shutdown_write(),
        }
    }
    fn set_reset_on_close(&self) {
        match self {
            Peer::Conn(c) => c.set_reset_on_close(),
            Peer::H2(h) => h.set_reset_on_close(),
            Peer::H2Up(h) => h.set_reset_on_close(),
            Peer::Fcgi(f) => f.set_reset_on_close(),
        }
    }
    fn transport(&self) -> Option<&Conn> {
        match self {
            Peer::Conn(c) => Some(c),
            Peer::H2(_) | Peer::H2Up(_) | Peer::Fcgi(_) => None,
        }
    }
    fn has_pending(&self) -> bool {
        match self {
            Peer::Fcgi(f) => f.has_pending(),
            p => p.transport().is_some_and(Conn::has_pending),
        }
    }
    fn try_flush(&self) -> io::Result<()> {
        match self {
            Peer::Fcgi(f) => f.try_flush(),
            p => p.transport().map_or(Ok(()), Conn::try_flush),
        }
    }
}

/// What a server connection carries for an exchange: the transport
/// (HTTP/1.1), or a stream on this thread's HTTP/2 connection to the
/// server (`proto h2`, or `h2` chosen by ALPN).
#[derive(Debug)]
pub enum Upstream {
    Conn(Conn),
    H2(Box<H2Up>),
    /// A FastCGI application (`proto fcgi`).
    Fcgi(Box<FcgiUp>),
}

impl Upstream {
    pub fn peer(&self) -> Peer<'_> {
        match self {
            Upstream::Conn(c) => Peer::Conn(c),
            Upstream::H2(h) => Peer::H2Up(h),
            Upstream::Fcgi(f) => Peer::Fcgi(f),
        }
    }
    /// Whether the connection may carry another exchange (a FastCGI one
    /// only when its application ended the last cleanly and keeps it).
    pub fn reusable(&self) -> bool {
        match self {
            Upstream::Fcgi(f) => f.reusable(),
            _ => true,
        }
    }
    /// A transport to server `s` as its protocol carries exchanges: a
    /// FastCGI connection for a `proto fcgi` server.
    pub fn of(be: &BackendRt, s: &crate::state::ServerRt, conn: Conn) -> Upstream {
        match &be.fcgi {
            Some(app) if s.conf.fcgi => Upstream::Fcgi(Box::new(FcgiUp::new(conn, app.clone()))),
            _ => Upstream::Conn(conn),
        }
    }
}

/// A new stream on an HTTP/2 connection to server `srv`.
fn h2_stream(srv: ServerId, up: upstream::Shared) -> Connected<Upstream> {
    Connected {
        srv,
        server_addr: up.server_addr,
        source_addr: up.source_addr,
        key: 0,
        gen: up.gen,
        conn: Upstream::H2(Box::new(H2Up::new(up))),
    }
}

impl Carry for Upstream {
    async fn reuse(be: &BackendRt, srv: ServerId, ws: bool) -> Option<Connected<Upstream>> {
        let s = be.server_at(srv)?;
        let h2 = if ws { s.ws.h2 } else { s.h2 };
        if h2 == H2Use::Never {
            return None;
        }
        let gen = s.conn_gen.load(Ordering::Relaxed);
        let up = upstream::reuse(be.proxy, srv, gen).await?;
        Some(h2_stream(srv, up))
    }

    async fn open(be: &BackendRt, c: Connected, ws: bool) -> io::Result<Connected<Upstream>> {
        let Some(s) = be.server_at(c.srv) else {
            return Ok(c.map(Upstream::Conn));
        };
        if s.conf.fcgi {
            return Ok(c.map(|conn| Upstream::of(be, s, conn)));
        }
        let h2 = match if ws { s.ws.h2 } else { s.h2 } {
            H2Use::Always => true,
            H2Use::IfNegotiated => c.conn.tls_info().and_then(|t| t.alpn.as_deref()) == Some("h2"),
            H2Use::Never => false,
        };
        if !h2 {
            return Ok(c.map(Upstream::Conn));
        }
        // (The generation it was dialled under, not the one now.)
        let gen = c.gen;
        let (srv, server_addr, source_addr) = (c.srv, c.server_addr, c.source_addr);
        let up = upstream::handshake(be.proxy, srv, c.conn, server_addr, source_addr, gen).await?;
        Ok(h2_stream(srv, up))
    }
}
