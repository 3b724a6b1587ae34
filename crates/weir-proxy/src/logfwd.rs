//! `log-forward` sections and `ring` servers at run time: syslog received
//! on UDP (`dgram-bind`) and TCP (`bind`, octet-counted or line-ended,
//! over TLS when the line says `ssl`) is relayed to the section's targets;
//! each ring server gets the ring's lines over TCP (TLS with `ssl`), one
//! per line or octet-counted, and they leave the ring once every server
//! took them.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream, UdpSocket};

use crate::conn::Conn;
use crate::log::ring::Ring;
use crate::state::Shared;
use crate::tls::{BindConfig, ClientTls};

/// The longest message read (HAProxy's syslog limit).
const MAX_MESSAGE: usize = 64 * 1024;
/// The wait before connecting again to a ring server.
const RETRY: Duration = Duration::from_secs(1);
/// The longest a TLS handshake on a `bind … ssl` line may take without
/// `timeout client`.
const HANDSHAKE: Duration = Duration::from_secs(10);
/// Lines sent per write to a ring server.
const BATCH: usize = 64;

/// The sockets of the `log-forward` sections, bound at start.
pub struct Bound {
    udp: Vec<(usize, std::net::UdpSocket)>,
    tcp: Vec<(usize, std::net::TcpListener, Option<Arc<BindConfig>>)>,
}

impl Bound {
    /// Whether a section listens.
    pub fn listens(&self) -> bool {
        !self.udp.is_empty() || !self.tcp.is_empty()
    }
}

