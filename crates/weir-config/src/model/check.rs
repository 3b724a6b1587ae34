//! Health-check scripts: `option tcp-check` with its `tcp-check` rules,
//! `option httpchk` with its `http-check` rules, and the protocol checks
//! weir builds from such rules (`option redis-check`).

use weir_rules::matching::Pattern;
use weir_rules::vars::{VarSet, VarValue};
use weir_rules::{Expr, Fmt};

/// The check a section's servers run (the last `option …-check` or
/// `option httpchk` line of the section wins).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckProto {
    /// `option httpchk`: the section's `http-check` rules, with the
    /// request of the option's line.
    Http,
    /// `option tcp-check`: the section's `tcp-check` rules (none: a
    /// connection check).
    TcpCheck,
    /// `option redis-check`: `PING`, answered by `+PONG`.
    Redis,
    /// `option smtpchk [<hello> <domain>]`: the greeting, the hello line
    /// given (`HELO localhost` by default), `QUIT`, each answered by 2xx.
    Smtp(String),
    /// `option pgsql-check user <name>`: a StartupMessage, answered by an
    /// authentication request.
    Pgsql(String),
    /// `option mysql-check [user <name> [post-41|pre-41]]`: the server's
    /// greeting, then (with a user) a login and `QUIT`, answered by OK.
    Mysql(Option<(String, bool)>),
    /// `option ldap-check`: an anonymous bind, answered by success.
    Ldap,
    /// `option ssl-hello-chk`: a TLS ClientHello, answered by a handshake
    /// or an alert record.
    SslHello,
    /// `option spop-check`: SPOP's HAPROXY-HELLO with `healthcheck`,
    /// answered by a valid AGENT-HELLO.
    Spop,
    /// `option external-check`: the `external-check command` run, its
    /// exit status the verdict.
    External,
}

/// `external-check command|path`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExternalCheck {
    pub command: Option<String>,
    /// The PATH the command gets (empty when unset, as in haproxy).
    pub path: Option<String>,
}

/// The `tcp-check` (or `http-check`) rules of a section.
#[derive(Debug, Clone, Default)]
pub struct TcpCheckRules {
    /// Written in this section: its first `tcp-check` (`http-check`) line
    /// drops the rules `defaults` gave.
    pub own: bool,
    pub rules: Vec<TcpCheckRule>,
    /// A `tcp-check comment` waiting for its rule.
    pub pending_comment: Option<String>,
}

/// One step of a check script.
#[derive(Debug, Clone)]
pub enum TcpCheckRule {
    Connect(CheckConnect),
    /// `send` and `send-binary`: the bytes.
    Send {
        data: Vec<u8>,
        comment: Option<String>,
    },
    /// `send-lf` and `send-binary-lf` (`binary`: the text rendered is
    /// hexadecimal).
    SendLf {
        fmt: Fmt,
        binary: bool,
        comment: Option<String>,
    },
    /// `tcp-check expect` and `http-check expect`.
    Expect(TcpExpect),
    /// `tcp-check comment`: a step of its own, whose message the next
    /// rule reports when it fails.
    Comment(String),
    /// A protocol check's answer, judged by its protocol's rules.
    Reply(Reply),
    /// `set-var(…)` and `set-var-fmt(…)`.
    SetVar(VarSet, VarValue),
    UnsetVar(String),
    /// `http-check send` (or `option httpchk`'s request).
    HttpSend(Box<HttpSend>),
}

impl TcpCheckRule {
    /// Comments and variables: steps that neither talk to the server nor
    /// order the script.
    pub fn is_aside(&self) -> bool {
        matches!(
            self,
            TcpCheckRule::Comment(_) | TcpCheckRule::SetVar(..) | TcpCheckRule::UnsetVar(_)
        )
    }
}

/// A text of a rule, plain or log-format (`uri` or `uri-lf`).
#[derive(Debug, Clone)]
pub enum CheckText {
    Plain(String),
    Fmt(Fmt),
}

/// `http-check send [meth M] [uri U|uri-lf F] [ver V] [hdr N F]…
/// [body S|body-lf F] [comment C]`: what is not given falls back to
/// `OPTIONS / HTTP/1.0` and no body.
#[derive(Debug, Clone, Default)]
pub struct HttpSend {
    pub meth: Option<String>,
    pub uri: Option<CheckText>,
    pub ver: Option<String>,
    /// Names as written; values are log-format strings.
    pub headers: Vec<(String, Fmt)>,
    pub body: Option<CheckText>,
    pub comment: Option<String>,
    /// `option httpchk`'s request: the first `http-check send` fills it in
    /// and takes its place.
    pub implicit: bool,
}

