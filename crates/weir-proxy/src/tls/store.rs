//! The TLS files weir serves from — certificates, `crt-list` files, CA
//! files and revocation lists — read once from disk at start-up and
//! changed at run time by the runtime API's `ssl` commands: one
//! transaction per kind (`set` fills it, `commit` installs it, `abort`
//! drops it), as HAProxy has them. Contexts built through a [`Reader`]
//! record the files they read, so a commit rebuilds only those.

use super::certs::{self, CrtListLine};
use rustls::crypto::CryptoProvider;
use rustls::sign::CertifiedKey;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, CertificateRevocationListDer, PrivateKeyDer};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, MutexGuard};

/// The kinds of files the store holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    Cert,
    CaFile,
    CrlFile,
    CrtList,
}

impl Kind {
    /// How answers name a file of this kind.
    pub fn noun(self) -> &'static str {
        match self {
            Kind::Cert => "certificate",
            Kind::CaFile => "CA file",
            Kind::CrlFile => "CRL file",
            Kind::CrtList => "crt-list",
        }
    }
}

/// A file a TLS context was built from.
pub type FileRef = (Kind, String);

/// A file's name and content.
pub type Named = (String, Content);

pub type Crl = CertificateRevocationListDer<'static>;

/// A certificate of the store: its chain, key and OCSP response (an entry
/// made by `new ssl cert` holds none until a commit fills it).
#[derive(Debug, Clone, Default)]
pub struct CertFile {
    pub chain: Vec<CertificateDer<'static>>,
    pub key: Option<Arc<PrivateKeyDer<'static>>>,
    pub ocsp: Option<Vec<u8>>,
    /// Built at load, and when a transaction is committed.
    pub ck: Option<Arc<CertifiedKey>>,
}

/// A `crt-list` file's entries, and the last line number given (entries
/// added at run time take the next ones).
#[derive(Debug, Clone, Default)]
pub struct CrtList {
    pub lines: Vec<CrtListLine>,
    pub last: usize,
}

/// What one file of the store holds.
#[derive(Debug, Clone)]
pub enum Content {
    Cert(CertFile),
    Ca(Vec<CertificateDer<'static>>),
    Crl(Vec<Crl>),
    List(CrtList),
}

impl Content {
    fn empty(kind: Kind) -> Content {
        match kind {
            Kind::Cert => Content::Cert(CertFile::default()),
            Kind::CaFile => Content::Ca(Vec::new()),
            Kind::CrlFile => Content::Crl(Vec::new()),
            Kind::CrtList => Content::List(CrtList::default()),
        }
    }
    /// Holds nothing yet (`new ssl …`).
    pub fn is_empty(&self) -> bool {
        match self {
            Content::Cert(c) => c.chain.is_empty(),
            Content::Ca(l) => l.is_empty(),
            Content::Crl(l) => l.is_empty(),
            Content::List(_) => false,
        }
    }
}

#[derive(Default)]
struct Files {
    entries: BTreeMap<FileRef, Content>,
    /// The transaction of each kind: its file and new content.
    txs: BTreeMap<Kind, (String, Content)>,
    /// Start-up is over: a file the store does not hold is not read from
    /// disk (the runtime API names only what it holds, as HAProxy's).
    sealed: bool,
}

/// The store: every TLS file by kind and path.
pub struct Store {
    files: Mutex<Files>,
    provider: Arc<CryptoProvider>,
    /// `ssl-load-extra-del-ext`.
    pub del_ext: bool,
    /// `ssl-skip-self-issued-ca`: a self-issued CA after the leaf is kept
    /// in the file but not sent to clients.
    skip_self_issued: bool,
    /// Held through a commit, whose rebuilds run outside the files' lock.
    pub commits: Mutex<()>,
    /// `issuers-chain-path`: chains by their first certificate's subject.
    issuers: Vec<Vec<CertificateDer<'static>>>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Store")
    }
}

/// A transaction taken out of the store for a commit: installed, or put
/// back when the contexts it changes cannot be rebuilt.
pub struct Taken {
    kind: Kind,
    name: String,
    new: Content,
    old: Option<Content>,
    tx: Content,
}

/// The chains of an `issuers-chain-path` directory (each PEM file of it;
/// files without a certificate are left out).
fn issuer_chains(dir: &str) -> Vec<Vec<CertificateDer<'static>>> {
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.sort();
    files
        .iter()
        .filter_map(|f| {
            CertificateDer::pem_file_iter(f)
                .ok()?
                .collect::<Result<Vec<_>, _>>()
                .ok()
                .filter(|c| !c.is_empty())
        })
        .collect()
}

