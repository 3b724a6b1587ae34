//! HTTP/2 frames (RFC 9113 §4 and §6): parsing, with every check that
//! needs no connection state, and writing.
//!
//! `parse` is tri-state: `Ok(Some((frame, consumed)))`, `Ok(None)` when the
//! buffer does not hold a whole frame yet, or a [`FrameError`] that says
//! whether the connection or only one stream must end, and with which code.
// Indexing still to be made checked (`get`) here: every index follows a length check of the frame.
#![allow(clippy::indexing_slicing)]

/// The client connection preface (RFC 9113 §3.4).
pub const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
/// A frame header's length.
pub const HEAD_LEN: usize = 9;
/// The smallest SETTINGS_MAX_FRAME_SIZE, and every peer's initial one.
pub const MIN_MAX_FRAME: u32 = 16_384;
/// The largest SETTINGS_MAX_FRAME_SIZE.
pub const MAX_MAX_FRAME: u32 = (1 << 24) - 1;
/// The largest flow-control window.
pub const MAX_WINDOW: u32 = (1 << 31) - 1;

/// Frame types.
pub mod kind {
    pub const DATA: u8 = 0x0;
    pub const HEADERS: u8 = 0x1;
    pub const PRIORITY: u8 = 0x2;
    pub const RST_STREAM: u8 = 0x3;
    pub const SETTINGS: u8 = 0x4;
    pub const PUSH_PROMISE: u8 = 0x5;
    pub const PING: u8 = 0x6;
    pub const GOAWAY: u8 = 0x7;
    pub const WINDOW_UPDATE: u8 = 0x8;
    pub const CONTINUATION: u8 = 0x9;
}

/// Frame flags.
pub mod flag {
    pub const END_STREAM: u8 = 0x1;
    pub const ACK: u8 = 0x1;
    pub const END_HEADERS: u8 = 0x4;
    pub const PADDED: u8 = 0x8;
    pub const PRIORITY: u8 = 0x20;
}

/// SETTINGS parameters.
pub mod setting {
    pub const HEADER_TABLE_SIZE: u16 = 0x1;
    pub const ENABLE_PUSH: u16 = 0x2;
    pub const MAX_CONCURRENT_STREAMS: u16 = 0x3;
    pub const INITIAL_WINDOW_SIZE: u16 = 0x4;
    pub const MAX_FRAME_SIZE: u16 = 0x5;
    pub const MAX_HEADER_LIST_SIZE: u16 = 0x6;
    pub const ENABLE_CONNECT_PROTOCOL: u16 = 0x8;
}

/// Error codes (RFC 9113 §7).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum ErrorCode {
    NoError = 0x0,
    Protocol = 0x1,
    Internal = 0x2,
    FlowControl = 0x3,
    SettingsTimeout = 0x4,
    StreamClosed = 0x5,
    FrameSize = 0x6,
    RefusedStream = 0x7,
    Cancel = 0x8,
    Compression = 0x9,
    Connect = 0xa,
    EnhanceYourCalm = 0xb,
    InadequateSecurity = 0xc,
    Http11Required = 0xd,
}

/// A frame the peer got wrong: `stream` 0 is a connection error (GOAWAY),
/// another a stream error (RST_STREAM on that stream).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{what} ({code:?}, stream {stream})")]
pub struct FrameError {
    pub code: ErrorCode,
    pub stream: u32,
    pub what: &'static str,
}

fn conn_err(code: ErrorCode, what: &'static str) -> FrameError {
    FrameError {
        code,
        stream: 0,
        what,
    }
}

/// A stream's priority fields (parsed to check them; weir does not
/// schedule by priority, as RFC 9113 allows).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Priority {
    pub dependency: u32,
    pub exclusive: bool,
    pub weight: u8,
}

/// A SETTINGS frame's parameters, already checked, as (id, value) pairs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings<'a>(&'a [u8]);

impl<'a> Iterator for Settings<'a> {
    type Item = (u16, u32);
    fn next(&mut self) -> Option<(u16, u32)> {
        let (p, rest) = self.0.split_first_chunk::<6>()?;
        self.0 = rest;
        Some((
            u16::from_be_bytes([p[0], p[1]]),
            u32::from_be_bytes([p[2], p[3], p[4], p[5]]),
        ))
    }
}

