//! `AsyncRead`/`AsyncWrite` over a borrowed [`Conn`] (plain or TLS), with
//! the bytes read before the codec took over given first, for the HTTP/2
//! codec; towards a server, it also tells when the server's first frame
//! (its SETTINGS) came ([`Preface`]).

use crate::conn::Conn;
use std::io;
use std::ops::Deref;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::Notify;

/// Whether a server's first frame was read: what it allows (such as
/// RFC 8441's extended CONNECT) is known from then on.
#[derive(Debug, Default)]
pub struct Preface {
    seen: AtomicBool,
    notify: Notify,
}

impl Preface {
    /// Ends the wait: the first frame came, or the connection ended (then
    /// those waiting find the server offers nothing).
    pub fn end(&self) {
        self.seen.store(true, Ordering::Release);
        self.notify.notify_waiters();
    }

    /// Resolves once the server's first frame was read (the codec applies
    /// it in the same turn, before any stream's task runs again), or the
    /// connection ended.
    pub async fn wait(&self) {
        loop {
            let n = self.notify.notified();
            tokio::pin!(n);
            n.as_mut().enable();
            if self.seen.load(Ordering::Acquire) {
                return;
            }
            n.await;
        }
    }
}

/// Counts the bytes of the first frame as they are read.
struct FirstFrame {
    preface: Arc<Preface>,
    /// The frame's 9-byte head, as far as it came.
    head: [u8; 9],
    got: usize,
}

impl FirstFrame {
    /// Takes bytes just read; true once the whole frame came.
    fn saw(&mut self, bytes: &[u8]) -> bool {
        for &b in bytes {
            if let Some(h) = self.head.get_mut(self.got) {
                *h = b;
            }
            self.got += 1;
        }
        let [a, b, c, ..] = self.head;
        let len = usize::from(a) << 16 | usize::from(b) << 8 | usize::from(c);
        let whole = self.got >= 9 && self.got >= 9 + len;
        if whole {
            self.preface.end();
        }
        whole
    }
}

/// A borrowed connection (`&Conn`, client side) or an owned one
/// (`Box<Conn>`, a server connection run by a task of its own).
pub struct ConnIo<C> {
    conn: C,
    initial: Vec<u8>,
    pos: usize,
    first: Option<FirstFrame>,
}

impl<C: Deref<Target = Conn> + Unpin> ConnIo<C> {
    pub fn new(conn: C, initial: Vec<u8>) -> Self {
        ConnIo {
            conn,
            initial,
            pos: 0,
            first: None,
        }
    }

    /// Tells `preface` when the peer's first frame came.
    pub fn watch(mut self, preface: Arc<Preface>) -> Self {
        self.first = Some(FirstFrame {
            preface,
            head: [0; 9],
            got: 0,
        });
        self
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
                    if let Some(f) = me.first.as_mut() {
                        let got = buf.initialize_unfilled().get(..n).unwrap_or_default();
                        if f.saw(got) {
                            me.first = None;
                        }
                    }
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
