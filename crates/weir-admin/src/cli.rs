//! Runtime API commands: a line split into commands (`;` between them,
//! `\` escaping the next character), each parsed into a [`Command`] or a
//! one-line error, the [`Level`] each needs, and the help listings.

/// What a socket (or a session that lowered itself) may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    User,
    Operator,
    Admin,
}

impl Level {
    /// `level user|operator|admin` on a `stats socket` line.
    pub fn parse(s: &str) -> Option<Level> {
        match s {
            "user" => Some(Level::User),
            "operator" => Some(Level::Operator),
            "admin" => Some(Level::Admin),
            _ => None,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Level::User => "user",
            Level::Operator => "operator",
            Level::Admin => "admin",
        }
    }
}

/// `<backend>/<server>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerRef {
    pub backend: String,
    pub server: String,
}

/// A weight as given: absolute, or a percentage of the initial weight.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Weight {
    Absolute(u32),
    Percent(u32),
}

/// `set server … state`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AdminState {
    Ready,
    Drain,
    Maint,
}

/// Which proxies and objects `show stat` lists: a proxy name or id (`None`
/// for all), a bit mask of object types (1 frontends, 2 backends, 4
/// servers; -1 all), a server id (`None` for all).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatFilter {
    pub proxy: Option<String>,
    pub types: i32,
    pub sid: Option<u32>,
    /// `up`: servers that are down or in maintenance are left out.
    pub up: bool,
    /// `no-maint`: servers in maintenance are left out.
    pub no_maint: bool,
}

impl Default for StatFilter {
    /// Every proxy, every type, every server.
    fn default() -> StatFilter {
        StatFilter {
            proxy: None,
            types: -1,
            sid: None,
            up: false,
            no_maint: false,
        }
    }
}

impl StatFilter {
    /// Whether a server row with this `status` is left out (frontend and
    /// backend rows never are).
    pub fn hides(&self, status: &str) -> bool {
        let maint = status.starts_with("MAINT");
        (self.up && (maint || status.starts_with("DOWN"))) || (self.no_maint && maint)
    }
}

/// How `show info` and `show stat` write their values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Plain,
    Typed,
    Json,
}

/// The format word among `args` (`typed` or `json`); `desc` and `float`
/// are accepted and change nothing.
fn format_of(args: &[String]) -> Format {
    if args.iter().any(|a| a == "json") {
        Format::Json
    } else if args.iter().any(|a| a == "typed") {
        Format::Typed
    } else {
        Format::Plain
    }
}

