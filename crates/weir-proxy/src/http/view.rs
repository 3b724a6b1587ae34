//! What sample fetches see of an exchange ([`ExCtx`]) or of a
//! connection before any request ([`L4Ctx`]): the runtime's side of
//! `weir_rules::Ctx`, over the parsed heads, the variables, the TLS
//! sessions and the live state.

use super::rules::Vars;
use crate::state::FrontendId;
use crate::state::{BackendRt, Shared};
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use weir_proto::h1::{Header, RequestHead, ResponseHead};
use weir_rules::vars::VarSet;
use weir_rules::{Ctx, Sample};

/// What fetches see of an exchange.
#[derive(Clone, Copy)]
pub struct ExCtx<'a> {
    pub sh: &'a Shared,
    pub fe_idx: FrontendId,
    pub be: Option<&'a BackendRt>,
    pub src: Option<SocketAddr>,
    pub dst: Option<SocketAddr>,
    pub req: Option<&'a RequestHead>,
    pub res: Option<&'a ResponseHead>,
    pub srv: Option<&'a str>,
    pub first: bool,
    pub vars: Option<&'a Vars>,
    /// The request body, once buffered.
    pub body: Option<&'a [u8]>,
    /// The client connection's TLS session.
    pub tls: Option<&'a weir_rules::TlsInfo>,
    /// The listener the client came through.
    pub bind: Option<&'a crate::state::BindInfo>,
    /// The client connection as accepted (its PROXY v2 TLVs, its own
    /// addresses).
    pub acc: Option<&'a crate::session::Accepted>,
    /// The connection's own addresses while `tcp-request` rules change the
    /// session's.
    pub fc: Option<&'a (Option<SocketAddr>, Option<SocketAddr>)>,
    /// The server connection's TLS session, once a response came.
    pub srv_tls: Option<&'a weir_rules::TlsInfo>,
    /// The client's first bytes under `tcp-request content` inspection,
    /// and whether they are final.
    pub payload: Option<(&'a [u8], bool)>,
    /// Where payload fetches ask for more bytes.
    pub more: Option<&'a std::sync::atomic::AtomicBool>,
    /// The server's first bytes under `tcp-response content` inspection,
    /// and whether they are final.
    pub res_payload: Option<(&'a [u8], bool)>,
    /// The server connection, once a response came (`bc_*`).
    pub srv_conn: Option<super::peer::Peer<'a>>,
}

/// The stick table `name` names (`None`: the table of the proxy whose
/// rules run, else `fallback`'s).
fn table_in<'t>(
    tables: &'t crate::state::tables::Tables,
    vars: Option<&Vars>,
    fallback: Option<&str>,
    name: Option<&str>,
) -> Option<&'t std::sync::Arc<weir_stick::Table>> {
    match name {
        Some(n) => tables.named(n),
        None => match vars.and_then(|v| v.own_table) {
            Some(place) => tables.of_place(place),
            None => tables.named(fallback?),
        },
    }
}

/// The entry tracked counter `slot` holds.
fn tracked_in(vars: Option<&Vars>, slot: usize) -> Option<&weir_stick::Tracker> {
    vars?.track.get(slot)
}

/// The `set-var` converter on a view's variables (none: nothing).
fn set_in(vars: Option<&Vars>, var: &VarSet, v: &Sample) {
    if let Some(vars) = vars {
        vars.set_if(var, v.clone());
    }
}

/// The `unset-var` converter on a view's variables.
fn unset_in(vars: Option<&Vars>, name: &str) {
    if let Some(vars) = vars {
        vars.unset(name);
    }
}

fn pairs(h: &[Header]) -> Vec<(&str, &[u8])> {
    h.iter().map(|h| (h.name(), h.value())).collect()
}

