//! HTTP/1 bodies moved with splice(2) (`option splice-request`,
//! `splice-response`, `splice-auto`): what a body of known length, or one
//! that ends with the connection, has not yet delivered goes from one plain
//! TCP socket to the other through a pipe, never through weir's buffers.
//! Counted as haproxy's `h1_spliced_bytes_in|out`.

use super::io::{timed, XferError, XferTimeouts};
use super::peer::Peer;
use crate::conn::Conn;
use crate::splice;
use crate::stats::{Counters, Ctr};
use std::io;
use std::os::fd::AsRawFd;
use tokio::io::Interest;

/// Splicing allowed for one direction of an exchange.
#[derive(Clone, Copy)]
pub struct Splicing<'s> {
    pub pipesize: Option<usize>,
    /// The side the bytes come from (its `h1_spliced_bytes_in`) and the
    /// side they go to (its `h1_spliced_bytes_out`).
    pub from: &'s Counters,
    pub to: &'s Counters,
}

/// How far splicing went.
pub enum Spliced {
    /// The body ended (`left` reached 0, or the source closed a body that
    /// ends with the connection): the bytes moved.
    Done(u64),
    /// Splicing is not possible on these sockets: the bytes moved so far,
    /// the rest goes through buffers.
    Unsupported(u64),
}

/// The plain TCP connections under both peers, when both are.
pub fn sockets<'p>(src: Peer<'p>, dst: Peer<'p>) -> Option<(&'p Conn, &'p Conn)> {
    match (src, dst) {
        (Peer::Conn(s), Peer::Conn(d)) if s.is_tcp() && d.is_tcp() => Some((s, d)),
        _ => None,
    }
}

/// Moves `left` bytes (`None`: up to the source's end) from `src` to `dst`.
pub async fn body(
    src: &Conn,
    dst: &Conn,
    left: Option<u64>,
    t: XferTimeouts<'_>,
    sp: Splicing<'_>,
) -> Result<Spliced, XferError> {
    let Ok(mut pipe) = splice::get_pipe(sp.pipesize) else {
        return Ok(Spliced::Unsupported(0));
    };
    let max = sp.pipesize.unwrap_or(splice::DEFAULT_PIPE_SIZE).max(4096);
    let r = pump(src, dst, left, t, sp, &mut pipe, max).await;
    // (A pipe still holding bytes is closed, not kept.)
    splice::put_pipe(pipe);
    r
}

/// [`body`]'s loop: fill the pipe from `src`, empty it into `dst`.
async fn pump(
    src: &Conn,
    dst: &Conn,
    left: Option<u64>,
    t: XferTimeouts<'_>,
    sp: Splicing<'_>,
    pipe: &mut splice::Pipe,
    max: usize,
) -> Result<Spliced, XferError> {
    let mut moved = 0u64;
    loop {
        let want = match left {
            Some(l) if l == moved => return Ok(Spliced::Done(moved)),
            Some(l) => (l - moved).min(max as u64) as usize,
            None => max,
        };
        match timed(t.read, std::future::poll_fn(|cx| src.poll_read_ready(cx))).await {
            Some(Ok(())) => {}
            Some(Err(_)) => return Err(XferError::SrcError),
            None => return Err(XferError::SrcTimeout),
        }
        let (fd, wr) = (src.as_raw_fd(), pipe.wr);
        let n = match src.try_io(Interest::READABLE, || splice::splice(fd, wr, want)) {
            Ok(0) if left.is_none() => return Ok(Spliced::Done(moved)),
            Ok(0) => return Err(XferError::SrcClosed),
            Ok(n) => n,
            Err(e) if retry(&e) => continue,
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                return Ok(Spliced::Unsupported(moved))
            }
            Err(_) => return Err(XferError::SrcError),
        };
        pipe.len = n;
        sp.from.add(Ctr::H1SplicedIn, n as u64);
        drain(pipe, dst, t).await?;
        sp.to.add(Ctr::H1SplicedOut, n as u64);
        moved += n as u64;
    }
}

/// Writes what the pipe holds to `dst`.
async fn drain(pipe: &mut splice::Pipe, dst: &Conn, t: XferTimeouts<'_>) -> Result<(), XferError> {
    while pipe.len > 0 {
        match timed(t.write, std::future::poll_fn(|cx| dst.poll_write_ready(cx))).await {
            Some(Ok(())) => {}
            Some(Err(_)) => return Err(XferError::DstError),
            None => return Err(XferError::DstTimeout),
        }
        let (fd, rd, len) = (dst.as_raw_fd(), pipe.rd, pipe.len);
        match dst.try_io(Interest::WRITABLE, || splice::splice(rd, fd, len)) {
            Ok(n) => {
                pipe.len -= n.min(len);
                t.stamp();
            }
            Err(e) if retry(&e) => {}
            Err(_) => return Err(XferError::DstError),
        }
    }
    Ok(())
}

fn retry(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
    )
}
