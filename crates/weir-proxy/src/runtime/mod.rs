//! Runtime API commands run on live state. This module dispatches them
//! and changes servers and frontends (state, weight, address, limits,
//! checks) through the same server set the balancer and the health checks
//! use; `rows` gathers `show stat`/`show info` values from the counters,
//! `conns` counts servers' connections in use and idle,
//! `patterns` serves maps and ACL files, `diag` errors and threads.

mod conns;
mod diag;
mod ocsp;
mod patterns;
mod peers;
mod rows;
mod servers;
mod sess;
mod ssl;
mod stats_page;
pub mod tables;

pub use rows::{info_field, prometheus, stat_rows};

/// What the HTTP layer answers through this layer (`http::service`).
pub fn services() -> crate::http::service::Services {
    crate::http::service::Services {
        prometheus,
        stats_page: stats_page::serve,
        stat_rows,
    }
}

use crate::state::{admin, BackendRt, ServerRt, Shared};
use diag::{show_errors, threads};
use patterns::{get_pattern, ref_sel, show_patterns, with_patterns};
use rows::{info, servers_state};
use std::sync::atomic::Ordering;
use weir_admin::cli::{AdminState, Command, Format, ServerRef, Weight};
use weir_admin::stat;

/// Runs one command (its level was checked), including those that ask the
/// worker threads (`show sess`, `shutdown session`); the answer without
/// the blank line that ends it.
pub async fn run_async(sh: &std::sync::Arc<Shared>, cmd: &Command) -> String {
    match cmd {
        Command::ShowSess(sel) => sess::show(sh, *sel).await,
        Command::ShutdownSession(id) => sess::shutdown(sh, *id).await,
        Command::AddServer(r, args) => servers::add(sh, r, args),
        _ => run(sh, cmd),
    }
}

/// `get var`: a `proc.*` variable's type and value (with no line end of
/// its own: haproxy 2.6 ends this answer with a single newline).
fn get_var(sh: &Shared, name: &str) -> String {
    let found = name
        .starts_with("proc.")
        .then(|| sh.proc_vars.get(name))
        .flatten();
    match found {
        Some(v) => {
            let (ty, val) = weir_rules::vars::describe(&v);
            format!("{name}: type={ty} value=<{val}>")
        }
        None => "Variable not found.\n".into(),
    }
}

/// `set var`: evaluates an expression or a format string against the
/// process's variables and stores it.
fn set_var(sh: &Shared, name: &str, fmt: bool, value: &str) -> String {
    if !name.starts_with("proc.") || !weir_rules::vars::is_var(name) {
        return "'set var' only supports process-wide variables ('proc.' scope).\n".into();
    }
    let kw = if fmt { "set-var-fmt" } else { "set-var" };
    let action = format!("{kw}({name})");
    let load = |f: &str| Err(format!("cannot read '{f}' from the CLI"));
    let parsed = weir_rules::vars::parse_set(&action, &[value.to_string()], &load);
    match parsed {
        Some(Ok(line)) => {
            sh.proc_vars.init(std::slice::from_ref(&line));
            String::new()
        }
        Some(Err(e)) => format!("{e}\n"),
        None => "internal: not a set-var\n".into(),
    }
}

