//! TLS settings of `bind … ssl` lines and of the global `ssl-default-*`
//! keywords, with OpenSSL's names (versions, cipher strings, curves) mapped
//! to what weir's TLS library offers. Pure: certificate files are read and
//! checked by the runtime at start-up.

/// A protocol version as HAProxy names it (`ssl-min-ver TLSv1.2`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum TlsVersion {
    Ssl3,
    Tls10,
    Tls11,
    Tls12,
    Tls13,
}

impl TlsVersion {
    pub fn parse(s: &str) -> Result<TlsVersion, String> {
        Ok(match s {
            "SSLv3" => TlsVersion::Ssl3,
            "TLSv1.0" => TlsVersion::Tls10,
            "TLSv1.1" => TlsVersion::Tls11,
            "TLSv1.2" => TlsVersion::Tls12,
            "TLSv1.3" => TlsVersion::Tls13,
            _ => {
                return Err(format!(
                    "unknown version '{s}' (expects SSLv3, TLSv1.0, TLSv1.1, TLSv1.2 or TLSv1.3)"
                ))
            }
        })
    }
    pub fn name(self) -> &'static str {
        match self {
            TlsVersion::Ssl3 => "SSLv3",
            TlsVersion::Tls10 => "TLSv1.0",
            TlsVersion::Tls11 => "TLSv1.1",
            TlsVersion::Tls12 => "TLSv1.2",
            TlsVersion::Tls13 => "TLSv1.3",
        }
    }
}

/// A cipher suite weir offers (all are AEAD with forward secrecy).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Suite {
    Tls13Aes256Gcm,
    Tls13Aes128Gcm,
    Tls13Chacha20,
    EcdheEcdsaAes256Gcm,
    EcdheEcdsaAes128Gcm,
    EcdheEcdsaChacha20,
    EcdheRsaAes256Gcm,
    EcdheRsaAes128Gcm,
    EcdheRsaChacha20,
}

/// TLS 1.3 suites by their IANA/OpenSSL names (`ciphersuites`).
const TLS13_SUITES: &[(&str, Suite)] = &[
    ("TLS_AES_256_GCM_SHA384", Suite::Tls13Aes256Gcm),
    ("TLS_AES_128_GCM_SHA256", Suite::Tls13Aes128Gcm),
    ("TLS_CHACHA20_POLY1305_SHA256", Suite::Tls13Chacha20),
];

/// TLS 1.2 suites by their OpenSSL names (`ciphers`), with the attributes
/// OpenSSL's aliases select them by.
const TLS12_SUITES: &[(&str, Suite, &[&str])] = &[
    (
        "ECDHE-ECDSA-AES256-GCM-SHA384",
        Suite::EcdheEcdsaAes256Gcm,
        &["ECDSA", "AESGCM", "AES", "AES256", "SHA384"],
    ),
    (
        "ECDHE-ECDSA-AES128-GCM-SHA256",
        Suite::EcdheEcdsaAes128Gcm,
        &["ECDSA", "AESGCM", "AES", "AES128", "SHA256"],
    ),
    (
        "ECDHE-ECDSA-CHACHA20-POLY1305",
        Suite::EcdheEcdsaChacha20,
        &["ECDSA", "CHACHA20", "SHA256"],
    ),
    (
        "ECDHE-RSA-AES256-GCM-SHA384",
        Suite::EcdheRsaAes256Gcm,
        &["RSA", "AESGCM", "AES", "AES256", "SHA384"],
    ),
    (
        "ECDHE-RSA-AES128-GCM-SHA256",
        Suite::EcdheRsaAes128Gcm,
        &["RSA", "AESGCM", "AES", "AES128", "SHA256"],
    ),
    (
        "ECDHE-RSA-CHACHA20-POLY1305",
        Suite::EcdheRsaChacha20,
        &["RSA", "CHACHA20", "SHA256"],
    ),
];

/// Alias words every weir suite has (all are ECDHE, AEAD, TLS 1.2 "high").
const COMMON_ALIASES: &[&str] = &[
    "ALL", "DEFAULT", "HIGH", "ECDHE", "EECDH", "kEECDH", "kECDHE", "AEAD", "TLSv1.2", "FIPS",
];

