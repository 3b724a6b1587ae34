//! A TLS connection over a stream socket, with the same readiness-based
//! operations as a plain [`Conn`]: reads decrypt what the socket holds,
//! writes encrypt and send what the socket takes (the rest waits in the
//! TLS layer and goes first on the next write or flush). No buffer is held
//! for an idle connection beyond what the TLS library keeps.

use super::traffic::Traffic;
use crate::conn::Conn;
use rustls::Connection;
use std::io::{self, IoSlice, Read, Write};
use std::os::fd::AsRawFd;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::Duration;
use weir_rules::TlsInfo;

/// A TLS session over a plain socket.
pub struct TlsStream {
    io: Conn,
    st: Mutex<Inner>,
    info: TlsInfo,
}

/// Who keeps the records: rustls (connections to servers), or weir's own
/// record layer once a client's handshake is over ([`Traffic`]).
enum Inner {
    Lib(Box<State>),
    Own(Box<Traffic>),
}

impl std::fmt::Debug for TlsStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsStream").field("io", &self.io).finish()
    }
}

pub(super) struct State {
    pub(super) tls: Connection,
    /// The socket reached end of stream.
    pub(super) eof: bool,
    /// Bytes the handshake received (none: the peer sent nothing at all).
    pub(super) received: usize,
}

/// The socket as rustls reads and writes it: short reads and writes clear
/// readiness so the event loop is asked before the next attempt.
pub(super) struct Raw<'a>(pub(super) &'a Conn);

impl Read for Raw<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.try_recv(buf)
    }
}

