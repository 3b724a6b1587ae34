//! TLS records after a client's handshake, kept by weir itself: rustls
//! negotiates the session and hands over its keys through its kernel-TLS
//! interface (`KernelConnection`, which still derives the keys of a TLS 1.3
//! key update), and this layer seals and opens records with the provider's
//! AEADs. An idle client then holds its two keys and nothing else: no
//! receive buffer, no queue (rustls' buffered connection keeps 4 KiB).

use crate::conn::Conn;
use rustls::crypto::cipher::{
    InboundOpaqueMessage, MessageDecrypter, MessageEncrypter, OutboundChunks, OutboundPlainMessage,
};
use rustls::kernel::KernelConnection;
use rustls::server::ServerConnectionData;
use rustls::{
    ConnectionTrafficSecrets, ContentType, ExtractedSecrets, ProtocolVersion, SupportedCipherSuite,
};
use std::cell::RefCell;
use std::io;

/// Bytes of a record header.
const HEADER: usize = 5;
/// The most plaintext one record carries (2^14).
const MAX_PLAIN: usize = 16384;
/// The most ciphertext one record may carry: 2^14 + 256 in TLS 1.3,
/// 2^14 + 2048 in TLS 1.2.
const MAX_CIPHER_13: usize = MAX_PLAIN + 256;
const MAX_CIPHER_12: usize = MAX_PLAIN + 2048;
/// Plaintext sealed by one write at most (the rest waits for the next).
const WRITE_CHUNK: usize = 4 * MAX_PLAIN;
/// Records in a row that carry nothing for the reader (empty data, key
/// updates, ignored warnings) before the peer is cut off, as rustls does.
const MAX_IDLE_RECORDS: u8 = 32;
/// Waiting sealed bytes up to this size are sent with the next write's.
const COALESCE: usize = 4096;
/// The socket read's size when no record is pending: two whole records.
const SCRATCH: usize = 2 * (HEADER + MAX_CIPHER_12);

/// Why a session ended with an error (each maps to the alert sent).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fatal {
    /// A record did not decrypt (bad_record_mac).
    BadRecordMac,
    /// A record type or message not allowed now (unexpected_message).
    Unexpected,
    /// A record over the size limit (record_overflow).
    Overflow,
    /// A malformed alert or key update (decode_error).
    Decode,
    /// The peer sent a fatal alert (its description).
    PeerAlert(u8),
    /// Keys could not be made or updated (internal_error).
    Keys,
}

impl Fatal {
    fn alert(self) -> Option<u8> {
        match self {
            Fatal::BadRecordMac => Some(20),
            Fatal::Unexpected => Some(10),
            Fatal::Overflow => Some(22),
            Fatal::Decode => Some(50),
            Fatal::Keys => Some(80),
            Fatal::PeerAlert(_) => None,
        }
    }

    fn io(self) -> io::Error {
        io::Error::new(io::ErrorKind::InvalidData, format!("TLS: {self:?}"))
    }
}

thread_local! {
    /// Where each socket read lands before its records are opened (one per
    /// thread, so that no connection keeps a receive buffer).
    static SCRATCH_BUF: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// A TLS session's record layer once the handshake is over.
pub(crate) struct Traffic {
    kernel: KernelConnection<ServerConnectionData>,
    suite: SupportedCipherSuite,
    tls13: bool,
    enc: Box<dyn MessageEncrypter>,
    dec: Box<dyn MessageDecrypter>,
    tx_seq: u64,
    rx_seq: u64,
    /// The start of a record not wholly received yet (empty while idle).
    rx: Vec<u8>,
    /// Opened bytes the reader has not taken yet, from `plain_at`.
    plain: Vec<u8>,
    plain_at: usize,
    /// Sealed bytes the socket has not taken yet, from `tx_at`.
    tx: Vec<u8>,
    tx_at: usize,
    /// close_notify or the end of the socket arrived.
    eof: bool,
    /// A fatal error ended the session: reads report it.
    failed: Option<Fatal>,
    sent_close: bool,
    /// Records in a row that carried nothing for the reader.
    idle_records: u8,
    /// `tune.ssl.maxrecord` and `tune.ssl.hard-maxrecord`.
    limits: RecordLimits,
    /// Plaintext still sent in `maxrecord` records: the start of each
    /// answer (reset when the client sends), not a long transfer.
    soft_left: u32,
}

/// How much plaintext records carry (0: up to 2^14).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RecordLimits {
    /// `tune.ssl.maxrecord`: at the start of a transfer.
    pub soft: u16,
    /// `tune.ssl.hard-maxrecord`: always.
    pub hard: u16,
}

