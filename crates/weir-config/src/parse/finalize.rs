//! Cross-section checks once every file is read: references between
//! proxies, duplicate names, modes, logging defaults. Each names its line.

use crate::diag::{Diagnostics, Level};
use crate::logformat::{self, CLF_HTTPLOG_FORMAT, HTTPLOG_FORMAT, HTTPSLOG_FORMAT, TCPLOG_FORMAT};
use crate::model::{Config, Mode, ProxyKind};
use std::collections::HashMap;

/// The legacy one-line log HAProxy writes when neither `option tcplog` nor
/// `log-format` is set.
pub const DEFAULT_TCP_FORMAT: &str = "Connect from %ci:%cp to %fi:%fp (%f/TCP)";
/// The same for a `mode http` frontend without `option httplog`.
pub const DEFAULT_HTTP_FORMAT: &str = "Connect from %ci:%cp to %fi:%fp (%f/HTTP)";

pub(super) fn finalize(cfg: &mut Config, diags: &mut Diagnostics) {
    if let (Some(_), Some(_)) = (cfg.global.nbproc, cfg.global.nbthread) {
        diags.push(
            Level::Warning,
            None,
            "both 'nbproc' and 'nbthread' are set; 'nbthread' wins",
        );
        cfg.global.nbproc = None;
    }
    transparent(cfg, diags);
    unix_bind(cfg);
    super::mailers::finalize(cfg, diags);
    external_checks(cfg, diags);
    layer7_hash_in_tcp(cfg, diags);
    resolvers_named(cfg, diags);
    do_resolve_named(cfg, diags);
    super::cache::names_checked(cfg, diags);
    super::fcgi::checked(cfg, diags);
    // A FastCGI application sees `X_A` and `X-A` as one `HTTP_X_A`: its
    // backends delete odd header names unless told otherwise (haproxy's).
    for p in cfg.proxies.iter_mut().filter(|p| p.use_fcgi_app.is_some()) {
        if !p.http.restrict_names_set {
            p.http.restrict_names = crate::model::RestrictNames::Delete;
        }
    }
    // A proxy's `source` goes to its servers without one.
    for p in &mut cfg.proxies {
        if let Some(src) = &p.source {
            for s in p.servers.iter_mut().filter(|s| s.source.is_none()) {
                s.source = Some(src.clone());
            }
        }
    }
    let global_logs = cfg.global.logs.clone();
    let mut fe_names: HashMap<String, usize> = HashMap::new();
    let mut be_names: HashMap<String, usize> = HashMap::new();
    for i in 0..cfg.proxies.len() {
        let p = &cfg.proxies[i];
        let (is_fe, is_be) = (p.kind.is_frontend(), p.kind.is_backend());
        for (is, names, what) in [
            (is_fe, &mut fe_names, "frontend"),
            (is_be, &mut be_names, "backend"),
        ] {
            if !is {
                continue;
            }
            if let Some(&j) = names.get(&p.name) {
                let other = &cfg.proxies[j];
                diags.alert(
                    &p.loc,
                    format!(
                        "{} '{}' has the same name as {} '{}' declared at {} ({what} names must be unique)",
                        p.kind.keyword(), p.name, other.kind.keyword(), other.name, other.loc
                    ),
                );
            } else {
                names.insert(p.name.clone(), i);
            }
        }
    }
    for i in 0..cfg.proxies.len() {
        let (kind, mode, name) = (
            cfg.proxies[i].kind,
            cfg.proxies[i].mode,
            cfg.proxies[i].name.clone(),
        );
        // Backend references.
        let mut refs: Vec<(String, crate::diag::Loc, &str)> = Vec::new();
        if let Some((b, l)) = &cfg.proxies[i].default_backend {
            refs.push((b.clone(), l.clone(), "default_backend"));
        }
        for u in cfg.proxies[i]
            .use_backends
            .iter()
            .filter(|u| u.dynamic.is_none())
        {
            refs.push((u.name.clone(), u.loc.clone(), "use_backend"));
        }
        for (b, l, what) in refs {
            match be_names.get(&b) {
                None => diags.alert(&l, format!("proxy '{name}': unable to find required {what}: '{b}'")),
                // A `mode tcp` frontend may use an HTTP backend: its
                // clients go on in HTTP (haproxy's implicit upgrade).
                Some(&j) if cfg.proxies[j].mode != mode && mode == crate::model::Mode::Http => diags.alert(
                    &l,
                    format!(
                        "{} '{name}' in {} mode cannot use backend '{b}' in {} mode (declared at {})",
                        kind.keyword(), mode_name(mode), mode_name(cfg.proxies[j].mode), cfg.proxies[j].loc
                    ),
                ),
                Some(_) => {}
            }
        }
        let cookielen = cfg.global.cookielen;
        let p = &mut cfg.proxies[i];
        // `tune.http.cookielen` bounds every cookie capture.
        if let Some((_, len)) = &mut p.http.capture_cookie {
            *len = (*len).min(cookielen);
        }
        if p.log_global {
            let mut logs = global_logs.clone();
            logs.append(&mut p.logs);
            p.logs = logs;
        }
        if kind == ProxyKind::Frontend && p.binds.is_empty() && !p.disabled {
            {
                diags.alert(&p.loc, format!("frontend '{name}' has no 'bind' directive. Please declare it as a backend if this was intended."));
            }
        }
        if kind.is_frontend() && p.mode != Mode::Http {
            for b in p.binds.iter().filter(|b| b.h2) {
                diags.alert(
                    &b.loc,
                    format!("proxy '{name}' : 'proto h2' is only usable in mode http"),
                );
            }
        }
        if kind == ProxyKind::Frontend && p.default_backend.is_none() && p.use_backends.is_empty() {
            // A notice, not a warning: haproxy 2.6 says nothing here, and a
            // configuration it accepts under `zero-warning` must pass too.
            diags.push(
                crate::diag::Level::Notice,
                Some(&p.loc),
                format!("frontend '{name}' has no 'default_backend' nor 'use_backend': requests not answered by its rules get a 503 (mode http) or are closed (mode tcp)"),
            );
        }
        if kind.is_backend() {
            let mut seen: HashMap<&str, usize> = HashMap::new();
            for (si, s) in p.servers.iter().enumerate() {
                if let Some(&prev) = seen.get(s.name.as_str()) {
                    diags.alert(
                        &s.loc,
                        format!(
                            "{} '{name}' : server name '{}' is already used at {}",
                            kind.keyword(),
                            s.name,
                            p.servers[prev].loc
                        ),
                    );
                } else {
                    seen.insert(&s.name, si);
                }
            }
            for u in p.use_servers.iter().filter(|u| u.dynamic.is_none()) {
                if !seen.contains_key(u.name.as_str()) {
                    diags.alert(
                        &u.loc,
                        format!(
                            "{} '{name}' : unable to find server '{}' referenced in a 'use-server' rule",
                            kind.keyword(),
                            u.name
                        ),
                    );
                }
            }
        }
        let t = &p.timeouts;
        let missing: Vec<&str> = [
            ("client", kind.is_frontend() && t.client.is_none()),
            ("connect", kind.is_backend() && t.connect.is_none()),
            ("server", kind.is_backend() && t.server.is_none()),
        ]
        .iter()
        .filter(|(_, m)| *m)
        .map(|(n, _)| *n)
        .collect();
        // Not when the configuration is refused already: a `timeout` line
        // that failed to parse would make this warning mislead.
        if !missing.is_empty() && !p.disabled && !diags.has_errors() {
            diags.warn(
                &p.loc,
                format!(
                    "missing timeouts for {} '{name}': while not invalid, connections may then wait forever; set 'timeout {}'",
                    kind.keyword(),
                    missing.join("', 'timeout ")
                ),
            );
        }
        if p.options.httplog && kind.is_frontend() && p.mode == Mode::Tcp {
            diags.warn(
                &p.loc,
                format!("'option httplog' not usable with {} '{name}' (needs 'mode http'). Falling back to 'option tcplog'.", kind.keyword()),
            );
            p.options.httplog = false;
            p.options.httpslog = false;
            p.options.tcplog = true;
        }
        if p.log_format.is_none() && kind.is_frontend() {
            let text = if p.options.httpslog {
                HTTPSLOG_FORMAT
            } else if p.options.httplog && p.options.httplog_clf {
                CLF_HTTPLOG_FORMAT
            } else if p.options.httplog {
                HTTPLOG_FORMAT
            } else if p.options.tcplog {
                TCPLOG_FORMAT
            } else if p.mode == Mode::Http {
                DEFAULT_HTTP_FORMAT
            } else {
                DEFAULT_TCP_FORMAT
            };
            p.log_format = logformat::compile(text).ok();
        }
    }
}

