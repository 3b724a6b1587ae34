//! FastCGI applications (`fcgi-app`, `use-fcgi-app`, `proto fcgi`) in
//! front of a real PHP-FPM: the parameters PHP sees, bodies both ways,
//! statuses, HEAD, the 500 for a path `path-info` refuses, compared with
//! Debian's haproxy 2.6 on the same requests; `log-stderr` (weir alone:
//! haproxy 2.6.12 crashes or logs garbage there).

use crate::common::http::read_response;
use crate::common::*;
use std::io::{BufReader, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A PHP-FPM pool on a port, serving the scripts of a fresh document
/// root; stopped when dropped.
struct PhpFpm {
    child: Child,
    /// Where it listens, as a server line names it.
    addr: String,
    root: PathBuf,
}

impl Drop for PhpFpm {
    fn drop(&mut self) {
        // SIGTERM: the master stops its workers too (a SIGKILL would
        // leave them running).
        // SAFETY: kill(2) on the pid of a child this test started.
        unsafe {
            libc::kill(self.child.id() as i32, libc::SIGTERM);
        }
        if wait_child(&mut self.child, Duration::from_secs(5)).is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Debian's PHP-FPM (`php-fpm<version>`), which tests/run installs.
fn php_fpm_bin() -> PathBuf {
    std::fs::read_dir("/usr/sbin")
        .ok()
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("php-fpm"))
        })
        .expect("php-fpm is not installed: tests/run installs it (Debian's php-fpm)")
}

/// `env.php` prints the CGI variables PHP got (sorted, without the
/// request time) and the body it read; `status.php` answers 404 with a
/// text body; `err.php` writes a line on `FCGI_STDERR`; `big.php` tells
/// the size and MD5 of the body it read, then answers `n` bytes.
const SCRIPTS: &[(&str, &str)] = &[
    (
        "env.php",
        "<?php\nheader('X-Script: env');\n$k = array_filter(array_keys($_SERVER), fn($k) => !in_array($k, ['REQUEST_TIME', 'REQUEST_TIME_FLOAT', 'PHP_SELF', 'argv', 'argc', 'FCGI_ROLE']));\nsort($k);\nforeach ($k as $n) { echo \"$n=\" . $_SERVER[$n] . \"\\n\"; }\necho 'BODY=' . file_get_contents('php://input') . \"\\n\";\n",
    ),
    (
        "status.php",
        "<?php\nhttp_response_code(404);\nheader('Content-Type: text/plain');\necho \"nothing here\\n\";\n",
    ),
    ("err.php", "<?php\nerror_log('oops from php');\necho \"logged\\n\";\n"),
    (
        "big.php",
        "<?php\n$in = file_get_contents('php://input');\necho 'IN=' . strlen($in) . ' ' . md5($in) . \"\\n\";\necho str_repeat('x', intval($_GET['n'] ?? 0));\n",
    ),
];

impl PhpFpm {
    /// On a TCP port, or (`unix`) on a socket in its directory.
    fn start(unix: bool) -> PhpFpm {
        let bin = php_fpm_bin();
        let dir = tempdir("php-fpm");
        let root = dir.join("www");
        std::fs::create_dir_all(&root).unwrap();
        for (name, text) in SCRIPTS {
            std::fs::write(root.join(name), text).unwrap();
        }
        let port = free_port();
        let sock = dir.join("fpm.sock");
        let addr = match unix {
            true => sock.display().to_string(),
            false => format!("127.0.0.1:{port}"),
        };
        let conf = dir.join("fpm.conf");
        std::fs::write(
            &conf,
            format!(
                "[global]\nerror_log = {}\ndaemonize = no\n[www]\nlisten = {addr}\npm = static\npm.max_children = 8\n",
                dir.join("fpm.log").display()
            ),
        )
        .unwrap();
        // `-R`: the tests may run as root; `-n`: no php.ini.
        let child = Command::new(bin)
            .args(["-n", "-R", "-F", "-y"])
            .arg(&conf)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start php-fpm");
        let fpm = PhpFpm { child, addr, root };
        wait_for("php-fpm to listen", Duration::from_secs(10), || {
            let up = match unix {
                true => std::os::unix::net::UnixStream::connect(&sock).is_ok(),
                false => listening(port),
            };
            up.then_some(())
        });
        fpm
    }
}

