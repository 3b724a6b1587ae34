//! A small HTTP/1.1 origin for the tests (keep-alive, Content-Length and
//! chunked bodies both ways, misbehaviours on request) and a raw client
//! that reads responses byte-exactly.

use super::Server;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A parsed response.
#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// The head as received.
    pub head: String,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
    /// A `key=value` line of the origin's report body.
    pub fn field(&self, key: &str) -> Option<String> {
        self.text()
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{key}=")).map(str::to_string))
    }
}

/// FNV-1a, to compare bodies without shipping them back.
pub fn fnv(b: &[u8]) -> u64 {
    b.iter().fold(0xcbf29ce484222325u64, |h, &x| {
        (h ^ u64::from(x)).wrapping_mul(0x100000001b3)
    })
}

fn read_line(r: &mut impl BufRead) -> std::io::Result<String> {
    let mut l = String::new();
    r.read_line(&mut l)?;
    Ok(l)
}

/// Reads a head (until the empty line); None at a clean end of stream.
fn read_head(r: &mut impl BufRead) -> std::io::Result<Option<String>> {
    let mut head = String::new();
    loop {
        let l = read_line(r)?;
        if l.is_empty() {
            return if head.is_empty() {
                Ok(None)
            } else {
                Err(std::io::ErrorKind::UnexpectedEof.into())
            };
        }
        head.push_str(&l);
        if l == "\r\n" {
            return Ok(Some(head));
        }
    }
}

fn headers_of(head: &str) -> Vec<(String, String)> {
    head.lines()
        .skip(1)
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_string(), v.trim().to_string()))
        .collect()
}

fn get<'a>(h: &'a [(String, String)], name: &str) -> Option<&'a str> {
    h.iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// Reads a chunked body (decoded) and its trailers.
fn read_chunked(r: &mut impl BufRead) -> std::io::Result<(Vec<u8>, Vec<String>)> {
    let mut body = Vec::new();
    loop {
        let l = read_line(r)?;
        let size = usize::from_str_radix(l.trim().split(';').next().unwrap_or(""), 16)
            .map_err(|_| std::io::Error::other(format!("bad chunk size {l:?}")))?;
        if size == 0 {
            let mut trailers = Vec::new();
            loop {
                let t = read_line(r)?;
                if t == "\r\n" || t.is_empty() {
                    return Ok((body, trailers));
                }
                trailers.push(t.trim_end().to_string());
            }
        }
        let start = body.len();
        body.resize(start + size, 0);
        r.read_exact(&mut body[start..])?;
        let mut crlf = [0u8; 2];
        r.read_exact(&mut crlf)?;
    }
}

/// Reads one response to a request with `method`.
pub fn read_response(r: &mut impl BufRead, method: &str) -> std::io::Result<Response> {
    let head = read_head(r)?.ok_or(std::io::ErrorKind::UnexpectedEof)?;
    let status: u16 = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("bad status line in {head:?}")))?;
    let headers = headers_of(&head);
    let mut body = Vec::new();
    if method != "HEAD" && status >= 200 && status != 204 && status != 304 {
        if get(&headers, "transfer-encoding").is_some_and(|v| v.contains("chunked")) {
            body = read_chunked(r)?.0;
        } else if let Some(n) = get(&headers, "content-length") {
            body.resize(n.parse().unwrap_or(0), 0);
            r.read_exact(&mut body)?;
        } else {
            r.read_to_end(&mut body)?;
        }
    }
    Ok(Response {
        status,
        headers,
        body,
        head,
    })
}

/// A client connection with a buffered reader.
pub struct Client {
    pub w: TcpStream,
    pub r: BufReader<TcpStream>,
}

