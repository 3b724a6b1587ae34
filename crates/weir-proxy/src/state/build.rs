//! Where a configuration becomes live state: loggers, backends with their
//! servers and TLS contexts, frontends with their switching rules and bind
//! lines. Nothing is bound, forked or started here; what a reload keeps
//! will come in through [`Carried`].

use super::{
    BackendId, BackendRt, BindInfo, FrontBind, FrontendId, FrontendRt, ListenerStats, ProxyId,
    Roles, ServerRt, ServerTarget, Shared, Target,
};
use crate::log::{self, Logger};
use crate::{capture, rates, stats, sys, tls};
use std::collections::HashMap;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64};
use std::sync::{Arc, Mutex};
use weir_balance::{Rng, ServerInfo, ServerSet};
use weir_config::addr::{Family, Host, PortSpec, ServerAddr};
use weir_config::{Config, Mode, Proxy, Server};

/// What a previous configuration's state hands to the next one on a
/// reload (stick tables, server states, TLS ticket keys): nothing yet.
#[derive(Debug, Default)]
pub struct Carried {}

/// The thread count and connection limit in force (decided with the
/// descriptor limits, see [`crate::limits`]).
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub nthreads: usize,
    pub maxconn: u32,
}

/// The live state of `cfg`, or every problem found (one message each).
pub fn build(cfg: Arc<Config>, limits: Limits, _carried: Carried) -> Result<Shared, Vec<String>> {
    let mut errors = Vec::new();
    let hostname = sys::hostname();
    let rings: Vec<Arc<log::ring::Ring>> = cfg
        .rings
        .iter()
        .map(|r| Arc::new(log::ring::Ring::new(r)))
        .collect();
    let (global_logger, loggers, forwarders) = open_loggers(&cfg, &hostname, &rings, &mut errors);
    let files = tls::store::Store::new(&cfg.global.tls);
    let apps = fcgi_apps(&cfg, &hostname, &global_logger, &rings, &mut errors);
    let (backends, by_name) = backends(&cfg, limits, &loggers, &apps, &files, &mut errors);
    super::track::link(&backends, &mut errors);
    let frontends = frontends(
        &cfg,
        limits,
        &backends,
        &by_name,
        &loggers,
        &files,
        &mut errors,
    );
    fullconns(&cfg, &backends, &frontends);
    let peers_tls = tls::peers_tls(&cfg, &files, &mut errors);
    let log_tls = tls::log_tls(&cfg, &files, &mut errors);
    // From now on the runtime API names what the store holds.
    files.seal();
    if !errors.is_empty() {
        return Err(errors);
    }
    let g = &cfg.global;
    let mut roles = vec![Roles::default(); cfg.proxies.len()];
    for (i, f) in frontends.iter().enumerate() {
        if let Some(r) = roles.get_mut(f.proxy.index()) {
            r.frontend = Some(FrontendId::new(i));
        }
    }
    for (i, b) in backends.iter().enumerate() {
        if let Some(r) = roles.get_mut(b.proxy.index()) {
            r.backend = Some(BackendId::new(i));
        }
    }
    let proc_vars = super::procvars::ProcVars::default();
    proc_vars.init(&g.set_vars);
    let (stopping, _) = tokio::sync::watch::channel(false);
    let (killing, _) = tokio::sync::watch::channel(false);
    Ok(Shared {
        lua: std::sync::OnceLock::new(),
        lua_pins: Default::default(),
        frontends,
        backends,
        roles,
        actconn: AtomicU32::new(0),
        maxconn: limits.maxconn,
        maxconn_now: AtomicU32::new(limits.maxconn),
        conn_gate: match (cfg.global.maxconnrate, cfg.global.maxsessrate) {
            (Some(a), Some(b)) => Some(crate::freq::Gate::new(a.min(b))),
            (a, b) => a.or(b).map(crate::freq::Gate::new),
        },
        ssl_gate: cfg.global.maxsslrate.map(crate::freq::Gate::new),
        sslconns: AtomicU32::new(0),
        maxsslconn: cfg.global.maxsslconn.unwrap_or(u32::MAX),
        conn_freed: tokio::sync::Notify::new(),
        accept_paused: AtomicU32::new(0),
        stopping,
        killing,
        hostname,
        bufsize: g.bufsize,
        maxhdr: g.maxhdr,
        pipesize: g.pipesize,
        nosplice: g.nosplice,
        global_logger,
        accept_paused_warned: AtomicBool::new(false),
        handed_over: AtomicBool::new(false),
        started: std::time::SystemTime::now(),
        errors: capture::ErrorLog::default(),
        proc_vars,
        caches: cfg
            .caches
            .iter()
            .map(|c| {
                (
                    c.name.clone(),
                    Arc::new(super::cache::Store::new(c.clone())),
                )
            })
            .collect(),
        nthreads: limits.nthreads,
        workers: super::workers::Workers::new(limits.nthreads),
        server_kills: AtomicU32::new(0),
        rates: rates::Rates::default(),
        tls_files: files,
        tables: super::tables::Tables::build(&cfg),
        peers_tls,
        peering: Default::default(),
        rings,
        forwarders,
        log_tls,
        dns: cfg
            .resolvers
            .iter()
            .map(stats::ResolverStats::new)
            .collect(),
        cfg,
    })
}

