//! Sample expressions: a fetch (`src`, `path`, `hdr(host)` …) followed by
//! converters (`,lower`, `,field(2,/)` …), parsed once and evaluated per
//! request against a [`Ctx`] the runtime provides.

use crate::fetching::{fetch_all, fetch_single};
use crate::strconv::{convert, mask_arg};
use std::net::{IpAddr, SocketAddr};

/// A value produced by a fetch or a converter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sample {
    Str(Vec<u8>),
    /// Binary (`b64dec`, `bytes`, the digests, `bin()`, payloads): read
    /// as a string, it ends at its first NUL byte, as haproxy casts it.
    Bin(Vec<u8>),
    Int(i64),
    Ip(IpAddr),
    Bool(bool),
}

impl Sample {
    /// The value cast to binary, as converters taking binary input see it
    /// (haproxy's cast): an integer or boolean as its 8 bytes big-endian,
    /// an address as its octets, a string as it is.
    pub fn to_bin(&self) -> Vec<u8> {
        match self {
            Sample::Str(s) | Sample::Bin(s) => s.clone(),
            Sample::Int(i) => i.to_be_bytes().to_vec(),
            Sample::Bool(b) => i64::from(*b).to_be_bytes().to_vec(),
            Sample::Ip(IpAddr::V4(a)) => a.octets().to_vec(),
            Sample::Ip(IpAddr::V6(a)) => a.octets().to_vec(),
        }
    }

    /// The value as bytes (numbers and addresses in text form).
    pub fn to_bytes(&self) -> Vec<u8> {
        match self {
            Sample::Str(s) => s.clone(),
            Sample::Bin(b) => b.split(|&c| c == 0).next().unwrap_or_default().to_vec(),
            Sample::Int(i) => i.to_string().into_bytes(),
            Sample::Ip(a) => a.to_string().into_bytes(),
            Sample::Bool(b) => {
                if *b {
                    b"1".to_vec()
                } else {
                    b"0".to_vec()
                }
            }
        }
    }
    /// The sample as an integer: a string's digits, without the spaces
    /// and tabs around them (never Unicode whitespace: `\u{a0}5` is no
    /// number, as a server would not read it as one).
    pub fn to_int(&self) -> Option<i64> {
        match self {
            Sample::Int(i) => Some(*i),
            Sample::Bool(b) => Some(i64::from(*b)),
            Sample::Str(s) => std::str::from_utf8(trim_ows(s)).ok()?.parse().ok(),
            Sample::Ip(_) | Sample::Bin(_) => None,
        }
    }
    /// The sample as an address (a string's, spaces and tabs around it
    /// ignored; an integer's 32 bits as IPv4, as haproxy casts it).
    pub fn to_ip(&self) -> Option<IpAddr> {
        match self {
            Sample::Ip(a) => Some(*a),
            Sample::Int(i) => Some(IpAddr::V4(std::net::Ipv4Addr::from(*i as u32))),
            Sample::Str(s) => std::str::from_utf8(trim_ows(s)).ok()?.parse().ok(),
            _ => None,
        }
    }
}

