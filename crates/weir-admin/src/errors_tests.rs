use super::*;

#[test]
fn bytes_are_dumped_line_by_line_with_offsets() {
    let d = dump(b"GET /a b HTTP/1.1\r\nHost: x\r\n\x00\xff\\\r\n");
    assert_eq!(
        d,
        "  00000  GET /a b HTTP/1.1\\r\\n\n  00019  Host: x\\r\\n\n  00028  \\x00\\xff\\\\\\r\\n\n"
    );
    let long = dump(&[b'a'; 130]);
    assert_eq!(long.lines().count(), 3);
    assert!(long.lines().nth(2).unwrap().starts_with("  00128  aa"));
    assert_eq!(dump(b""), "");
}

#[test]
fn events_have_haproxy_headings() {
    let e = ErrorEvent {
        date: "23/Nov/2026:08:25:06.236".into(),
        side: "frontend",
        proxy: "fe".into(),
        proxy_id: 2,
        src: "127.0.0.1:39326".into(),
        reason: "bad request: invalid URI".into(),
        bytes: b"GET /a b\r\n".to_vec(),
        ..ErrorEvent::default()
    };
    let t = render("23/Nov/2026:08:25:07.000", 1, &[e]);
    let lines: Vec<&str> = t.lines().collect();
    assert_eq!(
        lines[0],
        "Total events captured on [23/Nov/2026:08:25:07.000] : 1"
    );
    assert_eq!(lines[1], " ");
    assert_eq!(
        lines[2],
        "[23/Nov/2026:08:25:06.236] frontend fe (#2): invalid request"
    );
    assert_eq!(
        lines[3],
        "  backend <NONE> (#-1), server <NONE> (#-1), event #0, src 127.0.0.1:39326"
    );
    assert!(lines[4].contains("reason: bad request: invalid URI"));
    assert_eq!(lines[6], "  00000  GET /a b\\r\\n");
}
