//! Header and URL fetches of manual §7.3.6 beyond those of `sample.rs`:
//! whole header blocks and name lists (`req.hdrs`, `res.hdr_names` …),
//! line counts (`req.fhdr_cnt`), the response's counterparts of the
//! request header fetches (`res.hdr_cnt`, `res.hdr_val`, `res.hdr_ip`,
//! `res.cook*` and their `shdr*`/`scook*` aliases), and the URL's
//! (`baseq`, `base32`, `url32`, `url_ip`, `url_port`, `urlp_val`).

use crate::sample::{Ctx, Sample};

/// A fetch of this module with its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HdrFetch {
    /// `req.hdrs`, `res.hdrs`: the header block, as `name: value` lines
    /// and the empty line.
    Block {
        res: bool,
    },
    /// `req.hdr_names`, `res.hdr_names`: the names, in order.
    Names {
        res: bool,
        delim: Vec<u8>,
    },
    /// `req.fhdr_cnt`, `res.fhdr_cnt`: header lines (not values).
    LineCnt {
        res: bool,
        name: Option<String>,
    },
    /// `res.hdr_cnt`: comma-separated values.
    ResCnt(Option<String>),
    /// `res.hdr_val`: the last value as an integer.
    ResVal(String),
    /// `res.hdr_ip`.
    ResIp {
        name: Option<String>,
        occ: Option<i64>,
    },
    /// `res.cook`, `res.cook_cnt`, `res.cook_val`: the cookies that
    /// `Set-Cookie` sets.
    ResCook(Option<String>),
    ResCookCnt(Option<String>),
    ResCookVal(Option<String>),
    BaseQ,
    Base32,
    Url32,
    UrlIp,
    UrlPort,
    UrlpVal(String),
}

/// The fetch `name(args)` of this module, or `None` when `name` is not
/// one.
pub fn parse(name: &str, a: &[String]) -> Option<Result<HdrFetch, String>> {
    let first = a.first().filter(|x| !x.is_empty()).cloned();
    let need = |what: &str| {
        first
            .clone()
            .ok_or_else(|| format!("fetch method '{name}' expects {what}"))
    };
    let res = name.starts_with("res.");
    Some(Ok(match name {
        "req.hdrs" | "res.hdrs" => HdrFetch::Block { res },
        "req.hdr_names" | "res.hdr_names" => HdrFetch::Names {
            res,
            delim: first.map_or_else(|| b",".to_vec(), String::into_bytes),
        },
        "req.fhdr_cnt" | "res.fhdr_cnt" => HdrFetch::LineCnt { res, name: first },
        "res.hdr_cnt" | "shdr_cnt" => HdrFetch::ResCnt(first),
        "res.hdr_val" | "shdr_val" => match need("a header name") {
            Ok(n) => HdrFetch::ResVal(n),
            Err(e) => return Some(Err(e)),
        },
        "res.hdr_ip" | "shdr_ip" => {
            let occ = match a.get(1).map(|o| o.parse::<i64>()) {
                None => None,
                Some(Ok(n)) => Some(n),
                Some(Err(_)) => {
                    return Some(Err(format!("fetch method '{name}': invalid occurrence")))
                }
            };
            HdrFetch::ResIp { name: first, occ }
        }
        "res.cook" | "scook" => HdrFetch::ResCook(first),
        "res.cook_cnt" | "scook_cnt" => HdrFetch::ResCookCnt(first),
        "res.cook_val" | "scook_val" => HdrFetch::ResCookVal(first),
        "baseq" => HdrFetch::BaseQ,
        "base32" => HdrFetch::Base32,
        "url32" => HdrFetch::Url32,
        "url_ip" => HdrFetch::UrlIp,
        "url_port" => HdrFetch::UrlPort,
        "urlp_val" => match need("a parameter name") {
            Ok(n) => HdrFetch::UrlpVal(n),
            Err(e) => return Some(Err(e)),
        },
        _ => return None,
    }))
}

