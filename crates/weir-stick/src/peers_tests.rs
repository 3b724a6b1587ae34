use crate::data::{parse_store, split_store, Schema, Value};
use crate::freq::FreqCtr;
use crate::key::{Key, KeyType};
use crate::peers::*;

fn ms(s: &str) -> Option<u32> {
    s.strip_suffix('s')
        .and_then(|n| n.parse::<u32>().ok())
        .map(|n| n * 1000)
}

fn schema(store: &str) -> Schema {
    let specs: Vec<_> = split_store(store)
        .into_iter()
        .map(|s| parse_store(s, &ms).unwrap())
        .collect();
    Schema::new(&specs).unwrap()
}

#[test]
fn integers_encode_as_haproxy() {
    for (v, bytes) in [
        (0u64, vec![0u8]),
        (239, vec![239]),
        (300, vec![252, 3]),
        (10_000, vec![0xf0, 0xe2, 0x03]),
        (30_000, vec![0xf0, 0xc4, 0x0d]),
        (4_194_853, vec![0xf5, 0x93, 0xff, 0x0e]),
    ] {
        let mut out = Vec::new();
        encode_int(v, &mut out);
        assert_eq!(out, bytes, "{v}");
        assert_eq!(decode_int(&bytes).unwrap(), Some((v, bytes.len())));
        for cut in 0..bytes.len() {
            assert_eq!(decode_int(&bytes[..cut]).unwrap(), None, "{v} cut at {cut}");
        }
    }
    for v in [1u64 << 32, u64::from(u32::MAX), 123_456_789] {
        let mut out = Vec::new();
        encode_int(v, &mut out);
        assert_eq!(decode_int(&out).unwrap(), Some((v, out.len())));
    }
}

/// What haproxy 2.6 sent for `table mytable type string len 8 size 10
/// expire 30s store server_id,gpc0,conn_rate(10s),http_req_cnt,gpt(2)`
/// in a peers section, and for an entry made by `set table … data.gpc0 3
/// data.http_req_cnt 2`.
const HAPROXY_DEFINE: &[u8] =
    b"\n\x82\x19\x01\x08/mytable\x06\t\xf5\x93\xff\x0e\xf0\xc4\r\x05\xf0\xe2\x03\x16\x02";
const HAPROXY_UPDATE: &[u8] =
    b"\n\x80\x14\x00\x00\x00\x01\x03abc\x00\x03\xf8\xc5\xf7\xc1\x0b\x00\x00\x02\x00\x00";

#[test]
fn table_definitions_as_haproxy_writes_them() {
    let s = schema("server_id,gpc0,conn_rate(10s),http_req_cnt,gpt(2)");
    let def = TableDef::of(1, "/mytable", KeyType::String(8), &s, Some(30_000));
    let mut out = Vec::new();
    frame(msg::TABLE, msg::DEFINE, &def.encode(&s), &mut out);
    assert_eq!(out, HAPROXY_DEFINE);
    let (m, n) = Message::parse(HAPROXY_DEFINE).unwrap().unwrap();
    assert_eq!(
        (m.class, m.kind, n),
        (msg::TABLE, msg::DEFINE, HAPROXY_DEFINE.len())
    );
    assert_eq!(TableDef::decode(m.data).unwrap(), def);
    for cut in 0..HAPROXY_DEFINE.len() {
        assert_eq!(Message::parse(&HAPROXY_DEFINE[..cut]).unwrap(), None);
    }
}

#[test]
fn updates_both_ways() {
    let s = schema("server_id,gpc0,conn_rate(10s),http_req_cnt,gpt(2)");
    let key = KeyType::String(8);
    let def = TableDef::of(1, "/mytable", key, &s, Some(30_000));
    let (m, _) = Message::parse(HAPROXY_UPDATE).unwrap().unwrap();
    let u = decode_update(m.kind, m.data, &def, key, &mut Dict::default()).unwrap();
    assert_eq!(u.id, Some(1));
    assert_eq!(u.key, Key::string(key, b"abc"));
    assert_eq!(u.values.len(), 6);
    assert_eq!(u.values[1], (crate::DataType::Gpc0, 0, Sent::Count(3)));
    assert_eq!(
        u.values[2],
        (
            crate::DataType::ConnRate,
            0,
            Sent::Freq {
                elapsed: 420_201_800,
                curr: 0,
                prev: 0
            }
        )
    );
    // And back: the same bytes for the same values at the same time.
    let mut vals = s.empty();
    vals[1] = Value::Count(3);
    vals[3] = Value::Count(2);
    let now = 420_201_800;
    vals[2] = Value::Freq(FreqCtr::from_parts(0, 0, 0));
    let data = encode_update(Some(1), &u.key, &def, &s, &vals, now, &mut Dict::default());
    let mut out = Vec::new();
    frame(msg::TABLE, msg::UPDATE, &data, &mut out);
    assert_eq!(out, HAPROXY_UPDATE);
}

#[test]
fn server_keys_go_once_then_by_number() {
    let s = schema("server_id,server_key");
    let key = KeyType::Ip;
    let def = TableDef::of(2, "t2", key, &s, None);
    let mut vals = s.empty();
    vals[1] = Value::Text(Some("srv1".into()));
    let k = Key::V4([127, 0, 0, 1].into());
    let (mut tx, mut rx) = (Dict::default(), Dict::default());
    let first = encode_update(Some(5), &k, &def, &s, &vals, 0, &mut tx);
    let again = encode_update(None, &k, &def, &s, &vals, 0, &mut tx);
    assert!(again.len() < first.len());
    for (kind, d) in [(msg::UPDATE, &first), (msg::INC_UPDATE, &again)] {
        let u = decode_update(kind, d, &def, key, &mut rx).unwrap();
        assert_eq!(u.values[1].2, Sent::Text(Some("srv1".into())));
    }
    assert!(decode_update(msg::UPDATE, &first[..first.len() - 1], &def, key, &mut rx).is_err());
}

#[test]
fn hellos_parse_and_refuse() {
    let h = Hello {
        remote: "A".into(),
        local: "B".into(),
        pid: 1234,
    };
    assert_eq!(h.bytes(), b"HAProxyS 2.1\nA\nB 1234 0\n");
    let b = h.bytes();
    assert_eq!(Hello::parse(&b), Ok(Some((h, b.len()))));
    assert_eq!(Hello::parse(&b[..b.len() - 1]), Ok(None));
    assert_eq!(Hello::parse(b"HTTP/1.1 200\nA\nB\n"), Err(501));
    assert_eq!(Hello::parse(b"HAProxyS 3.0\nA\nB 1 0\n"), Err(502));
}

#[test]
fn acks_read_back_and_short_ones_are_errors() {
    let b = encode_ack(300, 0x0102_0304);
    assert_eq!(decode_ack(&b).unwrap(), (300, 0x0102_0304));
    assert!(decode_ack(&b[..b.len() - 1]).is_err());
    assert!(decode_ack(&[]).is_err());
}