impl HttpSend {
    /// Overwrites what `later` gives (an `http-check send` over `option
    /// httpchk`'s request).
    pub fn merge(&mut self, later: HttpSend) {
        self.meth = later.meth.or(self.meth.take());
        self.uri = later.uri.or(self.uri.take());
        self.ver = later.ver.or(self.ver.take());
        if !later.headers.is_empty() {
            self.headers = later.headers;
        }
        self.body = later.body.or(self.body.take());
        self.comment = later.comment.or(self.comment.take());
        self.implicit = false;
    }
}

/// The answers protocol checks judge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reply {
    /// An authentication request (or an error) to a StartupMessage.
    Pgsql,
    /// The greeting; `last`: the check ends with it.
    MysqlGreeting { last: bool },
    /// The answer to a login.
    MysqlLogin,
    /// A BindResponse to an anonymous bind.
    Ldap,
    /// An AGENT-HELLO to a health check's HAPROXY-HELLO.
    Spop,
}

/// `tcp-check connect [default] [port <p>] [addr <ip>] [linger]`.
#[derive(Debug, Clone, Default)]
pub struct CheckConnect {
    /// `default`: the server's check settings (`check-ssl`) apply.
    pub default: bool,
    /// `ssl`: over TLS (the server's TLS settings), with `sni` and
    /// `alpn` when given.
    pub ssl: bool,
    pub sni: Option<String>,
    pub alpn: Option<Vec<String>>,
    pub port: Option<u16>,
    pub addr: Option<std::net::IpAddr>,
    pub comment: Option<String>,
    /// `proto h1|h2`: the HTTP version of an `http-check` connection.
    pub proto: Option<String>,
    /// `send-proxy`: a PROXY header first.
    pub send_proxy: bool,
    /// `via-socks4`: through the server's `socks4` proxy.
    pub via_socks4: bool,
}

/// A check status a rule may set (`L7OK`, `L4TOUT`, …).
pub type CheckStatus = &'static str;

/// `tcp-check expect …`.
#[derive(Debug, Clone)]
pub struct TcpExpect {
    pub negate: bool,
    /// `min-recv`: bytes needed before the rule is judged (`None`: any).
    pub min_recv: Option<usize>,
    pub comment: Option<String>,
    pub ok_status: CheckStatus,
    pub error_status: CheckStatus,
    pub tout_status: CheckStatus,
    pub on_success: Option<CheckInfo>,
    pub on_error: Option<CheckInfo>,
    /// `status-code`: the code reported.
    pub status_code: Option<CheckCode>,
    pub pattern: TcpMatch,
}

/// What a failed expect rule reports as its info.
#[derive(Debug, Clone, PartialEq)]
pub enum CheckInfo {
    Text(String),
    /// A log-format string (`on-success`, `on-error`).
    Fmt(Fmt),
    /// The first line of what the server sent (redis-check's).
    FirstLine,
    /// The first line after its 3-digit code (smtpchk's).
    AfterCode,
}

/// The code a rule reports.
#[derive(Debug, Clone, PartialEq)]
pub enum CheckCode {
    /// `status-code int(<n>)`.
    Fixed(i64),
    /// `status-code <expr>`: another expression, evaluated on the answer.
    Expr(Expr),
    /// The number the server's answer starts with (smtpchk's).
    Leading,
}

/// What an expect rule looks for in what the server sent.
#[derive(Debug, Clone)]
pub enum TcpMatch {
    String(Vec<u8>),
    RString(weir_rules::matching::Pattern),
    Binary(Vec<u8>),
    /// A regex over the bytes in upper-case hex.
    RBinary(weir_rules::matching::Pattern),
    /// `string-lf`, `binary-lf` (`true`): rendered when judged.
    Lf(Fmt, bool),
    /// `http-check expect status <code|a-b>[,…]`.
    Status(Vec<(u16, u16)>),
    RStatus(Pattern),
    /// `http-check expect hdr|fhdr …`.
    Hdr(Box<HdrMatch>),
}

/// `hdr|fhdr name[-lf] [-m <meth>] <name> [value[-lf] [-m <meth>] <value>]`.
#[derive(Debug, Clone)]
pub struct HdrMatch {
    /// `fhdr`: the whole value, commas included.
    pub full: bool,
    pub name: HdrPat,
    pub value: Option<HdrPat>,
}

/// One side of a header match: how it compares, and to what.
#[derive(Debug, Clone)]
pub struct HdrPat {
    pub how: HdrHow,
    pub text: CheckText,
    /// `-m reg`'s compiled regex.
    pub re: Option<Pattern>,
}

/// The matching methods of `hdr` and `fhdr`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HdrHow {
    Str,
    Beg,
    End,
    Sub,
    Reg,
}

