use super::*;
use crate::h2::frame::{
    flag, kind, put_data, put_head, put_headers, put_ping, put_rst, put_settings, PREFACE,
};

#[derive(Default)]
struct Rec(Vec<String>);

impl Sink for Rec {
    fn field(&mut self, s: u32, n: &[u8], v: &[u8]) {
        self.0.push(format!(
            "{s} {}: {}",
            String::from_utf8_lossy(n),
            String::from_utf8_lossy(v)
        ));
    }
    fn head(&mut self, s: u32, end: bool) {
        self.0.push(format!("{s} head end={end}"));
    }
    fn trailers(&mut self, s: u32) {
        self.0.push(format!("{s} trailers"));
    }
    fn data(&mut self, s: u32, d: &[u8], end: bool) {
        self.0
            .push(format!("{s} data {} end={end}", String::from_utf8_lossy(d)));
    }
    fn reset(&mut self, s: u32, code: u32) {
        self.0.push(format!("{s} reset {code}"));
    }
    fn window(&mut self, s: u32) {
        self.0.push(format!("{s} window"));
    }
}

fn cfg() -> Config {
    Config {
        max_concurrent_streams: 2,
        initial_window: 100,
        max_frame: 16_384,
        header_table_size: 4096,
        max_header_block: 1000,
        extended_connect: true,
    }
}

/// A connection past the preface and SETTINGS exchange, output emptied.
fn open() -> (Server, Rec) {
    let mut s = Server::new(cfg());
    let mut rec = Rec::default();
    let mut b = PREFACE.to_vec();
    put_settings(&mut b, &[]);
    assert_eq!(s.feed(&b, &mut rec), Ok(b.len()));
    let out = frames(&s.output().split_off(0));
    // SETTINGS, then the ACK of the client's, nothing between (VTest's
    // HTTP/2 scripts read stream 0 in that order).
    assert_eq!(out.len(), 2, "{out:?}");
    assert_eq!(out[0].0, kind::SETTINGS);
    assert_eq!((out[1].0, out[1].1), (kind::SETTINGS, flag::ACK));
    (s, rec)
}

/// Frames as (kind, flags, stream, payload).
type Frames = Vec<(u8, u8, u32, Vec<u8>)>;

/// Feeds `b`, which must not end the connection; the frames weir answered with.
fn ok(s: &mut Server, rec: &mut Rec, b: &[u8]) -> Frames {
    let (r, out) = feed(s, rec, b);
    assert!(r.is_ok(), "{r:?}");
    out
}

/// The frames in `b`: (kind, flags, stream, payload).
fn frames(b: &[u8]) -> Vec<(u8, u8, u32, Vec<u8>)> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < b.len() {
        let h = &b[pos..pos + 9];
        let len = u32::from_be_bytes([0, h[0], h[1], h[2]]) as usize;
        let stream = u32::from_be_bytes([h[5], h[6], h[7], h[8]]);
        out.push((h[3], h[4], stream, b[pos + 9..pos + 9 + len].to_vec()));
        pos += 9 + len;
    }
    out
}

fn block(fields: &[(&str, &str)]) -> Vec<u8> {
    let e = Encoder::default();
    let mut b = Vec::new();
    for (n, v) in fields {
        // Literal without indexing, new name: the name exactly as given.
        b.push(0);
        b.push(n.len() as u8);
        b.extend_from_slice(n.as_bytes());
        let _ = e;
        b.push(v.len() as u8);
        b.extend_from_slice(v.as_bytes());
    }
    b
}

const GET: [(&str, &str); 4] = [
    (":method", "GET"),
    (":scheme", "https"),
    (":path", "/x"),
    (":authority", "a"),
];

fn headers(stream: u32, fields: &[(&str, &str)], end_stream: bool) -> Vec<u8> {
    let mut b = Vec::new();
    put_headers(&mut b, stream, &block(fields), end_stream, 16_384);
    b
}

fn data(stream: u32, d: &[u8], end: bool) -> Vec<u8> {
    let mut b = Vec::new();
    put_data(&mut b, stream, d, end);
    b
}

