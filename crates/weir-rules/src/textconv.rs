//! Converters of manual §7.3.1 on text, hosts and dates: `ltrim`, `rtrim`,
//! `cut_crlf`, `host_only`, `port_only`, `hex2i`, `htonl`, `language`,
//! `http_date`, `ltime` and `utime` (strftime's conversions done here, in
//! UTC or at the offset the context gives for local time).

use crate::conv::int_cast;
use crate::sample::{Ctx, Sample};

/// A converter of this module with its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TextConv {
    Ltrim(Vec<u8>),
    Rtrim(Vec<u8>),
    CutCrlf,
    HostOnly,
    PortOnly,
    Hex2i,
    Htonl,
    /// `language(<values>[,<default>])`.
    Language(Vec<String>, Option<String>),
    /// `http_date([<offset>[,<unit>]])`: offset, and units per second.
    HttpDate(i64, i64),
    /// `ltime|utime(<format>[,<offset>])`: local time when true.
    Time {
        local: bool,
        format: String,
        offset: i64,
    },
}

/// The converter `name(args)` of this module, or `None` when `name` is
/// not one.
pub fn parse(name: &str, a: &[String]) -> Option<Result<TextConv, String>> {
    let none = |c: TextConv| {
        if a.is_empty() {
            Ok(c)
        } else {
            Err(format!("converter '{name}' takes no argument"))
        }
    };
    let chars = || match a {
        [c] if !c.is_empty() => Ok(c.as_bytes().to_vec()),
        _ => Err(format!("converter '{name}' expects a list of characters")),
    };
    let int = |s: &str| {
        s.parse::<i64>()
            .map_err(|_| format!("converter '{name}': '{s}' is not an integer"))
    };
    Some(match name {
        "ltrim" => chars().map(TextConv::Ltrim),
        "rtrim" => chars().map(TextConv::Rtrim),
        "cut_crlf" => none(TextConv::CutCrlf),
        "host_only" => none(TextConv::HostOnly),
        "port_only" => none(TextConv::PortOnly),
        "hex2i" => none(TextConv::Hex2i),
        "htonl" => none(TextConv::Htonl),
        "language" => match a {
            [v] => Ok(TextConv::Language(langs(v), None)),
            [v, d] => Ok(TextConv::Language(langs(v), Some(d.clone()))),
            _ => Err("converter 'language' expects a list of languages".into()),
        },
        "http_date" => {
            let unit = match a.get(1).map(String::as_str) {
                None | Some("s") => Ok(1),
                Some("ms") => Ok(1_000),
                Some("us") => Ok(1_000_000),
                Some(u) => Err(format!(
                    "converter 'http_date': unknown unit '{u}' (s, ms or us)"
                )),
            };
            let off = a.first().map_or(Ok(0), |o| int(o));
            off.and_then(|o| unit.map(|u| TextConv::HttpDate(o, u)))
        }
        "ltime" | "utime" => match a {
            [f] | [f, _] => {
                let offset = a.get(1).map_or(Ok(0), |o| int(o));
                offset.map(|offset| TextConv::Time {
                    local: name == "ltime",
                    format: f.clone(),
                    offset,
                })
            }
            _ => Err(format!("converter '{name}' expects a format")),
        },
        _ => return None,
    })
}

