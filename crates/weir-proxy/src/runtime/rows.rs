//! `show stat` rows, `show info` fields and `show servers state` lines
//! gathered from the live counters, check views and server sets; the
//! Prometheus exporter's answer built from them.

use crate::rates::View;
use crate::state::{BackendRt, ServerRt, ServerTarget, Shared};
use crate::state::{ProxyId, ServerId};
use crate::stats::Ctr;
use crate::term::{Cause, State, Term};
use std::sync::atomic::Ordering;
use weir_admin::cli::StatFilter;
use weir_admin::stat::{self, Row, ServerState};
use weir_config::Mode;

/// Seconds since `t`.
fn secs_since(t: std::time::Instant) -> u64 {
    t.elapsed().as_secs()
}

/// The answer of `use-service prometheus-exporter` for `uri` (its
/// `scope` parameters pick the objects; an unknown scope is a 400).
pub fn prometheus(sh: &Shared, uri: &str) -> crate::http::rules::Local {
    let query = uri.split_once('?').map_or("", |(_, q)| q);
    let Some(scope) = weir_admin::prom::Scope::parse(query) else {
        let body = b"Invalid scope\n";
        let mut bytes = crate::http::rules::local_headers(400, Some("text/plain"), body.len(), &[]);
        bytes.extend_from_slice(body);
        return crate::http::rules::Local {
            bytes,
            status: 400,
            term: Term::new(Cause::Local, State::Request),
            keep: true,
        };
    };
    let rows = stat_rows(sh, &StatFilter::default());
    let mut text = weir_admin::prom::render(
        &|f| info_field(sh, f),
        env!("CARGO_PKG_VERSION"),
        &rows,
        scope,
    );
    if scope.sticktable {
        let tables: Vec<_> = sh
            .tables
            .all()
            .iter()
            .rev()
            .map(|t| (t.name(), t.def().key.name(), t.def().size, t.used()))
            .collect();
        text.push_str(&weir_admin::prom::render_tables(&tables));
    }
    let mut bytes = crate::http::rules::local_headers(
        200,
        Some("text/plain; version=0.0.4"),
        text.len(),
        &[("cache-control".into(), b"no-cache".to_vec())],
    );
    bytes.extend_from_slice(text.as_bytes());
    crate::http::rules::Local {
        bytes,
        status: 200,
        term: Term::new(Cause::Local, State::Request),
        keep: true,
    }
}

pub(super) fn info(sh: &Shared) -> String {
    stat::info(|f| info_field(sh, f))
}

