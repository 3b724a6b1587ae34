//! Variables as `set-var` names them (manual §7.3.1 `set-var`, §4.2
//! `http-request set-var`): a scoped name with the conditions that must
//! hold for the value to be stored, and the check of those conditions.

use crate::acl::Loader;
use crate::fmt::Fmt;
use crate::sample::{Ctx, Expr, Sample};

/// The scopes a variable name starts with.
pub const SCOPES: [&str; 6] = ["proc", "sess", "txn", "req", "res", "check"];

/// A variable name with one of HAProxy's scopes and only the characters
/// the manual allows after it.
pub fn is_var(s: &str) -> bool {
    let Some((scope, rest)) = s.split_once('.') else {
        return false;
    };
    SCOPES.contains(&scope)
        && !rest.is_empty()
        && rest
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'.' || c == b'_')
}

/// A condition of `set-var(<name>,<cond>…)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cond {
    IfExists,
    IfNotExists,
    IfEmpty,
    IfNotEmpty,
    IfSet,
    IfNotSet,
    IfGt,
    IfLt,
}

/// The target of a `set-var`: the variable and its conditions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VarSet {
    pub name: String,
    pub conds: Vec<Cond>,
}

impl VarSet {
    /// Parses `<name>[,<cond>…]` (at most four conditions).
    pub fn parse(inner: &str) -> Result<VarSet, String> {
        let mut parts = inner.split(',');
        let name = parts.next().unwrap_or("").trim();
        if !is_var(name) {
            return Err(format!(
                "invalid variable name '{name}' (expects proc., sess., txn., req., res. or check. followed by a name)"
            ));
        }
        let conds = parts
            .map(|c| {
                Ok(match c.trim() {
                    "ifexists" => Cond::IfExists,
                    "ifnotexists" => Cond::IfNotExists,
                    "ifempty" => Cond::IfEmpty,
                    "ifnotempty" => Cond::IfNotEmpty,
                    "ifset" => Cond::IfSet,
                    "ifnotset" => Cond::IfNotSet,
                    "ifgt" => Cond::IfGt,
                    "iflt" => Cond::IfLt,
                    other => {
                        return Err(format!("unknown condition '{other}' for variable '{name}'"))
                    }
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        if conds.len() > 4 {
            return Err(format!(
                "too many conditions for variable '{name}' (at most 4)"
            ));
        }
        Ok(VarSet {
            name: name.to_string(),
            conds,
        })
    }

    /// Whether `new` may be stored, given the variable's value now (`None`:
    /// not set) and whether it exists (a `proc` variable exists from the
    /// start; others once set).
    pub fn allows(&self, current: Option<&Sample>, exists: bool, new: &Sample) -> bool {
        let empty = matches!(new, Sample::Str(s) | Sample::Bin(s) if s.is_empty());
        let order = |want: std::cmp::Ordering| match (current, new) {
            (Some(Sample::Int(a)), Sample::Int(b)) => a.cmp(b) == want,
            _ => true,
        };
        self.conds.iter().all(|c| match c {
            Cond::IfExists => exists,
            Cond::IfNotExists => !exists,
            Cond::IfEmpty => empty,
            Cond::IfNotEmpty => !empty,
            Cond::IfSet => current.is_some(),
            Cond::IfNotSet => current.is_none(),
            Cond::IfGt => order(std::cmp::Ordering::Greater),
            Cond::IfLt => order(std::cmp::Ordering::Less),
        })
    }
}

/// What `set-var` stores (a sample expression) or `set-var-fmt` (a log
/// format string, stored as a string).
#[derive(Debug, Clone, PartialEq)]
pub enum VarValue {
    Expr(Expr),
    Fmt(Fmt),
}

impl VarValue {
    /// The value to store; `None` when the expression finds nothing.
    pub fn eval(&self, ctx: &dyn Ctx) -> Option<Sample> {
        match self {
            VarValue::Expr(e) => e.eval(ctx),
            VarValue::Fmt(f) => Some(Sample::Str(f.render(ctx))),
        }
    }
}

/// `set-var(<name>[,<cond>…]) <expr>` or `set-var-fmt(<name>[,<cond>…])
/// <fmt>` (`action` is the action word, `args` the words after it), or
/// `None` when the action is neither.
pub fn parse_set(
    action: &str,
    args: &[String],
    load: Loader<'_>,
) -> Option<Result<(VarSet, VarValue), String>> {
    let fmt = action.starts_with("set-var-fmt(");
    if !fmt && !action.starts_with("set-var(") {
        return None;
    }
    let kw = if fmt { "set-var-fmt" } else { "set-var" };
    Some((|| {
        let var = parse_action(action, kw)?;
        let [arg] = args else {
            return Err(format!("'{kw}' expects exactly one argument"));
        };
        let value = if fmt {
            VarValue::Fmt(Fmt::parse(arg, load)?)
        } else {
            VarValue::Expr(Expr::parse(arg, load)?)
        };
        Ok((var, value))
    })())
}

/// The variable of `<action>(<name>[,<cond>…])`.
pub fn parse_action(w: &str, action: &str) -> Result<VarSet, String> {
    let inner = w
        .strip_prefix(action)
        .and_then(|r| r.strip_prefix('('))
        .and_then(|r| r.strip_suffix(')'))
        .ok_or_else(|| format!("'{action}' expects '{action}(<scope>.<name>)'"))?;
    VarSet::parse(inner)
}

/// `get var`'s text for a value: HAProxy's type name and the value.
pub fn describe(v: &Sample) -> (&'static str, String) {
    match v {
        Sample::Int(i) => ("sint", i.to_string()),
        Sample::Bool(b) => ("bool", i64::from(*b).to_string()),
        Sample::Ip(std::net::IpAddr::V4(a)) => ("ipv4", a.to_string()),
        Sample::Ip(std::net::IpAddr::V6(a)) => ("ipv6", a.to_string()),
        Sample::Str(s) => ("str", String::from_utf8_lossy(s).into_owned()),
        // Up to its first NUL byte, as haproxy prints it.
        Sample::Bin(_) => ("bin", String::from_utf8_lossy(&v.to_bytes()).into_owned()),
    }
}

#[cfg(test)]
#[path = "vars_tests.rs"]
mod tests;
