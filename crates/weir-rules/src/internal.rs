//! Fetches of the stream's internal state and of the process (manual
//! §7.3.2: `fe_name`, `be_id`, `srv_id`, `env`, `date`, constants …), the
//! request line as captured (`capture.req.*`, §7.3.6), cookie counts and
//! values, and the 32-bit hash converters (`crc32`, `crc32c`, `wt6`,
//! `djb2`, `sdbm`).

use crate::hash;
use crate::sample::{Ctx, Sample};

/// An internal-state fetch with its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Internal {
    /// `internal.strm.is_htx`: the stream is HTTP (a request was parsed).
    IsHtx,
    /// `fc_http_major`: 2 for an HTTP/2 client, else 1.
    FcHttpMajor,
    /// `res.ver`/`resp_ver`, `capture.res.ver` (`HTTP/` first).
    ResVer(bool),
    Hostname,
    /// `rand([<range>])`.
    Rand(Option<u64>),
    /// `date_us`: the microseconds of the current second.
    DateUs,
    FeName,
    FeId,
    /// The stream's backend: the frontend itself until one is chosen.
    BeName,
    BeId,
    SrvId,
    /// `env(<name>)`: the process environment's variable.
    Env(String),
    /// `date([<offset>[,<unit>]])`: now since the epoch, in s, ms or us.
    Date {
        offset: i64,
        unit: u32,
    },
    /// `bin(<hex>)`: a binary constant.
    Bin(Vec<u8>),
    Bool(bool),
    /// `ipv4(<addr>)`, `ipv6(<addr>)`: an address constant.
    Ip(std::net::IpAddr),
    /// `uuid([4])`: a random (version 4) UUID.
    Uuid,
    /// `so_name`: the listener's `name`.
    SoName,
    /// `be_server_timeout`, `be_tunnel_timeout`, `cur_server_timeout`,
    /// `cur_tunnel_timeout`, `fe_client_timeout`: milliseconds.
    Timeout(Timeout),
    /// `fc_src`, `fc_dst` (`port`: `fc_src_port`, `fc_dst_port`): the
    /// client connection's own addresses, whatever `tcp-request session`
    /// and the request's rules set.
    ConnAddr {
        dst: bool,
        port: bool,
    },
    /// `fc_pp_authority` (TLV 0x02), `fc_pp_unique_id` (0x05): a TLV of
    /// the client connection's PROXY v2 header.
    PpTlv(u8),
    /// `unique-id`: the request's `unique-id-format` value.
    UniqueId,
    /// `req.cook_cnt([<name>])`, `req.cook_val([<name>])`.
    CookCnt(Option<String>),
    CookVal(Option<String>),
    /// `capture.req.method`, `capture.req.uri`, `capture.req.ver`.
    CapMethod,
    CapUri,
    CapVer,
    /// `capture.req.hdr(<idx>)`, `capture.res.hdr(<idx>)`.
    CapHdr {
        res: bool,
        idx: usize,
    },
    /// `so_id`: the listener's id.
    SoId,
    /// `bc_src`, `bc_dst` (`port`: `bc_src_port`, `bc_dst_port`): the
    /// server connection's addresses.
    BcAddr {
        dst: bool,
        port: bool,
    },
    /// `bc_http_major`: 2 over an HTTP/2 server connection, else 1.
    BcHttpMajor,
    /// `fe_defbe`: the frontend's default backend.
    FeDefBe,
    /// `src_is_local`, `dst_is_local`: the address is one of this host's.
    IsLocal {
        dst: bool,
    },
    /// `last_rule_file`, `last_rule_line`: where the last rule that ended
    /// a rule set of the stream was written.
    LastRuleFile,
    LastRuleLine,
}

/// A timeout the `*_timeout` fetches read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timeout {
    /// The backend's `timeout server`.
    BeServer,
    /// The backend's `timeout tunnel`.
    BeTunnel,
    /// The server timeout in force for the exchange (`set-timeout`).
    CurServer,
    /// The tunnel timeout in force for the exchange.
    CurTunnel,
    /// The frontend's `timeout client`.
    FeClient,
}

