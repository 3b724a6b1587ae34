//! Unit tests of `global.rs`.

use super::*;

fn map(line: &str) -> CpuMap {
    let words: Vec<String> = line.split_whitespace().map(String::from).collect();
    parse_cpu_map(&words, &Loc::default()).unwrap()
}

#[test]
fn sets() {
    assert_eq!(parse_set("3", 1).unwrap(), vec![3]);
    assert_eq!(parse_set("1-4", 1).unwrap(), vec![1, 2, 3, 4]);
    assert_eq!(parse_set("0-", 0).unwrap().len(), 64);
    assert_eq!(parse_set("odd", 1).unwrap()[..3], [1, 3, 5]);
    assert_eq!(parse_set("even", 0).unwrap()[..3], [0, 2, 4]);
    assert!(parse_set("0", 1).is_err());
    assert!(parse_set("65", 1).is_err());
    assert!(parse_set("4-2", 1).is_err());
    assert!(parse_set("x", 1).is_err());
}

#[test]
fn manual_examples() {
    let m = [map("cpu-map auto:1/1-4 0-3")];
    let r = thread_cpus(&m, 4, false);
    assert_eq!(
        r,
        vec![Some(vec![0]), Some(vec![1]), Some(vec![2]), Some(vec![3])]
    );
    let m = [map("cpu-map auto:1/1-4 3 2 1 0")];
    assert_eq!(thread_cpus(&m, 4, false)[0], Some(vec![0]));
    let m = [map("cpu-map 1/all 0-3")];
    assert!(thread_cpus(&m, 2, false)
        .iter()
        .all(|c| c.as_deref() == Some(&[0, 1, 2, 3][..])));
    let m = [map("cpu-map 1 0")];
    assert_eq!(
        thread_cpus(&m, 2, false),
        vec![Some(vec![0]), Some(vec![0])]
    );
    let m = [map("cpu-map auto:1/all 0-63")];
    assert_eq!(
        thread_cpus(&m, 2, false),
        vec![Some(vec![0]), Some(vec![1])]
    );
    let words: Vec<String> = "cpu-map auto:1/1-4 0"
        .split(' ')
        .map(String::from)
        .collect();
    assert!(parse_cpu_map(&words, &Loc::default()).is_err());
}

#[test]
fn nbproc_style_maps_processes_to_threads() {
    let m = [map("cpu-map 1 0"), map("cpu-map 2 1")];
    assert_eq!(thread_cpus(&m, 2, true), vec![Some(vec![0]), Some(vec![1])]);
    let m = [map("cpu-map auto:1-2 0-1")];
    assert_eq!(thread_cpus(&m, 2, true), vec![Some(vec![0]), Some(vec![1])]);
}

#[test]
fn tunables_without_effect_are_accepted_with_a_note() {
    let p = crate::parse::tests::parse_str(
        "global\n    tune.ssl.ssl-ctx-cache-size 10\n    tune.idletimer 1s\n    tune.recv_enough 10k\n    tune.sched.low-latency on\n    tune.fd.edge-triggered on\n    tune.ssl.force-private-cache\n    tune.ssl.keylog on\n",
    );
    let errs: Vec<String> = p.diagnostics.errors().map(|d| d.to_string()).collect();
    assert!(errs.is_empty(), "{errs:?}");
    let notes = p
        .diagnostics
        .items
        .iter()
        .filter(|d| d.level == Level::Notice && d.to_string().contains("has no effect"))
        .count();
    assert_eq!(notes, 6);
    assert_eq!(
        p.config.as_ref().map(|c| c.global.tls.ctx_cache_size),
        Some(10)
    );
    let bad = crate::parse::tests::parse_str(
        "global\n    tune.sched.low-latency maybe\n    tune.ssl.keylog maybe\n",
    );
    assert_eq!(bad.diagnostics.errors().count(), 2);
    let dh = std::env::temp_dir().join(format!("weir-dh-{}.pem", std::process::id()));
    std::fs::write(
        &dh,
        "-----BEGIN DH PARAMETERS-----\nMIIBCAKCAQEA\n-----END DH PARAMETERS-----\n",
    )
    .unwrap();
    let more = crate::parse::tests::parse_str(&format!(
        "global\n    tune.vars.txn-max-size 10k\n    nogetaddrinfo\n    maxpipes 100\n    ssl-dh-param-file {}\n    tune.pattern.cache-size 0\n",
        dh.display()
    ));
    let _ = std::fs::remove_file(&dh);
    assert_eq!(more.diagnostics.errors().count(), 0);
    assert_eq!(
        more.diagnostics
            .items
            .iter()
            .filter(|d| d.to_string().contains("has no effect"))
            .count(),
        5
    );
    let bad = crate::parse::tests::parse_str(
        "global\n    nogetaddrinfo yes\n    ssl-dh-param-file /dev/null\n    tune.vars.txn-max-size lots\n",
    );
    let errs: Vec<String> = bad.diagnostics.errors().map(|d| d.to_string()).collect();
    assert_eq!(errs.len(), 3, "{errs:?}");
    assert!(
        errs[1].contains("t.cfg:3")
            && errs[1].contains("unable to load DH parameters from file </dev/null>"),
        "{errs:?}"
    );
}

#[test]
fn memory_trimming_and_logged_uri_length() {
    let c = crate::parse::tests::parse_str(
        "global\n    no-memory-trimming\n    tune.http.logurilen 64\n",
    )
    .config
    .expect("config");
    assert!(c.global.no_memory_trimming);
    assert_eq!(c.global.logurilen, 64);
    let bad = crate::parse::tests::parse_str(
        "global\n    no-memory-trimming now\n    tune.http.logurilen 0\n",
    );
    assert_eq!(bad.diagnostics.errors().count(), 2);
}

#[test]
fn profiling_pp2_payload_and_quiet_keywords() {
    let p = crate::parse::tests::parse_str(
        "global\n    profiling.tasks on\n    pp2-never-send-local\n    h1-accept-payload-with-any-method\n    numa-cpu-mapping\n    tune.peers.max-updates-at-once 50\n\
         defaults\n    mode http\n    no option idle-close-on-response\n",
    );
    let c = p.config.expect("config");
    assert_eq!(c.global.profiling_tasks.as_deref(), Some("on"));
    assert!(c.global.pp2_never_send_local && c.global.h1_accept_payload_with_any_method);
    let notes: Vec<String> = p.diagnostics.items.iter().map(|d| d.to_string()).collect();
    for kw in [
        "numa-cpu-mapping",
        "tune.peers.max-updates-at-once",
        "idle-close-on-response",
    ] {
        assert!(notes.iter().any(|n| n.contains(kw)), "{kw}: {notes:?}");
    }
    let bad = crate::parse::tests::parse_str("global\n    profiling.tasks maybe\n");
    assert_eq!(bad.diagnostics.errors().count(), 1);
}
