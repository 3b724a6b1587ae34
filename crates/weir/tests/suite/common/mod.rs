//! Test harness: starts the real `weir` binary on a generated configuration
//! and real servers on 127.0.0.1 ports chosen at run time. Waits poll with a
//! deadline; nothing sleeps to synchronise.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

pub mod h2;
pub mod http;
pub mod raw;
pub mod tls;

pub const WEIR: &str = env!("CARGO_BIN_EXE_weir");

/// Configuration head logging `option tcplog` lines to weir's stdout.
pub const LOG_TCP: &str =
    "global\n  log stdout format raw local0\ndefaults\n  mode tcp\n  log global\n  option tcplog\n";

/// A fresh directory under the target dir for one test.
pub fn tempdir(name: &str) -> PathBuf {
    let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let d = base.join(format!(
        "{name}-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}
static COUNTER: AtomicUsize = AtomicUsize::new(0);

/// True when a socket listens on `port` (any address, IPv4 or IPv6).
/// Whether something listens on IPv4 address `addr` itself (not only on
/// its port, as [`listening`] tells).
pub fn listening_on(addr: std::net::SocketAddrV4) -> bool {
    let needle = format!(
        "{:08X}:{:04X}",
        u32::from_le_bytes(addr.ip().octets()),
        addr.port()
    );
    std::fs::read_to_string("/proc/net/tcp")
        .unwrap_or_default()
        .lines()
        .skip(1)
        .any(|l| {
            let cols: Vec<&str> = l.split_whitespace().collect();
            cols.len() > 3 && cols[1] == needle && cols[3] == "0A"
        })
}

pub fn listening(port: u16) -> bool {
    let needle = format!(":{port:04X} ");
    ["/proc/net/tcp", "/proc/net/tcp6"].iter().any(|f| {
        std::fs::read_to_string(f)
            .unwrap_or_default()
            .lines()
            .skip(1)
            .any(|l| {
                let cols: Vec<&str> = l.split_whitespace().collect();
                cols.len() > 3 && format!("{} ", cols[1]).ends_with(&needle) && cols[3] == "0A"
            })
    })
}

/// A port that was free a moment ago, never the same twice in one test
/// process, and below the kernel's ephemeral range (32768 and up), where
/// the listeners that tests bind to port 0 and the source ports of their
/// connections come from: a port handed out here cannot be taken by
/// another test before weir binds it.
pub fn free_port() -> u16 {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    // Each test process starts at its own place in 20000..32000.
    let base = 20_000 + (std::process::id() as usize * 97) % 12_000;
    loop {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let port = (20_000 + (base - 20_000 + n) % 12_000) as u16;
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
}

/// Polls `f` until it returns Some or the deadline passes.
pub fn wait_for<T>(what: &str, timeout: Duration, mut f: impl FnMut() -> Option<T>) -> T {
    let end = Instant::now() + timeout;
    loop {
        if let Some(v) = f() {
            return v;
        }
        if Instant::now() > end {
            panic!("timed out waiting for {what}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A running weir process.
pub struct Weir {
    pub child: Child,
    pub dir: PathBuf,
    pub cfg: PathBuf,
}

impl Weir {
    /// Writes `cfg` and starts `weir -db -f cfg`, then waits until `port`
    /// accepts connections.
    pub fn start(cfg: &str, port: u16) -> Weir {
        let mut w = Weir::spawn(cfg, &[]);
        w.wait_listening(port);
        w
    }
    pub fn spawn(cfg: &str, extra: &[&str]) -> Weir {
        let dir = tempdir("weir");
        let path = dir.join("test.cfg");
        std::fs::write(&path, cfg).unwrap();
        let child = Command::new(WEIR)
            .args(["-db", "-f", path.to_str().unwrap()])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(dir.join("stdout")).unwrap())
            .stderr(std::fs::File::create(dir.join("stderr")).unwrap())
            .spawn()
            .expect("start weir");
        Weir {
            child,
            dir,
            cfg: path,
        }
    }
    /// Waits until something listens on `port` (read from /proc/net/tcp*:
    /// a probe connection would reach the servers and disturb counts, a
    /// probe bind could steal the port from weir). Fails at once, with
    /// weir's stderr, if weir exits instead.
    pub fn wait_listening(&mut self, port: u16) {
        wait_for("weir to listen", Duration::from_secs(10), || {
            if let Ok(Some(st)) = self.child.try_wait() {
                panic!("weir exited ({st}) before listening: {}", self.stderr());
            }
            listening(port).then_some(())
        });
    }
    pub fn pid(&self) -> i32 {
        self.child.id() as i32
    }
    pub fn stderr(&self) -> String {
        std::fs::read_to_string(self.dir.join("stderr")).unwrap_or_default()
    }
    pub fn stdout(&self) -> String {
        std::fs::read_to_string(self.dir.join("stdout")).unwrap_or_default()
    }
    /// Waits until stdout or stderr contains `needle`.
    pub fn wait_output(&self, needle: &str, timeout: Duration) -> String {
        wait_for(&format!("'{needle}' in weir's output"), timeout, || {
            let all = format!("{}{}", self.stdout(), self.stderr());
            all.contains(needle).then_some(all)
        })
    }
    pub fn signal(&self, sig: i32) {
        // SAFETY: kill(2) on the pid of a child this harness started.
        unsafe {
            libc::kill(self.pid(), sig);
        }
    }
    /// Waits for the process to exit and returns its status code.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<i32> {
        wait_child(&mut self.child, timeout)
    }
}

/// Waits for `child` to exit: its status code (`None` past `timeout`, or
/// when a signal ended it).
pub fn wait_child(child: &mut Child, timeout: Duration) -> Option<i32> {
    let end = Instant::now() + timeout;
    loop {
        if let Ok(Some(st)) = child.try_wait() {
            return st.code();
        }
        if Instant::now() > end {
            return None;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The inodes of the sockets listening on 127.0.0.1:`port` (one per
/// socket, whichever process holds it).
pub fn listen_inodes(port: u16) -> std::collections::BTreeSet<String> {
    let text = std::fs::read_to_string("/proc/net/tcp").unwrap();
    let want = format!("0100007F:{port:04X}");
    text.lines()
        .skip(1)
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|f| f.len() > 9 && f[1] == want && f[3] == "0A")
        .map(|f| f[9].to_string())
        .collect()
}

impl Drop for Weir {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `weir` with arguments and returns (exit code, stdout, stderr).
pub fn run_weir(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(WEIR)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run weir");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Writes a config file and runs `weir -c -f` on it.
pub fn check_cfg(cfg: &str) -> (i32, String, String) {
    let dir = tempdir("check");
    let path = dir.join("haproxy.cfg");
    std::fs::write(&path, cfg).unwrap();
    run_weir(&["-c", "-f", path.to_str().unwrap()])
}

/// Whether Debian's haproxy takes `cfg` (`haproxy -c`).
pub fn haproxy_accepts(cfg: &str) -> bool {
    let bin = Haproxy::bin().expect("haproxy is not installed: tests/run installs it");
    let dir = tempdir("haproxy-check");
    let path = dir.join("haproxy.cfg");
    std::fs::write(&path, cfg).unwrap();
    std::process::Command::new(bin)
        .args(["-c", "-q", "-f"])
        .arg(&path)
        .output()
        .unwrap()
        .status
        .success()
}

/// A test server on 127.0.0.1 running `handler` for each connection in its
/// own thread; counts connections. Stops accepting when dropped.
pub struct Server {
    pub addr: SocketAddr,
    pub accepted: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl Server {
    pub fn start(handler: impl Fn(TcpStream) + Send + Sync + 'static) -> Server {
        Server::start_on(TcpListener::bind("127.0.0.1:0").unwrap(), handler)
    }
    pub fn start_on(l: TcpListener, handler: impl Fn(TcpStream) + Send + Sync + 'static) -> Server {
        let addr = l.local_addr().unwrap();
        l.set_nonblocking(true).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let accepted = Arc::new(AtomicUsize::new(0));
        let (s2, a2) = (stop.clone(), accepted.clone());
        let handler = Arc::new(handler);
        let handle = std::thread::spawn(move || {
            while !s2.load(Ordering::Relaxed) {
                match l.accept() {
                    Ok((c, _)) => {
                        a2.fetch_add(1, Ordering::Relaxed);
                        c.set_nonblocking(false).unwrap();
                        let h = handler.clone();
                        std::thread::spawn(move || h(c));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(2)),
                }
            }
            // Serve what the kernel already queued, as a server that stops
            // gracefully does, then close the listener.
            while let Ok((c, _)) = l.accept() {
                a2.fetch_add(1, Ordering::Relaxed);
                c.set_nonblocking(false).unwrap();
                let h = handler.clone();
                std::thread::spawn(move || h(c));
            }
        });
        Server {
            addr,
            accepted,
            stop,
            handle: Some(handle),
        }
    }
    /// Echoes everything, half-closes after the client's FIN.
    pub fn echo() -> Server {
        Server::start(|mut c| {
            let mut buf = vec![0u8; 65536];
            loop {
                match c.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        if c.write_all(&buf[..n]).is_err() {
                            return;
                        }
                    }
                }
            }
            let _ = c.shutdown(std::net::Shutdown::Write);
        })
    }
    /// Writes `name` then closes.
    pub fn named(name: &'static str) -> Server {
        Server::start(move |mut c| {
            let _ = c.write_all(name.as_bytes());
        })
    }
    pub fn port(&self) -> u16 {
        self.addr.port()
    }
    /// Stops accepting and closes the listening socket.
    pub fn stop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Connects to weir's port and reads everything until EOF.
pub fn fetch(port: u16) -> std::io::Result<String> {
    let mut c = TcpStream::connect(("127.0.0.1", port))?;
    c.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut s = String::new();
    c.read_to_string(&mut s)?;
    Ok(s)
}

/// The test backend and load generator (`target/release/weir-bench`,
/// built with the workspace).
pub fn weir_bench() -> PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|p| Some(p.parent()?.parent()?.join("weir-bench")))
        .filter(|p| p.exists())
        .expect("weir-bench is built with the workspace")
}

/// A `weir-bench serve` process, stopped when dropped.
pub struct Backend(Child);

impl Backend {
    /// Starts `weir-bench serve --mode <mode>` on `port` and waits for it.
    pub fn start(mode: &str, port: u16) -> Backend {
        let child = Command::new(weir_bench())
            .args([
                "serve",
                "--listen",
                &format!("127.0.0.1:{port}"),
                "--mode",
                mode,
            ])
            .stdout(Stdio::null())
            .spawn()
            .expect("weir-bench serve");
        let b = Backend(child);
        wait_for("the backend", Duration::from_secs(10), || {
            listening(port).then_some(())
        });
        b
    }
}

impl Drop for Backend {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A UDP syslog receiver.
pub struct Syslog {
    pub sock: UdpSocket,
    pub lines: Arc<Mutex<Vec<String>>>,
}

impl Syslog {
    pub fn start() -> Syslog {
        let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
        sock.set_read_timeout(Some(Duration::from_millis(50)))
            .unwrap();
        let lines = Arc::new(Mutex::new(Vec::new()));
        let (s2, l2) = (sock.try_clone().unwrap(), lines.clone());
        std::thread::spawn(move || {
            let mut buf = [0u8; 65536];
            loop {
                match s2.recv(&mut buf) {
                    // Each message ends with a line end, as haproxy's: a
                    // line without one shows it.
                    Ok(n) => l2.lock().unwrap().push(match buf[..n].strip_suffix(b"\n") {
                        Some(m) => String::from_utf8_lossy(m).into_owned(),
                        None => format!("{}<no line end>", String::from_utf8_lossy(&buf[..n])),
                    }),
                    Err(e)
                        if e.kind() == std::io::ErrorKind::WouldBlock
                            || e.kind() == std::io::ErrorKind::TimedOut => {}
                    Err(_) => return,
                }
            }
        });
        Syslog { sock, lines }
    }
    pub fn port(&self) -> u16 {
        self.sock.local_addr().unwrap().port()
    }
    /// Waits for the `i`th line (from 0) holding `marker`, and gives what
    /// follows the marker in it.
    pub fn nth_after(&self, marker: &str, i: usize) -> String {
        wait_for(
            &format!("log line {i} with '{marker}'"),
            Duration::from_secs(5),
            || {
                let lines = self.lines.lock().unwrap();
                let mut found = lines.iter().filter_map(|l| l.split_once(marker));
                found.nth(i).map(|(_, m)| m.to_string())
            },
        )
    }
    /// Waits for a line containing `needle`.
    pub fn wait_line(&self, needle: &str, timeout: Duration) -> String {
        wait_for(&format!("a syslog line with '{needle}'"), timeout, || {
            self.lines
                .lock()
                .unwrap()
                .iter()
                .find(|l| l.contains(needle))
                .cloned()
        })
    }
}

/// Deterministic pseudo-random bytes.
pub fn random_bytes(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

/// weir in front of one server: a `listen px` section on a fresh port with
/// `server <name> 127.0.0.1:<server_port> <opts>`. Returns weir and its port.
pub fn proxy_to(name: &str, server_port: u16, opts: &str) -> (Weir, u16) {
    let port = free_port();
    let line = format!(
        "    server {name} 127.0.0.1:{server_port}{}{opts}",
        if opts.is_empty() { "" } else { " " }
    );
    (Weir::start(&listen_cfg(port, "", "", &line), port), port)
}

/// A client connection to weir's port with a 5 s read timeout.
pub fn client(port: u16) -> TcpStream {
    let c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    c
}

/// A minimal tcp listen section forwarding `port` to `servers` lines.
pub fn listen_cfg(port: u16, extra_global: &str, extra: &str, servers: &str) -> String {
    format!(
        "global\n    nbthread 2\n{extra_global}\ndefaults\n    mode tcp\n    timeout connect 1s\n    timeout client 10s\n    timeout server 10s\n\
         listen px\n    bind 127.0.0.1:{port}\n{extra}\n{servers}\n"
    )
}

/// Debian's `haproxy`, run on the same configuration as weir for
/// differential tests; stopped when dropped.
pub struct Haproxy(Child);

impl Drop for Haproxy {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Haproxy {
    /// The binary, when installed (`.ci/run` installs it).
    pub fn bin() -> Option<&'static str> {
        ["/usr/sbin/haproxy", "/usr/bin/haproxy"]
            .into_iter()
            .find(|p| std::path::Path::new(p).exists())
    }
    pub fn pid(&self) -> i32 {
        self.0.id() as i32
    }
    /// Starts haproxy on `cfg` and waits until `port` listens; `None` when
    /// haproxy is not installed.
    pub fn start(cfg: &str, port: u16) -> Option<Haproxy> {
        let bin = Haproxy::bin()?;
        let dir = tempdir("haproxy");
        let path = dir.join(format!("h{port}.cfg"));
        std::fs::write(&path, cfg).unwrap();
        let h = Haproxy(
            Command::new(bin)
                .args(["-db", "-q", "-f", path.to_str().unwrap()])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap(),
        );
        wait_for("haproxy to listen", Duration::from_secs(10), || {
            listening(port).then_some(())
        });
        Some(h)
    }
}

/// How a differential test starts the proxy under test on a
/// configuration that listens on a port (stopped when dropped).
pub type Start<'a> = &'a dyn Fn(&str, u16) -> Box<dyn std::any::Any>;

/// Runs `run` with Debian's haproxy, then with weir; asserts both saw the
/// same, and gives haproxy's.
pub fn beside_haproxy<T: PartialEq + std::fmt::Debug>(run: impl Fn(Start<'_>) -> T) -> T {
    Haproxy::bin().expect("haproxy is not installed: tests/run installs it");
    let theirs = run(&|cfg, port| Box::new(Haproxy::start(cfg, port).unwrap()));
    let mine = run(&|cfg, port| Box::new(Weir::start(cfg, port)));
    assert_eq!(mine, theirs, "weir's, then haproxy's");
    theirs
}

/// `show stat` on a stats socket (weir's or haproxy's): one map of column
/// to value per row.
pub fn show_stat(sock: &std::path::Path) -> Vec<std::collections::HashMap<String, String>> {
    let t = ask(sock, "show stat\n");
    let mut lines = t.lines();
    let head: Vec<String> = lines
        .next()
        .unwrap_or_default()
        .trim_start_matches("# ")
        .split(',')
        .map(str::to_string)
        .collect();
    lines
        .filter(|l| !l.is_empty())
        .map(|l| {
            head.iter()
                .cloned()
                .zip(l.split(',').map(str::to_string))
                .collect()
        })
        .collect()
}

/// `show servers state [<be>]` lines (`be` empty: every backend) without
/// the seconds since the last change, the one column that depends on when
/// it is asked.
pub fn servers_state_lines(sock: &std::path::Path, be: &str) -> Vec<String> {
    ask(sock, &format!("show servers state {be}\n"))
        .lines()
        .skip(2)
        .filter(|l| !l.is_empty())
        .map(|l| {
            let mut f: Vec<&str> = l.split(' ').collect();
            if let Some(t) = f.get_mut(9) {
                *t = "-";
            }
            f.join(" ")
        })
        .collect()
}

/// One line to a unix socket (weir's `stats socket`), the whole answer back.
pub fn ask(sock: &std::path::Path, line: &str) -> String {
    // (A proxy may open its stats socket just after its listeners.)
    let mut u = wait_for("the stats socket", Duration::from_secs(5), || {
        std::os::unix::net::UnixStream::connect(sock).ok()
    });
    u.write_all(line.as_bytes()).unwrap();
    let mut s = String::new();
    u.read_to_string(&mut s).unwrap();
    s
}

/// `show servers conn` once no server connection is in use (`used_cur`
/// 0 on every line): each finished exchange has left its connection idle
/// or closed it.
pub fn conns_settled(sock: &std::path::Path) -> String {
    wait_for(
        "every server connection idle or closed",
        Duration::from_secs(5),
        || {
            let d = ask(sock, "show servers conn\n");
            let busy = d
                .lines()
                .filter(|l| !l.starts_with('#') && !l.is_empty())
                .any(|l| l.split(' ').nth(6) != Some("0"));
            (!busy && d.starts_with('#')).then_some(d)
        },
    )
}

/// The `show sess` line of the client at `src`, once it has `part`.
pub fn sess_line(sock: &std::path::Path, src: &str, part: &str) -> String {
    wait_for(
        &format!("the session of {src} with '{part}'"),
        Duration::from_secs(5),
        || {
            ask(sock, "show sess\n")
                .lines()
                .find(|l| l.contains(&format!("src={src} ")) && l.contains(part))
                .map(str::to_string)
        },
    )
}

/// Reads a request head (through its blank line); `None` when the peer
/// closes or fails first.
pub fn read_head(c: &mut TcpStream) -> Option<String> {
    let mut buf = Vec::new();
    let mut b = [0u8; 4096];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
        match c.read(&mut b) {
            Ok(0) | Err(_) => return None,
            Ok(n) => buf.extend_from_slice(&b[..n]),
        }
    }
    Some(String::from_utf8_lossy(&buf).into_owned())
}

/// Sends one raw request (it should ask `Connection: close`) and reads
/// all that comes back: `(status, head, body)`, or `None` when the
/// connection closed without an answer.
pub fn exchange_once(port: u16, raw: &str) -> Option<(String, String, String)> {
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let _ = c.write_all(raw.as_bytes());
    let mut got = Vec::new();
    let _ = c.read_to_end(&mut got);
    if got.is_empty() {
        return None;
    }
    let text = String::from_utf8_lossy(&got).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head.split(' ').nth(1).unwrap_or("?").to_string();
    Some((status, head.to_string(), body.to_string()))
}

/// An origin answering each request with the `x-` header lines it got
/// (lower-cased, `;`-joined), after its request line when `line` is set.
pub fn x_headers_origin(line: bool) -> Server {
    Server::start(move |mut c| {
        let Some(head) = read_head(&mut c) else {
            return;
        };
        let head = head.to_ascii_lowercase();
        let first = head.lines().take(usize::from(line));
        let xs = head.lines().filter(|l| l.starts_with("x-")).map(str::trim);
        let body = first.chain(xs).collect::<Vec<_>>().join(";");
        let _ = c.write_all(
            format!(
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            )
            .as_bytes(),
        );
    })
}

/// `show table`'s text without what differs by nature: entry addresses
/// and the milliseconds left before expiry.
pub fn normalized(text: &str) -> String {
    text.lines()
        .map(|l| {
            let l = match l.split_once(": key=") {
                Some((_, rest)) if l.starts_with("0x") => format!("0x: key={rest}"),
                _ => l.to_string(),
            };
            l.split(' ')
                .map(|w| if w.starts_with("exp=") { "exp=?" } else { w })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect::<Vec<_>>()
        .join("\n")
}
