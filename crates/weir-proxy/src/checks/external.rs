//! `option external-check`: each check runs the section's `external-check
//! command` with HAProxy's arguments (`<proxy_address> <proxy_port>
//! <server_address> <server_port>`) and environment (`HAPROXY_*`, and
//! `PATH` from `external-check path`, nothing else); exit status 0 passes.
//! A command still running after `inter` is killed and the check times out.

use crate::state::{BackendRt, H2Use, ServerRt, ServerTarget};
use crate::stats::CheckResult;
use std::process::Stdio;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::time::Instant;
use weir_config::addr::{BindAddr, Host};
use weir_config::Proxy;

/// The first listener's address and port, as the arguments give them.
fn listener(px: &Proxy) -> (String, String) {
    let first = px.binds.first().and_then(|b| b.addrs.first());
    match first {
        Some(BindAddr::Inet { host, ports, .. }) => {
            let ip = match host {
                Host::Ip(ip) => ip.to_string(),
                Host::Name(n) => n.clone(),
                Host::Any => "0.0.0.0".into(),
            };
            (ip, ports.0.to_string())
        }
        Some(BindAddr::Unix(p) | BindAddr::Abns(p)) => (p.clone(), "NOT_USED".into()),
        _ => ("NOT_USED".into(), "NOT_USED".into()),
    }
}

/// The command's arguments and environment for server `rt` of `be`.
fn invocation(
    px: &Proxy,
    be: &BackendRt,
    rt: &ServerRt,
) -> (Vec<String>, Vec<(&'static str, String)>) {
    let (paddr, pport) = listener(px);
    let (saddr, sport) = match rt.target() {
        ServerTarget::Inet { addr, .. } => (addr.ip().to_string(), addr.port().to_string()),
        ServerTarget::Unix(p) => (p, String::new()),
    };
    let s = &*rt.conf;
    let proto = match (px.mode, rt.h2) {
        (weir_config::Mode::Http, H2Use::Always) => "h2",
        (weir_config::Mode::Http, _) => "h1",
        _ => "tcp",
    };
    let unset = |v: &str| {
        if v == "NOT_USED" {
            String::new()
        } else {
            v.to_string()
        }
    };
    let env = vec![
        ("HAPROXY_PROXY_ADDR", unset(&paddr)),
        ("HAPROXY_PROXY_ID", px.uid.to_string()),
        ("HAPROXY_PROXY_NAME", be.name.clone()),
        ("HAPROXY_PROXY_PORT", unset(&pport)),
        ("HAPROXY_SERVER_ADDR", saddr.clone()),
        (
            "HAPROXY_SERVER_CURCONN",
            rt.cur_conns.load(Ordering::Relaxed).to_string(),
        ),
        ("HAPROXY_SERVER_ID", s.uid.to_string()),
        ("HAPROXY_SERVER_MAXCONN", s.maxconn.unwrap_or(0).to_string()),
        ("HAPROXY_SERVER_NAME", s.name.clone()),
        ("HAPROXY_SERVER_PORT", sport.clone()),
        (
            "HAPROXY_SERVER_SSL",
            u8::from(rt.tls().is_some()).to_string(),
        ),
        ("HAPROXY_SERVER_PROTO", proto.into()),
        ("PATH", px.external_check.path.clone().unwrap_or_default()),
    ];
    (vec![paddr, pport, saddr, sport], env)
}

/// Runs one external check of server `rt`.
pub(super) async fn run(px: &Proxy, be: &BackendRt, rt: &ServerRt, inter: Duration) -> CheckResult {
    let started = Instant::now();
    let done = |ok: bool, reason: &str, code: i32| CheckResult {
        ok,
        reason: reason.into(),
        detail: format!(", code: {code}"),
        duration: started.elapsed(),
        log_info: false,
    };
    let Some(cmd) = px.external_check.command.as_deref() else {
        return done(false, "External check error", -1);
    };
    let (args, env) = invocation(px, be, rt);
    let child = tokio::process::Command::new(cmd)
        .args(&args)
        .env_clear()
        .envs(env)
        .stdin(Stdio::null())
        // What it prints would mix with weir's own stdout (a log target).
        .stdout(Stdio::null())
        .kill_on_drop(true)
        .spawn();
    let Ok(mut child) = child else {
        return done(false, "External check error", -1);
    };
    match tokio::time::timeout(inter, child.wait()).await {
        Ok(Ok(st)) if st.success() => done(true, "External check passed", 0),
        Ok(Ok(st)) => done(false, "External check error", st.code().unwrap_or(-1)),
        Ok(Err(_)) => done(false, "External check error", -1),
        Err(_) => {
            let _ = child.start_kill();
            let _ = child.wait().await;
            done(false, "External check timeout", 0)
        }
    }
}