impl Write for Raw<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.write_vectored(&[IoSlice::new(buf)])
    }
    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        let want: usize = bufs.iter().take(64).map(|b| b.len()).sum();
        let fd = self.0.as_raw_fd();
        let mut wrote = 0;
        let r = self.0.try_io(tokio::io::Interest::WRITABLE, || {
            wrote = crate::splice::writev_fd(fd, bufs)?;
            if wrote < want {
                return Err(io::ErrorKind::WouldBlock.into());
            }
            Ok(wrote)
        });
        match r {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock && wrote > 0 => Ok(wrote),
            r => r,
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A TLS session set aside while its socket sleeps without it
/// ([`crate::http::lot`]).
pub struct Dormant {
    st: Inner,
    info: TlsInfo,
}

impl TlsStream {
    /// Parts the socket from its TLS session.
    pub(crate) fn into_dormant(self) -> (Conn, Box<Dormant>) {
        let st = self.st.into_inner().unwrap_or_else(|p| p.into_inner());
        (
            self.io,
            Box::new(Dormant {
                st,
                info: self.info,
            }),
        )
    }

    /// Joins a socket back to its TLS session.
    pub(crate) fn from_dormant(io: Conn, d: Dormant) -> TlsStream {
        let Dormant { st, info } = d;
        TlsStream {
            io,
            st: Mutex::new(st),
            info,
        }
    }

    /// A client's session, its records kept by weir from now on.
    pub(super) fn own(io: Conn, t: Traffic, info: TlsInfo) -> TlsStream {
        TlsStream {
            io,
            st: Mutex::new(Inner::Own(Box::new(t))),
            info,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.st.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn io(&self) -> &Conn {
        &self.io
    }

    pub fn info(&self) -> &TlsInfo {
        &self.info
    }

    /// Sends what the TLS layer holds; `WouldBlock` when the socket is full.
    fn flush_locked(&self, st: &mut Inner) -> io::Result<()> {
        match st {
            Inner::Lib(st) => flush_lib(&self.io, st),
            Inner::Own(t) => t.flush(&self.io),
        }
    }

    /// Ready to read when decrypted bytes (or the end) are waiting in the
    /// TLS layer, otherwise when the socket is.
    pub fn poll_read_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        {
            let mut st = self.lock();
            match &mut *st {
                Inner::Own(t) => {
                    if t.readable() {
                        return Poll::Ready(Ok(()));
                    }
                    // A reader about to wait sends what waits (the
                    // session tickets held for the first response).
                    if t.has_pending() {
                        let _ = t.flush(&self.io);
                    }
                }
                Inner::Lib(st) => {
                    if st.eof {
                        return Poll::Ready(Ok(()));
                    }
                    match st.tls.process_new_packets() {
                        Ok(s) if s.plaintext_bytes_to_read() == 0 && !s.peer_has_closed() => {}
                        _ => return Poll::Ready(Ok(())),
                    }
                }
            }
        }
        self.io.poll_read_ready(cx)
    }

    /// Reads decrypted bytes without waiting (0 = end of stream, with or
    /// without close_notify).
    pub fn try_read(&self, buf: &mut [u8]) -> io::Result<usize> {
        let mut st = self.lock();
        let st = match &mut *st {
            Inner::Own(t) => return t.try_read(&self.io, buf),
            Inner::Lib(st) => st,
        };
        loop {
            match st.tls.reader().read(buf) {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(0),
                Err(e) => return Err(e),
            }
            if st.eof {
                return Ok(0);
            }
            // A failure seen while polling for readiness (which reports it
            // as ready) is reported here; otherwise a caller would see
            // WouldBlock, poll, find it ready again, and spin.
            if let Err(e) = st.tls.process_new_packets() {
                let _ = flush_lib(&self.io, st);
                return Err(io::Error::new(io::ErrorKind::InvalidData, e));
            }
            if st.tls.read_tls(&mut Raw(&self.io))? == 0 {
                st.eof = true;
            }
            if let Err(e) = st.tls.process_new_packets() {
                // The alert rustls queued goes out if the socket takes it.
                let _ = flush_lib(&self.io, st);
                return Err(io::Error::new(io::ErrorKind::InvalidData, e));
            }
            if st.tls.wants_write() {
                // Key updates and the like: best effort, the rest goes later.
                let _ = flush_lib(&self.io, st);
            }
        }
    }

    /// Encrypts and sends what it can of `buf`. Bytes the socket did not
    /// take yet stay in the TLS layer (see [`TlsStream::has_pending`]).
    pub fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
        let mut st = self.lock();
        let st = match &mut *st {
            Inner::Own(t) => return t.try_write(&self.io, buf),
            Inner::Lib(st) => st,
        };
        flush_lib(&self.io, st)?;
        let n = st.tls.writer().write(buf)?;
        match flush_lib(&self.io, st) {
            Err(e) if e.kind() != io::ErrorKind::WouldBlock => Err(e),
            _ => Ok(n),
        }
    }

    /// Encrypted bytes wait for room in the socket.
    pub fn has_pending(&self) -> bool {
        match &*self.lock() {
            Inner::Lib(st) => st.tls.wants_write(),
            Inner::Own(t) => t.has_pending(),
        }
    }

    /// Sends waiting encrypted bytes; `WouldBlock` when some remain.
    pub fn try_flush(&self) -> io::Result<()> {
        let mut st = self.lock();
        self.flush_locked(&mut st)
    }

    /// Sends close_notify, best effort, before the socket is closed.
    pub fn close_notify(&self) {
        let mut st = self.lock();
        match &mut *st {
            Inner::Lib(st) => {
                st.tls.send_close_notify();
                let _ = flush_lib(&self.io, st);
            }
            Inner::Own(t) => t.close_notify(&self.io),
        }
    }

    /// Sends close_notify (best effort) and then a FIN.
    pub fn shutdown_write(&self) -> io::Result<()> {
        self.close_notify();
        self.io.shutdown_write()
    }
}

/// Sends what rustls holds; `WouldBlock` when the socket is full.
fn flush_lib(io: &Conn, st: &mut State) -> io::Result<()> {
    while st.tls.wants_write() {
        st.tls.write_tls(&mut Raw(io))?;
    }
    Ok(())
}

/// Why a handshake failed.
#[derive(Debug)]
pub enum HandshakeError {
    Timeout,
    /// The client closed or reset before finishing.
    Closed,
    Tls(rustls::Error),
    Io(io::Error),
}

impl HandshakeError {
    /// The message HAProxy logs for a failed handshake (the reason is not
    /// in it, as in HAProxy 2.6's line).
    pub fn message(&self) -> String {
        match self {
            HandshakeError::Timeout => "Timeout during SSL handshake".into(),
            HandshakeError::Closed => "Connection closed during SSL handshake".into(),
            HandshakeError::Tls(_) | HandshakeError::Io(_) => "SSL handshake failure".into(),
        }
    }
}

/// Runs a client handshake towards a server on `io`, within `timeout`;
/// `name` is sent as SNI when it is a DNS name.
pub async fn connect(
    io: Conn,
    cfg: Arc<rustls::ClientConfig>,
    name: rustls::pki_types::ServerName<'static>,
    timeout: Option<Duration>,
) -> Result<Conn, HandshakeError> {
    let alpn = cfg.alpn_protocols.clone();
    connect_alpn(io, cfg, name, alpn, timeout).await
}

/// [`connect`] offering `alpn` instead of the configuration's protocols
/// (a health check's `check-alpn`).
pub async fn connect_alpn(
    io: Conn,
    cfg: Arc<rustls::ClientConfig>,
    name: rustls::pki_types::ServerName<'static>,
    alpn: Vec<Vec<u8>>,
    timeout: Option<Duration>,
) -> Result<Conn, HandshakeError> {
    let cc =
        rustls::ClientConnection::new_with_alpn(cfg, name, alpn).map_err(HandshakeError::Tls)?;
    let mut st = State {
        tls: Connection::Client(cc),
        eof: false,
        received: 0,
    };
    bounded(timeout, drive(&io, &mut st)).await?;
    let info = info(&st.tls, None);
    Ok(Conn::Tls(Box::new(TlsStream {
        io,
        st: Mutex::new(Inner::Lib(Box::new(st))),
        info,
    })))
}

/// A handshake (or a part of it) within `timeout`.
pub(super) async fn bounded<T>(
    timeout: Option<Duration>,
    fut: impl std::future::Future<Output = Result<T, HandshakeError>>,
) -> Result<T, HandshakeError> {
    match timeout {
        Some(t) => tokio::time::timeout_at(crate::clock::deadline(t), fut)
            .await
            .unwrap_or(Err(HandshakeError::Timeout)),
        None => fut.await,
    }
}

/// Moves handshake messages until the handshake is done. TLS 1.3 session
/// tickets go out at once rather than with the first response: their
/// packet also acknowledges the client's Finished, which a client with
/// Nagle's algorithm on waits for before it sends its request (holding
/// them cost such clients a 40 ms delayed ACK per connection).
/// A handshake read's outcome: bytes read, nothing yet (`None`), or the
/// end of the handshake: the peer closed (end of stream, reset, broken
/// pipe) or another error.
pub(super) fn handshake_read(r: io::Result<usize>) -> Result<Option<usize>, HandshakeError> {
    match r {
        Ok(0) => Err(HandshakeError::Closed),
        Ok(n) => Ok(Some(n)),
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(None),
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::ConnectionReset | io::ErrorKind::BrokenPipe
            ) =>
        {
            Err(HandshakeError::Closed)
        }
        Err(e) => Err(HandshakeError::Io(e)),
    }
}

