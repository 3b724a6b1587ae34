//! The stats page's keywords in a proxy (`stats enable|uri|realm|auth|
//! refresh|admin|http-request` …): what the page shows and who may see it.

use super::proxy::one;
use crate::model::Proxy;
use crate::units::parse_duration;

/// `stats enable|uri|realm|auth|refresh|hide-version|show-legends|scope|
/// admin`: each enables the page and sets its part.
pub(super) fn stats_page(p: &mut Proxy, kw: &str, args: &[String]) -> Result<(), String> {
    let cond = if kw == "stats admin" {
        let (_, c) = weir_rules::split_cond(args);
        if c.is_empty() {
            return Err("'stats admin' expects 'if' or 'unless' followed by a condition".into());
        }
        super::http::cond(p, c)?
    } else {
        None
    };
    if kw == "stats http-request" {
        let rule = stats_rule(p, args)?;
        let page = p.stats.get_or_insert_with(crate::model::StatsPage::default);
        if !page.auth.is_empty() || page.realm_set {
            return Err(STATS_EXCLUSIVE.into());
        }
        page.rules.push(rule);
        return Ok(());
    }
    let page = p.stats.get_or_insert_with(crate::model::StatsPage::default);
    if matches!(kw, "stats auth" | "stats realm") && !page.rules.is_empty() {
        return Err(STATS_EXCLUSIVE.into());
    }
    match kw {
        "stats enable" | "stats hide-version" | "stats show-legends" => {
            if !args.is_empty() {
                return Err(format!("'{kw}' takes no argument"));
            }
            page.hide_version |= kw == "stats hide-version";
            page.show_legends |= kw == "stats show-legends";
        }
        "stats show-node" => page.show_node = Some(args.first().cloned().unwrap_or_default()),
        "stats show-desc" => page.show_desc = Some(args.join(" ")),
        "stats uri" => page.uri = one(args, "a URI prefix")?.to_string(),
        "stats realm" => {
            page.realm = one(args, "a realm")?.to_string();
            page.realm_set = true;
        }
        "stats auth" => {
            let a = one(args, "<user>:<password>")?;
            let (u, pw) = a
                .split_once(':')
                .ok_or("'stats auth' expects <user>:<password>")?;
            page.auth.push((u.to_string(), pw.to_string()));
        }
        "stats refresh" => page.refresh = Some(parse_duration(one(args, "a delay")?)?),
        "stats scope" => page
            .scope
            .push(one(args, "a proxy name or '.'")?.to_string()),
        "stats admin" => page.admin.extend(cond),
        _ => return Err(format!("'{kw}' is not supported by weir")),
    }
    Ok(())
}

const STATS_EXCLUSIVE: &str =
    "stats 'auth'/'realm' and 'http-request' can't be used at the same time";

/// A `stats http-request allow|deny|auth [realm <realm>] [if|unless …]`.
fn stats_rule(p: &Proxy, args: &[String]) -> Result<crate::model::StatsRule, String> {
    use crate::model::StatsAction;
    if p.kind == crate::model::ProxyKind::Defaults {
        return Err("'stats http-request' is not allowed in a 'defaults' section".into());
    }
    let (words, c) = weir_rules::split_cond(args);
    let action = match words {
        [a] if a == "allow" => StatsAction::Allow,
        [a] if a == "deny" => StatsAction::Deny,
        [a] if a == "auth" => StatsAction::Auth(None),
        [a, r, realm] if a == "auth" && r == "realm" => StatsAction::Auth(Some(realm.clone())),
        _ => {
            return Err(format!(
                "'stats http-request' expects 'allow', 'deny' or 'auth [realm <realm>]', got '{}'",
                words.join(" ")
            ))
        }
    };
    Ok(crate::model::StatsRule {
        action,
        cond: super::http::cond(p, c)?,
    })
}
