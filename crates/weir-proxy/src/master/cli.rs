//! The master CLI (`-S <addr>[,<option>…]`): `show proc`, `reload`, and
//! any runtime API command sent to a worker by prefix (`@1`, `@!<pid>`;
//! `@` or `@master` for the master), alone to change the session's target.

use super::channel::Link;
use super::{procs, Master};
use crate::conn::Conn;
use crate::listen::Listener;
use crate::stats_socket::Input;
use crate::worker::{accept, AnyListener};
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use weir_admin::cli::{split, Level};

/// A client silent this long is closed.
const IDLE: Duration = Duration::from_secs(60);
/// The longest a worker takes to answer one forwarded line.
const ANSWER: Duration = Duration::from_secs(60);

const HELP: &str = "The following commands are valid at this level:
  @!<pid>                                 : send a command to the <pid> process
  @<relative pid>                         : send a command to the <relative pid> process
  @master                                 : send a command to the master process
  operator                                : lower the level of the current CLI session to operator
  reload                                  : reload weir
  show cli level                          : display the level of the current CLI session
  show proc                               : show processes status
  show version                            : show version of the current process
  user                                    : lower the level of the current CLI session to user
  help [<command>]                        : list matching or all commands
  prompt                                  : toggle interactive mode with prompt
  quit                                    : disconnect
";