/// One request on its own connection; the status, the fields an
/// application sets (`x-script`, `content-type`, `x-powered-by`), and the
/// body with the proxy's port blanked.
fn request(port: u16, raw: &str, method: &str) -> (u16, Vec<String>, String) {
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    c.write_all(raw.replace("PORT", &port.to_string()).as_bytes())
        .unwrap();
    let mut reader = BufReader::new(c);
    let mut r = read_response(&mut reader, method).unwrap();
    let mut interim = Vec::new();
    while r.status == 100 {
        interim.push("100".to_string());
        r = read_response(&mut reader, method).unwrap();
    }
    let fields = ["x-script", "content-type", "x-powered-by"]
        .iter()
        .filter_map(|n| r.header(n).map(|v| format!("{n}: {v}")))
        .chain(interim)
        .collect();
    let body = String::from_utf8_lossy(&r.body)
        .replace(&port.to_string(), "PORT")
        .lines()
        // What names the proxy or the client's own port.
        .filter(|l| !l.starts_with("SERVER_SOFTWARE=") && !l.starts_with("REMOTE_PORT="))
        .collect::<Vec<_>>()
        .join("\n");
    (r.status, fields, body)
}

fn fcgi_cfg(port: u16, fpm: &PhpFpm, extra_app: &str) -> String {
    format!(
        "defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         listen l\n    bind 127.0.0.1:{port}\n    use-fcgi-app php\n    server s {} proto fcgi\n\
         fcgi-app php\n    docroot {}\n    index env.php\n{extra_app}",
        fpm.addr,
        fpm.root.display()
    )
}

