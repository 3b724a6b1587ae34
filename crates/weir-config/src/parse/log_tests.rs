//! Unit tests of `log.rs`.

use super::*;

fn p(line: &str) -> Result<LogTarget, String> {
    let w: Vec<String> = line.split_whitespace().map(String::from).collect();
    parse_log_target(&w, &Loc::default())
}

#[test]
fn forms() {
    let t = p("127.0.0.1:5140 local0").unwrap();
    assert_eq!(t.facility, 16);
    assert_eq!(t.max_level, 7);
    let t = p("127.0.0.1 len 2048 format rfc5424 local1 notice info").unwrap();
    assert_eq!(t.max_len, 2048);
    assert_eq!(t.format, LogFormatKind::Rfc5424);
    assert_eq!((t.facility, t.max_level, t.min_level), (17, 5, 6));
    assert!(matches!(
        p("/dev/log daemon").unwrap().dest,
        LogDest::Unix(_)
    ));
    assert!(matches!(
        p("stdout format raw local0").unwrap().dest,
        LogDest::Stdout
    ));
    assert!(p("127.0.0.1 nofacility").is_err());
    assert!(p("127.0.0.1 local0 loud").is_err());
    assert!(p("127.0.0.1 local0 info debug extra").is_err());
    assert!(p("ring@buf local0").is_err());
    assert!(p("127.0.0.1 len 10 local0").is_err());
}
