//! The `stats socket` listener: the runtime API. Each connection reads a
//! line, runs its `;`-separated commands (each answer ends with a blank
//! line) and closes, or with `prompt` stays open and prompts with `> `.
//! Commands above the socket's `level` are refused. A line longer than
//! [`MAX_LINE`] or a client silent past `stats timeout` ([`IDLE`] without
//! it) ends the connection; the socket runs on the main thread, so nothing
//! a client does blocks workers.

use crate::conn::Conn;
use crate::listen::Listener;
use crate::state::Shared;
use crate::worker::{accept, AnyListener};
use std::sync::Arc;
use std::time::Duration;
use weir_admin::cli::{self, CliError, Command, Level};

/// Longest command line taken.
const MAX_LINE: usize = 64 * 1024;
/// How long a client may stay silent without `stats timeout` (HAProxy's
/// default).
const IDLE: Duration = Duration::from_secs(10);

/// Answers connections until soft stop. `exposed`: the listening sockets
/// `_getsocks` hands over (`expose-fd listeners`).
pub async fn serve(
    sh: Arc<Shared>,
    l: Listener,
    level: Level,
    exposed: Option<Arc<Vec<std::os::fd::OwnedFd>>>,
) {
    let mut stop = sh.stopping.subscribe();
    let Ok(l) = AnyListener::register(l) else {
        return;
    };
    loop {
        tokio::select! {
            r = accept(&l, None) => if let Ok((c, _, _)) = r {
                let sh = sh.clone();
                let exposed = exposed.clone();
                crate::profile::spawn::<crate::profile::Cli, _>(async move {
                    session(&sh, &c, level, exposed.as_deref()).await
                });
            },
            _ = stop.wait_for(|v| *v) => return,
        }
    }
}

/// What one line asks of the session after its answer.
#[derive(PartialEq)]
enum Next {
    Continue,
    Close,
}

async fn session(sh: &Shared, c: &Conn, level: Level, exposed: Option<&Vec<std::os::fd::OwnedFd>>) {
    let mut buf: Vec<u8> = Vec::new();
    let mut mode = Mode {
        level,
        interactive: false,
        experimental: false,
    };
    let mut chunk = [0u8; 4096];
    let idle = sh.cfg.global.stats_timeout.unwrap_or(IDLE);
    loop {
        let line = loop {
            if let Some(nl) = buf.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = buf.drain(..=nl).collect();
                break line;
            }
            if buf.len() > MAX_LINE {
                let _ = send(c, b"Command line too long.\n\n", idle).await;
                return;
            }
            match tokio::time::timeout(idle, c.recv(&mut chunk)).await {
                Ok(Ok(n)) if n > 0 => buf.extend_from_slice(&chunk[..n]),
                // End of input: a last line without its newline still runs.
                Ok(Ok(_)) if !buf.is_empty() => break std::mem::take(&mut buf),
                _ => return,
            }
        };
        let text = String::from_utf8_lossy(&line);
        // `_getsocks`: the listening sockets, then the end of the session.
        if text.trim() == "_getsocks" {
            match exposed {
                Some(fds) => {
                    if crate::takeover::send(c, fds).await.is_ok() {
                        sh.handed_over
                            .store(true, std::sync::atomic::Ordering::SeqCst);
                    }
                }
                None => {
                    let _ = send(c, b"Permission denied\n\n", idle).await;
                }
            }
            return;
        }
        let (out, next) = answer(sh, &text, &mut mode).await;
        let mut out = out.into_bytes();
        if mode.interactive && next == Next::Continue {
            out.extend_from_slice(b"> ");
        }
        if !send(c, &out, idle).await || next == Next::Close || !mode.interactive {
            return;
        }
    }
}

async fn send(c: &Conn, b: &[u8], idle: Duration) -> bool {
    matches!(tokio::time::timeout(idle, c.send_all(b)).await, Ok(Ok(())))
}

/// What a CLI session has set for itself.
struct Mode {
    level: Level,
    /// `prompt`: the session stays open and prompts.
    interactive: bool,
    /// `experimental-mode on`.
    experimental: bool,
}

/// Runs one line's commands; every answer ends with a blank line.
async fn answer(sh: &Shared, line: &str, mode: &mut Mode) -> (String, Next) {
    let level = &mut mode.level;
    let mut out = String::new();
    let cmds = cli::split(line);
    if cmds.is_empty() && mode.interactive {
        return (out, Next::Continue);
    }
    for words in cmds {
        let cmd = match cli::parse(&words) {
            Ok(c) => c,
            Err(CliError::Unknown) => {
                out.push_str(&cli::unknown(&words, *level));
                out.push('\n');
                continue;
            }
            Err(CliError::Usage(m)) => {
                out.push_str(&m);
                out.push_str("\n\n");
                continue;
            }
        };
        if cmd.level() > *level {
            out.push_str("Permission denied\n\n");
            continue;
        }
        match &cmd {
            Command::Quit => return (out, Next::Close),
            Command::Prompt => mode.interactive = !mode.interactive,
            Command::ExperimentalMode(on) => mode.experimental = *on,
            Command::SetVar { .. } if !mode.experimental => {
                out.push_str("This command is restricted to experimental mode only.\n")
            }
            Command::Help => out.push_str(&cli::help(*level)),
            Command::Lower(l) => *level = (*l).min(*level),
            Command::ShowCliLevel => {
                out.push_str(level.name());
                out.push('\n');
            }
            _ => out.push_str(&crate::runtime::run_async(sh, &cmd).await),
        }
        out.push('\n');
    }
    (out, Next::Continue)
}