/// The bytes of a transfer sent in `maxrecord` records before the
/// records grow: HAProxy lifts its limit once a stream is seen streaming.
const SOFT_SPAN: u32 = 64 * 1024;

/// A direction's key, with its IV as the version's algorithm takes it.
enum Iv {
    Tls13(rustls::crypto::cipher::Iv),
    /// TLS 1.2: AES-GCM splits the IV into a 4-byte salt and the start of
    /// the explicit nonce; ChaCha20 uses all 12 bytes (no explicit part).
    Tls12 {
        fixed: Vec<u8>,
        explicit: Vec<u8>,
    },
}

fn key_iv(
    suite: SupportedCipherSuite,
    s: ConnectionTrafficSecrets,
) -> Result<(rustls::crypto::cipher::AeadKey, Iv), Fatal> {
    let gcm = matches!(
        s,
        ConnectionTrafficSecrets::Aes128Gcm { .. } | ConnectionTrafficSecrets::Aes256Gcm { .. }
    );
    let (key, iv) = match s {
        ConnectionTrafficSecrets::Aes128Gcm { key, iv }
        | ConnectionTrafficSecrets::Aes256Gcm { key, iv }
        | ConnectionTrafficSecrets::Chacha20Poly1305 { key, iv } => (key, iv),
        _ => return Err(Fatal::Keys),
    };
    let iv = match suite {
        SupportedCipherSuite::Tls13(_) => Iv::Tls13(iv),
        SupportedCipherSuite::Tls12(_) => {
            let b = iv.as_ref();
            let (fixed, explicit) = b.split_at(if gcm { 4.min(b.len()) } else { b.len() });
            Iv::Tls12 {
                fixed: fixed.to_vec(),
                explicit: explicit.to_vec(),
            }
        }
    };
    Ok((key, iv))
}

fn encrypter(
    suite: SupportedCipherSuite,
    s: ConnectionTrafficSecrets,
) -> Result<Box<dyn MessageEncrypter>, Fatal> {
    match (suite, key_iv(suite, s)?) {
        (SupportedCipherSuite::Tls13(t), (key, Iv::Tls13(iv))) => Ok(t.aead_alg.encrypter(key, iv)),
        (SupportedCipherSuite::Tls12(t), (key, Iv::Tls12 { fixed, explicit })) => {
            Ok(t.aead_alg.encrypter(key, &fixed, &explicit))
        }
        _ => Err(Fatal::Keys),
    }
}

fn decrypter(
    suite: SupportedCipherSuite,
    s: ConnectionTrafficSecrets,
) -> Result<Box<dyn MessageDecrypter>, Fatal> {
    match (suite, key_iv(suite, s)?) {
        (SupportedCipherSuite::Tls13(t), (key, Iv::Tls13(iv))) => Ok(t.aead_alg.decrypter(key, iv)),
        (SupportedCipherSuite::Tls12(t), (key, Iv::Tls12 { fixed, .. })) => {
            Ok(t.aead_alg.decrypter(key, &fixed))
        }
        _ => Err(Fatal::Keys),
    }
}

/// What one record held.
enum Opened {
    /// Application data: its range in the record buffer.
    Data(std::ops::Range<usize>),
    /// Nothing for the reader (a key update, an ignored warning).
    Nothing,
    /// close_notify.
    Close,
}

