//! ACLs (`acl <name> <criterion> [flags] <patterns>`) and the conditions
//! that use them (`if|unless <acl> [!]<acl> || { anonymous acl } …`).

use crate::matching::{self, Method, Pattern};
use crate::payload::PayloadFetch;
use crate::sample::{Ctx, Expr, Fetch, Sample, SslFetch};
use std::sync::Arc;

/// Reads a file named by `-f` (or a map); the caller decides where from.
pub type Loader<'a> = &'a dyn Fn(&str) -> Result<String, String>;

/// One `acl` declaration.
#[derive(Debug, Clone)]
pub struct Acl {
    pub expr: Expr,
    pub method: Method,
    pub icase: bool,
    pub patterns: Vec<Pattern>,
    /// `-f` files: shared lines that change at run time (`add acl` …).
    pub files: Vec<std::sync::Arc<crate::patref::Compiled<Vec<Pattern>>>>,
}

/// Fetch and implied match method of ACL keywords with a suffix
/// (`path_beg`, `hdr_sub(host)` …).
fn derived(name: &str) -> Option<(&str, Method)> {
    const SUFFIXES: &[(&str, Method)] = &[
        ("_beg", Method::Beg),
        ("_end", Method::End),
        ("_sub", Method::Sub),
        ("_reg", Method::Reg),
        ("_dir", Method::Dir),
        ("_dom", Method::Dom),
        ("_len", Method::Len),
        ("_ip", Method::Ip),
        ("_str", Method::Str),
        ("_found", Method::Found),
    ];
    let base = name.split('(').next().unwrap_or(name);
    for (suf, m) in SUFFIXES {
        if let Some(b) = base.strip_suffix(suf) {
            if !b.is_empty() {
                return Some((b, *m));
            }
        }
    }
    None
}

/// The match method a fetch implies when none is given.
fn default_method(f: &Fetch) -> Method {
    match f {
        Fetch::ResPayload(k) => default_method(&Fetch::Payload(k.clone())),
        Fetch::Src | Fetch::Dst | Fetch::HdrIp { .. } => Method::Ip,
        Fetch::Hdrs(h) if h.gives_int() => Method::Int,
        Fetch::Live(l) if l.is_bool() => Method::Bool,
        Fetch::Internal(crate::internal::Internal::IsLocal { .. }) => Method::Bool,
        Fetch::BodySize => Method::Int,
        Fetch::Live(_) => Method::Int,
        Fetch::Stick(f) if crate::stick::is_bool(f.what) => Method::Bool,
        Fetch::Stick(_) => Method::Int,
        Fetch::Internal(
            crate::internal::Internal::FcHttpMajor
            | crate::internal::Internal::LastRuleLine
            | crate::internal::Internal::SoId
            | crate::internal::Internal::BcHttpMajor
            | crate::internal::Internal::Rand(_)
            | crate::internal::Internal::DateUs,
        ) => Method::Int,
        Fetch::Hdrs(crate::hdrfetch::HdrFetch::ResIp { .. } | crate::hdrfetch::HdrFetch::UrlIp) => {
            Method::Ip
        }
        Fetch::SrcPort
        | Fetch::DstPort
        | Fetch::HdrCnt(_)
        | Fetch::HdrVal(_)
        | Fetch::Status
        | Fetch::Nbsrv(_)
        | Fetch::BeConn(_)
        | Fetch::FeConn
        | Fetch::Ssl(SslFetch::CVerify)
        | Fetch::Payload(
            PayloadFetch::Len
            | PayloadFetch::SslHelloType
            | PayloadFetch::SslVer
            | PayloadFetch::SslStExt
            | PayloadFetch::RdpCookieCnt(_),
        )
        | Fetch::Int(_) => Method::Int,
        Fetch::Payload(PayloadFetch::Payload { .. } | PayloadFetch::PayloadLv { .. }) => {
            Method::Bin
        }
        Fetch::AlwaysTrue
        | Fetch::AlwaysFalse
        | Fetch::FirstReq
        | Fetch::HttpAuth(_)
        | Fetch::Ssl(SslFetch::Fc | SslFetch::FcHasSni | SslFetch::CUsed | SslFetch::FcIsResumed)
        | Fetch::Payload(
            PayloadFetch::ProtoHttp | PayloadFetch::WaitEnd | PayloadFetch::SslEcExt,
        ) => Method::Bool,
        _ => Method::Str,
    }
}

