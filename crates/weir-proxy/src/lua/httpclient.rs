//! `core.httpclient()`: HTTP/1.1 requests from scripts (`get`, `post`,
//! `put`, `head`, `delete` with `url`, `headers`, `body`, `dst`,
//! `timeout`), answered as `{status, reason, headers, body}`. Plain HTTP
//! only (an `https` URL is an error).

use super::socket::Stream;
use mlua::{Lua, Table, UserData, UserDataMethods, Value};
use std::time::Duration;
use weir_proto::h1::{ChunkEvent, ChunkedDecoder};

/// A client; each request opens its own connection.
#[derive(Default, Clone, Copy)]
pub struct HttpClient;

/// One request, as the script's table gives it.
struct Req {
    method: &'static str,
    host: String,
    path: String,
    /// `dst`, else the URL's host and port.
    target: String,
    headers: Vec<(String, Vec<u8>)>,
    body: Vec<u8>,
    timeout: Duration,
}

fn err(m: impl Into<String>) -> mlua::Error {
    mlua::Error::RuntimeError(m.into())
}

fn request(method: &'static str, t: &Table) -> mlua::Result<Req> {
    let url: String = t.get("url")?;
    let rest = match url.strip_prefix("http://") {
        Some(r) => r,
        None if url.starts_with("https://") => {
            return Err(err("httpclient: https URLs are not supported by weir"))
        }
        None => return Err(err(format!("httpclient: invalid URL '{url}'"))),
    };
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let target = match t.get::<Option<Value>>("dst")? {
        Some(Value::String(d)) => d.to_string_lossy(),
        Some(Value::Integer(p)) => format!("127.0.0.1:{p}"),
        _ if authority.contains(':') => authority.to_string(),
        _ => format!("{authority}:80"),
    };
    let mut headers = Vec::new();
    if let Some(h) = t.get::<Option<Table>>("headers")? {
        for pair in h.pairs::<String, Value>() {
            let (name, v) = pair?;
            match v {
                Value::Table(vals) => {
                    // `{[0] = v}` or `{v1, v2}`: every value, in order.
                    let mut keyed: Vec<(i64, Vec<u8>)> = Vec::new();
                    for kv in vals.pairs::<i64, mlua::LuaString>() {
                        let (k, s) = kv?;
                        keyed.push((k, s.as_bytes().to_vec()));
                    }
                    keyed.sort_by_key(|(k, _)| *k);
                    headers.extend(keyed.into_iter().map(|(_, s)| (name.clone(), s)));
                }
                Value::String(s) => headers.push((name, s.as_bytes().to_vec())),
                _ => {}
            }
        }
    }
    let body = match t.get::<Option<mlua::LuaString>>("body")? {
        Some(b) => b.as_bytes().to_vec(),
        None => Vec::new(),
    };
    let timeout = t
        .get::<Option<u64>>("timeout")?
        .map_or(Duration::from_secs(5), Duration::from_millis);
    Ok(Req {
        method,
        host: authority.to_string(),
        path: path.to_string(),
        target,
        headers,
        body,
        timeout,
    })
}

