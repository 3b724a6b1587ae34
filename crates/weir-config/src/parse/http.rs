//! Arguments of the HTTP keywords of a proxy: `option forwardfor`,
//! `errorfile`.

use crate::model::{CookieCfg, CookieMode, ForwardFor, Proxy, RetryOn};
use std::net::IpAddr;
use std::sync::Arc;

/// Parses `<addr>[/<prefix>|/<mask>]` (a network for `except`).
pub(super) fn network(s: &str) -> Result<(IpAddr, u8), String> {
    match weir_rules::matching::net_pattern(s)? {
        weir_rules::matching::Pattern::Net(ip, len) => Ok((ip, len)),
        _ => Err(format!("invalid network '{s}'")),
    }
}

/// `option forwardfor [except <net>] [header <name>] [if-none]`.
pub(super) fn forwardfor(args: &[String]) -> Result<ForwardFor, String> {
    let mut ff = ForwardFor {
        except: None,
        header: "X-Forwarded-For".into(),
        if_none: false,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "except" => {
                let n = it.next().ok_or("'except' expects a network")?;
                ff.except = Some(network(n)?);
            }
            "header" => {
                let h = it.next().ok_or("'header' expects a header name")?;
                if h.is_empty() || !h.bytes().all(|b| b.is_ascii_graphic() && b != b':') {
                    return Err(format!("invalid header name '{h}'"));
                }
                ff.header = h.clone();
            }
            "if-none" => ff.if_none = true,
            o => {
                return Err(format!(
                    "unexpected '{o}' (expects 'except', 'header' or 'if-none')"
                ))
            }
        }
    }
    Ok(ff)
}

/// Status codes HAProxy lets `errorfile` replace.
pub const ERRORFILE_CODES: &[u16] = &[
    200, 400, 401, 403, 404, 405, 407, 408, 410, 413, 425, 429, 500, 501, 502, 503, 504,
];

/// A status `errorfile` and `errorloc` may replace.
fn replaceable(code: &str) -> Result<u16, String> {
    code.parse()
        .ok()
        .filter(|c| ERRORFILE_CODES.contains(c))
        .ok_or_else(|| format!("status code '{code}' cannot be overridden"))
}

/// `errorfile <code> <file>`: the file holds a whole HTTP response.
pub(super) fn errorfile(args: &[String]) -> Result<(u16, Arc<[u8]>), String> {
    let [code, file] = args else {
        return Err("expects <status_code> and <file>".into());
    };
    let code = replaceable(code)?;
    let body =
        crate::files::read(file).map_err(|e| format!("error opening file '{file}' : {e}"))?;
    if body.len() > 16384 {
        return Err(format!(
            "file '{file}' is larger than a buffer ({} bytes)",
            body.len()
        ));
    }
    // An empty file (`/dev/null`): the connection closes without an answer.
    if !body.is_empty() && !weir_rules::action::is_raw_response(&body) {
        return Err(format!(
            "file '{file}' is not a complete HTTP/1 response (status line, headers, empty line)"
        ));
    }
    Ok((code, body.into()))
}

/// `errorloc|errorloc302|errorloc303 <code> <url>`: the error answered
/// with a redirect to `url` (302, or 303 for `errorloc303`), as haproxy
/// 2.6 writes it; the log keeps the error's status.
pub(super) fn errorloc(kw: &str, args: &[String]) -> Result<(u16, Arc<[u8]>), String> {
    let [code, url] = args else {
        return Err("expects <status_code> and <url>".into());
    };
    let code = replaceable(code)?;
    if url.bytes().any(|b| b <= b' ' || b == 0x7f) {
        return Err(format!("invalid URL '{url}'"));
    }
    let status = if kw == "errorloc303" {
        "303 See Other"
    } else {
        "302 Found"
    };
    let page = format!(
        "HTTP/1.1 {status}\r\ncache-control: no-cache\r\ncontent-length: 0\r\nlocation: {url}\r\n\r\n"
    );
    Ok((code, page.into_bytes().into()))
}

/// Reads a file named by a rule (`-f`, maps, `errorfile`, `return file`).
pub(super) fn load(path: &str) -> Result<String, String> {
    crate::files::read_to_string(path).map_err(|e| format!("failed to open file '{path}' : {e}"))
}