/// One parsed frame; payloads borrow the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Frame<'a> {
    /// `flow_len` is the whole payload, padding included: what flow
    /// control counts.
    Data {
        stream: u32,
        end_stream: bool,
        data: &'a [u8],
        flow_len: u32,
    },
    Headers {
        stream: u32,
        end_stream: bool,
        end_headers: bool,
        priority: Option<Priority>,
        block: &'a [u8],
    },
    Priority {
        stream: u32,
        priority: Priority,
    },
    RstStream {
        stream: u32,
        code: u32,
    },
    Settings {
        ack: bool,
        params: Settings<'a>,
    },
    PushPromise {
        stream: u32,
    },
    Ping {
        ack: bool,
        data: [u8; 8],
    },
    GoAway {
        last: u32,
        code: u32,
        debug: &'a [u8],
    },
    WindowUpdate {
        stream: u32,
        increment: u32,
    },
    Continuation {
        stream: u32,
        end_headers: bool,
        block: &'a [u8],
    },
    /// A frame type this version does not know: to be ignored.
    Unknown {
        kind: u8,
        stream: u32,
    },
}

fn be32(b: &[u8]) -> u32 {
    match b.first_chunk::<4>() {
        Some(x) => u32::from_be_bytes(*x),
        None => 0,
    }
}

/// Strips the padding of a PADDED frame's payload.
fn unpad(p: &[u8], flags: u8) -> Result<&[u8], FrameError> {
    if flags & flag::PADDED == 0 {
        return Ok(p);
    }
    let (&pad, rest) = p.split_first().ok_or(conn_err(
        ErrorCode::FrameSize,
        "padded frame without its pad length",
    ))?;
    if pad as usize > rest.len() {
        return Err(conn_err(
            ErrorCode::Protocol,
            "padding longer than the payload",
        ));
    }
    Ok(&rest[..rest.len() - pad as usize])
}

fn priority(p: &[u8]) -> Priority {
    let dep = be32(p);
    Priority {
        dependency: dep & MAX_WINDOW,
        exclusive: dep & 0x8000_0000 != 0,
        weight: p.get(4).copied().unwrap_or(0),
    }
}

/// Parses the frame at the start of `buf`, no larger than `max_frame` (the
/// SETTINGS_MAX_FRAME_SIZE weir announced).
pub fn parse(buf: &[u8], max_frame: u32) -> Result<Option<(Frame<'_>, usize)>, FrameError> {
    let Some(h) = buf.first_chunk::<HEAD_LEN>() else {
        return Ok(None);
    };
    let len = u32::from_be_bytes([0, h[0], h[1], h[2]]);
    let (kind, flags) = (h[3], h[4]);
    let stream = u32::from_be_bytes([h[5], h[6], h[7], h[8]]) & MAX_WINDOW;
    if len > max_frame {
        return Err(conn_err(
            ErrorCode::FrameSize,
            "frame larger than SETTINGS_MAX_FRAME_SIZE",
        ));
    }
    let end = HEAD_LEN + len as usize;
    let Some(p) = buf.get(HEAD_LEN..end) else {
        return Ok(None);
    };
    let on_stream = |what| {
        if stream == 0 {
            Err(conn_err(ErrorCode::Protocol, what))
        } else {
            Ok(())
        }
    };
    let on_conn = |what| {
        if stream != 0 {
            Err(conn_err(ErrorCode::Protocol, what))
        } else {
            Ok(())
        }
    };
    let frame = match kind {
        kind::DATA => {
            on_stream("DATA on stream 0")?;
            Frame::Data {
                stream,
                end_stream: flags & flag::END_STREAM != 0,
                data: unpad(p, flags)?,
                flow_len: len,
            }
        }
        kind::HEADERS => {
            on_stream("HEADERS on stream 0")?;
            headers(stream, flags, p)?
        }
        kind::PRIORITY => {
            on_stream("PRIORITY on stream 0")?;
            priority_frame(stream, len, p)?
        }
        kind::RST_STREAM => {
            on_stream("RST_STREAM on stream 0")?;
            if len != 4 {
                return Err(conn_err(
                    ErrorCode::FrameSize,
                    "RST_STREAM of a length other than 4",
                ));
            }
            Frame::RstStream {
                stream,
                code: be32(p),
            }
        }
        kind::SETTINGS => {
            on_conn("SETTINGS on a stream")?;
            settings(flags, len, p)?
        }
        kind::PUSH_PROMISE => {
            on_stream("PUSH_PROMISE on stream 0")?;
            Frame::PushPromise { stream }
        }
        kind::PING => {
            on_conn("PING on a stream")?;
            let Some(data) = p.first_chunk::<8>().filter(|_| len == 8) else {
                return Err(conn_err(
                    ErrorCode::FrameSize,
                    "PING of a length other than 8",
                ));
            };
            Frame::Ping {
                ack: flags & flag::ACK != 0,
                data: *data,
            }
        }
        kind::GOAWAY => {
            on_conn("GOAWAY on a stream")?;
            if len < 8 {
                return Err(conn_err(ErrorCode::FrameSize, "GOAWAY shorter than 8"));
            }
            Frame::GoAway {
                last: be32(p) & MAX_WINDOW,
                code: be32(&p[4..]),
                debug: &p[8..],
            }
        }
        kind::WINDOW_UPDATE => window_update(stream, len, p)?,
        kind::CONTINUATION => {
            on_stream("CONTINUATION on stream 0")?;
            Frame::Continuation {
                stream,
                end_headers: flags & flag::END_HEADERS != 0,
                block: p,
            }
        }
        kind => Frame::Unknown { kind, stream },
    };
    Ok(Some((frame, end)))
}

