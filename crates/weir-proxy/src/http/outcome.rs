//! What an exchange produced for its log line and counters, and the
//! answers weir gives itself when it ends early: error pages, local
//! responses (deny, return, redirect, tarpit).

use super::errors;
use super::io::{Buf, XferError};
use super::peer::Peer;
use super::rules::{ExCtx, Local, Vars};
use crate::conn::Io;
use crate::state::ServerId;
use crate::state::{BackendRt, Shared};
use crate::term::{Cause, State, Term};
use weir_config::Proxy;
use weir_proto::h1::{Framing, RequestHead};

/// What one exchange produced for the log line.
pub(super) struct Outcome<'r> {
    /// The backend and server used, to log their connection counts.
    pub(super) be: Option<&'r BackendRt>,
    pub(super) srv: Option<ServerId>,
    pub(super) status: i32,
    pub(super) term: Term,
    pub(super) bytes_in: u64,
    pub(super) bytes_out: u64,
    pub(super) t_res: i64,
    pub(super) keep_client: bool,
    pub(super) tunnel: bool,
    /// `monitor-uri` answers are not logged.
    pub(super) nolog: bool,
    /// An answer weir made, sent once the exchange is logged: as in
    /// haproxy, whose log line is written before its answer leaves, a
    /// client that reads the answer finds the line already written.
    pub(super) unsent: Vec<u8>,
}

impl<'r> Outcome<'r> {
    /// The same outcome, counted on backend `be` and server `srv` (the
    /// failures after a backend was chosen: haproxy counts them there).
    pub(super) fn at(mut self, be: &'r BackendRt, srv: Option<ServerId>) -> Self {
        self.be = Some(be);
        self.srv = srv;
        self
    }

    pub(super) fn error(status: u16, term: Term) -> Self {
        Outcome {
            be: None,
            srv: None,
            status: i32::from(status),
            term,
            bytes_in: 0,
            bytes_out: 0,
            t_res: -1,
            keep_client: false,
            tunnel: false,
            nolog: false,
            unsent: Vec::new(),
        }
    }
}

/// `px`'s error page for `status` (none for 0: the client is gone), to be
/// sent once the outcome is logged.
pub(super) fn fail<'r>(px: &Proxy, fe_px: &Proxy, status: u16, term: Term) -> Outcome<'r> {
    fail_as(px, fe_px, status, term, false)
}

/// [`fail`], telling the client that the connection ends when `close`
/// (a request that could not be read to its end: `connection: close`
/// after the page's fields, as haproxy 2.6 writes it).
pub(super) fn fail_as<'r>(
    px: &Proxy,
    fe_px: &Proxy,
    status: u16,
    term: Term,
    close: bool,
) -> Outcome<'r> {
    let mut o = Outcome::error(status, term);
    if status == 0 {
        o.status = -1;
        return o;
    }
    let mut page = errors::response_of(&[px, fe_px], status, false);
    if close {
        page = errors::with_header(page, "connection: close");
    }
    o.bytes_out = weir_proto::h1::htx::written_response(&page);
    o.unsent = page;
    o
}

/// The termination state of a request body that failed on its way up.
pub(super) fn upload_term(e: XferError) -> Term {
    match e {
        XferError::Invalid(_) => Term::new(Cause::Proxy, State::Data),
        XferError::SrcTimeout => Term::new(Cause::ClientTimeout, State::Data),
        XferError::SrcClosed | XferError::SrcError => Term::new(Cause::Client, State::Data),
        XferError::DstError => Term::new(Cause::Server, State::Data),
        XferError::DstTimeout => Term::new(Cause::ServerTimeout, State::Data),
    }
}

/// Sends a response weir made (deny, return, redirect, tarpit) in place of
/// the server's. A request body is not read: the connection closes then.
pub(super) fn answer_local<'r>(
    cbuf: &mut Buf,
    used: usize,
    req: &RequestHead,
    local: Local,
) -> Outcome<'r> {
    // An empty answer (`errorfile /dev/null`) closes without one.
    let keep =
        local.keep && req.keep_alive && req.framing == Framing::None && !local.bytes.is_empty();
    cbuf.consume(used);
    let mut bytes = local.bytes;
    // Counted as made: haproxy's own `connection: close` is written on the
    // way out, not part of the answer it counts.
    let size = weir_proto::h1::htx::written_response(&bytes);
    if !keep && !bytes.is_empty() {
        // Tell the client the connection ends here.
        bytes = errors::with_header(bytes, "connection: close");
    }
    Outcome {
        be: None,
        srv: None,
        status: i32::from(local.status),
        term: local.term,
        bytes_in: 0,
        bytes_out: size,
        t_res: -1,
        keep_client: keep,
        tunnel: false,
        nolog: false,
        unsent: bytes,
    }
}

/// `http-after-response` on an answer weir made: the backend's rules (when
/// one was chosen and is another proxy), then the frontend's.
pub(super) fn after(
    local: Local,
    sh: &Shared,
    fe_px: &Proxy,
    be: Option<&BackendRt>,
    vars: &mut Vars,
    view: &ExCtx<'_>,
) -> Local {
    let be_px = be.map(|b| sh.proxy(b.proxy));
    super::rules::after_local(
        local,
        super::rules::response_order(be_px, fe_px),
        true,
        vars,
        view,
    )
}

/// `http-response silent-drop`: a stand-in answer of no bytes and no
/// status, which [`dropped`] turns into the reset.
pub(super) fn silent_drop() -> Local {
    Local {
        bytes: Vec::new(),
        status: 0,
        term: Term::new(Cause::Proxy, State::Request),
        keep: false,
    }
}

/// Whether a rule's answer is [`silent_drop`]'s.
pub(super) fn is_silent_drop(l: &Local) -> bool {
    l.status == 0 && l.bytes.is_empty()
}

/// The exchange after `http-response silent-drop`: both connections
/// reset, nothing sent; logged as haproxy logs it, with the server's
/// status, `PR` and no response time.
pub(super) fn dropped<'r>(
    client: Peer<'_>,
    server: Peer<'_>,
    status: u16,
    bytes_in: u64,
) -> Outcome<'r> {
    client.set_reset_on_close();
    server.set_reset_on_close();
    let mut o = Outcome::error(status, Term::new(Cause::Proxy, State::Request));
    o.bytes_in = bytes_in;
    o
}