/// One `show info` field weir measures (`None` for the others).
pub fn info_field(sh: &Shared, f: &str) -> Option<String> {
    let up = sh.started.elapsed().unwrap_or_default().as_secs();
    let start = sh
        .started
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs();
    let sum = |c: Ctr| sh.frontends.iter().map(|f| f.counters.get(c)).sum::<u64>();
    let cum_conns: u64 = sh
        .frontends
        .iter()
        .map(|f| f.total.load(Ordering::Relaxed))
        .sum();
    let (nofile, _) = crate::sys::nofile_limits().unwrap_or((0, 0));
    let listeners: usize = sh.cfg.proxies.iter().map(|p| p.binds.len()).sum::<usize>()
        + sh.cfg.global.stats_sockets.len();
    let actconn = sh.actconn.load(Ordering::Relaxed);
    let version = env!("CARGO_PKG_VERSION");
    Some(match f {
        "Name" => "weir".into(),
        "Version" | "Build info" => version.into(),
        "Release_date" => String::new(),
        "Nbthread" => sh.nthreads.to_string(),
        "Nbproc" | "Process_num" => "1".into(),
        "Pid" => std::process::id().to_string(),
        "Uptime" => stat::uptime(up),
        "Uptime_sec" => up.to_string(),
        "Ulimit-n" | "Maxsock" => nofile.to_string(),
        "Maxconn" => sh.maxconn_now.load(Ordering::Relaxed).to_string(),
        "Hard_maxconn" => sh.maxconn.to_string(),
        "CurrConns" => actconn.to_string(),
        "CumConns" => cum_conns.to_string(),
        "CumReq" => sum(Ctr::Requests).to_string(),
        "CumSslConns" => sum(Ctr::SslSess).to_string(),
        "CurrSslConns" => sh.sslconns.load(Ordering::Relaxed).to_string(),
        "MaxSslConns" => (sh.maxsslconn % u32::MAX).to_string(),
        "ConnRateLimit" => sh.cfg.global.maxconnrate.unwrap_or(0).to_string(),
        "SessRateLimit" => sh.cfg.global.maxsessrate.unwrap_or(0).to_string(),
        "SslRateLimit" => sh.cfg.global.maxsslrate.unwrap_or(0).to_string(),
        "node" => sh.hostname.clone(),
        "Stopping" => u8::from(*sh.stopping.borrow()).to_string(),
        "Jobs" => (actconn as usize + listeners).to_string(),
        "Listeners" => listeners.to_string(),
        "TotalBytesOut" => sum(Ctr::BytesOut).to_string(),
        "Idle_pct" => sh.rates.idle_pct().to_string(),
        "Tasks" => sh.workers.load().tasks.to_string(),
        "Run_queue" => sh.workers.load().queued.to_string(),
        "BytesOutRate" => sh.rates.process().bout_rate.to_string(),
        "Start_time_sec" => start.to_string(),
        // Connections and sessions are one thing in weir.
        "ConnRate" | "SessRate" => sh.rates.process().rate.to_string(),
        "MaxConnRate" | "MaxSessRate" => sh.rates.process().rate_max.to_string(),
        _ => return None,
    })
}

/// The `algo` column: the `balance` keyword's algorithm.
fn algo_name(px: &weir_config::Proxy) -> &'static str {
    use weir_config::{Balance, BalanceKey};
    match (px.balance, &px.balance_key) {
        (Balance::RoundRobin, _) => "roundrobin",
        (Balance::StaticRr, _) => "static-rr",
        (Balance::LeastConn, _) => "leastconn",
        (Balance::First, _) => "first",
        (Balance::Source, _) => "source",
        (Balance::Random { .. }, _) => "random",
        (Balance::Key, Some(BalanceKey::UrlParam(_))) => "url_param",
        (Balance::Key, Some(BalanceKey::Hdr { .. })) => "hdr",
        (Balance::Key, Some(BalanceKey::Hash(_))) => "hash",
        (Balance::Key, Some(BalanceKey::RdpCookie(_))) => "rdp-cookie",
        (Balance::Key, _) => "uri",
    }
}

fn mode_name(m: Mode) -> &'static str {
    match m {
        Mode::Http => "http",
        _ => "tcp",
    }
}

/// Counters every row kind shows the same way.
/// A frontend's listener rows (`option socket-stats`).
fn listener_rows(px: &weir_config::Proxy, fe: &crate::state::FrontendRt, http: bool) -> Vec<Row> {
    let mut rows = Vec::new();
    for (i, b) in fe.binds.iter().enumerate() {
        let Some(s) = &b.info.stats else { continue };
        let c = &s.counters;
        let mut r = Row::new();
        let name = b
            .info
            .name
            .clone()
            .unwrap_or_else(|| format!("sock-{}", b.info.id));
        r.set("pxname", &px.name)
            .set("svname", &name)
            .set("scur", b.info.conns.load(Ordering::Relaxed))
            .set("smax", s.smax.load(Ordering::Relaxed))
            .set("slim", px.binds.get(i).and_then(|l| l.maxconn).unwrap_or(0))
            .set("stot", s.total.load(Ordering::Relaxed))
            .set("bin", c.get(Ctr::BytesIn))
            .set("bout", c.get(Ctr::BytesOut))
            .set("dreq", c.get(Ctr::ReqDenied))
            .set("dresp", c.get(Ctr::RespDenied))
            .set("ereq", c.get(Ctr::ReqErr))
            .set("status", "OPEN")
            .set("pid", 1)
            .set("iid", px.uid)
            .set("sid", b.info.id)
            .set("type", stat::TYPE_LISTENER)
            .set("addr", &s.addr)
            .set("mode", mode_name(px.mode))
            .set("dcon", c.get(Ctr::ConnDenied))
            .set("dses", c.get(Ctr::SessDenied))
            .set("ssl_sess", c.get(Ctr::SslSess))
            .set("ssl_reused_sess", c.get(Ctr::SslReused))
            .set("ssl_failed_handshake", c.get(Ctr::SslFailed));
        if http {
            r.set("wrew", c.get(Ctr::Wrew))
                .set("eint", c.get(Ctr::Eint));
        }
        rows.push(r);
    }
    rows
}

