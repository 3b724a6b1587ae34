//! Conditions of `.if`/`.elif` blocks and of `weir -cc` (manual §2.4):
//! integers, `defined()`, `feature()`, `streq()`, `strneq()`,
//! `version_atleast()`, `version_before()`, `ssllib_name_startswith()`,
//! `openssl_version_atleast()`, `openssl_version_before()`, with `!`, `&&`, `||`, parentheses.

/// The HAProxy configuration language level weir implements.
pub const LANGUAGE_VERSION: &str = "2.6";

/// Build features as `-vv` lists them: (name, present). A capability weir
/// provides through another library counts as present under HAProxy's
/// name, so that `.if feature(X)` keeps the lines written for it: OPENSSL
/// (weir terminates and originates TLS with rustls), PROMEX (the
/// Prometheus exporter service), PCRE2 (regexes, see below).
pub const FEATURES: &[(&str, bool)] = &[
    ("EPOLL", true),
    ("LINUX_SPLICE", true),
    ("REUSEPORT", true),
    ("THREAD", true),
    ("CPU_AFFINITY", true),
    ("ACCEPT4", true),
    ("TFO", true),
    ("NS", false),
    ("TPROXY", true),
    ("LINUX_TPROXY", true),
    ("OPENSSL", true),
    ("LUA", true),
    ("PCRE", false),
    // Regexes are Rust's `regex` (a PCRE subset without back-references
    // or look-around in patterns: those are configuration errors).
    ("PCRE2", true),
    ("PCRE2_JIT", true),
    ("ZLIB", true),
    ("PROMEX", true),
    ("QUIC", false),
];

/// The TLS library's name, as `ssllib_name_startswith()` compares it.
pub const TLS_LIBRARY: &str = "rustls";

/// Services `http-request use-service` offers, as `-vv` lists them.
pub const SERVICES: &[&str] = &["prometheus-exporter"];

/// What a condition may consult.
pub struct CondEnv<'a> {
    pub env: &'a dyn Fn(&str) -> Option<String>,
}

/// Evaluates `expr`. Returns the truth value, or a message naming what could
/// not be understood.
pub fn eval(expr: &str, cenv: &CondEnv<'_>) -> Result<bool, String> {
    let mut p = Parser {
        s: expr.as_bytes(),
        pos: 0,
        cenv,
    };
    p.skip_ws();
    if p.pos == p.s.len() {
        return Ok(false);
    }
    let v = p.or()?;
    p.skip_ws();
    if p.pos != p.s.len() {
        return Err(format!(
            "unexpected '{}' at position {} in condition '{expr}'",
            String::from_utf8_lossy(&p.s[p.pos..]),
            p.pos
        ));
    }
    Ok(v)
}

struct Parser<'a, 'b> {
    s: &'a [u8],
    pos: usize,
    cenv: &'a CondEnv<'b>,
}

