//! HTTP compression (`compression algo|type|offload`): the algorithm a
//! request accepts (`Accept-Encoding`, best q-value first), whether its
//! response is compressed (haproxy 2.6's conditions), the response head
//! changed for it, and the body compressed on its way down, chunked.

use super::io::{forward_through, Buf, XferError, XferTimeouts};
use super::peer::Peer;
use flate2::write::{DeflateEncoder, GzEncoder, ZlibEncoder};
use std::io::Write;
use weir_config::model::{CompAlgo, Compression};
use weir_config::Proxy;
use weir_proto::h1::{Framing, Header, RequestHead, ResponseHead};

/// The compression settings of an exchange: the backend's algorithms
/// (else the frontend's), its types (else the frontend's), offload from
/// either.
fn settings<'p>(fe: &'p Proxy, be: &'p Proxy) -> (&'p [CompAlgo], &'p [String], bool) {
    let pick = |f: fn(&'p Compression) -> bool| if f(&be.compression) { be } else { fe };
    let algos = &pick(|c| !c.algos.is_empty()).compression.algos;
    let types = &pick(|c| !c.types.is_empty()).compression.types;
    (
        algos,
        types,
        be.compression.offload || fe.compression.offload,
    )
}

/// The algorithm `req` accepts among the configured ones (`identity`
/// when configured and nothing else is), or none. With `offload`, the
/// request loses its `Accept-Encoding` once one was chosen from it.
pub(super) fn choose(
    fe: &Proxy,
    be: &Proxy,
    req: &mut RequestHead,
    dirty: &mut bool,
) -> Option<CompAlgo> {
    let (algos, _, offload) = settings(fe, be);
    if algos.is_empty() {
        return None;
    }
    // HTTP/1.0 clients and old Mozilla/4 browsers get nothing compressed.
    if req.minor == 0 || buggy_agent(req) {
        return None;
    }
    let identity = algos
        .contains(&CompAlgo::Identity)
        .then_some(CompAlgo::Identity);
    let mut best: Option<(f32, CompAlgo)> = None;
    for h in req.headers.iter().filter(|h| h.is("accept-encoding")) {
        for item in h.value().split(|&b| b == b',') {
            let item = String::from_utf8_lossy(item);
            let mut parts = item.split(';');
            let name = parts.next().unwrap_or_default().trim().to_ascii_lowercase();
            let q = parts
                .find_map(|p| p.trim().strip_prefix("q=").map(str::to_string))
                .and_then(|q| q.trim().parse::<f32>().ok())
                .unwrap_or(1.0);
            if q <= best.map_or(0.0, |(b, _)| b) {
                continue;
            }
            let found = algos.iter().find(|a| name == "*" || a.token() == name);
            if let Some(a) = found {
                best = Some((q, *a));
            }
        }
    }
    let Some((_, algo)) = best else {
        return identity;
    };
    if offload {
        let before = req.headers.len();
        req.headers.retain(|h| !h.is("accept-encoding"));
        *dirty |= req.headers.len() != before;
    }
    Some(algo)
}

/// `User-Agent: Mozilla/4…` other than MSIE 6 with SP2 (`SV1`) and MSIE 7
/// and later: browsers known to mishandle compressed answers.
fn buggy_agent(req: &RequestHead) -> bool {
    let Some(ua) = req.headers.iter().find(|h| h.is("user-agent")) else {
        return false;
    };
    let ua = String::from_utf8_lossy(ua.value());
    if !ua.starts_with("Mozilla/4") {
        return false;
    }
    let msie = ua
        .find("MSIE ")
        .and_then(|i| ua.get(i + 5..))
        .and_then(|v| v.chars().next())
        .and_then(|c| c.to_digit(10));
    let fixed = matches!(msie, Some(v) if v >= 7) || (msie == Some(6) && ua.contains("SV1"));
    !fixed
}

/// Whether `res` is compressed with `algo`; if so its head says so
/// (`Content-Encoding`, `Vary`, a weak `ETag`, chunked without a length)
/// and its framing is chunked.
pub(super) fn response(fe: &Proxy, be: &Proxy, algo: CompAlgo, res: &mut ResponseHead) -> bool {
    let (_, types, _) = settings(fe, be);
    if !(200..=203).contains(&res.status)
        || res.minor == 0
        || !matches!(res.framing, Framing::ContentLength(_) | Framing::Chunked)
        || res.headers.iter().any(|h| h.is("content-encoding"))
        || has_token(&res.headers, "cache-control", "no-transform")
    {
        return false;
    }
    match res.headers.iter().find(|h| h.is("content-type")) {
        Some(ct) => {
            let v = ct.value().to_ascii_lowercase();
            if v.starts_with(b"multipart") {
                return false;
            }
            if !types.is_empty()
                && !types
                    .iter()
                    .any(|t| v.starts_with(t.to_ascii_lowercase().as_bytes()))
            {
                return false;
            }
        }
        None if !types.is_empty() => return false,
        None => {}
    }
    let etags: Vec<usize> = (0..res.headers.len())
        .filter(|&i| res.headers.get(i).is_some_and(|h| h.is("etag")))
        .collect();
    let weak = match etags.as_slice() {
        [] => None,
        [i] => match res.headers.get(*i).map(|h| etag_state(h.value())) {
            Some(Etag::Strong) => Some(*i),
            Some(Etag::Weak) => None,
            _ => return false,
        },
        _ => return false,
    };
    // (The ETag first: its index is the one found above.)
    if algo != CompAlgo::Identity {
        if let Some(h) = weak.and_then(|i| res.headers.get_mut(i)) {
            let v = [b"W/".as_slice(), h.value()].concat();
            h.set_value(&v);
        }
    }
    res.headers
        .retain(|h| !h.is("content-length") && !h.is("transfer-encoding"));
    res.headers
        .push(Header::new("transfer-encoding", b"chunked"));
    if algo != CompAlgo::Identity {
        res.headers
            .push(Header::new("content-encoding", algo.token().as_bytes()));
        res.headers.push(Header::new("vary", b"Accept-Encoding"));
    }
    res.framing = Framing::Chunked;
    true
}

