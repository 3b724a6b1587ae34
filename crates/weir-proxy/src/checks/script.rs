//! Check scripts: the `tcp-check` rules of `option tcp-check`, the
//! `http-check` rules of `option httpchk`, and the protocol checks made of
//! such rules (`option redis-check`). Each rule runs in turn on one
//! connection (a `connect` rule opens another): `send` writes and forgets
//! what was read, `expect` reads until its pattern is decided, `set-var`
//! evaluates on what was read. Results and their info read as haproxy 2.6
//! writes them.

use super::ctx::{CheckCtx, Env};
use super::http::{self as h, Parsed, Reply, MAX_READ};
use super::proto::Verdict;
use super::{CheckResult, Dial};
use crate::conn::Conn;
use std::borrow::Cow;
use tokio::time::Instant;
use weir_config::{
    CheckCode, CheckConnect, CheckInfo, CheckProto, HttpSend, Proxy, TcpCheckRule, TcpExpect,
    TcpMatch,
};
use weir_rules::Ctx;

/// The rules a section's checks run, when they run a script.
pub(super) fn rules_of(px: &Proxy) -> Option<Cow<'_, [TcpCheckRule]>> {
    match px.options.check_proto.as_ref()? {
        CheckProto::Http => Some(Cow::Owned(weir_config::http_rules(&px.http_check.rules))),
        CheckProto::TcpCheck if !px.tcp_check.rules.is_empty() => {
            Some(Cow::Borrowed(&px.tcp_check.rules))
        }
        CheckProto::TcpCheck | CheckProto::External => None,
        CheckProto::Redis => Some(Cow::Owned(weir_config::redis_rules())),
        CheckProto::Smtp(hello) => Some(Cow::Owned(weir_config::smtp_rules(hello))),
        CheckProto::Pgsql(user) => Some(Cow::Owned(weir_config::pgsql_rules(user))),
        CheckProto::Mysql(login) => Some(Cow::Owned(weir_config::mysql_rules(login.as_ref()))),
        CheckProto::Ldap => Some(Cow::Owned(weir_config::ldap_rules())),
        CheckProto::SslHello => Some(Cow::Owned(weir_config::ssl_hello_rules())),
        CheckProto::Spop => Some(Cow::Owned(vec![
            TcpCheckRule::Send {
                data: weir_proto::spop::healthcheck_hello(),
                comment: None,
            },
            TcpCheckRule::Reply(weir_config::Reply::Spop),
        ])),
    }
}

/// A script's outcome before it becomes a [`CheckResult`]: haproxy's
/// short status, the code when the status carries one, the info.
struct Outcome {
    status: &'static str,
    code: Option<i64>,
    /// As read or written (escaped when told, as haproxy does).
    info: Vec<u8>,
    /// The info is an HTTP reason phrase: a passed check's log line
    /// leaves it out.
    quiet: bool,
}

impl Outcome {
    fn new(status: &'static str, info: impl Into<Vec<u8>>) -> Outcome {
        Outcome {
            status,
            code: None,
            info: info.into(),
            quiet: false,
        }
    }

    fn result(self, started: Instant) -> CheckResult {
        let (reason, ok) = long(self.status);
        // Statuses of an answer that was read carry its code.
        let code =
            matches!(self.status, "L7OK" | "L7OKC" | "L7STS").then(|| self.code.unwrap_or(0));
        let mut detail = code.map(|c| format!(", code: {c}")).unwrap_or_default();
        if !self.info.is_empty() {
            detail.push_str(&format!(", info: \"{}\"", escaped(&self.info)));
        }
        CheckResult {
            ok,
            reason: reason.into(),
            detail,
            duration: started.elapsed(),
            log_info: !self.quiet,
        }
    }
}

/// A short status's long form, and whether it passes.
fn long(status: &str) -> (&'static str, bool) {
    match status {
        "L7OK" => ("Layer7 check passed", true),
        "L7OKC" => ("Layer7 check conditionally passed", true),
        "L6OK" => ("Layer6 check passed", true),
        "L4OK" => ("Layer4 check passed", true),
        "L7STS" => ("Layer7 wrong status", false),
        "L7TOUT" => ("Layer7 timeout", false),
        "L6RSP" => ("Layer6 invalid response", false),
        "L6TOUT" => ("Layer6 timeout", false),
        "L4CON" => ("Layer4 connection problem", false),
        "L4TOUT" => ("Layer4 timeout", false),
        "SOCKERR" => ("Socket error", false),
        _ => ("Layer7 invalid response", false),
    }
}

