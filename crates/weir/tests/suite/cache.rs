//! The HTTP cache (`cache` sections, `http-request cache-use`,
//! `http-response cache-store`, `res.cache_hit`), differential against
//! haproxy 2.6: what is kept and for how long (`max-age`, `s-maxage`,
//! validators, `Age`, `no-store`; a `Set-Cookie` does not stop it), what a client gets from
//! it (`no-cache` requests go to the server; conditional requests get a
//! 304), and an unsafe request that empties a key; with `process-vary
//! on`, the variants of a response that varies on `Accept-Encoding` or
//! `Referer`.

use crate::common::*;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// An origin that numbers its answers (`x-n`) and sets their fields by
/// path.
fn origin(count: Arc<AtomicUsize>) -> Server {
    Server::start(move |mut c| {
        let Some(head) = read_head(&mut c) else {
            return;
        };
        let req = head;
        let path = req.split(' ').nth(1).unwrap_or("/").to_string();
        let n = count.fetch_add(1, Ordering::SeqCst) + 1;
        let extra = match path.as_str() {
            "/maxage" | "/post" => "Cache-Control: max-age=60\r\n",
            "/smaxage" => "Cache-Control: s-maxage=60\r\n",
            "/etag" => "ETag: \"e1\"\r\n",
            "/old" => "Cache-Control: max-age=5\r\nAge: 10\r\n",
            "/nostore" => "Cache-Control: max-age=60, no-store\r\n",
            "/cookie" => "Cache-Control: max-age=60\r\nSet-Cookie: a=b\r\n",
            "/ae" | "/unknown" | "/identity" => {
                "Cache-Control: max-age=60\r\nVary: accept-encoding\r\n"
            }
            "/ref" => "Cache-Control: max-age=60\r\nVary: Accept-Encoding\r\nVary: Referer\r\n",
            "/refonly" => "Cache-Control: max-age=60\r\nVary: referer\r\n",
            "/ua" => "Cache-Control: max-age=60\r\nVary: accept-encoding, user-agent\r\n",
            _ => "",
        };
        // The coding the test asks the answer to claim.
        let coding = req
            .lines()
            .find_map(|l| l.strip_prefix("x-ce: "))
            .map(|c| format!("Content-Encoding: {c}\r\n"))
            .unwrap_or_default();
        let extra = format!("{extra}{coding}");
        let body = format!("body of {path}");
        let _ = c.write_all(
            format!(
                "HTTP/1.1 200 OK\r\n{extra}x-n: {n}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            )
            .as_bytes(),
        );
    })
}

/// The status, the answer's number, whether it was a hit, and whether it
/// has an `Age`.
fn get(port: u16, method: &str, path: &str, hs: &str) -> String {
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let body = if method == "POST" {
        "Content-Length: 0\r\n"
    } else {
        ""
    };
    c.write_all(
        format!("{method} {path} HTTP/1.1\r\nHost: h\r\n{hs}{body}Connection: close\r\n\r\n")
            .as_bytes(),
    )
    .unwrap();
    let mut got = Vec::new();
    let _ = c.read_to_end(&mut got);
    let text = String::from_utf8_lossy(&got).into_owned();
    let field = |n: &str| {
        text.lines()
            .find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.eq_ignore_ascii_case(n).then(|| v.trim().to_string())
            })
            .unwrap_or_else(|| "-".into())
    };
    let status = text.split(' ').nth(1).unwrap_or_default().to_string();
    let age = if field("age") == "-" { "no age" } else { "age" };
    format!(
        "{status} n={} hit={} {age}",
        field("x-n"),
        field("x-cache-hit")
    )
}

/// A frontend on `port` whose backend uses cache `c1` (with the `extra`
/// lines) for server `srv`, and says `X-Cache-Hit`.
fn cache_cfg(port: u16, srv: u16, extra: &str) -> String {
    format!(
        "defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         frontend fe\n    bind 127.0.0.1:{port}\n    default_backend be\n\
         backend be\n    http-request cache-use c1\n    server s1 127.0.0.1:{srv}\n\
         \x20   http-response cache-store c1\n    http-response set-header X-Cache-Hit %[res.cache_hit]\n\
         cache c1\n    total-max-size 4\n    max-age 20\n    max-object-size 10000\n{extra}"
    )
}

