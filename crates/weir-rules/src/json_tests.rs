//! Unit tests of `json.rs`.

use super::*;

fn q(j: &str, p: &str) -> Option<Value> {
    query(j.as_bytes(), &parse_path(p).unwrap())
}

#[test]
fn paths_reach_scalars() {
    let j = r#" { "a": {"b": [1, {"c": "x\"y\u00e9"}, 3.5]}, "t": true, "f": false,
                  "my.key": "v", "n": null, "o": {}, "neg": -4 } "#;
    assert_eq!(q(j, "$.a.b[0]"), Some(Value::Num(1.0)));
    assert_eq!(q(j, "$.a.b[1].c"), Some(Value::Str(b"x\"y\xe9".to_vec())));
    assert_eq!(q(j, "$.a.b[2]"), Some(Value::Num(3.5)));
    assert_eq!(q(j, "$.t"), Some(Value::Bool(true)));
    assert_eq!(q(j, "$.f"), Some(Value::Bool(false)));
    assert_eq!(q(j, "$.my\\.key"), Some(Value::Str(b"v".to_vec())));
    assert_eq!(q(j, "$.neg"), Some(Value::Num(-4.0)));
    // Nothing for null, objects, arrays, missing keys or indexes.
    for p in [
        "$.n", "$.o", "$.a", "$.a.b", "$.zz", "$.a.b[3]", "$.t.x", "$",
    ] {
        assert_eq!(q(j, p), None, "{p}");
    }
    // Broken JSON gives nothing, never a panic.
    for j in [
        "",
        "{",
        "{\"a\"",
        "{\"a\":",
        "{\"a\":[1,",
        "[\"",
        "{\"a\":\"\\u12",
    ] {
        assert_eq!(q(j, "$.a"), None, "{j}");
    }
}

#[test]
fn bad_paths_are_refused() {
    for p in ["a", "$.", "$..a", "$[x]", "$[1", "$a"] {
        assert!(parse_path(p).is_err(), "{p}");
    }
    assert_eq!(
        parse_path("$.a[2].b").unwrap(),
        [
            Step::Key(b"a".to_vec()),
            Step::Index(2),
            Step::Key(b"b".to_vec())
        ]
    );
}

#[test]
fn numbers_as_printf_g() {
    for (v, want) in [
        (4.5, "4.5"),
        (-7.9, "-7.9"),
        (1000.0, "1000"),
        (12345678.25, "1.23457e+07"),
        (0.0001, "0.0001"),
        (0.00001234, "1.234e-05"),
        (123456.0, "123456"),
        (999999.5, "1e+06"),
        (0.0, "0"),
    ] {
        assert_eq!(g_format(v), want, "{v}");
    }
}

#[test]
fn deep_nesting_gives_nothing_without_exhausting_the_stack() {
    let deep = format!(
        "{{\"a\":{}1{},\"b\":2}}",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    assert_eq!(q(&deep, "$.b"), None);
    let ok = format!("{{\"a\":{}1{},\"b\":2}}", "[".repeat(10), "]".repeat(10));
    assert_eq!(q(&ok, "$.b"), Some(Value::Num(2.0)));
}
