//! The server side of an HTTP/2 connection as a state machine without
//! I/O: bytes from the client go in ([`Server::feed`]), requests come out
//! through a [`Sink`], responses go in through `send_*`, and the frames to
//! write accumulate in [`Server::output`].
//!
//! It owns every protocol rule: the preface, stream states and
//! identifiers, header blocks and their CONTINUATION frames, HPACK, the
//! validation of request fields (RFC 9113 §8.2 and §8.3), `content-length`
//! against DATA, flow control both ways, SETTINGS, PING and GOAWAY. A
//! stream error resets that stream (RST_STREAM); a connection error queues
//! GOAWAY and ends the connection. A stream stays counted against
//! `max_concurrent_streams` until its user calls [`Server::done`], even
//! after the client reset it, so rapid resets (CVE-2023-44487) cannot pile
//! up work.
// Indexing still to be made checked (`get`) here: indexes are stream slots and lengths it checked.
#![allow(clippy::indexing_slicing)]

use super::frame::{self, setting, ErrorCode, Frame, FrameError, MAX_WINDOW};
use super::hpack::{Decoder, Encoder, HpackError};
use std::collections::VecDeque;

/// The client's stream identifiers closed last that are remembered, to
/// tell late frames on them from protocol errors.
const RECENT: usize = 64;
/// Control frames (SETTINGS and PING answers, resets) one input may call
/// for before the client is told to calm down. Across inputs, the user
/// stops reading a client that does not read what is queued for it.
const MAX_PENDING: usize = 64 * 1024;
/// Streams refused over the limit before the client is told to calm down.
const MAX_REFUSED: usize = 200;

/// What weir announces and enforces.
#[derive(Debug, Clone, Copy)]
pub struct Config {
    pub max_concurrent_streams: u32,
    /// Each stream's receive window (SETTINGS_INITIAL_WINDOW_SIZE).
    pub initial_window: u32,
    /// SETTINGS_MAX_FRAME_SIZE.
    pub max_frame: u32,
    /// SETTINGS_HEADER_TABLE_SIZE: the decoder's largest table.
    pub header_table_size: u32,
    /// The largest header block (all its frames) accepted.
    pub max_header_block: usize,
    /// SETTINGS_ENABLE_CONNECT_PROTOCOL (RFC 8441): requests may carry
    /// `:protocol` on CONNECT (WebSocket over HTTP/2).
    pub extended_connect: bool,
}

/// Where the connection's requests go. Fields of a block arrive before the
/// block is known to be valid: `reset` then says to forget the stream.
pub trait Sink {
    /// One field of a request head or of its trailers, as received
    /// (pseudo-headers first, names in lower case).
    fn field(&mut self, stream: u32, name: &[u8], value: &[u8]);
    /// The request head is complete and valid; `end_stream`: no body.
    fn head(&mut self, stream: u32, end_stream: bool);
    /// The trailers are complete (the request ends with them).
    fn trailers(&mut self, stream: u32);
    /// Body bytes; `end_stream`: the last ones.
    fn data(&mut self, stream: u32, data: &[u8], end_stream: bool);
    /// The stream is gone: the client reset it (`code` is its code), or
    /// weir did for an error in it.
    fn reset(&mut self, stream: u32, code: u32);
    /// Send window opened on `stream` (0: on the connection).
    fn window(&mut self, stream: u32);
}

/// The connection ended: GOAWAY with `code` is queued in the output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("HTTP/2 connection error {code:?}: {what}")]
pub struct ConnError {
    pub code: ErrorCode,
    pub what: &'static str,
}

/// How a remembered stream ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ended {
    /// Both sides sent END_STREAM.
    Normally,
    /// weir reset it: frames the client sent before it knew are dropped.
    Reset,
    /// The client reset it: any later frame is a STREAM_CLOSED error.
    PeerReset,
}

