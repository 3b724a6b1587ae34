//! Health checks: TCP connect checks (and `option httpchk` status checks)
//! per server with `inter`/`fastinter`/`downinter`, `rise`/`fall`, spread
//! over the interval; state changes update balancing and are logged the way
//! HAProxy words them.

use crate::conn::Conn;
use crate::log::level;
use crate::state::{BackendRt, ServerId, ServerTarget, Shared};
pub use crate::stats::CheckResult;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;
use weir_balance::Health;
use weir_config::{Proxy, Server};

mod agent;
mod ctx;
mod external;
pub(crate) mod force;
mod http;
mod proto;
mod script;

/// Starts the health check and agent tasks of every server, spread as
/// haproxy spreads them: the n-th of N starts after n/N of the shortest
/// interval, counted over every backend.
pub fn spawn_all(sh: &Arc<Shared>) {
    // (A server that tracks another follows its checks instead.)
    let mut tasks: Vec<(&Arc<BackendRt>, ServerId, bool)> = Vec::new();
    for be in &sh.backends {
        for (id, s) in be.servers() {
            if s.conf.check && s.conf.track.is_none() {
                tasks.push((be, id, false));
            }
            if s.conf.agent.enabled {
                tasks.push((be, id, true));
            }
        }
    }
    let inter = |(be, id, agent): &(&Arc<BackendRt>, ServerId, bool)| {
        let c = &be.server(*id).conf;
        if *agent {
            c.agent.inter.unwrap_or(c.inter)
        } else {
            c.inter
        }
    };
    let shortest = tasks.iter().map(inter).min().unwrap_or_default();
    let n = tasks.len().max(1) as u32;
    for (k, (be, id, agent)) in tasks.into_iter().enumerate() {
        let offset = shortest * k as u32 / n;
        if agent {
            agent::spawn(sh, be, id, offset);
        } else {
            spawn_one(sh, be, id, offset);
        }
    }
}

pub use agent::spawn as spawn_agent;

/// Starts the check task of one server (a configured one, or one added at
/// run time) after `offset`; it ends when the server is deleted.
pub fn spawn_one(sh: &Arc<Shared>, be: &Arc<BackendRt>, id: ServerId, offset: Duration) {
    crate::profile::spawn::<crate::profile::Check, _>(check_loop(
        sh.clone(),
        be.clone(),
        id,
        offset,
    ));
}

/// Where and how long a check connects: the server's check address and
/// port unless a rule gives its own.
#[derive(Clone, Copy)]
pub(crate) struct Dial<'a> {
    pub px: &'a Proxy,
    pub s: &'a Server,
    /// A PROXY header first (`check-send-proxy`, or `send-proxy` on a
    /// configured server checked on its own address and port).
    pub proxy: Option<weir_config::SendProxy>,
    /// Through this SOCKS4 proxy (`check-via-socks4`).
    pub socks: Option<SocketAddr>,
    /// `pp2-never-send-local`: a PROXY v2 header says PROXY with the
    /// check's addresses (haproxy before 2.2), not LOCAL.
    pub pp2_proxy: bool,
    /// The check address and port the runtime API set.
    pub set: &'a crate::state::CheckTargets,
    pub target: &'a ServerTarget,
    pub tls: Option<&'a crate::tls::ClientTls>,
}

/// Why a connection for a check failed: its status and info.
pub(crate) struct DialError {
    pub reason: &'static str,
    pub info: String,
}

