//! A stream socket of either family (TCP or unix), or a TLS session over
//! one, with the readiness-based operations the forwarder uses so that no
//! buffer is held while idle; and [`Io`], those operations as a trait, which
//! the streams of a multiplexed connection (HTTP/2's, defined above) share.

use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::task::{Context, Poll};
use tokio::io::Interest;
use tokio::net::{TcpStream, UnixStream};

/// A connected stream socket: a transport.
#[derive(Debug)]
pub enum Conn {
    Tcp(TcpStream),
    Unix(UnixStream),
    Tls(Box<crate::tls::TlsStream>),
}

/// What forwarding reads and writes without holding a buffer while idle: a
/// transport, or one stream of a multiplexed connection.
pub trait Io {
    fn poll_read_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>>;
    fn poll_write_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>>;
    /// Reads what is available without waiting (`WouldBlock` when nothing
    /// is).
    fn try_recv(&self, buf: &mut [u8]) -> io::Result<usize>;
    /// Writes what is taken of `buf` without waiting.
    fn try_send(&self, buf: &[u8]) -> io::Result<usize>;
    /// Ends the sending direction; the read side stays open.
    fn shutdown_write(&self) -> io::Result<()>;
    /// Closes with a reset instead of a FIN, for aborts.
    fn set_reset_on_close(&self);
    /// The transport itself, when this is one (splice and socket options
    /// work on it); none for a stream of a multiplexed connection.
    fn transport(&self) -> Option<&Conn>;
    /// Bytes taken wait below (in the TLS layer) for room in the socket.
    fn has_pending(&self) -> bool {
        self.transport().is_some_and(Conn::has_pending)
    }
    /// Sends what waits below; `WouldBlock` when some remains.
    fn try_flush(&self) -> io::Result<()> {
        self.transport().map_or(Ok(()), Conn::try_flush)
    }
}

impl Io for Conn {
    fn poll_read_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Conn::poll_read_ready(self, cx)
    }
    fn poll_write_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Conn::poll_write_ready(self, cx)
    }
    fn try_recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        Conn::try_recv(self, buf)
    }
    fn try_send(&self, buf: &[u8]) -> io::Result<usize> {
        Conn::try_send(self, buf)
    }
    fn shutdown_write(&self) -> io::Result<()> {
        Conn::shutdown_write(self)
    }
    fn set_reset_on_close(&self) {
        Conn::set_reset_on_close(self)
    }
    fn transport(&self) -> Option<&Conn> {
        Some(self)
    }
}

/// The socket options rules asked for the client's socket (the last of
/// each kind wins).
#[derive(Debug, Clone, Copy, Default)]
pub struct SockOpts {
    pub mark: Option<u32>,
    pub tos: Option<u32>,
}

impl SockOpts {
    /// Records `set-mark` or `set-tos`.
    pub fn ask(&mut self, o: weir_rules::action::SockOpt) {
        match o {
            weir_rules::action::SockOpt::Mark(m) => self.mark = Some(m),
            weir_rules::action::SockOpt::Tos(t) => self.tos = Some(t),
        }
    }
}

/// Sets on `tcp` the options `o` holds, and forgets them: the netfilter
/// mark, the IP TOS (the traffic class over IPv6). A failure (a mark
/// needs the `CAP_NET_ADMIN` privilege) changes nothing, as in haproxy.
pub fn apply_sockopts(tcp: Option<&TcpStream>, o: &mut SockOpts) {
    let (Some(tcp), true) = (tcp, o.mark.is_some() || o.tos.is_some()) else {
        return;
    };
    let s = socket2::SockRef::from(tcp);
    if let Some(m) = o.mark.take() {
        let _ = s.set_mark(m);
    }
    if let Some(t) = o.tos.take() {
        let _ = match tcp.local_addr() {
            Ok(std::net::SocketAddr::V6(a)) if a.ip().to_ipv4_mapped().is_none() => {
                s.set_tclass_v6(t)
            }
            _ => s.set_tos(t),
        };
    }
}