impl Traffic {
    /// Takes over from a finished handshake: its keys and sequence numbers,
    /// the start of a record it read but did not open (`rest`),
    /// application data that came with the handshake's last flight, and
    /// its last records not sent yet (`unsent`: TLS 1.3 session tickets,
    /// which then leave with the first write, or when a read finds nothing).
    pub(crate) fn new(
        kernel: KernelConnection<ServerConnectionData>,
        secrets: ExtractedSecrets,
        mut rest: Vec<u8>,
        mut early: Vec<u8>,
        unsent: Vec<u8>,
        limits: RecordLimits,
    ) -> Result<Traffic, Fatal> {
        // The handshake's read buffers: only what they still hold is kept.
        rest.shrink_to_fit();
        early.shrink_to_fit();
        let suite = kernel.negotiated_cipher_suite();
        let tls13 = kernel.protocol_version() == ProtocolVersion::TLSv1_3;
        let (tx_seq, txs) = secrets.tx;
        let (rx_seq, rxs) = secrets.rx;
        let mut enc = encrypter(suite, txs)?;
        if tx_seq > 0 {
            // aws-lc's AES-GCM sealing keys for TLS take the nonce of their
            // first record for sequence number 0 and refuse any later
            // number that is not above the last: the handshake already
            // sealed records (Finished, tickets) with these keys, so the
            // first record is sealed here, empty and never sent.
            let empty = OutboundPlainMessage {
                typ: ContentType::ApplicationData,
                version: ProtocolVersion::TLSv1_2,
                payload: OutboundChunks::Single(&[]),
            };
            enc.encrypt(empty, 0).map_err(|_| Fatal::Keys)?;
        }
        Ok(Traffic {
            enc,
            dec: decrypter(suite, rxs)?,
            kernel,
            suite,
            tls13,
            tx_seq,
            rx_seq,
            rx: rest,
            plain: early,
            plain_at: 0,
            tx: unsent,
            tx_at: 0,
            eof: false,
            failed: None,
            sent_close: false,
            idle_records: 0,
            limits,
            soft_left: SOFT_SPAN,
        })
    }

    fn max_cipher(&self) -> usize {
        if self.tls13 {
            MAX_CIPHER_13
        } else {
            MAX_CIPHER_12
        }
    }

    /// The length of the whole record at the start of `buf`, if it is all
    /// there.
    fn whole(&self, buf: &[u8]) -> Result<Option<usize>, Fatal> {
        let Some(h) = buf.first_chunk::<HEADER>() else {
            return Ok(None);
        };
        let len = usize::from(u16::from_be_bytes([h[3], h[4]]));
        if len > self.max_cipher() {
            return Err(Fatal::Overflow);
        }
        Ok((buf.len() >= HEADER + len).then_some(HEADER + len))
    }

    /// Something for the reader without waiting for the socket.
    pub(crate) fn readable(&self) -> bool {
        self.plain_at < self.plain.len()
            || self.eof
            || self.failed.is_some()
            || !matches!(self.whole(&self.rx), Ok(None))
    }