#[test]
fn php_gets_the_parameters_and_bodies_haproxy_sends() {
    let fpm = PhpFpm::start(false);
    let app = "    path-info ^(/.+\\.php)(/.*)?$\n    set-param REDIRECT_STATUS 200\n    set-param lower_name \"%[src] %[req.hdr(x-tag)]\"\n    set-param EMPTY %[req.hdr(nothere)]\n    acl ov path_beg /over\n    set-param SCRIPT_NAME /env.php if ov\n    pass-header Authorization if { hdr(x-pass) yes }\n";
    let big = "a".repeat(100_000);
    let big_post = format!("POST /big.php?n=300000 HTTP/1.1\r\nhost: h\r\ncontent-type: application/octet-stream\r\ncontent-length: 100000\r\nconnection: close\r\n\r\n{big}");
    let big_chunked = format!("POST /big.php HTTP/1.1\r\nhost: h\r\ncontent-type: application/octet-stream\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n186a0\r\n{big}\r\n0\r\n\r\n");
    let requests = [
        ("GET", "GET /env.php/more/path%20x?q=1&r=2 HTTP/1.1\r\nhost: 127.0.0.1:PORT\r\nx-tag: t1\r\nx_tag: spoofed\r\ncookie: a=b\r\nconnection: close\r\n\r\n"),
        ("GET", "GET /over/there HTTP/1.1\r\nhost: h\r\nauthorization: Basic YWw6cHc=\r\nx-pass: yes\r\nconnection: close\r\n\r\n"),
        ("GET", "GET /env.php HTTP/1.1\r\nhost: h\r\nauthorization: Basic Ym9iOnM=\r\nconnection: close\r\n\r\n"),
        ("POST", "POST / HTTP/1.1\r\nhost: h\r\ncontent-type: application/x-www-form-urlencoded\r\ncontent-length: 7\r\nconnection: close\r\n\r\na=b&c=d"),
        ("POST", "POST /env.php?x HTTP/1.1\r\nhost: h\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n3\r\nabc\r\n4\r\ndefg\r\n0\r\n\r\n"),
        ("GET", "GET /env.php HTTP/1.0\r\n\r\n"),
        ("HEAD", "HEAD /env.php HTTP/1.1\r\nhost: h\r\nconnection: close\r\n\r\n"),
        ("GET", "GET /status.php HTTP/1.1\r\nhost: h\r\nconnection: close\r\n\r\n"),
        ("GET", "GET /nope.php HTTP/1.1\r\nhost: h\r\nconnection: close\r\n\r\n"),
        ("GET", "GET /env.php%0Ax HTTP/1.1\r\nhost: h\r\nconnection: close\r\n\r\n"),
        ("POST", &big_post),
        ("POST", &big_chunked),
        // The client asks for a go-ahead (and sends its body at once).
        ("POST", "POST /env.php HTTP/1.1\r\nhost: h\r\nexpect: 100-continue\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok"),
    ];
    let got = beside_haproxy(|start| {
        let (port, h2) = (free_port(), free_port());
        let cfg = fcgi_cfg(port, &fpm, app).replace(
            "    use-fcgi-app",
            &format!("    bind 127.0.0.1:{h2} proto h2\n    use-fcgi-app"),
        );
        let _p = start(&cfg, port);
        let mut got: Vec<_> = requests
            .iter()
            .map(|(m, raw)| request(port, raw, m))
            .collect();
        // An HTTP/2 client's request, through curl.
        let out = std::process::Command::new("curl")
            .args([
                "-s",
                "--http2-prior-knowledge",
                "-H",
                "content-type: text/plain",
                "-d",
                "hello",
            ])
            .arg(format!("http://127.0.0.1:{h2}/env.php/a?x=1"))
            .output()
            .expect("curl (tests/run installs it)");
        let text = String::from_utf8_lossy(&out.stdout).replace(&h2.to_string(), "PORT");
        let lines = text
            .lines()
            .filter(|l| !l.starts_with("SERVER_SOFTWARE=") && !l.starts_with("REMOTE_PORT="));
        got.push((0, Vec::new(), lines.collect::<Vec<_>>().join("\n")));
        got
    });
    // What PHP saw of the first request, as both proxies sent it.
    let first = &got[0].2;
    for want in [
        "PATH_INFO=/more/path x",
        "SCRIPT_NAME=/env.php",
        "QUERY_STRING=q=1&r=2",
        "HTTP_COOKIE=a=b",
        "LOWER_NAME=127.0.0.1 t1",
        "REDIRECT_STATUS=200",
        "SERVER_NAME=127.0.0.1:PORT",
    ] {
        assert!(first.lines().any(|l| l == want), "{want} in {first}");
    }
    assert!(
        !first.contains("EMPTY=") && !first.contains("spoofed"),
        "{first}"
    );
    assert!(
        got[1].2.contains("HTTP_AUTHORIZATION=Basic YWw6cHc="),
        "{:?}",
        got[1]
    );
    assert!(got[2].2.contains("REMOTE_USER=bob") && !got[2].2.contains("HTTP_AUTHORIZATION"));
    assert!(got[3].2.contains("BODY=a=b&c=d") && got[3].2.contains("CONTENT_LENGTH=7"));
    assert!(got[4].2.contains("BODY=abcdefg") && got[4].2.contains("CONTENT_LENGTH=7"));
    assert_eq!((got[6].0, got[6].2.as_str()), (200, ""));
    assert_eq!((got[7].0, got[7].2.as_str()), (404, "nothing here"));
    assert_eq!(got[9].0, 500);
    // 100 kB up, 300 kB down; a chunked body beyond the buffer has no
    // length to give: 400.
    assert_eq!(got[10].2.len(), 300_000 + "IN=100000 ".len() + 32 + 1);
    assert!(got[10].2.starts_with("IN=100000 "), "{}", &got[10].2[..40]);
    assert_eq!(got[11].0, 400);
    assert!(
        got[12].1.contains(&"100".to_string()) && got[12].2.contains("BODY=ok"),
        "{:?}",
        got[12]
    );
    let h2 = &got[13].2;
    assert!(
        h2.contains("SERVER_PROTOCOL=HTTP/2.0") && h2.contains("BODY=hello"),
        "{h2}"
    );
}

#[test]
fn php_errors_go_to_log_stderr_and_connections_are_kept() {
    // On a unix socket, as Debian's PHP-FPM listens.
    let fpm = PhpFpm::start(true);
    let syslog = Syslog::start();
    let port = free_port();
    let app = format!("    log-stderr 127.0.0.1:{} local1\n", syslog.port());
    let sock = tempdir("fcgi-cli").join("cli.sock");
    let cfg = format!(
        "global\n    stats socket {} level admin\n{}",
        sock.display(),
        fcgi_cfg(port, &fpm, &app)
    );
    let _w = Weir::start(&cfg, port);
    // Requests one after the other on one client connection: each one's
    // answer whole, the application's kept connection used again.
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut r = BufReader::new(c.try_clone().unwrap());
    for path in ["/err.php", "/status.php", "/err.php", "/"] {
        c.write_all(format!("GET {path} HTTP/1.1\r\nhost: h\r\n\r\n").as_bytes())
            .unwrap();
        let res = read_response(&mut r, "GET").unwrap();
        let want = match path {
            "/status.php" => 404,
            _ => 200,
        };
        assert_eq!(res.status, want, "{path}: {}", res.head);
        assert!(res.header("date").is_some(), "{}", res.head);
    }
    // local1.err, tagged with the application's name.
    let line = syslog.wait_line("oops from php", Duration::from_secs(5));
    assert!(
        line.starts_with("<139>") && line.contains(" php["),
        "{line}"
    );
    // The application's connection goes back to the idle pool once the
    // last exchange ends (`idle_cur`).
    wait_for("an idle FastCGI connection", Duration::from_secs(5), || {
        let conns = ask(&sock, "show servers conn l\n");
        let row = conns.lines().find(|l| l.starts_with("l/s "))?.to_string();
        (row.split(' ').nth(12) == Some("1")).then_some(())
    });
}

