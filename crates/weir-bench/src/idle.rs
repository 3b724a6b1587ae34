//! `idle` mode: opens N connections (spread over several source addresses to
//! pass the 64k-port limit), holds them for a while without sending, and
//! reports how many were established — the seed's long-lived connections
//! (`--tls`: each one completes a TLS handshake first; `--request`: each
//! makes one request first; `--pending`: each sends one request and holds
//! it while a slow server has not answered; `--h2`: the request goes over
//! HTTP/2, by ALPN with `--tls`, by prior knowledge without, and the
//! HTTP/2 connection is then held idle, as a browser holds its own).

use crate::args::{parse_secs, Args};
use crate::tls::Stream;
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tokio::net::TcpSocket;

/// Sends one GET without waiting for its answer.
async fn send_request(c: Stream, path: &str) -> std::io::Result<Stream> {
    use tokio::io::AsyncWriteExt;
    let mut c = c;
    c.write_all(format!("GET {path} HTTP/1.1\r\nHost: bench\r\n\r\n").as_bytes())
        .await?;
    c.flush().await?;
    Ok(c)
}

/// Sends one GET and reads its head (the body must be empty).
async fn one_request(c: Stream, path: &str) -> std::io::Result<Stream> {
    use tokio::io::AsyncReadExt;
    let mut c = send_request(c, path).await?;
    let mut got = Vec::new();
    let mut b = [0u8; 1024];
    while !got.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = tokio::time::timeout(Duration::from_secs(10), c.read(&mut b))
            .await
            .map_err(|_| std::io::Error::from(std::io::ErrorKind::TimedOut))??;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        got.extend_from_slice(&b[..n]);
    }
    Ok(c)
}

/// An HTTP/2 connection held open: its request handle and the task that
/// drives it.
type H2Held = (
    h2::client::SendRequest<bytes::Bytes>,
    tokio::task::JoinHandle<()>,
);

/// Makes one HTTP/2 request on `c` and reads its answer whole; the
/// connection stays open.
async fn h2_request(c: Stream, path: &str) -> std::io::Result<H2Held> {
    let err = |e: h2::Error| std::io::Error::other(e.to_string());
    let (send, conn) = h2::client::handshake(c).await.map_err(err)?;
    let task = tokio::spawn(async move {
        let _ = conn.await;
    });
    let mut send = send.ready().await.map_err(err)?;
    let req = http::Request::get(format!("http://bench{path}"))
        .body(())
        .map_err(std::io::Error::other)?;
    let (resp, _) = send.send_request(req, true).map_err(err)?;
    let answer = tokio::time::timeout(Duration::from_secs(10), resp)
        .await
        .map_err(|_| std::io::Error::from(std::io::ErrorKind::TimedOut))?
        .map_err(err)?;
    let mut body = answer.into_body();
    while let Some(chunk) = body.data().await {
        let chunk = chunk.map_err(err)?;
        let _ = body.flow_control().release_capacity(chunk.len());
    }
    Ok((send, task))
}

pub fn main(a: &mut Args) -> Result<(), String> {
    let n: usize = a.num("-c", 1000)?;
    let hold = a
        .opt("-d")
        .map(|v| parse_secs(&v).ok_or(format!("-d: bad duration '{v}'")))
        .transpose()?
        .unwrap_or(Duration::from_secs(10));
    let sources: Vec<std::net::IpAddr> = match a.opt("--src") {
        Some(l) => l
            .split(',')
            .map(|s| s.parse().map_err(|_| format!("--src: bad address '{s}'")))
            .collect::<Result<_, _>>()?,
        None => Vec::new(),
    };
    // With --request, each connection makes one keep-alive HTTP request
    // (an empty-body answer is expected) before it idles.
    let request = a.opt("--request");
    // With --pending, each connection sends one request and holds it
    // without waiting for the answer (a slow server: seed 004's requests
    // that wait minutes for theirs).
    let pending = a.opt("--pending");
    let h2 = a.flag("--h2");
    if h2 && (request.is_none() || pending.is_some()) {
        return Err("--h2 goes with --request".into());
    }
    let tls = if a.flag("--tls") {
        let cfg = crate::tls::client_config(a.flag("--tls-full"), false)?;
        Some(if h2 {
            let mut c = (*cfg).clone();
            c.alpn_protocols = vec![b"h2".to_vec()];
            std::sync::Arc::new(c)
        } else {
            cfg
        })
    } else {
        None
    };
    let sni = a.opt("--sni").unwrap_or_else(|| "localhost".into());
    let target: SocketAddr = a
        .positional()
        .ok_or("expected <ip:port>: weir-bench idle -c N [-d secs] [--src a,b] ip:port")?
        .parse()
        .map_err(|e| format!("bad target: {e}"))?;
    a.finish()?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    rt.block_on(async move {
        let start = Instant::now();
        let mut conns = Vec::with_capacity(n);
        let mut h2_conns: Vec<H2Held> = Vec::new();
        let mut errors = 0usize;
        for i in 0..n {
            let sock = if target.is_ipv4() {
                TcpSocket::new_v4()
            } else {
                TcpSocket::new_v6()
            };
            let r = async {
                let sock = sock?;
                if !sources.is_empty() {
                    sock.bind(SocketAddr::new(sources[i % sources.len()], 0))?;
                }
                let c = tokio::time::timeout(Duration::from_secs(10), sock.connect(target))
                    .await
                    .map_err(|_| std::io::Error::from(std::io::ErrorKind::TimedOut))??;
                c.set_nodelay(true)?;
                match &tls {
                    Some(cfg) => crate::tls::connect(cfg.clone(), &sni, c).await,
                    None => Ok(Stream::Plain(c)),
                }
            }
            .await;
            if h2 {
                match r {
                    Ok(c) => match h2_request(c, request.as_deref().unwrap_or("/")).await {
                        Ok(held) => h2_conns.push(held),
                        Err(_) => errors += 1,
                    },
                    Err(_) => errors += 1,
                }
                continue;
            }
            let r = match (r, &request, &pending) {
                (Ok(c), Some(path), _) => one_request(c, path).await,
                (Ok(c), None, Some(path)) => send_request(c, path).await,
                (r, _, _) => r,
            };
            match r {
                Ok(c) => conns.push(c),
                Err(_) => errors += 1,
            }
        }
        println!(
            "established {} of {n} connections in {:.2}s ({errors} errors); holding for {:.0}s",
            conns.len() + h2_conns.len(),
            start.elapsed().as_secs_f64(),
            hold.as_secs_f64()
        );
        tokio::time::sleep(hold).await;
        // Count the ones still open: a closed peer makes a read return 0.
        let mut alive = 0;
        for c in &conns {
            let mut b = [0u8; 1];
            let tcp = match c {
                Stream::Plain(t) => t,
                Stream::Tls(t) => t.get_ref().0,
            };
            match tcp.try_read(&mut b) {
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => alive += 1,
                _ => {}
            }
        }
        // An HTTP/2 connection's task ends when the peer closes it.
        alive += h2_conns.iter().filter(|(_, t)| !t.is_finished()).count();
        println!("still open after holding: {alive}");
        Ok(())
    })
}
