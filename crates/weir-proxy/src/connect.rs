//! Getting a server connection for a session: balancing, the backend and
//! server queues (`maxconn`, `maxqueue`, `timeout queue`), connecting with
//! `timeout connect`, `retries` and `option redispatch`.

use crate::conn::Conn;
use crate::state::ServerId;
use crate::state::{BackendRt, Lb, ServerTarget};
use crate::term::{Cause, State, Term};
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::net::{TcpSocket, UnixStream};
use tokio::time::Instant;
use weir_balance::Pick;
use weir_config::addr::PortSpec;
use weir_config::{Proxy, ProxyV2Options, SendProxy};

/// A server connection, ready to forward: a transport (`Conn`), or what
/// the layer that asked for it carries on one ([`Carry`]).
pub struct Connected<C = Conn> {
    pub srv: ServerId,
    pub conn: C,
    pub server_addr: Option<SocketAddr>,
    pub source_addr: Option<SocketAddr>,
    /// What it was opened for beyond its server (a hash of the SNI
    /// computed per request, the client's destination, the PROXY
    /// header's addresses, where the server uses them; 0 for none): an
    /// exchange reuses it only for the same, as haproxy's connection
    /// hash.
    pub key: u64,
    /// Its server's connection generation when it was opened: a
    /// connection opened before `set server addr` or `shutdown sessions`
    /// is never reused after them, even if it is parked later.
    pub gen: u32,
}

impl<C> Connected<C> {
    /// The same connection, carrying `f(conn)`.
    pub fn map<D>(self, f: impl FnOnce(C) -> D) -> Connected<D> {
        Connected {
            srv: self.srv,
            conn: f(self.conn),
            server_addr: self.server_addr,
            source_addr: self.source_addr,
            key: self.key,
            gen: self.gen,
        }
    }
}

/// What a server connection carries for the layer that asked for it: the
/// transport itself (mode tcp), or a stream of a protocol that multiplexes
/// it (HTTP/2, which the HTTP layer opens). Both are asked inside the
/// connect phase, so that they count in the connect time and a failure is
/// retried or redispatched like a refused connection.
pub trait Carry: Sized {
    /// A stream on an open connection to server `srv`, instead of a new
    /// connection (`ws`: for a WebSocket upgrade, see [`crate::state::WsRoute`]).
    fn reuse(
        be: &BackendRt,
        srv: ServerId,
        ws: bool,
    ) -> impl std::future::Future<Output = Option<Connected<Self>>> + Send;
    /// What the new connection `c` carries (after its TLS handshake).
    fn open(
        be: &BackendRt,
        c: Connected,
        ws: bool,
    ) -> impl std::future::Future<Output = std::io::Result<Connected<Self>>> + Send;
}

impl Carry for Conn {
    async fn reuse(_: &BackendRt, _: ServerId, _: bool) -> Option<Connected> {
        None
    }
    async fn open(_: &BackendRt, c: Connected, _: bool) -> std::io::Result<Connected> {
        Ok(c)
    }
}

/// What the connect phase did, for the log line.
#[derive(Debug, Default, Clone)]
pub struct Attempts {
    pub retries: u32,
    pub redispatched: bool,
    /// Retries on the same server (haproxy's `wretr`; a redispatch is not
    /// one).
    pub same_server_retries: u32,
    /// The server of the last failed attempt (where haproxy counts the
    /// retry or the redispatch).
    pub failed_srv: Option<ServerId>,
    /// Time spent queued.
    pub tw: Duration,
    /// Time of the last (successful) connect, if any.
    pub tc: Option<Duration>,
    pub srv_queue: u32,
    pub be_queue: u32,
    /// Last server tried, for `%s` on failures.
    pub last_srv: Option<ServerId>,
    /// Input: a server persistence (a cookie) asks for; used when it can
    /// take the connection (`force`: even when down, `option persist`).
    pub persist_to: Option<(ServerId, bool)>,
    /// Input: a server the first pick avoids (an HTTP retry redispatched).
    pub avoid: Option<ServerId>,
    /// Input: a server with `redir` ends the attempt (a GET or HEAD).
    pub redirect_ok: bool,
}