/// Feeds `b`; the frames weir answered with.
fn feed(s: &mut Server, rec: &mut Rec, b: &[u8]) -> (Result<usize, ConnError>, Frames) {
    let r = s.feed(b, rec);
    (r, frames(&s.output().split_off(0)))
}

/// Answers `stream` (204, ending it) and lets it go.
fn finish(s: &mut Server, stream: u32) {
    s.send_head(stream, 204, [], true);
    s.done(stream);
    s.output().clear();
}

/// Feeds `b`, which must end the connection with GOAWAY `code`.
fn fails(s: &mut Server, rec: &mut Rec, b: &[u8], code: ErrorCode) {
    let (r, out) = feed(s, rec, b);
    assert!(r.is_err());
    assert_eq!(goaway_code(&out), Some(code as u32));
}

fn rst(stream: u32, code: ErrorCode) -> (u8, u8, u32, Vec<u8>) {
    (
        kind::RST_STREAM,
        0,
        stream,
        (code as u32).to_be_bytes().to_vec(),
    )
}

fn goaway_code(f: &[(u8, u8, u32, Vec<u8>)]) -> Option<u32> {
    f.iter()
        .find(|f| f.0 == kind::GOAWAY)
        .map(|f| u32::from_be_bytes([f.3[4], f.3[5], f.3[6], f.3[7]]))
}

#[test]
fn a_request_and_its_response() {
    let (mut s, mut rec) = open();
    let (r, out) = feed(&mut s, &mut rec, &headers(1, &GET, true));
    assert!(r.is_ok() && out.is_empty());
    assert_eq!(
        rec.0,
        [
            "1 :method: GET",
            "1 :scheme: https",
            "1 :path: /x",
            "1 :authority: a",
            "1 head end=true"
        ]
    );
    s.send_head(1, 200, [(&b"Content-Type"[..], &b"text/plain"[..])], false);
    assert_eq!(s.send_data(1, b"hello", true), 5);
    let out = frames(&s.output().split_off(0));
    assert_eq!((out[0].0, out[0].1 & flag::END_STREAM), (kind::HEADERS, 0));
    let mut got = Vec::new();
    Decoder::new(4096)
        .decode(&out[0].3, |n: &[u8], v: &[u8]| {
            got.push(format!(
                "{}: {}",
                String::from_utf8_lossy(n),
                String::from_utf8_lossy(v)
            ));
            Ok::<(), HpackError>(())
        })
        .unwrap();
    assert_eq!(got, [":status: 200", "content-type: text/plain"]);
    assert_eq!(
        (out[1].0, out[1].1, out[1].3.as_slice()),
        (kind::DATA, flag::END_STREAM, &b"hello"[..])
    );
    assert_eq!(s.active(), 1, "counted until the user is done");
    s.done(1);
    assert_eq!(s.active(), 0);
    assert!(s.output().is_empty(), "a finished stream is not reset");
    // A response sent before the request's end: NO_ERROR tells the client
    // to stop; a stream given up before its response: CANCEL.
    ok(
        &mut s,
        &mut rec,
        &[headers(3, &GET, false), headers(5, &GET, false)].concat(),
    );
    s.send_head(3, 413, [], true);
    s.done(3);
    s.done(5);
    let out = frames(&s.output().split_off(0));
    assert_eq!(
        out[1..],
        [rst(3, ErrorCode::NoError), rst(5, ErrorCode::Cancel)]
    );
    assert_eq!(s.active(), 0);
}

