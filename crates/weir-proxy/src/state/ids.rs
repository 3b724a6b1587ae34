//! Typed indexes into the live state: a frontend, a backend, a proxy (a
//! configuration section) and a server of a backend each have their own
//! kind, so that one is never taken for another; `Shared` maps a proxy to
//! its frontend and backend in O(1).

use super::{BackendRt, FrontendRt, ServerRt};
use std::ops::Index;
use std::sync::Arc;

pub use crate::ids::{BackendId, FrontendId, ProxyId, ServerId};

impl Index<ServerId> for Vec<Arc<ServerRt>> {
    type Output = Arc<ServerRt>;
    fn index(&self, id: ServerId) -> &Arc<ServerRt> {
        &self[id.index()]
    }
}

impl Index<ServerId> for Vec<weir_config::Server> {
    type Output = weir_config::Server;
    fn index(&self, id: ServerId) -> &weir_config::Server {
        &self[id.index()]
    }
}

impl Index<FrontendId> for Vec<FrontendRt> {
    type Output = FrontendRt;
    fn index(&self, id: FrontendId) -> &FrontendRt {
        &self[id.index()]
    }
}

impl Index<BackendId> for Vec<Arc<BackendRt>> {
    type Output = Arc<BackendRt>;
    fn index(&self, id: BackendId) -> &Arc<BackendRt> {
        &self[id.index()]
    }
}

impl Index<ProxyId> for Vec<weir_config::Proxy> {
    type Output = weir_config::Proxy;
    fn index(&self, id: ProxyId) -> &weir_config::Proxy {
        &self[id.index()]
    }
}

/// What a proxy became: its frontend and its backend, when it has them.
#[derive(Debug, Clone, Copy, Default)]
pub struct Roles {
    pub frontend: Option<FrontendId>,
    pub backend: Option<BackendId>,
}