#[derive(Debug)]
struct Stream {
    id: u32,
    /// The client sent END_STREAM.
    recv_closed: bool,
    /// weir sent END_STREAM.
    send_closed: bool,
    /// Reset by either side: nothing more is delivered for it.
    reset: bool,
    /// Reset by the client.
    peer_reset: bool,
    /// The user called `done`.
    user_done: bool,
    /// The request head arrived (a second header block is trailers).
    head_seen: bool,
    send_window: i64,
    recv_window: i64,
    /// Bytes the user consumed that no WINDOW_UPDATE returned yet.
    recv_unacked: u32,
    content_length: Option<u64>,
    received: u64,
}

/// A header block still waiting for CONTINUATION frames.
#[derive(Debug)]
struct Block {
    stream: u32,
    end_stream: bool,
    self_dependent: bool,
    buf: Vec<u8>,
}

/// What the pseudo-header checks of one block found.
#[derive(Debug, Default)]
struct Check {
    trailers: bool,
    regular_seen: bool,
    /// :method, :scheme, :authority, :path, :protocol seen.
    seen: [bool; 5],
    connect: bool,
    /// `:protocol` is allowed (SETTINGS_ENABLE_CONNECT_PROTOCOL sent).
    extended: bool,
    content_length: Option<u64>,
    bad: bool,
}

const PSEUDO: [&[u8]; 5] = [
    b":method",
    b":scheme",
    b":authority",
    b":path",
    b":protocol",
];
const CONNECTION_FIELDS: [&[u8]; 5] = [
    b"connection",
    b"keep-alive",
    b"proxy-connection",
    b"transfer-encoding",
    b"upgrade",
];

impl Check {
    /// Checks one field (RFC 9113 §8.2 and §8.3.1); false: malformed.
    fn field(&mut self, name: &[u8], value: &[u8]) -> bool {
        let name_ok = !name.is_empty()
            && name.iter().enumerate().all(|(i, &b)| {
                b > 0x20 && b < 0x7f && !b.is_ascii_uppercase() && (b != b':' || i == 0)
            });
        let value_ok = !value.iter().any(|&b| b == 0 || b == b'\r' || b == b'\n');
        if !name_ok || !value_ok {
            return false;
        }
        if name[0] == b':' {
            let Some(i) = PSEUDO.iter().position(|p| *p == name) else {
                return false;
            };
            if i == 4 && !self.extended {
                return false;
            }
            if self.trailers || self.regular_seen || self.seen[i] {
                return false;
            }
            self.seen[i] = true;
            match i {
                0 => self.connect = value == b"CONNECT",
                // Origin form or `*` (RFC 9113 §8.3.1): any other target
                // would be read another way once written as HTTP/1.1.
                3 if !(value.first() == Some(&b'/') || value == b"*") => return false,
                _ => {}
            }
            return true;
        }
        self.regular_seen = true;
        if CONNECTION_FIELDS.contains(&name) || (name == b"te" && value != b"trailers") {
            return false;
        }
        if name == b"content-length" {
            let n = std::str::from_utf8(value)
                .ok()
                .filter(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|v| v.parse::<u64>().ok());
            match (n, self.content_length) {
                (None, _) => return false,
                (Some(n), Some(m)) if n != m => return false,
                (Some(n), _) => self.content_length = Some(n),
            }
        }
        true
    }

    /// The block as a whole: a request head has its pseudo-headers.
    fn complete(&self) -> bool {
        if self.bad {
            return false;
        }
        if self.trailers {
            return true;
        }
        let [method, scheme, authority, path, protocol] = self.seen;
        if protocol {
            // RFC 8441 §4: an extended CONNECT names its target in full.
            self.connect && method && scheme && authority && path
        } else if self.connect {
            method && authority && !scheme && !path
        } else {
            method && scheme && path
        }
    }
}

/// The server side of one HTTP/2 connection.
#[derive(Debug)]
pub struct Server {
    cfg: Config,
    dec: Decoder,
    enc: Encoder,
    peer_initial_window: u32,
    peer_max_frame: u32,
    preface_seen: bool,
    streams: Vec<Stream>,
    /// The highest stream identifier the client used.
    last_id: u32,
    recent: VecDeque<(u32, Ended)>,
    send_window: i64,
    recv_window: i64,
    /// The connection window was opened beyond its initial 65 535 bytes
    /// (at the first DATA).
    window_opened: bool,
    recv_unacked: u32,
    block: Option<Block>,
    /// GOAWAY sent: no new streams.
    going_away: bool,
    /// Streams refused for the concurrency limit.
    refused: usize,
    out: Vec<u8>,
}

