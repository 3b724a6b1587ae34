//! `mailers` sections (manual §3.6) and the proxies' `email-alert`
//! keywords: where server state changes are mailed, and to whom.

use super::State;
use crate::diag::Loc;
use crate::model::{EmailAlert, Mailers, Proxy};
use crate::units::parse_duration;

/// Opens `mailers <name>`.
pub(super) fn open(st: &mut State<'_>, words: &[String], loc: &Loc) -> bool {
    match words.get(1) {
        Some(n) if words.len() == 2 => {
            if st.config.mailers.iter().any(|m| m.name == *n) {
                st.diags.alert(
                    loc,
                    format!("mailers section '{n}' has the same name as another"),
                );
            }
            st.config.mailers.push(Mailers {
                name: n.clone(),
                loc: loc.clone(),
                mailers: Vec::new(),
                timeout: std::time::Duration::from_secs(10),
            });
            true
        }
        _ => {
            st.diags.alert(loc, "'mailers' expects exactly one name");
            false
        }
    }
}

/// One line of the current `mailers` section.
pub(super) fn line(st: &mut State<'_>, words: &[String], loc: &Loc) {
    let Some(sec) = st.config.mailers.last_mut() else {
        return;
    };
    let kw = words.first().map_or("", String::as_str);
    let r = match (kw, words.get(1..).unwrap_or_default()) {
        ("mailer", [name, addr]) => addr
            .parse::<std::net::SocketAddr>()
            .map(|a| sec.mailers.push((name.clone(), a)))
            .map_err(|_| format!("'{addr}' is not an <ip>:<port>")),
        ("mailer", _) => Err("expects <name> <ip>:<port>".into()),
        ("timeout", [what, t]) if what == "mail" => parse_duration(t).map(|d| sec.timeout = d),
        ("timeout", _) => Err("expects 'mail' and a time".into()),
        _ => Err(format!(
            "unknown keyword '{kw}' in 'mailers' section (expects 'mailer' or 'timeout mail')"
        )),
    };
    if let Err(e) = r {
        st.diags.alert(loc, format!("'{kw}' : {e}"));
    }
}

/// `email-alert from|to|level|mailers|myhostname <value>`; `Ok(false)` for
/// another keyword.
pub(super) fn email_alert(p: &mut Proxy, name: &str, args: &[String]) -> Result<bool, String> {
    let Some(what) = name.strip_prefix("email-alert ") else {
        return Ok(false);
    };
    let [v] = args else {
        return Err(format!("'{name}' expects one argument"));
    };
    let e = &mut p.email_alert;
    match what {
        "from" => e.from = Some(v.clone()),
        "to" => e.to = Some(v.clone()),
        "mailers" => e.mailers = Some(v.clone()),
        "myhostname" => e.myhostname = Some(v.clone()),
        "level" => {
            let l = super::log::LEVELS
                .iter()
                .position(|l| l == v)
                .ok_or_else(|| format!("unknown log level '{v}'"))?;
            e.level = Some(l as u8);
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// At the end: a proxy with some `email-alert` settings needs `from`,
/// `to` and `mailers` (else its alerts are dropped with a warning, as
/// haproxy drops them), and its mailers must exist.
pub(super) fn finalize(cfg: &mut crate::Config, diags: &mut crate::diag::Diagnostics) {
    let names: Vec<String> = cfg.mailers.iter().map(|m| m.name.clone()).collect();
    for p in &mut cfg.proxies {
        let e = &p.email_alert;
        if *e == EmailAlert::default() || p.kind == crate::model::ProxyKind::Defaults {
            continue;
        }
        if e.from.is_none() || e.to.is_none() || e.mailers.is_none() {
            diags.push(
                crate::diag::Level::Warning,
                Some(&p.loc),
                format!(
                    "'email-alert' will be ignored for {} '{}' (the presence any of 'email-alert from', 'email-alert level' 'email-alert mailers', 'email-alert myhostname', or 'email-alert to' requires each of 'email-alert from', 'email-alert mailers' and 'email-alert to' to be present).",
                    p.kind.keyword(),
                    p.name
                ),
            );
            p.email_alert = EmailAlert::default();
            continue;
        }
        if let Some(m) = e.mailers.as_ref().filter(|m| !names.contains(m)) {
            diags.alert(
                &p.loc,
                format!("Proxy '{}': unable to find mailers '{m}'.", p.name),
            );
        }
    }
}
