//! The process's variables (`proc.*`): one store shared by every
//! connection and thread, filled first by `global`'s `set-var` and
//! `set-var-fmt` lines, read and written by rules and the CLI.

use std::sync::{Arc, Mutex, MutexGuard};
use weir_rules::vars::VarValue;
use weir_rules::{Ctx, Sample};

/// Named values behind a lock, so that a converter evaluated through a
/// shared view (`set-var` as a converter) can write them. Cloning copies
/// the values.
#[derive(Debug, Default)]
pub struct VarStore(Mutex<Vec<(String, Sample)>>);

impl Clone for VarStore {
    fn clone(&self) -> VarStore {
        VarStore(Mutex::new(self.lock().clone()))
    }
}

impl VarStore {
    fn lock(&self) -> MutexGuard<'_, Vec<(String, Sample)>> {
        // A panic elsewhere cannot leave a half-written entry: writes are
        // single assignments.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
    pub fn get(&self, name: &str) -> Option<Sample> {
        self.lock()
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    }
    pub fn set(&self, name: &str, v: Sample) {
        let mut vals = self.lock();
        match vals.iter_mut().find(|(n, _)| n == name) {
            Some(e) => e.1 = v,
            None => vals.push((name.to_string(), v)),
        }
    }
    pub fn unset(&self, name: &str) {
        self.retain(|n| n != name);
    }
    /// Keeps the values whose name passes `keep`.
    pub fn retain(&self, keep: impl Fn(&str) -> bool) {
        self.lock().retain(|(n, _)| keep(n));
    }
    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }
}

/// A handle on the process's store (cheap to clone: every handle sees one
/// store).
#[derive(Debug, Default, Clone)]
pub struct ProcVars(Arc<VarStore>);

impl ProcVars {
    /// The store itself.
    pub fn store(&self) -> &VarStore {
        &self.0
    }
    pub fn get(&self, name: &str) -> Option<Sample> {
        self.0.get(name)
    }
    pub fn set(&self, name: &str, v: Sample) {
        self.0.set(name, v)
    }
    pub fn unset(&self, name: &str) {
        self.0.unset(name)
    }

    /// Runs `global`'s `set-var` lines in order (each sees the ones
    /// before it).
    pub fn init(&self, lines: &[(weir_rules::vars::VarSet, VarValue)]) {
        for (var, value) in lines {
            let ctx = ProcCtx(self);
            if let Some(v) = value.eval(&ctx) {
                ctx.set_var(var, &v);
            }
        }
    }
}

/// What an expression sees outside any connection: the process's
/// variables only.
pub struct ProcCtx<'a>(pub &'a ProcVars);

impl Ctx for ProcCtx<'_> {
    fn src(&self) -> Option<std::net::SocketAddr> {
        None
    }
    fn dst(&self) -> Option<std::net::SocketAddr> {
        None
    }
    fn var(&self, name: &str) -> Option<Sample> {
        name.starts_with("proc.")
            .then(|| self.0.get(name))
            .flatten()
    }
    fn set_var(&self, var: &weir_rules::vars::VarSet, v: &Sample) {
        let cur = self.0.get(&var.name);
        if var.name.starts_with("proc.") && var.allows(cur.as_ref(), true, v) {
            self.0.set(&var.name, v.clone());
        }
    }
    fn unset_var(&self, name: &str) {
        if name.starts_with("proc.") {
            self.0.unset(name);
        }
    }
}