impl Server {
    /// A connection whose SETTINGS are queued in the output. (The
    /// connection window opens to its maximum at the first DATA, as
    /// haproxy's: a client that reads the server's SETTINGS, then their
    /// ACK, sees nothing else on stream 0 before.)
    pub fn new(cfg: Config) -> Server {
        let mut out = Vec::with_capacity(64);
        let params = [
            (setting::HEADER_TABLE_SIZE, cfg.header_table_size),
            (setting::ENABLE_PUSH, 0),
            (setting::MAX_CONCURRENT_STREAMS, cfg.max_concurrent_streams),
            (setting::INITIAL_WINDOW_SIZE, cfg.initial_window),
            (setting::MAX_FRAME_SIZE, cfg.max_frame),
            (setting::ENABLE_CONNECT_PROTOCOL, 1),
        ];
        let n = params.len() - usize::from(!cfg.extended_connect);
        frame::put_settings(&mut out, &params[..n]);
        Server {
            dec: Decoder::new(cfg.header_table_size as usize),
            enc: Encoder::default(),
            cfg,
            peer_initial_window: 65_535,
            peer_max_frame: frame::MIN_MAX_FRAME,
            preface_seen: false,
            streams: Vec::new(),
            last_id: 0,
            recent: VecDeque::new(),
            send_window: 65_535,
            recv_window: 65_535,
            window_opened: false,
            recv_unacked: 0,
            block: None,
            going_away: false,
            refused: 0,
            out,
        }
    }

    /// The frames to write; the caller removes what it wrote.
    pub fn output(&mut self) -> &mut Vec<u8> {
        &mut self.out
    }

    /// Streams the user still works on or that are still open.
    pub fn active(&self) -> usize {
        self.streams.len()
    }

    /// The highest stream identifier the client used.
    pub fn last_stream(&self) -> u32 {
        self.last_id
    }

    fn stream(&mut self, id: u32) -> Option<&mut Stream> {
        self.streams.iter_mut().find(|s| s.id == id)
    }

    fn fail(&mut self, code: ErrorCode, what: &'static str) -> ConnError {
        if !self.going_away || code != ErrorCode::NoError {
            frame::put_goaway(&mut self.out, self.last_id, code, what.as_bytes());
        }
        self.going_away = true;
        ConnError { code, what }
    }

    /// Resets `id` for an error in it (or for weir's own reasons).
    fn reset_stream(&mut self, id: u32, code: ErrorCode, sink: &mut dyn Sink) {
        frame::put_rst(&mut self.out, id, code);
        if let Some(s) = self.stream(id) {
            if !s.reset {
                s.reset = true;
                sink.reset(id, code as u32);
            }
        }
        self.remember(id, Ended::Reset);
        self.reap(id);
    }

    fn remember(&mut self, id: u32, how: Ended) {
        if let Some(r) = self.recent.iter_mut().find(|r| r.0 == id) {
            r.1 = how;
            return;
        }
        if self.recent.len() == RECENT {
            self.recent.pop_front();
        }
        self.recent.push_back((id, how));
    }

    /// Forgets `id` once it is over for both the protocol and the user
    /// (only the stream that just changed can have become over).
    fn reap(&mut self, id: u32) {
        let Some(i) = self.streams.iter().position(|s| s.id == id) else {
            return;
        };
        let s = &self.streams[i];
        let over = s.reset || (s.recv_closed && s.send_closed);
        if over && s.user_done {
            let how = if s.peer_reset {
                Ended::PeerReset
            } else if s.reset {
                Ended::Reset
            } else {
                Ended::Normally
            };
            self.streams.swap_remove(i);
            self.remember(id, how);
        }
    }