impl Dial<'_> {
    pub fn connect_timeout(&self) -> Duration {
        let inter = self.s.inter;
        self.px.timeouts.connect.map_or(inter, |c| c.min(inter))
    }

    /// The address a check connects to (`port`, `addr`: a rule's own).
    fn addr(&self, port: Option<u16>, ip: Option<std::net::IpAddr>) -> Result<SocketAddr, String> {
        match self.target {
            ServerTarget::Inet { addr, .. } => {
                // `addr <ip>` or `addr <ip>:<port>` (whose port gives way
                // to `port`).
                // (The runtime API's `check-addr` and `check-port` first.)
                let (base, addr_port) = match (self.set.check_addr, &self.s.check_addr) {
                    (Some(ip), _) => (ip, None),
                    (None, Some(a)) => match (a.parse(), a.parse::<SocketAddr>()) {
                        (Ok(ip), _) => (ip, None),
                        (_, Ok(sa)) => (sa.ip(), Some(sa.port())),
                        _ => return Err(format!("bad check address '{a}'")),
                    },
                    (None, None) => (addr.ip(), None),
                };
                let port = port
                    .or(self.set.check_port.filter(|p| *p > 0))
                    .or(self.s.check_port)
                    .or(addr_port)
                    .unwrap_or(addr.port());
                Ok(SocketAddr::new(ip.unwrap_or(base), port))
            }
            ServerTarget::Unix(_) => Err(String::new()),
        }
    }

    /// The hello a check sends under TLS by default: the server's
    /// `check-sni` and `check-alpn`.
    pub fn hello(&self) -> Hello<'_> {
        Hello {
            sni: self.s.tls.check_sni.as_deref(),
            alpn: self.s.tls.check_alpn.as_deref(),
        }
    }

    /// Connects (and shakes hands with `tls`), or says why not.
    pub async fn open(
        &self,
        port: Option<u16>,
        ip: Option<std::net::IpAddr>,
        tls: Option<Hello<'_>>,
    ) -> Result<Conn, DialError> {
        let conn_timeout = self.connect_timeout();
        let err = |reason, info: String| DialError { reason, info };
        let addr = self.addr(port, ip);
        let socks = self.socks;
        let conn = match (&addr, self.target) {
            (Ok(a), _) => {
                let to = socks.unwrap_or(*a);
                let ns = self.s.namespace.as_deref();
                tokio::time::timeout(conn_timeout, crate::connect::tcp_in(ns, to))
                    .await
                    .map(|r| r.map(Conn::Tcp))
            }
            (Err(_), ServerTarget::Unix(p)) if port.is_none() && ip.is_none() => {
                tokio::time::timeout(conn_timeout, tokio::net::UnixStream::connect(p))
                    .await
                    .map(|r| r.map(Conn::Unix))
            }
            (Err(e), _) => return Err(err("Layer4 connection problem", e.clone())),
        };
        let stream = match conn {
            Err(_) => return Err(err("Layer4 timeout", String::new())),
            Ok(Err(e)) => return Err(err("Layer4 connection problem", os_error_text(&e))),
            Ok(Ok(c)) => c,
        };
        if let (Some(_), Ok(a)) = (socks, &addr) {
            let asked = tokio::time::timeout(conn_timeout, crate::conn::socks4(&stream, *a)).await;
            if !matches!(asked, Ok(Ok(()))) {
                return Err(err("Socket error", "SOCKS4 Proxy deny the request".into()));
            }
        }
        if let (Some(v), Conn::Tcp(c)) = (self.proxy, &stream) {
            let (Ok(src), Ok(dst)) = (c.local_addr(), c.peer_addr()) else {
                return Err(err("Layer4 connection problem", String::new()));
            };
            // A check's own connection: a v2 header says LOCAL (with
            // the TLVs of no client) unless `pp2-never-send-local`.
            let ps = match v == weir_config::SendProxy::V1 || self.pp2_proxy {
                true => crate::connect::ProxySource {
                    src: Some(src),
                    dst: Some(dst),
                    ..Default::default()
                },
                false => Default::default(),
            };
            let header = crate::connect::proxy_header(v, self.s.proxy_v2, &ps);
            if let Err(e) = stream.send_all(&header).await {
                return Err(err("Layer4 connection problem", e.to_string()));
            }
        }
        let (Some(t), Some(h)) = (self.tls, tls) else {
            return Ok(stream);
        };
        let name = crate::tls::server_name(h.sni, addr.as_ref().ok().copied());
        let cfg = t.config();
        let alpn = match h.alpn {
            Some(a) => crate::tls::alpn_list(Some(a)),
            None => cfg.alpn_protocols.clone(),
        };
        match crate::tls::connect_alpn(stream, cfg, name, alpn, Some(conn_timeout)).await {
            Ok(c) => Ok(c),
            Err(crate::tls::HandshakeError::Timeout) => Err(err("Layer6 timeout", String::new())),
            Err(e) => Err(err("Layer6 invalid response", e.message().to_string())),
        }
    }
}

/// What a check's TLS hello carries.
/// A failed connect(2) in haproxy's words (a check's `info`).
pub(crate) fn os_error_text(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::ConnectionRefused => "Connection refused".to_string(),
        _ => {
            let text = e.to_string();
            let text = text.split(" (os error").next().unwrap_or(&text);
            format!("General socket error ({text})")
        }
    }
}

