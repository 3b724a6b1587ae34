//! `stick match|on|store-request|store-response` (manual §4.2): a backend
//! finds the server an entry of a stick table names, and stores the server
//! it used under a key of the request or the response. The entry holds
//! the server's id and its name (or, with `srvkey addr`, its address),
//! and a server is found by the name or address first, as HAProxy 2.6
//! does, so that tables shared between processes with other ids agree.

use std::sync::Arc;

use crate::state::{BackendRt, ServerId, ServerTarget, Shared};
use weir_config::{Proxy, StickKind, StickRule};
use weir_rules::Ctx;
use weir_stick::{DataType, Entry, Key, ReadValue, Table};

/// The request's part of persistence: the server an entry named, and
/// where to store the server once one is chosen.
#[derive(Debug, Default)]
pub struct Sticky {
    pub server: Option<ServerId>,
    stores: Vec<(Arc<Table>, Key)>,
}

/// HAProxy stores at most this many keys per stream.
const MAX_STORES: usize = 8;

/// The table rule `r` of `px` uses.
fn table_of<'a>(sh: &'a Shared, px: &Proxy, r: &StickRule) -> Option<&'a Arc<Table>> {
    sh.tables.named(r.table.as_deref().unwrap_or(&px.name))
}

/// The key rule `r` gives on `ctx`, in `t`'s type.
fn key(t: &Table, r: &StickRule, ctx: &dyn Ctx) -> Option<Key> {
    if r.cond.as_ref().is_some_and(|c| !c.eval(ctx)) {
        return None;
    }
    weir_rules::stick::key_of(t.def().key, &r.key.eval(ctx)?)
}

/// A server's address as `server_key` holds it with `srvkey addr`.
fn addr_of(be: &BackendRt, id: ServerId) -> String {
    let t = be.server(id).target.lock().map(|t| t.clone());
    match t {
        Ok(ServerTarget::Inet { addr, .. }) => addr.to_string(),
        Ok(ServerTarget::Unix(p)) => p,
        Err(_) => String::new(),
    }
}

/// The server `e` names in `be`: by its key (name or address), else by
/// its id.
fn server_of(be: &BackendRt, t: &Table, e: &Entry) -> Option<ServerId> {
    let s = &t.def().schema;
    if let Some(ReadValue::Text(Some(k))) =
        s.find(DataType::ServerKey, 0).and_then(|c| t.read(e, c))
    {
        let found = if t.def().srvkey_addr {
            be.servers().map(|(i, _)| i).find(|&i| addr_of(be, i) == k)
        } else {
            be.server_named(&k)
        };
        if found.is_some() {
            return found;
        }
    }
    match s.find(DataType::ServerId, 0).and_then(|c| t.read(e, c)) {
        Some(ReadValue::Num(n)) if n > 0 => be
            .servers()
            .find(|(_, s)| u64::from(s.conf.uid) == n)
            .map(|(i, _)| i),
        _ => None,
    }
}

/// Runs the backend's `stick match|on|store-request` rules on a request:
/// the server the first matching entry names (when usable, or `force`;
/// none looked up when a rule or a cookie `assigned` one), and the keys
/// to store the chosen server under (the first rule of each table).
pub fn on_request(
    sh: &Shared,
    be: &BackendRt,
    px: &Proxy,
    ctx: &dyn Ctx,
    force: bool,
    assigned: bool,
) -> Sticky {
    let mut out = Sticky::default();
    if px.stick_rules.is_empty() {
        return out;
    }
    for r in px
        .stick_rules
        .iter()
        .filter(|r| r.kind != StickKind::StoreResponse)
    {
        let Some(t) = table_of(sh, px, r) else {
            continue;
        };
        let Some(k) = key(t, r, ctx) else {
            continue;
        };
        if r.kind.matches() && out.server.is_none() && !assigned {
            if let Some(e) = t.lookup(&k) {
                let id = server_of(be, t, &e);
                if let Some(id) = id.filter(|i| force || be.set().is_up(i.index())) {
                    out.server = Some(id);
                    t.touch(&e);
                }
            }
        }
        let again = out.stores.iter().any(|(s, _)| Arc::ptr_eq(s, t));
        if r.kind.stores_request() && !again && out.stores.len() < MAX_STORES {
            out.stores.push((t.clone(), k));
        }
    }
    out
}

/// Stores server `srv` under `key` of `t`.
fn store_one(be: &BackendRt, srv: ServerId, t: &Table, key: &Key) {
    let Some(e) = t.get_or_create(key) else {
        return;
    };
    let s = &t.def().schema;
    if let Some(c) = s.find(DataType::ServerId, 0) {
        t.write(&e, c, ReadValue::Num(u64::from(be.server(srv).conf.uid)));
    }
    if let Some(c) = s.find(DataType::ServerKey, 0) {
        let k = if t.def().srvkey_addr {
            addr_of(be, srv)
        } else {
            be.server(srv).name.clone()
        };
        t.write(&e, c, ReadValue::Text(Some(k)));
    }
    t.touch(&e);
}

impl Sticky {
    /// Stores the server the request went to (once it is connected).
    pub fn store(&mut self, be: &BackendRt, srv: ServerId) {
        for (t, k) in std::mem::take(&mut self.stores) {
            store_one(be, srv, &t, &k);
        }
    }
}

/// Runs the backend's `stick store-response` rules on a response from
/// server `srv`.
pub fn on_response(sh: &Shared, be: &BackendRt, px: &Proxy, ctx: &dyn Ctx, srv: ServerId) {
    for r in px
        .stick_rules
        .iter()
        .filter(|r| r.kind == StickKind::StoreResponse)
        .take(MAX_STORES)
    {
        if let Some(t) = table_of(sh, px, r) {
            if let Some(k) = key(t, r, ctx) {
                store_one(be, srv, t, &k);
            }
        }
    }
}
