//! `fcgi-app` sections (manual §10.1.1), `use-fcgi-app` and `filter
//! fcgi-app`, and the checks haproxy makes of them once the configuration
//! is read, in its words.

use super::State;
use crate::diag::{Diagnostics, Loc};
use crate::model::{Config, FcgiApp, FcgiParam, Proxy};
use std::sync::Arc;

/// Opens `fcgi-app <name>`.
pub(super) fn open(st: &mut State<'_>, words: &[String], loc: &Loc) -> bool {
    let Some(n) = words.get(1).filter(|_| words.len() == 2) else {
        st.diags.alert(loc, "'fcgi-app' expects exactly one name");
        return false;
    };
    if let Some(other) = st.config.fcgi_apps.iter().find(|a| a.name == *n) {
        let e = format!(
            "fcgi-app section '{n}' has the same name as another one declared at {}.",
            other.loc
        );
        st.diags.alert(loc, e);
    }
    st.config.fcgi_apps.push(FcgiApp::new(n, loc));
    true
}

/// One line of the current `fcgi-app` section.
pub(super) fn line(st: &mut State<'_>, words: &[String], loc: &Loc) {
    let env = |n: &str| st.env.get(n);
    let log = |args: &[String]| super::log::log_target_env(args, loc, &env);
    let Some(app) = st.config.fcgi_apps.last_mut() else {
        return;
    };
    let kw = words.first().map_or("", String::as_str);
    let args = words.get(1..).unwrap_or_default();
    let r = match (kw, args) {
        ("docroot", [p]) => {
            app.docroot = Some(p.clone());
            Ok(())
        }
        ("index", [p]) => {
            app.index = Some(p.clone());
            Ok(())
        }
        ("path-info", [re]) => regex::bytes::Regex::new(re)
            .map(|r| app.path_info = Some(r))
            .map_err(|e| format!("'{re}' : regex '{re}' is invalid ({e})")),
        ("docroot" | "index" | "path-info", _) => Err(format!("'{kw}' expects one argument")),
        ("acl", _) => acl(app, args),
        ("set-param", [name, fmt, cond @ ..]) => cond_of(app, cond, name).and_then(|cond| {
            let value = weir_rules::Fmt::parse(fmt, &super::http::load)?;
            app.set_params.push(FcgiParam {
                name: name.to_ascii_uppercase(),
                value,
                cond,
            });
            Ok(())
        }),
        ("set-param", _) => Err("'set-param' expects a name and a value".into()),
        ("pass-header", [name, cond @ ..]) => cond_of(app, cond, name).map(|cond| {
            app.pass_headers.push((name.to_ascii_lowercase(), cond));
        }),
        ("pass-header", _) => Err("'pass-header' expects a header name".into()),
        ("log-stderr", [g]) if g == "global" => {
            app.log_stderr_global = true;
            Ok(())
        }
        ("log-stderr", _) => log(args).map(|t| app.log_stderr.push(t)),
        ("option" | "no", _) => option(app, words).map(|noted| {
            if let Some(o) = noted {
                let note = format!("'option {o}' accepted: weir sends one request at a time on a FastCGI connection and does not ask the application");
                st.diags.push(crate::diag::Level::Notice, Some(loc), note);
            }
        }),
        _ => Err(format!("unknown keyword '{kw}' in 'fcgi-app' section")),
    };
    if let Err(e) = r {
        st.diags.alert(loc, e);
    }
}

/// `acl <name> <criterion> …`: the section's own.
fn acl(app: &mut FcgiApp, args: &[String]) -> Result<(), String> {
    let name = args.first().ok_or("'acl' expects an ACL name")?;
    let acl = weir_rules::Acl::parse(args.get(1..).unwrap_or_default(), &super::http::load)?;
    match app.acls.iter_mut().find(|(n, _)| n == name) {
        Some((_, v)) => v.push(acl),
        None => app.acls.push((name.clone(), vec![acl])),
    }
    Ok(())
}

