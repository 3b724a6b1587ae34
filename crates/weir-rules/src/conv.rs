//! Converters of manual §7.3.1 beyond the string ones of `sample.rs`:
//! arithmetic and logic on integers (`add`, `div`, `and`, `neg`, `bool` …),
//! digests and MACs (`sha1`, `sha2`, `digest`, `hmac`), 64-bit hashes
//! (`xxh32`, `xxh64`, `xxh3`), binary dumps (`be2dec`, `be2hex`), list
//! building (`add_item`), `iif`, `url_enc`, `json` with its input codes,
//! and comparisons with a variable (`strcmp`, `secure_memcmp`).

use aws_lc_rs::{digest, hmac};

use crate::sample::{Ctx, Sample};

/// A converter of this module with its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum More {
    Arith(Arith, Operand),
    Neg,
    Cpl,
    Not,
    Bool,
    Odd,
    Even,
    Digest(Algo),
    Hmac(Algo, Key),
    Xxh32(u32),
    Xxh64(u64),
    Xxh3(u64),
    Be2Dec {
        sep: Vec<u8>,
        chunk: usize,
        truncate: bool,
    },
    Be2Hex {
        sep: Vec<u8>,
        chunk: usize,
        truncate: bool,
    },
    AddItem {
        delim: Vec<u8>,
        var: Option<String>,
        suffix: Vec<u8>,
    },
    Iif(Vec<u8>, Vec<u8>),
    UrlEnc,
    Json(JsonInput),
    /// `json_query(<path>[,int])`.
    JsonQuery(Vec<crate::json::Step>, bool),
    /// `fix_is_valid`, `fix_tag_value(<tag>)`.
    FixIsValid,
    FixTagValue(u32),
    /// `mqtt_is_valid`, `mqtt_field_value(<type>,<field>)`.
    MqttIsValid,
    MqttFieldValue(crate::mqtt::PacketType, crate::mqtt::Field),
    /// `protobuf(<field>[,<type>])`, `ungrpc(<field>[,<type>])`.
    Protobuf(crate::protobuf::PbConv),
    /// `aes_gcm_dec(<bits>,<nonce>,<key>,<aead_tag>)`.
    AesGcmDec(crate::aead::AesGcmDec),
    /// `capture-req(<id>)`, `capture-res(<id>)` (`res`).
    Capture {
        res: bool,
        id: usize,
    },
    Strcmp(String),
    SecureMemcmp(String),
}

/// The integer operations taking a value or a variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arith {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    And,
    Or,
    Xor,
}

/// A constant integer or a variable's value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Operand {
    Int(i64),
    Var(String),
}

/// The digests weir computes (OpenSSL's names for them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Algo {
    Sha1,
    Sha224,
    Sha256,
    Sha384,
    Sha512,
}

/// An HMAC key: base64 text given in the configuration, or a variable
/// holding base64 text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Key {
    Const(Vec<u8>),
    Var(String),
}

/// `json`'s input decoders.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonInput {
    Ascii,
    /// (fix overlong encodings, silently drop bad sequences)
    Utf8 {
        permissive: bool,
        silent: bool,
    },
}

