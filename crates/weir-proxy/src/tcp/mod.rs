//! A connected `mode tcp` session: forwarding until it ends, then its log
//! line; in between, sleeping while both sides are idle. A session idle
//! for a while (200 ms at first, as HTTP clients) gives up its task and
//! both sockets' registrations in the event loop and waits as one slot of
//! its thread's lot ([`crate::http::lot`]), both sockets watched there; a
//! byte or a close on either side, its inactivity timeout, a kill or a
//! stop wakes it, and a new task forwards on from where it stopped, with
//! its byte counts and timeouts as if it had never slept.

pub mod entry;
pub mod rules;

use crate::conn::Conn;
use crate::forward::{Duplex, End, FwdOptions, FwdTimeouts, Progress};
use crate::http::lot;
use crate::log::LogRecord;
use crate::session::Accepted;
use crate::state::FrontendId;
use crate::state::ServerId;
use crate::state::{BackendRt, Shared};
use crate::term::{Cause, State, Term};
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// What the log line of a connected session takes from its start (the
/// connect phase, the counters at connect time).
#[derive(Clone)]
pub(crate) struct Link {
    pub be: Arc<BackendRt>,
    pub srv: ServerId,
    pub started: Instant,
    pub accept_wall: Duration,
    pub tw: i64,
    pub tc: i64,
    pub retries: u32,
    pub redispatched: bool,
    pub srv_retries: u32,
    pub failed_srv: Option<ServerId>,
    pub srv_queue: u32,
    pub be_queue: u32,
    pub server_addr: Option<SocketAddr>,
    pub source_addr: Option<SocketAddr>,
    pub actconn: u32,
    pub feconn: u32,
    pub beconn: u32,
    pub srvconn: u32,
    /// The stick counters the session tracks, until it ends.
    pub track: Option<Box<crate::state::tables::Trackers>>,
    /// What the log line takes from the connect phase's rules: its
    /// `%[…]` samples and `%ID` (boxed, and only when there are any: every
    /// forwarding session carries a `Link`).
    pub logged: Option<Box<Logged>>,
}

/// A `mode tcp` session's log samples and unique id, taken once connected.
#[derive(Clone, Default)]
pub(crate) struct Logged {
    pub samples: Vec<String>,
    pub unique_id: Option<String>,
}

/// How forwarding starts: afresh, with the client bytes read while
/// connecting (and whether the client already closed), or after a sleep.
pub(crate) enum Start {
    New {
        initial: Vec<u8>,
        client_eof: bool,
        /// What `tcp-response content` inspection read and sent first.
        early: Early,
    },
    Woken(Woken),
}

/// The exchange `tcp-response content` inspection had before forwarding:
/// the client's bytes it sent, the server's it read.
#[derive(Debug, Default)]
pub(crate) struct Early {
    pub sent: u64,
    pub reply: Vec<u8>,
    pub server_eof: bool,
    /// The client's end was read (before or during the inspection).
    pub client_eof: bool,
}

/// A session that slept: where it stood, and what its sleeps were.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Woken {
    pub progress: Progress,
    /// Times a byte woke it (each doubles the idle time before the next
    /// sleep, as for HTTP clients).
    pub naps: u8,
    /// False once the lot refused it: it stays awake.
    pub may_sleep: bool,
    /// The server's kill count when it went to sleep: a kill since ends it
    /// as `shutdown sessions` would have.
    pub kills: u32,
}

/// What a sleeping `mode tcp` session keeps.
pub(crate) struct Sleeper {
    pub client: lot::Plain,
    pub server: lot::Plain,
    pub fe_idx: FrontendId,
    pub acc: Accepted,
    pub link: Link,
    pub woken: Woken,
}

impl Sleeper {
    /// When its inactivity timeout ends it.
    pub fn deadline(&self, sh: &Shared) -> Option<Instant> {
        let fe_px = sh.proxy(sh.frontend(self.fe_idx).proxy);
        let be_px = sh.proxy(self.link.be.proxy);
        let t = FwdTimeouts::between(fe_px, be_px);
        crate::forward::deadline(&t, &self.woken.progress, false, (true, true)).map(|(d, _)| d)
    }

