use super::*;
use crate::h2::hex;

fn fields(d: &mut Decoder, block: &[u8]) -> Result<Vec<(String, String)>, HpackError> {
    let mut out = Vec::new();
    d.decode(block, |n: &[u8], v: &[u8]| {
        out.push((
            String::from_utf8_lossy(n).into_owned(),
            String::from_utf8_lossy(v).into_owned(),
        ));
        Ok::<(), HpackError>(())
    })?;
    Ok(out)
}

fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
    p.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

#[test]
fn integers_of_rfc_7541_appendix_c1() {
    for (bytes, n, v) in [
        (vec![0x0a], 5, 10),
        (vec![0x1f, 0x9a, 0x0a], 5, 1337),
        (vec![0x2a], 8, 42),
    ] {
        let mut pos = 0;
        assert_eq!(integer(&bytes, &mut pos, n), Ok(v));
        assert_eq!(pos, bytes.len());
        let mut out = Vec::new();
        put_integer(&mut out, 0, n, v);
        assert_eq!(out, bytes);
    }
    let mut pos = 0;
    assert_eq!(
        integer(&[0x1f, 0xff, 0xff, 0xff, 0xff, 0xff, 0x0f], &mut pos, 5),
        Err(HpackError::Integer)
    );
    let mut pos = 0;
    assert_eq!(
        integer(&[0x1f, 0x9a], &mut pos, 5),
        Err(HpackError::Truncated)
    );
}

/// RFC 7541 C.3 (raw strings) and C.4 (the same requests, Huffman-coded):
/// three requests on one connection, sharing the dynamic table.
#[test]
fn requests_of_rfc_7541_appendix_c3_and_c4() {
    let expect = [
        pairs(&[
            (":method", "GET"),
            (":scheme", "http"),
            (":path", "/"),
            (":authority", "www.example.com"),
        ]),
        pairs(&[
            (":method", "GET"),
            (":scheme", "http"),
            (":path", "/"),
            (":authority", "www.example.com"),
            ("cache-control", "no-cache"),
        ]),
        pairs(&[
            (":method", "GET"),
            (":scheme", "https"),
            (":path", "/index.html"),
            (":authority", "www.example.com"),
            ("custom-key", "custom-value"),
        ]),
    ];
    let sizes = [57, 110, 164];
    let raw = [
        "8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d",
        "8286 84be 5808 6e6f 2d63 6163 6865",
        "8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65",
    ];
    let huff = [
        "8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff",
        "8286 84be 5886 a8eb 1064 9cbf",
        "8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf",
    ];
    for blocks in [raw, huff] {
        let mut d = Decoder::new(4096);
        for (i, b) in blocks.iter().enumerate() {
            assert_eq!(fields(&mut d, &hex(b)).unwrap(), expect[i], "request {i}");
            assert_eq!(d.table_size(), sizes[i], "table after request {i}");
        }
    }
}

/// RFC 7541 C.5: responses with a 256-byte table, so entries are evicted.
#[test]
fn responses_of_rfc_7541_appendix_c5_evict() {
    let mut d = Decoder::new(256);
    let r1 = "4803 3330 3258 0770 7269 7661 7465 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 \
              2032 303a 3133 3a32 3120 474d 546e 1768 7474 7073 3a2f 2f77 7777 2e65 7861 6d70 \
              6c65 2e63 6f6d";
    assert_eq!(
        fields(&mut d, &hex(r1)).unwrap(),
        pairs(&[
            (":status", "302"),
            ("cache-control", "private"),
            ("date", "Mon, 21 Oct 2013 20:13:21 GMT"),
            ("location", "https://www.example.com"),
        ])
    );
    assert_eq!(d.table_size(), 222);
    assert_eq!(
        fields(&mut d, &hex("4803 3330 37c1 c0bf")).unwrap(),
        pairs(&[
            (":status", "307"),
            ("cache-control", "private"),
            ("date", "Mon, 21 Oct 2013 20:13:21 GMT"),
            ("location", "https://www.example.com"),
        ])
    );
    assert_eq!(d.table_size(), 222);
    let r3 = "88c1 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3220 474d \
              54c0 5a04 677a 6970 7738 666f 6f3d 4153 444a 4b48 514b 425a 584f 5157 454f 5049 \
              5541 5851 5745 4f49 553b 206d 6178 2d61 6765 3d33 3630 303b 2076 6572 7369 6f6e \
              3d31";
    assert_eq!(
        fields(&mut d, &hex(r3)).unwrap(),
        pairs(&[
            (":status", "200"),
            ("cache-control", "private"),
            ("date", "Mon, 21 Oct 2013 20:13:22 GMT"),
            ("location", "https://www.example.com"),
            ("content-encoding", "gzip"),
            (
                "set-cookie",
                "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1"
            ),
        ])
    );
    assert_eq!(d.table_size(), 215);
}