/// The match method for a criterion ending in converter `c`: its output
/// type's (haproxy picks it the same way).
fn conv_method(c: &crate::sample::Conv) -> Method {
    use crate::conv::More;
    use crate::sample::Conv;
    match c {
        Conv::Length | Conv::Hash(_) => Method::Int,
        Conv::Jwt(crate::jwt::JwtConv::Verify { .. }) => Method::Int,
        Conv::IpMask(..) => Method::Ip,
        Conv::Text(t) if t.gives_int() => Method::Int,
        Conv::Stick(c) if crate::stick::is_bool(c.what) => Method::Bool,
        Conv::Stick(_) => Method::Int,
        Conv::More(m) => match m {
            More::Arith(..)
            | More::Neg
            | More::Cpl
            | More::Xxh32(_)
            | More::Xxh64(_)
            | More::Xxh3(_)
            | More::Strcmp(_) => Method::Int,
            More::Protobuf(c) if c.ty.is_some() => Method::Int,
            More::Not
            | More::Bool
            | More::Odd
            | More::Even
            | More::SecureMemcmp(_)
            | More::FixIsValid
            | More::MqttIsValid => Method::Bool,
            _ => Method::Str,
        },
        _ => Method::Str,
    }
}

impl Acl {
    /// Parses the words after `acl <name>`: criterion, flags, patterns.
    pub fn parse(words: &[String], load: Loader<'_>) -> Result<Acl, String> {
        let crit = words.first().ok_or("missing ACL criterion")?;
        // A fetch of that name first (`wait_end`, `url_ip`), as haproxy
        // looks its ACL keywords up.
        let direct = Expr::parse(crit, load);
        let (expr, mut method) = match (direct, derived(crit.split(',').next().unwrap_or(crit))) {
            (Ok(e), _) => {
                let m = match e.convs.last() {
                    None => default_method(&e.fetch),
                    Some(c) => conv_method(c),
                };
                (e, m)
            }
            (Err(_), Some((base, m))) => {
                // `hdr_beg(host)` is `hdr(host)` matched with `beg`.
                let args = crit.find('(').map_or("", |i| &crit[i..]);
                (Expr::parse(&format!("{base}{args}"), load)?, m)
            }
            (Err(e), None) => return Err(e),
        };
        let mut icase = false;
        let mut words_left: Vec<String> = Vec::new();
        let mut files: Vec<String> = Vec::new();
        let mut i = 1;
        let mut flags_done = false;
        let mut explicit = false;
        while let Some(w) = words.get(i) {
            if !flags_done && w.starts_with('-') && w.len() > 1 {
                match w.as_str() {
                    "-i" => icase = true,
                    "-n" | "-u" | "-M" => {}
                    "-m" => {
                        i += 1;
                        explicit = true;
                        method = Method::parse(words.get(i).ok_or("'-m' expects a method")?)?;
                    }
                    "-f" => {
                        i += 1;
                        files.push(words.get(i).ok_or("'-f' expects a file")?.clone());
                    }
                    "--" => flags_done = true,
                    _ if method == Method::Int || method == Method::Len => {
                        flags_done = true;
                        continue;
                    }
                    o => return Err(format!("unknown ACL flag '{o}'")),
                }
                i += 1;
                continue;
            }
            flags_done = true;
            words_left.push(w.clone());
            i += 1;
        }
        if !explicit && expr.convs.is_empty() && matches!(expr.fetch, Fetch::Var(..)) {
            // A variable has no type until run time: haproxy wants the
            // method said.
            return Err("matching method must be specified first (using '-m') when using a sample fetch of this type ('var')".into());
        }
        let mut patterns = Vec::new();
        let mut it = words_left.iter().peekable();
        while let Some(w) = it.next() {
            if matches!(method, Method::Int | Method::Len)
                && matches!(w.as_str(), "eq" | "ge" | "gt" | "le" | "lt")
            {
                let n = it
                    .next()
                    .ok_or_else(|| format!("operator '{w}' expects a value"))?;
                patterns.push(matching::op_pattern(w, n)?);
                continue;
            }
            patterns.push(matching::compile(method, w, icase)?);
        }
        let mut compiled = Vec::new();
        for f in files {
            let text = load(&f)?;
            let pref = crate::patref::PatRef::intern(&f, false, &text);
            for e in pref.entries() {
                matching::compile(method, &e.key, icase)?;
            }
            compiled.push(std::sync::Arc::new(crate::patref::Compiled::new(
                pref,
                method,
                icase,
                crate::patref::build_acl,
            )));
        }
        Ok(Acl {
            expr,
            method,
            icase,
            patterns,
            files: compiled,
        })
    }

