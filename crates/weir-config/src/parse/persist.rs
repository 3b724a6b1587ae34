//! The proxy keywords that choose a server other than by balancing, or
//! keep one: `use-server`, `force-persist`, `ignore-persist`, `cookie`,
//! `persist rdp-cookie`,
//! `option persist`, `option prefer-last-server`, `http-send-name-header`,
//! and the server state a backend loads at start
//! (`load-server-state-from-file`, `server-state-file-name`).

use super::State;
use crate::diag::Loc;
use crate::model::{LoadState, Proxy};

/// This family's keywords; `Ok(false)` for another family's.
pub(super) fn persistence(
    _st: &mut State<'_>,
    p: &mut Proxy,
    name: &str,
    args: &[String],
    negate: bool,
    loc: &Loc,
) -> Result<bool, String> {
    let flag = |args: &[String]| super::proxy::no_args(args).map(|_| !negate);
    match name {
        "use-server" => {
            let (name, cond) = weir_rules::split_cond(args);
            let [n] = name else {
                return Err(
                    "expects a server name followed by 'if' or 'unless' and a condition".into(),
                );
            };
            let cond = super::http::cond(p, cond)?
                .ok_or("requires either 'if' or 'unless' followed by a condition")?;
            let dynamic = if n.contains('%') {
                Some(weir_rules::Fmt::parse(n, &super::http::load)?)
            } else {
                None
            };
            p.use_servers.push(crate::model::UseServer {
                name: n.clone(),
                dynamic,
                cond,
                loc: loc.clone(),
            });
        }
        "force-persist" | "ignore-persist" => {
            let cond = super::http::cond(p, args)?
                .ok_or("requires either 'if' or 'unless' followed by a condition")?;
            if name == "force-persist" {
                p.force_persist.push(cond);
            } else {
                p.ignore_persist.push(cond);
            }
        }
        "load-server-state-from-file" => {
            p.load_state = match super::proxy::one(args, "'global', 'local' or 'none'")? {
                "global" => LoadState::Global,
                "local" => LoadState::Local,
                "none" => LoadState::None,
                o => return Err(format!("expects 'global', 'local' or 'none', got '{o}'")),
            };
        }
        "server-state-file-name" => {
            // No argument (or `use-backend-name`): the backend's name.
            p.state_file_name = match args {
                [] => None,
                [n] if n == "use-backend-name" => None,
                [n] => Some(n.clone()),
                _ => return Err("expects at most one file name".into()),
            };
        }
        "http-send-name-header" => {
            p.http.send_name_header = Some(super::proxy::one(args, "a header name")?.to_string());
        }
        "dynamic-cookie-key" => {
            p.dynamic_cookie_key = Some(super::proxy::one(args, "a key")?.to_string());
        }
        "cookie" => {
            if negate {
                p.cookie = None;
                return Ok(true);
            }
            p.cookie = Some(super::http::cookie(args)?);
        }
        "persist rdp-cookie" => {
            p.persist_rdp_cookie = Some(match args {
                [] => "msts".to_string(),
                [w] => super::balance::rdp_cookie_name(w, "msts")?,
                _ => return Err("expects no argument but a cookie name: rdp-cookie(<name>)".into()),
            });
        }
        "option persist" => p.options.persist = flag(args)?,
        "option checkcache" => p.options.checkcache = flag(args)?,
        "option prefer-last-server" => p.options.prefer_last_server = flag(args)?,
        // (`transparent` is its deprecated spelling.)
        "option transparent" | "transparent" => {
            p.options.transparent = flag(args)?;
            if p.options.transparent
                && p.kind != crate::model::ProxyKind::Defaults
                && !p.kind.is_backend()
            {
                return Err("only available in sections with backend capabilities".into());
            }
        }
        _ => return Ok(false),
    }
    Ok(true)
}

#[cfg(test)]
#[path = "persist_tests.rs"]
mod tests;
