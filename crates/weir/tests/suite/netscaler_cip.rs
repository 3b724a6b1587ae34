//! `accept-netscaler-cip`: NetScaler Client IP headers of both layouts
//! (legacy and standard, IPv4 and IPv6, IP options, odd lengths) and bad
//! ones, sent to weir and to Debian's haproxy 2.6: what the server gets
//! and every log line (the addresses the header names, `fc_err` and its
//! words) compared.

use crate::common::*;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::time::Duration;

const MAGIC: u32 = 123456;

fn cfg(sys: u16, port: u16, origin: u16) -> String {
    format!(
        "global\n    log 127.0.0.1:{sys} local0\n\
         defaults\n    mode tcp\n    log global\n\
         \x20   timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         frontend fe\n    bind 127.0.0.1:{port} accept-netscaler-cip {MAGIC}\n\
         \x20   log-format \"CIP %ci:%cp %fi:%fp %[src]:%[src_port] %[fc_err] %ts %B\"\n\
         \x20   error-log-format \"ERR %[fc_err] <%[fc_err_str]> %ts\"\n\
         \x20   default_backend be\n\
         backend be\n    server s 127.0.0.1:{origin}\n"
    )
}

fn ip4(src: [u8; 4], dst: [u8; 4], ihl: u8) -> Vec<u8> {
    let mut h = vec![0x40 | ihl, 0, 0, 40, 0, 0, 0, 0, 64, 6, 0, 0];
    h.extend_from_slice(&src);
    h.extend_from_slice(&dst);
    h.resize(usize::from(ihl) * 4, 0);
    h
}

fn ip6(src: u8, dst: u8) -> Vec<u8> {
    let mut h = vec![0x60, 0, 0, 0, 0, 20, 6, 64];
    for last in [src, dst] {
        let mut a = [0u8; 16];
        a[..4].copy_from_slice(&[0x20, 0x01, 0x0d, 0xb8]);
        a[15] = last;
        h.extend_from_slice(&a);
    }
    h
}

fn tcp(sp: u16, dp: u16, words: usize) -> Vec<u8> {
    let mut h = sp.to_be_bytes().to_vec();
    h.extend_from_slice(&dp.to_be_bytes());
    h.resize(words * 4, 0);
    h
}

fn legacy(magic: u32, len: usize, hdr: &[u8]) -> Vec<u8> {
    let mut b = magic.to_be_bytes().to_vec();
    b.extend_from_slice(&(len as u32).to_be_bytes());
    b.extend_from_slice(hdr);
    b
}

fn standard(total: usize, typ: u16, len: usize, hdr: &[u8]) -> Vec<u8> {
    let mut b = MAGIC.to_be_bytes().to_vec();
    b.extend_from_slice(&(total as u32).to_be_bytes());
    b.extend_from_slice(&typ.to_be_bytes());
    b.extend_from_slice(&(len as u16).to_be_bytes());
    b.extend_from_slice(hdr);
    b
}

/// Each case's bytes (the client's first bytes follow them).
fn cases() -> Vec<Vec<u8>> {
    let h4 = [ip4([10, 1, 2, 3], [10, 9, 8, 7], 5), tcp(1111, 2222, 5)].concat();
    let h6 = [ip6(1, 2), tcp(5555, 6666, 5)].concat();
    let opts = [ip4([10, 1, 2, 5], [10, 9, 8, 5], 6), tcp(1212, 2323, 7)].concat();
    let mut v5 = h4.clone();
    v5[0] = 0x55;
    let x4 = [h4.as_slice(), b"XXXX"].concat();
    vec![
        legacy(MAGIC, 40, &h4),
        standard(52, 1, 40, &h4),
        legacy(MAGIC, 60, &h6),
        standard(72, 1, 60, &h6),
        legacy(MAGIC, opts.len(), &opts),
        // The standard layout's type and total length are not checked; its
        // own length says what is taken, as the legacy one's.
        standard(52, 2, 40, &h4),
        standard(56, 1, 40, &x4),
        standard(52, 1, 44, &x4),
        legacy(MAGIC, 44, &x4),
        legacy(MAGIC, 10, &h4),
        // Refused: another magic, an IP version 5, too few bytes.
        legacy(99, 40, &h4),
        legacy(MAGIC, 40, &v5),
        legacy(MAGIC, 40, &h4)[..20].to_vec(),
        legacy(MAGIC, 1000, &h4),
        legacy(
            MAGIC,
            24,
            &[ip4([10, 1, 2, 3], [10, 9, 8, 7], 5), tcp(1, 2, 1)].concat(),
        ),
        standard(52, 1, 40, &ip6(1, 2)),
        Vec::new(),
    ]
}

/// Sends every case (its bytes, then `hello` and its end) and waits for
/// its log line; what the server got for each, and the lines.
fn run(start: Start<'_>) -> (Vec<String>, Vec<String>) {
    let sys = Syslog::start();
    let origin = Server::start(|mut s| {
        let mut got = Vec::new();
        let _ = s.read_to_end(&mut got);
        let _ =
            s.write_all(format!("got {}", String::from_utf8_lossy(&got).escape_debug()).as_bytes());
    });
    let port = free_port();
    let _proxy = start(&cfg(sys.port(), port, origin.port()), port);
    let mut seen = Vec::new();
    for (i, case) in cases().iter().enumerate() {
        let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let _ = c.write_all(&[case.as_slice(), b"hello"].concat());
        let _ = c.shutdown(Shutdown::Write);
        let mut reply = Vec::new();
        let _ = c.read_to_end(&mut reply);
        seen.push(String::from_utf8_lossy(&reply).into_owned());
        wait_for(
            &format!("log line {}", i + 1),
            Duration::from_secs(5),
            || (lines(&sys).len() > i).then_some(()),
        );
    }
    (seen, lines(&sys))
}

fn lines(sys: &Syslog) -> Vec<String> {
    let l = sys.lines.lock().unwrap();
    let msgs = l.iter().filter_map(|l| l.split_once("]: ").map(|(_, m)| m));
    msgs.filter(|m| m.starts_with("CIP ") || m.starts_with("ERR "))
        .map(str::to_string)
        .collect()
}

#[test]
fn netscaler_client_ip_headers_name_the_session_as_in_haproxy() {
    let (seen, lines) = beside_haproxy(run);
    // Not a stub: the header's addresses, the bytes after it, haproxy's
    // error numbers.
    assert_eq!(seen[0], "got hello");
    assert!(lines[0].starts_with("CIP 10.1.2.3:1111 10.9.8.7:2222 10.1.2.3:1111 0 --"));
    assert!(lines[3].starts_with("CIP 2001:db8::1:5555 2001:db8::2:6666 2001:db8::1:5555 0 --"));
    assert_eq!(seen[6], "got XXXXhello");
    assert_eq!(
        lines[10],
        "ERR 22 <Received an invalid NetScaler Client IP magic number> PR"
    );
    assert_eq!(
        lines[11],
        "ERR 23 <Received an unhandled protocol in the NetScaler Client IP header> PR"
    );
    assert_eq!(
        lines[12],
        "ERR 21 <Truncated NetScaler Client IP header received> PR"
    );
    assert_eq!(seen[12], "");
}
