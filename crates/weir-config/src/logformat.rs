//! `log-format` strings compiled into pieces (manual §8.2.4): literals and
//! `%var` / `%{+Q}var` references. Rendering lives with the session data.

/// Variables weir knows. `http_only` ones render `-` outside HTTP streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Var {
    ClientIp,
    ClientPort,
    FrontendIp,
    FrontendPort,
    FrontendName,
    FrontendNameTransport,
    BackendName,
    ServerName,
    ServerIp,
    ServerPort,
    BackendSrcIp,
    BackendSrcPort,
    AcceptDate,
    AcceptDateGmt,
    AcceptDateLocal,
    AcceptTimestamp,
    AcceptMs,
    Tw,
    Tc,
    Tt,
    Td,
    BytesRead,
    BytesUploaded,
    TermState,
    ActConn,
    FeConn,
    BeConn,
    SrvConn,
    Retries,
    SrvQueue,
    BackendQueue,
    Pid,
    Hostname,
    /// `%tr`, `%trg`, `%trl`: the date the request started.
    ReqDate,
    ReqDateGmt,
    ReqDateLocal,
    /// `%Th` handshake, `%Ti` idle, `%TR` request head, `%Tq` (Th+Ti+TR),
    /// `%Tr` server response, `%Ta` request active time.
    Th,
    Ti,
    TR,
    Tq,
    Tr,
    Ta,
    /// `%ST` status code.
    Status,
    /// `%CC` / `%CS`: captured request / response cookie.
    CookieReq,
    CookieRes,
    /// `%tsc`: termination state with cookie status (4 characters).
    TermStateCookie,
    /// `%hr`, `%hrl`, `%hs`, `%hsl`: captured headers (empty without captures).
    HdrReq,
    HdrReqList,
    HdrRes,
    HdrResList,
    /// `%r` request line, `%HM` method, `%HU` URI, `%HP` path, `%HPO` path
    /// only, `%HQ` query, `%HV` version.
    Request,
    Method,
    Uri,
    Path,
    PathOnly,
    Query,
    Version,
    /// `%ID` unique id, `%rt` request counter.
    UniqueId,
    ReqCounter,
    /// `%o`: a flag holder that renders nothing.
    Nothing,
    /// HTTP-only variables weir does not render (`-`).
    HttpOnly(&'static str),
}

impl Var {
    /// Text variables, quoted by a `%{+Q}o` default (numbers, dates and
    /// termination states never are).
    pub fn is_text(self) -> bool {
        matches!(
            self,
            Var::ClientIp
                | Var::FrontendIp
                | Var::FrontendName
                | Var::FrontendNameTransport
                | Var::BackendName
                | Var::ServerName
                | Var::ServerIp
                | Var::BackendSrcIp
                | Var::Hostname
                | Var::CookieReq
                | Var::CookieRes
                | Var::HdrReq
                | Var::HdrReqList
                | Var::HdrRes
                | Var::HdrResList
                | Var::Request
                | Var::Method
                | Var::Uri
                | Var::Path
                | Var::PathOnly
                | Var::Query
                | Var::Version
                | Var::UniqueId
        )
    }
}