    /// Opens the record `rec` (header included, whole) in place.
    fn open(&mut self, rec: &mut [u8]) -> Result<Opened, Fatal> {
        let [typ, v0, v1, ..] = *rec else {
            return Err(Fatal::Decode);
        };
        let ver = u16::from_be_bytes([v0, v1]);
        let base = rec.as_ptr() as usize;
        let allowed = if self.tls13 {
            typ == 23
        } else {
            matches!(typ, 21..=23)
        };
        if !allowed {
            return Err(Fatal::Unexpected);
        }
        let msg = InboundOpaqueMessage::new(
            ContentType::from(typ),
            ProtocolVersion::from(ver),
            rec.get_mut(HEADER..).ok_or(Fatal::Decode)?,
        );
        let plain = self
            .dec
            .decrypt(msg, self.rx_seq)
            .map_err(|_| Fatal::BadRecordMac)?;
        self.rx_seq = self.rx_seq.checked_add(1).ok_or(Fatal::Keys)?;
        if plain.payload.len() > MAX_PLAIN {
            return Err(Fatal::Overflow);
        }
        let (ptyp, payload) = (plain.typ, plain.payload);
        match ptyp {
            ContentType::ApplicationData => {
                // The payload is a slice of `rec`: find where.
                let start = payload.as_ptr() as usize - base;
                Ok(Opened::Data(start..start + payload.len()))
            }
            ContentType::Alert => match *payload {
                [_, 0] => Ok(Opened::Close),
                // TLS 1.2 warnings and user_canceled are not fatal.
                [1, _] if !self.tls13 => Ok(Opened::Nothing),
                [_, 90] => Ok(Opened::Nothing),
                [_, d] => Err(Fatal::PeerAlert(d)),
                _ => Err(Fatal::Decode),
            },
            ContentType::Handshake if self.tls13 => {
                let req = match *payload {
                    [24, 0, 0, 1, r @ (0 | 1)] => r == 1,
                    [24, ..] => return Err(Fatal::Decode),
                    _ => return Err(Fatal::Unexpected),
                };
                let (seq, s) = self.kernel.update_rx_secret().map_err(|_| Fatal::Keys)?;
                self.dec = decrypter(self.suite, s)?;
                self.rx_seq = seq;
                if req {
                    // After whatever waits to be sent, in order.
                    let mut out = std::mem::take(&mut self.tx);
                    let r = self.update_tx(&mut out);
                    self.tx = out;
                    r?;
                }
                Ok(Opened::Nothing)
            }
            _ => Err(Fatal::Unexpected),
        }
    }

    /// Seals a key update (update_not_requested) onto `out` and moves to
    /// new keys.
    fn update_tx(&mut self, out: &mut Vec<u8>) -> Result<(), Fatal> {
        self.seal_one(ContentType::Handshake, &[24, 0, 0, 1, 0], out)?;
        let (seq, s) = self.kernel.update_tx_secret().map_err(|_| Fatal::Keys)?;
        self.enc = encrypter(self.suite, s)?;
        self.tx_seq = seq;
        Ok(())
    }

    /// Seals one record of `data` (at most [`MAX_PLAIN`] bytes) onto `out`.
    fn seal_one(&mut self, typ: ContentType, data: &[u8], out: &mut Vec<u8>) -> Result<(), Fatal> {
        let msg = OutboundPlainMessage {
            typ,
            version: ProtocolVersion::TLSv1_2,
            payload: OutboundChunks::Single(data),
        };
        let rec = self
            .enc
            .encrypt(msg, self.tx_seq)
            .map_err(|_| Fatal::Keys)?
            .encode();
        self.tx_seq += 1;
        if out.is_empty() {
            *out = rec;
        } else {
            out.extend_from_slice(&rec);
        }
        Ok(())
    }

    /// Seals `data` as application data onto `out`, refreshing the keys
    /// before their confidentiality limit (TLS 1.3) or failing (TLS 1.2).
    fn seal(&mut self, data: &[u8], out: &mut Vec<u8>) -> Result<(), Fatal> {
        let limit = match self.suite {
            SupportedCipherSuite::Tls13(t) => t.common.confidentiality_limit,
            SupportedCipherSuite::Tls12(t) => t.common.confidentiality_limit,
        };
        let mut rest = data;
        while !rest.is_empty() {
            if self.tx_seq >= limit {
                if !self.tls13 {
                    return Err(Fatal::Keys);
                }
                self.update_tx(out)?;
            }
            let (chunk, after) = rest.split_at(rest.len().min(self.record_size()));
            self.seal_one(ContentType::ApplicationData, chunk, out)?;
            self.soft_left = self.soft_left.saturating_sub(chunk.len() as u32);
            rest = after;
        }
        Ok(())
    }

