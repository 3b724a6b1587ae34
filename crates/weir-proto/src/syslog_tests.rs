//! Each case is what haproxy 2.6's `log-forward` wrote for the same
//! message and target (observed with Debian's haproxy).

use super::*;

fn now() -> Now {
    Now {
        year: 2026,
        rfc3164: "Nov 26 21:11:15".into(),
        rfc5424: "2026-11-26T21:11:15.750268+00:00".into(),
    }
}

fn out(input: &str, fmt: impl Into<Option<Format>>, facility: u8) -> String {
    let m = parse(input.as_bytes());
    String::from_utf8(render(&m, input.as_bytes(), fmt.into(), facility, &now())).unwrap()
}

const A: &str = "<134>Nov 26 21:10:42 myhost haproxy[1234]: hello world";
const B: &str = "<13>1 2026-11-26T21:10:42.123456+00:00 h2 app 99 ID47 [x@1 a=\"b\"] msg five";
const C: &str = "just text";
const D: &str = "<11>Nov 26 21:10:42 tagonly: m3";
const E: &str = "<11>garbage here";
/// haproxy's own log line (no host): the tag is read as the host.
const F: &str = "<134>Nov 26 21:11:34 haproxy[15253]: 127.0.0.1:40886 [26/Nov/2026:21:11:34.766] fe1 be/app1 \"GET / HTTP/1.1\"";

#[test]
fn rfc5424_targets() {
    let f = |i| out(i, Format::Rfc5424, 16);
    assert_eq!(
        f(A),
        "<134>1 2026-11-26T21:10:42-00:00 myhost haproxy 1234 - - hello world"
    );
    assert_eq!(f(B), B);
    assert_eq!(
        f(C),
        "<128>1 2026-11-26T21:11:15.750268+00:00 - - - - - just text"
    );
    assert_eq!(f(D), "<11>1 2026-11-26T21:10:42-00:00 tagonly: - - - - m3");
    assert_eq!(
        f(E),
        "<11>1 2026-11-26T21:11:15.750268+00:00 - - - - - garbage here"
    );
    assert_eq!(
        f(F),
        "<134>1 2026-11-26T21:11:34-00:00 haproxy[15253]: - - - - 127.0.0.1:40886 [26/Nov/2026:21:11:34.766] fe1 be/app1 \"GET / HTTP/1.1\""
    );
}

#[test]
fn rfc3164_short_raw_and_unchanged_targets() {
    let f = |i| out(i, Format::Rfc3164, 17);
    assert_eq!(f(B), "<13>Nov 26 21:10:42 h2 app[99]: msg five");
    assert_eq!(f(C), "<136>Nov 26 21:11:15 localhost just text");
    assert_eq!(f(D), "<11>Nov 26 21:10:42 tagonly: m3");
    assert_eq!(f(E), "<11>Nov 26 21:11:15 localhost garbage here");
    assert_eq!(f(A), A);
    let s = |i| out(i, Format::Short, 17);
    assert_eq!(
        [s(A), s(B), s(C), s(D)],
        ["<6>hello world", "<5>msg five", "<0>just text", "<3>m3"]
    );
    let l = |i| out(i, Format::Local, 17);
    assert_eq!(
        [l(A), l(B), l(C)],
        [
            "<134>Nov 26 21:10:42 haproxy[1234]: hello world",
            "<13>Nov 26 21:10:42 app[99]: msg five",
            "<136>Nov 26 21:11:15 just text"
        ]
    );
    let p = |i| out(i, Format::Priority, 16);
    assert_eq!(
        [p(A), p(B), p(C)],
        ["<134>hello world", "<13>msg five", "<128>just text"]
    );
    let t = |i| out(i, Format::Timed, 17);
    assert_eq!(
        [t(A), t(B), t(C)],
        [
            "<6>2026-11-26T21:10:42-00:00 hello world",
            "<5>2026-11-26T21:10:42.123456+00:00 msg five",
            "<0>2026-11-26T21:11:15.750268+00:00 just text"
        ]
    );
    assert_eq!(
        out(A, Format::Iso, 17),
        "2026-11-26T21:10:42-00:00 hello world"
    );
    let r = |i| out(i, Format::Raw, 17);
    assert_eq!(
        [r(A), r(B), r(C), r(E)],
        ["hello world", "msg five", "just text", "garbage here"]
    );
    for i in [A, B, C, D, E] {
        assert_eq!(out(i, None, 3), i);
    }
}

#[test]
fn parts_severities_and_odd_input() {
    let m = parse(A.as_bytes());
    assert_eq!(
        (m.host, m.tag, m.pid),
        (Some("myhost"), Some("haproxy"), Some("1234"))
    );
    assert_eq!(severity(&m), 6);
    assert_eq!(severity(&parse(b"no pri")), 0);
    // A line end is not part of the message; a bad priority is text.
    assert_eq!(parse(b"<13>x\n").msg, b"x");
    assert_eq!(parse(b"<999>x").pri, None);
    assert_eq!(parse(b"<>x").msg, b"<>x");
    // RFC 5424 with unterminated structured data: read as RFC 3164.
    let m = parse(b"<13>1 2026-11-26T21:10:42Z h a p m [x");
    assert_eq!(m.time, None);
    assert_eq!(m.msg, b"1 2026-11-26T21:10:42Z h a p m [x");
    assert_eq!(parse(b"").msg, b"");
}
