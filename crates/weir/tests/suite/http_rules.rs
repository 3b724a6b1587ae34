//! ACLs and HTTP rules through the real binary: `use_backend` routing,
//! `http-request` deny/return/redirect/header and URI rewrites/variables,
//! `http-response` edits, and configuration errors in rules.

use crate::common::http::{Client, Origin};
use crate::common::*;

fn two_backends(fe_rules: &str, be_a: &str) -> (Weir, u16, Origin, Origin) {
    let a = Origin::start("a");
    let b = Origin::start("b");
    let port = free_port();
    let cfg = format!(
        "global\n    nbthread 1\ndefaults\n    mode http\n    timeout connect 1s\n    timeout client 10s\n    timeout server 10s\n\
         frontend fe\n    bind 127.0.0.1:{port}\n{fe_rules}\n    default_backend be_a\n\
         backend be_a\n{be_a}\n    server sa 127.0.0.1:{}\n\
         backend be_b\n    server sb 127.0.0.1:{}\n",
        a.port(),
        b.port()
    );
    (Weir::start(&cfg, port), port, a, b)
}

#[test]
fn use_backend_follows_acls() {
    let (_w, port, _a, _b) = two_backends(
        "    acl is_api path_beg /api\n    acl host_b hdr(host) -i -m dom b.example\n    use_backend be_b if is_api || host_b\n    use_backend be_b if { url_param(to) b }",
        "",
    );
    let mut c = Client::connect(port);
    assert_eq!(c.get("/api/x").field("server").as_deref(), Some("b"));
    assert_eq!(c.get("/other").field("server").as_deref(), Some("a"));
    assert_eq!(c.get("/other?to=b").field("server").as_deref(), Some("b"));
    c.send(b"GET / HTTP/1.1\r\nHost: www.B.Example\r\n\r\n");
    assert_eq!(c.response("GET").field("server").as_deref(), Some("b"));
}

#[test]
fn use_backend_with_a_dynamic_name() {
    let (_w, port, _a, _b) = two_backends(
        "    use_backend be_%[req.hdr(x-to),lower] if { req.hdr(x-to) -m found }",
        "",
    );
    let mut c = Client::connect(port);
    for (to, server) in [("B", "b"), ("a", "a"), ("nowhere", "a")] {
        c.send(format!("GET / HTTP/1.1\r\nX-To: {to}\r\n\r\n").as_bytes());
        assert_eq!(
            c.response("GET").field("server").as_deref(),
            Some(server),
            "x-to: {to}"
        );
    }
    assert_eq!(c.get("/").field("server").as_deref(), Some("a"));
}

#[test]
fn buffered_bodies_are_seen_by_rules() {
    let (_w, port, a, _b) = two_backends(
        "    option http-buffer-request\n    timeout http-request 300ms\n\
         \x20   http-request deny if { req.body -m sub secret }\n\
         \x20   use_backend be_b if { req.body_param(to) b }",
        "",
    );
    // Denied on the body's content; nothing reaches a server.
    let mut c = Client::connect(port);
    c.send(b"POST /f HTTP/1.1\r\nContent-Length: 14\r\n\r\nmy secret body");
    assert_eq!(c.response("POST").status, 403);
    assert!(a.seen.lock().unwrap().is_empty());
    // A chunked form body routes, and arrives intact.
    let mut c = Client::connect(port);
    c.send(b"POST /f HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nx=1&t\r\n5\r\no=b&y\r\n0\r\n\r\n");
    let r = c.response("POST");
    assert_eq!(r.field("server").as_deref(), Some("b"));
    assert_eq!(r.field("body_len").as_deref(), Some("10"));
    // An `Expect: 100-continue` client gets weir's go-ahead.
    let mut c = Client::connect(port);
    c.send(b"POST /f HTTP/1.1\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n");
    assert_eq!(c.response("POST").status, 100);
    c.send(b"to=a");
    let r = c.response("POST");
    assert_eq!((r.status, r.field("server").as_deref()), (200, Some("a")));
    assert!(
        !r.text().to_ascii_lowercase().contains("expect:"),
        "{}",
        r.text()
    );
    // A body that never completes gets 408 when timeout http-request ends.
    let mut c = Client::connect(port);
    c.send(b"POST /f HTTP/1.1\r\nContent-Length: 10\r\n\r\nhalf");
    assert_eq!(c.response("POST").status, 408);
    assert!(c.closed());
}

#[test]
fn wait_for_body_then_rules_see_it() {
    let (_w, port, _a, b) = two_backends(
        "    http-request wait-for-body time 2s at-least 6\n\
         \x20   use_backend be_b if { req.body -m beg urgent }",
        "",
    );
    let mut c = Client::connect(port);
    // Head alone first: the rule waits for six bytes of the body.
    c.send(b"POST /w HTTP/1.1\r\nContent-Length: 12\r\n\r\n");
    c.send(b"urgent");
    c.send(b" work");
    c.send(b"!");
    let r = c.response("POST");
    assert_eq!(
        (r.field("server").as_deref(), r.field("body_len").as_deref()),
        (Some("b"), Some("12"))
    );
    assert_eq!(b.seen.lock().unwrap()[0].body, b"urgent work!");
    // Without a body, nothing waits.
    assert_eq!(c.get("/").field("server").as_deref(), Some("a"));
    let (code, _, err) = check_cfg(
        "defaults\n    mode http\n    timeout client 1s\n    timeout server 1s\n    timeout connect 1s\n\
         frontend f\n    bind :0\n    http-request wait-for-body at-least 3\n",
    );
    assert_ne!(code, 0);
    assert!(
        err.contains(":7]") && err.contains("expects 'time <time>'"),
        "{err}"
    );
}

