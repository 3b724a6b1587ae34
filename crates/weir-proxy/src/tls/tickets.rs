//! Session ticket keys that outlive a process, so that clients resume
//! across reloads: a `tls-ticket-keys` file (HAProxy's format: one base64
//! key of 48 or 80 bytes per line, the last three decrypt and the
//! penultimate encrypts), or, without one, keys derived every 12 hours from
//! a secret that a master gives each worker (and an old process gives the
//! one started with `-sf`), instead of keys of one process's own.
//!
//! A ticket: the key's name (16 bytes), a nonce (12), then the session
//! sealed with AES-GCM (the name as associated data). weir's format:
//! tickets do not pass between weir and haproxy.

use aws_lc_rs::aead::{Aad, LessSafeKey, Nonce, UnboundKey, AES_128_GCM, AES_256_GCM, NONCE_LEN};
use aws_lc_rs::rand::{SecureRandom, SystemRandom};
use rustls::server::ProducesTickets;
use std::sync::{Mutex, OnceLock};

const NAME: usize = 16;
/// How long a derived key encrypts; the one before it still decrypts.
const PERIOD_SECS: u64 = 12 * 3600;

/// This process's ticket secret (the master's, the old process's, or
/// drawn at start).
static SECRET: OnceLock<[u8; 32]> = OnceLock::new();

/// Takes `s` as the ticket secret (before any TLS context is built);
/// false when one was set already.
pub fn adopt(s: [u8; 32]) -> bool {
    SECRET.set(s).is_ok()
}

/// The ticket secret, drawn at random on first use.
pub fn secret() -> [u8; 32] {
    *SECRET.get_or_init(|| {
        let mut s = [0u8; 32];
        // (A failing system RNG leaves zeros: keys still differ per period,
        // and the process could not do TLS anyway.)
        let _ = SystemRandom::new().fill(&mut s);
        s
    })
}

/// One ticket key.
#[derive(Debug)]
struct Key {
    name: [u8; NAME],
    aead: LessSafeKey,
}

impl Key {
    /// From HAProxy's layout: name (16), AES key (16 or 32), HMAC key
    /// (unused: GCM authenticates).
    fn from_haproxy(raw: &[u8]) -> Option<Key> {
        let (alg, len) = match raw.len() {
            48 => (&AES_128_GCM, 16),
            80 => (&AES_256_GCM, 32),
            _ => return None,
        };
        let name: [u8; NAME] = raw.get(..NAME)?.try_into().ok()?;
        let aes = raw.get(NAME..NAME + len)?;
        Some(Key {
            name,
            aead: LessSafeKey::new(UnboundKey::new(alg, aes).ok()?),
        })
    }

    fn seal(&self, plain: &[u8]) -> Option<Vec<u8>> {
        let mut nonce = [0u8; NONCE_LEN];
        SystemRandom::new().fill(&mut nonce).ok()?;
        let mut body = plain.to_vec();
        self.aead
            .seal_in_place_append_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(&self.name),
                &mut body,
            )
            .ok()?;
        let mut out = Vec::with_capacity(NAME + NONCE_LEN + body.len());
        out.extend_from_slice(&self.name);
        out.extend_from_slice(&nonce);
        out.extend_from_slice(&body);
        Some(out)
    }

    fn open(&self, ticket: &[u8]) -> Option<Vec<u8>> {
        let nonce: [u8; NONCE_LEN] = ticket.get(NAME..NAME + NONCE_LEN)?.try_into().ok()?;
        let mut body = ticket.get(NAME + NONCE_LEN..)?.to_vec();
        let plain = self
            .aead
            .open_in_place(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(&self.name),
                &mut body,
            )
            .ok()?;
        Some(plain.to_vec())
    }
}

fn open_with<'a>(keys: impl Iterator<Item = &'a Key>, ticket: &[u8]) -> Option<Vec<u8>> {
    let name = ticket.get(..NAME)?;
    keys.filter(|k| k.name == name).find_map(|k| k.open(ticket))
}

