//! `namespace <name>` on `bind` and `server` lines: sockets made in a
//! network namespace of `ip netns` (created here, with an origin inside
//! it), as Debian's haproxy 2.6 makes them, beside it on the same
//! configuration. Needs root, as namespaces do (the CI runs as root).

use crate::common::*;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A network namespace made for one test, deleted with it.
struct Netns(String);

impl Netns {
    fn new(tag: &str) -> Netns {
        let name = format!("weir-{tag}-{}", std::process::id());
        let ok = |args: &[&str]| {
            let s = Command::new("ip").args(args).status();
            assert!(
                s.is_ok_and(|s| s.success()),
                "`ip {}` failed: this test needs root and iproute2",
                args.join(" ")
            );
        };
        ok(&["netns", "add", &name]);
        let ns = Netns(name);
        ok(&["-n", &ns.0, "link", "set", "lo", "up"]);
        ns
    }
    /// `cmd` run inside the namespace.
    fn exec(&self, cmd: &[&str]) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.0]).args(cmd);
        c
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["netns", "del", &self.0]).status();
    }
}

/// A process stopped with the test.
struct Stopped(Child);

impl Drop for Stopped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// GET `path` from `port` (in the namespace when given): the body, or
/// nothing when it fails.
fn get(ns: Option<&Netns>, port: u16, path: &str) -> Option<String> {
    let url = format!("http://127.0.0.1:{port}{path}");
    let args = ["curl", "-sf", "--max-time", "3", url.as_str()];
    let out = match ns {
        Some(ns) => ns.exec(&args).output(),
        None => Command::new(args[0]).args(&args[1..]).output(),
    };
    out.ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
}

fn cfg(ns: &str, front: u16, inside: u16, origin: u16) -> String {
    format!(
        "defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         frontend host\n    bind 127.0.0.1:{front}\n    default_backend inside\n\
         frontend in_ns\n    bind 127.0.0.1:{inside} namespace {ns}\n    default_backend inside\n\
         backend inside\n    server s 127.0.0.1:{origin} namespace {ns} check inter 200\n"
    )
}

#[test]
fn sockets_are_made_in_the_named_namespace_as_haproxy() {
    let ns = Netns::new("ns");
    let dir = tempdir("netns-origin");
    std::fs::write(dir.join("hello.txt"), "hello from the namespace\n").unwrap();
    // The origin listens inside the namespace only.
    let origin = free_port();
    let port = origin.to_string();
    let server = ns
        .exec(&["python3", "-m", "http.server", &port, "--bind", "127.0.0.1"])
        .current_dir(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("python3");
    let _server = Stopped(server);
    wait_for(
        "the origin in the namespace",
        Duration::from_secs(10),
        || get(Some(&ns), origin, "/hello.txt"),
    );
    assert_eq!(
        get(None, origin, "/hello.txt"),
        None,
        "the origin is not reachable from outside"
    );
    let want = Some("hello from the namespace\n".to_string());
    let (wf, wi, hf, hi) = (free_port(), free_port(), free_port(), free_port());
    let Some(_h) = Haproxy::start(&cfg(&ns.0, hf, hi, origin), hf) else {
        panic!("haproxy is not installed: tests/run installs it");
    };
    let _w = Weir::start(&cfg(&ns.0, wf, wi, origin), wf);
    for (front, inside) in [(wf, wi), (hf, hi)] {
        // Through the host's listener to the server in the namespace.
        assert_eq!(get(None, front, "/hello.txt"), want, "port {front}");
        // The listener in the namespace is reached from inside only.
        let seen = wait_for(
            "the listener in the namespace",
            Duration::from_secs(5),
            || get(Some(&ns), inside, "/hello.txt"),
        );
        assert_eq!(Some(seen), want, "port {inside}");
        assert_eq!(
            get(None, inside, "/hello.txt"),
            None,
            "port {inside} from outside"
        );
    }
    // A namespace that does not exist: the listener cannot be made.
    let (code, _, err) = check_or_start(&cfg("weir-no-such-ns", free_port(), free_port(), origin));
    assert_ne!(code, 0);
    assert!(err.contains("weir-no-such-ns"), "{err}");
}

/// Starts weir in the foreground on `cfg` until it exits (it fails to
/// start here): its code, stdout and stderr.
fn check_or_start(cfg: &str) -> (i32, String, String) {
    let dir = tempdir("netns-bad");
    let path = dir.join("bad.cfg");
    std::fs::write(&path, cfg).unwrap();
    let out = Command::new("timeout")
        .args(["10", WEIR, "-db", "-f", path.to_str().unwrap()])
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
