//! Idle server connections are shared only between requests they fit,
//! beside haproxy 2.6 (its connection hash): a server at port 0 takes the
//! destination `set-dst-port` leaves, a `send-proxy` server's connection
//! carries one client's PROXY header, an `sni <expr>` server's TLS
//! session one name. Receivers answer with `http_first_req`, which says
//! whether the request came on a reused connection. A session keeps no
//! private connection with `max-session-srv-conns 0`.

use crate::common::http::Client;
use crate::common::tls::Pki;
use crate::common::*;
use std::path::Path;

/// The senders on `ports[0..3]` and their receivers on `ports[3..7]`,
/// with a stats socket at `sock`.
fn cfg(p: &[u16; 7], pem: &str, sock: &Path) -> String {
    let answer = "http-request return status 200 hdr x-first %[http_first_req]";
    format!(
        "global\n    stats socket {}\n\
         defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         listen dst\n    bind 127.0.0.1:{}\n    http-request set-dst-port hdr(x-dst-port)\n    server s 127.0.0.1:0 pool-low-conn 2\n\
         listen proxy\n    bind 127.0.0.1:{} accept-proxy\n    http-reuse always\n    server s 127.0.0.1:{} send-proxy\n\
         listen sni\n    bind 127.0.0.1:{}\n    server s 127.0.0.1:{} ssl sni req.hdr(x-sni) verify none pool-low-conn 2\n\
         listen r1\n    bind 127.0.0.1:{}\n    {answer} hdr x-to r1\n\
         listen r2\n    bind 127.0.0.1:{}\n    {answer} hdr x-to r2\n\
         listen rp\n    bind 127.0.0.1:{} accept-proxy\n    {answer} hdr x-to %[src_port]\n\
         listen rs\n    bind 127.0.0.1:{} ssl crt {pem}\n    {answer} hdr x-to %[ssl_fc_sni]\n",
        sock.display(),
        p[0],
        p[1],
        p[5],
        p[2],
        p[6],
        p[3],
        p[4],
        p[5],
        p[6]
    )
}

fn ports() -> [u16; 7] {
    std::array::from_fn(|_| free_port())
}

/// Requests on one connection to `port`, each with header `name` set to
/// the value given: what answered and whether it was a first request.
fn run(c: &mut Client, name: &str, values: &[String]) -> Vec<String> {
    values
        .iter()
        .map(|v| {
            c.send(format!("GET / HTTP/1.1\r\nHost: t\r\n{name}: {v}\r\n\r\n").as_bytes());
            let r = c.response("GET");
            format!(
                "{} first={}",
                r.header("x-to").unwrap_or("-"),
                r.header("x-first").unwrap_or("-")
            )
        })
        .collect()
}

/// A connection to the PROXY-expecting sender as client source port
/// `sport`.
fn proxied(port: u16, sport: u16) -> Client {
    let mut c = Client::connect(port);
    c.send(format!("PROXY TCP4 192.0.2.1 127.0.0.1 {sport} {port}\r\n").as_bytes());
    c
}

/// The whole story through one proxy whose ports are `p` and stats socket
/// `sock`. A client's next connection is made once the last exchange left
/// its server connection idle (which a proxy does after the client may
/// have read the response).
fn story(p: &[u16; 7], sock: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let (r1, r2) = (p[3].to_string(), p[4].to_string());
    let mut c = Client::connect(p[0]);
    out.extend(run(
        &mut c,
        "x-dst-port",
        &[r1.clone(), r1.clone(), r2.clone(), r1, r2],
    ));
    for sport in [40000, 40000, 50000, 40000] {
        let mut c = proxied(p[1], sport);
        out.extend(run(&mut c, "x-n", &["1".into()]));
        conns_settled(sock);
    }
    let names = [
        "a.example",
        "a.example",
        "b.example",
        "b.example",
        "a.example",
    ];
    let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    let mut c = Client::connect(p[2]);
    out.extend(run(&mut c, "x-sni", &names));
    out
}

#[test]
fn idle_connections_serve_only_requests_they_fit_as_haproxy() {
    let pki = Pki::new();
    let pem = pki.path("certs/1-www.pem");
    let (wp, hp) = (ports(), ports());
    let dir = tempdir("reuse-keys");
    let (ws, hs) = (dir.join("w.sock"), dir.join("h.sock"));
    let Some(_h) = Haproxy::start(&cfg(&hp, &pem, &hs), hp[0]) else {
        panic!("haproxy is not installed: tests/run installs it");
    };
    let _w = Weir::start(&cfg(&wp, &pem, &ws), wp[0]);
    let (ours, theirs) = (story(&wp, &ws), story(&hp, &hs));
    assert_eq!(ours, theirs, "weir's answers, then haproxy's");
    assert_eq!(
        ours,
        [
            "r1 first=1",
            "r1 first=0",
            "r2 first=1",
            "r1 first=0",
            "r2 first=0",
            "40000 first=1",
            "40000 first=0",
            "50000 first=1",
            "40000 first=0",
            "a.example first=1",
            "a.example first=0",
            "b.example first=1",
            "b.example first=0",
            "a.example first=0",
        ]
    );
}