/// Whether a `name` field lists `token` (comma-separated, any case).
fn has_token(headers: &[Header], name: &str, token: &str) -> bool {
    headers.iter().filter(|h| h.is(name)).any(|h| {
        h.value()
            .split(|&b| b == b',')
            .any(|t| t.trim_ascii().eq_ignore_ascii_case(token.as_bytes()))
    })
}

#[derive(PartialEq, Eq)]
enum Etag {
    Strong,
    Weak,
    Invalid,
}

/// An ETag's form: `"…"` strong, `W/"…"` weak, anything else invalid.
fn etag_state(v: &[u8]) -> Etag {
    let v = v.trim_ascii();
    let (weak, rest) = match v.strip_prefix(b"W/") {
        Some(r) => (true, r),
        None => (false, v),
    };
    let quoted = rest.len() >= 2 && rest.starts_with(b"\"") && rest.ends_with(b"\"");
    match (quoted, weak) {
        (false, _) => Etag::Invalid,
        (true, true) => Etag::Weak,
        (true, false) => Etag::Strong,
    }
}

/// A body compressor.
enum Encoder {
    Identity(Vec<u8>),
    Gzip(GzEncoder<Vec<u8>>),
    Deflate(ZlibEncoder<Vec<u8>>),
    Raw(DeflateEncoder<Vec<u8>>),
}

impl Encoder {
    fn new(algo: CompAlgo, level: u32) -> Encoder {
        let l = flate2::Compression::new(level.clamp(1, 9));
        match algo {
            CompAlgo::Identity => Encoder::Identity(Vec::new()),
            CompAlgo::Gzip => Encoder::Gzip(GzEncoder::new(Vec::new(), l)),
            CompAlgo::Deflate => Encoder::Deflate(ZlibEncoder::new(Vec::new(), l)),
            CompAlgo::RawDeflate => Encoder::Raw(DeflateEncoder::new(Vec::new(), l)),
        }
    }

    /// Compresses `data` and flushes: what is ready to go.
    fn feed(&mut self, data: &[u8]) -> Vec<u8> {
        let r = match self {
            Encoder::Identity(v) => {
                v.extend_from_slice(data);
                Ok(())
            }
            Encoder::Gzip(e) => e.write_all(data).and_then(|()| e.flush()),
            Encoder::Deflate(e) => e.write_all(data).and_then(|()| e.flush()),
            Encoder::Raw(e) => e.write_all(data).and_then(|()| e.flush()),
        };
        // (Writing into a Vec does not fail.)
        let _ = r;
        std::mem::take(self.out())
    }

    /// The end of the stream.
    fn finish(self) -> Vec<u8> {
        match self {
            Encoder::Identity(v) => v,
            Encoder::Gzip(e) => e.finish().unwrap_or_default(),
            Encoder::Deflate(e) => e.finish().unwrap_or_default(),
            Encoder::Raw(e) => e.finish().unwrap_or_default(),
        }
    }

    fn out(&mut self) -> &mut Vec<u8> {
        match self {
            Encoder::Identity(v) => v,
            Encoder::Gzip(e) => e.get_mut(),
            Encoder::Deflate(e) => e.get_mut(),
            Encoder::Raw(e) => e.get_mut(),
        }
    }
}

/// Copies a body of `framing` (a length or chunks) from `buf` + `src` to
/// `dst` compressed with `algo`, as chunks (the server's trailers after
/// the last one); the bytes written.
#[allow(clippy::too_many_arguments)]
pub(super) async fn transfer(
    src: Peer<'_>,
    buf: &mut Buf,
    dst: Peer<'_>,
    framing: Framing,
    algo: CompAlgo,
    level: u32,
    size: usize,
    t: XferTimeouts<'_>,
) -> Result<u64, XferError> {
    let mut enc = Some(Encoder::new(algo, level));
    let through = |piece: Option<Vec<u8>>| match (piece, enc.as_mut()) {
        (Some(d), Some(e)) => e.feed(&d),
        (None, _) => enc.take().map(Encoder::finish).unwrap_or_default(),
        (Some(_), None) => Vec::new(),
    };
    forward_through(src, buf, dst, framing, size, t, true, through).await
}

#[cfg(test)]
#[path = "compress_tests.rs"]
mod tests;
