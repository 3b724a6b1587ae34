//! `use-service lua.<name>` on an HTTP request: the script's head (run
//! through the response rules, as a server's) and each `send` go to the
//! client as the script makes them; logged as haproxy logs an applet (no
//! queue, connected at once).

use super::errors;
use super::io::{chunk, send, Buf};
use super::outcome::{answer_local, Outcome};
use super::peer::Peer;
use super::rules::{ExCtx, Local, Vars};
use crate::log::LogRecord;
use crate::lua::AppletOut;
use crate::state::{BackendRt, Shared};
use crate::term::{Cause, State, Term};
use weir_config::Proxy;
use weir_proto::h1::{Framing, RequestHead};

/// Where a service's answer stands.
struct Down<'a, 'v> {
    client: Peer<'a>,
    timeout: Option<std::time::Duration>,
    /// HTTP/1.0 client (no chunks), HEAD request (no body).
    minor: u8,
    head_only: bool,
    /// The connection may stay open after the answer (the client asks so
    /// and its request body was read whole).
    keep: bool,
    /// The head went out: its status, and how the body is framed.
    status: Option<u16>,
    chunked: bool,
    sized: bool,
    sent: u64,
    /// The client is gone, or a rule answered in the service's place.
    over: bool,
    t_res: i64,
    began: tokio::time::Instant,
    rules: Rules<'v>,
}

/// What the response rules need.
struct Rules<'v> {
    sh: &'v Shared,
    fe_px: &'v Proxy,
    be: Option<&'v BackendRt>,
    view: &'v ExCtx<'v>,
}

impl Down<'_, '_> {
    async fn put(&mut self, bytes: &[u8]) {
        if self.over || bytes.is_empty() {
            return;
        }
        match send(self.client, bytes, self.timeout).await {
            Ok(()) => self.sent += bytes.len() as u64,
            Err(_) => self.over = true,
        }
    }

    async fn take(&mut self, m: AppletOut, vars: &mut Vars) {
        match m {
            AppletOut::Head {
                status,
                reason,
                headers,
            } => self.head(status, reason, headers, vars).await,
            AppletOut::Data(d) if !self.head_only => {
                let out = if self.chunked { chunk(&d) } else { d };
                self.put(&out).await;
            }
            AppletOut::Data(_) => {}
        }
    }

    async fn head(
        &mut self,
        status: u16,
        reason: Option<String>,
        headers: Vec<(String, Vec<u8>)>,
        vars: &mut Vars,
    ) {
        self.t_res = crate::clock::now()
            .saturating_duration_since(self.began)
            .as_millis() as i64;
        let reason =
            reason.unwrap_or_else(|| weir_proto::h1::status::generated_reason(status).to_string());
        let v = if self.minor == 0 { 0 } else { 1 };
        let mut head = format!("HTTP/1.{v} {status} {reason}\r\n").into_bytes();
        for (n, v) in &headers {
            self.sized |= n.eq_ignore_ascii_case("content-length")
                || n.eq_ignore_ascii_case("transfer-encoding");
            head.extend_from_slice(n.as_bytes());
            head.extend_from_slice(b": ");
            head.extend_from_slice(v);
            head.extend_from_slice(b"\r\n");
        }
        self.chunked = !self.sized && self.minor != 0;
        if self.chunked {
            head.extend_from_slice(b"transfer-encoding: chunked\r\n");
        }

        head.extend_from_slice(b"\r\n");
        let local = Local {
            bytes: head,
            status,
            term: Term::new(Cause::Local, State::Request),
            keep: true,
        };
        // The head goes through the response rules, as a server's.
        let r = &self.rules;
        let be_px = r.be.map(|b| r.sh.proxy(b.proxy));
        let order = super::rules::response_order(be_px, r.fe_px);
        let (local, whole_answer) =
            match super::rules::rules_on_local(local, order, false, vars, r.view) {
                Ok(head) => (head, false),
                Err(answer) => (answer, true),
            };
        self.status = Some(local.status);
        let bytes = if self.minor != 0 && (!self.keep || whole_answer) {
            // Tell the client the connection ends after this answer.
            errors::with_header(local.bytes, "connection: close")
        } else {
            local.bytes
        };
        self.put(&bytes).await;
        if whole_answer {
            // A rule answered in the service's place: that answer is all.
            self.over = true;
            self.chunked = false;
            self.sized = false;
        }
    }
}

