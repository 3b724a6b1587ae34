//! `log` lines (manual §3.1 "log"): target, `len`, `format`, facility, levels.

use crate::addr::{parse_server_addr, ServerAddr};
use crate::diag::Loc;
use crate::model::{LogDest, LogFormatKind, LogSample, LogTarget};

/// Syslog facilities in code order.
pub const FACILITIES: &[&str] = &[
    "kern", "user", "mail", "daemon", "auth", "syslog", "lpr", "news", "uucp", "cron", "auth2",
    "ftp", "ntp", "audit", "alert", "cron2", "local0", "local1", "local2", "local3", "local4",
    "local5", "local6", "local7",
];

/// Syslog levels in code order.
pub const LEVELS: &[&str] = &[
    "emerg", "alert", "crit", "err", "warning", "notice", "info", "debug",
];

fn level(name: &str) -> Result<u8, String> {
    LEVELS
        .iter()
        .position(|l| *l == name)
        .map(|p| p as u8)
        .ok_or_else(|| format!("unknown log level '{name}'"))
}

/// Parses the words after `log` (not `log global`).
/// [`parse_log_target`] with environment variables in the address
/// expanded, unquoted as well, as haproxy's address parser does (an unset
/// one is empty).
pub fn log_target_env(
    args: &[String],
    loc: &Loc,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<LogTarget, String> {
    let mut a = args.to_vec();
    if let Some(t) = a.first_mut() {
        *t = crate::addr::expand_env(t, env);
    }
    parse_log_target(&a, loc)
}

pub fn parse_log_target(args: &[String], loc: &Loc) -> Result<LogTarget, String> {
    let target = args
        .first()
        .ok_or("expects a target, a facility and optional levels")?;
    let dest = match target.as_str() {
        "stdout" | "fd@1" => LogDest::Stdout,
        "stderr" | "fd@2" => LogDest::Stderr,
        t if t.starts_with('/') => LogDest::Unix(t.to_string()),
        t if t.starts_with("unix@") => LogDest::Unix(t["unix@".len()..].to_string()),
        t if t.starts_with("ring@") => LogDest::Ring(t["ring@".len()..].to_string()),
        t if t.starts_with("tcp@") || t.starts_with("fd@") => {
            return Err(format!("log target '{t}' is not supported by weir yet"))
        }
        t => {
            let a = parse_server_addr(t, Some(514))?;
            if let ServerAddr::Inet { .. } = a {
                LogDest::Udp(a)
            } else {
                return Err(format!("unsupported log target '{t}'"));
            }
        }
    };
    let mut max_len = 1024usize;
    let mut sample = None;
    let mut format = None;
    let mut i = 1;
    loop {
        match args.get(i).map(String::as_str) {
            Some("len") => {
                let v = args.get(i + 1).ok_or("'len' expects a length")?;
                max_len = v
                    .parse()
                    .map_err(|_| format!("invalid 'len' value '{v}'"))?;
                if !(80..=65535).contains(&max_len) {
                    return Err(format!("'len' must be between 80 and 65535, got {max_len}"));
                }
                i += 2;
            }
            Some("format") => {
                let v = args.get(i + 1).ok_or("'format' expects a format name")?;
                format = Some(format_kind(v)?);
                i += 2;
            }
            Some("sample") => {
                let v = args.get(i + 1).ok_or("'sample' expects <ranges>:<size>")?;
                sample = Some(parse_sample(v)?);
                i += 2;
            }
            _ => break,
        }
    }
    let fac = args.get(i).ok_or("expects a facility after the target")?;
    let facility = FACILITIES
        .iter()
        .position(|f| f == fac)
        .ok_or_else(|| format!("unknown log facility '{fac}'"))? as u8;
    let max_level = args.get(i + 1).map_or(Ok(7), |l| level(l))?;
    let min_level = args.get(i + 2).map_or(Ok(0), |l| level(l))?;
    if args.len() > i + 3 {
        return Err(format!(
            "unexpected '{}' after the log levels",
            args[i + 3..].join(" ")
        ));
    }
    Ok(LogTarget {
        dest,
        sample,
        max_len,
        format,
        facility,
        max_level,
        min_level,
        loc: loc.clone(),
    })
}

/// A `format` name of a `log` line or a `ring`.
pub fn format_kind(v: &str) -> Result<LogFormatKind, String> {
    Ok(match v {
        "rfc3164" => LogFormatKind::Rfc3164,
        "local" => LogFormatKind::Local,
        "rfc5424" => LogFormatKind::Rfc5424,
        "short" => LogFormatKind::Short,
        "priority" => LogFormatKind::Priority,
        "iso" => LogFormatKind::Iso,
        "timed" => LogFormatKind::Timed,
        "raw" => LogFormatKind::Raw,
        other => return Err(format!("unknown log format '{other}'")),
    })
}

/// `<ranges>:<size>`: comma-separated `n` or `a-b` (from 1), and a size
/// at least the highest limit.
fn parse_sample(v: &str) -> Result<LogSample, String> {
    let bad = || format!("invalid 'sample' value '{v}' (expects <ranges>:<size>)");
    let (ranges, size) = v.split_once(':').ok_or_else(bad)?;
    let num = |t: &str| t.parse::<u32>().ok().filter(|n| *n > 0).ok_or_else(bad);
    let size = num(size)?;
    let ranges = ranges
        .split(',')
        .map(|r| match r.split_once('-') {
            Some((a, b)) => Ok((num(a)?, num(b)?)),
            None => num(r).map(|n| (n, n)),
        })
        .collect::<Result<Vec<_>, _>>()?;
    if ranges.iter().any(|&(a, b)| a > b || b > size) {
        return Err(format!(
            "invalid 'sample' value '{v}': ranges must be ordered and within the size"
        ));
    }
    Ok(LogSample { ranges, size })
}

#[cfg(test)]
#[path = "log_tests.rs"]
mod tests;
