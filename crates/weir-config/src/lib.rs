//! weir-config: HAProxy configuration text → typed, validated [`Config`].
//! Pure: no sockets, no clock, no logging; every diagnostic has `file:line`.

#![forbid(unsafe_code)]

pub mod addr;
pub mod cond;
pub mod diag;
pub mod files;
pub mod keywords;
pub mod lexer;
pub mod logformat;
pub mod model;
pub mod parse;
pub mod tls;
pub mod units;

pub use diag::{Diagnostic, Diagnostics, Level, Loc};
pub use model::*;
pub use parse::{dynamic_server, parse, Parsed, Source};

/// Loads `paths` (files, or directories whose `*.cfg` files are read in
/// lexical order) into sources. Errors name the path that failed.
pub fn load_sources(paths: &[String]) -> Result<Vec<Source>, String> {
    let mut out = Vec::new();
    for p in paths {
        let meta = std::fs::metadata(p)
            .map_err(|e| format!("Cannot open configuration file/directory {p} : {e}"))?;
        if meta.is_dir() {
            let mut entries: Vec<String> = std::fs::read_dir(p)
                .map_err(|e| format!("Cannot open configuration directory {p} : {e}"))?
                .filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|path| path.is_file() && path.extension().is_some_and(|x| x == "cfg"))
                .map(|path| path.to_string_lossy().into_owned())
                .collect();
            entries.sort();
            for f in entries {
                out.push(read_one(&f)?);
            }
        } else {
            out.push(read_one(p)?);
        }
    }
    Ok(out)
}

fn read_one(path: &str) -> Result<Source, String> {
    let bytes =
        std::fs::read(path).map_err(|e| format!("Cannot open configuration file {path} : {e}"))?;
    Ok(Source {
        name: path.to_string(),
        text: String::from_utf8_lossy(&bytes).into_owned(),
    })
}