impl Attempts {
    /// What the connect phase did, in the log record; `l7_retries` are the
    /// exchange's own (`retry-on`), counted as retries on the same server.
    pub fn note(&self, rec: &mut crate::log::LogRecord<'_>, l7_retries: u32) {
        rec.retries = self.retries + l7_retries;
        rec.srv_retries = self.same_server_retries + l7_retries;
        rec.failed_srv = self.failed_srv;
        rec.redispatched |= self.redispatched;
        rec.srv_queue = self.srv_queue;
        rec.be_queue = self.be_queue;
        rec.tw = self.tw.as_millis() as i64;
    }
}

/// Why no server connection could be had: HAProxy's termination state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnectFail {
    /// `SC`: refused/failed, or no server available.
    Refused,
    /// `sC`: connect timeout.
    Timeout,
    /// `sQ`: queue timeout or server queue full.
    QueueTimeout,
    /// `CQ`/`CC`: the client left while queued or while connecting.
    ClientAbort { queued: bool },
    /// `KC`: killed (`shutdown session`, hard stop) while connecting.
    Killed,
    /// `LC`: the server chosen has `redir`, and the request may be
    /// redirected there (see [`Attempts::redirect_ok`]).
    Redirect,
}

impl ConnectFail {
    pub fn term(self) -> Term {
        match self {
            ConnectFail::Refused => Term::new(Cause::Server, State::Connect),
            ConnectFail::Timeout => Term::new(Cause::ServerTimeout, State::Connect),
            ConnectFail::QueueTimeout => Term::new(Cause::ServerTimeout, State::Queue),
            ConnectFail::ClientAbort { queued: true } => Term::new(Cause::Client, State::Queue),
            ConnectFail::ClientAbort { queued: false } => Term::new(Cause::Client, State::Connect),
            ConnectFail::Killed => Term::new(Cause::Killed, State::Connect),
            ConnectFail::Redirect => Term::new(Cause::Local, State::Connect),
        }
    }
}

/// Decides whether retry number `k` (1-based) of `retries` redispatches.
pub fn redispatch_on(k: u32, retries: u32, redispatch: bool, interval: i32) -> bool {
    if !redispatch || interval == 0 {
        return false;
    }
    if interval > 0 {
        k.is_multiple_of(interval as u32)
    } else {
        i64::from(k) == i64::from(retries) + 1 + i64::from(interval)
    }
}

/// Whether a failed connection goes to another server at once rather than
/// being retried on the same one: with `option redispatch`, a server not
/// chosen by persistence, more than one usable server, and an algorithm
/// that does not hash a key to its server (as haproxy 2.6 does: measured,
/// it redispatches on the first failure for roundrobin, static-rr,
/// leastconn and first).
fn redispatch_at_once(be: &BackendRt, px: &Proxy, forced: bool) -> bool {
    use weir_config::Balance;
    let hashed = matches!(px.balance, Balance::Source | Balance::Key);
    px.options.redispatch
        && px.options.redispatch_interval != 0
        && !forced
        && !hashed
        && be.set().usable_counts().0 > 1
}

/// A place in the backend queue (and a server's, when a hash chose a full
/// server); left when dropped, even if the session is cancelled.
struct QueueSpot<'a> {
    be: &'a BackendRt,
    srv: Option<ServerId>,
}

impl Drop for QueueSpot<'_> {
    fn drop(&mut self) {
        self.be.queued.fetch_sub(1, Ordering::Relaxed);
        if let Some(s) = self.srv.map(|i| self.be.server(i)) {
            s.queued.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

/// A connection slot on a server, taken from the balancer. Dropping it gives
/// the slot back, so a cancelled connect (client gone, hard stop) never
/// leaks one; `keep` hands it to the session.
struct Slot<'a> {
    be: &'a BackendRt,
    srv: ServerId,
}

impl<'a> Slot<'a> {
    /// Accounts a slot the balancer already took for `srv`.
    fn taken(be: &'a BackendRt, srv: ServerId) -> Self {
        let s = be.server(srv);
        let n = s.cur_conns.fetch_add(1, Ordering::Relaxed) + 1;
        s.total.fetch_add(1, Ordering::Relaxed);
        crate::state::raise_max(&s.smax, n);
        let n = be.conns.fetch_add(1, Ordering::Relaxed) + 1;
        crate::state::raise_max(&be.smax, n);
        Slot { be, srv }
    }
    /// The session owns the slot now and releases it itself.
    fn keep(self) -> ServerId {
        let srv = self.srv;
        std::mem::forget(self);
        srv
    }
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        self.be.release(self.srv);
    }
}