/// OpenSSL alias words that select no suite weir offers (legacy key
/// exchanges, ciphers and MACs): valid in a cipher string, they add nothing.
const EMPTY_ALIASES: &[&str] = &[
    "EDH",
    "DHE",
    "kEDH",
    "kDHE",
    "aNULL",
    "eNULL",
    "NULL",
    "ADH",
    "AECDH",
    "EXP",
    "EXPORT",
    "LOW",
    "MEDIUM",
    "MD5",
    "RC4",
    "DES",
    "3DES",
    "SHA",
    "SHA1",
    "PSK",
    "SRP",
    "DSS",
    "aDSS",
    "kRSA",
    "CAMELLIA",
    "ARIA",
    "SEED",
    "IDEA",
    "CCM",
    "CCM8",
    "SSLv3",
    "TLSv1",
    "TLSv1.0",
    "COMPLEMENTOFDEFAULT",
    "COMPLEMENTOFALL",
    "aECDH",
    "kECDH",
    "aPSK",
    "kPSK",
    "ECDHEPSK",
    "DHEPSK",
    "RSAPSK",
    "AESCCM",
    "AESCCM8",
    "GOST",
];

/// Which suites one alias word selects (`None`: an unknown word).
fn alias(word: &str) -> Option<Vec<Suite>> {
    if COMMON_ALIASES.contains(&word) {
        return Some(TLS12_SUITES.iter().map(|s| s.1).collect());
    }
    if EMPTY_ALIASES.contains(&word) {
        return Some(Vec::new());
    }
    let attr = match word {
        "aECDSA" | "ECDSA" => "ECDSA",
        "aRSA" | "RSA" => "RSA",
        "CHACHA20" | "CHACHA20-POLY1305" => "CHACHA20",
        "AESGCM" | "AES" | "AES128" | "AES256" | "SHA256" | "SHA384" => word,
        _ => return None,
    };
    Some(
        TLS12_SUITES
            .iter()
            .filter(|s| s.2.contains(&attr))
            .map(|s| s.1)
            .collect(),
    )
}

/// The names weir offers, for error messages.
fn offered(tls13: bool) -> String {
    if tls13 {
        TLS13_SUITES
            .iter()
            .map(|s| s.0)
            .collect::<Vec<_>>()
            .join(":")
    } else {
        TLS12_SUITES
            .iter()
            .map(|s| s.0)
            .collect::<Vec<_>>()
            .join(":")
    }
}

/// Parses an OpenSSL cipher string for TLS 1.2 (`ciphers`): suite names
/// and aliases (`HIGH`, `EECDH+AESGCM`, `!aNULL` …) separated by `:`,
/// `,` or spaces. A suite named explicitly that weir does not offer is an
/// error (OpenSSL would silently drop it; a configuration that relies on it
/// should know); aliases select among the suites weir has.
pub fn parse_ciphers(s: &str) -> Result<Vec<Suite>, String> {
    let mut out: Vec<Suite> = Vec::new();
    let mut banned: Vec<Suite> = Vec::new();
    for entry in s.split([':', ',', ' ']).filter(|e| !e.is_empty()) {
        if entry.starts_with('@') {
            continue; // @STRENGTH, @SECLEVEL=n: ordering and policy only.
        }
        let (op, body) = match entry.as_bytes()[0] {
            b'!' | b'-' | b'+' => (entry.as_bytes()[0], &entry[1..]),
            _ => (b' ', entry),
        };
        let picked: Vec<Suite> = if let Some(s) = TLS12_SUITES.iter().find(|s| s.0 == body) {
            vec![s.1]
        } else if body.contains('-') && !body.contains('+') && body != "CHACHA20-POLY1305" {
            if TLS13_SUITES.iter().any(|s| s.0 == body) || body.starts_with("TLS_") {
                return Err(format!(
                    "'{body}' is a TLSv1.3 suite: set it with 'ciphersuites'"
                ));
            }
            // A suite weir lacks is left out (as OpenSSL leaves out the
            // ones it does not build); the caller warns (`unoffered`).
            continue;
        } else {
            // An alias, possibly a '+'-joined intersection.
            let mut set: Option<Vec<Suite>> = None;
            for w in body.split('+') {
                let Some(sel) = alias(w) else {
                    return Err(format!("unknown cipher or alias '{w}' in '{s}'"));
                };
                set = Some(match set {
                    None => sel,
                    Some(prev) => prev.into_iter().filter(|x| sel.contains(x)).collect(),
                });
            }
            set.unwrap_or_default()
        };
        match op {
            b'!' => {
                banned.extend(&picked);
                out.retain(|x| !picked.contains(x));
            }
            b'-' => out.retain(|x| !picked.contains(x)),
            b'+' => {
                // Moves the selected suites to the end.
                let moved: Vec<Suite> =
                    out.iter().copied().filter(|x| picked.contains(x)).collect();
                out.retain(|x| !picked.contains(x));
                out.extend(moved);
            }
            _ => {
                for p in picked {
                    if !out.contains(&p) && !banned.contains(&p) {
                        out.push(p);
                    }
                }
            }
        }
    }
    if out.is_empty() {
        return Err(format!(
            "no TLSv1.2 cipher weir offers is left in '{s}' (weir offers {})",
            offered(false)
        ));
    }
    Ok(out)
}

