//! Cookie persistence (`cookie <name> insert|rewrite|prefix` with
//! `server … cookie <value>`): the request's cookie picks the server, the
//! response gets the cookie set or rewritten, and the log gets HAProxy's
//! two cookie flags (the third and fourth characters of `%tsc`).

use weir_config::{CookieCfg, CookieMode, Proxy};
use weir_proto::h1::{Header, RequestHead, ResponseHead};

/// What the request's cookie asked for.
pub struct Persist {
    /// The server index its value names.
    pub server: Option<usize>,
    /// Third `%tsc` character: `N` none, `V` valid, `I` invalid, `D` its
    /// server was down (set later).
    pub req_flag: u8,
}

/// Splits a `Cookie` header value into `(name, value)` pairs.
fn pairs(v: &[u8]) -> impl Iterator<Item = (&[u8], &[u8])> {
    v.split(|&b| b == b';').map(|p| {
        let p = p.trim_ascii();
        match p.iter().position(|&b| b == b'=') {
            Some(i) => (&p[..i], &p[i + 1..]),
            None => (p, &b""[..]),
        }
    })
}

/// Finds the persistence cookie in the request and edits it for the
/// server: `prefix` strips the server part, `insert indirect` removes it.
/// Returns None when the backend has no `cookie` line.
pub fn on_request(px: &Proxy, req: &mut RequestHead) -> (Option<Persist>, bool) {
    let Some(c) = &px.cookie else {
        return (None, false);
    };
    let mut found: Option<Vec<u8>> = None;
    for h in req
        .headers
        .iter()
        .filter(|h| h.name.eq_ignore_ascii_case("cookie"))
    {
        if let Some((_, v)) = pairs(&h.value).find(|(n, _)| *n == c.name.as_bytes()) {
            found = Some(v.to_vec());
        }
    }
    let Some(val) = found else {
        return (
            Some(Persist {
                server: None,
                req_flag: b'N',
            }),
            false,
        );
    };
    let (srv_part, rest) = match c.mode {
        CookieMode::Prefix => match val.iter().position(|&b| b == b'~') {
            Some(i) => (val[..i].to_vec(), Some(val[i + 1..].to_vec())),
            None => (val.clone(), None),
        },
        _ => (val.clone(), None),
    };
    let server = px
        .servers
        .iter()
        .position(|s| s.cookie.as_deref().map(str::as_bytes) == Some(srv_part.as_slice()));
    let mut changed = false;
    let strip = match c.mode {
        CookieMode::Prefix => true,
        CookieMode::Insert => c.indirect,
        CookieMode::Rewrite => false,
    };
    if strip && server.is_some() {
        for h in req
            .headers
            .iter_mut()
            .filter(|h| h.name.eq_ignore_ascii_case("cookie"))
        {
            let parts: Vec<Vec<u8>> = pairs(&h.value)
                .filter_map(|(n, v)| {
                    if n != c.name.as_bytes() {
                        return Some([n, b"=", v].concat());
                    }
                    rest.as_ref().map(|r| [n, b"=", r.as_slice()].concat())
                })
                .collect();
            h.value = parts.join(&b"; "[..]);
            changed = true;
        }
        req.headers
            .retain(|h| !(h.name.eq_ignore_ascii_case("cookie") && h.value.is_empty()));
    }
    (
        Some(Persist {
            server,
            req_flag: if server.is_some() { b'V' } else { b'I' },
        }),
        changed,
    )
}

fn set_cookie_line(c: &CookieCfg, value: &str) -> Vec<u8> {
    let mut s = format!("{}={value}; path=/", c.name);
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
/// the fourth `%tsc` character (`N` nothing, `I` inserted, `R` rewritten,
/// `P` preserved) and whether the head changed.
pub fn on_response(
    px: &Proxy,
    srv: usize,
    p: &Persist,
    method: &str,
    res: &mut ResponseHead,
) -> (u8, bool) {
    let (Some(c), Some(value)) = (
        &px.cookie,
        px.servers.get(srv).and_then(|s| s.cookie.as_deref()),
    ) else {
        return (b'N', false);
    };
    let server_sets = |res: &ResponseHead| {
        res.headers.iter().any(|h| {
            h.name.eq_ignore_ascii_case("set-cookie")
                && pairs(&h.value)
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
            if valid_here || (c.postonly && method != "POST") {
                return (b'N', false);
            }
            res.headers.retain(|h| {
                !(h.name.eq_ignore_ascii_case("set-cookie") && {
                    pairs(&h.value)
                        .next()
                        .is_some_and(|(n, _)| n == c.name.as_bytes())
                })
            });
            res.headers.push(Header {
                name: "set-cookie".into(),
                value: set_cookie_line(c, value),
            });
            if c.nocache {
                res.headers.push(Header {
                    name: "cache-control".into(),
                    value: b"private".to_vec(),
                });
            }
            (b'I', true)
        }
        CookieMode::Rewrite | CookieMode::Prefix => {
            let mut changed = false;
            for h in res
                .headers
                .iter_mut()
                .filter(|h| h.name.eq_ignore_ascii_case("set-cookie"))
            {
                let (n, v) = match pairs(&h.value).next() {
                    Some((n, v)) if n == c.name.as_bytes() => (n.to_vec(), v.to_vec()),
                    _ => continue,
                };
                let attrs_at = h.value.iter().position(|&b| b == b';');
                let attrs = attrs_at.map_or(&b""[..], |i| &h.value[i..]).to_vec();
                let newv = if c.mode == CookieMode::Prefix {
                    [value.as_bytes(), b"~", v.as_slice()].concat()
                } else {
                    value.as_bytes().to_vec()
                };
                h.value = [n.as_slice(), b"=", newv.as_slice(), attrs.as_slice()].concat();
                changed = true;
            }
            (if changed { b'R' } else { b'N' }, changed)
        }
    }
}