fn langs(v: &str) -> Vec<String> {
    v.split(';')
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

/// The host and the port of a Host value (`h`, `h:80`, `[::1]:80`).
fn host_port(b: &[u8]) -> (&[u8], Option<&[u8]>) {
    if b.first() == Some(&b'[') {
        return match b.iter().position(|&c| c == b']') {
            Some(end) => {
                let (host, rest) = b.split_at(end + 1);
                (host, rest.strip_prefix(b":"))
            }
            None => (b, None),
        };
    }
    match b.iter().rposition(|&c| c == b':') {
        Some(i) => (b.get(..i).unwrap_or_default(), b.get(i + 1..)),
        None => (b, None),
    }
}

/// `language`: the value of the highest q-factor among `langs` (its base
/// language when the variant is not listed), the first on ties.
fn language(header: &[u8], langs: &[String], default: Option<&String>) -> Option<Vec<u8>> {
    let text = String::from_utf8_lossy(header);
    let mut best: Option<(u32, &String)> = None;
    for item in text.split(',') {
        let mut parts = item.split(';');
        let tag = parts.next().unwrap_or("").trim();
        let q = parts
            .find_map(|p| p.trim().strip_prefix("q="))
            .map_or(1000, qvalue);
        if q == 0 || tag.is_empty() {
            continue;
        }
        let base = tag.split('-').next().unwrap_or(tag);
        let hit = langs
            .iter()
            .find(|l| l.as_str() == tag)
            .or_else(|| langs.iter().find(|l| l.as_str() == base));
        if let Some(l) = hit {
            if best.is_none_or(|(bq, _)| q > bq) {
                best = Some((q, l));
            }
        }
    }
    best.map(|(_, l)| l.as_bytes().to_vec())
        .or_else(|| default.map(|d| d.as_bytes().to_vec()))
}

/// A q-value in thousandths (`0.8` is 800).
fn qvalue(q: &str) -> u32 {
    let (int, frac) = q.split_once('.').unwrap_or((q, ""));
    let whole: u32 = int.trim().parse().unwrap_or(0);
    let mut thousandths = 0;
    for (i, c) in frac.chars().take(3).enumerate() {
        thousandths += c.to_digit(10).unwrap_or(0) * 10u32.pow(2 - i as u32);
    }
    (whole * 1000 + thousandths).min(1000)
}

const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
const FULL_DAYS: [&str; 7] = [
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
];
const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];
const FULL_MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// A broken-down time.
struct Tm {
    year: i64,
    /// 1 to 12.
    month: i64,
    day: i64,
    hour: i64,
    min: i64,
    sec: i64,
    /// Days since the epoch (for the weekday).
    days: i64,
    /// Day of the year, 1 to 366.
    yday: i64,
    /// Seconds east of UTC.
    off: i64,
    /// The seconds since the epoch it shows.
    epoch: i64,
}

/// Days since 1970-01-01 to (year, month 1–12, day), proleptic
/// Gregorian.
pub fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}

/// An HTTP date (`Sun, 06 Nov 1994 08:49:37 GMT`) of a Unix time.
pub fn http_date(secs: i64) -> String {
    strftime("%a, %d %b %Y %H:%M:%S GMT", &tm(secs, 0))
}

fn tm(epoch: i64, off: i64) -> Tm {
    let t = epoch + off;
    let days = t.div_euclid(86_400);
    let rem = t.rem_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let before = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334];
    let yday =
        before.get((month - 1) as usize).copied().unwrap_or(0) + day + i64::from(leap && month > 2);
    Tm {
        year,
        month,
        day,
        hour: rem / 3600,
        min: rem % 3600 / 60,
        sec: rem % 60,
        days,
        yday,
        off,
        epoch,
    }
}

fn weekday(t: &Tm) -> usize {
    t.days.rem_euclid(7) as usize
}

