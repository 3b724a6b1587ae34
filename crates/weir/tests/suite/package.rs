//! The Debian package (`packaging/deb/build`): installed with dpkg on this
//! machine, its systemd unit checked by `systemd-analyze verify`, and the
//! unit's commands run by hand as systemd runs them (there is no systemd
//! here): started with a notify socket, reloaded under load with its
//! `ExecReload` lines, stopped with SIGTERM; then purged.

use crate::common::*;
use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Removes the package when the test ends, passed or not.
struct Installed;

impl Drop for Installed {
    fn drop(&mut self) {
        let _ = Command::new("dpkg").args(["--purge", "weir"]).output();
    }
}

fn run(cmd: &str, args: &[&str]) -> (bool, String) {
    let out = Command::new(cmd)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{cmd}: {e}"));
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr),
    )
}

/// `Environment="A=1" "B=2"` lines and an `EnvironmentFile`'s `A=1` lines.
fn environment(unit: &str) -> HashMap<String, String> {
    let mut env = HashMap::new();
    for l in unit.lines() {
        if let Some(rest) = l.strip_prefix("Environment=") {
            for item in rest.split('"').filter(|s| s.contains('=')) {
                let (k, v) = item.split_once('=').unwrap();
                env.insert(k.to_string(), v.to_string());
            }
        }
        if let Some(path) = l.strip_prefix("EnvironmentFile=") {
            let text = std::fs::read_to_string(path.trim_start_matches('-')).unwrap_or_default();
            for l in text.lines().filter(|l| !l.starts_with('#')) {
                if let Some((k, v)) = l.split_once('=') {
                    env.insert(k.to_string(), v.trim_matches('"').to_string());
                }
            }
        }
    }
    env
}

/// A command line of the unit with `$VAR` replaced and split into words,
/// as systemd does for unbraced variables.
fn command(line: &str, env: &HashMap<String, String>) -> Vec<String> {
    line.split_whitespace()
        .flat_map(|w| match w.strip_prefix('$') {
            Some(k) => env
                .get(k)
                .unwrap_or_else(|| panic!("${k} is not set"))
                .split_whitespace()
                .map(str::to_string)
                .collect(),
            None => vec![w.to_string()],
        })
        .collect()
}