#[test]
fn cache_use_and_store_beside_haproxy() {
    let got = beside_haproxy(|start| {
        let count = Arc::new(AtomicUsize::new(0));
        let srv = origin(count.clone());
        let port = free_port();
        let cfg = cache_cfg(port, srv.port(), "");
        let _p = start(&cfg, port);
        let mut out = Vec::new();
        for path in [
            "/maxage", "/smaxage", "/etag", "/plain", "/old", "/nostore", "/cookie",
        ] {
            out.push(format!("{path}: {}", get(port, "GET", path, "")));
            out.push(format!("{path}: {}", get(port, "GET", path, "")));
        }
        out.push(get(port, "GET", "/maxage", "Cache-Control: no-cache\r\n"));
        out.push(get(port, "GET", "/etag", "If-None-Match: \"e1\"\r\n"));
        out.push(get(port, "GET", "/etag", "If-None-Match: \"other\"\r\n"));
        out.push(get(port, "GET", "/post", ""));
        out.push(get(port, "POST", "/post", ""));
        out.push(get(port, "GET", "/post", ""));
        out.push(format!("server answered {}", count.load(Ordering::SeqCst)));
        out
    });
    // The hits both gave.
    let hits: Vec<&str> = got
        .iter()
        .filter(|l| l.contains("hit=1"))
        .map(String::as_str)
        .collect();
    assert_eq!(
        hits,
        [
            "/maxage: 200 n=1 hit=1 age",
            "/smaxage: 200 n=2 hit=1 age",
            "/etag: 200 n=3 hit=1 age",
            "/cookie: 200 n=10 hit=1 age",
            "304 n=3 hit=1 age",
            "200 n=3 hit=1 age",
        ],
        "{got:#?}"
    );
}

#[test]
fn cache_variants_beside_haproxy() {
    let got = beside_haproxy(|start| {
        let count = Arc::new(AtomicUsize::new(0));
        let srv = origin(count.clone());
        let port = free_port();
        let cfg = cache_cfg(
            port,
            srv.port(),
            "    process-vary on\n    max-secondary-entries 2\n",
        );
        let _p = start(&cfg, port);
        let asks: &[(&str, &str)] = &[
            ("/ae", "Accept-Encoding: gzip\r\nx-ce: gzip\r\n"),
            ("/ae", "Accept-Encoding: gzip\r\n"),
            ("/ae", "Accept-Encoding: br\r\nx-ce: br\r\n"),
            ("/ae", "Accept-Encoding: gzip;q=0, br\r\n"),
            ("/ae", "Accept-Encoding: GZIP\r\n"),
            // Not accepted by its request: not kept.
            ("/ae", "Accept-Encoding: deflate\r\nx-ce: gzip\r\n"),
            // A third variant: over max-secondary-entries.
            ("/ae", "Accept-Encoding: deflate\r\nx-ce: deflate\r\n"),
            ("/ae", "Accept-Encoding: deflate\r\nx-ce: deflate\r\n"),
            ("/unknown", "x-ce: my-coding\r\n"),
            ("/unknown", "x-ce: my-coding\r\n"),
            ("/identity", ""),
            ("/identity", "Accept-Encoding: gzip\r\n"),
            (
                "/identity",
                "Accept-Encoding: gzip, identity;q=0\r\nx-ce: gzip\r\n",
            ),
            ("/identity", "Accept-Encoding: gzip, identity;q=0\r\n"),
            ("/identity", "Accept-Encoding: deflate, *\r\n"),
            ("/ref", "Referer: a\r\n"),
            ("/ref", "Referer: a\r\n"),
            ("/ref", "Referer: b\r\n"),
            ("/ref", ""),
            ("/ref", ""),
            ("/ref", "Referer: b\r\n"),
            ("/ua", "User-Agent: u\r\n"),
            ("/ua", "User-Agent: u\r\n"),
            // Kept by neither (haproxy 2.6 never serves it).
            ("/refonly", "Referer: a\r\n"),
            ("/refonly", "Referer: a\r\n"),
        ];
        let mut out: Vec<String> = asks
            .iter()
            .map(|(path, hs)| format!("{path} {hs:?}: {}", get(port, "GET", path, hs)))
            .collect();
        out.push(format!("server answered {}", count.load(Ordering::SeqCst)));
        out
    });
    let hits = got.iter().filter(|l| l.contains("hit=1")).count();
    assert_eq!(hits, 8, "{got:#?}");
}

/// `filter` lines, checked by weir as by haproxy (`-c`): each config is
/// taken or refused by both, and weir's refusal names the line.
#[test]
fn filter_lines_checked_beside_haproxy() {
    // (lines of the frontend, line weir's refusal names)
    let cases: &[(&str, Option<usize>)] = &[
        ("filter compression\n    compression algo gzip", None),
        ("filter cache c1\n    filter compression\n    http-request cache-use c1", None),
        ("filter trace name T random-forwarding quiet\n    filter compression\n    filter trace quiet\n    compression algo gzip", None),
        ("filter trace quiet\n    filter cache c1\n    http-response cache-store c1", None),
        ("filter cache nope", Some(8)),
        ("filter compression\n    filter compression", Some(9)),
        ("filter cache c1\n    filter cache c1", Some(9)),
        ("filter compression\n    filter cache c1", Some(8)),
        ("filter trace quiet\n    compression algo gzip", Some(6)),
        ("filter trace quiet\n    http-request cache-use c1", Some(6)),
        ("filter bogus", Some(8)),
    ];
    for (lines, refused_at) in cases {
        let cfg = format!(
            "defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
             frontend fe\n    bind 127.0.0.1:8080\n    {lines}\n    default_backend be\n\
             backend be\n    server s1 127.0.0.1:9\ncache c1\n    total-max-size 4\n"
        );
        let theirs = haproxy_accepts(&cfg);
        let (code, _, err) = check_cfg(&cfg);
        assert_eq!(code == 0, theirs, "{lines}: weir said {err}");
        if let Some(line) = refused_at {
            assert!(
                err.contains(&format!("haproxy.cfg:{line}")),
                "{lines}: {err}"
            );
        }
    }
}

