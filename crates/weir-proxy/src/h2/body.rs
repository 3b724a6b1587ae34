//! Bodies between HTTP/1.1 framing and HTTP/2 frames for `proto h2`
//! servers (on the h2 crate): [`Out`] sends a request's HTTP/1.1 body bytes
//! (by length, chunked with trailers, or open-ended) as DATA and trailers
//! within the flow-control window; [`In`] turns a response's DATA and
//! trailers into HTTP/1.1 body bytes. The client side ([`super::front`])
//! shares [`Out`]'s framing states.

use super::convert;
use bytes::Bytes;
use h2::{RecvStream, SendStream};
use std::io;
use std::task::{Context, Poll};
use weir_proto::h1::{ChunkEvent, ChunkedDecoder, Framing};

/// Send capacity asked for at a time.
const WANT: usize = 64 * 1024;
/// Longest partial chunk line kept between writes.
const MAX_CARRY: usize = 8192;

pub fn gone() -> io::Error {
    io::ErrorKind::ConnectionReset.into()
}

/// An HTTP/1.1 body on its way out as DATA frames.
pub enum Out {
    /// Bytes left under `content-length`.
    Length(u64),
    Chunked {
        dec: ChunkedDecoder,
        /// The end of the last write that did not make a whole line.
        carry: Vec<u8>,
        trailers: Vec<Vec<u8>>,
    },
    /// Until the exchange ends (no length; tunnels).
    Open,
    Done,
}

impl Out {
    pub fn new(framing: Framing) -> Out {
        match framing {
            Framing::None | Framing::ContentLength(0) => Out::Done,
            Framing::ContentLength(n) => Out::Length(n),
            Framing::Chunked => Out::Chunked {
                dec: ChunkedDecoder::default(),
                carry: Vec::new(),
                trailers: Vec::new(),
            },
            Framing::UntilClose | Framing::Tunnel => Out::Open,
        }
    }

    /// Sends `input` (all of it) as DATA, and ends the stream when the body
    /// ends (with trailers when the chunked body had some).
    pub fn write(&mut self, s: &mut impl DataSink, input: &[u8]) -> io::Result<()> {
        match self {
            Out::Length(left) => {
                let k = (input.len() as u64).min(*left) as usize;
                *left -= k as u64;
                let end = *left == 0;
                s.data(input.get(..k).unwrap_or(input), end)?;
                if end {
                    *self = Out::Done;
                }
            }
            Out::Open => s.data(input, false)?,
            Out::Chunked {
                dec,
                carry,
                trailers,
            } => {
                carry.extend_from_slice(input);
                let (events, used) = dec
                    .feed(carry)
                    .map_err(|_| io::Error::from(io::ErrorKind::InvalidData))?;
                let mut ended = false;
                for ev in events {
                    match ev {
                        ChunkEvent::Data(r) => {
                            let data = carry.get(r).ok_or(io::ErrorKind::InvalidData)?;
                            s.data(data, false)?
                        }
                        ChunkEvent::Trailer(t) => trailers.push(t),
                        ChunkEvent::End => ended = true,
                    }
                }
                carry.drain(..used);
                if ended {
                    if trailers.is_empty() {
                        s.data(&[], true)?;
                    } else {
                        s.trailers(trailers)?;
                    }
                    *self = Out::Done;
                } else if carry.len() > MAX_CARRY {
                    return Err(io::ErrorKind::InvalidData.into());
                }
            }
            Out::Done => {}
        }
        Ok(())
    }
}

/// Where a body's DATA and trailers go: an h2 crate stream, or a stream of
/// weir's own codec.
pub trait DataSink {
    /// Sends body bytes; `end`: the stream ends with them.
    fn data(&mut self, bytes: &[u8], end: bool) -> io::Result<()>;
    /// Sends trailers (chunked trailer lines), which end the stream.
    fn trailers(&mut self, lines: &[Vec<u8>]) -> io::Result<()>;
}

impl DataSink for SendStream<Bytes> {
    fn data(&mut self, bytes: &[u8], end: bool) -> io::Result<()> {
        self.send_data(Bytes::copy_from_slice(bytes), end)
            .map_err(|_| gone())
    }
    fn trailers(&mut self, lines: &[Vec<u8>]) -> io::Result<()> {
        self.send_trailers(convert::trailers(lines))
            .map_err(|_| gone())
    }
}

/// A request body the exchange writes in HTTP/1.1 framing, sent as DATA
/// (and trailers) within the stream's window once its head went.
pub struct Writer {
    pub send: Option<SendStream<Bytes>>,
    pub body: Out,
}

