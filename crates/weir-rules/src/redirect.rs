//! `redirect` rules and actions: what they rewrite, and their words.

use crate::acl::Loader;
use crate::fmt::Fmt;

/// What a redirect rewrites.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedirectKind {
    Location,
    Prefix,
    Scheme,
}

/// `redirect location|prefix|scheme <to> [code N] [drop-query] [append-slash]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Redirect {
    pub kind: RedirectKind,
    pub to: Fmt,
    pub code: u16,
    pub drop_query: bool,
    pub append_slash: bool,
    /// `ignore-empty`: a destination that renders empty skips the rule.
    pub ignore_empty: bool,
    /// `set-cookie NAME[=value]` (`false`) or `clear-cookie NAME[=]`
    /// (`true`): the cookie as written.
    pub cookie: Option<(String, bool)>,
}

/// Parses the words of a redirect (after `redirect`), its options in any
/// order.
pub fn parse_redirect(args: &[String], load: Loader<'_>) -> Result<Redirect, String> {
    let mut target = None;
    let mut r = Redirect {
        kind: RedirectKind::Location,
        to: Fmt::default(),
        code: 302,
        drop_query: false,
        append_slash: false,
        ignore_empty: false,
        cookie: None,
    };
    let mut it = args.iter();
    while let Some(w) = it.next() {
        match w.as_str() {
            "location" | "prefix" | "scheme" => {
                let to = it.next().ok_or("'redirect' expects a destination")?;
                r.kind = match w.as_str() {
                    "location" => RedirectKind::Location,
                    "prefix" => RedirectKind::Prefix,
                    _ => RedirectKind::Scheme,
                };
                target = Some(Fmt::parse(to, load)?);
            }
            "code" => {
                r.code = it
                    .next()
                    .and_then(|c| c.parse().ok())
                    .filter(|c| [301, 302, 303, 307, 308].contains(c))
                    .ok_or("'redirect code' expects 301, 302, 303, 307 or 308")?;
            }
            "drop-query" => r.drop_query = true,
            "append-slash" => r.append_slash = true,
            "ignore-empty" => r.ignore_empty = true,
            "set-cookie" | "clear-cookie" => {
                let c = it
                    .next()
                    .ok_or_else(|| format!("'redirect {w}' expects a cookie"))?;
                r.cookie = Some((c.clone(), w == "clear-cookie"));
            }
            o => return Err(format!("'redirect': unexpected '{o}'")),
        }
    }
    r.to = target.ok_or("'redirect' expects 'location', 'prefix' or 'scheme'")?;
    Ok(r)
}
