//! Servers added and removed at run time (`add server`, `del server`), and
//! `set server … ssl`: the backend's server list grows without a lock on
//! the request path (see `BackendRt::slots`), answers worded as haproxy's.

use crate::state::{self, track, BackendId, BackendRt, ServerId, ServerRt, Shared};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use weir_admin::cli::ServerRef;
use weir_balance::ServerInfo;

/// `add server <bk>/<srv> <addr> [options]`: a server in maintenance,
/// with its checks paused, until `enable server` (and `enable health`).
pub fn add(sh: &Arc<Shared>, r: &ServerRef, args: &[String]) -> String {
    match try_add(sh, r, args) {
        Ok(()) => "New server registered.\n".into(),
        Err(e) => format!("{e}\n"),
    }
}

fn try_add(sh: &Arc<Shared>, r: &ServerRef, args: &[String]) -> Result<(), String> {
    let (bi, be) = backend(sh, &r.backend)?;
    let px = sh.proxy(be.proxy);
    let mut conf = weir_config::dynamic_server(&r.server, args)?;
    if !be.set().takes_new_servers() {
        return Err("Backend must use a dynamic load balancing to support dynamic servers.".into());
    }
    if conf.h2 && px.mode != weir_config::Mode::Http {
        return Err("MUX protocol is not usable for server.".into());
    }
    conf.uid = server_uid(be, conf.id)?;
    if be.server_named(&conf.name).is_some() {
        return Err("Already exists a server with the same name in backend.".into());
    }
    if let Some(t) = &conf.track {
        track::target(&sh.backends, &be.name, t)?;
    }
    let mut errors = Vec::new();
    let conf = Arc::new(conf);
    let built = state::build::server(
        &sh.cfg,
        px,
        conf.clone(),
        sh.nthreads,
        &sh.tls_files,
        &mut errors,
    );
    let Some(mut rt) = built.filter(|_| errors.is_empty()) else {
        let why: Vec<&str> = errors
            .iter()
            .map(|e| e.rsplit(" : ").next().unwrap_or(e))
            .collect();
        return Err(why.join("\n"));
    };
    rt.dynamic = true;
    if rt.tls_ctx.as_ref().is_some_and(|t| t.sni.is_some()) {
        be.has_sni.store(true, Ordering::Relaxed);
    }
    // Unlike a configured one, a dynamic server's checks go over TLS only
    // with `check-ssl` (as haproxy's).
    let script = px.options.check_proto == Some(weir_config::CheckProto::TcpCheck);
    if !conf.tls.check_ssl && !script {
        rt.check_tls = None;
    }
    // Health and agent checks wait for `enable health|agent`, as haproxy's.
    rt.checks_paused.store(conf.check, Ordering::Relaxed);
    rt.agent_paused.store(true, Ordering::Relaxed);
    let id = {
        let mut set = be.set();
        let slot = be.slots.push(Arc::new(rt));
        let i = set.add(ServerInfo {
            id: conf.uid,
            weight: conf.weight,
            backup: conf.backup,
            maxconn: conf.maxconn,
            minconn: conf.minconn,
        });
        if i != slot {
            return Err("internal: the server list and the balancer disagree".into());
        }
        ServerId::new(i)
    };
    if let Some(t) = &conf.track {
        track::attach(&sh.backends, (bi, id), &be.name, t)?;
    } else if conf.check {
        crate::checks::spawn_one(sh, be, id, std::time::Duration::ZERO);
    }
    if conf.agent.enabled {
        crate::checks::spawn_agent(sh, be, id, std::time::Duration::ZERO);
    }
    Ok(())
}

/// The id of a new server: the one asked for when free, else the first
/// free from 1.
fn server_uid(be: &BackendRt, asked: Option<u32>) -> Result<u32, String> {
    let used = |n: u32| be.servers().find(|(_, s)| s.conf.uid == n);
    match asked {
        Some(n) => match used(n) {
            Some((_, s)) => Err(format!(
                "'id' : custom id {n} already used at {} ('server {}').",
                s.conf.loc, s.name
            )),
            None => Ok(n),
        },
        None => Ok((1..).find(|n| used(*n).is_none()).unwrap_or(u32::MAX)),
    }
}

fn backend<'a>(sh: &'a Shared, name: &str) -> Result<(BackendId, &'a Arc<BackendRt>), String> {
    sh.backends
        .iter()
        .enumerate()
        .find(|(_, b)| b.name == name)
        .map(|(i, b)| (BackendId::new(i), b))
        .ok_or_else(|| "No such backend.".to_string())
}

/// `del server <bk>/<srv>`: a server in maintenance, with no connection
/// in use or queued, that nothing in the configuration names.
pub fn delete(sh: &Shared, r: &ServerRef) -> String {
    match try_delete(sh, r) {
        Ok(()) => "Server deleted.\n".into(),
        Err(e) => format!("{e}\n"),
    }
}

fn try_delete(sh: &Shared, r: &ServerRef) -> Result<(), String> {
    let (bi, be) = backend(sh, &r.backend)?;
    let id = be
        .server_named(&r.server)
        .ok_or_else(|| "No such server.".to_string())?;
    let s = be.server(id);
    let tracked = s.trackers.lock().map(|l| !l.is_empty()).unwrap_or(true);
    let scripted = sh
        .lua_pins
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .contains(&(bi.index(), id));
    if s.referenced || tracked || scripted {
        return Err("This server cannot be removed at runtime due to other configuration elements pointing to it.".into());
    }
    let mut set = be.set();
    let i = id.index();
    let in_maint = set.state(i).is_some_and(|st| st.1) || set.imaint(i);
    if !in_maint {
        return Err("Only servers in maintenance mode can be deleted.".into());
    }
    if s.cur_conns.load(Ordering::Relaxed) > 0 || s.queued.load(Ordering::Relaxed) > 0 {
        return Err("Server still has connections attached to it, cannot remove it.".into());
    }
    // Under the set's lock no pick can take it; it stays in maintenance
    // for good, and its idle connections are never reused.
    set.set_maint(i, true);
    s.deleted.store(true, Ordering::Relaxed);
    s.conn_gen.fetch_add(1, Ordering::Relaxed);
    drop(set);
    track::detach(&sh.backends, (bi, id));
    Ok(())
}

/// `set server <bk>/<srv> ssl on|off`: only for a server whose TLS
/// settings were prepared (`ssl` on its line or its `default-server`).
pub fn set_ssl(s: &ServerRt, on: bool) -> String {
    if s.tls_ctx.is_none() {
        return "'set server <srv> ssl' cannot be set.  default-server should define ssl settings\n"
            .into();
    }
    s.use_ssl.store(i8::from(on), Ordering::Relaxed);
    // Connections opened with the other setting are not reused.
    s.conn_gen.fetch_add(1, Ordering::Relaxed);
    "server ssl setting updated.\n".into()
}
