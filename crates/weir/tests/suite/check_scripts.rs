//! Check scripts beside haproxy 2.6: `option tcp-check` with `tcp-check
//! connect|send|send-binary|expect` rules, and `option redis-check`
//! against a real Redis server. Each backend's first `option
//! log-health-checks` line is compared (its duration left out): passes,
//! mismatches, unwanted content, binary patterns, timeouts, custom
//! statuses and messages, refused connections with their step; and the
//! log-format forms (`send-lf`, `string-lf`, `binary-lf`, `on-error`,
//! `status-code`) with `set-var`; `option spop-check` against agents
//! answering as haproxy's reg-test's do.

use crate::common::*;
use std::io::{Read, Write};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A server writing `banner` on each connection, then reading until the
/// client leaves (or closing at once with `close`).
fn banner(banner: &'static [u8], close: bool) -> Server {
    Server::start(move |mut c| {
        let _ = c.write_all(banner);
        if close {
            return;
        }
        let _ = c.set_read_timeout(Some(Duration::from_secs(5)));
        let mut b = [0u8; 256];
        while matches!(c.read(&mut b), Ok(n) if n > 0) {}
    })
}

/// An SMTP dialog: greeting, a reply to the hello line (`hello_reply`,
/// several lines in one write maybe), `221` to `QUIT`.
fn smtp(hello_reply: &'static str) -> Server {
    Server::start(move |c| {
        let mut w = c.try_clone().unwrap();
        let mut r = std::io::BufReader::new(c);
        let mut line = String::new();
        let _ = w.write_all(b"220 test.example ESMTP\r\n");
        use std::io::BufRead;
        if r.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let _ = w.write_all(hello_reply.as_bytes());
        line.clear();
        if r.read_line(&mut line).unwrap_or(0) == 0 || line != "QUIT\r\n" {
            return;
        }
        let _ = w.write_all(b"221 test.example closing\r\n");
    })
}

/// A server reading `expect` bytes (all it gets before them with `first`
/// written first), then writing `reply`.
fn scripted(first: &'static [u8], expect: usize, reply: &'static [u8]) -> Server {
    Server::start(move |mut c| {
        let _ = c.write_all(first);
        let mut got = vec![0u8; expect];
        if c.read_exact(&mut got).is_ok() {
            let _ = c.write_all(reply);
        }
    })
}

/// A MySQL 8.0.19 greeting.
const MYSQL_GREETING: &[u8] = b"J\0\0\0\n8.0.19\0\n\0\0\0o<\x02^bIA\r\0\xff\xff\xff\x02\0\xff\xc7\x15\0\0\0\0\0\0\0\0\0\0|\x18!Y\x10n'a\x14C\\ \0caching_sha2_password\0";

/// Debian's redis-server on a free port, without persistence.
struct Redis(Child, u16);