    /// Takes the client's bytes: returns how many were used (a partial
    /// frame stays with the caller), or the connection error that ended it.
    pub fn feed(&mut self, input: &[u8], sink: &mut dyn Sink) -> Result<usize, ConnError> {
        let mut used = 0;
        // What this input makes weir answer (the output may already hold
        // response DATA, which the windows bound).
        let base = self.out.len();
        if !self.preface_seen {
            let n = input.len().min(frame::PREFACE.len());
            if input[..n] != frame::PREFACE[..n] {
                return Err(self.fail(ErrorCode::Protocol, "invalid connection preface"));
            }
            if n < frame::PREFACE.len() {
                return Ok(0);
            }
            self.preface_seen = true;
            used = n;
        }
        loop {
            let rest = &input[used..];
            match frame::parse(rest, self.cfg.max_frame) {
                Ok(None) => return Ok(used),
                Ok(Some((f, n))) => {
                    used += n;
                    self.frame(f, sink)?;
                }
                Err(FrameError {
                    stream: 0,
                    code,
                    what,
                }) => return Err(self.fail(code, what)),
                Err(e) => {
                    // A stream error: the whole frame is there (parse
                    // checks the length first); it is skipped.
                    let len = match rest.first_chunk::<3>() {
                        Some(l) => u32::from_be_bytes([0, l[0], l[1], l[2]]) as usize,
                        None => rest.len(),
                    };
                    used += (frame::HEAD_LEN + len).min(rest.len());
                    if self.block.is_some() {
                        return Err(self.fail(ErrorCode::Protocol, "frame inside a header block"));
                    }
                    self.reset_stream(e.stream, e.code, sink);
                }
            }
            if self.out.len() - base > MAX_PENDING {
                return Err(self.fail(ErrorCode::EnhanceYourCalm, "too many frames to answer"));
            }
        }
    }

