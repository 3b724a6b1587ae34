//! HTTP/1 message edges end to end: a server that answers before the
//! request body ends, a bad chunk after the head, responses read as
//! strictly as requests, and HEAD whatever method reached the server.

use crate::common::raw::*;
use crate::common::*;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A server that answers 413 as soon as it has a head, then reads the
/// body to its end (Content-Length) and answers the next request 200.
fn early_answering_origin(body_seen: Arc<Mutex<usize>>) -> Server {
    Server::start(move |mut c| {
        let mut buf = Vec::new();
        let mut chunk = [0u8; 65536];
        let mut answered = 0;
        loop {
            if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = buf[..end + 4].to_vec();
                let len: usize = field(&head, "content-length")
                    .and_then(|v| std::str::from_utf8(v).ok()?.parse().ok())
                    .unwrap_or(0);
                let answer: &[u8] = if answered == 0 {
                    b"HTTP/1.1 413 Payload Too Large\r\nContent-Length: 3\r\n\r\nbig"
                } else {
                    b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
                };
                answered += 1;
                if c.write_all(answer).is_err() {
                    return;
                }
                buf.drain(..end + 4);
                while buf.len() < len {
                    match c.read(&mut chunk) {
                        Ok(0) | Err(_) => return,
                        Ok(k) => buf.extend_from_slice(&chunk[..k]),
                    }
                }
                *body_seen.lock().unwrap() += len;
                buf.drain(..len);
                continue;
            }
            match c.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(k) => buf.extend_from_slice(&chunk[..k]),
            }
        }
    })
}

#[test]
fn a_server_answering_before_the_body_ends_is_relayed_at_once() {
    let body_seen = Arc::new(Mutex::new(0));
    let origin = early_answering_origin(body_seen.clone());
    let port = free_port();
    let cfg = config(&[(port, origin.port())]).replace("timeout server 5s", "timeout server 30s");
    let _w = Weir::start(&cfg, port);
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let total = 200_000;
    c.write_all(
        format!("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: {total}\r\n\r\n").as_bytes(),
    )
    .unwrap();
    c.write_all(&vec![b'x'; 1000]).unwrap();
    // The answer comes while 199 000 bytes are still to be sent (weir used
    // to hold it until the server closed: 30 s here).
    let got = read_at_least(&mut c, 3, Duration::from_secs(5));
    assert_eq!(
        responses(&got),
        [413],
        "{:?}",
        String::from_utf8_lossy(&got)
    );
    // The rest of the body still goes up, and the connection stays usable.
    c.write_all(&vec![b'y'; total - 1000]).unwrap();
    c.write_all(b"GET /next HTTP/1.1\r\nHost: a\r\n\r\n")
        .unwrap();
    let got = read_at_least(&mut c, 2, Duration::from_secs(5));
    assert_eq!(
        responses(&got),
        [200],
        "{:?}",
        String::from_utf8_lossy(&got)
    );
    assert_eq!(*body_seen.lock().unwrap(), total);
}

#[test]
fn a_bad_chunk_after_the_head_is_answered_logged_and_kept() {
    let (origin, seen) = recording_origin();
    let syslog = Syslog::start();
    let dir = tempdir("smuggling-errors");
    let sock = dir.join("admin.sock");
    let port = free_port();
    let cfg = config(&[(port, origin.port())])
        .replace(
            "global\n",
            &format!(
                "global\n    stats socket {} level admin\n    log 127.0.0.1:{} local0\n",
                sock.display(),
                syslog.port()
            ),
        )
        .replace(
            "defaults\n",
            "defaults\n    log global\n    option httplog\n",
        );
    let _w = Weir::start(&cfg, port);
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.write_all(b"POST /up HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n")
        .unwrap();
    // The head (and the valid chunk) went up; the bad size line comes later.
    wait_for("the head at the origin", Duration::from_secs(5), || {
        (seen.lock().unwrap().bytes > 0).then_some(())
    });
    c.write_all(b"zz\r\n").unwrap();
    let got = read_at_least(&mut c, usize::MAX, Duration::from_secs(5));
    let text = String::from_utf8_lossy(&got);
    // As haproxy 2.6 answers it: its page, then `connection: close`.
    assert!(
        text.starts_with("HTTP/1.1 400 Bad request\r\ncontent-length: 90\r\n")
            && text.contains("\r\ncontent-type: text/html\r\nconnection: close\r\n\r\n"),
        "{text}"
    );
    let line = syslog.wait_line("/up", Duration::from_secs(5));
    assert!(line.contains(" 400 ") && line.contains(" PH-- "), "{line}");
    let t = ask(&sock, "show errors\n");
    assert!(t.contains("invalid request") && t.contains("zz"), "{t}");
    // The server connection is not kept: the origin sees its end.
    wait_for(
        "the origin's connection closed",
        Duration::from_secs(5),
        || (!seen.lock().unwrap().problems.is_empty()).then_some(()),
    );
    let s = seen.lock().unwrap();
    assert!(
        s.heads.is_empty(),
        "no request was completed: {:?}",
        s.heads
    );
    assert!(s.problems[0].starts_with("left unread"), "{:?}", s.problems);
}

/// A server that answers every connection with `answer`, then closes.
fn answering(answer: &'static [u8]) -> Server {
    Server::start(move |mut c| {
        if read_head(&mut c).is_some() {
            let _ = c.write_all(answer);
        }
    })
}