/// `pool-max-conn` counts a server's idle connections on every thread,
/// beside haproxy (its reg-test connection/http_reuse_safe): with one
/// allowed, a new client's first request goes on a connection of its own
/// (`http-reuse safe`), which then closes, and its next requests take the
/// one idle connection, whichever thread holds it.
#[test]
fn pool_max_conn_is_the_servers_whatever_the_thread() {
    let cfg = |s: u16, r: u16, sock: &Path| {
        format!(
            "global\n    nbthread 2\n    stats socket {}\n\
             defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
             listen sender\n    bind 127.0.0.1:{s}\n    http-reuse safe\n\
             \x20   http-request set-header client-id %[req.hdr(client-id)] if {{ req.hdr(client-id) -m found }}\n\
             \x20   server srv 127.0.0.1:{r} pool-max-conn 1\n\
             listen receiver\n    bind 127.0.0.1:{r}\n\
             \x20   http-request set-var(sess.client_id) req.hdr(client-id)\n\
             \x20   http-request return status 200\n\
             \x20   http-after-response set-header client-id %[var(sess.client_id)]\n",
            sock.display()
        )
    };
    // Each client comes once the last one's connections are idle or
    // closed.
    let story = |port: u16, sock: &Path| -> Vec<String> {
        let mut out = Vec::new();
        for i in 1..=6 {
            let mut c = Client::connect(port);
            for n in 0..3 {
                let id = if n == 0 {
                    format!("client-id: c{i}\r\n")
                } else {
                    String::new()
                };
                c.send(format!("GET / HTTP/1.1\r\nHost: t\r\n{id}\r\n").as_bytes());
                let r = c.response("GET");
                out.push(format!("c{i}:{}", r.header("client-id").unwrap_or("-")));
            }
            conns_settled(sock);
        }
        out
    };
    let (hs, hr, ws, wr) = (free_port(), free_port(), free_port(), free_port());
    let dir = tempdir("pool-max-conn");
    let (wsock, hsock) = (dir.join("w.sock"), dir.join("h.sock"));
    let Some(_h) = Haproxy::start(&cfg(hs, hr, &hsock), hs) else {
        panic!("haproxy is not installed: tests/run installs it");
    };
    let _w = Weir::start(&cfg(ws, wr, &wsock), ws);
    let theirs = story(hs, &hsock);
    assert_eq!(story(ws, &wsock), theirs);
    assert_eq!(&theirs[3..6], ["c2:c2", "c2:c1", "c2:c1"]);
}

/// `show servers conn` beside haproxy: a server's idle connections that
/// carried one request (unsafe) or several (safe), its `pool-max-conn`
/// and `pool-purge-delay`, per thread; a backend that is not there.
#[test]
fn show_servers_conn_as_haproxy() {
    let cfg = |a: u16, b: u16, r: u16, sock: &Path| {
        format!(
            "global\n    nbthread 1\n    stats socket {}\n\
             defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
             listen one\n    bind 127.0.0.1:{a}\n    server s1 127.0.0.1:{r} pool-max-conn 1\n\
             listen two\n    bind 127.0.0.1:{b}\n    server s2 127.0.0.1:{r} pool-purge-delay 3s\n    server s3 127.0.0.1:{r}\n\
             listen receiver\n    bind 127.0.0.1:{r}\n    http-request return status 200\n",
            sock.display()
        )
    };
    let story = |a: u16, b: u16, sock: &Path| -> Vec<String> {
        let mut c = Client::connect(a);
        for _ in 0..2 {
            c.send(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n");
            c.response("GET");
        }
        drop(c);
        conns_settled(sock);
        let mut c = Client::connect(b);
        c.send(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n");
        c.response("GET");
        conns_settled(sock);
        let mut out: Vec<String> = ask(sock, "show servers conn\n")
            .lines()
            .map(|l| {
                // (Past the name, the addresses differ: the ports.)
                let f: Vec<&str> = l.split(' ').collect();
                let keep = f.iter().enumerate().filter(|(i, _)| !(2..=3).contains(i));
                keep.map(|(_, w)| *w).collect::<Vec<_>>().join(" ")
            })
            .collect();
        out.push(ask(sock, "show servers conn nope\n"));
        out.push(ask(sock, "show servers state nope\n"));
        out
    };
    let (ha, hb, hr) = (free_port(), free_port(), free_port());
    let (wa, wb, wr) = (free_port(), free_port(), free_port());
    let dir = tempdir("servers-conn");
    let (wsock, hsock) = (dir.join("w.sock"), dir.join("h.sock"));
    let Some(_h) = Haproxy::start(&cfg(ha, hb, hr, &hsock), ha) else {
        panic!("haproxy is not installed: tests/run installs it");
    };
    let _w = Weir::start(&cfg(wa, wb, wr, &wsock), wa);
    let theirs = story(ha, hb, &hsock);
    assert_eq!(story(wa, wb, &wsock), theirs);
    assert!(
        theirs
            .iter()
            .any(|l| l.starts_with("one/s1 2/1 - 5000 0 1 1 0 1 1 1 1")),
        "{theirs:?}"
    );
}

#[test]
fn max_session_srv_conns_0_keeps_no_server_connection_as_haproxy() {
    use std::sync::atomic::Ordering;
    // Three requests on one client connection with `http-reuse never`:
    // one server connection, or (`max-session-srv-conns 0`) one each.
    let got = beside_haproxy(|start| {
        let mut out = Vec::new();
        for v in ["", "    max-session-srv-conns 0\n"] {
            let origin = crate::common::http::Origin::start("o");
            let port = free_port();
            let cfg = format!(
                "defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n    http-reuse never\n\
                 listen l\n    bind 127.0.0.1:{port}\n{v}    server s 127.0.0.1:{}\n",
                origin.port()
            );
            let _p = start(&cfg, port);
            let mut c = Client::connect(port);
            for path in ["/a", "/b", "/c"] {
                assert_eq!(c.get(path).status, 200);
            }
            out.push(origin.server.accepted.load(Ordering::SeqCst));
        }
        out
    });
    assert_eq!(got, [1, 3]);
}
