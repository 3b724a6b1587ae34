//! SPOE engines (`filter spoe`, haproxy's doc/SPOE.txt): an agent, the
//! messages it is sent on events or by rules, and their groups, read from
//! the engine's own file.

use crate::diag::Loc;
use std::time::Duration;

/// One `filter spoe [engine <name>] config <file>` line.
#[derive(Debug, Clone)]
pub struct SpoeEngine {
    /// The `engine` name, else the agent's name (rules name it).
    pub id: String,
    pub agent: SpoeAgent,
    pub messages: Vec<SpoeMessage>,
    pub groups: Vec<SpoeGroup>,
    /// The filter line.
    pub loc: Loc,
}

/// The `spoe-agent` section of an engine.
#[derive(Debug, Clone)]
pub struct SpoeAgent {
    pub name: String,
    pub loc: Loc,
    /// `option var-prefix` (the agent's name by default).
    pub var_prefix: String,
    /// `use-backend`: the backend of the agent's servers.
    pub backend: String,
    /// `timeout hello|idle|processing` (none: no limit of their own; an
    /// exchange gives up after 30 s without `processing`).
    pub hello: Option<Duration>,
    pub idle: Option<Duration>,
    pub processing: Option<Duration>,
    /// `option set-on-error`, `set-process-time`, `set-total-time`: the
    /// `txn` variables (without scope and prefix).
    pub set_on_error: Option<String>,
    pub set_process_time: Option<String>,
    pub set_total_time: Option<String>,
    /// `option continue-on-error`.
    pub continue_on_error: bool,
    /// `max-frame-size` (16380 by default).
    pub max_frame_size: u32,
    /// `messages`: the messages sent on their events.
    pub messages: Vec<String>,
    /// `groups`: the groups rules may send.
    pub groups: Vec<String>,
}

/// When a message is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpoeEvent {
    /// A client's session starts (in `mode http`, before its first
    /// request's rules).
    ClientSession,
    /// Before the frontend's `tcp-request content` rules (in `mode http`,
    /// on each request).
    FrontendTcpRequest,
    /// Before the frontend's `http-request` rules.
    FrontendHttpRequest,
    /// Before the backend's `http-request` rules.
    BackendHttpRequest,
    /// Before the `http-response` rules.
    HttpResponse,
}

/// A `spoe-message` section.
#[derive(Debug, Clone)]
pub struct SpoeMessage {
    pub name: String,
    /// `args [name=]<sample> …` (an unnamed one has an empty name).
    pub args: Vec<(String, weir_rules::Expr)>,
    /// `event <name> [if|unless <cond>]` (the last one).
    pub event: Option<(SpoeEvent, Option<weir_rules::Cond>)>,
}

/// A `spoe-group` section.
#[derive(Debug, Clone)]
pub struct SpoeGroup {
    pub name: String,
    pub messages: Vec<String>,
}
