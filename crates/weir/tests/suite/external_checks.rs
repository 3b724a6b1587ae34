//! `option external-check` beside haproxy: the command gets the same
//! arguments and environment, and its exit status (0, not 0, or still
//! running after `inter`) makes the same check results and log lines.

use crate::common::*;
use std::time::Duration;

/// A check command: writes its arguments and environment to `out`,
/// then exits with `exit` (or sleeps past the check's time).
fn script(dir: &std::path::Path, name: &str, body: &str) -> String {
    use std::os::unix::fs::PermissionsExt;
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p.to_string_lossy().into_owned()
}

/// A health check line with its duration masked.
fn masked(line: &str) -> String {
    let msg = line.split_once("]: ").map_or(line, |(_, m)| m);
    match msg.find("check duration: ") {
        Some(i) => {
            let rest = &msg[i + 16..];
            let end = rest.find("ms").unwrap_or(0);
            format!("{}check duration: N{}", &msg[..i], &rest[end..])
        }
        None => msg.to_string(),
    }
}

#[test]
fn external_checks_run_and_judge_as_haproxy() {
    let dir = tempdir("external-checks");
    let seen = beside_haproxy(|start| {
        let out = dir.join("env.out");
        let _ = std::fs::remove_file(&out);
        let pass = script(
            &dir,
            "pass.sh",
            &format!("echo \"$@\" > {0}.tmp; /usr/bin/env | /usr/bin/sort >> {0}.tmp; /bin/mv {0}.tmp {0}", out.display()),
        );
        let fail = script(&dir, "fail.sh", "exit 3");
        let slow = script(&dir, "slow.sh", "/bin/sleep 5");
        let syslog = Syslog::start();
        let port = free_port();
        let cfg = format!(
            "global\n    external-check\n    log 127.0.0.1:{} local0\n\
             defaults\n    mode http\n    log global\n    option log-health-checks\n    timeout connect 1s\n    timeout client 3s\n    timeout server 3s\n\
             listen l\n    bind 127.0.0.1:{port}\n    option external-check\n    external-check command {pass}\n    external-check path /usr/bin:/bin\n\
             \x20   server s2 127.0.0.2:80 check inter 2s maxconn 7\n\
             backend b\n    option external-check\n    external-check command {fail}\n    server s1 127.0.0.1:1 check inter 2s\n\
             backend c\n    option external-check\n    external-check command {slow}\n    server s1 127.0.0.1:1 check inter 300ms\n",
            syslog.port()
        );
        let _p = start(&cfg, port);
        let lines: Vec<String> = ["l/s2", "b/s1", "c/s1"]
            .iter()
            .map(|s| {
                masked(&syslog.wait_line(
                    &format!("Health check for server {s}"),
                    Duration::from_secs(10),
                ))
            })
            .collect();
        let env = wait_for("the command's output", Duration::from_secs(10), || {
            std::fs::read_to_string(&out).ok()
        });
        // Only what the proxy gave: the shell adds PWD (and may add more).
        let env: Vec<String> = env
            .lines()
            .filter(|l| l.starts_with("HAPROXY_") || l.starts_with("PATH=") || !l.contains('='))
            .map(|l| l.replace(&port.to_string(), "PORT"))
            .collect();
        (lines, env)
    });
    let (lines, env) = seen;
    assert!(
        lines[0].contains("succeeded, reason: External check passed, code: 0"),
        "{lines:?}"
    );
    assert!(
        lines[1].contains("failed, reason: External check error, code: 3"),
        "{lines:?}"
    );
    assert!(
        lines[2].contains("failed, reason: External check timeout, code: 0"),
        "{lines:?}"
    );
    assert_eq!(env[0], "127.0.0.1 PORT 127.0.0.2 80");
    assert!(
        env.contains(&"HAPROXY_PROXY_PORT=PORT".to_string()),
        "{env:?}"
    );
    assert!(
        env.contains(&"HAPROXY_SERVER_MAXCONN=7".to_string()),
        "{env:?}"
    );
    assert!(env.contains(&"PATH=/usr/bin:/bin".to_string()), "{env:?}");
}

#[test]
fn external_checks_need_the_global_keyword_and_a_command() {
    let (code, out, err) = check_cfg(
        "defaults\n    mode http\nbackend b\n    option external-check\n    server s1 127.0.0.1:1 check\n",
    );
    let t = format!("{out}{err}");
    assert_ne!(code, 0);
    assert!(
        t.contains("unable to find required 'global.external-check'"),
        "{t}"
    );
    assert!(
        t.contains("unable to find required 'external-check command'"),
        "{t}"
    );
}
