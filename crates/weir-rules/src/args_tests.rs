//! Unit tests of `args.rs`.

use super::*;

fn call(s: &str) -> Vec<String> {
    split_call(s).unwrap().1
}

#[test]
fn quotes_and_escapes_as_haproxy_reads_them() {
    assert_eq!(call("f(a, b ,c)"), ["a", " b ", "c"]);
    assert_eq!(call("add_item(',',txn.var,_s_)"), [",", "txn.var", "_s_"]);
    assert_eq!(call("add_item(',',,_s_)"), [",", "", "_s_"]);
    assert_eq!(
        call(r#"regsub("(foo|bar)",blah,g)"#),
        ["(foo|bar)", "blah", "g"]
    );
    assert_eq!(call(r"regsub(\.,_,g)"), [r"\.", "_", "g"]);
    assert_eq!(call(r#"concat("q\\")"#), [r"q\"]);
    assert_eq!(call(r#"str("a\"b")"#), [r#"a"b"#]);
    assert_eq!(call(r"str('a\b')"), [r"a\b"]);
    assert_eq!(call(r"str(a\,b)"), ["a,b"]);
    assert_eq!(call("str(\" x \")"), [" x "]);
    assert_eq!(call("str()"), Vec::<String>::new());
    assert_eq!(call("str('')"), [""]);
    assert!(split_call("str(a").is_err());
    assert!(split_call("str('a)").is_err());
    assert!(split_call("str(a)b").is_err());
}

#[test]
fn converters_split_outside_parentheses_and_quotes() {
    assert_eq!(
        split_top("var(x),add_item(',',y),concat(')')"),
        ["var(x)", "add_item(',',y)", "concat(')')"]
    );
    assert_eq!(split_top("src,ipmask(24)"), ["src", "ipmask(24)"]);
}