    /// The most plaintext the next record carries.
    fn record_size(&self) -> usize {
        let cap = |n: u16| if n == 0 { MAX_PLAIN } else { usize::from(n) };
        let hard = cap(self.limits.hard).min(MAX_PLAIN);
        if self.soft_left > 0 {
            hard.min(cap(self.limits.soft))
        } else {
            hard
        }
    }

    /// Ends the session on `e`: the alert goes out if the socket takes it.
    fn fail(&mut self, io: &Conn, e: Fatal) -> io::Error {
        if self.failed.is_none() {
            self.failed = Some(e);
            if let Some(d) = e.alert() {
                let mut out = std::mem::take(&mut self.tx);
                // After what waits to be sent (`tx_at` still counts in it).
                let sealed = self.seal_one(ContentType::Alert, &[2, d], &mut out);
                self.tx = out;
                if sealed.is_ok() {
                    let _ = self.flush(io);
                }
            }
        }
        e.io()
    }

    /// Moves opened bytes into `buf` (and the rest into `plain`); `n` says
    /// how much of `buf` is filled.
    fn deliver(&mut self, data: &[u8], buf: &mut [u8], n: &mut usize) {
        // The client speaks: what answers it starts a new transfer.
        if !data.is_empty() {
            self.soft_left = SOFT_SPAN;
        }
        let now = crate::cut::copy_prefix(buf.get_mut(*n..).unwrap_or_default(), data);
        *n += now;
        if let Some(rest) = data.get(now..).filter(|r| !r.is_empty()) {
            self.plain.extend_from_slice(rest);
        }
    }

    /// Opens every whole record of `data`; returns how many bytes were used.
    fn open_all(
        &mut self,
        io: &Conn,
        data: &mut [u8],
        buf: &mut [u8],
        n: &mut usize,
    ) -> io::Result<usize> {
        let mut at = 0;
        while !self.eof {
            let len = match self.whole(data.get(at..).unwrap_or_default()) {
                Ok(Some(len)) => len,
                Ok(None) => break,
                Err(e) => return Err(self.fail(io, e)),
            };
            let Some(rec) = data.get_mut(at..at + len) else {
                break;
            };
            match self.open(rec) {
                Ok(Opened::Data(r)) if !r.is_empty() => {
                    self.idle_records = 0;
                    let rec = data.get(at..at + len).and_then(|rec| rec.get(r));
                    self.deliver(rec.unwrap_or_default(), buf, n);
                }
                Ok(Opened::Data(_) | Opened::Nothing) => {
                    self.idle_records += 1;
                    if self.idle_records > MAX_IDLE_RECORDS {
                        return Err(self.fail(io, Fatal::Unexpected));
                    }
                }
                Ok(Opened::Close) => self.eof = true,
                Err(e) => return Err(self.fail(io, e)),
            }
            at += len;
        }
        Ok(at)
    }