#[derive(Clone, Copy)]
pub(crate) struct Hello<'a> {
    pub sni: Option<&'a str>,
    pub alpn: Option<&'a [String]>,
}

async fn check_once(dial: Dial<'_>, env: &ctx::Env) -> CheckResult {
    let (px, tls) = (dial.px, dial.tls);
    let started = Instant::now();
    if let Some(rules) = script::rules_of(px) {
        return script::run(&dial, &rules, px.options.check_proto.as_ref(), started, env).await;
    }
    let (ok, reason, detail) = match dial.open(None, None, Some(dial.hello())).await {
        Ok(_) if tls.is_some() => (true, "Layer6 check passed", String::new()),
        Ok(_) => (true, "Layer4 check passed", String::new()),
        Err(e) if e.info.is_empty() => (false, e.reason, String::new()),
        Err(e) => (false, e.reason, format!(", info: \"{}\"", e.info)),
    };
    CheckResult {
        ok,
        reason: reason.into(),
        detail,
        duration: started.elapsed(),
        log_info: false,
    }
}

/// What a check's rules see of the backend and server (`env`'s state
/// header as `http-check send-state` words it, from the health `h`).
fn env_of(sh: &Shared, be: &BackendRt, id: ServerId, h: &Health) -> ctx::Env {
    let px = sh.proxy(be.proxy);
    let rt = be.server(id);
    let s = &*rt.conf;
    let (up, maint, weight, total) = {
        let set = be.set();
        let (up, maint, weight, _) = set.state(id.index()).unwrap_or((true, false, 0, false));
        (up, maint, weight, set.usable_weight())
    };
    let state = px.options.check_send_state.then(|| {
        let (rise, fall) = (s.rise.max(1), s.fall.max(1));
        let word = match (maint, up) {
            (true, _) => "MAINT".to_string(),
            (false, true) => {
                let word = match rt.nolb.load(Ordering::Relaxed) {
                    true => "NOLB",
                    false => "UP",
                };
                match h.value() + 1 < rise + fall {
                    true => format!("{word} {}/{fall}", h.value() + 1 - rise),
                    false => word.into(),
                }
            }
            (false, false) if h.value() > 0 => format!("DOWN {}/{rise}", h.value()),
            (false, false) => "DOWN".into(),
        };
        let (addr, port) = match rt.target() {
            ServerTarget::Inet { addr, .. } => (addr.ip().to_string(), addr.port().to_string()),
            ServerTarget::Unix(_) => ("unix".into(), "unix".into()),
        };
        let node = sh.cfg.global.node.as_deref().unwrap_or(&sh.hostname);
        let scur = rt.cur_conns.load(Ordering::Relaxed);
        let be_cur: u64 = be
            .servers()
            .map(|(_, s)| u64::from(s.cur_conns.load(Ordering::Relaxed)))
            .sum();
        format!(
            "{word}; address={addr}; port={port}; name={}/{}; node={node}; weight={weight}/{total}; scur={scur}/{be_cur}; qcur={}",
            be.name,
            s.name,
            rt.queued.load(Ordering::Relaxed)
        )
    });
    ctx::Env {
        be: be.name.clone(),
        be_id: i64::from(px.uid),
        srv: s.name.clone(),
        srv_id: i64::from(s.uid),
        vars: ctx::Vars::new(&sh.proc_vars),
        state,
        running: up && !maint,
        disable_404: px.options.check_disable_404,
        h2: s.check_h2.unwrap_or(s.h2),
    }
}

