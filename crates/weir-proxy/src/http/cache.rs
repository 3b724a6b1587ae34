//! HTTP caching (`http-request cache-use`, `http-response cache-store`,
//! `cache` sections, manual §6): whether a request may be answered from a
//! cache and the answer (with `Age`, or a 304 for a conditional request),
//! whether a response may be kept and for how long, and the body kept on
//! its way down.

use super::io::{forward_through, Buf, XferError, XferTimeouts};
use super::peer::Peer;
use super::rules::{ExCtx, Local};
use crate::state::cache::{Object, Secondary, Store};
use crate::term::{Cause, State, Term};
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;
use weir_proto::h1::{Framing, Header, RequestHead, ResponseHead};

/// A request's key in a cache: its host and target.
fn key(req: &RequestHead) -> Vec<u8> {
    let host = req
        .headers
        .iter()
        .find(|h| h.is("host"))
        .map(|h| h.value().to_vec())
        .unwrap_or_default();
    [host.as_slice(), b" ", req.uri.as_bytes()].concat()
}

fn field<'a>(hs: &'a [Header], name: &str) -> Option<&'a [u8]> {
    hs.iter().find(|h| h.is(name)).map(Header::value)
}

/// Whether a `Cache-Control` (or `Pragma`) field says `token`.
fn says(hs: &[Header], name: &str, token: &str) -> bool {
    hs.iter().filter(|h| h.is(name)).any(|h| {
        h.value()
            .split(|&b| b == b',')
            .any(|t| t.trim_ascii().eq_ignore_ascii_case(token.as_bytes()))
    })
}

/// `cache-use <name>`: the answer from the cache when it holds a fresh
/// response for `req` (and the client did not ask for a fresh one).
pub(super) fn lookup(ctx: &ExCtx<'_>, name: &str, req: &RequestHead) -> Option<Local> {
    let store = ctx.sh.caches.get(name)?;
    if !matches!(req.method.as_str(), "GET" | "HEAD")
        || says(&req.headers, "cache-control", "no-cache")
        || says(&req.headers, "pragma", "no-cache")
    {
        return None;
    }
    let now = crate::clock::now();
    let accepts = accepted(&req.headers);
    let o = store.get(&key(req), now, |o| fits(o, req, accepts))?;
    Some(answer(&o, req, now))
}

/// Content codings a cache knows (IANA's registry), a bit each.
const CODINGS: [&str; 11] = [
    "identity",
    "gzip",
    "x-gzip",
    "deflate",
    "br",
    "compress",
    "x-compress",
    "zstd",
    "aes128gcm",
    "exi",
    "pack200-gzip",
];
const IDENTITY: u16 = 1;
const ALL_CODINGS: u16 = (1 << CODINGS.len()) - 1;
/// More values in `Accept-Encoding` and no variant is served or kept
/// for the request (haproxy's limit).
const MAX_ACCEPTED: usize = 16;

fn coding_bit(t: &[u8]) -> Option<u16> {
    CODINGS
        .iter()
        .position(|c| t.eq_ignore_ascii_case(c.as_bytes()))
        .map(|i| 1 << i)
}

/// Whether an `Accept-Encoding` parameter is a zero weight (`q=0`).
fn zero_weight(p: &[u8]) -> bool {
    let p = p.trim_ascii();
    let Some(v) = p
        .strip_prefix(b"q")
        .or_else(|| p.strip_prefix(b"Q"))
        .and_then(|v| v.trim_ascii_start().strip_prefix(b"="))
    else {
        return false;
    };
    std::str::from_utf8(v.trim_ascii())
        .ok()
        .and_then(|v| v.parse::<f32>().ok())
        .is_some_and(|q| q == 0.0)
}

/// The codings a request's `Accept-Encoding` accepts, a bit each: all
/// without the field; `*` for those not refused; identity unless refused
/// by name or by `*;q=0` (RFC 9110 §12.5.3). `None` past
/// [`MAX_ACCEPTED`] values.
fn accepted(hs: &[Header]) -> Option<u16> {
    let mut fields = hs.iter().filter(|h| h.is("accept-encoding")).peekable();
    if fields.peek().is_none() {
        return Some(ALL_CODINGS);
    }
    let (mut yes, mut no, mut star, mut n) = (0u16, 0u16, None, 0);
    for h in fields {
        for item in h.value().split(|&b| b == b',') {
            let mut parts = item.split(|&b| b == b';');
            let name = parts.next().unwrap_or_default().trim_ascii();
            if name.is_empty() {
                continue;
            }
            n += 1;
            if n > MAX_ACCEPTED {
                return None;
            }
            let zero = parts.any(zero_weight);
            if name == b"*" {
                star = Some(!zero);
            } else if let Some(bit) = coding_bit(name) {
                if zero {
                    no |= bit;
                } else {
                    yes |= bit;
                }
            }
        }
    }
    let mut ok = yes;
    if star == Some(true) {
        ok |= ALL_CODINGS & !no;
    }
    if no & IDENTITY == 0 && star != Some(false) {
        ok |= IDENTITY;
    }
    Some(ok)
}

