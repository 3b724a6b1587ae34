//! `use-server`, `force-persist`, `ignore-persist` and
//! `http-send-name-header`: a rule picks the server (by name, or by a
//! format per request) over the balancer and the persistence cookie; a rule
//! whose server is down is passed over unless `force-persist` matched; the
//! server a request reaches gets its own name in a header; a keep-alive
//! client stays on its last server with `option prefer-last-server` or
//! after a 401.

use crate::common::http::{http_cfg, Client, Origin, Response};
use crate::common::*;
use std::time::Duration;

/// One request on a connection of its own, with extra header lines.
fn ask(port: u16, path: &str, extra: &str) -> Response {
    let mut c = Client::connect(port);
    c.send(
        format!("GET {path} HTTP/1.1\r\nHost: t\r\n{extra}Connection: close\r\n\r\n").as_bytes(),
    );
    c.response("GET")
}

fn server_of(r: &Response) -> String {
    r.header("x-server").unwrap_or("-").to_string()
}

#[test]
fn use_server_rules_pick_a_server_unless_it_is_down() {
    let (o1, o2) = (Origin::start("o1"), Origin::start("o2"));
    let port = free_port();
    let dead = free_port();
    let be = format!(
        "    cookie SRV insert indirect nocache\n\
         \x20   use-server s2 if {{ path_beg /two }}\n\
         \x20   use-server s3 if {{ path_beg /dead }}\n\
         \x20   use-server %[req.hdr(x-srv)] if {{ req.hdr(x-srv) -m found }}\n\
         \x20   force-persist if {{ req.hdr(x-force) -m found }}\n\
         \x20   ignore-persist if {{ path_beg /ignore }}\n\
         \x20   http-send-name-header X-Srv-Name\n\
         \x20   server s1 127.0.0.1:{} cookie c1\n\
         \x20   server s2 127.0.0.1:{} cookie c2 weight 0\n\
         \x20   server s3 127.0.0.1:{dead} check inter 100ms fall 1 weight 0",
        o1.port(),
        o2.port()
    );
    let _w = Weir::start(&http_cfg(port, "", "", &be), port);
    // The balancer alone never picks s2 (weight 0); a rule does.
    let r = ask(port, "/one", "");
    assert_eq!(server_of(&r), "o1", "{} {}", r.head, r.text());
    assert_eq!(server_of(&ask(port, "/two", "")), "o2");
    // A name from a format; an unknown one leaves the choice to the
    // balancer.
    assert_eq!(server_of(&ask(port, "/x", "X-Srv: s2\r\n")), "o2");
    assert_eq!(server_of(&ask(port, "/x", "X-Srv: nope\r\n")), "o1");
    // The server got its own name, the client's value replaced.
    let r = ask(port, "/two", "X-Srv-Name: forged\r\n");
    let seen = r.text();
    assert!(
        seen.contains("X-Srv-Name: s2\r\n") && !seen.contains("forged"),
        "{seen}"
    );
    // The cookie names s2; ignore-persist leaves it unfollowed.
    assert_eq!(server_of(&ask(port, "/c", "Cookie: SRV=c2\r\n")), "o2");
    assert_eq!(server_of(&ask(port, "/ignore", "Cookie: SRV=c2\r\n")), "o1");
    // s3 is down once its check failed: its rule is passed over...
    wait_for("s3 seen down", Duration::from_secs(5), || {
        (server_of(&ask(port, "/dead", "")) == "o1").then_some(())
    });
    // ...unless force-persist keeps it: the request goes to the dead
    // server and fails there.
    let r = ask(port, "/dead", "X-Force: 1\r\n");
    assert_eq!(r.status, 503, "{}", r.text());
}