/// Resolves a server or log address at start-up.
pub fn resolve(a: &ServerAddr) -> Result<SocketAddr, String> {
    match a {
        ServerAddr::Inet { host, family, port } => {
            let p = match port {
                PortSpec::Fixed(p) => *p,
                _ => 0,
            };
            match host {
                Host::Ip(ip) => Ok(SocketAddr::new(*ip, p)),
                Host::Any => Err("missing address".into()),
                Host::Name(n) => (n.as_str(), p)
                    .to_socket_addrs()
                    .map_err(|e| format!("could not resolve address '{n}': {e}"))?
                    .find(|a| match family {
                        Family::V4 => a.is_ipv4(),
                        Family::V6 => a.is_ipv6(),
                        Family::Unspec => true,
                    })
                    .ok_or_else(|| format!("could not resolve address '{n}'")),
            }
        }
        ServerAddr::Unix(p) => Err(format!("'{p}' is not an IP address")),
        ServerAddr::Abns(p) => Err(format!(
            "abstract namespace address '{p}' is not supported for servers"
        )),
    }
}

/// A server's address at start, by its `init-addr` methods in order
/// (`last,libc` by default), and whether `none` was reached: no address
/// (`0.0.0.0`), the server starts in maintenance.
fn init_addr(s: &weir_config::Server, a: &ServerAddr) -> Result<(SocketAddr, bool), String> {
    use weir_config::InitAddr;
    let port = match a {
        ServerAddr::Inet {
            port: PortSpec::Fixed(p),
            ..
        } => *p,
        _ => 0,
    };
    // (An address written as such needs no method.)
    let literal = matches!(
        a,
        ServerAddr::Inet {
            host: weir_config::addr::Host::Ip(_),
            ..
        }
    );
    // (An SRV name has no address of its own: its records give them.)
    let srv_name = matches!(a, ServerAddr::Inet { host: weir_config::addr::Host::Name(n), .. } if n.starts_with('_'));
    if srv_name && s.resolve.resolvers.is_some() {
        return Ok((
            SocketAddr::new(std::net::Ipv4Addr::UNSPECIFIED.into(), port),
            true,
        ));
    }
    if s.init_addr.is_empty() || literal {
        return resolve(a).map(|x| (x, false));
    }
    let mut last = Err("no 'init-addr' method found an address".to_string());
    for m in &s.init_addr {
        match m {
            InitAddr::Last => {}
            InitAddr::Libc => {
                last = resolve(a).map(|x| (x, false));
                if last.is_ok() {
                    return last;
                }
            }
            InitAddr::Ip(ip) => return Ok((SocketAddr::new(*ip, port), false)),
            InitAddr::None => {
                let any = SocketAddr::new(std::net::Ipv4Addr::UNSPECIFIED.into(), port);
                return Ok((any, true));
            }
        }
    }
    last
}

