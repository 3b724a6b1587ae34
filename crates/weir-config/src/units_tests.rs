//! Unit tests of `units.rs`.

use super::*;

#[test]
fn durations() {
    assert_eq!(parse_duration("100").unwrap(), Duration::from_millis(100));
    assert_eq!(parse_duration("250us").unwrap(), Duration::from_micros(250));
    assert_eq!(parse_duration("5s").unwrap(), Duration::from_secs(5));
    assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
    assert_eq!(parse_duration("1h").unwrap(), Duration::from_secs(3600));
    assert_eq!(parse_duration("1d").unwrap(), Duration::from_secs(86400));
    assert!(parse_duration("5x").is_err());
    assert!(parse_duration("s").is_err());
    assert!(parse_duration("").is_err());
    assert!(parse_duration("30d").is_err(), "overflows 31-bit ms");
    assert!(parse_duration("99999999999999999999").is_err());
}

#[test]
fn sizes() {
    assert_eq!(parse_size("16384").unwrap(), 16384);
    assert_eq!(parse_size("16k").unwrap(), 16384);
    assert_eq!(parse_size("2m").unwrap(), 2 * 1024 * 1024);
    assert_eq!(parse_size("1g").unwrap(), 1 << 30);
    assert!(parse_size("1t").is_err());
    assert!(parse_size("k").is_err());
}