/// Binds the `-S` listeners (not inherited by workers).
pub(super) fn bind(specs: &[String]) -> Result<Vec<(Listener, Level)>, Vec<String>> {
    let mut out = Vec::new();
    let mut errors = Vec::new();
    for spec in specs {
        let mut parts = spec.split(',');
        let addr = parts.next().unwrap_or_default();
        let opts: Vec<String> = parts.map(str::to_string).collect();
        let loc = weir_config::diag::Loc::default();
        let bound = weir_config::parse::stats_socket(addr, &opts, "admin", &loc)
            .and_then(|s| {
                let level = Level::parse(&s.level).unwrap_or(Level::Admin);
                crate::bind::stats_socket(&s)
                    .map_err(|e| e.to_string())?
                    .map(|l| (l, level))
                    .ok_or_else(|| "no address".to_string())
            })
            .and_then(|(l, level)| {
                let fd = match &l {
                    Listener::Tcp(t) => t.as_raw_fd(),
                    Listener::Unix(u) => u.as_raw_fd(),
                };
                super::channel::set_inherited(fd, false).map_err(|e| e.to_string())?;
                Ok((l, level))
            });
        match bound {
            Ok(b) => out.push(b),
            Err(e) => errors.push(format!(
                "[ALERT]    ({}) : cannot bind the master CLI '{spec}': {e}",
                std::process::id()
            )),
        }
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

/// Answers master CLI connections.
pub(super) async fn serve(m: Arc<Master>, l: Listener, level: Level) {
    let Ok(l) = AnyListener::register(l) else {
        return;
    };
    loop {
        if let Ok((c, _, _)) = accept(&l, None).await {
            tokio::spawn(session(m.clone(), c, level));
        }
    }
}

/// Where a command goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    Master,
    Pid(i32),
}

/// A session's settings.
struct Session {
    level: Level,
    target: Target,
    interactive: bool,
}

/// What a command asks of the session after its answer.
#[derive(PartialEq)]
enum Next {
    Continue,
    Close,
}

async fn session(m: Arc<Master>, c: Conn, level: Level) {
    let mut s = Session {
        level,
        target: Target::Master,
        interactive: false,
    };
    let mut input = Input::default();
    loop {
        let line = match input.line(&c, IDLE).await {
            Ok(Some(l)) => String::from_utf8_lossy(&l).into_owned(),
            _ => return,
        };
        let mut out = Vec::new();
        let mut next = Next::Continue;
        for cmd in commands(&line) {
            let (prefix, rest) = match cmd.strip_prefix('@') {
                Some(_) => match cmd.split_once([' ', '\t']) {
                    Some((p, r)) => (Some(p), r.trim()),
                    None => (Some(cmd.as_str()), ""),
                },
                None => (None, cmd.as_str()),
            };
            let target = match prefix.map(|p| resolve(&m, p)) {
                None => s.target,
                Some(Some(t)) => t,
                Some(None) => {
                    let p = prefix.unwrap_or_default();
                    out.extend_from_slice(
                        format!("Can't find the target PID matching the prefix '{p}'\n").as_bytes(),
                    );
                    continue;
                }
            };
            if rest.is_empty() {
                s.target = target;
                continue;
            }
            let (answer, n) = match target {
                Target::Master => on_master(&m, &mut s, rest),
                Target::Pid(pid) => (on_worker(&m, pid, s.level, rest).await, Next::Continue),
            };
            out.extend_from_slice(&answer);
            if n == Next::Close {
                next = Next::Close;
                break;
            }
        }
        if s.interactive && next == Next::Continue {
            out.extend_from_slice(prompt(&m, &s).as_bytes());
        }
        let more = input.pending();
        let sent = tokio::time::timeout(IDLE, c.send_all(&out)).await;
        if !matches!(sent, Ok(Ok(()))) || next == Next::Close || !(s.interactive || more) {
            return;
        }
    }
}

/// A line's commands: split at each `;` not escaped by `\`, escapes kept
/// (a worker reads them again), trimmed, empty ones dropped.
pub(super) fn commands(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                cur.push(c);
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            ';' => out.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    out.push(cur);
    out.into_iter()
        .map(|c| c.trim().to_string())
        .filter(|c| !c.is_empty())
        .collect()
}

/// `@`, `@master`, `@<n>` (1: the current worker), `@!<pid>` (a worker,
/// old ones included).
fn resolve(m: &Master, prefix: &str) -> Option<Target> {
    let t = m.table();
    match prefix.strip_prefix('@')? {
        "" | "master" => Some(Target::Master),
        p => match p.strip_prefix('!') {
            Some(pid) => {
                let pid: i32 = pid.parse().ok()?;
                t.get(pid)
                    .filter(|c| c.kind == procs::Kind::Worker)
                    .map(|_| Target::Pid(pid))
            }
            None => (p == "1").then(|| t.newest_worker().map(Target::Pid))?,
        },
    }
}

fn prompt(m: &Master, s: &Session) -> String {
    match s.target {
        Target::Master if m.table().last_failed => "master[ReloadFailed]> ".into(),
        Target::Master => "master> ".into(),
        Target::Pid(pid) => format!("{pid}> "),
    }
}

/// A command for the master itself.
fn on_master(m: &Master, s: &mut Session, cmd: &str) -> (Vec<u8>, Next) {
    let words = split(cmd).into_iter().next().unwrap_or_default();
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    let text = match words.as_slice() {
        ["help", ..] => HELP.to_string() + "\n",
        ["prompt", ..] => {
            s.interactive = !s.interactive;
            String::new()
        }
        // (haproxy prompts once more before it closes.)
        ["quit", ..] if s.interactive => return (prompt(m, s).into_bytes(), Next::Close),
        ["quit", ..] => return (Vec::new(), Next::Close),
        ["show", "proc", ..] => {
            let t = m.table();
            procs::show_proc(&t, m.pid, m.start.elapsed(), env!("CARGO_PKG_VERSION"))
        }
        ["show", "version", ..] => format!("{}\n\n", env!("CARGO_PKG_VERSION")),
        ["show", "cli", "level", ..] => format!("{}\n\n", s.level.name()),
        ["operator"] if s.level >= Level::Operator => {
            s.level = Level::Operator;
            String::new()
        }
        ["user"] => {
            s.level = Level::User;
            String::new()
        }
        ["reload", ..] if s.level >= Level::Operator => {
            let _ = m.reload.send(());
            return (Vec::new(), Next::Close);
        }
        ["reload", ..] | ["operator"] => "Permission denied\n\n".into(),
        _ => format!(
            "Unknown command, but maybe one of the following ones is a better match:\n{}\n",
            HELP.split_once('\n').map_or("", |h| h.1)
        ),
    };
    (text.into_bytes(), Next::Continue)
}

/// A runtime API command for a worker: its answer, or why there is none.
async fn on_worker(m: &Master, pid: i32, level: Level, cmd: &str) -> Vec<u8> {
    let Some(link) = m.link(pid) else {
        return format!("Can't find the target PID matching the prefix '@!{pid}'\n").into_bytes();
    };
    // The worker's session is at admin level: lower it to this one's.
    let line = match level {
        Level::Admin => format!("{cmd}\n"),
        l => format!("{}; {cmd}\n", l.name()),
    };
    match forward(&link, &line).await {
        Ok(a) => a,
        Err(e) => format!("Can't talk to process {pid}: {e}\n\n").into_bytes(),
    }
}

/// A new runtime API connection to the worker behind `link`.
async fn connect(link: &Link) -> std::io::Result<std::os::unix::net::UnixStream> {
    let (mine, theirs) = std::os::unix::net::UnixStream::pair()?;
    link.send(b"C", Some(theirs.as_raw_fd())).await?;
    Ok(mine)
}

/// Sends `line` on a new connection; the whole answer.
async fn forward(link: &Link, line: &str) -> std::io::Result<Vec<u8>> {
    let s = connect(link).await?;
    s.set_nonblocking(true)?;
    let mut s = tokio::net::UnixStream::from_std(s)?;
    let talk = async {
        s.write_all(line.as_bytes()).await?;
        let mut out = Vec::new();
        s.read_to_end(&mut out).await?;
        Ok(out)
    };
    tokio::time::timeout(ANSWER, talk)
        .await
        .unwrap_or_else(|_| Err(std::io::Error::other("no answer")))
}

/// The listening sockets of the worker behind `link` (`_getsocks`).
pub(super) async fn getsocks(link: &Link) -> std::io::Result<Vec<OwnedFd>> {
    let s = connect(link).await?;
    tokio::task::spawn_blocking(move || crate::takeover::fetch_fds(s))
        .await
        .map_err(std::io::Error::other)?
}

#[cfg(test)]
#[path = "cli_tests.rs"]
mod tests;