impl Writer {
    pub fn new() -> Writer {
        Writer {
            send: None,
            body: Out::Done,
        }
    }

    /// The head went: the body goes to `send`, framed as `body` says.
    pub fn start(&mut self, send: SendStream<Bytes>, body: Out) {
        self.send = Some(send);
        self.body = body;
    }

    /// Ready once body bytes can go (or there is no body to send).
    pub fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if matches!(self.body, Out::Done) {
            return Poll::Ready(Ok(()));
        }
        let Some(s) = self.send.as_mut() else {
            return Poll::Ready(Err(gone()));
        };
        loop {
            if s.capacity() > 0 {
                return Poll::Ready(Ok(()));
            }
            s.reserve_capacity(WANT);
            match s.poll_capacity(cx) {
                Poll::Ready(Some(Ok(_))) => {}
                Poll::Ready(Some(Err(_)) | None) => return Poll::Ready(Err(gone())),
                Poll::Pending => return Poll::Pending,
            }
        }
    }

    /// Ends a body without a length (a tunnel's side whose source ended).
    pub fn finish(&mut self) -> io::Result<()> {
        if !matches!(self.body, Out::Open) {
            return Ok(());
        }
        self.body = Out::Done;
        self.send.as_mut().ok_or_else(gone)?.data(&[], true)
    }

    /// Takes body bytes up to the window. Bytes after the message are
    /// dropped.
    pub fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if matches!(self.body, Out::Done) {
            return Ok(buf.len());
        }
        let Some(s) = self.send.as_mut() else {
            return Err(gone());
        };
        if s.capacity() == 0 {
            s.reserve_capacity(WANT);
        }
        let k = buf.len().min(s.capacity());
        if k == 0 {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        self.body.write(s, buf.get(..k).unwrap_or(buf))?;
        Ok(k)
    }
}

/// A received body as HTTP/1.1 bytes: as it is, or chunked with the
/// trailers at the end.
pub struct In {
    recv: Option<RecvStream>,
    chunked: bool,
    out: Vec<u8>,
    opos: usize,
    /// The stream was reset or the connection failed.
    pub broken: bool,
}

impl In {
    pub fn new(recv: RecvStream, chunked: bool) -> In {
        In {
            recv: Some(recv),
            chunked,
            out: Vec::new(),
            opos: 0,
            broken: false,
        }
    }

    /// The whole body was received (some bytes may wait to be read).
    pub fn ended(&self) -> bool {
        self.recv.is_none()
    }

    pub fn has_bytes(&self) -> bool {
        self.opos < self.out.len()
    }

    /// Pulls the next frame when no bytes wait; ready when bytes wait, the
    /// body ended, or the stream broke.
    pub fn poll_fill(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        loop {
            if self.has_bytes() || self.broken {
                return Poll::Ready(());
            }
            let Some(recv) = self.recv.as_mut() else {
                return Poll::Ready(());
            };
            match recv.poll_data(cx) {
                Poll::Ready(Some(Ok(data))) => {
                    let _ = recv.flow_control().release_capacity(data.len());
                    if data.is_empty() {
                        continue;
                    }
                    if self.chunked {
                        self.out
                            .extend_from_slice(format!("{:x}\r\n", data.len()).as_bytes());
                        self.out.extend_from_slice(&data);
                        self.out.extend_from_slice(b"\r\n");
                    } else {
                        self.out.extend_from_slice(&data);
                    }
                }
                Poll::Ready(Some(Err(_))) => {
                    self.broken = true;
                    self.recv = None;
                }
                Poll::Ready(None) => match recv.poll_trailers(cx) {
                    Poll::Ready(Ok(t)) => {
                        if self.chunked {
                            self.out = convert::last_chunk(t.as_ref());
                        }
                        self.recv = None;
                    }
                    Poll::Ready(Err(_)) => {
                        self.broken = true;
                        self.recv = None;
                    }
                    Poll::Pending => return Poll::Pending,
                },
                Poll::Pending => return Poll::Pending,
            }
        }
    }

    /// Copies waiting bytes into `buf`.
    pub fn take(&mut self, buf: &mut [u8]) -> usize {
        let n = crate::cut::copy_prefix(buf, self.out.get(self.opos..).unwrap_or_default());
        self.opos += n;
        if self.opos == self.out.len() {
            self.out.clear();
            self.opos = 0;
        }
        n
    }
}