fn name(l: &[&'static str], i: i64) -> &'static str {
    usize::try_from(i)
        .ok()
        .and_then(|i| l.get(i))
        .copied()
        .unwrap_or("?")
}

/// strftime(3)'s conversions of `format` for `t` (the C locale's names).
fn strftime(format: &str, t: &Tm) -> String {
    let mut out = String::new();
    let mut it = format.chars();
    while let Some(c) = it.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let Some(f) = it.next() else {
            out.push('%');
            break;
        };
        let h12 = if t.hour % 12 == 0 { 12 } else { t.hour % 12 };
        // Sunday-based weekday, 0 to 6.
        let wday = (weekday(t) + 4) % 7;
        let s = match f {
            'Y' => t.year.to_string(),
            'C' => format!("{:02}", t.year.div_euclid(100)),
            'y' => format!("{:02}", t.year.rem_euclid(100)),
            'm' => format!("{:02}", t.month),
            'd' => format!("{:02}", t.day),
            'e' => format!("{:2}", t.day),
            'H' => format!("{:02}", t.hour),
            'k' => format!("{:2}", t.hour),
            'I' => format!("{h12:02}"),
            'l' => format!("{h12:2}"),
            'M' => format!("{:02}", t.min),
            'S' => format!("{:02}", t.sec),
            'j' => format!("{:03}", t.yday),
            'p' => if t.hour < 12 { "AM" } else { "PM" }.into(),
            'P' => if t.hour < 12 { "am" } else { "pm" }.into(),
            'a' => name(&DAYS, weekday(t) as i64).into(),
            'A' => name(&FULL_DAYS, weekday(t) as i64).into(),
            'b' | 'h' => name(&MONTHS, t.month - 1).into(),
            'B' => name(&FULL_MONTHS, t.month - 1).into(),
            'u' => (if wday == 0 { 7 } else { wday }).to_string(),
            'w' => wday.to_string(),
            's' => t.epoch.to_string(),
            'n' => "\n".into(),
            't' => "\t".into(),
            '%' => "%".into(),
            'z' => {
                let a = t.off.abs();
                let sign = if t.off < 0 { '-' } else { '+' };
                format!("{sign}{:02}{:02}", a / 3600, a % 3600 / 60)
            }
            'Z' if t.off == 0 => "UTC".into(),
            'Z' => String::new(),
            'T' => format!("{:02}:{:02}:{:02}", t.hour, t.min, t.sec),
            'R' => format!("{:02}:{:02}", t.hour, t.min),
            'D' => format!("{:02}/{:02}/{:02}", t.month, t.day, t.year.rem_euclid(100)),
            'F' => format!("{}-{:02}-{:02}", t.year, t.month, t.day),
            'c' => format!(
                "{} {} {:2} {:02}:{:02}:{:02} {}",
                name(&DAYS, weekday(t) as i64),
                name(&MONTHS, t.month - 1),
                t.day,
                t.hour,
                t.min,
                t.sec,
                t.year
            ),
            other => format!("%{other}"),
        };
        out.push_str(&s);
    }
    out
}

impl TextConv {
    /// Applies the converter; `None` when the input does not suit it.
    pub fn apply(&self, v: Sample, ctx: &dyn Ctx) -> Option<Sample> {
        Some(match self {
            TextConv::Ltrim(set) => {
                let b = v.to_bytes();
                let start = b.iter().position(|c| !set.contains(c)).unwrap_or(b.len());
                Sample::Str(b.get(start..).unwrap_or_default().to_vec())
            }
            TextConv::Rtrim(set) => {
                let b = v.to_bytes();
                let end = b
                    .iter()
                    .rposition(|c| !set.contains(c))
                    .map_or(0, |i| i + 1);
                Sample::Str(b.get(..end).unwrap_or_default().to_vec())
            }
            TextConv::CutCrlf => {
                let b = v.to_bytes();
                let end = b
                    .iter()
                    .position(|&c| c == b'\r' || c == b'\n')
                    .unwrap_or(b.len());
                Sample::Str(b.get(..end).unwrap_or_default().to_vec())
            }
            TextConv::HostOnly => {
                let b = v.to_bytes();
                Sample::Str(host_port(&b).0.to_ascii_lowercase())
            }
            TextConv::PortOnly => {
                let b = v.to_bytes();
                let port = host_port(&b)
                    .1
                    .and_then(|p| std::str::from_utf8(p).ok()?.parse::<i64>().ok());
                Sample::Int(port.unwrap_or(0))
            }
            TextConv::Hex2i => {
                let b = v.to_bytes();
                // (haproxy gives nothing for what is not hex, whatever
                // the manual says.)
                let s = std::str::from_utf8(&b).ok()?;
                Sample::Int(i64::from_str_radix(s, 16).ok()?)
            }
            TextConv::Htonl => {
                let n = int_cast(&v)? as u32;
                Sample::Str(n.to_be_bytes().to_vec())
            }
            TextConv::Language(langs, default) => {
                Sample::Str(language(&v.to_bytes(), langs, default.as_ref())?)
            }
            TextConv::HttpDate(off, unit) => {
                let when = int_cast(&v)? + off;
                let t = tm(when.div_euclid(*unit), 0);
                // Milliseconds or microseconds after the seconds.
                let frac = match unit {
                    1_000 => format!(".{:03}", when.rem_euclid(1_000)),
                    1_000_000 => format!(".{:06}", when.rem_euclid(1_000_000)),
                    _ => String::new(),
                };
                let text = strftime("%a, %d %b %Y %H:%M:%S", &t);
                Sample::Str(format!("{text}{frac} GMT").into_bytes())
            }
            TextConv::Time {
                local,
                format,
                offset,
            } => {
                let secs = int_cast(&v)? + offset;
                let off = if *local { ctx.utc_offset(secs) } else { 0 };
                Sample::Str(strftime(format, &tm(secs, off)).into_bytes())
            }
        })
    }

    /// Whether its output is an integer (for an ACL's default match).
    pub fn gives_int(&self) -> bool {
        matches!(self, TextConv::PortOnly | TextConv::Hex2i)
    }
}

#[cfg(test)]
#[path = "textconv_tests.rs"]
mod tests;