#[test]
fn bodies_content_length_and_receive_window() {
    let (mut s, mut rec) = open();
    let mut post = GET.to_vec();
    post[0] = (":method", "POST");
    post.push(("content-length", "5"));
    let mut b = headers(1, &post, false);
    b.extend(data(1, b"hel", false));
    b.extend(data(1, b"lo", true));
    let (r, out) = feed(&mut s, &mut rec, &b);
    // The first DATA opens the connection's window, once.
    assert!(r.is_ok() && out == [open_window()], "{out:?}");
    assert_eq!(
        &rec.0[5..],
        [
            "1 head end=false",
            "1 data hel end=false",
            "1 data lo end=true"
        ]
    );
    // More bytes than announced, fewer, and past the window (100 bytes).
    finish(&mut s, 1);
    let mut b = headers(3, &post, false);
    b.extend(data(3, b"toolong", false));
    b.extend(headers(5, &post, false));
    b.extend(data(5, b"abc", true));
    let (_, out) = feed(&mut s, &mut rec, &b);
    assert_eq!(
        out,
        [rst(3, ErrorCode::Protocol), rst(5, ErrorCode::Protocol)]
    );
    s.done(3);
    s.done(5);
    let mut b = headers(7, &GET[..], false);
    b.extend(data(7, &[b'x'; 60], false));
    b.extend(data(7, &[b'x'; 60], false));
    let (_, out) = feed(&mut s, &mut rec, &b);
    assert_eq!(out, [rst(7, ErrorCode::FlowControl)]);
    // Released bytes come back as a WINDOW_UPDATE once half is due.
    s.done(7);
    let (_, out) = feed(
        &mut s,
        &mut rec,
        &[headers(9, &GET[..], false), data(9, &[b'y'; 60], false)].concat(),
    );
    assert!(out.is_empty());
    s.release(9, 30);
    assert!(s.output().is_empty());
    s.release(9, 30);
    let out = frames(&s.output().split_off(0));
    assert_eq!(
        out,
        [(kind::WINDOW_UPDATE, 0, 9, 60u32.to_be_bytes().to_vec())]
    );
    let (_, out) = feed(&mut s, &mut rec, &data(9, &[b'z'; 100], true));
    assert!(out.is_empty(), "the window was given back: {out:?}");
}

#[test]
fn malformed_requests_reset_their_stream() {
    let cases: Vec<Vec<(&str, &str)>> = vec![
        vec![
            (":method", "GET"),
            (":scheme", "https"),
            (":path", "/"),
            ("Upper", "x"),
        ],
        vec![
            (":method", "GET"),
            (":scheme", "https"),
            (":path", "/"),
            ("connection", "close"),
        ],
        vec![
            (":method", "GET"),
            (":scheme", "https"),
            (":path", "/"),
            ("te", "gzip"),
        ],
        vec![(":method", "GET"), (":scheme", "https")],
        vec![(":method", "GET"), (":scheme", "https"), (":path", "")],
        vec![
            (":method", "GET"),
            (":scheme", "https"),
            (":path", "hello-world"),
        ],
        vec![
            (":method", "GET"),
            (":scheme", "https"),
            (":path", "http://a/"),
        ],
        vec![
            (":method", "GET"),
            ("x", "y"),
            (":scheme", "https"),
            (":path", "/"),
        ],
        vec![
            (":method", "GET"),
            (":scheme", "https"),
            (":path", "/"),
            (":foo", "x"),
        ],
        vec![
            (":method", "GET"),
            (":scheme", "https"),
            (":path", "/"),
            (":status", "200"),
        ],
        vec![
            (":method", "GET"),
            (":method", "GET"),
            (":scheme", "https"),
            (":path", "/"),
        ],
        vec![
            (":method", "GET"),
            (":scheme", "https"),
            (":path", "/"),
            ("x", "a\nb"),
        ],
        vec![
            (":method", "GET"),
            (":scheme", "https"),
            (":path", "/"),
            ("content-length", "1"),
        ],
        vec![
            (":method", "CONNECT"),
            (":authority", "a:443"),
            (":path", "/"),
        ],
        // RFC 8441: `:protocol` only on CONNECT, which then names its
        // scheme and path too.
        vec![
            (":method", "GET"),
            (":protocol", "websocket"),
            (":scheme", "https"),
            (":authority", "a"),
            (":path", "/"),
        ],
        vec![
            (":method", "CONNECT"),
            (":protocol", "websocket"),
            (":authority", "a"),
        ],
    ];
    for (i, fields) in cases.iter().enumerate() {
        let (mut s, mut rec) = open();
        let (r, out) = feed(&mut s, &mut rec, &headers(1, fields, true));
        assert!(r.is_ok(), "case {i}");
        assert_eq!(out, [rst(1, ErrorCode::Protocol)], "case {i}");
        assert_eq!(
            rec.0.last().map(String::as_str),
            Some("1 reset 1"),
            "case {i}"
        );
        assert!(!rec.0.iter().any(|e| e.contains("head")), "case {i}");
    }
    // CONNECT with :authority only is fine; te: trailers too.
    let (mut s, mut rec) = open();
    let (_, out) = feed(
        &mut s,
        &mut rec,
        &headers(1, &[(":method", "CONNECT"), (":authority", "a:443")], false),
    );
    assert!(out.is_empty());
    let (_, out) = feed(
        &mut s,
        &mut rec,
        &headers(3, &[GET.as_slice(), &[("te", "trailers")]].concat(), true),
    );
    assert!(out.is_empty());
    let ws = [
        (":method", "CONNECT"),
        (":protocol", "websocket"),
        (":scheme", "https"),
        (":authority", "a"),
        (":path", "/chat"),
    ];
    let (mut s, mut rec) = open();
    let (_, out) = feed(&mut s, &mut rec, &headers(1, &ws, false));
    assert!(out.is_empty(), "{out:?}");
    assert_eq!(rec.0.last().map(String::as_str), Some("1 head end=false"));
    // Without SETTINGS_ENABLE_CONNECT_PROTOCOL announced, `:protocol` is
    // an unknown pseudo-header.
    let mut s = Server::new(Config {
        extended_connect: false,
        ..cfg()
    });
    let settings = frames(s.output());
    assert!(!settings[0].3.chunks(6).any(|p| p[..2] == [0, 8]));
    let mut rec = Rec::default();
    let mut b = PREFACE.to_vec();
    put_settings(&mut b, &[]);
    b.extend(headers(1, &ws, false));
    let (_, out) = feed(&mut s, &mut rec, &b);
    assert!(out.contains(&rst(1, ErrorCode::Protocol)), "{out:?}");
}

