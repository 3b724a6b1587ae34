//! `AsyncRead`/`AsyncWrite` over a borrowed [`Conn`] (plain or TLS), with
//! the bytes read before the codec took over given first, for the HTTP/2
//! codec.

use crate::conn::Conn;
use std::io;
use std::ops::Deref;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// A borrowed connection (`&Conn`, client side) or an owned one
/// (`Box<Conn>`, a server connection run by a task of its own).
pub struct ConnIo<C> {
    conn: C,
    initial: Vec<u8>,
    pos: usize,
}

impl<C: Deref<Target = Conn> + Unpin> ConnIo<C> {
    pub fn new(conn: C, initial: Vec<u8>) -> Self {
        ConnIo {
            conn,
            initial,
            pos: 0,
        }
    }
}

fn retry(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
    )
}

impl<C: Deref<Target = Conn> + Unpin> AsyncRead for ConnIo<C> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let me = self.get_mut();
        if me.pos < me.initial.len() {
            let rest = me.initial.get(me.pos..).unwrap_or_default();
            let n = buf.remaining().min(rest.len());
            buf.put_slice(rest.get(..n).unwrap_or_default());
            me.pos += n;
            if me.pos == me.initial.len() {
                me.initial = Vec::new();
                me.pos = 0;
            }
            return Poll::Ready(Ok(()));
        }
        loop {
            ready!(me.conn.poll_read_ready(cx))?;
            match me.conn.try_recv(buf.initialize_unfilled()) {
                Ok(n) => {
                    buf.advance(n);
                    return Poll::Ready(Ok(()));
                }
                Err(e) if retry(&e) => {}
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
    }
}

impl<C: Deref<Target = Conn> + Unpin> AsyncWrite for ConnIo<C> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        loop {
            ready!(self.conn.poll_write_ready(cx))?;
            match self.conn.try_send(buf) {
                Ok(n) => return Poll::Ready(Ok(n)),
                Err(e) if retry(&e) => {}
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.conn.has_pending() {
            ready!(self.conn.poll_write_ready(cx))?;
            match self.conn.try_flush() {
                Ok(()) => {}
                Err(e) if retry(&e) => {}
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.as_mut().poll_flush(cx))?;
        Poll::Ready(self.conn.shutdown_write())
    }
}
