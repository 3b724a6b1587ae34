//! Unit tests of `proxy_protocol.rs`.

use super::*;

fn v4(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

/// Every strict prefix of a valid header asks for more bytes.
fn every_prefix(bytes: &[u8]) {
    for n in 0..bytes.len() {
        assert_eq!(parse(&bytes[..n]), Ok(None), "prefix {n} of {bytes:?}");
    }
}

#[test]
fn v1_round_trip_and_prefixes() {
    let (s, d) = (v4("192.168.0.1:56324"), v4("10.0.0.2:443"));
    let mut bytes = encode_v1(s, d);
    assert_eq!(bytes, b"PROXY TCP4 192.168.0.1 10.0.0.2 56324 443\r\n");
    every_prefix(&bytes);
    let n = bytes.len();
    bytes.extend_from_slice(b"GET / HTTP/1.0\r\n");
    assert_eq!(
        parse(&bytes),
        Ok(Some((ProxyHeader::Inet { src: s, dst: d }, n)))
    );
    let (s6, d6) = (
        "[2001:db8::1]:1000".parse().unwrap(),
        "[::1]:80".parse().unwrap(),
    );
    let b6 = encode_v1(s6, d6);
    every_prefix(&b6);
    assert_eq!(
        parse(&b6),
        Ok(Some((ProxyHeader::Inet { src: s6, dst: d6 }, b6.len())))
    );
    assert_eq!(
        parse(b"PROXY UNKNOWN\r\n"),
        Ok(Some((ProxyHeader::Unknown, 15)))
    );
    assert_eq!(
        parse(b"PROXY UNKNOWN ffff::1 ::1 1 2\r\n")
            .unwrap()
            .unwrap()
            .0,
        ProxyHeader::Unknown
    );
}

#[test]
fn v1_rejects() {
    for bad in [
        &b"GET / HTTP/1.1\r\n"[..],
        b"PROXX TCP4",
        b"PROXY TCP5 1.1.1.1 2.2.2.2 1 2\r\n",
        b"PROXY TCP4 1.1.1.1 2.2.2.2 1\r\n",
        b"PROXY TCP4 1.1.1.1 2.2.2.2 1 65536\r\n",
        b"PROXY TCP4 1.1.1.1 2.2.2.2 01 2\r\n",
        b"PROXY TCP4 ::1 2.2.2.2 1 2\r\n",
        b"PROXY TCP6 1.1.1.1 ::1 1 2\r\n",
        b"PROXY TCP4 1.1.1.1 2.2.2.2 1 2\nGET / HTTP/1.1\r\n",
        b"PROXY TCP4 1.1.1.1 2.2.2.2 1 2\rX",
        b"PROXY TCP4  1.1.1.1 2.2.2.2 1 2\r\n",
    ] {
        assert!(parse(bad).is_err(), "{:?}", String::from_utf8_lossy(bad));
    }
    // A bare LF does not end the line: more may come (a CR never coming
    // makes it truncated, as HAProxy says).
    assert_eq!(parse(b"PROXY TCP4 1.1.1.1 2.2.2.2 1 2\n"), Ok(None));
    // The protocol is read before the fields (HAProxy's verdicts).
    assert_eq!(parse(b"PROXY garbage\r\n"), Err(ProxyError::UnknownProto));
    assert_eq!(
        parse(b"PROXY TCP5 1.1.1.1 2.2.2.2 1 2\r\n"),
        Err(ProxyError::UnknownProto)
    );
    let long = [b"PROXY ".as_slice(), &[b'A'; 200]].concat();
    assert_eq!(parse(&long), Err(ProxyError::TooLong));
}

#[test]
fn v2_round_trip_and_prefixes() {
    let (s, d) = (v4("1.2.3.4:5"), v4("6.7.8.9:10"));
    let mut bytes = encode_v2(s, d);
    assert_eq!(bytes.len(), 28);
    every_prefix(&bytes);
    bytes.push(0xff);
    assert_eq!(
        parse(&bytes),
        Ok(Some((ProxyHeader::Inet { src: s, dst: d }, 28)))
    );
    let (s6, d6) = (
        "[2001:db8::1]:1000".parse().unwrap(),
        "[::1]:80".parse().unwrap(),
    );
    let b6 = encode_v2(s6, d6);
    every_prefix(&b6);
    assert_eq!(
        parse(&b6),
        Ok(Some((ProxyHeader::Inet { src: s6, dst: d6 }, 52)))
    );
}

#[test]
fn v2_local_tlvs_and_rejects() {
    let mut local = V2_SIGNATURE.to_vec();
    local.extend_from_slice(&[0x20, 0x00, 0x00, 0x00]);
    assert_eq!(parse(&local), Ok(Some((ProxyHeader::Local, 16))));
    // IPv4 with a 3-byte TLV after the addresses.
    let mut tlv = encode_v2(v4("1.1.1.1:1"), v4("2.2.2.2:2"));
    tlv[15] = 15;
    tlv.extend_from_slice(&[0x04, 0x00, 0x00]);
    assert_eq!(parse(&tlv).unwrap().unwrap().1, 31);
    let mut bad = encode_v2(v4("1.1.1.1:1"), v4("2.2.2.2:2"));
    bad[12] = 0x31;
    assert!(parse(&bad).is_err());
    let mut bad = encode_v2(v4("1.1.1.1:1"), v4("2.2.2.2:2"));
    bad[12] = 0x22;
    assert!(parse(&bad).is_err());
    let mut short = encode_v2(v4("1.1.1.1:1"), v4("2.2.2.2:2"));
    short[15] = 4;
    short.truncate(20);
    assert!(parse(&short).is_err());
    assert_eq!(parse(b"\r\n\r\n\0\r\nQUIX\n"), Err(ProxyError::NotProxy));
}

/// The fuzz target's properties over deterministic random mutations of
/// valid headers (the `fuzz/` target explores further with libFuzzer).
#[test]
fn mutations_never_panic_and_round_trip() {
    let mut x: u64 = 0x1234_5678_9abc_def1;
    let mut rnd = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let seeds = [
        encode_v1(v4("1.2.3.4:5"), v4("6.7.8.9:10")),
        encode_v2(v4("1.2.3.4:5"), v4("6.7.8.9:10")),
        encode_v2("[::1]:1".parse().unwrap(), "[::2]:2".parse().unwrap()),
        b"PROXY UNKNOWN\r\n".to_vec(),
    ];
    for i in 0..200_000 {
        let mut d = seeds[i % seeds.len()].clone();
        for _ in 0..(rnd() % 4) {
            let pos = (rnd() as usize) % (d.len() + 1);
            match rnd() % 3 {
                0 if pos < d.len() => d[pos] = rnd() as u8,
                1 => d.insert(pos, rnd() as u8),
                _ if pos < d.len() => {
                    d.remove(pos);
                }
                _ => {}
            }
        }
        if let Ok(Some((h, used))) = parse(&d) {
            assert!(used <= d.len());
            if let ProxyHeader::Inet { src, dst } = h {
                assert_eq!(parse(&encode_v1(src, dst)).unwrap().unwrap().0, h);
                assert_eq!(parse(&encode_v2(src, dst)).unwrap().unwrap().0, h);
            }
        }
    }
}

#[test]
fn v2_tlvs_are_read_and_must_fill_the_header() {
    let (src, dst) = (v4("127.0.0.1:42"), v4("127.0.0.1:1337"));
    let mut t = tlv(TLV_AUTHORITY, b"example.com");
    t.extend(tlv(0xEE, b"skipped"));
    t.extend(tlv(TLV_UNIQUE_ID, b"12345"));
    let h = encode_v2_with(src, dst, &t);
    let (head, tlvs, used) = parse_with_tlvs(&h).unwrap().unwrap();
    assert_eq!(used, h.len());
    assert_eq!(head, ProxyHeader::Inet { src, dst });
    assert_eq!(tlvs.authority.as_deref(), Some(&b"example.com"[..]));
    assert_eq!(tlvs.unique_id.as_deref(), Some(&b"12345"[..]));
    // A TLV whose value runs past the header, or bytes too few for a TLV
    // after the last one, make the header invalid.
    let base = encode_v2(src, dst);
    let with_area = |area: &[u8]| {
        let mut b = base.clone();
        let len = u16::try_from(12 + area.len()).unwrap();
        b[14..16].copy_from_slice(&len.to_be_bytes());
        b.extend_from_slice(area);
        b
    };
    let overrun = with_area(b"\x02\x00\x0a12345");
    assert!(matches!(
        parse_with_tlvs(&overrun),
        Err(ProxyError::BadV2(_))
    ));
    let trailing = with_area(b"\x02\x00\x041234\x00");
    assert!(matches!(
        parse_with_tlvs(&trailing),
        Err(ProxyError::BadV2(_))
    ));
    // Bytes after the header's length are not the header's.
    let mut after = with_area(b"\x02\x00\x0512345");
    let n = after.len();
    after.extend_from_slice(b"\x02\x00\x0554321");
    let (_, tlvs, used) = parse_with_tlvs(&after).unwrap().unwrap();
    assert_eq!((used, tlvs.authority.as_deref()), (n, Some(&b"12345"[..])));
}

#[test]
fn v2_tlvs_too_long_for_the_header_are_left_out_whole() {
    let (src, dst) = (v4("127.0.0.1:42"), v4("127.0.0.1:1337"));
    assert!(tlv(TLV_UNIQUE_ID, &vec![b'x'; 70_000]).is_empty());
    let mut t = tlv(TLV_AUTHORITY, &vec![b'a'; 40_000]);
    t.extend(tlv(TLV_UNIQUE_ID, &vec![b'u'; 40_000]));
    let h = encode_v2_with(src, dst, &t);
    let (head, tlvs, used) = parse_with_tlvs(&h).unwrap().unwrap();
    assert_eq!((head, used), (ProxyHeader::Inet { src, dst }, h.len()));
    assert_eq!(tlvs, Tlvs::default());
}

#[test]
fn ssl_tlv_has_haproxys_layout() {
    // What Debian's haproxy 2.6 sent for a TLS 1.3 client with a
    // certificate (`send-proxy-v2-ssl-cn`, `cert-key,cert-sig,ssl-cipher`).
    let want = "2000510700000000210007544c5376312e3322000a636c69656e742d6f6e65\
                250005454332353624001165636473612d776974682d534841323536\
                230016544c535f4145535f3235365f47434d5f534841333834";
    let ssl = Ssl {
        client: 7,
        verify: 0,
        version: Some(b"TLSv1.3"),
        cn: Some(b"client-one"),
        key_alg: Some(b"EC256"),
        sig_alg: Some(b"ecdsa-with-SHA256"),
        cipher: Some(b"TLS_AES_256_GCM_SHA384"),
    };
    let got: String = ssl.tlv().iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(got, want);
    // A clear connection: no bits, no sub-TLV.
    assert_eq!(Ssl::default().tlv(), [0x20, 0, 5, 0, 0, 0, 0, 0]);
}
