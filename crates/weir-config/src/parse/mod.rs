//! The staged parser: files → lines → words (lexer) → conditional blocks →
//! sections → typed `Config`, then cross-section checks. Every problem is
//! collected with its `file:line`; nothing stops at the first error.

mod balance;
mod bind;
mod cache;
mod capture;
#[cfg(test)]
mod capture_tests;
mod check;
mod fcgi;
mod filter;
mod finalize;
mod global;
mod http;
mod ids;
mod log;
mod logfwd;
mod lua;
mod mailers;
mod peers;
mod persist;
mod program;
mod proxy;
mod refs;
mod resolvers;
mod server;
mod spoe;
mod stats;
mod stick;
#[cfg(test)]
mod stick_tests;
mod tcp;
#[cfg(test)]
mod tests;

pub use global::{parse_set, stats_socket, thread_cpus};
pub use server::dynamic_server;

use crate::cond::{self, CondEnv};
use crate::diag::{did_you_mean, Diagnostics, Level, Loc};
use crate::keywords::{Status, SECTIONS};
use crate::lexer::tokenize;
use crate::model::{Config, Proxy, ProxyKind};
use std::collections::HashMap;

/// One configuration file's name and text.
#[derive(Debug, Clone)]
pub struct Source {
    pub name: String,
    pub text: String,
}

/// The outcome of a parse: a config when no alert was raised, and every
/// diagnostic (warnings included) in file order.
#[derive(Debug)]
pub struct Parsed {
    pub config: Option<Config>,
    pub diagnostics: Diagnostics,
}

/// Environment seen by the parser: the process environment plus what
/// `setenv`/`presetenv`/`unsetenv`/`resetenv` changed.
pub(crate) struct Env<'a> {
    base: &'a dyn Fn(&str) -> Option<String>,
    overrides: HashMap<String, Option<String>>,
    reset: Option<Vec<String>>,
}

impl Env<'_> {
    pub(crate) fn get(&self, name: &str) -> Option<String> {
        if let Some(v) = self.overrides.get(name) {
            return v.clone();
        }
        if let Some(keep) = &self.reset {
            if !keep.iter().any(|k| k == name) {
                return None;
            }
        }
        (self.base)(name)
    }
    pub(crate) fn set(&mut self, name: &str, value: Option<String>) {
        self.overrides.insert(name.to_string(), value);
    }
    pub(crate) fn reset_except(&mut self, keep: Vec<String>) {
        self.overrides.retain(|k, _| keep.contains(k));
        self.reset = Some(keep);
    }
    /// Variables set by the configuration, to export to the process.
    pub fn overrides(&self) -> &HashMap<String, Option<String>> {
        &self.overrides
    }
}

#[derive(Clone, PartialEq, Eq)]
enum Section {
    None,
    Global,
    Proxy,
    /// `http-errors <name>`: its `errorfile` lines.
    HttpErrors(String),
    /// `userlist <name>`: its `user` and `group` lines.
    Userlist(String),
    /// The last `peers` section.
    Peers,
    /// The last `resolvers` section.
    Resolvers,
    /// The last `mailers` section.
    Mailers,
    /// The last `cache` section.
    Cache,
    /// The last `fcgi-app` section.
    FcgiApp,
    /// The last `program` section.
    Program,
    /// The last `ring`, `log-forward` section.
    Ring,
    LogForward,
    Skipped,
}

struct CondFrame {
    /// This level's lines are being taken.
    active: bool,
    /// A branch of this level was already taken.
    done: bool,
    seen_else: bool,
    loc: Loc,
}

