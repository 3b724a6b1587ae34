//! weir-bench: the test backend used by weir's demo, tests and benchmarks.
//! `weir-bench serve --listen ADDR --mode http|echo|sink|source`.
//! The HTTP mode answers `/?s=<size>` with that many body bytes and waits
//! `t=<ms>` first; keep-alive unless the client says `Connection: close`.

#![forbid(unsafe_code)]

use std::net::SocketAddr;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const USAGE: &str =
    "usage: weir-bench serve --listen <ip:port> [--mode http|echo|sink|source] [--threads N]\n";

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Http,
    Echo,
    Sink,
    Source,
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) != Some("serve") {
        eprint!("{USAGE}");
        std::process::exit(2);
    }
    let mut listen: Option<SocketAddr> = None;
    let mut mode = Mode::Http;
    let mut threads = 1usize;
    let mut i = 1;
    while i < args.len() {
        let v = args.get(i + 1).cloned().unwrap_or_default();
        match args[i].as_str() {
            "--listen" => listen = v.parse().ok(),
            "--mode" => {
                mode = match v.as_str() {
                    "http" => Mode::Http,
                    "echo" => Mode::Echo,
                    "sink" => Mode::Sink,
                    "source" => Mode::Source,
                    other => {
                        eprintln!("unknown mode '{other}'\n{USAGE}");
                        std::process::exit(2);
                    }
                }
            }
            "--threads" => threads = v.parse().unwrap_or(1),
            other => {
                eprintln!("unknown option '{other}'\n{USAGE}");
                std::process::exit(2);
            }
        }
        i += 2;
    }
    let Some(listen) = listen else {
        eprintln!("--listen <ip:port> is required\n{USAGE}");
        std::process::exit(2);
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads.max(1))
        .enable_all()
        .build();
    let rt = match rt {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("cannot start runtime: {e}");
            std::process::exit(1);
        }
    };
    let r: std::io::Result<()> = rt.block_on(async move {
        let l = TcpListener::bind(listen).await?;
        println!("listening on {}", l.local_addr()?);
        loop {
            let (s, _) = l.accept().await?;
            let _ = s.set_nodelay(true);
            tokio::spawn(async move {
                let _ = match mode {
                    Mode::Http => http(s).await,
                    Mode::Echo => echo(s).await,
                    Mode::Sink => sink(s).await,
                    Mode::Source => source(s).await,
                };
            });
        }
    });
    if let Err(e) = r {
        eprintln!("weir-bench: {e}");
        std::process::exit(1);
    }
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

fn query_param(target: &str, name: &str) -> Option<u64> {
    let q = target.split_once('?')?.1;
    q.split('&').find_map(|kv| {
        let (k, v) = kv.split_once('=')?;
        (k == name).then(|| v.parse().ok()).flatten()
    })
}

async fn http(mut s: TcpStream) -> std::io::Result<()> {
    let mut buf = Vec::with_capacity(4096);
    let mut tmp = [0u8; 4096];
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
        let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
        let mut lines = head.split("\r\n");
        let target = lines
            .next()
            .and_then(|l| l.split(' ').nth(1))
            .unwrap_or("/")
            .to_string();
        let mut close = head.starts_with("GET / HTTP/1.0") || head.contains(" HTTP/1.0\r\n");
        let mut body_len = 0usize;
        for l in lines {
            let lower = l.to_ascii_lowercase();
            if lower.starts_with("connection:") {
                close = lower.contains("close");
            } else if let Some(v) = lower.strip_prefix("content-length:") {
                body_len = v.trim().parse().unwrap_or(0);
            }
        }
        buf.drain(..head_end);
        while buf.len() < body_len {
            let n = s.read(&mut tmp).await?;
            if n == 0 {
                return Ok(());
            }
            buf.extend_from_slice(&tmp[..n]);
        }
        buf.drain(..body_len);
        if let Some(ms) = query_param(&target, "t") {
            tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
        }
        let size = query_param(&target, "s").unwrap_or(0);
        let conn = if close { "close" } else { "keep-alive" };
        let hdr = format!("HTTP/1.1 200 OK\r\nContent-Length: {size}\r\nContent-Type: text/plain\r\nConnection: {conn}\r\n\r\n");
        s.write_all(hdr.as_bytes()).await?;
        let chunk = vec![b'.'; size.min(65536) as usize];
        let mut left = size;
        while left > 0 {
            let n = left.min(chunk.len() as u64) as usize;
            s.write_all(&chunk[..n]).await?;
            left -= n as u64;
        }
        if close {
            return s.shutdown().await;
        }
    }
}
