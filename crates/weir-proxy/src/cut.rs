//! Byte copies with no panic path: what fits is copied and its length
//! returned, where a slice index would panic on a length mistake.

/// Copies as much of `src` as `dst` holds to the start of `dst`; returns
/// how many bytes it copied.
pub fn copy_prefix(dst: &mut [u8], src: &[u8]) -> usize {
    let n = dst.len().min(src.len());
    if let (Some(d), Some(s)) = (dst.get_mut(..n), src.get(..n)) {
        d.copy_from_slice(s);
    }
    n
}

/// `v` cut at the first `sep`: what comes before and what comes after it.
pub fn split_at_byte(v: &[u8], sep: u8) -> Option<(&[u8], &[u8])> {
    let i = v.iter().position(|&b| b == sep)?;
    let (before, rest) = v.split_at_checked(i)?;
    Some((before, rest.get(1..)?))
}
