//! Unit tests of `cli.rs`.

use super::*;

fn p(s: &str) -> Result<Args, String> {
    parse(&s.split_whitespace().map(String::from).collect::<Vec<_>>())
}

#[test]
fn haproxy_flags() {
    let a = p("-f a.cfg -f dir -c -q").unwrap();
    assert_eq!(a.files, ["a.cfg", "dir"]);
    assert!(a.check && a.quiet);
    let a = p("-db -dM -f x -p /run/w.pid -D").unwrap();
    assert!(a.foreground && a.daemon);
    assert_eq!(a.pidfile.as_deref(), Some("/run/w.pid"));
    let a = p("-f x -sf 10 11 -st 12").unwrap();
    assert_eq!(
        (a.soft_pids.as_slice(), a.hard_pids.as_slice()),
        (&[10, 11][..], &[12][..])
    );
    assert_eq!(p("-vv").unwrap().version, 2);
    assert_eq!(p("-cc 1").unwrap().cond.as_deref(), Some("1"));
    assert!(p("-x").is_err());
    assert_eq!(
        p("-f x -x /run/w.sock").unwrap().takeover.as_deref(),
        Some("/run/w.sock")
    );
    assert!(p("-f").is_err());
    assert!(p("--bogus").is_err());
    assert!(p("-sf abc").is_err());
}

#[test]
fn usage_names_every_flag_and_promises_nothing() {
    for flag in [
        "-f", "-c", "-cc", "-D", "-p", "-q", "-sf", "-st", "-x", "-W", "-n", "-C", "-d", "-db",
        "-v", "-vv", "-V",
    ] {
        assert!(
            USAGE.contains(&format!("{flag} ")) || USAGE.contains(&format!("{flag}/")),
            "{flag} is missing from the usage"
        );
    }
    assert!(!USAGE.contains("later"), "{USAGE}");
}

#[test]
fn master_flags_and_worker_args() {
    let a = p("-Ws -S /run/m.sock,level,operator -S fd@5 -f x").unwrap();
    assert!(a.master_worker && a.systemd);
    assert_eq!(a.master_cli, ["/run/m.sock,level,operator", "fd@5"]);
    let argv: Vec<String> = "-W -d -S fd@5 -D -p /run/p -sf 10 11 -x /s -C /etc -f a.cfg -q"
        .split_whitespace()
        .map(String::from)
        .collect();
    assert_eq!(worker_args(&argv), ["-d", "-f", "a.cfg", "-q"]);
    let argv: Vec<String> = ["-W", "-f", "a.cfg", "--", "-p"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(worker_args(&argv), ["-db", "-f", "a.cfg", "--", "-p"]);
}
