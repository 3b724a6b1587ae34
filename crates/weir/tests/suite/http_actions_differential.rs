//! HTTP rule actions, differential against haproxy 2.6: `replace-path`,
//! `replace-pathq`, `replace-uri`, `set-path` on an absolute-form target,
//! `set-src`/`set-dst` feeding `option forwardfor`/`originalto`,
//! `del-header -m`, `monitor fail`, `deny` with a custom answer, `http-error` replies rendered per request
//! (`lf-string`, `hdr` formats) for `deny` and `return default-errorfiles`, `http-after-response` on
//! the answers weir makes, `declare capture` with
//! `capture … id` and `capture.req.hdr`, `so_name`, `set-header` keeping
//! the spaces it renders (and `req.fhdr` reading without them),
//! `option http-restrict-req-hdr-names delete`, `unique-id-format` with a
//! sample, `errorloc303`, `deny … errorfile /dev/null`, `return` leaving out
//! empty headers and an empty body's content type, `reject`, `silent-drop`, a `redir` server. The same
//! configuration through both, the same requests; what the server got and
//! what the client got are compared.

use crate::common::http::Client;
use crate::common::*;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

fn cfg(port: u16, origin: u16) -> String {
    format!(
        "defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         frontend fe\n    bind 127.0.0.1:{port} name lst\n    declare capture request len 8\n\
         \x20   unique-id-format U-%[req.hdr(x-t)]\n    unique-id-header X-Uid\n\
         \x20   errorloc303 403 /denied\n    http-request deny if {{ hdr(x-t) d403 }}\n\
         \x20   http-request deny deny_status 500 errorfile /dev/null if {{ hdr(x-t) e500 }}\n\
         \x20   http-request return status 200 hdr x-so %[so_name] if {{ hdr(x-t) so }}\n\
         \x20   http-request set-header x-trim \"  %[path] \" if {{ hdr(x-t) trim }}\n\
         \x20   http-request set-header x-fhdr \"[%[req.fhdr(x-trim)]]\" if {{ hdr(x-t) trim }}\n\
         \x20   http-request capture req.hdr(x-c) id 0 if {{ hdr(x-c) -m found }}\n\
         \x20   http-request return status 200 hdr x-cap %[capture.req.hdr(0)] if {{ hdr(x-t) cap }}\n\
         \x20   http-request replace-path /a(.*) /b\\1 if {{ hdr(x-t) path }}\n\
         \x20   http-request replace-pathq /a(.*) /q\\1 if {{ hdr(x-t) pathq }}\n\
         \x20   http-request replace-uri ^/(.*) /z/\\1 if {{ hdr(x-t) uri }}\n\
         \x20   http-request set-path /s%[path] if {{ hdr(x-t) abs }}\n\
         \x20   http-request set-src hdr(x-src) if {{ hdr(x-src) -m found }}\n\
         \x20   http-request set-dst hdr(x-dst) if {{ hdr(x-dst) -m found }}\n\
         \x20   http-request del-header x-d -m beg if {{ hdr(x-t) del }}\n\
         \x20   http-request del-header ^x-r.$ -m reg if {{ hdr(x-t) del }}\n\
         \x20   http-request deny status 401 content-type text/plain string no hdr x-why \"%[path]\" if {{ hdr(x-t) deny }}\n\
         \x20   http-request return status 200 content-type text/plain hdr x-empty \"%[req.hdr(x-none)]\" hdr x-full \"%[path]\" if {{ hdr(x-t) ret }}\n\
         \x20   http-request reject if {{ hdr(x-t) reject }}\n\
         \x20   http-error status 429 content-type application/json hdr x-id \"%[req.hdr(x-id)]\" lf-string \"{{\\\"path\\\":\\\"%[path]\\\"}}\"\n\
         \x20   http-error status 200 content-type text/plain lf-string \"page of %[path]\"\n\
         \x20   http-request deny deny_status 429 if {{ hdr(x-t) e429 }}\n\
         \x20   monitor-uri /mon\n    monitor fail if {{ hdr(x-t) mfail }}\n\
         \x20   http-request return status 200 default-errorfiles if {{ hdr(x-t) ef200 }}\n\
         \x20   http-after-response set-header x-after \"%[status]\"\n\
         \x20   http-after-response set-status 299 if {{ status 401 }}\n\
         \x20   default_backend be\n\
         backend be\n    option forwardfor\n    option originalto\n    option http-restrict-req-hdr-names delete\n    server s 127.0.0.1:{origin}\n"
    )
}