impl Conn {
    pub fn poll_read_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self {
            Conn::Tcp(s) => {
                std::task::ready!(self.poll_stalled(cx))?;
                s.poll_read_ready(cx)
            }
            Conn::Unix(s) => s.poll_read_ready(cx),
            Conn::Tls(t) => t.poll_read_ready(cx),
        }
    }
    pub fn poll_write_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self {
            Conn::Tcp(s) => s.poll_write_ready(cx),
            Conn::Unix(s) => s.poll_write_ready(cx),
            Conn::Tls(t) => t.io().poll_write_ready(cx),
        }
    }
    pub fn try_read(&self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Conn::Tcp(s) => s.try_read(buf),
            Conn::Unix(s) => s.try_read(buf),
            Conn::Tls(t) => t.try_read(buf),
        }
    }
    pub fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Conn::Tcp(s) => {
                self.held_out()?;
                s.try_write(buf)
            }
            Conn::Unix(s) => s.try_write(buf),
            Conn::Tls(t) => t.try_write(buf),
        }
    }
    /// Runs a raw operation on the socket (splice, plain reads and writes)
    /// and clears readiness on `WouldBlock`. Under TLS it is the socket
    /// below, which carries encrypted bytes.
    pub fn try_io<R>(
        &self,
        interest: Interest,
        f: impl FnOnce() -> io::Result<R>,
    ) -> io::Result<R> {
        if interest.is_writable() {
            self.held_out()?;
        }
        match self {
            Conn::Tcp(s) => s.try_io(interest, f),
            Conn::Unix(s) => s.try_io(interest, f),
            Conn::Tls(t) => t.io().try_io(interest, f),
        }
    }
    /// Whether the event loop saw a plain socket readable (bytes, its end
    /// or an error) since a read last found nothing; read from the
    /// readiness bits alone, with no waker left. `None` under TLS, whose
    /// layer may hold bytes the socket no longer shows.
    pub fn seen_readable(&self) -> Option<bool> {
        let any = Interest::READABLE | Interest::ERROR;
        match self {
            Conn::Tcp(s) => Some(s.try_io(any, || Ok(())).is_ok()),
            Conn::Unix(s) => Some(s.try_io(any, || Ok(())).is_ok()),
            Conn::Tls(_) => None,
        }
    }
    /// Whether the event loop has seen the peer end its side (a FIN, as
    /// `EPOLLRDHUP` tells), asked once without waiting: haproxy knows it
    /// from the same event that brought the last bytes.
    pub fn peer_closed(&self) -> bool {
        let ready = match self {
            Conn::Tcp(s) => once(s.ready(Interest::READABLE)),
            Conn::Unix(s) => once(s.ready(Interest::READABLE)),
            Conn::Tls(t) => return t.io().peer_closed(),
        };
        matches!(ready, Some(Ok(r)) if r.is_read_closed())
    }
    /// Sends a FIN (half-close; after close_notify under TLS); the read
    /// side stays open.
    pub fn shutdown_write(&self) -> io::Result<()> {
        self.held_out()?;
        match self {
            Conn::Tcp(s) => socket2::SockRef::from(s).shutdown(std::net::Shutdown::Write),
            Conn::Unix(s) => socket2::SockRef::from(s).shutdown(std::net::Shutdown::Write),
            Conn::Tls(t) => t.shutdown_write(),
        }
    }
    /// Closes with a reset instead of a FIN (SO_LINGER 0), for aborts.
    pub fn set_reset_on_close(&self) {
        match self {
            Conn::Tcp(s) => {
                let _ = socket2::SockRef::from(s).set_linger(Some(std::time::Duration::ZERO));
            }
            Conn::Tls(t) => t.io().set_reset_on_close(),
            Conn::Unix(_) => {}
        }
    }
    /// A plain TCP socket (splice works on it).
    pub fn is_tcp(&self) -> bool {
        matches!(self, Conn::Tcp(_))
    }
    /// The TCP socket, plain or under TLS (for socket options).
    pub fn tcp(&self) -> Option<&TcpStream> {
        match self {
            Conn::Tcp(s) => Some(s),
            Conn::Tls(t) => t.io().tcp(),
            Conn::Unix(_) => None,
        }
    }
    /// The TLS session's details, under TLS.
    pub fn tls_info(&self) -> Option<&weir_rules::TlsInfo> {
        match self {
            Conn::Tls(t) => Some(t.info()),
            Conn::Tcp(_) | Conn::Unix(_) => None,
        }
    }
    /// Under TLS, sends close_notify before the connection is dropped
    /// (best effort: a full socket does not wait).
    pub fn close_notify(&self) {
        if let Conn::Tls(t) = self {
            t.close_notify();
        }
    }
    /// Bytes taken wait to be written: encrypted in the TLS layer for room
    /// in the socket, or held to the end of the pass ([`crate::sendq`]).
    pub fn has_pending(&self) -> bool {
        match self {
            Conn::Tls(t) => t.has_pending(),
            Conn::Tcp(s) => crate::sendq::holds(s.as_raw_fd()),
            Conn::Unix(_) => false,
        }
    }
    /// Sends what waits ([`Conn::has_pending`]); `WouldBlock` when some
    /// remains.
    pub fn try_flush(&self) -> io::Result<()> {
        match self {
            Conn::Tls(t) => t.try_flush(),
            _ => self.held_out(),
        }
    }
    /// Writes the bytes held for this socket to the end of the pass
    /// ([`crate::sendq`]) before anything else; `WouldBlock` when some
    /// remain.
    fn held_out(&self) -> io::Result<()> {
        let Conn::Tcp(s) = self else {
            return Ok(());
        };
        let fd = s.as_raw_fd();
        crate::sendq::push_out(fd, |b| {
            s.try_io(Interest::WRITABLE, || crate::splice::write_fd(fd, b))
        })
    }
    /// Before a wait to read: writes what the end of the pass could not
    /// (the peer may answer only once it has it), waiting for room.
    fn poll_stalled(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let Conn::Tcp(s) = self else {
            return Poll::Ready(Ok(()));
        };
        let fd = s.as_raw_fd();
        if !crate::sendq::stalled(fd) {
            return Poll::Ready(Ok(()));
        }
        loop {
            match self.held_out() {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                r => return Poll::Ready(r),
            }
            std::task::ready!(s.poll_write_ready(cx))?;
        }
    }
    /// Holds `bytes`, a plain TCP socket's small send, to the end of the
    /// pass ([`crate::sendq`]); false when they must be written now.
    /// Nothing to send is held at once.
    pub fn hold(&self, bytes: &[u8], task: &std::task::Waker) -> bool {
        match self {
            Conn::Tcp(s) => bytes.is_empty() || crate::sendq::hold(s.as_raw_fd(), bytes, task),
            Conn::Unix(_) | Conn::Tls(_) => false,
        }
    }
    /// Waits until the TLS layer has sent everything it holds.
    pub async fn flush(&self) -> io::Result<()> {
        flush(self).await
    }
    /// Writes what the socket takes of `buf` without waiting; a short write
    /// clears readiness. Under TLS, taken bytes may wait in the TLS layer
    /// ([`Conn::has_pending`]).
    pub fn try_send(&self, buf: &[u8]) -> io::Result<usize> {
        if let Conn::Tls(t) = self {
            return t.try_write(buf);
        }
        let fd = self.as_raw_fd();
        let mut wrote = 0;
        let r = self.try_io(Interest::WRITABLE, || {
            wrote = crate::splice::write_fd(fd, buf)?;
            if wrote < buf.len() {
                return Err(io::ErrorKind::WouldBlock.into());
            }
            Ok(wrote)
        });
        match r {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock && wrote > 0 => Ok(wrote),
            r => r,
        }
    }
    /// Reads what is available into `buf` (waiting for at least one byte).
    pub async fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            std::future::poll_fn(|cx| self.poll_read_ready(cx)).await?;
            match self.try_read(buf) {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e),
            }
        }
    }
}