impl<'a> ExCtx<'a> {
    /// A view of frontend `fe_idx` with nothing of a connection or an
    /// exchange yet: the base the others are made from.
    pub fn bare(sh: &'a Shared, fe_idx: FrontendId) -> ExCtx<'a> {
        ExCtx {
            sh,
            fe_idx,
            be: None,
            src: None,
            dst: None,
            req: None,
            res: None,
            srv: None,
            first: true,
            vars: None,
            body: None,
            tls: None,
            bind: None,
            acc: None,
            fc: None,
            srv_tls: None,
            payload: None,
            more: None,
            res_payload: None,
            srv_conn: None,
        }
    }
}

impl ExCtx<'_> {
    /// An HTTP fetch on a client's bytes under inspection (`mode tcp`):
    /// without a whole request head yet, more bytes could change it.
    fn wants_head(&self) {
        if self.req.is_none() && self.payload.is_some_and(|(_, fin)| !fin) {
            if let Some(m) = self.more {
                m.store(true, std::sync::atomic::Ordering::Relaxed);
            }
        }
    }

    fn backend(&self, name: &str) -> Option<&BackendRt> {
        if name.is_empty() {
            return self.be;
        }
        self.sh
            .backends
            .iter()
            .find(|b| b.name == name)
            .map(|b| &**b)
    }
}