#[test]
fn bad_blocks_are_refused() {
    let mut d = Decoder::new(4096);
    assert_eq!(fields(&mut d, &[0x80]), Err(HpackError::Index(0)));
    assert_eq!(fields(&mut d, &[0xbe]), Err(HpackError::Index(62)));
    // A literal whose value runs past the block.
    assert_eq!(
        fields(&mut d, &hex("0f10 0a74 6578")),
        Err(HpackError::Truncated)
    );
    // A size update above the announced limit, and one after a field.
    assert_eq!(fields(&mut d, &hex("3fe2 1f")), Err(HpackError::SizeUpdate));
    assert_eq!(fields(&mut d, &hex("82 20")), Err(HpackError::SizeUpdate));
    // At the start it is fine, and shrinks the table.
    let mut d = Decoder::new(4096);
    fields(
        &mut d,
        &hex("8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d"),
    )
    .unwrap();
    assert_eq!(d.table_size(), 57);
    assert_eq!(
        fields(&mut d, &hex("20 82")).unwrap(),
        pairs(&[(":method", "GET")])
    );
    assert_eq!(d.table_size(), 0);
    // A Huffman string with bad padding.
    assert_eq!(fields(&mut d, &hex("0081 18")), Err(HpackError::Huffman));
    // The caller's own error ends the decoding.
    #[derive(Debug, PartialEq)]
    enum Mine {
        Hpack,
        Stop,
    }
    impl From<HpackError> for Mine {
        fn from(_: HpackError) -> Mine {
            Mine::Hpack
        }
    }
    let mut seen = 0;
    let r = d.decode(&hex("8286"), |_: &[u8], _: &[u8]| {
        seen += 1;
        Err::<(), Mine>(Mine::Stop)
    });
    assert_eq!((r, seen), (Err(Mine::Stop), 1));
}

#[test]
fn an_entry_larger_than_the_table_empties_it() {
    let mut d = Decoder::new(64);
    // custom-key: custom-value (54 bytes) fits.
    let b = hex("400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65");
    assert_eq!(
        fields(&mut d, &b).unwrap(),
        pairs(&[("custom-key", "custom-value")])
    );
    assert_eq!(d.table_size(), 54);
    // A 40-byte value does not (82 bytes): the table empties.
    let mut big = hex("400a 6375 7374 6f6d 2d6b 6579 28");
    big.extend_from_slice(&[b'x'; 40]);
    let got = fields(&mut d, &big).unwrap();
    assert_eq!(got[0].1.len(), 40);
    assert_eq!(d.table_size(), 0);
    assert_eq!(fields(&mut d, &[0xbe]), Err(HpackError::Index(62)));
}

#[test]
fn encoder_output_decodes_back_with_names_lower_cased() {
    for huffman in [false, true] {
        let e = Encoder { huffman };
        let mut out = Vec::new();
        e.status(&mut out, 200);
        e.status(&mut out, 302);
        e.field(&mut out, b"Content-Type", b"text/plain");
        e.field(&mut out, b"X-Custom", b"some value");
        e.field(&mut out, b"accept-encoding", b"gzip, deflate");
        e.field(&mut out, b"set-cookie", b"");
        let mut d = Decoder::new(4096);
        assert_eq!(
            fields(&mut d, &out).unwrap(),
            pairs(&[
                (":status", "200"),
                (":status", "302"),
                ("content-type", "text/plain"),
                ("x-custom", "some value"),
                ("accept-encoding", "gzip, deflate"),
                ("set-cookie", ""),
            ])
        );
        assert_eq!(d.table_size(), 0, "the encoder never indexes");
        if !huffman {
            assert_eq!(&out[..2], &[0x88, 0x08]);
            assert_eq!(&out[6..9], &[0x0f, 0x10, 0x0a]);
        }
    }
}