/// The converter `name(args)` of this module, or `None` when `name` is
/// not one.
pub fn parse(name: &str, a: &[String]) -> Option<Result<More, String>> {
    let arith = |op| operand(name, a).map(|o| More::Arith(op, o));
    Some(match name {
        "add" => arith(Arith::Add),
        "sub" => arith(Arith::Sub),
        "mul" => arith(Arith::Mul),
        "div" => arith(Arith::Div),
        "mod" => arith(Arith::Mod),
        "and" => arith(Arith::And),
        "or" => arith(Arith::Or),
        "xor" => arith(Arith::Xor),
        "neg" => no_args(name, a, More::Neg),
        "cpl" => no_args(name, a, More::Cpl),
        "not" => no_args(name, a, More::Not),
        "bool" => no_args(name, a, More::Bool),
        "odd" => no_args(name, a, More::Odd),
        "even" => no_args(name, a, More::Even),
        "sha1" => no_args(name, a, More::Digest(Algo::Sha1)),
        "sha2" => sha2(a),
        "digest" => algo(name, a).map(More::Digest),
        "hmac" => hmac_conv(a),
        "xxh32" => seed(name, a).map(|s| More::Xxh32(s as u32)),
        "xxh64" => seed(name, a).map(More::Xxh64),
        "xxh3" => seed(name, a).map(More::Xxh3),
        "be2dec" => be2(name, a, true),
        "be2hex" => be2(name, a, false),
        "add_item" => add_item(a),
        "iif" => match a {
            [t, f] => Ok(More::Iif(t.as_bytes().to_vec(), f.as_bytes().to_vec())),
            _ => Err("converter 'iif' expects two strings".into()),
        },
        "url_enc" => match a.first().map(String::as_str) {
            None | Some("query") => Ok(More::UrlEnc),
            Some(t) => Err(format!(
                "converter 'url_enc': unknown encoding type '{t}' (only 'query')"
            )),
        },
        "json" => json_input(a).map(More::Json),
        "json_query" => json_query(a),
        "fix_is_valid" => no_args(name, a, More::FixIsValid),
        "mqtt_is_valid" => no_args(name, a, More::MqttIsValid),
        "mqtt_field_value" => match a {
            [t, f] => crate::mqtt::packet_type(t)
                .and_then(|t| Ok(More::MqttFieldValue(t, crate::mqtt::field(t, f)?))),
            _ => Err("converter 'mqtt_field_value' expects a packet type and a field".into()),
        },
        "fix_tag_value" => match a {
            [t] => crate::fix::tag_of(t).map(More::FixTagValue),
            _ => Err("converter 'fix_tag_value' expects a tag".into()),
        },
        "aes_gcm_dec" => crate::aead::parse(a).map(More::AesGcmDec),
        "capture-req" => capture_id(name, a).map(|id| More::Capture { res: false, id }),
        "capture-res" => capture_id(name, a).map(|id| More::Capture { res: true, id }),
        "protobuf" => crate::protobuf::parse(name, a, false).map(More::Protobuf),
        "ungrpc" => crate::protobuf::parse(name, a, true).map(More::Protobuf),
        "strcmp" => var_arg(name, a).map(More::Strcmp),
        "secure_memcmp" => var_arg(name, a).map(More::SecureMemcmp),
        _ => return None,
    })
}

/// A converter that validates a whole message saw enough of it to answer:
/// the rule does not wait for more bytes (haproxy's validators clear the
/// sample's "may change" flag so).
pub(crate) fn decided(ctx: &dyn Ctx) {
    if let Some(m) = ctx.more() {
        m.store(false, std::sync::atomic::Ordering::Relaxed);
    }
}

fn json_query(a: &[String]) -> Result<More, String> {
    let (path, int) = match a {
        [p] => (p, false),
        [p, t] if t == "int" => (p, true),
        [_, t] => {
            return Err(format!(
                "converter 'json_query': unknown output type '{t}' (only 'int')"
            ))
        }
        _ => return Err("converter 'json_query' expects a JSON path".into()),
    };
    let steps =
        crate::json::parse_path(path).map_err(|e| format!("converter 'json_query': {e}"))?;
    Ok(More::JsonQuery(steps, int))
}

/// `capture-req`'s and `capture-res`'s slot id.
fn capture_id(name: &str, a: &[String]) -> Result<usize, String> {
    match a {
        [n] => n
            .parse()
            .map_err(|_| format!("converter '{name}': invalid capture id '{n}'")),
        _ => Err(format!("converter '{name}' expects a capture id")),
    }
}

fn no_args(name: &str, a: &[String], m: More) -> Result<More, String> {
    if a.is_empty() {
        Ok(m)
    } else {
        Err(format!("converter '{name}' takes no argument"))
    }
}

use crate::vars::is_var;

fn operand(name: &str, a: &[String]) -> Result<Operand, String> {
    let [v] = a else {
        return Err(format!(
            "converter '{name}' expects an integer or a variable name"
        ));
    };
    if let Ok(n) = v.parse::<i64>() {
        return Ok(Operand::Int(n));
    }
    if is_var(v) {
        return Ok(Operand::Var(v.clone()));
    }
    Err(format!(
        "converter '{name}': '{v}' is neither an integer nor a variable name (proc., sess., txn., req. or res.)"
    ))
}

fn var_arg(name: &str, a: &[String]) -> Result<String, String> {
    match a {
        [v] if is_var(v) => Ok(v.clone()),
        _ => Err(format!("converter '{name}' expects a variable name")),
    }
}

