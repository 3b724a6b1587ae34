//! FastCGI towards `proto fcgi` servers (manual §10): the backend's
//! application ([`App`]), the parameters each request is sent with
//! ([`params`], as haproxy 2.6 sets them), and the connection that carries
//! it ([`up::FcgiUp`]).

pub mod up;

use crate::log::Logger;
use std::net::SocketAddr;
use weir_config::FcgiApp;
use weir_proto::fcgi::push_pair;
use weir_proto::h1::{Framing, RequestHead};

/// A backend's `fcgi-app`, with the logger of its `log-stderr` targets.
pub struct App {
    pub conf: FcgiApp,
    pub stderr: Logger,
}

/// The request as the application gets it: its `FCGI_PARAMS` stream,
/// encoded.
#[derive(Debug)]
pub struct Request {
    pub params: Vec<u8>,
    /// The method is HEAD: the response has no body.
    pub head: bool,
    /// The client waits for `100 Continue` before its body: the
    /// application never sends one, so it is answered at once, as haproxy
    /// does.
    pub go_ahead: bool,
}

/// Why a request cannot go to the application, as haproxy refuses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// `path-info` and a decoded path holding a newline or a NUL: 500
    /// (`IH`).
    BadPath,
    /// A chunked body larger than the buffer, whose length cannot be
    /// told: 400 (`PH`).
    NoLength,
}

impl Refusal {
    /// The status and the termination state haproxy logs.
    pub fn answer(self) -> (u16, crate::term::Term) {
        use crate::term::{Cause, State, Term};
        match self {
            Refusal::BadPath => (500, Term::new(Cause::Internal, State::Headers)),
            Refusal::NoLength => (400, Term::new(Cause::Proxy, State::Headers)),
        }
    }
}

/// What the exchange knows of the request beyond its head.
pub struct Facts {
    pub src: Option<SocketAddr>,
    pub dst: Option<SocketAddr>,
    /// The client came over TLS (`HTTPS=on`).
    pub https: bool,
    /// The body's size when it is known (`CONTENT_LENGTH`).
    pub body_len: Option<u64>,
}

/// Request fields never passed as `HTTP_*` (unless `pass-header` names
/// them): the credentials, the hop-by-hop fields, `Expect` (answered by
/// the proxy), and the two that become `CONTENT_LENGTH` and
/// `CONTENT_TYPE`.
const HIDDEN: &[&str] = &[
    "authorization",
    "proxy-authorization",
    "connection",
    "keep-alive",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "expect",
    "content-length",
    "content-type",
];

/// The request for `app`: its parameters, and whether it is a HEAD.
pub fn request(
    app: &FcgiApp,
    req: &RequestHead,
    facts: &Facts,
    ctx: &dyn weir_rules::Ctx,
) -> Result<Request, Refusal> {
    if facts.body_len.is_none() {
        return Err(Refusal::NoLength);
    }
    Ok(Request {
        params: params(app, req, facts, ctx)?,
        head: req.method == "HEAD",
        go_ahead: req.headers.iter().any(|h| {
            h.name().eq_ignore_ascii_case("expect")
                && h.value().eq_ignore_ascii_case(b"100-continue")
        }),
    })
}

/// The body's size when it is known: its `content-length`, or a chunked
/// body whose last chunk is among `body` (the bytes after the head, which
/// haproxy waits for).
pub fn body_len(framing: Framing, body: &[u8]) -> Option<u64> {
    match framing {
        Framing::ContentLength(n) => Some(n),
        Framing::Chunked => match weir_proto::h1::body_prefix(framing, body) {
            Ok((b, true)) => Some(b.len() as u64),
            _ => None,
        },
        _ => Some(0),
    }
}

/// The parameters of `req` for `app`: every request field as `HTTP_<NAME>`,
/// the CGI/1.1 variables (manual §10.2), then the `set-param` rules, which
/// replace a default of the same name.
pub fn params(
    app: &FcgiApp,
    req: &RequestHead,
    facts: &Facts,
    ctx: &dyn weir_rules::Ctx,
) -> Result<Vec<u8>, Refusal> {
    let mut out = Vec::with_capacity(1024);
    let passed = |name: &str| {
        app.pass_headers
            .iter()
            .any(|(n, c)| n.eq_ignore_ascii_case(name) && c.as_ref().is_none_or(|c| c.eval(ctx)))
    };
    for h in &req.headers {
        let name = h.name();
        if HIDDEN.iter().any(|x| x.eq_ignore_ascii_case(name)) && !passed(name) {
            continue;
        }
        let mut p = b"HTTP_".to_vec();
        p.extend(name.bytes().map(|b| match b {
            b'-' => b'_',
            b => b.to_ascii_uppercase(),
        }));
        push_pair(&mut out, &p, h.value());
    }
    let mut vars = defaults(app, req, facts)?;
    for sp in &app.set_params {
        if sp.cond.as_ref().is_some_and(|c| !c.eval(ctx)) {
            continue;
        }
        let v = sp.value.render(ctx);
        if v.is_empty() {
            continue;
        }
        match vars.iter_mut().find(|(n, _)| *n == sp.name) {
            Some((_, old)) => *old = v,
            None => vars.push((sp.name.clone(), v)),
        }
    }
    derive_paths(app, &mut vars);
    for (n, v) in &vars {
        push_pair(&mut out, n.as_bytes(), v);
    }
    Ok(out)
}