const VARS: &[(&str, Var)] = &[
    ("B", Var::BytesRead),
    ("H", Var::Hostname),
    ("T", Var::AcceptDateGmt),
    ("Tc", Var::Tc),
    ("Td", Var::Td),
    ("Tl", Var::AcceptDateLocal),
    ("Ts", Var::AcceptTimestamp),
    ("Tt", Var::Tt),
    ("Tw", Var::Tw),
    ("U", Var::BytesUploaded),
    ("ac", Var::ActConn),
    ("b", Var::BackendName),
    ("bc", Var::BeConn),
    ("bi", Var::BackendSrcIp),
    ("bp", Var::BackendSrcPort),
    ("bq", Var::BackendQueue),
    ("ci", Var::ClientIp),
    ("cp", Var::ClientPort),
    ("f", Var::FrontendName),
    ("fc", Var::FeConn),
    ("fi", Var::FrontendIp),
    ("fp", Var::FrontendPort),
    ("ft", Var::FrontendNameTransport),
    ("ms", Var::AcceptMs),
    ("pid", Var::Pid),
    ("rc", Var::Retries),
    ("s", Var::ServerName),
    ("sc", Var::SrvConn),
    ("si", Var::ServerIp),
    ("sp", Var::ServerPort),
    ("sq", Var::SrvQueue),
    ("t", Var::AcceptDate),
    ("tr", Var::ReqDate),
    ("trg", Var::ReqDateGmt),
    ("trl", Var::ReqDateLocal),
    ("ts", Var::TermState),
    ("tsc", Var::TermStateCookie),
    ("Th", Var::Th),
    ("Ti", Var::Ti),
    ("TR", Var::TR),
    ("Tq", Var::Tq),
    ("Tr", Var::Tr),
    ("Ta", Var::Ta),
    ("ST", Var::Status),
    ("CC", Var::CookieReq),
    ("CS", Var::CookieRes),
    ("hr", Var::HdrReq),
    ("hrl", Var::HdrReqList),
    ("hs", Var::HdrRes),
    ("hsl", Var::HdrResList),
    ("r", Var::Request),
    ("HM", Var::Method),
    ("HU", Var::Uri),
    ("HP", Var::Path),
    ("HPO", Var::PathOnly),
    ("HQ", Var::Query),
    ("HV", Var::Version),
    ("ID", Var::UniqueId),
    ("rt", Var::ReqCounter),
    ("o", Var::Nothing),
];

const HTTP_VARS: &[&str] = &[];

/// One compiled piece of a log format.
#[derive(Debug, Clone, PartialEq)]
pub enum Piece {
    Lit(String),
    Var {
        var: Var,
        quote: bool,
    },
    /// `%[fetch,conv…]`: evaluated on the exchange before logging; the
    /// index is the sample's rank among the format's samples.
    Sample {
        expr: weir_rules::Expr,
        quote: bool,
        index: usize,
    },
}

/// A compiled `log-format` string.
#[derive(Debug, Clone, PartialEq)]
pub struct LogFormat {
    pub pieces: Vec<Piece>,
    pub source: String,
    /// How many of the pieces are `%[sample]` ones (none: nothing to
    /// evaluate per request).
    pub samples: usize,
}

impl LogFormat {
    /// Whether the format names the variable `v`.
    pub fn uses(&self, v: Var) -> bool {
        self.pieces
            .iter()
            .any(|p| matches!(p, Piece::Var { var, .. } if *var == v))
    }
}

/// HAProxy's `option tcplog` layout.
pub const TCPLOG_FORMAT: &str =
    "%ci:%cp [%t] %ft %b/%s %Tw/%Tc/%Tt %B %ts %ac/%fc/%bc/%sc/%rc %sq/%bq";

/// HAProxy's `option httplog clf` layout.
pub const CLF_HTTPLOG_FORMAT: &str = "%{+Q}o %{-Q}ci - - [%trg] %r %ST %B \"\" \"\" %cp %ms %ft %b %s %TR %Tw %Tc %Tr %Ta %tsc %ac %fc %bc %sc %rc %sq %bq %CC %CS %hrl %hsl";

/// HAProxy's `option httplog` layout.
/// `option httpslog`: the HTTP format with the TLS session's fields.
pub const HTTPSLOG_FORMAT: &str = "%ci:%cp [%tr] %ft %b/%s %TR/%Tw/%Tc/%Tr/%Ta %ST %B %CC %CS %tsc %ac/%fc/%bc/%sc/%rc %sq/%bq %hr %hs %{+Q}r %[fc_err]/%[ssl_fc_err,hex]/%[ssl_c_err]/%[ssl_c_ca_err]/%[ssl_fc_is_resumed] %[ssl_fc_sni]/%sslv/%sslc";

pub const HTTPLOG_FORMAT: &str = "%ci:%cp [%tr] %ft %b/%s %TR/%Tw/%Tc/%Tr/%Ta %ST %B %CC %CS %tsc %ac/%fc/%bc/%sc/%rc %sq/%bq %hr %hs %{+Q}r";