    /// Whether the ACL matches this request.
    pub fn eval(&self, ctx: &dyn Ctx) -> bool {
        match self.expr.eval_one(ctx) {
            Some(v) => self.matches_any(v.as_slice()),
            None => self.matches_any(&self.expr.eval_all(ctx)),
        }
    }

    /// Whether `values` (the ACL's fetch, converted) match it.
    fn matches_any(&self, values: &[Sample]) -> bool {
        match self.method {
            Method::Found => !values.is_empty(),
            Method::Bool => values.iter().any(|v| match v {
                Sample::Bool(b) => *b,
                v => v.to_int().is_some_and(|i| i != 0),
            }),
            m => values.iter().any(|v| {
                self.patterns
                    .iter()
                    .any(|p| matching::matches(m, self.icase, v, p))
                    || self.files.iter().any(|f| {
                        f.with(|ps| ps.iter().any(|p| matching::matches(m, self.icase, v, p)))
                    })
            }),
        }
    }
}

/// One term of a condition: a named ACL (all its declarations, OR'ed) or
/// an anonymous one, possibly negated.
#[derive(Debug, Clone)]
pub struct Term {
    pub negate: bool,
    pub acls: Arc<[Acl]>,
    pub name: String,
}

/// A condition's verdict on a payload that may still grow: `Miss` when a
/// fetch could answer otherwise with more data (HAProxy's ACL_TEST_MISS),
/// so the rule waits for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tri {
    Pass,
    Fail,
    Miss,
}

impl Tri {
    fn not(self) -> Tri {
        match self {
            Tri::Pass => Tri::Fail,
            Tri::Fail => Tri::Pass,
            Tri::Miss => Tri::Miss,
        }
    }
}

/// `if`/`unless` followed by AND groups joined by `||`.
#[derive(Debug, Clone)]
pub struct Cond {
    pub unless: bool,
    pub groups: Vec<Vec<Term>>,
}

/// The ACLs HAProxy predefines.
fn predefined(name: &str) -> Option<Vec<String>> {
    let w = |s: &str| Some(s.split(' ').map(str::to_string).collect());
    match name {
        "TRUE" => w("always_true"),
        "FALSE" => w("always_false"),
        "HTTP" => w("req.proto_http"),
        "REQ_CONTENT" => w("req.len gt 0"),
        "WAIT_END" => w("wait_end"),
        "RDP_COOKIE" => w("req.rdp_cookie_cnt gt 0"),
        "HTTP_1.0" => w("req.ver 1.0"),
        "HTTP_1.1" => w("req.ver 1.1"),
        "HTTP_URL_ABS" => w("url_reg ^[^/:]*://"),
        "HTTP_URL_SLASH" => w("url_beg /"),
        "HTTP_URL_STAR" => w("url *"),
        "HTTP_CONTENT" => w("hdr_val(content-length) gt 0"),
        "LOCALHOST" => w("src 127.0.0.1/8 ::1"),
        "METH_CONNECT" => w("method CONNECT"),
        "METH_DELETE" => w("method DELETE"),
        "METH_GET" => w("method GET HEAD"),
        "METH_HEAD" => w("method HEAD"),
        "METH_OPTIONS" => w("method OPTIONS"),
        "METH_POST" => w("method POST"),
        "METH_PUT" => w("method PUT"),
        "METH_TRACE" => w("method TRACE"),
        _ => None,
    }
}

