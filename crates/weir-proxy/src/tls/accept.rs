//! A client's TLS handshake on a `bind … ssl` line: the hello picks the
//! configuration (SNI, `crt-list` options), rustls' unbuffered connection
//! runs the handshake over buffers weir owns, and the keys then pass to
//! weir's own record layer ([`super::traffic`]), so that nothing of the
//! handshake's buffers stays with the connection.

use super::stream::{bounded, handshake_read, info, HandshakeError, Raw, TlsStream};
use super::traffic::Traffic;
use crate::conn::Conn;
use rustls::server::danger::ClientCertVerifier;
use rustls::server::{Acceptor, UnbufferedServerConnection};
use rustls::unbuffered::{ConnectionState, EncodeError};
use rustls::ServerConfig;
use std::io::{self, Read};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Runs a server handshake on `io` (with `initial` bytes already read),
/// within `timeout`. On success the connection is ready for application
/// data; a failure says whether the client sent nothing at all.
pub async fn accept(
    io: Conn,
    cfg: &super::BindConfig,
    initial: &[u8],
    timeout: Option<Duration>,
) -> Result<Conn, (HandshakeError, bool)> {
    let started = Instant::now();
    let mut inbuf = initial.to_vec();
    let hello = bounded(timeout, hello(&io, cfg, &mut inbuf));
    let (config, sni, own, verifier) = match hello.await {
        Ok(h) => h,
        Err(e) => return Err((e, inbuf.is_empty())),
    };
    let mut conn =
        UnbufferedServerConnection::new(config).map_err(|e| (HandshakeError::Tls(e), false))?;
    // What is left of `timeout` after the hello.
    let left = timeout.map(|t| t.saturating_sub(started.elapsed()));
    let mut early = Vec::new();
    let mut verify = 0;
    let tickets = bounded(
        left,
        drive(&io, &mut conn, &mut inbuf, &mut early, &mut verify),
    )
    .await
    .map_err(|e| (e, false))?;
    let mut info = info(&conn, sni);
    info.own_cert = own;
    info.verify = verify;
    if info.resumed {
        if let (Some(v), Some((ee, inter))) = (verifier, info.peer_chain.split_first()) {
            info.verify = again(&*v, ee, inter);
        }
    }
    let (secrets, kernel) = conn
        .dangerous_into_kernel_connection()
        .map_err(|e| (HandshakeError::Tls(e), false))?;
    let traffic =
        Traffic::new(kernel, secrets, inbuf, early, tickets, cfg.records()).map_err(|e| {
            (
                HandshakeError::Io(io::Error::other(format!("TLS keys: {e:?}"))),
                false,
            )
        })?;
    Ok(Conn::Tls(Box::new(TlsStream::own(io, traffic, info))))
}

/// What the hello decides: the configuration, the SNI, the certificate
/// presented and the client certificate verifier.
type Hello = (
    Arc<ServerConfig>,
    Option<String>,
    Option<Arc<[u8]>>,
    Option<Arc<dyn ClientCertVerifier>>,
);

/// A resumed session's client certificate verified again (rustls keeps
/// the chain, not the verdict): its `ssl_c_verify` code.
fn again(v: &dyn ClientCertVerifier, ee: &[u8], inter: &[Vec<u8>]) -> i64 {
    let ee = rustls::pki_types::CertificateDer::from(ee);
    let inter: Vec<_> = inter
        .iter()
        .map(|c| rustls::pki_types::CertificateDer::from(c.as_slice()))
        .collect();
    let _ = super::verify::take_ignored();
    match v.verify_client_cert(&ee, &inter, rustls::pki_types::UnixTime::now()) {
        Ok(_) => super::verify::take_ignored().unwrap_or(0),
        Err(e) => super::verify::openssl_code(&e, &ee),
    }
}

/// Reads the client's hello into `raw` (every byte read, kept for the
/// handshake proper) and picks the configuration its SNI asks for.
async fn hello(
    io: &Conn,
    cfg: &super::BindConfig,
    raw: &mut Vec<u8>,
) -> Result<Hello, HandshakeError> {
    let mut acc = Acceptor::default();
    let mut fed = 0;
    loop {
        while fed < raw.len() {
            let mut rest = raw.get(fed..).unwrap_or_default();
            let n = acc.read_tls(&mut rest).map_err(HandshakeError::Io)?;
            if n == 0 {
                break;
            }
            fed += n;
        }
        match acc.accept() {
            Ok(Some(a)) => {
                let sni = a.client_hello().server_name().map(str::to_string);
                let chosen = cfg.pick(sni.as_deref());
                // The certificate rustls will present (`ssl_f_*`).
                let own = chosen.certs.leaf(&a.client_hello());
                return Ok((chosen.cfg, sni, own, chosen.verifier));
            }
            Ok(None) => {}
            Err((e, mut alert)) => {
                let _ = alert.write_all(&mut Raw(io));
                return Err(HandshakeError::Tls(e));
            }
        }
        std::future::poll_fn(|cx| io.poll_read_ready(cx))
            .await
            .map_err(HandshakeError::Io)?;
        read_more(io, raw)?;
    }
}

/// Appends what the socket holds to `buf`; `Closed` at its end.
fn read_more(io: &Conn, buf: &mut Vec<u8>) -> Result<(), HandshakeError> {
    let at = buf.len();
    buf.resize(at + 4096, 0);
    let r = Raw(io).read(buf.get_mut(at..).unwrap_or_default());
    let got = handshake_read(r);
    buf.truncate(at + got.as_ref().ok().copied().flatten().unwrap_or(0));
    got.map(|_| ())
}

fn conn_is_tls13(conn: &UnbufferedServerConnection) -> bool {
    conn.protocol_version() == Some(rustls::ProtocolVersion::TLSv1_3)
}

