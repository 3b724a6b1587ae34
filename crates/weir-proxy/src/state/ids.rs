//! Typed indexes into the live state: a frontend, a backend and a proxy (a
//! configuration section) each have their own kind, so that one is never
//! taken for another; `Shared` maps a proxy to its frontend and backend in
//! O(1).

use super::{BackendRt, FrontendRt};
use std::ops::Index;
use std::sync::Arc;

macro_rules! id {
    ($name:ident, $doc:literal) => {
        #[doc = $doc]
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(u32);

        impl $name {
            pub fn new(i: usize) -> Self {
                $name(i as u32)
            }
            pub fn index(self) -> usize {
                self.0 as usize
            }
        }
    };
}

id!(FrontendId, "A frontend: its place in `Shared::frontends`.");
id!(BackendId, "A backend: its place in `Shared::backends`.");
id!(
    ProxyId,
    "A configuration section: its place in `Config::proxies`."
);

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
