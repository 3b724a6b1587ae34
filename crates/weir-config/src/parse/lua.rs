//! Lua in the configuration: the `global` keywords that load scripts and
//! tune them, and the scan of proxy lines for the `lua.<name>` they use
//! (checked by the runtime once the scripts have registered their names).

use super::State;
use crate::diag::Loc;
use crate::model::{LuaLoad, LuaRef, LuaUse};
use crate::units::{parse_duration, parse_size};

/// The Lua keywords of `global`; `Ok(false)` for another family's.
pub(super) fn global(st: &mut State<'_>, words: &[String], loc: &Loc) -> Result<bool, String> {
    let kw = words[0].as_str();
    let lua = &mut st.config.global.lua;
    let one = |what: &str| match words {
        [_, v] => Ok(v.as_str()),
        _ => Err(format!("expects {what}")),
    };
    match kw {
        "lua-load" | "lua-load-per-thread" => {
            let (file, args) = words[1..]
                .split_first()
                .ok_or("expects the path of a Lua file")?;
            lua.loads.push(LuaLoad {
                per_thread: kw == "lua-load-per-thread",
                file: file.clone(),
                args: args.to_vec(),
                loc: loc.clone(),
            });
        }
        "lua-prepend-path" => {
            let cpath = match words.get(1..).unwrap_or_default() {
                [_] => false,
                [_, t] if t == "path" => false,
                [_, t] if t == "cpath" => true,
                [_, t] => {
                    return Err(format!(
                        "unknown path type '{t}' (expects 'path' or 'cpath')"
                    ))
                }
                _ => return Err("expects '<path> [path|cpath]'".into()),
            };
            lua.prepend.push((words[1].clone(), cpath));
        }
        "tune.lua.maxmem" => {
            let mb: usize = one("a number of megabytes")?
                .parse()
                .map_err(|_| "expects a number of megabytes".to_string())?;
            lua.maxmem = mb.saturating_mul(1024 * 1024);
        }
        "tune.lua.forced-yield" => {
            parse_size(one("a number")?)?;
            st.diags.push(
                crate::diag::Level::Notice,
                Some(loc),
                "'tune.lua.forced-yield' has no effect: weir does not interrupt a Lua function that runs without yielding",
            );
        }
        "tune.lua.session-timeout" | "tune.lua.service-timeout" | "tune.lua.task-timeout" => {
            let t = Some(parse_duration(one("a time")?)?);
            match kw {
                "tune.lua.session-timeout" => lua.session_timeout = t,
                "tune.lua.service-timeout" => lua.service_timeout = t,
                _ => lua.task_timeout = t,
            }
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// Records every `lua.<name>` of a proxy section's line.
pub(super) fn scan(st: &mut State<'_>, words: &[String], loc: &Loc) {
    for w in words.iter().filter(|w| w.contains("proc.")) {
        for (i, _) in w.match_indices("proc.") {
            let name: String = w[i..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '.' || *c == '_')
                .collect();
            let vars = &mut st.config.global.lua.proc_vars;
            if !vars.contains(&name) {
                vars.push(name);
            }
        }
    }
    if !words.iter().any(|w| w.contains("lua.")) {
        return;
    }
    let refs = &mut st.config.global.lua.refs;
    let mut push = |name: &str, what| {
        refs.push(LuaRef {
            name: name.to_string(),
            what,
            loc: loc.clone(),
        })
    };
    // The action word: `http-request lua.x`, `tcp-request content lua.x`,
    // `… use-service lua.x`.
    let (rules, act) = match words.first().map(String::as_str) {
        Some("http-request") => (Some((LuaUse::HttpReq, LuaUse::HttpService)), 1),
        Some("http-response" | "http-after-response") => {
            (Some((LuaUse::HttpRes, LuaUse::HttpRes)), 1)
        }
        Some("tcp-request") => (Some((LuaUse::TcpReq, LuaUse::TcpService)), 2),
        Some("tcp-response") => (Some((LuaUse::TcpRes, LuaUse::TcpRes)), 2),
        _ => (None, 0),
    };
    let mut skip = None;
    if let Some((action, service)) = rules {
        let w = words.get(act).map(String::as_str).unwrap_or_default();
        if let Some(n) = w.strip_prefix("lua.") {
            push(n, action);
            skip = Some(act);
        } else if w == "use-service" {
            if let Some(n) = words.get(act + 1).and_then(|s| s.strip_prefix("lua.")) {
                push(n, service);
                skip = Some(act + 1);
            }
        }
    }
    for (i, w) in words.iter().enumerate() {
        if Some(i) != skip {
            for (name, conv) in in_expr(w) {
                push(
                    name,
                    if conv {
                        LuaUse::Converter
                    } else {
                        LuaUse::Fetch
                    },
                );
            }
        }
    }
}

/// The `lua.<name>` of a word that holds expressions, each with whether
/// it is a converter (after a comma).
fn in_expr(w: &str) -> Vec<(&str, bool)> {
    let mut out = Vec::new();
    let b = w.as_bytes();
    let mut from = 0;
    while let Some(i) = w[from..].find("lua.").map(|i| i + from) {
        let before = i.checked_sub(1).and_then(|j| b.get(j)).copied();
        let start = i + 4;
        let len = w[start..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '-'))
            .unwrap_or(w.len() - start);
        let name = w[start..start + len].trim_end_matches('.');
        match before {
            None | Some(b'[' | b'{' | b'(' | b' ') if !name.is_empty() => out.push((name, false)),
            Some(b',') if !name.is_empty() => out.push((name, true)),
            _ => {}
        }
        from = start + len;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::in_expr;

    #[test]
    fn finds_fetches_and_converters() {
        assert_eq!(
            in_expr("lua.get_srv_stats(s1)"),
            vec![("get_srv_stats", false)]
        );
        assert_eq!(
            in_expr("%[lua.f(a),lua.c(1)] x %[src,lua.up]"),
            vec![("f", false), ("c", true), ("up", true)]
        );
        assert!(in_expr("hdr(x-lua.y)").is_empty());
        assert!(in_expr("lua.").is_empty());
    }
}
