//! Cuts one configuration line into words as HAProxy's manual §2.2–2.3 says:
//! backslash escapes, weak (`"…"`, with `$VAR` expansion) and strong (`'…'`)
//! quoting, `#` comments.

/// Where variables come from while a line is cut: the environment (with
/// `setenv` overrides) and the pseudo-variables `.FILE`, `.LINE`, `.SECTION`.
pub trait VarSource {
    fn var(&self, name: &str) -> Option<String>;
}

impl<F: Fn(&str) -> Option<String>> VarSource for F {
    fn var(&self, name: &str) -> Option<String> {
        self(name)
    }
}

/// Splits `line` into words. Returns the words (possibly none for a blank or
/// comment line) or a message for an unterminated quote or a bad escape.
pub fn tokenize(line: &str, vars: &dyn VarSource) -> Result<Vec<String>, String> {
    let mut words: Vec<String> = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    let mut dquote = false;
    // The bytes of consecutive `\xHH` escapes, read as UTF-8 together.
    let mut bytes: Vec<u8> = Vec::new();
    while let Some(c) = chars.next() {
        if !(c == '\\' && chars.peek() == Some(&'x')) {
            flush(&mut cur, &mut bytes);
        }
        match c {
            ' ' | '\t' | '\r' | '\n' if !dquote => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            '#' if !dquote => break,
            '\\' => {
                in_word = true;
                match chars.next() {
                    Some(e @ (' ' | '\t' | '#' | '\\' | '\'' | '"' | '$')) => cur.push(e),
                    Some('n') => cur.push('\n'),
                    Some('r') => cur.push('\r'),
                    Some('t') => cur.push('\t'),
                    Some('x') => {
                        let hi = chars.next();
                        let lo = chars.next();
                        let hex: String = [hi, lo].iter().flatten().collect();
                        let byte = u8::from_str_radix(&hex, 16)
                            .map_err(|_| format!("invalid '\\x' escape sequence '\\x{hex}'"))?;
                        bytes.push(byte);
                    }
                    Some(other) => {
                        cur.push('\\');
                        cur.push(other);
                    }
                    None => cur.push('\\'),
                }
            }
            '"' => {
                in_word = true;
                dquote = !dquote;
            }
            '\'' if !dquote => {
                in_word = true;
                let mut closed = false;
                for q in chars.by_ref() {
                    if q == '\'' {
                        closed = true;
                        break;
                    }
                    cur.push(q);
                }
                if !closed {
                    return Err("unmatched quote".into());
                }
            }
            '$' if dquote => {
                in_word = true;
                expand_var(&mut chars, vars, &mut cur, &mut words)?;
            }
            other => {
                in_word = true;
                cur.push(other);
            }
        }
    }
    if dquote {
        return Err("unmatched quote".into());
    }
    flush(&mut cur, &mut bytes);
    if in_word {
        words.push(cur);
    }
    Ok(words)
}

/// Appends the bytes of `\x` escapes to `cur`: what is UTF-8 as its
/// characters, each other byte as its [`weir_rules::args::raw_char`].
fn flush(cur: &mut String, bytes: &mut Vec<u8>) {
    for chunk in bytes.utf8_chunks() {
        cur.push_str(chunk.valid());
        cur.extend(
            chunk
                .invalid()
                .iter()
                .map(|&b| weir_rules::args::raw_char(b)),
        );
    }
    bytes.clear();
}

/// Expands `$NAME`, `${NAME}`, `${NAME-default}` or `${NAME[*]}` (the last one
/// splits the value into separate words) after a `$` inside double quotes.
fn expand_var(
    chars: &mut std::iter::Peekable<std::str::Chars<'_>>,
    vars: &dyn VarSource,
    cur: &mut String,
    words: &mut Vec<String>,
) -> Result<(), String> {
    let braced = chars.peek() == Some(&'{');
    if braced {
        chars.next();
    }
    let mut name = String::new();
    while let Some(&c) = chars.peek() {
        let ok = c.is_ascii_alphanumeric() || c == '_' || (c == '.' && name.is_empty());
        let ok = ok || (c.is_ascii_alphabetic() && name == ".");
        if !ok {
            break;
        }
        name.push(c);
        chars.next();
    }
    if name.is_empty() {
        if braced {
            return Err("empty or invalid variable name after '${'".into());
        }
        cur.push('$');
        return Ok(());
    }
    let mut default: Option<String> = None;
    let mut split = false;
    if braced {
        loop {
            match chars.next() {
                Some('}') => break,
                Some('-') if default.is_none() => {
                    let mut d = String::new();
                    let mut closed = false;
                    for c in chars.by_ref() {
                        if c == '}' {
                            closed = true;
                            break;
                        }
                        d.push(c);
                    }
                    default = Some(d);
                    if closed {
                        break;
                    }
                    return Err(format!("no closing '}}' after variable '{name}'"));
                }
                Some('[') => {
                    let rest: String = chars.by_ref().take(2).collect();
                    if rest != "*]" {
                        return Err(format!("expected '[*]' after variable '{name}'"));
                    }
                    split = true;
                }
                _ => return Err(format!("no closing '}}' after variable '{name}'")),
            }
        }
    }
    let value = vars.var(&name).or(default).unwrap_or_default();
    if split {
        let mut parts = value.split_whitespace();
        if let Some(first) = parts.next() {
            cur.push_str(first);
        }
        for p in parts {
            words.push(std::mem::take(cur));
            cur.push_str(p);
        }
    } else {
        cur.push_str(&value);
    }
    Ok(())
}

#[cfg(test)]
#[path = "lexer_tests.rs"]
mod tests;
