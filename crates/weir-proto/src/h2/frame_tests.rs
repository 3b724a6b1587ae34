use super::*;

fn one(b: &[u8]) -> Frame<'_> {
    let (f, used) = parse(b, MIN_MAX_FRAME).unwrap().unwrap();
    assert_eq!(used, b.len());
    f
}

fn err(b: &[u8]) -> (ErrorCode, u32) {
    let e = parse(b, MIN_MAX_FRAME).unwrap_err();
    (e.code, e.stream)
}

fn raw(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    put_head(&mut out, payload.len(), kind, flags, stream);
    out.extend_from_slice(payload);
    out
}

#[test]
fn written_frames_parse_back() {
    let mut b = Vec::new();
    put_settings(
        &mut b,
        &[
            (setting::MAX_CONCURRENT_STREAMS, 100),
            (setting::INITIAL_WINDOW_SIZE, 65535),
        ],
    );
    match one(&b) {
        Frame::Settings { ack: false, params } => {
            assert_eq!(params.collect::<Vec<_>>(), vec![(3, 100), (4, 65535)]);
        }
        f => panic!("{f:?}"),
    }
    let mut b = Vec::new();
    put_settings_ack(&mut b);
    assert!(matches!(one(&b), Frame::Settings { ack: true, .. }));
    let mut b = Vec::new();
    put_ping(&mut b, true, *b"12345678");
    assert_eq!(
        one(&b),
        Frame::Ping {
            ack: true,
            data: *b"12345678"
        }
    );
    let mut b = Vec::new();
    put_goaway(&mut b, 7, ErrorCode::EnhanceYourCalm, b"calm");
    assert_eq!(
        one(&b),
        Frame::GoAway {
            last: 7,
            code: 0xb,
            debug: b"calm"
        }
    );
    let mut b = Vec::new();
    put_rst(&mut b, 5, ErrorCode::Cancel);
    assert_eq!(one(&b), Frame::RstStream { stream: 5, code: 8 });
    let mut b = Vec::new();
    put_window_update(&mut b, 0, 1 << 20);
    assert_eq!(
        one(&b),
        Frame::WindowUpdate {
            stream: 0,
            increment: 1 << 20
        }
    );
    let mut b = Vec::new();
    put_data(&mut b, 3, b"hello", true);
    assert_eq!(
        one(&b),
        Frame::Data {
            stream: 3,
            end_stream: true,
            data: b"hello",
            flow_len: 5
        }
    );
}

#[test]
fn every_prefix_needs_more() {
    let mut b = Vec::new();
    put_data(&mut b, 1, b"some body bytes", false);
    put_ping(&mut b, false, [0; 8]);
    for n in 0..24 {
        assert_eq!(parse(&b[..n], MIN_MAX_FRAME), Ok(None), "prefix {n}");
    }
    let (f, used) = parse(&b, MIN_MAX_FRAME).unwrap().unwrap();
    assert!(matches!(
        f,
        Frame::Data {
            stream: 1,
            end_stream: false,
            ..
        }
    ));
    assert_eq!(used, 24);
    assert!(matches!(one(&b[used..]), Frame::Ping { ack: false, .. }));
}

#[test]
fn padding_and_priority_are_stripped() {
    // DATA, padded: pad length 3, "abc", 3 bytes of padding.
    let b = raw(kind::DATA, flag::PADDED, 1, b"\x03abc\0\0\0");
    assert_eq!(
        one(&b),
        Frame::Data {
            stream: 1,
            end_stream: false,
            data: b"abc",
            flow_len: 7
        }
    );
    // HEADERS, padded and with priority (exclusive on stream 0, weight 16).
    let b = raw(
        kind::HEADERS,
        flag::PADDED | flag::PRIORITY | flag::END_HEADERS | flag::END_STREAM,
        3,
        b"\x02\x80\0\0\0\x10\x82\0\0",
    );
    assert_eq!(
        one(&b),
        Frame::Headers {
            stream: 3,
            end_stream: true,
            end_headers: true,
            priority: Some(Priority {
                dependency: 0,
                exclusive: true,
                weight: 16
            }),
            block: b"\x82",
        }
    );
}