/// The requests: the target, then extra header lines.
const REQUESTS: &[(&str, &str)] = &[
    ("/x/a/c?a/b", "X-T: path\r\n"),
    ("/x/a/c?a/b", "X-T: pathq\r\n"),
    ("/x/a/c?a/b", "X-T: uri\r\n"),
    ("http://h.example/p?q=1", "X-T: abs\r\n"),
    ("/f", "X-Src: 192.0.2.7\r\nX-Dst: 198.51.100.2\r\n"),
    (
        "/d",
        "X-T: del\r\nX-D1: a\r\nX-Da: b\r\nX-R1: c\r\nX-R12: d\r\nX-Keep: e\r\n",
    ),
    ("/deny", "X-T: deny\r\n"),
    ("/ret", "X-T: ret\r\n"),
    ("/rej", "X-T: reject\r\n"),
    ("/cap", "X-T: cap\r\nX-C: 0123456789abc\r\n"),
    ("/so", "X-T: so\r\n"),
    ("/trim", "X-T: trim\r\n"),
    ("/names", "X-T: names\r\nX-Und_er: 1\r\nX-Fine: 2\r\n"),
    ("/d403", "X-T: d403\r\n"),
    ("/e500", "X-T: e500\r\n"),
    ("/limited", "X-T: e429\r\nX-Id: 7\r\n"),
    ("/page", "X-T: ef200\r\n"),
    ("/mon", ""),
    ("/mon", "X-T: mfail\r\n"),
];

/// One request; the response's status, its `x-`/content-type headers and
/// its body, or `closed`.
fn outcome(port: u16, target: &str, extra: &str) -> String {
    let host = if target.starts_with("http") {
        "h.example"
    } else {
        "a"
    };
    let raw = format!("GET {target} HTTP/1.1\r\nHost: {host}\r\n{extra}Connection: close\r\n\r\n");
    let Some((status, head, body)) = exchange_once(port, &raw) else {
        return "closed".into();
    };
    let mut hs: Vec<String> = head
        .lines()
        .skip(1)
        .map(str::to_ascii_lowercase)
        .filter(|l| l.starts_with("x-") || l.starts_with("content-type"))
        .collect();
    hs.sort();
    format!("{status} {} | {body}", hs.join(","))
}

#[test]
fn http_actions_as_haproxy() {
    let org = x_headers_origin(true);
    let (wp, hp) = (free_port(), free_port());
    let Some(_h) = Haproxy::start(&cfg(hp, org.port()), hp) else {
        panic!("haproxy is not installed: tests/run installs it");
    };
    let _w = Weir::start(&cfg(wp, org.port()), wp);
    let run = |port| -> Vec<String> { REQUESTS.iter().map(|(t, x)| outcome(port, t, x)).collect() };
    let (ours, theirs) = (run(wp), run(hp));
    assert_eq!(ours, theirs, "weir's outcomes, then haproxy's");
    // What the rules did (so that both agreeing on nothing cannot pass).
    assert!(ours[0].contains("get /b/c?a/b http/1.1"), "{ours:?}");
    assert!(
        ours[0].contains(";x-uid: u-path;"),
        "unique-id-format's samples: {ours:?}"
    );
    assert!(ours[3].contains("get http://h.example/s/p?q=1"), "{ours:?}");
    assert!(ours[4].contains("x-forwarded-for: 192.0.2.7"), "{ours:?}");
    assert!(ours[4].contains("x-original-to: 198.51.100.2"), "{ours:?}");
    assert!(
        ours[5].contains("x-r12: d;x-keep: e") && !ours[5].contains("x-d1"),
        "{ours:?}"
    );
    assert!(
        ours[6].starts_with("299 content-type: text/plain,x-after: 401,x-why: /deny | no"),
        "http-after-response on a deny: {ours:?}"
    );
    assert_eq!(ours[7], "200 x-after: 200,x-full: /ret | ");
    assert_eq!(ours[8], "closed");
    assert_eq!(
        ours[9], "200 x-after: 200,x-cap: 01234567 | ",
        "declare capture, capture id"
    );
    let n = ours.len();
    assert_eq!(
        ours[n - 4],
        "429 content-type: application/json,x-after: 429,x-id: 7 | {\"path\":\"/limited\"}"
    );
    assert_eq!(
        ours[n - 3],
        "200 content-type: text/plain,x-after: 200 | page of /page"
    );
    assert!(ours[n - 2].starts_with("200 "), "monitor-uri: {ours:?}");
    assert!(ours[n - 1].starts_with("503 "), "monitor fail: {ours:?}");
}

