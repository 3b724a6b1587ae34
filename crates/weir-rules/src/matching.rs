//! Pattern matching of ACLs (`-m str|beg|end|sub|reg|dir|dom|len|int|ip|
//! found|bool`, `-i`) and maps (`map_str`, `map_beg`, `map_reg`, `map_dom`,
//! `map_ip` …).

use crate::sample::Sample;
use std::net::IpAddr;

/// How samples are compared with patterns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Str,
    Beg,
    End,
    Sub,
    Reg,
    Dir,
    Dom,
    Len,
    Int,
    Ip,
    Found,
    Bool,
    /// `-m bin`: the sample's bytes equal the pattern's, given in hex.
    Bin,
}

impl Method {
    /// The method's name as `-m` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Method::Str => "str",
            Method::Beg => "beg",
            Method::End => "end",
            Method::Sub => "sub",
            Method::Reg => "reg",
            Method::Dir => "dir",
            Method::Dom => "dom",
            Method::Len => "len",
            Method::Int => "int",
            Method::Ip => "ip",
            Method::Found => "found",
            Method::Bool => "bool",
            Method::Bin => "bin",
        }
    }
    pub fn parse(s: &str) -> Result<Method, String> {
        Ok(match s {
            "str" => Method::Str,
            "beg" => Method::Beg,
            "end" => Method::End,
            "sub" => Method::Sub,
            "reg" => Method::Reg,
            "dir" => Method::Dir,
            "dom" => Method::Dom,
            "len" => Method::Len,
            "int" => Method::Int,
            "ip" => Method::Ip,
            "found" => Method::Found,
            "bool" => Method::Bool,
            "bin" => Method::Bin,
            _ => return Err(format!("unknown match method '{s}'")),
        })
    }
}

/// One compiled pattern.
#[derive(Debug, Clone)]
pub enum Pattern {
    Bytes(Vec<u8>),
    Regex(regex::bytes::Regex),
    /// Inclusive range; open ends are `i64::MIN`/`MAX`.
    Range(i64, i64),
    Net(IpAddr, u8),
}

/// Parses an integer pattern: `N`, `A:B`, `:B`, `A:`, `eq|ge|gt|le|lt N`
/// (the operator comes as its own word, folded by the caller).
pub fn int_pattern(s: &str) -> Result<Pattern, String> {
    let num = |x: &str| -> Result<i64, String> {
        x.parse()
            .map_err(|_| format!("'{s}' is not a valid integer pattern"))
    };
    if let Some((a, b)) = s.split_once(':') {
        let lo = if a.is_empty() { i64::MIN } else { num(a)? };
        let hi = if b.is_empty() { i64::MAX } else { num(b)? };
        return Ok(Pattern::Range(lo, hi));
    }
    let n = num(s)?;
    Ok(Pattern::Range(n, n))
}

/// Applies an operator word (`eq`, `ge` …) to the number that follows.
pub fn op_pattern(op: &str, n: &str) -> Result<Pattern, String> {
    let v: i64 = n
        .parse()
        .map_err(|_| format!("'{n}' is not a valid integer"))?;
    Ok(match op {
        "eq" => Pattern::Range(v, v),
        "ge" => Pattern::Range(v, i64::MAX),
        "gt" => Pattern::Range(v.saturating_add(1), i64::MAX),
        "le" => Pattern::Range(i64::MIN, v),
        "lt" => Pattern::Range(i64::MIN, v.saturating_sub(1)),
        _ => return Err(format!("unknown operator '{op}'")),
    })
}

/// Parses `addr[/prefix|/mask]`.
pub fn net_pattern(s: &str) -> Result<Pattern, String> {
    let (a, l) = match s.split_once('/') {
        Some((a, l)) => (a, Some(l)),
        None => (s, None),
    };
    let ip: IpAddr = a
        .parse()
        .map_err(|_| format!("'{s}' is not a valid address or network"))?;
    let max = if ip.is_ipv4() { 32 } else { 128 };
    let len = match l {
        None => max,
        Some(l) => match l.parse::<std::net::Ipv4Addr>() {
            Ok(m) => u32::from(m).leading_ones() as u8,
            Err(_) => l
                .parse::<u8>()
                .ok()
                .filter(|n| *n <= max)
                .ok_or_else(|| format!("'{s}' has an invalid prefix length"))?,
        },
    };
    Ok(Pattern::Net(ip, len))
}