/// What a request (and, for `http-response`, its response) offers to
/// fetches. Implemented by the runtime over its parsed heads.
pub trait Ctx {
    fn src(&self) -> Option<SocketAddr>;
    fn dst(&self) -> Option<SocketAddr>;
    // What a request offers: nothing, by default (a connection before any
    // request, as `tcp-request` rules see it).
    fn method(&self) -> &str {
        ""
    }
    /// The request target as received (origin or absolute form).
    fn uri(&self) -> &str {
        ""
    }
    /// "1.0" or "1.1".
    fn version(&self) -> &str {
        ""
    }
    /// Request headers in order.
    fn req_headers(&self) -> Vec<(&str, &[u8])> {
        Vec::new()
    }
    /// Response headers in order (empty before a response).
    fn res_headers(&self) -> Vec<(&str, &[u8])> {
        Vec::new()
    }
    fn status(&self) -> Option<u16> {
        None
    }
    /// Usable servers of a backend (`None` = no such backend); the current
    /// one when `name` is empty.
    fn nbsrv(&self, _name: &str) -> Option<i64> {
        None
    }
    fn be_conn(&self, _name: &str) -> Option<i64> {
        None
    }
    fn fe_conn(&self) -> i64 {
        0
    }
    fn srv_name(&self) -> Option<String> {
        None
    }
    /// The response's version (`1.1`), once there is one.
    fn res_version(&self) -> Option<&str> {
        None
    }
    /// The system's host name (`hostname`).
    fn hostname(&self) -> Option<String> {
        None
    }
    /// A live figure of the proxies and servers (`None`: no such proxy
    /// or server).
    fn live(&self, _q: &crate::live::Live) -> Option<i64> {
        None
    }
    /// Seconds east of UTC of local time at `secs` since the epoch
    /// (`ltime`); UTC unless the runtime knows the zone.
    fn utc_offset(&self, _secs: i64) -> i64 {
        0
    }
    fn var(&self, _name: &str) -> Option<Sample> {
        None
    }
    /// The `set-var` converter: stores `v` when `var`'s conditions hold
    /// (a view without variables stores nothing).
    fn set_var(&self, _var: &crate::vars::VarSet, _v: &Sample) {}
    /// The `unset-var` converter.
    fn unset_var(&self, _name: &str) {}
    /// The `capture-req(<id>)` (`res` false) and `capture-res(<id>)`
    /// converters: `v` into the exchange's capture slot `id`; false when
    /// there is no such slot (the converter then fails, as haproxy's).
    fn capture(&self, _res: bool, _id: usize, _v: &Sample) -> bool {
        false
    }
    fn first_req(&self) -> bool {
        true
    }
    fn body(&self) -> Option<&[u8]> {
        None
    }
    /// The client's bytes a `tcp-request content` rule inspects, and
    /// whether they are final (no more will come: the inspection delay is
    /// over, the buffer is full or the client closed).
    /// The server's first bytes under `tcp-response content` inspection,
    /// and whether they are final.
    fn res_payload(&self) -> Option<(&[u8], bool)> {
        None
    }
    fn payload(&self) -> Option<(&[u8], bool)> {
        None
    }
    /// Where a fetch marks that more of the payload could change its
    /// answer (see [`crate::acl::Tri`]).
    fn more(&self) -> Option<&std::sync::atomic::AtomicBool> {
        None
    }
    /// A `userlist` section by name.
    fn userlist(&self, _name: &str) -> Option<&crate::auth::Userlist> {
        None
    }
    /// The client connection's error (`fc_err`, `fc_err_str`): HAProxy's
    /// number for it and its words; `(0, "Success")` without one.
    fn conn_error(&self) -> (i64, &'static str) {
        (0, "Success")
    }
    /// The client connection's TLS session (`None` in clear text).
    fn tls(&self) -> Option<&TlsInfo> {
        None
    }
    /// The server connection's TLS session (`ssl_bc_*`, `ssl_s_*`).
    fn srv_tls(&self) -> Option<&TlsInfo> {
        None
    }
    /// The frontend's name and id.
    fn frontend(&self) -> Option<(String, i64)> {
        None
    }
    /// The backend's name and id, once one is chosen.
    fn backend(&self) -> Option<(String, i64)> {
        None
    }
    /// The server's id, once one is chosen.
    fn server_id(&self) -> Option<i64> {
        None
    }
    /// The request's `unique-id-format` value (`unique-id`).
    fn unique_id(&self) -> Option<String> {
        None
    }
    /// The last rule that ended a rule set of the stream.
    fn last_rule(&self) -> Option<crate::action::RuleAt> {
        None
    }
    /// The client connection's own source (or, with `dst`, destination)
    /// address; by default the one the rules see.
    fn conn_addr(&self, dst: bool) -> Option<SocketAddr> {
        if dst {
            self.dst()
        } else {
            self.src()
        }
    }
    /// Timeout `t` in milliseconds, when it is set.
    fn timeout_ms(&self, _t: crate::internal::Timeout) -> Option<i64> {
        None
    }
    /// The value of TLV `kind` in the client connection's PROXY v2 header.
    fn proxy_tlv(&self, _kind: u8) -> Option<Vec<u8>> {
        None
    }
    /// The `name` of the listener the client came through (`so_name`).
    fn listener_name(&self) -> Option<String> {
        None
    }
    /// The server connection's own (or, with `dst`, remote) address, once
    /// there is one (`bc_src`, `bc_dst`).
    fn server_conn_addr(&self, _dst: bool) -> Option<SocketAddr> {
        None
    }
    /// The server connection's HTTP major version (`bc_http_major`).
    fn server_http_major(&self) -> Option<i64> {
        None
    }
    /// The id of the listener the client came through (`so_id`).
    fn listener_id(&self) -> Option<i64> {
        None
    }
    /// The frontend's default backend (`fe_defbe`).
    fn default_backend(&self) -> Option<String> {
        None
    }
    /// Whether `ip` is one of this host's addresses (`src_is_local`).
    fn is_local(&self, _ip: std::net::IpAddr) -> bool {
        false
    }
    /// Capture slot `idx` of the request (`res` false) or the response.
    fn captured(&self, _res: bool, _idx: usize) -> Option<String> {
        None
    }
    /// The stick table named `name` (a proxy's, or `<peers>/<table>`), or
    /// with `None` the current proxy's.
    fn stick_table(&self, _name: Option<&str>) -> Option<&std::sync::Arc<weir_stick::Table>> {
        None
    }
    /// The entry tracked counter `slot` holds (the stream's, else the
    /// session's).
    fn tracked(&self, _slot: usize) -> Option<&weir_stick::Tracker> {
        None
    }
    /// The cache the response came from (`res.cache_hit`), if it did.
    fn cache_hit(&self) -> Option<String> {
        None
    }
    /// The value of a fetch a Lua script registered (`lua.<name>`).
    fn lua_fetch(&self, _call: &crate::lua::LuaCall) -> Option<Sample> {
        None
    }
    /// A Lua script's converter applied to `v`.
    fn lua_conv(&self, _call: &crate::lua::LuaCall, _v: &Sample) -> Option<Sample> {
        None
    }
}