/// The internal fetch `name(args)`, or `None` when `name` is not one.
pub fn parse(name: &str, a: &[String]) -> Option<Result<Internal, String>> {
    let first = a.first().filter(|x| !x.is_empty()).cloned();
    let need = |what: &str| {
        first
            .clone()
            .ok_or_else(|| format!("fetch method '{name}' expects {what}"))
    };
    Some(match name {
        "fe_name" => Ok(Internal::FeName),
        "fc_http_major" => Ok(Internal::FcHttpMajor),
        "res.ver" | "resp_ver" => Ok(Internal::ResVer(false)),
        "capture.res.ver" => Ok(Internal::ResVer(true)),
        "hostname" => Ok(Internal::Hostname),
        "date_us" => Ok(Internal::DateUs),
        "rand" => match first.as_deref().map(str::parse::<u64>) {
            None => Ok(Internal::Rand(None)),
            Some(Ok(n)) if n > 0 => Ok(Internal::Rand(Some(n))),
            _ => Err("fetch method 'rand' expects a positive range".into()),
        },
        "internal.strm.is_htx" => Ok(Internal::IsHtx),
        "fe_id" => Ok(Internal::FeId),
        "be_name" => Ok(Internal::BeName),
        "be_id" => Ok(Internal::BeId),
        "srv_id" => Ok(Internal::SrvId),
        "env" => need("a variable name").map(Internal::Env),
        "date" => date(a),
        "bin" => need("hexadecimal digits").and_then(|h| unhex(&h).map(Internal::Bin)),
        "bool" => match first.as_deref() {
            Some("0") | Some("false") => Ok(Internal::Bool(false)),
            Some("1") | Some("true") => Ok(Internal::Bool(true)),
            _ => Err("fetch method 'bool' expects 0, 1, false or true".into()),
        },
        "ipv4" | "ipv6" => need("an address").and_then(|v| {
            let ip: std::net::IpAddr = v
                .parse()
                .map_err(|_| format!("fetch method '{name}': invalid address '{v}'"))?;
            if ip.is_ipv4() != (name == "ipv4") {
                return Err(format!("fetch method '{name}': invalid address '{v}'"));
            }
            Ok(Internal::Ip(ip))
        }),
        "so_name" => Ok(Internal::SoName),
        "so_id" => Ok(Internal::SoId),
        n @ ("bc_src" | "bc_dst" | "bc_src_port" | "bc_dst_port") => Ok(Internal::BcAddr {
            dst: n.starts_with("bc_dst"),
            port: n.ends_with("_port"),
        }),
        "bc_http_major" => Ok(Internal::BcHttpMajor),
        "fe_defbe" => Ok(Internal::FeDefBe),
        "src_is_local" => Ok(Internal::IsLocal { dst: false }),
        "dst_is_local" => Ok(Internal::IsLocal { dst: true }),
        "be_server_timeout" => Ok(Internal::Timeout(Timeout::BeServer)),
        "be_tunnel_timeout" => Ok(Internal::Timeout(Timeout::BeTunnel)),
        "cur_server_timeout" => Ok(Internal::Timeout(Timeout::CurServer)),
        "cur_tunnel_timeout" => Ok(Internal::Timeout(Timeout::CurTunnel)),
        "fe_client_timeout" => Ok(Internal::Timeout(Timeout::FeClient)),
        n @ ("fc_src" | "fc_dst" | "fc_src_port" | "fc_dst_port") => Ok(Internal::ConnAddr {
            dst: n.starts_with("fc_dst"),
            port: n.ends_with("_port"),
        }),
        "fc_pp_authority" => Ok(Internal::PpTlv(0x02)),
        "fc_pp_unique_id" => Ok(Internal::PpTlv(0x05)),
        "unique-id" => Ok(Internal::UniqueId),
        "last_rule_file" => Ok(Internal::LastRuleFile),
        "last_rule_line" => Ok(Internal::LastRuleLine),
        "uuid" => match first.as_deref() {
            None | Some("4") => Ok(Internal::Uuid),
            Some(v) => Err(format!(
                "fetch method 'uuid': unsupported version '{v}' (4)"
            )),
        },
        "req.cook_cnt" | "cook_cnt" => Ok(Internal::CookCnt(first)),
        "req.cook_val" | "cook_val" => Ok(Internal::CookVal(first)),
        "capture.req.method" => Ok(Internal::CapMethod),
        "capture.req.uri" => Ok(Internal::CapUri),
        "capture.req.ver" => Ok(Internal::CapVer),
        "capture.req.hdr" | "capture.res.hdr" => need("a capture slot number").and_then(|i| {
            Ok(Internal::CapHdr {
                res: name == "capture.res.hdr",
                idx: i
                    .parse()
                    .map_err(|_| format!("fetch method '{name}': invalid slot '{i}'"))?,
            })
        }),
        _ => return None,
    })
}