#[test]
fn broken_frames_get_their_error_and_scope() {
    use ErrorCode::*;
    let mut big = raw(kind::DATA, 0, 1, &[0; 100]);
    assert_eq!(parse(&big, 50).unwrap_err().code, FrameSize);
    big.truncate(20);
    assert_eq!(err(&raw(kind::DATA, 0, 0, b"x")), (Protocol, 0));
    assert_eq!(err(&raw(kind::HEADERS, 4, 0, b"\x82")), (Protocol, 0));
    assert_eq!(
        err(&raw(kind::DATA, flag::PADDED, 1, b"\x05ab")),
        (Protocol, 0)
    );
    assert_eq!(err(&raw(kind::DATA, flag::PADDED, 1, b"")), (FrameSize, 0));
    // PRIORITY: a wrong length and a self-dependency end only the stream.
    assert_eq!(
        err(&raw(kind::PRIORITY, 0, 3, b"\0\0\0\x01")),
        (FrameSize, 3)
    );
    assert_eq!(
        err(&raw(kind::PRIORITY, 0, 3, b"\0\0\0\x03\x10")),
        (Protocol, 3)
    );
    // On HEADERS, a self-dependency is left to the caller (after the block).
    assert!(matches!(
        one(&raw(
            kind::HEADERS,
            flag::PRIORITY,
            3,
            b"\0\0\0\x03\x10\x82"
        )),
        Frame::Headers {
            priority: Some(Priority { dependency: 3, .. }),
            ..
        }
    ));
    assert_eq!(err(&raw(kind::RST_STREAM, 0, 3, b"\0\0\0")), (FrameSize, 0));
    assert_eq!(
        err(&raw(kind::RST_STREAM, 0, 0, b"\0\0\0\0")),
        (Protocol, 0)
    );
    assert_eq!(
        err(&raw(kind::SETTINGS, 0, 0, b"\0\x03\0\0")),
        (FrameSize, 0)
    );
    assert_eq!(
        err(&raw(kind::SETTINGS, flag::ACK, 0, b"\0\x03\0\0\0\x01")),
        (FrameSize, 0)
    );
    assert_eq!(err(&raw(kind::SETTINGS, 0, 1, b"")), (Protocol, 0));
    assert_eq!(
        err(&raw(kind::SETTINGS, 0, 0, b"\0\x02\0\0\0\x02")),
        (Protocol, 0)
    );
    assert_eq!(
        err(&raw(kind::SETTINGS, 0, 0, b"\0\x04\x80\0\0\0")),
        (FlowControl, 0)
    );
    assert_eq!(
        err(&raw(kind::SETTINGS, 0, 0, b"\0\x05\0\0\x10\0")),
        (Protocol, 0)
    );
    assert_eq!(
        err(&raw(kind::SETTINGS, 0, 0, b"\0\x05\x01\0\0\0")),
        (Protocol, 0)
    );
    assert_eq!(err(&raw(kind::PING, 0, 0, b"1234567")), (FrameSize, 0));
    assert_eq!(err(&raw(kind::PING, 0, 1, b"12345678")), (Protocol, 0));
    assert_eq!(err(&raw(kind::GOAWAY, 0, 0, b"1234567")), (FrameSize, 0));
    assert_eq!(
        err(&raw(kind::WINDOW_UPDATE, 0, 0, b"\0\0\0\0")),
        (Protocol, 0)
    );
    assert_eq!(
        err(&raw(kind::WINDOW_UPDATE, 0, 3, b"\0\0\0\0")),
        (Protocol, 3)
    );
    assert_eq!(
        err(&raw(kind::WINDOW_UPDATE, 0, 3, b"\0\0\x01")),
        (FrameSize, 0)
    );
    assert_eq!(err(&raw(kind::CONTINUATION, 0, 0, b"")), (Protocol, 0));
    // Unknown types are parsed (to be ignored), whatever their stream.
    assert_eq!(
        one(&raw(0x42, 0xff, 0, b"xyz")),
        Frame::Unknown {
            kind: 0x42,
            stream: 0
        }
    );
    // Settings this version does not know are accepted.
    assert!(matches!(
        one(&raw(kind::SETTINGS, 0, 0, b"\x00\x99\0\0\0\x01")),
        Frame::Settings { .. }
    ));
}

#[test]
fn large_header_blocks_are_split_into_continuations() {
    let block: Vec<u8> = (0..40u8).collect();
    let mut b = Vec::new();
    put_headers(&mut b, 1, &block, true, 16);
    let mut got = Vec::new();
    let mut pos = 0;
    let mut frames = Vec::new();
    while let Some((f, used)) = parse(&b[pos..], MIN_MAX_FRAME).unwrap() {
        pos += used;
        match f {
            Frame::Headers {
                end_stream,
                end_headers,
                block,
                ..
            } => {
                frames.push(("HEADERS", end_stream, end_headers));
                got.extend_from_slice(block);
            }
            Frame::Continuation {
                end_headers, block, ..
            } => {
                frames.push(("CONTINUATION", false, end_headers));
                got.extend_from_slice(block);
            }
            f => panic!("{f:?}"),
        }
    }
    assert_eq!(got, block);
    assert_eq!(
        frames,
        vec![
            ("HEADERS", true, false),
            ("CONTINUATION", false, false),
            ("CONTINUATION", false, true)
        ]
    );
    let mut b = Vec::new();
    put_headers(&mut b, 1, b"\x82", false, 16);
    assert!(matches!(
        one(&b),
        Frame::Headers {
            end_headers: true,
            end_stream: false,
            ..
        }
    ));
}

/// Random bytes (a fixed-seed generator) never panic the frame parser nor
/// the HPACK decoder, and a frame that parses has no parsing strict prefix.
#[test]
fn random_input_never_panics() {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for round in 0..20_000 {
        let len = (next() % 64) as usize;
        let mut b: Vec<u8> = (0..len).map(|_| next() as u8).collect();
        if round % 2 == 0 && b.len() >= HEAD_LEN {
            // A plausible header: a small length and a known type.
            b[0] = 0;
            b[1] = 0;
            b[2] = (len - HEAD_LEN) as u8;
            b[3] %= 10;
        }
        if let Ok(Some((_, used))) = parse(&b, MIN_MAX_FRAME) {
            for n in 0..used {
                assert_eq!(parse(&b[..n], MIN_MAX_FRAME), Ok(None));
            }
        }
        let mut d = crate::h2::hpack::Decoder::new(256);
        let _ = d.decode(&b, |_: &[u8], _: &[u8]| {
            Ok::<(), crate::h2::hpack::HpackError>(())
        });
        assert!(d.table_size() <= 256);
    }
}
