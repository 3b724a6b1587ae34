//! Master-worker (`-W`, `-Ws`, `master-worker`): the master CLI beside
//! haproxy's, reloads under load that lose nothing and never bind again, a
//! failed reload, exit codes, `program` sections, `mworker-max-reloads`,
//! systemd notifications.

use crate::common::*;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// A master process (weir's or haproxy's); stopped by SIGTERM when dropped
/// so that it stops its workers and programs.
struct Master {
    child: Child,
    dir: PathBuf,
    cfg: PathBuf,
    cli: PathBuf,
}

impl Master {
    /// `<bin> -W -S <dir>/master.sock -f <cfg> <extra>`.
    fn start(bin: &str, cfg: &str, extra: &[&str]) -> Master {
        Master::start_env(bin, cfg, extra, &[])
    }

    fn start_env(bin: &str, cfg: &str, extra: &[&str], env: &[(&str, &str)]) -> Master {
        let dir = tempdir("master");
        let path = dir.join("m.cfg");
        std::fs::write(&path, cfg).unwrap();
        let cli = dir.join("master.sock");
        let child = Command::new(bin)
            .args([
                "-W",
                "-S",
                cli.to_str().unwrap(),
                "-f",
                path.to_str().unwrap(),
            ])
            .args(extra)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.join("stderr")).unwrap())
            .spawn()
            .expect("start the master");
        let m = Master {
            child,
            dir,
            cfg: path,
            cli,
        };
        m.wait_worker();
        m
    }

    fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    fn signal(&self, sig: i32) {
        // SAFETY: kill(2) on the pid of a child this test started.
        unsafe {
            libc::kill(self.pid(), sig);
        }
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(self.dir.join("stderr")).unwrap_or_default()
    }

    /// One line to the master CLI, the answer (haproxy's answers once the
    /// client has finished writing).
    fn ask(&self, line: &str) -> String {
        self.try_ask(line).expect("the master CLI answers")
    }

    fn try_ask(&self, line: &str) -> Option<String> {
        let mut s = std::os::unix::net::UnixStream::connect(&self.cli).ok()?;
        // (haproxy's master executes itself again once its worker runs: a
        // client of the listener it had then is never answered.)
        s.set_read_timeout(Some(Duration::from_secs(3))).ok()?;
        s.write_all(line.as_bytes()).ok()?;
        s.shutdown(std::net::Shutdown::Write).ok()?;
        // (haproxy's master may reset the connection after its answer.)
        let mut out = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            match s.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => out.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break,
                Err(_) => return None,
            }
        }
        Some(String::from_utf8_lossy(&out).into_owned())
    }

    /// The pids of `show proc`'s rows under `heading` ("workers", "old
    /// workers", "programs").
    fn pids(&self, heading: &str) -> Vec<i32> {
        section_pids(&self.ask("show proc\n"), heading)
    }

    /// Waits until a current worker serves its runtime API through the
    /// master.
    fn wait_worker(&self) -> i32 {
        wait_for("a worker", Duration::from_secs(10), || {
            let info = self.try_ask("@1 show info\n")?;
            info.lines()
                .find_map(|l| l.strip_prefix("Pid: "))
                .and_then(|p| p.trim().parse().ok())
        })
    }

    /// Waits until the worker serving is another than `old`.
    fn wait_new_worker(&self, old: i32) -> i32 {
        wait_for("a new worker", Duration::from_secs(10), || {
            Some(self.wait_worker()).filter(|&p| p != old)
        })
    }

    fn wait_exit(&mut self, timeout: Duration) -> Option<i32> {
        wait_child(&mut self.child, timeout)
    }
}

impl Drop for Master {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            self.signal(libc::SIGTERM);
            if self.wait_exit(Duration::from_secs(5)).is_none() {
                let _ = self.child.kill();
            }
        }
        let _ = self.child.wait();
    }
}

fn section_pids(text: &str, heading: &str) -> Vec<i32> {
    let mut out = Vec::new();
    let mut inside = false;
    for l in text.lines() {
        if let Some(h) = l.strip_prefix("# ") {
            inside = h.trim() == heading;
            continue;
        }
        if inside {
            if let Some(p) = l.split_whitespace().next().and_then(|p| p.parse().ok()) {
                out.push(p);
            }
        }
    }
    out
}