/// The global logger and one per proxy (same index as `cfg.proxies`);
/// targets shared by several sections share one sink.
/// The global logger, each proxy's, and each `log-forward` section's.
fn open_loggers(
    cfg: &Config,
    hostname: &str,
    rings: &[Arc<log::ring::Ring>],
    errors: &mut Vec<String>,
) -> (Logger, Vec<Logger>, Vec<Logger>) {
    let g = &cfg.global;
    let log_host = g
        .log_send_hostname
        .clone()
        .map(|h| {
            if h.is_empty() {
                hostname.to_string()
            } else {
                h
            }
        })
        .unwrap_or_default();
    let mut cache = HashMap::new();
    let global_tag = g.log_tag.clone().unwrap_or_else(|| "haproxy".into());
    let mut open = |targets: &[weir_config::LogTarget], tag: &str| {
        open_logger(targets, &mut cache, tag, &log_host, rings).unwrap_or_else(|e| {
            errors.push(e);
            Logger::default()
        })
    };
    let global = open(&g.logs, &global_tag);
    let per_proxy = cfg
        .proxies
        .iter()
        .map(|px| open(&px.logs, px.log_tag.as_deref().unwrap_or(&global_tag)))
        .collect();
    let forwarders = cfg
        .log_forwards
        .iter()
        .map(|f| open(&f.logs, &global_tag))
        .collect();
    (global, per_proxy, forwarders)
}

fn open_logger(
    targets: &[weir_config::LogTarget],
    cache: &mut HashMap<String, Arc<log::Sink>>,
    tag: &str,
    host: &str,
    rings: &[Arc<log::ring::Ring>],
) -> Result<Logger, String> {
    let ring = |n: &str| rings.iter().find(|r| r.name == n).cloned();
    let mut sinks = Vec::new();
    for t in targets {
        let key = format!("{:?}", t);
        let sink = match cache.get(&key) {
            Some(s) => s.clone(),
            None => {
                let s = log::open_sink(t, &resolve, &ring)
                    .map_err(|e| format!("[{}] log target: {e}", t.loc))?;
                cache.insert(key, s.clone());
                s
            }
        };
        sinks.push(sink);
    }
    Ok(Logger::new(sinks, tag, host))
}

/// Every backend's live data, and backend indexes by name.
/// Each `fcgi-app` section, with the logger of its `log-stderr` targets
/// (tagged with its name; `global` adds the global targets).
fn fcgi_apps(
    cfg: &Config,
    hostname: &str,
    global: &Logger,
    rings: &[Arc<log::ring::Ring>],
    errors: &mut Vec<String>,
) -> Vec<Arc<crate::fcgi::App>> {
    let mut cache = HashMap::new();
    let host = cfg.global.log_send_hostname.as_ref().map(|h| {
        if h.is_empty() {
            hostname.to_string()
        } else {
            h.clone()
        }
    });
    cfg.fcgi_apps
        .iter()
        .map(|a| {
            let mut targets = a.log_stderr.clone();
            if a.log_stderr_global {
                targets.extend(cfg.global.logs.iter().cloned());
            }
            let host = host.clone().unwrap_or_default();
            let stderr =
                open_logger(&targets, &mut cache, &a.name, &host, rings).unwrap_or_else(|e| {
                    errors.push(e);
                    global.clone()
                });
            Arc::new(crate::fcgi::App {
                conf: a.clone(),
                stderr,
            })
        })
        .collect()
}

