//! The `aes_gcm_dec(<bits>,<nonce>,<key>,<aead_tag>)` converter: AES-GCM
//! decryption of the input with a 128, 192 or 256-bit key; the nonce, key
//! and tag are base64 text, given as they are or in variables. A tag that
//! does not verify, or a key of another size than `<bits>`, gives nothing
//! (as haproxy's). weir takes the standard sizes only, a 96-bit nonce and
//! a 128-bit tag: other sizes give nothing, where haproxy (OpenSSL) also
//! takes other nonce lengths and tags cut to 4 to 15 bytes.

use crate::conv::Key;
use crate::sample::Ctx;
use aws_lc_rs::aead::{Aad, LessSafeKey, Nonce, UnboundKey, AES_128_GCM, AES_192_GCM, AES_256_GCM};

/// `aes_gcm_dec`'s arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AesGcmDec {
    bits: u16,
    nonce: Key,
    key: Key,
    tag: Key,
}

/// Parses the four arguments, refused as haproxy refuses them.
pub fn parse(a: &[String]) -> Result<AesGcmDec, String> {
    let [bits, nonce, key, tag] = a else {
        return Err(format!(
            "converter 'aes_gcm_dec': missing arguments (got {}/4)",
            a.len()
        ));
    };
    let bits = match bits.parse::<u16>() {
        Ok(b @ (128 | 192 | 256)) => b,
        Ok(_) => {
            return Err("converter 'aes_gcm_dec': key size must be 128, 192 or 256 (bits).".into())
        }
        Err(_) => {
            return Err(format!(
                "converter 'aes_gcm_dec': failed to parse '{bits}' as type 'integer'"
            ))
        }
    };
    Ok(AesGcmDec {
        bits,
        nonce: b64_arg("nonce", nonce)?,
        key: b64_arg("key", key)?,
        tag: b64_arg("aead_tag", tag)?,
    })
}

/// A variable's name, or base64 text decoded now.
fn b64_arg(what: &str, s: &str) -> Result<Key, String> {
    if crate::vars::is_var(s) {
        return Ok(Key::Var(s.to_string()));
    }
    s.len()
        .is_multiple_of(4)
        .then(|| crate::strconv::b64dec(s.as_bytes()))
        .flatten()
        .filter(|b| !b.is_empty())
        .map(Key::Const)
        .ok_or_else(|| {
            format!(
                "converter 'aes_gcm_dec': failed to parse {what} : argument needs to be base64 encoded, and can either be a string or a variable."
            )
        })
}

fn bytes_of(k: &Key, ctx: &dyn Ctx) -> Option<Vec<u8>> {
    match k {
        Key::Const(b) => Some(b.clone()),
        Key::Var(n) => crate::strconv::b64dec(&ctx.var(n)?.to_bytes()),
    }
}

/// The plaintext of `input`, or nothing.
pub fn apply(c: &AesGcmDec, input: &[u8], ctx: &dyn Ctx) -> Option<Vec<u8>> {
    let algo = match c.bits {
        128 => &AES_128_GCM,
        192 => &AES_192_GCM,
        _ => &AES_256_GCM,
    };
    let key = bytes_of(&c.key, ctx)?;
    let nonce = Nonce::try_assume_unique_for_key(&bytes_of(&c.nonce, ctx)?).ok()?;
    let tag = bytes_of(&c.tag, ctx)?;
    if tag.len() != algo.tag_len() || input.is_empty() {
        return None;
    }
    let key = LessSafeKey::new(UnboundKey::new(algo, &key).ok()?);
    let mut in_out = input.to_vec();
    in_out.extend_from_slice(&tag);
    let plain = key.open_in_place(nonce, Aad::empty(), &mut in_out).ok()?;
    Some(plain.to_vec())
}

#[cfg(test)]
#[path = "aead_tests.rs"]
mod tests;
