//! Asking a section's name servers over UDP (one socket per family):
//! queries go out to every name server, up to [`WINDOW`] in flight, and
//! each is matched to its answer by id and question; what does not match
//! is counted and dropped. A try that gets no answer within `timeout
//! retry` is sent again, `resolve_retries` times in all.

use super::wire::{self, Answer, Kind};
use crate::stats::ResolverStats;
use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use tokio::net::UdpSocket;
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
}

impl<'a> Querier<'a> {
    pub async fn new(r: &'a Resolvers, stats: &'a ResolverStats) -> std::io::Result<Querier<'a>> {
        let has = |v4: bool| r.nameservers.iter().any(|(_, a)| a.is_ipv4() == v4);
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
                let Some((n, from, six)) = self.recv(deadline).await else {
                    break;
                };
                if let Some((id, got)) = self.read(n, from, six, &flying, names, kind) {
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
            let sock = if addr.is_ipv4() { &self.v4 } else { &self.v6 };
            let Some(sock) = sock else {
                continue;
            };
            let c = self.stats.servers.iter().find(|s| s.addr == Some(*addr));
            match sock.send_to(&msg, addr).await {
                Ok(_) => c.map(|c| c.sent.fetch_add(1, Ordering::Relaxed)),
                Err(_) => c.map(|c| c.snd_error.fetch_add(1, Ordering::Relaxed)),
            };
        }
        Some(id)
    }

    /// The next datagram (its length, sender, family), or `None` at the
    /// deadline.
    async fn recv(&mut self, deadline: tokio::time::Instant) -> Option<(usize, SocketAddr, bool)> {
        let (buf, buf6) = (&mut self.bufs.0, &mut self.bufs.1);
        loop {
            let got = tokio::time::timeout_at(deadline, async {
                match (&self.v4, &self.v6) {
                    (Some(a), Some(b)) => tokio::select! {
                        r = a.recv_from(buf) => r.map(|(n, f)| (n, f, false)),
                        r = b.recv_from(buf6) => r.map(|(n, f)| (n, f, true)),
                    },
                    (Some(a), None) => a.recv_from(buf).await.map(|(n, f)| (n, f, false)),
                    (None, Some(b)) => b.recv_from(buf6).await.map(|(n, f)| (n, f, true)),
                    (None, None) => std::future::pending().await,
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
        six: bool,
        flying: &HashMap<u16, usize>,
        names: &[&str],
        kind: Kind,
    ) -> Option<(u16, (Answer, String))> {
        // (A datagram from an address that is no name server of the
        // section is not even read.)
        let c = self.stats.servers.iter().find(|s| s.addr == Some(from))?;
        let data = if six { &self.bufs.1 } else { &self.bufs.0 };
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
