//! `json_query`'s JSON Path lookups (pure): a path of `.name` and `[n]`
//! steps from `$`, followed through the JSON text without building it,
//! to the string (unescaped), number or boolean it names, as HAProxy's
//! converter gives them (objects, arrays and `null` give nothing).

/// One step of a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    Key(Vec<u8>),
    Index(usize),
}

/// What a path names.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Str(Vec<u8>),
    Num(f64),
    Bool(bool),
}

/// Parses `$.a.b[2]` (`\.` is a dot within a name).
pub fn parse_path(p: &str) -> Result<Vec<Step>, String> {
    let bad = || format!("invalid JSON path '{p}'");
    let mut rest = p.strip_prefix('$').ok_or_else(bad)?.as_bytes();
    let mut steps = Vec::new();
    while let Some((&c, after)) = rest.split_first() {
        match c {
            b'.' => {
                let mut name = Vec::new();
                let mut i = 0;
                while let Some(&b) = after.get(i) {
                    match b {
                        b'\\' if after.get(i + 1).is_some() => {
                            name.extend(after.get(i + 1));
                            i += 2;
                        }
                        b'.' | b'[' => break,
                        _ => {
                            name.push(b);
                            i += 1;
                        }
                    }
                }
                if name.is_empty() {
                    return Err(bad());
                }
                steps.push(Step::Key(name));
                rest = after.get(i..).unwrap_or_default();
            }
            b'[' => {
                let end = after.iter().position(|&b| b == b']').ok_or_else(bad)?;
                let n = std::str::from_utf8(after.get(..end).unwrap_or_default())
                    .ok()
                    .and_then(|s| s.parse().ok())
                    .ok_or_else(bad)?;
                steps.push(Step::Index(n));
                rest = after.get(end + 1..).unwrap_or_default();
            }
            _ => return Err(bad()),
        }
    }
    Ok(steps)
}

/// The value `path` names in the JSON text `j`.
pub fn query(j: &[u8], path: &[Step]) -> Option<Value> {
    let mut at = ws(j, 0);
    for step in path {
        at = match step {
            Step::Key(k) => member(j, at, k)?,
            Step::Index(n) => element(j, at, *n)?,
        };
    }
    scalar(j, at)
}

fn ws(j: &[u8], mut i: usize) -> usize {
    while j.get(i).is_some_and(|b| b" \t\r\n".contains(b)) {
        i += 1;
    }
    i
}

/// The start of `key`'s value in the object at `i`.
fn member(j: &[u8], i: usize, key: &[u8]) -> Option<usize> {
    if j.get(i) != Some(&b'{') {
        return None;
    }
    let mut i = ws(j, i + 1);
    if j.get(i) == Some(&b'}') {
        return None;
    }
    loop {
        let (name, after) = string(j, i)?;
        let v = ws(j, after);
        if j.get(v) != Some(&b':') {
            return None;
        }
        let v = ws(j, v + 1);
        if name == key {
            return Some(v);
        }
        i = ws(j, skip(j, v)?);
        match j.get(i) {
            Some(b',') => i = ws(j, i + 1),
            _ => return None,
        }
    }
}

/// The start of element `n` of the array at `i`.
fn element(j: &[u8], i: usize, n: usize) -> Option<usize> {
    if j.get(i) != Some(&b'[') {
        return None;
    }
    let mut i = ws(j, i + 1);
    if j.get(i) == Some(&b']') {
        return None;
    }
    for _ in 0..n {
        i = ws(j, skip(j, i)?);
        match j.get(i) {
            Some(b',') => i = ws(j, i + 1),
            _ => return None,
        }
    }
    Some(i)
}

/// Nesting deeper than this is not followed (the text comes from the
/// network: skipping nested values recurses).
const MAX_DEPTH: usize = 64;

/// The end of the value starting at `i`.
fn skip(j: &[u8], i: usize) -> Option<usize> {
    skip_in(j, i, 0)
}

