//! A fetch's values for a request (manual §7.3): the fetches of
//! [`Fetch`] evaluated against the runtime's [`Ctx`], one value at most
//! without a list (`fetch_single`), or every occurrence (`fetch_all`).

use crate::sample::{Ctx, Fetch, Sample};

fn header_values<'a>(hs: &[(&'a str, &'a [u8])], name: Option<&str>, full: bool) -> Vec<&'a [u8]> {
    let mut out = Vec::new();
    for (n, v) in hs {
        if name.is_some_and(|w| !n.eq_ignore_ascii_case(w)) {
            continue;
        }
        if full {
            // Without the spaces around it (a rule may have set them).
            out.push(v.trim_ascii());
        } else {
            out.extend(v.split(|&b| b == b',').map(<[u8]>::trim_ascii));
        }
    }
    out
}

fn pick_occ(mut vals: Vec<&[u8]>, occ: Option<i64>, all: bool) -> Vec<Sample> {
    match occ {
        None if all => vals.into_iter().map(|v| Sample::Str(v.to_vec())).collect(),
        None => vals
            .pop()
            .map(|v| vec![Sample::Str(v.to_vec())])
            .unwrap_or_default(),
        Some(0) => vals.into_iter().map(|v| Sample::Str(v.to_vec())).collect(),
        Some(n) => {
            let len = vals.len() as i64;
            let i = if n > 0 { n - 1 } else { len + n };
            usize::try_from(i)
                .ok()
                .and_then(|i| vals.get(i))
                .map(|v| vec![Sample::Str(v.to_vec())])
                .unwrap_or_default()
        }
    }
}

fn path_of(uri: &str) -> &str {
    let no_query = uri.split('?').next().unwrap_or(uri);
    match no_query.find("://") {
        Some(i) => {
            let rest = &no_query[i + 3..];
            rest.find('/').map_or("/", |j| &rest[j..])
        }
        None => no_query,
    }
}

pub(crate) fn cookies(hs: &[(&str, &[u8])], name: Option<&str>) -> Vec<Sample> {
    let mut out = Vec::new();
    for (n, v) in hs {
        if !n.eq_ignore_ascii_case("cookie") {
            continue;
        }
        for part in v.split(|&b| b == b';') {
            let part = part.trim_ascii();
            let (k, val) = match part.iter().position(|&b| b == b'=') {
                Some(i) => (
                    part.get(..i).unwrap_or_default(),
                    part.get(i + 1..).unwrap_or_default(),
                ),
                None => (part, &b""[..]),
            };
            if name.is_none_or(|w| k == w.as_bytes()) {
                out.push(Sample::Str(val.to_vec()));
            }
        }
    }
    out
}

/// `req.body_size`: `Content-Length`, else the length of the body
/// buffered (none: 0).
fn body_size(ctx: &dyn Ctx) -> Option<Sample> {
    let announced = header_values(&ctx.req_headers(), Some("content-length"), true)
        .last()
        .and_then(|v| std::str::from_utf8(v).ok()?.trim().parse::<i64>().ok());
    let available = || ctx.body().map_or(0, |b| b.len() as i64);
    Some(Sample::Int(announced.unwrap_or_else(available)))
}

fn one(v: Option<Sample>) -> Vec<Sample> {
    v.into_iter().collect()
}

/// The value of a fetch that gives one at most, with no list made (the
/// addresses, the status, stick counters …, read on every request by the
/// common rules); `None` when `f` may give several ([`fetch_all`]).
pub(crate) fn fetch_single(f: &Fetch, ctx: &dyn Ctx) -> Option<Option<Sample>> {
    Some(match f {
        Fetch::Src => ctx.src().map(|a| Sample::Ip(a.ip())),
        Fetch::SrcPort => ctx.src().map(|a| Sample::Int(i64::from(a.port()))),
        Fetch::Dst => ctx.dst().map(|a| Sample::Ip(a.ip())),
        Fetch::DstPort => ctx.dst().map(|a| Sample::Int(i64::from(a.port()))),
        Fetch::Status => ctx.status().map(|x| Sample::Int(i64::from(x))),
        Fetch::Internal(k) => crate::internal::fetch(k, ctx),
        Fetch::Live(l) => ctx.live(l).map(|n| l.sample(n)),
        Fetch::Stick(f) => crate::stick::fetch(f, ctx),
        _ => return None,
    })
}

