//! Unit tests of the SPOP codec: the frames of haproxy's spop-check
//! reg-test.

use super::*;

fn hex(s: &str) -> Vec<u8> {
    let s: String = s.split_whitespace().collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()) // ok: fixed input
        .collect()
}

#[test]
fn varints_round_trip() {
    for v in [
        0u64,
        1,
        239,
        240,
        2287,
        2288,
        16380,
        1 << 20,
        u64::from(u32::MAX),
    ] {
        let mut b = Vec::new();
        put_varint(&mut b, v);
        assert_eq!(varint(&b), Some((v, b.len())), "{v}");
    }
    let mut b = Vec::new();
    put_varint(&mut b, 16380);
    assert_eq!(b, [0xfc, 0xf0, 0x06]);
}

#[test]
fn hello_is_82_bytes() {
    let h = healthcheck_hello();
    assert_eq!(h.len(), 82);
    assert_eq!(&h[..5], &[0, 0, 0, 0x4e, 1]);
}

#[test]
fn agent_hellos() {
    let ok = hex("00000036 65 00000001 0000 0776657273696F6E 0803322E30 0E6D61782D6672616D652D73697A65 03FCF006 0C6361706162696C6974696573 0800");
    assert_eq!(agent_hello(&ok), Ok(Some(ok.len())));
    assert_eq!(agent_hello(&ok[..20]), Ok(None));
    assert_eq!(agent_hello(&hex("00000000")), Err(HelloError::Invalid));
    assert_eq!(agent_hello(b"other\r\n"), Err(HelloError::Invalid));
    assert_eq!(
        agent_hello(&hex("00000007 65 00000000 0000")),
        Err(HelloError::Fragmented)
    );
    let v1 = hex("00000014 65 00000001 0000 0776657273696F6E 0803312E30");
    assert_eq!(agent_hello(&v1), Err(HelloError::BadVersion));
    let no_size = hex("00000014 65 00000001 0000 0776657273696F6E 0803322E30");
    assert_eq!(agent_hello(&no_size), Err(HelloError::NoFrameSize));
}

#[test]
fn notify_frames() {
    let f = notify(
        5,
        1,
        &[(
            "m",
            vec![
                ("ip", Typed::Ipv4([127, 0, 0, 1])),
                ("", Typed::Str(b"x".to_vec())),
            ],
        )],
        MAX_FRAME,
    )
    .unwrap();
    assert_eq!(
        f,
        hex("00000016 03 00000001 05 01 016D 02 026970 067F000001 00 080178")
    );
    assert!(notify(1, 1, &[("m", vec![("", Typed::Bin(vec![0; 300]))])], 256).is_none());
}

#[test]
fn ack_frames() {
    // set-var txn "score" int32 7, unset-var sess "x", an unknown action
    // (a scope and a name are not typed values; haproxy reads them so)
    let ack =
        hex("0000001c 67 00000001 05 01 01 03 02 0573636F7265 0207 02 02 01 0178 09 01 080161");
    let (f, n) = agent_frame(&ack, MAX_FRAME).unwrap().unwrap();
    assert_eq!(n, ack.len());
    assert_eq!(
        f,
        AgentFrame::Ack {
            sid: 5,
            fid: 1,
            actions: vec![
                Action::SetVar(Scope::Txn, b"score".to_vec(), Typed::Int32(7)),
                Action::UnsetVar(Scope::Sess, b"x".to_vec()),
            ]
        }
    );
    assert_eq!(agent_frame(&ack[..10], MAX_FRAME), Ok(None));
    assert_eq!(agent_frame(&ack, 16), Err(FrameError::TooBig));
    let frag = hex("00000007 67 00000000 05 01");
    assert_eq!(agent_frame(&frag, MAX_FRAME), Err(FrameError::Fragmented));
    let bye =
        hex("00000020 66 00000001 00 00 0B7374617475732D636F6465 0302 076D657373616765 080178");
    assert_eq!(
        agent_frame(&bye, MAX_FRAME).unwrap().unwrap().0,
        AgentFrame::Disconnect(2, "x".into())
    );
}