fn skip_in(j: &[u8], i: usize, depth: usize) -> Option<usize> {
    match j.get(i)? {
        b'"' => string(j, i).map(|(_, e)| e),
        open @ (b'{' | b'[') => {
            if depth >= MAX_DEPTH {
                return None;
            }
            let close = if *open == b'{' { b'}' } else { b']' };
            let mut k = ws(j, i + 1);
            if j.get(k) == Some(&close) {
                return Some(k + 1);
            }
            loop {
                if *open == b'{' {
                    k = ws(j, string(j, k)?.1);
                    if j.get(k) != Some(&b':') {
                        return None;
                    }
                    k = ws(j, k + 1);
                }
                k = ws(j, skip_in(j, k, depth + 1)?);
                match j.get(k)? {
                    b',' => k = ws(j, k + 1),
                    c if *c == close => return Some(k + 1),
                    _ => return None,
                }
            }
        }
        _ => {
            let len = j.get(i..)?.iter().position(|b| b",}] \t\r\n".contains(b));
            Some(i + len.unwrap_or(j.len() - i))
        }
    }
}

/// The string at `i`, unescaped, and the index after its closing quote.
fn string(j: &[u8], i: usize) -> Option<(Vec<u8>, usize)> {
    if j.get(i) != Some(&b'"') {
        return None;
    }
    let mut out = Vec::new();
    let mut k = i + 1;
    loop {
        match *j.get(k)? {
            b'"' => return Some((out, k + 1)),
            b'\\' => {
                let e = *j.get(k + 1)?;
                k += 2;
                match e {
                    b'n' => out.push(b'\n'),
                    b't' => out.push(b'\t'),
                    b'r' => out.push(b'\r'),
                    b'b' => out.push(8),
                    b'f' => out.push(12),
                    b'u' => {
                        let hex = std::str::from_utf8(j.get(k..k + 4)?).ok()?;
                        let cp = u32::from_str_radix(hex, 16).ok()?;
                        // One byte below 256, as haproxy's decoder writes
                        // it; UTF-8 above.
                        match u8::try_from(cp) {
                            Ok(b) => out.push(b),
                            Err(_) => {
                                let ch = char::from_u32(cp).unwrap_or('\u{fffd}');
                                out.extend_from_slice(ch.encode_utf8(&mut [0; 4]).as_bytes());
                            }
                        }
                        k += 4;
                    }
                    other => out.push(other),
                }
            }
            b => {
                out.push(b);
                k += 1;
            }
        }
    }
}

/// The string, number or boolean at `i`.
fn scalar(j: &[u8], i: usize) -> Option<Value> {
    match j.get(i)? {
        b'"' => string(j, i).map(|(s, _)| Value::Str(s)),
        b't' if j.get(i..i + 4) == Some(b"true") => Some(Value::Bool(true)),
        b'f' if j.get(i..i + 5) == Some(b"false") => Some(Value::Bool(false)),
        b'-' | b'0'..=b'9' => {
            let end = skip(j, i)?;
            let text = std::str::from_utf8(j.get(i..end)?).ok()?;
            text.parse().ok().map(Value::Num)
        }
        _ => None,
    }
}

/// A number as C's `%g` writes it (six significant digits, trailing
/// zeros dropped, an exponent below 1e-4 or from 1e6), as haproxy gives a
/// JSON number that is not asked as an integer.
pub fn g_format(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return if v.is_nan() {
            "nan".into()
        } else if v.is_infinite() {
            (if v > 0.0 { "inf" } else { "-inf" }).into()
        } else {
            "0".into()
        };
    }
    let sci = format!("{v:.5e}");
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let trim = |s: String| {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    if !(-4..6).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim(mant.to_string()), exp.abs())
    } else {
        let decimals = usize::try_from(5 - exp).unwrap_or(0);
        trim(format!("{v:.decimals$}"))
    }
}

#[cfg(test)]
#[path = "json_tests.rs"]
mod tests;