    fn frame(&mut self, f: Frame<'_>, sink: &mut dyn Sink) -> Result<(), ConnError> {
        if let Some(b) = &mut self.block {
            let Frame::Continuation {
                stream,
                end_headers,
                block,
            } = f
            else {
                return Err(self.fail(ErrorCode::Protocol, "frame inside a header block"));
            };
            if stream != b.stream {
                return Err(self.fail(ErrorCode::Protocol, "CONTINUATION of another stream"));
            }
            if b.buf.len() + block.len() > self.cfg.max_header_block {
                return Err(self.fail(ErrorCode::EnhanceYourCalm, "header block too large"));
            }
            b.buf.extend_from_slice(block);
            if end_headers {
                if let Some(b) = self.block.take() {
                    self.header_block(b.stream, &b.buf, b.end_stream, b.self_dependent, sink)?;
                }
            }
            return Ok(());
        }
        match f {
            Frame::Data {
                stream,
                end_stream,
                data,
                flow_len,
            } => self.data(stream, end_stream, data, flow_len, sink),
            Frame::Headers {
                stream,
                end_stream,
                end_headers,
                priority,
                block,
            } => {
                if stream % 2 == 0 {
                    return Err(self.fail(ErrorCode::Protocol, "even stream identifier"));
                }
                let self_dependent = priority.is_some_and(|p| p.dependency == stream);
                if end_headers {
                    return self.header_block(stream, block, end_stream, self_dependent, sink);
                }
                if block.len() > self.cfg.max_header_block {
                    return Err(self.fail(ErrorCode::EnhanceYourCalm, "header block too large"));
                }
                self.block = Some(Block {
                    stream,
                    end_stream,
                    self_dependent,
                    buf: block.to_vec(),
                });
                Ok(())
            }
            Frame::Priority { .. } | Frame::Unknown { .. } => Ok(()),
            Frame::RstStream { stream, code } => {
                if stream > self.last_id {
                    return Err(self.fail(ErrorCode::Protocol, "RST_STREAM on an idle stream"));
                }
                if let Some(s) = self.stream(stream) {
                    s.peer_reset = true;
                    if !s.reset {
                        s.reset = true;
                        sink.reset(stream, code);
                    }
                    self.remember(stream, Ended::PeerReset);
                    self.reap(stream);
                }
                Ok(())
            }
            Frame::Settings { ack: true, .. } => Ok(()),
            Frame::Settings { ack: false, params } => {
                for (id, v) in params {
                    match id {
                        setting::INITIAL_WINDOW_SIZE => {
                            let delta = i64::from(v) - i64::from(self.peer_initial_window);
                            self.peer_initial_window = v;
                            for s in &mut self.streams {
                                s.send_window += delta;
                                if s.send_window > i64::from(MAX_WINDOW) {
                                    return Err(self.fail(
                                        ErrorCode::FlowControl,
                                        "a stream window above 2^31-1",
                                    ));
                                }
                            }
                            if delta > 0 {
                                for s in &self.streams {
                                    sink.window(s.id);
                                }
                            }
                        }
                        setting::MAX_FRAME_SIZE => self.peer_max_frame = v,
                        _ => {}
                    }
                }
                frame::put_settings_ack(&mut self.out);
                Ok(())
            }
            Frame::PushPromise { .. } => {
                Err(self.fail(ErrorCode::Protocol, "PUSH_PROMISE from a client"))
            }
            Frame::Ping { ack: true, .. } => Ok(()),
            Frame::Ping { ack: false, data } => {
                frame::put_ping(&mut self.out, true, data);
                Ok(())
            }
            Frame::GoAway { .. } => Ok(()),
            Frame::WindowUpdate {
                stream: 0,
                increment,
            } => {
                self.send_window += i64::from(increment);
                if self.send_window > i64::from(MAX_WINDOW) {
                    return Err(self.fail(ErrorCode::FlowControl, "connection window above 2^31-1"));
                }
                sink.window(0);
                Ok(())
            }
            Frame::WindowUpdate { stream, increment } => {
                if stream > self.last_id {
                    return Err(self.fail(ErrorCode::Protocol, "WINDOW_UPDATE on an idle stream"));
                }
                let Some(s) = self.stream(stream) else {
                    return Ok(());
                };
                if s.reset {
                    return Ok(());
                }
                s.send_window += i64::from(increment);
                if s.send_window > i64::from(MAX_WINDOW) {
                    self.reset_stream(stream, ErrorCode::FlowControl, sink);
                    return Ok(());
                }
                sink.window(stream);
                Ok(())
            }
            Frame::Continuation { .. } => {
                Err(self.fail(ErrorCode::Protocol, "CONTINUATION without a header block"))
            }
        }
    }

    fn data(
        &mut self,
        id: u32,
        end_stream: bool,
        data: &[u8],
        flow_len: u32,
        sink: &mut dyn Sink,
    ) -> Result<(), ConnError> {
        self.recv_window -= i64::from(flow_len);
        if self.recv_window < 0 {
            return Err(self.fail(ErrorCode::FlowControl, "DATA beyond the connection window"));
        }
        // The connection's window is given back at once: each stream's
        // window is what bounds the buffering.
        if !self.window_opened {
            self.window_opened = true;
            frame::put_window_update(&mut self.out, 0, MAX_WINDOW - 65_535);
            self.recv_window += i64::from(MAX_WINDOW - 65_535);
        }
        self.recv_unacked += flow_len;
        self.ack_connection();
        if id > self.last_id {
            return Err(self.fail(ErrorCode::Protocol, "DATA on an idle stream"));
        }
        let padding = flow_len - data.len() as u32;
        let Some(s) = self.streams.iter_mut().find(|s| s.id == id) else {
            return match self.recent.iter().find(|r| r.0 == id) {
                Some((_, Ended::Reset)) => Ok(()),
                _ => {
                    frame::put_rst(&mut self.out, id, ErrorCode::StreamClosed);
                    Ok(())
                }
            };
        };
        if s.reset {
            if s.peer_reset {
                frame::put_rst(&mut self.out, id, ErrorCode::StreamClosed);
            }
            return Ok(());
        }
        if s.recv_closed {
            self.reset_stream(id, ErrorCode::StreamClosed, sink);
            return Ok(());
        }
        s.recv_window -= i64::from(flow_len);
        if s.recv_window < 0 {
            self.reset_stream(id, ErrorCode::FlowControl, sink);
            return Ok(());
        }
        s.recv_unacked += padding;
        s.received += data.len() as u64;
        let length_ok = match s.content_length {
            Some(cl) => s.received <= cl && (!end_stream || s.received == cl),
            None => true,
        };
        if !length_ok {
            self.reset_stream(id, ErrorCode::Protocol, sink);
            return Ok(());
        }
        if end_stream {
            s.recv_closed = true;
        }
        sink.data(id, data, end_stream);
        if end_stream {
            self.reap(id);
        }
        Ok(())
    }