/// A response's content codings, a bit each (identity's without any);
/// `None` for one no registry knows.
fn codings(hs: &[Header]) -> Option<u16> {
    let mut bits = 0;
    for h in hs.iter().filter(|h| h.is("content-encoding")) {
        for t in h.value().split(|&b| b == b',').map(<[u8]>::trim_ascii) {
            if !t.is_empty() {
                bits |= coding_bit(t)?;
            }
        }
    }
    Some(if bits == 0 { IDENTITY } else { bits })
}

/// The values of a request's `name` fields, joined (`None`: absent).
fn joined(hs: &[Header], name: &str) -> Option<Vec<u8>> {
    let mut vs = hs.iter().filter(|h| h.is(name)).map(Header::value);
    let first = vs.next()?.to_vec();
    Some(vs.fold(first, |mut a, v| {
        a.extend_from_slice(b", ");
        a.extend_from_slice(v);
        a
    }))
}

/// Whether the cached `o` may answer `req` (which accepts the codings
/// `accepts`): a variant's fields are the request's, and the request
/// accepts its codings.
fn fits(o: &Object, req: &RequestHead, accepts: Option<u16>) -> bool {
    let Some(v) = &o.vary else {
        return true;
    };
    v.fields
        .iter()
        .all(|(n, val)| joined(&req.headers, n) == *val)
        && v.codings
            .is_none_or(|c| accepts.is_some_and(|a| c & !a == 0))
}

/// The secondary key of `res` for `req`: `Some(None)` without `Vary`;
/// `None` when it cannot be kept: `process-vary off`, a varied field
/// other than `Accept-Encoding` and `Referer` (haproxy 2.6's), `Referer`
/// without `Accept-Encoding`, a coding no registry knows, or one the
/// request did not accept.
fn secondary(store: &Store, req: &RequestHead, res: &ResponseHead) -> Option<Option<Secondary>> {
    let mut varied = res
        .headers
        .iter()
        .filter(|h| h.is("vary"))
        .flat_map(|h| h.value().split(|&b| b == b','))
        .map(<[u8]>::trim_ascii)
        .filter(|t| !t.is_empty())
        .peekable();
    if varied.peek().is_none() {
        return Some(None);
    }
    if !store.conf.process_vary {
        return None;
    }
    let mut s = Secondary {
        fields: Vec::new(),
        codings: None,
    };
    for name in varied {
        if name.eq_ignore_ascii_case(b"accept-encoding") {
            let c = codings(&res.headers)?;
            if c & !accepted(&req.headers)? != 0 {
                return None;
            }
            s.codings = Some(c);
        } else if name.eq_ignore_ascii_case(b"referer") {
            s.fields.push(("referer", joined(&req.headers, "referer")));
        } else {
            return None;
        }
    }
    // haproxy 2.6 never serves a response varying on `Referer` but not
    // on `Accept-Encoding` (observed): it is not kept.
    s.codings?;
    Some(Some(s))
}