/// Resolves the ACL names declared so far in a proxy.
pub(super) fn lookup(p: &Proxy) -> impl Fn(&str) -> Option<Arc<[weir_rules::Acl]>> + '_ {
    move |name: &str| {
        p.acls
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| Arc::from(v.clone()))
    }
}

/// Parses an optional `if|unless` condition against the proxy's ACLs.
pub(super) fn cond(p: &Proxy, words: &[String]) -> Result<Option<weir_rules::Cond>, String> {
    if words.is_empty() {
        return Ok(None);
    }
    let lookup = lookup(p);
    weir_rules::Cond::parse(words, &lookup, &load).map(Some)
}

/// `cookie <name> [insert|rewrite|prefix] [options]`.
pub(super) fn cookie(args: &[String]) -> Result<CookieCfg, String> {
    let name = args.first().ok_or("expects a cookie name")?;
    if name.is_empty()
        || !name
            .bytes()
            .all(|b| b.is_ascii_graphic() && !b"()<>@,;:\\\"/[]?={}".contains(&b))
    {
        return Err(format!("invalid cookie name '{name}'"));
    }
    let mut c = CookieCfg {
        name: name.clone(),
        mode: CookieMode::Rewrite,
        indirect: false,
        nocache: false,
        postonly: false,
        preserve: false,
        httponly: false,
        secure: false,
        domains: Vec::new(),
        attrs: Vec::new(),
        maxidle: None,
        maxlife: None,
        dynamic: false,
    };
    let mut mode_set = false;
    let mut it = args[1..].iter();
    while let Some(w) = it.next() {
        match w.as_str() {
            "insert" | "rewrite" | "prefix" => {
                if mode_set {
                    return Err("'insert', 'rewrite' and 'prefix' exclude each other".into());
                }
                mode_set = true;
                c.mode = match w.as_str() {
                    "insert" => CookieMode::Insert,
                    "rewrite" => CookieMode::Rewrite,
                    _ => CookieMode::Prefix,
                };
            }
            "indirect" => c.indirect = true,
            "nocache" => c.nocache = true,
            "postonly" => c.postonly = true,
            "preserve" => c.preserve = true,
            "httponly" => c.httponly = true,
            "secure" => c.secure = true,
            "domain" => c
                .domains
                .push(it.next().ok_or("'domain' expects a domain")?.clone()),
            "attr" => c
                .attrs
                .push(it.next().ok_or("'attr' expects a value")?.clone()),
            o @ ("maxidle" | "maxlife") => {
                let v = it.next().ok_or_else(|| format!("'{o}' expects a time"))?;
                // Seconds unless a unit is given.
                let secs = if v.bytes().all(|b| b.is_ascii_digit()) {
                    v.parse::<u64>()
                        .map_err(|_| format!("invalid time '{v}'"))?
                } else {
                    crate::units::parse_duration(v)?.as_secs()
                };
                if secs == 0 {
                    return Err(format!("'{o}' expects a time of at least one second"));
                }
                if o == "maxidle" {
                    c.maxidle = Some(secs);
                } else {
                    c.maxlife = Some(secs);
                }
            }
            "dynamic" => c.dynamic = true,
            o => return Err(format!("unknown cookie option '{o}'")),
        }
    }
    if (c.maxidle.is_some() || c.maxlife.is_some()) && c.mode != CookieMode::Insert {
        return Err("'maxidle' and 'maxlife' work with 'insert' cookies only".into());
    }
    if c.indirect && c.mode == CookieMode::Prefix {
        return Err("'indirect' cannot be used with 'prefix'".into());
    }
    Ok(c)
}

