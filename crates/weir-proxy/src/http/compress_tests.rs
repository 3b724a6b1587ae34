//! The pure parts of compression: algorithm choice, the response head,
//! ETags, the encoders.

use super::*;
use std::io::Read;
use weir_config::diag::Loc;
use weir_config::model::ProxyKind;

fn proxy(algos: &[CompAlgo], types: &[&str], offload: bool) -> Proxy {
    let mut p = Proxy::new("p", ProxyKind::Backend, Loc::default());
    p.compression = Compression {
        algos: algos.to_vec(),
        types: types.iter().map(|t| t.to_string()).collect(),
        offload,
    };
    p
}

fn request(minor: u8, hs: &[(&str, &str)]) -> RequestHead {
    let text = format!(
        "GET / HTTP/1.{minor}\r\n{}\r\n",
        hs.iter()
            .map(|(n, v)| format!("{n}: {v}\r\n"))
            .collect::<String>()
    );
    weir_proto::h1::parse_request(text.as_bytes(), &Default::default())
        .unwrap()
        .unwrap()
        .0
}

#[test]
fn the_best_q_value_wins_and_offload_removes_the_header() {
    let fe = proxy(&[], &[], false);
    let be = proxy(&[CompAlgo::Gzip, CompAlgo::Deflate], &[], true);
    let mut d = false;
    let mut r = request(
        1,
        &[("Accept-Encoding", "*;q=0, gzip;q=0.500, deflate;q=0.750")],
    );
    assert_eq!(choose(&fe, &be, &mut r, &mut d), Some(CompAlgo::Deflate));
    assert!(d && !r.headers.iter().any(|h| h.is("accept-encoding")));
    let mut r = request(1, &[("Accept-Encoding", "br, gzip")]);
    assert_eq!(choose(&fe, &be, &mut r, &mut d), Some(CompAlgo::Gzip));
    let mut r = request(1, &[("Accept-Encoding", "br")]);
    assert_eq!(choose(&fe, &be, &mut r, &mut d), None);
    // HTTP/1.0 and Mozilla/4 get nothing; else identity when it is
    // configured.
    let mut r = request(0, &[("Accept-Encoding", "gzip")]);
    assert_eq!(choose(&fe, &be, &mut r, &mut d), None);
    let mut r = request(
        1,
        &[("Accept-Encoding", "gzip"), ("User-Agent", "Mozilla/4")],
    );
    assert_eq!(choose(&fe, &be, &mut r, &mut d), None);
    let id = proxy(&[CompAlgo::Identity], &[], false);
    let mut r = request(1, &[]);
    assert_eq!(choose(&fe, &id, &mut r, &mut d), Some(CompAlgo::Identity));
}

fn response(status: u16, hs: &[(&str, &str)]) -> ResponseHead {
    let text = format!(
        "HTTP/1.1 {status} X\r\n{}\r\n",
        hs.iter()
            .map(|(n, v)| format!("{n}: {v}\r\n"))
            .collect::<String>()
    );
    weir_proto::h1::parse_response(text.as_bytes(), &Default::default(), "GET")
        .unwrap()
        .unwrap()
        .0
}

#[test]
fn responses_compressed_as_haproxy_decides() {
    let fe = proxy(&[], &[], false);
    let be = proxy(&[CompAlgo::Gzip], &["text/plain"], false);
    let yes =
        |hs: &[(&str, &str)]| super::response(&fe, &be, CompAlgo::Gzip, &mut response(200, hs));
    assert!(yes(&[
        ("Content-Type", "text/plain"),
        ("Content-Length", "5")
    ]));
    assert!(!yes(&[
        ("Content-Type", "text/css"),
        ("Content-Length", "5")
    ]));
    assert!(!yes(&[
        ("Content-Type", "text/plain"),
        ("Content-Length", "5"),
        ("Content-Encoding", "x")
    ]));
    assert!(!yes(&[
        ("Content-Type", "text/plain"),
        ("Content-Length", "5"),
        ("Cache-Control", "public, no-transform")
    ]));
    assert!(!yes(&[
        ("Content-Type", "text/plain"),
        ("Content-Length", "5"),
        ("ETag", "\"a\""),
        ("ETag", "\"b\"")
    ]));
    assert!(!yes(&[
        ("Content-Type", "text/plain"),
        ("Content-Length", "5"),
        ("ETag", "invalid")
    ]));
    assert!(
        !yes(&[("Content-Type", "text/plain")]),
        "a body that ends with the connection"
    );
    let mut r = response(
        400,
        &[("Content-Type", "text/plain"), ("Content-Length", "5")],
    );
    assert!(!super::response(&fe, &be, CompAlgo::Gzip, &mut r));
    let mut r = response(
        200,
        &[
            ("Content-Type", "text/plain"),
            ("Content-Length", "5"),
            ("ETag", "\"123\""),
        ],
    );
    assert!(super::response(&fe, &be, CompAlgo::Gzip, &mut r));
    let h = |n: &str| {
        r.headers
            .iter()
            .find(|h| h.is(n))
            .map(|h| String::from_utf8_lossy(h.value()).into_owned())
    };
    assert_eq!(h("etag").as_deref(), Some("W/\"123\""));
    assert_eq!(h("content-encoding").as_deref(), Some("gzip"));
    assert_eq!(h("vary").as_deref(), Some("Accept-Encoding"));
    assert_eq!(h("transfer-encoding").as_deref(), Some("chunked"));
    assert_eq!(h("content-length"), None);
    assert_eq!(r.framing, Framing::Chunked);
}

#[test]
fn encoders_round_trip() {
    let text = b"hello hello hello hello compression".repeat(50);
    for algo in [
        CompAlgo::Gzip,
        CompAlgo::Deflate,
        CompAlgo::RawDeflate,
        CompAlgo::Identity,
    ] {
        let mut e = Encoder::new(algo, 1);
        let mut out = e.feed(&text[..700]);
        out.extend(e.feed(&text[700..]));
        out.extend(e.finish());
        let mut back = Vec::new();
        match algo {
            CompAlgo::Gzip => flate2::read::GzDecoder::new(&out[..]).read_to_end(&mut back),
            CompAlgo::Deflate => flate2::read::ZlibDecoder::new(&out[..]).read_to_end(&mut back),
            CompAlgo::RawDeflate => {
                flate2::read::DeflateDecoder::new(&out[..]).read_to_end(&mut back)
            }
            CompAlgo::Identity => {
                back = out.clone();
                Ok(0)
            }
        }
        .unwrap();
        assert_eq!(back, text, "{algo:?}");
    }
}