/// `f`'s output if it is ready at its first poll (nothing is woken later:
/// the future is dropped, and with it what it registered).
fn once<F: std::future::Future>(f: F) -> Option<F::Output> {
    let mut f = std::pin::pin!(f);
    let mut cx = Context::from_waker(std::task::Waker::noop());
    match f.as_mut().poll(&mut cx) {
        Poll::Ready(v) => Some(v),
        Poll::Pending => None,
    }
}

impl Conn {
    /// Reads what is available without waiting (`WouldBlock` when nothing
    /// is); a short read clears readiness like [`Conn::recv`].
    pub fn try_recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        if let Conn::Tls(t) = self {
            return t.try_read(buf);
        }
        let fd = self.as_raw_fd();
        let mut got = 0;
        let r = self.try_io(Interest::READABLE, || {
            got = crate::splice::read_fd(fd, buf)?;
            if got > 0 && got < buf.len() {
                return Err(io::ErrorKind::WouldBlock.into());
            }
            Ok(got)
        });
        match r {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock && got > 0 => Ok(got),
            r => r,
        }
    }

    /// Reads what is available into `buf`, waiting for at least one byte
    /// (0 = end of stream). A short read clears readiness, so the next call
    /// waits for the event loop instead of making a read that returns EAGAIN.
    pub async fn recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        if let Conn::Tls(_) = self {
            return self.read(buf).await;
        }
        let fd = self.as_raw_fd();
        loop {
            std::future::poll_fn(|cx| self.poll_read_ready(cx)).await?;
            let mut got = 0;
            let r = self.try_io(Interest::READABLE, || {
                got = crate::splice::read_fd(fd, buf)?;
                if got > 0 && got < buf.len() {
                    return Err(io::ErrorKind::WouldBlock.into());
                }
                Ok(got)
            });
            match r {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock && got > 0 => return Ok(got),
                Err(e)
                    if e.kind() == io::ErrorKind::WouldBlock
                        || e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Writes all of `buf` (and, under TLS, waits until it left the TLS
    /// layer); a short write clears readiness, so the next attempt waits
    /// for room.
    pub async fn send_all(&self, buf: &[u8]) -> io::Result<()> {
        send_all(self, buf).await
    }
}

/// Asks the SOCKS4 proxy `conn` is connected to for a connection to `dst`
/// (the `socks4` server option) and reads its grant.
pub async fn socks4(conn: &Conn, dst: std::net::SocketAddr) -> io::Result<()> {
    use weir_proto::socks4::{connect_request, reply, REPLY_LEN};
    let std::net::SocketAddr::V4(dst) = dst else {
        return Err(io::Error::other("SOCKS4 reaches IPv4 addresses only"));
    };
    conn.send_all(&connect_request(dst)).await?;
    let mut got = [0u8; REPLY_LEN];
    let mut have = 0;
    while have < REPLY_LEN {
        match conn.read(got.get_mut(have..).unwrap_or_default()).await? {
            0 => return Err(io::ErrorKind::UnexpectedEof.into()),
            n => have += n,
        }
    }
    reply(&got).map_err(|code| io::Error::other(format!("SOCKS4 proxy refused ({code:#04x})")))
}

/// Waits until what `io` holds below (in the TLS layer) was sent.
pub async fn flush<I: Io + ?Sized>(io: &I) -> io::Result<()> {
    while io.has_pending() {
        std::future::poll_fn(|cx| io.poll_write_ready(cx)).await?;
        match io.try_flush() {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Writes all of `buf` to `io` (and, under TLS, waits until it left the
/// TLS layer); a short write clears readiness, so the next attempt waits
/// for room.
pub async fn send_all<I: Io + ?Sized>(io: &I, mut buf: &[u8]) -> io::Result<()> {
    while !buf.is_empty() {
        std::future::poll_fn(|cx| io.poll_write_ready(cx)).await?;
        match io.try_send(buf) {
            Ok(n) => buf = buf.get(n..).unwrap_or_default(),
            Err(e)
                if e.kind() == io::ErrorKind::WouldBlock
                    || e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    flush(io).await
}

impl AsRawFd for Conn {
    fn as_raw_fd(&self) -> RawFd {
        match self {
            Conn::Tcp(s) => s.as_raw_fd(),
            Conn::Unix(s) => s.as_raw_fd(),
            Conn::Tls(t) => t.io().as_raw_fd(),
        }
    }
}

/// A closing socket's held bytes are written as far as they go, and
/// forgotten before its descriptor can name another socket.
impl Drop for Conn {
    fn drop(&mut self) {
        if let Conn::Tcp(s) = self {
            crate::sendq::settle(s.as_raw_fd());
        }
    }
}

/// A connection's transport, out of it (a [`Conn`] cannot be taken apart
/// by a pattern, since it has a `Drop`).
pub enum Parts {
    Tcp(TcpStream),
    Unix(UnixStream),
    Tls(Box<crate::tls::TlsStream>),
}

impl Conn {
    /// Its transport, its held bytes written first as far as they go.
    #[allow(unsafe_code)]
    pub fn into_parts(self) -> Parts {
        if let Conn::Tcp(s) = &self {
            crate::sendq::settle(s.as_raw_fd());
        }
        let me = std::mem::ManuallyDrop::new(self);
        // SAFETY: `me` is never used or dropped again, so the one field
        // read out of it has a single owner.
        unsafe {
            match &*me {
                Conn::Tcp(s) => Parts::Tcp(std::ptr::read(s)),
                Conn::Unix(s) => Parts::Unix(std::ptr::read(s)),
                Conn::Tls(t) => Parts::Tls(std::ptr::read(t)),
            }
        }
    }
}

impl From<Parts> for Conn {
    fn from(p: Parts) -> Conn {
        match p {
            Parts::Tcp(s) => Conn::Tcp(s),
            Parts::Unix(s) => Conn::Unix(s),
            Parts::Tls(t) => Conn::Tls(t),
        }
    }
}
