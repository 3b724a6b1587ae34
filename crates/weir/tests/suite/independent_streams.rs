//! `option independent-streams` and the default it changes, beside
//! Debian's haproxy 2.6: bytes sent to a side refresh its read timeout
//! (a slow upload is no server timeout), unless the option is set on
//! that side's proxy; then its read timeout passes while bytes still flow
//! the other way, that direction is shut, and the session goes on, logged
//! `cD` or `sD`.

use crate::common::*;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::time::{Duration, Instant};

/// Bytes a trickling side sends, one at a time, this far apart: longer
/// in all than the timeouts (700 ms), each gap shorter.
const BYTES: usize = 8;
const GAP: Duration = Duration::from_millis(200);

fn cfg(sys: u16, p: &[u16; 6], o: &[u16; 6]) -> String {
    let listen = |name: &str, i: usize, extra: &str| {
        format!(
            "listen {name}\n    bind 127.0.0.1:{}\n{extra}    server s 127.0.0.1:{}\n",
            p[i], o[i]
        )
    };
    let split = |name: &str, i: usize| {
        format!(
            "frontend {name}\n    bind 127.0.0.1:{}\n    default_backend b_{name}\n\
             backend b_{name}\n    option independent-streams\n    server s 127.0.0.1:{}\n",
            p[i], o[i]
        )
    };
    let opt = "    option independent-streams\n";
    let http = "    mode http\n    log-format \"IS %f %ts %ST\"\n";
    format!(
        "global\n    log 127.0.0.1:{sys} local0\n\
         defaults\n    mode tcp\n    log global\n    log-format \"IS %f %ts\"\n\
         \x20   timeout connect 1s\n    timeout client 700ms\n    timeout server 700ms\n\
         {}{}{}{}{}{}",
        listen("ind_s", 0, opt),
        listen("ind_c", 1, opt),
        split("fe_c", 2),
        split("fe_s", 3),
        listen("up_plain", 4, http),
        listen("up_ind", 5, &format!("{http}{opt}")),
    )
}

/// One side sends [`BYTES`] bytes slowly, then ends its side; the other
/// sends nothing. Whether the receiver got them all, and whether the
/// sender saw its own end (the proxy shut the direction towards it)
/// before it finished.
fn trickle(port: u16, origin: TcpListener, server_sends: bool) -> String {
    let client = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let (server, _) = origin.accept().unwrap();
    let (sender, mut receiver) = if server_sends {
        (server, client)
    } else {
        (client, server)
    };
    // The sender's reader: when its end came.
    let mut watch = sender.try_clone().unwrap();
    let ended = std::thread::spawn(move || {
        watch
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        let mut sink = Vec::new();
        let _ = watch.read_to_end(&mut sink);
        Instant::now()
    });
    let mut out = &sender;
    for _ in 0..BYTES {
        let _ = out.write_all(b"x");
        std::thread::sleep(GAP);
    }
    let done = Instant::now();
    let _ = sender.shutdown(Shutdown::Write);
    receiver
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut got = Vec::new();
    let _ = receiver.read_to_end(&mut got);
    let early = ended.join().unwrap() < done;
    format!("received {}, sender's end early: {early}", got.len())
}

/// A POST whose body comes slowly to a server that answers once it has
/// it all: the status the client gets.
fn slow_upload(port: u16, origin: TcpListener) -> String {
    let server = std::thread::spawn(move || {
        let (mut s, _) = origin.accept().unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut got = Vec::new();
        let mut b = [0u8; 512];
        let body_done = |g: &[u8]| {
            let text = String::from_utf8_lossy(g);
            text.split_once("\r\n\r\n")
                .is_some_and(|(_, body)| body.len() >= BYTES)
        };
        while !body_done(&got) {
            match s.read(&mut b) {
                Ok(0) | Err(_) => return,
                Ok(n) => got.extend_from_slice(&b[..n]),
            }
        }
        let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
    });
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let head = format!("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: {BYTES}\r\n\r\n");
    c.write_all(head.as_bytes()).unwrap();
    for _ in 0..BYTES {
        if c.write_all(b"x").is_err() {
            break;
        }
        std::thread::sleep(GAP);
    }
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let status = read_head(&mut c).unwrap_or_default();
    let _ = server.join();
    status.lines().next().unwrap_or("").to_string()
}

/// Every case at once against the proxy `start` runs; what each saw,
/// then the log lines, sorted.
fn run(start: Start<'_>) -> (Vec<String>, Vec<String>) {
    let sys = Syslog::start();
    let p = [(); 6].map(|()| free_port());
    let origins = [(); 6].map(|()| TcpListener::bind("127.0.0.1:0").unwrap());
    let o = [0, 1, 2, 3, 4, 5].map(|i| origins[i].local_addr().unwrap().port());
    let _proxy = start(&cfg(sys.port(), &p, &o), p[0]);
    let cases: Vec<_> = origins
        .into_iter()
        .enumerate()
        .map(|(i, origin)| {
            let port = p[i];
            std::thread::spawn(move || match i {
                0 | 3 => trickle(port, origin, true),
                1 | 2 => trickle(port, origin, false),
                _ => slow_upload(port, origin),
            })
        })
        .collect();
    let seen = cases.into_iter().map(|c| c.join().unwrap()).collect();
    let lines = wait_for("six log lines", Duration::from_secs(10), || {
        let l = sys.lines.lock().unwrap();
        let mut is: Vec<String> = l
            .iter()
            .filter_map(|l| l.split_once("IS ").map(|(_, m)| m.to_string()))
            .collect();
        is.sort();
        (is.len() == 6).then_some(is)
    });
    (seen, lines)
}

#[test]
fn read_timeouts_kept_apart_shut_one_direction_and_slow_uploads_live_as_haproxy() {
    let (seen, lines) = beside_haproxy(run);
    let early = |e: bool| format!("received {BYTES}, sender's end early: {e}");
    assert_eq!(
        seen,
        [
            early(true),
            early(true),
            early(true),
            early(false),
            "HTTP/1.1 200 OK".to_string(),
            "HTTP/1.1 504 Gateway Time-out".to_string(),
        ]
    );
    assert_eq!(
        lines,
        [
            "fe_c sD",
            "fe_s cD",
            "ind_c sD",
            "ind_s cD",
            "up_ind sH 504",
            "up_plain -- 200",
        ]
    );
}