    fn ack_connection(&mut self) {
        if self.recv_unacked >= MAX_WINDOW / 2 {
            frame::put_window_update(&mut self.out, 0, self.recv_unacked);
            self.recv_window += i64::from(self.recv_unacked);
            self.recv_unacked = 0;
        }
    }

    /// A complete header block on stream `id`: a new request, its
    /// trailers, or an error.
    fn header_block(
        &mut self,
        id: u32,
        block: &[u8],
        end_stream: bool,
        self_dependent: bool,
        sink: &mut dyn Sink,
    ) -> Result<(), ConnError> {
        enum To {
            New,
            Trailers,
            Drop,
            /// Reset by the client: a STREAM_CLOSED error.
            Closed,
            Reset(ErrorCode),
        }
        let existing = self
            .streams
            .iter()
            .find(|s| s.id == id)
            .map(|s| (s.reset, s.recv_closed, s.peer_reset));
        let to = match existing {
            Some((true, _, true)) => To::Closed,
            Some((true, _, false)) => To::Drop,
            Some((false, true, _)) => To::Reset(ErrorCode::StreamClosed),
            Some((false, false, _)) if !end_stream => To::Reset(ErrorCode::Protocol),
            Some((false, false, _)) => To::Trailers,
            None if id <= self.last_id => {
                return match self.recent.iter().find(|r| r.0 == id) {
                    Some((_, Ended::Reset)) => self.discard(block),
                    Some((_, Ended::PeerReset)) => {
                        self.discard(block)?;
                        frame::put_rst(&mut self.out, id, ErrorCode::StreamClosed);
                        Ok(())
                    }
                    Some((_, Ended::Normally)) => {
                        Err(self.fail(ErrorCode::StreamClosed, "HEADERS on a closed stream"))
                    }
                    None => {
                        Err(self.fail(ErrorCode::Protocol, "stream identifier going backwards"))
                    }
                };
            }
            None if self.going_away => {
                self.last_id = id;
                To::Drop
            }
            None => {
                self.last_id = id;
                if self.streams.len() >= self.cfg.max_concurrent_streams as usize {
                    self.refused += 1;
                    if self.refused > MAX_REFUSED {
                        return Err(
                            self.fail(ErrorCode::EnhanceYourCalm, "too many refused streams")
                        );
                    }
                    To::Reset(ErrorCode::RefusedStream)
                } else {
                    To::New
                }
            }
        };
        match to {
            To::Drop => self.discard(block),
            To::Closed => {
                self.discard(block)?;
                frame::put_rst(&mut self.out, id, ErrorCode::StreamClosed);
                Ok(())
            }
            To::Reset(code) => {
                self.discard(block)?;
                self.reset_stream(id, code, sink);
                Ok(())
            }
            To::New => {
                self.streams.push(Stream {
                    id,
                    recv_closed: false,
                    send_closed: false,
                    reset: false,
                    peer_reset: false,
                    user_done: false,
                    head_seen: false,
                    send_window: i64::from(self.peer_initial_window),
                    recv_window: i64::from(self.cfg.initial_window),
                    recv_unacked: 0,
                    content_length: None,
                    received: 0,
                });
                self.decode_into(id, block, false, end_stream, self_dependent, sink)
            }
            To::Trailers => self.decode_into(id, block, true, end_stream, self_dependent, sink),
        }
    }