/// A HEADERS frame's payload: padding and priority taken off.
fn headers(stream: u32, flags: u8, p: &[u8]) -> Result<Frame<'_>, FrameError> {
    let mut block = unpad(p, flags)?;
    let mut pr = None;
    if flags & flag::PRIORITY != 0 {
        if block.len() < 5 {
            return Err(conn_err(
                ErrorCode::FrameSize,
                "HEADERS too short for its priority",
            ));
        }
        // A HEADERS that depends on its own stream is a stream
        // error, found by the caller once the block is decoded
        // (the HPACK table must stay in step).
        pr = Some(priority(block));
        block = &block[5..];
    }
    Ok(Frame::Headers {
        stream,
        end_stream: flags & flag::END_STREAM != 0,
        end_headers: flags & flag::END_HEADERS != 0,
        priority: pr,
        block,
    })
}

/// A PRIORITY frame: five bytes, never on the stream it depends on.
fn priority_frame(stream: u32, len: u32, p: &[u8]) -> Result<Frame<'_>, FrameError> {
    if len != 5 {
        return Err(FrameError {
            code: ErrorCode::FrameSize,
            stream,
            what: "PRIORITY of a length other than 5",
        });
    }
    let priority = priority(p);
    if priority.dependency == stream {
        return Err(FrameError {
            code: ErrorCode::Protocol,
            stream,
            what: "a stream depends on itself",
        });
    }
    Ok(Frame::Priority { stream, priority })
}

/// A SETTINGS frame: an ACK is empty; each parameter within its range.
fn settings(flags: u8, len: u32, p: &[u8]) -> Result<Frame<'_>, FrameError> {
    let ack = flags & flag::ACK != 0;
    if ack && len != 0 {
        return Err(conn_err(
            ErrorCode::FrameSize,
            "SETTINGS ACK with a payload",
        ));
    }
    if !len.is_multiple_of(6) {
        return Err(conn_err(
            ErrorCode::FrameSize,
            "SETTINGS length not a multiple of 6",
        ));
    }
    for (id, v) in Settings(p) {
        match id {
            setting::ENABLE_PUSH if v > 1 => {
                return Err(conn_err(
                    ErrorCode::Protocol,
                    "SETTINGS_ENABLE_PUSH above 1",
                ));
            }
            setting::INITIAL_WINDOW_SIZE if v > MAX_WINDOW => {
                return Err(conn_err(
                    ErrorCode::FlowControl,
                    "SETTINGS_INITIAL_WINDOW_SIZE above 2^31-1",
                ));
            }
            setting::MAX_FRAME_SIZE if !(MIN_MAX_FRAME..=MAX_MAX_FRAME).contains(&v) => {
                return Err(conn_err(
                    ErrorCode::Protocol,
                    "SETTINGS_MAX_FRAME_SIZE out of range",
                ));
            }
            _ => {}
        }
    }
    Ok(Frame::Settings {
        ack,
        params: Settings(p),
    })
}

