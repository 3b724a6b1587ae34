//! The test backend: an HTTP/1.1 origin (like httpterm) and TCP echo, sink
//! and source modes, and an HTTP/2 origin (`h2server`), on a
//! multi-threaded runtime.
//!
//! HTTP: `/?s=<size>[k|m|g]` answers that many body bytes (0 to gigabytes),
//! `t=<ms>` waits first, `c=1` sends the body chunked; the request headers
//! `sleep: <ms>` and `times: <n>` (seed 004) write the body `n` times, each
//! after a random wait of 0..`sleep` ms. Keep-alive unless the client asks
//! to close or speaks HTTP/1.0 without keep-alive.

use crate::args::Args;
use std::net::SocketAddr;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// What the server answers with.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Mode {
    Http,
    Echo,
    Sink,
    Source,
    /// HTTP/2 with prior knowledge (h2c).
    H2,
}

pub fn main(a: &mut Args) -> Result<(), String> {
    let listen: SocketAddr = a
        .req("--listen")?
        .parse()
        .map_err(|e| format!("--listen: {e}"))?;
    let mode = match a.opt("--mode").as_deref().unwrap_or("http") {
        "http" => Mode::Http,
        "echo" => Mode::Echo,
        "sink" => Mode::Sink,
        "source" => Mode::Source,
        "h2" => Mode::H2,
        other => {
            return Err(format!(
                "unknown --mode '{other}' (http, echo, sink, source, h2)"
            ))
        }
    };
    let threads: usize = a.num("--threads", 1)?;
    a.finish()?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads.max(1))
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start runtime: {e}"))?;
    rt.block_on(async move {
        let l = TcpListener::bind(listen)
            .await
            .map_err(|e| format!("cannot listen on {listen}: {e}"))?;
        println!(
            "listening on {}",
            l.local_addr().map_err(|e| e.to_string())?
        );
        loop {
            let (s, _) = match l.accept().await {
                Ok(x) => x,
                Err(_) => continue,
            };
            let _ = s.set_nodelay(true);
            tokio::spawn(async move {
                let _ = match mode {
                    Mode::Http => http(s).await,
                    Mode::Echo => echo(s).await,
                    Mode::Sink => sink(s).await,
                    Mode::Source => source(s).await,
                    Mode::H2 => crate::h2server::serve(s)
                        .await
                        .map_err(std::io::Error::other),
                };
            });
        }
    })
}

async fn echo(mut s: TcpStream) -> std::io::Result<()> {
    let (mut r, mut w) = s.split();
    tokio::io::copy(&mut r, &mut w).await?;
    w.shutdown().await
}

async fn sink(mut s: TcpStream) -> std::io::Result<()> {
    let mut buf = vec![0u8; 65536];
    while s.read(&mut buf).await? > 0 {}
    Ok(())
}

async fn source(mut s: TcpStream) -> std::io::Result<()> {
    let buf = vec![b'x'; 65536];
    loop {
        s.write_all(&buf).await?;
    }
}

/// Parses a size with an optional k/m/g suffix (powers of 1024).
pub fn parse_size(v: &str) -> Option<u64> {
    let (num, mul) = match v.as_bytes().last()? {
        b'k' | b'K' => (&v[..v.len() - 1], 1u64 << 10),
        b'm' | b'M' => (&v[..v.len() - 1], 1 << 20),
        b'g' | b'G' => (&v[..v.len() - 1], 1 << 30),
        _ => (v, 1),
    };
    num.parse::<u64>().ok()?.checked_mul(mul)
}

/// Query parameter `name` of a request target.
pub fn query_param<'a>(target: &'a str, name: &str) -> Option<&'a str> {
    let q = target.split_once('?')?.1;
    q.split('&').find_map(|kv| {
        let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
        (k == name).then_some(v)
    })
}

/// What one request asks of the server.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Ask {
    pub size: u64,
    pub delay_ms: u64,
    pub chunked: bool,
    pub sleep_ms: u64,
    pub times: u64,
    pub close: bool,
    pub body_len: usize,
}

