//! A small flag reader shared by the subcommands: `--name value` pairs,
//! flags, and positional words, with clear errors for unknown ones.

/// Remaining command-line words of one subcommand.
pub struct Args {
    words: Vec<String>,
}

impl Args {
    pub fn new(words: Vec<String>) -> Self {
        Args { words }
    }
    /// Takes `--name value`; None when absent.
    pub fn opt(&mut self, name: &str) -> Option<String> {
        let i = self.words.iter().position(|w| w == name)?;
        if i + 1 >= self.words.len() {
            return None;
        }
        let v = self.words.remove(i + 1);
        self.words.remove(i);
        Some(v)
    }
    /// Takes a required `--name value`.
    pub fn req(&mut self, name: &str) -> Result<String, String> {
        if self.words.last().map(String::as_str) == Some(name) {
            return Err(format!("{name} expects a value"));
        }
        self.opt(name).ok_or_else(|| format!("{name} is required"))
    }
    /// Takes `--name N` with a default.
    pub fn num<T: std::str::FromStr>(&mut self, name: &str, default: T) -> Result<T, String> {
        match self.opt(name) {
            Some(v) => v
                .parse()
                .map_err(|_| format!("{name} expects a number, got '{v}'")),
            None => Ok(default),
        }
    }
    /// Takes a boolean `--flag`.
    pub fn flag(&mut self, name: &str) -> bool {
        match self.words.iter().position(|w| w == name) {
            Some(i) => {
                self.words.remove(i);
                true
            }
            None => false,
        }
    }
    /// Takes the next positional word.
    pub fn positional(&mut self) -> Option<String> {
        let i = self.words.iter().position(|w| !w.starts_with('-'))?;
        Some(self.words.remove(i))
    }
    /// Fails on anything left over.
    pub fn finish(&self) -> Result<(), String> {
        match self.words.first() {
            None => Ok(()),
            Some(w) => Err(format!("unknown option or argument '{w}'")),
        }
    }
}

/// Parses a duration like `10s`, `500ms`, `2m` or a bare number of seconds.
pub fn parse_secs(v: &str) -> Option<std::time::Duration> {
    use std::time::Duration;
    if let Some(ms) = v.strip_suffix("ms") {
        return ms.parse().ok().map(Duration::from_millis);
    }
    if let Some(s) = v.strip_suffix('s') {
        return s
            .parse::<f64>()
            .ok()
            .filter(|x| *x >= 0.0)
            .map(Duration::from_secs_f64);
    }
    if let Some(m) = v.strip_suffix('m') {
        return m
            .parse::<f64>()
            .ok()
            .filter(|x| *x >= 0.0)
            .map(|m| Duration::from_secs_f64(m * 60.0));
    }
    v.parse::<f64>()
        .ok()
        .filter(|x| *x >= 0.0)
        .map(Duration::from_secs_f64)
}
