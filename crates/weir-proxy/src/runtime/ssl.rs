//! The `ssl` commands on live state: the TLS store's files shown, created,
//! changed through transactions and deleted, `crt-list` entries added and
//! removed, and every bind or server context built from a changed file
//! rebuilt and swapped in (all or none), in HAProxy 2.6's words.

use crate::state::Shared;
use crate::tls::store::{Content, FileRef, Kind, Store};
use crate::tls::{BindConfig, ClientTls};
use std::sync::Arc;
use weir_admin::ssl::{FileKind, SslCmd};
use weir_config::tls::with_base;

fn kind(k: FileKind) -> Kind {
    match k {
        FileKind::Cert => Kind::Cert,
        FileKind::CaFile => Kind::CaFile,
        FileKind::CrlFile => Kind::CrlFile,
    }
}

/// A TLS context built from the store's files.
enum Ctx<'a> {
    /// A bind line's, with its `file:line`.
    Bind(&'a BindConfig, String),
    Client(&'a ClientTls),
}

/// A context rebuilt, waiting to be put in force.
enum Rebuilt<'a> {
    Bind(&'a BindConfig, Arc<crate::tls::route::Routes>),
    Client(&'a ClientTls, Arc<crate::tls::client::Built>),
}

/// Every TLS context, once each.
fn contexts(sh: &Shared) -> Vec<Ctx<'_>> {
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for fe in &sh.frontends {
        for b in &fe.binds {
            if let Some(t) = &b.info.tls {
                if seen.insert(Arc::as_ptr(t) as usize) {
                    let loc = sh
                        .proxy(fe.proxy)
                        .binds
                        .get(b.info.index)
                        .map_or_else(String::new, |l| l.loc.to_string());
                    out.push(Ctx::Bind(t, loc));
                }
            }
        }
    }
    for be in &sh.backends {
        for (_, s) in be.servers() {
            for t in [&s.tls_ctx, &s.check_tls, &s.ws.tls].into_iter().flatten() {
                if seen.insert(Arc::as_ptr(t) as usize) {
                    out.push(Ctx::Client(t));
                }
            }
        }
    }
    out
}

fn uses(c: &Ctx<'_>, f: &FileRef) -> bool {
    match c {
        Ctx::Bind(b, _) => b.uses(f),
        Ctx::Client(t) => t.uses(f),
    }
}

/// Rebuilds every context built from `file`, and puts them in force only
/// when all of them build; the number rebuilt.
pub(super) fn rebuild(sh: &Shared, file: &FileRef) -> Result<usize, Vec<String>> {
    let g = &sh.cfg.global.tls;
    let mut done = Vec::new();
    for c in contexts(sh).into_iter().filter(|c| uses(c, file)) {
        done.push(match c {
            Ctx::Bind(b, _) => Rebuilt::Bind(b, b.rebuild(g, &sh.tls_files)?),
            Ctx::Client(t) => Rebuilt::Client(t, t.rebuild(g, &sh.tls_files)?),
        });
    }
    let n = done.len();
    for r in done {
        match r {
            Rebuilt::Bind(b, new) => b.install(new),
            Rebuilt::Client(t, new) => t.install(new),
        }
    }
    Ok(n)
}

/// Runs one `ssl` command.
pub fn run(sh: &Shared, cmd: &SslCmd) -> String {
    let st = &sh.tls_files;
    match cmd {
        SslCmd::Show(k, None) => list(st, kind(*k)),
        SslCmd::Show(k, Some(n)) => show(sh, kind(*k), n),
        SslCmd::New(k, n) => create(st, kind(*k), n),
        SslCmd::Set(k, n, pem) => set(st, kind(*k), n, pem),
        SslCmd::Commit(k, n) => commit(sh, kind(*k), n),
        SslCmd::Abort(k, n) => match st.abort(kind(*k), n) {
            Ok(()) => format!("Transaction aborted for certificate '{n}'!\n"),
            Err(e) => format!("{e}\n"),
        },
        SslCmd::Del(k, n) => delete(sh, kind(*k), n),
        SslCmd::ShowList { numbers, list } => show_list(sh, *numbers, list.as_deref()),
        SslCmd::AddList { list, line } => match add_entry(sh, list, line) {
            Ok(path) => {
                format!("Inserting certificate '{path}' in crt-list '{list}'.\nSuccess!\n")
            }
            Err(e) => format!("Can't edit the crt-list: {e}\n"),
        },
        SslCmd::DelList { list, cert, line } => match del_entry(sh, list, cert, *line) {
            Ok(()) => format!("Entry '{cert}' deleted in crtlist '{list}'!\n"),
            Err(e) => format!("Can't delete the entry: {e}\n"),
        },
        SslCmd::ShowOcsp(id) => super::ocsp::show(sh, id.as_deref()),
        SslCmd::SetOcsp(b64) => super::ocsp::set(sh, b64),
    }
}

/// `show ssl cert|ca-file|crl-file`: the transaction's file, then all.
fn list(st: &Store, k: Kind) -> String {
    let count = |c: &Content| match (k, c) {
        (Kind::CaFile, Content::Ca(l)) => format!(" - {} certificate(s)", l.len()),
        _ => String::new(),
    };
    let (tx, all) = st.list(k);
    let mut out = String::new();
    if let Some((n, c)) = tx {
        out.push_str(&format!("# transaction\n*{n}{}\n", count(&c)));
    }
    out.push_str("# filename\n");
    for (n, c) in all {
        out.push_str(&format!("{n}{}\n", count(&c)));
    }
    out
}

/// `show ssl … <name>[:<index>]`: one file in detail.
fn show(sh: &Shared, k: Kind, arg: &str) -> String {
    let (name, index) = match arg.rsplit_once(':') {
        Some((n, i)) if k != Kind::Cert => match i.parse::<usize>() {
            Ok(i) => (n, Some(i)),
            Err(_) => (arg, None),
        },
        _ => (arg, None),
    };
    if k == Kind::Cert {
        if let Some(text) = super::ocsp::show_file(sh, name) {
            return text;
        }
    }
    let Some(c) = sh.tls_files.entry(k, name) else {
        return match k {
            Kind::Cert => {
                "Can't display the certificate: Not found or the certificate is a bundle!\n"
            }
            Kind::CaFile => "Can't display the CA file : Not found!\n",
            _ => "Can't display the CRL file : Not found!\n",
        }
        .into();
    };
    let status = if c.is_empty() {
        "Empty"
    } else if !name.starts_with('*') && in_use(sh, &(k, name.to_string())) {
        "Used"
    } else {
        "Unused"
    };
    let mut out = format!("Filename: {name}\nStatus: {status}\n");
    let pick = |i: usize| index.is_none_or(|n| n == i + 1);
    match &c {
        Content::Cert(f) => {
            if let Some(leaf) = f.chain.first() {
                out.push_str(&weir_rules::x509::text::cert(leaf).unwrap_or_default());
            }
            for der in f.chain.iter().skip(1) {
                out.push_str(&weir_rules::x509::text::chain(der));
            }
            let key = f.ocsp.as_deref().and_then(super::ocsp::key_of);
            out.push_str(&format!("OCSP Response Key: {}\n", key.unwrap_or_default()));
        }
        Content::Ca(l) => {
            for (i, der) in l.iter().enumerate().filter(|(i, _)| pick(*i)) {
                let text = weir_rules::x509::text::cert(der).unwrap_or_default();
                out.push_str(&format!(" \nCertificate #{}:\n{text}", i + 1));
            }
        }
        Content::Crl(l) => {
            for (i, der) in l.iter().enumerate().filter(|(i, _)| pick(*i)) {
                let text = weir_rules::x509::text::crl(der).unwrap_or_default();
                out.push_str(&format!(
                    " \nCertificate Revocation List #{}:\n{text}",
                    i + 1
                ));
            }
        }
        Content::List(_) => {}
    }
    out
}

/// Whether a context was built from the file, or a `crt-list` names it.
fn in_use(sh: &Shared, f: &FileRef) -> bool {
    if contexts(sh).iter().any(|c| uses(c, f)) {
        return true;
    }
    let base = sh.cfg.global.tls.crt_base.as_deref();
    f.0 == Kind::Cert
        && sh.tls_files.list(Kind::CrtList).1.iter().any(|(_, c)| {
            matches!(c, Content::List(l) if l.lines.iter().any(|e| with_base(base, &e.crt) == f.1))
        })
}

fn create(st: &Store, k: Kind, name: &str) -> String {
    let ok = st.create(k, name).is_ok();
    match (k, ok) {
        (Kind::Cert, true) => format!("New empty certificate store '{name}'!\n"),
        (Kind::Cert, false) => format!("Certificate '{name}' already exists!\n"),
        (Kind::CaFile, true) => format!("New CA file created '{name}'!\n"),
        (Kind::CrlFile, true) => format!("New CRL file created '{name}'!\n"),
        (_, _) => format!("{} '{name}' already exists!\n", k.noun()),
    }
}

fn set(st: &Store, k: Kind, name: &str, pem: &str) -> String {
    match st.set(k, name, pem) {
        Ok((target, created)) => {
            let how = if created { "created" } else { "updated" };
            match k {
                Kind::Cert => format!("Transaction {how} for certificate {target}!\n"),
                Kind::CaFile => format!("transaction {how} for CA {target}!\n"),
                _ => format!("transaction {how} for CRL {target}!\n"),
            }
        }
        Err(e) => format!("{e}\nCan't update {name}!\n"),
    }
}

/// `commit ssl …`: the transaction installed and the contexts built from
/// the file rebuilt; on any error nothing changes.
fn commit(sh: &Shared, k: Kind, name: &str) -> String {
    let st = &sh.tls_files;
    let _one = st.commits.lock().unwrap_or_else(|e| e.into_inner());
    let taken = match st.take(k, name) {
        Ok(t) => t,
        Err(e) => return format!("{e}\nCan't commit {name}!\n"),
    };
    match rebuild(sh, &(k, name.to_string())) {
        Ok(n) => {
            st.confirm(taken);
            format!("Committing {name}{}\nSuccess!\n", ".".repeat(n))
        }
        Err(es) => {
            st.undo(taken);
            format!("{}\nCan't commit {name}!\n", es.join("\n"))
        }
    }
}

fn delete(sh: &Shared, k: Kind, name: &str) -> String {
    let (what, cant) = match k {
        Kind::Cert => ("Certificate", "certificate"),
        Kind::CaFile => ("CA file", "CA file"),
        _ => ("CRL file", "CRL file"),
    };
    if sh.tls_files.entry(k, name).is_none() {
        return format!(
            "Can't remove the {cant}: {} '{name}' doesn't exist!\n",
            k.noun()
        );
    }
    if in_use(sh, &(k, name.to_string())) {
        return format!(
            "Can't remove the {cant}: {} '{name}' in use, can't be deleted!\n\n",
            k.noun()
        );
    }
    match sh.tls_files.remove(k, name) {
        Ok(()) => format!("{what} '{name}' deleted!\n"),
        Err(e) => format!("Can't remove the {cant}: {e}\n\n"),
    }
}

/// `show ssl crt-list [-n] [<list>]`.
fn show_list(sh: &Shared, numbers: bool, list: Option<&str>) -> String {
    let (_, lists) = sh.tls_files.list(Kind::CrtList);
    let Some(name) = list else {
        return lists.iter().map(|(n, _)| format!("{n}\n")).collect();
    };
    let Some(Content::List(l)) = sh.tls_files.entry(Kind::CrtList, name) else {
        return format!("didn't find crt-list '{name}'\n");
    };
    let base = sh.cfg.global.tls.crt_base.as_deref();
    let mut out = format!("# {name}\n");
    for e in &l.lines {
        out.push_str(&with_base(base, &e.crt));
        if numbers {
            out.push_str(&format!(":{}", e.line));
        }
        if !e.opts.is_empty() {
            out.push_str(&format!(" [{}]", e.opts.join(" ")));
        }
        for f in &e.filters {
            out.push(' ');
            out.push_str(f);
        }
        out.push('\n');
    }
    out
}

/// `add ssl crt-list`: the entry added to the list and its binds rebuilt;
/// the certificate's path.
fn add_entry(sh: &Shared, list: &str, line: &str) -> Result<String, String> {
    let st = &sh.tls_files;
    let _one = st.commits.lock().unwrap_or_else(|e| e.into_inner());
    let Some(Content::List(mut l)) = st.entry(Kind::CrtList, list) else {
        return Err(format!("crt-list '{list}' does not exist!"));
    };
    let mut entries = crate::tls::certs::parse_crt_list(line)?;
    let (Some(mut e), true) = (entries.pop(), entries.is_empty()) else {
        return Err("only one line of payload is supported!".into());
    };
    let path = with_base(sh.cfg.global.tls.crt_base.as_deref(), &e.crt);
    if !matches!(st.entry(Kind::Cert, &path), Some(c) if !c.is_empty()) {
        return Err(format!("certificate '{path}' does not exist!"));
    }
    crate::tls::route::line_tls(&Default::default(), &e.opts)?;
    l.last += 1;
    e.line = l.last;
    e.crt = path.clone();
    l.lines.push(e);
    let old = st.replace(Kind::CrtList, list, Content::List(l));
    match rebuild(sh, &(Kind::CrtList, list.to_string())) {
        Ok(_) => Ok(path),
        Err(es) => {
            st.restore(Kind::CrtList, list, old);
            Err(es.join("\n"))
        }
    }
}

/// `del ssl crt-list`: the entry removed and its binds rebuilt, unless it
/// is a bind's default certificate.
fn del_entry(sh: &Shared, list: &str, cert: &str, line: Option<usize>) -> Result<(), String> {
    let st = &sh.tls_files;
    let _one = st.commits.lock().unwrap_or_else(|e| e.into_inner());
    let Some(Content::List(mut l)) = st.entry(Kind::CrtList, list) else {
        return Err(format!("crt-list '{list}' does not exist!"));
    };
    if st.entry(Kind::Cert, cert).is_none() {
        return Err(format!("certificate '{cert}' does not exist!"));
    }
    let base = sh.cfg.global.tls.crt_base.as_deref();
    // (position in the list, line number) of each entry of `cert`.
    let found: Vec<(usize, usize)> = l
        .lines
        .iter()
        .enumerate()
        .filter(|(_, e)| with_base(base, &e.crt) == cert)
        .map(|(i, e)| (i, e.line))
        .collect();
    let numbers = || {
        found
            .iter()
            .map(|(_, n)| n.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let at = match line.filter(|&n| n > 0) {
        Some(n) => match found.iter().find(|(_, ln)| *ln == n) {
            Some(&(i, _)) => i,
            None => return Err(format!(
                "found a certificate '{cert}' but the line number is incorrect, please specify a correct line number preceded by colons ({})!",
                numbers()
            )),
        },
        None => match found.as_slice() {
            [(i, _)] => *i,
            [] => return Err(format!("certificate '{cert}' not found in crt-list '{list}'!")),
            _ => return Err(format!(
                "found the certificate '{cert}' in several entries, please specify a line number preceded by colons ({})!",
                numbers()
            )),
        },
    };
    let defaults = default_users(sh, list, at);
    if !defaults.is_empty() {
        return Err(format!(
            "certificate '{cert}' cannot be deleted, it is used as default certificate by the following frontends:\n{}",
            defaults
                .iter()
                .map(|d| format!("\t- {d}\n"))
                .collect::<String>()
        ));
    }
    l.lines.remove(at);
    let old = st.replace(Kind::CrtList, list, Content::List(l));
    match rebuild(sh, &(Kind::CrtList, list.to_string())) {
        Ok(_) => Ok(()),
        Err(es) => {
            st.restore(Kind::CrtList, list, old);
            Err(es.join("\n"))
        }
    }
}

/// The bind lines (`file:line`) whose default certificate entry `at` of
/// `list` is: its first entry, on a line with no `crt` before its first
/// list and without `strict-sni`.
fn default_users(sh: &Shared, list: &str, at: usize) -> Vec<String> {
    if at != 0 {
        return Vec::new();
    }
    contexts(sh)
        .into_iter()
        .filter_map(|c| match c {
            Ctx::Bind(b, loc) => {
                let t = b.settings();
                let first = t.crt_lists.first().map(|l| l.trim_end_matches('/'));
                (!t.strict_sni && t.crts.is_empty() && first == Some(list)).then_some(loc)
            }
            Ctx::Client(_) => None,
        })
        .collect()
}