/// `retry-on <keyword>…`.
pub(super) fn retry_on(args: &[String]) -> Result<Vec<RetryOn>, String> {
    if args.is_empty() {
        return Err("expects at least one keyword".into());
    }
    let mut out = Vec::new();
    for a in args {
        match a.as_str() {
            "none" => out.clear(),
            "conn-failure" => out.push(RetryOn::ConnFailure),
            "empty-response" => out.push(RetryOn::EmptyResponse),
            "junk-response" => out.push(RetryOn::JunkResponse),
            "response-timeout" => out.push(RetryOn::ResponseTimeout),
            "0rtt-rejected" => {}
            "all-retryable-errors" => out.extend([
                RetryOn::ConnFailure,
                RetryOn::EmptyResponse,
                RetryOn::JunkResponse,
                RetryOn::ResponseTimeout,
                RetryOn::Status(500),
                RetryOn::Status(502),
                RetryOn::Status(503),
                RetryOn::Status(504),
            ]),
            s => match s.parse::<u16>() {
                Ok(c @ (401 | 403 | 404 | 408 | 425 | 500 | 501 | 502 | 503 | 504)) => {
                    out.push(RetryOn::Status(c))
                }
                _ => return Err(format!("unknown retry-on keyword '{s}'")),
            },
        }
    }
    Ok(out)
}

/// The pages of an `http-errors` section (those of `codes`, or all)
/// replacing a proxy's.
pub(super) fn apply_errorfiles(
    errorfiles: &mut crate::model::ErrorPages,
    pages: &crate::model::ErrorPages,
    codes: &[u16],
) {
    for (code, body) in pages {
        if codes.is_empty() || codes.contains(code) {
            errorfiles.retain(|(c, _)| c != code);
            errorfiles.push((*code, body.clone()));
        }
    }
}

/// A rule's `errorfiles <name>`: the page of that section for the rule's
/// status, or the proxy's when it has none. The section must be defined
/// above the rule.
pub(super) fn resolve_section(
    st: &super::State<'_>,
    answer: &mut weir_rules::Return,
) -> Result<(), String> {
    answer.resolve(|name, status| {
        let pages = st.http_errors.get(name).ok_or_else(|| {
            format!("'errorfiles {name}': no http-errors section '{name}' above this rule (weir needs it defined before its use)")
        })?;
        Ok(pages.iter().find(|(c, _)| *c == status).map(|(_, b)| b.to_vec()))
    })
}

/// Applies `errorfiles <name> [codes]` naming a section defined further
/// down, once every `http-errors` section is known (where the order of a
/// proxy's error pages is no longer known, its own `errorfile` wins); an
/// unknown name is an error at the proxy's line.
pub(super) fn resolve_errorfiles(
    cfg: &mut crate::model::Config,
    sections: &std::collections::HashMap<String, crate::model::ErrorPages>,
    diags: &mut crate::diag::Diagnostics,
) {
    for p in &mut cfg.proxies {
        for (name, codes, loc) in std::mem::take(&mut p.http.errorfiles_refs) {
            let Some(list) = sections.get(&name) else {
                diags.alert(
                    &loc,
                    format!("'errorfiles' : unknown http-errors section '{name}'"),
                );
                continue;
            };
            for (code, body) in list {
                if codes.is_empty() || codes.contains(code) {
                    // An `errorfile` of the proxy itself wins.
                    if !p.http.errorfiles.iter().any(|(c, _)| c == code) {
                        p.http.errorfiles.push((*code, body.clone()));
                    }
                }
            }
        }
    }
}

/// An `http-error` line whose reply is rendered per response (with
/// `lf-string`, `lf-file`, or a `hdr` value holding a format): parsed as a
/// `return` action is; `None` for a page built once.
pub(super) fn http_error_reply(
    args: &[String],
    st: &super::State<'_>,
) -> Result<Option<weir_rules::Return>, String> {
    let dynamic = args.iter().enumerate().any(|(i, w)| {
        matches!(w.as_str(), "lf-string" | "lf-file")
            || (i >= 2 && args.get(i - 2).is_some_and(|h| h == "hdr") && w.contains('%'))
    });
    if !dynamic {
        return Ok(None);
    }
    let status = args
        .iter()
        .position(|w| w == "status")
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse::<u16>().ok())
        .filter(|c| ERRORFILE_CODES.contains(c))
        .ok_or("'status' expects a status code errorfile may replace")?;
    let load = |f: &str| crate::files::read_to_string(f).map_err(|e| format!("'{f}': {e}"));
    let mut r = weir_rules::action::parse_return(args, &load)?;
    r.status = status;
    resolve_section(st, &mut r)?;
    Ok(Some(r))
}

