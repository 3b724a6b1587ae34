//! Unit tests of `log.rs`.

use super::*;
use weir_config::logformat::{compile, TCPLOG_FORMAT};

#[test]
fn tcplog_layout() {
    let f = compile(TCPLOG_FORMAT).unwrap();
    let r = LogRecord {
        client: Some("10.0.1.2:33313".parse().unwrap()),
        frontend: "fnt",
        backend: "bck",
        server: Some("srv1"),
        accept: std::time::Duration::from_millis(1_233_924_771_443),
        tw: 0,
        tc: 0,
        tt: 5007,
        bytes_out: 212,
        term: crate::term::Term::NORMAL,
        retries: 3,
        ..LogRecord::default()
    };
    let line = render(&f, &r);
    let gmt = compile("%T").unwrap();
    assert_eq!(render(&gmt, &r), "06/Feb/2009:12:52:51 +0000");
    let tail = line.split_once("] ").unwrap().1;
    assert_eq!(tail, "fnt bck/srv1 0/0/5007 212 -- 0/0/0/0/3 0/0");
    assert!(line.starts_with("10.0.1.2:33313 ["));
}

#[test]
fn civil_dates() {
    assert_eq!(civil_from_days(0), (1970, 1, 1));
    assert_eq!(civil_from_days(19_723), (2024, 1, 1));
    assert_eq!(civil_from_days(19_782), (2024, 2, 29));
}
