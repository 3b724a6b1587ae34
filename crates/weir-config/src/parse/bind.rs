//! `bind` lines and their options (manual §5.1): addresses, TLS, and the
//! listener's socket settings.

use super::global::parse_set;
use super::server::option_error;
use crate::addr::parse_bind_list;
use crate::diag::{Diagnostics, Loc};
use crate::keywords;
use crate::model::Bind;
use crate::tls::{BindTls, Verify};
use crate::units::{parse_duration, parse_u32};

/// `bind` options followed by a value.
const BIND_TAKES_ARG: &[&str] = &[
    "crt",
    "crt-list",
    "alpn",
    "npn",
    "ciphers",
    "ciphersuites",
    "curves",
    "ecdhe",
    "ca-file",
    "crl-file",
    "crt-ignore-err",
    "ca-ignore-err",
    "verify",
    "ssl-min-ver",
    "ssl-max-ver",
    "name",
    "shards",
    "process",
    "thread",
    "maxconn",
    "mode",
    "user",
    "group",
    "uid",
    "gid",
    "interface",
    "namespace",
    "backlog",
    "id",
    "nice",
    "tcp-ut",
    "mss",
    "level",
    "severity-output",
    "proto",
    "tls-ticket-keys",
];

/// `bind <addr>[,<addr>…] <options>`.
pub(super) fn bind(
    words: &[String],
    loc: &Loc,
    diags: &mut Diagnostics,
    nbproc: bool,
) -> Result<Bind, Vec<String>> {
    let Some(addr_text) = words.get(1) else {
        return Err(vec!["'bind' expects at least one address".into()]);
    };
    let mut errs = Vec::new();
    let addrs = parse_bind_list(addr_text).unwrap_or_else(|e| {
        errs.push(format!("'bind {addr_text}' : {e}"));
        Vec::new()
    });
    let mut b = Bind::new(addrs, loc.clone());
    let mut ssl = false;
    let mut tls = BindTls::default();
    let mut i = 2;
    while i < words.len() {
        let word = words[i].as_str();
        let arg = words.get(i + 1).map(String::as_str);
        let need = || arg.ok_or_else(|| format!("'{word}' expects an argument"));
        let r: Result<usize, String> = (|| {
            Ok(match word {
                "transparent" => {
                    b.transparent = true;
                    1
                }
                "v4v6" => {
                    b.v4v6 = true;
                    1
                }
                "v6only" => {
                    b.v6only = true;
                    1
                }
                "defer-accept" => {
                    b.defer_accept = true;
                    1
                }
                "tfo" => {
                    b.tfo = true;
                    1
                }
                "accept-proxy" => {
                    b.accept_proxy = true;
                    1
                }
                "accept-netscaler-cip" => {
                    b.accept_cip = Some(cip_magic(arg)?);
                    2
                }
                "name" => {
                    b.name = Some(need()?.to_string());
                    2
                }
                // Each thread has its own socket already (SO_REUSEPORT),
                // as `shards by-thread` gives in haproxy.
                "shards" => {
                    let v = need()?;
                    let n = v.parse::<u32>().unwrap_or(0);
                    if v != "by-thread" && !(1..=64).contains(&n) {
                        return Err(format!(
                            "'shards' : invalid value {n}, allowed range is 1..64 or 'by-thread'"
                        ));
                    }
                    2
                }
                "interface" => {
                    b.interface = Some(need()?.to_string());
                    2
                }
                "namespace" => {
                    b.namespace = Some(super::server::netns(need()?)?);
                    2
                }
                "backlog" => {
                    b.backlog = Some(parse_u32(need()?, word)?);
                    2
                }
                "maxconn" => {
                    b.maxconn = Some(parse_u32(need()?, word)?).filter(|n| *n > 0);
                    2
                }
                "mode" => {
                    let m = need()?;
                    b.mode =
                        Some(u32::from_str_radix(m, 8).map_err(|_| format!("invalid mode '{m}'"))?);
                    2
                }
                "mss" => {
                    let v = need()?;
                    let n = parse_u32(v.trim_start_matches('-'), word)?;
                    if !(1..=65535).contains(&n) {
                        return Err(format!("'mss' must be between 1 and 65535, got {n}"));
                    }
                    b.mss = Some(n);
                    2
                }
                "tcp-ut" => {
                    b.tcp_ut = Some(parse_duration(need()?)?);
                    2
                }
                "user" | "uid" => {
                    b.user = Some(need()?.to_string());
                    2
                }
                "group" | "gid" => {
                    b.group = Some(need()?.to_string());
                    2
                }
                "id" => {
                    let n = crate::units::parse_u32(need()?, "id")?;
                    if n == 0 {
                        return Err("'id' : id must be greater than 0".into());
                    }
                    b.id = Some(n);
                    2
                }
                "nice" | "level" | "severity-output" => {
                    need()?;
                    2
                }
                "ssl" => {
                    ssl = true;
                    1
                }
                "proto" => {
                    b.h1_only = false;
                    b.no_http = false;
                    b.h2 = match need()? {
                        "none" => {
                            b.no_http = true;
                            false
                        }
                        "h2" => true,
                        "h1" => {
                            b.h1_only = true;
                            false
                        }
                        p => {
                            return Err(format!(
                                "'proto' expects 'h1', 'h2' or 'none' on a bind line, got '{p}'"
                            ))
                        }
                    };
                    2
                }
                "thread" => {
                    let t = need()?;
                    let t = t.strip_prefix("1/").unwrap_or(t);
                    b.threads = Some(parse_set(t, 1)?);
                    2
                }
                "process" => {
                    let p = need()?;
                    if nbproc {
                        b.threads = Some(parse_set(p, 1)?);
                    } else {
                        diags.warn(
                            loc,
                            format!(
                                "'bind {addr_text}' : 'process {p}' ignored: weir runs one process"
                            ),
                        );
                    }
                    2
                }
                _ => match tls.apply(word, arg) {
                    Some(r) => {
                        let n = r?;
                        for w in crate::tls::unoffered(word, arg.unwrap_or("")) {
                            diags.warn(loc, format!("'bind {addr_text}' : {w}"));
                        }
                        n
                    }
                    None => return Err(option_error(keywords::BIND, "bind", word)),
                },
            })
        })();
        match r {
            Ok(n) => i += n,
            Err(e) => {
                errs.push(format!("'bind {addr_text}' : {e}"));
                // A bad value is not read again as a keyword.
                i += if BIND_TAKES_ARG.contains(&word) { 2 } else { 1 };
            }
        }
    }
    if ssl {
        if tls.crts.is_empty() && tls.crt_lists.is_empty() {
            errs.push(format!(
                "'bind {addr_text}' : 'ssl' needs a certificate ('crt' or 'crt-list')"
            ));
        }
        if tls.verify.is_some_and(|v| v != Verify::None) && tls.ca_file.is_none() {
            errs.push(format!(
                "'bind {addr_text}' : 'verify {}' needs a 'ca-file' to check client certificates against",
                if tls.verify == Some(Verify::Required) { "required" } else { "optional" }
            ));
        }
        b.tls = Some(tls);
    } else if !tls.crts.is_empty() || !tls.crt_lists.is_empty() {
        diags.warn(
            loc,
            format!("'bind {addr_text}' : certificates are ignored without the 'ssl' keyword"),
        );
    }
    if errs.is_empty() {
        Ok(b)
    } else {
        Err(errs)
    }
}

/// `accept-netscaler-cip <magic>`: a number, taken on 32 bits as haproxy
/// does (`-1` is all ones), never zero.
fn cip_magic(arg: Option<&str>) -> Result<u32, String> {
    let v = arg.ok_or("'accept-netscaler-cip' : missing value")?;
    let n = v.parse::<i64>().map_or(0, |n| n as u32);
    if n == 0 {
        return Err("'accept-netscaler-cip' : invalid value 0, must be >= 0".into());
    }
    Ok(n)
}
