//! What the rules of a check see through fetches and variables: the
//! backend and server checked, the check's variables (`check.*`,
//! `sess.*`, `proc.*`), the response read and the bytes received.

use super::http::Reply;
use crate::state::procvars::{ProcVars, VarStore};
use std::net::SocketAddr;
use weir_rules::vars::VarSet;
use weir_rules::{Ctx, Sample};

/// A check's variables: its own (`check.*`, and any other scope but
/// `proc`), and the process's.
pub(crate) struct Vars {
    own: VarStore,
    proc: ProcVars,
}

impl Vars {
    pub fn new(proc: &ProcVars) -> Vars {
        Vars {
            own: VarStore::default(),
            proc: proc.clone(),
        }
    }
    fn store(&self, name: &str) -> &VarStore {
        match name.starts_with("proc.") {
            true => self.proc.store(),
            false => &self.own,
        }
    }
    pub fn get(&self, name: &str) -> Option<Sample> {
        self.store(name).get(name)
    }
    /// `set-var`: stores `v` when the variable's conditions hold (a
    /// `proc` variable always exists).
    pub fn set_if(&self, var: &VarSet, v: Sample) {
        let cur = self.get(&var.name);
        let exists = var.name.starts_with("proc.") || cur.is_some();
        if var.allows(cur.as_ref(), exists, &v) {
            self.store(&var.name).set(&var.name, v);
        }
    }
    pub fn unset(&self, name: &str) {
        self.store(name).unset(name)
    }
}

/// The backend and server a check runs for, and its variables.
pub(crate) struct Env {
    pub be: String,
    pub be_id: i64,
    pub srv: String,
    pub srv_id: i64,
    pub vars: Vars,
    /// `http-check send-state`: the state header's value.
    pub state: Option<String>,
    /// The server is running (`http-check disable-on-404` applies).
    pub running: bool,
    /// `http-check disable-on-404`.
    pub disable_404: bool,
    /// The server's checks speak HTTP/2 (`check-proto`, else `proto`).
    pub h2: bool,
}

/// One evaluation's view: the environment, the response and the bytes.
pub(super) struct CheckCtx<'a> {
    pub env: &'a Env,
    pub reply: Option<&'a Reply>,
    pub payload: &'a [u8],
}

impl Ctx for CheckCtx<'_> {
    fn src(&self) -> Option<SocketAddr> {
        None
    }
    fn dst(&self) -> Option<SocketAddr> {
        None
    }
    fn res_headers(&self) -> Vec<(&str, &[u8])> {
        self.reply
            .map(|r| r.headers.iter().map(|h| (h.name(), h.value())).collect())
            .unwrap_or_default()
    }
    fn status(&self) -> Option<u16> {
        self.reply.map(|r| r.status)
    }
    fn res_version(&self) -> Option<&str> {
        self.reply.map(|r| r.version.as_str())
    }
    fn srv_name(&self) -> Option<String> {
        Some(self.env.srv.clone())
    }
    fn backend(&self) -> Option<(String, i64)> {
        Some((self.env.be.clone(), self.env.be_id))
    }
    fn server_id(&self) -> Option<i64> {
        Some(self.env.srv_id)
    }
    fn var(&self, name: &str) -> Option<Sample> {
        self.env.vars.get(name)
    }
    fn set_var(&self, var: &VarSet, v: &Sample) {
        self.env.vars.set_if(var, v.clone())
    }
    fn unset_var(&self, name: &str) {
        self.env.vars.unset(name)
    }
    fn res_payload(&self) -> Option<(&[u8], bool)> {
        Some((self.payload, true))
    }
}