/// A WINDOW_UPDATE frame: four bytes, an increment above 0.
fn window_update(stream: u32, len: u32, p: &[u8]) -> Result<Frame<'_>, FrameError> {
    if len != 4 {
        return Err(conn_err(
            ErrorCode::FrameSize,
            "WINDOW_UPDATE of a length other than 4",
        ));
    }
    let increment = be32(p) & MAX_WINDOW;
    if increment == 0 {
        return Err(FrameError {
            code: ErrorCode::Protocol,
            stream,
            what: "WINDOW_UPDATE of 0",
        });
    }
    Ok(Frame::WindowUpdate { stream, increment })
}

/// Appends a frame header.
pub fn put_head(out: &mut Vec<u8>, len: usize, kind: u8, flags: u8, stream: u32) {
    out.extend_from_slice(&head_bytes(len, kind, flags, stream));
}

/// A frame header's bytes.
pub fn head_bytes(len: usize, kind: u8, flags: u8, stream: u32) -> [u8; HEAD_LEN] {
    let l = (len as u32).to_be_bytes();
    let s = (stream & MAX_WINDOW).to_be_bytes();
    [l[1], l[2], l[3], kind, flags, s[0], s[1], s[2], s[3]]
}

/// Appends a SETTINGS frame with `params`.
pub fn put_settings(out: &mut Vec<u8>, params: &[(u16, u32)]) {
    put_head(out, params.len() * 6, kind::SETTINGS, 0, 0);
    for (id, v) in params {
        out.extend_from_slice(&id.to_be_bytes());
        out.extend_from_slice(&v.to_be_bytes());
    }
}

/// Appends the acknowledgement of the peer's SETTINGS.
pub fn put_settings_ack(out: &mut Vec<u8>) {
    put_head(out, 0, kind::SETTINGS, flag::ACK, 0);
}

/// Appends a PING (or its answer, with `ack`).
pub fn put_ping(out: &mut Vec<u8>, ack: bool, data: [u8; 8]) {
    put_head(out, 8, kind::PING, if ack { flag::ACK } else { 0 }, 0);
    out.extend_from_slice(&data);
}

/// Appends a GOAWAY.
pub fn put_goaway(out: &mut Vec<u8>, last: u32, code: ErrorCode, debug: &[u8]) {
    put_head(out, 8 + debug.len(), kind::GOAWAY, 0, 0);
    out.extend_from_slice(&(last & MAX_WINDOW).to_be_bytes());
    out.extend_from_slice(&(code as u32).to_be_bytes());
    out.extend_from_slice(debug);
}

/// Appends an RST_STREAM.
pub fn put_rst(out: &mut Vec<u8>, stream: u32, code: ErrorCode) {
    put_head(out, 4, kind::RST_STREAM, 0, stream);
    out.extend_from_slice(&(code as u32).to_be_bytes());
}

/// Appends a WINDOW_UPDATE (`stream` 0: the connection's window).
pub fn put_window_update(out: &mut Vec<u8>, stream: u32, increment: u32) {
    put_head(out, 4, kind::WINDOW_UPDATE, 0, stream);
    out.extend_from_slice(&(increment & MAX_WINDOW).to_be_bytes());
}

/// Appends one DATA frame (`data` no larger than the peer's frame size).
pub fn put_data(out: &mut Vec<u8>, stream: u32, data: &[u8], end_stream: bool) {
    let flags = if end_stream { flag::END_STREAM } else { 0 };
    put_head(out, data.len(), kind::DATA, flags, stream);
    out.extend_from_slice(data);
}

/// Appends a header block as HEADERS, then CONTINUATION frames when it is
/// larger than `max_frame` (the peer's SETTINGS_MAX_FRAME_SIZE).
pub fn put_headers(out: &mut Vec<u8>, stream: u32, block: &[u8], end_stream: bool, max_frame: u32) {
    let max = (max_frame as usize).max(1);
    let mut chunks = block.chunks(max);
    let first = chunks.next().unwrap_or_default();
    let mut rest = chunks.peekable();
    let mut flags = if end_stream { flag::END_STREAM } else { 0 };
    if rest.peek().is_none() {
        flags |= flag::END_HEADERS;
    }
    put_head(out, first.len(), kind::HEADERS, flags, stream);
    out.extend_from_slice(first);
    while let Some(c) = rest.next() {
        let f = if rest.peek().is_none() {
            flag::END_HEADERS
        } else {
            0
        };
        put_head(out, c.len(), kind::CONTINUATION, f, stream);
        out.extend_from_slice(c);
    }
}

#[cfg(test)]
#[path = "frame_tests.rs"]
mod tests;