/// Parses a TLS 1.3 `ciphersuites` list (`:`-separated IANA names).
pub fn parse_ciphersuites(s: &str) -> Result<Vec<Suite>, String> {
    let mut out = Vec::new();
    for name in s.split(':').filter(|e| !e.is_empty()) {
        match TLS13_SUITES.iter().find(|x| x.0 == name) {
            Some(x) => {
                if !out.contains(&x.1) {
                    out.push(x.1)
                }
            }
            None => {
                return Err(format!(
                    "TLSv1.3 suite '{name}' is not offered by weir (it offers {})",
                    offered(true)
                ))
            }
        }
    }
    if out.is_empty() {
        return Err("empty TLSv1.3 suite list".into());
    }
    Ok(out)
}

/// A key-exchange group (`curves`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    X25519,
    P256,
    P384,
    X25519Mlkem768,
}

const CURVES: &str = "X25519, P-256, P-384, X25519MLKEM768";

/// The entries of a `ciphers` or `curves` value (`word` names which)
/// that weir leaves out because it does not offer them, each with the
/// warning to give.
pub fn unoffered(word: &str, value: &str) -> Vec<String> {
    match word {
        "ciphers" | "ssl-default-bind-ciphers" | "ssl-default-server-ciphers" => value
            .split([':', ',', ' '])
            .filter(|e| !e.is_empty() && !e.starts_with(['!', '-', '+', '@']))
            .filter(|e| e.contains('-') && !e.contains('+') && *e != "CHACHA20-POLY1305")
            .filter(|e| !TLS12_SUITES.iter().any(|s| s.0 == *e))
            .map(|e| {
                format!(
                    "cipher '{e}' is not offered by weir and is left out (TLSv1.2 suites: {})",
                    offered(false)
                )
            })
            .collect(),
        "curves" | "ecdhe" | "ssl-default-bind-curves" => value
            .split(':')
            .filter(|n| !n.is_empty())
            .filter(|n| {
                !matches!(
                    *n,
                    "X25519"
                        | "x25519"
                        | "P-256"
                        | "prime256v1"
                        | "secp256r1"
                        | "P-384"
                        | "secp384r1"
                        | "X25519MLKEM768"
                )
            })
            .map(|n| {
                format!("curve '{n}' is not offered by weir and is left out (it offers {CURVES})")
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// Parses a `curves` list (`:`-separated OpenSSL names).
pub fn parse_curves(s: &str) -> Result<Vec<Group>, String> {
    let mut out = Vec::new();
    for name in s.split(':').filter(|e| !e.is_empty()) {
        let g = match name {
            "X25519" | "x25519" => Group::X25519,
            "P-256" | "prime256v1" | "secp256r1" => Group::P256,
            "P-384" | "secp384r1" => Group::P384,
            "X25519MLKEM768" => Group::X25519Mlkem768,
            // Left out; the caller warns (`unoffered`).
            _ => continue,
        };
        if !out.contains(&g) {
            out.push(g);
        }
    }
    if out.is_empty() {
        return Err(format!(
            "no curve weir offers is left in '{s}' (weir offers {CURVES})"
        ));
    }
    Ok(out)
}

/// Client certificate policy (`verify`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verify {
    None,
    Optional,
    Required,
}

/// Version and ticket options shared by bind lines and
/// `ssl-default-bind-options`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TlsOptions {
    pub min_ver: Option<TlsVersion>,
    pub max_ver: Option<TlsVersion>,
    /// Versions turned off with `no-tlsv1x` / `no-sslv3`.
    pub disabled: Vec<TlsVersion>,
    pub no_tickets: bool,
    pub prefer_client_ciphers: bool,
}

impl TlsOptions {
    /// Applies one option word (and its argument); returns how many words
    /// it used, or `None` when the word is not a version/ticket option.
    pub fn apply(&mut self, word: &str, arg: Option<&str>) -> Option<Result<usize, String>> {
        let need = || arg.ok_or_else(|| format!("'{word}' expects an argument"));
        Some(match word {
            "ssl-min-ver" => need().and_then(TlsVersion::parse).map(|v| {
                self.min_ver = Some(v);
                2
            }),
            "ssl-max-ver" => need().and_then(TlsVersion::parse).map(|v| {
                self.max_ver = Some(v);
                2
            }),
            "no-sslv3" | "no-tlsv10" | "no-tlsv11" | "no-tlsv12" | "no-tlsv13" => {
                self.disabled.push(match word {
                    "no-sslv3" => TlsVersion::Ssl3,
                    "no-tlsv10" => TlsVersion::Tls10,
                    "no-tlsv11" => TlsVersion::Tls11,
                    "no-tlsv12" => TlsVersion::Tls12,
                    _ => TlsVersion::Tls13,
                });
                Ok(1)
            }
            "force-sslv3" | "force-tlsv10" | "force-tlsv11" | "force-tlsv12" | "force-tlsv13" => {
                let v = match word {
                    "force-sslv3" => TlsVersion::Ssl3,
                    "force-tlsv10" => TlsVersion::Tls10,
                    "force-tlsv11" => TlsVersion::Tls11,
                    "force-tlsv12" => TlsVersion::Tls12,
                    _ => TlsVersion::Tls13,
                };
                self.min_ver = Some(v);
                self.max_ver = Some(v);
                Ok(1)
            }
            "no-tls-tickets" => {
                self.no_tickets = true;
                Ok(1)
            }
            "prefer-client-ciphers" => {
                self.prefer_client_ciphers = true;
                Ok(1)
            }
            _ => return None,
        })
    }

    /// Fills what `self` leaves unset from `defaults`.
    pub fn or(&self, defaults: &TlsOptions) -> TlsOptions {
        TlsOptions {
            min_ver: self.min_ver.or(defaults.min_ver),
            max_ver: self.max_ver.or(defaults.max_ver),
            disabled: if self.disabled.is_empty() {
                defaults.disabled.clone()
            } else {
                self.disabled.clone()
            },
            no_tickets: self.no_tickets || defaults.no_tickets,
            prefer_client_ciphers: self.prefer_client_ciphers || defaults.prefer_client_ciphers,
        }
    }

    /// The versions enabled, as HAProxy computes them (default minimum
    /// TLSv1.2, as in 2.6), limited to those weir speaks (TLSv1.2 and
    /// TLSv1.3). Empty when none is left.
    pub fn versions(&self) -> Vec<TlsVersion> {
        let min = self.min_ver.unwrap_or(TlsVersion::Tls12);
        let max = self.max_ver.unwrap_or(TlsVersion::Tls13);
        [TlsVersion::Tls12, TlsVersion::Tls13]
            .into_iter()
            .filter(|v| *v >= min && *v <= max && !self.disabled.contains(v))
            .collect()
    }
}

/// TLS on a `bind` line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BindTls {
    /// `crt` paths (a PEM file, or a directory of them), in order; the
    /// first certificate loaded is the default one.
    pub crts: Vec<String>,
    pub crt_lists: Vec<String>,
    /// `alpn` protocols in preference order.
    pub alpn: Option<Vec<String>>,
    pub opts: TlsOptions,
    /// TLS 1.2 suites (`ciphers`), when set on the line.
    pub ciphers: Option<Vec<Suite>>,
    /// TLS 1.3 suites (`ciphersuites`), when set on the line.
    pub ciphersuites: Option<Vec<Suite>>,
    pub curves: Option<Vec<Group>>,
    pub ca_file: Option<String>,
    /// `ca-verify-file`: CA certificates that verify client certificates
    /// without being named to clients.
    pub ca_verify_file: Option<String>,
    /// `crl-file`: revocation lists for client certificates.
    pub crl_file: Option<String>,
    pub verify: Option<Verify>,
    /// `allow-0rtt`: accepted; weir takes no early data, so a client
    /// sends its request once the handshake is done.
    pub allow_0rtt: bool,
    pub strict_sni: bool,
    /// `crt-ignore-err` / `ca-ignore-err`: client certificate errors
    /// (OpenSSL's codes) that do not end the handshake.
    pub crt_ignore_err: Option<IgnoreErr>,
    pub ca_ignore_err: Option<IgnoreErr>,
    /// `generate-certificates`: a certificate is made for a name no loaded
    /// one serves, signed by the `ca-sign-file` CA (a PEM with its key).
    pub generate_certificates: bool,
    pub ca_sign_file: Option<String>,
    /// `tls-ticket-keys`: a file of session ticket keys.
    pub ticket_keys: Option<String>,
}

/// The certificate verification errors a bind ignores.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IgnoreErr {
    All,
    /// OpenSSL's `X509_V_ERR_*` codes.
    Codes(Vec<i64>),
}