/// Whether `ip` is in `net/len` (IPv4-mapped IPv6 addresses match IPv4 networks).
pub fn in_net(ip: IpAddr, net: IpAddr, len: u8) -> bool {
    let ip = match (ip, net) {
        (IpAddr::V6(a), IpAddr::V4(_)) => a.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        _ => ip,
    };
    match (ip, net) {
        (IpAddr::V4(a), IpAddr::V4(n)) => {
            let m = u32::MAX.checked_shl(32 - u32::from(len)).unwrap_or(0);
            u32::from(a) & m == u32::from(n) & m
        }
        (IpAddr::V6(a), IpAddr::V6(n)) => {
            let m = u128::MAX.checked_shl(128 - u32::from(len)).unwrap_or(0);
            u128::from(a) & m == u128::from(n) & m
        }
        _ => false,
    }
}

fn eq(a: &[u8], b: &[u8], icase: bool) -> bool {
    if icase {
        a.eq_ignore_ascii_case(b)
    } else {
        a == b
    }
}

/// `-m dir` / `-m dom`: the pattern equals one of the `/`- (or `.`-)
/// delimited parts of the sample, or a run of them.
fn delimited(sample: &[u8], pat: &[u8], delims: &[u8], icase: bool) -> bool {
    if pat.is_empty() {
        return false;
    }
    let n = pat.len();
    let bounded =
        |at: Option<usize>| at.is_none_or(|k| sample.get(k).is_none_or(|c| delims.contains(c)));
    (0..sample.len()).any(|i| {
        sample
            .get(i..i + n)
            .is_some_and(|part| eq(part, pat, icase))
            && bounded(i.checked_sub(1))
            && bounded(Some(i + n))
    })
}

/// Whether `sample` matches `pat` under `method`.
pub fn matches(method: Method, icase: bool, sample: &Sample, pat: &Pattern) -> bool {
    match (method, pat) {
        (Method::Int, Pattern::Range(lo, hi)) => {
            sample.to_int().is_some_and(|v| *lo <= v && v <= *hi)
        }
        (Method::Len, Pattern::Range(lo, hi)) => {
            let l = sample.to_bytes().len() as i64;
            *lo <= l && l <= *hi
        }
        (Method::Ip, Pattern::Net(n, len)) => sample.to_ip().is_some_and(|ip| in_net(ip, *n, *len)),
        (Method::Reg, Pattern::Regex(re)) => re.is_match(&sample.to_bytes()),
        (m, Pattern::Bytes(p)) => {
            let s = sample.to_bytes();
            match m {
                Method::Str => eq(&s, p, icase),
                Method::Beg => s.get(..p.len()).is_some_and(|b| eq(b, p, icase)),
                Method::End => s
                    .len()
                    .checked_sub(p.len())
                    .and_then(|at| s.get(at..))
                    .is_some_and(|e| eq(e, p, icase)),
                Method::Sub => p.is_empty() || s.windows(p.len()).any(|w| eq(w, p, icase)),
                Method::Dir => delimited(&s, p, b"/?", icase),
                Method::Dom => delimited(&s, p, b"/?.:", icase),
                Method::Bin => match sample {
                    Sample::Bin(b) => b == p,
                    _ => s == *p,
                },
                _ => false,
            }
        }
        _ => false,
    }
}

/// A map file: `key value` lines looked up by the map's match method. Its
/// lines are shared with the file's other users and change at run time
/// (`add map` …).
#[derive(Debug)]
pub struct Map {
    data: crate::patref::Compiled<Vec<(Pattern, String)>>,
    default: Option<String>,
    /// `map_regm`: the value's `\N` are the key regex's groups.
    subst: bool,
}

/// The method of a `map_<kind>` converter.
fn map_method(kind: &str) -> Result<Method, String> {
    Ok(match kind {
        "str" => Method::Str,
        "beg" => Method::Beg,
        "end" => Method::End,
        "sub" => Method::Sub,
        "reg" | "regm" => Method::Reg,
        "dir" => Method::Dir,
        "dom" => Method::Dom,
        "ip" => Method::Ip,
        "int" => Method::Int,
        _ => return Err(format!("unknown map type 'map_{kind}'")),
    })
}

