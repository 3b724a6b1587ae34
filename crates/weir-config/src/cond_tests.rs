//! Unit tests of `cond.rs`.

use super::*;

fn ev(expr: &str) -> Result<bool, String> {
    let env = |n: &str| match n {
        "SET" => Some("yes".to_string()),
        "EMPTY" => Some(String::new()),
        _ => None,
    };
    eval(expr, &CondEnv { env: &env })
}

#[test]
fn literals() {
    assert!(!ev("").unwrap());
    assert!(!ev("0").unwrap());
    assert!(ev("1").unwrap());
    assert!(ev("42").unwrap());
    assert!(!ev("!1").unwrap());
}

#[test]
fn predicates() {
    assert!(ev("defined(SET)").unwrap());
    assert!(ev("defined(EMPTY)").unwrap());
    assert!(!ev("defined(NOPE)").unwrap());
    assert!(ev("feature(EPOLL)").unwrap());
    assert!(ev("feature(OPENSSL)").unwrap());
    assert!(ev("feature(LUA)").unwrap());
    assert!(!ev("feature(NOSUCH)").unwrap());
    assert!(ev("streq(a,a)").unwrap());
    assert!(!ev("streq(a,b)").unwrap());
    assert!(ev("strneq(a,b)").unwrap());
    assert!(ev(r#"streq("a,b","a,b")"#).unwrap());
    assert!(ev("version_atleast(2.6)").unwrap());
    assert!(ev("version_atleast(2.4.1)").unwrap());
    assert!(!ev("version_atleast(2.7)").unwrap());
    assert!(ev("version_before(2.7)").unwrap());
    assert!(!ev("version_before(2.6)").unwrap());
    assert!(ev("version_before(2.6.1)").unwrap());
    assert!(ev("version_atleast(2.6-dev3)").unwrap());
    // rustls is neither OpenSSL nor BoringSSL.
    assert!(!ev("ssllib_name_startswith(OpenSSL)").unwrap());
    assert!(ev("!ssllib_name_startswith(BoringSSL)").unwrap());
    assert!(ev("ssllib_name_startswith(rustls)").unwrap());
    assert!(!ev("openssl_version_atleast(1.1.1)").unwrap());
    assert!(!ev("openssl_version_before(9.0)").unwrap());
    assert!(ev("openssl_version_atleast(x)").is_err());
}

#[test]
fn operators_and_precedence() {
    assert!(ev("1 && 1").unwrap());
    assert!(!ev("1 && 0").unwrap());
    assert!(ev("0 || 1").unwrap());
    assert!(ev("0 && 1 || 1 && 1").unwrap(), "AND binds tighter");
    assert!(!ev("0 && (1 || 1)").unwrap());
    assert!(ev("!(0 || 0)").unwrap());
    assert!(ev("feature(EPOLL) && (streq(x,y) || defined(SET))").unwrap());
}

#[test]
fn errors() {
    assert!(ev("nosuch(1)").is_err());
    assert!(ev("streq(a)").is_err());
    assert!(ev("(1").is_err());
    assert!(ev("1 1").is_err());
    assert!(ev("defined(SET").is_err());
    assert!(ev("version_atleast(abc)").is_err());
}
