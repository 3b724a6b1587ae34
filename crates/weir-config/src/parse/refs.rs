//! What fetches, converters and rules name outside their own line — stick
//! tables, backends, frontends, servers — checked once every section is
//! read, with haproxy's messages ("unable to find table …").

use super::State;
use crate::diag::Loc;
use weir_rules::live::Live;

/// What a reference names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Target {
    /// A stick table (`None`: the proxy's own).
    Table(Option<String>),
    /// A backend (`None`: the proxy itself).
    Backend(Option<String>),
    Frontend(Option<String>),
    /// `[<backend>/]<server>`.
    Server(String),
    /// A `peers` section (`stick-table … peers <name>`).
    Peers(String),
}

/// One reference, with the line that made it.
#[derive(Debug, Clone)]
pub(crate) struct Ref {
    pub proxy: String,
    pub target: Target,
    /// What named it, for the message.
    pub by: String,
    pub loc: Loc,
}

/// The references a proxy line's words make: `track-sc* … [table <t>]`,
/// `stick … [table <t>]`, and the fetches and converters of its
/// expressions.
pub(crate) fn refs_in(proxy: &str, words: &[String], loc: &Loc) -> Vec<Ref> {
    let mut out = Vec::new();
    let r = |target: Target, by: String| Ref {
        proxy: proxy.to_string(),
        target,
        by,
        loc: loc.clone(),
    };
    if words.first().is_some_and(|w| w == "stick-table") {
        if let Some(i) = words.iter().position(|w| w == "peers") {
            if let Some(n) = words.get(i + 1) {
                out.push(r(Target::Peers(n.clone()), "stick-table".into()));
            }
        }
    }
    if words.first().is_some_and(|w| w == "stick") {
        let (head, _) = weir_rules::split_cond(words.get(2..).unwrap_or_default());
        let table = match head {
            [_, t, n] if t == "table" => Some(n.clone()),
            _ => None,
        };
        let what = words.get(1).map_or("", |w| w.as_str());
        out.push(r(Target::Table(table), format!("stick {what}")));
    }
    for (i, w) in words.iter().enumerate() {
        if let Some(n) = w.strip_prefix("track-sc").filter(|n| n.len() == 1) {
            let table = match (words.get(i + 2), words.get(i + 3)) {
                (Some(t), Some(name)) if t == "table" => Some(name.clone()),
                _ => None,
            };
            out.push(r(Target::Table(table), format!("track-sc{n}")));
        }
        for (name, args) in calls(w) {
            let kw = format!("sample fetch keyword '{name}'");
            if let Some(Ok(f)) = weir_rules::stick::parse_fetch(&name, &args) {
                let own = !matches!(f.from, weir_rules::stick::From::Slot(_));
                if f.table.is_some() || own {
                    out.push(r(Target::Table(f.table), format!("ACL keyword '{name}'")));
                }
            } else if let Some(Ok(c)) = weir_rules::stick::parse_conv(&name, &args) {
                out.push(r(
                    Target::Table(Some(c.table)),
                    format!("conversion keyword '{name}'"),
                ));
            } else if let Some(Ok(l)) = weir_rules::live::parse(&name, &args) {
                let named = |s: &String| (!s.is_empty()).then(|| s.clone());
                let t = match &l {
                    Live::Srv(_, s) => Target::Server(s.clone()),
                    Live::FeSessRate(f) | Live::FeReqRate(f) => Target::Frontend(named(f)),
                    Live::Queue(b)
                    | Live::AvgQueue(b)
                    | Live::BeConnFree(b)
                    | Live::Connslots(b)
                    | Live::BeSessRate(b) => Target::Backend(named(b)),
                    _ => continue,
                };
                out.push(r(t, kw));
            } else if matches!(name.as_str(), "nbsrv" | "be_conn") {
                out.push(r(Target::Backend(args.first().cloned()), kw));
            }
        }
    }
    out
}

/// The `name(args)` calls and bare names in a word that could name a
/// table, a proxy or a server.
fn calls(w: &str) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    let b = w.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'.';
    let mut i = 0;
    while i < b.len() {
        let starts = b.get(i).copied().is_some_and(ident)
            && (i == 0 || !b.get(i - 1).copied().is_some_and(|c| ident(c) || c == b'-'));
        if !starts {
            i += 1;
            continue;
        }
        let end = (i..b.len())
            .find(|&j| !b.get(j).copied().is_some_and(ident))
            .unwrap_or(b.len());
        let name = w.get(i..end).unwrap_or_default();
        let (args, next) = match w.get(end..).filter(|r| r.starts_with('(')) {
            Some(rest) => match rest.find(')') {
                Some(c) => (
                    rest.get(1..c)
                        .unwrap_or_default()
                        .split(',')
                        .map(|s| s.trim().to_string())
                        .filter(|s| !s.is_empty())
                        .collect(),
                    end + c + 1,
                ),
                None => (Vec::new(), end),
            },
            None => (Vec::new(), end),
        };
        out.push((name.to_string(), args));
        i = next.max(i + 1);
    }
    out
}

/// Checks every reference against the sections read.
pub(super) fn check(st: &mut State<'_>, refs: &[Ref]) {
    for r in refs {
        if let Some(msg) = problem(st, r) {
            st.diags.alert(&r.loc, msg);
        }
    }
}

/// What is wrong with `r`, if anything.
fn problem(st: &State<'_>, r: &Ref) -> Option<String> {
    use crate::model::ProxyKind;
    let proxies = &st.config.proxies;
    let find = |n: &str| proxies.iter().find(|p| p.name == n);
    let own = &r.proxy;
    let tail = format!("referenced in arg 1 of {} in proxy '{own}'", r.by);
    match &r.target {
        Target::Table(t) => {
            let want = t.as_deref().unwrap_or(own);
            let found = find(want).is_some_and(|p| p.stick_table.is_some())
                || st
                    .config
                    .peers
                    .iter()
                    .any(|s| s.tables.iter().any(|t| t.def.name == want));
            (!found).then(|| {
                format!(
                    "unable to find table '{want}' referenced by {} in proxy '{own}'",
                    r.by
                )
            })
        }
        Target::Backend(None) | Target::Frontend(None) => None,
        Target::Peers(n) => (!st.config.peers.iter().any(|s| s.name == *n))
            .then(|| format!("unable to find sync peers '{n}' in proxy '{own}'")),
        Target::Backend(Some(want)) => {
            let found = find(want).is_some_and(|p| p.kind.is_backend());
            (!found).then(|| format!("unable to find backend '{want}' {tail}"))
        }
        Target::Frontend(Some(want)) => {
            let found = find(want).is_some_and(|p| p.kind.is_frontend());
            (!found).then(|| format!("unable to find frontend '{want}' {tail}"))
        }
        Target::Server(s) => {
            let (px, srv) = match s.split_once('/') {
                Some((b, s)) => (b, s),
                None => (own.as_str(), s.as_str()),
            };
            let Some(p) = find(px).filter(|p| p.kind != ProxyKind::Defaults) else {
                return Some(if s.contains('/') {
                    format!("unable to find proxy '{px}' {tail}")
                } else {
                    format!(
                        "backend name must be set in arg 1 of {} in proxy '{own}'",
                        r.by
                    )
                });
            };
            let found = p.servers.iter().any(|x| x.name == srv);
            (!found).then(|| {
                format!(
                    "unable to find server '{srv}' in proxy '{px}', referenced in arg 1 of {} in proxy '{own}'",
                    r.by
                )
            })
        }
    }
}