/// The request's bytes.
fn wire(r: &Req) -> Vec<u8> {
    let mut out = format!("{} {} HTTP/1.1\r\n", r.method, r.path).into_bytes();
    if !r
        .headers
        .iter()
        .any(|(n, _)| n.eq_ignore_ascii_case("host"))
    {
        out.extend_from_slice(format!("host: {}\r\n", r.host).as_bytes());
    }
    for (n, v) in &r.headers {
        out.extend_from_slice(n.to_ascii_lowercase().as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(v);
        out.extend_from_slice(b"\r\n");
    }
    // What haproxy's client adds when the script does not say.
    for (n, v) in [("accept", "*/*"), ("user-agent", "HAProxy")] {
        if !r.headers.iter().any(|(h, _)| h.eq_ignore_ascii_case(n)) {
            out.extend_from_slice(format!("{n}: {v}\r\n").as_bytes());
        }
    }
    if !r.body.is_empty() || matches!(r.method, "POST" | "PUT") {
        out.extend_from_slice(format!("content-length: {}\r\n", r.body.len()).as_bytes());
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(&r.body);
    out
}

/// Opens `target`: `unix@<path>`, `ipv4@…`, or `host:port`.
async fn open(target: &str) -> std::io::Result<Stream> {
    if let Some(p) = target.strip_prefix("unix@") {
        let s = tokio::net::UnixStream::connect(p).await?;
        return Ok(Stream::new(s, Vec::new()));
    }
    let t = target
        .strip_prefix("ipv4@")
        .or_else(|| target.strip_prefix("ipv6@"))
        .unwrap_or(target);
    let s = tokio::net::TcpStream::connect(t).await?;
    let _ = s.set_nodelay(true);
    Ok(Stream::new(s, Vec::new()))
}

/// A parsed answer.
struct Answer {
    status: u16,
    reason: String,
    headers: Vec<(String, Vec<u8>)>,
    body: Vec<u8>,
}

/// What is known of an answer from the bytes read so far: `None` while
/// it is not whole (`closed`: nothing more will come).
fn parse(raw: &[u8], head_only: bool, closed: bool) -> Result<Option<Answer>, String> {
    let mut hs = [httparse::EMPTY_HEADER; 100];
    let mut res = httparse::Response::new(&mut hs);
    let used = match res.parse(raw) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) if closed => return Err("truncated response".into()),
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(e) => return Err(e.to_string()),
    };
    let headers: Vec<(String, Vec<u8>)> = res
        .headers
        .iter()
        .map(|h| (h.name.to_ascii_lowercase(), h.value.to_vec()))
        .collect();
    let rest = raw.get(used..).unwrap_or_default();
    let chunked = headers
        .iter()
        .any(|(n, v)| n == "transfer-encoding" && v.to_ascii_lowercase().ends_with(b"chunked"));
    let length = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| std::str::from_utf8(v).ok()?.trim().parse::<usize>().ok());
    let body = if head_only || res.code.is_some_and(|c| c == 204 || c == 304) {
        Vec::new()
    } else if chunked {
        let mut d = ChunkedDecoder::default();
        let (events, _) = d.feed(rest).map_err(|e| format!("{e:?}"))?;
        if !d.is_done() {
            return if closed {
                Err("truncated response".into())
            } else {
                Ok(None)
            };
        }
        let mut b = Vec::new();
        for e in events {
            if let ChunkEvent::Data(r) = e {
                b.extend_from_slice(rest.get(r).unwrap_or_default());
            }
        }
        b
    } else {
        match length {
            Some(n) if rest.len() >= n => rest.get(..n).unwrap_or_default().to_vec(),
            Some(_) if closed => return Err("truncated response".into()),
            Some(_) => return Ok(None),
            None if closed => rest.to_vec(),
            None => return Ok(None),
        }
    };
    Ok(Some(Answer {
        status: res.code.unwrap_or(0),
        reason: res.reason.unwrap_or_default().to_string(),
        headers,
        body,
    }))
}

async fn send(r: Req) -> Result<Answer, String> {
    let exchange = async {
        let mut s = open(&r.target).await.map_err(|e| e.to_string())?;
        if !s.write_all(&wire(&r)).await {
            return Err("connection closed".to_string());
        }
        loop {
            let closed = !s.fill_more().await || s.buffered().len() > super::socket::MAX_READ;
            if let Some(a) = parse(s.buffered(), r.method == "HEAD", closed)? {
                return Ok(a);
            }
        }
    };
    match tokio::time::timeout(r.timeout, exchange).await {
        Ok(a) => a,
        Err(_) => Err("timeout".into()),
    }
}

fn answer_table(lua: &Lua, a: Answer) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.set("status", a.status)?;
    t.set("reason", a.reason)?;
    t.set("body", lua.create_string(&a.body)?)?;
    let hs = lua.create_table()?;
    for (n, v) in a.headers {
        let vals: Table = match hs.raw_get::<Option<Table>>(n.as_str())? {
            Some(t) => t,
            None => {
                let t = lua.create_table()?;
                hs.raw_set(n.as_str(), t.clone())?;
                t
            }
        };
        let next = if vals.raw_get::<Value>(0)?.is_nil() {
            0
        } else {
            vals.raw_len() as i64 + 1
        };
        vals.raw_set(next, lua.create_string(&v)?)?;
    }
    t.set("headers", hs)?;
    Ok(t)
}

impl UserData for HttpClient {
    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        for (name, method) in [
            ("get", "GET"),
            ("post", "POST"),
            ("put", "PUT"),
            ("head", "HEAD"),
            ("delete", "DELETE"),
        ] {
            m.add_async_method(name, move |lua, _, t: Table| async move {
                let r = request(method, &t)?;
                match send(r).await {
                    Ok(a) => Ok(Value::Table(answer_table(&lua, a)?)),
                    Err(e) => Err(err(format!("httpclient: {e}"))),
                }
            });
        }
    }
}
