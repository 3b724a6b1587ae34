//! Reading heads: the client's request head (with `timeout http-request`
//! and `timeout http-keep-alive`) and the server's response head (interim
//! `1xx` answers passed on).

use super::io::{send, timed_after, Activity, Buf};
use super::peer::Peer;
use crate::h2::upstream::H2Up;
use std::time::Duration;
use tokio::time::Instant;
use weir_config::Proxy;
use weir_proto::h1::{self, H1Error, Limits, RequestHead, ResponseHead};

/// Why reading a request head stopped.
pub(super) enum HeadEnd {
    Head(RequestHead, usize),
    /// The client left (or the keep-alive wait expired) between requests.
    Idle,
    /// `timeout http-request` expired on a partial or missing request: 408.
    Timeout,
    /// The client closed in the middle of a head, or sent nothing: 400.
    Closed,
    /// A read error: nothing can be answered.
    Error,
    Invalid(H1Error),
    /// HTTP/2's preface opened the connection.
    H2Preface,
}

/// HTTP/2's connection preface, as far as its request line.
const H2_PREFACE_LINE: &[u8] = b"PRI * HTTP/2.0\r\n";

/// The timeout for a complete request head, and for the wait before one
/// on a kept-alive connection (HAProxy's fallbacks).
pub(crate) fn head_timeouts(fe: &Proxy) -> (Option<Duration>, Option<Duration>) {
    let t = &fe.timeouts;
    let req = t.http_request.or(t.client);
    let ka = t.http_keep_alive.or(t.http_request).or(t.client);
    (req, ka)
}

#[allow(clippy::too_many_arguments)]
pub(super) async fn read_head(
    client: Peer<'_>,
    buf: &mut Buf,
    size: usize,
    limits: &Limits,
    wait_deadline: Option<Instant>,
    head_timeout: Option<Duration>,
    first: bool,
    first_byte: &mut Option<Instant>,
) -> HeadEnd {
    loop {
        if !buf.is_empty() {
            let at = *first_byte.get_or_insert_with(crate::clock::now);
            match h1::parse_request(buf.bytes(), limits) {
                Ok(Some((req, used))) => {
                    return match buffered_chunks_ok(
                        &req,
                        buf.bytes().get(used..).unwrap_or_default(),
                    ) {
                        Ok(()) => HeadEnd::Head(req, used),
                        Err(e) => HeadEnd::Invalid(e),
                    };
                }
                Ok(None) if buf.is_full() => {
                    return HeadEnd::Invalid(H1Error::HeadersTooLarge);
                }
                Ok(None) => {}
                Err(_) if first && buf.bytes().starts_with(H2_PREFACE_LINE) => {
                    return HeadEnd::H2Preface
                }
                Err(e) => return HeadEnd::Invalid(e),
            }
            let deadline = head_timeout.map(|t| at + t);
            let r = match deadline {
                Some(d) => tokio::time::timeout_at(d, buf.fill(client, size))
                    .await
                    .ok(),
                None => Some(buf.fill(client, size).await),
            };
            match r {
                None => return HeadEnd::Timeout,
                Some(Ok(0)) => return HeadEnd::Closed,
                Some(Ok(_)) => {}
                Some(Err(_)) => return HeadEnd::Error,
            }
        } else {
            let r = match wait_deadline {
                Some(d) => tokio::time::timeout_at(d, buf.fill(client, size))
                    .await
                    .ok(),
                None => Some(buf.fill(client, size).await),
            };
            match r {
                None if first => return HeadEnd::Timeout,
                Some(Ok(0)) if first => return HeadEnd::Closed,
                None | Some(Ok(0)) => return HeadEnd::Idle,
                Some(Ok(_)) => {}
                Some(Err(_)) if first => return HeadEnd::Error,
                Some(Err(_)) => return HeadEnd::Idle,
            }
        }
    }
}

