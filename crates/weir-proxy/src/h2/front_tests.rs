use super::*;
use weir_proto::h2::frame::{self, PREFACE};
use weir_proto::h2::hpack::Encoder;
use weir_proto::h2::server::Config;

fn front() -> Front {
    let cfg = Config {
        max_concurrent_streams: 10,
        initial_window: 65_535,
        max_frame: 16_384,
        header_table_size: 4096,
        max_header_block: 65_536,
        extended_connect: true,
    };
    Front::new(
        Server::new(cfg),
        4 * 65_535 + 64 * 1024,
        weir_proto::h1::Limits::default(),
    )
}

/// A POST on stream 1 without `content-length` (its body goes chunked).
fn post() -> Vec<u8> {
    let mut b = PREFACE.to_vec();
    frame::put_settings(&mut b, &[]);
    let e = Encoder::default();
    let mut blk = Vec::new();
    for (n, v) in [
        (":method", "POST"),
        (":scheme", "http"),
        (":path", "/up"),
        (":authority", "a"),
    ] {
        e.field(&mut blk, n.as_bytes(), v.as_bytes());
    }
    frame::put_headers(&mut b, 1, &blk, false, 16_384);
    b
}

/// The RST_STREAM codes in the output.
fn resets(f: &Front) -> Vec<u32> {
    let out = f.lock().srv.output().split_off(0);
    let mut codes = Vec::new();
    let mut pos = 0;
    while let Ok(Some((fr, n))) = frame::parse(&out[pos..], frame::MAX_MAX_FRAME) {
        if let frame::Frame::RstStream { code, .. } = fr {
            codes.push(code);
        }
        pos += n;
    }
    codes
}

#[test]
fn honest_body_frames_fit_and_one_byte_frames_do_not() {
    // 65,535 bytes in 16 KiB frames: within the window and the cap.
    let f = front();
    let mut b = post();
    for chunk in vec![b'x'; 65_535].chunks(16_384) {
        frame::put_data(&mut b, 1, chunk, false);
    }
    let (used, fresh) = f.feed(&b).unwrap();
    assert_eq!((used, fresh.len()), (b.len(), 1));
    assert!(resets(&f).is_empty());
    // The same window in one-byte frames: chunk framing would store six
    // times the window; the stream is reset once over the cap instead.
    let f = front();
    let mut b = post();
    for _ in 0..65_535 {
        frame::put_data(&mut b, 1, b"x", false);
    }
    f.feed(&b).unwrap();
    assert_eq!(resets(&f), [frame::ErrorCode::EnhanceYourCalm as u32]);
    let st = f.lock();
    let s = st
        .slots
        .iter()
        .find(|s| s.id == 1)
        .expect("the stream's slot");
    assert!(s.broken);
    assert!(s.body.len() <= 4 * 65_535 + 64 * 1024 + 16);
}