/// The short status of a connection failure's long form.
fn short(reason: &str) -> &'static str {
    match reason {
        "Layer4 timeout" => "L4TOUT",
        "Layer6 timeout" => "L6TOUT",
        "Layer6 invalid response" => "L6RSP",
        "Socket error" => "SOCKERR",
        _ => "L4CON",
    }
}

/// The connection a script works on and what it read.
struct Session<'e> {
    conn: Option<Conn>,
    buf: Vec<u8>,
    closed: bool,
    tls: bool,
    deadline: Instant,
    read_timeout: std::time::Duration,
    /// A user's `tcp-check` rules (failures name their step).
    user: bool,
    /// `http-check` rules.
    http: bool,
    /// The connection speaks HTTP/2.
    h2: bool,
    /// The method of the request sent (a response to HEAD has no body).
    method: String,
    /// The response to that request, once read.
    reply: Option<Reply>,
    /// What a protocol's greeting said (MySQL's version).
    learnt: String,
    env: &'e Env,
}

impl Session<'_> {
    /// Reads what the server sends next into `buf` (up to [`MAX_READ`]);
    /// its end, an error or a full buffer closes the reading. False when
    /// the check's time ran out first.
    async fn fill(&mut self) -> bool {
        let at = self.buf.len();
        let Some(c) = self.conn.as_ref().filter(|_| at < MAX_READ) else {
            self.closed = true;
            return true;
        };
        self.buf.resize(MAX_READ, 0);
        let r = tokio::time::timeout_at(
            self.deadline,
            c.read(self.buf.get_mut(at..).unwrap_or_default()),
        )
        .await;
        let n = match &r {
            Ok(Ok(n)) => *n,
            _ => 0,
        };
        self.buf.truncate(at + n);
        match r {
            Ok(Ok(0) | Err(_)) => self.closed = true,
            Ok(Ok(_)) => {}
            Err(_) => return false,
        }
        true
    }

    /// What fetches and log-format strings see now.
    fn ctx(&self) -> CheckCtx<'_> {
        CheckCtx {
            env: self.env,
            reply: self.reply.as_ref(),
            payload: &self.buf,
        }
    }

    /// A new connection: nothing read yet.
    fn opened(&mut self, conn: Conn, tls: bool, h2: bool) {
        self.conn = Some(conn);
        self.buf.clear();
        self.closed = false;
        self.tls = tls;
        self.h2 = h2;
        self.reply = None;
        self.learnt.clear();
        self.deadline = Instant::now() + self.read_timeout;
    }

    /// The name failures give a script's rules.
    fn kind(&self) -> &'static str {
        if self.http {
            "http-check"
        } else {
            "tcp-check"
        }
    }
}