fn sha2(a: &[String]) -> Result<More, String> {
    Ok(More::Digest(match a.first().map(String::as_str) {
        None | Some("256") => Algo::Sha256,
        Some("224") => Algo::Sha224,
        Some("384") => Algo::Sha384,
        Some("512") => Algo::Sha512,
        Some(b) => {
            return Err(format!(
                "converter 'sha2': unsupported number of bits '{b}' (224, 256, 384 or 512)"
            ))
        }
    }))
}

fn algo(name: &str, a: &[String]) -> Result<Algo, String> {
    let n = a
        .first()
        .ok_or_else(|| format!("converter '{name}' expects a digest name"))?;
    Ok(match n.to_ascii_lowercase().replace('-', "").as_str() {
        "sha1" => Algo::Sha1,
        "sha224" => Algo::Sha224,
        "sha256" => Algo::Sha256,
        "sha384" => Algo::Sha384,
        "sha512" => Algo::Sha512,
        _ => {
            return Err(format!(
                "converter '{name}': unsupported digest '{n}' (weir offers sha1, sha224, sha256, sha384, sha512)"
            ))
        }
    })
}

fn hmac_conv(a: &[String]) -> Result<More, String> {
    let [_, key] = a else {
        return Err("converter 'hmac' expects a digest name and a key".into());
    };
    let algo = algo("hmac", a)?;
    let key = if is_var(key) {
        Key::Var(key.clone())
    } else {
        Key::Const(
            crate::strconv::b64dec(key.as_bytes())
                .ok_or_else(|| format!("converter 'hmac': the key '{key}' is not base64"))?,
        )
    };
    Ok(More::Hmac(algo, key))
}

fn seed(name: &str, a: &[String]) -> Result<u64, String> {
    match a.first() {
        None => Ok(0),
        Some(s) => s
            .parse::<u64>()
            .map_err(|_| format!("converter '{name}': invalid seed '{s}'")),
    }
}

fn be2(name: &str, a: &[String], dec: bool) -> Result<More, String> {
    let sep = a.first().map(|s| s.as_bytes().to_vec()).unwrap_or_default();
    let chunk = match a.get(1).filter(|c| !c.is_empty()) {
        Some(c) => c
            .parse::<usize>()
            .ok()
            .filter(|&n| n >= 1 && (!dec || n <= 8))
            .ok_or_else(|| format!("converter '{name}': invalid chunk size '{c}'"))?,
        // A separator needs a chunk size (haproxy: "chunk_size needs to be
        // positive").
        None if dec || a.len() > 1 || !sep.is_empty() => {
            return Err(format!(
                "converter '{name}' expects a chunk size (1 or more)"
            ))
        }
        None => 1,
    };
    let truncate = match a.get(2).map(String::as_str) {
        None | Some("0") => false,
        Some(_) => true,
    };
    Ok(if dec {
        More::Be2Dec {
            sep,
            chunk,
            truncate,
        }
    } else {
        More::Be2Hex {
            sep,
            chunk,
            truncate,
        }
    })
}

fn add_item(a: &[String]) -> Result<More, String> {
    let delim = a
        .first()
        .ok_or("converter 'add_item' expects a delimiter")?
        .as_bytes()
        .to_vec();
    let var = a.get(1).filter(|v| !v.is_empty()).cloned();
    let suffix = a.get(2).map(|s| s.as_bytes().to_vec()).unwrap_or_default();
    if let Some(v) = &var {
        if !is_var(v) {
            return Err(format!("converter 'add_item': invalid variable name '{v}'"));
        }
    } else if suffix.is_empty() {
        return Err("converter 'add_item' expects a variable or a suffix".into());
    }
    Ok(More::AddItem { delim, var, suffix })
}

fn json_input(a: &[String]) -> Result<JsonInput, String> {
    let u = |permissive, silent| JsonInput::Utf8 { permissive, silent };
    Ok(match a.first().map(String::as_str) {
        None | Some("") | Some("ascii") => JsonInput::Ascii,
        Some("utf8") => u(false, false),
        Some("utf8s") => u(false, true),
        Some("utf8p") => u(true, false),
        Some("utf8ps") => u(true, true),
        Some(x) => {
            return Err(format!(
                "converter 'json': unknown input code '{x}' (ascii, utf8, utf8s, utf8p, utf8ps)"
            ))
        }
    })
}

