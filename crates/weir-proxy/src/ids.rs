//! Typed indexes: a frontend, a backend, a proxy (a configuration section)
//! and a server of a backend each have their own kind, so that one is never
//! taken for another. What they index is in `state` (`state/ids.rs`).

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

id!(
    ServerId,
    "A server of a backend: its place in `BackendRt::servers`, in its proxy's `servers` and in the balancer's set."
);
