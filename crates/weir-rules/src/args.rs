//! The argument level of sample expressions (manual §2.2): `name(a,b)`
//! split at the commas outside quotes; double quotes group and let a
//! backslash escape a quote or a backslash, single quotes group with no
//! escape at all, and a backslash outside quotes protects the delimiters.
//! A backslash before any other character stays (`regsub(\.,_)` keeps
//! the regex `\.`, as haproxy 2.6 does).

/// Splits an expression at the commas that separate converters (commas
/// inside parentheses or quotes belong to arguments).
pub fn split_top(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    let mut quote: Option<char> = None;
    let mut chars = s.char_indices();
    while let Some((i, c)) = chars.next() {
        match (quote, c) {
            (Some('"'), '\\') => {
                chars.next();
            }
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\\') => {
                chars.next();
            }
            (None, '"' | '\'') if depth > 0 => quote = Some(c),
            (None, '(') => depth += 1,
            (None, ')') => depth -= 1,
            (None, ',') if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}

/// Splits `name(args)` into the name and its arguments, quotes and
/// escapes resolved (spaces are kept: `str( 1)` is " 1", as in haproxy).
pub fn split_call(s: &str) -> Result<(&str, Vec<String>), String> {
    let Some(i) = s.find('(') else {
        return Ok((s, Vec::new()));
    };
    let name = &s[..i];
    let mut args = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut quote: Option<char> = None;
    let mut chars = s[i + 1..].chars();
    let push = |cur: &mut String, quoted: &mut bool, args: &mut Vec<String>| {
        let a = std::mem::take(cur);
        args.push(a);
        *quoted = false;
    };
    loop {
        let Some(c) = chars.next() else {
            return Err(format!("missing ')' in '{s}'"));
        };
        match (quote, c) {
            (Some('"'), '\\') => match chars.next() {
                Some(e @ ('\\' | '"')) => cur.push(e),
                Some(e) => {
                    cur.push('\\');
                    cur.push(e);
                }
                None => return Err(format!("missing ')' in '{s}'")),
            },
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, '\\') => match chars.next() {
                Some(e @ ('\\' | '"' | '\'' | ',' | '(' | ')' | ' ')) => cur.push(e),
                Some(e) => {
                    cur.push('\\');
                    cur.push(e);
                }
                None => return Err(format!("missing ')' in '{s}'")),
            },
            (None, '"' | '\'') => {
                quote = Some(c);
                quoted = true;
            }
            (None, ',') => push(&mut cur, &mut quoted, &mut args),
            (None, ')') => {
                if !chars.as_str().is_empty() {
                    return Err(format!(
                        "unexpected '{}' after ')' in '{s}'",
                        chars.as_str()
                    ));
                }
                if !args.is_empty() || !cur.is_empty() || quoted {
                    push(&mut cur, &mut quoted, &mut args);
                }
                return Ok((name, args));
            }
            (None, c) => cur.push(c),
        }
    }
}

#[cfg(test)]
#[path = "args_tests.rs"]
mod tests;

/// A byte a configuration's `\xHH` escapes give that is no UTF-8 of its
/// own travels in a word as a character of Unicode's last private-use
/// plane (U+10FF00 + the byte), so that words stay strings; [`raw_bytes`]
/// turns such characters back into their bytes where a word becomes data
/// (`str(\xE0)` is the one byte 0xE0, as in haproxy).
pub fn raw_char(b: u8) -> char {
    char::from_u32(RAW_BASE + u32::from(b)).unwrap_or(char::REPLACEMENT_CHARACTER)
}

const RAW_BASE: u32 = 0x10_FF00;

/// A word's bytes, with [`raw_char`]s turned back into theirs.
pub fn raw_bytes(s: &str) -> std::borrow::Cow<'_, [u8]> {
    let raw = |c: char| (RAW_BASE..=RAW_BASE + 0xFF).contains(&u32::from(c));
    if !s.chars().any(raw) {
        return std::borrow::Cow::Borrowed(s.as_bytes());
    }
    let mut out = Vec::with_capacity(s.len());
    let mut b = [0u8; 4];
    for c in s.chars() {
        if raw(c) {
            out.push((u32::from(c) - RAW_BASE) as u8);
        } else {
            out.extend_from_slice(c.encode_utf8(&mut b).as_bytes());
        }
    }
    std::borrow::Cow::Owned(out)
}
