//! Typed indexes into the live state: a frontend, a backend, a proxy (a
//! configuration section) and a server of a backend each have their own
//! kind, so that one is never taken for another; `Shared` maps a proxy to
//! its frontend and backend in O(1).
//!
//! The lookups below are the crate's only indexing by id. An id is minted by
//! `state::build` from a place in the very list it indexes, and the lists
//! never shrink (a deleted server keeps its slot), so a lookup cannot miss (a miss would be a bug in `build`,
//! not an input weir receives).
#![allow(clippy::indexing_slicing)]

use super::{BackendRt, FrontendRt, ServerRt, Shared};
use std::sync::Arc;

pub use crate::ids::{BackendId, FrontendId, ProxyId, ServerId};

impl Shared {
    /// The frontend `id` names.
    pub fn frontend(&self, id: FrontendId) -> &FrontendRt {
        &self.frontends[id.index()]
    }
    /// The backend `id` names.
    pub fn backend(&self, id: BackendId) -> &Arc<BackendRt> {
        &self.backends[id.index()]
    }
    /// The configuration section `id` names.
    pub fn proxy(&self, id: ProxyId) -> &weir_config::Proxy {
        &self.cfg.proxies[id.index()]
    }
    /// What the section `id` became.
    pub fn roles(&self, id: ProxyId) -> Roles {
        self.roles[id.index()]
    }
}

impl BackendRt {
    /// The live state of the server `id` names.
    pub fn server(&self, id: ServerId) -> &Arc<ServerRt> {
        &self.slots[id.index()]
    }
}

/// What a proxy became: its frontend and its backend, when it has them.
#[derive(Debug, Clone, Copy, Default)]
pub struct Roles {
    pub frontend: Option<FrontendId>,
    pub backend: Option<BackendId>,
}