async fn check_loop(sh: Arc<Shared>, be: Arc<BackendRt>, id: ServerId, offset: Duration) {
    let px = sh.proxy(be.proxy);
    let rt = be.server(id);
    let s = &*rt.conf;
    let idx = id.index();
    // A configured server's checks on its own address and port carry its
    // PROXY header; a dynamic one's only with `check-send-proxy`.
    let own = s.check_port.is_none() && s.check_addr.is_none() && !rt.dynamic;
    let proxy = match s.check_send_proxy {
        true => Some(s.send_proxy.unwrap_or(weir_config::SendProxy::V1)),
        false => s.send_proxy.filter(|_| own),
    };
    // Down from the start only when a server state file said so.
    let health = match be.set().state(idx) {
        Some((false, ..)) => Health::down(s.rise, s.fall),
        _ => Health::new(s.rise, s.fall),
    };
    tokio::time::sleep(offset).await;
    let mut stop = sh.stopping.subscribe();
    let mut j = Judge {
        sh: &sh,
        be: &be,
        id,
        health,
        last: None,
    };
    loop {
        if rt.deleted.load(Ordering::Relaxed) {
            return;
        }
        if rt.check_restart.swap(false, Ordering::Relaxed) {
            j.health = Health::new(s.rise, s.fall);
        }
        // `set server … health up|down`: the state is set; its health too.
        match rt.health_forced.swap(0, Ordering::Relaxed) {
            1 => j.health.force(true),
            2 => j.health.force(false),
            _ => {}
        }
        let maint = be.set().state(idx).is_some_and(|(_, m, _, _)| m);
        // (Nor is a server with no address yet.)
        let unaddressed = rt.no_addr.load(Ordering::Relaxed);
        if maint || unaddressed || rt.checks_paused.load(Ordering::Relaxed) {
            // `disable health`: the server keeps its state until resumed;
            // a server in maintenance is not checked.
            tokio::select! {
                _ = tokio::time::sleep(s.inter) => continue,
                _ = stop.wait_for(|v| *v) => return,
            }
        }
        let target = rt.target();
        let env = env_of(&sh, &be, id, &j.health);
        let set = rt.targets.lock().map(|t| t.clone()).unwrap_or_default();
        let dial = Dial {
            px,
            s,
            target: &target,
            tls: rt.check_tls.as_deref(),
            proxy,
            socks: s.socks4.filter(|_| s.check_via_socks4),
            pp2_proxy: sh.cfg.global.pp2_never_send_local,
            set: &set,
        };
        let r = match px.options.check_proto {
            Some(weir_config::CheckProto::External) => external::run(px, &be, rt, s.inter).await,
            _ => check_once(dial, &env).await,
        };
        j.result(&r, None);
        let wait = if j.health.transitioning() {
            s.fastinter.unwrap_or(s.inter)
        } else if j.health.is_up() {
            s.inter
        } else {
            s.downinter.unwrap_or(s.inter)
        };
        let woke = tokio::select! {
            _ = tokio::time::sleep(wait) => false,
            _ = rt.observe_wake.notified() => true,
            _ = stop.wait_for(|v| *v) => return,
        };
        // `error-limit` errors in a row in its traffic: `on-error`, and
        // the next check at `fastinter`.
        let seen = rt.observed.lock().ok().and_then(|mut o| o.take());
        if let (true, Some((n, seen))) = (woke, seen) {
            let r = CheckResult {
                ok: false,
                reason: "Health analyze".into(),
                detail: format!(
                    ", info: \"Detected {n} consecutive errors, last one was: {}\"",
                    seen.describe()
                ),
                duration: Duration::ZERO,
                log_info: false,
            };
            use weir_config::OnError;
            match s.observe.action {
                OnError::FastInter => {}
                OnError::FailCheck => j.result(&r, None),
                OnError::SuddenDeath => {
                    j.health.sudden_death();
                    if let Ok(mut v) = rt.check.lock() {
                        v.health = j.health.value();
                    }
                }
                OnError::MarkDown => j.result(&r, Some(false)),
            }
            tokio::select! {
                _ = tokio::time::sleep(s.fastinter.unwrap_or(s.inter)) => {}
                _ = stop.wait_for(|v| *v) => return,
            }
        }
    }
}

/// Applies one check result (or an observed failure) to a server: its
/// health, its view for the runtime API, the log line of `option
/// log-health-checks`, and its state. One per check task.
struct Judge<'a> {
    sh: &'a Shared,
    be: &'a Arc<BackendRt>,
    id: ServerId,
    health: Health,
    /// The last check's outcome, for `option log-health-checks`.
    last: Option<(bool, String, String)>,
}