impl IgnoreErr {
    fn parse(word: &str, v: &str) -> Result<IgnoreErr, String> {
        if v == "all" {
            return Ok(IgnoreErr::All);
        }
        v.split(',')
            .map(|c| {
                c.parse::<i64>()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or_else(|| format!("'{word}' expects 'all' or error codes, got '{c}'"))
            })
            .collect::<Result<Vec<_>, _>>()
            .map(IgnoreErr::Codes)
    }

    /// Whether error `code` is ignored.
    pub fn covers(&self, code: i64) -> bool {
        match self {
            IgnoreErr::All => true,
            IgnoreErr::Codes(c) => c.contains(&code),
        }
    }
}

impl BindTls {
    /// Applies one TLS word of a `bind` line (or of a `crt-list` line's
    /// `[options]`); `None` when it is not a TLS one. Returns the words used.
    pub fn apply(&mut self, word: &str, arg: Option<&str>) -> Option<Result<usize, String>> {
        let need = || arg.ok_or_else(|| format!("'{word}' expects an argument"));
        let two = |r: Result<(), String>| Some(r.map(|()| 2));
        match word {
            "crt" => two(need().map(|v| self.crts.push(v.to_string()))),
            "crt-list" => two(need().map(|v| self.crt_lists.push(v.to_string()))),
            "tls-ticket-keys" => two(need().map(|v| self.ticket_keys = Some(v.to_string()))),
            "alpn" => two(need().and_then(parse_alpn).map(|v| self.alpn = Some(v))),
            "ciphers" => two(need()
                .and_then(parse_ciphers)
                .map(|v| self.ciphers = Some(v))),
            "ciphersuites" => two(need()
                .and_then(parse_ciphersuites)
                .map(|v| self.ciphersuites = Some(v))),
            "curves" | "ecdhe" => two(need().and_then(parse_curves).map(|v| self.curves = Some(v))),
            "ca-file" => two(need().map(|v| self.ca_file = Some(v.to_string()))),
            "ca-verify-file" => two(need().map(|v| self.ca_verify_file = Some(v.to_string()))),
            "crl-file" => two(need().map(|v| self.crl_file = Some(v.to_string()))),
            "allow-0rtt" => {
                self.allow_0rtt = true;
                Some(Ok(1))
            }
            "crt-ignore-err" => two(need()
                .and_then(|v| IgnoreErr::parse(word, v))
                .map(|v| self.crt_ignore_err = Some(v))),
            "ca-ignore-err" => two(need()
                .and_then(|v| IgnoreErr::parse(word, v))
                .map(|v| self.ca_ignore_err = Some(v))),
            "verify" => two(need().and_then(|v| {
                self.verify = Some(match v {
                    "none" => Verify::None,
                    "optional" => Verify::Optional,
                    "required" => Verify::Required,
                    _ => {
                        return Err(format!(
                            "'verify' expects 'none', 'optional' or 'required', got '{v}'"
                        ))
                    }
                });
                Ok(())
            })),
            "strict-sni" => {
                self.strict_sni = true;
                Some(Ok(1))
            }
            "generate-certificates" => {
                self.generate_certificates = true;
                Some(Ok(1))
            }
            "ca-sign-file" => two(need().map(|v| self.ca_sign_file = Some(v.to_string()))),
            "ca-sign-pass" => Some(Err(
                "'ca-sign-pass' is not supported: weir reads no encrypted key (give 'ca-sign-file' a PEM with a clear key)".into(),
            )),
            _ => self.opts.apply(word, arg),
        }
    }
}

