//! `set server <bk>/<srv> …`: its sub-commands parsed, worded as haproxy
//! 2.6 answers a wrong one.

use crate::cli::{parse_weight, AdminState, CliError, Command, ServerRef};

/// What `set server` changes of a server's checks and agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckSet {
    /// `check-addr <ip> [port <port>]` (checked by the runtime, as
    /// haproxy answers there).
    CheckAddr(String, Option<String>),
    CheckPort(String),
    /// `agent-addr <ip> [port <port>]`.
    AgentAddr(String, Option<String>),
    AgentPort(String),
    AgentSend(String),
    /// `agent up|down`.
    Agent(bool),
    Health(Health),
}

/// `set server … health up|stopping|down`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Health {
    Up,
    Stopping,
    Down,
}

fn usage(m: &str) -> CliError {
    CliError::Usage(m.into())
}

/// Parses what follows `set server <bk>/<srv>`.
pub(crate) fn set_server(s: ServerRef, rest: &[&str]) -> Result<Command, CliError> {
    use Command::*;
    let arg = |i: usize| rest.get(i).map(|a| a.to_string());
    let check = |c: CheckSet| Ok(SetServerCheck(s.clone(), c));
    match rest {
        ["weight", ..] => Ok(SetWeight(s.clone(), parse_weight(arg(1).as_ref())?)),
        ["state", st] => {
            let st = match *st {
                "ready" => AdminState::Ready,
                "drain" => AdminState::Drain,
                "maint" => AdminState::Maint,
                _ => return Err(state_usage()),
            };
            Ok(SetState(s, st))
        }
        ["state", ..] => Err(state_usage()),
        ["addr", a] => Ok(SetAddr(s, a.to_string(), None)),
        ["addr", a, "port", p] => {
            let p = p
                .parse::<u16>()
                .ok()
                .filter(|p| *p > 0)
                .ok_or_else(|| usage(&format!("'{p}' is not a valid port.")))?;
            Ok(SetAddr(s, a.to_string(), Some(p)))
        }
        ["addr", ..] => Err(usage(
            "'set server <srv> addr' expects <addr> [port <port>].",
        )),
        ["ssl", "on"] => Ok(SetServerSsl(s, true)),
        ["ssl", "off"] => Ok(SetServerSsl(s, false)),
        ["ssl", ..] => Err(usage("'set server <srv> ssl' expects 'on' or 'off'.")),
        ["fqdn", name] => Ok(SetServerFqdn(s, name.to_string())),
        ["fqdn", ..] => Err(usage("set server <b>/<s> requires an FQDN.")),
        ["check-addr", a] => check(CheckSet::CheckAddr(a.to_string(), None)),
        ["check-addr", a, "port", p] => {
            check(CheckSet::CheckAddr(a.to_string(), Some(p.to_string())))
        }
        ["check-addr", ..] => Err(usage(
            "set server <b>/<s> check-addr requires an address and optionally a port.",
        )),
        ["check-port", p] => check(CheckSet::CheckPort(p.to_string())),
        ["check-port", ..] => Err(usage("set server <b>/<s> check-port requires an integer.")),
        ["agent-addr", a] => check(CheckSet::AgentAddr(a.to_string(), None)),
        ["agent-addr", a, "port", p] => {
            check(CheckSet::AgentAddr(a.to_string(), Some(p.to_string())))
        }
        ["agent-addr", ..] => Err(usage(
            "set server <b>/<s> agent-addr requires an address and optionally a port.",
        )),
        ["agent-port", p] => check(CheckSet::AgentPort(p.to_string())),
        ["agent-port", ..] => Err(usage("set server <b>/<s> agent-port requires a port.")),
        ["agent-send", v] => check(CheckSet::AgentSend(v.to_string())),
        ["agent-send", ..] => Err(usage("set server <b>/<s> agent-send requires a value.")),
        ["agent", "up"] => check(CheckSet::Agent(true)),
        ["agent", "down"] => check(CheckSet::Agent(false)),
        ["agent", ..] => Err(usage("'set server <srv> agent' expects 'up' or 'down'.")),
        ["health", "up"] => check(CheckSet::Health(Health::Up)),
        ["health", "stopping"] => check(CheckSet::Health(Health::Stopping)),
        ["health", "down"] => check(CheckSet::Health(Health::Down)),
        ["health", ..] => Err(usage(
            "'set server <srv> health' expects 'up', 'stopping', or 'down'.",
        )),
        _ => Err(usage(
            "'set server <srv>' only supports 'agent', 'health', 'state', 'weight', 'addr', 'fqdn', 'check-addr', 'check-port', 'agent-addr', 'agent-port', 'agent-send' and 'ssl'.",
        )),
    }
}

fn state_usage() -> CliError {
    usage("'set server <srv> state' expects 'ready', 'drain' and 'maint'.")
}