#[test]
fn trailers_end_the_request() {
    let (mut s, mut rec) = open();
    let mut b = headers(1, &GET, false);
    b.extend(data(1, b"body", false));
    b.extend(headers(1, &[("x-checksum", "abc")], true));
    let (_, out) = feed(&mut s, &mut rec, &b);
    assert_eq!(out, [open_window()]);
    assert_eq!(
        &rec.0[rec.0.len() - 2..],
        ["1 x-checksum: abc", "1 trailers"]
    );
    // A second block without END_STREAM, or with a pseudo-header.
    finish(&mut s, 1);
    let (_, out) = feed(
        &mut s,
        &mut rec,
        &[headers(3, &GET, false), headers(3, &[("x", "y")], false)].concat(),
    );
    assert_eq!(out, [rst(3, ErrorCode::Protocol)]);
    s.done(3);
    let (_, out) = feed(
        &mut s,
        &mut rec,
        &[headers(5, &GET, false), headers(5, &[(":path", "/")], true)].concat(),
    );
    assert_eq!(out, [rst(5, ErrorCode::Protocol)]);
}

#[test]
fn stream_states_and_identifiers() {
    use ErrorCode::*;
    let code = |b: Vec<u8>| {
        let (mut s, mut rec) = open();
        let (r, out) = feed(&mut s, &mut rec, &b);
        (
            r.is_err(),
            goaway_code(&out),
            out.iter()
                .find(|f| f.0 == kind::RST_STREAM)
                .map(|f| f.3[3] as u32),
        )
    };
    // DATA, RST_STREAM and WINDOW_UPDATE on an idle stream.
    assert_eq!(
        code(data(1, b"x", false)),
        (true, Some(Protocol as u32), None)
    );
    let mut b = Vec::new();
    put_rst(&mut b, 1, Cancel);
    assert_eq!(code(b), (true, Some(Protocol as u32), None));
    let mut b = Vec::new();
    frame::put_window_update(&mut b, 1, 5);
    assert_eq!(code(b), (true, Some(Protocol as u32), None));
    // An even identifier, and one going backwards.
    assert_eq!(
        code(headers(2, &GET, true)),
        (true, Some(Protocol as u32), None)
    );
    assert_eq!(
        code([headers(5, &GET, true), headers(3, &GET, true)].concat()),
        (true, Some(Protocol as u32), None)
    );
    // Half-closed (remote): DATA and HEADERS are STREAM_CLOSED stream errors.
    assert_eq!(
        code([headers(1, &GET, true), data(1, b"x", false)].concat()),
        (false, None, Some(StreamClosed as u32))
    );
    assert_eq!(
        code([headers(1, &GET, true), headers(1, &GET, true)].concat()),
        (false, None, Some(StreamClosed as u32))
    );
    // A client's PUSH_PROMISE; a CONTINUATION without a block.
    let mut b = Vec::new();
    put_head(&mut b, 4, kind::PUSH_PROMISE, 4, 1);
    b.extend_from_slice(&[0, 0, 0, 2]);
    assert_eq!(code(b), (true, Some(Protocol as u32), None));
    let mut b = Vec::new();
    put_head(&mut b, 0, kind::CONTINUATION, 4, 1);
    assert_eq!(code(b), (true, Some(Protocol as u32), None));
    // A closed stream (ended normally): HEADERS is a connection error.
    let (mut s, mut rec) = open();
    ok(&mut s, &mut rec, &headers(1, &GET, true));
    s.send_head(1, 204, [], true);
    s.done(1);
    s.output().clear();
    fails(
        &mut s,
        &mut rec,
        &headers(1, &GET, true),
        ErrorCode::StreamClosed,
    );
    // DATA on a stream the client reset: STREAM_CLOSED (RFC 9113 §5.1);
    // on one weir reset, dropped (the client sent it before it knew).
    let (mut s, mut rec) = open();
    let mut b = headers(1, &GET, false);
    put_rst(&mut b, 1, Cancel);
    b.extend(data(1, b"late", false));
    let out = ok(&mut s, &mut rec, &b);
    assert_eq!(out, [open_window(), rst(1, StreamClosed)]);
    assert_eq!(rec.0.last().map(String::as_str), Some("1 reset 8"));
    ok(&mut s, &mut rec, &headers(3, &GET, false));
    s.reset(3, Cancel);
    s.done(3);
    s.output().clear();
    assert!(ok(&mut s, &mut rec, &data(3, b"late", false)).is_empty());
}