/// Whether a persistence keeps its server even when it is down: `option
/// persist`, or a `force-persist` condition that matches.
pub fn force_persist(px: &Proxy, ctx: &dyn weir_rules::Ctx) -> bool {
    px.options.persist || px.force_persist.iter().any(|c| c.eval(ctx))
}

/// The server the first `use-server` rule that matches names, when it is
/// up (or `force`d); a rule whose server is down is passed over. A name
/// from a format that names no server ends the rules: the balancer
/// chooses.
pub fn use_server(
    be: &BackendRt,
    px: &Proxy,
    ctx: &dyn weir_rules::Ctx,
    force: bool,
) -> Option<ServerId> {
    for u in px.use_servers.iter().filter(|u| u.cond.eval(ctx)) {
        let id = match &u.dynamic {
            None => be.server_named(&u.name),
            Some(f) => {
                let name = f.render(ctx);
                Some(
                    std::str::from_utf8(&name)
                        .ok()
                        .and_then(|n| be.server_named(n))?,
                )
            }
        };
        if let Some(id) = id.filter(|i| force || be.set().is_up(i.index())) {
            return Some(id);
        }
    }
    None
}

/// Picks a server for `key` and takes a slot on it when it has room
/// (`queued`: this session is counted among the backend's waiters).
fn pick(be: &BackendRt, key: &[u8], avoid: Option<ServerId>, queued: bool) -> Pick {
    let mut lb = be.set();
    let Lb { set, rng } = &mut *lb;
    // The backend's sessions, this one included, for servers whose limit
    // follows them (`minconn`).
    let load = be.conns.load(Ordering::Relaxed) + be.queued.load(Ordering::Relaxed);
    set.note_load(load + u32::from(!queued));
    let p = set.pick(key, rng, avoid.map(ServerId::index));
    if let Pick::Server(i) = p {
        set.take(i);
    }
    p
}

/// Takes a slot on a server, waiting in the queue when all are full.
async fn acquire<'a>(
    be: &'a BackendRt,
    key: &[u8],
    avoid: Option<ServerId>,
    deadline: Option<Instant>,
    at: &mut Attempts,
) -> Result<Slot<'a>, ConnectFail> {
    // The common case, a server with room, needs no place among the
    // queue's waiters (registering one locks the wake-up list twice).
    match pick(be, key, avoid, false) {
        Pick::Server(i) => Ok(Slot::taken(be, ServerId::new(i))),
        Pick::NoServer => Err(ConnectFail::Refused),
        Pick::QueueServer(_) | Pick::QueueBackend => queue(be, key, avoid, deadline, at).await,
    }
}