/// The CGI/1.1 variables haproxy sets (`SCRIPT_FILENAME` and
/// `PATH_TRANSLATED` come last, from the final names: [`derive_paths`]).
fn defaults(
    app: &FcgiApp,
    req: &RequestHead,
    facts: &Facts,
) -> Result<Vec<(String, Vec<u8>)>, Refusal> {
    let mut v: Vec<(String, Vec<u8>)> = Vec::with_capacity(20);
    let mut set = |n: &str, val: &[u8]| v.push((n.to_string(), val.to_vec()));
    let header = |n: &str| {
        req.headers
            .iter()
            .find(|h| h.name().eq_ignore_ascii_case(n))
            .map(|h| h.value())
    };
    if let Some(n) = facts.body_len.filter(|&n| n > 0) {
        set("CONTENT_LENGTH", n.to_string().as_bytes());
        if let Some(t) = header("content-type") {
            set("CONTENT_TYPE", t);
        }
    }
    if let Some((user, _)) = header("authorization").and_then(weir_rules::auth::basic_credentials) {
        set("AUTH_TYPE", b"Basic");
        set("REMOTE_USER", user.as_bytes());
    }
    let docroot = app.docroot.as_deref().unwrap_or_default();
    set("GATEWAY_INTERFACE", b"CGI/1.1");
    set("DOCUMENT_ROOT", docroot.as_bytes());
    let (path, query) = match req.uri.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (req.uri.as_str(), None),
    };
    let (script, info) = script_and_info(app, path)?;
    set("SCRIPT_NAME", &script);
    if let Some(i) = &info {
        set("PATH_INFO", i);
    }
    set("REQUEST_URI", req.uri.as_bytes());
    set("REQUEST_METHOD", req.method.as_bytes());
    if let Some(q) = query.filter(|q| !q.is_empty()) {
        set("QUERY_STRING", q.as_bytes());
    }
    match (header("host"), facts.dst) {
        (Some(h), _) => set("SERVER_NAME", h),
        (None, Some(d)) => set("SERVER_NAME", d.ip().to_string().as_bytes()),
        (None, None) => {}
    }
    if let Some(d) = facts.dst {
        set("SERVER_PORT", d.port().to_string().as_bytes());
    }
    let proto: &[u8] = match req.minor {
        0 => b"HTTP/1.0",
        2 => b"HTTP/2.0",
        _ => b"HTTP/1.1",
    };
    set("SERVER_PROTOCOL", proto);
    if let Some(s) = facts.src {
        set("REMOTE_ADDR", s.ip().to_string().as_bytes());
        set("REMOTE_PORT", s.port().to_string().as_bytes());
    }
    if facts.body_len == Some(0) {
        set("CONTENT_LENGTH", b"0");
    }
    set(
        "SERVER_SOFTWARE",
        concat!("weir/", env!("CARGO_PKG_VERSION")).as_bytes(),
    );
    if facts.https {
        set("HTTPS", b"on");
    }
    Ok(v)
}

/// `SCRIPT_FILENAME` (the document root and the script's name) and, with a
/// path info, `PATH_TRANSLATED`, from the names the `set-param` rules
/// left.
fn derive_paths(app: &FcgiApp, vars: &mut Vec<(String, Vec<u8>)>) {
    let get = |vars: &[(String, Vec<u8>)], n: &str| {
        vars.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone())
    };
    let root = get(vars, "DOCUMENT_ROOT")
        .unwrap_or_else(|| app.docroot.clone().unwrap_or_default().into_bytes());
    let joined = |tail: Vec<u8>| [root.clone(), tail].concat();
    let derived = [
        ("SCRIPT_FILENAME", get(vars, "SCRIPT_NAME").map(joined)),
        ("PATH_TRANSLATED", get(vars, "PATH_INFO").map(joined)),
    ];
    for (name, value) in derived {
        let Some(value) = value else { continue };
        if vars.iter().any(|(k, _)| k == name) {
            continue;
        }
        // Before `CONTENT_LENGTH=0` and the server's name, as haproxy
        // orders them (the order means nothing to an application).
        let at = vars
            .iter()
            .position(|(k, _)| k == "SERVER_SOFTWARE")
            .unwrap_or(vars.len());
        vars.insert(at, (name.to_string(), value));
    }
}

/// The script's name and the path info: the decoded path split by
/// `path-info` (its first and second captures), else the whole path with
/// `index` after a final `/`.
fn script_and_info(app: &FcgiApp, path: &str) -> Result<(Vec<u8>, Option<Vec<u8>>), Refusal> {
    let decoded =
        weir_rules::url_dec(path.as_bytes(), false).unwrap_or_else(|| path.as_bytes().to_vec());
    let indexed = |mut p: Vec<u8>| {
        if let (Some(b'/'), Some(i)) = (p.last(), &app.index) {
            p.extend_from_slice(i.as_bytes());
        }
        p
    };
    let Some(re) = &app.path_info else {
        return Ok((indexed(decoded), None));
    };
    if decoded.iter().any(|&b| b == b'\n' || b == 0) {
        return Err(Refusal::BadPath);
    }
    let Some(caps) = re.captures(&decoded) else {
        return Ok((indexed(decoded), None));
    };
    let script = caps.get(1).map_or(&decoded[..], |m| m.as_bytes()).to_vec();
    let info = caps
        .get(2)
        .map(|m| m.as_bytes().to_vec())
        .filter(|i| !i.is_empty());
    Ok((indexed(script), info))
}