/// Reads a request head (`head` ends with CRLFCRLF) into an [`Ask`].
pub fn parse_request(head: &str) -> Ask {
    let mut lines = head.split("\r\n");
    let line = lines.next().unwrap_or("");
    let mut parts = line.split(' ');
    let _method = parts.next();
    let target = parts.next().unwrap_or("/");
    let http10 = parts.next() == Some("HTTP/1.0");
    let mut ask = Ask {
        size: query_param(target, "s").and_then(parse_size).unwrap_or(0),
        delay_ms: query_param(target, "t")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0),
        chunked: query_param(target, "c") == Some("1"),
        times: 1,
        close: http10,
        ..Ask::default()
    };
    for l in lines {
        let Some((name, value)) = l.split_once(':') else {
            continue;
        };
        let value = value.trim();
        match name.trim().to_ascii_lowercase().as_str() {
            "connection" => {
                let v = value.to_ascii_lowercase();
                if v.contains("close") {
                    ask.close = true;
                } else if v.contains("keep-alive") {
                    ask.close = false;
                }
            }
            "content-length" => ask.body_len = value.parse().unwrap_or(0),
            "sleep" => ask.sleep_ms = value.parse().unwrap_or(0),
            "times" => ask.times = value.parse::<u64>().unwrap_or(1).max(1),
            _ => {}
        }
    }
    ask
}

fn jitter(max_ms: u64, seed: &mut u64) -> u64 {
    if max_ms == 0 {
        return 0;
    }
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed % max_ms
}

async fn http(mut s: TcpStream) -> std::io::Result<()> {
    let mut buf: Vec<u8> = Vec::with_capacity(4096);
    let mut tmp = vec![0u8; 16384];
    let chunk = vec![b'.'; 65536];
    let mut seed = 0x9E37_79B9_7F4A_7C15u64 ^ (s.peer_addr().map(|a| a.port()).unwrap_or(1) as u64);
    loop {
        let head_end = loop {
            if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break p + 4;
            }
            if buf.len() > 65536 {
                s.write_all(b"HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Length: 0\r\nConnection: close\r\n\r\n").await?;
                return Ok(());
            }
            let n = s.read(&mut tmp).await?;
            if n == 0 {
                return Ok(());
            }
            buf.extend_from_slice(&tmp[..n]);
        };
        let ask = parse_request(&String::from_utf8_lossy(&buf[..head_end]));
        buf.drain(..head_end);
        // Discard a request body.
        while buf.len() < ask.body_len {
            let n = s.read(&mut tmp).await?;
            if n == 0 {
                return Ok(());
            }
            buf.extend_from_slice(&tmp[..n]);
        }
        buf.drain(..ask.body_len);
        if ask.delay_ms > 0 {
            tokio::time::sleep(std::time::Duration::from_millis(ask.delay_ms)).await;
        }
        let conn = if ask.close { "close" } else { "keep-alive" };
        let framing = if ask.chunked {
            "Transfer-Encoding: chunked".to_string()
        } else {
            format!("Content-Length: {}", ask.size.saturating_mul(ask.times))
        };
        let head = format!("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n{framing}\r\nConnection: {conn}\r\n\r\n");
        let mut out: Vec<u8> = head.into_bytes();
        for _ in 0..ask.times {
            let wait = jitter(ask.sleep_ms, &mut seed);
            if wait > 0 {
                s.write_all(&out).await?;
                out.clear();
                tokio::time::sleep(std::time::Duration::from_millis(wait)).await;
            }
            let mut left = ask.size;
            while left > 0 {
                let n = left.min(chunk.len() as u64) as usize;
                if ask.chunked {
                    out.extend_from_slice(format!("{n:x}\r\n").as_bytes());
                }
                out.extend_from_slice(&chunk[..n]);
                if ask.chunked {
                    out.extend_from_slice(b"\r\n");
                }
                if out.len() >= 65536 {
                    s.write_all(&out).await?;
                    out.clear();
                }
                left -= n as u64;
            }
        }
        if ask.chunked {
            out.extend_from_slice(b"0\r\n\r\n");
        }
        if !out.is_empty() {
            s.write_all(&out).await?;
        }
        if ask.close {
            return s.shutdown().await;
        }
    }
}