fn common(row: &mut Row, c: &crate::stats::Counters, v: &View, http: bool) {
    row.set("bin", c.get(Ctr::BytesIn))
        .set("bout", c.get(Ctr::BytesOut))
        .set("pid", 1)
        .set("rate", v.rate)
        .set("rate_max", v.rate_max)
        .set("-", "-");
    if http {
        for (col, ctr) in [
            ("hrsp_1xx", Ctr::Hrsp1),
            ("hrsp_2xx", Ctr::Hrsp2),
            ("hrsp_3xx", Ctr::Hrsp3),
            ("hrsp_4xx", Ctr::Hrsp4),
            ("hrsp_5xx", Ctr::Hrsp5),
            ("hrsp_other", Ctr::HrspOther),
        ] {
            row.set(col, c.get(ctr));
        }
    }
}

/// Backend and server columns from the sampled history (`rates`) and the
/// maxima: session rate, average and longest times, the last session.
fn timed(row: &mut Row, c: &crate::stats::Counters, v: &View) {
    let [q, cn, r, t] = v.times;
    row.set("qtime", q)
        .set("ctime", cn)
        .set("rtime", r)
        .set("ttime", t)
        .set("qtime_max", c.max(Ctr::QMax))
        .set("ctime_max", c.max(Ctr::CMax))
        .set("rtime_max", c.max(Ctr::RMax))
        .set("ttime_max", c.max(Ctr::TMax))
        .set("lastsess", v.lastsess.map_or(-1, |s| s as i64));
}