/// Ends the literal in progress and adds a sample expression, numbered
/// in the order of the format's samples.
fn push_sample(pieces: &mut Vec<Piece>, lit: &mut String, expr: weir_rules::Expr, quote: bool) {
    if !lit.is_empty() {
        pieces.push(Piece::Lit(std::mem::take(lit)));
    }
    let index = pieces
        .iter()
        .filter(|p| matches!(p, Piece::Sample { .. }))
        .count();
    pieces.push(Piece::Sample { expr, quote, index });
}

/// Compiles a format. Errors name the unknown variable, the bad sample
/// expression or the bad syntax.
pub fn compile(text: &str) -> Result<LogFormat, String> {
    let mut pieces = Vec::new();
    let mut lit = String::new();
    let mut default_quote = false;
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'%' {
            let ch_len = text[i..].chars().next().map_or(1, char::len_utf8);
            lit.push_str(&text[i..i + ch_len]);
            i += ch_len;
            continue;
        }
        i += 1;
        if b.get(i) == Some(&b'%') {
            lit.push('%');
            i += 1;
            continue;
        }
        let mut quote: Option<bool> = None;
        if b.get(i) == Some(&b'{') {
            let end = text[i..]
                .find('}')
                .ok_or_else(|| format!("missing '}}' in log-format '{text}'"))?;
            for flag in text[i + 1..i + end].split(',') {
                match flag {
                    "+Q" => quote = Some(true),
                    "-Q" => quote = Some(false),
                    "+X" | "-X" | "+E" | "-E" | "" => {}
                    other => return Err(format!("unknown log-format flag '{other}'")),
                }
            }
            i += end + 1;
        }
        if b.get(i) == Some(&b'[') {
            let end = weir_rules::fmt::expr_end(&text[i..])
                .ok_or_else(|| format!("missing ']' in log-format '{text}'"))?;
            let no_files = |f: &str| -> Result<String, String> {
                crate::files::read_to_string(f)
                    .map_err(|e| format!("failed to open file '{f}' : {e}"))
            };
            let expr = weir_rules::Expr::parse(&text[i + 1..i + end], &no_files)?;
            push_sample(&mut pieces, &mut lit, expr, quote.unwrap_or(default_quote));
            i += end + 1;
            continue;
        }
        let start = i;
        while i < b.len() && b[i].is_ascii_alphanumeric() {
            i += 1;
        }
        let name = &text[start..i];
        // `%sslv` and `%sslc`: the client connection's TLS version and
        // cipher, as their fetches give them.
        if let Some(fetch) = match name {
            "sslv" => Some("ssl_fc_protocol"),
            "sslc" => Some("ssl_fc_cipher"),
            _ => None,
        } {
            let expr = weir_rules::Expr::parse(fetch, &|_| Err(String::new()))?;
            push_sample(&mut pieces, &mut lit, expr, quote.unwrap_or(default_quote));
            continue;
        }
        if name.is_empty() {
            return Err(format!(
                "missing variable name after '%' in log-format '{text}'"
            ));
        }
        let var = if let Some((_, v)) = VARS.iter().find(|(n, _)| *n == name) {
            *v
        } else if let Some(h) = HTTP_VARS.iter().find(|n| **n == name) {
            Var::HttpOnly(h)
        } else {
            return Err(format!(
                "no such format variable '{name}' in log-format '{text}'"
            ));
        };
        if var == Var::Nothing {
            // `%o`: its flags become the default of the variables after it.
            default_quote = quote.unwrap_or(default_quote);
            // It renders nothing: the separator after it goes too.
            if (lit.is_empty() || lit.ends_with(' ')) && b.get(i) == Some(&b' ') {
                i += 1;
            }
            continue;
        }
        let quote = quote.unwrap_or(default_quote && var.is_text());
        if !lit.is_empty() {
            pieces.push(Piece::Lit(std::mem::take(&mut lit)));
        }
        pieces.push(Piece::Var { var, quote });
    }
    if !lit.is_empty() {
        pieces.push(Piece::Lit(lit));
    }
    let samples = pieces
        .iter()
        .filter(|p| matches!(p, Piece::Sample { .. }))
        .count();
    Ok(LogFormat {
        pieces,
        source: text.to_string(),
        samples,
    })
}

#[cfg(test)]
#[path = "logformat_tests.rs"]
mod tests;
