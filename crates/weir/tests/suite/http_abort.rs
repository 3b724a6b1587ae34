//! `option abortonclose` in `mode http`: a client that closes after its
//! whole request gives up its place in the queue (`CQ`), its connect
//! retries (`CC`) or its wait for the response (`CH`, logged 400), as
//! haproxy 2.6 logs them; without the option the request goes on.

use crate::common::http::{Client, Origin};
use crate::common::*;
use std::net::Shutdown;
use std::time::{Duration, Instant};

fn cfg(port: u16, syslog: u16, backend: &str) -> String {
    format!(
        "defaults\n    mode http\n    option httplog\n    timeout connect 1s\n    timeout client 10s\n    timeout server 10s\n    timeout queue 10s\n\
         frontend fe\n    bind 127.0.0.1:{port}\n    log 127.0.0.1:{syslog} local0\n    default_backend be\n\
         backend be\n{backend}\n"
    )
}

/// Sends `path` and closes the sending side at once.
fn send_and_close(port: u16, path: &str) -> Client {
    let mut c = Client::connect(port);
    c.send(format!("GET {path} HTTP/1.1\r\nHost: t\r\n\r\n").as_bytes());
    c.w.shutdown(Shutdown::Write).unwrap();
    c
}

#[test]
fn a_client_that_closes_gives_up_queue_connect_and_response() {
    let o = Origin::start("o");
    let log = Syslog::start();
    let port = free_port();
    let be = format!(
        "    option abortonclose\n    server s 127.0.0.1:{} maxconn 1",
        o.port()
    );
    let _w = Weir::start(&cfg(port, log.port(), &be), port);
    // One slow request holds the only slot; a second one waits in the
    // queue, then its client closes: CQ, no server, status -1.
    let mut slow = Client::connect(port);
    slow.send(b"GET /slow?ms=3000 HTTP/1.1\r\nHost: t\r\n\r\n");
    wait_for(
        "the slow request at the server",
        Duration::from_secs(5),
        || (!o.seen.lock().unwrap().is_empty()).then_some(()),
    );
    let started = Instant::now();
    let _queued = send_and_close(port, "/queued");
    let line = log.wait_line("\"GET /queued ", Duration::from_secs(5));
    assert!(
        line.contains(" fe be/<NOSRV> ") && line.contains(" -1 0 - - CQ-- "),
        "{line}"
    );
    assert!(started.elapsed() < Duration::from_millis(1400), "{line}");
    // The slow one waits for its response when its client closes: CH,
    // logged 400, and the server saw only that request.
    slow.w.shutdown(Shutdown::Write).unwrap();
    let line = log.wait_line("\"GET /slow?ms=3000 ", Duration::from_secs(2));
    assert!(
        line.contains(" fe be/s ") && line.contains(" 400 ") && line.contains(" CH-- "),
        "{line}"
    );
    assert_eq!(o.seen.lock().unwrap().len(), 1);

    // Connect retries to a refused server end at the client's close (CC).
    let port = free_port();
    let be = "    option abortonclose\n    retries 10\n    server s 127.0.0.1:9";
    let _w2 = Weir::start(&cfg(port, log.port(), be), port);
    let started = Instant::now();
    let _c = send_and_close(port, "/refused");
    let line = log.wait_line("\"GET /refused ", Duration::from_secs(8));
    assert!(
        line.contains(" fe be/s ") && line.contains(" -1 0 - - CC-- "),
        "{line}"
    );
    assert!(started.elapsed() < Duration::from_secs(3), "{line}");

    // Without the option, the request goes on and its answer is sent.
    let port = free_port();
    let be = format!("    server s 127.0.0.1:{}", o.port());
    let _w3 = Weir::start(&cfg(port, log.port(), &be), port);
    let mut c = send_and_close(port, "/kept");
    assert_eq!(c.response("GET").status, 200);
}
