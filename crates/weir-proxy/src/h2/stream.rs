//! One HTTP/2 stream from a client seen as an HTTP/1.1 connection, so that
//! the exchange, its rules and its logs run unchanged on top: reads give
//! the request body in HTTP/1.1 framing, writes take the HTTP/1.1 response
//! the exchange produces and send it as HEADERS, DATA and trailers within
//! the stream's flow-control window.

use super::body::{gone, In, Out, Started, Writer};
use super::convert;
use bytes::Bytes;
use h2::server::SendResponse;
use h2::{Reason, RecvStream};
use std::io;
use std::sync::{Mutex, MutexGuard};
use std::task::{Context, Poll};
use weir_proto::h1::{self, Limits, ResponseHead};
use weir_rules::TlsInfo;

struct St {
    /// The request body.
    req: In,
    respond: Option<SendResponse<Bytes>>,
    method: http::Method,
    limits: Limits,
    /// The response.
    res: Writer,
    reset_on_close: bool,
}

/// A client's HTTP/2 stream behind the [`crate::conn::Conn`] interface.
pub struct H2Stream {
    st: Mutex<St>,
    tls: Option<TlsInfo>,
}

impl std::fmt::Debug for H2Stream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("H2Stream")
    }
}

impl H2Stream {
    /// `chunked`: the request body is re-framed as chunks (it has no
    /// `content-length`).
    pub fn new(
        recv: RecvStream,
        respond: SendResponse<Bytes>,
        method: http::Method,
        chunked: bool,
        limits: Limits,
        tls: Option<TlsInfo>,
    ) -> H2Stream {
        H2Stream {
            st: Mutex::new(St {
                req: In::new(recv, chunked),
                respond: Some(respond),
                method,
                limits,
                res: Writer::new(),
                reset_on_close: false,
            }),
            tls,
        }
    }

    fn lock(&self) -> MutexGuard<'_, St> {
        self.st.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn tls(&self) -> Option<&TlsInfo> {
        self.tls.as_ref()
    }

    /// Ready when request bytes wait, the request ended and the response is
    /// complete (end of stream), or the client reset the stream.
    pub fn poll_read_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let mut guard = self.lock();
        let st = &mut *guard;
        if st.req.poll_fill(cx).is_pending() {
            return Poll::Pending;
        }
        if st.req.has_bytes() || st.req.broken || st.res.done() {
            return Poll::Ready(Ok(()));
        }
        // The request is complete: only a reset can come.
        drop(guard);
        self.poll_reset(cx).map(Ok)
    }

    pub fn try_read(&self, buf: &mut [u8]) -> io::Result<usize> {
        let mut st = self.lock();
        if st.req.has_bytes() {
            return Ok(st.req.take(buf));
        }
        if st.req.broken {
            return Err(gone());
        }
        if st.req.ended() && st.res.done() {
            return Ok(0);
        }
        Err(io::ErrorKind::WouldBlock.into())
    }

    pub fn poll_write_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.lock().res.poll_ready(cx)
    }

    /// Takes response bytes: all of a head, body bytes up to the window.
    pub fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
        let mut guard = self.lock();
        let st = &mut *guard;
        let (respond, method, limits) = (&mut st.respond, &st.method, &st.limits);
        st.res.write(buf, |acc| {
            respond_head(respond, method.as_str(), limits, acc)
        })
    }

    /// Sends a final response head the exchange already parsed, with the
    /// first body bytes (no second parse of the head).
    pub fn respond(&self, res: &ResponseHead, body: &[u8]) -> io::Result<()> {
        let mut guard = self.lock();
        let st = &mut *guard;
        let respond = &mut st.respond;
        st.res
            .write(body, |_| {
                let r = respond.as_mut().ok_or_else(gone)?;
                let out = Out::new(res.framing);
                let end = matches!(out, Out::Done);
                let send = r
                    .send_response(convert::response(res), end)
                    .map_err(|_| gone())?;
                *respond = None;
                Ok(Some((send, out, 0)))
            })
            .map(|_| ())
    }

    /// Ends a response that had no length (`shutdown_write`).
    pub fn shutdown_write(&self) -> io::Result<()> {
        self.lock().res.finish()
    }

    /// Ready once the client reset the stream (or the connection failed).
    pub fn poll_reset(&self, cx: &mut Context<'_>) -> Poll<()> {
        let mut guard = self.lock();
        let st = &mut *guard;
        if st.req.broken {
            return Poll::Ready(());
        }
        let r = match (st.res.send.as_mut(), st.respond.as_mut()) {
            (Some(s), _) => s.poll_reset(cx),
            (None, Some(r)) => r.poll_reset(cx),
            (None, None) => return Poll::Pending,
        };
        match r {
            Poll::Ready(_) => {
                st.req.broken = true;
                Poll::Ready(())
            }
            Poll::Pending => Poll::Pending,
        }
    }

    pub fn set_reset_on_close(&self) {
        self.lock().reset_on_close = true;
    }
}

/// Sends the response head once `acc` holds all of it (interim responses
/// go as such).
fn respond_head(
    respond: &mut Option<SendResponse<Bytes>>,
    method: &str,
    limits: &Limits,
    acc: &mut Vec<u8>,
) -> io::Result<Option<Started>> {
    let bad = || io::Error::from(io::ErrorKind::InvalidData);
    loop {
        let (res, used) = match h1::parse_response(acc, limits, method) {
            Ok(Some(r)) => r,
            Ok(None) if acc.len() > limits.max_head => return Err(bad()),
            Ok(None) => return Ok(None),
            Err(_) => return Err(bad()),
        };
        let r = respond.as_mut().ok_or_else(gone)?;
        if (100..200).contains(&res.status) && res.status != 101 {
            let _ = r.send_informational(convert::response(&res));
            acc.drain(..used);
            continue;
        }
        let body = Out::new(res.framing);
        let end = matches!(body, Out::Done);
        let send = r
            .send_response(convert::response(&res), end)
            .map_err(|_| gone())?;
        *respond = None;
        return Ok(Some((send, body, used)));
    }
}

impl Drop for H2Stream {
    /// A response left unfinished resets the stream (an exchange that
    /// ended without a length ends it normally).
    fn drop(&mut self) {
        let st = self.st.get_mut().unwrap_or_else(|e| e.into_inner());
        let reset = st.reset_on_close;
        let open = matches!(st.res.body, Out::Open);
        let complete = matches!(st.res.body, Out::Done);
        if open && !reset {
            let _ = st.res.finish();
        } else if let Some(s) = st.res.send.as_mut() {
            if !complete || reset {
                s.send_reset(Reason::CANCEL);
            }
        } else if let Some(r) = st.respond.as_mut() {
            r.send_reset(Reason::INTERNAL_ERROR);
        }
    }
}
