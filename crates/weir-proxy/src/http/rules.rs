//! Runs a proxy's HTTP rules on an exchange: `http-request` (then
//! `redirect`) on the request head, `http-response` and
//! `http-after-response` on the response head; builds the answers of
//! `deny`, `return` and `redirect`.

use super::errors;
use crate::state::procvars::{ProcVars, VarStore};
use crate::state::FrontendId;
use crate::state::{BackendRt, Shared};
use crate::term::{Cause, State, Term};
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::time::Duration;
use weir_config::Proxy;
use weir_proto::h1::{Header, RequestHead, ResponseHead};
use weir_rules::action::UriPart;
use weir_rules::vars::VarSet;
use weir_rules::{
    Body, Ctx, HeaderOp, Redirect, RedirectKind, ReqAction, ResAction, Return, Rule, Sample,
};

/// Variables set by `set-var` (`sess.*` live as long as the connection,
/// `txn.*`, `req.*` and `res.*` for one exchange; `proc.*` are the
/// process's, in [`ProcVars`]).
#[derive(Clone)]
pub struct Vars {
    vals: VarStore,
    /// `http-request capture` values of the exchange: (slot, value).
    pub captures: Vec<(usize, String)>,
    /// The exchange's `unique-id-format` value (the `unique-id` fetch).
    pub unique_id: Option<String>,
    /// `set-timeout server|tunnel`: the exchange's own timeouts.
    pub timeouts: SetTimeouts,
    /// The last rule that ended a rule set of the exchange.
    pub last_rule: Option<weir_rules::RuleAt>,
    proc: ProcVars,
}

/// The timeouts `set-timeout` gave one exchange (none: the backend's).
#[derive(Debug, Clone, Copy, Default)]
pub struct SetTimeouts {
    pub server: Option<Duration>,
    pub tunnel: Option<Duration>,
}

impl Vars {
    /// A connection's variables, beside the process's.
    pub fn new(proc: &ProcVars) -> Vars {
        Vars {
            vals: VarStore::default(),
            captures: Vec::new(),
            unique_id: None,
            timeouts: SetTimeouts::default(),
            last_rule: None,
            proc: proc.clone(),
        }
    }
    fn get(&self, name: &str) -> Option<Sample> {
        if name.starts_with("proc.") {
            return self.proc.get(name);
        }
        self.vals.get(name)
    }
    pub(crate) fn set(&self, name: &str, v: Sample) {
        if name.starts_with("proc.") {
            return self.proc.set(name, v);
        }
        self.vals.set(name, v)
    }
    /// `set-var`: stores `v` when the variable's conditions hold (a
    /// `proc` variable always exists).
    pub(crate) fn set_if(&self, var: &VarSet, v: Sample) {
        let cur = self.get(&var.name);
        let exists = var.name.starts_with("proc.") || cur.is_some();
        if var.allows(cur.as_ref(), exists, &v) {
            self.set(&var.name, v);
        }
    }
    pub(crate) fn unset(&self, name: &str) {
        if name.starts_with("proc.") {
            return self.proc.unset(name);
        }
        self.vals.unset(name)
    }
    /// No variable is left.
    pub fn is_empty(&self) -> bool {
        self.vals.is_empty() && self.captures.is_empty() && self.unique_id.is_none()
    }
    /// Drops the variables of the finished exchange.
    pub fn end_exchange(&mut self) {
        self.captures.clear();
        self.unique_id = None;
        self.timeouts = SetTimeouts::default();
        self.last_rule = None;
        self.vals
            .retain(|n| n.starts_with("sess.") || n.starts_with("proc."));
    }
}

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

fn pairs(h: &[Header]) -> Vec<(&str, &[u8])> {
    h.iter().map(|h| (h.name(), h.value())).collect()
}

