//! The file of a `filter spoe` line (haproxy's doc/SPOE.txt §2): its
//! scope (`[engine]`), the `spoe-agent`, `spoe-message` and `spoe-group`
//! sections; errors name the file's lines.

use crate::diag::{Diagnostics, Loc};
use crate::model::{SpoeAgent, SpoeEngine, SpoeEvent, SpoeGroup, SpoeMessage};
use crate::units::parse_duration;

/// The largest frame (haproxy's default buffer less the length field).
const MAX_FRAME: u32 = 16380;

/// Reads the engine `engine` (or the whole file without one) of `path`
/// for the filter line at `at`. `Err` is the filter line's error; the
/// file's own errors are alerts at its lines (then `Err("")`).
pub(super) fn engine(
    path: &str,
    engine: Option<&str>,
    at: &Loc,
    diags: &mut Diagnostics,
) -> Result<SpoeEngine, String> {
    let text = crate::files::read_to_string(path)
        .map_err(|e| format!("failed to open SPOE file '{path}' : {e}"))?;
    let mut r = Reader {
        path,
        agent: None,
        messages: Vec::new(),
        groups: Vec::new(),
        acls: Vec::new(),
        section: Section::None,
        errors: 0,
    };
    let mut scope: Option<String> = None;
    for (i, line) in text.lines().enumerate() {
        let loc = Loc {
            file: path.to_string(),
            line: i + 1,
        };
        let words = match crate::lexer::tokenize(line, &|n: &str| std::env::var(n).ok()) {
            Ok(w) => w,
            Err(e) => {
                r.alert(diags, &loc, e);
                continue;
            }
        };
        let Some(first) = words.first() else {
            continue;
        };
        if let Some(name) = first.strip_prefix('[').and_then(|s| s.strip_suffix(']')) {
            if engine.is_none() {
                r.alert(
                    diags,
                    &loc,
                    "a SPOE scope in a file read without an engine name",
                );
            }
            scope = Some(name.to_string());
            r.section = Section::None;
            continue;
        }
        if engine.is_some() && scope.as_deref() != engine {
            continue;
        }
        if let Err(e) = r.line(&words, &loc) {
            r.alert(diags, &loc, e);
        }
    }
    if r.errors > 0 {
        return Err(String::new());
    }
    r.finish(engine, at, diags)
}

#[derive(Clone, Copy)]
enum Section {
    None,
    Agent,
    Message,
    Group,
}

struct Reader<'a> {
    path: &'a str,
    agent: Option<SpoeAgent>,
    messages: Vec<SpoeMessage>,
    groups: Vec<SpoeGroup>,
    /// The current message's `acl` lines.
    acls: Vec<(String, Vec<weir_rules::Acl>)>,
    section: Section,
    errors: usize,
}

