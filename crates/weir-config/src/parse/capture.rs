//! A frontend's capture slots: the `<name> len <n>` of header captures, and
//! the slot a capture rule writes.

use crate::model::{CaptureSlot, Proxy, ProxyKind};

/// The slot of a rule's capture and its length: slot `id` (any kind, in
/// the order the lines came), else a new slot of `len` bytes. A section
/// without frontend capability names the slots of the frontends that use
/// it (known when a request comes; an id they lack keeps nothing), and
/// has none of its own.
pub(super) fn slot(
    p: &mut Proxy,
    res: bool,
    id: Option<usize>,
    len: usize,
) -> Result<(usize, usize), String> {
    if p.kind == ProxyKind::Backend {
        return match id {
            Some(n) => Ok((n, len)),
            None => Err(format!("proxy '{}' has no frontend capability", p.name)),
        };
    }
    let (slots, dir) = if res {
        (&mut p.http.res_captures, "response")
    } else {
        (&mut p.http.req_captures, "request")
    };
    match id {
        None => {
            slots.push(CaptureSlot { header: None, len });
            Ok((slots.len() - 1, len))
        }
        Some(n) => slots.get(n).map(|s| (n, s.len)).ok_or_else(|| {
            format!("'capture ... id {n}': no capture slot {n} is declared before (declare capture {dir} len <n>)")
        }),
    }
}

/// `<name> len <length>` of a capture.
pub(super) fn name_len(args: &[String]) -> Result<(String, usize), String> {
    match args {
        [n, l, v] if l == "len" => Ok((
            n.clone(),
            v.parse::<usize>()
                .ok()
                .filter(|v| *v > 0)
                .ok_or("'len' expects a positive length")?,
        )),
        _ => Err("expects <name> len <length>".into()),
    }
}