impl ExCtx<'_> {
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
    fn utc_offset(&self, secs: i64) -> i64 {
        crate::sys::local_time(secs).6
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
        self.req.map_or("", |r| r.method.as_str())
    }
    fn uri(&self) -> &str {
        self.req.map_or("", |r| r.uri.as_str())
    }
    fn version(&self) -> &str {
        match self.req.map(|r| r.minor) {
            Some(0) => "1.0",
            Some(2) => "2.0",
            Some(_) => "1.1",
            None => "",
        }
    }
    fn req_headers(&self) -> Vec<(&str, &[u8])> {
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
        let fe = self.sh.frontends.get(self.fe_idx.index())?;
        let http = &self.sh.proxy(fe.proxy).http;
        if res {
            let heads = super::samples::capture(&http.capture_res, &self.res?.headers);
            return heads.into_iter().nth(idx);
        }
        let heads = &http.capture_req;
        if idx < heads.len() {
            return super::samples::capture(heads, &self.req?.headers)
                .into_iter()
                .nth(idx);
        }
        let slot = idx - heads.len();
        if slot >= http.rule_captures.len() {
            return None;
        }
        // The last value a rule wrote in the slot; empty before one.
        let v = self.vars?.captures.iter().rev().find(|(s, _)| *s == slot);
        Some(v.map(|(_, v)| v.clone()).unwrap_or_default())
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
        let px = self.sh.proxy(be.proxy);
        px.servers
            .iter()
            .find(|s| s.name == name)
            .map(|s| i64::from(s.uid))
    }
    fn var(&self, name: &str) -> Option<Sample> {
        self.vars.and_then(|v| v.get(name))
    }
    fn set_var(&self, var: &VarSet, v: &Sample) {
        if let Some(vars) = self.vars {
            vars.set_if(var, v.clone());
        }
    }
    fn unset_var(&self, name: &str) {
        if let Some(vars) = self.vars {
            vars.unset(name);
        }
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
}

impl Ctx for L4Ctx<'_> {
    fn utc_offset(&self, secs: i64) -> i64 {
        crate::sys::local_time(secs).6
    }
    fn payload(&self) -> Option<(&[u8], bool)> {
        Some((self.payload, true))
    }
    fn var(&self, name: &str) -> Option<Sample> {
        self.vars.and_then(|v| v.get(name))
    }
    fn set_var(&self, var: &VarSet, v: &Sample) {
        if let Some(vars) = self.vars {
            vars.set_if(var, v.clone());
        }
    }
    fn unset_var(&self, name: &str) {
        if let Some(vars) = self.vars {
            vars.unset(name);
        }
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

/// A response weir makes itself, and how it is logged.
pub struct Local {
    pub bytes: Vec<u8>,
    pub status: u16,
    pub term: Term,
    /// The client connection may stay open afterwards.
    pub keep: bool,
}

/// What the request rules decided.
pub enum Verdict {
    Continue,
    Respond(Local),
    Tarpit(u16),
    /// `wait-for-body`: buffer the body, then run the rules from `next`.
    WaitBody {
        next: usize,
        time: std::time::Duration,
        at_least: Option<u64>,
    },
    /// The request cannot go on: answer `status` (0: nothing, the client
    /// is gone) and log `term`.
    Fail(u16, Term),
    /// `use-service`: weir answers with one of its services.
    Service(weir_rules::action::Service),
    /// `tcp-request content reject|silent-drop`, `http-request reject`:
    /// the connection closes without an answer (with a reset for
    /// `silent-drop`); `http`: an HTTP rule refused it (the log keeps the
    /// request line).
    Close {
        reset: bool,
        http: bool,
    },
}

/// The proxies whose response rules apply, in order: the backend's, then
/// the frontend's (once when they are one proxy).
pub fn response_order<'p>(
    be: Option<&'p Proxy>,
    fe: &'p Proxy,
) -> impl Iterator<Item = &'p Proxy> + Clone {
    be.filter(|b| !std::ptr::eq(*b, fe))
        .into_iter()
        .chain(std::iter::once(fe))
}

/// The `http-response` rules of `pxs` (unless `after_only`), then their
/// `http-after-response` rules, on `res`; the first rule that answers in
/// the response's place ends them.
pub fn run_response_phases<'p>(
    pxs: impl Iterator<Item = &'p Proxy> + Clone,
    after_only: bool,
    res: &mut ResponseHead,
    vars: &mut Vars,
    tmpl: &ExCtx<'_>,
    dirty: &mut bool,
) -> Option<Local> {
    for after in [false, true] {
        if !after && after_only {
            continue;
        }
        for px in pxs.clone() {
            let rules = if after {
                &px.http_after_response
            } else {
                &px.http_response
            };
            if let Some(r) = run_response(rules, px, res, vars, tmpl, dirty) {
                return Some(r);
            }
        }
    }
    None
}