/// One parsed command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    Help,
    Prompt,
    Quit,
    /// Lower the session's level.
    Lower(Level),
    ShowCliLevel,
    ShowInfo(Format),
    ShowStat(StatFilter, Format),
    ShowServersState(Option<String>),
    /// `show resolvers [<section>]`.
    ShowResolvers(Option<String>),
    /// `show servers conn [<backend>]`.
    ShowServersConn(Option<String>),
    ShowBackend,
    ShowEnv(Option<String>),
    GetWeight(ServerRef),
    SetWeight(ServerRef, Weight),
    SetState(ServerRef, AdminState),
    SetAddr(ServerRef, String, Option<u16>),
    /// `set server <bk>/<srv> ssl on|off`.
    SetServerSsl(ServerRef, bool),
    /// `set server <bk>/<srv> fqdn <name>`.
    SetServerFqdn(ServerRef, String),
    /// `set server <bk>/<srv> check-addr|check-port|agent-addr|agent-port|
    /// agent-send|agent|health …`.
    SetServerCheck(ServerRef, crate::cli_set::CheckSet),
    /// `add server <bk>/<srv> <addr> [options]`: the words after the name.
    AddServer(ServerRef, Vec<String>),
    /// `del server <bk>/<srv>`.
    DelServer(ServerRef),
    EnableServer(ServerRef),
    DisableServer(ServerRef),
    EnableHealth(ServerRef),
    DisableHealth(ServerRef),
    /// `enable agent|disable agent <bk>/<srv>`.
    EnableAgent(ServerRef),
    DisableAgent(ServerRef),
    SetMaxconnGlobal(u32),
    SetMaxconnFrontend(String, u32),
    /// 0 lifts the limit.
    SetMaxconnServer(ServerRef, u32),
    EnableFrontend(String),
    DisableFrontend(String),
    /// `clear counters`: the maxima; `all`: every counter.
    ClearCounters {
        all: bool,
    },
    /// `show errors [<px>] [request|response]`: a proxy (name or id), and
    /// only requests (false) or responses (true).
    ShowErrors(Option<String>, Option<bool>),
    /// `set profiling tasks on|off|auto`.
    SetProfiling(String),
    /// `shutdown sessions server <bk>/<srv>`.
    ShutdownSessionsServer(ServerRef),
    /// `show map|acl [<file>|#<id>]` (`map`: true for maps).
    ShowPatterns {
        map: bool,
        which: Option<String>,
    },
    /// `add map <file> <key> <value>`, `add acl <file> <pattern>`, or
    /// either with `<<` and one entry per line of the payload.
    AddPattern {
        map: bool,
        which: String,
        entries: Vec<(String, String)>,
    },
    /// `del map|acl <file> <key>|#<ref>`.
    DelPattern {
        map: bool,
        which: String,
        sel: String,
    },
    /// `set map <file> <key>|#<ref> <value>`.
    SetPattern {
        which: String,
        sel: String,
        value: String,
    },
    /// `get map|acl <file> <value>`: which line each user matches.
    GetPattern {
        map: bool,
        which: String,
        value: String,
    },
    /// `clear map|acl <file>`.
    ClearPatterns {
        map: bool,
        which: String,
    },
    ShowProfiling,
    ShowActivity,
    ShowThreads,
    /// `show sess [all|<id>]`.
    ShowSess(crate::sess::SessSel),
    /// `shutdown session <id>`.
    ShutdownSession(u64),
    /// `_getsocks`: the listening sockets, passed to a new process (`-x`);
    /// only on a socket with `expose-fd listeners`.
    GetSocks,
    /// `experimental-mode on|off`: the session may run experimental
    /// commands (`set var`).
    ExperimentalMode(bool),
    /// `get var <proc.name>`.
    GetVar(String),
    /// `set var <proc.name> [expr] <expr>` or `set var <name> fmt <fmt>`.
    SetVar {
        name: String,
        fmt: bool,
        value: String,
    },
    /// `show|new|set|commit|abort|del ssl …`, `add|del ssl crt-list`.
    Ssl(crate::ssl::SslCmd),
    /// `show|clear|set table …`.
    Table(crate::table::TableCmd),
    /// `show peers [-] [<section>]`.
    ShowPeers(Option<String>),
}

impl Command {
    /// The lowest level allowed to run it.
    pub fn level(&self) -> Level {
        use Command::*;
        match self {
            Help | Prompt | Quit | Lower(_) | ShowCliLevel | ShowInfo(_) | ShowStat(..)
            | ShowServersState(_) | ShowServersConn(_) | ShowBackend | GetWeight(_)
            | ShowPeers(_) | ShowResolvers(_) => Level::User,
            ShowEnv(_)
            | ClearCounters { all: false }
            | ShowErrors(..)
            | ShowProfiling
            | ShowActivity
            | ShowThreads
            | ShowSess(_) => Level::Operator,
            SetProfiling(_) | ShutdownSessionsServer(_) | ShutdownSession(_) => Level::Admin,
            GetSocks | ExperimentalMode(_) => Level::User,
            GetVar(_) => Level::Operator,
            Ssl(_) => Level::Admin,
            // (`show table` dumps entries from the operator level up;
            // `clear table` says nothing below it.)
            Table(t) if t.act == crate::table::TableAct::Set => Level::Operator,
            Table(_) => Level::User,
            SetVar { .. } => Level::Operator,
            ShowPatterns { .. } | GetPattern { .. } => Level::Operator,
            AddPattern { .. } | DelPattern { .. } | SetPattern { .. } | ClearPatterns { .. } => {
                Level::Admin
            }
            SetWeight(..)
            | SetState(..)
            | SetAddr(..)
            | SetServerSsl(..)
            | SetServerFqdn(..)
            | SetServerCheck(..)
            | AddServer(..)
            | DelServer(_)
            | EnableServer(_)
            | DisableServer(_)
            | EnableHealth(_)
            | DisableHealth(_)
            | EnableAgent(_)
            | DisableAgent(_)
            | SetMaxconnGlobal(_)
            | SetMaxconnFrontend(..)
            | SetMaxconnServer(..)
            | EnableFrontend(_)
            | DisableFrontend(_)
            | ClearCounters { all: true } => Level::Admin,
        }
    }
}

