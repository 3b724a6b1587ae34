//! The load-time check of a sample expression's types (pure): haproxy
//! refuses a converter whose input the sample before it cannot be cast
//! to ("converter 'add' cannot be applied"). weir knows the output type of
//! the fetches and converters that give binaries, booleans and addresses,
//! and the converters that need an integer or an address; where a type is
//! not known, nothing is refused.

use crate::conv::More;
use crate::internal::Internal;
use crate::payload::PayloadFetch;
use crate::sample::{Conv, Fetch, SslFetch};
use crate::ssl::CertField;
use crate::textconv::TextConv;

/// A sample type, as far as the check knows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ty {
    Str,
    Bin,
    Int,
    Bool,
    Ipv4,
    Ipv6,
    /// Not known before run time.
    Any,
}

/// What a converter needs as input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Need {
    Int,
    Addr,
    Anything,
}

/// Checks `convs` after `fetch`; `names` are the converters as written.
pub fn check(fetch: &Fetch, convs: &[Conv], names: &[&str]) -> Result<(), String> {
    let mut ty = fetch_type(fetch);
    for (c, name) in convs.iter().zip(names) {
        let castable = match need(c) {
            Need::Int => !matches!(ty, Ty::Bin | Ty::Ipv6),
            Need::Addr => !matches!(ty, Ty::Bin | Ty::Bool),
            Need::Anything => true,
        };
        if !castable {
            return Err(format!("converter '{name}' cannot be applied"));
        }
        ty = conv_type(c);
    }
    Ok(())
}

fn fetch_type(f: &Fetch) -> Ty {
    match f {
        Fetch::Str(_) => Ty::Str,
        Fetch::Int(_) => Ty::Int,
        Fetch::Internal(Internal::Bin(_)) => Ty::Bin,
        Fetch::Internal(Internal::Bool(_)) => Ty::Bool,
        Fetch::Internal(Internal::Ip(ip)) => {
            if ip.is_ipv4() {
                Ty::Ipv4
            } else {
                Ty::Ipv6
            }
        }
        Fetch::Payload(PayloadFetch::Payload { .. } | PayloadFetch::PayloadLv { .. })
        | Fetch::ResPayload(PayloadFetch::Payload { .. } | PayloadFetch::PayloadLv { .. })
        | Fetch::Body
        | Fetch::Ssl(SslFetch::Cert(
            _,
            CertField::Der | CertField::ChainDer | CertField::Sha1 | CertField::Serial,
        )) => Ty::Bin,
        _ => Ty::Any,
    }
}

fn need(c: &Conv) -> Need {
    match c {
        Conv::IpMask(..) => Need::Addr,
        Conv::More(
            More::Arith(..)
            | More::Neg
            | More::Cpl
            | More::Not
            | More::Bool
            | More::Odd
            | More::Even,
        )
        | Conv::Text(TextConv::Htonl | TextConv::HttpDate(..) | TextConv::Time { .. }) => Need::Int,
        _ => Need::Anything,
    }
}

fn conv_type(c: &Conv) -> Ty {
    match c {
        Conv::B64Dec | Conv::Ub64Dec | Conv::Bytes { .. } => Ty::Bin,
        Conv::More(More::Digest(_) | More::Hmac(..) | More::AesGcmDec(_)) => Ty::Bin,
        Conv::More(More::Protobuf(c)) if c.ty.is_some() => Ty::Int,
        Conv::More(More::Protobuf(_)) => Ty::Bin,
        Conv::Length | Conv::Hash(_) => Ty::Int,
        Conv::More(More::Arith(..) | More::Neg | More::Cpl) => Ty::Int,
        Conv::More(More::Not | More::Bool | More::Odd | More::Even) => Ty::Bool,
        Conv::Lower | Conv::Upper | Conv::Hex | Conv::Base64 => Ty::Str,
        Conv::Stick(c) if crate::stick::is_bool(c.what) => Ty::Bool,
        Conv::Stick(_) => Ty::Int,
        _ => Ty::Any,
    }
}
