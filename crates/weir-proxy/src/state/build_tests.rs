use super::*;
use weir_config::parse::{parse, Source};

fn config(text: &str) -> Arc<Config> {
    let p = parse(
        &[Source {
            name: "t.cfg".into(),
            text: text.into(),
        }],
        &|_| None,
    );
    Arc::new(p.config.expect("a valid configuration"))
}

const LIMITS: Limits = Limits {
    nthreads: 2,
    maxconn: 100,
};

#[test]
fn frontends_point_at_backends_by_index_and_keep_their_bind_lines() {
    let cfg = config(
        "defaults\n  mode http\n\
         frontend fe\n  bind 127.0.0.1:1 thread 2\n  bind 127.0.0.1:2 name web maxconn 7\n\
         \x20 use_backend b2 if { path /two }\n  default_backend b1\n\
         backend b1\n  server s 127.0.0.1:3\n\
         backend b2\n  server s 127.0.0.1:4 disabled\n  server t unix@/tmp/x.sock\n\
         listen both\n  bind 127.0.0.1:5\n  server s 127.0.0.1:6\n",
    );
    let sh = build(cfg, LIMITS, Carried::default()).unwrap();
    assert_eq!(sh.backends.len(), 3);
    let names: Vec<&str> = sh.frontends.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["fe", "both"]);
    let fe = &sh.frontends[0];
    assert_eq!(fe.backend.map(|b| sh.backend(b).name.as_str()), Some("b1"));
    match &fe.switching[..] {
        [(Target::Static(b), Some(_))] => assert_eq!(sh.backend(*b).name, "b2"),
        _ => panic!("one static use_backend with a condition"),
    }
    assert_eq!(fe.binds[0].threads, [1]);
    assert_eq!(fe.binds[0].info.label, "1");
    assert_eq!((fe.binds[0].maxconn, fe.binds[0].backlog), (100, 1024));
    assert_eq!(fe.binds[1].threads, [0, 1]);
    assert_eq!(fe.binds[1].info.label, "web");
    assert_eq!(fe.binds[1].maxconn, 7);
    // A listen section is its own default backend.
    let both = &sh.frontends[1];
    assert_eq!(
        both.backend.map(|b| sh.backend(b).name.as_str()),
        Some("both")
    );
    // `disabled` starts in maintenance; a unix server keeps its path.
    let b2 = &sh.backends[1];
    assert_eq!(b2.set().state(0).map(|s| s.1), Some(true));
    assert!(matches!(b2.slots[1].target(), ServerTarget::Unix(p) if p == "/tmp/x.sock"));
    assert_eq!(sh.maxconn, 100);
}

#[test]
fn every_problem_is_reported_with_its_line() {
    let cfg = config(
        "defaults\n  mode tcp\n\
         frontend fe\n  bind 127.0.0.1:1 thread 3\n  default_backend b\n\
         backend b\n  server s no-such-host.invalid:80\n",
    );
    let Err(errors) = build(cfg, LIMITS, Carried::default()) else {
        panic!("built a frontend no thread accepts on");
    };
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(errors[0].contains("[t.cfg:7]") && errors[0].contains("could not resolve"));
    assert!(errors[1].contains("[t.cfg:4]") && errors[1].contains("no thread of 1-2"));
}
