//! `show errors`: the last invalid request each frontend saw and the last
//! invalid response each backend got, with the bytes as received, in
//! HAProxy's layout (a heading per event, then the bytes as escaped text,
//! one line per received line, each prefixed by its offset).

/// One captured event, its names and numbers already resolved.
#[derive(Debug, Clone, Default)]
pub struct ErrorEvent {
    /// `23/Nov/2026:08:25:06.236`.
    pub date: String,
    /// `frontend` or `backend`, and the proxy's name and id.
    pub side: &'static str,
    pub proxy: String,
    pub proxy_id: u32,
    /// An invalid response (else a request).
    pub response: bool,
    /// The other end: the backend (for requests: none yet) and server.
    pub backend: Option<(String, u32)>,
    pub server: Option<(String, u32)>,
    /// Events captured before this one, process-wide.
    pub event: u64,
    pub src: String,
    /// Why weir refused it.
    pub reason: String,
    pub bytes: Vec<u8>,
}

/// Escapes one byte as the dump shows it.
fn push_escaped(out: &mut String, b: u8) {
    match b {
        b'\r' => out.push_str("\\r"),
        b'\n' => out.push_str("\\n"),
        b'\t' => out.push_str("\\t"),
        b'\\' => out.push_str("\\\\"),
        0x20..=0x7e => out.push(b as char),
        _ => out.push_str(&format!("\\x{b:02x}")),
    }
}

/// The bytes as lines of escaped text: a new line after each `\n` and
/// after 64 bytes, each prefixed with its offset.
pub fn dump(bytes: &[u8]) -> String {
    let mut out = String::new();
    let mut start = 0;
    let mut rest = bytes;
    while !rest.is_empty() {
        let len = rest
            .iter()
            .take(64)
            .position(|&b| b == b'\n')
            .map_or(rest.len().min(64), |p| p + 1);
        let (line, after) = rest.split_at(len);
        out.push_str(&format!("  {start:05}  "));
        for &b in line {
            push_escaped(&mut out, b);
        }
        out.push('\n');
        start += len;
        rest = after;
    }
    out
}

fn named(v: &Option<(String, u32)>) -> String {
    match v {
        Some((n, id)) => format!("{n} (#{id})"),
        None => "<NONE> (#-1)".into(),
    }
}

/// The whole answer: the total, then each event.
pub fn render(now: &str, total: u64, events: &[ErrorEvent]) -> String {
    let mut out = format!("Total events captured on [{now}] : {total}\n");
    for e in events {
        let what = if e.response { "response" } else { "request" };
        out.push_str(&format!(
            " \n[{}] {} {} (#{}): invalid {what}\n",
            e.date, e.side, e.proxy, e.proxy_id
        ));
        let (other, other_name) = if e.response {
            ("frontend", "<NONE> (#-1)".to_string())
        } else {
            ("backend", named(&e.backend))
        };
        out.push_str(&format!(
            "  {other} {other_name}, server {}, event #{}, src {}\n",
            named(&e.server),
            e.event,
            e.src
        ));
        out.push_str(&format!(
            "  len {}, reason: {}\n  \n",
            e.bytes.len(),
            e.reason
        ));
        out.push_str(&dump(&e.bytes));
    }
    out
}

#[cfg(test)]
#[path = "errors_tests.rs"]
mod tests;