/// Waits in the queue for a slot (`timeout queue`), picking again each
/// time one is freed.
async fn queue<'a>(
    be: &'a BackendRt,
    key: &[u8],
    avoid: Option<ServerId>,
    deadline: Option<Instant>,
    at: &mut Attempts,
) -> Result<Slot<'a>, ConnectFail> {
    let start = crate::clock::now();
    let mut spot: Option<QueueSpot<'a>> = None;
    let result = loop {
        // Registered before the pick, so that a slot freed in between
        // still wakes this waiter.
        let notified = be.slot_freed.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        let pick = pick(be, key, avoid, spot.is_some());
        match pick {
            Pick::Server(i) => break Ok(Slot::taken(be, ServerId::new(i))),
            Pick::NoServer => break Err(ConnectFail::Refused),
            Pick::QueueServer(_) | Pick::QueueBackend if spot.is_none() => {
                let target = if let Pick::QueueServer(i) = pick {
                    Some(ServerId::new(i))
                } else {
                    None
                };
                if let Some(i) = target {
                    let s = be.server(i);
                    let q = s.queued.fetch_add(1, Ordering::Relaxed) + 1;
                    at.srv_queue = q - 1;
                    if s.maxqueue.is_some_and(|m| q > m) {
                        s.queued.fetch_sub(1, Ordering::Relaxed);
                        return Err(ConnectFail::QueueTimeout);
                    }
                }
                at.be_queue = be.queued.fetch_add(1, Ordering::Relaxed);
                spot = Some(QueueSpot { be, srv: target });
                // A slot freed on another thread before the count above
                // showed this waiter woke nobody: pick once more.
                continue;
            }
            _ => {}
        }
        match deadline {
            Some(d) => {
                if crate::clock::now() >= d || tokio::time::timeout_at(d, notified).await.is_err() {
                    break Err(ConnectFail::QueueTimeout);
                }
            }
            None => notified.await,
        }
    };
    if spot.take().is_some() {
        at.tw += crate::clock::elapsed(start);
    }
    result
}

/// What a `send-proxy(-v2)` header says of the client: its addresses, and
/// what `proxy-v2-options` may add.
#[derive(Clone, Copy, Default)]
pub struct ProxySource<'a> {
    pub src: Option<SocketAddr>,
    pub dst: Option<SocketAddr>,
    /// The name the client asked for (its own PROXY authority or SNI).
    pub authority: Option<&'a [u8]>,
    /// The request's unique id.
    pub unique_id: Option<&'a [u8]>,
    /// The client connection's TLS (its ALPN, and the `ssl` TLV's facts).
    pub tls: Option<&'a weir_rules::TlsInfo>,
}

/// The PROXY header a server with `send-proxy(-v2)` gets first. A v2
/// header's TLVs come in haproxy 2.6's order: the checksum, the client's
/// ALPN (always, when it chose one), the authority, the unique id, and
/// the `ssl` TLV.
pub fn proxy_header(v: SendProxy, opts: ProxyV2Options, ps: &ProxySource<'_>) -> Vec<u8> {
    use weir_proto::proxy_protocol as pp;
    let mut tlvs = Vec::new();
    if v == SendProxy::V2 {
        if opts.crc32c {
            tlvs.extend(pp::tlv(pp::TLV_CRC32C, &[0; 4]));
        }
        if let Some(alpn) = ps.tls.and_then(|t| t.alpn.as_deref()) {
            tlvs.extend(pp::tlv(pp::TLV_ALPN, alpn.as_bytes()));
        }
        if let Some(a) = ps.authority.filter(|_| opts.authority) {
            tlvs.extend(pp::tlv(pp::TLV_AUTHORITY, a));
        }
        if let Some(id) = ps.unique_id.filter(|_| opts.unique_id) {
            tlvs.extend(pp::tlv(pp::TLV_UNIQUE_ID, id));
        }
        if opts.ssl_tlv() {
            tlvs.extend(ssl_tlv(opts, ps.tls));
        }
    }
    let mut h = match (v, ps.src, ps.dst) {
        (SendProxy::V1, Some(s), Some(d)) => pp::encode_v1(s, d),
        (SendProxy::V1, _, _) => b"PROXY UNKNOWN\r\n".to_vec(),
        (SendProxy::V2, Some(s), Some(d)) => pp::encode_v2_with(s, d, &tlvs),
        (SendProxy::V2, _, _) => pp::encode_v2_local(&tlvs),
    };
    // The checksum covers the header with its own field zeroed: the field
    // is the first TLV's value, right after the addresses (when the TLVs
    // fitted the header at all).
    if let (SendProxy::V2, true, Some(start)) = (v, opts.crc32c, h.len().checked_sub(tlvs.len())) {
        let at = start + 3;
        let crc = weir_rules::hash::crc32c(&h).to_be_bytes();
        if let Some(field) = h.get_mut(at..at + 4) {
            field.copy_from_slice(&crc);
        }
    }
    h
}