impl Reader<'_> {
    fn alert(&mut self, diags: &mut Diagnostics, loc: &Loc, msg: impl Into<String>) {
        self.errors += 1;
        diags.alert(loc, msg);
    }

    fn line(&mut self, w: &[String], loc: &Loc) -> Result<(), String> {
        let name = || {
            w.get(1)
                .cloned()
                .ok_or_else(|| format!("'{}' expects a name", w[0]))
        };
        match w[0].as_str() {
            "spoe-agent" => {
                if self.agent.is_some() {
                    return Err("only one 'spoe-agent' is allowed in a SPOE scope".into());
                }
                let name = name()?;
                self.agent = Some(SpoeAgent {
                    var_prefix: name.clone(),
                    name,
                    loc: loc.clone(),
                    backend: String::new(),
                    hello: None,
                    idle: None,
                    processing: None,
                    set_on_error: None,
                    set_process_time: None,
                    set_total_time: None,
                    continue_on_error: false,
                    max_frame_size: MAX_FRAME,
                    messages: Vec::new(),
                    groups: Vec::new(),
                });
                self.section = Section::Agent;
            }
            "spoe-message" => {
                let name = name()?;
                if self.messages.iter().any(|m| m.name == name) {
                    return Err(format!("SPOE message '{name}' already declared"));
                }
                self.messages.push(SpoeMessage {
                    name,
                    args: Vec::new(),
                    event: None,
                });
                self.acls.clear();
                self.section = Section::Message;
            }
            "spoe-group" => {
                let name = name()?;
                if self.groups.iter().any(|g| g.name == name) {
                    return Err(format!("SPOE group '{name}' already declared"));
                }
                self.groups.push(SpoeGroup {
                    name,
                    messages: Vec::new(),
                });
                self.section = Section::Group;
            }
            _ => match self.section {
                Section::Agent => self.agent_line(w)?,
                Section::Message => self.message_line(w)?,
                Section::Group => self.group_line(w)?,
                Section::None => return Err(format!("unknown keyword '{}' out of section", w[0])),
            },
        }
        Ok(())
    }

    fn agent_line(&mut self, w: &[String]) -> Result<(), String> {
        let Some(a) = self.agent.as_mut() else {
            return Ok(());
        };
        let args: Vec<&str> = w.iter().map(String::as_str).collect();
        let var_name = |v: &str| -> Result<String, String> {
            if !v.is_empty()
                && v.bytes()
                    .all(|c| c.is_ascii_alphanumeric() || b"._".contains(&c))
            {
                Ok(v.to_string())
            } else {
                Err(format!(
                    "invalid variable name '{v}' (only 'a-z', 'A-Z', '0-9', '.' and '_')"
                ))
            }
        };
        match args.as_slice() {
            ["messages", names @ ..] if !names.is_empty() => {
                a.messages.extend(names.iter().map(|n| n.to_string()))
            }
            ["groups", names @ ..] if !names.is_empty() => {
                a.groups.extend(names.iter().map(|n| n.to_string()))
            }
            ["use-backend", b] => a.backend = b.to_string(),
            ["timeout", which @ ("hello" | "idle" | "processing"), t] => {
                let t = Some(parse_duration(t)?).filter(|t| !t.is_zero());
                match *which {
                    "hello" => a.hello = t,
                    "idle" => a.idle = t,
                    _ => a.processing = t,
                }
            }
            ["option", "var-prefix", p] => a.var_prefix = var_name(p)?,
            ["option", "set-on-error", v] => a.set_on_error = Some(var_name(v)?),
            ["option", "set-process-time", v] => a.set_process_time = Some(var_name(v)?),
            ["option", "set-total-time", v] => a.set_total_time = Some(var_name(v)?),
            ["option", "continue-on-error"] => a.continue_on_error = true,
            // Capabilities weir does not announce (one exchange at a time
            // per connection), and variables it sets whatever their name.
            ["option" | "no", ..] if is_noted_option(&args) => {}
            ["register-var-names", names @ ..] if !names.is_empty() => {
                for n in names {
                    var_name(n)?;
                }
            }
            ["max-frame-size", n] => {
                let n: u32 = n
                    .parse()
                    .map_err(|_| format!("invalid max-frame-size '{n}'"))?;
                if !(256..=MAX_FRAME).contains(&n) {
                    return Err(format!(
                        "max-frame-size must be in the range [256, {MAX_FRAME}]"
                    ));
                }
                a.max_frame_size = n;
            }
            ["log", "global"] | ["no", "log"] => {}
            [k @ ("maxconnrate" | "maxerrrate" | "max-waiting-frames" | "log"), ..] => {
                return Err(format!(
                    "'{k}' in a 'spoe-agent' section is not supported by weir yet"
                ))
            }
            _ => {
                return Err(format!(
                    "unknown or malformed keyword '{}' in 'spoe-agent' section",
                    w.join(" ")
                ))
            }
        }
        Ok(())
    }

    fn message_line(&mut self, w: &[String]) -> Result<(), String> {
        let load = super::http::load;
        match w[0].as_str() {
            "args" => {
                for a in &w[1..] {
                    let (name, expr) = match a.split_once('=') {
                        Some((n, e)) if !n.contains('(') => (n.to_string(), e),
                        _ => (String::new(), a.as_str()),
                    };
                    let expr =
                        weir_rules::Expr::parse(expr, &load).map_err(|e| format!("'args': {e}"))?;
                    if let Some(m) = self.messages.last_mut() {
                        m.args.push((name, expr));
                    }
                }
            }
            "acl" => {
                let name = w.get(1).ok_or("'acl' expects a name")?.clone();
                let acl = weir_rules::Acl::parse(w.get(2..).unwrap_or_default(), &load)?;
                match self.acls.iter_mut().find(|(n, _)| *n == name) {
                    Some((_, v)) => v.push(acl),
                    None => self.acls.push((name, vec![acl])),
                }
            }
            "event" => {
                let ev = match w.get(1).map(String::as_str) {
                    Some("on-client-session") => SpoeEvent::ClientSession,
                    Some("on-frontend-http-request") => SpoeEvent::FrontendHttpRequest,
                    Some("on-frontend-tcp-request") => SpoeEvent::FrontendTcpRequest,
                    Some("on-backend-http-request") => SpoeEvent::BackendHttpRequest,
                    Some("on-http-response") => SpoeEvent::HttpResponse,
                    Some(
                        e @ ("on-server-session" | "on-backend-tcp-request" | "on-tcp-response"),
                    ) => return Err(format!("SPOE event '{e}' is not supported by weir yet")),
                    Some(e) => return Err(format!("unknown SPOE event '{e}'")),
                    None => return Err("'event' expects an event name".into()),
                };
                let cond_words = w.get(2..).unwrap_or_default();
                let cond = if cond_words.is_empty() {
                    None
                } else {
                    let acls = &self.acls;
                    let lookup = |n: &str| {
                        acls.iter()
                            .find(|(a, _)| a == n)
                            .map(|(_, v)| std::sync::Arc::from(v.clone()))
                    };
                    Some(weir_rules::Cond::parse(cond_words, &lookup, &load)?)
                };
                if let Some(m) = self.messages.last_mut() {
                    m.event = Some((ev, cond));
                }
            }
            k => return Err(format!("unknown keyword '{k}' in 'spoe-message' section")),
        }
        Ok(())
    }

    fn group_line(&mut self, w: &[String]) -> Result<(), String> {
        match (w[0].as_str(), self.groups.last_mut()) {
            ("messages", Some(g)) if w.len() > 1 => g.messages.extend(w[1..].iter().cloned()),
            (k, _) => {
                return Err(format!(
                    "unknown or malformed keyword '{k}' in 'spoe-group' section"
                ))
            }
        }
        Ok(())
    }

    /// The engine, once the file is read: its agent, and the messages and
    /// groups the agent names.
    fn finish(
        self,
        engine: Option<&str>,
        at: &Loc,
        diags: &mut Diagnostics,
    ) -> Result<SpoeEngine, String> {
        let agent = self
            .agent
            .ok_or_else(|| format!("No SPOE agent found in file {}", self.path))?;
        if agent.backend.is_empty() {
            return Err(format!(
                "SPOE agent '{}' declared at {} has no 'use-backend'",
                agent.name, agent.loc
            ));
        }
        for m in &agent.messages {
            if !self.messages.iter().any(|x| x.name == *m) {
                return Err(format!(
                    "SPOE agent '{}': unable to find SPOE message '{m}'",
                    agent.name
                ));
            }
        }
        for g in &agent.groups {
            let Some(group) = self.groups.iter().find(|x| x.name == *g) else {
                return Err(format!(
                    "SPOE agent '{}': unable to find SPOE group '{g}'",
                    agent.name
                ));
            };
            for m in &group.messages {
                if !self.messages.iter().any(|x| x.name == *m) {
                    return Err(format!(
                        "SPOE group '{g}': unable to find SPOE message '{m}'"
                    ));
                }
            }
        }
        if agent.hello.is_none() || agent.idle.is_none() || agent.processing.is_none() {
            diags.warn(
                at,
                format!(
                    "missing timeouts for SPOE agent '{}' declared at {} (set 'hello', 'idle' and 'processing'; without 'processing' weir gives up on an agent after 30 s)",
                    agent.name, agent.loc
                ),
            );
        }
        Ok(SpoeEngine {
            id: engine.map_or_else(|| agent.name.clone(), str::to_string),
            agent,
            messages: self.messages,
            groups: self.groups,
            loc: at.clone(),
        })
    }
}

/// Agent options weir takes with a note: capabilities it does not
/// announce (`async`, `pipelining`, `send-frag-payload`), `dontlog-normal`
/// (no SPOE log lines), `force-set-var` (it sets what the agent sends).
fn is_noted_option(w: &[&str]) -> bool {
    let w = if w.first() == Some(&"no") { &w[1..] } else { w };
    matches!(
        w,
        [
            "option",
            "async" | "pipelining" | "send-frag-payload" | "dontlog-normal" | "force-set-var"
        ]
    )
}