/// `show proc` with pids, uptimes and versions masked.
fn masked_proc(text: &str) -> Vec<String> {
    text.lines()
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            match w.as_slice() {
                [pid, "master", n, "[failed:", f, _up, _v] if pid.parse::<i32>().is_ok() => {
                    format!("PID master {n} [failed: {f} UP V")
                }
                [pid, kind, n, _up, v] if pid.parse::<i32>().is_ok() => {
                    let v = if *v == "-" { "-" } else { "V" };
                    format!("PID {kind} {n} UP {v}")
                }
                _ => w.join(" "),
            }
        })
        .collect()
}

fn haproxy() -> &'static str {
    Haproxy::bin().expect("haproxy is not installed: tests/run installs it")
}

fn http_cfg(port: u16, extra_global: &str, body: &str, tail: &str) -> String {
    format!(
        "global\n{extra_global}defaults\n    mode http\n    timeout connect 2s\n    timeout client 5s\n    timeout server 5s\n\
         frontend fe\n    bind 127.0.0.1:{port}\n    http-request return status 200 content-type text/plain string {body}\n{tail}"
    )
}

fn get(port: u16) -> std::io::Result<String> {
    let mut c = std::net::TcpStream::connect(("127.0.0.1", port))?;
    c.set_read_timeout(Some(Duration::from_secs(5)))?;
    c.write_all(b"GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")?;
    let mut s = String::new();
    c.read_to_string(&mut s)?;
    match s.split_once("\r\n\r\n") {
        Some((head, body)) if head.starts_with("HTTP/1.1 200") => Ok(body.to_string()),
        _ => Err(std::io::Error::other(format!("bad answer: {s:?}"))),
    }
}

#[test]
fn master_cli_beside_haproxy() {
    let run = |bin: &str| {
        let port = free_port();
        let cfg = http_cfg(port, "", "ok", "program foo\n    command sleep 30\n");
        let m = Master::start(bin, &cfg, &[]);
        let worker = m.wait_worker();
        let mut out = masked_proc(&m.ask("show proc\n"));
        let info = m.ask("@1 show info; @1 show info\n");
        out.push(format!(
            "{} answers, Process_num 1: {}, worker's pid: {}",
            info.matches("Pid: ").count(),
            info.contains("\nProcess_num: 1\n"),
            info.contains(&format!("\nPid: {worker}\n"))
        ));
        let by_pid = m.ask(&format!("@!{worker} show info\n"));
        out.push(format!(
            "@!pid: {}",
            by_pid.contains(&format!("\nPid: {worker}\n"))
        ));
        out.push(
            m.ask(&format!("@!{} show info\n", m.pid()))
                .replace(&m.pid().to_string(), "MASTER"),
        );
        out.push(m.ask("@!1 show info\n"));
        // `@1` alone sends the next commands to the worker.
        let routed = m.ask("@1; show info; @; show proc\n");
        out.push(format!(
            "routed: {} {}",
            routed.contains(&format!("\nPid: {worker}\n")),
            routed.contains("# workers")
        ));
        out.push(m.ask("show cli level\n"));
        out.push(m.ask("user; reload\n"));
        // The prompt names the target.
        let text = m.ask("prompt\n@1\n@master\nquit\n");
        out.push(text.replace(&worker.to_string(), "WORKER"));
        out.push(format!("served: {}", get(port).unwrap_or_default()));
        out
    };
    let theirs = run(haproxy());
    let mine = run(WEIR);
    assert_eq!(mine, theirs, "weir's, then haproxy's");
}

#[test]
fn program_sections_need_master_worker_as_in_haproxy() {
    let cfg = "global\n    stats socket /tmp/nowhere.sock\nprogram foo\n    command sleep 1\n";
    let dir = tempdir("program");
    let path = dir.join("p.cfg");
    std::fs::write(&path, cfg).unwrap();
    let run = |bin: &str, extra: &[&str]| {
        let out = Command::new(bin)
            .args(extra)
            .args(["-c", "-f", path.to_str().unwrap()])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        (
            out.status.code(),
            err.contains("Can't use a 'program' section without master worker mode."),
        )
    };
    assert_eq!(run(WEIR, &[]), (Some(1), true));
    assert_eq!(run(haproxy(), &[]), (Some(1), true));
    assert_eq!(run(WEIR, &["-W"]).0, Some(0));
    assert_eq!(run(haproxy(), &["-W"]).0, Some(0));
}

