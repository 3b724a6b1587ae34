//! Value strings of rules (`set-header X %[src]`, `redirect location
//! /x?%[query]`): literal text with `%[expr]` samples and a few
//! `%`-variables, HAProxy's log-format syntax.

use crate::acl::Loader;
use crate::sample::{Ctx, Expr};

/// One piece of a value string.
#[derive(Debug, Clone, PartialEq)]
pub enum Piece {
    Lit(Vec<u8>),
    Expr(Expr),
    /// `%ci`, `%cp`, `%fi`, `%fp`, `%HM`, `%HU`, `%HV`.
    Var(String),
}

/// A compiled value string (empty by default).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Fmt {
    pub pieces: Vec<Piece>,
}

const VARS: &[&str] = &["ci", "cp", "fi", "fp", "HM", "HU", "HV", "HP", "HQ"];

/// Literal text, with the bytes of the configuration's `\x` escapes that
/// are no UTF-8 given back ([`crate::args::raw_bytes`]).
fn lit_piece(lit: Vec<u8>) -> Piece {
    match std::str::from_utf8(&lit) {
        Ok(s) => Piece::Lit(crate::args::raw_bytes(s).into_owned()),
        Err(_) => Piece::Lit(lit),
    }
}

impl Fmt {
    /// Compiles `text`. `%%` is a percent sign.
    pub fn parse(text: &str, load: Loader<'_>) -> Result<Fmt, String> {
        let mut pieces = Vec::new();
        let mut lit = Vec::new();
        let b = text.as_bytes();
        let mut i = 0;
        while let Some(&c) = b.get(i) {
            if c != b'%' {
                lit.push(c);
                i += 1;
                continue;
            }
            if b.get(i + 1) == Some(&b'%') {
                lit.push(b'%');
                i += 2;
                continue;
            }
            let mut j = i + 1;
            if b.get(j) == Some(&b'{') {
                j += text[j..]
                    .find('}')
                    .ok_or_else(|| format!("missing '}}' in '{text}'"))?
                    + 1;
            }
            if b.get(j) == Some(&b'[') {
                let end = expr_end(&text[j..]).ok_or_else(|| format!("missing ']' in '{text}'"))?;
                let expr = Expr::parse(&text[j + 1..j + end], load)?;
                if !lit.is_empty() {
                    pieces.push(lit_piece(std::mem::take(&mut lit)));
                }
                pieces.push(Piece::Expr(expr));
                i = j + end + 1;
                continue;
            }
            let start = j;
            while b.get(j).is_some_and(u8::is_ascii_alphanumeric) {
                j += 1;
            }
            let name = &text[start..j];
            if !VARS.contains(&name) {
                return Err(format!("unsupported variable '%{name}' in '{text}'"));
            }
            if !lit.is_empty() {
                pieces.push(lit_piece(std::mem::take(&mut lit)));
            }
            pieces.push(Piece::Var(name.to_string()));
            i = j;
        }
        if !lit.is_empty() {
            pieces.push(lit_piece(lit));
        }
        Ok(Fmt { pieces })
    }

    /// True when the string has no sample nor variable.
    pub fn is_static(&self) -> bool {
        self.pieces.iter().all(|p| matches!(p, Piece::Lit(_)))
    }

    /// Renders for one request; a sample that finds nothing renders empty.
    pub fn render(&self, ctx: &dyn Ctx) -> Vec<u8> {
        let mut out = Vec::new();
        for p in &self.pieces {
            match p {
                Piece::Lit(l) => out.extend_from_slice(l),
                Piece::Expr(e) => {
                    if let Some(v) = e.eval(ctx) {
                        out.extend_from_slice(&v.to_bytes());
                    }
                }
                Piece::Var(v) => {
                    let s = match v.as_str() {
                        "ci" => ctx.src().map(|a| a.ip().to_string()),
                        "cp" => ctx.src().map(|a| a.port().to_string()),
                        "fi" => ctx.dst().map(|a| a.ip().to_string()),
                        "fp" => ctx.dst().map(|a| a.port().to_string()),
                        "HM" => Some(ctx.method().to_string()),
                        "HU" => Some(ctx.uri().to_string()),
                        "HV" => Some(format!("HTTP/{}", ctx.version())),
                        "HP" => Some(ctx.uri().split('?').next().unwrap_or("").to_string()),
                        "HQ" => Some(
                            ctx.uri()
                                .find('?')
                                .map_or(String::new(), |i| ctx.uri()[i..].to_string()),
                        ),
                        _ => None,
                    };
                    out.extend_from_slice(s.unwrap_or_default().as_bytes());
                }
            }
        }
        out
    }
}

/// Where the `]` closing a `%[` sample expression is in `s` (which starts
/// at the `[`): outside quoted arguments and parentheses, as haproxy's
/// expression parser reads it (`str('[x]')` and `regsub([a-z],x)` hold
/// their brackets).
pub fn expr_end(s: &str) -> Option<usize> {
    let mut depth = 0usize;
    let mut quote = None;
    let mut escaped = false;
    for (i, b) in s.bytes().enumerate().skip(1) {
        if escaped {
            escaped = false;
            continue;
        }
        match (quote, b) {
            (_, b'\\') => escaped = true,
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, b'\'' | b'"') => quote = Some(b),
            (None, b'(') => depth += 1,
            (None, b')') => depth = depth.saturating_sub(1),
            (None, b']') if depth == 0 => return Some(i),
            (None, _) => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::expr_end;

    #[test]
    fn an_expression_ends_at_its_own_bracket() {
        assert_eq!(expr_end("[src]x]"), Some(4));
        assert_eq!(expr_end("[str('[x]'),lower]"), Some(17));
        assert_eq!(expr_end("[str(\"a]\")]"), Some(10));
        assert_eq!(expr_end("[path,regsub([a-z],x)]"), Some(21));
        assert_eq!(expr_end("[str('it\\'s]')]"), Some(14));
        assert_eq!(expr_end("[str('x]'"), None);
    }
}