/// TLS towards a server (`server … ssl`), with what `default-server` gives.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServerTls {
    /// `ssl` (`no-ssl` turns it off again).
    pub enabled: bool,
    /// `ssl` was seen on the line or its `default-server`: TLS settings are
    /// prepared, so `set server … ssl on` may turn it on at run time.
    pub prepared: bool,
    /// `no-ssl` turned it off (haproxy's `srv_use_ssl` reads -1).
    pub refused: bool,
    /// `verify none|required` (unset: `ssl-server-verify`, required).
    pub verify: Option<Verify>,
    pub ca_file: Option<String>,
    /// `crl-file`: revocation lists for the server's certificate.
    pub crl_file: Option<String>,
    /// `crt`: a client certificate (chain and key in one PEM).
    pub crt: Option<String>,
    /// `sni <expr>`: the sample expression's text.
    pub sni: Option<String>,
    /// `verifyhost`: the name the certificate must carry.
    pub verifyhost: Option<String>,
    pub alpn: Option<Vec<String>>,
    pub opts: TlsOptions,
    pub ciphers: Option<Vec<Suite>>,
    pub ciphersuites: Option<Vec<Suite>>,
    /// `check-ssl`: health checks over TLS even without `ssl`.
    pub check_ssl: bool,
    /// `check-sni <name>`: the name checks send.
    pub check_sni: Option<String>,
    /// `check-alpn <protocols>`: what checks offer.
    pub check_alpn: Option<Vec<String>>,
    /// `no-ssl-reuse`: a full handshake for every connection.
    pub no_reuse: bool,
}