/// The cached response `o` to `req`: a 304 when its validators match.
fn answer(o: &Object, req: &RequestHead, now: Instant) -> Local {
    let age = o.age + now.saturating_duration_since(o.stored).as_secs();
    let not_modified = not_modified(o, req);
    let (status, reason) = if not_modified {
        (304, "Not Modified")
    } else {
        (o.status, o.reason.as_str())
    };
    let mut out = format!("HTTP/1.1 {status} {reason}\r\n").into_bytes();
    for (n, v) in &o.headers {
        out.extend_from_slice(n.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(v);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(format!("age: {age}\r\n").as_bytes());
    if !not_modified {
        out.extend_from_slice(format!("content-length: {}\r\n", o.body.len()).as_bytes());
    }
    out.extend_from_slice(b"\r\n");
    if !not_modified && req.method != "HEAD" {
        out.extend_from_slice(&o.body);
    }
    Local {
        bytes: out,
        status,
        term: Term::new(Cause::Local, State::Request),
        keep: true,
    }
}

/// `If-None-Match` (weak comparison, `*`), else `If-Modified-Since`
/// against `Last-Modified`, else `Date`.
fn not_modified(o: &Object, req: &RequestHead) -> bool {
    let of = |n: &str| {
        o.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(n))
            .map(|(_, v)| v.as_slice())
    };
    let strip = |t: &[u8]| {
        t.trim_ascii()
            .strip_prefix(b"W/")
            .unwrap_or(t.trim_ascii())
            .to_vec()
    };
    if let Some(inm) = field(&req.headers, "if-none-match") {
        let Some(etag) = of("etag") else {
            return inm.trim_ascii() == b"*";
        };
        let etag = strip(etag);
        return inm
            .split(|&b| b == b',')
            .any(|t| t.trim_ascii() == b"*" || strip(t) == etag);
    }
    let Some(ims) = field(&req.headers, "if-modified-since").and_then(http_date) else {
        return false;
    };
    match of("last-modified")
        .or_else(|| of("date"))
        .and_then(http_date)
    {
        Some(lm) => lm <= ims,
        None => false,
    }
}

/// `cache-store`: the key and object `res` makes for its cache, when it
/// may be kept (a 200 to a GET, not private, `no-cache` nor `no-store`,
/// without `Vary` or a variant [`secondary`] allows, with a lifetime or a
/// validator, younger than its
/// lifetime; a `Set-Cookie` does not stop it, as in haproxy 2.6); `None`
/// otherwise.
pub(super) fn storable(
    store: &Store,
    req: &RequestHead,
    res: &ResponseHead,
) -> Option<(Vec<u8>, Object)> {
    let hs = &res.headers;
    if req.method != "GET"
        || res.status != 200
        || ["no-store", "no-cache", "private"]
            .iter()
            .any(|t| says(hs, "cache-control", t))
        || says(&req.headers, "cache-control", "no-store")
    {
        return None;
    }
    let vary = secondary(store, req, res)?;
    let age = match field(hs, "age") {
        Some(a) => std::str::from_utf8(a).ok()?.trim().parse::<u64>().ok()?,
        None => 0,
    };
    let directive = |name: &str| {
        hs.iter().filter(|h| h.is("cache-control")).find_map(|h| {
            h.value().split(|&b| b == b',').find_map(|t| {
                let t = String::from_utf8_lossy(t.trim_ascii()).to_ascii_lowercase();
                t.strip_prefix(&format!("{name}="))?
                    .trim_matches('"')
                    .parse::<u64>()
                    .ok()
            })
        })
    };
    let expires = || {
        let exp = http_date(field(hs, "expires")?)?;
        let date = field(hs, "date")
            .and_then(http_date)
            .unwrap_or_else(now_secs);
        Some(exp.saturating_sub(date).max(0) as u64)
    };
    let validator = field(hs, "last-modified").is_some() || field(hs, "etag").is_some();
    let lifetime = directive("s-maxage")
        .or_else(|| directive("max-age"))
        .or_else(expires)
        .or(validator.then_some(store.conf.max_age))?;
    if age >= lifetime {
        return None;
    }
    // What is left of its life, at most the cache's `max-age`.
    let left = (lifetime - age).min(store.conf.max_age);
    let now = crate::clock::now();
    let headers = hs
        .iter()
        .filter(|h| {
            ![
                "connection",
                "content-length",
                "transfer-encoding",
                "keep-alive",
                "age",
            ]
            .iter()
            .any(|n| h.is(n))
        })
        .map(|h| (h.name().to_string(), h.value().to_vec()))
        .collect();
    let o = Object {
        status: res.status,
        reason: res.reason.clone(),
        headers,
        body: Vec::new(),
        stored: now,
        age,
        expires: now + Duration::from_secs(left),
        vary,
    };
    Some((key(req), o))
}

fn now_secs() -> i64 {
    crate::clock::wall().as_secs() as i64
}

/// An IMF-fixdate (`Thu, 22 Oct 2020 16:51:12 GMT`) in seconds since the
/// epoch.
fn http_date(v: &[u8]) -> Option<i64> {
    let s = std::str::from_utf8(v).ok()?.trim();
    let mut w = s.split_whitespace().skip(1);
    let day: i64 = w.next()?.parse().ok()?;
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let mon = MONTHS.iter().position(|m| Some(*m) == w.clone().next())? as i64 + 1;
    w.next();
    let year: i64 = w.next()?.parse().ok()?;
    let mut t = w.next()?.split(':').map(|x| x.parse::<i64>().ok());
    let (h, m, sec) = (t.next()??, t.next()??, t.next()??);
    let valid = (1..=31).contains(&day)
        && (1..=9999).contains(&year)
        && (0..24).contains(&h)
        && (0..60).contains(&m)
        && (0..=60).contains(&sec);
    if !valid {
        return None;
    }
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if mon <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (mon + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + h * 3600 + m * 60 + sec)
}

/// What is kept of a body on its way down: all of it, or nothing once
/// it grew past the limit.
struct Kept {
    body: Option<Vec<u8>>,
    limit: u64,
}

impl Kept {
    fn add(&mut self, data: &[u8]) {
        if let Some(k) = self.body.as_mut() {
            if (k.len() + data.len()) as u64 > self.limit {
                self.body = None;
            } else {
                k.extend_from_slice(data);
            }
        }
    }
}

/// The body going down, as [`super::io::transfer`] forwards it, kept for
/// a cache (up to `limit` bytes): the bytes written, and the body when it
/// was kept whole.
#[allow(clippy::too_many_arguments)]
pub(super) async fn transfer_keeping(
    src: Peer<'_>,
    buf: &mut Buf,
    dst: Peer<'_>,
    framing: Framing,
    limit: u64,
    size: usize,
    t: XferTimeouts<'_>,
) -> (Result<u64, XferError>, Option<Vec<u8>>) {
    let mut kept = Kept {
        body: Some(Vec::new()),
        limit,
    };
    let r = forward_keeping(src, buf, dst, framing, size, t, &mut kept).await;
    match r {
        Ok(n) => (Ok(n), kept.body),
        Err(e) => (Err(e), None),
    }
}

async fn forward_keeping(
    src: Peer<'_>,
    buf: &mut Buf,
    dst: Peer<'_>,
    framing: Framing,
    size: usize,
    t: XferTimeouts<'_>,
    kept: &mut Kept,
) -> Result<u64, XferError> {
    if !matches!(framing, Framing::ContentLength(_) | Framing::Chunked) {
        kept.body = None;
        return Ok(0);
    }
    let chunked = framing == Framing::Chunked;
    let through = |piece: Option<Vec<u8>>| {
        let piece = piece.unwrap_or_default();
        kept.add(&piece);
        piece
    };
    forward_through(src, buf, dst, framing, size, t, chunked, through).await
}

/// `option checkcache`: whether `res` to `req` may be kept by a cache on
/// the way and sets a cookie that would go with it (haproxy 2.6's
/// conditions, as observed: a status that may be cached, a GET or HEAD
/// unless `public`, a lifetime or a validator, nothing that forbids
/// keeping it, and a `Set-Cookie` not covered by `no-cache="set-cookie"`).
pub(super) fn cacheable_cookie(req: &RequestHead, res: &ResponseHead) -> bool {
    let hs = &res.headers;
    if field(hs, "set-cookie").is_none()
        || ![200, 203, 204, 206, 300, 301, 404, 405, 410, 414, 501].contains(&res.status)
    {
        return false;
    }
    let directives: Vec<String> = hs
        .iter()
        .filter(|h| h.is("cache-control"))
        .flat_map(|h| {
            let v = String::from_utf8_lossy(h.value()).to_ascii_lowercase();
            split_directives(&v)
        })
        .collect();
    let has = |d: &str| directives.iter().any(|x| x == d);
    let value = |d: &str| {
        directives
            .iter()
            .find_map(|x| x.strip_prefix(d)?.strip_prefix('='))
            .map(|v| v.trim_matches('"').to_string())
    };
    let public = has("public");
    if !matches!(req.method.as_str(), "GET" | "HEAD") && !public {
        return false;
    }
    let zero = |d: &str| value(d).is_some_and(|v| v.parse::<u64>().map_or(true, |n| n == 0));
    if has("private")
        || has("no-cache")
        || has("no-store")
        || zero("max-age")
        || zero("s-maxage")
        || says(hs, "pragma", "no-cache")
    {
        return false;
    }
    // `no-cache="set-cookie[, …]"`: the cookie is not kept with it.
    if value("no-cache").is_some_and(|v| {
        v.split(',')
            .any(|f| f.trim().eq_ignore_ascii_case("set-cookie"))
    }) {
        return false;
    }
    value("max-age").is_some()
        || value("s-maxage").is_some()
        || ["expires", "last-modified", "etag"]
            .iter()
            .any(|n| field(hs, n).is_some())
}

/// `Cache-Control` directives, split at commas outside quotes.
fn split_directives(v: &str) -> Vec<String> {
    let (mut out, mut cur, mut quoted) = (Vec::new(), String::new(), false);
    for c in v.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                cur.push(c);
            }
            ',' if !quoted => out.push(std::mem::take(&mut cur).trim().to_string()),
            _ => cur.push(c),
        }
    }
    out.push(cur.trim().to_string());
    out
}

/// A successful unsafe request (`POST`, `PUT`, `DELETE` …) makes the
/// object of its key stale, as haproxy drops it.
pub(super) fn invalidate(store: &Store, req: &RequestHead, res: &ResponseHead) {
    let safe = matches!(req.method.as_str(), "GET" | "HEAD" | "OPTIONS" | "TRACE");
    if !safe && res.status < 400 {
        store.remove(&key(req));
    }
}

/// Keeps `o` with `body` in `store` under `key`.
pub(super) fn keep(store: &Arc<Store>, key: Vec<u8>, mut o: Object, body: Vec<u8>) {
    o.body = body;
    store.put(key, o);
}

#[cfg(test)]
#[path = "cache_tests.rs"]
mod tests;