impl Map {
    /// A map of file `name` whose text is `text` (`#` comments and blank
    /// lines skipped); every key must compile for the method.
    pub fn load(
        kind: &str,
        name: &str,
        text: &str,
        default: Option<String>,
    ) -> Result<Map, String> {
        let method = map_method(kind)?;
        let pref = crate::patref::PatRef::intern(name, true, text);
        for e in pref.entries() {
            compile(method, &e.key, false).map_err(|err| format!("map '{name}': {err}"))?;
        }
        Ok(Map {
            data: crate::patref::Compiled::new(pref, method, false, crate::patref::build_map),
            default,
            subst: kind == "regm",
        })
    }
    /// A map of text without a file (tests).
    pub fn parse(kind: &str, text: &str, default: Option<String>) -> Result<Map, String> {
        Map::load(kind, "", text, default)
    }
    /// The value of the first entry matching `s`, else the default.
    pub fn lookup(&self, s: &Sample) -> Option<String> {
        let method = self.data.method;
        self.data
            .with(|entries| {
                let (p, v) = entries.iter().find(|(p, _)| matches(method, false, s, p))?;
                match p {
                    Pattern::Regex(re) if self.subst => {
                        let b = s.to_bytes();
                        let caps = re.captures(&b)?;
                        let mut out = Vec::new();
                        caps.expand(&backrefs(v.as_bytes()), &mut out);
                        Some(String::from_utf8_lossy(&out).into_owned())
                    }
                    _ => Some(v.clone()),
                }
            })
            .or_else(|| self.default.clone())
    }
}

/// Compiles a configuration regex as PCRE reads one: over bytes, with
/// ASCII classes (`\d`, `\w`, `\s`) and `.` matching any byte.
pub fn regex(p: &str, icase: bool) -> Result<regex::bytes::Regex, String> {
    regex::bytes::RegexBuilder::new(p)
        .unicode(false)
        .case_insensitive(icase)
        .build()
        .map_err(|e| format!("invalid regex '{p}': {e}"))
}

/// Compiles one pattern word for `method`.
pub fn compile(method: Method, word: &str, icase: bool) -> Result<Pattern, String> {
    Ok(match method {
        Method::Int | Method::Len => int_pattern(word)?,
        Method::Ip => net_pattern(word)?,
        Method::Reg => Pattern::Regex(regex(word, icase)?),
        Method::Found | Method::Bool => {
            return Err(format!("match method takes no pattern, got '{word}'"))
        }
        Method::Bin => Pattern::Bytes(
            unhex(word).ok_or_else(|| format!("'{word}' is not a hexadecimal binary pattern"))?,
        ),
        _ => Pattern::Bytes(word.as_bytes().to_vec()),
    })
}

/// Bytes from hex digits (an even number of them, nothing else: no sign
/// as `from_str_radix` would take).
pub fn unhex(w: &str) -> Option<Vec<u8>> {
    let digit = |c: u8| (c as char).to_digit(16);
    let b = w.as_bytes();
    if !b.len().is_multiple_of(2) {
        return None;
    }
    b.chunks(2)
        .map(|p| match p {
            &[x, y] => Some((digit(x)? * 16 + digit(y)?) as u8),
            _ => None,
        })
        .collect()
}

/// Turns HAProxy's replacement syntax (`\\1` back-references) into the
/// regex crate's (`${1}`), with literal `$` escaped.
pub fn backrefs(w: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(w.len() + 4);
    let mut i = 0;
    while let Some(&c) = w.get(i) {
        match (c, w.get(i + 1)) {
            (b'\\', Some(d)) if d.is_ascii_digit() => {
                out.extend_from_slice(b"${");
                out.push(*d);
                out.push(b'}');
                i += 2;
            }
            (b'$', _) => {
                out.extend_from_slice(b"$$");
                i += 1;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn unhex_takes_pairs_of_hex_digits_only() {
        assert_eq!(super::unhex("0aFf"), Some(vec![0x0a, 0xff]));
        assert_eq!(super::unhex(""), Some(vec![]));
        for bad in ["0", "0g", "+f", "-1", " 1"] {
            assert_eq!(super::unhex(bad), None, "{bad}");
        }
    }
}