/// Binds every `dgram-bind` and `bind` line; errors name the line.
pub fn bind(sh: &Shared) -> Result<Bound, Vec<String>> {
    let mut out = Bound {
        udp: Vec::new(),
        tcp: Vec::new(),
    };
    let mut errors = Vec::new();
    for (i, f) in sh.cfg.log_forwards.iter().enumerate() {
        for (a, loc) in &f.dgram_binds {
            match udp_addr(a).and_then(|a| {
                std::net::UdpSocket::bind(a).map_err(|e| format!("cannot bind [{a}]: {e}"))
            }) {
                Ok(s) => out.udp.push((i, s)),
                Err(e) => errors.push(format!(
                    "[ALERT] parsing [{loc}] : 'dgram-bind' in log-forward '{}' : {e}",
                    f.name
                )),
            }
        }
        for (j, b) in f.binds.iter().enumerate() {
            let tls = cell(&sh.log_tls.binds, i, j);
            for a in &b.addrs {
                match crate::peers::listen_on(a) {
                    Ok(l) => out.tcp.push((i, l, tls.clone())),
                    Err(e) => errors.push(format!(
                        "[ALERT] parsing [{}] : 'bind' in log-forward '{}' : {e}",
                        b.loc, f.name
                    )),
                }
            }
        }
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

/// The TLS of line `j` of section `i`, when it has one.
fn cell<T>(v: &[Vec<Option<Arc<T>>>], i: usize, j: usize) -> Option<Arc<T>> {
    v.get(i)?.get(j)?.clone()
}

fn udp_addr(a: &weir_config::addr::BindAddr) -> Result<SocketAddr, String> {
    use crate::listen::{expand, Expanded};
    match expand(a).map_err(|e| e.to_string())? {
        Expanded::Tcp(v) => v.first().copied().ok_or_else(|| "no address".into()),
        _ => Err("a datagram address is an IPv4 or IPv6 address and a port".into()),
    }
}

/// Starts the relays and the ring senders on the current runtime.
pub fn spawn(sh: &Arc<Shared>, b: Bound) {
    for (i, s) in b.udp {
        if s.set_nonblocking(true).is_ok() {
            if let Ok(s) = UdpSocket::from_std(s) {
                tokio::spawn(datagrams(sh.clone(), i, s));
            }
        }
    }
    for (i, l, tls) in b.tcp {
        if l.set_nonblocking(true).is_ok() {
            if let Ok(l) = TcpListener::from_std(l) {
                tokio::spawn(streams(sh.clone(), i, l, tls));
            }
        }
    }
    for (ri, r) in sh.cfg.rings.iter().enumerate() {
        let Some(ring) = sh.rings.get(ri) else {
            continue;
        };
        for (si, s) in r.servers.iter().enumerate() {
            let tls = cell(&sh.log_tls.servers, ri, si);
            let sender = Sender {
                ring: ring.clone(),
                reader: si,
                addr: s.addr.clone(),
                tls,
                octet_count: s.octet_count,
                connect: r.timeout_connect.unwrap_or(Duration::from_secs(5)),
                write: r.timeout_server.unwrap_or(Duration::from_secs(30)),
            };
            tokio::spawn(sender.run());
        }
    }
}

/// Relays each datagram of a `dgram-bind` socket.
async fn datagrams(sh: Arc<Shared>, fwd: usize, s: UdpSocket) {
    let mut buf = vec![0u8; MAX_MESSAGE];
    loop {
        let Ok(n) = s.recv(&mut buf).await else {
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        if let (Some(l), Some(msg)) = (sh.forwarders.get(fwd), buf.get(..n)) {
            l.relay(msg, &crate::log::syslog_now());
        }
    }
}

/// Accepts the connections of a `bind` line, up to the section's
/// `maxconn` at once.
async fn streams(sh: Arc<Shared>, fwd: usize, l: TcpListener, tls: Option<Arc<BindConfig>>) {
    let max = sh
        .cfg
        .log_forwards
        .get(fwd)
        .map_or(10, |f| f.maxconn.max(1));
    let slots = Arc::new(tokio::sync::Semaphore::new(max as usize));
    loop {
        let Ok(permit) = slots.clone().acquire_owned().await else {
            return;
        };
        let Ok((s, _)) = l.accept().await else {
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        let (sh, tls) = (sh.clone(), tls.clone());
        tokio::spawn(async move {
            stream(&sh, fwd, s, tls.as_deref()).await;
            drop(permit);
        });
    }
}

/// Relays the messages of one connection until it closes, stays silent
/// for `timeout client`, or sends what is not syslog framing.
async fn stream(sh: &Shared, fwd: usize, s: TcpStream, tls: Option<&BindConfig>) {
    let idle = sh.cfg.log_forwards.get(fwd).and_then(|f| f.timeout_client);
    let c = match tls {
        // (A handshake never takes a slot for ever, even without
        // `timeout client`.)
        Some(cfg) => {
            match crate::tls::accept(Conn::Tcp(s), cfg, &[], idle.or(Some(HANDSHAKE))).await {
                Ok(c) => c,
                Err(_) => return,
            }
        }
        None => Conn::Tcp(s),
    };
    let Some(l) = sh.forwarders.get(fwd) else {
        return;
    };
    let mut buf: Vec<u8> = Vec::new();
    let mut chunk = vec![0u8; 16 * 1024];
    loop {
        loop {
            match next_frame(&buf) {
                Frame::Message(start, end, used) => {
                    if let Some(m) = buf.get(start..end).filter(|m| !m.is_empty()) {
                        l.relay(m, &crate::log::syslog_now());
                    }
                    buf.drain(..used);
                }
                Frame::More => break,
                Frame::Bad => return,
            }
        }
        if buf.len() > MAX_MESSAGE {
            return;
        }
        let read = c.read(&mut chunk);
        let n = match idle {
            Some(t) => match tokio::time::timeout(t, read).await {
                Ok(r) => r,
                Err(_) => return,
            },
            None => read.await,
        };
        match n {
            Ok(n) if n > 0 => buf.extend_from_slice(chunk.get(..n).unwrap_or_default()),
            _ => return,
        }
    }
}

/// What the next bytes of a syslog stream are (RFC 6587).
#[derive(Debug, PartialEq, Eq)]
enum Frame {
    /// A message at `start..end`; `used` bytes are done with.
    Message(usize, usize, usize),
    More,
    Bad,
}

/// Octet counting (`<len> <msg>`) when the frame starts with a digit, a
/// line end otherwise.
fn next_frame(b: &[u8]) -> Frame {
    if b.first().is_some_and(u8::is_ascii_digit) {
        let Some(sp) = b.iter().position(|&c| c == b' ') else {
            return if b.len() > 10 {
                Frame::Bad
            } else {
                Frame::More
            };
        };
        let len = std::str::from_utf8(b.get(..sp).unwrap_or_default())
            .ok()
            .and_then(|t| t.parse::<usize>().ok());
        let Some(len) = len.filter(|l| *l <= MAX_MESSAGE) else {
            return Frame::Bad;
        };
        let end = sp + 1 + len;
        return if b.len() >= end {
            Frame::Message(sp + 1, end, end)
        } else {
            Frame::More
        };
    }
    // Empty lines between messages are skipped.
    match b.iter().position(|&c| c == b'\n') {
        Some(0) => Frame::Message(0, 0, 1),
        Some(nl) => {
            let end = if b.get(nl - 1) == Some(&b'\r') {
                nl - 1
            } else {
                nl
            };
            Frame::Message(0, end, nl + 1)
        }
        None => Frame::More,
    }
}

/// Sends a ring's lines to one of its servers.
struct Sender {
    ring: Arc<Ring>,
    reader: usize,
    addr: weir_config::addr::ServerAddr,
    tls: Option<Arc<ClientTls>>,
    octet_count: bool,
    connect: Duration,
    write: Duration,
}

impl Sender {
    async fn run(self) {
        loop {
            if let Some(c) = self.open().await {
                self.feed(&c).await;
            }
            tokio::time::sleep(RETRY).await;
        }
    }

    async fn open(&self) -> Option<Conn> {
        let a = crate::peers::server_addr(&self.addr)?;
        let s = tokio::time::timeout(self.connect, TcpStream::connect(a))
            .await
            .ok()?
            .ok()?;
        let _ = s.set_nodelay(true);
        match &self.tls {
            None => Some(Conn::Tcp(s)),
            Some(t) => {
                let name = crate::tls::server_name(None, Some(a));
                crate::tls::connect(Conn::Tcp(s), t.config(), name, Some(self.connect))
                    .await
                    .ok()
            }
        }
    }

    /// Sends lines as they come until a write fails or stalls.
    async fn feed(&self, c: &Conn) {
        loop {
            let woken = self.ring.wake.notified();
            tokio::pin!(woken);
            woken.as_mut().enable();
            let lines = self.ring.unread(self.reader, BATCH);
            let Some((last, _)) = lines.last() else {
                woken.await;
                continue;
            };
            let last = *last;
            let mut out = Vec::new();
            for (_, l) in &lines {
                if self.octet_count {
                    out.extend_from_slice(format!("{} ", l.len()).as_bytes());
                    out.extend_from_slice(l);
                } else {
                    out.extend_from_slice(l);
                    out.push(b'\n');
                }
            }
            match tokio::time::timeout(self.write, c.send_all(&out)).await {
                Ok(Ok(())) => self.ring.taken(self.reader, last),
                _ => return,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_by_count_or_line() {
        assert_eq!(next_frame(b"5 hello6 "), Frame::Message(2, 7, 7));
        assert_eq!(next_frame(b"5 hel"), Frame::More);
        assert_eq!(next_frame(b"<13>a\r\nb"), Frame::Message(0, 5, 7));
        assert_eq!(next_frame(b"\n<13>"), Frame::Message(0, 0, 1));
        assert_eq!(next_frame(b"<13>a"), Frame::More);
        assert_eq!(next_frame(b"99999999999 x"), Frame::Bad);
        assert_eq!(next_frame(b"123456789012"), Frame::Bad);
    }
}