impl Store {
    pub fn new(g: &weir_config::tls::TlsGlobal) -> Store {
        Store {
            files: Mutex::new(Files::default()),
            provider: Arc::new(rustls::crypto::aws_lc_rs::default_provider()),
            del_ext: g.extra_del_ext,
            skip_self_issued: g.skip_self_issued_ca,
            commits: Mutex::new(()),
            issuers: g
                .issuers_chain_path
                .as_deref()
                .map(issuer_chains)
                .unwrap_or_default(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Files> {
        self.files.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Start-up is over: files are no longer read from disk.
    pub fn seal(&self) {
        self.lock().sealed = true;
    }

    /// A file's content, read from disk the first time before start-up
    /// ends.
    fn get(&self, kind: Kind, path: &str) -> Result<Content, String> {
        let key = (kind, path.to_string());
        if let Some(c) = self.lock().entries.get(&key) {
            return Ok(c.clone());
        }
        if self.lock().sealed {
            return Err(format!("unable to load {path}"));
        }
        let c = self.read(kind, path)?;
        self.lock().entries.entry(key).or_insert(c.clone());
        Ok(c)
    }

    fn read(&self, kind: Kind, path: &str) -> Result<Content, String> {
        match kind {
            Kind::Cert => {
                let (parts, ocsp) = certs::read_pem(path, self.del_ext)?;
                let key = parts.key.ok_or_else(|| format!("no key for '{path}'"))?;
                let file = self.certify(parts.chain, key, ocsp).map_err(|e| {
                    format!("inconsistent certificate and private key in '{path}': {e}")
                })?;
                Ok(Content::Cert(file))
            }
            Kind::CaFile => {
                let l: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(path)
                    .and_then(|i| i.collect())
                    .map_err(|e| format!("unable to load CA file '{path}': {e:?}"))?;
                if l.is_empty() {
                    return Err(format!("no CA certificate found in '{path}'"));
                }
                Ok(Content::Ca(l))
            }
            Kind::CrlFile => {
                let l: Vec<Crl> = Crl::pem_file_iter(path)
                    .and_then(|i| i.collect())
                    .map_err(|e| format!("unable to load CRL file '{path}': {e:?}"))?;
                if l.is_empty() {
                    return Err(format!("no CRL found in '{path}'"));
                }
                Ok(Content::Crl(l))
            }
            Kind::CrtList => {
                let text = std::fs::read_to_string(path)
                    .map_err(|e| format!("unable to open crt-list '{path}': {e}"))?;
                let lines =
                    certs::parse_crt_list(&text).map_err(|e| format!("crt-list '{path}' {e}"))?;
                Ok(Content::List(CrtList {
                    lines,
                    last: text.lines().count(),
                }))
            }
        }
    }

    fn certify(
        &self,
        chain: Vec<CertificateDer<'static>>,
        key: PrivateKeyDer<'static>,
        ocsp: Option<Vec<u8>>,
    ) -> Result<CertFile, String> {
        let kept = Arc::new(key.clone_key());
        let mut sent = if self.skip_self_issued {
            certs::without_self_issued(&chain)
        } else {
            chain.clone()
        };
        // A leaf alone: the chain of `issuers-chain-path` that starts with
        // its issuer.
        if let [leaf] = sent.as_slice() {
            let issuer = weir_rules::x509::parse(leaf).map(|c| c.issuer.to_vec());
            let found = self.issuers.iter().find(|ch| {
                ch.first()
                    .and_then(|c| weir_rules::x509::parse(c))
                    .is_some_and(|c| Some(c.subject) == issuer.as_deref())
            });
            sent.extend(found.into_iter().flatten().cloned());
        }
        let ck = certs::certify(sent, key, ocsp.clone(), &self.provider)?;
        Ok(CertFile {
            chain,
            key: Some(kept),
            ocsp,
            ck: Some(Arc::new(ck)),
        })
    }

    /// Every file of a kind, with the transaction's file when there is
    /// one.
    pub fn list(&self, kind: Kind) -> (Option<Named>, Vec<Named>) {
        let f = self.lock();
        let tx = f.txs.get(&kind).cloned();
        let all = f
            .entries
            .iter()
            .filter(|((k, _), _)| *k == kind)
            .map(|((_, n), c)| (n.clone(), c.clone()))
            .collect();
        (tx, all)
    }

    /// One file (`*name`: the transaction's).
    pub fn entry(&self, kind: Kind, name: &str) -> Option<Content> {
        let f = self.lock();
        match name.strip_prefix('*') {
            Some(n) => f
                .txs
                .get(&kind)
                .filter(|(t, _)| t == n)
                .map(|(_, c)| c.clone()),
            None => f.entries.get(&(kind, name.to_string())).cloned(),
        }
    }

    /// `new ssl cert|ca-file|crl-file`: an empty file.
    pub fn create(&self, kind: Kind, name: &str) -> Result<(), String> {
        let mut f = self.lock();
        let key = (kind, name.to_string());
        if f.entries.contains_key(&key) {
            return Err("exists".into());
        }
        f.entries.insert(key, Content::empty(kind));
        Ok(())
    }

    /// `del ssl …` once no context uses it.
    pub fn remove(&self, kind: Kind, name: &str) -> Result<(), String> {
        let mut f = self.lock();
        if f.txs.get(&kind).is_some_and(|(t, _)| t == name) {
            return Err(format!(
                "{} '{name}' is in a transaction, can't be deleted!",
                kind.noun()
            ));
        }
        f.entries
            .remove(&(kind, name.to_string()))
            .map(|_| ())
            .ok_or_else(|| format!("{} '{name}' doesn't exist!", kind.noun()))
    }

    /// The name a `set ssl cert` payload is for: the certificate itself,
    /// or the one whose key file `name` is (`x.pem.key`, or `x.key` with
    /// `ssl-load-extra-del-ext`); with `true` when only its key is given.
    fn cert_target(&self, f: &Files, name: &str) -> Option<(String, bool)> {
        let has = |n: &str| f.entries.contains_key(&(Kind::Cert, n.to_string()));
        if has(name) {
            return Some((name.to_string(), false));
        }
        let base = name.strip_suffix(".key")?;
        if has(base) {
            return Some((base.to_string(), true));
        }
        f.entries
            .keys()
            .filter(|(k, _)| *k == Kind::Cert)
            .map(|(_, n)| n)
            .find(|n| self.del_ext && certs::key_path(n, true) == name)
            .map(|n| (n.clone(), true))
    }

    /// `set ssl cert|ca-file|crl-file <name>` with a PEM payload: starts
    /// or updates the kind's transaction. `Ok(true)` when it was created.
    pub fn set(&self, kind: Kind, name: &str, payload: &str) -> Result<(String, bool), String> {
        let mut f = self.lock();
        if let Some(base) = name.strip_suffix(".ocsp") {
            if kind == Kind::Cert && f.entries.contains_key(&(kind, base.to_string())) {
                return set_ocsp_file(&mut f, base, payload);
            }
        }
        let (target, key_only) = match kind {
            Kind::Cert => self.cert_target(&f, name).ok_or_else(|| {
                "Can't replace a certificate which is not referenced by the configuration!"
                    .to_string()
            })?,
            _ => (name.to_string(), false),
        };
        if !f.entries.contains_key(&(kind, target.clone())) {
            return Err(format!(
                "Can't replace a {} which is not referenced by the configuration!",
                kind.noun()
            ));
        }
        if let Some((t, _)) = f.txs.get(&kind).filter(|(t, _)| *t != target) {
            return Err(format!(
                "The ongoing transaction is about '{t}' but you are trying to set '{target}'"
            ));
        }
        let created = !f.txs.contains_key(&kind);
        let base = match f.txs.get(&kind) {
            Some((_, c)) => c.clone(),
            None => f
                .entries
                .get(&(kind, target.clone()))
                .cloned()
                .unwrap_or_else(|| Content::empty(kind)),
        };
        let new = fill(base, payload.as_bytes(), key_only, &target)?;
        f.txs.insert(kind, (target.clone(), new));
        Ok((target, created))
    }

    /// `abort ssl …`.
    pub fn abort(&self, kind: Kind, name: &str) -> Result<(), String> {
        let mut f = self.lock();
        match f.txs.get(&kind) {
            None => Err("No ongoing transaction!".into()),
            Some((t, _)) if t != name => Err(format!(
                "The ongoing transaction is about '{t}' but you are trying to abort a transaction for '{name}'"
            )),
            Some(_) => {
                f.txs.remove(&kind);
                Ok(())
            }
        }
    }

    /// `commit ssl …`, first half: installs the transaction's content (a
    /// certificate checked against its key), to be confirmed with
    /// [`Store::confirm`] or undone with [`Store::undo`].
    pub fn take(&self, kind: Kind, name: &str) -> Result<Taken, String> {
        let mut f = self.lock();
        let tx = match f.txs.get(&kind) {
            None => return Err("No ongoing transaction! !".into()),
            Some((t, _)) if t != name => {
                return Err(format!(
                    "The ongoing transaction is about '{t}' but you are trying to set '{name}'"
                ))
            }
            Some((_, c)) => c.clone(),
        };
        let new = match &tx {
            Content::Cert(c) => {
                let (false, Some(key)) = (c.chain.is_empty(), &c.key) else {
                    return Err(
                        "The transaction must contain at least a certificate and a private key!"
                            .into(),
                    );
                };
                if c.ocsp
                    .as_deref()
                    .is_some_and(|d| weir_rules::ocsp::parse(d).is_none())
                {
                    return Err("Unable to parse OCSP response.".into());
                }
                Content::Cert(self.certify(c.chain.clone(), key.clone_key(), c.ocsp.clone())?)
            }
            other => other.clone(),
        };
        f.txs.remove(&kind);
        let old = f.entries.insert((kind, name.to_string()), new.clone());
        Ok(Taken {
            kind,
            name: name.to_string(),
            new,
            old,
            tx,
        })
    }

    /// The committed content stays.
    pub fn confirm(&self, t: Taken) -> Content {
        t.new
    }

    /// Puts back the old content and the transaction.
    pub fn undo(&self, t: Taken) {
        let mut f = self.lock();
        let key = (t.kind, t.name.clone());
        match t.old {
            Some(o) => f.entries.insert(key, o),
            None => f.entries.remove(&key),
        };
        f.txs.insert(t.kind, (t.name, t.tx));
    }

    /// `set ssl ocsp-response`: `der` replaces the response of every
    /// certificate whose response has the same certificate ID (`key`).
    /// The certificates changed and their old content, for
    /// [`Store::restore`]; none when no certificate has that ID.
    pub fn set_ocsp(&self, key: &str, der: &[u8]) -> Result<Vec<Named>, String> {
        let mut f = self.lock();
        let same = |c: &CertFile| {
            let r = c.ocsp.as_deref().and_then(weir_rules::ocsp::parse);
            r.and_then(|r| r.basic)
                .is_some_and(|b| b.responses.first().is_some_and(|s| s.key() == key))
        };
        let names: Vec<String> = f
            .entries
            .iter()
            .filter_map(|((k, n), c)| match c {
                Content::Cert(c) if *k == Kind::Cert && same(c) => Some(n.clone()),
                _ => None,
            })
            .collect();
        let mut olds = Vec::new();
        for n in names {
            let key = (Kind::Cert, n.clone());
            let Some(Content::Cert(c)) = f.entries.get(&key).cloned() else {
                continue;
            };
            let Some(k) = &c.key else {
                continue;
            };
            let new = self.certify(c.chain.clone(), k.clone_key(), Some(der.to_vec()))?;
            f.entries.insert(key, Content::Cert(new));
            olds.push((n, Content::Cert(c)));
        }
        Ok(olds)
    }

    /// Replaces a file's content directly (a `crt-list` edited by `add|del
    /// ssl crt-list`), returning the old one for [`Store::restore`].
    pub fn replace(&self, kind: Kind, name: &str, c: Content) -> Option<Content> {
        self.lock().entries.insert((kind, name.to_string()), c)
    }

    /// Puts back what [`Store::replace`] returned.
    pub fn restore(&self, kind: Kind, name: &str, old: Option<Content>) {
        let mut f = self.lock();
        let key = (kind, name.to_string());
        match old {
            Some(o) => f.entries.insert(key, o),
            None => f.entries.remove(&key),
        };
    }
}

/// `set ssl cert <crt>.ocsp` with a base64 payload: the certificate's
/// transaction (started from the certificate when there is none) takes
/// it as its OCSP response, checked at commit.
fn set_ocsp_file(f: &mut Files, base: &str, payload: &str) -> Result<(String, bool), String> {
    if let Some((t, _)) = f.txs.get(&Kind::Cert).filter(|(t, _)| t != base) {
        return Err(format!(
            "The ongoing transaction is about '{t}' but you are trying to set '{base}'"
        ));
    }
    let der = weir_rules::ocsp::from_base64(payload).ok_or_else(|| {
        "'set ssl cert' received invalid base64 encoded OCSP response.".to_string()
    })?;
    let created = !f.txs.contains_key(&Kind::Cert);
    let content = match f.txs.get(&Kind::Cert) {
        Some((_, c)) => c.clone(),
        None => f
            .entries
            .get(&(Kind::Cert, base.to_string()))
            .cloned()
            .unwrap_or_else(|| Content::empty(Kind::Cert)),
    };
    let Content::Cert(mut c) = content else {
        return Err("Invalid payload".into());
    };
    c.ocsp = Some(der);
    c.ck = None;
    f.txs
        .insert(Kind::Cert, (base.to_string(), Content::Cert(c)));
    Ok((base.to_string(), created))
}

/// A transaction's content with a payload's PEM blocks in: certificates
/// replace the chain, a key replaces the key (only a key for a key file).
fn fill(base: Content, payload: &[u8], key_only: bool, name: &str) -> Result<Content, String> {
    let invalid = || "Invalid payload".to_string();
    match base {
        Content::Cert(mut c) => {
            let parts = certs::parse_pem(payload).map_err(|_| {
                format!("unable to load certificate from file '{name}'.\nCan't load the payload")
            })?;
            if parts.chain.is_empty() && parts.key.is_none() {
                return Err(format!(
                    "unable to load certificate from file '{name}'.\nCan't load the payload"
                ));
            }
            c.ck = None;
            if key_only {
                if let Some(k) = parts.key {
                    c.key = Some(Arc::new(k));
                }
            } else {
                // The file's content is the payload's: a key file may
                // follow (`set ssl cert <file>.key`).
                c.chain = parts.chain;
                c.key = parts.key.map(Arc::new);
                c.ocsp = None;
            }
            Ok(Content::Cert(c))
        }
        Content::Ca(_) => {
            let l: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(payload)
                .collect::<Result<_, _>>()
                .map_err(|_| invalid())?;
            if l.is_empty() {
                return Err(invalid());
            }
            Ok(Content::Ca(l))
        }
        Content::Crl(_) => {
            let l: Vec<Crl> = Crl::pem_slice_iter(payload)
                .collect::<Result<_, _>>()
                .map_err(|_| invalid())?;
            if l.is_empty() {
                return Err(invalid());
            }
            Ok(Content::Crl(l))
        }
        Content::List(_) => Err(invalid()),
    }
}

/// Reads files from the store for one context's build, and records them.
pub struct Reader<'a> {
    pub store: &'a Store,
    used: RefCell<BTreeSet<FileRef>>,
}

impl<'a> Reader<'a> {
    pub fn new(store: &'a Store) -> Reader<'a> {
        Reader {
            store,
            used: RefCell::new(BTreeSet::new()),
        }
    }

    fn get(&self, kind: Kind, path: &str) -> Result<Content, String> {
        self.used.borrow_mut().insert((kind, path.to_string()));
        self.store.get(kind, path)
    }

    /// A certificate with its key.
    pub fn cert(&self, path: &str) -> Result<Arc<CertifiedKey>, String> {
        match self.get(Kind::Cert, path)? {
            Content::Cert(CertFile { ck: Some(ck), .. }) => Ok(ck),
            _ => Err(format!("certificate '{path}' is empty")),
        }
    }

    /// A `crt-list` file's entries.
    pub fn crt_list(&self, path: &str) -> Result<Vec<CrtListLine>, String> {
        match self.get(Kind::CrtList, path)? {
            Content::List(l) => Ok(l.lines),
            _ => Err(format!("unable to open crt-list '{path}'")),
        }
    }

    /// A CA file's certificates.
    pub fn ca(&self, path: &str) -> Result<Vec<CertificateDer<'static>>, String> {
        match self.get(Kind::CaFile, path)? {
            Content::Ca(l) if !l.is_empty() => Ok(l),
            _ => Err(format!("no CA certificate found in '{path}'")),
        }
    }

    /// A CRL file's lists.
    pub fn crl(&self, path: &str) -> Result<Vec<Crl>, String> {
        match self.get(Kind::CrlFile, path)? {
            Content::Crl(l) if !l.is_empty() => Ok(l),
            _ => Err(format!("no CRL found in '{path}'")),
        }
    }

    /// The certificate files of a `crt` directory: read from disk at
    /// start-up, then those the store took from it.
    pub fn dir_files(&self, dir: &str) -> Result<Vec<String>, String> {
        let f = self.store.lock();
        if !f.sealed {
            drop(f);
            return certs::dir_files(dir);
        }
        let prefix = format!("{}/", dir.trim_end_matches('/'));
        Ok(f.entries
            .keys()
            .filter(|(k, n)| *k == Kind::Cert && n.starts_with(&prefix))
            .map(|(_, n)| n.clone())
            .collect())
    }

    /// The files read.
    pub fn used(self) -> BTreeSet<FileRef> {
        self.used.into_inner()
    }
}