/// The `ssl` TLV of a client connection (`tls`; `None`: in clear, which
/// haproxy still reports, with no bit set).
fn ssl_tlv(opts: ProxyV2Options, tls: Option<&weir_rules::TlsInfo>) -> Vec<u8> {
    use weir_proto::proxy_protocol::Ssl;
    let Some(t) = tls else {
        return Ssl::default().tlv();
    };
    let cn = opts
        .cert_cn
        .then(|| t.peer_chain.first())
        .flatten()
        .and_then(|der| weir_rules::x509::parse(der))
        .and_then(|c| weir_rules::x509::first_common_name(c.subject));
    let own = t
        .own_cert
        .as_deref()
        .filter(|_| opts.cert_key || opts.cert_sig);
    let key_alg = own
        .filter(|_| opts.cert_key)
        .and_then(weir_rules::x509::text::key_algorithm);
    let sig_alg = own
        .filter(|_| opts.cert_sig)
        .and_then(weir_rules::x509::parse)
        .map(|c| weir_rules::x509::sig_alg_name(c.sig_alg));
    // A certificate on this session; on this connection too unless the
    // handshake resumed the session that carried it.
    let cert = match (t.client_cert, t.resumed) {
        (false, _) => 0,
        (true, true) => 4,
        (true, false) => 6,
    };
    Ssl {
        client: 1 | cert,
        verify: t.verify as u32,
        version: Some(t.version.as_bytes()),
        cn: cn.as_deref().map(str::as_bytes),
        key_alg: key_alg.as_deref().map(str::as_bytes),
        sig_alg: sig_alg.as_deref().map(str::as_bytes),
        cipher: opts.ssl_cipher.then_some(t.cipher.as_bytes()),
    }
    .tlv()
}

/// `option srvtcpka` with its probe settings.
fn srvtcpka(px: &weir_config::Proxy) -> Option<weir_config::TcpKa> {
    px.options.srvtcpka.then_some(px.options.srvtcpka_params)
}

#[allow(clippy::too_many_arguments)]
async fn dial<C: Carry>(
    be: &BackendRt,
    srv: ServerId,
    local: Option<SocketAddr>,
    keepalive: Option<weir_config::TcpKa>,
    sni: Option<&str>,
    handshake_timeout: Option<Duration>,
    pp: &ProxySource<'_>,
    ws: bool,
) -> Result<Connected<C>, (ConnectFail, std::io::Error)> {
    if let Some(c) = C::reuse(be, srv, ws).await {
        return Ok(c);
    }
    let mut c = dial_plain(be, srv, local, keepalive).await?;
    let s = be.server(srv);
    if let Some(v) = s.send_proxy {
        // In clear, before any TLS handshake, as the server reads it.
        let header = proxy_header(v, s.proxy_v2, pp);
        c.conn
            .send_all(&header)
            .await
            .map_err(|e| (ConnectFail::Refused, e))?;
    }
    let tls = match ws {
        true => s.ws.tls.as_ref().filter(|_| s.tls().is_some()),
        false => s.tls(),
    };
    if let Some(t) = tls {
        // The handshake counts in the connect time, as in HAProxy.
        let name = crate::tls::server_name(sni, c.server_addr);
        c.conn = crate::tls::connect(c.conn, t.config(), name, handshake_timeout)
            .await
            .map_err(|e| (ConnectFail::Refused, std::io::Error::other(e.message())))?;
    }
    C::open(be, c, ws)
        .await
        .map_err(|e| (ConnectFail::Refused, e))
}

