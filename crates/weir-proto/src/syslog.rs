//! Syslog messages as `log-forward` relays them: RFC 3164 and RFC 5424
//! read into their parts, and written again in a target's format, as
//! haproxy 2.6 does (an RFC 3164 host is the first word after the date;
//! a message with no header keeps its text and gets the target's
//! facility).

/// A message's parts; absent ones are `None`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Message<'a> {
    pub pri: Option<u8>,
    pub time: Option<Time<'a>>,
    pub host: Option<&'a str>,
    pub tag: Option<&'a str>,
    pub pid: Option<&'a str>,
    /// RFC 5424's message id and structured data (`-` when absent).
    pub msgid: Option<&'a str>,
    pub sd: Option<&'a str>,
    pub msg: &'a [u8],
}

/// A message's date as it came.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Time<'a> {
    /// `Mmm dd hh:mm:ss`: month (1-12), day, hours, minutes, seconds.
    Rfc3164(u32, u32, u32, u32, u32),
    /// An RFC 5424 timestamp, as written.
    Rfc5424(&'a str),
}

/// The layout of a syslog message: a `log` line's or a ring's `format`
/// (weir-config names it `LogFormatKind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Rfc3164,
    /// RFC 3164 without the host.
    Local,
    Rfc5424,
    Short,
    /// `<priority>` and the text.
    Priority,
    /// The ISO date and the text.
    Iso,
    /// `<severity>`, the ISO date and the text.
    Timed,
    Raw,
}

/// The present moment as each format dates a message without a date.
#[derive(Debug, Clone)]
pub struct Now {
    pub year: i32,
    /// `Nov 26 21:11:15`.
    pub rfc3164: String,
    /// `2026-11-26T21:11:15.750268+00:00`.
    pub rfc5424: String,
}

/// Month names as syslog dates write them.
pub const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// Reads one message (a trailing line end is not part of it).
pub fn parse(b: &[u8]) -> Message<'_> {
    let b = b.strip_suffix(b"\n").unwrap_or(b);
    let b = b.strip_suffix(b"\r").unwrap_or(b);
    let Some((pri, rest)) = priority(b) else {
        return Message {
            msg: b,
            ..Message::default()
        };
    };
    if let Some(rest) = rest.strip_prefix(b"1 ") {
        if let Some(m) = rfc5424(pri, rest) {
            return m;
        }
    }
    rfc3164(pri, rest)
}

/// `<N>` with N up to 191.
fn priority(b: &[u8]) -> Option<(u8, &[u8])> {
    let rest = b.strip_prefix(b"<")?;
    let end = rest.iter().position(|&c| c == b'>')?;
    let digits = rest.get(..end)?;
    if digits.is_empty() || digits.len() > 3 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let n: u16 = std::str::from_utf8(digits).ok()?.parse().ok()?;
    let pri = u8::try_from(n).ok().filter(|p| *p < 192)?;
    Some((pri, rest.get(end + 1..)?))
}

/// Splits off the next space-ended word as text.
fn word(b: &[u8]) -> Option<(&str, &[u8])> {
    let end = b.iter().position(|&c| c == b' ').unwrap_or(b.len());
    let w = std::str::from_utf8(b.get(..end)?).ok()?;
    if w.is_empty() {
        return None;
    }
    Some((w, b.get(end + 1..).unwrap_or_default()))
}

fn rfc5424<'a>(pri: u8, b: &'a [u8]) -> Option<Message<'a>> {
    let (ts, b) = word(b)?;
    let (host, b) = word(b)?;
    let (app, b) = word(b)?;
    let (pid, b) = word(b)?;
    let (msgid, b) = word(b)?;
    let (sd, msg) = structured(b)?;
    let opt = |w: &'a str| (w != "-").then_some(w);
    Some(Message {
        pri: Some(pri),
        time: opt(ts).map(Time::Rfc5424),
        host: opt(host),
        tag: opt(app),
        pid: opt(pid),
        msgid: opt(msgid),
        sd: opt(sd),
        msg,
    })
}