#[test]
fn header_blocks_across_continuation_frames() {
    let (mut s, mut rec) = open();
    let blk = block(&GET);
    let mut b = Vec::new();
    put_head(&mut b, 10, kind::HEADERS, flag::END_STREAM, 1);
    b.extend_from_slice(&blk[..10]);
    put_head(
        &mut b,
        blk.len() - 10,
        kind::CONTINUATION,
        flag::END_HEADERS,
        1,
    );
    b.extend_from_slice(&blk[10..]);
    let (_, out) = feed(&mut s, &mut rec, &b);
    assert!(out.is_empty());
    assert_eq!(rec.0.last().map(String::as_str), Some("1 head end=true"));
    // Another frame in the middle of a block ends the connection.
    let (mut s, mut rec) = open();
    let mut b = Vec::new();
    put_head(&mut b, 10, kind::HEADERS, 0, 1);
    b.extend_from_slice(&blk[..10]);
    put_ping(&mut b, false, [0; 8]);
    fails(&mut s, &mut rec, &b, ErrorCode::Protocol);
    // A block over the limit (CONTINUATION flood).
    let (mut s, mut rec) = open();
    let mut b = Vec::new();
    put_head(&mut b, 10, kind::HEADERS, 0, 1);
    b.extend_from_slice(&blk[..10]);
    for _ in 0..200 {
        put_head(&mut b, 10, kind::CONTINUATION, 0, 1);
        b.extend_from_slice(&[0x82; 10]);
    }
    fails(&mut s, &mut rec, &b, ErrorCode::EnhanceYourCalm);
}