/// `http-after-response` on an answer weir made (a deny, a return, a
/// redirect, an error, the stats page): the rules of `pxs` in turn (see
/// [`response_order`]), as on a server's response. A rule that answers in
/// its turn replaces it.
pub fn after_local<'p>(
    mut local: Local,
    pxs: impl Iterator<Item = &'p Proxy> + Clone,
    vars: &mut Vars,
    tmpl: &ExCtx<'_>,
) -> Local {
    if pxs.clone().all(|p| p.http_after_response.is_empty()) {
        return local;
    }
    // Room for the whole answer: it is weir's own.
    let limits = weir_proto::h1::Limits {
        max_head: local.bytes.len() + 1,
        max_headers: local.bytes.iter().filter(|&&b| b == b'\n').count() + 1,
        relaxed_target: false,
    };
    let method = tmpl.req.map_or("GET", |r| r.method.as_str());
    let Ok(Some((mut res, used))) = weir_proto::h1::parse_response(&local.bytes, &limits, method)
    else {
        return local;
    };
    let mut dirty = false;
    if let Some(r) = run_response_phases(pxs, true, &mut res, vars, tmpl, &mut dirty) {
        return Local { keep: false, ..r };
    }
    if dirty {
        let mut bytes = weir_proto::h1::write_response(&res);
        bytes.extend_from_slice(local.bytes.get(used..).unwrap_or_default());
        local.bytes = bytes;
        local.status = res.status;
    }
    local
}

/// What a `capture <sample> len <n>` rule keeps: the sample as text, cut
/// to `len` bytes (empty when the fetch finds nothing).
pub(crate) fn captured(expr: &weir_rules::Expr, len: usize, ctx: &dyn Ctx) -> String {
    let v = expr.eval(ctx).map(|s| s.to_bytes()).unwrap_or_default();
    String::from_utf8_lossy(v.get(..len).unwrap_or(&v)).into_owned()
}

/// A header edit computed with the request borrowed, applied after.
enum Edit {
    /// The operation, its rendered value and its rendered replacement.
    Header(HeaderOp, Vec<u8>, Vec<u8>),
    Status(u16, String),
    Uri(String),
    Method(String),
    SetVar(VarSet, Option<Sample>),
    UnsetVar(String),
    /// `set-src|dst(-port)`: the address part and its new value.
    Addr(weir_rules::AddrPart, Option<Sample>),
    Capture(usize, String),
    Timeout(weir_rules::action::TimeoutKind, Option<Duration>),
}

fn apply_header(hs: &mut Vec<Header>, op: &HeaderOp, value: Vec<u8>, w: &[u8]) {
    match op {
        HeaderOp::Set(n, _) => {
            hs.retain(|h| !h.is(n));
            hs.push(Header::new(n, &value));
        }
        HeaderOp::Add(n, _) => hs.push(Header::new(n, &value)),
        HeaderOp::Del(m) => hs.retain(|h| !m.matches(h.name())),
        HeaderOp::Replace {
            name,
            re,
            each_value,
            ..
        } => {
            let w = &weir_rules::matching::backrefs(w)[..];
            for h in hs.iter_mut().filter(|h| h.is(name)) {
                if *each_value {
                    let parts: Vec<Vec<u8>> = h
                        .value()
                        .split(|&b| b == b',')
                        .map(|v| {
                            let v = v.trim_ascii();
                            re.replace(v, w).into_owned()
                        })
                        .collect();
                    h.set_value(&parts.join(&b", "[..]));
                } else {
                    let v = re.replace(h.value(), w).into_owned();
                    h.set_value(&v);
                }
            }
        }
    }
}

