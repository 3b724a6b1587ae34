//! Lua scripts (`lua-load`, `lua-load-per-thread`), differential against
//! haproxy 2.6 where both run the same script: actions that wait
//! (`core.msleep`) and rewrite the request, response actions with
//! private data and variables, fetches and converters in formats, HTTP
//! and TCP services, tasks with sockets and the HTTP client. Load errors
//! and names no script registered are refused with their line.

use crate::common::*;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

const SCRIPT: &str = r#"
core.register_action("tag", { "http-req" }, function(txn, suffix)
  core.msleep(5)
  local host = txn.sf:req_hdr("host")
  txn.http:req_set_header("X-Tag", host .. "-" .. (suffix or "none"))
  txn:set_var("txn.seen", txn.f:method() .. " " .. txn.f:path())
  txn:set_priv({ n = 7 })
  txn.http:req_set_path("/rewritten")
end, 1)
core.register_action("stamp", { "http-res" }, function(txn)
  local p = txn:get_priv()
  txn.http:res_add_header("x-priv", p and tostring(p.n) or "nil")
  txn.http:res_add_header("x-seen", txn:get_var("txn.seen") or "nil")
  if txn.sf:res_hdr("x-ask") == "207" then
    txn.http:res_set_status(207)
  end
end)
core.register_fetches("double", function(txn, n) return tonumber(n) * 2 end)
core.register_converters("rev", function(s) return string.reverse(s) end)
core.register_service("echo", "http", function(applet)
  local body = applet:receive()
  local n = 0
  for k, v in pairs(applet.headers) do n = n + 1 end
  applet:set_status(201, "Made")
  applet:add_header("X-Method", applet.method)
  applet:start_response()
  applet:send(applet.path .. "?" .. applet.qs .. " " .. n .. " [" .. body .. "]")
end)
core.register_service("banner", "tcp", function(applet)
  applet:send("hello\r\n")
  local l = applet:getline()
  applet:send("you said " .. l)
end)
core.register_service("nothing", "http", function(applet) end)
"#;

/// A server that answers each request with its request line and its
/// `x-tag` header, and asks for a 207 in `x-ask`.
fn origin() -> Server {
    Server::start(|mut c| {
        let Some(head) = read_head(&mut c) else {
            return;
        };
        let text = head;
        let line = text.lines().next().unwrap_or_default().to_string();
        let tag = text
            .lines()
            .find(|l| l.to_ascii_lowercase().starts_with("x-tag"))
            .unwrap_or_default()
            .to_string();
        let body = format!("{line} {tag}");
        let _ = c.write_all(
            format!(
                "HTTP/1.1 200 OK\r\nx-ask: 207\r\ncontent-length: {}\r\n\r\n{body}",
                body.len()
            )
            .as_bytes(),
        );
    })
}

/// The whole answer to `raw` (the connection closes after it).
fn raw_exchange(port: u16, raw: &[u8]) -> String {
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    c.write_all(raw).unwrap();
    let mut got = Vec::new();
    let _ = c.read_to_end(&mut got);
    String::from_utf8_lossy(&got).into_owned()
}

