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
