//! Keywords of `defaults`, `frontend`, `backend` and `listen` (manual §4).

use super::State;
use crate::diag::{did_you_mean, Loc};
use crate::keywords::{self, Status};
use crate::logformat;
use crate::model::{CaptureSlot, HttpConnMode, HttpReuse, Mode, Proxy, ProxyKind};
use crate::units::{parse_duration, parse_u32};

fn column(kind: ProxyKind) -> char {
    match kind {
        ProxyKind::Defaults => 'D',
        ProxyKind::Frontend => 'F',
        ProxyKind::Listen => 'L',
        ProxyKind::Backend => 'B',
    }
}

pub(super) fn line(st: &mut State<'_>, p: &mut Proxy, words: &[String], loc: &Loc) {
    note_fetched_servers(p, words);
    // `no option X` and `default option X` prefixes.
    let (negate, words) = match words[0].as_str() {
        "no" if words.len() > 1 => (true, &words[1..]),
        "default" if words.len() > 1 => (false, &words[1..]),
        _ => (false, words),
    };
    let section = p.kind.keyword();
    let Some(entry) = keywords::find_proxy(words) else {
        let first = words[0].as_str();
        let msg = if keywords::is_proxy_prefix(first) {
            let two = words
                .iter()
                .take(2)
                .map(String::as_str)
                .collect::<Vec<_>>()
                .join(" ");
            let hint = did_you_mean(&two, keywords::PROXY.iter().map(|k| k.name))
                .map(|s| format!("; did you mean '{s}'?"))
                .unwrap_or_default();
            format!("unknown keyword '{two}' in '{section}' section{hint}")
        } else if [
            "reqadd",
            "reqrep",
            "reqdel",
            "rspadd",
            "rsprep",
            "rspdel",
            "reqiallow",
            "reqdeny",
        ]
        .contains(&first)
        {
            format!("'{first}' was removed in HAProxy 2.1 and is not supported; use 'http-request'/'http-response'")
        } else {
            // Each keyword's first word too: `optoin` is `option …`.
            let names = keywords::PROXY
                .iter()
                .flat_map(|k| [k.name, k.name.split(' ').next().unwrap_or(k.name)]);
            let hint = did_you_mean(first, names)
                .map(|s| format!("; did you mean '{s}'?"))
                .unwrap_or_default();
            format!("unknown keyword '{first}' in '{section}' section{hint}")
        };
        st.diags.alert(loc, msg);
        return;
    };
    if entry.status == Status::Refused {
        st.diags.alert(
            loc,
            format!("'{}' is not supported by weir yet", entry.name),
        );
        return;
    }
    if entry.name == "declare capture" && !entry.sections.contains(column(p.kind)) {
        st.diags.alert(
            loc,
            "'declare' only available in frontend or listen section",
        );
        return;
    }
    if !entry.sections.contains(column(p.kind)) {
        st.diags.warn(
            loc,
            format!(
                "'{}' ignored because {section} '{}' has no {} capability",
                entry.name,
                p.name,
                if entry.sections.contains('F') {
                    "frontend"
                } else {
                    "backend"
                }
            ),
        );
        return;
    }
    // (An action word found by its prefix, `set-var(<name>)`, stays an
    // argument.)
    let mut nargs = entry.name.split(' ').count();
    if words.get(nargs - 1).map(String::as_str) != entry.name.split(' ').next_back() {
        nargs -= 1;
    }
    let args = &words[nargs..];
    match apply(st, p, entry.name, args, negate, loc) {
        Err(e) => st.diags.alert(loc, format!("'{}' : {e}", entry.name)),
        Ok(()) => {
            let refs = super::refs::refs_in(&p.name, words, loc);
            st.refs.extend(refs);
        }
    }
}

/// The `balance` algorithms weir runs, as the error for another lists them.
/// `server-template`'s `<num>` (1 to num) or `<from>-<to>`.
fn template_range(text: &str) -> Result<(u32, u32), String> {
    let bad = || format!("invalid range '{text}' (expects <num> or <from>-<to>)");
    let (from, to) = match text.split_once('-') {
        Some((a, b)) => (
            a.parse::<u32>().map_err(|_| bad())?,
            b.parse::<u32>().map_err(|_| bad())?,
        ),
        None => (1, text.parse::<u32>().map_err(|_| bad())?),
    };
    if from == 0 || to < from || to - from >= 100_000 {
        return Err(bad());
    }
    Ok((from, to))
}

