//! Byte streams for scripts: `core.tcp()` sockets (`connect`, `send`,
//! `receive`, `close`, `settimeout`, as LuaSocket's) and the client
//! connection of a TCP service.

use mlua::{MultiValue, UserData, UserDataMethods, Value};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// The most a script reads at once from a stream (`receive()` to the end,
/// a line, an HTTP answer): what is past it stays unread.
pub const MAX_READ: usize = 16 << 20;

trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}

/// A connection with what was read from it and not yet taken.
pub struct Stream {
    io: Box<dyn Io>,
    buf: Vec<u8>,
    eof: bool,
    /// Bytes written (a TCP service's `%B`).
    pub written: u64,
}

impl Stream {
    pub fn new<S: AsyncRead + AsyncWrite + Unpin + Send + 'static>(
        s: S,
        pending: Vec<u8>,
    ) -> Stream {
        Stream {
            io: Box::new(s),
            buf: pending,
            eof: false,
            written: 0,
        }
    }

    /// Writes `d`; false when the peer is gone.
    pub async fn write_all(&mut self, d: &[u8]) -> bool {
        let ok = self.io.write_all(d).await.is_ok() && self.io.flush().await.is_ok();
        if ok {
            self.written += d.len() as u64;
        }
        ok
    }

    /// Reads more; false at the end of the stream.
    async fn fill(&mut self) -> bool {
        if self.eof {
            return false;
        }
        let mut chunk = [0u8; 16384];
        match self.io.read(&mut chunk).await {
            Ok(n) if n > 0 => {
                self.buf
                    .extend_from_slice(chunk.get(..n).unwrap_or_default());
                true
            }
            _ => {
                self.eof = true;
                false
            }
        }
    }

    /// Reads more (kept); false at the end of the stream.
    pub async fn fill_more(&mut self) -> bool {
        self.fill().await
    }

    /// What was read and not taken.
    pub fn buffered(&self) -> &[u8] {
        &self.buf
    }

    fn take(&mut self, n: usize) -> Vec<u8> {
        let n = n.min(self.buf.len());
        self.buf.drain(..n).collect()
    }

    /// `n` bytes (at most [`MAX_READ`]), or fewer when the stream ends
    /// first.
    pub async fn read_exact_or_eof(&mut self, n: usize) -> Vec<u8> {
        let n = n.min(MAX_READ);
        while self.buf.len() < n && self.fill().await {}
        self.take(n)
    }

    /// Everything up to the end of the stream (at most [`MAX_READ`]).
    pub async fn read_to_end(&mut self) -> Vec<u8> {
        while self.buf.len() < MAX_READ && self.fill().await {}
        self.take(MAX_READ)
    }

    /// One line with its `\n` (the rest at the end of the stream; a line
    /// longer than [`MAX_READ`] comes in pieces).
    pub async fn read_line(&mut self) -> Vec<u8> {
        loop {
            if let Some(i) = self.buf.iter().position(|&b| b == b'\n') {
                return self.take(i + 1);
            }
            if self.buf.len() >= MAX_READ || !self.fill().await {
                return self.take(MAX_READ);
            }
        }
    }

    pub async fn shutdown(&mut self) {
        let _ = self.io.shutdown().await;
    }
}

/// `core.tcp()`: a socket, unconnected until `connect`.
#[derive(Default, Clone)]
pub struct Socket {
    conn: Arc<tokio::sync::Mutex<Option<Stream>>>,
    timeout: Arc<std::sync::Mutex<Option<Duration>>>,
}

/// The TLS settings of `connect_ssl`: no verification of the server, as
/// haproxy's Lua sockets; made on first use.
static CLIENT_TLS: std::sync::OnceLock<Option<Arc<rustls::ClientConfig>>> =
    std::sync::OnceLock::new();

fn client_tls() -> Option<Arc<rustls::ClientConfig>> {
    CLIENT_TLS
        .get_or_init(|| {
            let g = weir_config::tls::TlsGlobal::default();
            let t = weir_config::tls::ServerTls {
                verify: Some(weir_config::tls::Verify::None),
                ..Default::default()
            };
            let files = crate::tls::store::Store::new(&g);
            crate::tls::client::client_config(&t, &g, &files)
                .ok()
                .map(|c| c.config())
        })
        .clone()
}

