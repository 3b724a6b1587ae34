//! A table's key type (`type ip|ipv6|integer|string [len N]|binary [len N]`)
//! and its keys, as `show table` writes them.

use std::fmt::{self, Write as _};
use std::net::{Ipv4Addr, Ipv6Addr};

/// What a table's keys are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyType {
    Ip,
    Ipv6,
    Integer,
    /// At most `len` bytes (32 by default).
    String(usize),
    /// Exactly `len` bytes, zero-padded (32 by default).
    Binary(usize),
}

/// The default `len` of string and binary keys.
pub const DEFAULT_LEN: usize = 32;

impl KeyType {
    /// HAProxy's name (`show table`'s `type:`).
    pub fn name(self) -> &'static str {
        match self {
            KeyType::Ip => "ip",
            KeyType::Ipv6 => "ipv6",
            KeyType::Integer => "integer",
            KeyType::String(_) => "string",
            KeyType::Binary(_) => "binary",
        }
    }

    /// Parses `type <name> [len <n>]`'s words after `type`; returns the
    /// type and how many words it took.
    pub fn parse(words: &[String]) -> Result<(KeyType, usize), String> {
        let name = words.first().map(String::as_str).unwrap_or("");
        let len = || -> Result<(usize, usize), String> {
            match (words.get(1).map(String::as_str), words.get(2)) {
                (Some("len"), Some(n)) => match n.parse::<usize>() {
                    Ok(n) if n > 0 => Ok((n, 3)),
                    _ => Err(format!("invalid length '{n}' for type '{name}'")),
                },
                (Some("len"), None) => Err(format!("missing length for type '{name}'")),
                _ => Ok((DEFAULT_LEN, 1)),
            }
        };
        Ok(match name {
            "ip" => (KeyType::Ip, 1),
            "ipv6" => (KeyType::Ipv6, 1),
            "integer" => (KeyType::Integer, 1),
            "string" => {
                let (n, used) = len()?;
                (KeyType::String(n), used)
            }
            "binary" => {
                let (n, used) = len()?;
                (KeyType::Binary(n), used)
            }
            "" => return Err("'type' expects a key type".into()),
            other => return Err(format!("unknown key type '{other}'")),
        })
    }
}

/// One key (ordered as `show table` lists them: addresses by their bytes,
/// integers by value, strings and blocks by their bytes).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Key {
    V4(Ipv4Addr),
    V6(Ipv6Addr),
    Int(u32),
    /// A string (cut to the table's length) or a binary block (padded to
    /// it).
    Bytes(Box<[u8]>),
}

impl Key {
    /// A string key for a table of `ty` (cut to its length).
    pub fn string(ty: KeyType, s: &[u8]) -> Key {
        let n = match ty {
            KeyType::String(n) => n,
            _ => DEFAULT_LEN,
        };
        Key::Bytes(s.get(..n).unwrap_or(s).into())
    }

    /// A binary key for a table of `ty` (cut or zero-padded to its length).
    pub fn binary(ty: KeyType, b: &[u8]) -> Key {
        let n = match ty {
            KeyType::Binary(n) => n,
            _ => DEFAULT_LEN,
        };
        let mut v = b.get(..n).unwrap_or(b).to_vec();
        v.resize(n, 0);
        Key::Bytes(v.into())
    }

    /// Reads a key as typed on the runtime API (`key <k>`).
    pub fn parse(ty: KeyType, text: &str) -> Option<Key> {
        Some(match ty {
            KeyType::Ip => Key::V4(text.parse().ok()?),
            KeyType::Ipv6 => Key::V6(text.parse().ok()?),
            KeyType::Integer => Key::Int(text.parse().ok()?),
            KeyType::String(_) => Key::string(ty, text.as_bytes()),
            KeyType::Binary(_) => Key::binary(ty, &unhex(text)?),
        })
    }

    /// The key as `show table` writes it, for a table of `ty`.
    pub fn display(&self, ty: KeyType) -> String {
        match self {
            Key::V4(a) => a.to_string(),
            Key::V6(a) => a.to_string(),
            Key::Int(n) => n.to_string(),
            Key::Bytes(b) if matches!(ty, KeyType::Binary(_)) => {
                b.iter().fold(String::new(), |mut s, x| {
                    let _ = write!(s, "{x:02X}");
                    s
                })
            }
            Key::Bytes(b) => Printable(b).to_string(),
        }
    }

    /// Bytes of memory the key holds beyond its own size.
    pub fn heap(&self) -> usize {
        match self {
            Key::Bytes(b) => b.len(),
            _ => 0,
        }
    }
}

/// A string key's bytes, up to the first NUL, with unprintable bytes as
/// `\xHH`.
struct Printable<'a>(&'a [u8]);

impl fmt::Display for Printable<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for &b in self.0.iter().take_while(|&&b| b != 0) {
            if (0x20..0x7f).contains(&b) {
                f.write_char(b as char)?;
            } else {
                write!(f, "\\x{b:02x}")?;
            }
        }
        Ok(())
    }
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| s.get(i..i + 2).and_then(|h| u8::from_str_radix(h, 16).ok()))
        .collect()
}