#[test]
fn actions_fetches_converters_and_services_beside_haproxy() {
    let dir = tempdir("lua");
    let script = dir.join("t.lua");
    std::fs::write(&script, SCRIPT).unwrap();
    let srv = origin();
    let got = beside_haproxy(|start| {
        let (port, tport) = (free_port(), free_port());
        let cfg = format!(
            "global\n    lua-load {}\n\
             defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
             frontend fe\n    bind 127.0.0.1:{port}\n\
             \x20   http-request use-service lua.echo if {{ path_beg /echo }}\n\
             \x20   http-request use-service lua.nothing if {{ path /nothing }}\n\
             \x20   http-request lua.tag sfx\n\
             \x20   http-response lua.stamp\n\
             \x20   http-response set-header x-fc \"%[lua.double(21)] %[str(abc),lua.rev]\"\n\
             \x20   default_backend be\n\
             backend be\n    server s1 127.0.0.1:{}\n\
             listen tcpsvc\n    mode tcp\n    bind 127.0.0.1:{tport}\n\
             \x20   tcp-request inspect-delay 1s\n    tcp-request content use-service lua.banner\n",
            script.display(),
            srv.port()
        );
        let _p = start(&cfg, port);
        wait_for("the TCP service", Duration::from_secs(5), || {
            listening(tport).then_some(())
        });
        vec![
            raw_exchange(port, b"GET /a/b?q=1 HTTP/1.1\r\nHost: h1\r\nConnection: close\r\n\r\n"),
            raw_exchange(
                port,
                b"POST /echo/x?z=9 HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nConnection: close\r\n\r\ndata!",
            ),
            raw_exchange(port, b"GET /echo HTTP/1.0\r\n\r\n"),
            raw_exchange(port, b"GET /nothing HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
                .lines()
                .next()
                .unwrap_or_default()
                .to_string(),
            raw_exchange(tport, b"hi there\r\n"),
        ]
    });
    // The script ran: what haproxy and weir both answered is what it says.
    assert!(got[0].starts_with("HTTP/1.1 207 "), "{got:?}");
    assert!(
        got[0].contains("x-priv: 7") && got[0].contains("x-seen: GET /a/b"),
        "{got:?}"
    );
    assert!(
        got[0].contains("GET /rewritten?q=1 HTTP/1.1 x-tag: h1-sfx"),
        "{got:?}"
    );
    assert!(got[0].contains("x-fc: 42 cba"), "{got:?}");
    assert!(
        got[1].contains("201 Made") && got[1].ends_with("[data!]\r\n0\r\n\r\n"),
        "{got:?}"
    );
    assert_eq!(got[3], "HTTP/1.1 500 Internal Server Error");
    assert_eq!(got[4], "hello\r\nyou said hi there\r\n");
}

/// A task that reads a server's greeting with `core.tcp()` and fetches a
/// page with `core.httpclient()`, kept in the script's globals that its
/// fetches give a rule; beside haproxy.
#[test]
fn tasks_with_sockets_and_the_http_client_beside_haproxy() {
    let greeter = Server::start(|mut c| {
        let _ = c.write_all(b"greetings\r\n");
        let mut b = [0u8; 64];
        let _ = c.read(&mut b);
    });
    let web = Server::start(|mut c| {
        let req = read_head(&mut c).unwrap_or_default();
        let host = req
            .lines()
            .find_map(|l| {
                l.strip_prefix("host: ")
                    .or_else(|| l.strip_prefix("Host: "))
            })
            .unwrap_or("?")
            .to_string();
        let body = format!("page for {host}");
        let _ = c.write_all(
            format!(
                "HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n{body}",
                body.len()
            )
            .as_bytes(),
        );
    });
    let dir = tempdir("lua-task");
    let script = dir.join("task.lua");
    std::fs::write(
        &script,
        format!(
            r#"
core.register_task(function()
  local s = core.tcp()
  s:settimeout(3)
  if s:connect("127.0.0.1", {g}) then
    local line = s:receive("*l")
    s:close()
    greeting = line
  end
  local hc = core.httpclient()
  local r = hc:get{{url = "http://127.0.0.1:{w}/x", headers = {{ ["host"] = {{ "example.test" }} }}}}
  page = r.status .. " " .. r.body
end)
core.register_fetches("greeting", function() return greeting end)
core.register_fetches("page", function() return page end)
"#,
            g = greeter.port(),
            w = web.port()
        ),
    )
    .unwrap();
    let got = beside_haproxy(|start| {
        let port = free_port();
        let cfg = format!(
            "global\n    lua-load {}\n\
             defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
             frontend fe\n    bind 127.0.0.1:{port}\n\
             \x20   http-request return status 200 hdr x-g \"%[lua.greeting]\" hdr x-p \"%[lua.page]\"\n",
            script.display()
        );
        let _p = start(&cfg, port);
        wait_for("the task's variables", Duration::from_secs(10), || {
            let a = raw_exchange(
                port,
                b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
            );
            let h = |n: &str| {
                a.lines()
                    .find_map(|l| l.strip_prefix(n))
                    .unwrap_or_default()
                    .to_string()
            };
            let (g, p) = (h("x-g: "), h("x-p: "));
            (!g.is_empty() && !p.is_empty()).then_some((g, p))
        })
    });
    assert_eq!(
        got,
        (
            "greetings".to_string(),
            "200 page for example.test".to_string()
        )
    );
}

/// A script that does not load, a missing file and a `lua.<name>` no
/// script registered stop the start with the configuration's line, as
/// `-c` says; beside haproxy (both refuse each).
#[test]
fn load_errors_name_the_line() {
    let dir = tempdir("lua-bad");
    let bad = dir.join("bad.lua");
    std::fs::write(
        &bad,
        "core.register_action(\"x\", {\"http-req\"}, function(txn)\n  this is not lua\nend)\n",
    )
    .unwrap();
    let good = dir.join("good.lua");
    std::fs::write(
        &good,
        "core.register_action(\"x\", {\"http-req\"}, function(txn) end)\n",
    )
    .unwrap();
    let base = "defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
                frontend fe\n    bind 127.0.0.1:8\n";
    let cases = [
        format!("global\n    lua-load {}\n{base}", bad.display()),
        format!("global\n    lua-load {}/missing.lua\n{base}", dir.display()),
        format!(
            "global\n    lua-load {}\n{base}    http-request lua.nope\n",
            good.display()
        ),
        format!(
            "global\n    lua-load {}\n{base}    http-response lua.x\n",
            good.display()
        ),
        format!(
            "global\n    lua-load {}\n{base}    http-request set-header a %[lua.nofetch]\n",
            good.display()
        ),
    ];
    for cfg in &cases {
        let (code, out, err) = check_cfg(cfg);
        assert_ne!(code, 0, "weir accepted:\n{cfg}\n{out}{err}");
        let line = if cfg.contains("lua.no") || cfg.contains("http-response lua.x") {
            ":10]"
        } else {
            ":2]"
        };
        assert!(err.contains(line), "no line {line} in: {err}");
        if let Some(h) = Haproxy::bin() {
            let p = dir.join("h.cfg");
            std::fs::write(&p, cfg).unwrap();
            let st = std::process::Command::new(h)
                .args(["-c", "-q", "-f", p.to_str().unwrap()])
                .output()
                .unwrap();
            assert!(!st.status.success(), "haproxy accepted:\n{cfg}");
        }
    }
    // The good script alone loads.
    let (code, _, err) = check_cfg(&format!(
        "global\n    lua-load {}\n{base}    http-request lua.x\n",
        good.display()
    ));
    assert_eq!(code, 0, "{err}");
}

/// `lua-load-per-thread`: each thread runs its own state (`core.thread`
/// is its number), `lua-load`'s shared state says 0; a global of one
/// thread's state is not another's.
#[test]
fn per_thread_states() {
    let dir = tempdir("lua-thread");
    let own = dir.join("own.lua");
    std::fs::write(
        &own,
        "hits = 0\ncore.register_service(\"mine\", \"http\", function(applet)\n  hits = hits + 1\n  applet:start_response()\n  applet:send(core.thread .. \" \" .. hits)\nend)\n",
    )
    .unwrap();
    let shared = dir.join("shared.lua");
    std::fs::write(
        &shared,
        "core.register_service(\"common\", \"http\", function(applet)\n  applet:start_response()\n  applet:send(tostring(core.thread))\nend)\n",
    )
    .unwrap();
    let port = free_port();
    let cfg = format!(
        "global\n    nbthread 2\n    lua-load-per-thread {}\n    lua-load {}\n\
         defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         frontend fe\n    bind 127.0.0.1:{port}\n\
         \x20   http-request use-service lua.common if {{ path /common }}\n\
         \x20   http-request use-service lua.mine\n",
        own.display(),
        shared.display()
    );
    let _w = Weir::start(&cfg, port);
    let body = |path: &str| {
        let a = raw_exchange(
            port,
            format!("GET {path} HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n").as_bytes(),
        );
        // The one chunk of the answer.
        a.split("\r\n\r\n")
            .nth(1)
            .unwrap_or_default()
            .lines()
            .nth(1)
            .unwrap_or_default()
            .to_string()
    };
    assert_eq!(body("/common"), "0");
    let mut per: std::collections::BTreeMap<String, Vec<u32>> = Default::default();
    for _ in 0..40 {
        let b = body("/");
        let (t, n) = b.split_once(' ').expect("thread and count");
        per.entry(t.to_string())
            .or_default()
            .push(n.parse().unwrap());
    }
    assert!(per.keys().all(|t| t == "1" || t == "2"), "{per:?}");
    // Each thread's count goes 1, 2, 3 … on its own.
    for counts in per.values() {
        let want: Vec<u32> = (1..=counts.len() as u32).collect();
        assert_eq!(counts, &want, "{per:?}");
    }
}

/// The CORS script pattern (haproxytech's `cors.lua`): one name as an
/// `http-req` and an `http-res` action, a preflight answered with
/// `txn:reply()` and `txn:done(reply)`, the origin kept in private data
/// for the response; beside haproxy (header lines compared as sets: a Lua
/// table's order is the state's own).
#[test]
fn cors_actions_reply_and_done_beside_haproxy() {
    let dir = tempdir("lua-cors");
    let script = dir.join("cors.lua");
    std::fs::write(
        &script,
        r#"
core.register_action("cors", {"http-req"}, function(txn, methods)
  local h = txn.http:req_get_headers()
  local origin = h["origin"] and h["origin"][0]
  txn:set_priv({ origin = origin })
  if txn.sf:method() == "OPTIONS" then
    local reply = txn:reply()
    reply:set_status(204, "No Content")
    reply:add_header("Access-Control-Allow-Methods", methods)
    reply:add_header("Access-Control-Allow-Origin", origin or "*")
    txn:done(reply)
  end
end, 1)
core.register_action("cors", {"http-res"}, function(txn)
  local p = txn:get_priv()
  if p and p.origin then
    txn.http:res_add_header("Access-Control-Allow-Origin", p.origin)
  end
end, 0)
"#,
    )
    .unwrap();
    let srv = origin();
    let sorted = |a: String| {
        let (head, body) = a.split_once("\r\n\r\n").unwrap_or((&a, ""));
        let mut lines: Vec<&str> = head.lines().collect();
        let status = lines.remove(0).to_string();
        lines.sort();
        format!("{status}|{}|{body}", lines.join("|"))
    };
    let got = beside_haproxy(|start| {
        let port = free_port();
        let cfg = format!(
            "global\n    lua-load {}\n\
             defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
             frontend fe\n    bind 127.0.0.1:{port}\n\
             \x20   http-request lua.cors \"GET,POST\"\n    http-response lua.cors\n    default_backend be\n\
             backend be\n    server s1 127.0.0.1:{}\n",
            script.display(),
            srv.port()
        );
        let _p = start(&cfg, port);
        vec![
            sorted(raw_exchange(
                port,
                b"OPTIONS /x HTTP/1.1\r\nHost: a\r\nOrigin: http://a.example\r\nConnection: close\r\n\r\n",
            )),
            raw_exchange(
                port,
                b"GET /y HTTP/1.1\r\nHost: a\r\nOrigin: http://b.example\r\nConnection: close\r\n\r\n",
            )
            .lines()
            .filter(|l| l.to_ascii_lowercase().starts_with("access-control"))
            .collect::<Vec<_>>()
            .join("|"),
        ]
    });
    assert!(got[0].starts_with("HTTP/1.1 204 No Content|"), "{got:?}");
    assert!(
        got[0].contains("access-control-allow-origin: http://a.example"),
        "{got:?}"
    );
    assert_eq!(got[1], "access-control-allow-origin: http://b.example");
}

/// An HTTP service's `send` reaches the client at once: its first part
/// arrives while the script still waits (released by another request)
/// before it sends the rest; beside haproxy.
#[test]
fn services_stream_what_they_send_beside_haproxy() {
    let dir = tempdir("lua-stream");
    let script = dir.join("stream.lua");
    std::fs::write(
        &script,
        r#"
released = false
core.register_service("stream", "http", function(applet)
  released = false
  applet:start_response()
  applet:send("first|")
  while not released do core.msleep(5) end
  applet:send("second|")
end)
core.register_service("release", "http", function(applet)
  released = true
  applet:start_response()
  applet:send("released")
end)
"#,
    )
    .unwrap();
    let got = beside_haproxy(|start| {
        let port = free_port();
        let cfg = format!(
            "global\n    lua-load {}\n    tune.lua.service-timeout 10s\n\
             defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
             frontend fe\n    bind 127.0.0.1:{port}\n\
             \x20   http-request use-service lua.release if {{ path /release }}\n\
             \x20   http-request use-service lua.stream\n",
            script.display()
        );
        let _p = start(&cfg, port);
        let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        c.write_all(b"GET /s HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
            .unwrap();
        // The first part, before the script is released.
        let mut seen = Vec::new();
        let mut b = [0u8; 1024];
        while !String::from_utf8_lossy(&seen).contains("first|") {
            let n = c
                .read(&mut b)
                .expect("the first part while the script waits");
            assert!(n > 0, "closed before the first part");
            seen.extend_from_slice(&b[..n]);
        }
        let early_second = String::from_utf8_lossy(&seen).contains("second|");
        let released = raw_exchange(
            port,
            b"GET /release HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
        );
        let _ = c.read_to_end(&mut seen);
        let all = String::from_utf8_lossy(&seen).into_owned();
        (
            early_second,
            released.ends_with("released\r\n0\r\n\r\n"),
            all.contains("second|"),
        )
    });
    assert_eq!(got, (false, true, true));
}

/// `core.tokenize`, `core.concat`, `core.parse_addr`, `core.match_addr`
/// give what haproxy's give.
#[test]
fn core_helpers_beside_haproxy() {
    let dir = tempdir("lua-helpers");
    let script = dir.join("h.lua");
    std::fs::write(
        &script,
        r#"
core.register_service("h", "http", function(applet)
  local t = core.tokenize("a,b;;c , d", ",; ", true)
  local t2 = core.tokenize("a,,b", ",")
  local c = core.concat()
  c:add("x"); c:add("y"); c:add(3)
  local n1 = core.parse_addr("127.0.0.1/32")
  local n2 = core.parse_addr("127.0.0.0/8")
  local n3 = core.parse_addr("10.0.0.1")
  local n4 = core.parse_addr("::1")
  local n5 = core.parse_addr("2001:db8::/32")
  local n6 = core.parse_addr("2001:db8:1::5")
  local out = table.concat(t, "|") .. " " .. #t2 .. " " .. c:dump() .. " " ..
    tostring(core.match_addr(n1, n2)) .. " " .. tostring(core.match_addr(n2, n1)) .. " " ..
    tostring(core.match_addr(n1, n3)) .. " " .. tostring(core.match_addr(n1, n4)) .. " " ..
    tostring(core.match_addr(n5, n6)) .. " " .. tostring(core.parse_addr("nope"))
  applet:start_response()
  applet:send(out)
end)
"#,
    )
    .unwrap();
    let got = beside_haproxy(|start| {
        let port = free_port();
        let cfg = format!(
            "global\n    lua-load {}\n\
             defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
             frontend fe\n    bind 127.0.0.1:{port}\n    http-request use-service lua.h\n",
            script.display()
        );
        let _p = start(&cfg, port);
        let a = raw_exchange(
            port,
            b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
        );
        a.split("\r\n\r\n")
            .nth(1)
            .unwrap_or_default()
            .lines()
            .nth(1)
            .unwrap_or_default()
            .to_string()
    });
    assert_eq!(got, "a|b|c|d 3 xy3 true true false false true nil");
}