impl Redis {
    fn start() -> Redis {
        let port = free_port();
        let child = Command::new("redis-server")
            .args([
                "--port",
                &port.to_string(),
                "--save",
                "",
                "--appendonly",
                "no",
                "--bind",
                "127.0.0.1",
            ])
            .stdout(Stdio::null())
            .spawn()
            .expect("redis-server is not installed: tests/run installs it");
        let r = Redis(child, port);
        wait_for("redis-server", Duration::from_secs(10), || {
            listening(port).then_some(())
        });
        r
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Servers the protocol checks talk to: SMTP plain, with several reply
/// lines, refusing; PostgreSQL asking for a password, failing; MySQL
/// greeting only, accepting a login, refusing one.
struct Smtp {
    plain: u16,
    multi: u16,
    refusing: u16,
    pg_auth: u16,
    pg_fatal: u16,
    my_greet: u16,
    my_ok: u16,
    my_refused: u16,
    my_refused41: u16,
    ldap: u16,
    /// A TLS listener (a placeholder until it is started).
    tls: u16,
    echo: u16,
    /// SPOAs: a good hello, an empty frame, a fragment, version 1.0.
    spop: [u16; 4],
}

/// Backends and their rules: (name, rules, server port).
fn backends(
    valid: u16,
    other: u16,
    error: u16,
    bin: u16,
    closed: u16,
    redis: u16,
    s: &Smtp,
) -> Vec<(&'static str, String, u16)> {
    vec![
        ("smtp", "option smtpchk".into(), s.plain),
        ("esmtp", "option smtpchk EHLO test.example".into(), s.multi),
        ("smtpdown", "option smtpchk".into(), s.refusing),
        ("notsmtp", "option smtpchk".into(), other),
        ("ldap", "option ldap-check".into(), s.ldap),
        ("notldap", "option ldap-check".into(), other),
        ("sslhello", "option ssl-hello-chk".into(), s.tls),
        ("notssl", "option ssl-hello-chk".into(), other),
        ("pgsql", "option pgsql-check user postgres".into(), s.pg_auth),
        ("pgfatal", "option pgsql-check user postgres".into(), s.pg_fatal),
        ("notpgsql", "option pgsql-check user postgres".into(), other),
        ("mysql", "option mysql-check".into(), s.my_greet),
        ("mysqllogin", "option mysql-check user check".into(), s.my_ok),
        ("mysqlpre41", "option mysql-check user check pre-41".into(), s.my_refused),
        ("mysqlpost41", "option mysql-check user check".into(), s.my_refused41),
        ("pass", "option tcp-check\n    tcp-check send hello\\r\\n\n    tcp-check expect rstring ^val\n    tcp-check expect string valid".into(), valid),
        ("mismatch", "option tcp-check\n    tcp-check expect string nope".into(), other),
        ("unwanted", "option tcp-check\n    tcp-check expect ! string error".into(), error),
        ("binary", "option tcp-check\n    tcp-check expect binary 0a0b".into(), bin),
        ("rbinary", "option tcp-check\n    tcp-check expect rbinary ^0a".into(), bin),
        ("rbinaryok", "option tcp-check\n    tcp-check send-binary 50494e470d0a\n    tcp-check expect rbinary ^76616C6964".into(), valid),
        ("regex", "option tcp-check\n    tcp-check expect rstring nope".into(), other),
        ("timeout", "option tcp-check\n    tcp-check comment \"waits\"\n    tcp-check expect string nope".into(), valid),
        ("toutstatus", "option tcp-check\n    tcp-check expect string nope tout-status L4TOUT".into(), valid),
        ("okstatus", "option tcp-check\n    tcp-check expect string valid ok-status L6OK on-success \"all good\"".into(), valid),
        ("errstatus", "option tcp-check\n    tcp-check expect string nope error-status L7STS on-error \"bad banner\" status-code int(42)".into(), other),
        ("norules", "option tcp-check".into(), valid),
        ("minrecv", "option tcp-check\n    tcp-check expect min-recv 100 string valid".into(), other),
        ("initial", "option tcp-check\n    tcp-check expect string nope".into(), closed),
        ("ports", format!("option tcp-check\n    tcp-check connect port {valid}\n    tcp-check connect port {closed}"), valid),
        ("redis", "option redis-check".into(), redis),
        ("notredis", "option redis-check".into(), other),
        ("redissilent", "option redis-check".into(), error),
        ("spop", "option spop-check".into(), s.spop[0]),
        ("spopempty", "option spop-check".into(), s.spop[1]),
        ("spopfrag", "option spop-check".into(), s.spop[2]),
        ("spopv1", "option spop-check".into(), s.spop[3]),
        ("notspop", "option spop-check".into(), other),
        ("negwait", "option tcp-check\n    tcp-check expect ! string nope".into(), valid),
        ("negmin", "option tcp-check\n    tcp-check expect min-recv 3 ! string nope".into(), valid),
        ("lf", "option tcp-check\n    tcp-check set-var(check.w) str(val)\n    tcp-check expect string-lf \"%[var(check.w)]id\"".into(), valid),
        ("lfunwanted", "option tcp-check\n    tcp-check set-var-fmt(check.w) \"err%[str(or)]\"\n    tcp-check expect ! string-lf \"%[var(check.w)]\" error-status L7STS on-error \"saw %[res.payload(0,5)] in %[be_name]\" status-code \"int(7)\"".into(), error),
        ("lfbin", "option tcp-check\n    tcp-check expect binary-lf \"%[str(val),hex]\"".into(), valid),
        ("lfsend", "option tcp-check\n    tcp-check send-lf \"%[srv_name]-%[be_name]\\r\\n\"\n    tcp-check unset-var(check.none)\n    tcp-check expect string-lf \"s-%[be_name]\" on-success \"echoed %[res.payload(0,0)]\"".into(), s.echo),
    ]
}

fn cfg(port: u16, syslog: u16, bes: &[(&str, String, u16)]) -> String {
    let mut c = format!(
        "defaults\n    mode tcp\n    timeout connect 1s\n    timeout check 300ms\n    timeout client 5s\n    timeout server 5s\n    option log-health-checks\n    log 127.0.0.1:{syslog} local0\n\
         listen front\n    bind 127.0.0.1:{port}\n    server x 127.0.0.1:{port}\n"
    );
    for (name, rules, srv) in bes {
        c.push_str(&format!(
            "backend {name}\n    {rules}\n    server s 127.0.0.1:{srv} check inter 1s rise 1 fall 1\n"
        ));
    }
    c
}

/// Each backend's first health check line, without its duration.
fn first_lines(log: &Syslog, bes: &[(&str, String, u16)]) -> Vec<String> {
    bes.iter()
        .map(|(name, _, _)| {
            let needle = format!("Health check for server {name}/s ");
            let l = log.wait_line(&needle, Duration::from_secs(10));
            let l = l.split_once("]: ").map_or(l.as_str(), |x| x.1).to_string();
            match l.split_once(", check duration: ") {
                Some((a, b)) => format!("{a}, {}", b.split_once(", ").map_or(b, |x| x.1)),
                None => l,
            }
        })
        .collect()
}

#[test]
fn tcp_check_and_redis_check_log_as_haproxy() {
    let (valid, other, error) = (
        banner(b"valid\r\n", false),
        banner(b"other\r\n", true),
        banner(b"error here\r\n", false),
    );
    let bin = banner(&[1, 2, 3], true);
    let redis = Redis::start();
    let closed = free_port();
    let plain = smtp("250 test.example\r\n");
    let multi = smtp("250-test.example\r\n250-PIPELINING\r\n250 8BITMIME\r\n");
    let refusing = smtp("512 DNS error\r\n");
    let pg_auth = scripted(b"", 23, b"R\0\0\0\x0c\0\0\0\x05salt");
    let pg_fatal = scripted(b"", 23, b"E\0\0\0\x0bSFATAL\0\0");
    let my_greet = scripted(MYSQL_GREETING, 0, b"");
    // post-41's login and QUIT: 47 bytes; pre-41's: 22 (user "check").
    let my_ok = scripted(MYSQL_GREETING, 48, b"\x07\0\0\x02\0\0\0\x02\0\0\0");
    let my_refused = scripted(MYSQL_GREETING, 21, b"\x0f\0\0\x02\xff\x15\x04#28000denied");
    let my_refused41 = scripted(MYSQL_GREETING, 48, b"\x0f\0\0\x02\xff\x15\x04#28000denied");
    let ldap = scripted(
        b"",
        14,
        b"\x30\x0c\x02\x01\x01\x61\x07\x0a\x01\x00\x04\x00\x04\x00",
    );
    let echo = Server::echo();
    // haproxy's HAPROXY-HELLO is 82 bytes; the answers of its reg-test.
    let spops = [
        scripted(b"", 82, b"\0\0\0\x36\x65\0\0\0\x01\0\0\x07version\x08\x032.0\x0emax-frame-size\x03\xfc\xf0\x06\x0ccapabilities\x08\0"),
        scripted(b"", 82, b"\0\0\0\0"),
        scripted(b"", 82, b"\0\0\0\x07\x65\0\0\0\0\0\0"),
        scripted(b"", 82, b"\0\0\0\x14\x65\0\0\0\x01\0\0\x07version\x08\x031.0"),
    ];
    let s = Smtp {
        spop: [
            spops[0].port(),
            spops[1].port(),
            spops[2].port(),
            spops[3].port(),
        ],
        echo: echo.port(),
        ldap: ldap.port(),
        tls: free_port(),
        my_refused41: my_refused41.port(),
        plain: plain.port(),
        multi: multi.port(),
        refusing: refusing.port(),
        pg_auth: pg_auth.port(),
        pg_fatal: pg_fatal.port(),
        my_greet: my_greet.port(),
        my_ok: my_ok.port(),
        my_refused: my_refused.port(),
    };
    let bes = backends(
        valid.port(),
        other.port(),
        error.port(),
        bin.port(),
        closed,
        redis.1,
        &s,
    );
    let (hlog, wlog) = (Syslog::start(), Syslog::start());
    let (hp, wp) = (free_port(), free_port());
    // The TLS listener that both answer the ssl-hello check with is
    // weir's: it runs beside both.
    let pki = crate::common::tls::Pki::new();
    let pem = pki.path("certs/1-www.pem");
    let tport = free_port();
    let _t = Weir::start(&format!("defaults\n    mode tcp\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\nlisten tls\n    bind 127.0.0.1:{tport} ssl crt {pem}\n    server x 127.0.0.1:1\n"), tport);
    let bes: Vec<_> = bes
        .into_iter()
        .map(|(n, r, p)| (n, r, if p == s.tls { tport } else { p }))
        .collect();
    let Some(_h) = Haproxy::start(&cfg(hp, hlog.port(), &bes), hp) else {
        panic!("haproxy is not installed: tests/run installs it");
    };
    let _w = Weir::start(&cfg(wp, wlog.port(), &bes), wp);
    let (theirs, ours) = (first_lines(&hlog, &bes), first_lines(&wlog, &bes));
    for (o, t) in ours.iter().zip(&theirs) {
        assert_eq!(o, t, "weir's line, then haproxy's");
    }
    let get = |name: &str| {
        ours.iter()
            .find(|l| l.contains(&format!(" {name}/s ")))
            .unwrap()
            .clone()
    };
    let has = |name: &str, what: &str| assert!(get(name).contains(what), "{}", get(name));
    has(
        "pass",
        "succeeded, reason: Layer7 check passed, code: 0, info: \"(tcp-check)\"",
    );
    has(
        "smtp",
        "Layer7 check passed, code: 221, info: \"test.example closing\"",
    );
    has(
        "pgsql",
        "passed, code: 0, info: \"PostgreSQL server is ok\"",
    );
    has("sslhello", "succeeded, reason: Layer6 check passed");
    has("notssl", "failed, reason: Layer6 invalid response");
    has("ldap", "Layer7 check passed, code: 0, info: \"Success\"");
    has(
        "notldap",
        "Layer7 invalid response, info: \"Not LDAPv3 protocol\"",
    );
    has("pgfatal", "Layer7 invalid response, info: \"FATAL\"");
    has("mysql", "passed, code: 0, info: \"8.0.19\"");
    has("mysqllogin", "passed, code: 0, info: \"8.0.19\"");
    has(
        "mysqlpre41",
        "Layer7 wrong status, code: 1045, info: \"#28000denied\"",
    );
    has("esmtp", "Layer7 check passed, code: 221");
    // (A refusal on a connection left open is waited on, as by haproxy.)
    has("smtpdown", "failed, reason: Layer7 timeout");
    has("redis", "info: \"Redis server is ok\"");
    has("notredis", "Layer7 wrong status, code: 0, info: \"other\"");
    has(
        "timeout",
        "Layer7 timeout, info: \" at step 2 of tcp-check (expect string 'nope') comment: 'waits'\"",
    );
    has(
        "ports",
        &format!("Connection refused at step 2 of tcp-check (connect port {closed})"),
    );
    has("lf", "succeeded, reason: Layer7 check passed");
    has("spop", "info: \"SPOA server is ok\"");
    has("spopv1", "info: \"unsupported version\"");
    // (A negated rule waits for all the data, unless min-recv bounds it.)
    has("negwait", "failed, reason: Layer7 timeout");
    has("negmin", "succeeded");
    has("lfunwanted", "code: 7, info: \"saw error in lfunwanted\"");
    has("lfsend", "info: \"echoed s-lfsend");
}

/// A `tcp-check` line weir cannot run (or that is wrong) is an error with
/// its line, never dropped.
#[test]
fn tcp_check_lines_weir_cannot_run_are_refused_by_line() {
    let cfg = "defaults\n    mode tcp\n    timeout connect 1s\n    timeout client 1s\n    timeout server 1s\n\
               backend b\n    option tcp-check\n\
               \x20   tcp-check connect send-proxi\n\
               \x20   tcp-check expect string-lf %[nosuch]\n\
               \x20   tcp-check expect min-recv 3\n\
               \x20   tcp-check send-binary 0g\n\
               \x20   tcp-check expect string ok on-error \"%[res.payload(0\"\n\
               \x20   tcp-check connect via-sock4\n\
               \x20   server s 127.0.0.1:1 check\n";
    let (code, out, err) = check_cfg(cfg);
    let text = format!("{out}{err}");
    assert_ne!(code, 0, "{text}");
    for (line, what) in [
        (8, "but got 'send-proxi'"),
        (9, "nosuch"),
        (
            10,
            "expects [!] string|rstring|binary|rbinary|string-lf|binary-lf <pattern>",
        ),
        (11, "is not a hexadecimal string"),
        (12, "missing ']'"),
        (13, "but got 'via-sock4'"),
    ] {
        assert!(
            text.lines()
                .any(|l| l.contains(&format!(":{line}]")) && l.contains(what)),
            "line {line}: {what}\n{text}"
        );
    }
}

/// Checks over TLS beside haproxy: `check-sni` and `check-alpn` on a
/// server line, `tcp-check connect ssl sni … alpn …`, against a TLS
/// listener that accepts only the expected name or protocols (haproxy's,
/// in front of both); and a TLS frontend's log line marks its name with
/// `~`.
#[test]
fn checks_over_tls_name_and_offer_what_they_are_told() {
    let pki = crate::common::tls::Pki::new();
    let pem = pki.path("certs/1-www.pem");
    let (sni_port, alpn_port, fe_port) = (free_port(), free_port(), free_port());
    let gate = format!(
        "defaults\n    mode tcp\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         listen by_sni\n    bind 127.0.0.1:{sni_port}\n    tcp-request inspect-delay 1s\n\
         \x20   tcp-request content accept if {{ req.ssl_sni check.example }}\n    tcp-request content reject\n    server fe 127.0.0.1:{fe_port}\n\
         listen by_alpn\n    bind 127.0.0.1:{alpn_port}\n    tcp-request inspect-delay 1s\n\
         \x20   tcp-request content accept if {{ req.ssl_alpn h2 }}\n    tcp-request content reject\n    server fe 127.0.0.1:{fe_port}\n\
         frontend tls\n    bind 127.0.0.1:{fe_port} ssl crt {pem}\n    mode http\n    http-request return status 200\n"
    );
    // (haproxy stands at the gate, as in its own reg-test.)
    let Some(_gate) = Haproxy::start(&gate, fe_port) else {
        panic!("haproxy is not installed: tests/run installs it");
    };
    let bes = [
        ("sni", format!("server s 127.0.0.1:{sni_port} check check-ssl check-sni check.example verify none")),
        ("badsni", format!("server s 127.0.0.1:{sni_port} check check-ssl check-sni other.example verify none")),
        ("alpn", format!("server s 127.0.0.1:{alpn_port} check check-ssl check-alpn h2,http/1.1 verify none")),
        ("noalpn", format!("server s 127.0.0.1:{alpn_port} check check-ssl verify none")),
        ("script", format!("option tcp-check\n    tcp-check connect ssl sni check.example\n    server s 127.0.0.1:{sni_port} check verify none")),
        ("scriptalpn", format!("option tcp-check\n    tcp-check connect ssl alpn h2\n    server s 127.0.0.1:{alpn_port} check verify none")),
    ];
    let cfg = |syslog: u16, port: u16| {
        let mut c = format!(
            "defaults\n    mode tcp\n    timeout connect 1s\n    timeout check 1s\n    timeout client 5s\n    timeout server 5s\n    option log-health-checks\n    log 127.0.0.1:{syslog} local0\n\
             frontend web\n    mode http\n    option httplog\n    bind 127.0.0.1:{port} ssl crt {pem}\n    http-request return status 200\n"
        );
        for (name, lines) in &bes {
            c.push_str(&format!(
                "backend {name}\n    default-server inter 1s rise 1 fall 1\n    {lines}\n"
            ));
        }
        c
    };
    let (hlog, wlog) = (Syslog::start(), Syslog::start());
    let (hp, wp) = (free_port(), free_port());
    let Some(_h) = Haproxy::start(&cfg(hlog.port(), hp), hp) else {
        panic!("haproxy is not installed: tests/run installs it");
    };
    let _w = Weir::start(&cfg(wlog.port(), wp), wp);
    let named: Vec<(&str, String, u16)> = bes.iter().map(|(n, _)| (*n, String::new(), 0)).collect();
    let (theirs, ours) = (first_lines(&hlog, &named), first_lines(&wlog, &named));
    // A handshake the gate cuts reads "SSL handshake failure" in
    // haproxy's line and "Connection closed during SSL handshake" in
    // weir's (haproxy's own reg-test accepts either).
    let same = |l: &String| {
        l.replace(
            "Connection closed during SSL handshake",
            "SSL handshake failure",
        )
    };
    for (o, t) in ours.iter().zip(&theirs) {
        assert_eq!(same(o), same(t), "weir's line, then haproxy's");
    }
    let verdicts: Vec<bool> = ours.iter().map(|l| l.contains(" succeeded, ")).collect();
    assert_eq!(
        verdicts,
        [true, false, true, false, true, true],
        "{ours:#?}"
    );
    // The TLS frontend's name in an httplog line: `web~`.
    for (port, log) in [(hp, &hlog), (wp, &wlog)] {
        let o = crate::common::tls::curl(port, "www.example.com", "/", &[]);
        assert!(o.status.success());
        let l = log.wait_line("\"GET / HTTP/1.1\"", Duration::from_secs(5));
        assert!(l.contains(" web~ web/<NOSRV> "), "{l}");
    }
}

/// `tcp-check connect send-proxy` sends a PROXY header; an explicit
/// `connect` without `default` leaves the server's `check-send-proxy`
/// out; as haproxy does.
#[test]
fn tcp_check_connect_send_proxy_as_haproxy() {
    use std::sync::{Arc, Mutex};
    let run = |start: Start<'_>| -> Vec<String> {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let rec = |seen: Arc<Mutex<Vec<String>>>, tag: &'static str| {
            Server::start(move |mut c| {
                let mut got = Vec::new();
                let mut b = [0u8; 256];
                while !got.ends_with(b"hi") {
                    match c.read(&mut b) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => got.extend_from_slice(&b[..n]),
                    }
                }
                // (The source port differs by nature.)
                let text = String::from_utf8_lossy(&got).into_owned();
                let text = match text.strip_prefix("PROXY TCP4 127.0.0.1 127.0.0.1 ") {
                    Some(rest) => format!("PROXY {}", rest.split_once("\r\n").map_or("", |x| x.1)),
                    None => text,
                };
                seen.lock().unwrap().push(format!("{tag}: {text}"));
            })
        };
        let (a, b) = (rec(seen.clone(), "a"), rec(seen.clone(), "b"));
        let port = free_port();
        let cfg = format!(
            "defaults\n    mode tcp\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
             listen front\n    bind 127.0.0.1:{port}\n    server x 127.0.0.1:{port}\n\
             backend a\n    option tcp-check\n    tcp-check connect\n    tcp-check send hi\n    server s 127.0.0.1:{} check check-send-proxy inter 200ms\n\
             backend b\n    option tcp-check\n    tcp-check connect send-proxy\n    tcp-check send hi\n    server s 127.0.0.1:{} check inter 200ms\n",
            a.port(),
            b.port()
        );
        let _p = start(&cfg, port);
        wait_for("both checks", Duration::from_secs(5), || {
            let s = seen.lock().unwrap();
            (s.iter().any(|l| l.starts_with("a:")) && s.iter().any(|l| l.starts_with("b:")))
                .then_some(())
        });
        let mut got = seen.lock().unwrap().clone();
        got.sort();
        got.dedup();
        got
    };
    let theirs = beside_haproxy(run);
    assert_eq!(theirs, ["a: hi", "b: PROXY hi"]);
}
