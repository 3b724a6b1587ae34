//! FIX (Financial Information eXchange) messages (pure): `fix_is_valid`,
//! the sanity checks haproxy makes on a message's framing, and
//! `fix_tag_value`, a tag's value. A message is `tag=value` fields each
//! ended by SOH (0x01).

const SOH: u8 = 0x01;

/// The fields of `msg`, in order; `None` when a field is not
/// `<digits>=<value>` ended by SOH, or its value is empty.
fn fields(msg: &[u8]) -> Option<Vec<(u32, &[u8])>> {
    let body = msg.strip_suffix(&[SOH])?;
    body.split(|&b| b == SOH)
        .map(|f| {
            let eq = f.iter().position(|&b| b == b'=')?;
            let (tag, value) = (f.get(..eq)?, f.get(eq + 1..)?);
            if tag.is_empty() || value.is_empty() || !tag.iter().all(u8::is_ascii_digit) {
                return None;
            }
            Some((std::str::from_utf8(tag).ok()?.parse().ok()?, value))
        })
        .collect()
}

/// Whether more bytes could still make `msg` a message: it does not end
/// with a whole CheckSum (10) field yet. Anything else is decided.
pub fn is_partial(msg: &[u8]) -> bool {
    let Some(body) = msg.strip_suffix(&[SOH]) else {
        return true;
    };
    let last = body.rsplit(|&b| b == SOH).next().unwrap_or(body);
    !last.starts_with(b"10=")
}

/// Whether `msg` is one valid FIX message: BeginString (8) first with a
/// FIX version, BodyLength (9) second and right, MsgType (35) third, and
/// CheckSum (10) last and right.
pub fn is_valid(msg: &[u8]) -> bool {
    let Some(f) = fields(msg) else {
        return false;
    };
    let [(8, version), (9, len), (35, _), .., (10, sum)] = f[..] else {
        return false;
    };
    let known = [
        &b"FIX.4.0"[..],
        b"FIX.4.1",
        b"FIX.4.2",
        b"FIX.4.3",
        b"FIX.4.4",
        b"FIXT.1.1",
    ];
    if !known.contains(&version) {
        return false;
    }
    // The body runs from after BodyLength's SOH to the SOH before
    // CheckSum; the checksum covers every byte before "10=".
    let head = 2 + version.len() + 1 + 2 + len.len() + 1;
    let tail = 3 + sum.len() + 1;
    let body = msg.len().checked_sub(head + tail);
    let declared = std::str::from_utf8(len)
        .ok()
        .and_then(|l| l.parse::<usize>().ok());
    if body.is_none() || body != declared {
        return false;
    }
    let summed = msg
        .get(..msg.len() - tail)
        .unwrap_or_default()
        .iter()
        .fold(0u32, |s, &b| s + u32::from(b))
        % 256;
    sum.len() == 3
        && std::str::from_utf8(sum)
            .ok()
            .and_then(|s| s.parse::<u32>().ok())
            == Some(summed)
}

/// The tag `fix_tag_value` takes: a number, or one of the names haproxy
/// knows.
pub fn tag_of(arg: &str) -> Result<u32, String> {
    Ok(match arg {
        "BeginString" => 8,
        "BodyLength" => 9,
        "MsgType" => 35,
        "SenderCompID" => 49,
        "TargetCompID" => 56,
        "CheckSum" => 10,
        n => n
            .parse()
            .map_err(|_| format!("converter 'fix_tag_value': unknown tag '{n}'"))?,
    })
}

/// The value of the first field with `tag`.
pub fn tag_value(msg: &[u8], tag: u32) -> Option<&[u8]> {
    fields(msg)?
        .into_iter()
        .find(|(t, _)| *t == tag)
        .map(|(_, v)| v)
}

#[cfg(test)]
#[path = "fix_tests.rs"]
mod tests;
