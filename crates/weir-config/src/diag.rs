//! Diagnostics with `file:line`, printed the way HAProxy prints them.

use std::fmt;

/// How serious a diagnostic is; `Alert` makes the configuration invalid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Diag,
    Notice,
    Warning,
    Alert,
}

/// Where something was written: file name and 1-based line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Loc {
    pub file: String,
    pub line: usize,
}

impl fmt::Display for Loc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// One message about the configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub level: Level,
    pub loc: Option<Loc>,
    pub message: String,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tag = match self.level {
            Level::Alert => "ALERT",
            Level::Warning => "WARNING",
            Level::Notice => "NOTICE",
            Level::Diag => "DIAG",
        };
        match &self.loc {
            Some(loc) => write!(f, "[{tag}] parsing [{loc}] : {}", self.message),
            None => write!(f, "[{tag}] config : {}", self.message),
        }
    }
}

/// Collected diagnostics of one configuration load.
#[derive(Debug, Default, Clone)]
pub struct Diagnostics {
    pub items: Vec<Diagnostic>,
}

impl Diagnostics {
    pub fn push(&mut self, level: Level, loc: Option<&Loc>, message: impl Into<String>) {
        self.items.push(Diagnostic {
            level,
            loc: loc.cloned(),
            message: message.into(),
        });
    }
    pub fn alert(&mut self, loc: &Loc, message: impl Into<String>) {
        self.push(Level::Alert, Some(loc), message);
    }
    pub fn warn(&mut self, loc: &Loc, message: impl Into<String>) {
        self.push(Level::Warning, Some(loc), message);
    }
    /// True when at least one alert was recorded.
    pub fn has_errors(&self) -> bool {
        self.items.iter().any(|d| d.level == Level::Alert)
    }
    pub fn errors(&self) -> impl Iterator<Item = &Diagnostic> {
        self.items.iter().filter(|d| d.level == Level::Alert)
    }
}

/// Suggests the closest known word (edit distance ≤ 2 or a shared prefix).
pub fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        let d = edit_distance(word, c);
        if d <= 2.max(word.len() / 4) && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
#[path = "diag_tests.rs"]
mod tests;
