//! `cargo bench -p weir-proto`: HTTP/1 head parsing and chunked decoding
//! speed, with no benchmark framework (median of timed batches).

use std::hint::black_box;
use std::time::{Duration, Instant};
use weir_proto::h1::{parse_request, parse_response, ChunkedDecoder, Limits};

fn bench(name: &str, bytes: usize, mut f: impl FnMut()) {
    let batch = 1000;
    let mut samples = Vec::new();
    let end = Instant::now() + Duration::from_secs(2);
    while Instant::now() < end {
        let t = Instant::now();
        for _ in 0..batch {
            f();
        }
        samples.push(t.elapsed() / batch);
    }
    samples.sort();
    let med = samples[samples.len() / 2];
    println!(
        "{name:<34} median {:>8} ns/op  {:>7.0} MB/s",
        med.as_nanos(),
        bytes as f64 / med.as_secs_f64().max(1e-12) / 1e6
    );
}

fn main() {
    let l = Limits::default();
    let small =
        b"GET /?s=1 HTTP/1.1\r\nHost: 127.0.0.1:8000\r\nUser-Agent: h1load\r\nAccept: */*\r\n\r\n";
    bench("request, 4 headers", small.len(), || {
        black_box(parse_request(black_box(small), &l).ok());
    });
    let browser = b"GET /assets/app.js?v=123 HTTP/1.1\r\nHost: www.example.com\r\nUser-Agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36\r\nAccept: */*\r\nAccept-Language: en-US,en;q=0.9\r\nAccept-Encoding: gzip, deflate, br\r\nReferer: https://www.example.com/\r\nCookie: session=0123456789abcdef; theme=dark; consent=yes\r\nSec-Fetch-Dest: script\r\nSec-Fetch-Mode: no-cors\r\nSec-Fetch-Site: same-origin\r\nConnection: keep-alive\r\n\r\n";
    bench("request, browser-like (12 headers)", browser.len(), || {
        black_box(parse_request(black_box(browser), &l).ok());
    });
    let resp = b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Type: text/plain\r\nConnection: keep-alive\r\n\r\n.";
    bench("response, 3 headers", resp.len(), || {
        black_box(parse_response(black_box(resp), &l, "GET").ok());
    });
    let mut chunked = Vec::new();
    for _ in 0..64 {
        chunked.extend_from_slice(b"400\r\n");
        chunked.extend_from_slice(&[b'x'; 1024]);
        chunked.extend_from_slice(b"\r\n");
    }
    chunked.extend_from_slice(b"0\r\n\r\n");
    bench("chunked body, 64 x 1 KiB", chunked.len(), || {
        let mut d = ChunkedDecoder::default();
        black_box(d.feed(black_box(&chunked)).ok());
    });
}