/// What the handshake loop does next, once rustls' state is let go.
enum Step {
    Send,
    Read,
    Done,
}

/// Sends `out` whole, waiting for room.
async fn send(io: &Conn, out: &mut Vec<u8>) -> Result<(), HandshakeError> {
    let mut at = 0;
    while let Some(rest) = out.get(at..).filter(|r| !r.is_empty()) {
        std::future::poll_fn(|cx| io.poll_write_ready(cx))
            .await
            .map_err(HandshakeError::Io)?;
        match io.try_send(rest) {
            Ok(n) => at += n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(HandshakeError::Io(e)),
        }
    }
    out.clear();
    Ok(())
}

/// Encodes one handshake record onto `out`.
fn encode(
    enc: &mut rustls::unbuffered::EncodeTlsData<'_, rustls::server::ServerConnectionData>,
    out: &mut Vec<u8>,
) -> Result<(), HandshakeError> {
    let at = out.len();
    out.resize(at + 4096, 0);
    loop {
        match enc.encode(out.get_mut(at..).unwrap_or_default()) {
            Ok(n) => {
                out.truncate(at + n);
                return Ok(());
            }
            Err(EncodeError::InsufficientSize(s)) => out.resize(at + s.required_size, 0),
            Err(e) => {
                out.truncate(at);
                return Err(HandshakeError::Io(io::Error::other(e.to_string())));
            }
        }
    }
}

/// Sends the alert rustls queued for a failed handshake, best effort.
/// rustls goes on over what is left of `inbuf` (its state may still point
/// into it: an empty buffer here made it panic).
fn send_alert(io: &Conn, conn: &mut UnbufferedServerConnection, inbuf: &mut Vec<u8>) {
    let mut out = Vec::new();
    for _ in 0..4 {
        let st = conn.process_tls_records(&mut inbuf[..]);
        let discard = st.discard;
        let go_on = match st.state {
            Ok(ConnectionState::EncodeTlsData(mut e)) => encode(&mut e, &mut out).is_ok(),
            Ok(ConnectionState::TransmitTlsData(t)) => {
                let _ = io.try_send(&out);
                out.clear();
                t.done();
                true
            }
            _ => false,
        };
        inbuf.drain(..discard.min(inbuf.len()));
        if !go_on {
            break;
        }
    }
    if !out.is_empty() {
        let _ = io.try_send(&out);
    }
}

/// Runs the handshake over `inbuf` (the bytes read so far) until it is
/// over. Application data that came with the client's last flight lands
/// in `early`; the start of a record not yet whole stays in `inbuf`. A
/// client certificate error `crt-ignore-err` let through leaves its code
/// in `verify`.
///
/// Returns what TLS 1.3 sends after the handshake (the session tickets),
/// unsent: they leave with the first response, in the same send, or as
/// soon as a read finds nothing to do ([`Traffic`]). One send and one
/// segment fewer per connection.
async fn drive(
    io: &Conn,
    conn: &mut UnbufferedServerConnection,
    inbuf: &mut Vec<u8>,
    early: &mut Vec<u8>,
    verify: &mut i64,
) -> Result<Vec<u8>, HandshakeError> {
    let mut out = Vec::new();
    loop {
        let st = conn.process_tls_records(&mut inbuf[..]);
        // The certificate was verified in that step, on this thread, if
        // at all: nothing else ran in between.
        if let Some(code) = super::verify::take_ignored() {
            *verify = code;
        }
        let discard = st.discard;
        let step = match st.state {
            Err(e) => {
                inbuf.drain(..discard.min(inbuf.len()));
                send_alert(io, conn, inbuf);
                return Err(HandshakeError::Tls(e));
            }
            Ok(ConnectionState::EncodeTlsData(mut e)) => {
                encode(&mut e, &mut out)?;
                None
            }
            Ok(ConnectionState::TransmitTlsData(t)) => {
                t.done();
                Some(Step::Send)
            }
            Ok(ConnectionState::ReadTraffic(mut r)) => {
                while let Some(rec) = r.next_record() {
                    let rec = rec.map_err(HandshakeError::Tls)?;
                    early.extend_from_slice(rec.payload);
                }
                None
            }
            Ok(ConnectionState::BlockedHandshake) => Some(Step::Read),
            Ok(ConnectionState::WriteTraffic(_)) => Some(Step::Done),
            Ok(ConnectionState::PeerClosed | ConnectionState::Closed) => {
                return Err(HandshakeError::Closed)
            }
            // No early data is accepted (rustls' default), and states
            // added later are not expected here.
            Ok(_) => {
                return Err(HandshakeError::Io(io::Error::other(
                    "unexpected TLS handshake state",
                )))
            }
        };
        inbuf.drain(..discard.min(inbuf.len()));
        match step {
            None => {}
            // Tickets after a TLS 1.3 handshake wait (see above).
            Some(Step::Send) if !conn.is_handshaking() && conn_is_tls13(conn) => {}
            Some(Step::Send) => send(io, &mut out).await?,
            Some(Step::Done) if !conn.is_handshaking() => {
                if !out.is_empty() && !conn_is_tls13(conn) {
                    send(io, &mut out).await?;
                }
                // The tickets may wait long (a request whose server is
                // slow): kept at their size, not at the capacity the
                // server's first flight grew the buffer to.
                out.shrink_to_fit();
                return Ok(out);
            }
            // Still waiting for the client's Finished (half-RTT data would
            // be allowed, there is none to send).
            Some(Step::Done | Step::Read) => {
                if !out.is_empty() {
                    send(io, &mut out).await?;
                }
                std::future::poll_fn(|cx| io.poll_read_ready(cx))
                    .await
                    .map_err(HandshakeError::Io)?;
                read_more(io, inbuf)?;
            }
        }
    }
}
