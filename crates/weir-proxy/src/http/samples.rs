//! The log line's captures and `%[sample]` values, taken from the request
//! (and the response) as the exchange has them.

use super::rules::{ExCtx, Vars};
use crate::log::LogRecord;
use weir_config::model::CaptureSlot;
use weir_config::Proxy;
use weir_proto::h1::RequestHead;

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
    let http = &fe_px.http;
    if !http.req_captures.is_empty() {
        vars.caps.headers(false, &http.req_captures, &req.headers);
        rec.req_caps = Some(vars.caps.values(false, http.req_captures.len()));
    }
    if !http.res_captures.is_empty() {
        rec.res_caps = Some(vec![String::new(); http.res_captures.len()]);
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
    let samples = crate::log::sample_values(f, ctx);
    if !samples.is_empty() {
        rec.samples = samples;
    }
}

/// A request's `unique-id-format` value: its own `%[sample]` pieces
/// evaluated on the request, its other fields from the log record.
pub(crate) fn unique_id(
    f: &weir_config::logformat::LogFormat,
    rec: &mut LogRecord<'_>,
    ctx: &ExCtx<'_>,
) -> String {
    let samples = crate::log::sample_values(f, ctx);
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

/// An exchange's capture slots, the request's and the response's, as the
/// log's `%hr`/`%hs` and the `capture.req.hdr`/`capture.res.hdr` fetches
/// read them: the header captures, the `capture` rules and the
/// `capture-req`/`capture-res` converters write them in the order they
/// run, each value cut to its slot's length (`None`: never written).
/// Converters see the variables shared, hence the lock.
#[derive(Default)]
pub struct Captures(std::sync::Mutex<Sides>);

#[derive(Default, Clone)]
pub struct Sides {
    req: Vec<Option<String>>,
    res: Vec<Option<String>>,
}

impl Sides {
    fn side(&mut self, res: bool) -> &mut Vec<Option<String>> {
        if res {
            &mut self.res
        } else {
            &mut self.req
        }
    }
}

impl Clone for Captures {
    fn clone(&self) -> Self {
        Captures(std::sync::Mutex::new(self.lock().clone()))
    }
}

impl Captures {
    fn lock(&self) -> std::sync::MutexGuard<'_, Sides> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Writes `v` (cut to its slot's length already) into slot `id`.
    fn put(&self, res: bool, id: usize, v: String) {
        let mut all = self.lock();
        let side = all.side(res);
        if side.len() <= id {
            side.resize(id + 1, None);
        }
        if let Some(s) = side.get_mut(id) {
            *s = Some(v);
        }
    }

    /// Writes `v` into slot `id` of `slots`, cut to its length; false
    /// without such a slot.
    pub fn put_cut(&self, res: bool, slots: &[CaptureSlot], id: usize, v: &[u8]) -> bool {
        let Some(slot) = slots.get(id) else {
            return false;
        };
        let v = String::from_utf8_lossy(v.get(..slot.len).unwrap_or(v)).into_owned();
        self.put(res, id, v);
        true
    }

    /// The header captures among `slots`, from a head (before the rules
    /// run); a header that is absent writes nothing.
    pub fn headers(&self, res: bool, slots: &[CaptureSlot], headers: &[weir_proto::h1::Header]) {
        for (id, slot) in slots.iter().enumerate() {
            let Some(name) = &slot.header else { continue };
            if let Some(h) = headers.iter().rfind(|h| h.is(name)) {
                self.put_cut(res, slots, id, h.value());
            }
        }
    }

    /// Slot `id`'s value, if one was written.
    pub fn get(&self, res: bool, id: usize) -> Option<String> {
        self.lock().side(res).get(id).cloned().flatten()
    }

    /// The values of `count` slots for the log (empty where none was
    /// written).
    pub fn values(&self, res: bool, count: usize) -> Vec<String> {
        let mut all = self.lock();
        let side = all.side(res);
        (0..count)
            .map(|i| side.get(i).cloned().flatten().unwrap_or_default())
            .collect()
    }

    /// Nothing was written.
    pub fn is_empty(&self) -> bool {
        let all = self.lock();
        all.req.is_empty() && all.res.is_empty()
    }
}
