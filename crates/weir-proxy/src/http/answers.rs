//! The answers HTTP rules make in the server's place: the head of a
//! local answer, `return` (and `deny` with an answer) and `redirect`,
//! as haproxy 2.6 writes them.

use super::errors;
use weir_config::Proxy;
use weir_rules::{Body, Ctx, Redirect, RedirectKind, Return};

/// The head of an answer weir makes: the status with its generated
/// reason, the length, the content type and `extra` fields.
pub fn local_headers(
    status: u16,
    ctype: Option<&str>,
    len: usize,
    extra: &[(String, Vec<u8>)],
) -> Vec<u8> {
    let reason = weir_proto::h1::status::generated_reason(status);
    head_with_reason(status, reason, ctype, len, extra)
}

/// [`local_headers`] with its own reason phrase.
fn head_with_reason(
    status: u16,
    reason: &str,
    ctype: Option<&str>,
    len: usize,
    extra: &[(String, Vec<u8>)],
) -> Vec<u8> {
    let mut out = format!("HTTP/1.1 {status} {reason}\r\ncontent-length: {len}\r\n").into_bytes();
    if let Some(t) = ctype {
        out.extend_from_slice(format!("content-type: {t}\r\n").as_bytes());
    }
    for (n, v) in extra {
        out.extend_from_slice(n.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(v);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"\r\n");
    out
}

/// The answer of a `return` action.
pub fn return_response(r: &Return, px: &Proxy, ctx: &dyn Ctx) -> Vec<u8> {
    // A header that renders empty is left out, and so is the content
    // type of an empty body (as haproxy 2.6 answers).
    let hdrs: Vec<(String, Vec<u8>)> = r
        .headers
        .iter()
        .map(|(n, f)| (n.clone(), f.render(ctx)))
        .filter(|(_, v)| !v.is_empty())
        .collect();
    let body = match &r.body {
        Body::None => Vec::new(),
        Body::Static(b) => b.clone(),
        Body::Fmt(f) => f.render(ctx),
        // A section the configuration did not resolve: the proxy's page.
        Body::ErrorPage(_) | Body::Section(_) => return errors::reply_of(&[px], r.status, ctx),
        Body::Raw(b) => return b.clone(),
    };
    let ctype = r.content_type.as_deref().filter(|_| !body.is_empty());
    // The rule's fields first, then the length and the type, in
    // haproxy's order.
    let reason = weir_proto::h1::status::generated_reason(r.status);
    let mut out = format!("HTTP/1.1 {} {reason}\r\n", r.status).into_bytes();
    for (n, v) in &hdrs {
        out.extend_from_slice(n.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(v);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(format!("content-length: {}\r\n", body.len()).as_bytes());
    if let Some(t) = ctype {
        out.extend_from_slice(format!("content-type: {t}\r\n").as_bytes());
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(&body);
    out
}

/// The answer of a redirect; `None` when `ignore-empty` skips it.
pub fn redirect_response(r: &Redirect, ctx: &dyn Ctx) -> Option<Vec<u8>> {
    let to = String::from_utf8_lossy(&r.to.render(ctx)).into_owned();
    if r.ignore_empty && to.is_empty() {
        return None;
    }
    let uri = ctx.uri();
    let (path, query) = match uri.find('?') {
        Some(i) => (&uri[..i], &uri[i..]),
        None => (uri, ""),
    };
    let query = if r.drop_query { "" } else { query };
    let mut loc = match r.kind {
        RedirectKind::Location => to,
        RedirectKind::Prefix => {
            let base = if to == "/" { "" } else { to.as_str() };
            format!("{base}{path}{query}")
        }
        RedirectKind::Scheme => {
            let host = ctx
                .req_headers()
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case("host"))
                .map(|(_, v)| String::from_utf8_lossy(v).into_owned())
                .unwrap_or_default();
            format!("{to}://{host}{path}{query}")
        }
    };
    if r.append_slash && !loc.ends_with('/') && query.is_empty() {
        loc.push('/');
    }
    // (haproxy marks the temporary ones `no-cache`.)
    let mut hs = vec![("location".into(), loc.into_bytes())];
    if matches!(r.code, 302 | 303 | 307) {
        hs.push(("cache-control".into(), b"no-cache".to_vec()));
    }
    if let Some((c, clear)) = &r.cookie {
        let max_age = if *clear { " Max-Age=0;" } else { "" };
        hs.push((
            "set-cookie".into(),
            format!("{c}; path=/;{max_age}").into_bytes(),
        ));
    }
    // (A redirect's 302 is `Found`, where `return` says `Moved
    // Temporarily`.)
    let reason = match r.code {
        302 => "Found",
        c => weir_proto::h1::status::generated_reason(c),
    };
    Some(head_with_reason(r.code, reason, None, 0, &hs))
}