#[test]
fn wait_for_body_in_time_or_408_and_504() {
    use std::io::{BufRead, Write};
    // A server whose responses' bodies come slowly: `/whole` in two pieces
    // 100 ms apart, `/stall` never whole.
    let server = Server::start(|c| {
        let mut w = c.try_clone().unwrap();
        let mut r = std::io::BufReader::new(c);
        let mut line = String::new();
        let _ = r.read_line(&mut line);
        loop {
            let mut h = String::new();
            if r.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
                break;
            }
        }
        let _ = w.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n12345");
        std::thread::sleep(std::time::Duration::from_millis(100));
        if line.contains("/whole") {
            let _ = w.write_all(b"67890");
        } else {
            std::thread::sleep(std::time::Duration::from_millis(900));
        }
    });
    let port = free_port();
    let cfg = format!(
        "defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         frontend fe\n    bind 127.0.0.1:{port}\n    http-request wait-for-body time 300ms if {{ path /post }}\n\
         \x20   default_backend be\n\
         backend be\n    http-response wait-for-body time 400ms if {{ status 200 }}\n\
         \x20   server s 127.0.0.1:{}\n",
        server.port()
    );
    let _w = Weir::start(&cfg, port);
    let r = Client::connect(port).get("/whole");
    assert_eq!((r.status, r.body.as_slice()), (200, &b"1234567890"[..]));
    assert_eq!(Client::connect(port).get("/stall").status, 504);
    // A request body that does not come in time: 408.
    let mut c = Client::connect(port);
    c.send(b"POST /post HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\nhalf");
    assert_eq!(c.response("POST").status, 408);
}

#[test]
fn userlist_auth_and_groups() {
    let port = free_port();
    // bob's password is "Hello world!" (SHA-256 crypt test vector).
    let cfg = format!(
        "userlist admins\n    group ops users bob\n    user alice insecure-password s3cret\n\
         \x20   user bob password $5$saltstring$5B8vYYiY.CVt1RlTTf8KbXBH3hsxY/GNooZaBBGWEc5\n\
         defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         frontend fe\n    bind 127.0.0.1:{port}\n    acl ok http_auth(admins)\n    acl ops http_auth_group(admins) ops\n\
         \x20   http-request auth realm Admin if !ok\n\
         \x20   http-request return status 200 content-type text/plain lf-string \"ops %[http_auth_user]\" if ops\n\
         \x20   http-request return status 200 content-type text/plain lf-string \"user %[http_auth_user]\"\n"
    );
    let _w = Weir::start(&cfg, port);
    let get = |auth: Option<&str>| {
        let mut c = Client::connect(port);
        let h = auth.map_or(String::new(), |a| format!("Authorization: Basic {a}\r\n"));
        c.send(format!("GET / HTTP/1.1\r\n{h}\r\n").as_bytes());
        c.response("GET")
    };
    let r = get(None);
    assert_eq!(r.status, 401);
    assert_eq!(r.header("www-authenticate"), Some("Basic realm=\"Admin\""));
    // alice:s3cret, bob:Hello world!, bob:wrong
    assert_eq!(get(Some("YWxpY2U6czNjcmV0")).text(), "user alice");
    assert_eq!(get(Some("Ym9iOkhlbGxvIHdvcmxkIQ==")).text(), "ops bob");
    assert_eq!(get(Some("Ym9iOndyb25n")).status, 401);
    // Unknown userlists and hashes weir cannot check are refused by line.
    let (code, _, err) = check_cfg(
        "userlist u\n    user x password $1$ab$cd\n\
         defaults\n    mode http\n    timeout client 1s\n    timeout server 1s\n    timeout connect 1s\n\
         frontend f\n    bind :0\n    http-request auth if !{ http_auth(nope) }\n",
    );
    assert_ne!(code, 0);
    assert!(
        err.contains(":2]") && err.contains("unsupported password hash"),
        "{err}"
    );
    assert!(
        err.contains(":9]") && err.contains("no such userlist 'nope'"),
        "{err}"
    );
}