impl More {
    /// Applies the converter; `None` when the input does not suit it.
    pub fn apply(&self, v: Sample, ctx: &dyn Ctx) -> Option<Sample> {
        let int = || int_cast(&v);
        Some(match self {
            More::Arith(op, o) => {
                let b = match o {
                    Operand::Int(n) => *n,
                    Operand::Var(name) => int_cast(&ctx.var(name)?)?,
                };
                Sample::Int(arith(*op, int()?, b))
            }
            More::Neg => Sample::Int(int()?.saturating_neg()),
            More::Cpl => Sample::Int(!int()?),
            More::Not => Sample::Bool(int()? == 0),
            More::Bool => Sample::Bool(int()? != 0),
            More::Odd => Sample::Bool(int()? & 1 == 1),
            More::Even => Sample::Bool(int()? & 1 == 0),
            More::Digest(a) => {
                Sample::Bin(digest::digest(a.digest(), &v.to_bin()).as_ref().to_vec())
            }
            More::Hmac(a, key) => {
                let key = match key {
                    Key::Const(k) => k.clone(),
                    Key::Var(n) => crate::strconv::b64dec(&ctx.var(n)?.to_bytes())?,
                };
                let k = hmac::Key::new(a.hmac(), &key);
                Sample::Bin(hmac::sign(&k, &v.to_bin()).as_ref().to_vec())
            }
            More::Xxh32(seed) => {
                Sample::Int(i64::from(xxhash_rust::xxh32::xxh32(&v.to_bin(), *seed)))
            }
            More::Xxh64(seed) => Sample::Int(xxhash_rust::xxh64::xxh64(&v.to_bin(), *seed) as i64),
            More::Xxh3(seed) => {
                Sample::Int(xxhash_rust::xxh3::xxh3_64_with_seed(&v.to_bin(), *seed) as i64)
            }
            More::Be2Dec {
                sep,
                chunk,
                truncate,
            } => Sample::Str(dump(&v.to_bin(), sep, *chunk, *truncate, |c| {
                c.iter()
                    .fold(0u64, |n, &b| (n << 8) | u64::from(b))
                    .to_string()
                    .into_bytes()
            })),
            More::Be2Hex {
                sep,
                chunk,
                truncate,
            } => Sample::Str(dump(&v.to_bin(), sep, *chunk, *truncate, |c| {
                c.iter()
                    .flat_map(|b| format!("{b:02X}").into_bytes())
                    .collect()
            })),
            More::AddItem { delim, var, suffix } => {
                let mut out = v.to_bytes();
                let val = var
                    .as_deref()
                    .and_then(|n| ctx.var(n))
                    .map(|x| x.to_bytes());
                let adds = val.as_ref().is_some_and(|x| !x.is_empty()) || !suffix.is_empty();
                if !out.is_empty() && adds {
                    out.extend_from_slice(delim);
                }
                out.extend_from_slice(&val.unwrap_or_default());
                out.extend_from_slice(suffix);
                Sample::Str(out)
            }
            More::Iif(t, f) => Sample::Str(if int()? != 0 { t.clone() } else { f.clone() }),
            More::UrlEnc => Sample::Str(url_enc(&v.to_bytes())),
            More::Json(input) => Sample::Str(json(&v.to_bytes(), *input)?),
            More::JsonQuery(path, int) => {
                json_value(crate::json::query(&v.to_bytes(), path)?, *int)?
            }
            More::FixIsValid => {
                let msg = v.to_bin();
                if !crate::fix::is_partial(&msg) {
                    // Decided whatever follows: no need to wait for more.
                    decided(ctx);
                }
                Sample::Bool(crate::fix::is_valid(&msg))
            }
            More::FixTagValue(t) => Sample::Str(crate::fix::tag_value(&v.to_bin(), *t)?.to_vec()),
            More::MqttIsValid => {
                let msg = v.to_bin();
                let parsed = crate::mqtt::parse(&msg);
                if parsed != crate::mqtt::Parsed::Partial {
                    decided(ctx);
                }
                Sample::Bool(matches!(parsed, crate::mqtt::Parsed::Valid(_)))
            }
            More::MqttFieldValue(t, f) => {
                Sample::Str(crate::mqtt::field_value(&v.to_bin(), *t, *f)?)
            }
            More::AesGcmDec(c) => Sample::Bin(crate::aead::apply(c, &v.to_bin(), ctx)?),
            More::Capture { res, id } => {
                // The sample goes on unchanged, once kept.
                if !ctx.capture(*res, *id, &v) {
                    return None;
                }
                v
            }
            More::Protobuf(c) => match crate::protobuf::extract(c, &v.to_bin())? {
                crate::protobuf::PbValue::Int(i) => Sample::Int(i),
                crate::protobuf::PbValue::Raw(b) => Sample::Bin(b),
            },
            More::Strcmp(name) => {
                let other = ctx.var(name)?.to_bytes();
                Sample::Int(strcmp(&v.to_bytes(), &other))
            }
            More::SecureMemcmp(name) => {
                // Binary on both sides: NUL bytes count.
                let other = ctx.var(name)?.to_bin();
                let mine = v.to_bin();
                let same = mine.len() == other.len()
                    && mine.iter().zip(&other).fold(0u8, |d, (a, b)| d | (a ^ b)) == 0;
                Sample::Bool(same)
            }
        })
    }
}