pub fn local_headers(
    status: u16,
    ctype: Option<&str>,
    len: usize,
    extra: &[(String, Vec<u8>)],
) -> Vec<u8> {
    let mut out = format!(
        "HTTP/1.1 {status} {}\r\ncontent-length: {len}\r\n",
        weir_proto::h1::status::generated_reason(status)
    )
    .into_bytes();
    if let Some(t) = ctype {
        out.extend_from_slice(format!("content-type: {t}\r\n").as_bytes());
    }
    for (n, v) in extra {
        out.extend_from_slice(n.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(v);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"\r\n");
    out
}

/// The answer of a `return` action.
pub fn return_response(r: &Return, px: &Proxy, ctx: &dyn Ctx) -> Vec<u8> {
    // A header that renders empty is left out, and so is the content
    // type of an empty body (as haproxy 2.6 answers).
    let hdrs: Vec<(String, Vec<u8>)> = r
        .headers
        .iter()
        .map(|(n, f)| (n.clone(), f.render(ctx)))
        .filter(|(_, v)| !v.is_empty())
        .collect();
    let body = match &r.body {
        Body::None => Vec::new(),
        Body::Static(b) => b.clone(),
        Body::Fmt(f) => f.render(ctx),
        // A section the configuration did not resolve: the proxy's page.
        Body::ErrorPage(_) | Body::Section(_) => return errors::reply_of(&[px], r.status, ctx),
        Body::Raw(b) => return b.clone(),
    };
    let ctype = r.content_type.as_deref().filter(|_| !body.is_empty());
    let mut out = local_headers(r.status, ctype, body.len(), &hdrs);
    out.extend_from_slice(&body);
    out
}

/// The answer of a redirect; `None` when `ignore-empty` skips it.
pub fn redirect_response(r: &Redirect, ctx: &dyn Ctx) -> Option<Vec<u8>> {
    let to = String::from_utf8_lossy(&r.to.render(ctx)).into_owned();
    if r.ignore_empty && to.is_empty() {
        return None;
    }
    let uri = ctx.uri();
    let (path, query) = match uri.find('?') {
        Some(i) => (&uri[..i], &uri[i..]),
        None => (uri, ""),
    };
    let query = if r.drop_query { "" } else { query };
    let mut loc = match r.kind {
        RedirectKind::Location => to,
        RedirectKind::Prefix => {
            let base = if to == "/" { "" } else { to.as_str() };
            format!("{base}{path}{query}")
        }
        RedirectKind::Scheme => {
            let host = ctx
                .req_headers()
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case("host"))
                .map(|(_, v)| String::from_utf8_lossy(v).into_owned())
                .unwrap_or_default();
            format!("{to}://{host}{path}{query}")
        }
    };
    if r.append_slash && !loc.ends_with('/') && query.is_empty() {
        loc.push('/');
    }
    Some(local_headers(
        r.code,
        None,
        0,
        &[
            ("location".into(), loc.into_bytes()),
            ("cache-control".into(), b"no-cache".to_vec()),
        ],
    ))
}

fn header_edit(op: &HeaderOp, ctx: &dyn Ctx) -> Edit {
    let v = match op {
        HeaderOp::Set(_, f) | HeaderOp::Add(_, f) => f.render(ctx),
        _ => Vec::new(),
    };
    let w = match op {
        HeaderOp::Replace { with, .. } => with.render(ctx),
        _ => Vec::new(),
    };
    Edit::Header(op.clone(), v, w)
}

/// Runs `rules` on `req` (with the body when buffered); `tmpl` is the
/// fetch context, completed with the request as rules rewrite it.
#[allow(clippy::too_many_arguments)]
pub fn run_request(
    rules: &[Rule<ReqAction>],
    px: &Proxy,
    req: &mut RequestHead,
    vars: &mut Vars,
    tmpl: &mut ExCtx<'_>,
    dirty: &mut bool,
    body: Option<&[u8]>,
) -> Verdict {
    for (i, rule) in rules.iter().enumerate() {
        let step = {
            let ctx = ExCtx {
                req: Some(req),
                vars: Some(vars),
                body,
                ..*tmpl
            };
            if !rule.applies(&ctx) {
                continue;
            }
            request_step(rule, i, px, req, &ctx)
        };
        match step {
            Step::Edit(edit) => apply_request_edit(edit, req, vars, tmpl, dirty),
            Step::Stop(v) => {
                if !matches!(v, Verdict::WaitBody { .. }) {
                    vars.last_rule = rule.at.clone();
                }
                return v;
            }
            Step::Skip => {}
        }
    }
    Verdict::Continue
}

/// What one request rule does: an edit of the request, a verdict that ends
/// the rules, or nothing.
enum Step {
    Edit(Edit),
    Stop(Verdict),
    Skip,
}