/// Why a command was not run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CliError {
    /// No command starts with these words.
    Unknown,
    /// A known command with bad arguments: the one-line message.
    Usage(String),
}

/// Splits one input line into commands of words: `;` ends a command,
/// spaces and tabs separate words, `\` takes the next character as it is.
/// Empty commands are dropped.
pub fn split(line: &str) -> Vec<Vec<String>> {
    let mut cmds = Vec::new();
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(n) = chars.next() {
                    word.push(n);
                }
                in_word = true;
            }
            ' ' | '\t' | '\r' | '\n' => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            ';' => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
                if !words.is_empty() {
                    cmds.push(std::mem::take(&mut words));
                }
            }
            c => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(word);
    }
    if !words.is_empty() {
        cmds.push(words);
    }
    cmds
}

fn server_ref(w: Option<&String>) -> Result<ServerRef, CliError> {
    let w = w.ok_or_else(|| CliError::Usage("Require 'backend/server'.".into()))?;
    match w.split_once('/') {
        Some((b, s)) if !b.is_empty() && !s.is_empty() => Ok(ServerRef {
            backend: b.to_string(),
            server: s.to_string(),
        }),
        _ => Err(CliError::Usage("Require 'backend/server'.".into())),
    }
}

/// A weight: `N` (0 to 256) or `N%` (of the initial weight).
pub fn parse_weight(w: Option<&String>) -> Result<Weight, CliError> {
    let w = w.ok_or_else(|| CliError::Usage("Require a weight.".into()))?;
    if let Some(p) = w.strip_suffix('%') {
        return p
            .parse::<u32>()
            .map(Weight::Percent)
            .map_err(|_| CliError::Usage("A relative weight must be a positive integer.".into()));
    }
    match w.parse::<u32>() {
        Ok(n) if n <= 256 => Ok(Weight::Absolute(n)),
        _ => Err(CliError::Usage(
            "Absolute weight can only be between 0 and 256 inclusive.".into(),
        )),
    }
}

/// `show stat [{<proxy>|-1} {<type>|-1} {<sid>|-1}] [up|no-maint]`; the
/// format words are read by [`format_of`].
fn stat_filter(args: &[String]) -> Result<StatFilter, CliError> {
    let mut f = StatFilter::default();
    let mut pos: Vec<&String> = Vec::new();
    for a in args {
        match a.as_str() {
            "typed" | "json" | "desc" => {}
            "up" => f.up = true,
            "no-maint" => f.no_maint = true,
            _ => pos.push(a),
        }
    }
    let bad = || CliError::Usage("'show stat' expects {<proxy>|-1} {<type>|-1} {<sid>|-1}.".into());
    match pos.as_slice() {
        [] => {}
        [p, t, s] => {
            if p.as_str() != "-1" {
                f.proxy = Some(p.to_string());
            }
            f.types = t.parse().map_err(|_| bad())?;
            let sid: i64 = s.parse().map_err(|_| bad())?;
            f.sid = u32::try_from(sid).ok().filter(|_| sid >= 0);
        }
        _ => return Err(bad()),
    }
    Ok(f)
}

/// The commands of `line`, the lines of a payload (after a line ending
/// in `<<`, up to an empty line) added as words of the last one, one per
/// line.
pub fn split_with_payload(line: &str, payload: &[String]) -> Vec<Vec<String>> {
    let mut cmds = split(line);
    if let Some(last) = cmds.last_mut() {
        last.extend(payload.iter().cloned());
    }
    cmds
}