/// Records the servers that `srv_*(<bk>/<srv>)` fetches on this line name
/// (`del server` refuses them).
fn note_fetched_servers(p: &mut Proxy, words: &[String]) {
    for w in words {
        let mut rest = w.as_str();
        while let Some(at) = rest.find("srv_") {
            let tail = &rest[at..];
            let name_end = tail
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(tail.len());
            let after = &tail[name_end..];
            rest = after;
            let Some(args) = after.strip_prefix('(') else {
                continue;
            };
            let arg = args.split([',', ')']).next().unwrap_or("");
            if arg.is_empty() {
                continue;
            }
            let named = match arg.split_once('/') {
                Some((b, s)) => (b.to_string(), s.to_string()),
                None => (String::new(), arg.to_string()),
            };
            p.fetched_servers.push(named);
        }
    }
}

pub(super) fn one<'a>(args: &'a [String], what: &str) -> Result<&'a str, String> {
    match args.len() {
        1 => Ok(args[0].as_str()),
        0 => Err(format!("expects {what}")),
        _ => Err(format!(
            "expects exactly one argument ({what}), got '{}'",
            args.join(" ")
        )),
    }
}

pub(super) fn no_args(args: &[String]) -> Result<(), String> {
    if args.is_empty() {
        Ok(())
    } else {
        Err(format!("takes no argument, got '{}'", args.join(" ")))
    }
}

fn timeout(args: &[String]) -> Result<Option<std::time::Duration>, String> {
    Ok(Some(parse_duration(one(args, "a time value")?)?))
}

/// Rules are refused in an anonymous `defaults` section (HAProxy: which
/// proxies they would reach is too easy to get wrong).
pub(super) fn anonymous_defaults(p: &Proxy) -> Result<(), String> {
    if p.kind == ProxyKind::Defaults && p.name.is_empty() {
        return Err("not allowed in anonymous 'defaults' sections".into());
    }
    Ok(())
}