async fn drive(io: &Conn, st: &mut State) -> Result<(), HandshakeError> {
    loop {
        while st.tls.wants_write() {
            std::future::poll_fn(|cx| io.poll_write_ready(cx))
                .await
                .map_err(HandshakeError::Io)?;
            match st.tls.write_tls(&mut Raw(io)) {
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(HandshakeError::Io(e)),
            }
        }
        if !st.tls.is_handshaking() {
            return Ok(());
        }
        std::future::poll_fn(|cx| io.poll_read_ready(cx))
            .await
            .map_err(HandshakeError::Io)?;
        if let Some(n) = handshake_read(st.tls.read_tls(&mut Raw(io)))? {
            st.received += n;
            st.tls.process_new_packets().map_err(HandshakeError::Tls)?;
        }
    }
}

/// The OpenSSL name of a negotiated suite, as `ssl_fc_cipher` gives it.
fn cipher_name(s: rustls::CipherSuite) -> String {
    use rustls::CipherSuite as C;
    match s {
        C::TLS13_AES_256_GCM_SHA384 => "TLS_AES_256_GCM_SHA384".into(),
        C::TLS13_AES_128_GCM_SHA256 => "TLS_AES_128_GCM_SHA256".into(),
        C::TLS13_CHACHA20_POLY1305_SHA256 => "TLS_CHACHA20_POLY1305_SHA256".into(),
        C::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384 => "ECDHE-ECDSA-AES256-GCM-SHA384".into(),
        C::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256 => "ECDHE-ECDSA-AES128-GCM-SHA256".into(),
        C::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256 => "ECDHE-ECDSA-CHACHA20-POLY1305".into(),
        C::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384 => "ECDHE-RSA-AES256-GCM-SHA384".into(),
        C::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 => "ECDHE-RSA-AES128-GCM-SHA256".into(),
        C::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256 => "ECDHE-RSA-CHACHA20-POLY1305".into(),
        other => format!("{other:?}"),
    }
}

/// What the fetches (`ssl_fc_*`, `ssl_c_*`) read about a finished handshake.
pub(super) fn info(tls: &rustls::CommonState, sni: Option<String>) -> TlsInfo {
    let version = match tls.protocol_version() {
        Some(rustls::ProtocolVersion::TLSv1_3) => "TLSv1.3",
        Some(rustls::ProtocolVersion::TLSv1_2) => "TLSv1.2",
        _ => "",
    };
    let peer_chain: Vec<Vec<u8>> = tls
        .peer_certificates()
        .map(|c| c.iter().map(|d| d.as_ref().to_vec()).collect())
        .unwrap_or_default();
    TlsInfo {
        sni,
        alpn: tls
            .alpn_protocol()
            .map(|a| String::from_utf8_lossy(a).into_owned()),
        version,
        cipher: tls
            .negotiated_cipher_suite()
            .map(|s| cipher_name(s.suite()))
            .unwrap_or_default(),
        client_cert: !peer_chain.is_empty(),
        resumed: tls.handshake_kind() == Some(rustls::HandshakeKind::Resumed),
        peer_chain,
        own_cert: None,
        verify: 0,
    }
}