impl TcpMatch {
    /// The status a failed match sets by default: a status or a header
    /// that does not match is a wrong status, other content an invalid
    /// response.
    pub fn error_status(&self) -> CheckStatus {
        match self {
            TcpMatch::Status(_) | TcpMatch::RStatus(_) | TcpMatch::Hdr(_) => "L7STS",
            _ => "L7RSP",
        }
    }

    /// Bytes an exact pattern needs (regexes: none).
    pub fn exact_len(&self) -> Option<usize> {
        match self {
            TcpMatch::String(b) | TcpMatch::Binary(b) => Some(b.len()),
            _ => None,
        }
    }
}

impl TcpExpect {
    /// An expect rule with haproxy's default statuses.
    pub fn new(pattern: TcpMatch) -> TcpExpect {
        TcpExpect {
            negate: false,
            min_recv: None,
            comment: None,
            ok_status: "L7OK",
            error_status: pattern.error_status(),
            tout_status: "L7TOUT",
            on_success: None,
            on_error: None,
            status_code: None,
            pattern,
        }
    }
}

/// The script an `option httpchk` section runs: its rules, with the
/// request `OPTIONS / HTTP/1.0` when none sends one, and after the last
/// request an expect rule of a 2xx or 3xx status when none follows it.
/// (The connection to the server is opened first when no rule does.)
pub fn http_rules(own: &[TcpCheckRule]) -> Vec<TcpCheckRule> {
    let mut rules = own.to_vec();
    if !rules.iter().any(|r| matches!(r, TcpCheckRule::HttpSend(_))) {
        let first = rules.iter().position(|r| !r.is_aside());
        let at = match first.and_then(|i| rules.get(i).map(|r| (i, r))) {
            Some((i, TcpCheckRule::Connect(_))) => i + 1,
            Some((i, _)) => i,
            None => rules.len(),
        };
        rules.insert(at, TcpCheckRule::HttpSend(Box::default()));
    }
    if !matches!(
        rules.iter().rev().find(|r| !r.is_aside()),
        Some(TcpCheckRule::Expect(_))
    ) {
        rules.push(TcpCheckRule::Expect(TcpExpect::new(TcpMatch::Status(
            vec![(200, 399)],
        ))));
    }
    rules
}

/// The script `option redis-check` runs.
pub fn redis_rules() -> Vec<TcpCheckRule> {
    let mut e = TcpExpect::new(TcpMatch::String(b"+PONG\r\n".to_vec()));
    e.error_status = "L7STS";
    e.on_success = Some(CheckInfo::Text("Redis server is ok".into()));
    e.on_error = Some(CheckInfo::FirstLine);
    vec![
        TcpCheckRule::Send {
            data: b"*1\r\n$4\r\nPING\r\n".to_vec(),
            comment: None,
        },
        TcpCheckRule::Expect(e),
    ]
}

/// The script `option smtpchk` runs with hello line `hello` (`HELO
/// localhost`): each answer must have a 3-digit code (else an invalid
/// response) starting with 2 (else a wrong status, with its code).
pub fn smtp_rules(hello: &str) -> Vec<TcpCheckRule> {
    let answer = |last: bool, sep: &str| {
        let re =
            |p: &str| weir_rules::matching::compile(weir_rules::matching::Method::Reg, p, false);
        // A whole line: its code, then the rest of it (a reply can
        // come in pieces, its line end last).
        let Ok(any) = re(&format!(r"^[0-9]{{3}}([{sep}][^\r\n]*)?\r\n")) else {
            return Vec::new();
        };
        // A reply of several lines (`250-…`) is read to its last line.
        let Ok(ok) = re(r"^2[0-9]{2}(-[^\r\n]*\r\n([0-9]{3}-[^\r\n]*\r\n)*[0-9]{3})?[ \r]") else {
            return Vec::new();
        };
        let mut form = TcpExpect::new(TcpMatch::RString(any));
        form.min_recv = Some(4);
        form.on_error = Some(CheckInfo::FirstLine);
        let mut good = TcpExpect::new(TcpMatch::RString(ok));
        good.error_status = "L7STS";
        good.on_error = Some(CheckInfo::AfterCode);
        good.status_code = Some(CheckCode::Leading);
        if last {
            good.on_success = Some(CheckInfo::AfterCode);
        }
        vec![TcpCheckRule::Expect(form), TcpCheckRule::Expect(good)]
    };
    let send = |line: String| TcpCheckRule::Send {
        data: line.into_bytes(),
        comment: None,
    };
    let mut rules = answer(false, " ");
    rules.push(send(format!("{hello}\r\n")));
    rules.extend(answer(false, "- "));
    rules.push(send("QUIT\r\n".into()));
    rules.extend(answer(true, " "));
    rules
}

