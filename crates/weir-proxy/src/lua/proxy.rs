//! `core.backends`, `core.frontends`, `core.proxies`: the proxies and
//! their servers as script objects (`name`, `servers`, `get_stats()` …).
//! A server a script called a method on can no longer be deleted at run
//! time (`del server` says so), as in haproxy.

use super::LuaRt;
use crate::ids::{ProxyId, ServerId};
use crate::state::Shared;
use mlua::{Lua, Table, UserData, UserDataFields, UserDataMethods, Value};
use std::sync::{Arc, Weak};

/// A proxy, by its place in the configuration.
struct ProxyRef {
    sh: Weak<Shared>,
    px: usize,
}

/// A server of a backend.
struct ServerRef {
    sh: Weak<Shared>,
    be: usize,
    id: ServerId,
    name: String,
}

fn gone() -> mlua::Error {
    mlua::Error::RuntimeError("the process is stopping".into())
}

impl UserData for ProxyRef {
    fn add_fields<F: UserDataFields<Self>>(f: &mut F) {
        f.add_field_method_get("name", |_, p| {
            let sh = p.sh.upgrade().ok_or_else(gone)?;
            Ok(sh.cfg.proxies.get(p.px).map(|x| x.name.clone()))
        });
        f.add_field_method_get("uuid", |_, p| {
            let sh = p.sh.upgrade().ok_or_else(gone)?;
            Ok(sh.cfg.proxies.get(p.px).map(|x| x.uid))
        });
        f.add_field_method_get("servers", servers);
    }
    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_method("get_stats", |lua, p, ()| {
            let sh = p.sh.upgrade().ok_or_else(gone)?;
            let name = sh
                .cfg
                .proxies
                .get(p.px)
                .map(|x| x.name.clone())
                .unwrap_or_default();
            stats(lua, &sh, &name, None)
        });
        m.add_method("get_mode", |_, p, ()| {
            let sh = p.sh.upgrade().ok_or_else(gone)?;
            Ok(sh.cfg.proxies.get(p.px).map(|x| {
                if x.mode == weir_config::Mode::Http {
                    "http"
                } else {
                    "tcp"
                }
            }))
        });
    }
}

/// `proxy.servers`: the backend's servers by name.
fn servers(lua: &Lua, p: &ProxyRef) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    let sh = p.sh.upgrade().ok_or_else(gone)?;
    let Some(be) = sh.backend_of(ProxyId::new(p.px)) else {
        return Ok(t);
    };
    let bi = sh
        .backends
        .iter()
        .position(|b| Arc::ptr_eq(b, be))
        .unwrap_or(0);
    for (id, s) in be.servers() {
        t.set(
            s.name.as_str(),
            ServerRef {
                sh: p.sh.clone(),
                be: bi,
                id,
                name: s.name.clone(),
            },
        )?;
    }
    Ok(t)
}

impl ServerRef {
    /// Marks the server as one a script holds.
    fn pin(&self, sh: &Shared) {
        sh.lua_pins
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert((self.be, self.id));
    }
}

impl UserData for ServerRef {
    fn add_fields<F: UserDataFields<Self>>(f: &mut F) {
        f.add_field_method_get("name", |_, s| Ok(s.name.clone()));
        f.add_field_method_get("puid", |_, s| {
            let sh = s.sh.upgrade().ok_or_else(gone)?;
            Ok(sh
                .backends
                .get(s.be)
                .and_then(|b| b.server_at(s.id))
                .and_then(|x| x.conf.id))
        });
    }
    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_method("get_name", |_, s, ()| Ok(s.name.clone()));
        m.add_method("get_stats", |lua, s, ()| {
            let sh = s.sh.upgrade().ok_or_else(gone)?;
            s.pin(&sh);
            let be = sh
                .backends
                .get(s.be)
                .map(|b| b.name.clone())
                .unwrap_or_default();
            stats(lua, &sh, &be, Some(&s.name))
        });
        m.add_method("get_addr", |_, s, ()| {
            let sh = s.sh.upgrade().ok_or_else(gone)?;
            s.pin(&sh);
            Ok(sh
                .backends
                .get(s.be)
                .and_then(|b| b.server_at(s.id))
                .map(|x| match x.target() {
                    crate::state::ServerTarget::Inet { addr, .. } => addr.to_string(),
                    crate::state::ServerTarget::Unix(p) => crate::state::unix_text(&p),
                }))
        });
        m.add_method("is_draining", |_, s, ()| {
            let sh = s.sh.upgrade().ok_or_else(gone)?;
            s.pin(&sh);
            let Some(be) = sh.backends.get(s.be) else {
                return Ok(false);
            };
            let drain = be
                .server_at(s.id)
                .is_some_and(|x| x.drain.load(std::sync::atomic::Ordering::Relaxed));
            Ok(drain)
        });
        m.add_method("get_weight", |_, s, ()| {
            let sh = s.sh.upgrade().ok_or_else(gone)?;
            s.pin(&sh);
            Ok(sh
                .backends
                .get(s.be)
                .and_then(|b| b.set().state(s.id.index()))
                .map(|st| st.2))
        });
    }
}

/// The `show stat` row of proxy `px` (its backend line) or of its server
/// `srv`, as a table of column names to values (numbers as integers).
fn stats(lua: &Lua, sh: &Shared, px: &str, srv: Option<&str>) -> mlua::Result<Table> {
    let filter = weir_admin::cli::StatFilter {
        proxy: Some(px.to_string()),
        ..Default::default()
    };
    let want = srv.unwrap_or("BACKEND");
    let rows = crate::http::service::stat_rows(sh, &filter);
    let t = lua.create_table()?;
    let Some(row) = rows.iter().find(|r| r.get("svname") == Some(want)) else {
        return Ok(t);
    };
    for col in weir_admin::stat::COLUMNS {
        let Some(v) = row.get(col).filter(|v| !v.is_empty()) else {
            continue;
        };
        let v = match v.parse::<i64>() {
            Ok(i) => Value::Integer(i),
            Err(_) => Value::String(lua.create_string(v)?),
        };
        t.set(*col, v)?;
    }
    Ok(t)
}

/// Fills `core.backends`, `core.frontends` and `core.proxies`.
pub(super) fn install(rt: &LuaRt, sh: &Arc<Shared>) -> mlua::Result<()> {
    let lua = &rt.lua;
    let core: Table = lua.globals().get("core")?;
    let (backends, frontends, proxies): (Table, Table, Table) = (
        core.get("backends")?,
        core.get("frontends")?,
        core.get("proxies")?,
    );
    for (i, px) in sh.cfg.proxies.iter().enumerate() {
        let id = ProxyId::new(i);
        let obj = lua.create_userdata(ProxyRef {
            sh: Arc::downgrade(sh),
            px: i,
        })?;
        proxies.set(px.name.as_str(), obj.clone())?;
        if sh.backend_of(id).is_some() {
            backends.set(px.name.as_str(), obj.clone())?;
        }
        if sh.frontend_of(id).is_some() {
            frontends.set(px.name.as_str(), obj)?;
        }
    }
    Ok(())
}
