//! The runtime API's OCSP commands: `show ssl ocsp-response [<id>]`, `set
//! ssl ocsp-response` (a new response stapled at once by every context of
//! the certificates it answers for), and the OCSP parts of `show ssl cert`.

use super::ssl::rebuild;
use crate::state::Shared;
use crate::tls::store::{Content, Kind};
use weir_rules::ocsp;

/// Every stapled response (committed), by certificate ID key, once each.
fn responses(sh: &Shared) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = Vec::new();
    for (_, c) in sh.tls_files.list(Kind::Cert).1 {
        let Content::Cert(c) = c else {
            continue;
        };
        let Some(der) = c.ocsp else {
            continue;
        };
        if let Some(key) = key_of(&der) {
            if !out.iter().any(|(k, _)| *k == key) {
                out.push((key, der));
            }
        }
    }
    out
}

/// The certificate ID key of a response's first single response.
pub(super) fn key_of(der: &[u8]) -> Option<String> {
    let r = ocsp::parse(der)?;
    Some(r.basic?.responses.first()?.key())
}

/// `show ssl ocsp-response [<id>]`: the IDs, or one response in full.
pub(super) fn show(sh: &Shared, id: Option<&str>) -> String {
    let all = responses(sh);
    match id {
        None => {
            let mut out = String::from("# Certificate IDs\n");
            for (key, der) in &all {
                let Some(s) = ocsp::parse(der)
                    .and_then(|r| r.basic)
                    .and_then(|b| b.responses.into_iter().next())
                else {
                    continue;
                };
                out.push_str(&format!("Certificate ID key : {key}\n Certificate ID:\n"));
                out.push_str(&ocsp::cert_id_lines(&s, "   ", true));
            }
            out
        }
        Some(id) => match all.iter().find(|(k, _)| k.eq_ignore_ascii_case(id)) {
            Some((_, der)) => text(der),
            None => "Certificate ID does not match any certificate.\n".into(),
        },
    }
}

/// A response's text, or why there is none. (haproxy's dump differs from
/// OpenSSL's only in the line after each single response: one space.)
pub(super) fn text(der: &[u8]) -> String {
    match ocsp::parse(der) {
        Some(r) => ocsp::text(&r).replace("\n\n", "\n \n"),
        None => "Unable to parse OCSP response.\n".into(),
    }
}

/// `set ssl ocsp-response`: checked, then stapled by every certificate
/// whose response has its ID, with their contexts rebuilt (all or none).
pub(super) fn set(sh: &Shared, b64: &str) -> String {
    let Some(der) = ocsp::from_base64(b64) else {
        return "'set ssl ocsp-response' received invalid base64 encoded response.\n".into();
    };
    let Some(r) = ocsp::parse(&der) else {
        return "Unable to parse OCSP response.\n".into();
    };
    let now = crate::clock::wall().as_secs();
    if let Err(e) = ocsp::check(&r, now) {
        return format!("{e}\n");
    }
    let Some(key) = key_of(&der) else {
        return "Unable to parse OCSP response.\n".into();
    };
    let st = &sh.tls_files;
    let _one = st.commits.lock().unwrap_or_else(|e| e.into_inner());
    let olds = match st.set_ocsp(&key, &der) {
        Ok(o) if o.is_empty() => {
            return "OCSP single response: Certificate ID does not match any certificate or issuer.\n"
                .into()
        }
        Ok(o) => o,
        Err(e) => return format!("{e}\n"),
    };
    for (name, _) in &olds {
        if let Err(es) = rebuild(sh, &(Kind::Cert, name.clone())) {
            for (n, old) in olds {
                st.restore(Kind::Cert, &n, Some(old));
            }
            return format!("{}\n", es.join("\n"));
        }
    }
    "OCSP Response updated!\n".into()
}

/// `show ssl cert <crt>.ocsp` (`*<crt>.ocsp`: the transaction's): the
/// certificate's response; `None` when the name is not such a file.
pub(super) fn show_file(sh: &Shared, name: &str) -> Option<String> {
    let base = name.strip_suffix(".ocsp")?;
    let Some(Content::Cert(c)) = sh.tls_files.entry(Kind::Cert, base) else {
        return None;
    };
    Some(c.ocsp.as_deref().map(text).unwrap_or_default())
}