#[test]
fn deny_return_and_redirect() {
    let (_w, port, a, _b) = two_backends(
        "    http-request deny deny_status 429 if { path /limited }\n    http-request deny if { src 127.0.0.0/8 } { path_beg /admin }\n\
         \x20   http-request return status 200 content-type text/plain string pong hdr X-Ret yes if { path /ping }\n\
         \x20   http-request redirect location /new code 301 if { path /old }\n\
         \x20   http-request redirect scheme https if { path /secure }\n\
         \x20   redirect prefix /v2 drop-query if { path_beg /v1 }",
        "",
    );
    let mut c = Client::connect(port);
    let r = c.get("/ping");
    assert_eq!(
        (r.status, r.text().as_str(), r.header("x-ret")),
        (200, "pong", Some("yes"))
    );
    // A return keeps the connection.
    let r = c.get("/old");
    assert_eq!((r.status, r.header("location")), (301, Some("/new")));
    let r = c.get("/v1/x?q=1");
    assert_eq!((r.status, r.header("location")), (302, Some("/v2/v1/x")));
    let r = c.get("/secure?a=b");
    assert_eq!(r.header("location"), Some("https://t/secure?a=b"));
    let r = c.get("/limited");
    assert_eq!(r.status, 429);
    // The connection carries the next request after a deny, as haproxy's.
    assert_eq!(r.header("connection"), None, "{}", r.head);
    assert_eq!(c.get("/ping").status, 200);
    let r = Client::connect(port).get("/admin/x");
    assert_eq!(r.status, 403);
    assert!(r
        .text()
        .contains("Request forbidden by administrative rules."));
    // Nothing denied or answered locally reached the server.
    assert!(a.seen.lock().unwrap().is_empty());
    assert_eq!(Client::connect(port).get("/fine").status, 200);
}

#[test]
fn request_rewrites_and_variables() {
    let (_w, port, a, _b) = two_backends(
        "    http-request set-var(txn.host) hdr(host),lower\n\
         \x20   http-request set-header X-Host %[var(txn.host)]\n\
         \x20   http-request add-header X-Src %[src]\n\
         \x20   http-request del-header X-Secret\n\
         \x20   http-request replace-header User-Agent ^curl/(.*)$ client/\\1\n\
         \x20   http-request set-path /rewritten%[path] if { path_beg /p }\n\
         \x20   http-request set-query a=1 if { path_end /q }\n\
         \x20   http-request set-method POST if { path /m }",
        "    http-request set-header X-Backend be_a",
    );
    let mut c = Client::connect(port);
    c.send(b"GET /p/x?k=v HTTP/1.1\r\nHost: EX.com\r\nX-Secret: s\r\nUser-Agent: curl/8.0\r\n\r\n");
    let r = c.response("GET");
    let head = a.seen.lock().unwrap()[0].head.clone();
    assert!(
        head.starts_with("GET /rewritten/p/x?k=v HTTP/1.1\r\n"),
        "{head}"
    );
    assert!(head.contains("X-Host: ex.com\r\n"), "{head}");
    assert!(head.contains("X-Src: 127.0.0.1\r\n"), "{head}");
    assert!(head.contains("User-Agent: client/8.0\r\n"), "{head}");
    assert!(head.contains("X-Backend: be_a\r\n"), "{head}");
    assert!(!head.contains("X-Secret"), "{head}");
    assert_eq!(r.status, 200);
    c.get("/z/q?old=1");
    c.get("/m");
    let seen = a.seen.lock().unwrap();
    assert!(
        seen[1].head.starts_with("GET /z/q?a=1 HTTP/1.1"),
        "{}",
        seen[1].head
    );
    assert!(
        seen[2].head.starts_with("POST /m HTTP/1.1"),
        "{}",
        seen[2].head
    );
}

#[test]
fn response_rules() {
    let (_w, port, _a, _b) = two_backends(
        "    http-response set-header X-Front 1\n    http-after-response add-header X-After done",
        "    http-response del-header X-Server\n    http-response set-status 201 if { status 200 } { path /created }\n    http-response deny if { path /hide }\n    http-response redirect location /moved/%[status] code 307 if { path /old }\n    http-response redirect location %[res.hdr(x-none)] ignore-empty if { path /plain }",
    );
    let mut c = Client::connect(port);
    let r = c.get("/created");
    assert_eq!(r.status, 201);
    assert_eq!(r.header("x-front"), Some("1"));
    assert_eq!(r.header("x-after"), Some("done"));
    assert_eq!(r.header("x-server"), None);
    let r = c.get("/plain");
    assert_eq!(r.status, 200);
    // A response redirect replaces the server's answer (its formats see
    // the response); an empty location with ignore-empty redirects nothing.
    let r = Client::connect(port).get("/old");
    assert_eq!((r.status, r.header("location")), (307, Some("/moved/200")));
    assert_eq!(r.header("x-after"), Some("done"));
    let r = c.get("/hide");
    assert_eq!(r.status, 502);
    // The client's connection carries the next request, as haproxy's.
    assert_eq!(c.get("/created").status, 201);
}

#[test]
fn rule_errors_name_their_line() {
    let port = free_port();
    let cfg = format!(
        "defaults\n    mode http\n    timeout client 1s\n    timeout server 1s\n    timeout connect 1s\n\
         frontend fe\n    bind 127.0.0.1:{port}\n    use_backend be if missing_acl\n    acl bad path_reg (\n    http-request frobnicate\n    http-request deny if {{ nope_fetch x }}\n    http-request deny if {{ var(txn.x) a }}\n    default_backend be\n\
         backend be\n    server s 127.0.0.1:1\n"
    );
    let (code, _, err) = check_cfg(&cfg);
    assert_ne!(code, 0);
    for (line, what) in [
        (8, "no such ACL : 'missing_acl'"),
        (9, "invalid regex"),
        (10, "frobnicate"),
        (11, "unknown fetch method 'nope_fetch'"),
        (12, "matching method must be specified first (using '-m')"),
    ] {
        assert!(
            err.lines()
                .any(|l| l.contains(&format!(":{line}]")) && l.contains(what)),
            "line {line} '{what}' not in:\n{err}"
        );
    }
}

