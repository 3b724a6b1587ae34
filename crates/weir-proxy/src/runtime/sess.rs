//! `show sess` and `shutdown session`: the sessions the worker threads
//! report (see [`crate::sessions`]), named from the configuration.

use crate::sessions::{self, Raw};
use crate::state::ProxyId;
use crate::state::{ServerTarget, Shared};
use weir_admin::sess::{Named, SessRow, SessSel};

/// `show sess [all|<id>]`.
pub(super) async fn show(sh: &Shared, sel: SessSel) -> String {
    match sel {
        SessSel::List => weir_admin::sess::lines(&rows(sh, sessions::all(sh).await)),
        SessSel::All => weir_admin::sess::details(&rows(sh, sessions::all(sh).await)),
        SessSel::One(id) => match sessions::one(sh, id).await {
            Some(r) => weir_admin::sess::details(&rows(sh, vec![r])),
            None => "Session not found.\n".into(),
        },
    }
}

/// `shutdown session <id>`.
pub(super) async fn shutdown(sh: &Shared, id: u64) -> String {
    if sessions::shutdown(sh, id).await {
        String::new()
    } else {
        "No such session (use 'show sess').\n".into()
    }
}

fn rows(sh: &Shared, raw: Vec<Raw>) -> Vec<SessRow> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let proxy_id = |i: ProxyId| sh.proxy(i).uid;
    raw.into_iter()
        .filter_map(|r| {
            let fe = sh.frontends.get(r.fe.index())?;
            let px = sh.proxy(fe.proxy);
            let be_rt = r.be.and_then(|b| sh.backend_of(b));
            let server = be_rt.zip(r.srv).and_then(|(b, i)| {
                let s = b.server_at(i)?;
                let id = s.conf.uid;
                let addr = match s.target() {
                    ServerTarget::Inet { addr, .. } => addr.to_string(),
                    ServerTarget::Unix(p) if p.starts_with('\0') => crate::state::unix_text(&p),
                    ServerTarget::Unix(p) => format!("unix@{p}"),
                };
                Some((
                    Named {
                        name: s.name.clone(),
                        id,
                    },
                    addr,
                ))
            });
            let proto = match (r.unix, r.peer) {
                (true, _) => "unix_stream",
                (_, Some(std::net::SocketAddr::V6(_))) => "tcpv6",
                _ => "tcpv4",
            };
            Some(SessRow {
                id: r.id,
                uniq: r.uniq,
                proto,
                src: r.peer.map_or_else(|| "unix:1".into(), |a| a.to_string()),
                dst: r.local.map_or_else(|| "unix".into(), |a| a.to_string()),
                frontend: Named {
                    name: fe.name.clone(),
                    id: proxy_id(fe.proxy),
                },
                mode: match px.mode {
                    weir_config::Mode::Http => "http",
                    weir_config::Mode::Tcp => "tcp",
                },
                backend: be_rt.map(|b| Named {
                    name: b.name.clone(),
                    id: proxy_id(b.proxy),
                }),
                server_addr: server.as_ref().map(|s| s.1.clone()),
                server: server.map(|s| s.0),
                age_secs: r.age.as_secs(),
                accepted: crate::log::local_date_ms(now.saturating_sub(r.age)),
                fd: r.fd,
                thread: r.thread,
                killed: r.killed,
                asleep: r.asleep,
            })
        })
        .collect()
}