/// Runs `rules` against the server; `proto` says whose they are (a user's
/// `tcp-check` rules name their steps in failures).
pub(super) async fn run(
    dial: &Dial<'_>,
    rules: &[TcpCheckRule],
    proto: Option<&CheckProto>,
    started: Instant,
    env: &Env,
) -> CheckResult {
    let read_timeout = dial.px.timeouts.check.unwrap_or(dial.s.inter);
    let mut ss = Session {
        conn: None,
        buf: Vec::new(),
        closed: false,
        tls: false,
        deadline: Instant::now() + read_timeout,
        read_timeout,
        user: proto == Some(&CheckProto::TcpCheck),
        http: proto == Some(&CheckProto::Http),
        h2: false,
        method: String::new(),
        reply: None,
        learnt: String::new(),
        env,
    };
    // (Comments and variables may come before the first connection.)
    let first = rules.iter().find(|r| !r.is_aside());
    if !matches!(first, Some(TcpCheckRule::Connect(_))) {
        match dial.open(None, None, Some(dial.hello())).await {
            Ok(c) => ss.opened(c, dial.tls.is_some(), env.h2),
            Err(e) => {
                let info = match ss.user {
                    true => format!("{} at initial connection step of tcp-check", e.info),
                    false => e.info,
                };
                return Outcome::new(short(e.reason), info).result(started);
            }
        }
    }
    let mut last: Option<&TcpExpect> = None;
    for (i, rule) in rules.iter().enumerate() {
        let step = i + 1;
        let done = match rule {
            TcpCheckRule::Connect(c) => connect(&mut ss, dial, c, step).await,
            TcpCheckRule::Send { data, comment } => send(&mut ss, data, step, comment).await,
            TcpCheckRule::SendLf {
                fmt,
                binary,
                comment,
            } => {
                let text = fmt.render(&ss.ctx());
                let data = match binary {
                    true => weir_rules::matching::unhex(&String::from_utf8_lossy(&text))
                        .unwrap_or_default(),
                    false => text,
                };
                send(&mut ss, &data, step, comment).await
            }
            TcpCheckRule::HttpSend(s) => http_send(&mut ss, dial, s, step).await,
            TcpCheckRule::Expect(e) if ss.http => {
                last = Some(e);
                match http_expect(&mut ss, e).await {
                    Ok(Some(o)) => return o.result(started),
                    Ok(None) => Ok(()),
                    Err(o) => Err(o),
                }
            }
            TcpCheckRule::Expect(e) => {
                last = Some(e);
                expect(&mut ss, e, step).await
            }
            TcpCheckRule::Comment(_) => Ok(()),
            TcpCheckRule::SetVar(var, value) => {
                let ctx = ss.ctx();
                if let Some(v) = value.eval(&ctx) {
                    ctx.set_var(var, &v);
                }
                Ok(())
            }
            TcpCheckRule::UnsetVar(name) => {
                ss.env.vars.unset(name);
                Ok(())
            }
            TcpCheckRule::Reply(r) => match reply(&mut ss, *r).await {
                // A protocol's last answer decides the check.
                Ok(Some(o)) => return o.result(started),
                Ok(None) => Ok(()),
                Err(o) => Err(o),
            },
        };
        if let Err(o) = done {
            return o.result(started);
        }
    }
    passed(&ss, last).result(started)
}

/// The outcome of a script that ran to its end: its last expect rule's.
fn passed(ss: &Session<'_>, last: Option<&TcpExpect>) -> Outcome {
    let tag = if ss.user { "(tcp-check)" } else { "" };
    let ctx = ss.ctx();
    let Some(e) = last else {
        return Outcome::new(if ss.tls { "L6OK" } else { "L4OK" }, tag);
    };
    let code = e
        .status_code
        .as_ref()
        .and_then(|c| code_of(c, &ss.buf, &ctx));
    let (info, quiet) = match (&e.on_success, &ss.reply) {
        (Some(i), _) => (info_of(i, &ss.buf, &ctx), false),
        (None, Some(r)) if ss.http => (r.reason.clone().into_bytes(), true),
        (None, _) => (tag.into(), false),
    };
    Outcome {
        status: e.ok_status,
        code: code.or(ss.reply.as_ref().map(|r| i64::from(r.status))),
        info,
        quiet,
    }
}

/// `connect`: a new connection, on the rule's port and address.
async fn connect(
    ss: &mut Session<'_>,
    dial: &Dial<'_>,
    c: &CheckConnect,
    step: usize,
) -> Result<(), Outcome> {
    ss.conn = None;
    let hello = match (c.ssl, c.default) {
        (true, _) => Some(super::Hello {
            sni: c.sni.as_deref(),
            alpn: c.alpn.as_deref(),
        }),
        (false, true) => Some(dial.hello()),
        (false, false) => None,
    };
    let tls = hello.is_some() && dial.tls.is_some();
    let h2 = match c.proto.as_deref() {
        Some(p) => p == "h2",
        None => c.default && ss.env.h2,
    };
    // The rule's PROXY header and SOCKS4 proxy (with `default`, the
    // server's too).
    let dial = Dial {
        proxy: match (c.send_proxy, c.default) {
            (true, _) => Some(dial.proxy.unwrap_or(weir_config::SendProxy::V1)),
            (false, true) => dial.proxy,
            (false, false) => None,
        },
        socks: match (c.via_socks4, c.default) {
            (true, _) => dial.s.socks4,
            (false, true) => dial.socks,
            (false, false) => None,
        },
        ..*dial
    };
    match dial.open(c.port, c.addr, hello).await {
        Ok(conn) => {
            ss.opened(conn, tls, h2);
            Ok(())
        }
        Err(e) if ss.http => Err(Outcome::new(short(e.reason), e.info)),
        Err(e) => {
            let what = match c.port {
                Some(p) => format!("connect port {p}"),
                None => "connect".into(),
            };
            let info = format!("{} at step {step} of {} ({what})", e.info, ss.kind());
            Err(Outcome::new(
                short(e.reason),
                with_comment(info, &c.comment),
            ))
        }
    }
}