/// An optional `if|unless <cond>` against the section's ACLs.
fn cond_of(
    app: &FcgiApp,
    words: &[String],
    what: &str,
) -> Result<Option<weir_rules::Cond>, String> {
    if words.is_empty() {
        return Ok(None);
    }
    let lookup = |name: &str| {
        app.acls
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| Arc::from(v.clone()))
    };
    weir_rules::Cond::parse(words, &lookup, &super::http::load)
        .map(Some)
        .map_err(|e| format!("'{what}' : {e}"))
}

/// `[no] option get-values|keep-conn|mpxs-conns`, `option max-reqs <n>`:
/// the name of an option that changes nothing in weir, for a note.
fn option<'w>(app: &mut FcgiApp, words: &'w [String]) -> Result<Option<&'w str>, String> {
    let (on, rest) = match words {
        [no, o, rest @ ..] if no == "no" && o == "option" => (false, rest),
        [o, rest @ ..] if o == "option" => (true, rest),
        _ => return Err("'no' expects 'option'".into()),
    };
    match rest {
        [o] if o == "keep-conn" => app.keep_conn = on,
        [o] if o == "get-values" => {
            app.get_values = on;
            return Ok(on.then_some(o.as_str()));
        }
        [o] if o == "mpxs-conns" => {
            app.mpxs_conns = on;
            return Ok(on.then_some(o.as_str()));
        }
        [o, n] if o == "max-reqs" && on => {
            app.max_reqs = match n.parse::<u32>() {
                Ok(n) if n > 0 => n,
                _ => {
                    return Err(format!(
                        "'option max-reqs' expects a positive integer, got '{n}'"
                    ))
                }
            };
            return Ok(Some(o.as_str()));
        }
        [o, ..] => return Err(format!("unknown option '{o}' in 'fcgi-app' section")),
        [] => return Err("'option' expects an option name".into()),
    }
    Ok(None)
}

/// `use-fcgi-app <name>` (or `filter fcgi-app <name>`) in a proxy.
pub(super) fn use_app(p: &mut Proxy, name: &str, loc: &Loc) -> Result<(), String> {
    match &p.use_fcgi_app {
        Some((n, _)) if n != name => Err("only one fcgi-app supported per backend".into()),
        _ => {
            p.use_fcgi_app = Some((name.to_string(), loc.clone()));
            Ok(())
        }
    }
}

/// The checks once every section is read: each application has a
/// document root; a backend's application exists, runs in HTTP mode and
/// has an FCGI server; an FCGI server has an application.
pub(super) fn checked(cfg: &Config, diags: &mut Diagnostics) {
    for a in &cfg.fcgi_apps {
        if a.docroot.is_none() {
            diags.alert(
                &a.loc,
                format!("fcgi-app '{}': no docroot configured.", a.name),
            );
        }
    }
    for p in cfg.proxies.iter().filter(|p| p.kind.is_backend()) {
        let fcgi = p.servers.iter().find(|s| s.fcgi);
        match (&p.use_fcgi_app, fcgi) {
            (Some((name, loc)), _) if !cfg.fcgi_apps.iter().any(|a| a.name == *name) => {
                diags.alert(
                    loc,
                    format!("proxy '{}' : fcgi-app '{name}' not found.", p.name),
                );
            }
            (Some(_), _) if p.mode != crate::model::Mode::Http => diags.alert(
                &p.loc,
                format!(
                    "proxy '{}': FCGI application cannot be used in non-HTTP mode.",
                    p.name
                ),
            ),
            (Some(_), None) => diags.alert(
                &p.loc,
                format!(
                    "proxy '{}': FCGI app configured but no FCGI server found.",
                    p.name
                ),
            ),
            (None, Some(s)) => diags.alert(
                &p.loc,
                format!(
                    "proxy '{}': FCGI server '{}' has no FCGI app configured.",
                    p.name, s.name
                ),
            ),
            _ => {}
        }
    }
}

#[cfg(test)]
#[path = "fcgi_tests.rs"]
mod tests;