pub use crate::ssl::{SslFetch, TlsInfo};

/// A fetch with its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fetch {
    Src,
    SrcPort,
    Dst,
    DstPort,
    Method,
    Path,
    PathQ,
    Url,
    Query,
    Base,
    UrlParam(String),
    ReqVer,
    /// `hdr`/`req.hdr` (comma-split values) or `req.fhdr` (whole lines),
    /// with an occurrence (`None` = last; negative from the end).
    Hdr {
        name: Option<String>,
        occ: Option<i64>,
        full: bool,
    },
    HdrCnt(Option<String>),
    /// `req.hdr_ip`/`hdr_ip`: a header's value as an address.
    HdrIp {
        name: Option<String>,
        occ: Option<i64>,
    },
    HdrVal(String),
    ResHdr {
        name: Option<String>,
        occ: Option<i64>,
        full: bool,
    },
    Cook(Option<String>),
    Status,
    Nbsrv(String),
    BeConn(String),
    FeConn,
    SrvName,
    /// `var(<name>[,<default>])`.
    Var(String, Option<String>),
    AlwaysTrue,
    AlwaysFalse,
    FirstReq,
    Body,
    /// `http_auth(<userlist>)`: valid Basic credentials.
    HttpAuth(String),
    /// `http_auth_group(<userlist>)`: the groups of the authenticated user.
    HttpAuthGroup(String),
    /// `http_auth_user`, `http_auth_pass`, `http_auth_type`.
    HttpAuthUser,
    HttpAuthPass,
    HttpAuthType,
    /// `req.body_len`: bytes of the body buffered.
    BodyLen,
    /// `req.body_size`: the announced length, or what a chunked body
    /// buffered holds.
    BodySize,
    /// `req.body_param(name)`: a field of a buffered form body.
    BodyParam(String),
    /// `http_auth_bearer([<header>])`.
    AuthBearer(Option<String>),
    /// The client's first bytes (see [`crate::payload`]).
    Payload(crate::payload::PayloadFetch),
    /// `res.len`, `res.payload`, `res.payload_lv`: the server's first
    /// bytes under `tcp-response inspect-delay`.
    ResPayload(crate::payload::PayloadFetch),
    Ssl(SslFetch),
    /// A string constant (`str(x)`), or an integer (`int(n)`).
    Str(String),
    Int(i64),
    /// The stream's proxies, the process, constants (see [`crate::internal`]).
    Internal(crate::internal::Internal),
    /// Header blocks, response header counterparts, URL hashes.
    Hdrs(crate::hdrfetch::HdrFetch),
    /// The live state of proxies and servers.
    Live(crate::live::Live),
    /// Stick tables (`sc_*`, `src_*`, `table_*`).
    Stick(crate::stick::StickFetch),
    /// `lua.<name>(<args>)`: a fetch a Lua script registered.
    Lua(crate::lua::LuaCall),
    /// `res.cache_hit`, `res.cache_name`: the response came from a cache.
    CacheHit,
    CacheName,
}