/// Runs one command that the calling thread answers alone (its level was
/// checked); the answer without the blank line that ends it.
pub fn run(sh: &Shared, cmd: &Command) -> String {
    match cmd {
        Command::ShowSess(_)
        | Command::ShutdownSession(_)
        | Command::GetSocks
        | Command::ExperimentalMode(_) => {
            "This command is only answered on the stats socket.\n".into()
        }
        Command::ShowInfo(Format::Plain) => info(sh),
        Command::ShowInfo(Format::Typed) => weir_admin::typed::info_typed(|f| info_field(sh, f)),
        Command::ShowInfo(Format::Json) => weir_admin::typed::info_json(|f| info_field(sh, f)),
        Command::ShowStat(f, Format::Plain) => stat::csv(&stat_rows(sh, f)),
        Command::ShowStat(f, Format::Typed) => weir_admin::typed::stat_typed(&stat_rows(sh, f)),
        Command::ShowStat(f, Format::Json) => weir_admin::typed::stat_json(&stat_rows(sh, f)),
        Command::ShowServersState(b) => servers_state(sh, b.as_deref()),
        Command::ShowServersConn(b) => conns::show(sh, b.as_deref()),
        Command::ShowResolvers(r) => crate::dns::show(sh, r.as_deref()),
        Command::GetVar(name) => get_var(sh, name),
        Command::Ssl(c) => ssl::run(sh, c),
        Command::Table(t) => tables::run(sh, t, true),
        Command::ShowPeers(s) => peers::show(sh, s.as_deref()),
        Command::SetVar { name, fmt, value } => set_var(sh, name, *fmt, value),
        Command::ShowBackend => {
            let mut out = String::from("# name\n");
            for b in &sh.backends {
                out.push_str(&b.name);
                out.push('\n');
            }
            out
        }
        Command::ShowEnv(var) => {
            let mut out = String::new();
            for (k, v) in std::env::vars() {
                if var.as_deref().is_none_or(|n| n == k) {
                    out.push_str(&format!("{k}={v}\n"));
                }
            }
            if out.is_empty() {
                out = "Variable not found\n".into();
            }
            out
        }
        Command::GetWeight(r) => match find(sh, r) {
            Ok((be, i, s)) => {
                let cur = be.set().state(i).map_or(0, |s| s.2);
                let init = s.conf.weight;
                format!("{cur} (initial {init})\n")
            }
            Err(e) => e,
        },
        Command::SetWeight(r, w) => with_server(sh, r, |be, i, s| set_weight(be, i, s, *w)),
        Command::SetState(r, st) => with_server(sh, r, |be, i, s| set_state(sh, be, i, s, *st)),
        Command::EnableServer(r) => {
            with_server(sh, r, |be, i, s| set_state(sh, be, i, s, AdminState::Ready))
        }
        Command::DisableServer(r) => {
            with_server(sh, r, |be, i, s| set_state(sh, be, i, s, AdminState::Maint))
        }
        Command::SetServerSsl(r, on) => with_server(sh, r, |_, _, s| servers::set_ssl(s, *on)),
        Command::SetServerFqdn(r, name) => {
            with_server(sh, r, |be, _, s| crate::dns::set_fqdn(sh, be, s, name))
        }
        Command::SetServerCheck(r, c) => {
            let be = sh.backends.iter().find(|b| b.name == r.backend);
            match (find(sh, r), be) {
                (Ok((_, i, _)), Some(be)) => {
                    crate::checks::force::apply(sh, be, crate::state::ServerId::new(i), c)
                }
                (Err(e), _) => e,
                (Ok(_), None) => "No such backend.\n".into(),
            }
        }
        Command::DelServer(r) => servers::delete(sh, r),
        Command::AddServer(..) => "This command is only answered on the stats socket.\n".into(),
        Command::EnableHealth(r) | Command::DisableHealth(r) => {
            let pause = matches!(cmd, Command::DisableHealth(_));
            with_server(sh, r, |_, _, s| {
                s.checks_paused.store(pause, Ordering::Relaxed);
                String::new()
            })
        }
        Command::EnableAgent(r) | Command::DisableAgent(r) => {
            let pause = matches!(cmd, Command::DisableAgent(_));
            with_server(sh, r, |_, _, s| {
                if !s.conf.agent.enabled {
                    return "Agent was not configured on this server, cannot enable.\n".into();
                }
                s.agent_paused.store(pause, Ordering::Relaxed);
                String::new()
            })
        }
        Command::SetAddr(r, a, p) => with_server(sh, r, |be, i, s| {
            let unaddressed = s.no_addr.load(Ordering::Relaxed);
            let out = set_addr(s, a, *p);
            // A server that started without an address leaves the
            // maintenance that stood for it.
            if unaddressed && !s.no_addr.load(Ordering::Relaxed) {
                be.set().set_maint(i, false);
            }
            out
        }),
        Command::SetMaxconnGlobal(n) => {
            if *n == 0 || *n > sh.maxconn {
                return "Value out of range.\n".into();
            }
            sh.maxconn_now.store(*n, Ordering::Relaxed);
            sh.conn_freed.notify_waiters();
            String::new()
        }
        Command::SetMaxconnFrontend(name, n) => with_frontend(sh, name, |fe| {
            fe.maxconn
                .store((*n).clamp(1, sh.maxconn), Ordering::Relaxed);
            sh.conn_freed.notify_waiters();
            String::new()
        }),
        Command::SetMaxconnServer(r, n) => with_server(sh, r, |be, i, _| {
            be.set().set_maxconn(i, (*n > 0).then_some(*n));
            be.slot_freed.notify_waiters();
            String::new()
        }),
        Command::EnableFrontend(name) | Command::DisableFrontend(name) => {
            let pause = matches!(cmd, Command::DisableFrontend(_));
            with_frontend(sh, name, |fe| {
                fe.paused.store(pause, Ordering::Relaxed);
                sh.conn_freed.notify_waiters();
                String::new()
            })
        }
        Command::ShowErrors(px, which) => show_errors(sh, px.as_deref(), *which),
        Command::ShutdownSessionsServer(r) => with_server(sh, r, |_, _, s| {
            s.conn_gen.fetch_add(1, Ordering::Relaxed);
            sh.kill_sessions(s);
            String::new()
        }),
        Command::SetProfiling(m) => {
            if m == "on" && crate::profile::mode_name() != "on" {
                crate::profile::reset();
            }
            crate::profile::set_mode(m);
            String::new()
        }
        Command::ShowProfiling => crate::profile::show(),
        Command::ShowPatterns { map, which } => show_patterns(*map, which.as_deref()),
        Command::GetPattern { map, which, value } => {
            with_patterns(*map, which, |p| get_pattern(p, value))
        }
        Command::AddPattern {
            map,
            which,
            entries,
        } => with_patterns(*map, which, |p| {
            let mut out = String::new();
            for (key, value) in entries {
                if let Err(e) = p.add(key, value) {
                    out.push_str(&format!("'{key}' is not a valid pattern here: {e}\n"));
                }
            }
            out
        }),
        Command::DelPattern { map, which, sel } => with_patterns(*map, which, |p| {
            if p.del(&ref_sel(sel)) > 0 {
                String::new()
            } else {
                "Key not found.\n".into()
            }
        }),
        Command::SetPattern { which, sel, value } => with_patterns(true, which, |p| {
            if p.set(&ref_sel(sel), value) > 0 {
                String::new()
            } else {
                "Entry not found.\n".into()
            }
        }),
        Command::ClearPatterns { map, which } => with_patterns(*map, which, |p| {
            p.clear();
            String::new()
        }),
        Command::ShowActivity => crate::profile::activity(sh.nthreads),
        Command::ShowThreads => threads(),
        Command::ClearCounters { all } => {
            clear_counters(sh, *all);
            String::new()
        }
        // Session commands are handled by the socket.
        Command::Help
        | Command::Prompt
        | Command::Quit
        | Command::Lower(_)
        | Command::ShowCliLevel => String::new(),
    }
}