impl Judge<'_> {
    /// `force`: the state this result sets whatever the counts
    /// (`on-error mark-down`).
    fn result(&mut self, r: &CheckResult, force: Option<bool>) {
        let (be, rt) = (self.be, self.be.server(self.id));
        let (px, s) = (self.sh.proxy(be.proxy), &*rt.conf);
        let before = (self.health.value(), self.health.is_up());
        let changed = match force {
            Some(up) => {
                self.health.force(up);
                (before.1 != up).then_some(up)
            }
            None => self.health.on_result(r.ok),
        };
        if let Ok(mut v) = rt.check.lock() {
            v.record(r, self.health.is_up(), self.health.value());
        }
        // `option log-health-checks`: a line whenever the outcome or the
        // health changed, before the server's own state line.
        let outcome = (r.ok, r.reason.clone(), r.detail.clone());
        if px.options.log_health_checks
            && (self.last.as_ref() != Some(&outcome) || self.health.value() != before.0)
        {
            let msg = check_line(&be.name, &s.name, r, &self.health, s.rise, s.fall);
            be.logger.send(level::NOTICE, &msg);
        }
        self.last = Some(outcome);
        if changed.is_some() {
            settle(self.sh, be, self.id, r);
        }
        self.nolb(r);
    }

    /// A conditional pass (`L7OKC`) of a running server takes it out of
    /// balancing (NOLB, "is stopping"); a plain pass puts it back.
    fn nolb(&self, r: &CheckResult) {
        let (be, rt) = (self.be, self.be.server(self.id));
        let cond = r.ok && r.reason == CONDITIONAL;
        let was = rt.nolb.load(Ordering::Relaxed);
        let running = self.health.is_up();
        let now = match (was, running) {
            (true, false) => false,
            (false, true) if cond => true,
            (true, true) if r.ok && !cond => false,
            _ => return,
        };
        // (A server that went down: its own line told.)
        set_nolb(self.sh, be, self.id, now, running.then_some(""));
    }
}

/// Takes server `id` out of balancing while it stays up (NOLB), or puts
/// it back; `told`: the state line's reason (none: no line).
pub(crate) fn set_nolb(
    sh: &Shared,
    be: &Arc<BackendRt>,
    id: ServerId,
    on: bool,
    told: Option<&str>,
) {
    let rt = be.server(id);
    rt.nolb.store(on, Ordering::Relaxed);
    let (act, bck) = {
        let mut set = be.set();
        set.set_nolb(id.index(), on);
        set.usable_counts()
    };
    if !on {
        be.slot_freed.notify_waiters();
    }
    let Some(why) = told else {
        return;
    };
    let s = &rt.conf;
    let who = format!(
        "{}Server {}/{}",
        if s.backup { "Backup " } else { "" },
        be.name,
        s.name
    );
    let queued = be.queued.load(Ordering::Relaxed);
    let word = if on { "stopping" } else { "UP" };
    let msg = format!("{who} is {word}{why}. {act} active and {bck} backup servers online. 0 sessions requeued, {queued} total in queue.");
    be.logger.send(level::NOTICE, &msg);
    if !sh.cfg.global.quiet {
        crate::log::console("WARNING", &msg);
    }
}

/// The reason of a conditional pass (`L7OKC`).
const CONDITIONAL: &str = "Layer7 check conditionally passed";

/// A check's line as haproxy logs it with `option log-health-checks`:
/// its outcome, and the health as `x/y UP|DOWN` (an up server counts the
/// failures it may still take, a down one the successes it has).
fn check_line(be: &str, srv: &str, r: &CheckResult, h: &Health, rise: u32, fall: u32) -> String {
    let (rise, fall) = (rise.max(1), fall.max(1));
    let status = if h.is_up() {
        format!("{}/{fall} UP", h.value() + 1 - rise)
    } else {
        format!("{}/{rise} DOWN", h.value())
    };
    // (A check that passed is told without the reason phrase.)
    let detail = match r.ok && !r.log_info {
        true => r.detail.split(", info:").next().unwrap_or_default(),
        false => &r.detail,
    };
    // (A failure seen in the traffic took no check time.)
    let duration = match r.reason.as_str() {
        "Health analyze" => String::new(),
        _ => format!(", check duration: {}ms", r.duration.as_millis()),
    };
    let verdict = match (r.ok, r.reason == CONDITIONAL) {
        (true, true) => "conditionally succeeded",
        (true, false) => "succeeded",
        (false, _) => "failed",
    };
    format!(
        "Health check for server {be}/{srv} {verdict}, reason: {}{detail}{duration}, status: {status}.",
        r.reason,
    )
}