/// A converter with its arguments.
#[derive(Debug, Clone)]
pub enum Conv {
    Lower,
    Upper,
    Length,
    Base64,
    B64Dec,
    /// base64url without padding, both ways (`ub64enc`, `ub64dec`).
    Ub64Enc,
    Ub64Dec,
    Hex,
    /// `url_dec([in_form])`: `+` is a space in the query, or everywhere.
    UrlDec(bool),
    Field {
        index: i64,
        delims: Vec<u8>,
        count: usize,
    },
    Word {
        index: i64,
        delims: Vec<u8>,
        count: usize,
    },
    RegSub {
        re: regex::bytes::Regex,
        with: Vec<u8>,
        global: bool,
    },
    /// `ipmask(<v4>[,<v6>])`: each a prefix length or a mask in address
    /// form.
    IpMask(u32, u128),
    Concat {
        before: Vec<u8>,
        var: Option<String>,
        after: Vec<u8>,
    },
    Bytes {
        offset: usize,
        len: Option<usize>,
    },
    Map(std::sync::Arc<crate::matching::Map>),
    /// `crc32`, `djb2`, `sdbm`.
    Hash(crate::internal::HashConv),
    /// Arithmetic, digests, dumps … (see [`crate::conv`]).
    More(crate::conv::More),
    /// JSON Web Tokens (see [`crate::jwt`]).
    Jwt(crate::jwt::JwtConv),
    Text(crate::textconv::TextConv),
    /// `set-var(<name>[,<cond>…])`, `unset-var(<name>)`: the sample
    /// passes unchanged.
    SetVar(crate::vars::VarSet),
    UnsetVar(String),
    /// `in_table`, `table_*`.
    Stick(crate::stick::StickConv),
    /// `lua.<name>(<args>)`: a converter a Lua script registered.
    Lua(crate::lua::LuaCall),
}

impl PartialEq for Conv {
    fn eq(&self, other: &Self) -> bool {
        format!("{self:?}") == format!("{other:?}")
    }
}

/// A fetch and its converters.
#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    pub fetch: Fetch,
    pub convs: Vec<Conv>,
}

pub use crate::args::{split_call, split_top};

fn int_arg(a: &[String], i: usize, what: &str) -> Result<i64, String> {
    a.get(i)
        .ok_or_else(|| format!("{what}: missing argument {}", i + 1))?
        .parse()
        .map_err(|_| format!("{what}: argument {} must be an integer", i + 1))
}

fn occ_arg(a: &[String], name: &str) -> Result<Option<i64>, String> {
    a.get(1)
        .map(|o| {
            o.parse()
                .map_err(|_| format!("{name}: invalid occurrence '{o}'"))
        })
        .transpose()
}