/// The step of request rule `i` (whose condition holds) on `ctx`.
fn request_step(
    rule: &Rule<ReqAction>,
    i: usize,
    px: &Proxy,
    req: &RequestHead,
    ctx: &ExCtx<'_>,
) -> Step {
    let edit = match &rule.action {
        ReqAction::Allow => return Step::Stop(Verdict::Continue),
        ReqAction::Deny { status, answer } => {
            let bytes = match answer {
                Some(r) => return_response(r, px, ctx),
                None => errors::reply_of(&[px], *status, ctx),
            };
            return Step::Stop(Verdict::Respond(Local {
                bytes,
                status: *status,
                term: Term::new(Cause::Proxy, State::Request),
                keep: !errors::closes(*status),
            }));
        }
        ReqAction::Reject => {
            return Step::Stop(Verdict::Close {
                reset: false,
                http: true,
            })
        }
        ReqAction::Replace { part, re, with } => {
            match part.replace(&req.uri, re, &with.render(ctx)) {
                Some(u) => Edit::Uri(u),
                None => return Step::Skip,
            }
        }
        ReqAction::SetAddr(part, e) => Edit::Addr(*part, e.eval(ctx)),
        ReqAction::Tarpit { status } => return Step::Stop(Verdict::Tarpit(*status)),
        ReqAction::Return(r) => {
            return Step::Stop(Verdict::Respond(Local {
                bytes: return_response(r, px, ctx),
                status: r.status,
                term: Term::new(Cause::Local, State::Request),
                keep: true,
            }))
        }
        ReqAction::Redirect(r) => {
            let Some(bytes) = redirect_response(r, ctx) else {
                return Step::Skip;
            };
            return Step::Stop(Verdict::Respond(Local {
                bytes,
                status: r.code,
                term: Term::new(Cause::Local, State::Request),
                keep: true,
            }));
        }
        ReqAction::Header(op) => header_edit(op, ctx),
        ReqAction::SetPath(f) | ReqAction::SetPathQ(f) | ReqAction::SetUri(f) => {
            let part = match &rule.action {
                ReqAction::SetPath(_) => UriPart::Path,
                ReqAction::SetPathQ(_) => UriPart::PathQ,
                _ => UriPart::Uri,
            };
            let v = String::from_utf8_lossy(&f.render(ctx)).into_owned();
            Edit::Uri(part.set(&req.uri, &v))
        }
        ReqAction::SetQuery(f) => {
            let q = String::from_utf8_lossy(&f.render(ctx)).into_owned();
            let p = req.uri.split('?').next().unwrap_or("");
            Edit::Uri(if q.is_empty() {
                p.to_string()
            } else {
                format!("{p}?{q}")
            })
        }
        ReqAction::SetMethod(f) => {
            Edit::Method(String::from_utf8_lossy(&f.render(ctx)).into_owned())
        }
        ReqAction::SetVar(n, e) => Edit::SetVar(n.clone(), e.eval(ctx)),
        ReqAction::UnsetVar(n) => Edit::UnsetVar(n.clone()),
        ReqAction::SetLogLevel => return Step::Skip,
        ReqAction::NormalizeUri(n) => match n.apply(&req.uri) {
            Some(u) => Edit::Uri(u),
            None => return Step::Stop(Verdict::Fail(400, Term::new(Cause::Proxy, State::Request))),
        },
        ReqAction::Capture {
            expr, len, slot, ..
        } => Edit::Capture(*slot, captured(expr, *len, ctx)),
        ReqAction::SetTimeout(kind, v) => Edit::Timeout(*kind, v.eval(ctx)),
        ReqAction::Auth { realm } => {
            let realm = realm.as_deref().unwrap_or(&px.name);
            return Step::Stop(Verdict::Respond(Local {
                bytes: errors::with_header(
                    errors::response(px, 401, false),
                    &format!("www-authenticate: Basic realm=\"{realm}\""),
                ),
                status: 401,
                term: Term::new(Cause::Local, State::Request),
                keep: true,
            }));
        }
        ReqAction::UseService(s) => return Step::Stop(Verdict::Service(*s)),
        ReqAction::WaitForBody { time, at_least } => {
            return Step::Stop(Verdict::WaitBody {
                next: i + 1,
                time: *time,
                at_least: *at_least,
            })
        }
    };
    Step::Edit(edit)
}