/// Parses every source in order as one configuration. `env` reads the
/// process environment. Never panics on any input.
pub fn parse(sources: &[Source], env: &dyn Fn(&str) -> Option<String>) -> Parsed {
    let mut st = State {
        diags: Diagnostics::default(),
        env: Env {
            base: env,
            overrides: HashMap::new(),
            reset: None,
        },
        config: Config::default(),
        section: Section::None,
        section_name: String::new(),
        defaults: Proxy::new("", ProxyKind::Defaults, Loc::default()),
        named_defaults: HashMap::new(),
        rule_defaults: HashMap::new(),
        current: None,
        nbproc_warned: false,
        http_errors: HashMap::new(),
        default_path: None,
        file: String::new(),
        userlists: HashMap::new(),
        userlist_refs: Vec::new(),
        refs: Vec::new(),
    };
    crate::files::set_base(None);
    for src in sources {
        st.config.files.push(src.name.clone());
        st.file = src.name.clone();
        // Each file's relative paths start from its own place under the
        // policy read so far (as HAProxy changes directory per file).
        let dir = st.default_path.as_ref().and_then(|p| p.dir(&src.name));
        st.set_default_dir(dir, None);
        st.parse_file(src);
    }
    crate::files::set_base(None);
    st.close_section();
    http::resolve_errorfiles(&mut st.config, &st.http_errors, &mut st.diags);
    for (name, loc) in &st.userlist_refs {
        if !st.userlists.contains_key(name) {
            st.diags.alert(loc, format!("no such userlist '{name}'"));
        }
    }
    let refs = std::mem::take(&mut st.refs);
    refs::check(&mut st, &refs);
    logfwd::check_rings(&mut st);
    program::check(&mut st);
    stick::store_servers(&mut st);
    let mut lists: Vec<_> = std::mem::take(&mut st.userlists).into_values().collect();
    lists.sort_by(|a, b| a.name.cmp(&b.name));
    st.config.userlists = lists.into_iter().map(std::sync::Arc::new).collect();
    finalize::finalize(&mut st.config, &mut st.diags);
    ids::assign(&mut st.config, &mut st.diags);
    let exports: Vec<(String, Option<String>)> = st
        .env
        .overrides()
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    st.config.global.setenv = exports;
    let zero_warning = st.config.global.zero_warning;
    if zero_warning && st.diags.items.iter().any(|d| d.level == Level::Warning) {
        st.diags.push(
            Level::Alert,
            None,
            "some warnings were found and 'zero-warning' is set",
        );
    }
    let config = if st.diags.has_errors() {
        None
    } else {
        Some(st.config)
    };
    Parsed {
        config,
        diagnostics: st.diags,
    }
}

pub(crate) struct State<'a> {
    pub(crate) diags: Diagnostics,
    pub(crate) env: Env<'a>,
    pub(crate) config: Config,
    section: Section,
    section_name: String,
    defaults: Proxy,
    named_defaults: HashMap<String, Proxy>,
    /// `defaults` sections with rules: whether frontends, backends used them.
    rule_defaults: HashMap<String, [bool; 2]>,
    current: Option<Proxy>,
    pub(crate) nbproc_warned: bool,
    /// `userlist` sections by name.
    pub(crate) userlists: HashMap<String, weir_rules::auth::Userlist>,
    /// `http_auth(<userlist>)` references, checked once all are known.
    pub(crate) userlist_refs: Vec<(String, Loc)>,
    /// Tables, proxies and servers that rules and expressions name,
    /// checked once all are known.
    pub(crate) refs: Vec<refs::Ref>,
    /// `http-errors` sections: name → (status, response) pairs.
    pub(crate) http_errors: HashMap<String, crate::model::ErrorPages>,
    /// `default-path`'s policy, and the file being read.
    pub(crate) default_path: Option<crate::files::DefaultPath>,
    pub(crate) file: String,
}