/// Parses a fetch by name (HAProxy's spelling, with its aliases).
pub fn parse_fetch(s: &str) -> Result<Fetch, String> {
    let (name, a) = split_call(s)?;
    if let Some(f) = crate::ssl::parse(name, &a) {
        return f.map(Fetch::Ssl);
    }
    if let Some(f) = crate::payload::parse(name, &a) {
        return f.map(Fetch::Payload);
    }
    if let Some(f) = crate::payload::parse_res(name, &a) {
        return f.map(Fetch::ResPayload);
    }
    if let Some(f) = crate::lua::call(name, &a) {
        return f.map(Fetch::Lua);
    }
    let first = a.first().cloned();
    let need = |what: &str| -> Result<String, String> {
        first
            .clone()
            .filter(|x| !x.is_empty())
            .ok_or_else(|| format!("fetch method '{name}' expects {what}"))
    };
    Ok(match name {
        "src" => Fetch::Src,
        "src_port" => Fetch::SrcPort,
        "dst" => Fetch::Dst,
        "dst_port" => Fetch::DstPort,
        "method" => Fetch::Method,
        "path" => Fetch::Path,
        "pathq" => Fetch::PathQ,
        "url" => Fetch::Url,
        "query" => Fetch::Query,
        "base" => Fetch::Base,
        "url_param" | "urlp" => Fetch::UrlParam(need("a parameter name")?),
        "req.ver" | "req_ver" => Fetch::ReqVer,
        "hdr" | "req.hdr" => Fetch::Hdr {
            name: first,
            occ: occ_arg(&a, name)?,
            full: false,
        },
        "req.fhdr" => Fetch::Hdr {
            name: Some(need("a header name")?),
            occ: occ_arg(&a, name)?,
            full: true,
        },
        "hdr_cnt" | "req.hdr_cnt" => Fetch::HdrCnt(first),
        "hdr_ip" | "req.hdr_ip" => Fetch::HdrIp {
            name: first,
            occ: occ_arg(&a, name)?,
        },
        "hdr_val" | "req.hdr_val" => Fetch::HdrVal(need("a header name")?),
        "res.hdr" | "shdr" => Fetch::ResHdr {
            name: first,
            occ: occ_arg(&a, name)?,
            full: false,
        },
        "res.fhdr" => Fetch::ResHdr {
            name: Some(need("a header name")?),
            occ: occ_arg(&a, name)?,
            full: true,
        },
        "req.cook" | "cook" => Fetch::Cook(first),
        "status" => Fetch::Status,
        "nbsrv" => Fetch::Nbsrv(first.unwrap_or_default()),
        "be_conn" => Fetch::BeConn(first.unwrap_or_default()),
        "fe_conn" => Fetch::FeConn,
        "srv_name" => Fetch::SrvName,
        "var" => {
            let n = need("a variable name")?;
            if !crate::vars::is_var(&n) {
                return Err(format!("fetch method 'var': invalid variable name '{n}'"));
            }
            Fetch::Var(n, a.get(1).cloned())
        }
        "always_true" => Fetch::AlwaysTrue,
        "always_false" => Fetch::AlwaysFalse,
        "http_first_req" => Fetch::FirstReq,
        "req.body" => Fetch::Body,
        "req.body_len" => Fetch::BodyLen,
        "req.body_size" => Fetch::BodySize,
        "http_auth" => Fetch::HttpAuth(need("a userlist name")?),
        "http_auth_group" => Fetch::HttpAuthGroup(need("a userlist name")?),
        "http_auth_user" => Fetch::HttpAuthUser,
        "http_auth_pass" => Fetch::HttpAuthPass,
        "http_auth_type" => Fetch::HttpAuthType,
        "req.body_param" => Fetch::BodyParam(need("a parameter name")?),
        "http_auth_bearer" => Fetch::AuthBearer(first.filter(|h| !h.is_empty())),
        "res.cache_hit" => Fetch::CacheHit,
        "res.cache_name" => Fetch::CacheName,
        "str" => Fetch::Str(first.unwrap_or_default()),
        "int" => Fetch::Int(int_arg(&a, 0, "int")?),
        _ => match crate::internal::parse(name, &a) {
            Some(r) => Fetch::Internal(r?),
            None => match crate::hdrfetch::parse(name, &a) {
                Some(r) => Fetch::Hdrs(r?),
                None => match crate::live::parse(name, &a) {
                    Some(r) => Fetch::Live(r?),
                    None => match crate::stick::parse_fetch(name, &a) {
                        Some(r) => Fetch::Stick(r?),
                        None => return Err(format!("unknown fetch method '{name}'")),
                    },
                },
            },
        },
    })
}