async fn dial_plain(
    be: &BackendRt,
    srv: ServerId,
    local: Option<SocketAddr>,
    keepalive: Option<weir_config::TcpKa>,
) -> Result<Connected, (ConnectFail, std::io::Error)> {
    let s = be.server(srv);
    let gen = s.conn_gen.load(std::sync::atomic::Ordering::Relaxed);
    // A server with no address yet (`init-addr none`, a name `add server`
    // does not resolve) is never reached at another's address.
    if s.no_addr.load(std::sync::atomic::Ordering::Relaxed) {
        let e = std::io::Error::new(
            std::io::ErrorKind::AddrNotAvailable,
            "server has no address",
        );
        return Err((ConnectFail::Refused, e));
    }
    match s.target() {
        ServerTarget::Unix(path) => match connect_unix(&path).await {
            Ok(c) => Ok(Connected {
                srv,
                conn: Conn::Unix(c),
                server_addr: None,
                source_addr: None,
                key: 0,
                gen,
            }),
            Err(e) => Err((ConnectFail::Refused, e)),
        },
        ServerTarget::Inet { addr, port } => {
            let dport = local.map_or(0, |l| l.port());
            let port = match port {
                PortSpec::Fixed(p) => p,
                PortSpec::Same => dport,
                PortSpec::Offset(o) => (i32::from(dport) + o).clamp(0, 65535) as u16,
            };
            // `0.0.0.0` (`option transparent`): the client's destination.
            let ip = match local {
                Some(l) if addr.ip().is_unspecified() => l.ip(),
                _ => addr.ip(),
            };
            let addr = SocketAddr::new(ip, port);
            let make = || {
                if addr.is_ipv4() {
                    TcpSocket::new_v4()
                } else {
                    TcpSocket::new_v6()
                }
            };
            let sock = match &s.conf.namespace {
                Some(ns) => crate::sys::in_netns(ns, make),
                None => make(),
            };
            let sock = sock.map_err(|e| (ConnectFail::Refused, e))?;
            if let Some(ka) = &keepalive {
                crate::sys::keepalive(socket2::SockRef::from(&sock), ka);
            }
            // `tune.rcvbuf.server`, `tune.sndbuf.server`.
            if let Some(n) = be.sockbufs.0 {
                let _ = sock.set_recv_buffer_size(n);
            }
            if let Some(n) = be.sockbufs.1 {
                let _ = sock.set_send_buffer_size(n);
            }
            if be.nolinger {
                // A zero linger resets at once: close never blocks.
                let _ = socket2::SockRef::from(&sock).set_linger(Some(std::time::Duration::ZERO));
            }
            if let Some(src) = s.source {
                sock.bind(src).map_err(|e| (ConnectFail::Refused, e))?;
            }
            // (`socks4`: through the proxy, which connects to the server.)
            let stream = sock
                .connect(s.conf.socks4.unwrap_or(addr))
                .await
                .map_err(|e| (ConnectFail::Refused, e))?;
            // Nagle stays on, as in HAProxy: whole chunks are written at once.
            let source_addr = be.log_source.then(|| stream.local_addr().ok()).flatten();
            let conn = Conn::Tcp(stream);
            if s.conf.socks4.is_some() {
                crate::conn::socks4(&conn, addr)
                    .await
                    .map_err(|e| (ConnectFail::Refused, e))?;
            }
            Ok(Connected {
                srv,
                conn,
                server_addr: Some(addr),
                source_addr,
                key: 0,
                gen,
            })
        }
    }
}

