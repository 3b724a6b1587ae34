//! `http-request normalize-uri` normalizers (RFC 3986 §6.2.2): pure
//! rewrites of a request URI; the `strict` forms refuse what they cannot
//! normalize safely.

/// One normalizer with its option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Normalizer {
    FragmentEncode,
    FragmentStrip,
    PathMergeSlashes,
    PathStripDot,
    /// `full`: leading `..` segments are dropped too.
    PathStripDotdot {
        full: bool,
    },
    PercentDecodeUnreserved {
        strict: bool,
    },
    PercentToUppercase {
        strict: bool,
    },
    QuerySortByName,
}

impl Normalizer {
    /// Parses `<normalizer> [option]`.
    pub fn parse(args: &[String]) -> Result<Normalizer, String> {
        let which = args.first().map(String::as_str).unwrap_or_default();
        let opt = |o: &str| -> Result<bool, String> {
            match args.get(1).map(String::as_str) {
                None => Ok(false),
                Some(x) if x == o && args.len() == 2 => Ok(true),
                Some(x) => Err(format!("'normalize-uri {which}': unexpected '{x}'")),
            }
        };
        let none = |n: Normalizer| -> Result<Normalizer, String> {
            match args.get(1) {
                None => Ok(n),
                Some(x) => Err(format!("'normalize-uri {which}': unexpected '{x}'")),
            }
        };
        match args.first().map(String::as_str) {
            Some("fragment-encode") => none(Normalizer::FragmentEncode),
            Some("fragment-strip") => none(Normalizer::FragmentStrip),
            Some("path-merge-slashes") => none(Normalizer::PathMergeSlashes),
            Some("path-strip-dot") => none(Normalizer::PathStripDot),
            Some("path-strip-dotdot") => Ok(Normalizer::PathStripDotdot { full: opt("full")? }),
            Some("percent-decode-unreserved") => Ok(Normalizer::PercentDecodeUnreserved {
                strict: opt("strict")?,
            }),
            Some("percent-to-uppercase") => Ok(Normalizer::PercentToUppercase {
                strict: opt("strict")?,
            }),
            Some("query-sort-by-name") => none(Normalizer::QuerySortByName),
            Some(o) => Err(format!("unknown normalizer '{o}'")),
            None => Err("'normalize-uri' expects a normalizer".into()),
        }
    }

    /// The normalized `uri`; `None` when a strict normalizer finds an
    /// invalid percent sequence (the request gets a 400).
    pub fn apply(self, uri: &str) -> Option<String> {
        // An absolute-form URI keeps its scheme and authority.
        let split = uri.find("://").map_or(0, |i| {
            uri[i + 3..].find('/').map_or(uri.len(), |j| i + 3 + j)
        });
        let (pre, rest) = uri.split_at(split);
        let (path, query) = match rest.find('?') {
            Some(i) => rest.split_at(i),
            None => (rest, ""),
        };
        let out = match self {
            Normalizer::FragmentEncode => rest.replace('#', "%23"),
            Normalizer::FragmentStrip => rest.split('#').next().unwrap_or("").to_string(),
            Normalizer::PathMergeSlashes => {
                let mut p = String::with_capacity(path.len());
                for c in path.chars() {
                    if !(c == '/' && p.ends_with('/')) {
                        p.push(c);
                    }
                }
                p + query
            }
            Normalizer::PathStripDot | Normalizer::PathStripDotdot { .. } => {
                segments(self, path) + query
            }
            // The percent normalizers see the query too (haproxy 2.6).
            Normalizer::PercentDecodeUnreserved { strict } => percent(rest, strict, true)?,
            Normalizer::PercentToUppercase { strict } => percent(rest, strict, false)?,
            Normalizer::QuerySortByName => {
                let Some(q) = query.strip_prefix('?') else {
                    return Some(uri.to_string());
                };
                let mut params: Vec<&str> = q.split('&').collect();
                params.sort_by_key(|p| p.split('=').next().unwrap_or(p));
                format!("{path}?{}", params.join("&"))
            }
        };
        Some(format!("{pre}{out}"))
    }
}

/// Removes `.` segments, or merges `..` segments with the one before.
fn segments(n: Normalizer, path: &str) -> String {
    let Some(body) = path.strip_prefix('/') else {
        return path.to_string();
    };
    let mut out: Vec<&str> = Vec::new();
    let parts: Vec<&str> = body.split('/').collect();
    let last = parts.len() - 1;
    for (i, seg) in parts.into_iter().enumerate() {
        match (n, seg) {
            (Normalizer::PathStripDot, ".") => {
                if i == last {
                    out.push("");
                }
            }
            (Normalizer::PathStripDotdot { full }, "..") => {
                if out.last().is_some_and(|s| *s != "..") {
                    out.pop();
                } else if !full {
                    out.push("..");
                }
                if i == last {
                    out.push("");
                }
            }
            _ => out.push(seg),
        }
    }
    format!("/{}", out.join("/"))
}

