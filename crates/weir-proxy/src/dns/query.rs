//! Asking a section's name servers over UDP (one socket per family) or
//! TCP (`tcp@`: one connection each, kept open, messages with their
//! 2-byte length, answers read by a task of their own): queries go out to
//! every name server, up to [`WINDOW`] in flight, and each is matched to
//! its answer by id and question; what does not match is counted and
//! dropped. A try that gets no answer within `timeout retry` is sent
//! again, `resolve_retries` times in all.

use super::wire::{self, Answer, Kind};
use crate::stats::ResolverStats;
use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::OwnedWriteHalf;
use tokio::net::{TcpStream, UdpSocket};
use tokio::sync::mpsc;
use weir_config::Resolvers;

/// Queries in flight at once: a name server's receive buffer holds them
/// (hundreds sent at once were dropped by dnsmasq's).
const WINDOW: usize = 64;

/// An answer and the `<section>/<server>` that gave it.
pub type Got = Option<(Answer, String)>;

pub struct Querier<'a> {
    r: &'a Resolvers,
    stats: &'a ResolverStats,
    v4: Option<UdpSocket>,
    v6: Option<UdpSocket>,
    next_id: u16,
    /// Where datagrams are read, one per family (`accepted_payload_size`
    /// each, kept from query to query).
    bufs: (Vec<u8>, Vec<u8>),
    /// The connections to TCP name servers (none until the first query,
    /// or after one broke), and where their reader tasks hand answers.
    tcp: Vec<(SocketAddr, Option<OwnedWriteHalf>)>,
    from_tcp: (mpsc::Sender<TcpAnswer>, mpsc::Receiver<TcpAnswer>),
    /// The last answer a TCP name server gave.
    tcp_buf: Vec<u8>,
}

/// An answer a TCP name server sent, and its address.
type TcpAnswer = (SocketAddr, Vec<u8>);

/// Where the message just received is.
#[derive(Clone, Copy)]
enum Src {
    V4,
    V6,
    Tcp,
}