/// Runs the whole connect phase for one session. `key` is hashed by
/// `balance source`; `local` is the address the client connected to.
/// `reuse` may hand over an idle connection to the chosen server instead of
/// a new one (HTTP keep-alive); it is asked once per chosen server, then
/// `C` ([`Carry`]) for a stream on an open connection. `sni`
/// holds each server's SNI for this session (empty when none has one).
#[allow(clippy::too_many_arguments)]
pub async fn connect<C: Carry>(
    be: &BackendRt,
    px: &Proxy,
    key: &[u8],
    local: Option<SocketAddr>,
    at: &mut Attempts,
    reuse: &mut (dyn FnMut(ServerId) -> Option<Connected<C>> + Send),
    sni: &[Option<String>],
    pp: &ProxySource<'_>,
    ws: bool,
) -> Result<Connected<C>, ConnectFail> {
    let tconnect = px.timeouts.connect;
    let queue_deadline = px
        .timeouts
        .queue
        .or(tconnect)
        .map(|t| crate::clock::now() + t);
    let mut avoid: Option<ServerId> = at.avoid.take();
    let mut same: Option<ServerId> = None;
    let mut attempt = 0u32;
    loop {
        let forced = at.persist_to.is_some();
        let persisted = at.persist_to.take().filter(|&(i, force)| {
            let mut set = be.set();
            let i = i.index();
            // A server draining (weight 0) still serves its persistent
            // clients, as in haproxy.
            let ok = i < set.len() && (set.is_up(i) || force) && set.below_maxconn(i);
            if ok {
                set.take(i);
            }
            ok
        });
        let slot = match (same.take(), persisted) {
            (Some(s), _) => {
                be.set().take(s.index());
                Slot::taken(be, s)
            }
            (None, Some((i, _))) => Slot::taken(be, i),
            (None, None) => acquire(be, key, avoid, queue_deadline, at).await?,
        };
        let srv = slot.srv;
        at.last_srv = Some(srv);
        if at.redirect_ok && be.server(srv).conf.redir.is_some() {
            return Err(ConnectFail::Redirect);
        }
        if let Some(c) = reuse(srv) {
            at.tc = Some(Duration::ZERO);
            slot.keep();
            return Ok(c);
        }
        let started = crate::clock::now();
        let name = sni.get(srv.index()).and_then(|n| n.as_deref());
        let r = match tconnect {
            Some(t) => {
                match tokio::time::timeout_at(
                    crate::clock::deadline(t),
                    dial(be, srv, local, srvtcpka(px), name, None, pp, ws),
                )
                .await
                {
                    Ok(r) => r,
                    Err(_) => Err((
                        ConnectFail::Timeout,
                        std::io::Error::from(std::io::ErrorKind::TimedOut),
                    )),
                }
            }
            // No `timeout connect`: a server's handshake is still bounded,
            // by `timeout server`.
            None => {
                let hs = px.timeouts.server;
                dial(be, srv, local, srvtcpka(px), name, hs, pp, ws).await
            }
        };
        let made = match &r {
            Ok(_) => Some(true),
            Err((ConnectFail::Refused | ConnectFail::Timeout, _)) => Some(false),
            Err(_) => None,
        };
        if let Some(ok) = made {
            crate::state::observe::report(be, srv, crate::state::observe::Seen::Connect(ok));
        }
        match r {
            Ok(c) => {
                at.tc = Some(crate::clock::elapsed(started));
                slot.keep();
                return Ok(c);
            }
            Err((fail, _e)) => {
                drop(slot);
                attempt += 1;
                if attempt > px.retries {
                    return Err(fail);
                }
                at.retries = attempt;
                at.failed_srv = Some(srv);
                if redispatch_on(
                    attempt,
                    px.retries,
                    px.options.redispatch,
                    px.options.redispatch_interval,
                ) || redispatch_at_once(be, px, forced)
                {
                    at.redispatched = true;
                    avoid = Some(srv);
                } else {
                    at.same_server_retries += 1;
                    same = Some(srv);
                    // HAProxy's turn-around timer before retrying the same server.
                    let pause = tconnect
                        .unwrap_or(Duration::from_secs(1))
                        .min(Duration::from_secs(1));
                    if fail == ConnectFail::Refused {
                        tokio::time::sleep(pause).await;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
#[path = "connect_tests.rs"]
mod tests;

/// Connects to a unix socket's path, or to an abstract name after a NUL.
async fn connect_unix(path: &str) -> std::io::Result<UnixStream> {
    let Some(name) = path.strip_prefix('\0') else {
        return UnixStream::connect(path).await;
    };
    use std::os::linux::net::SocketAddrExt;
    let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes())?;
    // A unix connect does not wait on the network: it is done or refused.
    let s = std::os::unix::net::UnixStream::connect_addr(&addr)?;
    s.set_nonblocking(true)?;
    UnixStream::from_std(s)
}

/// A TCP connection to `to`, its socket made in network namespace `ns`
/// when one is given (a server's `namespace`, for its checks too).
pub async fn tcp_in(ns: Option<&str>, to: SocketAddr) -> std::io::Result<tokio::net::TcpStream> {
    let Some(ns) = ns else {
        return tokio::net::TcpStream::connect(to).await;
    };
    let sock = crate::sys::in_netns(ns, || {
        if to.is_ipv4() {
            TcpSocket::new_v4()
        } else {
            TcpSocket::new_v6()
        }
    })?;
    sock.connect(to).await
}