impl ServerTls {
    /// Applies one server option word; `None` when it is not a TLS one.
    pub fn apply(&mut self, word: &str, arg: Option<&str>) -> Option<Result<usize, String>> {
        let need = || arg.ok_or_else(|| format!("'{word}' expects an argument"));
        let one = |r: Result<(), String>| Some(r.map(|()| 2));
        match word {
            "ssl" => {
                self.enabled = true;
                self.prepared = true;
                self.refused = false;
            }
            "no-ssl" => {
                self.enabled = false;
                self.refused = true;
            }
            "check-ssl" => self.check_ssl = true,
            "no-check-ssl" => self.check_ssl = false,
            "ssl-reuse" => self.no_reuse = false,
            "no-ssl-reuse" => self.no_reuse = true,
            "verify" => {
                return one(need().and_then(|v| {
                    self.verify = Some(match v {
                        "none" => Verify::None,
                        "required" => Verify::Required,
                        _ => {
                            return Err(format!("'verify' expects 'none' or 'required', got '{v}'"))
                        }
                    });
                    Ok(())
                }))
            }
            "ca-file" => return one(need().map(|v| self.ca_file = Some(v.to_string()))),
            "crl-file" => return one(need().map(|v| self.crl_file = Some(v.to_string()))),
            "crt" => return one(need().map(|v| self.crt = Some(v.to_string()))),
            "sni" => return one(need().map(|v| self.sni = Some(v.to_string()))),
            "check-sni" => return one(need().map(|v| self.check_sni = Some(v.to_string()))),
            "check-alpn" => {
                return one(need()
                    .and_then(parse_alpn)
                    .map(|v| self.check_alpn = Some(v)))
            }
            "verifyhost" => return one(need().map(|v| self.verifyhost = Some(v.to_string()))),
            "alpn" => return one(need().and_then(parse_alpn).map(|v| self.alpn = Some(v))),
            "ciphers" => {
                return one(need()
                    .and_then(parse_ciphers)
                    .map(|v| self.ciphers = Some(v)))
            }
            "ciphersuites" => {
                return one(need()
                    .and_then(parse_ciphersuites)
                    .map(|v| self.ciphersuites = Some(v)))
            }
            _ => return self.opts.apply(word, arg),
        }
        Some(Ok(1))
    }
}

