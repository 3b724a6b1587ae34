//! The load generator's HTTP/1.1 response reader: status, framing
//! (Content-Length, chunked, until close) and body discarding, over a
//! reused buffer.

/// Why a response could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RespError {
    Malformed,
}

/// A parsed response head.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Head {
    pub status: u16,
    pub head_len: usize,
    pub body: Framing,
    pub close: bool,
}

/// How the body ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    Length(u64),
    Chunked,
    UntilClose,
}

/// Parses a response head at the start of `buf`: `Ok(None)` needs more bytes.
pub fn parse_head(buf: &[u8]) -> Result<Option<Head>, RespError> {
    let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
        return if buf.len() > 65536 {
            Err(RespError::Malformed)
        } else {
            Ok(None)
        };
    };
    let text = std::str::from_utf8(&buf[..end]).map_err(|_| RespError::Malformed)?;
    let mut lines = text.split("\r\n");
    let status_line = lines.next().ok_or(RespError::Malformed)?;
    let mut parts = status_line.splitn(3, ' ');
    let version = parts.next().unwrap_or("");
    if !version.starts_with("HTTP/1.") {
        return Err(RespError::Malformed);
    }
    let status: u16 = parts
        .next()
        .and_then(|s| s.parse().ok())
        .ok_or(RespError::Malformed)?;
    let mut body = Framing::UntilClose;
    let mut close = version == "HTTP/1.0";
    for l in lines {
        let (name, value) = l.split_once(':').ok_or(RespError::Malformed)?;
        let value = value.trim();
        if name.eq_ignore_ascii_case("content-length") {
            body = Framing::Length(value.parse().map_err(|_| RespError::Malformed)?);
        } else if name.eq_ignore_ascii_case("transfer-encoding")
            && value.to_ascii_lowercase().ends_with("chunked")
        {
            body = Framing::Chunked;
        } else if name.eq_ignore_ascii_case("connection") {
            let v = value.to_ascii_lowercase();
            close = v.contains("close") || (close && !v.contains("keep-alive"));
        }
    }
    if status == 204 || status == 304 || (100..200).contains(&status) {
        body = Framing::Length(0);
    }
    Ok(Some(Head {
        status,
        head_len: end + 4,
        body,
        close,
    }))
}

/// Incremental chunked-body skipper.
#[derive(Debug, Default)]
pub struct Chunked {
    /// Bytes of chunk data still to skip.
    left: u64,
    /// Expect the CRLF after a chunk's data.
    need_crlf: bool,
    done: bool,
    in_trailers: bool,
}

impl Chunked {
    /// Consumes what it can of `buf`; returns bytes used, or an error. `done()`
    /// tells when the last chunk and trailers are through.
    pub fn feed(&mut self, buf: &[u8]) -> Result<usize, RespError> {
        let mut i = 0;
        while i < buf.len() && !self.done {
            if self.left > 0 {
                let n = (self.left as usize).min(buf.len() - i);
                self.left -= n as u64;
                i += n;
                continue;
            }
            let Some(eol) = buf[i..].windows(2).position(|w| w == b"\r\n") else {
                if buf.len() - i > 1024 {
                    return Err(RespError::Malformed);
                }
                return Ok(i);
            };
            let line = &buf[i..i + eol];
            i += eol + 2;
            if self.in_trailers {
                if line.is_empty() {
                    self.done = true;
                }
                continue;
            }
            if self.need_crlf {
                if !line.is_empty() {
                    return Err(RespError::Malformed);
                }
                self.need_crlf = false;
                continue;
            }
            let hex = line.split(|&b| b == b';').next().unwrap_or(b"");
            let s = std::str::from_utf8(hex).map_err(|_| RespError::Malformed)?;
            let size = u64::from_str_radix(s.trim(), 16).map_err(|_| RespError::Malformed)?;
            if size == 0 {
                self.in_trailers = true;
            } else {
                self.left = size;
                self.need_crlf = true;
            }
        }
        Ok(i)
    }
    pub fn done(&self) -> bool {
        self.done
    }
}
