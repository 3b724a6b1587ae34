//! What protocol checks make of an answer (pure): PostgreSQL's reply to a
//! StartupMessage, MySQL's greeting and its reply to a login, LDAP's bind
//! response, an SPOA's hello, with the status, code and info haproxy 2.6
//! reports for each.

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
        Reply::Ldap => ldap(buf, closed),
        Reply::Spop => spop(buf, closed),
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

/// A BER element's tag and length at the start of `b`, and where its
/// content starts; `None` while incomplete.
fn ber(b: &[u8]) -> Option<(u8, usize, usize)> {
    let (&tag, rest) = b.split_first()?;
    let (&l0, rest) = rest.split_first()?;
    if l0 < 0x80 {
        return Some((tag, usize::from(l0), 2));
    }
    let n = usize::from(l0 & 0x7f);
    let digits = rest.get(..n)?;
    let len = digits
        .iter()
        .fold(0usize, |a, &d| (a << 8) | usize::from(d));
    Some((tag, len, 2 + n))
}

/// A BindResponse: its result code decides (0 passes).
fn ldap(buf: &[u8], closed: bool) -> Verdict {
    let not_ldap = || Verdict::Done("L7RSP", None, "Not LDAPv3 protocol".into());
    let parsed = (|| {
        let (tag, _, at) = ber(buf)?;
        if tag != 0x30 {
            return Some(Err(()));
        }
        let rest = buf.get(at..)?;
        let (id_tag, id_len, id_at) = ber(rest)?;
        if id_tag != 0x02 {
            return Some(Err(()));
        }
        let rest = rest.get(id_at + id_len..)?;
        let (op, _, op_at) = ber(rest)?;
        if op != 0x61 {
            return Some(Err(()));
        }
        let rest = rest.get(op_at..)?;
        let (code_tag, _, code_at) = ber(rest)?;
        if code_tag != 0x0a {
            return Some(Err(()));
        }
        Some(Ok(*rest.get(code_at)?))
    })();
    match parsed {
        None if closed => not_ldap(),
        None => Verdict::More,
        Some(Err(())) => not_ldap(),
        Some(Ok(0)) => Verdict::Done("L7OK", Some(0), "Success".into()),
        Some(Ok(c)) => Verdict::Done(
            "L7STS",
            Some(i64::from(c)),
            "See RFC: http://tools.ietf.org/html/rfc4511#section-4.1.9".into(),
        ),
    }
}

/// An SPOA's hello: valid, or why not in haproxy's words.
fn spop(buf: &[u8], closed: bool) -> Verdict {
    match weir_proto::spop::agent_hello(buf) {
        Ok(Some(_)) => Verdict::Done("L7OK", Some(0), "SPOA server is ok".into()),
        Ok(None) if closed => Verdict::Done("L7RSP", None, String::new()),
        Ok(None) => Verdict::More,
        Err(e) => Verdict::Done("L7RSP", None, e.message()),
    }
}

#[cfg(test)]
#[path = "proto_tests.rs"]
mod tests;
