//! `tcp-request` and `tcp-response` keywords of a proxy section.

use crate::model::Proxy;
use crate::units::parse_duration;
use weir_rules::{TcpAction, TcpRuleSet};

/// Applies `tcp-request connection|session|content|inspect-delay` or
/// `tcp-response content|inspect-delay` (`name`) with its words.
pub(super) fn apply(
    p: &mut Proxy,
    name: &str,
    args: &[String],
    loc: &crate::diag::Loc,
) -> Result<(), String> {
    super::proxy::anonymous_defaults(p)?;
    let set = match name {
        "tcp-request inspect-delay" | "tcp-response inspect-delay" => {
            let [t] = args else {
                return Err("expects a timeout".into());
            };
            let t = Some(parse_duration(t)?);
            if name.starts_with("tcp-request") {
                p.tcp.inspect_delay = t;
            } else {
                p.tcp.response_inspect_delay = t;
            }
            return Ok(());
        }
        "tcp-request connection" => TcpRuleSet::Connection,
        "tcp-request session" => TcpRuleSet::Session,
        "tcp-request content" => TcpRuleSet::Content,
        _ => TcpRuleSet::Response,
    };
    let mut rule = {
        let lookup = super::http::lookup(p);
        weir_rules::parse_tcp_rule(set, args, &lookup, &super::http::load)?
    };
    rule.at = super::proxy::rule_at(loc);
    if let TcpAction::Capture { slot, len, .. } = &mut rule.action {
        // Capture slots are shared with `http-request capture`, in order.
        (*slot, *len) = super::capture::slot(p, false, None, *len)?;
    }
    let rules = match set {
        TcpRuleSet::Connection => &mut p.tcp.connection,
        TcpRuleSet::Session => &mut p.tcp.session,
        TcpRuleSet::Content => &mut p.tcp.content,
        TcpRuleSet::Response => &mut p.tcp.response,
    };
    rules.push(rule);
    Ok(())
}