impl Ctx for ExCtx<'_> {
    fn capture(&self, res: bool, id: usize, v: &Sample) -> bool {
        let http = &self.sh.proxy(self.sh.frontend(self.fe_idx).proxy).http;
        let slots = if res {
            &http.res_captures
        } else {
            &http.req_captures
        };
        self.vars
            .is_some_and(|vars| vars.caps.put_cut(res, slots, id, &v.to_bytes()))
    }
    fn cache_hit(&self) -> Option<String> {
        self.vars?.cache_hit.clone()
    }
    fn lua_fetch(&self, call: &weir_rules::lua::LuaCall) -> Option<weir_rules::Sample> {
        crate::lua::fetch_for(self.sh, call, || crate::lua::TxnState::of(self))
    }
    fn lua_conv(
        &self,
        call: &weir_rules::lua::LuaCall,
        v: &weir_rules::Sample,
    ) -> Option<weir_rules::Sample> {
        crate::lua::convert_for(self.sh, call, v)
    }
    fn utc_offset(&self, secs: i64) -> i64 {
        crate::sys::local_time(secs).6
    }
    fn stick_table(&self, name: Option<&str>) -> Option<&std::sync::Arc<weir_stick::Table>> {
        let fe = &self.sh.frontend(self.fe_idx).name;
        table_in(&self.sh.tables, self.vars, Some(fe), name)
    }
    fn tracked(&self, slot: usize) -> Option<&weir_stick::Tracker> {
        tracked_in(self.vars, slot)
    }
    fn res_version(&self) -> Option<&str> {
        self.res.map(|r| match r.minor {
            0 => "1.0",
            2 => "2.0",
            _ => "1.1",
        })
    }
    fn hostname(&self) -> Option<String> {
        Some(self.sh.hostname.clone())
    }
    fn live(&self, q: &weir_rules::live::Live) -> Option<i64> {
        let here = crate::state::live::Here {
            fe: self.fe_idx,
            be: self.be,
            bind: self.bind,
        };
        crate::state::live::figure(self.sh, &here, q)
    }
    fn src(&self) -> Option<SocketAddr> {
        self.src
    }
    fn dst(&self) -> Option<SocketAddr> {
        self.dst
    }
    fn method(&self) -> &str {
        self.wants_head();
        self.req.map_or("", |r| r.method.as_str())
    }
    fn uri(&self) -> &str {
        self.wants_head();
        self.req.map_or("", |r| r.uri.as_str())
    }
    fn version(&self) -> &str {
        self.wants_head();
        match self.req.map(|r| r.minor) {
            Some(0) => "1.0",
            Some(2) => "2.0",
            Some(_) => "1.1",
            None => "",
        }
    }
    fn req_headers(&self) -> Vec<(&str, &[u8])> {
        self.wants_head();
        self.req.map_or_else(Vec::new, |r| pairs(&r.headers))
    }
    fn res_headers(&self) -> Vec<(&str, &[u8])> {
        self.res.map_or_else(Vec::new, |r| pairs(&r.headers))
    }
    fn status(&self) -> Option<u16> {
        self.res.map(|r| r.status)
    }
    fn nbsrv(&self, name: &str) -> Option<i64> {
        self.backend(name).map(|b| {
            let (act, bck) = b.set().usable_counts();
            (if act > 0 { act } else { bck }) as i64
        })
    }
    fn be_conn(&self, name: &str) -> Option<i64> {
        self.backend(name)
            .map(|b| i64::from(b.conns.load(Ordering::Relaxed)))
    }
    fn fe_conn(&self) -> i64 {
        i64::from(self.sh.frontend(self.fe_idx).conns.load(Ordering::Relaxed))
    }
    fn srv_name(&self) -> Option<String> {
        self.srv.map(str::to_string)
    }
    fn unique_id(&self) -> Option<String> {
        self.vars?.unique_id.clone()
    }
    fn listener_name(&self) -> Option<String> {
        self.bind?.name.clone()
    }
    fn server_conn_addr(&self, dst: bool) -> Option<SocketAddr> {
        let super::peer::Peer::Conn(c) = self.srv_conn? else {
            // (An HTTP/2 server stream's socket is not at hand.)
            return None;
        };
        let t = c.tcp()?;
        if dst {
            t.peer_addr().ok()
        } else {
            t.local_addr().ok()
        }
    }
    fn server_http_major(&self) -> Option<i64> {
        Some(match self.srv_conn? {
            super::peer::Peer::H2Up(_) => 2,
            _ => 1,
        })
    }
    fn listener_id(&self) -> Option<i64> {
        Some(i64::from(self.bind?.id))
    }
    fn default_backend(&self) -> Option<String> {
        let be = self.sh.frontends.get(self.fe_idx.index())?.backend?;
        Some(self.sh.backends.get(be.index())?.name.clone())
    }
    fn is_local(&self, ip: std::net::IpAddr) -> bool {
        // An address this host can bind is one of its own.
        ip.is_loopback() || std::net::UdpSocket::bind((ip, 0)).is_ok()
    }
    fn timeout_ms(&self, t: weir_rules::internal::Timeout) -> Option<i64> {
        use weir_rules::internal::Timeout;
        let be = self.be.map(|b| &self.sh.proxy(b.proxy).timeouts);
        let set = self.vars.map(|v| v.timeouts).unwrap_or_default();
        let d = match t {
            Timeout::BeServer => be?.server,
            Timeout::BeTunnel => be?.tunnel,
            Timeout::CurServer => set.server.or(be?.server),
            Timeout::CurTunnel => set.tunnel.or(be?.tunnel),
            Timeout::FeClient => {
                let fe = self.sh.frontend(self.fe_idx);
                self.sh.proxy(fe.proxy).timeouts.client
            }
        };
        Some(d?.as_millis() as i64)
    }
    fn conn_addr(&self, dst: bool) -> Option<SocketAddr> {
        match (self.fc, self.acc) {
            (Some(&(peer, local)), _) => Some(if dst { local } else { peer }).flatten(),
            (None, Some(acc)) => acc.conn_addr(dst),
            (None, None) if dst => self.dst,
            (None, None) => self.src,
        }
    }
    fn proxy_tlv(&self, kind: u8) -> Option<Vec<u8>> {
        let pp = self.acc?.pp.as_deref()?;
        match kind {
            weir_proto::proxy_protocol::TLV_AUTHORITY => pp.authority.clone(),
            weir_proto::proxy_protocol::TLV_UNIQUE_ID => pp.unique_id.clone(),
            _ => None,
        }
    }
    fn captured(&self, res: bool, idx: usize) -> Option<String> {
        self.vars?.caps.get(res, idx)
    }
    fn frontend(&self) -> Option<(String, i64)> {
        let fe = self.sh.frontends.get(self.fe_idx.index())?;
        Some((fe.name.clone(), i64::from(self.sh.proxy(fe.proxy).uid)))
    }
    fn backend(&self) -> Option<(String, i64)> {
        let be = self.be?;
        Some((be.name.clone(), i64::from(self.sh.proxy(be.proxy).uid)))
    }
    fn server_id(&self) -> Option<i64> {
        let (be, name) = (self.be?, self.srv?);
        be.servers()
            .find(|(_, s)| s.name == name)
            .map(|(_, s)| i64::from(s.conf.uid))
    }
    fn var(&self, name: &str) -> Option<Sample> {
        self.vars?.get(name)
    }
    fn set_var(&self, var: &VarSet, v: &Sample) {
        set_in(self.vars, var, v)
    }
    fn unset_var(&self, name: &str) {
        unset_in(self.vars, name)
    }
    fn last_rule(&self) -> Option<weir_rules::RuleAt> {
        self.vars?.last_rule.clone()
    }
    fn first_req(&self) -> bool {
        self.first
    }
    fn body(&self) -> Option<&[u8]> {
        self.body
    }
    fn srv_tls(&self) -> Option<&weir_rules::TlsInfo> {
        self.srv_tls
    }
    fn payload(&self) -> Option<(&[u8], bool)> {
        self.payload
    }
    fn res_payload(&self) -> Option<(&[u8], bool)> {
        self.res_payload
    }
    fn more(&self) -> Option<&std::sync::atomic::AtomicBool> {
        self.more
    }
    fn tls(&self) -> Option<&weir_rules::TlsInfo> {
        self.tls
    }
    fn userlist(&self, name: &str) -> Option<&weir_rules::auth::Userlist> {
        self.sh
            .cfg
            .userlists
            .iter()
            .find(|l| l.name == name)
            .map(|l| &**l)
    }
}