/// A server is up when its health check (if any) and its agent (if it
/// said "down") both allow it: applies a change of either.
pub(crate) fn settle(sh: &Shared, be: &Arc<BackendRt>, id: ServerId, r: &CheckResult) {
    // With `option log-health-checks` the check's own line told why.
    let why = match sh.proxy(be.proxy).options.log_health_checks {
        true => String::new(),
        false => format!(
            ", reason: {}{}, check duration: {}ms",
            r.reason,
            r.detail,
            r.duration.as_millis()
        ),
    };
    settle_told(sh, be, id, &why);
}

/// As [`settle`], the change told with `why`.
pub(crate) fn settle_told(sh: &Shared, be: &Arc<BackendRt>, id: ServerId, why: &str) {
    let rt = be.server(id);
    let check_up = rt.check.lock().map(|v| !v.enabled || v.up).unwrap_or(true);
    let want = check_up && !rt.agent_down.load(Ordering::Relaxed);
    set_state(sh, be, id, want, why);
}

/// Server `id` up or down now (`why` its state line's reason); in
/// maintenance the change is kept, not told.
pub(crate) fn set_state(sh: &Shared, be: &Arc<BackendRt>, id: ServerId, up: bool, why: &str) {
    let i = id.index();
    let (now, maint) = {
        let set = be.set();
        let st = set.state(i).unwrap_or((true, false, 0, false));
        (st.0, st.1 || set.imaint(i))
    };
    match (up == now, maint) {
        (true, _) => {}
        (false, true) => be.set().set_up(i, up),
        (false, false) => on_change(sh, be, id, up, why),
    }
}

/// Server `id` goes up or down, `why` (as its state line tells it).
pub(crate) fn on_change(sh: &Shared, be: &Arc<BackendRt>, id: ServerId, up: bool, why: &str) {
    let s = &*be.server(id).conf;
    let (act, bck) = {
        let mut set = be.set();
        set.set_up(id.index(), up);
        set.usable_counts()
    };
    let srv = be.server(id);
    let cur = srv.cur_conns.load(Ordering::Relaxed);
    let queued = be.queued.load(Ordering::Relaxed);
    let who = format!(
        "{}Server {}/{}",
        if s.backup { "Backup " } else { "" },
        be.name,
        s.name
    );
    let msg = if up {
        format!(
            "{who} is UP{why}. {act} active and {bck} backup servers online. 0 sessions requeued, {queued} total in queue."
        )
    } else {
        format!(
            "{who} is DOWN{why}. {act} active and {bck} backup servers left.{} {cur} sessions active, 0 requeued, {} remaining in queue.",
            if act == 0 && bck > 0 { " Running on backup." } else { "" },
            srv.queued.load(Ordering::Relaxed)
        )
    };
    let sev = if up { level::NOTICE } else { level::ALERT };
    be.logger.send(sev, &msg);
    if let Some(a) = &be.alerts {
        a.send(sev, &msg);
    }
    if !sh.cfg.global.quiet {
        crate::log::console("WARNING", &msg);
    }
    if up {
        be.slot_freed.notify_waiters();
        if s.shutdown_backup_on_up {
            for (_, b) in be.servers().filter(|(_, b)| b.conf.backup) {
                sh.kill_sessions(b);
            }
        }
        if let Some(period) = s.slowstart.filter(|p| !p.is_zero()) {
            crate::profile::spawn::<crate::profile::Check, _>(slowstart(
                be.clone(),
                id.index(),
                s.weight,
                period,
            ));
        }
    } else {
        if srv.shutdown_on_down {
            sh.kill_sessions(srv);
        }
        if act == 0 && bck == 0 {
            let msg = format!("{} {} has no server available!", be.kind_word, be.name);
            be.logger.send(level::EMERG, &msg);
            if !sh.cfg.global.quiet {
                crate::log::console("ALERT", &msg);
            }
        }
    }
    crate::state::track::pass_health(sh, be, srv, up);
}

/// Ramps a server's weight up after it came back (`slowstart`), unless it
/// goes down again meanwhile.
async fn slowstart(be: Arc<BackendRt>, idx: usize, full: u32, period: Duration) {
    let start = Instant::now();
    let step = (period / 20).max(Duration::from_millis(100));
    loop {
        let w = weir_balance::health::slowstart_weight(full, start.elapsed(), period);
        {
            let mut set = be.set();
            if !set.is_up(idx) {
                set.set_weight(idx, full);
                return;
            }
            set.set_weight(idx, w);
        }
        if w >= full {
            return;
        }
        tokio::time::sleep(step).await;
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