impl Cond {
    /// Parses `if|unless <terms>`; `lookup` resolves ACL names declared in
    /// the section.
    pub fn parse(
        words: &[String],
        lookup: &dyn Fn(&str) -> Option<Arc<[Acl]>>,
        load: Loader<'_>,
    ) -> Result<Cond, String> {
        let unless = match words.first().map(String::as_str) {
            Some("if") => false,
            Some("unless") => true,
            Some(o) => return Err(format!("expects 'if' or 'unless', got '{o}'")),
            None => return Err("missing condition".into()),
        };
        let mut groups: Vec<Vec<Term>> = vec![Vec::new()];
        let mut i = 1;
        if words.len() < 2 {
            let keyword = if unless { "unless" } else { "if" };
            return Err(format!("missing condition after '{keyword}'"));
        }
        while let Some(w) = words.get(i).map(String::as_str) {
            if w == "||" || w == "or" {
                if groups.last().is_some_and(Vec::is_empty) {
                    return Err("'||' without a condition before it".into());
                }
                groups.push(Vec::new());
                i += 1;
                continue;
            }
            let (negate, w) = match w.strip_prefix('!') {
                Some("") => {
                    i += 1;
                    (
                        true,
                        words
                            .get(i)
                            .map(String::as_str)
                            .ok_or("'!' at the end of a condition")?,
                    )
                }
                Some(rest) => (true, rest),
                None => (false, w),
            };
            let term = if w == "{" {
                let rest = words.get(i..).unwrap_or_default();
                let end = rest
                    .iter()
                    .position(|x| x == "}")
                    .ok_or("missing '}' closing an anonymous ACL")?;
                let inner = rest.get(1..end).unwrap_or_default();
                i += end;
                let acl = Acl::parse(inner, load)?;
                Term {
                    negate,
                    acls: Arc::from(vec![acl]),
                    name: format!("{{ {} }}", inner.join(" ")),
                }
            } else if let Some(acls) = lookup(w) {
                Term {
                    negate,
                    acls,
                    name: w.to_string(),
                }
            } else if let Some(def) = predefined(w) {
                Term {
                    negate,
                    acls: Arc::from(vec![Acl::parse(&def, load)?]),
                    name: w.to_string(),
                }
            } else {
                return Err(format!("no such ACL : '{w}'"));
            };
            if let Some(g) = groups.last_mut() {
                g.push(term);
            }
            i += 1;
        }
        if groups.iter().any(Vec::is_empty) {
            return Err("empty condition around '||'".into());
        }
        Ok(Cond { unless, groups })
    }

    /// Evaluates the condition on data that may grow: a term that did not
    /// match while a fetch wanted more is a miss; AND fails on any
    /// failure, OR passes on any pass, a miss otherwise.
    pub fn eval_tri(&self, ctx: &dyn Ctx) -> Tri {
        let term = |t: &Term| {
            let mut missed = false;
            for a in t.acls.iter() {
                if let Some(m) = ctx.more() {
                    m.store(false, std::sync::atomic::Ordering::Relaxed);
                }
                if a.eval(ctx) {
                    return Tri::Pass;
                }
                missed |= ctx
                    .more()
                    .is_some_and(|m| m.load(std::sync::atomic::Ordering::Relaxed));
            }
            if missed {
                Tri::Miss
            } else {
                Tri::Fail
            }
        };
        let group = |g: &Vec<Term>| {
            let mut r = Tri::Pass;
            for t in g {
                let v = term(t);
                let v = if t.negate { v.not() } else { v };
                match v {
                    Tri::Fail => return Tri::Fail,
                    Tri::Miss => r = Tri::Miss,
                    Tri::Pass => {}
                }
            }
            r
        };
        let mut r = Tri::Fail;
        for g in &self.groups {
            match group(g) {
                Tri::Pass => {
                    r = Tri::Pass;
                    break;
                }
                Tri::Miss => r = Tri::Miss,
                Tri::Fail => {}
            }
        }
        if self.unless {
            r.not()
        } else {
            r
        }
    }

    /// Evaluates the condition.
    pub fn eval(&self, ctx: &dyn Ctx) -> bool {
        let r = self.groups.iter().any(|g| {
            g.iter()
                .all(|t| t.acls.iter().any(|a| a.eval(ctx)) != t.negate)
        });
        r != self.unless
    }
}

/// Splits `words` at the first `if`/`unless`: what comes before, and the
/// condition words (empty without one).
pub fn split_cond(words: &[String]) -> (&[String], &[String]) {
    match words.iter().position(|w| w == "if" || w == "unless") {
        Some(i) => words.split_at_checked(i).unwrap_or((words, &[])),
        None => (words, &[]),
    }
}