fn backends(
    cfg: &Config,
    limits: Limits,
    loggers: &[Logger],
    apps: &[Arc<crate::fcgi::App>],
    files: &tls::store::Store,
    errors: &mut Vec<String>,
) -> (Vec<Arc<BackendRt>>, HashMap<String, BackendId>) {
    // Whether any log line shows a server connection's own address.
    let log_source = cfg.proxies.iter().any(|p| {
        p.log_format.as_ref().is_some_and(|f| {
            f.uses(weir_config::logformat::Var::BackendSrcIp)
                || f.uses(weir_config::logformat::Var::BackendSrcPort)
        })
    });
    let mut backends = Vec::new();
    let mut by_name = HashMap::new();
    for ((pi, px), logger) in cfg.proxies.iter().enumerate().zip(loggers) {
        if !px.kind.is_backend() {
            continue;
        }
        let servers = boxcar::Vec::new();
        let mut infos = Vec::new();
        let refs = cfg.server_refs(pi);
        for s in &px.servers {
            let conf = Arc::new(s.clone());
            if let Some(mut rt) = server(cfg, px, conf, limits.nthreads, files, errors) {
                rt.referenced = refs.contains(&s.name);
                servers.push(Arc::new(rt));
                infos.push(ServerInfo {
                    id: s.uid,
                    weight: s.weight,
                    backup: s.backup,
                    maxconn: s.maxconn,
                    minconn: s.minconn,
                });
            }
        }
        let mut set = ServerSet::new(px.balance, px.hash_type, px.options.allbackups, infos);
        set.set_balance_factor(px.hash_balance_factor);
        for (si, s) in px.servers.iter().enumerate() {
            let unaddressed = servers
                .get(si)
                .is_some_and(|rt| rt.no_addr.load(std::sync::atomic::Ordering::Relaxed));
            if s.disabled || unaddressed {
                set.set_maint(si, true);
                if let Some(rt) = servers.get(si) {
                    super::admin::entered_maint(rt);
                }
            }
        }
        by_name.insert(px.name.clone(), BackendId::new(backends.len()));
        let seed = (std::process::id() as u64) << 32 ^ pi as u64 ^ 0x5eed;
        let has_sni = servers
            .iter()
            .any(|(_, s)| s.tls_ctx.as_ref().is_some_and(|t| t.sni.is_some()));
        let fcgi = px
            .use_fcgi_app
            .as_ref()
            .and_then(|(name, _)| apps.iter().find(|a| a.conf.name == *name).cloned());
        backends.push(Arc::new(BackendRt {
            fcgi,
            has_sni: AtomicBool::new(has_sni),
            log_source,
            nolinger: px.options.nolinger,
            alerts: crate::mail::Alerts::new(cfg, px, sys::hostname),
            sockbufs: (
                cfg.global.sockbufs.rcv_server,
                cfg.global.sockbufs.snd_server,
            ),
            limits: weir_proto::h1::Limits {
                max_head: cfg.global.bufsize,
                max_headers: cfg.global.maxhdr,
                relaxed_target: false,
                ..Default::default()
            },
            name: px.name.clone(),
            kind_word: match px.kind {
                weir_config::ProxyKind::Listen => "proxy",
                _ => "backend",
            },
            proxy: ProxyId::new(pi),
            set: Mutex::new(super::Lb {
                set,
                rng: Rng::new(seed),
            }),
            slots: servers,
            conns: AtomicU32::new(0),
            queued: AtomicU32::new(0),
            smax: AtomicU32::new(0),
            counters: stats::Counters::new(limits.nthreads),
            slot_freed: tokio::sync::Notify::new(),
            downtime: AtomicU64::new(0),
            logger: logger.clone(),
        }));
    }
    (backends, by_name)
}