/// Parses one command's words.
pub fn parse(words: &[String]) -> Result<Command, CliError> {
    let w: Vec<&str> = words.iter().map(String::as_str).collect();
    let arg = |i: usize| words.get(i);
    use Command::*;
    Ok(match w.as_slice() {
        ["help", ..] => Help,
        ["prompt", ..] => Prompt,
        ["quit", ..] => Quit,
        ["user"] => Lower(Level::User),
        ["operator"] => Lower(Level::Operator),
        ["show", "cli", "level"] => ShowCliLevel,
        ["show", "info", ..] => ShowInfo(format_of(words.get(2..).unwrap_or_default())),
        ["show", "stat", ..] => {
            let rest = words.get(2..).unwrap_or_default();
            ShowStat(stat_filter(rest)?, format_of(rest))
        }
        ["show", "resolvers"] => ShowResolvers(None),
        ["show", "resolvers", r] => ShowResolvers(Some(r.to_string())),
        ["show", "servers", "state"] => ShowServersState(None),
        ["show", "servers", "state", b] => ShowServersState(Some(b.to_string())),
        ["show", "servers", "conn"] => ShowServersConn(None),
        ["show", "servers", "conn", b] => ShowServersConn(Some(b.to_string())),
        ["show", "backend"] => ShowBackend,
        ["experimental-mode", "on"] => ExperimentalMode(true),
        ["experimental-mode", "off"] => ExperimentalMode(false),
        ["experimental-mode", ..] => {
            return Err(CliError::Usage(
                "'experimental-mode' expects 'on' or 'off'.".into(),
            ))
        }
        ["get", "var", name] => GetVar(name.to_string()),
        ["get", "var", ..] => return Err(CliError::Usage("Missing variable name.".into())),
        ["set", "var", name, kind @ ("expr" | "fmt"), rest @ ..] if !rest.is_empty() => SetVar {
            name: name.to_string(),
            fmt: *kind == "fmt",
            value: rest.join(" "),
        },
        ["set", "var", name, rest @ ..] if !rest.is_empty() => SetVar {
            name: name.to_string(),
            fmt: false,
            value: rest.join(" "),
        },
        ["set", "var", ..] => return Err(CliError::Usage(
            "'set var' expects a variable name followed by 'expr <expression>' or 'fmt <format>'."
                .into(),
        )),
        ["show", "env"] => ShowEnv(None),
        ["show", "env", v] => ShowEnv(Some(v.to_string())),
        ["get", "weight", ..] => GetWeight(server_ref(arg(2))?),
        ["set", "weight", ..] => SetWeight(server_ref(arg(2))?, parse_weight(arg(3))?),
        ["set", "server", _, rest @ ..] => crate::cli_set::set_server(server_ref(arg(2))?, rest)?,
        ["set", "server", ..] => return Err(server_ref(None).unwrap_err()),
        ["enable", "server", ..] => EnableServer(server_ref(arg(2))?),
        ["disable", "server", ..] => DisableServer(server_ref(arg(2))?),
        ["enable", "health", ..] => EnableHealth(server_ref(arg(2))?),
        ["enable", "agent", ..] => EnableAgent(server_ref(arg(2))?),
        ["disable", "agent", ..] => DisableAgent(server_ref(arg(2))?),
        ["set", "maxconn", "global", v] => SetMaxconnGlobal(int_arg(v)?),
        ["set", "maxconn", "frontend", f, v] => SetMaxconnFrontend(f.to_string(), int_arg(v)?),
        ["set", "maxconn", "server", _, v] => SetMaxconnServer(server_ref(arg(3))?, int_arg(v)?),
        ["set", "maxconn", ..] => return Err(CliError::Usage(
            "'set maxconn' expects 'global <n>', 'frontend <name> <n>' or 'server <bk>/<srv> <n>'."
                .into(),
        )),
        ["enable", "frontend", f] => EnableFrontend(f.to_string()),
        ["disable", "frontend", f] => DisableFrontend(f.to_string()),
        ["enable" | "disable", "frontend", ..] => {
            return Err(CliError::Usage("A frontend name is expected.".into()))
        }
        [a @ ("show" | "clear" | "set"), "table", rest @ ..] => {
            let act = match *a {
                "show" => crate::table::TableAct::Show,
                "clear" => crate::table::TableAct::Clear,
                _ => crate::table::TableAct::Set,
            };
            Table(crate::table::parse(act, rest).map_err(CliError::Usage)?)
        }
        ["show", "errors", rest @ ..] => {
            let mut px = None;
            let mut which = None;
            for a in rest {
                match *a {
                    "request" => which = Some(false),
                    "response" => which = Some(true),
                    "-1" => {}
                    p if px.is_none() => px = Some(p.to_string()),
                    _ => {
                        return Err(CliError::Usage(
                            "'show errors' expects [<proxy>] [request|response].".into(),
                        ))
                    }
                }
            }
            ShowErrors(px, which)
        }
        ["set", "profiling", "tasks", v] if matches!(*v, "on" | "off" | "auto") => {
            SetProfiling(v.to_string())
        }
        ["set", "profiling", "tasks", ..] => {
            return Err(CliError::Usage("Expects 'on', 'auto', or 'off'.".into()))
        }
        ["set", "profiling", ..] => {
            return Err(CliError::Usage(
                "weir profiles 'tasks' only: 'set profiling tasks on|off|auto'.".into(),
            ))
        }
        ["shutdown", "sessions", "server", ..] => ShutdownSessionsServer(server_ref(arg(3))?),
        ["shutdown", "session", id, ..] => ShutdownSession(
            crate::sess::parse_id(id)
                .ok_or_else(|| CliError::Usage("No such session (use 'show sess').".into()))?,
        ),
        ["shutdown", "session"] => {
            return Err(CliError::Usage(
                "Session pointer expected (use 'show sess').".into(),
            ))
        }
        ["show", "peers", "dict", ..] => {
            return Err(CliError::Usage(
                "weir does not dump the peers dictionary caches ('show peers [<section>]').".into(),
            ))
        }
        ["show", "peers"] | ["show", "peers", "-"] => ShowPeers(None),
        ["show", "peers", "-", s] | ["show", "peers", s] => ShowPeers(Some(s.to_string())),
        ["show", "sess"] => ShowSess(crate::sess::SessSel::List),
        ["show", "sess", "all", ..] => ShowSess(crate::sess::SessSel::All),
        // As in HAProxy, an argument that is not an identifier lists them.
        ["show", "sess", id, ..] => ShowSess(
            crate::sess::parse_id(id).map_or(crate::sess::SessSel::List, crate::sess::SessSel::One),
        ),
        ["_getsocks"] => GetSocks,
        [verb, "ssl", rest @ ..] => match crate::ssl::parse(verb, rest) {
            Some(r) => Ssl(r?),
            None => return Err(CliError::Unknown),
        },
        ["get", k @ ("map" | "acl"), w, value @ ..] if !value.is_empty() => GetPattern {
            map: *k == "map",
            which: w.to_string(),
            value: value.join(" "),
        },
        ["get", "map" | "acl", ..] => {
            return Err(CliError::Usage("Missing map identifier and/or key.".into()))
        }
        ["show", k @ ("map" | "acl")] => ShowPatterns {
            map: *k == "map",
            which: None,
        },
        ["show", k @ ("map" | "acl"), w] => ShowPatterns {
            map: *k == "map",
            which: Some(w.to_string()),
        },
        ["add", k @ ("map" | "acl"), w, "<<", lines @ ..] => AddPattern {
            map: *k == "map",
            which: w.to_string(),
            entries: lines
                .iter()
                .map(|l| {
                    let l = l.trim();
                    match l.split_once([' ', '\t']) {
                        Some((key, v)) if *k == "map" => (key.to_string(), v.trim().to_string()),
                        _ => (l.to_string(), String::new()),
                    }
                })
                .collect(),
        },
        ["add", "map", w, key, value @ ..] if !value.is_empty() => AddPattern {
            map: true,
            which: w.to_string(),
            entries: vec![(key.to_string(), value.join(" "))],
        },
        ["add", "acl", w, key] => AddPattern {
            map: false,
            which: w.to_string(),
            entries: vec![(key.to_string(), String::new())],
        },
        ["add", "server", _, args @ ..] => AddServer(
            server_ref(arg(2))?,
            args.iter().map(|a| a.to_string()).collect(),
        ),
        ["del", "server", _] => DelServer(server_ref(arg(2))?),
        ["add" | "del", "server", ..] => return Err(server_ref(None).unwrap_err()),
        ["add", "map" | "acl", ..] => {
            return Err(CliError::Usage(
                "'add map' expects <map> <key> <value>, 'add acl' <acl> <pattern>.".into(),
            ))
        }
        ["del", k @ ("map" | "acl"), w, sel] => DelPattern {
            map: *k == "map",
            which: w.to_string(),
            sel: sel.to_string(),
        },
        ["del", "map" | "acl", ..] => {
            return Err(CliError::Usage("'del' expects <file> <key>|#<ref>.".into()))
        }
        ["set", "map", w, sel, value @ ..] if !value.is_empty() => SetPattern {
            which: w.to_string(),
            sel: sel.to_string(),
            value: value.join(" "),
        },
        ["set", "map", ..] => {
            return Err(CliError::Usage(
                "'set map' expects <map> <key>|#<ref> <value>.".into(),
            ))
        }
        ["clear", k @ ("map" | "acl"), w] => ClearPatterns {
            map: *k == "map",
            which: w.to_string(),
        },
        ["show", "profiling", ..] => ShowProfiling,
        ["show", "activity"] => ShowActivity,
        ["show", "threads"] => ShowThreads,
        ["clear", "counters"] => ClearCounters { all: false },
        ["clear", "counters", "all"] => ClearCounters { all: true },
        ["disable", "health", ..] => DisableHealth(server_ref(arg(2))?),
        _ => return Err(CliError::Unknown),
    })
}