fn delims(a: &[String], i: usize) -> Vec<u8> {
    a.get(i).map(|d| d.as_bytes().to_vec()).unwrap_or_default()
}

/// Parses a converter by name. `-f`-style map files are read by `load`.
pub fn parse_conv(s: &str, load: &dyn Fn(&str) -> Result<String, String>) -> Result<Conv, String> {
    let (name, a) = split_call(s)?;
    if let Some(c) = crate::lua::call(name, &a) {
        return c.map(Conv::Lua);
    }
    Ok(match name {
        "lower" => Conv::Lower,
        "upper" => Conv::Upper,
        "length" => Conv::Length,
        "base64" => Conv::Base64,
        "b64dec" => Conv::B64Dec,
        "ub64enc" => Conv::Ub64Enc,
        "ub64dec" => Conv::Ub64Dec,
        "hex" => Conv::Hex,
        "url_dec" => Conv::UrlDec(match a.first().map(String::as_str) {
            None | Some("0") => false,
            Some("1") => true,
            Some(x) => {
                return Err(format!(
                    "converter 'url_dec': in_form must be 0 or 1, not '{x}'"
                ))
            }
        }),
        "field" | "word" => {
            let index = int_arg(&a, 0, name)?;
            if index == 0 {
                return Err(format!("converter '{name}': unexpected value 0 for index"));
            }
            let d = delims(&a, 1);
            if d.is_empty() {
                return Err(format!("converter '{name}' expects delimiters"));
            }
            let count = a.get(2).map_or(Ok(1), |c| {
                c.parse().map_err(|_| format!("{name}: invalid count"))
            })?;
            if name == "field" {
                Conv::Field {
                    index,
                    delims: d,
                    count,
                }
            } else {
                Conv::Word {
                    index,
                    delims: d,
                    count,
                }
            }
        }
        "regsub" => {
            let re = a.first().ok_or("converter 'regsub' expects a regex")?;
            let icase = a.get(2).is_some_and(|f| f.contains('i'));
            let re = crate::matching::regex(re, icase).map_err(|e| format!("regsub: {e}"))?;
            let with = crate::matching::backrefs(a.get(1).map_or(&b""[..], |w| w.as_bytes()));
            let global = a.get(2).is_some_and(|f| f.contains('g'));
            Conv::RegSub { re, with, global }
        }
        "ipmask" => {
            let v4 = a.first().ok_or("converter 'ipmask' expects a mask")?;
            let v4 =
                mask_arg::<32>(v4).ok_or_else(|| format!("ipmask: invalid IPv4 mask '{v4}'"))?;
            let v6 = match a.get(1) {
                Some(m) => {
                    mask_arg::<128>(m).ok_or_else(|| format!("ipmask: invalid IPv6 mask '{m}'"))?
                }
                None => u128::MAX,
            };
            Conv::IpMask(v4 as u32, v6)
        }
        "concat" => Conv::Concat {
            before: delims(&a, 0),
            var: a.get(1).filter(|v| !v.is_empty()).cloned(),
            after: delims(&a, 2),
        },
        "bytes" => Conv::Bytes {
            offset: int_arg(&a, 0, "bytes")?.max(0) as usize,
            len: if a.len() > 1 {
                Some(int_arg(&a, 1, "bytes")?.max(0) as usize)
            } else {
                None
            },
        },
        "set-var" => Conv::SetVar(crate::vars::VarSet::parse(&a.join(","))?),
        "unset-var" => Conv::UnsetVar(crate::action::var_name(s, "unset-var")?),
        n if n == "map" || n.starts_with("map_") => {
            let file = a
                .first()
                .ok_or_else(|| format!("converter '{n}' expects a map file"))?;
            let kind = n.strip_prefix("map_").unwrap_or("str");
            let kind = kind.split('_').next().unwrap_or("str");
            let text = load(file)?;
            let default = a.get(1).cloned();
            Conv::Map(std::sync::Arc::new(crate::matching::Map::load(
                kind, file, &text, default,
            )?))
        }
        _ => match crate::internal::parse_hash(name, &a) {
            Some(r) => Conv::Hash(r?),
            None => match crate::conv::parse(name, &a) {
                Some(r) => Conv::More(r?),
                None => match crate::jwt::parse(name, &a, load) {
                    Some(r) => Conv::Jwt(r?),
                    None => match crate::textconv::parse(name, &a) {
                        Some(r) => Conv::Text(r?),
                        None => match crate::stick::parse_conv(name, &a) {
                            Some(r) => Conv::Stick(r?),
                            None if refused_conv(name) => {
                                return Err(format!("converter '{name}' is not supported by weir"))
                            }
                            None => return Err(format!("unknown converter '{name}'")),
                        },
                    },
                },
            },
        },
    })
}