/// `show stat` rows in HAProxy's order: each proxy's frontend, its
/// servers, then its backend.
pub fn stat_rows(sh: &Shared, f: &StatFilter) -> Vec<Row> {
    let mut rows = Vec::new();
    let want = |t: i32| f.types == -1 || f.types & t != 0;
    for (pi, px) in sh.cfg.proxies.iter().enumerate() {
        let iid = px.uid;
        if let Some(p) = &f.proxy {
            if *p != px.name && p.parse::<u32>().ok() != Some(iid) {
                continue;
            }
        }
        let http = px.mode == Mode::Http;
        if want(1) {
            if let Some((fi, fe)) = sh.frontend_of(ProxyId::new(pi)) {
                let mut r = Row::new();
                let c = &fe.counters;
                let v = sh.rates.frontend(fi);
                r.set("pxname", &px.name)
                    .set("svname", "FRONTEND")
                    .set("scur", fe.conns.load(Ordering::Relaxed))
                    .set("smax", fe.smax.load(Ordering::Relaxed))
                    .set("slim", fe.maxconn.load(Ordering::Relaxed))
                    .set(
                        "status",
                        if fe.paused.load(Ordering::Relaxed) {
                            "PAUSED"
                        } else if *sh.stopping.borrow() {
                            "STOP"
                        } else {
                            "OPEN"
                        },
                    )
                    .set("stot", fe.total.load(Ordering::Relaxed))
                    .set("dreq", c.get(Ctr::ReqDenied))
                    .set("dresp", c.get(Ctr::RespDenied))
                    .set("ereq", c.get(Ctr::ReqErr))
                    .set("iid", iid)
                    .set("sid", 0)
                    .set("type", stat::TYPE_FRONTEND)
                    .set("rate_lim", px.rate_limit_sessions.unwrap_or(0))
                    .set("mode", mode_name(px.mode))
                    .set("conn_rate", v.rate)
                    .set("conn_rate_max", v.rate_max)
                    .set("intercepted", 0)
                    .set("dcon", c.get(Ctr::ConnDenied))
                    .set("dses", c.get(Ctr::SessDenied))
                    .set("conn_tot", fe.total.load(Ordering::Relaxed));
                common(&mut r, c, &v, http);
                if px.binds.iter().any(|b| b.tls.is_some()) {
                    r.set("ssl_sess", c.get(Ctr::SslSess))
                        .set("ssl_reused_sess", c.get(Ctr::SslReused))
                        .set("ssl_failed_handshake", c.get(Ctr::SslFailed));
                }
                if http {
                    r.set("req_tot", c.get(Ctr::Requests))
                        .set("req_rate", v.req_rate)
                        .set("req_rate_max", v.req_rate_max)
                        .set("wrew", c.get(Ctr::Wrew))
                        .set("eint", c.get(Ctr::Eint))
                        .set_all(&["comp_in", "comp_out", "comp_byp", "comp_rsp"], 0)
                        .set_all(&["cache_lookups", "cache_hits"], 0);
                }
                spliced(&mut r, c);
                rows.push(r);
                if want(8) && px.options.socket_stats {
                    rows.extend(listener_rows(px, fe, http));
                }
            }
        }
        let Some(bi) = sh.roles(ProxyId::new(pi)).backend else {
            continue;
        };
        let Some(be) = sh.backends.get(bi.index()) else {
            continue;
        };
        let set_states: Vec<_> = {
            let set = be.set();
            (0..be.slot_count()).map(|i| set.state(i)).collect()
        };
        if want(4) {
            for (id, s) in be.servers() {
                let i = id.index();
                let conf = &s.conf;
                let sid = conf.uid;
                if f.sid.is_some_and(|want| want != sid) || conf.dispatch {
                    continue;
                }
                let state = set_states.get(i).copied().flatten();
                let (_, maint, weight, backup) = state.unwrap_or((true, false, 0, false));
                // A drained server shows the weight it keeps (haproxy's
                // effective weight), out of balancing all the same.
                let weight = match s.drain.load(Ordering::Relaxed) {
                    true => s.uweight.load(Ordering::Relaxed),
                    false => weight,
                };
                let mut r = server_row(sh, px, be, i, s, iid, sid, maint, weight, backup);
                let v = sh.rates.server(bi, ServerId::new(i));
                common(&mut r, &s.counters, &v, http);
                if http {
                    r.set("req_tot", s.counters.get(Ctr::Requests));
                }
                timed(&mut r, &s.counters, &v);
                rows.push(r);
            }
        }
        if want(2) && f.sid.is_none() {
            let mut r = backend_row(px, be, iid, &set_states, http);
            let v = sh.rates.backend(bi);
            common(&mut r, &be.counters, &v, http);
            timed(&mut r, &be.counters, &v);
            rows.push(r);
        }
    }
    if f.up || f.no_maint {
        rows.retain(|r| {
            matches!(r.get("svname"), Some("FRONTEND" | "BACKEND"))
                || !f.hides(r.get("status").unwrap_or(""))
        });
    }
    rows
}