/// Applies a request rule's edit.
fn apply_request_edit(
    edit: Edit,
    req: &mut RequestHead,
    vars: &mut Vars,
    tmpl: &mut ExCtx<'_>,
    dirty: &mut bool,
) {
    match edit {
        Edit::Header(op, v, w) => {
            apply_header(&mut req.headers, &op, v, &w);
            *dirty = true;
        }
        Edit::Uri(u) => {
            if !u.is_empty() && !u.bytes().any(|b| b <= b' ' || b == 0x7f) {
                req.uri = u;
                *dirty = true;
            }
        }
        Edit::Method(m) => {
            if !m.is_empty()
                && m.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
            {
                req.method = m;
                *dirty = true;
            }
        }
        Edit::SetVar(n, Some(v)) => vars.set_if(&n, v),
        Edit::SetVar(_, None) | Edit::Status(..) => {}
        Edit::UnsetVar(n) => vars.unset(&n),
        Edit::Capture(slot, v) => vars.captures.push((slot, v)),
        Edit::Timeout(kind, Some(d)) => match kind {
            weir_rules::action::TimeoutKind::Server => vars.timeouts.server = Some(d),
            weir_rules::action::TimeoutKind::Tunnel => vars.timeouts.tunnel = Some(d),
        },
        Edit::Timeout(_, None) => {}
        Edit::Addr(part, Some(v)) => {
            use weir_rules::AddrPart::{Dst, DstPort, Src, SrcPort};
            let a = match part {
                Src | SrcPort => &mut tmpl.src,
                Dst | DstPort => &mut tmpl.dst,
            };
            crate::tcp::rules::set_addr(a, part, &v);
        }
        Edit::Addr(_, None) => {}
    }
}

/// Runs response `rules` on `res`; returns a replacement answer when a rule
/// denies or returns.
pub fn run_response(
    rules: &[Rule<ResAction>],
    px: &Proxy,
    res: &mut ResponseHead,
    vars: &mut Vars,
    tmpl: &ExCtx<'_>,
    dirty: &mut bool,
) -> Option<Local> {
    for rule in rules {
        // `Err`: the rule ends the set (with an answer replacing the
        // server's, or none for `allow`).
        let step: Result<Edit, Option<Local>> = {
            let ctx = ExCtx {
                res: Some(res),
                vars: Some(vars),
                ..*tmpl
            };
            if !rule.applies(&ctx) {
                continue;
            }
            match &rule.action {
                ResAction::Allow => Err(None),
                ResAction::Deny { status, answer } => Err(Some(Local {
                    bytes: match answer {
                        Some(r) => return_response(r, px, &ctx),
                        None => errors::reply_of(&[px], *status, &ctx),
                    },
                    status: *status,
                    term: Term::new(Cause::Proxy, State::Headers),
                    keep: !errors::closes(*status),
                })),
                ResAction::Return(r) => Err(Some(Local {
                    bytes: return_response(r, px, &ctx),
                    status: r.status,
                    term: Term::NORMAL,
                    keep: true,
                })),
                ResAction::Redirect(r) => {
                    // `ignore-empty` with an empty location: the next rule.
                    let Some(bytes) = redirect_response(r, &ctx) else {
                        continue;
                    };
                    Err(Some(Local {
                        bytes,
                        status: r.code,
                        term: Term::NORMAL,
                        keep: true,
                    }))
                }
                ResAction::Header(op) => Ok(header_edit(op, &ctx)),
                ResAction::SetStatus { status, reason } => Ok(Edit::Status(
                    *status,
                    reason.clone().unwrap_or_else(|| {
                        weir_proto::h1::status::generated_reason(*status).to_string()
                    }),
                )),
                ResAction::SetVar(n, e) => Ok(Edit::SetVar(n.clone(), e.eval(&ctx))),
                ResAction::UnsetVar(n) => Ok(Edit::UnsetVar(n.clone())),
                // Done before the rules ran (see `respond::wait_body`).
                ResAction::SetLogLevel | ResAction::WaitForBody { .. } => continue,
            }
        };
        let edit = match step {
            Ok(edit) => edit,
            Err(answer) => {
                vars.last_rule = rule.at.clone();
                return answer;
            }
        };
        match edit {
            Edit::Header(op, v, w) => {
                apply_header(&mut res.headers, &op, v, &w);
                *dirty = true;
            }
            Edit::Status(s, r) => {
                res.status = s;
                res.reason = r;
                *dirty = true;
            }
            Edit::SetVar(n, Some(v)) => vars.set_if(&n, v),
            Edit::UnsetVar(n) => vars.unset(&n),
            _ => {}
        }
    }
    None
}