#[test]
fn concurrency_counts_streams_until_the_user_is_done() {
    let (mut s, mut rec) = open();
    let (_, out) = feed(
        &mut s,
        &mut rec,
        &[
            headers(1, &GET, true),
            headers(3, &GET, true),
            headers(5, &GET, true),
        ]
        .concat(),
    );
    assert_eq!(out, [rst(5, ErrorCode::RefusedStream)]);
    // The client resets stream 1: weir still works on it, so it counts.
    let mut b = Vec::new();
    put_rst(&mut b, 1, ErrorCode::Cancel);
    b.extend(headers(7, &GET, true));
    let (_, out) = feed(&mut s, &mut rec, &b);
    assert_eq!(out, [rst(7, ErrorCode::RefusedStream)]);
    s.done(1);
    let (_, out) = feed(&mut s, &mut rec, &headers(9, &GET, true));
    assert!(out.is_empty());
    // A client that keeps opening streams over the limit is told to calm down.
    let mut b = Vec::new();
    for i in 0..250u32 {
        b.extend(headers(11 + 2 * i, &GET, true));
    }
    fails(&mut s, &mut rec, &b, ErrorCode::EnhanceYourCalm);
}

#[test]
fn ping_settings_and_send_windows() {
    let (mut s, mut rec) = open();
    let mut b = Vec::new();
    put_ping(&mut b, false, *b"pingpong");
    let (_, out) = feed(&mut s, &mut rec, &b);
    assert_eq!(out, [(kind::PING, flag::ACK, 0, b"pingpong".to_vec())]);
    ok(&mut s, &mut rec, &headers(1, &GET, true));
    s.send_head(1, 200, [], false);
    s.output().clear();
    // The peer's initial window is 65,535: that much, then nothing.
    let big = vec![b'd'; 70_000];
    assert_eq!(s.send_data(1, &big, true), 65_535);
    assert_eq!(s.send_data(1, &big, true), 0);
    let out = frames(&s.output().split_off(0));
    assert_eq!(out.len(), 4, "16 KiB frames");
    assert!(out.iter().all(|f| f.1 & flag::END_STREAM == 0));
    // A larger initial window opens the stream, not the connection.
    let mut b = Vec::new();
    put_settings(&mut b, &[(setting::INITIAL_WINDOW_SIZE, 100_000)]);
    let (_, out) = feed(&mut s, &mut rec, &b);
    assert_eq!((out[0].0, out[0].1), (kind::SETTINGS, flag::ACK));
    assert_eq!(rec.0.last().map(String::as_str), Some("1 window"));
    assert_eq!(s.send_capacity(1), 0);
    let mut b = Vec::new();
    frame::put_window_update(&mut b, 0, 10_000);
    ok(&mut s, &mut rec, &b);
    assert_eq!(s.send_capacity(1), 10_000);
    assert_eq!(s.send_data(1, &big[..4465], true), 4465);
    assert_eq!(s.send_capacity(1), 0);
    // Overflowing the connection's window ends the connection.
    let mut b = Vec::new();
    frame::put_window_update(&mut b, 0, MAX_WINDOW);
    fails(&mut s, &mut rec, &b, ErrorCode::FlowControl);
}

#[test]
fn hpack_errors_and_self_dependencies() {
    let (mut s, mut rec) = open();
    let mut b = Vec::new();
    put_headers(&mut b, 1, &[0x80], true, 16_384);
    fails(&mut s, &mut rec, &b, ErrorCode::Compression);
    // A HEADERS depending on itself is reset, and its block still indexes
    // into the table: the next request refers to that entry.
    let (mut s, mut rec) = open();
    let mut blk = vec![0x82, 0x87, 0x84];
    blk.extend_from_slice(&[0x41, 1, b'h']); // :authority: h, indexed (62)
    let mut b = Vec::new();
    put_head(
        &mut b,
        5 + blk.len(),
        kind::HEADERS,
        flag::END_HEADERS | flag::END_STREAM | flag::PRIORITY,
        1,
    );
    b.extend_from_slice(&[0, 0, 0, 1, 16]);
    b.extend_from_slice(&blk);
    put_headers(&mut b, 3, &[0x82, 0x87, 0x84, 0xbe], true, 16_384);
    let (r, out) = feed(&mut s, &mut rec, &b);
    assert!(r.is_ok());
    assert_eq!(out, [rst(1, ErrorCode::Protocol)]);
    assert!(
        rec.0.contains(&"3 :authority: h".to_string()),
        "{:?}",
        rec.0
    );
    assert_eq!(rec.0.last().map(String::as_str), Some("3 head end=true"));
}