/// A layer-4 view (for `use_backend` conditions in `mode tcp`), with the
/// client's TLS session when weir terminates it.
pub struct L4Ctx<'a> {
    pub src: Option<SocketAddr>,
    pub dst: Option<SocketAddr>,
    pub tls: Option<&'a weir_rules::TlsInfo>,
    /// The client's first bytes, as `tcp-request content` inspected them.
    pub payload: &'a [u8],
    pub vars: Option<&'a Vars>,
    /// The stick tables, and the frontend's name (whose table fetches
    /// without a table name read).
    pub tables: &'a crate::state::tables::Tables,
    pub frontend: &'a str,
}

impl Ctx for L4Ctx<'_> {
    fn utc_offset(&self, secs: i64) -> i64 {
        crate::sys::local_time(secs).6
    }
    fn stick_table(&self, name: Option<&str>) -> Option<&std::sync::Arc<weir_stick::Table>> {
        table_in(self.tables, self.vars, Some(self.frontend), name)
    }
    fn tracked(&self, slot: usize) -> Option<&weir_stick::Tracker> {
        tracked_in(self.vars, slot)
    }
    fn payload(&self) -> Option<(&[u8], bool)> {
        Some((self.payload, true))
    }
    fn var(&self, name: &str) -> Option<Sample> {
        self.vars?.get(name)
    }
    fn set_var(&self, var: &VarSet, v: &Sample) {
        set_in(self.vars, var, v)
    }
    fn unset_var(&self, name: &str) {
        unset_in(self.vars, name)
    }
    fn tls(&self) -> Option<&weir_rules::TlsInfo> {
        self.tls
    }
    fn src(&self) -> Option<SocketAddr> {
        self.src
    }
    fn dst(&self) -> Option<SocketAddr> {
        self.dst
    }
}
