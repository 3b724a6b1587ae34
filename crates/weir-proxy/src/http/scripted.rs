//! `use-service lua.<name>` on an HTTP request: the script's answer, run
//! through the response rules as a server's, logged as haproxy logs an
//! applet (no queue, connected at once).

use super::errors;
use super::io::Buf;
use super::outcome::{answer_local, Outcome};
use super::rules::{ExCtx, Local, Vars};
use crate::log::LogRecord;
use crate::state::{BackendRt, Shared};
use crate::term::{Cause, State, Term};
use weir_config::Proxy;
use weir_proto::h1::{Framing, RequestHead};

/// Runs Lua service `name` on `req` (whose head is `used` bytes of
/// `cbuf`), answers and says how it ended.
#[allow(clippy::too_many_arguments)]
pub(super) async fn service<'r>(
    sh: &Shared,
    fe_px: &Proxy,
    be: Option<&BackendRt>,
    name: &str,
    view: &ExCtx<'_>,
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
    let began = crate::clock::now();
    let (ans, st) = crate::lua::http_service(sh, name, st).await;
    rec.tw = 0;
    rec.tc = 0;
    let t_res = crate::clock::now()
        .saturating_duration_since(began)
        .as_millis() as i64;
    if let Some(v) = st.vars {
        *vars = v;
    }
    let term = Term::new(Cause::Local, State::Request);
    // A close-delimited answer (to HTTP/1.0) says nothing more.
    let unframed = ans.as_ref().is_some_and(|a| !a.keep);
    let local = match ans {
        Some(a) => {
            let local = Local {
                bytes: a.bytes,
                status: a.status,
                term,
                keep: a.keep,
            };
            let be_px = be.map(|b| sh.proxy(b.proxy));
            let order = super::rules::response_order(be_px, fe_px);
            super::rules::after_local(local, order, false, vars, view)
        }
        // A function that answered nothing: a 500, as haproxy's.
        None => Local {
            bytes: errors::reply_of(&[fe_px], 500, view),
            status: 500,
            term,
            keep: !errors::closes(500),
        },
    };
    let unframed = unframed.then(|| local.bytes.clone());
    let o = match whole {
        Some(b) => {
            let mut taken = req.clone();
            taken.framing = Framing::None;
            answer_local(cbuf, used + b.len(), &taken, local)
        }
        None => answer_local(cbuf, used, req, local),
    };
    match unframed {
        Some(bytes) => Outcome {
            t_res,
            bytes_out: bytes.len() as u64,
            unsent: bytes,
            ..o
        },
        None => Outcome { t_res, ..o },
    }
}
