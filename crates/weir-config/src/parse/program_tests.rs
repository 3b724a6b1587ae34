//! Unit tests of `program.rs` and the master-worker global keywords.

use super::super::tests::{errors, ok};

#[test]
fn program_sections() {
    let c = ok("program foo\n  command sleep \"10 s\"\n  user nobody\n  group nogroup\n  no option start-on-reload\nprogram bar\n  command /bin/true\n");
    assert_eq!(c.programs.len(), 2);
    let foo = &c.programs[0];
    assert_eq!(foo.command, ["sleep", "10 s"]);
    assert_eq!(foo.user.as_deref(), Some("nobody"));
    assert_eq!(foo.group.as_deref(), Some("nogroup"));
    assert!(!foo.start_on_reload);
    assert!(
        c.programs[1].start_on_reload,
        "restarted on reload by default"
    );
}

#[test]
fn program_errors_as_haproxy() {
    let e = errors("program foo\n  command\n");
    assert!(
        e.iter().any(|m| m
            .contains("'command' expects a command with optional arguments separated in words.")),
        "{e:?}"
    );
    let e = errors("program foo\n  user nobody\n");
    assert!(
        e[0].contains("The program section 'foo' lacks a command to launch."),
        "{e:?}"
    );
    let e = errors("program foo\n  command x\n  option foo\n");
    assert!(e[0].contains("unknown option 'foo'."), "{e:?}");
}

#[test]
fn master_worker_keywords() {
    let c = ok("global\n  master-worker no-exit-on-failure\n  mworker-max-reloads 3\n");
    assert!(c.global.master_worker && c.global.no_exit_on_failure);
    assert_eq!(c.global.mworker_max_reloads, Some(3));
    assert!(errors("global\n  mworker-max-reloads x\n")[0].contains("expects an integer"));
    assert!(errors("global\n  master-worker bogus\n")[0].contains("no-exit-on-failure"));
}
