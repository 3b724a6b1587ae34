//! The runtime API's `ssl` commands, parsed: certificates, CA files and
//! revocation lists (`show|new|set|commit|abort|del ssl cert|ca-file|
//! crl-file`) and `crt-list` entries (`show|add|del ssl crt-list`).

use crate::cli::CliError;

/// The kind of file a command is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    Cert,
    CaFile,
    CrlFile,
}

/// One `ssl` command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SslCmd {
    /// `show ssl cert|ca-file|crl-file [<name>[:<index>]]`.
    Show(FileKind, Option<String>),
    /// `new ssl …`.
    New(FileKind, String),
    /// `set ssl … <name> <<` and the PEM payload.
    Set(FileKind, String, String),
    Commit(FileKind, String),
    Abort(FileKind, String),
    Del(FileKind, String),
    /// `show ssl crt-list [-n] [<list>]`.
    ShowList {
        numbers: bool,
        list: Option<String>,
    },
    /// `add ssl crt-list <list> <line>` (or the line as payload).
    AddList {
        list: String,
        line: String,
    },
    /// `del ssl crt-list <list> <cert>[:<line>]`.
    DelList {
        list: String,
        cert: String,
        line: Option<usize>,
    },
    /// `show ssl ocsp-response [<id>]`.
    ShowOcsp(Option<String>),
    /// `set ssl ocsp-response <base64>` (or as payload).
    SetOcsp(String),
}

fn kind(w: &str) -> Option<FileKind> {
    match w {
        "cert" => Some(FileKind::Cert),
        "ca-file" => Some(FileKind::CaFile),
        "crl-file" => Some(FileKind::CrlFile),
        _ => None,
    }
}

/// A crt-list's name as given, without trailing slashes (HAProxy accepts
/// `list/`).
fn list_name(w: &str) -> String {
    let t = w.trim_end_matches('/');
    if t.is_empty() { w } else { t }.to_string()
}

fn usage(m: &str) -> CliError {
    CliError::Usage(m.to_string())
}

/// Parses the words of an `ssl` command (after `<verb> ssl`); `None`
/// when they name no `ssl` command.
pub fn parse(verb: &str, rest: &[&str]) -> Option<Result<SslCmd, CliError>> {
    let r = match (verb, rest) {
        ("show", ["ocsp-response"]) => Ok(SslCmd::ShowOcsp(None)),
        ("show", ["ocsp-response", id, ..]) => Ok(SslCmd::ShowOcsp(Some(id.to_string()))),
        ("set", ["ocsp-response", "<<", lines @ ..]) if !lines.is_empty() => {
            Ok(SslCmd::SetOcsp(lines.join("\n")))
        }
        ("set", ["ocsp-response", b64]) if *b64 != "<<" => Ok(SslCmd::SetOcsp(b64.to_string())),
        ("set", ["ocsp-response", ..]) => Err(usage(
            "'set ssl ocsp-response' expects response in base64 encoding.",
        )),
        ("show", ["crt-list", args @ ..]) => {
            let (numbers, args) = match args {
                ["-n", rest @ ..] => (true, rest),
                _ => (false, args),
            };
            Ok(SslCmd::ShowList {
                numbers,
                list: args.first().map(|l| list_name(l)),
            })
        }
        ("add", ["crt-list", list, "<<", lines @ ..]) => match lines {
            [line] => Ok(SslCmd::AddList {
                list: list_name(list),
                line: line.to_string(),
            }),
            [] => Err(usage(
                "'add ssl crt-list' expects a filename and a certificate name",
            )),
            _ => Err(usage(
                "Can't edit the crt-list: only one line of payload is supported!",
            )),
        },
        ("add", ["crt-list", list, cert]) => Ok(SslCmd::AddList {
            list: list_name(list),
            line: cert.to_string(),
        }),
        ("add", ["crt-list", ..]) => Err(usage(
            "'add ssl crt-list' expects a filename and a certificate name",
        )),
        ("del", ["crt-list", list, cert]) => {
            let (cert, line) = match cert.rsplit_once(':') {
                Some((c, n)) => match n.parse::<usize>() {
                    Ok(n) => (c, Some(n)),
                    Err(_) => {
                        return Some(Err(usage(
                            "Can't delete the entry: the line number must be a number!",
                        )))
                    }
                },
                None => (*cert, None),
            };
            Ok(SslCmd::DelList {
                list: list_name(list),
                cert: cert.to_string(),
                line,
            })
        }
        ("del", ["crt-list", ..]) => Err(usage(
            "'del ssl crt-list' expects a filename and a certificate name",
        )),
        ("show", [k, args @ ..]) => {
            let k = kind(k)?;
            Ok(SslCmd::Show(k, args.first().map(|a| a.to_string())))
        }
        (verb, [k, name, more @ ..]) => {
            let k = kind(k)?;
            let name = name.to_string();
            match verb {
                "new" => Ok(SslCmd::New(k, name)),
                "commit" => Ok(SslCmd::Commit(k, name)),
                "abort" => Ok(SslCmd::Abort(k, name)),
                "del" => Ok(SslCmd::Del(k, name)),
                "set" => match more {
                    ["<<", lines @ ..] if !lines.is_empty() => {
                        let mut pem = lines.join("\n");
                        pem.push('\n');
                        Ok(SslCmd::Set(k, name, pem))
                    }
                    _ => Err(usage("'set ssl' expects a filename and a payload (<<)")),
                },
                _ => return None,
            }
        }
        (verb, [k]) if kind(k).is_some() => Err(CliError::Usage(format!(
            "'{verb} ssl {k}' expects a filename"
        ))),
        _ => return None,
    };
    Some(r)
}

#[cfg(test)]
#[path = "ssl_tests.rs"]
mod tests;