/// A server's live data: its address resolved, its TLS contexts built
/// (for a configured server, and for `add server`).
pub fn server(
    cfg: &Config,
    px: &Proxy,
    conf: Arc<Server>,
    nthreads: usize,
    files: &tls::store::Store,
    errors: &mut Vec<String>,
) -> Option<ServerRt> {
    let s = &*conf;
    let mut unaddressed = false;
    let target = match &s.addr {
        ServerAddr::Unix(p) => ServerTarget::Unix(p.clone()),
        ServerAddr::Abns(p) => ServerTarget::Unix(format!("\0{p}")),
        a => match init_addr(s, a) {
            Ok((addr, none)) => {
                unaddressed = none;
                ServerTarget::Inet {
                    addr,
                    port: match a {
                        ServerAddr::Inet { port, .. } => *port,
                        _ => PortSpec::Same,
                    },
                }
            }
            Err(e) => {
                errors.push(format!(
                    "[ALERT] parsing [{}] : '{} {}' : {e}",
                    s.loc,
                    px.kind.keyword(),
                    px.name
                ));
                return None;
            }
        },
    };
    let source = match &s.source {
        Some(a) => match resolve(a) {
            Ok(x) => Some(x),
            Err(e) => {
                errors.push(format!(
                    "[ALERT] parsing [{}] : server '{}' source: {e}",
                    s.loc, s.name
                ));
                None
            }
        },
        None => None,
    };
    let mut client_tls = |on: bool| {
        if !on {
            return None;
        }
        match tls::client_config(&s.tls, &cfg.global.tls, files) {
            Ok(c) => Some(Arc::new(c)),
            Err(es) => {
                errors.extend(es.iter().map(|e| tls::server_alert(s, px, e)));
                None
            }
        }
    };
    // (`ssl` then `no-ssl` keeps the settings for `set server … ssl on`.)
    let srv_tls = client_tls(s.tls.enabled || s.tls.prepared);
    let use_ssl = match (s.tls.enabled, s.tls.refused) {
        (true, _) => 1,
        (false, true) => -1,
        (false, false) => 0,
    };
    // (A `tcp-check connect ssl` rule needs TLS settings too.)
    let script_tls = px.options.check_proto == Some(weir_config::CheckProto::TcpCheck)
        && px
            .tcp_check
            .rules
            .iter()
            .any(|r| matches!(r, weir_config::TcpCheckRule::Connect(c) if c.ssl));
    let check_tls = if s.tls.check_ssl
        || script_tls
        || (s.tls.enabled && s.check_port.is_none() && s.check_addr.is_none())
    {
        srv_tls.clone().or_else(|| client_tls(true))
    } else {
        None
    };
    let h2 = if px.mode != Mode::Http {
        super::H2Use::Never
    } else if s.h2 {
        super::H2Use::Always
    } else if s.tls.enabled && s.tls.alpn.iter().flatten().any(|a| a == "h2") {
        super::H2Use::IfNegotiated
    } else {
        super::H2Use::Never
    };
    let (ws_h2, ws_alpn) = ws_route(s, h2, s.tls.enabled);
    let ws_tls = match ws_alpn {
        Some(alpn) => {
            let mut t = s.tls.clone();
            t.alpn = Some(vec![alpn.to_string()]);
            match tls::client_config(&t, &cfg.global.tls, files) {
                Ok(c) => Some(Arc::new(c)),
                Err(es) => {
                    errors.extend(es.iter().map(|e| tls::server_alert(s, px, e)));
                    None
                }
            }
        }
        None => srv_tls.clone(),
    };
    Some(ServerRt {
        name: s.name.clone(),
        dynamic: false,
        deleted: AtomicBool::new(false),
        referenced: false,
        tracks: Default::default(),
        trackers: Default::default(),
        target: Mutex::new(target),
        source,
        send_proxy: s.send_proxy,
        proxy_v2: s.proxy_v2,
        dispatch: s.dispatch,
        cur_conns: AtomicU32::new(0),
        queued: AtomicU32::new(0),
        total: AtomicU64::new(0),
        smax: AtomicU32::new(0),
        counters: stats::Counters::new(nthreads),
        check: Mutex::new(stats::CheckView::new(s.check, s.rise, s.fall)),
        uweight: AtomicU32::new(s.weight),
        conn_gen: AtomicU32::new(0),
        drain: AtomicBool::new(false),
        drain_by_agent: AtomicBool::new(false),
        nolb: AtomicBool::new(false),
        no_addr: AtomicBool::new(unaddressed),
        checks_paused: AtomicBool::new(false),
        agent_paused: AtomicBool::new(false),
        errors_in_row: AtomicU32::new(0),
        observed: Mutex::new(None),
        observe_wake: tokio::sync::Notify::new(),
        fqdn_moved: AtomicBool::new(false),
        fqdn: Mutex::new(match &s.addr {
            ServerAddr::Inet {
                host: weir_config::addr::Host::Name(n),
                ..
            } if !n.starts_with('_') => Some(n.clone()),
            _ => None,
        }),
        from_srv: AtomicBool::new(false),
        agent_down: AtomicBool::new(false),
        agent_view: Mutex::new(stats::CheckView::new(s.agent.enabled, 1, 1)),
        check_restart: AtomicBool::new(false),
        health_forced: std::sync::atomic::AtomicU8::new(0),
        targets: std::sync::Mutex::new(super::CheckTargets::default()),
        maxqueue: s.maxqueue,
        kill: tokio::sync::Notify::new(),
        kills: AtomicU32::new(0),
        shutdown_on_down: s.shutdown_on_down,
        h2,
        ws: super::WsRoute {
            h2: ws_h2,
            tls: ws_tls,
        },
        tls_ctx: srv_tls,
        use_ssl: std::sync::atomic::AtomicI8::new(use_ssl),
        check_tls,
        conf: conf.clone(),
    })
}