/// The script `option pgsql-check user <user>` runs.
pub fn pgsql_rules(user: &str) -> Vec<TcpCheckRule> {
    let mut msg = Vec::new();
    msg.extend_from_slice(&0x0003_0000u32.to_be_bytes());
    for part in [b"user".as_slice(), user.as_bytes(), b""] {
        msg.extend_from_slice(part);
        msg.push(0);
    }
    let len = u32::try_from(msg.len() + 4).unwrap_or(u32::MAX);
    let mut data = len.to_be_bytes().to_vec();
    data.extend_from_slice(&msg);
    vec![
        TcpCheckRule::Send {
            data,
            comment: None,
        },
        TcpCheckRule::Reply(Reply::Pgsql),
    ]
}

/// The script `option mysql-check [user <user> [post-41|pre-41]]` runs.
pub fn mysql_rules(login: Option<&(String, bool)>) -> Vec<TcpCheckRule> {
    let Some((user, post41)) = login else {
        return vec![TcpCheckRule::Reply(Reply::MysqlGreeting { last: true })];
    };
    let mut body = Vec::new();
    if *post41 {
        // Capabilities (4.1 protocol, secure connection), the largest
        // packet, the character set, 23 bytes of filler.
        body.extend_from_slice(&[0x00, 0x82, 0x00, 0x00, 0x00, 0x80, 0x00, 0x01, 0x21]);
        body.extend_from_slice(&[0; 23]);
    } else {
        body.extend_from_slice(&[0x00, 0x80, 0x00, 0x00, 0x01]);
    }
    body.extend_from_slice(user.as_bytes());
    // The user's end, and an empty password.
    body.extend_from_slice(&[0, 0]);
    let len = u32::try_from(body.len()).unwrap_or(0).to_le_bytes();
    let mut data = vec![len[0], len[1], len[2], 1];
    data.extend_from_slice(&body);
    // QUIT, as the session's first command.
    data.extend_from_slice(&[0x01, 0x00, 0x00, 0x00, 0x01]);
    // Sent at once, as haproxy does: the greeting and the answer to the
    // login are read after.
    vec![
        TcpCheckRule::Send {
            data,
            comment: None,
        },
        TcpCheckRule::Reply(Reply::MysqlGreeting { last: false }),
        TcpCheckRule::Reply(Reply::MysqlLogin),
    ]
}

/// The script `option ldap-check` runs: an anonymous simple bind (LDAPv3,
/// message 1) and its response.
pub fn ldap_rules() -> Vec<TcpCheckRule> {
    vec![
        TcpCheckRule::Send {
            data: vec![
                0x30, 0x0c, 0x02, 0x01, 0x01, 0x60, 0x07, 0x02, 0x01, 0x03, 0x04, 0x00, 0x80, 0x00,
            ],
            comment: None,
        },
        TcpCheckRule::Reply(Reply::Ldap),
    ]
}

/// The script `option ssl-hello-chk` runs: a TLS 1.2 ClientHello (no
/// extensions, a few common suites), passed by a handshake or alert
/// record in answer.
pub fn ssl_hello_rules() -> Vec<TcpCheckRule> {
    let suites: [u16; 8] = [
        0xc02f, 0xc02b, 0xc030, 0xc02c, 0x009c, 0x002f, 0x0035, 0x000a,
    ];
    let mut hello = vec![0x03, 0x03];
    // The client random: fixed, as nothing is negotiated.
    hello.extend((0u8..32).map(|i| i.wrapping_mul(37)));
    hello.push(0); // no session id
    hello.extend_from_slice(&u16::try_from(suites.len() * 2).unwrap_or(0).to_be_bytes());
    for s in suites {
        hello.extend_from_slice(&s.to_be_bytes());
    }
    hello.extend_from_slice(&[0x01, 0x00]); // null compression
    let len = u32::try_from(hello.len()).unwrap_or(0).to_be_bytes();
    let mut hs = vec![0x01, len[1], len[2], len[3]];
    hs.extend_from_slice(&hello);
    let rlen = u16::try_from(hs.len()).unwrap_or(0).to_be_bytes();
    let mut data = vec![0x16, 0x03, 0x01, rlen[0], rlen[1]];
    data.extend_from_slice(&hs);
    let re = weir_rules::matching::compile(weir_rules::matching::Method::Reg, "^1[56]", false);
    let Ok(re) = re else {
        return Vec::new();
    };
    let mut e = TcpExpect::new(TcpMatch::RBinary(re));
    e.min_recv = Some(5);
    e.ok_status = "L6OK";
    e.error_status = "L6RSP";
    e.tout_status = "L6TOUT";
    vec![
        TcpCheckRule::Send {
            data,
            comment: None,
        },
        TcpCheckRule::Expect(e),
    ]
}