impl<'a> Querier<'a> {
    pub async fn new(r: &'a Resolvers, stats: &'a ResolverStats) -> std::io::Result<Querier<'a>> {
        let has = |v4: bool| {
            r.nameservers
                .iter()
                .any(|(_, a)| a.is_ipv4() == v4 && !r.tcp.contains(a))
        };
        let v4 = match has(true) {
            true => Some(UdpSocket::bind("0.0.0.0:0").await?),
            false => None,
        };
        let v6 = match has(false) {
            true => Some(UdpSocket::bind("[::]:0").await?),
            false => None,
        };
        // (Ids need not be secret from a peer that sees the queries; they
        // must not repeat soon, nor start where another process's do.)
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let seed = (std::process::id() as u16) ^ (nanos as u16);
        let size = usize::from(r.payload_size.max(512));
        Ok(Querier {
            r,
            stats,
            v4,
            v6,
            next_id: seed,
            bufs: (vec![0u8; size], vec![0u8; size]),
            tcp: r.tcp.iter().map(|a| (*a, None)).collect(),
            // (Bounded: a name server that sends without end waits on
            // the socket, not in memory.)
            from_tcp: mpsc::channel(WINDOW),
            tcp_buf: Vec::new(),
        })
    }

    /// The first answer to `name`/`kind`; `None` on timeout.
    pub async fn ask(&mut self, name: &str, kind: Kind) -> Got {
        self.ask_many(&[name], kind).await.pop().flatten()
    }

    /// The first answer to each name (same order), every try sending the
    /// names still unanswered.
    pub async fn ask_many(&mut self, names: &[&str], kind: Kind) -> Vec<Got> {
        let mut out: Vec<Got> = vec![None; names.len()];
        for _ in 0..self.r.retries.max(1) {
            let mut todo: VecDeque<usize> = (0..names.len())
                .filter(|i| out.get(*i).is_some_and(Option::is_none))
                .collect();
            if todo.is_empty() {
                break;
            }
            let mut flying: HashMap<u16, usize> = HashMap::new();
            let mut deadline = tokio::time::Instant::now() + self.r.retry;
            loop {
                while flying.len() < WINDOW {
                    let Some(i) = todo.pop_front() else {
                        break;
                    };
                    let name = names.get(i).copied().unwrap_or_default();
                    match self.send(name, kind).await {
                        Some(id) => {
                            flying.insert(id, i);
                        }
                        None => {
                            if let Some(o) = out.get_mut(i) {
                                *o = Some((Answer::Other, String::new()));
                            }
                        }
                    }
                }
                if flying.is_empty() {
                    break;
                }
                let Some((n, from, src)) = self.recv(deadline).await else {
                    break;
                };
                if let Some((id, got)) = self.read(n, from, src, &flying, names, kind) {
                    if let Some(i) = flying.remove(&id) {
                        if let Some(o) = out.get_mut(i) {
                            *o = Some(got);
                        }
                    }
                    deadline = tokio::time::Instant::now() + self.r.retry;
                }
            }
        }
        let timeouts = out.iter().filter(|o| o.is_none()).count() as u64;
        for s in &self.stats.servers {
            s.timeout.fetch_add(timeouts, Ordering::Relaxed);
        }
        out
    }

    /// Sends a query for `name` to every name server: its id.
    async fn send(&mut self, name: &str, kind: Kind) -> Option<u16> {
        self.next_id = self.next_id.wrapping_add(1);
        let id = self.next_id;
        let msg = wire::query(id, name, kind, self.r.payload_size)?;
        for (_, addr) in &self.r.nameservers {
            let c = self.stats.servers.iter().find(|s| s.addr == Some(*addr));
            let sent = match self.r.tcp.contains(addr) {
                true => self.send_tcp(*addr, &msg).await,
                false => {
                    let sock = if addr.is_ipv4() { &self.v4 } else { &self.v6 };
                    let Some(sock) = sock else {
                        continue;
                    };
                    sock.send_to(&msg, addr).await.is_ok()
                }
            };
            match sent {
                true => c.map(|c| c.sent.fetch_add(1, Ordering::Relaxed)),
                false => c.map(|c| c.snd_error.fetch_add(1, Ordering::Relaxed)),
            };
        }
        Some(id)
    }

    /// Writes `msg` with its length to the TCP name server at `addr`,
    /// connecting first when there is no connection (its answers are read
    /// by a task that ends with the connection).
    async fn send_tcp(&mut self, addr: SocketAddr, msg: &[u8]) -> bool {
        let retry = self.r.retry;
        let tx = self.from_tcp.0.clone();
        let Some((_, slot)) = self.tcp.iter_mut().find(|(a, _)| *a == addr) else {
            return false;
        };
        if slot.is_none() {
            let Ok(Ok(c)) = tokio::time::timeout(retry, TcpStream::connect(addr)).await else {
                return false;
            };
            let (mut rd, wr) = c.into_split();
            tokio::spawn(async move {
                loop {
                    let mut len = [0u8; 2];
                    if rd.read_exact(&mut len).await.is_err() {
                        return;
                    }
                    let mut m = vec![0u8; usize::from(u16::from_be_bytes(len))];
                    if rd.read_exact(&mut m).await.is_err() || tx.send((addr, m)).await.is_err() {
                        return;
                    }
                }
            });
            *slot = Some(wr);
        }
        let mut framed = u16::try_from(msg.len()).unwrap_or(0).to_be_bytes().to_vec();
        framed.extend_from_slice(msg);
        // (A name server that does not read is given up after `timeout
        // retry`.)
        let ok = match slot.as_mut() {
            Some(w) => matches!(
                tokio::time::timeout(retry, w.write_all(&framed)).await,
                Ok(Ok(()))
            ),
            None => false,
        };
        if !ok {
            // (The next query connects again.)
            *slot = None;
        }
        ok
    }

    /// The next datagram (its length, sender, family), or `None` at the
    /// deadline.
    async fn recv(&mut self, deadline: tokio::time::Instant) -> Option<(usize, SocketAddr, Src)> {
        let (buf, buf6) = (&mut self.bufs.0, &mut self.bufs.1);
        let (rx, tcp_buf) = (&mut self.from_tcp.1, &mut self.tcp_buf);
        loop {
            let udp = async {
                match (&self.v4, &self.v6) {
                    (Some(a), Some(b)) => tokio::select! {
                        r = a.recv_from(&mut *buf) => r.map(|(n, f)| (n, f, Src::V4)),
                        r = b.recv_from(&mut *buf6) => r.map(|(n, f)| (n, f, Src::V6)),
                    },
                    (Some(a), None) => a.recv_from(&mut *buf).await.map(|(n, f)| (n, f, Src::V4)),
                    (None, Some(b)) => b.recv_from(&mut *buf6).await.map(|(n, f)| (n, f, Src::V6)),
                    (None, None) => std::future::pending().await,
                }
            };
            let got = tokio::time::timeout_at(deadline, async {
                tokio::select! {
                    r = udp => r,
                    Some((from, m)) = rx.recv() => {
                        *tcp_buf = m;
                        Ok((tcp_buf.len(), from, Src::Tcp))
                    }
                }
            })
            .await;
            match got {
                Err(_) => return None,
                Ok(Err(_)) => continue,
                Ok(Ok(x)) => return Some(x),
            }
        }
    }

    /// Reads the datagram just received: the id it answers and what it
    /// says, when it is the answer to a query in flight; counted either way.
    fn read(
        &self,
        n: usize,
        from: SocketAddr,
        src: Src,
        flying: &HashMap<u16, usize>,
        names: &[&str],
        kind: Kind,
    ) -> Option<(u16, (Answer, String))> {
        // (A datagram from an address that is no name server of the
        // section is not even read.)
        let c = self.stats.servers.iter().find(|s| s.addr == Some(from))?;
        let data = match src {
            Src::V4 => &self.bufs.0,
            Src::V6 => &self.bufs.1,
            Src::Tcp => &self.tcp_buf,
        };
        let data = data.get(..n).unwrap_or_default();
        let id = match data {
            [a, b, ..] => u16::from_be_bytes([*a, *b]),
            _ => {
                c.invalid.fetch_add(1, Ordering::Relaxed);
                return None;
            }
        };
        let Some(name) = flying.get(&id).and_then(|i| names.get(*i)) else {
            // (Late, or another id: what does not even decode is invalid.)
            let ctr = match wire::answer(data, id, "x", kind) {
                Err(wire::Invalid::Malformed) => &c.invalid,
                _ => &c.outdated,
            };
            ctr.fetch_add(1, Ordering::Relaxed);
            return None;
        };
        match wire::answer(data, id, name, kind) {
            Ok(a) => {
                let ctr = match &a {
                    Answer::Records { .. } => &c.valid,
                    Answer::NxDomain => &c.nx,
                    Answer::Refused => &c.refused,
                    Answer::Other => &c.other,
                };
                ctr.fetch_add(1, Ordering::Relaxed);
                Some((id, (a, format!("{}/{}", self.stats.name, c.id))))
            }
            Err(wire::Invalid::Truncated) => {
                c.truncated.fetch_add(1, Ordering::Relaxed);
                None
            }
            Err(wire::Invalid::WrongId) => {
                c.outdated.fetch_add(1, Ordering::Relaxed);
                None
            }
            Err(_) => {
                c.invalid.fetch_add(1, Ordering::Relaxed);
                None
            }
        }
    }
}