/// A non-negative integer argument.
fn int_arg(v: &str) -> Result<u32, CliError> {
    v.parse()
        .map_err(|_| CliError::Usage(format!("'{v}' is not a valid number.")))
}

/// The commands as `help` lists them: syntax, what it does, the level it
/// needs. (The descriptions are weir's own words.)
pub const HELP: &[(&str, &str, Level)] = &[
    (
        "add acl <acl> <pattern>",
        "add a pattern to an ACL file",
        Level::Admin,
    ),
    (
        "add map <map> <key> <value>",
        "add an entry to a map",
        Level::Admin,
    ),
    (
        "add server <bk>/<srv> <addr> [opts]*",
        "add a server, in maintenance (the options of a server line)",
        Level::Admin,
    ),
    (
        "clear acl <acl>",
        "remove every pattern of an ACL file",
        Level::Admin,
    ),
    ("clear counters", "reset the maxima (smax)", Level::Operator),
    (
        "clear map <map>",
        "remove every entry of a map",
        Level::Admin,
    ),
    (
        "clear table <table> [<filter>]*",
        "remove the entries of a table that match (data filter, key)",
        Level::User,
    ),
    ("clear counters all", "reset every counter", Level::Admin),
    (
        "del acl <acl> <key>|#<ref>",
        "remove patterns of an ACL file",
        Level::Admin,
    ),
    (
        "del map <map> <key>|#<ref>",
        "remove entries of a map",
        Level::Admin,
    ),
    (
        "del server <bk>/<srv>",
        "remove a server in maintenance that nothing else names",
        Level::Admin,
    ),
    (
        "disable agent <bk>/<srv>",
        "stop a server's agent check",
        Level::Admin,
    ),
    (
        "disable frontend <fe>",
        "stop accepting on a frontend's listeners",
        Level::Admin,
    ),
    (
        "disable health <bk>/<srv>",
        "stop a server's health checks",
        Level::Admin,
    ),
    (
        "disable server <bk>/<srv>",
        "put a server in maintenance (as 'set server … state maint')",
        Level::Admin,
    ),
    (
        "enable agent <bk>/<srv>",
        "resume a server's agent check",
        Level::Admin,
    ),
    (
        "enable frontend <fe>",
        "accept again on a paused frontend",
        Level::Admin,
    ),
    (
        "enable health <bk>/<srv>",
        "resume a server's health checks",
        Level::Admin,
    ),
    (
        "enable server <bk>/<srv>",
        "take a server out of maintenance",
        Level::Admin,
    ),
    (
        "get acl <acl> <value>",
        "which pattern of an ACL file a value matches",
        Level::Operator,
    ),
    (
        "get map <map> <value>",
        "which entry of a map a value matches",
        Level::Operator,
    ),
    (
        "get weight <bk>/<srv>",
        "a server's current and initial weights",
        Level::User,
    ),
    ("help", "list the commands this level may run", Level::User),
    (
        "operator",
        "lower this session's level to operator",
        Level::User,
    ),
    (
        "prompt",
        "interactive mode: a prompt, and the socket stays open",
        Level::User,
    ),
    ("quit", "close this session", Level::User),
    (
        "set map <map> <key>|#<ref> <value>",
        "change the value of entries of a map",
        Level::Admin,
    ),
    (
        "set maxconn global <n>",
        "the process's connection limit (up to the one at start)",
        Level::Admin,
    ),
    (
        "set maxconn frontend <fe> <n>",
        "a frontend's connection limit",
        Level::Admin,
    ),
    (
        "set maxconn server <bk>/<srv> <n>",
        "a server's connection limit (0: none)",
        Level::Admin,
    ),
    (
        "set profiling tasks on|off|auto",
        "per-task profiling (auto: off)",
        Level::Admin,
    ),
    (
        "set server <bk>/<srv> [opts]",
        "a server's state (ready|drain|maint), weight, or addr [port]",
        Level::Admin,
    ),
    (
        "set table <t> key <k> [data.* <v>]*",
        "create an entry of a table, or change its data",
        Level::Operator,
    ),
    (
        "set weight <bk>/<srv> <w>[%]",
        "a server's weight, absolute or relative to the initial one",
        Level::Admin,
    ),
    ("show backend", "the backends' names", Level::User),
    ("show cli level", "this session's level", Level::User),
    (
        "experimental-mode [on|off]",
        "turn experimental mode on or off (set var)",
        Level::User,
    ),
    (
        "get var <name>",
        "show a process-wide variable's type and value",
        Level::Operator,
    ),
    (
        "set var <name> [expr|fmt] <value>",
        "set a process-wide variable (experimental)",
        Level::Operator,
    ),
    (
        "show env [var]",
        "the process's environment",
        Level::Operator,
    ),
    (
        "show errors [<px>] [request|response]",
        "the last invalid message each proxy saw",
        Level::Operator,
    ),
    (
        "show acl [<acl>|#<id>]",
        "the ACL files, or one's patterns",
        Level::Operator,
    ),
    (
        "show activity",
        "polls and accepted connections per thread",
        Level::Operator,
    ),
    (
        "show map [<map>|#<id>]",
        "the map files, or one's entries",
        Level::Operator,
    ),
    (
        "show info",
        "facts and counters of the process",
        Level::User,
    ),
    (
        "show profiling",
        "per-task calls, CPU and wake-up latency",
        Level::Operator,
    ),
    (
        "show resolvers [<section>]",
        "name servers' counters per resolvers section",
        Level::User,
    ),
    (
        "show servers conn [<bk>]",
        "servers' connections in use and idle, per thread",
        Level::User,
    ),
    (
        "show servers state [<bk>]",
        "servers' states as a state file holds them",
        Level::User,
    ),
    (
        "show sess [all|<id>]",
        "the client connections, or one's details",
        Level::Operator,
    ),
    (
        "show stat [<px> <type> <sid>]",
        "proxies' and servers' counters as CSV",
        Level::User,
    ),
    (
        "show table <table> [<filter>]*",
        "a table's size and use, or its entries that match (data filter, key)",
        Level::User,
    ),
    (
        "show threads",
        "each thread's name, id and CPU time",
        Level::Operator,
    ),
    (
        "shutdown session <id>",
        "end one client connection (an id from 'show sess')",
        Level::Admin,
    ),
    (
        "shutdown sessions server <bk>/<srv>",
        "end a server's sessions; its idle connections are not reused",
        Level::Admin,
    ),
    ("user", "lower this session's level to user", Level::User),
];

fn help_line(out: &mut String, syntax: &str, desc: &str) {
    out.push_str(&format!("  {syntax:<38} : {desc}\n"));
}

/// `help`: the commands `level` may run.
pub fn help(level: Level) -> String {
    let mut out = String::from("The following commands are valid at this level:\n");
    for (s, d, l) in HELP {
        if *l <= level {
            help_line(&mut out, s, d);
        }
    }
    out
}

/// The answer to an unknown command: the commands whose first word it
/// shares, or the whole list.
pub fn unknown(words: &[String], level: Level) -> String {
    let first = words.first().map(String::as_str).unwrap_or("");
    let near: Vec<_> = HELP
        .iter()
        .filter(|(s, _, l)| *l <= level && s.split(' ').next() == Some(first))
        .collect();
    if near.is_empty() {
        let mut out =
            String::from("Unknown command. Please enter one of the following commands only :\n");
        out.push_str(help(level).split_once('\n').map_or("", |(_, rest)| rest));
        return out;
    }
    let mut out =
        String::from("Unknown command, but maybe one of the following ones is a better match:\n");
    for (s, d, _) in near {
        help_line(&mut out, s, d);
    }
    out
}

#[cfg(test)]
#[path = "cli_tests.rs"]
mod tests;