fn hex(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

/// Decodes unreserved `%XY` sequences (`decode`), or uppercases the hex
/// digits of every valid one. `None` on an invalid sequence when `strict`.
fn percent(path: &str, strict: bool, decode: bool) -> Option<String> {
    let b = path.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut rest = b;
    while let Some((&c, after)) = rest.split_first() {
        if c != b'%' {
            out.push(c);
            rest = after;
            continue;
        }
        let digits = match after {
            &[x, y, ..] => hex(x).zip(hex(y)).map(|(h, l)| (h * 16 + l, x, y)),
            _ => None,
        };
        match digits {
            Some((c, x, y)) => {
                if decode && (c.is_ascii_alphanumeric() || b"-._~".contains(&c)) {
                    out.push(c);
                } else if decode {
                    out.extend_from_slice(&[b'%', x, y]);
                } else {
                    out.extend_from_slice(&[b'%', x.to_ascii_uppercase(), y.to_ascii_uppercase()]);
                }
                rest = after.get(2..).unwrap_or_default();
            }
            None if strict => return None,
            None => {
                out.push(b'%');
                rest = after;
            }
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(words: &str) -> Normalizer {
        let w: Vec<String> = words.split(' ').map(str::to_string).collect();
        Normalizer::parse(&w).unwrap() // ok: unit test on fixed input
    }

    /// The examples of HAProxy's manual for each normalizer.
    #[test]
    fn manual_examples() {
        let cases: &[(&str, &str, Option<&str>)] = &[
            ("fragment-encode", "/#foo", Some("/%23foo")),
            ("fragment-strip", "/#foo", Some("/")),
            ("path-strip-dot", "/.", Some("/")),
            ("path-strip-dot", "/./bar/", Some("/bar/")),
            ("path-strip-dot", "/a/./a", Some("/a/a")),
            ("path-strip-dot", "/.well-known/", Some("/.well-known/")),
            ("path-strip-dotdot", "/foo/../", Some("/")),
            ("path-strip-dotdot", "/foo/../bar/", Some("/bar/")),
            ("path-strip-dotdot", "/foo/bar/../", Some("/foo/")),
            ("path-strip-dotdot", "/../bar/", Some("/../bar/")),
            ("path-strip-dotdot", "/bar/../../", Some("/../")),
            ("path-strip-dotdot", "/foo//../", Some("/foo/")),
            ("path-strip-dotdot", "/foo/%2E%2E/", Some("/foo/%2E%2E/")),
            ("path-strip-dotdot full", "/../bar/", Some("/bar/")),
            ("path-strip-dotdot full", "/bar/../../", Some("/")),
            ("path-merge-slashes", "//", Some("/")),
            ("path-merge-slashes", "/foo//bar", Some("/foo/bar")),
            ("percent-decode-unreserved", "/%61dmin", Some("/admin")),
            (
                "percent-decode-unreserved",
                "/foo%3Fbar=baz",
                Some("/foo%3Fbar=baz"),
            ),
            ("percent-decode-unreserved", "/%%36%36", Some("/%66")),
            ("percent-decode-unreserved", "/%ZZ", Some("/%ZZ")),
            ("percent-decode-unreserved strict", "/%%36%36", None),
            ("percent-decode-unreserved strict", "/%ZZ", None),
            ("percent-to-uppercase", "/%6f", Some("/%6F")),
            ("percent-to-uppercase", "/%aa?a=%aa", Some("/%AA?a=%AA")),
            ("percent-decode-unreserved", "/%61?%61=%61", Some("/a?a=a")),
            (
                "percent-decode-unreserved",
                "/%3F?foo=bar",
                Some("/%3F?foo=bar"),
            ),
            ("percent-to-uppercase strict", "/a?a=%zz", None),
            ("percent-to-uppercase", "/%zz", Some("/%zz")),
            ("percent-to-uppercase strict", "/%zz", None),
            ("query-sort-by-name", "/?c=3&a=1&b=2", Some("/?a=1&b=2&c=3")),
            (
                "query-sort-by-name",
                "/?aaa=3&a=1&aa=2",
                Some("/?a=1&aa=2&aaa=3"),
            ),
            (
                "query-sort-by-name",
                "/?a=3&b=4&a=1&b=5&a=2",
                Some("/?a=3&a=1&a=2&b=4&b=5"),
            ),
        ];
        for (norm, uri, want) in cases {
            assert_eq!(n(norm).apply(uri).as_deref(), *want, "{norm} {uri}");
        }
        // The query is left alone by path normalizers; authority kept.
        assert_eq!(
            n("path-merge-slashes")
                .apply("http://h//x//y?a=//")
                .as_deref(),
            Some("http://h/x/y?a=//")
        );
        assert!(Normalizer::parse(&["path-strip-dot".into(), "full".into()]).is_err());
        assert!(Normalizer::parse(&["nope".into()]).is_err());
    }
}