#[test]
fn bytes_in_any_pieces_give_the_same_events() {
    let mut b = PREFACE.to_vec();
    put_settings(&mut b, &[(setting::MAX_FRAME_SIZE, 20_000)]);
    let mut post = GET.to_vec();
    post.push(("content-length", "4"));
    b.extend(headers(1, &post, false));
    b.extend(data(1, b"ab", false));
    b.extend(data(1, b"cd", true));
    put_ping(&mut b, false, [7; 8]);
    let whole = {
        let mut s = Server::new(cfg());
        let mut rec = Rec::default();
        assert_eq!(s.feed(&b, &mut rec), Ok(b.len()));
        (rec.0, s.output().clone())
    };
    let mut s = Server::new(cfg());
    let mut rec = Rec::default();
    let mut pending: Vec<u8> = Vec::new();
    for &byte in &b {
        pending.push(byte);
        let n = s.feed(&pending, &mut rec).unwrap();
        pending.drain(..n);
    }
    assert!(pending.is_empty());
    assert_eq!((rec.0, s.output().clone()), whole);
    // A wrong preface is refused at its first wrong byte.
    let mut s = Server::new(cfg());
    assert!(s.feed(b"GET / HTTP/1.1\r\n", &mut Rec::default()).is_err());
}

/// Random frames (a fixed-seed generator, with plausible headers) never
/// panic the connection, and what it answers always parses as frames.
#[test]
fn random_frames_never_panic() {
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for _ in 0..2_000 {
        let mut s = Server::new(cfg());
        let mut rec = Rec::default();
        let mut b = PREFACE.to_vec();
        for _ in 0..8 {
            let len = (next() % 24) as usize;
            let kind = (next() % 11) as u8;
            let stream = (next() % 6) as u32;
            put_head(&mut b, len, kind, next() as u8, stream);
            b.extend((0..len).map(|_| next() as u8));
        }
        let r = s.feed(&b, &mut rec);
        for id in [1, 3, 5] {
            s.send_head(id, 200, [], false);
            s.send_data(id, b"x", true);
            s.done(id);
        }
        let out = s.output().split_off(0);
        let mut pos = 0;
        while pos < out.len() {
            let (_, n) = frame::parse(&out[pos..], frame::MAX_MAX_FRAME)
                .expect("weir's own frames parse")
                .expect("whole frames");
            pos += n;
        }
        let _ = r;
    }
}

/// Response DATA waiting in the output is no flood: only what one input
/// makes weir answer counts.
#[test]
fn queued_data_is_not_counted_as_a_flood() {
    let (mut s, mut rec) = open();
    let mut b = Vec::new();
    put_settings(&mut b, &[(setting::INITIAL_WINDOW_SIZE, 1 << 20)]);
    frame::put_window_update(&mut b, 0, 1 << 20);
    b.extend(headers(1, &GET, true));
    ok(&mut s, &mut rec, &b);
    s.send_head(1, 200, [], false);
    assert_eq!(s.send_data(1, &vec![b'd'; 200_000], false), 200_000);
    let mut b = Vec::new();
    put_ping(&mut b, false, [1; 8]);
    assert!(s.feed(&b, &mut rec).is_ok());
    // A flood within one input is.
    let mut b = Vec::new();
    for _ in 0..5000 {
        put_ping(&mut b, false, [2; 8]);
    }
    fails(&mut s, &mut rec, &b, ErrorCode::EnhanceYourCalm);
}

/// The WINDOW_UPDATE that opens the connection's window at the first DATA.
fn open_window() -> (u8, u8, u32, Vec<u8>) {
    let grow = MAX_WINDOW - 65_535;
    (kind::WINDOW_UPDATE, 0, 0, grow.to_be_bytes().to_vec())
}