#[test]
fn exit_codes_beside_haproxy() {
    let run = |bin: &str| {
        let mut codes = Vec::new();
        for sig in [libc::SIGINT, libc::SIGTERM] {
            let port = free_port();
            let mut m = Master::start(bin, &http_cfg(port, "", "ok", ""), &[]);
            m.signal(sig);
            codes.push(m.wait_exit(Duration::from_secs(10)));
        }
        // exit-on-failure: a worker killed takes the master down with its
        // status.
        let port = free_port();
        let mut m = Master::start(bin, &http_cfg(port, "", "ok", ""), &[]);
        let w = m.wait_worker();
        // SAFETY: kill(2) on a worker of a master this test started.
        unsafe {
            libc::kill(w, libc::SIGKILL);
        }
        codes.push(m.wait_exit(Duration::from_secs(10)));
        let said = m
            .stderr()
            .contains("exit-on-failure: killing every processes with SIGTERM");
        (codes, said)
    };
    let theirs = run(haproxy());
    assert_eq!(theirs, (vec![Some(130), Some(0), Some(137)], true));
    assert_eq!(run(WEIR), theirs);
}

/// A client of a `mode tcp` echo listener, its connection established
/// through the proxy (one byte echoed), held open.
fn held_client(port: u16) -> std::net::TcpStream {
    let mut c = client(port);
    c.write_all(b"x").unwrap();
    let mut b = [0u8; 1];
    c.read_exact(&mut b).unwrap();
    c
}

