//! `userlist` sections and HTTP Basic authentication: users with
//! `insecure-password` or a SHA-crypt `password` (`$5$`, `$6$`), groups,
//! and the check `http_auth(<userlist>)` runs on an `Authorization` header.

use sha_crypt::{PasswordVerifier, ShaCrypt};

/// How a user's password is kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Secret {
    /// `insecure-password`.
    Plain(String),
    /// `password` with a crypt(3) string (`$5$…` or `$6$…`).
    Crypt(String),
}

/// One `user` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    pub name: String,
    pub secret: Secret,
    pub groups: Vec<String>,
}

/// A `userlist` section.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Userlist {
    pub name: String,
    pub users: Vec<User>,
    /// Groups declared with `group`, each with its `users` list.
    pub groups: Vec<(String, Vec<String>)>,
}

/// Checks that a `password` hash is one weir can verify.
pub fn check_crypt(hash: &str) -> Result<(), String> {
    if !(hash.starts_with("$5$") || hash.starts_with("$6$")) {
        return Err(format!(
            "unsupported password hash '{}…': weir verifies SHA-256 ($5$) and SHA-512 ($6$) crypt hashes; use one of them or 'insecure-password'",
            hash.get(..4).unwrap_or(hash)
        ));
    }
    if sha_crypt::PasswordHashRef::new(hash).is_err() || hash.matches('$').count() < 3 {
        return Err(format!("malformed password hash '{hash}'"));
    }
    Ok(())
}

impl Userlist {
    /// Whether `user` exists and `pass` is its password.
    pub fn check(&self, user: &str, pass: &str) -> bool {
        let Some(u) = self.users.iter().find(|u| u.name == user) else {
            return false;
        };
        match &u.secret {
            Secret::Plain(p) => p.as_bytes() == pass.as_bytes(),
            Secret::Crypt(h) => ShaCrypt::default()
                .verify_password(pass.as_bytes(), h.as_str())
                .is_ok(),
        }
    }

    /// The groups `user` belongs to: its own `groups` and every `group`
    /// line naming it.
    pub fn groups_of(&self, user: &str) -> Vec<String> {
        let mut out: Vec<String> = self
            .users
            .iter()
            .filter(|u| u.name == user)
            .flat_map(|u| u.groups.iter().cloned())
            .collect();
        for (g, members) in &self.groups {
            if members.iter().any(|m| m == user) && !out.contains(g) {
                out.push(g.clone());
            }
        }
        out
    }

    /// Adds a `user <name> [password|insecure-password <p>] [groups a,b]`
    /// or `group <name> [users a,b]` line (`words` without the keyword).
    pub fn line(&mut self, kw: &str, words: &[String]) -> Result<(), String> {
        let name = words
            .first()
            .filter(|n| !n.is_empty())
            .ok_or_else(|| format!("'{kw}' expects a name"))?
            .clone();
        let mut secret = None;
        let mut list = Vec::new();
        let mut it = words.iter().skip(1);
        while let Some(w) = it.next() {
            let v = it
                .next()
                .ok_or_else(|| format!("'{kw} {name}': '{w}' expects a value"))?;
            match (kw, w.as_str()) {
                ("user", "password") => {
                    check_crypt(v)?;
                    secret = Some(Secret::Crypt(v.clone()));
                }
                ("user", "insecure-password") => secret = Some(Secret::Plain(v.clone())),
                ("user", "groups") | ("group", "users") => {
                    list.extend(v.split(',').filter(|s| !s.is_empty()).map(str::to_string))
                }
                _ => return Err(format!("'{kw} {name}': unexpected '{w}'")),
            }
        }
        match kw {
            "user" => {
                if self.users.iter().any(|u| u.name == name) {
                    return Err(format!("duplicate user '{name}'"));
                }
                self.users.push(User {
                    name,
                    secret: secret.ok_or("'user' expects 'password' or 'insecure-password'")?,
                    groups: list,
                });
            }
            "group" => self.groups.push((name, list)),
            _ => {
                return Err(format!(
                    "unknown keyword '{kw}' in 'userlist' section (expects 'user' or 'group')"
                ))
            }
        }
        Ok(())
    }
}

/// The user and password of a `Basic` `Authorization` header value.
pub fn basic_credentials(value: &[u8]) -> Option<(String, String)> {
    let v = value.trim_ascii();
    let (scheme, rest) = v.split_at(v.iter().position(|&b| b == b' ')?);
    if !scheme.eq_ignore_ascii_case(b"basic") {
        return None;
    }
    let decoded = crate::strconv::b64dec(rest.trim_ascii())?;
    let text = String::from_utf8(decoded).ok()?;
    let (u, p) = text.split_once(':')?;
    Some((u.to_string(), p.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> Vec<String> {
        s.split(' ').map(str::to_string).collect()
    }

    #[test]
    fn users_groups_and_passwords() {
        let mut l = Userlist::default();
        l.line("group", &w("ops users bob")).unwrap(); // ok: unit test on fixed input
        l.line("user", &w("alice insecure-password s3cret groups dev"))
            .unwrap(); // ok: unit test on fixed input
                       // "Hello world!" with the crypt(3) test vector salt "saltstring".
        l.line(
            "user",
            &w("bob password $5$saltstring$5B8vYYiY.CVt1RlTTf8KbXBH3hsxY/GNooZaBBGWEc5"),
        )
        .unwrap(); // ok: unit test on fixed input
        assert!(l.check("alice", "s3cret"));
        assert!(!l.check("alice", "s3cre"));
        assert!(l.check("bob", "Hello world!"));
        assert!(!l.check("bob", "hello world!"));
        assert!(!l.check("carol", "x"));
        assert_eq!(l.groups_of("bob"), ["ops"]);
        assert_eq!(l.groups_of("alice"), ["dev"]);
        assert!(l.line("user", &w("alice insecure-password x")).is_err());
        assert!(l.line("user", &w("dave password $1$abc$def")).is_err());
        assert!(l.line("user", &w("erin")).is_err());
    }

    #[test]
    fn basic_header() {
        // "alice:s3:cret"
        assert_eq!(
            basic_credentials(b"Basic YWxpY2U6czM6Y3JldA=="),
            Some(("alice".into(), "s3:cret".into()))
        );
        assert_eq!(basic_credentials(b"Bearer abc"), None);
        assert_eq!(basic_credentials(b"Basic !!!"), None);
    }
}
