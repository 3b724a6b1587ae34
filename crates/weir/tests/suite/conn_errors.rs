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

/// A head with an invalid field name.
const BAD_HEAD: &[u8] = b"GET /x HTTP/1.1\r\nBad Header: y\r\n\r\n";

/// Sends `bytes`, reads until the proxy closes, then closes.
fn answered_then_closed(port: u16, bytes: &[u8]) {
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    c.write_all(bytes).unwrap();
    let mut sink = Vec::new();
    let _ = c.read_to_end(&mut sink);
}

/// Sends `bytes` and ends the client's side while the proxy (`pid`) is
/// stopped, once its event loop watches the connection: it learns both
/// from one event, as a busy proxy does (haproxy then blames the client,
/// `CR`).
fn ended_with(port: u16, bytes: &[u8], pid: i32) {
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let client = c.local_addr().unwrap().port();
    let five = Duration::from_secs(5);
    // (A socket not yet accepted has no inode.)
    let accepted = || server_side(port, client).filter(|(_, inode)| *inode != 0);
    let inode = wait_for("the proxy to accept", five, accepted).1;
    // Registered, and its first read tried: every thread asleep.
    wait_for("the proxy to wait on the connection", five, || {
        (watched(pid, inode) && all_in(pid, 'S')).then_some(())
    });
    // SAFETY: signals to a child process this test started.
    unsafe { libc::kill(pid, libc::SIGSTOP) };
    wait_for("the proxy to stop", five, || all_in(pid, 'T').then_some(()));
    c.write_all(bytes).unwrap();
    c.shutdown(Shutdown::Write).unwrap();
    // CLOSE_WAIT: the end came into the proxy's socket, after the bytes.
    wait_for("the end to reach the proxy", five, || {
        server_side(port, client)
            .filter(|(st, _)| *st == 8)
            .map(|_| ())
    });
    // SAFETY: as above.
    unsafe { libc::kill(pid, libc::SIGCONT) };
    let mut sink = Vec::new();
    let _ = c.read_to_end(&mut sink);
}

/// The state and inode of the proxy's side of the connection from client
/// port `client` to `port` (`/proc/net/tcp`).
fn server_side(port: u16, client: u16) -> Option<(u8, u64)> {
    let table = std::fs::read_to_string("/proc/net/tcp").ok()?;
    let (local, remote) = (
        format!("0100007F:{port:04X}"),
        format!("0100007F:{client:04X}"),
    );
    table.lines().skip(1).find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        (f.get(1) == Some(&local.as_str()) && f.get(2) == Some(&remote.as_str())).then(|| {
            let st = u8::from_str_radix(f.get(3).unwrap_or(&"0"), 16).unwrap_or(0);
            (st, f.get(9).and_then(|i| i.parse().ok()).unwrap_or(0))
        })
    })
}

/// Whether every thread of process `pid` is in `state` (`S` asleep, `T`
/// stopped).
fn all_in(pid: i32, state: char) -> bool {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
        .flatten();
    tasks
        .map(|t| std::fs::read_to_string(t.path().join("stat")).unwrap_or_default())
        .all(|st| {
            // The state follows the command's closing parenthesis.
            st.rsplit_once(") ")
                .is_some_and(|(_, rest)| rest.starts_with(state))
        })
}

/// Whether an epoll set of process `pid` holds the socket of `inode`.
fn watched(pid: i32, inode: u64) -> bool {
    let want = format!("socket:[{inode}]");
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .into_iter()
        .flatten()
        .flatten();
    let Some(fd) = fds
        .filter(|e| std::fs::read_link(e.path()).is_ok_and(|l| l.to_string_lossy() == want))
        .find_map(|e| e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()))
    else {
        return false;
    };
    let infos = std::fs::read_dir(format!("/proc/{pid}/fdinfo"))
        .into_iter()
        .flatten()
        .flatten();
    infos
        .filter_map(|e| std::fs::read_to_string(e.path()).ok())
        .any(|info| {
            info.lines().any(|l| {
                let mut w = l.split_whitespace();
                w.next() == Some("tfd:") && w.next().and_then(|n| n.parse::<u32>().ok()) == Some(fd)
            })
        })
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

/// What each case is, in the order [`run_cases`] sends them.
fn case_names() -> Vec<String> {
    let mut names = Vec::new();
    for bind in ["PROXY bind P", "PROXY bind P2"] {
        names.extend(HEADERS.iter().map(|(what, _)| format!("{bind}: {what}")));
    }
    for bind in ["TLS bind T", "TLS bind of legacy"] {
        names.push(format!("{bind}: closed at once"));
        names.push(format!("{bind}: plain HTTP"));
    }
    names.push("HTTP bind H: invalid header name".into());
    names.push("HTTP bind H: head cut short by the client".into());
    names.push("HTTP bind H: invalid header name with the client's end".into());
    names
}

/// Sends every case to a proxy's ports; each one's log line has come
/// before the next is sent (a line per case, in order).
fn run_cases(p: &Ports, sys: &Syslog, pid: i32) -> Vec<String> {
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
    // HTTP/1 requests that never come whole (an invalid one is answered
    // before the client ends its side: the proxy blames itself, `PR`).
    cases.push((plain, BAD_HEAD));
    cases.push((plain, b"GET /x HTTP/1.1\r\nHost: a\r\n"));
    cases.push((plain, BAD_HEAD));
    assert_eq!(cases.len(), case_names().len(), "a case without a name");
    let last = cases.len() - 1;
    for (i, (port, bytes)) in cases.iter().enumerate() {
        if i == last {
            ended_with(*port, bytes, pid);
        } else if *bytes == BAD_HEAD {
            answered_then_closed(*port, bytes);
        } else {
            send_and_close(*port, bytes);
        }
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
    let Some(hx) = Haproxy::start(&cfg(hsys.port(), &hp, &crt), hp.0[2]) else {
        panic!("haproxy is not installed: tests/run installs it");
    };
    let wx = Weir::start(&cfg(wsys.port(), &wp, &crt), wp.0[2]);
    let w = run_cases(&wp, &wsys, wx.pid());
    let h = run_cases(&hp, &hsys, hx.pid());
    assert_eq!(w.len(), h.len(), "weir {w:#?}\nhaproxy {h:#?}");
    let diffs: Vec<String> = w
        .iter()
        .zip(&h)
        .zip(case_names())
        .filter(|((a, b), _)| a != b)
        .map(|((a, b), what)| format!("  case: {what}\n  weir    {a}\n  haproxy {b}"))
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
    // An invalid head: `PR` answered before the client's end, `CR` with it.
    let bad = |st: &str| format!("<Success> {st} {st}-- 400 ");
    let ends: Vec<bool> = w
        .iter()
        .rev()
        .take(3)
        .map(|l| l.contains(&bad("CR")))
        .collect();
    assert_eq!(ends, [true, true, false], "the last three: {w:#?}");
    assert!(w
        .iter()
        .rev()
        .nth(2)
        .is_some_and(|l| l.contains(&bad("PR"))));
}