impl Client {
    pub fn connect(port: u16) -> Client {
        Client::connect_addr(&format!("127.0.0.1:{port}"))
    }
    pub fn connect_addr(addr: &str) -> Client {
        let w = TcpStream::connect(addr).unwrap();
        w.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let r = BufReader::new(w.try_clone().unwrap());
        Client { w, r }
    }
    pub fn send(&mut self, bytes: &[u8]) {
        self.w.write_all(bytes).unwrap();
    }
    pub fn response(&mut self, method: &str) -> Response {
        read_response(&mut self.r, method).unwrap()
    }
    /// GET `path` with keep-alive; returns the response.
    pub fn get(&mut self, path: &str) -> Response {
        self.send(format!("GET {path} HTTP/1.1\r\nHost: t\r\n\r\n").as_bytes());
        self.response("GET")
    }
    /// True once the proxy closed the connection (reads end of stream).
    pub fn closed(&mut self) -> bool {
        let mut b = [0u8; 1];
        matches!(self.r.read(&mut b), Ok(0))
    }
}

/// One request as the origin saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    pub head: String,
    pub body: Vec<u8>,
    /// Trailer lines of a chunked body.
    pub trailers: Vec<String>,
}

/// The test origin. Paths: `/?s=N` N bytes, `/chunked?s=N` chunked,
/// `/noclen?s=N` N bytes ending with the connection,
/// `/close` answers with `Connection: close`, `/setcookie` sets
/// `JSESSIONID=abc`, `/auth` answers 401, `/slow?ms=N` waits, `/garbage`
/// answers junk, `/empty` closes without answering, `/ws` switches
/// protocols (proving the WebSocket key) and echoes, `/ws-wrong` the same
/// with a wrong proof. Every answer carries a report body (unless sized):
/// `server=`, `method=`, `uri=`, `body_len=`, `body_fnv=`, then the head.
pub struct Origin {
    pub server: Server,
    pub seen: Arc<Mutex<Vec<Seen>>>,
}

/// RFC 6455's `Sec-WebSocket-Accept` for `key`.
pub fn ws_accept(key: &str) -> String {
    let mut ctx = aws_lc_rs::digest::Context::new(&aws_lc_rs::digest::SHA1_FOR_LEGACY_USE_ONLY);
    ctx.update(key.as_bytes());
    ctx.update(b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11");
    base64(ctx.finish().as_ref(), false)
}

/// Base64 with padding, or base64url without (`url`).
pub fn base64(b: &[u8], url: bool) -> String {
    let t: &[u8; 64] = if url {
        b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    } else {
        b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    };
    let mut out = String::new();
    for c in b.chunks(3) {
        let n = c
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &x)| n | u32::from(x) << (16 - 8 * i));
        for i in 0..4 {
            if i <= c.len() {
                out.push(t[(n >> (18 - 6 * i)) as usize & 63] as char);
            } else if !url {
                out.push('=');
            }
        }
    }
    out
}

/// The body `/?s=N` answers: N bytes of the alphabet, over and over.
pub fn sized(n: usize) -> Vec<u8> {
    (0..n).map(|i| b'a' + (i % 26) as u8).collect()
}

fn param(uri: &str, key: &str) -> Option<usize> {
    uri.split_once('?')?
        .1
        .split('&')
        .find_map(|kv| kv.strip_prefix(&format!("{key}=")))
        .and_then(|v| v.parse().ok())
}

