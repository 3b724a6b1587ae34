//! What protocol checks make of an answer (pure): PostgreSQL's reply to a
//! StartupMessage, MySQL's greeting and its reply to a login, with the
//! status, code and info haproxy 2.6 reports for each.

use weir_config::Reply;

/// A judgement on what the server sent so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Not enough to tell yet.
    More,
    /// Passed; the check goes on (MySQL's greeting before a login's
    /// answer), with what it learnt (the server's version) and the bytes
    /// the answer took.
    Next(String, usize),
    /// Decided: haproxy's short status, the code when it carries one,
    /// the info.
    Done(&'static str, Option<i64>, String),
}

/// Judges `buf` as the answer `r` expects; `closed`: nothing more will
/// come. `version`: what MySQL's greeting said.
pub fn judge(r: Reply, buf: &[u8], closed: bool, version: &str) -> Verdict {
    match r {
        Reply::Pgsql => pgsql(buf, closed),
        Reply::MysqlGreeting { last } => match mysql_packet(buf, closed) {
            Err(v) => v,
            Ok(p) => match p.first() {
                Some(0x0a) => {
                    let v = p.get(1..).unwrap_or_default();
                    let end = v.iter().position(|&b| b == 0).unwrap_or(v.len());
                    let v = String::from_utf8_lossy(v.get(..end).unwrap_or_default()).into_owned();
                    match last {
                        true => Verdict::Done("L7OK", Some(0), v),
                        false => Verdict::Next(v, p.len() + 4),
                    }
                }
                Some(0xff) => mysql_error(p),
                _ => Verdict::Done("L7RSP", None, String::new()),
            },
        },
        Reply::MysqlLogin => match mysql_packet(buf, closed) {
            Err(v) => v,
            Ok(p) => match p.first() {
                Some(0x00) => Verdict::Done("L7OK", Some(0), version.to_string()),
                Some(0xff) => mysql_error(p),
                _ => Verdict::Done("L7RSP", None, String::new()),
            },
        },
    }
}

/// An authentication request passes; an error tells its severity.
fn pgsql(buf: &[u8], closed: bool) -> Verdict {
    if buf.len() < 5 && !closed {
        return Verdict::More;
    }
    match buf.first() {
        None => Verdict::Done("L7RSP", None, String::new()),
        Some(b'R') => Verdict::Done("L7OK", Some(0), "PostgreSQL server is ok".into()),
        Some(b'E') => {
            let text = buf.get(6..).unwrap_or_default();
            match text.iter().position(|&b| b == 0) {
                None if !closed => Verdict::More,
                end => {
                    let end = end.unwrap_or(text.len());
                    let t = String::from_utf8_lossy(text.get(..end).unwrap_or_default());
                    Verdict::Done("L7RSP", None, t.into_owned())
                }
            }
        }
        Some(_) => Verdict::Done("L7STS", Some(0), "PostgreSQL unknown error".into()),
    }
}

/// The payload of the first MySQL packet (3-byte length, sequence), or
/// the verdict while it is incomplete.
fn mysql_packet(buf: &[u8], closed: bool) -> Result<&[u8], Verdict> {
    let whole = match buf {
        [a, b, c, ..] => Some(4 + (usize::from(*a) | usize::from(*b) << 8 | usize::from(*c) << 16)),
        _ => None,
    };
    match whole {
        Some(n) if buf.len() >= n => Ok(buf.get(4..n).unwrap_or_default()),
        _ if closed => Err(Verdict::Done("L7RSP", None, String::new())),
        _ => Err(Verdict::More),
    }
}

/// An error packet: its code and message.
fn mysql_error(p: &[u8]) -> Verdict {
    let code = match p {
        [_, lo, hi, ..] => i64::from(u16::from_le_bytes([*lo, *hi])),
        _ => 0,
    };
    // (The SQL state of 4.1's errors stays in the message, as haproxy
    // reports it.)
    let msg = p.get(3..).unwrap_or_default();
    Verdict::Done(
        "L7STS",
        Some(code),
        String::from_utf8_lossy(msg).into_owned(),
    )
}

#[cfg(test)]
#[path = "proto_tests.rs"]
mod tests;