/// Global TLS defaults (`ssl-default-bind-*`, `tune.ssl.*`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsGlobal {
    pub bind_ciphers: Option<Vec<Suite>>,
    pub bind_ciphersuites: Option<Vec<Suite>>,
    pub bind_curves: Option<Vec<Group>>,
    pub bind_opts: TlsOptions,
    /// `tune.ssl.cachesize`: sessions kept for resumption by id.
    pub cachesize: usize,
    /// `tune.ssl.lifetime`: how long a session may be resumed, seconds.
    pub lifetime: u32,
    /// `tune.ssl.ssl-ctx-cache-size`: certificates made by
    /// `generate-certificates` kept, per bind line.
    pub ctx_cache_size: usize,
    /// `crt-base`, `ca-base`: directories for relative paths.
    pub crt_base: Option<String>,
    pub ca_base: Option<String>,
    /// `ssl-load-extra-del-ext`: a certificate's key file is `x.key` for
    /// `x.pem`, not `x.pem.key`.
    pub extra_del_ext: bool,
    /// `tune.ssl.maxrecord`: the most plaintext in a record at the start of
    /// a transfer (0: no limit).
    pub max_record: u16,
    /// `tune.ssl.hard-maxrecord`: the most plaintext in any record.
    pub hard_max_record: u16,
    /// `ssl-skip-self-issued-ca`: roots in certificate files are not sent.
    pub skip_self_issued_ca: bool,
    /// `issuers-chain-path`: a directory of chains (PEM) that complete a
    /// certificate file holding no chain of its own.
    pub issuers_chain_path: Option<String>,
    /// `ssl-server-verify`: the default of servers' `verify`.
    pub server_verify: Verify,
    pub server_ciphers: Option<Vec<Suite>>,
    pub server_ciphersuites: Option<Vec<Suite>>,
    pub server_opts: TlsOptions,
}

impl Default for TlsGlobal {
    fn default() -> Self {
        TlsGlobal {
            bind_ciphers: None,
            bind_ciphersuites: None,
            bind_curves: None,
            bind_opts: TlsOptions::default(),
            cachesize: 20000,
            lifetime: 300,
            ctx_cache_size: 1000,
            crt_base: None,
            ca_base: None,
            extra_del_ext: false,
            skip_self_issued_ca: false,
            issuers_chain_path: None,
            max_record: 0,
            hard_max_record: 0,
            server_verify: Verify::Required,
            server_ciphers: None,
            server_ciphersuites: None,
            server_opts: TlsOptions::default(),
        }
    }
}

/// Parses an `alpn` list (`h2,http/1.1`).
pub fn parse_alpn(s: &str) -> Result<Vec<String>, String> {
    let list: Vec<String> = s.split(',').map(str::to_string).collect();
    if list.iter().any(|p| p.is_empty() || p.len() > 255) {
        return Err(format!("invalid ALPN list '{s}'"));
    }
    Ok(list)
}

/// Joins a relative path to a base directory (`crt-base`).
pub fn with_base(base: Option<&str>, path: &str) -> String {
    match base {
        Some(b) if !path.starts_with('/') => format!("{}/{path}", b.trim_end_matches('/')),
        _ => path.to_string(),
    }
}