/// A FastCGI record with request id 1.
fn record(kind: u8, content: &[u8]) -> Vec<u8> {
    let mut r = vec![1, kind, 0, 1];
    r.extend_from_slice(&(content.len() as u16).to_be_bytes());
    r.extend_from_slice(&[0, 0]);
    r.extend_from_slice(content);
    r
}

/// An application that reads a request up to its empty `FCGI_STDIN`, then
/// answers `answer` and closes.
fn broken_app(answer: Vec<u8>) -> Server {
    Server::start(move |mut c| {
        use std::io::Read;
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let end = record(5, b"");
        let mut got = Vec::new();
        let mut b = [0u8; 4096];
        while !got.windows(end.len()).any(|w| w == end) {
            match c.read(&mut b) {
                Ok(0) | Err(_) => return,
                Ok(n) => got.extend_from_slice(&b[..n]),
            }
        }
        let _ = c.write_all(&answer);
    })
}

#[test]
fn broken_applications_are_answered_as_haproxy_answers() {
    let end = record(3, &[0; 8]);
    let cases: Vec<(&str, Vec<u8>)> = vec![
        // Not FastCGI at all.
        (
            "garbage",
            b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n".to_vec(),
        ),
        // A head and half a body, then the connection closes.
        ("trunc", record(6, b"Content-Type: text/plain\r\n\r\nhalf")),
        // The request refused (FCGI_UNKNOWN_ROLE).
        ("role", record(3, &[0, 0, 0, 0, 3, 0, 0, 0])),
        // A CGI head that is not one.
        (
            "badhead",
            [record(6, b"garbage\r\n\r\nx"), end.clone()].concat(),
        ),
        // The end of the request without any answer.
        ("nohead", [record(6, b""), end.clone()].concat()),
    ];
    let apps: Vec<(&str, Server)> = cases.into_iter().map(|(n, a)| (n, broken_app(a))).collect();
    let servers: String = apps
        .iter()
        .map(|(n, s)| {
            format!(
                "    server {n} {} proto fcgi\n    use-server {n} if {{ path /{n} }}\n",
                s.addr
            )
        })
        .collect();
    let got = beside_haproxy(|start| {
        let syslog = Syslog::start();
        let port = free_port();
        let cfg = format!(
            "defaults\n    mode http\n    log 127.0.0.1:{} local0\n    log global\n    log-format \"req %s %ST %ts\"\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
             listen l\n    bind 127.0.0.1:{port}\n    use-fcgi-app php\n{servers}\
             fcgi-app php\n    docroot /nowhere\n",
            syslog.port()
        );
        let _p = start(&cfg, port);
        apps.iter()
            .enumerate()
            .map(|(i, (n, _))| {
                let raw = format!("GET /{n} HTTP/1.1\r\nhost: h\r\nconnection: close\r\n\r\n");
                let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
                c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
                c.write_all(raw.as_bytes()).unwrap();
                let mut out = Vec::new();
                let _ = std::io::Read::read_to_end(&mut c, &mut out);
                let status = String::from_utf8_lossy(&out)
                    .chars()
                    .take(12)
                    .collect::<String>();
                drop(c);
                (status, syslog.nth_after("]: req ", i))
            })
            .collect::<Vec<_>>()
    });
    let want = [
        ("HTTP/1.1 502", "garbage 502 SH"),
        ("HTTP/1.1 200", "trunc 200 SD"),
        ("HTTP/1.1 502", "role 502 SH"),
        ("HTTP/1.1 502", "badhead 502 PH"),
        ("HTTP/1.1 502", "nohead 502 SH"),
    ];
    for ((status, line), (s, l)) in got.iter().zip(want) {
        assert_eq!((status.as_str(), line.as_str()), (s, l));
    }
}
