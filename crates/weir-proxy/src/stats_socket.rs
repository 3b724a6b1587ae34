//! The `stats socket` listener: the runtime API. Each connection reads a
//! line, runs its `;`-separated commands (each answer ends with a blank
//! line) and closes, or with `prompt` stays open and prompts with `> `.
//! Commands above the socket's `level` are refused. A line ending in `<<`
//! takes the lines after it, up to an empty one, as its payload. A line
//! longer than [`MAX_LINE`], a payload over [`MAX_PAYLOAD`] or a client
//! silent past `stats timeout` ([`IDLE`] without it) ends the connection; the socket runs on the main thread, so nothing
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
/// The most a `<<` payload may hold (a map or ACL file's worth of lines).
const MAX_PAYLOAD: usize = 16 * 1024 * 1024;
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

/// Serves one runtime API connection the master handed over (its end of
/// a socket pair): admin level, and `_getsocks` answered.
pub fn serve_handed(
    sh: Arc<Shared>,
    fd: std::os::fd::OwnedFd,
    exposed: Option<Arc<Vec<std::os::fd::OwnedFd>>>,
) {
    let std = std::os::unix::net::UnixStream::from(fd);
    if std.set_nonblocking(true).is_err() {
        return;
    }
    let Ok(s) = tokio::net::UnixStream::from_std(std) else {
        return;
    };
    crate::profile::spawn::<crate::profile::Cli, _>(async move {
        session(&sh, &Conn::Unix(s), Level::Admin, exposed.as_deref()).await
    });
}

/// Hands this process's listening sockets (`_getsocks`) and its session
/// ticket secret (`_gettickets`) to a new weir started with
/// `-sf <this pid>` without `-x` (through [`crate::takeover::private_name`],
/// to root or this process's user only), until soft stop.
pub fn serve_private(sh: &Arc<Shared>, exposed: Arc<Vec<std::os::fd::OwnedFd>>) {
    let l = match crate::takeover::bind_private()
        .and_then(|l| l.set_nonblocking(true).map(|()| l))
        .and_then(tokio::net::UnixListener::from_std)
    {
        Ok(l) => l,
        Err(e) => {
            crate::log::console(
                "WARNING",
                &format!("cannot offer the listening sockets to the next process: {e}"),
            );
            return;
        }
    };
    let sh = sh.clone();
    tokio::spawn(async move {
        let mut stop = sh.stopping.subscribe();
        loop {
            tokio::select! {
                r = l.accept() => if let Ok((c, _)) = r {
                    if !crate::takeover::trusted_peer(&c) {
                        continue;
                    }
                    let (sh, exposed) = (sh.clone(), exposed.clone());
                    tokio::spawn(async move {
                        let c = Conn::Unix(c);
                        let mut input = Input::default();
                        let asked = input.line(&c, IDLE).await;
                        match asked.as_ref().map(|l| l.as_deref().map(<[u8]>::trim_ascii)) {
                            Ok(Some(b"_getsocks")) => {
                                let sent = crate::takeover::send(&c, &exposed).await;
                                sh.handed_over
                                    .fetch_or(sent.is_ok(), std::sync::atomic::Ordering::SeqCst);
                            }
                            Ok(Some(b"_gettickets")) => {
                                let hex: String = crate::tls::tickets::secret()
                                    .iter()
                                    .map(|b| format!("{b:02x}"))
                                    .collect();
                                let _ = c.send_all(format!("weir-tickets {hex}\n").as_bytes()).await;
                            }
                            _ => {}
                        }
                    });
                },
                _ = stop.wait_for(|v| *v) => return,
            }
        }
    });
}

/// What one line asks of the session after its answer.
#[derive(PartialEq)]
enum Next {
    Continue,
    Close,
}

async fn session(
    sh: &Arc<Shared>,
    c: &Conn,
    level: Level,
    exposed: Option<&Vec<std::os::fd::OwnedFd>>,
) {
    let mut mode = Mode {
        level,
        interactive: false,
        experimental: false,
    };
    let idle = sh.cfg.global.stats_timeout.unwrap_or(IDLE);
    let mut input = Input { buf: Vec::new() };
    loop {
        let line = match input.line(c, idle).await {
            Ok(Some(l)) => l,
            Ok(None) => return,
            Err(()) => {
                let _ = send(c, b"Command line too long.\n\n", idle).await;
                return;
            }
        };
        let text = String::from_utf8_lossy(&line).into_owned();
        // A line ending in `<<` is followed by a payload, up to an empty
        // line (or the end of input).
        let mut payload = Vec::new();
        if text.trim_end().ends_with("<<") {
            let mut size = 0;
            while let Ok(Some(l)) = input.line(c, idle).await {
                let l = String::from_utf8_lossy(&l).trim_end().to_string();
                if l.is_empty() {
                    break;
                }
                size += l.len() + 1;
                if size > MAX_PAYLOAD {
                    let _ = send(c, b"Payload too large.\n\n", idle).await;
                    return;
                }
                payload.push(l);
            }
        }
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
        let (out, next) = answer(sh, &text, &payload, &mut mode).await;
        let mut out = out.into_bytes();
        if mode.interactive && next == Next::Continue {
            out.extend_from_slice(b"> ");
        }
        // Without `prompt`, the lines that came with this one are answered
        // too, as haproxy does; then the session ends.
        let more = input.pending();
        if !send(c, &out, idle).await || next == Next::Close || !(mode.interactive || more) {
            return;
        }
    }
}

/// What a session has received and not yet run.
#[derive(Default)]
pub(crate) struct Input {
    buf: Vec<u8>,
}

impl Input {
    /// More than blanks came after the last line taken.
    pub(crate) fn pending(&self) -> bool {
        self.buf.iter().any(|b| !b.is_ascii_whitespace())
    }

    /// The next line (with its newline); at the end of input, what is
    /// left without one (`None` when nothing is). `Err` when a line grows
    /// past [`MAX_LINE`].
    pub(crate) async fn line(&mut self, c: &Conn, idle: Duration) -> Result<Option<Vec<u8>>, ()> {
        let mut chunk = [0u8; 4096];
        loop {
            if let Some(nl) = self.buf.iter().position(|&b| b == b'\n') {
                return Ok(Some(self.buf.drain(..=nl).collect()));
            }
            if self.buf.len() > MAX_LINE {
                return Err(());
            }
            match tokio::time::timeout(idle, c.recv(&mut chunk)).await {
                Ok(Ok(n)) if n > 0 => self
                    .buf
                    .extend_from_slice(chunk.get(..n).unwrap_or_default()),
                Ok(Ok(_)) if !self.buf.is_empty() => {
                    return Ok(Some(std::mem::take(&mut self.buf)))
                }
                _ => return Ok(None),
            }
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
async fn answer(
    sh: &Arc<Shared>,
    line: &str,
    payload: &[String],
    mode: &mut Mode,
) -> (String, Next) {
    let level = &mut mode.level;
    let mut out = String::new();
    let cmds = cli::split_with_payload(line, payload);
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
            Command::Table(t) => {
                let operator = *level >= cli::Level::Operator;
                out.push_str(&crate::runtime::tables::run(sh, t, operator))
            }
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