pub(crate) fn fetch_all(f: &Fetch, ctx: &dyn Ctx, all: bool) -> Vec<Sample> {
    if let Some(v) = fetch_single(f, ctx) {
        return one(v);
    }
    let s = |x: &str| Some(Sample::Str(x.as_bytes().to_vec()));
    match f {
        Fetch::Method => one(s(ctx.method())),
        Fetch::Path => one(s(path_of(ctx.uri()))),
        Fetch::PathQ => {
            let u = ctx.uri();
            let p = path_of(u);
            let q = u.find('?').map_or("", |i| &u[i..]);
            one(Some(Sample::Str(format!("{p}{q}").into_bytes())))
        }
        Fetch::Url => one(s(ctx.uri())),
        Fetch::Query => one(ctx.uri().split_once('?').and_then(|(_, q)| s(q))),
        Fetch::Base => {
            let host = header_values(&ctx.req_headers(), Some("host"), true)
                .first()
                .map(|h| String::from_utf8_lossy(h).into_owned())
                .unwrap_or_default();
            one(Some(Sample::Str(
                format!("{host}{}", path_of(ctx.uri())).into_bytes(),
            )))
        }
        Fetch::UrlParam(name) => one(ctx.uri().split_once('?').and_then(|(_, q)| {
            q.split(['&', ';'])
                .find_map(|kv| {
                    kv.strip_prefix(name.as_str())
                        .and_then(|r| r.strip_prefix('='))
                })
                .and_then(s)
        })),
        Fetch::ReqVer => one(s(ctx.version())),
        Fetch::Hdr { name, occ, full } => pick_occ(
            header_values(&ctx.req_headers(), name.as_deref(), *full),
            *occ,
            all,
        ),
        Fetch::ResHdr { name, occ, full } => pick_occ(
            header_values(&ctx.res_headers(), name.as_deref(), *full),
            *occ,
            all,
        ),
        Fetch::HdrIp { name, occ } => pick_occ(
            header_values(&ctx.req_headers(), name.as_deref(), false),
            *occ,
            all,
        )
        .into_iter()
        .filter_map(|v| v.to_ip().map(Sample::Ip))
        .collect(),
        Fetch::HdrCnt(name) => {
            let n = header_values(&ctx.req_headers(), name.as_deref(), false).len();
            vec![Sample::Int(n as i64)]
        }
        Fetch::HdrVal(name) => pick_occ(
            header_values(&ctx.req_headers(), Some(name), false),
            None,
            all,
        )
        .into_iter()
        .filter_map(|v| v.to_int().map(Sample::Int))
        .collect(),
        Fetch::Cook(name) => {
            let mut v = cookies(&ctx.req_headers(), name.as_deref());
            if all {
                v
            } else if name.is_none() {
                // Without a name, the first cookie (HAProxy's manual).
                v.truncate(1);
                v
            } else {
                v.pop().into_iter().collect()
            }
        }
        Fetch::Nbsrv(b) => one(ctx.nbsrv(b).map(Sample::Int)),
        Fetch::BeConn(b) => one(ctx.be_conn(b).map(Sample::Int)),
        Fetch::FeConn => vec![Sample::Int(ctx.fe_conn())],
        Fetch::SrvName => one(ctx.srv_name().map(|n| Sample::Str(n.into_bytes()))),
        Fetch::Var(n, default) => one(ctx
            .var(n)
            .or_else(|| default.as_ref().map(|d| Sample::Str(d.as_bytes().to_vec())))),
        Fetch::AlwaysTrue => vec![Sample::Bool(true)],
        Fetch::AlwaysFalse => vec![Sample::Bool(false)],
        Fetch::FirstReq => vec![Sample::Bool(ctx.first_req())],
        Fetch::Body => one(ctx.body().map(|b| Sample::Bin(b.to_vec()))),
        Fetch::HttpAuth(l) => vec![Sample::Bool(authenticated(ctx, l).is_some())],
        Fetch::HttpAuthGroup(l) => authenticated(ctx, l)
            .map(|(list, user)| {
                list.groups_of(&user)
                    .into_iter()
                    .map(|g| Sample::Str(g.into_bytes()))
                    .collect()
            })
            .unwrap_or_default(),
        Fetch::HttpAuthUser | Fetch::HttpAuthPass => one(credentials(ctx).map(|(u, p)| {
            Sample::Str(
                if matches!(f, Fetch::HttpAuthUser) {
                    u
                } else {
                    p
                }
                .into_bytes(),
            )
        })),
        Fetch::HttpAuthType => one(credentials(ctx).map(|_| Sample::Str(b"basic".to_vec()))),
        Fetch::BodyLen => one(ctx.body().map(|b| Sample::Int(b.len() as i64))),
        Fetch::BodySize => one(body_size(ctx)),
        Fetch::BodyParam(name) => one(ctx.body().and_then(|b| {
            b.split(|&c| c == b'&')
                .find_map(|kv| {
                    kv.strip_prefix(name.as_bytes())
                        .and_then(|r| r.strip_prefix(b"="))
                })
                .map(|v| Sample::Str(v.to_vec()))
        })),
        Fetch::Ssl(k) => crate::ssl::fetch(ctx, k),
        Fetch::AuthBearer(h) => crate::jwt::bearer(ctx, h.as_deref()).into_iter().collect(),
        Fetch::Payload(k) => crate::payload::fetch(ctx, k).into_iter().collect(),
        Fetch::ResPayload(k) => crate::payload::fetch_res(ctx, k).into_iter().collect(),
        Fetch::Str(x) => vec![Sample::Str(crate::args::raw_bytes(x).into_owned())],
        Fetch::Int(i) => vec![Sample::Int(*i)],
        Fetch::Hdrs(h) => h.fetch(ctx),
        Fetch::Lua(c) => one(ctx.lua_fetch(c)),
        Fetch::CacheHit => one(Some(Sample::Bool(ctx.cache_hit().is_some()))),
        Fetch::CacheName => one(ctx.cache_hit().map(|n| Sample::Str(n.into_bytes()))),
        // Answered by `fetch_single` above.
        Fetch::Src
        | Fetch::SrcPort
        | Fetch::Dst
        | Fetch::DstPort
        | Fetch::Status
        | Fetch::Internal(_)
        | Fetch::Live(_)
        | Fetch::Stick(_) => Vec::new(),
    }
}

/// The Basic credentials of the request, if any.
fn credentials(ctx: &dyn Ctx) -> Option<(String, String)> {
    let hs = ctx.req_headers();
    let v = hs
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("authorization"))?
        .1;
    crate::auth::basic_credentials(v)
}

/// The userlist and user name when the request's credentials are valid.
fn authenticated<'c>(ctx: &'c dyn Ctx, list: &str) -> Option<(&'c crate::auth::Userlist, String)> {
    let l = ctx.userlist(list)?;
    let (u, p) = credentials(ctx)?;
    l.check(&u, &p).then_some((l, u))
}
