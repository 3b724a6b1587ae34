use super::*;
use crate::sample::Sample;

#[test]
fn files_are_shared_by_name_and_content() {
    let a = PatRef::intern("t-shared.lst", false, "a\n# c\n\nb\n");
    let b = PatRef::intern("t-shared.lst", false, "a\n# c\n\nb\n");
    assert!(Arc::ptr_eq(&a, &b));
    let c = PatRef::intern("t-shared.lst", false, "other\n");
    assert!(!Arc::ptr_eq(&a, &c), "another content is another file");
    assert_eq!(
        a.entries()
            .iter()
            .map(|e| e.key.as_str())
            .collect::<Vec<_>>(),
        ["a", "b"]
    );
    assert!(PatRef::all().iter().any(|p| Arc::ptr_eq(p, &a)));
}

#[test]
fn lines_change_and_users_see_it() {
    let map = crate::matching::Map::load("str", "t-users.map", "k1 v1\nk2 v2\n", None).unwrap();
    let look = |k: &str| map.lookup(&Sample::Str(k.as_bytes().to_vec()));
    assert_eq!(look("k1").as_deref(), Some("v1"));
    let p = PatRef::all()
        .into_iter()
        .find(|p| p.name == "t-users.map")
        .unwrap();
    let id = p.add("k3", "v3").unwrap();
    assert_eq!(look("k3").as_deref(), Some("v3"));
    assert_eq!(p.set("k1", "new"), 1);
    assert_eq!(look("k1").as_deref(), Some("new"));
    assert_eq!(p.del(&format!("#{id}")), 1);
    assert_eq!(look("k3"), None);
    assert_eq!(p.del("k2"), 1);
    assert_eq!(p.del("nope"), 0);
    p.clear();
    assert_eq!(look("k1"), None);
    // Seen from another thread too.
    p.add("k9", "v9").unwrap();
    let m = std::sync::Arc::new(map);
    let m2 = m.clone();
    let got = std::thread::spawn(move || m2.lookup(&Sample::Str(b"k9".to_vec())))
        .join()
        .unwrap();
    assert_eq!(got.as_deref(), Some("v9"));
}

#[test]
fn a_key_must_compile_for_every_user() {
    let _m = crate::matching::Map::load("ip", "t-ip.map", "10.0.0.0/8 a\n", None).unwrap();
    let p = PatRef::all()
        .into_iter()
        .find(|p| p.name == "t-ip.map")
        .unwrap();
    assert!(p.add("not-an-ip", "x").is_err());
    assert!(p.add("192.168.0.0/16", "b").is_ok());
    assert!(crate::matching::Map::load("ip", "t-bad.map", "nonsense a\n", None).is_err());
}

#[test]
fn a_probe_answers_for_each_user_with_its_method() {
    let text = "/a red\n/b blue\n";
    let _exact = crate::matching::Map::load("str", "t-probe.map", text, None).unwrap();
    let _prefix = crate::matching::Map::load("beg", "t-probe.map", text, None).unwrap();
    let p = PatRef::all()
        .into_iter()
        .find(|p| p.name == "t-probe.map")
        .unwrap();
    let hits = |v: &str| -> Vec<(&'static str, Option<String>)> {
        p.probe(v)
            .into_iter()
            .map(|u| (u.method.name(), u.hit.map(|e| e.value)))
            .collect()
    };
    assert_eq!(
        hits("/a"),
        [("str", Some("red".into())), ("beg", Some("red".into()))]
    );
    assert_eq!(hits("/abc"), [("str", None), ("beg", Some("red".into()))]);
    assert_eq!(hits("/zz"), [("str", None), ("beg", None)]);
}