/// Every `resolvers <name>` a server names exists and has a name server.
fn resolvers_named(cfg: &Config, diags: &mut Diagnostics) {
    for r in cfg.resolvers.iter().filter(|r| r.nameservers.is_empty()) {
        diags.alert(
            &r.loc,
            format!("resolvers '{}' : no nameserver configured", r.name),
        );
    }
    for p in &cfg.proxies {
        for s in &p.servers {
            let Some(r) = &s.resolve.resolvers else {
                continue;
            };
            if !cfg.resolvers.iter().any(|x| x.name == *r) {
                diags.alert(
                    &s.loc,
                    format!(
                        "{} '{}' : server '{}' : unable to find required resolvers section '{r}'",
                        p.kind.keyword(),
                        p.name,
                        s.name
                    ),
                );
            }
        }
    }
}

/// Every `do-resolve` rule names a `resolvers` section (haproxy's words).
fn do_resolve_named(cfg: &Config, diags: &mut Diagnostics) {
    for p in &cfg.proxies {
        let http = p.http_request.iter().filter_map(|r| match &r.action {
            weir_rules::ReqAction::DoResolve(d) => Some((d, &r.at)),
            _ => None,
        });
        let tcp = p.tcp.content.iter().filter_map(|r| match &r.action {
            weir_rules::TcpAction::DoResolve(d) => Some((d, &r.at)),
            _ => None,
        });
        for (d, at) in http.chain(tcp) {
            if cfg.resolvers.iter().any(|r| r.name == d.resolvers) {
                continue;
            }
            let loc = at.as_ref().map_or_else(
                || p.loc.clone(),
                |a| crate::Loc {
                    file: a.file.to_string(),
                    line: a.line as usize,
                },
            );
            diags.alert(
                &loc,
                format!(
                    "Proxy '{}': Can't find resolvers section '{}' for do-resolve action.",
                    p.name, d.resolvers
                ),
            );
        }
    }
}