fn get(port: u16) -> bool {
    let Ok(mut c) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = c.set_read_timeout(Some(Duration::from_secs(5)));
    if c.write_all(b"GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
        .is_err()
    {
        return false;
    }
    let mut s = String::new();
    c.read_to_string(&mut s).is_ok() && s.starts_with("HTTP/1.1 200") && s.ends_with("up")
}

#[test]
fn debian_package_installs_runs_its_unit_reloads_under_load_and_stops() {
    // SAFETY: geteuid has no preconditions.
    let euid = unsafe { libc::geteuid() };
    assert_eq!(
        euid, 0,
        "this test installs a .deb with dpkg: run it as root (tests/run does)"
    );
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = tempdir("deb");
    let (ok, out) = run(
        root.join("packaging/deb/build").to_str().unwrap(),
        &["--binary", WEIR, "--out", dir.to_str().unwrap()],
    );
    assert!(ok, "{out}");
    let deb = out.trim().lines().last().unwrap().to_string();
    let _installed = Installed;
    let (ok, out) = run("dpkg", &["-i", &deb]);
    assert!(ok, "{out}");
    for f in [
        "/usr/sbin/weir",
        "/lib/systemd/system/weir.service",
        "/etc/weir/weir.cfg",
        "/etc/default/weir",
        "/etc/logrotate.d/weir",
        "/usr/share/man/man1/weir.1.gz",
        "/usr/share/doc/weir/compatibility.md.gz",
    ] {
        assert!(Path::new(f).exists(), "{f} installed");
    }
    assert!(run("getent", &["passwd", "weir"]).0, "the weir user made");
    let (ok, out) = run(
        "systemd-analyze",
        &["verify", "/lib/systemd/system/weir.service"],
    );
    assert!(
        ok && !out.contains("weir.service:"),
        "the unit verifies: {out}"
    );
    // The demo configuration passes the unit's own check, silently.
    let (ok, out) = run("/usr/sbin/weir", &["-c", "-q", "-f", "/etc/weir/weir.cfg"]);
    assert!(ok && out.is_empty(), "{out}");

    // The unit's commands, as systemd runs them, with a configuration of
    // this test's (as /etc/default/weir would name one).
    let unit = std::fs::read_to_string("/lib/systemd/system/weir.service").unwrap();
    assert!(unit.contains("Type=notify") && unit.contains("KillMode=mixed"));
    let mut env = environment(&unit);
    let port = free_port();
    let cfg = dir.join("weir.cfg");
    std::fs::write(
        &cfg,
        format!(
            "defaults\n    mode http\n    timeout connect 2s\n    timeout client 5s\n    timeout server 5s\n\
             frontend fe\n    bind 127.0.0.1:{port}\n    http-request return status 200 content-type text/plain string up\n"
        ),
    )
    .unwrap();
    env.insert("CONFIG".into(), cfg.display().to_string());
    env.insert("PIDFILE".into(), dir.join("weir.pid").display().to_string());
    let master_sock = dir.join("master.sock");
    env.insert("EXTRAOPTS".into(), format!("-S {}", master_sock.display()));
    let notify = std::os::unix::net::UnixDatagram::bind(dir.join("notify")).unwrap();
    notify
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let next = || {
        let mut b = [0u8; 512];
        let n = notify.recv(&mut b).expect("a notification");
        String::from_utf8_lossy(&b[..n]).to_string()
    };
    let line = |key: &str| -> Vec<String> {
        unit.lines()
            .filter_map(|l| l.strip_prefix(key))
            .map(str::to_string)
            .collect()
    };
    let start = command(&line("ExecStart=")[0], &env);
    let mut main = Command::new(&start[0])
        .args(&start[1..])
        .env("NOTIFY_SOCKET", dir.join("notify"))
        .stderr(std::fs::File::create(dir.join("stderr")).unwrap())
        .spawn()
        .unwrap();
    let mainpid = main.id().to_string();
    let ready = next();
    assert!(
        ready.starts_with("READY=1") && ready.contains(&format!("MAINPID={mainpid}")),
        "{ready}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("weir.pid"))
            .unwrap()
            .trim(),
        mainpid
    );
    env.insert("MAINPID".into(), mainpid.clone());

    // Reloads under load lose no request.
    let stop = Arc::new(AtomicBool::new(false));
    let (ok_n, failed) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let clients: Vec<_> = (0..4)
        .map(|_| {
            let (stop, ok_n, failed) = (stop.clone(), ok_n.clone(), failed.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let c = if get(port) { &ok_n } else { &failed };
                    c.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    for _ in 0..3 {
        for l in line("ExecReload=") {
            let cmd = command(&l, &env);
            let (ok, out) = run(
                &cmd[0],
                &cmd[1..].iter().map(String::as_str).collect::<Vec<_>>(),
            );
            assert!(ok && out.is_empty(), "{l}: {out}");
        }
        assert_eq!(next(), "RELOADING=1");
        assert!(next().starts_with("READY=1"));
    }
    stop.store(true, Ordering::Relaxed);
    for c in clients {
        c.join().unwrap();
    }
    assert!(ok_n.load(Ordering::Relaxed) > 0);
    assert_eq!(
        failed.load(Ordering::Relaxed),
        0,
        "requests lost to reloads"
    );
    let procs = ask(&master_sock, "show proc\n");
    assert!(procs.contains("3 [failed: 0]"), "{procs}");

    // KillMode=mixed: SIGTERM to the main process; exit 0 or 143.
    // SAFETY: kill(2) on the process this test started.
    unsafe {
        libc::kill(main.id() as i32, libc::SIGTERM);
    }
    assert_eq!(next(), "STOPPING=1");
    let status = main.wait().unwrap();
    assert!(
        matches!(status.code(), Some(0 | 143)),
        "{status:?}: {}",
        std::fs::read_to_string(dir.join("stderr")).unwrap_or_default()
    );
}
