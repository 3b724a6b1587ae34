//! Files the configuration names, read while it is parsed: a relative path
//! starts from `default-path`'s directory when one is in effect (HAProxy
//! changes directory while it reads each file; weir resolves the path),
//! else from the directory the process started in.

use std::cell::RefCell;
use std::path::{Path, PathBuf};

thread_local! {
    /// The directory relative paths start from, while a parse runs.
    static BASE: RefCell<Option<PathBuf>> = const { RefCell::new(None) };
}

/// `default-path`'s policies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DefaultPath {
    Current,
    Config,
    Parent,
    Origin(PathBuf),
}

impl DefaultPath {
    /// Reads `default-path`'s arguments.
    pub fn parse(args: &[String]) -> Result<DefaultPath, String> {
        match args {
            [p] if p == "current" => Ok(DefaultPath::Current),
            [p] if p == "config" => Ok(DefaultPath::Config),
            [p] if p == "parent" => Ok(DefaultPath::Parent),
            [p, dir] if p == "origin" => Ok(DefaultPath::Origin(PathBuf::from(dir))),
            [p] if p == "origin" => Err("'default-path origin' expects a path.".into()),
            _ => Err(
                "'default-path' expects one of 'current', 'config', 'parent', 'origin <path>'."
                    .into(),
            ),
        }
    }

    /// The directory relative paths start from while `file` is read
    /// (`None`: the process's own).
    pub fn dir(&self, file: &str) -> Option<PathBuf> {
        let up_to_slash = file.rfind('/').map(|i| &file[..i.max(1)]);
        match self {
            DefaultPath::Current => None,
            DefaultPath::Config => up_to_slash.map(PathBuf::from),
            DefaultPath::Parent => Some(match up_to_slash {
                Some(d) => Path::new(d).join(".."),
                None => PathBuf::from(".."),
            }),
            DefaultPath::Origin(d) => Some(d.clone()),
        }
    }
}

/// Sets the directory relative paths start from (for the parse under way).
pub(crate) fn set_base(dir: Option<PathBuf>) {
    BASE.with(|b| *b.borrow_mut() = dir);
}

/// Where `path` is, for the parse under way.
pub fn resolve(path: &str) -> PathBuf {
    BASE.with(|b| match &*b.borrow() {
        Some(dir) if !path.starts_with('/') => dir.join(path),
        _ => PathBuf::from(path),
    })
}

/// Reads a file the configuration names.
pub fn read(path: &str) -> std::io::Result<Vec<u8>> {
    std::fs::read(resolve(path))
}

/// Reads a text file the configuration names.
pub fn read_to_string(path: &str) -> std::io::Result<String> {
    std::fs::read_to_string(resolve(path))
}

#[cfg(test)]
#[path = "files_tests.rs"]
mod tests;