#[allow(clippy::too_many_arguments)]
fn server_row(
    sh: &Shared,
    px: &weir_config::Proxy,
    be: &BackendRt,
    i: usize,
    s: &ServerRt,
    iid: u32,
    sid: u32,
    maint: bool,
    weight: u32,
    backup: bool,
) -> Row {
    let conf = &s.conf;
    let ck = s.check.lock().map(|c| c.clone()).ok();
    let c = &s.counters;
    let mut r = Row::new();
    let unaddressed = s.no_addr.load(Ordering::Relaxed);
    // (A check's conditional pass: up, but out of balancing.)
    let up = match s.nolb.load(Ordering::Relaxed) {
        true => "NOLB",
        false => "UP",
    };
    let status = match &ck {
        _ if maint && unaddressed => "MAINT (resolution)".to_string(),
        _ if maint => "MAINT".to_string(),
        _ if s.drain_by_agent.load(Ordering::Relaxed) => "DRAIN (agent)".to_string(),
        _ if s.drain.load(Ordering::Relaxed) => "DRAIN".to_string(),
        Some(v) if v.enabled => {
            let full = v.rise + v.fall - 1;
            match (v.up, v.health) {
                (true, h) if h < full && !v.code.is_empty() => {
                    format!("{up} {}/{}", h + 1 - v.rise, v.fall)
                }
                (true, _) => up.into(),
                (false, 0) => "DOWN".into(),
                (false, h) => format!("DOWN {h}/{}", v.rise),
            }
        }
        _ => "no check".into(),
    };
    let addr = match s.target() {
        _ if unaddressed => String::new(),
        ServerTarget::Inet { addr, .. } => addr.to_string(),
        ServerTarget::Unix(p) => crate::state::unix_text(&p),
    };
    r.set("pxname", &px.name)
        .set("svname", &s.name)
        .set("qcur", s.queued.load(Ordering::Relaxed))
        .set("qmax", 0)
        .set("scur", s.cur_conns.load(Ordering::Relaxed))
        .set("smax", s.smax.load(Ordering::Relaxed))
        .set("stot", s.total.load(Ordering::Relaxed))
        .set("dresp", c.get(Ctr::RespDenied))
        .set("econ", c.get(Ctr::ConnErr))
        .set("eresp", c.get(Ctr::RespErr))
        .set("wretr", c.get(Ctr::Retries))
        .set("wredis", c.get(Ctr::Redispatches))
        .set("status", status)
        .set("weight", weight)
        .set("act", u8::from(!backup))
        .set("bck", u8::from(backup))
        .set("iid", iid)
        .set("sid", sid)
        .set("lbtot", s.total.load(Ordering::Relaxed))
        .set("type", stat::TYPE_SERVER)
        .set("cli_abrt", c.get(Ctr::CliAbort))
        .set("srv_abrt", c.get(Ctr::SrvAbort))
        .set("wrew", c.get(Ctr::Wrew))
        .set("eint", c.get(Ctr::Eint))
        .set_all(&["connect", "reuse"], 0)
        .set_all(
            &[
                "idle_conn_cur",
                "safe_conn_cur",
                "used_conn_cur",
                "need_conn_est",
            ],
            0,
        )
        .set("srv_icur", 0)
        .set("addr", addr)
        .set("mode", mode_name(px.mode))
        .set("uweight", s.uweight.load(Ordering::Relaxed));
    if let Some(m) = be.set().maxconn(i) {
        r.set("slim", m);
    }
    if let Some(q) = conf.maxqueue {
        r.set("qlimit", q);
    }
    if let Some(n) = conf.pool_max_conn {
        r.set("src_ilim", n);
    }
    // A server ramping up after `slowstart` shows how far it got.
    let full = s.uweight.load(Ordering::Relaxed);
    if conf.slowstart.is_some_and(|p| !p.is_zero()) && weight > 0 && weight < full {
        r.set("throttle", u64::from(weight) * 100 / u64::from(full));
    }
    if let Ok(av) = s.agent_view.lock() {
        if av.enabled {
            r.set("agent_rise", av.rise)
                .set("agent_fall", av.fall)
                .set("agent_health", av.health);
            if !av.code.is_empty() {
                r.set("agent_status", av.code)
                    .set("agent_desc", &av.desc)
                    .set("last_agt", &av.info)
                    .set("agent_duration", av.duration_ms.unwrap_or(0));
                if let Some(code) = av.http_code {
                    r.set("agent_code", code);
                }
            } else {
                r.set("agent_status", "INI")
                    .set("agent_desc", "Initializing");
            }
        }
    }
    if let Some(ck) = ck.filter(|v| v.enabled) {
        r.set("chkfail", ck.failed)
            .set("chkdown", ck.downs)
            .set("lastchg", secs_since(ck.changed))
            .set("downtime", ck.downtime().as_secs())
            .set("check_rise", ck.rise)
            .set("check_fall", ck.fall)
            .set("check_health", ck.health);
        if !ck.code.is_empty() {
            r.set("check_status", ck.code)
                .set("check_desc", &ck.desc)
                .set("last_chk", &ck.info);
            if let Some(d) = ck.duration_ms {
                r.set("check_duration", d);
            }
            if let Some(code) = ck.http_code {
                r.set("check_code", code);
            }
        } else {
            // No check has finished yet: haproxy's "INI".
            r.set("check_status", "INI")
                .set("check_desc", "Initializing");
        }
    } else {
        r.set(
            "lastchg",
            sh.started.elapsed().unwrap_or_default().as_secs(),
        );
    }
    if let Some(ck) = &conf.cookie {
        r.set("cookie", ck);
    }
    r
}