/// The cookies `Set-Cookie` headers set: (name, value), the first pair
/// of each header.
fn set_cookies<'a>(hs: &[(&'a str, &'a [u8])]) -> Vec<(&'a [u8], &'a [u8])> {
    hs.iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case("set-cookie"))
        .filter_map(|(_, v)| {
            let first = v.split(|&b| b == b';').next()?.trim_ascii();
            let eq = first.iter().position(|&b| b == b'=')?;
            Some((
                first.get(..eq)?.trim_ascii(),
                first.get(eq + 1..)?.trim_ascii(),
            ))
        })
        .collect()
}

/// The 32-bit hash of `base32`/`url32`: SDBM with full avalanche (the
/// manual's `sdbm(1)`).
fn hash32(b: &[u8]) -> i64 {
    i64::from(crate::hash::full_avalanche(crate::hash::sdbm(b)))
}

/// The headers as haproxy's rules see them: names in lower case, without
/// a `Connection` header that only says `close` or `keep-alive` (haproxy
/// takes it out of the message when it reads it).
pub(crate) fn seen<'a>(hs: Vec<(&'a str, &'a [u8])>) -> Vec<(String, &'a [u8])> {
    hs.into_iter()
        .filter(|(n, v)| {
            !(n.eq_ignore_ascii_case("connection")
                && v.split(|&b| b == b',').all(|t| {
                    let t = t.trim_ascii();
                    t.eq_ignore_ascii_case(b"close") || t.eq_ignore_ascii_case(b"keep-alive")
                }))
        })
        .map(|(n, v)| (n.to_ascii_lowercase(), v))
        .collect()
}

/// The authority of an absolute-form target, or the Host header.
fn authority(ctx: &dyn Ctx) -> Option<String> {
    let uri = ctx.uri();
    if let Some(i) = uri.find("://") {
        let rest = uri.get(i + 3..)?;
        let end = rest.find(['/', '?']).unwrap_or(rest.len());
        return rest.get(..end).map(str::to_string);
    }
    None
}

/// `host` with the target's path, and its query when `query`.
fn base_of(ctx: &dyn Ctx, query: bool) -> Vec<u8> {
    let host = ctx
        .req_headers()
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("host"))
        .map(|(_, v)| v.trim_ascii().to_vec())
        .unwrap_or_default();
    let uri = ctx.uri();
    let after_authority = match uri.find("://") {
        Some(i) => uri
            .get(i + 3..)
            .and_then(|r| r.find('/').and_then(|j| r.get(j..)))
            .unwrap_or("/"),
        None => uri,
    };
    let target = if query {
        after_authority
    } else {
        after_authority.split('?').next().unwrap_or(after_authority)
    };
    let mut out = host;
    out.extend_from_slice(target.as_bytes());
    out
}