/// A server by `<backend>/<server>`, or the error line.
fn find<'a>(sh: &'a Shared, r: &ServerRef) -> Result<(&'a BackendRt, usize, &'a ServerRt), String> {
    let be = sh
        .backends
        .iter()
        .find(|b| b.name == r.backend)
        .ok_or_else(|| "No such backend.\n".to_string())?;
    let (i, s) = be
        .servers()
        .find(|(_, s)| s.name == r.server)
        .ok_or_else(|| "No such server.\n".to_string())?;
    Ok((be, i.index(), s))
}

fn with_frontend(
    sh: &Shared,
    name: &str,
    f: impl FnOnce(&crate::state::FrontendRt) -> String,
) -> String {
    match sh.frontends.iter().find(|fe| fe.name == name) {
        Some(fe) => f(fe),
        None => "No such frontend.\n".into(),
    }
}

/// `clear counters`: the maxima start again from the current values;
/// `all`: every counter starts again from zero.
fn clear_counters(sh: &Shared, all: bool) {
    let reset = |max: &std::sync::atomic::AtomicU32, cur: u32| max.store(cur, Ordering::Relaxed);
    sh.rates.clear_max();
    for fe in &sh.frontends {
        reset(&fe.smax, fe.conns.load(Ordering::Relaxed));
        if all {
            fe.counters.clear();
            fe.total.store(0, Ordering::Relaxed);
        }
    }
    for be in &sh.backends {
        reset(&be.smax, be.conns.load(Ordering::Relaxed));
        be.counters.clear_max();
        if all {
            be.counters.clear();
        }
        for (_, s) in be.servers() {
            reset(&s.smax, s.cur_conns.load(Ordering::Relaxed));
            s.counters.clear_max();
            if all {
                s.counters.clear();
                s.total.store(0, Ordering::Relaxed);
            }
        }
    }
}

fn with_server(
    sh: &Shared,
    r: &ServerRef,
    f: impl FnOnce(&BackendRt, usize, &ServerRt) -> String,
) -> String {
    match find(sh, r) {
        Ok((be, i, s)) => f(be, i, s),
        Err(e) => e,
    }
}

fn set_weight(be: &BackendRt, i: usize, s: &ServerRt, w: Weight) -> String {
    let init = s.conf.weight;
    let w = match w {
        Weight::Absolute(n) => n,
        Weight::Percent(p) => (u64::from(init) * u64::from(p) / 100).min(256) as u32,
    };
    admin::set_weight(be, i, s, w);
    String::new()
}

/// Changes a server's administrative state; the servers that track it
/// inherit a maintenance.
fn set_state(sh: &Shared, be: &BackendRt, i: usize, s: &ServerRt, st: AdminState) -> String {
    admin::set_state_tracked(sh, be, i, s, st);
    String::new()
}

fn set_addr(s: &ServerRt, a: &str, port: Option<u16>) -> String {
    let Ok(ip) = a.parse::<std::net::IpAddr>() else {
        return format!("'{a}' is not a valid IP address.\n");
    };
    let old = match admin::set_addr(s, ip, port) {
        Ok(old) => old,
        Err(e) => return format!("{e}\n"),
    };
    let mut msg = format!("IP changed from '{}' to '{ip}'", old.ip());
    match port {
        Some(p) => msg.push_str(&format!(", port changed from '{}' to '{p}'", old.port())),
        None => msg.push_str(", no port change"),
    }
    msg.push_str(" by 'stats socket command'\n");
    msg
}
