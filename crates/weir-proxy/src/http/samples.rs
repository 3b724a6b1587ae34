//! The log line's captures and `%[sample]` values, taken from the request
//! (and the response) as the exchange has them.

use super::rules::{ExCtx, Vars};
use crate::log::LogRecord;
use weir_config::Proxy;
use weir_proto::h1::RequestHead;

/// The values of `capture … header` lines: the last occurrence of each
/// header (as haproxy 2.6 keeps it), cut to its length (empty when
/// absent).
pub(crate) fn capture(caps: &[(String, usize)], headers: &[weir_proto::h1::Header]) -> Vec<String> {
    caps.iter()
        .map(|(name, len)| {
            headers
                .iter()
                .rfind(|h| h.is(name))
                .map(|h| {
                    let v = h.value().get(..*len).unwrap_or(h.value());
                    String::from_utf8_lossy(v).into_owned()
                })
                .unwrap_or_default()
        })
        .collect()
}

/// What the log record takes from a request before its rules: the
/// capture slots (header ones filled, rule ones empty, response ones
/// empty until a response comes) and the `unique-id-format` value (also
/// given to the `unique-id` fetch).
pub(super) fn start_record(
    fe_px: &Proxy,
    rec: &mut LogRecord<'_>,
    req: &RequestHead,
    vars: &mut Vars,
    tmpl: &ExCtx<'_>,
) {
    let slots = fe_px.http.capture_req.len() + fe_px.http.rule_captures.len();
    if slots > 0 {
        let mut caps = capture(&fe_px.http.capture_req, &req.headers);
        caps.resize(slots, String::new());
        rec.req_caps = Some(caps);
    }
    let res_slots = fe_px.http.capture_res.len() + fe_px.http.res_rule_captures.len();
    if res_slots > 0 {
        rec.res_caps = Some(vec![String::new(); res_slots]);
    }
    if let Some((name, len)) = &fe_px.http.capture_cookie {
        let req_cookie = capture_cookie(name, *len, &req.headers, false);
        rec.cookie_caps = Some(Box::new([req_cookie, None]));
    }
    if let Some(f) = &fe_px.http.unique_id_format {
        let view = ExCtx {
            req: Some(req),
            vars: Some(vars),
            ..*tmpl
        };
        let id = unique_id(f, rec, &view);
        vars.unique_id = Some(id.clone());
        rec.unique_id = Some(id);
    }
}

/// The log format's samples on the request as it stands (no response yet).
pub(super) fn request_samples(
    fe_px: &Proxy,
    rec: &mut LogRecord<'_>,
    tmpl: &ExCtx<'_>,
    req: &RequestHead,
    vars: &Vars,
    body: Option<&[u8]>,
) {
    let ctx = ExCtx {
        req: Some(req),
        vars: Some(vars),
        body,
        ..*tmpl
    };
    log_samples(fe_px, rec, &ctx);
}

/// Evaluates the `%[sample]` pieces of the frontend's log format.
pub(crate) fn log_samples(fe_px: &Proxy, rec: &mut LogRecord<'_>, ctx: &ExCtx<'_>) {
    let Some(f) = &fe_px.log_format else { return };
    let samples = eval_samples(f, ctx);
    if !samples.is_empty() {
        rec.samples = samples;
    }
}

/// The values of a format's `%[sample]` pieces, in order (empty where a
/// fetch finds nothing).
fn eval_samples(f: &weir_config::logformat::LogFormat, ctx: &ExCtx<'_>) -> Vec<String> {
    f.pieces
        .iter()
        .filter_map(|p| match p {
            weir_config::logformat::Piece::Sample { expr, .. } => Some(
                expr.eval(ctx)
                    .map(|v| String::from_utf8_lossy(&v.to_bytes()).into_owned())
                    .unwrap_or_default(),
            ),
            _ => None,
        })
        .collect()
}

/// A request's `unique-id-format` value: its own `%[sample]` pieces
/// evaluated on the request, its other fields from the log record.
pub(crate) fn unique_id(
    f: &weir_config::logformat::LogFormat,
    rec: &mut LogRecord<'_>,
    ctx: &ExCtx<'_>,
) -> String {
    let samples = eval_samples(f, ctx);
    let saved = std::mem::replace(&mut rec.samples, samples);
    let id = crate::log::render_as(f, rec, "");
    rec.samples = saved;
    id
}

/// `capture cookie <name> len <len>`: the first cookie (of `Cookie`
/// headers, or of `Set-Cookie` ones for a response) whose name starts with
/// `name` (is `name` when it ends with `=`), as `name=value` cut to `len`.
pub(super) fn capture_cookie(
    name: &str,
    len: usize,
    headers: &[weir_proto::h1::Header],
    response: bool,
) -> Option<String> {
    let (field, exact) = match name.strip_suffix('=') {
        Some(n) => (n, true),
        None => (name, false),
    };
    let wanted = |c: &str| {
        let n = c.split('=').next().unwrap_or("");
        if exact {
            n == field
        } else {
            n.starts_with(field)
        }
    };
    let header = if response { "set-cookie" } else { "cookie" };
    let found = headers
        .iter()
        .filter(|h| h.name().eq_ignore_ascii_case(header))
        .filter_map(|h| std::str::from_utf8(h.value()).ok())
        .flat_map(|v| {
            // A response's cookie ends at its first attribute; a request
            // lists several.
            let mut parts = v.split(';');
            let first = parts.next();
            first.into_iter().chain(parts.filter(move |_| !response))
        })
        .map(str::trim)
        .find(|c| c.contains('=') && wanted(c))?;
    Some(found.chars().take(len).collect())
}

/// Values of the `capture-req(<id>)` and `capture-res(<id>)` converters
/// (converters see the variables shared, hence the lock): (response,
/// slot id, value), put in the log's slots once the rules ran.
#[derive(Default)]
pub struct ConvCaptures(std::sync::Mutex<Vec<(bool, usize, Vec<u8>)>>);

impl Clone for ConvCaptures {
    fn clone(&self) -> Self {
        ConvCaptures(std::sync::Mutex::new(self.lock().clone()))
    }
}

impl ConvCaptures {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(bool, usize, Vec<u8>)>> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub fn push(&self, res: bool, id: usize, v: Vec<u8>) {
        self.lock().push((res, id, v));
    }

    /// The values for the request's slots (`res` false) or the
    /// response's, taken out.
    pub fn take(&self, res: bool) -> Vec<(usize, Vec<u8>)> {
        let mut all = self.lock();
        let (mine, rest) = all.drain(..).partition::<Vec<_>, _>(|c| c.0 == res);
        *all = rest;
        mine.into_iter().map(|(_, id, v)| (id, v)).collect()
    }

    /// Puts the values into `caps`, the log's slots: a slot id counts the
    /// header captures (`heads`, with their lengths) first, then the
    /// declared ones (`declared` lengths); each value is cut to its slot's
    /// length; an id without a slot keeps nothing (as haproxy).
    pub fn fill(
        &self,
        res: bool,
        caps: &mut [String],
        heads: &[(String, usize)],
        declared: &[usize],
    ) {
        for (id, v) in self.take(res) {
            let len = match id.checked_sub(heads.len()) {
                None => heads.get(id).map(|h| h.1),
                Some(k) => declared.get(k).copied(),
            };
            if let (Some(len), Some(slot)) = (len, caps.get_mut(id)) {
                *slot = String::from_utf8_lossy(v.get(..len).unwrap_or(&v)).into_owned();
            }
        }
    }
}