/// An origin answering with the fields the request's `x-give` fields name
/// and the status of its `x-status`.
fn giving_origin() -> Server {
    Server::start(|mut c| {
        let Some(head) = read_head(&mut c) else {
            return;
        };
        let val = |l: &str, n: &str| {
            l.split_once(':')
                .filter(|(k, _)| k.eq_ignore_ascii_case(n))
                .map(|(_, v)| v.trim().to_string())
        };
        let extra: String = head
            .lines()
            .filter_map(|l| val(l, "x-give"))
            .map(|v| format!("{v}\r\n"))
            .collect();
        let status = head
            .lines()
            .find_map(|l| val(l, "x-status"))
            .unwrap_or_else(|| "200 OK".into());
        let _ = c.write_all(
            format!("HTTP/1.1 {status}\r\n{extra}Content-Length: 2\r\nConnection: close\r\n\r\nok")
                .as_bytes(),
        );
    })
}

/// `option checkcache` beside haproxy: which responses with a cookie are
/// blocked, and what the client gets instead.
#[test]
fn checkcache_beside_haproxy() {
    let srv = giving_origin();
    let cases: &[(&str, &str)] = &[
        ("GET", "Set-Cookie: a=b"),
        ("GET", "Set-Cookie: a=b\r\nx-give: Cache-Control: public"),
        ("GET", "Set-Cookie: a=b\r\nx-give: Cache-Control: max-age=60"),
        ("GET", "Set-Cookie: a=b\r\nx-give: Cache-Control: s-maxage=60"),
        ("GET", "Set-Cookie: a=b\r\nx-give: Cache-Control: max-age=60, private"),
        ("GET", "Set-Cookie: a=b\r\nx-give: Cache-Control: max-age=60, no-cache=\"set-cookie, x\""),
        ("GET", "Set-Cookie: a=b\r\nx-give: Cache-Control: max-age=0"),
        ("GET", "Set-Cookie: a=b\r\nx-give: Expires: Thu, 01 Jan 2037 00:00:00 GMT\r\nx-give: Pragma: no-cache"),
        ("GET", "Set-Cookie: a=b\r\nx-give: Last-Modified: Thu, 01 Jan 2015 00:00:00 GMT"),
        ("GET", "Set-Cookie: a=b\r\nx-give: ETag: \"x\""),
        ("GET", "Set-Cookie: a=b\r\nx-give: Cache-Control: max-age=60\r\nx-status: 404 Not Found"),
        ("GET", "Set-Cookie: a=b\r\nx-give: Cache-Control: max-age=60\r\nx-status: 302 Found"),
        ("POST", "Set-Cookie: a=b\r\nx-give: Cache-Control: max-age=60"),
        ("POST", "Set-Cookie: a=b\r\nx-give: Cache-Control: public, max-age=60"),
        ("GET", "Cache-Control: max-age=60"),
    ];
    let got = beside_haproxy(|start| {
        let port = free_port();
        let cfg = format!(
            "defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
             listen li\n    bind 127.0.0.1:{port}\n    option checkcache\n    server s1 127.0.0.1:{}\n",
            srv.port()
        );
        let _p = start(&cfg, port);
        cases
            .iter()
            .map(|(method, give)| {
                let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
                c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
                let body = if *method == "POST" { "Content-Length: 0\r\n" } else { "" };
                c.write_all(
                    format!("{method} / HTTP/1.1\r\nHost: h\r\nx-give: {give}\r\n{body}Connection: close\r\n\r\n")
                        .as_bytes(),
                )
                .unwrap();
                let mut got = Vec::new();
                let _ = c.read_to_end(&mut got);
                let text = String::from_utf8_lossy(&got).into_owned();
                let status = text.lines().next().unwrap_or_default().to_string();
                let body = text.split_once("\r\n\r\n").map(|(_, b)| b.to_string()).unwrap_or_default();
                format!("{method} {give:?}: {status} {body:?}")
            })
            .collect::<Vec<_>>()
    });
    let blocked = got.iter().filter(|l| l.contains("<html>")).count();
    assert_eq!(blocked, 6, "{got:#?}");
}