impl HdrFetch {
    /// Its samples on `ctx`.
    pub fn fetch(&self, ctx: &dyn Ctx) -> Vec<Sample> {
        let hs = |res: bool| {
            seen(if res {
                ctx.res_headers()
            } else {
                ctx.req_headers()
            })
        };
        let one = |s: Option<Sample>| s.into_iter().collect::<Vec<_>>();
        match self {
            HdrFetch::Block { res } => {
                let mut out = Vec::new();
                for (n, v) in hs(*res) {
                    out.extend_from_slice(n.as_bytes());
                    out.extend_from_slice(b": ");
                    out.extend_from_slice(v);
                    out.extend_from_slice(b"\r\n");
                }
                out.extend_from_slice(b"\r\n");
                vec![Sample::Str(out)]
            }
            HdrFetch::Names { res, delim } => {
                let all = hs(*res);
                let names: Vec<&[u8]> = all.iter().map(|(n, _)| n.as_bytes()).collect();
                vec![Sample::Str(names.join(&delim[..]))]
            }
            HdrFetch::LineCnt { res, name } => {
                let n = hs(*res)
                    .iter()
                    .filter(|(n, _)| name.as_deref().is_none_or(|w| n.eq_ignore_ascii_case(w)))
                    .count();
                vec![Sample::Int(n as i64)]
            }
            HdrFetch::ResCnt(name) => {
                let n = values(&ctx.res_headers(), name.as_deref()).len();
                vec![Sample::Int(n as i64)]
            }
            HdrFetch::ResVal(name) => one(values(&ctx.res_headers(), Some(name))
                .last()
                .and_then(|v| Sample::Str(v.to_vec()).to_int())
                .map(Sample::Int)),
            HdrFetch::ResIp { name, occ } => {
                let vals = values(&ctx.res_headers(), name.as_deref());
                let len = vals.len() as i64;
                let i = match occ {
                    None => len - 1,
                    Some(n) if *n > 0 => n - 1,
                    Some(n) => len + n,
                };
                one(usize::try_from(i)
                    .ok()
                    .and_then(|i| vals.get(i))
                    .and_then(|v| Sample::Str(v.to_vec()).to_ip())
                    .map(Sample::Ip))
            }
            HdrFetch::ResCook(name) | HdrFetch::ResCookVal(name) => {
                let hs = ctx.res_headers();
                let all = set_cookies(&hs);
                let v = match name {
                    Some(w) => all.iter().find(|(k, _)| *k == w.as_bytes()),
                    None => all.first(),
                };
                let v = v.map(|(_, v)| Sample::Str(v.to_vec()));
                match self {
                    HdrFetch::ResCookVal(_) => one(v.and_then(|s| s.to_int()).map(Sample::Int)),
                    _ => one(v),
                }
            }
            HdrFetch::ResCookCnt(name) => {
                // Every `name=value` pair of the headers counts, as
                // haproxy counts them (attributes such as `Path=/` too).
                let n = ctx
                    .res_headers()
                    .iter()
                    .filter(|(n, _)| n.eq_ignore_ascii_case("set-cookie"))
                    .flat_map(|(_, v)| v.split(|&b| b == b';'))
                    .filter_map(|p| {
                        let p = p.trim_ascii();
                        let eq = p.iter().position(|&b| b == b'=')?;
                        p.get(..eq)
                    })
                    .filter(|k| name.as_deref().is_none_or(|w| *k == w.as_bytes()))
                    .count();
                vec![Sample::Int(n as i64)]
            }
            HdrFetch::BaseQ => vec![Sample::Str(base_of(ctx, true))],
            HdrFetch::Base32 => vec![Sample::Int(hash32(&base_of(ctx, false)))],
            // The Host and the target with its query.
            HdrFetch::Url32 => vec![Sample::Int(hash32(&base_of(ctx, true)))],
            HdrFetch::UrlIp => one(authority(ctx).and_then(|a| {
                let host = a.rsplit_once(':').map_or(a.as_str(), |(h, _)| h);
                host.parse::<std::net::Ipv4Addr>()
                    .ok()
                    .map(|ip| Sample::Ip(ip.into()))
            })),
            HdrFetch::UrlPort => one(authority(ctx).map(|a| {
                let port = a
                    .rsplit_once(':')
                    .and_then(|(_, p)| p.parse::<i64>().ok())
                    .unwrap_or(80);
                Sample::Int(port)
            })),
            HdrFetch::UrlpVal(name) => one(ctx.uri().split_once('?').and_then(|(_, q)| {
                q.split(['&', ';']).find_map(|kv| {
                    let v = kv.strip_prefix(name.as_str())?.strip_prefix('=')?;
                    // Its leading digits; 0 without.
                    Some(Sample::Int(
                        Sample::Str(v.as_bytes().to_vec()).to_int().unwrap_or(0),
                    ))
                })
            })),
        }
    }

    /// Whether it gives integers (an ACL's default match).
    pub fn gives_int(&self) -> bool {
        matches!(
            self,
            HdrFetch::LineCnt { .. }
                | HdrFetch::ResCnt(_)
                | HdrFetch::ResVal(_)
                | HdrFetch::ResCookCnt(_)
                | HdrFetch::ResCookVal(_)
                | HdrFetch::Base32
                | HdrFetch::Url32
                | HdrFetch::UrlPort
                | HdrFetch::UrlpVal(_)
        )
    }
}

/// Comma-separated values of the headers named `name` (all without).
fn values<'a>(hs: &[(&'a str, &'a [u8])], name: Option<&str>) -> Vec<&'a [u8]> {
    hs.iter()
        .filter(|(n, _)| name.is_none_or(|w| n.eq_ignore_ascii_case(w)))
        .flat_map(|(_, v)| v.split(|&b| b == b',').map(<[u8]>::trim_ascii))
        .collect()
}