#[test]
fn use_server_in_tcp_mode() {
    let (o1, o2) = (Origin::start("o1"), Origin::start("o2"));
    let (port, port2) = (free_port(), free_port());
    let cfg = format!(
        "defaults\n    mode tcp\n    timeout connect 1s\n    timeout client 10s\n    timeout server 10s\n\
         listen l\n    bind 127.0.0.1:{port}\n    bind 127.0.0.1:{port2}\n\
         \x20   use-server s2 if {{ dst_port {port2} }}\n\
         \x20   server s1 127.0.0.1:{}\n    server s2 127.0.0.1:{} weight 0\n",
        o1.port(),
        o2.port()
    );
    let _w = Weir::start(&cfg, port);
    assert_eq!(server_of(&ask(port, "/", "")), "o1");
    assert_eq!(server_of(&ask(port2, "/", "")), "o2");
    assert_eq!(server_of(&ask(port, "/", "")), "o1");
}

#[test]
fn prefer_last_server_and_authentication_keep_a_client_on_its_server() {
    let (o1, o2) = (Origin::start("o1"), Origin::start("o2"));
    let servers = format!(
        "    balance roundrobin\n    server s1 127.0.0.1:{}\n    server s2 127.0.0.1:{}",
        o1.port(),
        o2.port()
    );
    // Round robin alone moves a keep-alive client from server to server...
    let port = free_port();
    let _w = Weir::start(&http_cfg(port, "", "", &servers), port);
    let mut c = Client::connect(port);
    let seq: Vec<String> = (0..4).map(|_| server_of(&c.get("/"))).collect();
    assert_eq!(seq, ["o1", "o2", "o1", "o2"]);
    // ...except after a 401, which keeps its next request there.
    let a = server_of(&c.get("/auth"));
    assert_eq!(server_of(&c.get("/")), a);
    // With prefer-last-server, a client stays on its server while another
    // client still gets the next one.
    let port = free_port();
    let be = format!("    option prefer-last-server\n{servers}");
    let _w2 = Weir::start(&http_cfg(port, "", "", &be), port);
    let mut c = Client::connect(port);
    let seq: Vec<String> = (0..4).map(|_| server_of(&c.get("/"))).collect();
    assert_eq!(seq, ["o1", "o1", "o1", "o1"]);
    assert_eq!(server_of(&Client::connect(port).get("/")), "o2");
}

#[test]
fn max_keep_alive_queue_sends_past_a_full_last_server_as_haproxy() {
    let (o1, o2) = (Origin::start("o1"), Origin::start("o2"));
    // With prefer-last-server, a keep-alive client's next request goes to
    // another server while its last one is full, with or without
    // `max-keep-alive-queue` (haproxy 2.6 was seen to do the same).
    let got = beside_haproxy(|start| {
        let mut seen = Vec::new();
        for limit in ["", "    max-keep-alive-queue 0\n"] {
            let port = free_port();
            let sock = tempdir("kaq").join("cli.sock");
            let global = format!("    stats socket {} level admin\n", sock.display());
            let be = format!(
                "    balance roundrobin\n    option prefer-last-server\n{limit}\
                 \x20   use-server s1 if {{ path_beg /slow }}\n\
                 \x20   server s1 127.0.0.1:{} maxconn 1\n    server s2 127.0.0.1:{}",
                o1.port(),
                o2.port()
            );
            let _p = start(&http_cfg(port, &global, "", &be), port);
            let mut c = Client::connect(port);
            seen.push(server_of(&c.get("/")));
            // Another client fills s1's one slot for 800 ms.
            let slow = std::thread::spawn(move || server_of(&ask(port, "/slow?ms=800", "")));
            wait_for("s1 busy", Duration::from_secs(5), || {
                show_stat(&sock)
                    .iter()
                    .any(|r| {
                        r.get("svname").map(String::as_str) == Some("s1")
                            && r.get("scur").map(String::as_str) == Some("1")
                    })
                    .then_some(())
            });
            seen.push(server_of(&c.get("/")));
            seen.push(slow.join().unwrap());
        }
        seen
    });
    assert_eq!(got, ["o1", "o2", "o1", "o1", "o2", "o1"]);
}