/// RFC 5424's structured data: `-`, or `[…]` blocks (with `\]` escapes
/// inside); then the message after one space.
fn structured(b: &[u8]) -> Option<(&str, &[u8])> {
    let mut i = 0;
    if b.first() == Some(&b'-') {
        i = 1;
    } else {
        while b.get(i) == Some(&b'[') {
            i += 1;
            loop {
                match b.get(i)? {
                    b'\\' => i += 2,
                    b']' => {
                        i += 1;
                        break;
                    }
                    _ => i += 1,
                }
            }
        }
        if i == 0 {
            return None;
        }
    }
    let sd = std::str::from_utf8(b.get(..i)?).ok()?;
    let msg = match b.get(i) {
        None => &[][..],
        Some(b' ') => b.get(i + 1..).unwrap_or_default(),
        Some(_) => return None,
    };
    Some((sd, msg))
}

fn rfc3164(pri: u8, b: &[u8]) -> Message<'_> {
    let no_header = Message {
        pri: Some(pri),
        msg: b,
        ..Message::default()
    };
    let Some((time, rest)) = date3164(b) else {
        return no_header;
    };
    let (host, rest) = match word(rest) {
        Some((h, r)) => (Some(h), r),
        None => (None, rest),
    };
    let (tag, pid, msg) = tag3164(rest).unwrap_or((None, None, rest));
    Message {
        pri: Some(pri),
        time: Some(time),
        host,
        tag,
        pid,
        msg,
        ..Message::default()
    }
}

/// `Mmm dd hh:mm:ss ` (the day may be space-padded).
fn date3164(b: &[u8]) -> Option<(Time<'static>, &[u8])> {
    let d = b.get(..16)?;
    let mon = MONTHS
        .iter()
        .position(|m| d.get(..3) == Some(m.as_bytes()))? as u32
        + 1;
    let num = |r: std::ops::Range<usize>| -> Option<u32> {
        let t = std::str::from_utf8(d.get(r)?).ok()?;
        t.trim_start().parse().ok()
    };
    let ok = d.get(3) == Some(&b' ')
        && d.get(6) == Some(&b' ')
        && d.get(9) == Some(&b':')
        && d.get(12) == Some(&b':')
        && d.get(15) == Some(&b' ');
    if !ok {
        return None;
    }
    let t = Time::Rfc3164(mon, num(4..6)?, num(7..9)?, num(10..12)?, num(13..15)?);
    Some((t, b.get(16..)?))
}

/// `tag[pid]: ` or `tag: ` at the start of the message; none otherwise.
type Tagged<'a> = (Option<&'a str>, Option<&'a str>, &'a [u8]);

fn tag3164(b: &[u8]) -> Option<Tagged<'_>> {
    let end = b.iter().position(|&c| matches!(c, b'[' | b':' | b' '))?;
    let tag = std::str::from_utf8(b.get(..end)?)
        .ok()
        .filter(|t| !t.is_empty())?;
    match b.get(end)? {
        b'[' => {
            let rest = b.get(end + 1..)?;
            let close = rest.iter().position(|&c| c == b']')?;
            let pid = std::str::from_utf8(rest.get(..close)?).ok()?;
            let msg = rest.get(close + 1..)?.strip_prefix(b": ")?;
            Some((Some(tag), Some(pid), msg))
        }
        b':' => {
            let msg = b.get(end + 1..)?.strip_prefix(b" ")?;
            Some((Some(tag), None, msg))
        }
        _ => None,
    }
}

/// The severity (`<pri>` modulo 8; 0 for a message without one).
pub fn severity(m: &Message<'_>) -> u8 {
    m.pri.map_or(0, |p| p % 8)
}