/// `http-check send`: the request goes out (over HTTP/2, the whole
/// exchange happens here).
async fn http_send(
    ss: &mut Session<'_>,
    dial: &Dial<'_>,
    s: &HttpSend,
    step: usize,
) -> Result<(), Outcome> {
    let req = h::request(s, &ss.ctx(), ss.env.state.as_deref());
    ss.method = req.meth.clone();
    ss.reply = None;
    if !ss.h2 {
        return send(ss, &h::h1_bytes(&req), step, &s.comment).await;
    }
    let Some(conn) = ss.conn.take() else {
        return Err(Outcome::new("L4CON", ""));
    };
    let authority = match dial.target {
        crate::state::ServerTarget::Inet { addr, .. } => addr.to_string(),
        crate::state::ServerTarget::Unix(_) => "localhost".into(),
    };
    match h::h2_exchange(conn, &req, &authority, ss.deadline).await {
        Ok(r) => {
            ss.reply = Some(r);
            Ok(())
        }
        Err(h::H2Error::Timeout) => Err(Outcome::new("L7TOUT", "")),
        Err(h::H2Error::Failed) => Err(Outcome::new("L7RSP", "")),
    }
}

/// Reads the response to the request sent, as far as `e` needs it.
async fn http_reply(ss: &mut Session<'_>, e: &TcpExpect) -> Result<(), Outcome> {
    let body = h::reads_body(&e.pattern);
    if ss.reply.is_some() && (ss.h2 || !body) {
        return Ok(());
    }
    loop {
        match h::parse_h1(&ss.buf, ss.closed, &ss.method, body) {
            Parsed::Done(r) => {
                ss.reply = Some(r);
                return Ok(());
            }
            Parsed::Bad => return Err(Outcome::new("L7RSP", "")),
            Parsed::More => {}
        }
        if !ss.fill().await {
            return Err(Outcome::new(e.tout_status, ""));
        }
    }
}

/// `http-check expect`: `Ok(Some(_))` ends the check at once (a 404 with
/// `disable-on-404`).
async fn http_expect(ss: &mut Session<'_>, e: &TcpExpect) -> Result<Option<Outcome>, Outcome> {
    http_reply(ss, e).await?;
    let Some(r) = ss.reply.as_ref() else {
        return Err(Outcome::new("L7RSP", ""));
    };
    if r.status == 404 && ss.env.running && ss.env.disable_404 {
        let mut o = Outcome::new("L7OKC", "");
        o.code = Some(404);
        return Ok(Some(o));
    }
    let ctx = ss.ctx();
    let hit = h::found(&e.pattern, r, &ctx);
    if hit != e.negate {
        return Ok(None);
    }
    let code = e
        .status_code
        .as_ref()
        .and_then(|c| code_of(c, &ss.buf, &ctx));
    let mut info = match (&e.on_error, h::reads_body(&e.pattern), e.negate) {
        (Some(i), _, _) => info_of(i, &ss.buf, &ctx),
        (None, false, _) => r.reason.clone().into_bytes(),
        (None, true, false) => b"HTTP content check did not match".to_vec(),
        (None, true, true) => b"HTTP check matched unwanted content".to_vec(),
    };
    if let (Some(c), None) = (&e.comment, &e.on_error) {
        info.extend_from_slice(format!(" comment: {c}").as_bytes());
    }
    Err(Outcome {
        status: e.error_status,
        code: code.or(Some(i64::from(r.status))),
        info,
        quiet: false,
    })
}

fn with_comment(info: String, comment: &Option<String>) -> String {
    match comment {
        Some(c) => format!("{info} comment: '{c}'"),
        None => info,
    }
}