    /// Whether its server's sessions were killed since it fell asleep.
    pub fn server_killed(&self) -> bool {
        self.link
            .be
            .server(self.link.srv)
            .kills
            .load(Ordering::Relaxed)
            != self.woken.kills
    }
}

/// The forwarding options between a frontend and a backend.
fn options(sh: &Shared, fe_px: &weir_config::Proxy, be_px: &weir_config::Proxy) -> FwdOptions {
    let splice_ok = !sh.nosplice;
    let any = |f: fn(&weir_config::ProxyOptions) -> bool| f(&fe_px.options) || f(&be_px.options);
    FwdOptions {
        bufsize: sh.bufsize,
        splice_request: splice_ok && (any(|o| o.splice_request) || any(|o| o.splice_auto)),
        splice_response: splice_ok && (any(|o| o.splice_response) || any(|o| o.splice_auto)),
        pipesize: sh.pipesize,
    }
}

/// Forwards between `client` and `server` until the session ends (then
/// logs it and releases its counters) or goes to sleep.
#[allow(clippy::manual_async_fn)] // see the comment inside
pub(crate) fn forward<'a>(
    sh: &'a Arc<Shared>,
    fe_idx: FrontendId,
    client: Conn,
    server: Conn,
    acc: &'a Accepted,
    link: Link,
    start: Start,
) -> impl std::future::Future<Output = ()> + 'a {
    // Not an `async fn`: its arguments would be stored twice in the task.
    async move {
        let mut link = link;
        let fe = sh.frontend(fe_idx);
        let fe_px = sh.proxy(fe.proxy);
        let be = link.be.clone();
        let be_px = sh.proxy(be.proxy);
        let srv = be.server(link.srv);
        let t = FwdTimeouts::between(fe_px, be_px);
        let opts = options(sh, fe_px, be_px);
        let (naps, may_sleep) = match &start {
            Start::Woken(w) => (w.naps, w.may_sleep),
            Start::New { .. } => (0, true),
        };
        // (A session whose read timeouts are kept apart stays awake: a
        // sleeper has one deadline.)
        let can_sleep = may_sleep
            && !t.reads_apart()
            && lot::available()
            && !*sh.stopping.borrow()
            && lot::Plain::can_take(&client)
            && lot::Plain::can_take(&server);
        let nap = can_sleep.then(|| lot::sleep_after(naps));
        let killed_asleep = match &start {
            Start::Woken(w) if crate::sessions::is_killed(acc.reg) => {
                Some((Term::new(Cause::Killed, State::Data), w.progress))
            }
            Start::Woken(w) if srv.kills.load(Ordering::Relaxed) != w.kills => {
                Some((Term::new(Cause::Down, State::Data), w.progress))
            }
            _ => None,
        };
        let (term, progress) = match killed_asleep {
            Some((term, p)) => {
                client.set_reset_on_close();
                server.set_reset_on_close();
                (term, p)
            }
            None => {
                let kills = srv.kills.load(Ordering::Relaxed);
                // A block: the duplex borrows both connections, which a
                // sleep takes.
                let (ended, progress) = {
                    let duplex: Duplex<'_> = match start {
                        Start::New {
                            initial,
                            client_eof,
                            early,
                        } => {
                            let eof = client_eof || early.client_eof;
                            Duplex::new(&client, &server, t, opts, &initial, eof).with_reply(
                                &early.reply,
                                early.server_eof,
                                early.sent,
                            )
                        }
                        Start::Woken(w) => Duplex::resume(&client, &server, t, opts, w.progress),
                    };
                    let duplex = duplex.nap_after(nap);
                    tokio::pin!(duplex);
                    let ended = tokio::select! {
                        out = &mut duplex => Ok(out.end),
                        _ = srv.kill.notified() => Err(Term::new(Cause::Down, State::Data)),
                        _ = crate::sessions::killed(sh, acc.reg) => Err(Term::new(Cause::Killed, State::Data)),
                    };
                    (ended, duplex.progress())
                };
                // A kill of the server's sessions that came with the nap
                // (both ready in one poll) must not be slept through.
                let ended = match ended {
                    Ok(End::Idle) if srv.kills.load(Ordering::Relaxed) != kills => {
                        Err(Term::new(Cause::Down, State::Data))
                    }
                    e => e,
                };
                match ended {
                    Ok(End::Idle) => {
                        let woken = Woken {
                            progress,
                            naps,
                            may_sleep: true,
                            kills,
                        };
                        lot::sleep_tcp(sh, client, server, fe_idx, acc.clone(), link, woken);
                        return;
                    }
                    Ok(end) => (end.term(), progress),
                    Err(term) => {
                        client.set_reset_on_close();
                        server.set_reset_on_close();
                        (term, progress)
                    }
                }
            }
        };
        // A client that reset takes the server's connection with it; one
        // that timed out lets it close quietly (haproxy sends a FIN then).
        if term.cause == Cause::Client && term.state == State::Data {
            server.set_reset_on_close();
        }
        drop(server);
        be.release(link.srv);
        let rec = LogRecord {
            listener: Some(acc.bind.index),
            tls: acc.bind.tls.is_some(),
            client: acc.peer,
            frontend_addr: acc.local,
            frontend: &fe.name,
            backend: &be.name,
            server: Some(&srv.name),
            server_addr: link.server_addr,
            source_addr: link.source_addr,
            accept: link.accept_wall,
            tw: link.tw,
            tc: link.tc,
            tt: crate::clock::elapsed(link.started).as_millis() as i64,
            bytes_in: progress.client_to_server,
            bytes_out: progress.server_to_client,
            term,
            actconn: link.actconn,
            feconn: link.feconn,
            beconn: link.beconn,
            srvconn: link.srvconn,
            retries: link.retries,
            redispatched: link.redispatched,
            srv_retries: link.srv_retries,
            failed_srv: link.failed_srv,
            srv_queue: link.srv_queue,
            be_queue: link.be_queue,
            hostname: &sh.hostname,
            samples: link
                .logged
                .as_mut()
                .map(|l| std::mem::take(&mut l.samples))
                .unwrap_or_default(),
            unique_id: link.logged.as_mut().and_then(|l| l.unique_id.take()),
            ..LogRecord::default()
        };
        crate::stats::count(sh, fe_idx, Some(&be), Some(link.srv), &rec, false);
        if let Some(t) = &link.track {
            t.count(weir_stick::Event::BytesIn(rec.bytes_in));
            t.count(weir_stick::Event::BytesOut(rec.bytes_out));
        }
        // `option logasap` logged the session once connected.
        if !sh.proxy(sh.frontend(fe_idx).proxy).options.logasap {
            crate::session::log_session(sh, fe_idx, &rec);
        }
        drop(client);
        crate::session::finish(sh, fe_idx, acc);
    }
}

/// Takes over a sleeping session where it stopped.
#[allow(clippy::manual_async_fn)] // as `forward`
pub(crate) fn wake(sh: Arc<Shared>, s: Sleeper) -> impl std::future::Future<Output = ()> {
    async move {
        let Sleeper {
            client,
            server,
            fe_idx,
            acc,
            link,
            woken,
        } = s;
        // Registering again only fails when the system is out of memory:
        // the session ends then, unlogged, as a failed accept would.
        let (Ok(client), Ok(server)) = (client.into_conn(), server.into_conn()) else {
            link.be.release(link.srv);
            crate::session::finish(&sh, fe_idx, &acc);
            return;
        };
        forward(&sh, fe_idx, client, server, &acc, link, Start::Woken(woken)).await;
    }
}