fn backend_row(
    px: &weir_config::Proxy,
    be: &BackendRt,
    iid: u32,
    states: &[Option<(bool, bool, u32, bool)>],
    http: bool,
) -> Row {
    let c = &be.counters;
    let usable = |s: &&Option<(bool, bool, u32, bool)>| {
        s.is_some_and(|(up, maint, w, _)| up && !maint && w > 0)
    };
    let act = states
        .iter()
        .filter(usable)
        .filter(|s| s.is_some_and(|s| !s.3))
        .count();
    let bck = states
        .iter()
        .filter(usable)
        .filter(|s| s.is_some_and(|s| s.3))
        .count();
    let weight: u32 = states
        .iter()
        .filter(usable)
        .filter(|s| s.is_some_and(|s| !s.3) || act == 0)
        .map(|s| s.map_or(0, |s| s.2))
        .sum();
    let lbtot: u64 = be
        .servers()
        .map(|(_, s)| s.total.load(Ordering::Relaxed))
        .sum();
    let mut r = Row::new();
    r.set("pxname", &px.name)
        .set("svname", "BACKEND")
        .set("qcur", be.queued.load(Ordering::Relaxed))
        .set("qmax", 0)
        .set("scur", be.conns.load(Ordering::Relaxed))
        .set("smax", be.smax.load(Ordering::Relaxed))
        .set("stot", c.get(Ctr::Sessions))
        .set("dreq", 0)
        .set("dresp", c.get(Ctr::RespDenied))
        .set("econ", c.get(Ctr::ConnErr))
        .set("eresp", c.get(Ctr::RespErr))
        .set("wretr", c.get(Ctr::Retries))
        .set("wredis", c.get(Ctr::Redispatches))
        .set("status", if act + bck > 0 { "UP" } else { "DOWN" })
        .set("weight", weight)
        .set("act", act)
        .set("bck", bck)
        .set("chkdown", 0)
        .set("iid", iid)
        .set("sid", 0)
        .set("lbtot", lbtot)
        .set("type", stat::TYPE_BACKEND)
        .set("cli_abrt", c.get(Ctr::CliAbort))
        .set("srv_abrt", c.get(Ctr::SrvAbort))
        .set("wrew", c.get(Ctr::Wrew))
        .set("eint", c.get(Ctr::Eint))
        .set_all(&["connect", "reuse", "conn_tot"], 0)
        .set("mode", mode_name(px.mode))
        .set("algo", algo_name(px))
        .set("uweight", weight);
    if be.servers().next().is_some() {
        r.set("downtime", be.downtime.load(Ordering::Relaxed));
    }
    if http {
        r.set("req_tot", c.get(Ctr::Requests))
            .set_all(&["comp_in", "comp_out", "comp_byp", "comp_rsp"], 0)
            .set_all(&["cache_lookups", "cache_hits"], 0);
    }
    spliced(&mut r, c);
    r
}

