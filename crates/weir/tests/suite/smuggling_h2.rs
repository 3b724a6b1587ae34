//! HTTP/2 requests that would smuggle once written as HTTP/1.1, through
//! weir's HTTP/2 front to strict recording origins.

use crate::common::raw::*;
use crate::common::*;
use std::time::Duration;

/// HTTP/2 requests that would smuggle once translated to HTTP/1.1: each
/// ends in a refusal (RST_STREAM or a 4xx) with nothing, or nothing
/// complete, at its origin; the others reach it in canonical form.
#[test]
fn http2_requests_never_become_ambiguous_http1() {
    use crate::common::h2::*;
    let pseudo = |path: &'static str| -> Vec<(&'static str, &'static str)> {
        vec![
            (":method", "POST"),
            (":scheme", "http"),
            (":path", path),
            (":authority", "a"),
        ]
    };
    let with = |path: &'static str, extra: &[(&'static str, &'static str)]| {
        let mut f = pseudo(path);
        f.extend_from_slice(extra);
        block(&f)
    };
    // (name, frames on stream 1, refused?)
    let cases: Vec<(&str, Vec<u8>, bool)> = vec![
        (
            "cl-shorter-than-data",
            {
                let mut b = frame(
                    HEADERS,
                    END_HEADERS,
                    1,
                    &with("/", &[("content-length", "5")]),
                );
                b.extend(frame(
                    DATA,
                    END_STREAM,
                    1,
                    b"hello0\r\n\r\nGET /smuggled HTTP/1.1\r\n\r\n",
                ));
                b
            },
            true,
        ),
        (
            "cl-longer-than-data",
            {
                let mut b = frame(
                    HEADERS,
                    END_HEADERS,
                    1,
                    &with("/", &[("content-length", "50")]),
                );
                b.extend(frame(DATA, END_STREAM, 1, b"hello"));
                b
            },
            true,
        ),
        (
            "transfer-encoding",
            {
                let mut b = frame(
                    HEADERS,
                    END_HEADERS,
                    1,
                    &with("/", &[("transfer-encoding", "chunked")]),
                );
                b.extend(frame(
                    DATA,
                    END_STREAM,
                    1,
                    b"0\r\n\r\nGET /smuggled HTTP/1.1\r\n\r\n",
                ));
                b
            },
            true,
        ),
        (
            "crlf-in-value",
            frame(
                HEADERS,
                END_HEADERS | END_STREAM,
                1,
                &with("/", &[("x", "a\r\nTransfer-Encoding: chunked")]),
            ),
            true,
        ),
        (
            "lf-in-name",
            frame(
                HEADERS,
                END_HEADERS | END_STREAM,
                1,
                &with("/", &[("x\ny", "a")]),
            ),
            true,
        ),
        (
            "upper-case-name",
            frame(
                HEADERS,
                END_HEADERS | END_STREAM,
                1,
                &with("/", &[("Content-Length", "0")]),
            ),
            true,
        ),
        (
            "space-in-path",
            frame(
                HEADERS,
                END_HEADERS | END_STREAM,
                1,
                &with("/a HTTP/1.1\r\nX: y", &[]),
            ),
            true,
        ),
        (
            "fragment-in-path",
            frame(HEADERS, END_HEADERS | END_STREAM, 1, &with("/a#b", &[])),
            true,
        ),
        (
            "connection-field",
            frame(
                HEADERS,
                END_HEADERS | END_STREAM,
                1,
                &with("/", &[("connection", "keep-alive")]),
            ),
            true,
        ),
        (
            "host-beside-authority",
            frame(
                HEADERS,
                END_HEADERS | END_STREAM,
                1,
                &with("/", &[("host", "b")]),
            ),
            false,
        ),
        (
            "content-length-matching",
            {
                let mut b = frame(
                    HEADERS,
                    END_HEADERS,
                    1,
                    &with("/", &[("content-length", "5")]),
                );
                b.extend(frame(DATA, END_STREAM, 1, b"hello"));
                b
            },
            false,
        ),
        (
            "no-length",
            {
                let mut b = frame(HEADERS, END_HEADERS, 1, &with("/", &[]));
                b.extend(frame(
                    DATA,
                    END_STREAM,
                    1,
                    b"0\r\n\r\nGET /smuggled HTTP/1.1\r\n\r\n",
                ));
                b
            },
            false,
        ),
    ];
    let mut ports = Vec::new();
    let mut origins = Vec::new();
    for _ in &cases {
        let (s, seen) = recording_origin();
        ports.push((free_port(), s.port()));
        origins.push((s, seen));
    }
    // Every frontend takes HTTP/2 in clear text (prior knowledge).
    let cfg = ports.iter().fold(config(&ports), |c, (p, _)| {
        c.replace(
            &format!("bind 127.0.0.1:{p}\n"),
            &format!("bind 127.0.0.1:{p} proto h2\n"),
        )
    });
    let _w = Weir::start(&cfg, ports.last().unwrap().0);
    let mut failures = Vec::new();
    for ((name, frames, refused), (port, (_, seen))) in
        cases.iter().zip(ports.iter().map(|p| p.0).zip(&origins))
    {
        let mut c = Raw::connect(port);
        c.send(frames);
        let got = c.until(Duration::from_secs(5), |f| {
            f.stream == 1 && (f.kind == RST_STREAM || f.flags & END_STREAM != 0) || f.kind == GOAWAY
        });
        let status = got
            .iter()
            .find(|f| f.kind == HEADERS && f.stream == 1)
            .map(|f| f.payload.clone());
        let reset = got.iter().any(|f| f.kind == RST_STREAM || f.kind == GOAWAY);
        drop(c);
        if *refused {
            // A stream refused mid-body may leave an incomplete request at
            // its origin: never a complete one, never a second one.
            let s = seen.lock().unwrap();
            if !s.heads.is_empty() {
                failures.push(format!("{name}: the origin got {:?}", s.heads));
            }
            let answered_4xx = status.is_some();
            if !reset && !answered_4xx {
                failures.push(format!("{name}: neither reset nor answered: {got:?}"));
            }
        } else {
            let ok = wait_for_heads(seen, 1);
            let s = seen.lock().unwrap();
            if !ok || !s.problems.is_empty() {
                failures.push(format!(
                    "{name}: the origin got {:?} / {:?}",
                    s.heads, s.problems
                ));
            } else if let Some(h) = s.heads.first() {
                if field(h, "host") != Some(b"a") {
                    failures.push(format!(
                        "{name}: forwarded {:?}",
                        String::from_utf8_lossy(h)
                    ));
                }
            }
        }
    }
    for ((name, ..), (_, seen)) in cases.iter().zip(&origins) {
        let s = seen.lock().unwrap();
        if s.heads
            .iter()
            .any(|h| h.windows(9).any(|w| w == b"/smuggled"))
        {
            failures.push(format!("{name}: a smuggled request reached the origin"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
