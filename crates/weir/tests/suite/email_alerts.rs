//! Email alerts beside haproxy: a server that goes down is mailed to the
//! `mailers` section's SMTP server (a test server speaking SMTP), with
//! the same dialogue and the same mail.

use crate::common::*;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// An SMTP server that accepts every mail; what clients sent, line by line.
fn smtp_sink() -> (u16, Arc<Mutex<Vec<String>>>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s2 = seen.clone();
    std::thread::spawn(move || {
        for c in l.incoming() {
            let Ok(mut c) = c else { return };
            c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            let _ = c.write_all(b"220 sink ESMTP\r\n");
            let mut r = BufReader::new(c.try_clone().unwrap());
            let mut data = false;
            loop {
                let mut line = String::new();
                if r.read_line(&mut line).unwrap_or(0) == 0 {
                    break;
                }
                let line = line.trim_end_matches("\r\n").to_string();
                s2.lock().unwrap().push(line.clone());
                let reply: &[u8] = if data {
                    if line != "." {
                        continue;
                    }
                    data = false;
                    b"250 queued\r\n"
                } else if line == "DATA" {
                    data = true;
                    b"354 go on\r\n"
                } else if line == "QUIT" {
                    let _ = c.write_all(b"221 bye\r\n");
                    break;
                } else {
                    b"250 ok\r\n"
                };
                let _ = c.write_all(reply);
            }
        }
    });
    (port, seen)
}

/// A dialogue with what may differ masked: the date, the check's duration.
fn masked(lines: &[String]) -> Vec<String> {
    lines
        .iter()
        .map(|l| {
            if l.starts_with("Date: ") {
                return "Date: D".into();
            }
            match l.find("check duration: ") {
                Some(i) => {
                    let rest = &l[i + 16..];
                    let end = rest.find("ms").unwrap_or(0);
                    format!("{}check duration: Nms{}", &l[..i], &rest[end + 2..])
                }
                None => l.clone(),
            }
        })
        .collect()
}

#[test]
fn a_server_going_down_is_mailed_as_haproxy_mails_it() {
    let seen = beside_haproxy(|start| {
        let (smtp, lines) = smtp_sink();
        let port = free_port();
        let cfg = format!(
            "mailers mta\n    mailer smtp1 127.0.0.1:{smtp}\n    timeout mail 5s\n\
             defaults\n    mode http\n    timeout connect 1s\n    timeout client 3s\n    timeout server 3s\n\
             backend b\n    email-alert mailers mta\n    email-alert from haproxy@example.com\n    email-alert to ops@example.com\n\
             \x20   email-alert level notice\n    email-alert myhostname lb1\n\
             \x20   server s1 127.0.0.1:{} check inter 300ms fall 1 rise 1\n\
             listen l\n    bind 127.0.0.1:{port}\n    http-request return status 200\n",
            free_port()
        );
        let _p = start(&cfg, port);
        wait_for("the mail's QUIT", Duration::from_secs(15), || {
            let l = lines.lock().unwrap();
            l.iter().any(|x| x == "QUIT").then_some(())
        });
        let got = lines.lock().unwrap().clone();
        masked(&got)
    });
    assert_eq!(
        seen[..4],
        [
            "HELO lb1",
            "MAIL FROM:<haproxy@example.com>",
            "RCPT TO:<ops@example.com>",
            "DATA"
        ]
    );
    assert!(
        seen[7].starts_with(
            "Subject: [HAProxy Alert] Server b/s1 is DOWN, reason: Layer4 connection problem"
        ),
        "{seen:?}"
    );
    assert_eq!(seen.last().map(String::as_str), Some("QUIT"));
}

#[test]
fn incomplete_email_alerts_are_dropped_with_a_warning_and_unknown_mailers_refused() {
    let (code, out, err) = check_cfg(
        "defaults\n    mode http\nbackend b\n    email-alert to ops@example.com\n    server s1 127.0.0.1:1\n",
    );
    let t = format!("{out}{err}");
    assert_eq!(code, 0, "{t}");
    assert!(
        t.contains("'email-alert' will be ignored for backend 'b'"),
        "{t}"
    );
    let (code, out, err) = check_cfg(
        "defaults\n    mode http\nbackend b\n    email-alert mailers nope\n    email-alert from a@b\n    email-alert to c@d\n    server s1 127.0.0.1:1\n",
    );
    assert_ne!(code, 0);
    assert!(format!("{out}{err}").contains("Proxy 'b': unable to find mailers 'nope'."));
}
