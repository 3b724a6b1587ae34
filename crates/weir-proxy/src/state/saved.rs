//! Servers' saved state (`server-state-file`, `load-server-state-from-file`),
//! applied before any traffic: each saved server's address and port, its
//! weight (unless the configuration's changed since), forced maintenance or
//! drain, and a checked server's down state. The file is what `show
//! servers state` wrote before a reload.

use super::{admin, BackendRt, ServerId, ServerTarget, Shared};
use std::collections::HashMap;
use std::net::IpAddr;
use std::path::PathBuf;
use weir_admin::cli::AdminState;
use weir_admin::stat::{parse_servers_state, ServerState};
use weir_config::{Global, LoadState, Proxy};

/// Applies the state files the backends name; returns warnings (files
/// that cannot be read, lines that cannot be parsed).
pub fn load(sh: &Shared) -> Vec<String> {
    let mut files: HashMap<PathBuf, Vec<ServerState>> = HashMap::new();
    let mut warnings = Vec::new();
    for be in &sh.backends {
        let px = sh.proxy(be.proxy);
        let Some(path) = path_for(&sh.cfg.global, px) else {
            continue;
        };
        let saved = files.entry(path.clone()).or_insert_with(|| {
            let text = match std::fs::read_to_string(&path) {
                Ok(t) => t,
                Err(e) => {
                    warnings.push(format!(
                        "server-state-file: cannot read '{}': {e}",
                        path.display()
                    ));
                    return Vec::new();
                }
            };
            match parse_servers_state(&text) {
                Ok((saved, bad)) => {
                    let p = path.display();
                    warnings.extend(
                        bad.into_iter()
                            .map(|w| format!("server-state-file '{p}': {w}")),
                    );
                    saved
                }
                Err(e) => {
                    warnings.push(format!("server-state-file '{}': {e}", path.display()));
                    Vec::new()
                }
            }
        });
        for s in saved.iter().filter(|s| s.be_name == be.name) {
            if let Some(id) = be.server_named(&s.srv_name) {
                apply(be, id, s);
            }
        }
    }
    warnings
}

/// The file a backend loads: the global one, or its own name (relative
/// names under `server-state-base`).
fn path_for(g: &Global, px: &Proxy) -> Option<PathBuf> {
    let name = match px.load_state {
        LoadState::None => return None,
        LoadState::Global => g.server_state_file.clone()?,
        LoadState::Local => px
            .state_file_name
            .clone()
            .unwrap_or_else(|| px.name.clone()),
    };
    let p = PathBuf::from(name);
    Some(match &g.server_state_base {
        Some(base) if p.is_relative() => PathBuf::from(base).join(p),
        _ => p,
    })
}

fn apply(be: &BackendRt, id: ServerId, s: &ServerState) {
    let rt = be.server(id);
    let i = id.index();
    if let Ok(ip) = s.addr.parse::<IpAddr>() {
        // A port taken from the client's (`+N`, none) stays so.
        let fixed = matches!(
            rt.target(),
            ServerTarget::Inet {
                port: weir_config::addr::PortSpec::Fixed(_),
                ..
            }
        );
        let port = (fixed && s.port != 0).then_some(s.port);
        let _ = admin::set_addr(rt, ip, port);
    }
    if s.iweight == rt.conf.weight {
        admin::set_weight(be, i, rt, s.uweight);
    }
    if s.admin_state & 0x01 != 0 {
        admin::set_state(be, i, rt, AdminState::Maint);
    } else if s.admin_state & 0x08 != 0 {
        admin::set_state(be, i, rt, AdminState::Drain);
    }
    if s.op_state == 0 {
        admin::set_down(be, i, rt);
    }
}