impl Algo {
    fn digest(self) -> &'static digest::Algorithm {
        match self {
            Algo::Sha1 => &digest::SHA1_FOR_LEGACY_USE_ONLY,
            Algo::Sha224 => &digest::SHA224,
            Algo::Sha256 => &digest::SHA256,
            Algo::Sha384 => &digest::SHA384,
            Algo::Sha512 => &digest::SHA512,
        }
    }
    fn hmac(self) -> hmac::Algorithm {
        match self {
            Algo::Sha1 => hmac::HMAC_SHA1_FOR_LEGACY_USE_ONLY,
            Algo::Sha224 => hmac::HMAC_SHA224,
            Algo::Sha256 => hmac::HMAC_SHA256,
            Algo::Sha384 => hmac::HMAC_SHA384,
            Algo::Sha512 => hmac::HMAC_SHA512,
        }
    }
}

/// An operation that never wraps: a result out of range is the largest
/// value of its sign; a division by zero gives the largest integer, a
/// modulo by zero 0 (HAProxy's manual).
fn arith(op: Arith, a: i64, b: i64) -> i64 {
    match op {
        Arith::Add => a.saturating_add(b),
        Arith::Sub => a.saturating_sub(b),
        Arith::Mul => a.saturating_mul(b),
        Arith::Div => {
            if b == 0 {
                i64::MAX
            } else {
                a.checked_div(b).unwrap_or(i64::MAX)
            }
        }
        Arith::Mod => a.checked_rem(b).unwrap_or(0),
        Arith::And => a & b,
        Arith::Or => a | b,
        Arith::Xor => a ^ b,
    }
}

/// `chunk`-byte groups of `b`, each rendered by `each`, joined by `sep`;
/// an incomplete last group is dropped when `truncate` is set.
fn dump(
    b: &[u8],
    sep: &[u8],
    chunk: usize,
    truncate: bool,
    each: impl Fn(&[u8]) -> Vec<u8>,
) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, c) in b.chunks(chunk).enumerate() {
        if truncate && c.len() < chunk {
            break;
        }
        if i > 0 {
            out.extend_from_slice(sep);
        }
        out.extend(each(c));
    }
    out
}

/// Percent-encodes everything but RFC 3986's unreserved characters.
fn url_enc(b: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(b.len());
    for &c in b {
        if c.is_ascii_alphanumeric() || b"-._~".contains(&c) {
            out.push(c);
        } else {
            out.extend_from_slice(format!("%{c:02X}").as_bytes());
        }
    }
    out
}

/// strcmp(3) over bytes: the first differing byte's difference, else -1,
/// 0 or 1 as the left one is shorter, as long or longer.
fn strcmp(a: &[u8], b: &[u8]) -> i64 {
    match a.iter().zip(b).find(|(x, y)| x != y) {
        Some((x, y)) => i64::from(*x) - i64::from(*y),
        None => (a.len().cmp(&b.len())) as i64,
    }
}