    /// Decodes a block nobody will read, to keep the HPACK table in step.
    fn discard(&mut self, block: &[u8]) -> Result<(), ConnError> {
        match self
            .dec
            .decode(block, |_: &[u8], _: &[u8]| Ok::<(), HpackError>(()))
        {
            Ok(()) => Ok(()),
            Err(_) => Err(self.fail(ErrorCode::Compression, "invalid header block")),
        }
    }

    fn decode_into(
        &mut self,
        id: u32,
        block: &[u8],
        trailers: bool,
        end_stream: bool,
        self_dependent: bool,
        sink: &mut dyn Sink,
    ) -> Result<(), ConnError> {
        let mut check = Check {
            trailers,
            extended: self.cfg.extended_connect,
            ..Check::default()
        };
        let r = self.dec.decode(block, |n: &[u8], v: &[u8]| {
            if !check.bad {
                if check.field(n, v) {
                    sink.field(id, n, v);
                } else {
                    check.bad = true;
                }
            }
            Ok::<(), HpackError>(())
        });
        if r.is_err() {
            return Err(self.fail(ErrorCode::Compression, "invalid header block"));
        }
        let cl = check.content_length;
        let ok = check.complete()
            && !self_dependent
            && !(trailers && cl.is_some())
            && !(end_stream && !trailers && cl.is_some_and(|n| n != 0));
        if !ok {
            self.reset_stream(id, ErrorCode::Protocol, sink);
            return Ok(());
        }
        let Some(s) = self.stream(id) else {
            return Ok(());
        };
        if trailers {
            if s.content_length.is_some_and(|n| n != s.received) {
                self.reset_stream(id, ErrorCode::Protocol, sink);
                return Ok(());
            }
            s.recv_closed = true;
            sink.trailers(id);
        } else {
            s.head_seen = true;
            s.content_length = cl;
            s.recv_closed = end_stream;
            sink.head(id, end_stream);
        }
        self.reap(id);
        Ok(())
    }

    /// Gives `n` bytes of `stream`'s receive window back (the user
    /// consumed them); a WINDOW_UPDATE leaves once half the window is due,
    /// and for the rest once the body ended (as haproxy acknowledges a
    /// whole body: VTest scripts wait for that frame before the response).
    pub fn release(&mut self, stream: u32, n: usize) {
        let half = self.cfg.initial_window / 2;
        let Some(s) = self.streams.iter_mut().find(|s| s.id == stream) else {
            return;
        };
        s.recv_unacked = s.recv_unacked.saturating_add(n as u32);
        let due = s.recv_unacked >= half.max(1) || (s.recv_closed && s.recv_unacked > 0);
        if due && !s.reset {
            frame::put_window_update(&mut self.out, stream, s.recv_unacked);
            s.recv_window += i64::from(s.recv_unacked);
            s.recv_unacked = 0;
        }
    }

    /// How many body bytes `stream` may send now (both windows).
    pub fn send_capacity(&self, stream: u32) -> usize {
        match self.streams.iter().find(|s| s.id == stream) {
            Some(s) if !s.reset && !s.send_closed => {
                s.send_window.min(self.send_window).max(0) as usize
            }
            _ => 0,
        }
    }

    /// Queues a header block that `encode` writes straight into the
    /// output, behind a HEADERS frame header patched once its length is
    /// known (split into CONTINUATION frames when over the peer's frame
    /// size).
    fn put_block(&mut self, stream: u32, end_stream: bool, encode: impl FnOnce(&mut Vec<u8>)) {
        let at = self.out.len();
        self.out.extend_from_slice(&[0; frame::HEAD_LEN]);
        encode(&mut self.out);
        let len = self.out.len() - at - frame::HEAD_LEN;
        if len <= self.peer_max_frame as usize {
            let flags = frame::flag::END_HEADERS
                | if end_stream {
                    frame::flag::END_STREAM
                } else {
                    0
                };
            let head = frame::head_bytes(len, frame::kind::HEADERS, flags, stream);
            self.out[at..at + frame::HEAD_LEN].copy_from_slice(&head);
        } else {
            let block = self.out.split_off(at + frame::HEAD_LEN);
            self.out.truncate(at);
            frame::put_headers(
                &mut self.out,
                stream,
                &block,
                end_stream,
                self.peer_max_frame,
            );
        }
    }

