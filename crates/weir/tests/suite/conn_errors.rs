//! Connections that fail before any request (a PROXY header refused, a
//! TLS handshake that fails) and HTTP/1 requests that never come whole,
//! logged by weir and by Debian's haproxy 2.6 for the same clients: the
//! fixed line without `error-log-format`, the format with it (`fc_err`,
//! `fc_err_str`), compared line by line with dates and client ports
//! masked.

use crate::common::tls::Pki;
use crate::common::*;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::time::Duration;

const ERROR_FORMAT: &str = "ELF %ci %ft %b/%s %[fc_err] <%[fc_err_str]> %ts %tsc %ST %B %U \
                            %{+Q}r %ac/%fc/%bc/%sc/%rc %sq/%bq %[src] %[fe_name]";

/// Ports of one proxy: (with `error-log-format`: PROXY, TLS, plain HTTP;
/// without: PROXY, TLS).
struct Ports([u16; 5]);

fn cfg(sys: u16, p: &Ports, crt: &str) -> String {
    let [pp, tls, plain, pp2, tls2] = p.0;
    format!(
        "global\n    nbthread 1\n    log 127.0.0.1:{sys} local0\n\
         defaults\n    mode http\n    log global\n    option httplog\n\
         \x20   timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         frontend fe\n    bind 127.0.0.1:{pp} accept-proxy name P\n\
         \x20   bind 127.0.0.1:{tls} ssl crt {crt} name T\n    bind 127.0.0.1:{plain} name H\n\
         \x20   error-log-format \"{ERROR_FORMAT}\"\n    default_backend be\n\
         frontend legacy\n    bind 127.0.0.1:{pp2} accept-proxy name P2\n\
         \x20   bind 127.0.0.1:{tls2} ssl crt {crt}\n    default_backend be\n\
         backend be\n    server s 127.0.0.1:1\n"
    )
}

/// Sends `bytes`, ends its side, and waits for the proxy to close.
fn send_and_close(port: u16, bytes: &[u8]) {
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    // The proxy may have refused and closed already (a bad header is
    // refused as soon as it is seen).
    let _ = c.write_all(bytes);
    let _ = c.shutdown(Shutdown::Write);
    let mut sink = Vec::new();
    let _ = c.read_to_end(&mut sink);
}

/// The PROXY headers sent, with what each is.
const HEADERS: &[(&str, &[u8])] = &[
    ("nothing", b""),
    ("not a header", b"GET / HTTP/1.1\r\n\r\n"),
    ("unknown protocol word", b"PROXY garbage\r\n"),
    ("unknown protocol", b"PROXY TCP5 1.2.3.4 5.6.7.8 1 2\r\n"),
    ("bad address", b"PROXY TCP4 1.2.3.x 5.6.7.8 1 2\r\n"),
    ("no CR", b"PROXY TCP4 1.2.3.4 5.6.7.8 1 2\n"),
    ("cut short", b"PROXY TCP4 1.2"),
    (
        "v2 bad command",
        b"\r\n\r\n\x00\r\nQUIT\n\x22\x11\x00\x0c\x01\x02\x03\x04\x05\x06\x07\x08\x00\x01\x00\x02",
    ),
    (
        "v2 other version",
        b"\r\n\r\n\x00\r\nQUIT\n\x11\x11\x00\x0c\x01\x02\x03\x04\x05\x06\x07\x08\x00\x01\x00\x02",
    ),
];

/// Sends every case to a proxy's ports; each one's log line has come
/// before the next is sent (a line per case, in order).
fn run_cases(p: &Ports, sys: &Syslog) -> Vec<String> {
    let [pp, tls, plain, pp2, tls2] = p.0;
    let mut cases: Vec<(u16, &[u8])> = Vec::new();
    for port in [pp, pp2] {
        cases.extend(HEADERS.iter().map(|(_, h)| (port, *h)));
    }
    for port in [tls, tls2] {
        // A client that closes at once, one that speaks something else.
        cases.push((port, b""));
        cases.push((port, b"GET / HTTP/1.1\r\n\r\n"));
    }
    // HTTP/1 requests that never come whole.
    cases.push((plain, b"GET /x HTTP/1.1\r\nBad Header: y\r\n\r\n"));
    cases.push((plain, b"GET /x HTTP/1.1\r\nHost: a\r\n"));
    for (i, (port, bytes)) in cases.iter().enumerate() {
        send_and_close(*port, bytes);
        wait_for(
            &format!("log line {}", i + 1),
            Duration::from_secs(5),
            || (case_lines(sys).len() > i).then_some(()),
        );
    }
    case_lines(sys)
}

/// The lines logged for the cases (not those about starting), masked.
fn case_lines(sys: &Syslog) -> Vec<String> {
    let lines = sys.lines.lock().unwrap();
    let msgs = lines.iter().map(|l| masked(l));
    msgs.filter(|l| !l.starts_with("Proxy ")).collect()
}

/// The message of a syslog line with its date and client port masked.
fn masked(line: &str) -> String {
    let msg = line.split_once("]: ").map_or(line, |(_, m)| m);
    let words: Vec<String> = msg
        .split(' ')
        .map(|w| match w.rsplit_once(':') {
            Some((ip, port)) if ip == "127.0.0.1" && port.parse::<u16>().is_ok() => {
                format!("{ip}:P")
            }
            _ if w.starts_with('[') && w.ends_with(']') => "[DATE]".into(),
            _ => w.to_string(),
        })
        .collect();
    words.join(" ")
}

#[test]
fn connection_errors_log_as_haproxy_with_and_without_error_log_format() {
    let pki = Pki::new();
    let crt = pki.path("certs/1-www.pem");
    let (wsys, hsys) = (Syslog::start(), Syslog::start());
    let wp = Ports([(); 5].map(|()| free_port()));
    let hp = Ports([(); 5].map(|()| free_port()));
    let Some(_h) = Haproxy::start(&cfg(hsys.port(), &hp, &crt), hp.0[2]) else {
        panic!("haproxy is not installed: tests/run installs it");
    };
    let _w = Weir::start(&cfg(wsys.port(), &wp, &crt), wp.0[2]);
    let (w, h) = (run_cases(&wp, &wsys), run_cases(&hp, &hsys));
    assert_eq!(w.len(), h.len(), "weir {w:#?}\nhaproxy {h:#?}");
    let diffs: Vec<String> = w
        .iter()
        .zip(&h)
        .filter(|(a, b)| a != b)
        .map(|(a, b)| format!("  weir    {a}\n  haproxy {b}"))
        .collect();
    assert!(diffs.is_empty(), "differences:\n{}", diffs.join("\n"));
    // The format was used, with haproxy's numbers.
    assert!(w
        .iter()
        .any(|l| l.contains("ELF 127.0.0.1 fe fe/<NOSRV> 17 ")));
    assert!(w
        .iter()
        .any(|l| l.contains("ELF 127.0.0.1 fe~ fe/<NOSRV> 34 ")));
    assert!(w
        .iter()
        .any(|l| l.contains(" legacy/P2: Truncated PROXY protocol header received")));
}