/// `send`: what was read so far is forgotten, `data` written.
async fn send(
    ss: &mut Session<'_>,
    data: &[u8],
    step: usize,
    comment: &Option<String>,
) -> Result<(), Outcome> {
    ss.buf.clear();
    let Some(c) = &ss.conn else {
        return Err(Outcome::new(
            "L4CON",
            format!("at step {step} of {} (send)", ss.kind()),
        ));
    };
    match tokio::time::timeout_at(ss.deadline, c.send_all(data)).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => {
            let info = format!("{e} at step {step} of {} (send)", ss.kind());
            Err(Outcome::new("L4CON", with_comment(info, comment)))
        }
        Err(_) => {
            let info = format!(" at step {step} of {} (send)", ss.kind());
            Err(Outcome::new("L7TOUT", with_comment(info, comment)))
        }
    }
}

/// Whether `buf` holds what `m` looks for.
fn found(m: &TcpMatch, buf: &[u8], ctx: &dyn Ctx) -> bool {
    let re = |p: &weir_rules::matching::Pattern, b: &[u8]| {
        weir_rules::matching::matches(
            weir_rules::matching::Method::Reg,
            false,
            &weir_rules::Sample::Str(b.to_vec()),
            p,
        )
    };
    let has = |s: &[u8]| !s.is_empty() && buf.windows(s.len()).any(|w| w == s);
    match m {
        TcpMatch::String(s) | TcpMatch::Binary(s) => has(s),
        TcpMatch::RString(p) => re(p, buf),
        TcpMatch::RBinary(p) => {
            let hex: String = buf.iter().map(|b| format!("{b:02X}")).collect();
            re(p, hex.as_bytes())
        }
        TcpMatch::Lf(f, false) => has(&f.render(ctx)),
        TcpMatch::Lf(f, true) => {
            let text = f.render(ctx);
            has(&weir_rules::matching::unhex(&String::from_utf8_lossy(&text)).unwrap_or_default())
        }
        // (HTTP patterns are judged on a response.)
        TcpMatch::Status(_) | TcpMatch::RStatus(_) | TcpMatch::Hdr(_) => false,
    }
}

/// How a failure names the pattern: `'text'`, or its kind.
fn named(m: &TcpMatch) -> String {
    match m {
        TcpMatch::String(s) => format!("'{}'", String::from_utf8_lossy(s)),
        TcpMatch::RString(_) => "(regex)".into(),
        TcpMatch::Binary(_) => "(binary)".into(),
        TcpMatch::RBinary(_) => "(binary regex)".into(),
        TcpMatch::Lf(_, false) => "(log-format string)".into(),
        _ => "(binary log-format string)".into(),
    }
}

/// How a timeout names the rule.
fn described(m: &TcpMatch) -> String {
    match m {
        TcpMatch::String(s) => format!("expect string '{}'", String::from_utf8_lossy(s)),
        TcpMatch::RString(_) => "expect regex".into(),
        TcpMatch::Binary(_) => "expect binary".into(),
        TcpMatch::RBinary(_) => "expect binary regex".into(),
        TcpMatch::Lf(_, false) => "expect log-format string".into(),
        _ => "expect binary log-format string".into(),
    }
}

/// `expect`: reads until the rule is decided.
async fn expect(ss: &mut Session<'_>, e: &TcpExpect, step: usize) -> Result<(), Outcome> {
    let need = match e.min_recv {
        Some(n) => e.pattern.exact_len().map_or(n, |l| l.min(n)),
        None => 1,
    };
    loop {
        let have = ss.buf.len();
        // `min-recv 0`: whatever is there decides.
        let conclusive = ss.closed || have >= MAX_READ || e.min_recv == Some(0);
        if have >= need || ss.closed {
            if have == 0 && ss.closed {
                let info = format!("TCPCHK got an empty response at step {step}");
                return Err(failed(e, ss, info));
            }
            match (found(&e.pattern, &ss.buf, &ss.ctx()), e.negate) {
                (true, false) => return Ok(()),
                // Unwanted content could still come, unless all came or
                // `min-recv` bounds the rule.
                (false, true) if conclusive || e.min_recv.is_some() => return Ok(()),
                (false, true) => {}
                (true, true) => {
                    let info = format!(
                        "TCPCHK matched unwanted content {} at step {step}",
                        named(&e.pattern)
                    );
                    return Err(failed(e, ss, info));
                }
                // (A protocol check's mismatch is told without details.)
                (false, false) if conclusive && !ss.user => {
                    return Err(failed(e, ss, String::new()));
                }
                (false, false) if conclusive => {
                    let info = format!(
                        "TCPCHK did not match content {} at step {step}",
                        named(&e.pattern)
                    );
                    return Err(failed(e, ss, info));
                }
                (false, false) => {}
            }
        }
        if ss.fill().await {
            continue;
        }
        match ss.user {
            false => return Err(Outcome::new(e.tout_status, "")),
            true => {
                let info = format!(" at step {step} of tcp-check ({})", described(&e.pattern));
                let info = with_comment(info, &e.comment);
                return Err(Outcome::new(e.tout_status, info));
            }
        }
    }
}