    /// Queues a response head: `:status`, then `fields` (names lower-cased
    /// on the way; connection-specific fields are the caller's to drop).
    pub fn send_head<'f>(
        &mut self,
        stream: u32,
        status: u16,
        fields: impl IntoIterator<Item = (&'f [u8], &'f [u8])>,
        end_stream: bool,
    ) {
        let Some(s) = self.streams.iter_mut().find(|s| s.id == stream) else {
            return;
        };
        if s.reset || s.send_closed {
            return;
        }
        s.send_closed = end_stream;
        let enc = self.enc;
        self.put_block(stream, end_stream, |out| {
            enc.status(out, status);
            for (n, v) in fields {
                enc.field(out, n, v);
            }
        });
        self.reap(stream);
    }

    /// Queues body bytes, as many as the windows allow (returned); the
    /// stream ends with them when `end_stream` and all were taken.
    pub fn send_data(&mut self, stream: u32, data: &[u8], end_stream: bool) -> usize {
        let cap = self.send_capacity(stream);
        let Some(s) = self.streams.iter_mut().find(|s| s.id == stream) else {
            return 0;
        };
        if s.reset || s.send_closed {
            return 0;
        }
        let n = data.len().min(cap);
        let end = end_stream && n == data.len();
        if n == 0 && !end {
            return 0;
        }
        s.send_window -= n as i64;
        self.send_window -= n as i64;
        s.send_closed = end;
        let max = self.peer_max_frame as usize;
        let mut chunks = data[..n].chunks(max).peekable();
        if n == 0 {
            frame::put_data(&mut self.out, stream, &[], true);
        }
        while let Some(c) = chunks.next() {
            frame::put_data(&mut self.out, stream, c, end && chunks.peek().is_none());
        }
        if end {
            self.reap(stream);
        }
        n
    }

    /// Queues trailers, which end the stream.
    pub fn send_trailers<'f>(
        &mut self,
        stream: u32,
        fields: impl IntoIterator<Item = (&'f [u8], &'f [u8])>,
    ) {
        let Some(s) = self.streams.iter_mut().find(|s| s.id == stream) else {
            return;
        };
        if s.reset || s.send_closed {
            return;
        }
        s.send_closed = true;
        let enc = self.enc;
        self.put_block(stream, true, |out| {
            for (n, v) in fields {
                enc.field(out, n, v);
            }
        });
        self.reap(stream);
    }

    /// Resets `stream` (weir gives up on it: CANCEL, INTERNAL_ERROR …).
    pub fn reset(&mut self, stream: u32, code: ErrorCode) {
        let Some(s) = self.streams.iter_mut().find(|s| s.id == stream) else {
            return;
        };
        if s.reset {
            return;
        }
        s.reset = true;
        frame::put_rst(&mut self.out, stream, code);
        self.remember(stream, Ended::Reset);
        self.reap(stream);
    }

    /// The user is done with `stream`; it stops counting once closed.
    pub fn done(&mut self, stream: u32) {
        if let Some(s) = self.stream(stream) {
            s.user_done = true;
            if !(s.reset || s.recv_closed && s.send_closed) {
                // Given up before its end: the client is told; after a
                // whole response, only to stop sending its request
                // (RFC 9113 §8.1: NO_ERROR).
                s.reset = true;
                let code = if s.send_closed {
                    ErrorCode::NoError
                } else {
                    ErrorCode::Cancel
                };
                frame::put_rst(&mut self.out, stream, code);
            }
        }
        self.reap(stream);
    }

    /// Queues GOAWAY (`NoError` for a graceful stop): streams already
    /// opened go on, new ones are ignored.
    pub fn goaway(&mut self, code: ErrorCode) {
        if !self.going_away {
            frame::put_goaway(&mut self.out, self.last_id, code, b"");
            self.going_away = true;
        }
    }
}

#[cfg(test)]
#[path = "server_tests.rs"]
mod tests;