/// Writes `m` (which came as `original`) in `fmt` (`None`: as it came); a
/// message without a priority gets `facility` and severity 0.
pub fn render(
    m: &Message<'_>,
    original: &[u8],
    fmt: Option<Format>,
    facility: u8,
    now: &Now,
) -> Vec<u8> {
    let Some(fmt) = fmt else {
        return original.to_vec();
    };
    let pri = m.pri.unwrap_or(facility.wrapping_mul(8));
    let mut out = Vec::with_capacity(original.len() + 64);
    match fmt {
        Format::Raw => {}
        Format::Short => out.extend_from_slice(format!("<{}>", pri % 8).as_bytes()),
        Format::Priority => out.extend_from_slice(format!("<{pri}>").as_bytes()),
        Format::Iso => out.extend_from_slice(format!("{} ", iso(m, now)).as_bytes()),
        Format::Timed => out.extend_from_slice(format!("<{}>{} ", pri % 8, iso(m, now)).as_bytes()),
        Format::Rfc3164 | Format::Local => {
            let ts = match m.time {
                Some(Time::Rfc3164(mon, d, h, mi, s)) => date_3164(mon, d, h, mi, s),
                Some(Time::Rfc5424(t)) => from_5424(t).unwrap_or_else(|| now.rfc3164.clone()),
                None => now.rfc3164.clone(),
            };
            let host = match fmt {
                Format::Local => String::new(),
                _ => format!("{} ", m.host.unwrap_or("localhost")),
            };
            let head = match (m.tag, m.pid) {
                (Some(t), Some(p)) => format!("<{pri}>{ts} {host}{t}[{p}]: "),
                (Some(t), None) => format!("<{pri}>{ts} {host}{t}: "),
                _ => format!("<{pri}>{ts} {host}"),
            };
            out.extend_from_slice(head.as_bytes());
        }
        Format::Rfc5424 => {
            let ts = match m.time {
                Some(Time::Rfc3164(mon, d, h, mi, s)) => {
                    format!("{}-{mon:02}-{d:02}T{h:02}:{mi:02}:{s:02}-00:00", now.year)
                }
                Some(Time::Rfc5424(t)) => t.to_string(),
                None => now.rfc5424.clone(),
            };
            let f = |x: Option<&str>| x.unwrap_or("-").to_string();
            let head = format!(
                "<{pri}>1 {ts} {} {} {} {} {} ",
                f(m.host),
                f(m.tag),
                f(m.pid),
                f(m.msgid),
                f(m.sd)
            );
            out.extend_from_slice(head.as_bytes());
        }
    }
    out.extend_from_slice(m.msg);
    out
}

/// The message's date as an ISO one (the present one without a date).
fn iso(m: &Message<'_>, now: &Now) -> String {
    match m.time {
        Some(Time::Rfc3164(mon, d, h, mi, s)) => {
            format!("{}-{mon:02}-{d:02}T{h:02}:{mi:02}:{s:02}-00:00", now.year)
        }
        Some(Time::Rfc5424(t)) => t.to_string(),
        None => now.rfc5424.clone(),
    }
}

fn date_3164(mon: u32, d: u32, h: u32, mi: u32, s: u32) -> String {
    let name = MONTHS
        .get(mon.saturating_sub(1) as usize)
        .copied()
        .unwrap_or("Jan");
    format!("{name} {d:>2} {h:02}:{mi:02}:{s:02}")
}

/// `2026-11-26T21:10:42.123456+00:00` as `Nov 26 21:10:42`.
fn from_5424(t: &str) -> Option<String> {
    let n = |r: std::ops::Range<usize>| -> Option<u32> { t.get(r)?.parse().ok() };
    if t.get(4..5)? != "-" || t.get(7..8)? != "-" || t.get(10..11)? != "T" {
        return None;
    }
    Some(date_3164(
        n(5..7)?,
        n(8..10)?,
        n(11..13)?,
        n(14..16)?,
        n(17..19)?,
    ))
}

#[cfg(test)]
#[path = "syslog_tests.rs"]
mod tests;
