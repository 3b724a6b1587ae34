//! Unit tests of `checks.rs`.

use super::*;

#[test]
fn status_lines() {
    assert!(evaluate_status_line(b"HTTP/1.1 200 OK\r\n\r\n", Duration::ZERO).ok);
    assert!(evaluate_status_line(b"HTTP/1.0 302 Found\r\n", Duration::ZERO).ok);
    let r = evaluate_status_line(b"HTTP/1.1 503 Service Unavailable\r\n", Duration::ZERO);
    assert!(!r.ok);
    assert_eq!(r.detail, ", code: 503, info: \"Service Unavailable\"");
    assert!(!evaluate_status_line(b"SSH-2.0-OpenSSH\r\n", Duration::ZERO).ok);
    assert!(!evaluate_status_line(b"", Duration::ZERO).ok);
}