/// Requests on new connections from `clients` threads until `stop`: (ok,
/// failed).
fn load(
    port: u16,
    clients: usize,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<(usize, usize)> {
    std::thread::spawn(move || {
        let ok = Arc::new(AtomicUsize::new(0));
        let failed = Arc::new(AtomicUsize::new(0));
        let hs: Vec<_> = (0..clients)
            .map(|_| {
                let (ok, failed, stop) = (ok.clone(), failed.clone(), stop.clone());
                std::thread::spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        match get(port) {
                            Ok(_) => ok.fetch_add(1, Ordering::Relaxed),
                            Err(_) => failed.fetch_add(1, Ordering::Relaxed),
                        };
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        (ok.load(Ordering::Relaxed), failed.load(Ordering::Relaxed))
    })
}

#[test]
fn reloads_under_load_lose_nothing_and_never_bind_again() {
    let port = free_port();
    let m = Master::start(WEIR, &http_cfg(port, "", "v0", ""), &[]);
    let sockets = listen_inodes(port);
    assert!(!sockets.is_empty());
    let stop = Arc::new(AtomicBool::new(false));
    let l = load(port, 8, stop.clone());
    let mut worker = m.wait_worker();
    for i in 1..=6 {
        // Each reload serves a new body: the new worker read the new file.
        std::fs::write(&m.cfg, http_cfg(port, "", &format!("v{i}"), "")).unwrap();
        if i % 2 == 0 {
            m.signal(libc::SIGUSR2);
        } else {
            // The master CLI's `reload` closes the connection at once.
            assert_eq!(m.ask("reload\n"), "");
        }
        worker = m.wait_new_worker(worker);
        wait_for(
            "the new configuration served",
            Duration::from_secs(5),
            || (get(port).ok()? == format!("v{i}")).then_some(()),
        );
        assert_eq!(
            listen_inodes(port),
            sockets,
            "reload {i}: the listening sockets are the first worker's"
        );
    }
    stop.store(true, Ordering::Relaxed);
    let (ok, failed) = l.join().unwrap();
    assert!(ok > 100, "{ok} requests served");
    assert_eq!(failed, 0, "{failed} of {} requests failed", ok + failed);
    let proc_text = m.ask("show proc\n");
    assert!(proc_text.contains("6 [failed: 0]"), "{proc_text}");
    let err = m.stderr();
    assert_eq!(err.matches("Loading success.").count(), 7, "{err}");
    assert!(!err.contains("ALERT"), "{err}");
}

#[test]
fn a_failed_reload_keeps_the_running_worker() {
    let port = free_port();
    let m = Master::start(WEIR, &http_cfg(port, "", "good", ""), &[]);
    let worker = m.wait_worker();
    std::fs::write(&m.cfg, http_cfg(port, "", "bad", "    bogus-keyword\n")).unwrap();
    m.signal(libc::SIGUSR2);
    wait_for("the failure said", Duration::from_secs(10), || {
        m.stderr().contains("Loading failure!").then_some(())
    });
    assert!(m.stderr().contains("bogus-keyword"), "{}", m.stderr());
    let text = m.ask("show proc\n");
    assert!(text.contains("1 [failed: 1]"), "{text}");
    assert_eq!(m.pids("workers"), [worker]);
    assert_eq!(get(port).unwrap(), "good");
    // (haproxy prompts once more on `quit`.)
    assert_eq!(
        m.ask("prompt\nquit\n"),
        "master[ReloadFailed]> master[ReloadFailed]> "
    );
    // A worker that cannot start (its port is taken) is a failure too.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let other = taken.local_addr().unwrap().port();
    std::fs::write(
        &m.cfg,
        http_cfg(
            port,
            "",
            "good",
            &format!("frontend x\n    bind 127.0.0.1:{other}\n"),
        ),
    )
    .unwrap();
    m.signal(libc::SIGUSR2);
    wait_for("the second failure", Duration::from_secs(10), || {
        m.ask("show proc\n").contains("2 [failed: 2]").then_some(())
    });
    assert_eq!(m.pids("workers"), [worker]);
    assert_eq!(get(port).unwrap(), "good");
    // Fixed: the next reload serves it.
    std::fs::write(&m.cfg, http_cfg(port, "", "fixed", "")).unwrap();
    m.signal(libc::SIGUSR2);
    m.wait_new_worker(worker);
    wait_for("the fixed configuration", Duration::from_secs(5), || {
        (get(port).ok()? == "fixed").then_some(())
    });
}

#[test]
fn programs_restart_on_reload_unless_told_not_to_and_old_workers_meet_max_reloads() {
    // A tcp listener whose connections stay open keeps each old worker.
    let echo = Server::echo();
    let port = free_port();
    let cfg = format!(
        "global\n    mworker-max-reloads 1\ndefaults\n    mode tcp\n    timeout connect 2s\n    timeout client 30s\n    timeout server 30s\n\
         listen t\n    bind 127.0.0.1:{port}\n    server s 127.0.0.1:{}\n\
         program again\n    command sleep 30\nprogram once\n    command sleep 30\n    no option start-on-reload\n",
        echo.port()
    );
    let m = Master::start(WEIR, &cfg, &[]);
    let first = m.wait_worker();
    let programs = m.pids("programs");
    assert_eq!(programs.len(), 2);
    let held = held_client(port);
    m.signal(libc::SIGUSR2);
    let second = m.wait_new_worker(first);
    let after = m.pids("programs");
    assert_eq!(after.len(), 2, "{after:?}");
    assert!(
        after.contains(&programs[1]),
        "'once' kept: {programs:?} {after:?}"
    );
    assert!(
        !after.contains(&programs[0]),
        "'again' restarted: {programs:?} {after:?}"
    );
    assert_eq!(m.pids("old workers"), [first], "held by its connection");
    // A second reload: the first worker has lived through two, above 1.
    let held2 = held_client(port);
    m.signal(libc::SIGUSR2);
    let _third = m.wait_new_worker(second);
    wait_for(
        "the oldest worker terminated",
        Duration::from_secs(10),
        || {
            m.stderr()
                .contains(&format!(
                    "Former worker ({first}) exited with code 143 (Terminated)"
                ))
                .then_some(())
        },
    );
    assert_eq!(m.pids("old workers"), [second]);
    let mut held = held;
    let mut rest = Vec::new();
    held.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    assert_eq!(
        held.read_to_end(&mut rest).unwrap_or(0),
        0,
        "its connection closed"
    );
    drop(held2);
}

#[test]
fn systemd_notifications() {
    let dir = tempdir("notify");
    let path = dir.join("notify.sock");
    let sock = std::os::unix::net::UnixDatagram::bind(&path).unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let next = || {
        let mut buf = [0u8; 512];
        let n = sock.recv(&mut buf).expect("a notification");
        String::from_utf8_lossy(&buf[..n]).to_string()
    };
    let port = free_port();
    let mut m = Master::start_env(
        WEIR,
        &http_cfg(port, "", "ok", ""),
        &["-Ws"],
        &[("NOTIFY_SOCKET", path.to_str().unwrap())],
    );
    let ready = next();
    assert!(ready.starts_with("READY=1\n"), "{ready}");
    assert!(ready.contains(&format!("MAINPID={}", m.pid())), "{ready}");
    m.signal(libc::SIGUSR2);
    assert_eq!(next(), "RELOADING=1");
    assert!(next().starts_with("READY=1\n"));
    // The workers do not see the variable (only the master notifies).
    let env = m.ask("@1 show env NOTIFY_SOCKET\n");
    assert!(env.starts_with("Variable not found"), "{env}");
    m.signal(libc::SIGTERM);
    assert_eq!(next(), "STOPPING=1");
    assert_eq!(m.wait_exit(Duration::from_secs(10)), Some(0));
}

#[test]
fn old_workers_answer_through_their_pid() {
    let echo = Server::echo();
    let port = free_port();
    let cfg = format!(
        "defaults\n    mode tcp\n    timeout connect 2s\n    timeout client 30s\n    timeout server 30s\n\
         listen t\n    bind 127.0.0.1:{port}\n    server s 127.0.0.1:{}\n",
        echo.port()
    );
    let m = Master::start(WEIR, &cfg, &[]);
    let first = m.wait_worker();
    let held = held_client(port);
    m.signal(libc::SIGUSR2);
    let second = m.wait_new_worker(first);
    // The old worker answers through its pid, and says it is stopping
    // once it has taken the master's soft-stop signal (it may answer
    // just before).
    let old = wait_for("the old worker stopping", Duration::from_secs(5), || {
        let old = m.ask(&format!("@!{first} show info\n"));
        assert!(old.contains(&format!("\nPid: {first}\n")), "{old}");
        old.contains("\nStopping: 1\n").then_some(old)
    });
    assert!(old.contains("\nStopping: 1\n"), "{old}");
    let new = m.ask("@1 show info\n");
    assert!(new.contains(&format!("\nPid: {second}\n")), "{new}");
    drop(held);
    wait_for("the old worker gone", Duration::from_secs(10), || {
        m.pids("old workers").is_empty().then_some(())
    });
    assert!(m
        .ask(&format!("@!{first} show info\n"))
        .starts_with("Can't find the target PID"));
}

#[test]
fn stick_tables_survive_a_reload_through_the_local_peer() {
    let (port, peer) = (free_port(), free_port());
    let cfg = format!(
        "global\n    localpeer A\n\
         defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         peers p\n    peer A 127.0.0.1:{peer}\n    table t type string size 100 store http_req_cnt\n\
         frontend fe\n    bind 127.0.0.1:{port}\n\
         \x20   http-request track-sc0 str(k) table p/t\n\
         \x20   http-request return status 200 content-type text/plain string up\n"
    );
    let m = Master::start(WEIR, &cfg, &[]);
    let first = m.wait_worker();
    for _ in 0..4 {
        assert_eq!(get(port).unwrap(), "up");
    }
    let count = |m: &Master| {
        m.ask("@1 show table p/t\n")
            .lines()
            .find_map(|l| l.split("http_req_cnt=").nth(1).map(str::to_string))
    };
    assert_eq!(count(&m).as_deref(), Some("4"));
    m.signal(libc::SIGUSR2);
    m.wait_new_worker(first);
    // The old worker pushes its entries to the new one as it leaves.
    wait_for(
        "the counter in the new worker",
        Duration::from_secs(10),
        || (count(&m).as_deref() == Some("4")).then_some(()),
    );
    assert_eq!(get(port).unwrap(), "up");
    wait_for("one more", Duration::from_secs(5), || {
        (count(&m).as_deref() == Some("5")).then_some(())
    });
}

#[test]
fn a_reload_with_an_unreadable_certificate_keeps_the_running_worker() {
    let port = free_port();
    let m = Master::start(WEIR, &http_cfg(port, "", "good", ""), &[]);
    let worker = m.wait_worker();
    let missing = m.dir.join("missing.pem");
    std::fs::write(
        &m.cfg,
        http_cfg(
            port,
            "",
            "bad",
            &format!(
                "frontend tls\n    bind 127.0.0.1:{} ssl crt {}\n",
                free_port(),
                missing.display()
            ),
        ),
    )
    .unwrap();
    m.signal(libc::SIGUSR2);
    wait_for("the failure", Duration::from_secs(10), || {
        m.ask("show proc\n").contains("1 [failed: 1]").then_some(())
    });
    assert!(m.stderr().contains("missing.pem"), "{}", m.stderr());
    assert_eq!(m.pids("workers"), [worker]);
    assert_eq!(get(port).unwrap(), "good");
}

/// A TLS 1.3 session with one request: with `-sess_out` the session is
/// saved, with `-sess_in` resumed; s_client's output.
fn tls_request(port: u16, sess: &std::path::Path, save: bool) -> String {
    let mut child = Command::new("openssl")
        .args([
            "s_client",
            "-tls1_3",
            "-connect",
            &format!("127.0.0.1:{port}"),
        ])
        .args(["-servername", "www.example.com", "-ign_eof"])
        .arg(if save { "-sess_out" } else { "-sess_in" })
        .arg(sess)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("openssl s_client");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn tls_cfg(port: u16, crt: &str, extra_bind: &str) -> String {
    format!(
        "defaults\n    mode http\n    timeout connect 2s\n    timeout client 5s\n    timeout server 5s\n\
         frontend fe\n    bind 127.0.0.1:{port} ssl crt {crt}{extra_bind}\n\
         \x20   http-request return status 200 content-type text/plain string up\n"
    )
}

#[test]
fn tls_sessions_resume_across_reloads() {
    let pki = crate::common::tls::Pki::new();
    let crt = pki.path("certs/1-www.pem");
    let crt = crt.as_str();
    // Master-worker: the master gives each worker the same ticket secret.
    let port = free_port();
    let m = Master::start(WEIR, &tls_cfg(port, crt, ""), &[]);
    let first = m.wait_worker();
    let sess = m.dir.join("w.sess");
    let t = tls_request(port, &sess, true);
    assert!(t.contains("up") && t.contains("New, TLSv1.3"), "{t}");
    m.signal(libc::SIGUSR2);
    m.wait_new_worker(first);
    let t = tls_request(port, &sess, false);
    assert!(t.contains("Reused, TLSv1.3") && t.contains("up"), "{t}");

    // -sf: the old process gives the new one its secret.
    let port = free_port();
    let mut old = Weir::start(&tls_cfg(port, crt, ""), port);
    let sess = old.dir.join("sf.sess");
    assert!(tls_request(port, &sess, true).contains("New, TLSv1.3"));
    let _new = Weir::spawn(&tls_cfg(port, crt, ""), &["-sf", &old.pid().to_string()]);
    assert_eq!(old.wait_exit(Duration::from_secs(5)), Some(0));
    let t = tls_request(port, &sess, false);
    assert!(t.contains("Reused, TLSv1.3"), "{t}");
}

#[test]
fn tls_ticket_keys_files_are_shared_by_processes() {
    let pki = crate::common::tls::Pki::new();
    let crt = pki.path("certs/1-www.pem");
    let crt = crt.as_str();
    let dir = tempdir("ticket-keys");
    let keys = dir.join("keys");
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "for i in 1 2 3; do openssl rand 80 | openssl base64 -A; echo; done > {}",
            keys.display()
        ))
        .status()
        .unwrap();
    assert!(out.success());
    let bind = format!(" tls-ticket-keys {}", keys.display());
    let (a, b) = (free_port(), free_port());
    let _wa = Weir::start(&tls_cfg(a, crt, &bind), a);
    let _wb = Weir::start(&tls_cfg(b, crt, &bind), b);
    let sess = dir.join("s");
    assert!(tls_request(a, &sess, true).contains("New, TLSv1.3"));
    let t = tls_request(b, &sess, false);
    assert!(t.contains("Reused, TLSv1.3"), "{t}");
    // A process without the file does not open them.
    let c = free_port();
    let _wc = Weir::start(&tls_cfg(c, crt, ""), c);
    assert!(tls_request(c, &sess, false).contains("New, TLSv1.3"));
}

#[test]
fn server_states_saved_through_the_master_cli_survive_a_reload() {
    // haproxy's documented way: `show servers state` into the state file,
    // then reload; the new worker starts from it.
    let origin = Server::echo();
    let port = free_port();
    let dir = tempdir("mw-state");
    let state = dir.join("state");
    let cfg = format!(
        "global\n    master-worker\n    server-state-file {}\n\
         defaults\n    mode tcp\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n    load-server-state-from-file global\n\
         listen t\n    bind 127.0.0.1:{port}\n    server s1 127.0.0.1:{o}\n    server s2 127.0.0.1:{o}\n",
        state.display(),
        o = origin.port()
    );
    // `master-worker` in the configuration, without -W on the command line.
    let cli = dir.join("master.sock");
    let mut w = Weir::spawn(&cfg, &["-S", cli.to_str().unwrap()]);
    let m = |line: &str| {
        wait_for("the master CLI", Duration::from_secs(10), || {
            let mut s = std::os::unix::net::UnixStream::connect(&cli).ok()?;
            s.write_all(line.as_bytes()).ok()?;
            let mut out = String::new();
            s.read_to_string(&mut out).ok()?;
            Some(out)
        })
    };
    let first = wait_for("a worker", Duration::from_secs(10), || {
        m("@1 show info\n")
            .lines()
            .find_map(|l| l.strip_prefix("Pid: ").map(str::to_string))
    });
    assert_eq!(m("@1 set server t/s2 state maint\n"), "\n");
    std::fs::write(&state, m("@1 show servers state\n")).unwrap();
    w.signal(libc::SIGUSR2);
    wait_for("the new worker", Duration::from_secs(10), || {
        m("@1 show info\n")
            .lines()
            .find_map(|l| l.strip_prefix("Pid: "))
            .filter(|p| *p != first)
            .map(|_| ())
    });
    let stat = m("@1 show stat\n");
    let s2 = stat
        .lines()
        .find(|l| l.starts_with("t,s2,"))
        .unwrap_or_default()
        .to_string();
    assert!(s2.contains(",MAINT,"), "{s2}");
    // The master's stop stops the worker.
    w.signal(libc::SIGTERM);
    assert_eq!(w.wait_exit(Duration::from_secs(10)), Some(0));
}

#[test]
fn a_worker_whose_master_is_gone_finishes() {
    let port = free_port();
    let mut m = Master::start(WEIR, &http_cfg(port, "", "ok", ""), &[]);
    let worker = m.wait_worker();
    m.child.kill().unwrap();
    m.wait_exit(Duration::from_secs(5));
    wait_for(
        "the orphaned worker to exit",
        Duration::from_secs(10),
        || {
            // SAFETY: signal 0 only checks that the process exists.
            let alive = unsafe { libc::kill(worker, 0) } == 0
                && !std::fs::read_to_string(format!("/proc/{worker}/stat"))
                    .unwrap_or_default()
                    .contains(") Z ");
            (!alive).then_some(())
        },
    );
}

#[test]
fn a_daemon_master_writes_its_pid_and_serves() {
    let port = free_port();
    let dir = tempdir("mw-daemon");
    let (pidfile, cli) = (dir.join("pid"), dir.join("m.sock"));
    let cfg = dir.join("d.cfg");
    std::fs::write(&cfg, http_cfg(port, "", "ok", "")).unwrap();
    let out = Command::new(WEIR)
        .args([
            "-W",
            "-D",
            "-p",
            pidfile.to_str().unwrap(),
            "-S",
            cli.to_str().unwrap(),
        ])
        .args(["-f", cfg.to_str().unwrap()])
        .stdin(Stdio::null())
        .stderr(std::fs::File::create(dir.join("stderr")).unwrap())
        .status()
        .unwrap();
    assert!(
        out.success(),
        "the launcher exits 0 once the master is in the background"
    );
    let master: i32 = wait_for("the pidfile", Duration::from_secs(5), || {
        std::fs::read_to_string(&pidfile).ok()?.trim().parse().ok()
    });
    let proc_text = wait_for("the master CLI", Duration::from_secs(10), || {
        let t = ask_quietly(&cli, "show proc\n")?;
        t.contains("# workers\n").then_some(t)
    });
    assert!(
        proc_text.contains(&format!("\n{master:<15} master")),
        "{proc_text}"
    );
    wait_for("the worker to serve", Duration::from_secs(10), || {
        get(port).ok().filter(|b| b == "ok")
    });
    // SAFETY: kill(2) on the master this test started.
    unsafe {
        libc::kill(master, libc::SIGTERM);
    }
    wait_for("the master to exit", Duration::from_secs(10), || {
        // SAFETY: signal 0 only checks that the process exists.
        (unsafe { libc::kill(master, 0) } != 0).then_some(())
    });
    let err = std::fs::read_to_string(dir.join("stderr")).unwrap();
    assert!(
        !err.contains("Loading success"),
        "a daemon writes nothing after it detached: {err}"
    );
}

fn ask_quietly(sock: &std::path::Path, line: &str) -> Option<String> {
    let mut s = std::os::unix::net::UnixStream::connect(sock).ok()?;
    s.write_all(line.as_bytes()).ok()?;
    let mut out = String::new();
    s.read_to_string(&mut out).ok()?;
    Some(out)
}