/// The status of an `http-error` line's words (0 when it has none).
pub(super) fn code_of(args: &[String]) -> u16 {
    args.iter()
        .position(|w| w == "status")
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// A whole raw response, as an error page.
type Page = Arc<[u8]>;

/// `http-error status <code> [content-type <type>] [string <s>|file <f>|
/// errorfile <f>|errorfiles <name>|default-errorfiles] [hdr <name>
/// <value>]…`: the response built once; `None` for haproxy's own page (a
/// section `sections` finds without one for the code).
pub(super) fn http_error(
    args: &[String],
    sections: &std::collections::HashMap<String, crate::model::ErrorPages>,
) -> Result<(u16, Option<Page>), String> {
    let mut code: Option<u16> = None;
    let mut ctype: Option<String> = None;
    let mut body: Option<Vec<u8>> = None;
    let mut raw: Option<Vec<u8>> = None;
    let mut hdrs: Vec<(String, String)> = Vec::new();
    let mut section: Option<String> = None;
    let mut default = false;
    let mut it = args.iter();
    while let Some(w) = it.next() {
        let mut val = || {
            it.next()
                .cloned()
                .ok_or_else(|| format!("'{w}' expects a value"))
        };
        match w.as_str() {
            "status" => {
                code = Some(
                    val()?
                        .parse::<u16>()
                        .ok()
                        .filter(|c| ERRORFILE_CODES.contains(c))
                        .ok_or("'status' expects a status code errorfile may replace")?,
                )
            }
            "content-type" => ctype = Some(val()?),
            "string" => body = Some(val()?.into_bytes()),
            "file" => body = Some(crate::files::read(&val()?).map_err(|e| e.to_string())?),
            "errorfile" => {
                let f = val()?;
                raw = Some(errorfile(&["503".into(), f])?.1.to_vec());
            }
            "default-errorfiles" => default = true,
            "hdr" => {
                let n = val()?;
                let v = val()?;
                hdrs.push((n, v));
            }
            "errorfiles" => section = Some(val()?),
            o @ ("lf-string" | "lf-file") => {
                return Err(format!("'http-error ... {o}' is not supported by weir yet"))
            }
            o => return Err(format!("unexpected '{o}'")),
        }
    }
    let code = code.ok_or("expects 'status <code>'")?;
    if let Some(name) = section {
        let pages = sections.get(&name).ok_or_else(|| {
            format!("'errorfiles {name}': no http-errors section '{name}' above this line (weir needs it defined before its use)")
        })?;
        return Ok((
            code,
            pages
                .iter()
                .find(|(c, _)| *c == code)
                .map(|(_, b)| b.clone()),
        ));
    }
    if let Some(r) = raw {
        return Ok((code, Some(r.into())));
    }
    if default && body.is_none() && hdrs.is_empty() {
        // haproxy's own page for the code.
        return Ok((code, None));
    }
    let body = body.unwrap_or_default();
    if !body.is_empty() && ctype.is_none() {
        return Err("a body needs a 'content-type'".into());
    }
    let mut out = format!(
        "HTTP/1.1 {code} {}\r\ncontent-length: {}\r\n",
        weir_proto::h1::status::generated_reason(code),
        body.len()
    );
    if let Some(t) = ctype {
        out.push_str(&format!("content-type: {t}\r\n"));
    }
    for (n, v) in hdrs {
        out.push_str(&format!("{n}: {v}\r\n"));
    }
    out.push_str("\r\n");
    let mut bytes = out.into_bytes();
    bytes.extend_from_slice(&body);
    Ok((code, Some(bytes.into())))
}

/// `max-keep-alive-queue <n>`: whatever the value, a keep-alive request
/// whose last server is full goes to another server, in weir as in
/// haproxy 2.6 (seen with and without the keyword): accepted with a note.
pub(super) fn keep_alive_queue(
    st: &mut super::State<'_>,
    args: &[String],
    loc: &crate::diag::Loc,
) -> Result<(), String> {
    let v = super::proxy::one(args, "an integer")?;
    v.parse::<i64>()
        .map_err(|_| format!("expects an integer, got '{v}'"))?;
    st.diags.push(
        crate::diag::Level::Notice,
        Some(loc),
        "'max-keep-alive-queue' accepted: a keep-alive request whose last server is full goes to another server, whatever the value",
    );
    Ok(())
}