/// A configuration balancing with `balance` over four origins named
/// `s0` to `s3`, on a fresh port.
fn four_servers_cfg(balance: &str) -> (String, u16, Vec<Origin>) {
    let names = ["s0", "s1", "s2", "s3"];
    let origins: Vec<Origin> = names.iter().map(|n| Origin::start(n)).collect();
    let port = free_port();
    let servers: String = origins
        .iter()
        .zip(names)
        .map(|(o, n)| format!("    server {n} 127.0.0.1:{}\n", o.port()))
        .collect();
    let cfg =
        crate::common::http::http_cfg(port, "", "", &format!("    balance {balance}\n{servers}"));
    (cfg, port, origins)
}

fn four_servers(balance: &str) -> (Weir, u16, Vec<Origin>) {
    let (cfg, port, origins) = four_servers_cfg(balance);
    (Weir::start(&cfg, port), port, origins)
}

fn server_of(port: u16, req: &str) -> String {
    let mut c = Client::connect(port);
    c.send(req.as_bytes());
    c.response("GET").field("server").unwrap_or_default()
}

#[test]
fn http_hash_balancing() {
    let (_w, port, _o) = four_servers("uri");
    for path in ["/a", "/b/c", "/d?x=1"] {
        let first = server_of(port, &format!("GET {path} HTTP/1.1\r\nHost: t\r\n\r\n"));
        for _ in 0..4 {
            assert_eq!(
                server_of(port, &format!("GET {path} HTTP/1.1\r\nHost: t\r\n\r\n")),
                first,
                "{path}"
            );
        }
    }
    // Without `whole` the query is not hashed.
    let a = server_of(port, "GET /q?x=1 HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_eq!(server_of(port, "GET /q?x=2 HTTP/1.1\r\nHost: t\r\n\r\n"), a);
    let spread: std::collections::HashSet<String> = (0..40)
        .map(|i| server_of(port, &format!("GET /p{i} HTTP/1.1\r\nHost: t\r\n\r\n")))
        .collect();
    assert!(spread.len() >= 3, "uri hashing spreads: {spread:?}");

    let (_w2, port, _o2) = four_servers("url_param user");
    let u = server_of(port, "GET /x?user=alice HTTP/1.1\r\nHost: t\r\n\r\n");
    for _ in 0..4 {
        assert_eq!(
            server_of(port, "GET /y?a=b&user=alice HTTP/1.1\r\nHost: t\r\n\r\n"),
            u
        );
    }
    // No parameter: round robin over the four.
    let rr: std::collections::HashSet<String> = (0..4)
        .map(|_| server_of(port, "GET /x HTTP/1.1\r\nHost: t\r\n\r\n"))
        .collect();
    assert_eq!(rr.len(), 4, "{rr:?}");

    let (_w3, port, _o3) = four_servers("hdr(host) use_domain_only");
    let h = server_of(port, "GET / HTTP/1.1\r\nHost: www.example.com\r\n\r\n");
    assert_eq!(
        server_of(
            port,
            "GET /z HTTP/1.1\r\nHost: api.example.org:8080\r\n\r\n"
        ),
        h
    );
}

#[test]
fn balance_hash_hashes_an_expression_as_haproxy() {
    let picks = beside_haproxy(|start| {
        let (cfg, port, _origins) = four_servers_cfg("hash req.hdr(x-user),lower");
        let _p = start(&cfg, port);
        let of = |user: &str| {
            server_of(
                port,
                &format!("GET / HTTP/1.1\r\nHost: t\r\nx-user: {user}\r\n\r\n"),
            )
        };
        let picks: Vec<String> = (0..16).map(|i| of(&format!("user{i}"))).collect();
        // The converter applies: case does not move a user.
        assert_eq!(of("USER3"), picks[3]);
        picks
    });
    let spread: std::collections::HashSet<&String> = picks.iter().collect();
    assert!(spread.len() >= 3, "{picks:?}");
    // In mode tcp it hashes the expression on the connection: one
    // source, one server, haproxy's.
    let names = ["s1", "s2", "s3"];
    let servers: Vec<Server> = names.iter().map(|n| Server::named(n)).collect();
    let picks = beside_haproxy(|start| {
        let port = free_port();
        let mut cfg = format!(
            "defaults\n    mode tcp\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
             listen l\n    bind 127.0.0.1:{port}\n    balance hash src\n"
        );
        for (n, s) in names.iter().zip(&servers) {
            cfg.push_str(&format!("    server {n} {}\n", s.addr));
        }
        let _p = start(&cfg, port);
        (0..4)
            .map(|_| {
                let mut c = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
                c.set_read_timeout(Some(std::time::Duration::from_secs(5)))
                    .unwrap();
                let mut got = String::new();
                let _ = std::io::Read::read_to_string(&mut c, &mut got);
                got
            })
            .collect::<Vec<_>>()
    });
    assert!(
        picks.iter().all(|p| p == &picks[0] && !p.is_empty()),
        "{picks:?}"
    );
}

fn cookie_backend(cookie: &str) -> (Weir, u16, Origin, Origin) {
    let a = Origin::start("a");
    let b = Origin::start("b");
    let port = free_port();
    let be = format!(
        "    balance roundrobin\n    cookie {cookie}\n    server sa 127.0.0.1:{} cookie ca\n    server sb 127.0.0.1:{} cookie cb",
        a.port(),
        b.port()
    );
    let cfg = crate::common::http::http_cfg(port, "", "", &be);
    (Weir::start(&cfg, port), port, a, b)
}

#[test]
fn cookie_insert_persistence() {
    let (_w, port, a, b) = cookie_backend("SRV insert indirect nocache httponly");
    let mut c = Client::connect(port);
    let r = c.get("/first");
    let set = r.header("set-cookie").unwrap_or_default().to_string();
    let server = r.field("server").unwrap();
    let value = if server == "a" { "ca" } else { "cb" };
    assert_eq!(set, format!("SRV={value}; path=/; HttpOnly"));
    assert_eq!(r.header("cache-control"), Some("private"));
    // Roundrobin would alternate; the cookie pins every request.
    for i in 0..6 {
        c.send(
            format!("GET /n{i} HTTP/1.1\r\nHost: t\r\nCookie: lang=fr; SRV={value}\r\n\r\n")
                .as_bytes(),
        );
        let r = c.response("GET");
        assert_eq!(r.field("server").as_deref(), Some(server.as_str()));
        assert_eq!(r.header("set-cookie"), None, "indirect: not set again");
    }
    // indirect: the server never sees the persistence cookie.
    let origin = if server == "a" { &a } else { &b };
    let heads: Vec<String> = origin
        .seen
        .lock()
        .unwrap()
        .iter()
        .map(|s| s.head.clone())
        .collect();
    assert!(
        heads
            .iter()
            .skip(1)
            .all(|h| h.contains("Cookie: lang=fr\r\n") && !h.contains("SRV=")),
        "{heads:?}"
    );
    // An unknown value is balanced again and gets a new cookie; the server
    // does not see it either.
    c.send(b"GET /bad HTTP/1.1\r\nHost: t\r\nCookie: SRV=zz\r\n\r\n");
    let r = c.response("GET");
    assert!(r
        .header("set-cookie")
        .is_some_and(|v| v.starts_with("SRV=c")));
    let seen = [&a, &b].map(|o| o.seen.lock().unwrap().clone());
    let bad = seen
        .iter()
        .flatten()
        .find(|s| s.head.starts_with("GET /bad "));
    assert!(bad.is_some_and(|s| !s.head.contains("SRV=")), "{bad:?}");
}

#[test]
fn cookie_prefix_and_rewrite() {
    let (_w, port, a, b) = cookie_backend("JSESSIONID prefix");
    let mut c = Client::connect(port);
    let r = c.get("/setcookie");
    let server = r.field("server").unwrap();
    let value = if server == "a" { "ca" } else { "cb" };
    assert_eq!(
        r.header("set-cookie"),
        Some(format!("JSESSIONID={value}~abc; Path=/").as_str())
    );
    for _ in 0..3 {
        c.send(
            format!("GET /again HTTP/1.1\r\nHost: t\r\nCookie: JSESSIONID={value}~abc\r\n\r\n")
                .as_bytes(),
        );
        assert_eq!(
            c.response("GET").field("server").as_deref(),
            Some(server.as_str())
        );
    }
    let origin = if server == "a" { &a } else { &b };
    let last = origin.seen.lock().unwrap().last().unwrap().head.clone();
    assert!(last.contains("Cookie: JSESSIONID=abc\r\n"), "{last}");

    let (_w2, port, _a2, _b2) = cookie_backend("JSESSIONID rewrite");
    let r = Client::connect(port).get("/setcookie");
    let v = if r.field("server").as_deref() == Some("a") {
        "ca"
    } else {
        "cb"
    };
    assert_eq!(
        r.header("set-cookie"),
        Some(format!("JSESSIONID={v}; Path=/").as_str())
    );
}

#[test]
fn monitor_captures_unique_id_and_samples_in_logs() {
    let o = Origin::start("a");
    let port = free_port();
    let cfg = format!(
        "global\n    nbthread 1\n    log stdout format raw local0\ndefaults\n    mode http\n    log global\n    timeout connect 1s\n    timeout client 10s\n    timeout server 10s\n\
         frontend fe\n    bind 127.0.0.1:{port}\n    monitor-uri /alive\n    option originalto\n\
         \x20   capture request header Host len 8\n    capture request header User-Agent len 20\n    capture response header X-Server len 10\n\
         \x20   unique-id-format %{{+X}}o\\ %ci:%cp_%rt\n    unique-id-header X-Req-Id\n\
         \x20   log-format \"%ci [%ID] %ST %hr %hs %[req.hdr(host),lower] %{{+Q}}[path] %[res.hdr(x-server)]\"\n\
         \x20   default_backend be\nbackend be\n    server s 127.0.0.1:{}\n",
        o.port()
    );
    let w = Weir::start(&cfg, port);
    let mut c = Client::connect(port);
    let r = c.get("/alive");
    assert_eq!((r.status, r.text().contains("Service ready.")), (200, true));
    c.send(b"GET /logged HTTP/1.1\r\nHost: Example.COM:8080\r\nUser-Agent: test-agent\r\n\r\n");
    let r = c.response("GET");
    let head = o.seen.lock().unwrap()[0].head.clone();
    assert!(head.contains("X-Original-To: 127.0.0.1\r\n"), "{head}");
    let id_line = head
        .lines()
        .find(|l| l.starts_with("X-Req-Id: "))
        .unwrap_or_default()
        .to_string();
    let id = id_line.trim_start_matches("X-Req-Id: ").to_string();
    assert!(id.starts_with("127.0.0.1:") && id.ends_with("_1"), "{id}");
    assert_eq!(r.status, 200);
    let line = w.wait_output("/logged", std::time::Duration::from_secs(5));
    let line = line
        .lines()
        .find(|l| l.contains("/logged"))
        .unwrap()
        .to_string();
    assert_eq!(
        line,
        format!(
            "127.0.0.1 [{id}] 200 {{Example.|test-agent}} {{a}} example.com:8080 \"/logged\" a"
        )
    );
    // The monitor request was not logged.
    assert!(!w.stdout().contains("/alive"));
}

#[test]
fn retry_on_status_redispatches() {
    let bad = Server::start(|c| {
        use std::io::{BufRead, BufReader, Write};
        let mut w = c.try_clone().unwrap();
        let mut r = BufReader::new(c);
        let mut line = String::new();
        while r.read_line(&mut line).is_ok_and(|n| n > 0) {
            if line == "\r\n" {
                let _ =
                    w.write_all(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n");
            }
            line.clear();
        }
    });
    let good = Origin::start("good");
    let port = free_port();
    let be = format!(
        "    balance roundrobin\n    retries 2\n    option redispatch\n    retry-on 503 empty-response\n    server bad 127.0.0.1:{}\n    server good 127.0.0.1:{}",
        bad.port(),
        good.port()
    );
    let _w = Weir::start(&crate::common::http::http_cfg(port, "", "", &be), port);
    for _ in 0..4 {
        let r = Client::connect(port).get("/r");
        assert_eq!(r.status, 200);
        assert_eq!(r.field("server").as_deref(), Some("good"));
    }
    assert!(
        bad.accepted.load(std::sync::atomic::Ordering::Relaxed) >= 1,
        "the bad server was tried"
    );
}

#[test]
fn normalize_uri_rewrites_and_strict_refuses() {
    let (_w, port, a, _b) = two_backends(
        "    http-request normalize-uri percent-decode-unreserved strict\n    http-request normalize-uri path-strip-dot",
        "",
    );
    let mut c = Client::connect(port);
    assert_eq!(c.get("/%61dmin/./x").status, 200);
    assert!(a.seen.lock().unwrap()[0]
        .head
        .starts_with("GET /admin/x HTTP/1.1"));
    let mut c = Client::connect(port);
    assert_eq!(c.get("/%ZZ").status, 400);
    assert!(c.closed());
    assert_eq!(a.seen.lock().unwrap().len(), 1);
}

#[test]
fn set_timeout_changes_one_exchange() {
    // `set-timeout server` bounds this exchange's wait for the server (a
    // 504 after 300 ms, not the backend's 10 s), and the fetches show the
    // timeout in force and the backend's own.
    let (_w, port, _a, _b) = two_backends(
        "",
        "    http-request set-timeout server 300ms if { req.hdr(x-short) -m found }\n    http-response set-header t %[cur_server_timeout]/%[be_server_timeout]",
    );
    let mut c = Client::connect(port);
    assert_eq!(c.get("/x").header("t"), Some("10000/10000"));
    let started = std::time::Instant::now();
    c.send(b"GET /slow?ms=3000 HTTP/1.1\r\nHost: t\r\nx-short: 1\r\n\r\n");
    assert_eq!(c.response("GET").status, 504);
    assert!(started.elapsed() < std::time::Duration::from_millis(2500));
    let mut c = Client::connect(port);
    c.send(b"GET /fast HTTP/1.1\r\nHost: t\r\nx-short: 1\r\n\r\n");
    assert_eq!(c.response("GET").header("t"), Some("300/10000"));
    // Only a section with a backend has a server to time out.
    let (code, _, err) = check_cfg(
        "defaults\n    mode http\nfrontend fe\n    bind 127.0.0.1:1\n    http-request set-timeout server 1s\n",
    );
    assert_ne!(code, 0);
    assert!(
        err.contains(":5") && err.contains("backend capabilities"),
        "{err}"
    );
}

#[test]
fn fragments_only_with_accept_invalid_http_request() {
    // A fragment is refused (400) unless the frontend accepts invalid
    // requests; then a rule may strip it or it goes to the server as it is.
    let (_w, port, a, _b) = two_backends("", "");
    for bad in ["/x#frag", "/a{b", "/a|b", "/a\"b", "/a^b"] {
        let mut c = Client::connect(port);
        assert_eq!(c.get(bad).status, 400, "{bad}");
    }
    assert!(a.seen.lock().unwrap().is_empty());
    let (_w, port, a, _b) = two_backends(
        "    option accept-invalid-http-request\n    http-request normalize-uri fragment-strip if { path_beg /strip }",
        "",
    );
    let mut c = Client::connect(port);
    assert_eq!(c.get("/strip#frag").status, 200);
    assert_eq!(c.get("/keep#frag").status, 200);
    assert_eq!(c.get("/a{b}").status, 200);
    let seen = a.seen.lock().unwrap();
    assert!(
        seen[0].head.starts_with("GET /strip HTTP/1.1"),
        "{}",
        seen[0].head
    );
    assert!(
        seen[1].head.starts_with("GET /keep#frag HTTP/1.1"),
        "{}",
        seen[1].head
    );
}

/// A cookie date as HAProxy writes it: Unix seconds / 4 in five base64
/// digits.
fn cookie_date(secs: u64) -> String {
    const B64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let v = secs / 4;
    (0..5)
        .map(|i| B64[((v >> (6 * (4 - i))) & 63) as usize] as char)
        .collect()
}

fn undate(d: &str) -> u64 {
    const B64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    d.bytes().fold(0, |a, c| {
        a << 6 | B64.iter().position(|&x| x == c).unwrap() as u64
    }) * 4
}

#[test]
fn cookie_maxidle_and_maxlife_dates() {
    let (_w, port, _a, _b) = cookie_backend("SRV insert maxidle 1h maxlife 2h");
    let now = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs()
    };
    // The cookie's (server, last, first) from a response.
    let dates = |r: &crate::common::http::Response| -> (String, u64, u64) {
        let set = r.header("set-cookie").expect("a set-cookie").to_string();
        let v = set
            .strip_prefix("SRV=")
            .and_then(|v| v.split(';').next())
            .unwrap()
            .to_string();
        let p: Vec<&str> = v.split('|').collect();
        assert_eq!(p.len(), 3, "{set}");
        (p[0].to_string(), undate(p[1]), undate(p[2]))
    };
    let close = |t: u64| t.abs_diff(now()) <= 8;
    let (srv, last, first) = dates(&Client::connect(port).get("/"));
    assert!(close(last) && close(first));
    let with = |cookie: String| {
        let mut c = Client::connect(port);
        c.send(format!("GET / HTTP/1.1\r\nCookie: SRV={cookie}\r\n\r\n").as_bytes());
        c.response("GET")
    };
    // Seen a minute ago, first an hour ago: kept, last-seen refreshed.
    let n = now();
    let r = with(format!(
        "{srv}|{}|{}",
        cookie_date(n - 60),
        cookie_date(n - 3600)
    ));
    let (s2, last, first) = dates(&r);
    assert_eq!(s2, srv);
    assert!(close(last));
    assert_eq!(first, (n - 3600) / 4 * 4);
    // Idle over an hour, or first seen over two: a new cookie from now.
    for cookie in [
        format!("{srv}|{}|{}", cookie_date(n - 7000), cookie_date(n - 7000)),
        format!("{srv}|{}|{}", cookie_date(n - 10), cookie_date(n - 9000)),
    ] {
        let (_, last, first) = dates(&with(cookie.clone()));
        assert!(close(last) && close(first), "{cookie}");
    }
    let (code, _, err) = check_cfg(
        "defaults\n    mode http\n    timeout client 1s\n    timeout server 1s\n    timeout connect 1s\n\
         backend b\n    cookie S rewrite maxidle 10\n    server s 127.0.0.1:1\n",
    );
    assert_ne!(code, 0);
    assert!(
        err.contains(":7]") && err.contains("'insert' cookies only"),
        "{err}"
    );
}

#[test]
fn header_names_outside_the_token_subset_can_be_refused() {
    // `option http-restrict-req-hdr-names reject` in the backend: after
    // its rules, a request with `_` in a header name gets a 403.
    let (_w, port, a, _b) = two_backends("", "    option http-restrict-req-hdr-names reject");
    let mut c = Client::connect(port);
    c.send(b"GET /ok HTTP/1.1\r\nHost: a\r\nX-Fine: 1\r\n\r\n");
    assert_eq!(c.response("GET").status, 200);
    let mut c = Client::connect(port);
    c.send(b"GET /no HTTP/1.1\r\nHost: a\r\nX_Odd: 1\r\n\r\n");
    let r = c.response("GET");
    assert_eq!(r.status, 403);
    assert_eq!(
        a.seen.lock().unwrap().len(),
        1,
        "the refused one never reached the server"
    );
    // As after a deny (and in haproxy's reg-test), the connection stays.
    assert_eq!(r.header("connection"), None);
    c.send(b"GET /ok2 HTTP/1.1\r\nHost: a\r\n\r\n");
    assert_eq!(c.response("GET").status, 200);
}

/// Two clients of listen `px` on `port`, each with two requests, reach
/// `a` as `<NOSRV>`, over one server connection each.
fn one_address_per_client(port: u16, a: &Origin, log: &Syslog) {
    for _ in 0..2 {
        let mut c = Client::connect(port);
        assert_eq!(c.get("/one").field("server").as_deref(), Some("a"));
        assert_eq!(c.get("/two").status, 200);
    }
    log.wait_line("px px/<NOSRV> ", std::time::Duration::from_secs(5));
    assert_eq!(a.connections(), 2, "one server connection per client");
}

#[test]
fn dispatch_sends_everything_to_one_address() {
    // `dispatch`: no server to choose; the log names none (`<NOSRV>`), the
    // statistics show none, and a connection serves only its client.
    let a = Origin::start("a");
    let log = Syslog::start();
    let port = free_port();
    let sock = tempdir("dispatch").join("s.sock");
    let cfg = format!(
        "global\n    stats socket {}\n\
         defaults\n    mode http\n    option httplog\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         listen px\n    bind 127.0.0.1:{port}\n    log 127.0.0.1:{} local0\n    dispatch 127.0.0.1:{}\n",
        sock.display(),
        log.port(),
        a.port()
    );
    let _w = Weir::start(&cfg, port);
    one_address_per_client(port, &a, &log);
    let stat = ask(&sock, "show stat\n");
    assert!(!stat.contains("NOSRV"), "{stat}");
    assert!(stat.contains("\npx,BACKEND,"), "{stat}");
    // Beside `server` lines it is refused, with its line.
    let (code, _, err) = check_cfg(
        "defaults\n    mode http\nbackend b\n    server s 127.0.0.1:1\n    dispatch 127.0.0.1:2\n",
    );
    assert_ne!(code, 0);
    assert!(err.contains(":5") && err.contains("dispatch"), "{err}");
}

#[test]
fn option_transparent_connects_to_the_destination_the_rules_leave() {
    // `option transparent` without servers: the client's destination,
    // here changed to the origin's port by `set-dst-port`; logged as
    // `<NOSRV>`, one server connection per client.
    let a = Origin::start("a");
    let log = Syslog::start();
    let port = free_port();
    let cfg = format!(
        "defaults\n    mode http\n    option httplog\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         listen px\n    bind 127.0.0.1:{port}\n    log 127.0.0.1:{} local0\n    option transparent\n\
         \x20   http-request set-dst-port int({})\n",
        log.port(),
        a.port()
    );
    let _w = Weir::start(&cfg, port);
    one_address_per_client(port, &a, &log);
    // Beside `server` lines it is refused, with the section's line; in a
    // frontend it is ignored with a warning, as haproxy does.
    let (code, _, err) = check_cfg(
        "defaults\n    mode http\nbackend b\n    option transparent\n    server s 127.0.0.1:1\n",
    );
    assert_ne!(code, 0);
    assert!(
        err.contains(":3") && err.contains("option transparent"),
        "{err}"
    );
    let (code, _, err) = check_cfg(
        "defaults\n    mode http\nfrontend f\n    bind 127.0.0.1:1\n    option transparent\n    http-request deny\n",
    );
    assert_eq!(code, 0, "{err}");
    assert!(err.contains(":5") && err.contains("ignored"), "{err}");
}

/// `monitor-uri` compared as haproxy 2.6 does: a path with the target's
/// path (an absolute-form target's too, its query counting), an absolute
/// URI with the whole target.
#[test]
fn monitor_uri_matches_as_haproxy() {
    let cfg = |p1: u16, p2: u16| {
        format!(
            "defaults\n    mode http\n    timeout connect 1s\n    timeout client 1s\n    timeout server 1s\n\
             frontend fe1\n    bind 127.0.0.1:{p1}\n    monitor-uri /health\n\
             frontend fe2\n    bind 127.0.0.1:{p2}\n    monitor-uri http://www.haproxy.org/health\n"
        )
    };
    let targets = [
        "/health",
        "/health?x=1",
        "/hEAlth",
        "/health/",
        "http://www.haproxy.org/health",
        "http://h/health?x=1",
        "http://h",
    ];
    let statuses = |p1: u16, p2: u16| -> Vec<String> {
        let mut out = Vec::new();
        for port in [p1, p2] {
            for t in targets {
                let raw = format!(
                    "GET {t} HTTP/1.1\r\nHost: www.haproxy.org\r\nConnection: close\r\n\r\n"
                );
                let (status, _, _) = exchange_once(port, &raw).unwrap();
                out.push(
                    format!("{port}:{t}:{status}")
                        .replace(&port.to_string(), if port == p1 { "fe1" } else { "fe2" }),
                );
            }
        }
        out
    };
    let (h1, h2, w1, w2) = (free_port(), free_port(), free_port(), free_port());
    let Some(_h) = Haproxy::start(&cfg(h1, h2), h1) else {
        panic!("haproxy is not installed: tests/run installs it");
    };
    let _w = Weir::start(&cfg(w1, w2), w1);
    let theirs = statuses(h1, h2);
    assert_eq!(statuses(w1, w2), theirs);
    assert!(
        theirs.contains(&"fe1:http://www.haproxy.org/health:200".to_string()),
        "{theirs:?}"
    );
}