impl Parser<'_, '_> {
    fn skip_ws(&mut self) {
        while self
            .s
            .get(self.pos)
            .is_some_and(|c| c.is_ascii_whitespace())
        {
            self.pos += 1;
        }
    }
    fn eat(&mut self, tok: &str) -> bool {
        self.skip_ws();
        if self.s[self.pos..].starts_with(tok.as_bytes()) {
            self.pos += tok.len();
            true
        } else {
            false
        }
    }
    fn or(&mut self) -> Result<bool, String> {
        let mut v = self.and()?;
        while self.eat("||") {
            let r = self.and()?;
            v = v || r;
        }
        Ok(v)
    }
    fn and(&mut self) -> Result<bool, String> {
        let mut v = self.unary()?;
        while self.eat("&&") {
            let r = self.unary()?;
            v = v && r;
        }
        Ok(v)
    }
    fn unary(&mut self) -> Result<bool, String> {
        if self.eat("!") {
            return Ok(!self.unary()?);
        }
        if self.eat("(") {
            let v = self.or()?;
            if !self.eat(")") {
                return Err("missing closing ')' in condition".into());
            }
            return Ok(v);
        }
        self.term()
    }
    fn term(&mut self) -> Result<bool, String> {
        self.skip_ws();
        let start = self.pos;
        while self
            .s
            .get(self.pos)
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_' || *c == b'-')
        {
            self.pos += 1;
        }
        let word = String::from_utf8_lossy(&self.s[start..self.pos]).into_owned();
        if word.is_empty() {
            return Err(format!(
                "expected a predicate or an integer at position {start} in condition"
            ));
        }
        if let Ok(n) = word.parse::<i64>() {
            return Ok(n != 0);
        }
        let args = if self.s.get(self.pos) == Some(&b'(') {
            self.pos += 1;
            self.args()?
        } else {
            Vec::new()
        };
        let arity = |n: usize| -> Result<(), String> {
            if args.len() == n {
                Ok(())
            } else {
                Err(format!(
                    "predicate '{word}' expects {n} argument(s), got {}",
                    args.len()
                ))
            }
        };
        match word.as_str() {
            "defined" => {
                arity(1)?;
                Ok((self.cenv.env)(&args[0]).is_some())
            }
            "feature" => {
                arity(1)?;
                Ok(FEATURES.iter().any(|(n, on)| *on && *n == args[0]))
            }
            "streq" => {
                arity(2)?;
                Ok(args[0] == args[1])
            }
            "strneq" => {
                arity(2)?;
                Ok(args[0] != args[1])
            }
            "version_atleast" => {
                arity(1)?;
                Ok(compare_versions(LANGUAGE_VERSION, &args[0])? != std::cmp::Ordering::Less)
            }
            "version_before" => {
                arity(1)?;
                Ok(compare_versions(LANGUAGE_VERSION, &args[0])? == std::cmp::Ordering::Less)
            }
            // weir's TLS library is rustls: it is neither OpenSSL nor one of
            // its forks, so a block written for a given OpenSSL is skipped.
            "ssllib_name_startswith" => {
                arity(1)?;
                Ok(TLS_LIBRARY.starts_with(args[0].as_str()))
            }
            "openssl_version_atleast" | "openssl_version_before" => {
                arity(1)?;
                compare_versions("0", &args[0])?;
                Ok(false)
            }
            _ => Err(format!("unknown term '{word}' in condition")),
        }
    }
    /// Reads comma-separated arguments up to the closing parenthesis; a
    /// double-quoted argument may hold commas and parentheses.
    fn args(&mut self) -> Result<Vec<String>, String> {
        let mut args = Vec::new();
        let mut cur = Vec::new();
        let mut quoted = false;
        loop {
            let Some(&c) = self.s.get(self.pos) else {
                return Err("missing closing ')' after predicate arguments".into());
            };
            self.pos += 1;
            match c {
                b'"' => quoted = !quoted,
                b',' if !quoted => {
                    args.push(String::from_utf8_lossy(&std::mem::take(&mut cur)).into_owned())
                }
                b')' if !quoted => {
                    if !args.is_empty() || !cur.is_empty() {
                        args.push(String::from_utf8_lossy(&cur).into_owned());
                    }
                    return Ok(args);
                }
                _ => cur.push(c),
            }
        }
    }
}

/// Compares dotted versions; missing components count as zero and a
/// `-dev`/`-rc` suffix is ignored.
pub fn compare_versions(a: &str, b: &str) -> Result<std::cmp::Ordering, String> {
    fn parts(v: &str) -> Result<Vec<u64>, String> {
        let core = v.split(['-', '+', ' ']).next().unwrap_or("");
        core.split('.')
            .map(|p| {
                p.parse::<u64>()
                    .map_err(|_| format!("invalid version '{v}'"))
            })
            .collect()
    }
    let (mut pa, mut pb) = (parts(a)?, parts(b)?);
    let n = pa.len().max(pb.len());
    pa.resize(n, 0);
    pb.resize(n, 0);
    Ok(pa.cmp(&pb))
}

#[cfg(test)]
#[path = "cond_tests.rs"]
mod tests;