/// `unix-bind`: its prefix before every unix socket path a `bind` line
/// binds, its mode and owner where the line sets none (not the stats
/// sockets', as in haproxy).
fn unix_bind(cfg: &mut Config) {
    let u = cfg.global.unix_bind.clone();
    if u == crate::model::UnixBind::default() {
        return;
    }
    let prefixed = |a: &mut crate::addr::BindAddr| {
        if let (crate::addr::BindAddr::Unix(path), Some(pre)) = (a, &u.prefix) {
            *path = format!("{pre}{path}");
        }
    };
    let is_unix = |a: &crate::addr::BindAddr| matches!(a, crate::addr::BindAddr::Unix(_));
    for b in cfg.proxies.iter_mut().flat_map(|p| p.binds.iter_mut()) {
        if !b.addrs.iter().any(is_unix) {
            continue;
        }
        b.addrs.iter_mut().for_each(prefixed);
        b.mode = b.mode.or(u.mode);
        b.user = b.user.clone().or_else(|| u.user.clone());
        b.group = b.group.clone().or_else(|| u.group.clone());
    }
}

/// `option external-check` needs the global `external-check` and a
/// command, as haproxy says.
fn external_checks(cfg: &Config, diags: &mut Diagnostics) {
    for p in &cfg.proxies {
        if p.kind == crate::model::ProxyKind::Defaults
            || p.options.check_proto != Some(crate::model::CheckProto::External)
        {
            continue;
        }
        if !cfg.global.external_check {
            diags.alert(
                &p.loc,
                format!(
                    "Proxy '{}' : 'option external-check' unable to find required 'global.external-check'.",
                    p.name
                ),
            );
        }
        if p.external_check.command.is_none() {
            diags.alert(
                &p.loc,
                format!(
                    "Proxy '{}' : 'option external-check' unable to find required 'external-check command'.",
                    p.name
                ),
            );
        }
    }
}

/// `balance uri|url_param|hdr` in a `mode tcp` backend has no request
/// to hash: round robin, with haproxy's warning (`hash` and `rdp-cookie`
/// read the client's first bytes there).
fn layer7_hash_in_tcp(cfg: &mut Config, diags: &mut Diagnostics) {
    use crate::model::BalanceKey;
    for p in &mut cfg.proxies {
        let tcp_backend = p.mode == Mode::Tcp && p.kind.is_backend();
        let layer4 = matches!(
            p.balance_key,
            Some(BalanceKey::Hash(_) | BalanceKey::RdpCookie(_))
        );
        if tcp_backend && p.balance == crate::model::Balance::Key && !layer4 {
            diags.push(
                Level::Warning,
                Some(&p.loc),
                format!(
                    "Layer 7 hash not possible for proxy '{}' (needs 'mode http'). Falling back to round robin.",
                    p.name
                ),
            );
            p.balance = crate::model::Balance::RoundRobin;
            p.balance_key = None;
        }
    }
}

fn mode_name(m: Mode) -> &'static str {
    match m {
        Mode::Tcp => "tcp",
        Mode::Http => "http",
    }
}

/// `option transparent` in a backend without `server` lines: one address
/// of its own, as `dispatch` makes, at `0.0.0.0` with the client's port,
/// which connects to the client's destination (after `set-dst`).
fn transparent(cfg: &mut Config, diags: &mut Diagnostics) {
    for p in cfg.proxies.iter_mut() {
        if !p.kind.is_backend() || !p.options.transparent {
            continue;
        }
        if !p.servers.is_empty() {
            diags.alert(
                &p.loc,
                format!(
                    "{} '{}': 'option transparent' beside 'server' or 'dispatch' lines is not supported by weir yet",
                    p.kind.keyword(),
                    p.name
                ),
            );
            continue;
        }
        match super::server::address_of_its_own(&p.default_server, "0.0.0.0", &p.loc) {
            Ok(s) => p.servers.push(s),
            Err(errs) => {
                for e in errs {
                    diags.alert(&p.loc, e);
                }
            }
        }
    }
}
