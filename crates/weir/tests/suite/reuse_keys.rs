//! Idle server connections are shared only between requests they fit,
//! beside haproxy 2.6 (its connection hash): a server at port 0 takes the
//! destination `set-dst-port` leaves, a `send-proxy` server's connection
//! carries one client's PROXY header, an `sni <expr>` server's TLS
//! session one name. Receivers answer with `http_first_req`, which says
//! whether the request came on a reused connection.

use crate::common::http::Client;
use crate::common::tls::Pki;
use crate::common::*;

/// The senders on `ports[0..3]` and their receivers on `ports[3..7]`.
fn cfg(p: &[u16; 7], pem: &str) -> String {
    let answer = "http-request return status 200 hdr x-first %[http_first_req]";
    format!(
        "defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         listen dst\n    bind 127.0.0.1:{}\n    http-request set-dst-port hdr(x-dst-port)\n    server s 127.0.0.1:0 pool-low-conn 2\n\
         listen proxy\n    bind 127.0.0.1:{} accept-proxy\n    http-reuse always\n    server s 127.0.0.1:{} send-proxy\n\
         listen sni\n    bind 127.0.0.1:{}\n    server s 127.0.0.1:{} ssl sni req.hdr(x-sni) verify none pool-low-conn 2\n\
         listen r1\n    bind 127.0.0.1:{}\n    {answer} hdr x-to r1\n\
         listen r2\n    bind 127.0.0.1:{}\n    {answer} hdr x-to r2\n\
         listen rp\n    bind 127.0.0.1:{} accept-proxy\n    {answer} hdr x-to %[src_port]\n\
         listen rs\n    bind 127.0.0.1:{} ssl crt {pem}\n    {answer} hdr x-to %[ssl_fc_sni]\n",
        p[0], p[1], p[5], p[2], p[6], p[3], p[4], p[5], p[6]
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

/// The whole story through one proxy whose ports are `p`.
fn story(p: &[u16; 7]) -> Vec<String> {
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
    let Some(_h) = Haproxy::start(&cfg(&hp, &pem), hp[0]) else {
        panic!("haproxy is not installed: tests/run installs it");
    };
    let _w = Weir::start(&cfg(&wp, &pem), wp[0]);
    let (ours, theirs) = (story(&wp), story(&hp));
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
    let cfg = |s: u16, r: u16| {
        format!(
            "global\n    nbthread 2\n\
             defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
             listen sender\n    bind 127.0.0.1:{s}\n    http-reuse safe\n\
             \x20   http-request set-header client-id %[req.hdr(client-id)] if {{ req.hdr(client-id) -m found }}\n\
             \x20   server srv 127.0.0.1:{r} pool-max-conn 1\n\
             listen receiver\n    bind 127.0.0.1:{r}\n\
             \x20   http-request set-var(sess.client_id) req.hdr(client-id)\n\
             \x20   http-request return status 200\n\
             \x20   http-after-response set-header client-id %[var(sess.client_id)]\n"
        )
    };
    let story = |port: u16| -> Vec<String> {
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
        }
        out
    };
    let (hs, hr, ws, wr) = (free_port(), free_port(), free_port(), free_port());
    let Some(_h) = Haproxy::start(&cfg(hs, hr), hs) else {
        panic!("haproxy is not installed: tests/run installs it");
    };
    let _w = Weir::start(&cfg(ws, wr), ws);
    let theirs = story(hs);
    assert_eq!(story(ws), theirs);
    assert_eq!(&theirs[3..6], ["c2:c2", "c2:c1", "c2:c1"]);
}
