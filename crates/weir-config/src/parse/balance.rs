//! The `balance` and `hash-type` keywords of backends (manual §4.2):
//! the algorithm, its key (URI, parameter, header, RDP cookie …) and the
//! hash function and method consistent and map-based hashing use.

use super::State;
use crate::diag::Loc;
use crate::model::{Balance, BalanceKey, HashFunction, HashMethod, Proxy};

/// The algorithms `balance` takes (for the hint after a typo).
const ALGORITHMS: [&str; 10] = [
    "roundrobin",
    "static-rr",
    "leastconn",
    "first",
    "source",
    "uri",
    "url_param",
    "hdr(name)",
    "random",
    "rdp-cookie",
];

/// The cookie name of `rdp-cookie(<name>)`, or `default` without one.
pub(super) fn rdp_cookie_name(word: &str, default: &str) -> Result<String, String> {
    match word.strip_prefix("rdp-cookie") {
        Some("") => Ok(default.to_string()),
        Some(rest) => match rest.strip_prefix('(').and_then(|r| r.strip_suffix(')')) {
            Some(n) if !n.is_empty() => Ok(n.to_string()),
            _ => Err(format!("'{word}': expects rdp-cookie(<name>)")),
        },
        None => Err(format!("unexpected '{word}'")),
    }
}

/// The proxy keywords of one family: `balance` and `hash-type`; `Ok(false)`
/// for another family's keyword.
pub(super) fn balancing(
    _st: &mut State<'_>,
    p: &mut Proxy,
    name: &str,
    args: &[String],
    _negate: bool,
    _loc: &Loc,
) -> Result<bool, String> {
    match name {
        "balance" => {
            let algo = args.first().ok_or("expects an algorithm")?;
            p.balance = match algo.as_str() {
                "roundrobin" => Balance::RoundRobin,
                "static-rr" => Balance::StaticRr,
                "leastconn" => Balance::LeastConn,
                "first" => Balance::First,
                "source" => Balance::Source,
                a if a == "random" || a.starts_with("random(") => {
                    let draws = match a.strip_prefix("random(").and_then(|r| r.strip_suffix(')')) {
                        Some(n) => n
                            .parse::<u32>()
                            .ok()
                            .filter(|n| *n >= 1)
                            .ok_or_else(|| format!("invalid draws in '{a}'"))?,
                        None if a == "random" => 2,
                        None => return Err(format!("invalid algorithm '{a}'")),
                    };
                    Balance::Random { draws }
                }
                "uri" => {
                    let mut key = (None, None, false, false);
                    let mut it = args[1..].iter();
                    while let Some(w) = it.next() {
                        let mut num = || -> Result<usize, String> {
                            it.next()
                                .and_then(|n| n.parse().ok())
                                .filter(|n| *n > 0)
                                .ok_or_else(|| {
                                    format!("'balance uri {w}' expects a positive integer")
                                })
                        };
                        match w.as_str() {
                            "len" => key.0 = Some(num()?),
                            "depth" => key.1 = Some(num()?),
                            "whole" => key.2 = true,
                            "path-only" => key.3 = true,
                            o => return Err(format!("'balance uri': unexpected '{o}'")),
                        }
                    }
                    p.balance = Balance::Key;
                    p.balance_key = Some(BalanceKey::Uri {
                        len: key.0,
                        depth: key.1,
                        whole: key.2,
                        path_only: key.3,
                    });
                    return Ok(true);
                }
                "url_param" => {
                    let name = args
                        .get(1)
                        .ok_or("'balance url_param' expects a parameter name")?;
                    if let Some(extra) = args.get(2) {
                        return Err(format!(
                            "'balance url_param' options ('{extra}') are not supported by weir yet"
                        ));
                    }
                    p.balance = Balance::Key;
                    p.balance_key = Some(BalanceKey::UrlParam(name.clone()));
                    return Ok(true);
                }
                a if a.starts_with("hdr(") && a.ends_with(')') => {
                    let name = &a[4..a.len() - 1];
                    if name.is_empty() {
                        return Err("'balance hdr()' expects a header name".into());
                    }
                    let domain_only = match args.get(1).map(String::as_str) {
                        None => false,
                        Some("use_domain_only") => true,
                        Some(o) => return Err(format!("'balance hdr': unexpected '{o}'")),
                    };
                    p.balance = Balance::Key;
                    p.balance_key = Some(BalanceKey::Hdr {
                        name: name.to_string(),
                        domain_only,
                    });
                    return Ok(true);
                }
                "hash" => {
                    let [_, e] = args else {
                        return Err("'balance hash' expects one sample expression".into());
                    };
                    let expr = weir_rules::Expr::parse(e, &super::http::load)?;
                    p.balance = Balance::Key;
                    p.balance_key = Some(BalanceKey::Hash(expr));
                    return Ok(true);
                }
                a if a == "rdp-cookie" || a.starts_with("rdp-cookie(") => {
                    p.balance = Balance::Key;
                    p.balance_key = Some(BalanceKey::RdpCookie(rdp_cookie_name(a, "mstshash")?));
                    return Ok(true);
                }
                "hdr" => return Err("'balance hdr' expects a header name: hdr(<name>)".into()),
                a => {
                    let hint = crate::diag::did_you_mean(a, ALGORITHMS.iter().copied())
                        .map(|s| format!("; did you mean '{s}'?"))
                        .unwrap_or_default();
                    return Err(format!(
                        "unknown balancing algorithm '{a}'{hint} (weir supports {})",
                        ALGORITHMS.join(", ")
                    ));
                }
            };
            if args.len() > 1 {
                return Err(format!(
                    "unexpected '{}' after '{}'",
                    args[1..].join(" "),
                    algo
                ));
            }
        }
        "hash-type" => {
            let m = args.first().ok_or("expects 'map-based' or 'consistent'")?;
            p.hash_type.method = match m.as_str() {
                "map-based" => HashMethod::MapBased,
                "consistent" => HashMethod::Consistent,
                other => {
                    return Err(format!(
                        "unknown method '{other}' (expects 'map-based' or 'consistent')"
                    ))
                }
            };
            for a in &args[1..] {
                match a.as_str() {
                    "sdbm" => p.hash_type.function = HashFunction::Sdbm,
                    "djb2" => p.hash_type.function = HashFunction::Djb2,
                    "wt6" => p.hash_type.function = HashFunction::Wt6,
                    "crc32" => p.hash_type.function = HashFunction::Crc32,
                    "avalanche" => p.hash_type.avalanche = true,
                    other => return Err(format!("unknown hash function or modifier '{other}'")),
                }
            }
        }
        _ => return Ok(false),
    }
    Ok(true)
}