/// An expect rule's failure: its error status, and its own info when it
/// has one.
fn failed(e: &TcpExpect, ss: &Session<'_>, info: String) -> Outcome {
    let ctx = ss.ctx();
    let info = match &e.on_error {
        Some(i) => info_of(i, &ss.buf, &ctx),
        None => with_comment(info, &e.comment).into_bytes(),
    };
    Outcome {
        status: e.error_status,
        code: e
            .status_code
            .as_ref()
            .and_then(|c| code_of(c, &ss.buf, &ctx)),
        info,
        quiet: false,
    }
}

/// A rule's message, from what the server sent when it says so.
fn info_of(i: &CheckInfo, buf: &[u8], ctx: &dyn Ctx) -> Vec<u8> {
    let line = |b: &[u8]| {
        let end = b.windows(2).position(|w| w == b"\r\n").unwrap_or(b.len());
        b.get(..end).unwrap_or_default().to_vec()
    };
    match i {
        CheckInfo::Text(t) => t.clone().into_bytes(),
        CheckInfo::Fmt(f) => f.render(ctx),
        CheckInfo::FirstLine => line(buf),
        CheckInfo::AfterCode => {
            let l = line(buf.get(4..).unwrap_or_default());
            let start = l.iter().position(|&c| c != b' ').unwrap_or(l.len());
            l.get(start..).unwrap_or_default().to_vec()
        }
    }
}

/// A check's info as haproxy logs it: control bytes, bytes past ASCII,
/// quotes and angle brackets as `<XX>`.
fn escaped(info: &[u8]) -> String {
    let mut out = String::with_capacity(info.len());
    for &b in info {
        match b {
            0x20..=0x7e if !matches!(b, b'"' | b'<' | b'>') => out.push(char::from(b)),
            _ => out.push_str(&format!("<{b:02X}>")),
        }
    }
    out
}

/// A rule's code, from what the server sent when it says so.
fn code_of(c: &CheckCode, buf: &[u8], ctx: &dyn Ctx) -> Option<i64> {
    match c {
        CheckCode::Fixed(n) => Some(*n),
        CheckCode::Expr(e) => e.eval(ctx)?.to_int(),
        CheckCode::Leading => std::str::from_utf8(buf.get(..3)?).ok()?.parse().ok(),
    }
}

/// A protocol check's answer: `Ok(None)` to go on, `Ok(Some(_))` when it
/// passed and ends the check, `Err(_)` when it failed.
async fn reply(ss: &mut Session<'_>, r: weir_config::Reply) -> Result<Option<Outcome>, Outcome> {
    loop {
        match super::proto::judge(r, &ss.buf, ss.closed, &ss.learnt) {
            Verdict::More if ss.closed => return Err(Outcome::new("L7RSP", "")),
            Verdict::More => {}
            Verdict::Next(v, took) => {
                ss.learnt = v;
                ss.buf.drain(..took.min(ss.buf.len()));
                return Ok(None);
            }
            Verdict::Done(status, code, info) => {
                let o = Outcome {
                    status,
                    code,
                    info: info.into_bytes(),
                    quiet: false,
                };
                return if long(status).1 { Ok(Some(o)) } else { Err(o) };
            }
        }
        if !ss.fill().await {
            return Err(Outcome::new("L7TOUT", ""));
        }
    }
}
