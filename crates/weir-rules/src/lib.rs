//! ACLs, sample fetches, converters and HTTP rule actions, HAProxy's rule
//! language: parsed once from configuration words, evaluated per request
//! against a context the runtime provides. Pure: no I/O, no clock.
// Network input never panics: no unwrap or expect outside tests.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)
)]
#![forbid(unsafe_code)]

pub mod acl;
pub mod action;
pub mod aead;
pub mod args;
pub mod auth;
pub mod conv;
pub mod fetching;
pub mod fix;
pub mod fmt;
pub mod hash;
pub mod hdrfetch;
pub mod internal;
pub mod json;
pub mod jwt;
pub mod live;
pub mod lua;
pub mod matching;
pub mod mqtt;
pub mod normalize;
pub mod ocsp;
pub mod patref;
pub mod payload;
pub mod protobuf;
pub mod redirect;
pub mod sample;
pub mod sockopt;
pub mod ssl;
pub mod stick;
mod strconv;
pub use strconv::url_dec;
pub mod tcp;
pub mod textconv;
mod types;
pub mod vars;
pub mod x509;

pub use acl::{split_cond, Acl, Cond, Loader};
pub use action::{
    parse_redirect, parse_request_rule, parse_response_rule, Body, HeaderOp, Redirect,
    RedirectKind, ReqAction, ResAction, Return, Rule, RuleAt,
};
pub use fmt::Fmt;
pub use sample::{Ctx, Expr, Sample, TlsInfo};
pub use strconv::base64;
pub use tcp::{parse_tcp_rule, AddrPart, TcpAction, TcpRuleSet};

/// A view with nothing in it (no connection, no variables), for the unit
/// tests of converters.
#[cfg(test)]
pub(crate) struct NoCtx;

#[cfg(test)]
impl Ctx for NoCtx {
    fn src(&self) -> Option<std::net::SocketAddr> {
        None
    }
    fn dst(&self) -> Option<std::net::SocketAddr> {
        None
    }
}
