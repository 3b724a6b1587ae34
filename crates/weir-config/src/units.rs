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
#[path = "units_tests.rs"]
mod tests;
