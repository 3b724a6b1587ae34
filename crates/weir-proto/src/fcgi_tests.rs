//! Unit tests of the FastCGI codec.

use super::*;

#[test]
fn records_round_trip_with_padding_skipped() {
    let mut out = Vec::new();
    push_begin(&mut out, 1, true);
    assert_eq!(out, [1, 1, 0, 1, 0, 8, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0]);
    // A record with 3 bytes of content and 5 of padding, then another.
    let mut b = vec![1, 6, 0, 1, 0, 3, 5, 0, b'a', b'b', b'c', 0, 0, 0, 0, 0];
    push_end(&mut b, kind::STDOUT, 1);
    let (r, used) = parse_record(&b).unwrap().unwrap();
    assert_eq!((r.kind, r.id, r.content, used), (6, 1, &b"abc"[..], 16));
    let (r, used) = parse_record(&b[16..]).unwrap().unwrap();
    assert_eq!((r.kind, r.content.len(), used), (kind::STDOUT, 0, 8));
    // Partial records wait; another version is refused.
    for n in 0..16 {
        assert_eq!(parse_record(&b[..n]), Ok(None), "{n}");
    }
    assert_eq!(
        parse_record(&[2, 6, 0, 1, 0, 0, 0, 0]),
        Err(FcgiError::Version(2))
    );
}

#[test]
fn streams_split_at_the_record_limit() {
    let mut out = Vec::new();
    push_stream(&mut out, kind::STDIN, 1, &vec![7u8; MAX_CONTENT + 10]);
    let (a, n) = parse_record(&out).unwrap().unwrap();
    let (b, m) = parse_record(&out[n..]).unwrap().unwrap();
    assert_eq!(
        (a.content.len(), b.content.len(), n + m),
        (MAX_CONTENT, 10, out.len())
    );
    out.clear();
    push_stream(&mut out, kind::STDIN, 1, &[]);
    assert!(out.is_empty());
}

#[test]
fn pairs_use_one_or_four_length_bytes() {
    let long = vec![b'v'; 300];
    let mut out = Vec::new();
    push_pair(&mut out, b"SCRIPT_NAME", b"/a.php");
    push_pair(&mut out, b"LONG", &long);
    assert_eq!(&out[..2], [11, 6]);
    assert_eq!(&out[19..24], [4, 0x80, 0, 1, 44]);
    let got = pairs(&out).unwrap();
    assert_eq!(
        got,
        [
            (&b"SCRIPT_NAME"[..], &b"/a.php"[..]),
            (&b"LONG"[..], &long[..])
        ]
    );
    assert_eq!(pairs(&out[..out.len() - 1]), Err(FcgiError::Pair));
    assert_eq!(pairs(&[0x80, 0]), Err(FcgiError::Pair));
}

#[test]
fn end_request_bodies() {
    assert_eq!(
        end_request(&[0, 0, 1, 0, 2, 0, 0, 0]),
        Ok(EndRequest {
            app_status: 256,
            protocol_status: 2
        })
    );
    assert_eq!(end_request(&[0; 7]), Err(FcgiError::EndRequest(7)));
}

#[test]
fn cgi_heads_give_status_reason_and_fields() {
    let (h, used) = parse_cgi_head(b"Status: 404 Not Found\r\nContent-type: text/html\r\n\r\nbody")
        .unwrap()
        .unwrap();
    assert_eq!((h.status, h.reason.as_str(), used), (404, "Not Found", 50));
    assert_eq!(
        h.headers,
        [("Content-type".to_string(), b"text/html".to_vec())]
    );
    // LF line ends, no Status: 200; a Location alone: 302.
    let (h, _) = parse_cgi_head(b"X-A: b\n\n").unwrap().unwrap();
    assert_eq!((h.status, h.headers.len()), (200, 1));
    let (h, _) = parse_cgi_head(b"Location: /x\r\n\r\n").unwrap().unwrap();
    assert_eq!(h.status, 302);
    assert_eq!(parse_cgi_head(b"Status: 200 OK\r\n"), Ok(None));
    assert!(parse_cgi_head(b"Status: abc\r\n\r\n").is_err());
    assert!(parse_cgi_head(b"no colon\r\n\r\n").is_err());
}