fn date(a: &[String]) -> Result<Internal, String> {
    let offset = match a.first().filter(|x| !x.is_empty()) {
        Some(o) => o
            .parse()
            .map_err(|_| format!("date: invalid offset '{o}'"))?,
        None => 0,
    };
    let unit = match a.get(1).map(String::as_str) {
        None | Some("s") => 1,
        Some("ms") => 1_000,
        Some("us") => 1_000_000,
        Some(u) => return Err(format!("date: unknown unit '{u}' (s, ms or us)")),
    };
    Ok(Internal::Date { offset, unit })
}

fn unhex(h: &str) -> Result<Vec<u8>, String> {
    if !h.len().is_multiple_of(2) {
        return Err("fetch method 'bin' expects an even number of hexadecimal digits".into());
    }
    crate::matching::unhex(h).ok_or_else(|| format!("fetch method 'bin': '{h}' is not hexadecimal"))
}

/// Evaluates an internal fetch.
pub fn fetch(k: &Internal, ctx: &dyn Ctx) -> Option<Sample> {
    let text = |s: String| Sample::Str(s.into_bytes());
    Some(match k {
        Internal::FeName => text(ctx.frontend()?.0),
        Internal::IsHtx => Sample::Bool(!ctx.method().is_empty()),
        Internal::FeId => Sample::Int(ctx.frontend()?.1),
        Internal::BeName => text(ctx.backend().or_else(|| ctx.frontend())?.0),
        Internal::BeId => Sample::Int(ctx.backend().or_else(|| ctx.frontend())?.1),
        Internal::SrvId => Sample::Int(ctx.server_id()?),
        Internal::Env(n) => text(std::env::var(n).ok()?),
        Internal::Date { offset, unit } => {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .ok()?;
            let secs = i64::try_from(now.as_secs()).ok()?.checked_add(*offset)?;
            let sub = match unit {
                1_000 => i64::from(now.subsec_millis()),
                1_000_000 => i64::from(now.subsec_micros()),
                _ => 0,
            };
            // A huge configured offset finds nothing rather than wrapping.
            Sample::Int(secs.checked_mul(i64::from(*unit))?.checked_add(sub)?)
        }
        Internal::Bin(b) => Sample::Bin(b.clone()),
        Internal::Uuid => text(uuid4()?),
        Internal::FcHttpMajor => match ctx.version() {
            "" => return None,
            v if v.starts_with('2') => Sample::Int(2),
            _ => Sample::Int(1),
        },
        Internal::ResVer(prefixed) => {
            let v = ctx.res_version()?;
            text(if *prefixed {
                format!("HTTP/{v}")
            } else {
                v.to_string()
            })
        }
        Internal::Hostname => text(ctx.hostname()?),
        Internal::Rand(range) => {
            let mut b = [0u8; 4];
            aws_lc_rs::rand::fill(&mut b).ok()?;
            let n = u64::from(u32::from_be_bytes(b));
            // As haproxy scales it: the range times the draw over 2^32.
            Sample::Int(range.map_or(n, |r| (n * r) >> 32) as i64)
        }
        Internal::DateUs => {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .ok()?;
            Sample::Int(i64::from(now.subsec_micros()))
        }
        Internal::SoName => text(ctx.listener_name()?),
        Internal::SoId => Sample::Int(ctx.listener_id()?),
        Internal::BcAddr { dst, port } => addr_part(ctx.server_conn_addr(*dst)?, *port),
        Internal::BcHttpMajor => Sample::Int(ctx.server_http_major()?),
        Internal::FeDefBe => text(ctx.default_backend()?),
        Internal::IsLocal { dst } => {
            let a = if *dst { ctx.dst() } else { ctx.src() };
            // No address (a UNIX socket): local, as haproxy says.
            Sample::Bool(a.is_none_or(|a| ctx.is_local(a.ip())))
        }
        Internal::PpTlv(kind) => Sample::Str(ctx.proxy_tlv(*kind)?),
        Internal::ConnAddr { dst, port } => addr_part(ctx.conn_addr(*dst)?, *port),
        Internal::Timeout(t) => Sample::Int(ctx.timeout_ms(*t)?),
        Internal::UniqueId => text(ctx.unique_id()?),
        Internal::LastRuleFile => text(ctx.last_rule()?.file.to_string()),
        Internal::LastRuleLine => Sample::Int(i64::from(ctx.last_rule()?.line)),
        Internal::Bool(b) => Sample::Bool(*b),
        Internal::Ip(ip) => Sample::Ip(*ip),
        Internal::CookCnt(name) => {
            Sample::Int(crate::fetching::cookies(&ctx.req_headers(), name.as_deref()).len() as i64)
        }
        Internal::CookVal(name) => {
            let mut v = crate::fetching::cookies(&ctx.req_headers(), name.as_deref());
            // The last occurrence of a name; without one, the first cookie.
            let c = if name.is_some() {
                v.pop()?
            } else {
                v.into_iter().next()?
            };
            Sample::Int(c.to_int()?)
        }
        Internal::CapHdr { res, idx } => text(ctx.captured(*res, *idx)?),
        Internal::CapMethod => text(ctx.method().to_string()).non_empty()?,
        Internal::CapUri => text(ctx.uri().to_string()).non_empty()?,
        Internal::CapVer => {
            let v = ctx.version();
            if v.is_empty() {
                return None;
            }
            text(format!("HTTP/{v}"))
        }
    })
}