/// Checks the chunked body bytes that came with a head before anything
/// of the request goes to a server: a body already known to be invalid is
/// the client's parse error, answered without a server ever seeing its
/// head.
fn buffered_chunks_ok(req: &RequestHead, rest: &[u8]) -> Result<(), H1Error> {
    if req.framing != h1::Framing::Chunked || rest.is_empty() {
        return Ok(());
    }
    h1::ChunkedDecoder::default().feed(rest).map(|_| ())
}

/// Why no response head came.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RespFail {
    /// The server closed before sending anything.
    Empty,
    /// The server closed in the middle of a head.
    Closed,
    /// Reading failed (the server reset the connection) before a head.
    Reset,
    Timeout,
    Invalid,
    /// Writing an interim response to the client failed.
    ClientGone,
    /// The client closed while it waited (`option abortonclose`).
    ClientClosed,
}

/// Reads the final response head (interim `1xx` responses are passed to
/// the client as they come, their sizes as haproxy counts them added to
/// `interim`). `server_timeout` counts from the last bytes `sent` records
/// (a request body still going up).
#[allow(clippy::too_many_arguments)]
pub(super) async fn read_response(
    client: Peer<'_>,
    sconn: Peer<'_>,
    sbuf: &mut Buf,
    limits: &Limits,
    method: &str,
    server_timeout: Option<Duration>,
    sent: Option<&Activity>,
    fe_px: &Proxy,
    interim: &mut u64,
) -> Result<(ResponseHead, usize), RespFail> {
    if let Peer::H2Up(up) = sconn {
        return h2_response(client, up, server_timeout, sent).await;
    }
    let size = limits.max_head;
    let mut got_any = false;
    loop {
        if !sbuf.is_empty() {
            got_any = true;
            match h1::parse_response(sbuf.bytes(), limits, method) {
                Ok(Some((res, used))) if (100..200).contains(&res.status) && res.status != 101 => {
                    *interim += h1::htx::response(&res);
                    let head = sbuf.bytes().get(..used).unwrap_or_default().to_vec();
                    sbuf.consume(used);
                    if send(client, &head, fe_px.timeouts.client).await.is_err() {
                        return Err(RespFail::ClientGone);
                    }
                    continue;
                }
                Ok(Some(r)) if !client.upgrade_ok(&r.0) => return Err(RespFail::Invalid),
                Ok(Some(r)) => return Ok(r),
                Ok(None) if sbuf.is_full() => return Err(RespFail::Invalid),
                Ok(None) => {}
                Err(_) => return Err(RespFail::Invalid),
            }
        }
        let more = timed_after(server_timeout, sent, sbuf.fill(sconn, size));
        let r = if client.is_h2() {
            // A reset stream wants no answer: the server's is dropped.
            tokio::select! {
                r = more => r,
                _ = client.aborted() => return Err(RespFail::ClientGone),
            }
        } else {
            more.await
        };
        match r {
            None => return Err(RespFail::Timeout),
            Some(Err(_)) if matches!(sconn, Peer::Fcgi(f) if f.bad_head()) => {
                return Err(RespFail::Invalid)
            }
            Some(Err(_)) => return Err(RespFail::Reset),
            Some(Ok(0)) if !got_any => return Err(RespFail::Empty),
            Some(Ok(0)) => return Err(RespFail::Closed),
            Some(Ok(_)) => {}
        }
    }
}

/// The response head of an HTTP/2 server's stream, decoded already (its
/// interim answers are not relayed).
async fn h2_response(
    client: Peer<'_>,
    up: &H2Up,
    server_timeout: Option<Duration>,
    sent: Option<&Activity>,
) -> Result<(ResponseHead, usize), RespFail> {
    let head = timed_after(
        server_timeout,
        sent,
        std::future::poll_fn(|cx| up.poll_response(cx)),
    );
    let r = if client.is_h2() {
        tokio::select! {
            r = head => r,
            _ = client.aborted() => return Err(RespFail::ClientGone),
        }
    } else {
        head.await
    };
    match r {
        None => Err(RespFail::Timeout),
        Some(Ok(res)) => Ok((res, 0)),
        Some(Err(_)) => Err(RespFail::Reset),
    }
}