/// How a server's WebSocket upgrades go (`ws`), from its protocol `h2`:
/// the protocol, and the one ALPN protocol to offer when TLS offers a
/// list (`ws auto` takes HTTP/1.1 where the list has it, as haproxy does).
fn ws_route(
    s: &weir_config::Server,
    h2: super::H2Use,
    tls: bool,
) -> (super::H2Use, Option<&'static str>) {
    use super::H2Use;
    use weir_config::model::WsMode;
    let alpn = s.tls.alpn.as_deref().filter(|_| tls);
    let offers = |p: &str| alpn.is_some_and(|l| l.iter().any(|a| a == p));
    match s.ws {
        // Its connections are HTTP/1.1 already.
        WsMode::Auto | WsMode::H1 if h2 == H2Use::Never => (H2Use::Never, None),
        WsMode::H1 => (H2Use::Never, alpn.map(|_| "http/1.1")),
        WsMode::H2 if alpn.is_some() => (H2Use::IfNegotiated, Some("h2")),
        WsMode::H2 => (H2Use::Always, None),
        WsMode::Auto if offers("http/1.1") => (H2Use::Never, Some("http/1.1")),
        WsMode::Auto => (h2, None),
    }
}

/// Every enabled frontend with listeners: its backend choices and its
/// bind lines' shared data (TLS contexts, threads, limits).
/// Each backend's `fullconn`, where its servers with a `minconn` reach
/// their `maxconn`: the configured one, else a tenth (rounded up) of the
/// `maxconn` of the frontends whose `default_backend` or named
/// `use_backend` rules lead to it, as haproxy sizes it.
fn fullconns(cfg: &Config, backends: &[Arc<BackendRt>], frontends: &[FrontendRt]) {
    for (bi, be) in backends.iter().enumerate() {
        let reaches = |fe: &FrontendRt| {
            let to = |b: &BackendId| b.index() == bi;
            fe.backend.as_ref().is_some_and(to)
                || fe
                    .switching
                    .iter()
                    .any(|(t, _)| matches!(t, Target::Static(b) if to(b)))
        };
        let fe_max: u64 = frontends
            .iter()
            .filter(|fe| reaches(fe))
            .map(|fe| u64::from(fe.maxconn.load(std::sync::atomic::Ordering::Relaxed)))
            .sum();
        let n = match cfg.proxies.get(be.proxy.index()).and_then(|p| p.fullconn) {
            Some(n) => n,
            None => u32::try_from(fe_max.div_ceil(10)).unwrap_or(u32::MAX),
        };
        be.set().set_fullconn(n);
    }
}