/// Converters of haproxy 2.6 that weir knows and does not offer.
fn refused_conv(name: &str) -> bool {
    matches!(name, "debug" | "da-csv-conv" | "51d.single")
}

impl Expr {
    /// Parses `fetch[,conv…]`.
    pub fn parse(s: &str, load: &dyn Fn(&str) -> Result<String, String>) -> Result<Expr, String> {
        let parts = split_top(s);
        let (fetch, convs) = parts.split_first().ok_or("missing sample fetch")?;
        let fetch = parse_fetch(fetch.trim())?;
        let names: Vec<&str> = convs
            .iter()
            .map(|c| c.trim().split('(').next().unwrap_or_default())
            .collect();
        let convs: Vec<Conv> = convs
            .iter()
            .map(|c| parse_conv(c.trim(), load))
            .collect::<Result<_, _>>()?;
        crate::types::check(&fetch, &convs, &names)?;
        Ok(Expr { fetch, convs })
    }

    /// Evaluates to one value (the last occurrence for multi-valued
    /// fetches); `None` when the fetch finds nothing.
    pub fn eval(&self, ctx: &dyn Ctx) -> Option<Sample> {
        let v = match fetch_single(&self.fetch, ctx) {
            Some(v) => v?,
            None => fetch_all(&self.fetch, ctx, false).pop()?,
        };
        self.convert(v, ctx)
    }

    /// [`Expr::eval_all`] of a fetch that gives one value at most, with no
    /// list made; `None` when it may give several.
    pub fn eval_one(&self, ctx: &dyn Ctx) -> Option<Option<Sample>> {
        let v = fetch_single(&self.fetch, ctx)?;
        Some(v.and_then(|v| self.convert(v, ctx)))
    }

    /// Evaluates every value (ACLs iterate header occurrences).
    pub fn eval_all(&self, ctx: &dyn Ctx) -> Vec<Sample> {
        fetch_all(&self.fetch, ctx, true)
            .into_iter()
            .filter_map(|v| self.convert(v, ctx))
            .collect()
    }

    /// The converters alone, applied to `v` (a script's `txn.c`).
    pub fn convs_on(&self, v: Sample, ctx: &dyn Ctx) -> Option<Sample> {
        self.convert(v, ctx)
    }

    fn convert(&self, mut v: Sample, ctx: &dyn Ctx) -> Option<Sample> {
        for c in &self.convs {
            v = convert(c, v, ctx)?;
        }
        Some(v)
    }
}

#[cfg(test)]
#[path = "sample_tests.rs"]
mod tests;

/// `v` without the spaces and tabs around it (HTTP's optional whitespace).
fn trim_ows(v: &[u8]) -> &[u8] {
    let start = v.iter().position(|&b| b != b' ' && b != b'\t');
    let end = v.iter().rposition(|&b| b != b' ' && b != b'\t');
    match (start, end) {
        (Some(a), Some(z)) => v.get(a..=z).unwrap_or_default(),
        _ => &[],
    }
}
