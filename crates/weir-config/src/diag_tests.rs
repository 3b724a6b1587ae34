//! Unit tests of `diag.rs`.

use super::*;

#[test]
fn formats_like_haproxy() {
    let d = Diagnostic {
        level: Level::Alert,
        loc: Some(Loc {
            file: "haproxy.cfg".into(),
            line: 42,
        }),
        message: "unknown keyword 'balanse' in 'backend' section; did you mean 'balance'?".into(),
    };
    assert_eq!(
        d.to_string(),
        "[ALERT] parsing [haproxy.cfg:42] : unknown keyword 'balanse' in 'backend' section; did you mean 'balance'?"
    );
}

#[test]
fn suggestions() {
    assert_eq!(
        did_you_mean("balanse", ["bind", "balance", "backlog"]),
        Some("balance")
    );
    assert_eq!(did_you_mean("zzzzzz", ["bind", "balance"]), None);
}