fn frontends(
    cfg: &Config,
    limits: Limits,
    backends: &[Arc<BackendRt>],
    by_name: &HashMap<String, BackendId>,
    loggers: &[Logger],
    files: &tls::store::Store,
    errors: &mut Vec<String>,
) -> Vec<FrontendRt> {
    let mut out = Vec::new();
    for ((pi, px), logger) in cfg.proxies.iter().enumerate().zip(loggers) {
        if !px.kind.is_frontend() || px.disabled || px.binds.is_empty() {
            continue;
        }
        let same_mode: HashMap<String, BackendId> = by_name
            .iter()
            .filter(|(_, &i)| {
                backends
                    .get(i.index())
                    .and_then(|b| cfg.proxies.get(b.proxy.index()))
                    // A `mode tcp` frontend may also reach HTTP backends.
                    .is_some_and(|p| p.mode == px.mode || px.mode == Mode::Tcp)
            })
            .map(|(n, &i)| (n.clone(), i))
            .collect();
        let switching: Vec<(Target, Option<weir_rules::Cond>)> = px
            .use_backends
            .iter()
            .filter_map(|u| {
                let t = match &u.dynamic {
                    Some(f) => Target::Dynamic(f.clone(), same_mode.clone()),
                    None => Target::Static(*by_name.get(&u.name)?),
                };
                Some((t, u.cond.clone()))
            })
            .collect();
        let backend = px
            .default_backend
            .as_ref()
            .map(|(b, _)| b.clone())
            .or_else(|| px.kind.is_backend().then(|| px.name.clone()))
            .and_then(|b| by_name.get(&b).copied());
        let is_http = |b: &BackendId| {
            backends
                .get(b.index())
                .and_then(|b| cfg.proxies.get(b.proxy.index()))
                .is_some_and(|p| p.mode == Mode::Http)
        };
        let reaches_http = px.mode == Mode::Tcp
            && (backend.as_ref().is_some_and(is_http)
                || switching.iter().any(|(t, _)| match t {
                    Target::Static(b) => is_http(b),
                    Target::Dynamic(_, names) => names.values().any(is_http),
                }));
        let fe_max = px
            .maxconn
            .unwrap_or(limits.maxconn)
            .min(limits.maxconn)
            .max(1);
        out.push(FrontendRt {
            name: px.name.clone(),
            proxy: ProxyId::new(pi),
            conns: AtomicU32::new(0),
            maxconn: AtomicU32::new(fe_max),
            paused: AtomicBool::new(false),
            backend,
            switching,
            reaches_http,
            binds: bind_lines(cfg, px, limits.nthreads, fe_max, files, errors),
            logger: logger.clone(),
            total: AtomicU64::new(0),
            smax: AtomicU32::new(0),
            rate_gate: px.rate_limit_sessions.map(crate::freq::Gate::new),
            counters: stats::Counters::new(limits.nthreads),
        });
    }
    out
}