impl Origin {
    pub fn start(name: &'static str) -> Origin {
        Origin::start_on(std::net::TcpListener::bind("127.0.0.1:0").unwrap(), name)
    }
    pub fn start_on(l: std::net::TcpListener, name: &'static str) -> Origin {
        let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
        let s2 = seen.clone();
        let server = Server::start_on(l, move |c| {
            let mut w = c.try_clone().unwrap();
            let mut r = BufReader::new(c);
            while let Ok(Some(head)) = read_head(&mut r) {
                let line = head.lines().next().unwrap_or("").to_string();
                let mut parts = line.split(' ');
                let method = parts.next().unwrap_or("").to_string();
                let uri = parts.next().unwrap_or("").to_string();
                let headers = headers_of(&head);
                let mut trailers = Vec::new();
                let body = if get(&headers, "transfer-encoding").is_some() {
                    match read_chunked(&mut r) {
                        Ok((b, t)) => {
                            trailers = t;
                            b
                        }
                        Err(_) => return,
                    }
                } else if let Some(n) = get(&headers, "content-length") {
                    if get(&headers, "expect").is_some() {
                        let _ = w.write_all(b"HTTP/1.1 100 Continue\r\n\r\n");
                    }
                    let mut b = vec![0u8; n.parse().unwrap_or(0)];
                    if r.read_exact(&mut b).is_err() {
                        return;
                    }
                    b
                } else {
                    Vec::new()
                };
                s2.lock().unwrap().push(Seen {
                    head: head.clone(),
                    body: body.clone(),
                    trailers,
                });
                let path = uri.split('?').next().unwrap_or("");
                if let Some(ms) = param(&uri, "ms") {
                    std::thread::sleep(Duration::from_millis(ms as u64));
                }
                let report = format!(
                    "server={name}\nmethod={method}\nuri={uri}\nbody_len={}\nbody_fnv={}\n{head}",
                    body.len(),
                    fnv(&body)
                );
                let close = path == "/close"
                    || get(&headers, "connection").is_some_and(|v| v.eq_ignore_ascii_case("close"));
                let out: Vec<u8> = match path {
                    "/garbage" => b"NOT HTTP AT ALL\r\n\r\n".to_vec(),
                    "/empty" => return,
                    "/ws" | "/ws-wrong" => {
                        let key = get(&headers, "sec-websocket-key").unwrap_or("");
                        let accept = match path {
                            "/ws" => ws_accept(key),
                            _ => "d3Jvbmcga2V5IGFuc3dlcg==".to_string(),
                        };
                        let _ = w.write_all(format!("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {accept}\r\n\r\n").as_bytes());
                        let mut buf = [0u8; 4096];
                        loop {
                            match r.read(&mut buf) {
                                Ok(0) | Err(_) => return,
                                Ok(n) => {
                                    if w.write_all(&buf[..n]).is_err() {
                                        return;
                                    }
                                }
                            }
                        }
                    }
                    "/noclen" => {
                        // A body that ends with the connection.
                        let mut o = b"HTTP/1.1 200 OK\r\n\r\n".to_vec();
                        o.extend_from_slice(&sized(param(&uri, "s").unwrap_or(0)));
                        let _ = w.write_all(&o);
                        return;
                    }
                    "/chunked" => {
                        let b = sized(param(&uri, "s").unwrap_or(0));
                        let mut o =
                            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
                        for c in b.chunks(1000) {
                            o.extend_from_slice(format!("{:x};ext=1\r\n", c.len()).as_bytes());
                            o.extend_from_slice(c);
                            o.extend_from_slice(b"\r\n");
                        }
                        o.extend_from_slice(b"0\r\nX-Trailer: yes\r\n\r\n");
                        o
                    }
                    _ => {
                        let b = match param(&uri, "s") {
                            Some(n) => sized(n),
                            None => report.into_bytes(),
                        };
                        let mut o = format!(
                            "HTTP/1.1 {}\r\nContent-Length: {}\r\nX-Server: {name}\r\n{}{}\r\n",
                            if path == "/auth" {
                                "401 Unauthorized"
                            } else {
                                "200 OK"
                            },
                            b.len(),
                            if close { "Connection: close\r\n" } else { "" },
                            if path == "/setcookie" {
                                "Set-Cookie: JSESSIONID=abc; Path=/\r\n"
                            } else {
                                ""
                            }
                        )
                        .into_bytes();
                        if method != "HEAD" {
                            o.extend_from_slice(&b);
                        }
                        o
                    }
                };
                if w.write_all(&out).is_err() || close || path == "/garbage" {
                    return;
                }
            }
        });
        Origin { server, seen }
    }
    pub fn port(&self) -> u16 {
        self.server.port()
    }
    pub fn connections(&self) -> usize {
        self.server
            .accepted
            .load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// A `mode http` configuration: `frontend fe` on `port` (with `fe_extra`)
/// to `backend be` (with `be_extra` and the server lines).
pub fn http_cfg(port: u16, global: &str, fe_extra: &str, be_extra: &str) -> String {
    format!(
        "global\n    nbthread 1\n{global}\ndefaults\n    mode http\n    timeout connect 1s\n    timeout client 10s\n    timeout server 10s\n\
         frontend fe\n    bind 127.0.0.1:{port}\n{fe_extra}\n    default_backend be\n\
         backend be\n{be_extra}\n"
    )
}