/// A sample as the integer converters read it (haproxy's cast): a
/// string's optional sign and leading digits (none: 0; an empty string
/// is no integer), an IPv4 address as its 32-bit value.
pub fn int_cast(v: &Sample) -> Option<i64> {
    match v {
        Sample::Int(i) => Some(*i),
        Sample::Bool(b) => Some(i64::from(*b)),
        Sample::Ip(std::net::IpAddr::V4(a)) => Some(i64::from(u32::from(*a))),
        Sample::Ip(_) | Sample::Bin(_) => None,
        Sample::Str(s) => {
            let (neg, digits) = match s.split_first()? {
                (b'-', rest) => (true, rest),
                (b'+', rest) => (false, rest),
                _ => (false, &s[..]),
            };
            let n = digits
                .iter()
                .take_while(|c| c.is_ascii_digit())
                .fold(0i64, |n, &c| {
                    n.saturating_mul(10).saturating_add(i64::from(c - b'0'))
                });
            Some(if neg { -n } else { n })
        }
    }
}

/// What `json_query` gives for a value: a string as it is, a boolean,
/// a number as `%g` writes it, or cut to an integer (`int`; none out of
/// range).
pub(crate) fn json_value(v: crate::json::Value, int: bool) -> Option<Sample> {
    use crate::json::Value;
    Some(match v {
        Value::Str(s) => Sample::Str(s),
        Value::Bool(b) => Sample::Bool(b),
        Value::Num(n) if int => {
            if !(n > i64::MIN as f64 && n < i64::MAX as f64) {
                return None;
            }
            Sample::Int(n as i64)
        }
        Value::Num(n) => Sample::Str(crate::json::g_format(n).into_bytes()),
    })
}

/// A JSON string's content: quotes, backslashes, `/` and control
/// characters escaped; non-ASCII decoded by `input` and written as
/// `\uXXXX`. `None` when the decoder fails.
fn json(b: &[u8], input: JsonInput) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(b.len());
    let mut rest = b;
    while let Some((&c, after)) = rest.split_first() {
        if c < 0x80 || input == JsonInput::Ascii {
            json_char(&mut out, u32::from(c));
            rest = after;
            continue;
        }
        let JsonInput::Utf8 { permissive, silent } = input else {
            return None;
        };
        let skip = |n: usize| rest.get(n..).unwrap_or_default();
        rest = match utf8_at(rest, permissive) {
            Ok((cp, n)) if cp <= 0xffff => {
                json_char(&mut out, cp);
                skip(n)
            }
            Ok(_) if !silent => return None,
            Ok((_, n)) => skip(n),
            Err(n) if silent => skip(n),
            Err(_) => return None,
        };
    }
    Some(out)
}

fn json_char(out: &mut Vec<u8>, c: u32) {
    match c {
        0x22 => out.extend_from_slice(b"\\\""),
        0x5c => out.extend_from_slice(b"\\\\"),
        0x2f => out.extend_from_slice(b"\\/"),
        0x08 => out.extend_from_slice(b"\\b"),
        0x0c => out.extend_from_slice(b"\\f"),
        0x0a => out.extend_from_slice(b"\\n"),
        0x0d => out.extend_from_slice(b"\\r"),
        0x09 => out.extend_from_slice(b"\\t"),
        0x20..=0x7e => out.push(c as u8),
        _ => out.extend_from_slice(format!("\\u{c:04x}").as_bytes()),
    }
}

/// The code point of the UTF-8 sequence at the start of `b` and its
/// length, or the number of bytes to skip when it is bad (an overlong
/// form is accepted when `permissive`).
fn utf8_at(b: &[u8], permissive: bool) -> Result<(u32, usize), usize> {
    let &c = b.first().ok_or(1usize)?;
    let (len, init) = match c {
        0xc0..=0xdf => (2, u32::from(c & 0x1f)),
        0xe0..=0xef => (3, u32::from(c & 0x0f)),
        0xf0..=0xf7 => (4, u32::from(c & 0x07)),
        _ => return Err(1),
    };
    let mut cp = init;
    for k in 1..len {
        match b.get(k) {
            Some(&n) if n & 0xc0 == 0x80 => cp = (cp << 6) | u32::from(n & 0x3f),
            _ => return Err(k),
        }
    }
    let min = match len {
        2 => 0x80,
        3 => 0x800,
        _ => 0x10000,
    };
    if cp < min && !permissive {
        return Err(len);
    }
    if (0xd800..=0xdfff).contains(&cp) || cp > 0x10ffff {
        return Err(len);
    }
    Ok((cp, len))
}

#[cfg(test)]
#[path = "conv_tests.rs"]
mod tests;