/// A listening address as `show stat` gives it (`addr`).
fn stat_addr(a: &weir_config::addr::BindAddr) -> String {
    use weir_config::addr::BindAddr;
    match a {
        BindAddr::Inet {
            host,
            family,
            ports,
        } => {
            let ip = match host {
                Host::Ip(ip) => ip.to_string(),
                Host::Name(n) => n.clone(),
                Host::Any if *family == Family::V6 => "::".into(),
                Host::Any => "0.0.0.0".into(),
            };
            SocketAddr::new(
                ip.parse().unwrap_or(std::net::Ipv4Addr::UNSPECIFIED.into()),
                ports.0,
            )
            .to_string()
        }
        BindAddr::Unix(p) => format!("unix:{p}"),
        BindAddr::Abns(p) => format!("abns:{p}"),
        BindAddr::Fd(n) => format!("fd:{n}"),
    }
}

/// A frontend's bind lines, in order, each with the threads that accept on
/// it and its TLS context.
fn bind_lines(
    cfg: &Config,
    px: &Proxy,
    nthreads: usize,
    fe_max: u32,
    files: &tls::store::Store,
    errors: &mut Vec<String>,
) -> Vec<FrontBind> {
    let mut out = Vec::new();
    let mut listener_no = 0usize;
    for b in &px.binds {
        let threads: Vec<usize> = match &b.threads {
            Some(t) => t
                .iter()
                .filter(|&&t| t >= 1 && t <= nthreads)
                .map(|t| t - 1)
                .collect(),
            None => (0..nthreads).collect(),
        };
        if threads.is_empty() {
            errors.push(format!(
                "[ALERT] parsing [{}] : 'bind' : no thread of 1-{nthreads} is allowed to accept",
                b.loc
            ));
        }
        let tls = match &b.tls {
            Some(t) => match tls::bind_config(t, &cfg.global.tls, files) {
                Ok(c) => Some(Arc::new(c)),
                Err(es) => {
                    errors.extend(es.iter().map(|e| tls::alert(b, px, e)));
                    None
                }
            },
            None => None,
        };
        // Logs name a listener by its `name`, or by its number in the
        // proxy as HAProxy does (a bind line with several addresses goes
        // by its first one's).
        let stats = px.options.socket_stats.then(|| ListenerStats {
            addr: b.addrs.first().map(stat_addr).unwrap_or_default(),
            smax: AtomicU32::new(0),
            total: AtomicU64::new(0),
            counters: stats::Counters::new(nthreads),
        });
        let info = Arc::new(BindInfo {
            conns: AtomicU32::new(0),
            stats,
            tls,
            label: b
                .name
                .clone()
                .unwrap_or_else(|| (listener_no + 1).to_string()),
            name: b.name.clone(),
            id: b.id.unwrap_or(listener_no as u32 + 1),
            index: out.len(),
            h2: b.h2 && px.mode == Mode::Http,
            h2_upgrade: !b.h1_only && !px.options.disable_h2_upgrade,
            no_http: b.no_http,
            transparent: b.transparent,
            cip_magic: b.accept_cip,
        });
        listener_no += b.addrs.len();
        out.push(FrontBind {
            info,
            threads,
            maxconn: b.maxconn.unwrap_or(fe_max),
            backlog: b.backlog.unwrap_or(fe_max.max(1024)),
        });
    }
    out
}

#[cfg(test)]
#[path = "build_tests.rs"]
mod tests;

/// `cookie … dynamic`: each server of such a backend without a `cookie`
/// value gets the one haproxy makes from the backend's
/// `dynamic-cookie-key` and the server's address at start (a name is
/// resolved as `init-addr libc` does; a server without an address gets
/// none).
pub fn dynamic_cookies(cfg: &mut weir_config::Config) {
    for p in &mut cfg.proxies {
        let (Some(c), Some(key)) = (&p.cookie, &p.dynamic_cookie_key) else {
            continue;
        };
        if !c.dynamic {
            continue;
        }
        for s in p.servers.iter_mut().filter(|s| s.cookie.is_none()) {
            if let Ok(addr) = resolve(&s.addr) {
                s.cookie = Some(weir_rules::hash::dynamic_cookie(key, addr));
            }
        }
    }
}
