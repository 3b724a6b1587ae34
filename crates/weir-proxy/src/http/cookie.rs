//! Cookie persistence (`cookie <name> insert|rewrite|prefix` with
//! `server … cookie <value>`): the request's cookie picks the server, the
//! response gets the cookie set or rewritten, and the log gets HAProxy's
//! two cookie flags (the third and fourth characters of `%tsc`). With
//! `maxidle`/`maxlife` an inserted cookie carries its last-seen and
//! first-seen dates as HAProxy writes them (`s1|<last>|<first>`, each the
//! Unix time divided by 4 in five base64 digits), so cookies set by one
//! proxy are understood by the other.

use crate::state::ServerId;
use weir_config::{CookieCfg, CookieMode, Proxy};
use weir_proto::h1::{Header, RequestHead, ResponseHead};

/// What the request's cookie asked for.
pub struct Persist {
    /// The server index its value names.
    pub server: Option<ServerId>,
    /// Third `%tsc` character: `N` none, `V` valid, `I` invalid, `E`
    /// idle too long, `O` too old, `D` its server was down (set later).
    pub req_flag: u8,
    /// The cookie's first-seen date (seconds), kept when it is refreshed.
    first_seen: Option<u64>,
    /// The value as the client sent it (to know whether it changes).
    sent: Vec<u8>,
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// A cookie date: seconds / 4 in five base64 digits (30 bits).
fn enc_date(secs: u64) -> String {
    let v = (secs / 4) & 0x3fff_ffff;
    (0..5)
        .map(|i| {
            char::from(
                B64.get(((v >> (6 * (4 - i))) & 63) as usize)
                    .map_or(b'A', |&c| c),
            )
        })
        .collect()
}

fn dec_date(s: &[u8]) -> Option<u64> {
    if s.len() != 5 {
        return None;
    }
    s.iter()
        .try_fold(0u64, |acc, &c| {
            let d = B64.iter().position(|&x| x == c)? as u64;
            Some(acc << 6 | d)
        })
        .map(|v| v * 4)
}

/// The cookie value for `server` with the dates `maxidle`/`maxlife` need.
fn dated(c: &CookieCfg, server: &str, now: u64, first: u64) -> String {
    match (c.maxidle, c.maxlife) {
        (_, Some(_)) => format!("{server}|{}|{}", enc_date(now), enc_date(first)),
        (Some(_), None) => format!("{server}|{}", enc_date(now)),
        (None, None) => server.to_string(),
    }
}

/// Judges the dates of a cookie: `Err(flag)` when it is too old (`O`,
/// `maxlife`) or idle too long (`E`, `maxidle`); dates more than a day in
/// the future count as expired too. Returns the first-seen date to keep.
fn judge(
    c: &CookieCfg,
    last: Option<u64>,
    first: Option<u64>,
    now: u64,
) -> Result<Option<u64>, u8> {
    let too_old = |d: u64, max: u64| d > now + 86_400 || now.saturating_sub(d) > max;
    if let (Some(max), Some(f)) = (c.maxlife, first) {
        if too_old(f, max) {
            return Err(b'O');
        }
    }
    if let (Some(max), Some(l)) = (c.maxidle, last) {
        if too_old(l, max) {
            return Err(b'E');
        }
    }
    Ok(first)
}

/// Splits a `Cookie` header value into `(name, value)` pairs.
fn pairs(v: &[u8]) -> impl Iterator<Item = (&[u8], &[u8])> {
    v.split(|&b| b == b';').map(|p| {
        let p = p.trim_ascii();
        crate::cut::split_at_byte(p, b'=').unwrap_or((p, &b""[..]))
    })
}

/// Finds the persistence cookie in the request and edits it for the
/// server: `prefix` strips the server part, `insert indirect` removes it.
/// Returns None when the backend has no `cookie` line.
/// `now` is the Unix time in seconds (for `maxidle`/`maxlife`).
pub fn on_request(px: &Proxy, req: &mut RequestHead, now: u64) -> (Option<Persist>, bool) {
    let Some(c) = &px.cookie else {
        return (None, false);
    };
    let mut found: Option<Vec<u8>> = None;
    for h in req.headers.iter().filter(|h| h.is("cookie")) {
        if let Some((_, v)) = pairs(h.value()).find(|(n, _)| *n == c.name.as_bytes()) {
            found = Some(v.to_vec());
        }
    }
    let Some(val) = found else {
        let none = Persist {
            server: None,
            req_flag: b'N',
            first_seen: None,
            sent: Vec::new(),
        };
        return (Some(none), false);
    };
    let persist =
        |server: Option<ServerId>, req_flag: u8, first_seen: Option<u64>, sent: Vec<u8>| {
            Some(Persist {
                server,
                req_flag,
                first_seen,
                sent,
            })
        };
    // The server part of the value, and what is left for the application
    // (`prefix`); a dated `insert` cookie is `server|last|first`.
    let mut first_seen = None;
    let (srv_part, rest) = if c.maxidle.is_some() || c.maxlife.is_some() {
        let mut parts = val.split(|&b| b == b'|');
        let srv = parts.next().unwrap_or(&[]).to_vec();
        let last = parts.next().and_then(dec_date);
        let first = parts.next().and_then(dec_date);
        match judge(c, last, first, now) {
            Ok(f) => first_seen = f,
            Err(flag) => return (persist(None, flag, None, val), false),
        }
        (srv, None)
    } else {
        match (c.mode, crate::cut::split_at_byte(&val, b'~')) {
            (CookieMode::Prefix, Some((srv, rest))) => (srv.to_vec(), Some(rest.to_vec())),
            _ => (val.clone(), None),
        }
    };
    let server = px
        .servers
        .iter()
        .position(|s| s.cookie.as_deref().map(str::as_bytes) == Some(srv_part.as_slice()))
        .map(ServerId::new);
    let strip = match c.mode {
        CookieMode::Prefix => true,
        CookieMode::Insert => c.indirect,
        CookieMode::Rewrite => false,
    };
    // `insert indirect` keeps the cookie from the server whatever server
    // it names (an unknown one too, as haproxy removes it); `prefix` takes
    // off only a server part it knows.
    let indirect = c.mode == CookieMode::Insert && c.indirect;
    let changed = strip && (server.is_some() || indirect) && strip_cookie(c, req, rest.as_deref());
    let flag = if server.is_some() { b'V' } else { b'I' };
    (persist(server, flag, first_seen, val), changed)
}

/// Removes the persistence cookie from the request's `Cookie` headers, or
/// replaces its value with `rest` (the application's part of a `prefix`
/// cookie). Returns whether the head changed.
fn strip_cookie(c: &CookieCfg, req: &mut RequestHead, rest: Option<&[u8]>) -> bool {
    let mut changed = false;
    for h in req.headers.iter_mut().filter(|h| h.is("cookie")) {
        let parts: Vec<Vec<u8>> = pairs(h.value())
            .filter_map(|(n, v)| {
                if n != c.name.as_bytes() {
                    return Some([n, b"=", v].concat());
                }
                rest.map(|r| [n, b"=", r].concat())
            })
            .collect();
        h.set_value(&parts.join(&b"; "[..]));
        changed = true;
    }
    req.headers
        .retain(|h| !(h.is("cookie") && h.value().is_empty()));
    changed
}

/// The `Set-Cookie` line for server cookie `value`; for a server without
/// a cookie value (`None`), the line that deletes the client's, as
/// haproxy sends it.
fn set_cookie_line(c: &CookieCfg, value: Option<&str>) -> Vec<u8> {
    let mut s = match value {
        Some(v) => format!("{}={v}; path=/", c.name),
        None => format!("{}=; Expires=Thu, 01-Jan-1970 00:00:01 GMT; path=/", c.name),
    };
    for d in &c.domains {
        s.push_str(&format!("; domain={d}"));
    }
    if c.httponly {
        s.push_str("; HttpOnly");
    }
    if c.secure {
        s.push_str("; Secure");
    }
    for a in &c.attrs {
        s.push_str(&format!("; {a}"));
    }
    s.into_bytes()
}

/// Sets or rewrites the cookie in the response for server `srv`; returns
/// the fourth `%tsc` character (`N` nothing, `I` inserted, `U` dates
/// updated, `R` rewritten, `P` preserved) and whether the head changed.
pub fn on_response(
    px: &Proxy,
    srv: ServerId,
    p: &Persist,
    method: &str,
    res: &mut ResponseHead,
    now: u64,
) -> (u8, bool) {
    let Some(c) = &px.cookie else {
        return (b'N', false);
    };
    let value = px
        .servers
        .get(srv.index())
        .and_then(|s| s.cookie.as_deref());
    let server_sets = |res: &ResponseHead| {
        res.headers.iter().any(|h| {
            h.is("set-cookie")
                && pairs(h.value())
                    .next()
                    .is_some_and(|(n, _)| n == c.name.as_bytes())
        })
    };
    match c.mode {
        CookieMode::Insert => {
            if c.preserve && server_sets(res) {
                return (b'P', false);
            }
            let valid_here = p.req_flag == b'V' && p.server == Some(srv);
            let dates = c.maxidle.is_some() || c.maxlife.is_some();
            let fresh = value.map(|v| dated(c, v, now, p.first_seen.unwrap_or(now)));
            let flag = if !valid_here {
                b'I'
            } else if dates && fresh.as_deref().map(str::as_bytes) != Some(p.sent.as_slice()) {
                b'U'
            } else {
                return (b'N', false);
            };
            if flag == b'I' && c.postonly && method != "POST" {
                return (b'N', false);
            }
            res.headers.retain(|h| {
                !(h.is("set-cookie") && {
                    pairs(h.value())
                        .next()
                        .is_some_and(|(n, _)| n == c.name.as_bytes())
                })
            });
            res.headers.push(Header::new(
                "set-cookie",
                &set_cookie_line(c, fresh.as_deref()),
            ));
            if c.nocache {
                res.headers.push(Header::new("cache-control", b"private"));
            }
            (flag, true)
        }
        CookieMode::Rewrite | CookieMode::Prefix => {
            let Some(value) = value else {
                return (b'N', false);
            };
            let mut changed = false;
            for h in res.headers.iter_mut().filter(|h| h.is("set-cookie")) {
                let (n, v) = match pairs(h.value()).next() {
                    Some((n, v)) if n == c.name.as_bytes() => (n.to_vec(), v.to_vec()),
                    _ => continue,
                };
                let attrs_at = h.value().iter().position(|&b| b == b';');
                let attrs = attrs_at
                    .and_then(|i| h.value().get(i..))
                    .unwrap_or_default()
                    .to_vec();
                let newv = if c.mode == CookieMode::Prefix {
                    [value.as_bytes(), b"~", v.as_slice()].concat()
                } else {
                    value.as_bytes().to_vec()
                };
                h.set_value(&[n.as_slice(), b"=", newv.as_slice(), attrs.as_slice()].concat());
                changed = true;
            }
            (if changed { b'R' } else { b'N' }, changed)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_as_haproxy_writes_them() {
        // Observed from haproxy 2.6: Unix time 1795392540 is "awOEH".
        assert_eq!(enc_date(1_795_392_540), "awOEH");
        assert_eq!(dec_date(b"awOEH"), Some(1_795_392_540));
        assert_eq!(dec_date(b"awOD+"), Some(1_795_392_540 - 9 * 4));
        assert_eq!(dec_date(b"aw-EH"), None);
        assert_eq!(dec_date(b"awOE"), None);
    }
}