/// The keys of a `tls-ticket-keys` file.
#[derive(Debug)]
pub struct FileKeys {
    /// The last three keys of the file, oldest first.
    keys: Vec<Key>,
    lifetime: u32,
}

/// Reads a `tls-ticket-keys` file as haproxy does (at least three keys,
/// all of one length).
pub fn from_file(path: &str, lifetime: u32) -> Result<FileKeys, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("'{path}' : unable to load ssl tickets keys file ({e})"))?;
    let mut keys = Vec::new();
    let mut len = None;
    for (n, line) in text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .enumerate()
    {
        let raw = weir_rules::ocsp::from_base64(line).filter(|r| len.is_none_or(|l| l == r.len()));
        let key = raw.as_deref().and_then(|r| {
            len = Some(r.len());
            Key::from_haproxy(r)
        });
        keys.push(key.ok_or_else(|| {
            format!(
                "'{path}' : wrong sized key at line {} (48 or 80 bytes, all alike, base64)",
                n + 1
            )
        })?);
    }
    if keys.len() < 3 {
        return Err(format!(
            "'{path}' : not enough keys in the tls-ticket-keys file (3 at least, {} found)",
            keys.len()
        ));
    }
    let keys = keys.split_off(keys.len() - 3);
    Ok(FileKeys { keys, lifetime })
}

impl ProducesTickets for FileKeys {
    fn enabled(&self) -> bool {
        true
    }
    fn lifetime(&self) -> u32 {
        self.lifetime
    }
    fn encrypt(&self, plain: &[u8]) -> Option<Vec<u8>> {
        self.keys.get(1)?.seal(plain)
    }
    fn decrypt(&self, cipher: &[u8]) -> Option<Vec<u8>> {
        open_with(self.keys.iter().rev(), cipher)
    }
}

/// Keys derived from the shared secret, one per 12-hour period.
#[derive(Debug)]
pub struct Derived {
    secret: [u8; 32],
    lifetime: u32,
    /// The current period's number and key, and the previous one's key.
    cache: Mutex<Option<(u64, Key, Key)>>,
}

impl Derived {
    pub fn new(lifetime: u32) -> Derived {
        Derived {
            secret: secret(),
            lifetime,
            cache: Mutex::new(None),
        }
    }

    fn key(&self, period: u64) -> Option<Key> {
        use aws_lc_rs::hkdf::{Salt, HKDF_SHA256};
        struct Len(usize);
        impl aws_lc_rs::hkdf::KeyType for Len {
            fn len(&self) -> usize {
                self.0
            }
        }
        let prk = Salt::new(HKDF_SHA256, b"weir session tickets").extract(&self.secret);
        let info = period.to_be_bytes();
        let info = [&info[..]];
        let okm = prk.expand(&info, Len(80)).ok()?;
        let mut raw = [0u8; 80];
        okm.fill(&mut raw).ok()?;
        Key::from_haproxy(&raw)
    }

    /// Runs `f` on the current and previous periods' keys.
    fn with_keys<T>(&self, f: impl FnOnce(&Key, &Key) -> Option<T>) -> Option<T> {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .ok()?
            .as_secs();
        let period = now / PERIOD_SECS;
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if cache.as_ref().is_none_or(|c| c.0 != period) {
            *cache = Some((
                period,
                self.key(period)?,
                self.key(period.saturating_sub(1))?,
            ));
        }
        let (_, cur, prev) = cache.as_ref()?;
        f(cur, prev)
    }
}

impl ProducesTickets for Derived {
    fn enabled(&self) -> bool {
        true
    }
    fn lifetime(&self) -> u32 {
        self.lifetime
    }
    fn encrypt(&self, plain: &[u8]) -> Option<Vec<u8>> {
        self.with_keys(|cur, _| cur.seal(plain))
    }
    fn decrypt(&self, cipher: &[u8]) -> Option<Vec<u8>> {
        self.with_keys(|cur, prev| open_with([cur, prev].into_iter(), cipher))
    }
}

#[cfg(test)]
#[path = "tickets_tests.rs"]
mod tests;