pub(super) fn servers_state(sh: &Shared, only: Option<&str>) -> String {
    if only.is_some_and(|n| !sh.backends.iter().any(|b| b.name == n)) {
        return "Can't find backend.\n".into();
    }
    let mut out = Vec::new();
    for be in &sh.backends {
        if only.is_some_and(|n| n != be.name) {
            continue;
        }
        let px = sh.proxy(be.proxy);
        let set = be.set();
        for (id, s) in be.servers() {
            let i = id.index();
            let conf = &s.conf;
            let targets = s.targets.lock().map(|t| t.clone()).unwrap_or_default();
            if conf.dispatch {
                continue;
            }
            let (up, maint, _, _) = set.state(i).unwrap_or((true, false, 0, false));
            let ck = s.check.lock().map(|c| c.clone()).ok();
            let unaddressed = s.no_addr.load(Ordering::Relaxed);
            let (addr, port) = match s.target() {
                // (`init-addr none`: no address, maintenance by resolution.)
                ServerTarget::Inet { addr, .. } if unaddressed => ("-".to_string(), addr.port()),
                ServerTarget::Inet { addr, .. } => (addr.ip().to_string(), addr.port()),
                ServerTarget::Unix(p) => (crate::state::unix_text(&p), 0),
            };
            let mut admin = 0u8;
            if maint && unaddressed {
                admin |= 0x20;
            } else if maint {
                admin |= 0x01;
            }
            if set.imaint(i) {
                admin |= 0x02;
            }
            if s.from_srv.load(Ordering::Relaxed) {
                admin |= 0x40;
            }
            if conf.disabled {
                admin |= 0x04;
            }
            if s.drain.load(Ordering::Relaxed) {
                admin |= 0x08;
            }
            let code = ck.as_ref().map_or("", |c| c.code);
            let checked = ck.as_ref().is_some_and(|c| c.enabled);
            // Check state bits: configured 0x2, running 0x4, paused
            // by maintenance 0x8.
            let check_state = match checked {
                false => 0,
                true if s.checks_paused.load(Ordering::Relaxed) => 0x2,
                true if maint => 0x2 | 0x4 | 0x8,
                true => 0x2 | 0x4,
            };
            out.push(ServerState {
                be_id: px.uid,
                be_name: be.name.clone(),
                srv_id: conf.uid,
                srv_name: s.name.clone(),
                addr,
                // (Running 2; stopping, a check's NOLB, 3.)
                op_state: match (up && !maint, s.nolb.load(Ordering::Relaxed)) {
                    (true, true) => 3,
                    (true, false) => 2,
                    (false, _) => 0,
                },
                admin_state: admin,
                uweight: s.uweight.load(Ordering::Relaxed),
                iweight: conf.weight,
                since_change: ck.as_ref().map_or(0, |c| secs_since(c.changed)),
                check_status: stat::check_status_number(code),
                check_result: stat::check_result_number(code),
                check_health: match &ck {
                    Some(c) if !maint => c.health,
                    _ => 0,
                },
                check_state,
                be_forced_id: px.id.is_some(),
                srv_forced_id: conf.id.is_some(),
                port,
                use_ssl: s.use_ssl.load(Ordering::Relaxed),
                check_port: targets.check_port.or(conf.check_port).unwrap_or(0),
                check_addr: targets
                    .check_addr
                    .map(|a| a.to_string())
                    .or_else(|| conf.check_addr.clone()),
                // Configured 0x2, running 0x4, paused 0x8, an agent 0x10.
                agent_state: match conf.agent.enabled {
                    false => 0,
                    true if s.agent_paused.load(Ordering::Relaxed) => 0x12,
                    true => 0x16,
                },
                agent_addr: targets
                    .agent_addr
                    .map(|a| a.to_string())
                    .or_else(|| conf.agent.addr.clone()),
                fqdn: s.fqdn.lock().ok().and_then(|f| f.clone()),
                srvrecord: match &conf.addr {
                    weir_config::addr::ServerAddr::Inet {
                        host: weir_config::addr::Host::Name(n),
                        ..
                    } if n.starts_with('_') => Some(n.clone()),
                    _ => None,
                },
                agent_port: targets.agent_port.or(conf.agent.port).unwrap_or(0),
            });
        }
    }
    stat::servers_state(&out)
}

/// The HTTP/1 body bytes a frontend or backend moved with splice(2)
/// (haproxy's h1 module counters).
fn spliced(r: &mut Row, c: &crate::stats::Counters) {
    r.set("h1_spliced_bytes_in", c.get(Ctr::H1SplicedIn))
        .set("h1_spliced_bytes_out", c.get(Ctr::H1SplicedOut));
}
