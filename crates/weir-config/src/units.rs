//! Durations and sizes as HAProxy's manual §2.5 writes them (`10s`, `1m`, `16k`).

use std::time::Duration;

/// Parses a duration; a bare number is in `default_unit_ms` milliseconds
/// (1 for timeouts). Accepts `us ms s m h d` suffixes. Returns a message on error.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let digits_end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    if digits_end == 0 {
        return Err(format!(
            "invalid time value '{text}': expects <number>[us|ms|s|m|h|d]"
        ));
    }
    let (num, unit) = text.split_at(digits_end);
    let n: u64 = num
        .parse()
        .map_err(|_| format!("time value '{text}' is too large"))?;
    let us_per = match unit {
        "us" => 1u64,
        "" | "ms" => 1_000,
        "s" => 1_000_000,
        "m" => 60_000_000,
        "h" => 3_600_000_000,
        "d" => 86_400_000_000,
        _ => {
            return Err(format!(
                "unexpected character '{}' in time value '{text}': expects <number>[us|ms|s|m|h|d]",
                unit.chars().next().unwrap_or('?')
            ))
        }
    };
    let total = n
        .checked_mul(us_per)
        .ok_or_else(|| format!("time value '{text}' is too large"))?;
    // HAProxy stores timers in milliseconds on 31 bits: refuse what overflows it.
    if total / 1000 > i32::MAX as u64 {
        return Err(format!(
            "timer overflow in argument '{text}' (maximum value is 2147483647 ms or ~24.8 days)"
        ));
    }
    Ok(Duration::from_micros(total))
}

/// Parses a size with an optional `k`, `m` or `g` suffix (powers of 1024).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let digits_end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    if digits_end == 0 {
        return Err(format!("invalid size '{text}': expects <number>[k|m|g]"));
    }
    let (num, unit) = text.split_at(digits_end);
    let n: u64 = num
        .parse()
        .map_err(|_| format!("size '{text}' is too large"))?;
    let mul = match unit.to_ascii_lowercase().as_str() {
        "" => 1u64,
        "k" => 1024,
        "m" => 1024 * 1024,
        "g" => 1024 * 1024 * 1024,
        _ => return Err(format!("invalid size '{text}': expects <number>[k|m|g]")),
    };
    n.checked_mul(mul)
        .ok_or_else(|| format!("size '{text}' is too large"))
}

/// Parses an unsigned integer argument, naming the keyword in the error.
pub fn parse_u32(text: &str, what: &str) -> Result<u32, String> {
    text.parse::<u32>()
        .map_err(|_| format!("'{what}' expects an integer argument, got '{text}'"))
}

#[cfg(test)]
mod tests {
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
}