/// GET `path` on a connection of its own: the whole answer.
fn get_closed(port: u16, path: &str) -> String {
    use std::io::{Read, Write};
    let mut c = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    let req = format!("GET {path} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
    c.write_all(req.as_bytes()).unwrap();
    let mut out = String::new();
    c.read_to_string(&mut out).unwrap();
    out
}

#[test]
fn generated_responses_carry_haproxys_reason_phrases() {
    let (wp, hp) = (free_port(), free_port());
    let cfg = |port: u16| {
        let mut c = format!(
            "defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
             frontend fe\n    bind 127.0.0.1:{port}\n"
        );
        for code in 200..600 {
            c.push_str(&format!(
                "    http-request return status {code} if {{ path /{code} }}\n"
            ));
        }
        c
    };
    let Some(_h) = Haproxy::start(&cfg(hp), hp) else {
        panic!("haproxy is not installed: tests/run installs it");
    };
    let _w = Weir::start(&cfg(wp), wp);
    let status_line = |port: u16, code: u16| {
        let out = get_closed(port, &format!("/{code}"));
        out.lines().next().unwrap_or("").to_string()
    };
    let differ: Vec<String> = (200..600)
        .filter_map(|code| {
            let (w, h) = (status_line(wp, code), status_line(hp, code));
            (w != h).then(|| format!("{code}: weir '{w}', haproxy '{h}'"))
        })
        .collect();
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}

#[test]
fn http_error_pages_from_sections_and_defaults_as_haproxy() {
    let dir = tempdir("http-error");
    let page = dir.join("404.http");
    std::fs::write(
        &page,
        "HTTP/1.0 404 Not Found\r\nx-err-type: errors-1\r\ncontent-length: 0\r\n\r\n",
    )
    .unwrap();
    let (wp, hp) = (free_port(), free_port());
    let cfg = |port: u16| {
        format!(
            "http-errors errors-1\n    errorfile 404 {p}\n\
             defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n    errorfile 403 {p}\n\
             frontend fe\n    bind 127.0.0.1:{port}\n\
             \x20   http-error status 400\n    http-error status 403 default-errorfiles\n\
             \x20   http-error status 404 errorfiles errors-1\n    http-error status 500 errorfiles errors-1\n\
             \x20   http-request deny deny_status 400 if {{ path /400 }}\n    http-request deny deny_status 403 if {{ path /403 }}\n\
             \x20   http-request deny deny_status 404 if {{ path /404 }}\n    http-request deny deny_status 500 if {{ path /500 }}\n",
            p = page.display()
        )
    };
    let Some(_h) = Haproxy::start(&cfg(hp), hp) else {
        panic!("haproxy is not installed: tests/run installs it");
    };
    let _w = Weir::start(&cfg(wp), wp);
    let answer = |port: u16, path: &str| get_closed(port, path).to_ascii_lowercase();
    for path in ["/400", "/403", "/404", "/500"] {
        let (w, h) = (answer(wp, path), answer(hp, path));
        let keep = |t: &str| -> Vec<String> {
            t.lines()
                .filter(|l| {
                    l.starts_with("http/")
                        || l.starts_with("content-length")
                        || l.starts_with("x-err-type")
                })
                .map(str::to_string)
                .collect()
        };
        assert_eq!(keep(&w), keep(&h), "{path}:\n{w}\n{h}");
    }
}

/// The requests of [`rules_that_end_on_one_connection_as_haproxy`].
const ENDING: &[&str] = &[
    "/deny", "/allow", "/red", "/x", "/tcpacc", "/rdeny", "/rret", "/late", "/d400", "/after",
];

#[test]
fn rules_that_end_on_one_connection_as_haproxy() {
    // A deny keeps the client's connection, as any answer weir makes,
    // unless its page says `connection: close` (400, 408); the line of the
    // last rule that ended a rule set is seen by `last_rule_line`.
    let org = x_headers_origin(false);
    let (wp, hp) = (free_port(), free_port());
    let cfg = |port: u16| {
        format!(
            "defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
             frontend fe\n    bind 127.0.0.1:{port}\n\
             \x20   tcp-request content accept if {{ path /tcpacc /late }}\n\
             \x20   http-request deny if {{ path /deny }}\n\
             \x20   http-request deny deny_status 400 if {{ path /d400 }}\n\
             \x20   http-request redirect location /o if {{ path /red }}\n\
             \x20   http-request allow if {{ path /allow /rdeny }}\n\
             \x20   http-request set-var(txn.p) path\n\
             \x20   http-response deny deny_status 503 if {{ var(txn.p) -m str /rdeny /late }}\n\
             \x20   http-response return status 202 if {{ var(txn.p) -m str /rret }}\n\
             \x20   http-after-response set-header x-lr \"%[last_rule_line]\"\n\
             \x20   default_backend be\n\
             backend be\n    server s 127.0.0.1:{}\n",
            org.port()
        )
    };
    let Some(_h) = Haproxy::start(&cfg(hp), hp) else {
        panic!("haproxy is not installed: tests/run installs it");
    };
    let _w = Weir::start(&cfg(wp), wp);
    let run = |port: u16| -> Vec<String> {
        let mut c = Client::connect(port);
        let mut out = Vec::new();
        for path in ENDING {
            let r = c.get(path);
            let mut lr = r.header("x-lr").unwrap_or("none").to_string();
            if matches!(*path, "/red" | "/rret") && port == hp {
                // haproxy runs `http-after-response` inside `redirect`
                // and `return`, before it notes the rule: its log sees
                // the line, its after-response rules do not. weir's see
                // it in both.
                lr = if *path == "/red" { "11" } else { "15" }.into();
            }
            out.push(format!("{path} {} lr={lr}", r.status));
            if r.header("connection")
                .is_some_and(|v| v.eq_ignore_ascii_case("close"))
            {
                out.push(format!("closed={}", c.closed()));
                c = Client::connect(port);
            }
        }
        out
    };
    let (ours, theirs) = (run(wp), run(hp));
    assert_eq!(ours, theirs, "weir's answers, then haproxy's");
    // What they agreed on (the frontend's lines start at 7).
    for want in [
        "/deny 403 lr=9",
        "/x 200 lr=",
        "/tcpacc 200 lr=8",
        "/rdeny 200 lr=12",
        "/late 503 lr=14",
        "/d400 400 lr=10",
        "closed=true",
    ] {
        assert!(ours.iter().any(|l| l == want), "{want} in {ours:#?}");
    }
}

/// Redirects beside haproxy: each code's head (`cache-control: no-cache`
/// on the temporary ones only), `set-cookie` and `clear-cookie`, with
/// `redirect` and `http-request redirect`.
#[test]
fn redirect_heads_as_haproxy() {
    let got = beside_haproxy(|start| {
        let port = free_port();
        let mut cfg = format!(
            "defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
             frontend fe\n    bind 127.0.0.1:{port}\n\
             \x20   redirect prefix /p set-cookie SEEN=1 if {{ path_beg /a }}\n\
             \x20   redirect location /l clear-cookie SEEN= if {{ path_beg /b }}\n\
             \x20   redirect location /l set-cookie NOVAL if {{ path_beg /c }}\n\
             \x20   redirect location /l clear-cookie X if {{ path_beg /d }}\n\
             \x20   redirect scheme https set-cookie S=1 drop-query if {{ path_beg /f }}\n"
        );
        for code in [301, 302, 303, 307, 308] {
            cfg.push_str(&format!(
                "    http-request redirect location /x code {code} set-cookie K=v if {{ path_beg /{code} }}\n"
            ));
        }
        let _p = start(&cfg, port);
        [
            "/a", "/b", "/c", "/d", "/f?x=1", "/301", "/302", "/303", "/307", "/308",
        ]
        .iter()
        .map(|p| get_closed(port, p).replace(&port.to_string(), "PORT"))
        .collect::<Vec<_>>()
    });
    assert!(got[0].contains("set-cookie: SEEN=1; path=/;"), "{got:#?}");
}

/// `option http-use-proxy-header` beside haproxy: a `Proxy-Connection`
/// field decides nothing, with the option as without it.
#[test]
fn proxy_connection_decides_nothing_as_haproxy() {
    use std::io::{Read, Write};
    let got = beside_haproxy(|start| {
        let (p1, p2) = (free_port(), free_port());
        let cfg = format!(
            "defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
             frontend fe\n    bind 127.0.0.1:{p1}\n    option http-use-proxy-header\n\
             \x20   http-request return status 200 hdr x-pc \"%[req.hdr(proxy-connection)]\"\n\
             frontend fe2\n    bind 127.0.0.1:{p2}\n\
             \x20   http-request return status 200 hdr x-pc \"%[req.hdr(proxy-connection)]\"\n"
        );
        let _p = start(&cfg, p1);
        let mut out = Vec::new();
        for port in [p1, p2] {
            for req in [
                "GET / HTTP/1.1\r\nHost: x\r\nProxy-Connection: close\r\n\r\n",
                "GET / HTTP/1.0\r\nProxy-Connection: keep-alive\r\n\r\n",
            ] {
                let mut c = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
                c.set_read_timeout(Some(std::time::Duration::from_millis(500)))
                    .unwrap();
                c.write_all(req.as_bytes()).unwrap();
                let mut got = Vec::new();
                let mut buf = [0u8; 4096];
                let end = loop {
                    match c.read(&mut buf) {
                        Ok(0) => break "closed",
                        Ok(n) => got.extend_from_slice(&buf[..n]),
                        Err(_) => break "open",
                    }
                };
                out.push(format!("{} {end}", String::from_utf8_lossy(&got)));
            }
        }
        out
    });
    assert!(got[0].ends_with(" open"), "{got:#?}");
}

/// A server's whole answer, closing.
const OK_CLOSE: &str = "HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok";

/// A `defaults` section in `mode http` logging to `log`.
fn logged_defaults(log: &Syslog) -> String {
    format!(
        "defaults\n    mode http\n    log 127.0.0.1:{} local0\n    log global\n\
         \x20   timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n",
        log.port()
    )
}

/// The first 12 bytes answered to `GET <path>` on a connection of its
/// own; empty for none (a reset from weir, or nothing at all from a
/// privileged haproxy, which closes with TCP_REPAIR, within 1 s).
fn first_bytes(port: u16, path: &str) -> String {
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
    c.write_all(format!("GET {path} HTTP/1.1\r\nhost: a\r\n\r\n").as_bytes())
        .unwrap();
    let mut b = vec![0u8; 64];
    c.read(&mut b)
        .map(|n| String::from_utf8_lossy(&b[..n.min(12)]).into_owned())
        .unwrap_or_default()
}

#[test]
fn http_response_silent_drop_as_haproxy() {
    // Nothing is sent to the client; the log line has the server's
    // status, no `Tr`, and `PR`, as haproxy's.
    let origin = Server::named(OK_CLOSE);
    let got = beside_haproxy(|start| {
        let log = Syslog::start();
        let port = free_port();
        let cfg = format!(
            "{}\
             \x20   log-format \"%ft %b/%s %Tr %ST %ts %{{+Q}}r\"\n\
             frontend f\n    bind 127.0.0.1:{port}\n    default_backend b\n\
             backend b\n    http-request set-var(txn.drop) int(1) if {{ path /x }}\n\
             \x20   http-response silent-drop if {{ var(txn.drop) -m int 1 }}\n    server s {}\n",
            logged_defaults(&log),
            origin.addr
        );
        let _p = start(&cfg, port);
        let mut out = Vec::new();
        for (i, path) in ["/x", "/"].into_iter().enumerate() {
            out.push(first_bytes(port, path));
            let l = log.nth_after("]: f ", i);
            // (The response time of the request that went through varies.)
            let w: Vec<&str> = l.split(' ').collect();
            out.push(if path == "/" {
                format!("{} {} {}", w[0], w[2], w[3])
            } else {
                l
            });
        }
        out
    });
    assert_eq!(got[0], "", "nothing said to the client");
    assert_eq!(got[1], "b/s -1 200 PR \"GET /x HTTP/1.1\"");
    assert_eq!(got[2..], ["HTTP/1.1 200", "b/s 200 --"]);
}

#[test]
fn http_request_silent_drop_as_haproxy() {
    // The client gets nothing (weir resets; a privileged haproxy sends
    // nothing at all), and the log line is haproxy's: no status, `PR--`.
    let origin = Server::named(OK_CLOSE);
    let got = beside_haproxy(|start| {
        let log = Syslog::start();
        let port = free_port();
        let cfg = format!(
            "{}\
             \x20   log-format \"%ft %b/%s %TR/%Tw/%Tc/%Tr %ST %ts %{{+Q}}r\"\n\
             frontend f\n    bind 127.0.0.1:{port}\n    http-request silent-drop if {{ path /x }}\n    default_backend b\n\
             backend b\n    server s {}\n",
            logged_defaults(&log),
            origin.addr
        );
        let _p = start(&cfg, port);
        let mut out = Vec::new();
        for path in ["/x", "/"] {
            out.push(first_bytes(port, path));
            let l = log.nth_after("]: f ", out.len() / 2);

            // (The timers of a request that went through vary.)
            let w: Vec<&str> = l.split(' ').collect();
            out.push(if path == "/" {
                format!("{} {}", w[0], w[2])
            } else {
                l.clone()
            });
        }
        out
    });
    assert_eq!(got[0], "", "nothing said to the client");
    assert_eq!(got[1], "f/<NOSRV> -1/-1/-1/-1 -1 PR \"GET /x HTTP/1.1\"");
    assert_eq!(got[2..], ["HTTP/1.1 200", "b/s 200"]);
}

#[test]
fn redir_servers_answer_get_and_head_with_a_302_as_haproxy() {
    let origin = Server::named(OK_CLOSE);
    let got = beside_haproxy(|start| {
        let log = Syslog::start();
        let port = free_port();
        let cfg = format!(
            "{}\
             \x20   log-format \"%b/%s %Tc %ST %tsc %{{+Q}}r\"\n\
             listen l\n    bind 127.0.0.1:{port}\n    cookie SRV insert\n\
             \x20   server a {} redir http://img.example.com cookie a\n",
            logged_defaults(&log),
            origin.addr
        );
        let _p = start(&cfg, port);
        let mut out = Vec::new();
        let asks = [
            "GET /x/y?z=1 HTTP/1.1\r\nhost: a\r\n\r\n",
            "HEAD http://a/abs?q HTTP/1.0\r\n\r\n",
            "POST /p HTTP/1.1\r\nhost: a\r\ncontent-length: 0\r\n\r\n",
        ];
        for (i, ask) in asks.iter().enumerate() {
            let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
            c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            c.write_all(ask.as_bytes()).unwrap();
            let mut b = Vec::new();
            let _ = c.read_to_end(&mut b);
            let answer = String::from_utf8_lossy(&b).into_owned();
            // (The server's answer gets the persistence cookie.)
            out.push(answer.lines().next().unwrap_or_default().to_string());
            if i < 2 {
                out.push(answer);
            }
            let l = log.nth_after("]: l/", i);
            out.push(l);
        }
        out
    });
    assert_eq!(
        got[1],
        "HTTP/1.1 302 Found\r\ncache-control: no-cache\r\ncontent-length: 0\r\nlocation: http://img.example.com/x/y?z=1\r\nconnection: close\r\n\r\n"
    );
    assert_eq!(got[2], "a -1 302 LCNN \"GET /x/y?z=1 HTTP/1.1\"");
    assert_eq!(got[6], "HTTP/1.1 200 OK");
}