/// A version 4 UUID from the system's random generator.
fn uuid4() -> Option<String> {
    let mut b = [0u8; 16];
    aws_lc_rs::rand::fill(&mut b).ok()?;
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    Some(format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    ))
}

/// A hash converter: `crc32`, `crc32c`, `wt6`, `djb2` or `sdbm`, with `full_avalanche`
/// applied when its argument is 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HashConv {
    pub f: HashFn,
    pub avalanche: bool,
}

/// The byte hashes the converters name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HashFn {
    Crc32,
    Crc32c,
    Wt6,
    Djb2,
    Sdbm,
}

/// The hash converter `name(args)`, or `None` when `name` is not one.
pub fn parse_hash(name: &str, a: &[String]) -> Option<Result<HashConv, String>> {
    let f = match name {
        "crc32" => HashFn::Crc32,
        "crc32c" => HashFn::Crc32c,
        "wt6" => HashFn::Wt6,
        "djb2" => HashFn::Djb2,
        "sdbm" => HashFn::Sdbm,
        _ => return None,
    };
    Some(match a.first().map(String::as_str) {
        None | Some("0") => Ok(HashConv {
            f,
            avalanche: false,
        }),
        Some("1") => Ok(HashConv { f, avalanche: true }),
        Some(x) => Err(format!(
            "converter '{name}': avalanche must be 0 or 1, not '{x}'"
        )),
    })
}

impl HashConv {
    pub fn apply(&self, data: &[u8]) -> Sample {
        let h = match self.f {
            HashFn::Crc32 => hash::crc32(data),
            HashFn::Crc32c => hash::crc32c(data),
            HashFn::Wt6 => hash::wt6(data),
            HashFn::Djb2 => hash::djb2(data),
            HashFn::Sdbm => hash::sdbm(data),
        };
        let h = if self.avalanche {
            hash::full_avalanche(h)
        } else {
            h
        };
        Sample::Int(i64::from(h))
    }
}

trait NonEmpty: Sized {
    fn non_empty(self) -> Option<Self>;
}

impl NonEmpty for Sample {
    fn non_empty(self) -> Option<Sample> {
        match &self {
            Sample::Str(s) | Sample::Bin(s) if s.is_empty() => None,
            _ => Some(self),
        }
    }
}

/// An address fetch's sample: the port (`*_port`) or the address.
fn addr_part(a: std::net::SocketAddr, port: bool) -> Sample {
    if port {
        Sample::Int(i64::from(a.port()))
    } else {
        Sample::Ip(a.ip())
    }
}

#[cfg(test)]
#[path = "internal_tests.rs"]
mod tests;