/// A family of proxy keywords: `Ok(false)` when `name` is not one of its.
type Family = fn(&mut State<'_>, &mut Proxy, &str, &[String], bool, &Loc) -> Result<bool, String>;

/// Applies one supported proxy keyword; `Err` becomes an alert at `loc`.
pub(super) fn apply(
    st: &mut State<'_>,
    p: &mut Proxy,
    name: &str,
    args: &[String],
    negate: bool,
    loc: &Loc,
) -> Result<(), String> {
    // Userlists named by `http_auth(...)` fetches, checked after parsing.
    for a in args {
        for f in ["http_auth(", "http_auth_group("] {
            if let Some(rest) = a.find(f).map(|i| &a[i + f.len()..]) {
                let list = rest.split([')', ',']).next().unwrap_or("");
                st.userlist_refs.push((list.to_string(), loc.clone()));
            }
        }
    }
    const FAMILIES: [Family; 11] = [
        wiring,
        |_, p, name, args, negate, _| super::check::checks(p, name, args, negate),
        super::persist::persistence,
        super::stick::tables,
        http_fields,
        rules,
        super::balance::balancing,
        servers_and_limits,
        timeouts_and_modes,
        errors_and_forwarding,
        options,
    ];
    for family in FAMILIES {
        if family(st, p, name, args, negate, loc)? {
            return Ok(());
        }
    }
    if name.starts_with("stats ") {
        return super::stats::stats_page(p, name, args);
    }
    if super::mailers::email_alert(p, name, args)? {
        return Ok(());
    }
    if name == "compression" {
        return super::filter::compression(p, args);
    }
    if name == "filter" {
        return super::filter::filter(st, p, args, loc);
    }
    if name == "use-fcgi-app" {
        return super::fcgi::use_app(p, one(args, "an fcgi-app name")?, loc);
    }
    if let Some(what) = name.strip_prefix("external-check ") {
        let v = one(args, "an argument")?.to_string();
        match what {
            "command" => p.external_check.command = Some(v),
            _ => p.external_check.path = Some(v),
        }
        return Ok(());
    }
    Err("internal: keyword has no parser".into())
}

/// The proxy keywords of one family: `mode`, `bind`, backends and
/// captures; `Ok(false)` for another family's keyword.
fn wiring(
    st: &mut State<'_>,
    p: &mut Proxy,
    name: &str,
    args: &[String],
    _negate: bool,
    loc: &Loc,
) -> Result<bool, String> {
    match name {
        "mode" => {
            p.mode = match one(args, "'tcp' or 'http'")? {
                "tcp" => Mode::Tcp,
                "http" => Mode::Http,
                "health" => return Err("'mode health' was removed in HAProxy 2.4".into()),
                m => {
                    return Err(format!(
                        "unknown proxy mode '{m}' (expects 'tcp' or 'http')"
                    ))
                }
            }
        }
        "bind" => {
            let mut full = vec!["bind".to_string()];
            full.extend_from_slice(args);
            let nbproc = st.config.global.nbproc.is_some();
            match super::bind::bind(&full, loc, &mut st.diags, nbproc) {
                Ok(b) => p.binds.push(b),
                Err(errs) => {
                    for e in errs {
                        st.diags.alert(loc, e);
                    }
                }
            }
        }
        "bind-process" => {
            st.diags.warn(
                loc,
                "'bind-process' is ignored: weir runs one process with threads",
            );
        }
        "default_backend" => {
            p.default_backend = Some((one(args, "a backend name")?.to_string(), loc.clone()))
        }
        "use_backend" => {
            let (name, cond) = weir_rules::split_cond(args);
            let [b] = name else {
                return Err("expects a backend name followed by an optional condition".into());
            };
            let dynamic = if b.contains('%') {
                Some(weir_rules::Fmt::parse(b, &super::http::load)?)
            } else {
                None
            };
            let cond = super::http::cond(p, cond)?;
            p.use_backends.push(crate::model::UseBackend {
                name: b.clone(),
                dynamic,
                loc: loc.clone(),
                cond,
            });
        }
        "capture cookie" => {
            let (cookie, len) = super::capture::name_len(args)?;
            if p.http.capture_cookie.is_some() {
                return Err("only one 'capture cookie' is allowed in a frontend".into());
            }
            p.http.capture_cookie = Some((cookie, len));
        }
        "capture request header" | "capture response header" => {
            let (header, len) = super::capture::name_len(args)?;
            let slot = CaptureSlot {
                header: Some(header),
                len,
            };
            if name == "capture request header" {
                p.http.req_captures.push(slot);
            } else {
                p.http.res_captures.push(slot);
            }
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// The proxy keywords of one family: captures, unique ids, `monitor-uri`,
/// header options, `retry-on`, `http-check`; `Ok(false)` for another
/// family's keyword.
fn http_fields(
    _st: &mut State<'_>,
    p: &mut Proxy,
    name: &str,
    args: &[String],
    negate: bool,
    _loc: &Loc,
) -> Result<bool, String> {
    let flag = |args: &[String]| no_args(args).map(|_| !negate);
    match name {
        "declare capture" => match args {
            [dir, l, v] if l == "len" => {
                let len = v
                    .parse::<usize>()
                    .ok()
                    .filter(|v| *v > 0)
                    .ok_or("'len' expects a positive length")?;
                let slot = CaptureSlot { header: None, len };
                match dir.as_str() {
                    "request" => p.http.req_captures.push(slot),
                    "response" => p.http.res_captures.push(slot),
                    d => return Err(format!("expects 'request' or 'response', got '{d}'")),
                }
            }
            _ => return Err("expects 'request|response len <length>'".into()),
        },
        "unique-id-format" => {
            p.http.unique_id_format = Some(logformat::compile(&args.join(" "))?);
        }
        "unique-id-header" => {
            p.http.unique_id_header = Some(one(args, "a header name")?.to_string())
        }
        "monitor-uri" => p.http.monitor_uri = Some(one(args, "a URI")?.to_string()),
        "monitor fail" => {
            let (rest, cond) = weir_rules::split_cond(args);
            match (rest, super::http::cond(p, cond)?) {
                ([], Some(c)) => p.http.monitor_fail.push(c),
                _ => return Err("expects 'if' or 'unless' followed by a condition".into()),
            }
        }
        "option originalto" => {
            if negate {
                p.http.originalto = None;
                return no_args(args).map(|()| true);
            }
            let mut o = super::http::forwardfor(args)?;
            if !args.iter().any(|a| a == "header") {
                o.header = "X-Original-To".into();
            }
            p.http.originalto = Some(o);
        }
        "option log-separate-errors" => p.options.log_separate_errors = flag(args)?,
        "option http-buffer-request" => p.options.http_buffer_request = flag(args)?,
        "option disable-h2-upgrade" => p.options.disable_h2_upgrade = flag(args)?,
        "option http-restrict-req-hdr-names" => {
            use crate::model::RestrictNames;
            p.http.restrict_names_set = true;
            p.http.restrict_names = match one(args, "'preserve', 'delete' or 'reject'")? {
                "preserve" => RestrictNames::Preserve,
                "delete" => RestrictNames::Delete,
                "reject" => RestrictNames::Reject,
                o => {
                    return Err(format!(
                        "expects 'preserve', 'delete' or 'reject', got '{o}'"
                    ))
                }
            };
        }
        "retry-on" => p.http.retry_on = Some(super::http::retry_on(args)?),
        _ => return Ok(false),
    }
    Ok(true)
}

/// Where a rule written at `loc` was written, for `last_rule_file`/`_line`.
pub(super) fn rule_at(loc: &Loc) -> Option<weir_rules::RuleAt> {
    Some(weir_rules::RuleAt {
        file: loc.file.as_str().into(),
        line: u32::try_from(loc.line).ok()?,
    })
}

/// The proxy keywords of one family: ACLs and the TCP and HTTP rule sets,
/// `redirect`; `Ok(false)` for another family's keyword.
fn rules(
    st: &mut State<'_>,
    p: &mut Proxy,
    name: &str,
    args: &[String],
    _negate: bool,
    loc: &Loc,
) -> Result<bool, String> {
    match name {
        "acl" => {
            let name = args.first().ok_or("expects an ACL name")?;
            if !name
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || b"_-.:".contains(&c))
            {
                return Err(format!("invalid character in ACL name '{name}'"));
            }
            let acl = weir_rules::Acl::parse(&args[1..], &super::http::load)?;
            match p.acls.iter_mut().find(|(n, _)| n == name) {
                Some((_, v)) => v.push(acl),
                None => p.acls.push((name.clone(), vec![acl])),
            }
        }
        "http-request" => {
            anonymous_defaults(p)?;
            let r = {
                let lookup = super::http::lookup(p);
                weir_rules::parse_request_rule(args, &lookup, &super::http::load)?
            };
            let mut r = r;
            r.at = rule_at(loc);
            if matches!(r.action, weir_rules::ReqAction::SetTimeout(..))
                && p.kind == crate::model::ProxyKind::Frontend
            {
                return Err(
                    "'set-timeout' is only available in sections with backend capabilities".into(),
                );
            }
            if let Some(answer) = r.action.answer_mut() {
                super::http::resolve_section(st, answer)?;
            }
            if let weir_rules::ReqAction::Capture { slot, len, id, .. } = &mut r.action {
                (*slot, *len) = super::capture::slot(p, false, *id, *len)?;
            }
            p.http_request.push(r);
        }
        "tcp-request connection"
        | "tcp-request session"
        | "tcp-request content"
        | "tcp-request inspect-delay"
        | "tcp-response content"
        | "tcp-response inspect-delay" => super::tcp::apply(p, name, args, loc)?,
        "http-response" | "http-after-response" => {
            anonymous_defaults(p)?;
            let mut r = {
                let lookup = super::http::lookup(p);
                weir_rules::parse_response_rule(args, &lookup, &super::http::load)?
            };
            r.at = rule_at(loc);
            if let Some(answer) = r.action.answer_mut() {
                super::http::resolve_section(st, answer)?;
            }
            if let weir_rules::ResAction::Capture { slot, len, id, .. } = &mut r.action {
                (*slot, *len) = super::capture::slot(p, true, Some(*id), *len)?;
            }
            if name == "http-after-response"
                && matches!(r.action, weir_rules::ResAction::Redirect(_))
            {
                return Err("action 'redirect' is not supported by 'http-after-response' (haproxy 2.6 has none)".into());
            }
            if name == "http-response" {
                p.http_response.push(r);
            } else {
                p.http_after_response.push(r);
            }
        }
        "redirect" => {
            let (act, cond) = weir_rules::split_cond(args);
            let r = weir_rules::parse_redirect(act, &super::http::load)?;
            let cond = super::http::cond(p, cond)?;
            p.redirects.push(weir_rules::Rule {
                action: weir_rules::ReqAction::Redirect(r),
                cond,
                at: rule_at(loc),
            });
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// The proxy keywords of one family: servers, connection limits, ids, `log`
/// lines; `Ok(false)` for another family's keyword.
fn servers_and_limits(
    st: &mut State<'_>,
    p: &mut Proxy,
    name: &str,
    args: &[String],
    negate: bool,
    loc: &Loc,
) -> Result<bool, String> {
    match name {
        "dispatch" => {
            let [addr] = args else {
                return Err("'dispatch' expects <address>:<port>".into());
            };
            if !p.kind.is_backend() {
                return Err(
                    "'dispatch' is only available in sections with backend capabilities".into(),
                );
            }
            if !p.servers.is_empty() {
                return Err("'dispatch' beside 'server' lines is not supported by weir yet".into());
            }
            match super::server::address_of_its_own(&p.default_server, addr, loc) {
                Ok(s) => p.servers.push(s),
                Err(errs) => return Err(errs.join("; ").replace("'server <NOSRV>' : ", "")),
            }
        }
        "server" if p.servers.iter().any(|s| s.dispatch) => {
            return Err("'server' lines beside 'dispatch' are not supported by weir yet".into());
        }
        "server" => {
            let mut full = vec!["server".to_string()];
            full.extend_from_slice(args);
            // Addresses expand environment variables, quoted or not.
            if let Some(a) = full.get_mut(2) {
                *a = crate::addr::expand_env(a, &|n| st.env.get(n));
            }
            match super::server::server(&p.default_server, &full, loc) {
                Ok(s) => p.servers.push(s),
                Err(errs) => {
                    for e in errs {
                        st.diags.alert(loc, e);
                    }
                }
            }
        }
        "server-template" => {
            let [prefix, range, addr, opts @ ..] = args else {
                return Err("expects <prefix> <num | range> <fqdn>[:<port>] [params*]".into());
            };
            let (from, to) = template_range(range)?;
            let addr = crate::addr::expand_env(addr, &|n| st.env.get(n));
            for i in from..=to {
                let mut full = vec!["server".to_string(), format!("{prefix}{i}"), addr.clone()];
                full.extend_from_slice(opts);
                match super::server::server(&p.default_server, &full, loc) {
                    Ok(mut s) => {
                        s.template = true;
                        p.servers.push(s);
                    }
                    Err(errs) => {
                        for e in errs {
                            st.diags.alert(loc, e);
                        }
                        break;
                    }
                }
            }
        }
        "default-server" => {
            for e in super::server::default_server(&mut p.default_server, args) {
                st.diags.alert(loc, format!("'default-server' : {e}"));
            }
        }
        "maxconn" => p.maxconn = Some(parse_u32(one(args, "an integer")?, name)?),
        "hash-balance-factor" => {
            let n = parse_u32(one(args, "an integer")?, name)?;
            if n != 0 && n <= 100 {
                return Err("'hash-balance-factor' must be 0 or greater than 100.".into());
            }
            p.hash_balance_factor = n;
        }
        "rate-limit sessions" => {
            if p.kind == crate::model::ProxyKind::Backend {
                return Err("only available in sections with frontend capabilities".into());
            }
            let n = parse_u32(one(args, "an integer")?, name)?;
            p.rate_limit_sessions = Some(n).filter(|n| *n > 0);
        }
        "fullconn" => p.fullconn = Some(parse_u32(one(args, "an integer")?, name)?),
        "backlog" => {
            parse_u32(one(args, "an integer")?, name)?;
        }
        "retries" => p.retries = parse_u32(one(args, "an integer")?, name)?,
        "description" => p.description = Some(args.join(" ")),
        "id" => p.id = Some(parse_u32(one(args, "an integer")?, name)?).filter(|n| *n > 0),
        "disabled" => p.disabled = true,
        "enabled" => p.disabled = false,
        "log" => {
            if negate {
                p.logs.clear();
                p.log_global = false;
                return no_args(args).map(|()| true);
            }
            if args.first().map(String::as_str) == Some("global") {
                no_args(&args[1..])?;
                p.log_global = true;
            } else {
                let env = |n: &str| st.env.get(n);
                p.logs.push(super::log::log_target_env(args, loc, &env)?);
            }
        }
        "log-format" => {
            let f = args.join(" ");
            p.log_format = Some(logformat::compile(&f)?);
        }
        "log-format-sd" => {
            if args.is_empty() {
                return Err("log-format-sd expects an argument.".into());
            }
            p.log_format_sd = Some(logformat::compile(&args.join(" "))?);
        }
        "error-log-format" => {
            if args.is_empty() {
                return Err("expects a format string".into());
            }
            p.error_log_format = Some(logformat::compile(&args.join(" "))?);
        }
        "log-tag" => p.log_tag = Some(one(args, "a tag")?.to_string()),
        _ => return Ok(false),
    }
    Ok(true)
}

/// The proxy keywords of one family: timeouts, HTTP connection modes, `http-
/// reuse`; `Ok(false)` for another family's keyword.
fn timeouts_and_modes(
    st: &mut State<'_>,
    p: &mut Proxy,
    name: &str,
    args: &[String],
    negate: bool,
    loc: &Loc,
) -> Result<bool, String> {
    let flag = |args: &[String]| no_args(args).map(|_| !negate);
    match name {
        "timeout connect" | "contimeout" => {
            if name == "contimeout" {
                st.diags.warn(
                    loc,
                    "the 'contimeout' directive is deprecated; use 'timeout connect'",
                );
            }
            p.timeouts.connect = timeout(args)?;
        }
        "timeout client" | "clitimeout" => {
            if name == "clitimeout" {
                st.diags.warn(
                    loc,
                    "the 'clitimeout' directive is deprecated; use 'timeout client'",
                );
            }
            p.timeouts.client = timeout(args)?;
        }
        "timeout server" | "srvtimeout" => {
            if name == "srvtimeout" {
                st.diags.warn(
                    loc,
                    "the 'srvtimeout' directive is deprecated; use 'timeout server'",
                );
            }
            p.timeouts.server = timeout(args)?;
        }
        "timeout queue" => p.timeouts.queue = timeout(args)?,
        "timeout tunnel" => p.timeouts.tunnel = timeout(args)?,
        "timeout client-fin" => p.timeouts.client_fin = timeout(args)?,
        "timeout server-fin" => p.timeouts.server_fin = timeout(args)?,
        "timeout check" => p.timeouts.check = timeout(args)?,
        "timeout http-request" => p.timeouts.http_request = timeout(args)?,
        "timeout http-keep-alive" => p.timeouts.http_keep_alive = timeout(args)?,
        "timeout tarpit" => p.timeouts.tarpit = timeout(args)?,
        "option http-keep-alive" => {
            flag(args)?;
            p.http.conn_mode = HttpConnMode::KeepAlive;
        }
        "option http-server-close" => {
            p.http.conn_mode = if flag(args)? {
                HttpConnMode::ServerClose
            } else {
                HttpConnMode::KeepAlive
            };
        }
        "option httpclose" => {
            p.http.conn_mode = if flag(args)? {
                HttpConnMode::Close
            } else {
                HttpConnMode::KeepAlive
            };
        }
        "option accept-invalid-http-request" => p.http.accept_invalid_request = flag(args)?,
        "option accept-invalid-http-response" => p.http.accept_invalid_response = flag(args)?,
        "http-reuse" => {
            p.http.reuse = match one(args, "'never', 'safe', 'aggressive' or 'always'")? {
                "never" => HttpReuse::Never,
                "safe" => HttpReuse::Safe,
                "aggressive" => HttpReuse::Aggressive,
                "always" => HttpReuse::Always,
                o => {
                    return Err(format!(
                        "unknown mode '{o}' (expects 'never', 'safe', 'aggressive' or 'always')"
                    ))
                }
            }
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// The proxy keywords of one family: `forwardfor`, error pages, `option
/// redispatch`; `Ok(false)` for another family's keyword.
fn errors_and_forwarding(
    st: &mut State<'_>,
    p: &mut Proxy,
    name: &str,
    args: &[String],
    negate: bool,
    loc: &Loc,
) -> Result<bool, String> {
    match name {
        "option forwardfor" => {
            if negate {
                p.http.forwardfor = None;
                return no_args(args).map(|()| true);
            }
            p.http.forwardfor = Some(super::http::forwardfor(args)?);
        }
        "errorfiles" => {
            let name = args.first().ok_or("expects an http-errors section name")?;
            let codes = args[1..]
                .iter()
                .map(|c| {
                    c.parse::<u16>()
                        .ok()
                        .filter(|c| super::http::ERRORFILE_CODES.contains(c))
                        .ok_or_else(|| format!("status code '{c}' cannot be overridden"))
                })
                .collect::<Result<Vec<u16>, String>>()?;
            match st.http_errors.get(name) {
                // A section defined above applies here, in order: a later
                // `errorfile` or `errorfiles` replaces its pages, and it
                // replaces earlier ones, inherited or not (as haproxy 2.6).
                Some(pages) => super::http::apply_errorfiles(&mut p.http.errorfiles, pages, &codes),
                // One defined below is applied once every section is read.
                None => p
                    .http
                    .errorfiles_refs
                    .push((name.clone(), codes, loc.clone())),
            }
        }
        "http-error" => {
            p.http
                .error_replies
                .retain(|(c, _)| *c != super::http::code_of(args));
            if let Some(r) = super::http::http_error_reply(args, st)? {
                p.http.errorfiles.retain(|(c, _)| *c != r.status);
                p.http.error_replies.push((r.status, r));
            } else {
                let (code, page) = super::http::http_error(args, &st.http_errors)?;
                p.http.errorfiles.retain(|(c, _)| *c != code);
                p.http.errorfiles.extend(page.map(|b| (code, b)));
            }
        }
        "errorfile" | "errorloc" | "errorloc302" | "errorloc303" => {
            let (code, page) = if name == "errorfile" {
                super::http::errorfile(args)?
            } else {
                super::http::errorloc(name, args)?
            };
            p.http.errorfiles.retain(|(c, _)| *c != code);
            p.http.error_replies.retain(|(c, _)| *c != code);
            p.http.errorfiles.push((code, page));
        }
        "option redispatch" => {
            p.options.redispatch = !negate;
            match args {
                [] => p.options.redispatch_interval = -1,
                [n] => {
                    let v: i32 = n.parse().map_err(|_| format!("invalid interval '{n}'"))?;
                    if v == 0 {
                        p.options.redispatch = false;
                    }
                    p.options.redispatch_interval = v;
                }
                _ => return Err("expects at most one interval".into()),
            }
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// The proxy keywords of one family: the remaining `option` flags and
/// `option httpchk`; `Ok(false)` for another family's keyword.
fn options(
    _st: &mut State<'_>,
    p: &mut Proxy,
    name: &str,
    args: &[String],
    negate: bool,
    _loc: &Loc,
) -> Result<bool, String> {
    let flag = |args: &[String]| no_args(args).map(|_| !negate);
    match name {
        "option abortonclose" => p.options.abortonclose = flag(args)?,
        "option independent-streams" => p.options.independent_streams = flag(args)?,
        "max-session-srv-conns" => {
            p.max_session_srv_conns = Some(parse_u32(one(args, "an integer")?, name)?)
        }
        "max-keep-alive-queue" => super::http::keep_alive_queue(_st, args, _loc)?,
        "option splice-auto" => p.options.splice_auto = flag(args)?,
        "option splice-request" => p.options.splice_request = flag(args)?,
        "option splice-response" => p.options.splice_response = flag(args)?,
        "option tcplog" => {
            p.options.tcplog = flag(args)?;
            if p.options.tcplog {
                p.options.httplog = false;
            }
        }
        "option httplog" => {
            if args.iter().any(|a| a != "clf") {
                return Err(format!("unexpected '{}'", args.join(" ")));
            }
            p.options.httplog = !negate;
            p.options.httplog_clf = !negate && !args.is_empty();
            if !negate {
                p.options.tcplog = false;
            }
        }
        "option httpslog" => {
            p.options.httpslog = flag(args)?;
            p.options.httplog = p.options.httpslog;
            p.options.httplog_clf = false;
            if p.options.httpslog {
                p.options.tcplog = false;
            }
        }
        "option dontlognull" => p.options.dontlognull = flag(args)?,
        "option nolinger" => p.options.nolinger = flag(args)?,
        // What weir does at every soft stop.
        "option idle-close-on-response" => {
            if !flag(args)? {
                _st.diags.push(
                    crate::diag::Level::Notice,
                    Some(_loc),
                    "'no option idle-close-on-response' has no effect: at soft stop weir answers an idle connection's next request with 'Connection: close' rather than closing it under a client that may be sending",
                );
            }
        }
        "option h1-case-adjust-bogus-client" => p.options.h1_case_adjust_bogus_client = flag(args)?,
        "option h1-case-adjust-bogus-server" => p.options.h1_case_adjust_bogus_server = flag(args)?,
        "option http-pretend-keepalive" => {
            p.options.pretend_keepalive = flag(args)?;
            if p.kind == crate::model::ProxyKind::Frontend {
                _st.diags.warn(
                    _loc,
                    format!(
                        "'http-pretend-keepalive' ignored because frontend '{}' has no backend capability.",
                        p.name
                    ),
                );
            }
        }
        "option logasap" => p.options.logasap = flag(args)?,
        "option http-ignore-probes" => p.options.http_ignore_probes = flag(args)?,
        "option socket-stats" => p.options.socket_stats = flag(args)?,
        "option dontlog-normal" => p.options.dontlog_normal = flag(args)?,
        "option log-health-checks" => p.options.log_health_checks = flag(args)?,
        "option tcpka" => {
            let v = flag(args)?;
            p.options.clitcpka = v;
            p.options.srvtcpka = v;
        }
        "option clitcpka" => p.options.clitcpka = flag(args)?,
        "source" => {
            let [a] = args else {
                return Err(match args.get(1).map(String::as_str) {
                    Some(w @ ("usesrc" | "interface")) => {
                        format!("'source ... {w}' is not supported by weir yet")
                    }
                    _ => "expects an address and an optional port".into(),
                });
            };
            p.source = Some(crate::addr::parse_server_addr(a, None)?);
        }
        // weir sends HTTP data as soon as it has it (TCP_NODELAY, no
        // MSG_MORE): there is no delay to turn off.
        "option http-no-delay" => {
            flag(args)?;
        }
        "clitcpka-cnt" | "srvtcpka-cnt" => {
            let n = parse_u32(one(args, "a number of probes")?, name)?;
            ka_of(p, name).cnt = Some(n);
        }
        "clitcpka-idle" | "srvtcpka-idle" | "clitcpka-intvl" | "srvtcpka-intvl" => {
            let t = one(args, "a time")?;
            // Seconds unless a unit is given.
            let d = if t.bytes().all(|c| c.is_ascii_digit()) {
                std::time::Duration::from_secs(parse_u32(t, name)?.into())
            } else {
                parse_duration(t)?
            };
            if name.ends_with("idle") {
                ka_of(p, name).idle = Some(d);
            } else {
                ka_of(p, name).intvl = Some(d);
            }
        }
        "option srvtcpka" => p.options.srvtcpka = flag(args)?,
        "option allbackups" => p.options.allbackups = flag(args)?,
        "option tcp-smart-accept"
        | "option tcp-smart-connect"
        | "option contstats"
        | "option http-use-proxy-header" => {
            flag(args)?;
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// The keep-alive settings a `clitcpka-*` or `srvtcpka-*` keyword sets.
fn ka_of<'p>(p: &'p mut Proxy, name: &str) -> &'p mut crate::model::TcpKa {
    if name.starts_with("cli") {
        &mut p.options.clitcpka_params
    } else {
        &mut p.options.srvtcpka_params
    }
}
