//! Unit tests of `mail.rs`.

use super::*;

#[test]
fn a_mail_reads_as_haproxy_writes_it() {
    let env = Envelope {
        from: "haproxy@example.com".into(),
        to: "ops@example.com".into(),
        helo: "vm".into(),
    };
    // 2026-11-27 08:10:19 UTC, a Friday.
    let m = message(&env, "Server b/s1 is DOWN", 1_795_767_019);
    assert_eq!(
        m,
        "From: haproxy@example.com\r\nTo: ops@example.com\r\nDate: Fri, 27 Nov 2026 08:10:19 +0000 (UTC)\r\n\
         Subject: [HAProxy Alert] Server b/s1 is DOWN\r\n\r\nServer b/s1 is DOWN\r\n\r\n.\r\n"
    );
    assert!(
        message(&env, ".x", 0).contains("\r\n\r\n..x\r\n"),
        "dot-stuffed"
    );
    assert_eq!(rfc2822(0), "Thu, 01 Jan 1970 00:00:00 +0000 (UTC)");
}