    /// Reads opened bytes without waiting (0 = end of stream, with or
    /// without close_notify; `WouldBlock` when the socket has nothing).
    pub(crate) fn try_read(&mut self, io: &Conn, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            if self.plain_at < self.plain.len() {
                let plain = self.plain.get(self.plain_at..).unwrap_or_default();
                let now = crate::cut::copy_prefix(buf, plain);
                self.plain_at += now;
                if self.plain_at == self.plain.len() {
                    self.plain = Vec::new();
                    self.plain_at = 0;
                }
                return Ok(now);
            }
            if let Some(e) = self.failed {
                return Err(e.io());
            }
            if self.eof {
                return Ok(0);
            }
            let mut n = 0;
            if self.rx.is_empty() {
                // Records land in the thread's scratch buffer; only the
                // start of one not yet whole is kept.
                SCRATCH_BUF.with(|s| -> io::Result<()> {
                    let mut s = s.borrow_mut();
                    if s.len() < SCRATCH {
                        s.resize(SCRATCH, 0);
                    }
                    let got = self.recv(io, &mut s[..])?;
                    let filled = s.get_mut(..got).unwrap_or_default();
                    let used = self.open_all(io, filled, buf, &mut n)?;
                    self.rx = s.get(used..got).unwrap_or_default().to_vec();
                    Ok(())
                })?;
            } else {
                // A record's start is kept: the rest is read after it, in
                // place (copying what is kept on every read would let a
                // peer that sends a byte at a time cost a record's copy
                // per byte).
                let mut rx = std::mem::take(&mut self.rx);
                let kept = rx.len();
                let got = if matches!(self.whole(&rx), Ok(Some(_))) {
                    0
                } else {
                    rx.resize(kept + HEADER + MAX_CIPHER_12, 0);
                    match self.recv(io, rx.get_mut(kept..).unwrap_or_default()) {
                        Ok(g) => g,
                        Err(e) => {
                            rx.truncate(kept);
                            self.rx = rx;
                            return Err(e);
                        }
                    }
                };
                rx.truncate(kept + got);
                let used = self.open_all(io, &mut rx, buf, &mut n)?;
                rx.drain(..used);
                if !rx.is_empty() {
                    self.rx = rx;
                }
            }
            if self.has_pending() {
                // A key update's answer: best effort, the rest goes later.
                let _ = self.flush(io);
            }
            if n > 0 {
                return Ok(n);
            }
        }
    }

    /// One read from the socket into `into`; its end sets `eof`. A read
    /// that finds nothing sends what waits (best effort).
    fn recv(&mut self, io: &Conn, into: &mut [u8]) -> io::Result<usize> {
        let got = match io.try_recv(into) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock && self.has_pending() => {
                let _ = self.flush(io);
                return Err(e);
            }
            r => r?,
        };
        if got == 0 {
            // The end of the socket, with or without close_notify.
            self.eof = true;
        }
        Ok(got)
    }

    /// Sends sealed bytes waiting for room; `WouldBlock` while some remain.
    pub(crate) fn flush(&mut self, io: &Conn) -> io::Result<()> {
        while let Some(rest) = self.tx.get(self.tx_at..).filter(|r| !r.is_empty()) {
            let n = io.try_send(rest)?;
            self.tx_at += n;
        }
        self.tx = Vec::new();
        self.tx_at = 0;
        Ok(())
    }

    /// Sealed bytes wait for room in the socket.
    pub(crate) fn has_pending(&self) -> bool {
        self.tx_at < self.tx.len()
    }

    /// Seals and sends what it can of `buf` (at most [`WRITE_CHUNK`]); what
    /// the socket does not take waits ([`Traffic::has_pending`]).
    pub(crate) fn try_write(&mut self, io: &Conn, buf: &[u8]) -> io::Result<usize> {
        if let Some(e) = self.failed {
            return Err(e.io());
        }
        // A few waiting bytes (session tickets) leave in the same send as
        // these; more than that go first, and a full socket stops here.
        if self.tx.len() - self.tx_at > COALESCE {
            self.flush(io)?;
        }
        let take = buf.len().min(WRITE_CHUNK);
        let mut out = std::mem::take(&mut self.tx);
        out.drain(..self.tx_at);
        self.tx_at = 0;
        if let Err(e) = self.seal(buf.get(..take).unwrap_or(buf), &mut out) {
            return Err(self.fail(io, e));
        }
        self.tx = out;
        match self.flush(io) {
            Err(e) if e.kind() != io::ErrorKind::WouldBlock => Err(e),
            _ => Ok(take),
        }
    }

    /// Sends close_notify once, best effort.
    pub(crate) fn close_notify(&mut self, io: &Conn) {
        if self.sent_close || self.failed.is_some() {
            return;
        }
        self.sent_close = true;
        let mut out = std::mem::take(&mut self.tx);
        let sealed = self.seal_one(ContentType::Alert, &[1, 0], &mut out);
        self.tx = out;
        if sealed.is_ok() {
            let _ = self.flush(io);
        }
    }
}