#[test]
fn responses_are_read_as_strictly_and_written_canonical() {
    let cases: [(&[u8], &[u8]); 5] = [
        // Bare LF line ends: written anew with CRLF.
        (
            b"HTTP/1.1 200 OK\nContent-Length: 2\nX:  a \n\nok",
            b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX: a\r\n\r\nok",
        ),
        // Identical lengths merged into one field.
        (
            b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok",
            b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
        ),
        // A length padded with a non-ASCII space is invalid: 502.
        (
            b"HTTP/1.1 200 OK\r\nContent-Length: \xc2\xa02\r\n\r\nok",
            b"HTTP/1.1 502 ",
        ),
        // Different lengths: 502.
        (
            b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok",
            b"HTTP/1.1 502 ",
        ),
        // A coding padded with a non-ASCII space: 502.
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\xc2\xa0\r\n\r\n0\r\n\r\n",
            b"HTTP/1.1 502 ",
        ),
    ];
    for (answer, want) in cases {
        let origin = answering(answer);
        let port = free_port();
        let _w = Weir::start(&config(&[(port, origin.port())]), port);
        let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
        c.write_all(b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
            .unwrap();
        let got = read_at_least(&mut c, usize::MAX, Duration::from_secs(5));
        let text = String::from_utf8_lossy(&got);
        let want_text = String::from_utf8_lossy(want);
        let want_text = want_text.replace("\r\n\r\n", "\r\nconnection: close\r\n\r\n");
        let ok = if want.ends_with(b" ") {
            text.starts_with(&*want_text)
        } else {
            text == want_text
        };
        assert!(
            ok,
            "server sent {:?}: client got {text:?}",
            String::from_utf8_lossy(answer)
        );
    }
}

/// Chunks in an HTTP/1.0 response are framing HTTP/1.0 does not know: the
/// client's connection closes after it (RFC 9112 §6.1), as haproxy's does,
/// even while the server keeps its own open (HAProxy's reg-test
/// http_transfer_encoding.vtc passed only when the server's close won the
/// race).
#[test]
fn a_chunked_http10_response_closes_the_client_connection() {
    let origin = Server::start(|mut c| {
        if read_head(&mut c).is_none() {
            return;
        }
        let _ = c.write_all(b"HTTP/1.0 200 Ok\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n");
        // Holds its side open until weir closes it.
        let mut chunk = [0u8; 4096];
        while matches!(c.read(&mut chunk), Ok(k) if k > 0) {}
    });
    let port = free_port();
    let _w = Weir::start(&config(&[(port, origin.port())]), port);
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    // Well below the configuration's timeouts (5 s), which close anyway.
    c.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    c.write_all(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
    let mut got = Vec::new();
    let closed = c.read_to_end(&mut got);
    let text = String::from_utf8_lossy(&got);
    assert!(
        closed.is_ok(),
        "weir kept the client open: {closed:?}, got {text:?}"
    );
    // What haproxy 2.6 writes for it (measured; it lower-cases names,
    // weir keeps them as the server wrote them).
    assert_eq!(
        text.to_ascii_lowercase(),
        "http/1.0 200 ok\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n"
    );
}

/// A server answering every request on a connection with a body, plain or
/// chunked by turns.
fn body_server() -> Server {
    Server::start(|mut c| {
        let mut n = 0;
        loop {
            let mut buf = Vec::new();
            let mut b = [0u8; 4096];
            while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                match c.read(&mut b) {
                    Ok(0) | Err(_) => return,
                    Ok(k) => buf.extend_from_slice(&b[..k]),
                }
            }
            n += 1;
            let answer: &[u8] = if n % 2 == 1 {
                b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nskipped data"
            } else {
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nchunk\r\n0\r\n\r\n"
            };
            if c.write_all(answer).is_err() {
                return;
            }
        }
    })
}

#[test]
fn a_head_request_gets_no_body_whatever_the_server_was_asked() {
    // `http-request set-method GET` turns the client's HEAD into a GET: the
    // server's body must not reach the client, whose next response would
    // begin with it (haproxy's reg-test http_bodyless_response.vtc).
    let origin = body_server();
    let port = free_port();
    let cfg = config(&[(port, origin.port())]).replace(
        "    default_backend b0\n",
        "    http-request set-method GET\n    default_backend b0\n",
    );
    let _w = Weir::start(&cfg, port);
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    for (method, want) in [
        ("HEAD", "HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n"),
        (
            "HEAD",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
        ),
        ("HEAD", "HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n"),
    ] {
        c.write_all(format!("{method} / HTTP/1.1\r\nHost: a\r\n\r\n").as_bytes())
            .unwrap();
        let got = read_at_least(&mut c, want.len(), Duration::from_secs(5));
        assert_eq!(String::from_utf8_lossy(&got), want);
    }
    // The next GET gets its own whole response on the same connection.
    c.write_all(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
    let want = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nchunk\r\n0\r\n\r\n";
    let got = read_at_least(&mut c, want.len(), Duration::from_secs(5));
    assert_eq!(String::from_utf8_lossy(&got), want);
    // One server connection served all four: the bodies were read, not cut.
    assert_eq!(
        origin.accepted.load(std::sync::atomic::Ordering::Relaxed),
        1
    );
}
