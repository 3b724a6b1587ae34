//! ECDSA with SHA-256 on any curve's key, as OpenSSL signs the
//! certificates haproxy makes (`generate-certificates`: `X509_sign` with
//! SHA-256 whatever the CA key): aws-lc-rs pairs P-384 with SHA-384 only,
//! so this one call goes to AWS-LC itself.

use aws_lc_rs::digest;

/// The DER ECDSA signature, with SHA-256, of `msg` by the private key
/// `key_der` (PKCS#8 or SEC1); `None` when the key is not an EC key or
/// signing fails.
pub fn sign_sha256(key_der: &[u8], msg: &[u8]) -> Option<Vec<u8>> {
    let hash = digest::digest(&digest::SHA256, msg);
    let hash = hash.as_ref();
    let len = std::os::raw::c_long::try_from(key_der.len()).ok()?;
    let mut p = key_der.as_ptr();
    // SAFETY: `p` points at `len` readable bytes of `key_der`, which
    // outlives the call; a null `out` asks for a new object.
    let pkey = unsafe { aws_lc_sys::d2i_AutoPrivateKey(std::ptr::null_mut(), &mut p, len) };
    if pkey.is_null() {
        return None;
    }
    // SAFETY: `pkey` is a valid key until freed below; the EC key it
    // returns is borrowed from it (null for another type).
    let ec = unsafe { aws_lc_sys::EVP_PKEY_get0_EC_KEY(pkey) };
    let sig = if ec.is_null() {
        None
    } else {
        // SAFETY: `ec` is valid while `pkey` is.
        let max = unsafe { aws_lc_sys::ECDSA_size(ec) };
        let mut sig = vec![0u8; max];
        let mut n: std::os::raw::c_uint = 0;
        // SAFETY: `hash` is readable for its length, `sig` writable for
        // `ECDSA_size` bytes (the largest signature of this key), `n`
        // receives the length written.
        let ok = unsafe {
            aws_lc_sys::ECDSA_sign(0, hash.as_ptr(), hash.len(), sig.as_mut_ptr(), &mut n, ec)
        };
        (ok == 1).then(|| {
            sig.truncate(n as usize);
            sig
        })
    };
    // SAFETY: `pkey` came from `d2i_AutoPrivateKey` and is freed once.
    unsafe { aws_lc_sys::EVP_PKEY_free(pkey) };
    sig
}