impl Socket {
    /// Connects to `host:port`, over TLS with `tls`.
    async fn open(&self, host: String, port: Option<Value>, tls: bool) -> Result<(), String> {
        let port = match port {
            Some(Value::Integer(p)) => p.to_string(),
            Some(Value::String(p)) => p.to_string_lossy(),
            _ => String::new(),
        };
        let target = if port.is_empty() {
            host
        } else {
            format!("{host}:{port}")
        };
        let limit = self.limit();
        let addr = tokio::net::lookup_host(target.as_str())
            .await
            .map_err(|e| e.to_string())?
            .next()
            .ok_or("no address")?;
        let c = match tokio::time::timeout(limit, tokio::net::TcpStream::connect(addr)).await {
            Ok(Ok(c)) => c,
            Ok(Err(e)) => return Err(e.to_string()),
            Err(_) => return Err("timeout".into()),
        };
        let _ = c.set_nodelay(true);
        let conn = crate::conn::Conn::Tcp(c);
        let conn = if tls {
            let cfg = client_tls().ok_or("no TLS settings")?;
            let name = crate::tls::server_name(None, Some(addr));
            crate::tls::connect(conn, cfg, name, Some(limit))
                .await
                .map_err(|e| format!("{e:?}"))?
        } else {
            conn
        };
        let io = crate::conn_io::ConnIo::new(Box::new(conn), Vec::new());
        *self.conn.lock().await = Some(Stream::new(io, Vec::new()));
        Ok(())
    }

    fn limit(&self) -> Duration {
        self.timeout
            .lock()
            .map(|t| *t)
            .unwrap_or(None)
            .unwrap_or(Duration::from_secs(30))
    }
}

fn closed(partial: Option<Vec<u8>>, lua: &mlua::Lua) -> mlua::Result<MultiValue> {
    let mut v = vec![Value::Nil, Value::String(lua.create_string("closed")?)];
    if let Some(p) = partial {
        v.push(Value::String(lua.create_string(p)?));
    }
    Ok(MultiValue::from_iter(v))
}

impl UserData for Socket {
    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        for (name, tls) in [("connect", false), ("connect_ssl", true)] {
            m.add_async_method(
                name,
                move |lua, s, (host, port): (String, Option<Value>)| async move {
                    match s.open(host, port, tls).await {
                        Ok(()) => Ok(MultiValue::from_iter([Value::Integer(1)])),
                        Err(e) => Ok(MultiValue::from_iter([
                            Value::Nil,
                            Value::String(lua.create_string(e)?),
                        ])),
                    }
                },
            );
        }
        m.add_async_method("send", |lua, s, data: mlua::LuaString| async move {
            let d = data.as_bytes().to_vec();
            let limit = s.limit();
            let mut g = s.conn.lock().await;
            let Some(c) = g.as_mut() else {
                return closed(None, &lua);
            };
            // A peer that does not read is given up on, as one that does
            // not answer.
            if tokio::time::timeout(limit, c.write_all(&d)).await == Ok(true) {
                Ok(MultiValue::from_iter([Value::Integer(d.len() as i64)]))
            } else {
                closed(None, &lua)
            }
        });
        m.add_async_method(
            "receive",
            |lua, s, (pattern, prefix): (Option<Value>, Option<mlua::LuaString>)| async move {
                let limit = s.limit();
                let mut g = s.conn.lock().await;
                let Some(c) = g.as_mut() else {
                    return closed(None, &lua);
                };
                let mut got = prefix.map(|p| p.as_bytes().to_vec()).unwrap_or_default();
                let read = async {
                    match &pattern {
                        Some(Value::Integer(n)) => {
                            let want = (*n).max(0) as usize;
                            let b = c.read_exact_or_eof(want).await;
                            let short = b.len() < want;
                            (b, short)
                        }
                        Some(Value::String(p)) if p.as_bytes().starts_with(b"*a") => {
                            let b = c.read_to_end().await;
                            let none = b.is_empty();
                            (b, none)
                        }
                        _ => {
                            let mut b = c.read_line().await;
                            let complete = b.last() == Some(&b'\n');
                            if complete {
                                b.pop();
                                if b.last() == Some(&b'\r') {
                                    b.pop();
                                }
                            }
                            (b, !complete)
                        }
                    }
                };
                let (b, short) = match tokio::time::timeout(limit, read).await {
                    Ok(r) => r,
                    Err(_) => {
                        return Ok(MultiValue::from_iter([
                            Value::Nil,
                            Value::String(lua.create_string("timeout")?),
                        ]))
                    }
                };
                got.extend_from_slice(&b);
                if short {
                    return closed(Some(got), &lua);
                }
                Ok(MultiValue::from_iter([Value::String(
                    lua.create_string(got)?,
                )]))
            },
        );
        m.add_async_method("close", |_, s, ()| async move {
            if let Some(mut c) = s.conn.lock().await.take() {
                c.shutdown().await;
            }
            Ok(1)
        });
        m.add_method("settimeout", |_, s, t: f64| {
            if let Ok(mut g) = s.timeout.lock() {
                *g = Some(Duration::from_secs_f64(t.max(0.0)));
            }
            Ok(1)
        });
    }
}