/// Runs Lua service `name` on `req` (whose head is `used` bytes of
/// `cbuf`), answers and says how it ended.
#[allow(clippy::too_many_arguments)]
pub(super) async fn service<'r>(
    sh: &Shared,
    fe_px: &Proxy,
    be: Option<&BackendRt>,
    name: &str,
    view: &ExCtx<'_>,
    client: Peer<'_>,
    cbuf: &mut Buf,
    req: &RequestHead,
    used: usize,
    rec: &mut LogRecord<'_>,
    vars: &mut Vars,
) -> Outcome<'r> {
    // The body as far as it came with the head: a Content-Length body the
    // buffer holds whole is the service's to read, and consumed.
    let whole = match req.framing {
        Framing::ContentLength(n) => cbuf
            .bytes()
            .get(used..)
            .and_then(|b| b.get(..usize::try_from(n).ok()?))
            .map(<[u8]>::to_vec),
        Framing::None => Some(Vec::new()),
        _ => None,
    };
    let st = crate::lua::TxnState {
        body: whole.clone(),
        ..crate::lua::TxnState::of(&ExCtx {
            vars: Some(vars),
            ..*view
        })
    };
    rec.tw = 0;
    rec.tc = 0;
    let mut down = Down {
        client,
        timeout: fe_px.timeouts.client,
        minor: req.minor,
        head_only: req.method == "HEAD",
        keep: req.keep_alive && whole.is_some(),
        status: None,
        chunked: false,
        sized: false,
        sent: 0,
        over: false,
        t_res: -1,
        began: crate::clock::now(),
        rules: Rules {
            sh,
            fe_px,
            be,
            view,
        },
    };
    let (tx, mut rx) = tokio::sync::mpsc::channel(4);
    let run = crate::lua::http_service(sh, name, st, tx);
    tokio::pin!(run);
    let mut ended = None;
    while ended.is_none() && !down.over {
        tokio::select! {
            m = rx.recv() => match m {
                Some(m) => down.take(m, vars).await,
                None => break,
            },
            r = &mut run => ended = Some(r),
        }
    }
    while let Ok(m) = rx.try_recv() {
        down.take(m, vars).await;
    }
    if let Some((st, _)) = ended {
        if let Some(v) = st.vars {
            *vars = v;
        }
    }
    let Some(status) = down.status else {
        // A function that answered nothing: a 500, as haproxy's.
        let local = Local {
            bytes: errors::reply_of(&[fe_px], 500, view),
            status: 500,
            term: Term::new(Cause::Local, State::Request),
            keep: !errors::closes(500),
        };
        let o = answer_local(cbuf, used, req, local);
        return Outcome { t_res: 0, ..o };
    };
    if down.chunked && !down.over && !down.head_only {
        down.put(b"0\r\n\r\n").await;
    }
    let body_len = whole.as_ref().map(Vec::len);
    cbuf.consume(used + body_len.unwrap_or(0));
    let term = if down.over && down.status.is_some() && down.sent == 0 {
        Term::new(Cause::Client, State::Data)
    } else {
        Term::new(Cause::Local, State::Request)
    };
    let framed = down.chunked || down.sized;
    Outcome {
        be: None,
        srv: None,
        status: i32::from(status),
        term,
        bytes_in: 0,
        bytes_out: down.sent,
        t_res: down.t_res,
        keep_client: framed && !down.over && down.keep,
        tunnel: false,
        nolog: false,
        unsent: Vec::new(),
    }
}