impl State<'_> {
    /// Relative paths start from `dir` from now on; the files loaded once
    /// the configuration is read start from the last one set, which must be
    /// the same for every file (`at`: the `default-path` line).
    pub(crate) fn set_default_dir(&mut self, dir: Option<std::path::PathBuf>, at: Option<&Loc>) {
        crate::files::set_base(dir.clone());
        let g = &mut self.config.global;
        if g.default_path.is_some() && dir.is_some() && g.default_path != dir {
            let msg = "weir takes one 'default-path' directory for all the files of its configuration (the files loaded once it is read start from it)";
            match at {
                Some(loc) => self.diags.alert(loc, msg),
                None => self.diags.push(Level::Alert, None, msg),
            }
        }
        if dir.is_some() {
            g.default_path = dir;
        }
    }

    fn parse_file(&mut self, src: &Source) {
        let mut conds: Vec<CondFrame> = Vec::new();
        for (idx, raw) in src.text.lines().enumerate() {
            let loc = Loc {
                file: src.name.clone(),
                line: idx + 1,
            };
            let section_label = self.section_name.clone();
            let lookup = |name: &str| -> Option<String> {
                match name {
                    ".FILE" => Some(loc.file.clone()),
                    ".LINE" => Some(loc.line.to_string()),
                    ".SECTION" => Some(section_label.clone()),
                    _ => self.env.get(name),
                }
            };
            let words = match tokenize(raw, &lookup) {
                Ok(w) => w,
                Err(e) => {
                    if conds.iter().all(|c| c.active) {
                        self.diags.alert(&loc, format!("{e} in '{}'", raw.trim()));
                    }
                    continue;
                }
            };
            let Some(first) = words.first() else { continue };
            let active = conds.iter().all(|c| c.active);
            match first.as_str() {
                ".if" | ".elif" | ".else" | ".endif" => {
                    self.conditional(&mut conds, &words, &loc);
                    continue;
                }
                _ if !active => continue,
                ".notice" | ".warning" | ".alert" | ".diag" => {
                    let level = match first.as_str() {
                        ".notice" => Level::Notice,
                        ".warning" => Level::Warning,
                        ".alert" => Level::Alert,
                        _ => Level::Diag,
                    };
                    self.diags.push(level, Some(&loc), words[1..].join(" "));
                    continue;
                }
                w if w.starts_with('.') => {
                    self.diags.alert(&loc, format!("unknown directive '{w}'"));
                    continue;
                }
                _ => {}
            }
            self.line(&words, &loc);
        }
        for c in conds {
            self.diags
                .alert(&c.loc, "missing '.endif' at end of file for this '.if'");
        }
    }

    fn conditional(&mut self, conds: &mut Vec<CondFrame>, words: &[String], loc: &Loc) {
        let parent_active = conds.len() < 2 || conds[..conds.len() - 1].iter().all(|c| c.active);
        let eval = |s: &mut Self| -> bool {
            let expr = words[1..].join(" ");
            let env = |n: &str| s.env.get(n);
            match cond::eval(&expr, &CondEnv { env: &env }) {
                Ok(v) => v,
                Err(e) => {
                    s.diags
                        .alert(loc, format!("failed to evaluate condition: {e}"));
                    false
                }
            }
        };
        match words[0].as_str() {
            ".if" => {
                let outer = conds.iter().all(|c| c.active);
                let v = outer && eval(self);
                conds.push(CondFrame {
                    active: v,
                    done: v,
                    seen_else: false,
                    loc: loc.clone(),
                });
            }
            ".elif" => {
                let Some(top) = conds.last() else {
                    self.diags.alert(loc, "'.elif' without matching '.if'");
                    return;
                };
                if top.seen_else {
                    self.diags
                        .alert(loc, "'.elif' after '.else' is not allowed");
                    return;
                }
                let take = parent_active && !top.done && eval(self);
                if let Some(top) = conds.last_mut() {
                    top.active = take;
                    top.done |= take;
                }
            }
            ".else" => {
                let Some(top) = conds.last_mut() else {
                    self.diags.alert(loc, "'.else' without matching '.if'");
                    return;
                };
                if top.seen_else {
                    self.diags
                        .alert(loc, "only one '.else' is allowed per '.if'");
                    return;
                }
                top.seen_else = true;
                top.active = parent_active && !top.done;
                top.done = true;
            }
            _ => {
                if conds.pop().is_none() {
                    self.diags.alert(loc, "'.endif' without matching '.if'");
                }
            }
        }
    }

    fn line(&mut self, words: &[String], loc: &Loc) {
        let kw = words[0].as_str();
        if let Some((_, status)) = SECTIONS.iter().find(|(n, _)| *n == kw) {
            self.close_section();
            if *status == Status::Refused {
                self.diags.alert(
                    loc,
                    format!("'{kw}' sections are not supported by weir yet (the whole section is ignored)"),
                );
                self.section = Section::Skipped;
                self.section_name = kw.to_string();
                return;
            }
            self.open_section(kw, words, loc);
            return;
        }
        match self.section {
            Section::None => {
                let hint = did_you_mean(kw, SECTIONS.iter().map(|(n, _)| *n))
                    .map(|s| format!("; did you mean '{s}'?"))
                    .unwrap_or_default();
                self.diags
                    .alert(loc, format!("unknown keyword '{kw}' out of section{hint}"));
            }
            Section::Skipped => {}
            Section::HttpErrors(ref name) => {
                let name = name.clone();
                match (kw, http::errorfile(&words[1..])) {
                    ("errorfile", Ok(e)) => {
                        let list = self.http_errors.entry(name).or_default();
                        list.retain(|(c, _)| *c != e.0);
                        list.push(e);
                    }
                    ("errorfile", Err(err)) => {
                        self.diags.alert(loc, format!("'errorfile' : {err}"))
                    }
                    _ => self.diags.alert(
                        loc,
                        format!(
                            "unknown keyword '{kw}' in 'http-errors' section (expects 'errorfile')"
                        ),
                    ),
                }
            }
            Section::Userlist(ref name) => {
                let name = name.clone();
                let list = self.userlists.entry(name).or_default();
                if let Err(e) = list.line(kw, &words[1..]) {
                    self.diags.alert(loc, e);
                }
            }
            Section::Global => global::line(self, words, loc),
            Section::Peers => peers::line(self, words, loc),
            Section::Resolvers => resolvers::line(self, words, loc),
            Section::Mailers => mailers::line(self, words, loc),
            Section::Cache => cache::line(self, words, loc),
            Section::FcgiApp => fcgi::line(self, words, loc),
            Section::Program => program::line(self, words, loc),
            Section::Ring => logfwd::ring_line(self, words, loc),
            Section::LogForward => logfwd::forward_line(self, words, loc),
            Section::Proxy => {
                lua::scan(self, words, loc);
                if let Some(mut p) = self.current.take() {
                    proxy::line(self, &mut p, words, loc);
                    self.current = Some(p);
                }
            }
        }
    }

    fn open_section(&mut self, kw: &str, words: &[String], loc: &Loc) {
        self.section_name = kw.to_string();
        if kw == "userlist" {
            match words.get(1) {
                Some(n) if words.len() == 2 => {
                    if self.userlists.contains_key(n) {
                        self.diags
                            .alert(loc, format!("userlist '{n}' is declared twice"));
                    }
                    self.userlists.entry(n.clone()).or_default().name = n.clone();
                    self.section = Section::Userlist(n.clone());
                }
                _ => {
                    self.diags.alert(loc, "'userlist' expects exactly one name");
                    self.section = Section::Skipped;
                }
            }
            return;
        }
        if kw == "http-errors" {
            match words.get(1) {
                Some(n) if words.len() == 2 => {
                    self.http_errors.entry(n.clone()).or_default();
                    self.section = Section::HttpErrors(n.clone());
                }
                _ => {
                    self.diags
                        .alert(loc, "'http-errors' expects exactly one name");
                    self.section = Section::Skipped;
                }
            }
            return;
        }
        if kw == "ring" || kw == "log-forward" {
            let opened = if kw == "ring" {
                logfwd::open_ring(self, words, loc)
            } else {
                logfwd::open_forward(self, words, loc)
            };
            self.section = match (opened, kw) {
                (false, _) => Section::Skipped,
                (true, "ring") => Section::Ring,
                _ => Section::LogForward,
            };
            return;
        }
        if kw == "program" {
            self.section = if program::open(self, words, loc) {
                Section::Program
            } else {
                Section::Skipped
            };
            return;
        }
        if kw == "fcgi-app" {
            self.section = if fcgi::open(self, words, loc) {
                Section::FcgiApp
            } else {
                Section::Skipped
            };
            return;
        }
        if kw == "cache" {
            self.section = if cache::open(self, words, loc) {
                Section::Cache
            } else {
                Section::Skipped
            };
            return;
        }
        if kw == "mailers" {
            self.section = if mailers::open(self, words, loc) {
                Section::Mailers
            } else {
                Section::Skipped
            };
            return;
        }
        if kw == "resolvers" {
            self.section = if resolvers::open(self, words, loc) {
                Section::Resolvers
            } else {
                Section::Skipped
            };
            return;
        }
        if kw == "peers" {
            self.section = if peers::open(self, words, loc) {
                Section::Peers
            } else {
                Section::Skipped
            };
            return;
        }
        if kw == "global" {
            self.section = Section::Global;
            if words.len() > 1 {
                self.diags.warn(
                    loc,
                    "'global' section takes no argument; extra words ignored",
                );
            }
            return;
        }
        let kind = match kw {
            "defaults" => ProxyKind::Defaults,
            "frontend" => ProxyKind::Frontend,
            "backend" => ProxyKind::Backend,
            _ => ProxyKind::Listen,
        };
        let mut name = words.get(1).cloned().unwrap_or_default();
        let mut from: Option<&String> = None;
        let mut rest = &words[words.len().min(2)..];
        if name == "from" && kind == ProxyKind::Defaults {
            name = String::new();
            rest = &words[1..];
        }
        if rest.first().map(String::as_str) == Some("from") {
            from = rest.get(1);
            if from.is_none() {
                self.diags.alert(
                    loc,
                    format!("'{kw} {name} from' expects a defaults section name"),
                );
            }
            rest = &rest[rest.len().min(2)..];
        }
        if !rest.is_empty() {
            if rest[0].contains(':') && kind != ProxyKind::Defaults {
                self.diags.alert(
                    loc,
                    "please use the 'bind' keyword for listening addresses.",
                );
            } else {
                self.diags.alert(
                    loc,
                    format!(
                        "unexpected '{}' after the '{kw}' section name",
                        rest.join(" ")
                    ),
                );
            }
        }
        if name.is_empty() && kind != ProxyKind::Defaults {
            self.diags.alert(loc, format!("'{kw}' expects a name"));
            name = format!("<unnamed-{}>", loc.line);
        }
        if !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.:".contains(c))
        {
            self.diags.alert(
                loc,
                format!(
                    "character '{}' is not permitted in {kw} name '{name}'",
                    name.chars()
                        .find(|c| !(c.is_ascii_alphanumeric() || "-_.:".contains(*c)))
                        .unwrap_or('?')
                ),
            );
        }
        let base = match from {
            Some(f) => match self.named_defaults.get(f.as_str()) {
                Some(d) => d.clone(),
                None => {
                    self.diags.alert(
                        loc,
                        format!("defaults section '{f}' not found for {kw} '{name}'"),
                    );
                    self.defaults.clone()
                }
            },
            // A new `defaults` without `from` starts again from HAProxy's built-in values.
            None if kind == ProxyKind::Defaults => Proxy::new("", ProxyKind::Defaults, loc.clone()),
            None => self.defaults.clone(),
        };
        // (A new `defaults` without `from` starts afresh: no rules.)
        if base.has_rules() {
            self.check_rule_defaults(&base, kind, loc);
        }
        let proxy = Proxy::from_defaults(&base, &name, kind, loc.clone());
        self.current = Some(proxy);
        self.section = Section::Proxy;
    }

    /// A `defaults` section with TCP/HTTP rules serves frontends or
    /// backends, never both, and no `listen` (HAProxy's rule: whose rules
    /// would run first would be ambiguous).
    fn check_rule_defaults(&mut self, base: &Proxy, kind: ProxyKind, loc: &Loc) {
        let at = &base.loc;
        let refused = match kind {
            ProxyKind::Defaults | ProxyKind::Listen => Some(format!(
                "a {} section cannot inherit from a defaults section defining TCP/HTTP rules (defaults section at {at})",
                kind.keyword()
            )),
            ProxyKind::Backend if !base.tcp.connection.is_empty() || !base.tcp.session.is_empty() => {
                Some(format!("a backend section cannot inherit from a defaults section defining 'tcp-request connection' or 'tcp-request session' rules (defaults section at {at})"))
            }
            ProxyKind::Frontend if !base.tcp.response.is_empty() => Some(format!(
                "a frontend section cannot inherit from a defaults section defining 'tcp-response content' rules (defaults section at {at})"
            )),
            _ => None,
        };
        if let Some(msg) = refused {
            self.diags.alert(loc, msg);
            return;
        }
        let used = self
            .rule_defaults
            .entry(format!("{}:{}", base.loc, base.name))
            .or_default();
        used[usize::from(kind == ProxyKind::Backend)] = true;
        if used[0] && used[1] {
            self.diags.alert(
                loc,
                format!(
                    "frontends and backends cannot inherit from the same defaults section if it defines TCP/HTTP rules (defaults section at {})",
                    base.loc
                ),
            );
        }
    }

    fn close_section(&mut self) {
        if let Some(p) = self.current.take() {
            if p.kind == ProxyKind::Defaults {
                if !p.name.is_empty() {
                    self.named_defaults.insert(p.name.clone(), p.clone());
                }
                self.defaults = p;
            } else {
                self.config.proxies.push(p);
            }
        }
        self.section = Section::None;
    }
}
