//! DNS at run time against a real name server (Debian's dnsmasq on a high
//! port), beside haproxy 2.6: `resolvers` sections, servers found by name
//! (A records) and `server-template` slots filled from SRV records; the
//! records change during the test (an address moves, an SRV record goes
//! away, a name stops existing) and both proxies must log the same lines
//! and list the same servers. Bad answers (another id, another question,
//! garbage) from a hostile name server are dropped and counted.

use crate::common::*;
use std::net::{TcpListener, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// dnsmasq answering for `*.test` from a hosts directory it watches, and
/// the SRV records of its configuration (changed by restarting it).
struct Dnsmasq {
    child: Option<Child>,
    port: u16,
    dir: PathBuf,
}

impl Dnsmasq {
    fn start(dir: &Path, hosts: &str, srv: &[&str]) -> Dnsmasq {
        let mut d = Dnsmasq {
            child: None,
            port: free_port(),
            dir: dir.to_path_buf(),
        };
        std::fs::create_dir_all(dir.join("hosts")).unwrap();
        d.set_hosts(hosts);
        d.restart(srv);
        d
    }
    /// Replaces the A records (dnsmasq reads the directory again itself).
    fn set_hosts(&self, hosts: &str) {
        let tmp = self.dir.join("hosts.tmp");
        std::fs::write(&tmp, hosts).unwrap();
        std::fs::rename(&tmp, self.dir.join("hosts").join("a")).unwrap();
    }
    /// Starts (again) with these SRV records (`name,target,port,prio,weight`).
    fn restart(&mut self, srv: &[&str]) {
        self.start_tries(srv, 3);
    }

    fn start_tries(&mut self, srv: &[&str], tries: u32) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
        let mut conf = format!(
            "port={}\nlisten-address=127.0.0.1\nbind-interfaces\nno-resolv\nno-hosts\nhostsdir={}\nuser=root\nlocal=/test/\n",
            self.port,
            self.dir.join("hosts").display()
        );
        for s in srv {
            conf.push_str(&format!("srv-host={s}\n"));
        }
        let path = self.dir.join("dnsmasq.conf");
        std::fs::write(&path, conf).unwrap();
        let mut child = Command::new("dnsmasq")
            .args(["-k", "-C", path.to_str().unwrap()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("dnsmasq is not installed: tests/run installs dnsmasq-base");
        let port = self.port;
        // (A port free for TCP may be another test's UDP socket: dnsmasq
        // then exits, and starts again on another port.)
        let up = wait_for(
            "dnsmasq to listen or exit",
            Duration::from_secs(10),
            || match child.try_wait() {
                Ok(Some(_)) => Some(false),
                _ => listening(port).then_some(true),
            },
        );
        self.child = Some(child);
        if !up {
            assert!(tries > 1, "dnsmasq exits at start (a port in use?)");
            self.port = free_port();
            self.start_tries(srv, tries - 1);
        }
    }
}

impl Drop for Dnsmasq {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn cfg(sock: &Path, port: u16, syslog: u16, ns: u16, web_port: u16) -> String {
    format!(
        "global\n    stats socket {} level admin\n\
         resolvers dns\n    nameserver ns1 127.0.0.1:{ns}\n    hold valid 300ms\n    hold nx 300ms\n    hold obsolete 0s\n    timeout resolve 100ms\n    timeout retry 200ms\n\
         defaults\n    mode tcp\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         listen fe\n    bind 127.0.0.1:{port}\n    log 127.0.0.1:{syslog} local0\n    balance roundrobin\n\
         \x20   server web web.test:{web_port} resolvers dns init-addr none\n\
         backend pool\n    log 127.0.0.1:{syslog} local0\n\
         \x20   server-template srv 3 _http._tcp.svc.test resolvers dns init-addr none\n",
        sock.display()
    )
}

/// A configuration with a stats socket at `sock`, a `resolvers dns`
/// section asking `ns` (with `extra` lines, `\n    ` between them) and a
/// `mode tcp` proxy `fe` on `port`, logging to `syslog`, with `servers`.
fn fe_cfg(sock: &Path, ns: &str, extra: &str, port: u16, syslog: u16, servers: &str) -> String {
    format!(
        "global\n    stats socket {} level admin\n\
         resolvers dns\n    nameserver ns1 {ns}\n    {extra}\n\
         defaults\n    mode tcp\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         listen fe\n    bind 127.0.0.1:{port}\n    log 127.0.0.1:{syslog} local0\n    {servers}\n",
        sock.display()
    )
}

/// A proxy started with `start` on [`fe_cfg`] (name server `ns`,
/// resolvers `extra`, `servers`): what a test reads of it.
struct Resolving {
    _proxy: Box<dyn std::any::Any>,
    log: Syslog,
    sock: std::path::PathBuf,
}

fn resolving(start: Start<'_>, dir: &Path, ns: &str, extra: &str, servers: &str) -> Resolving {
    let log = Syslog::start();
    let port = free_port();
    let sock = dir.join(format!("s{port}.sock"));
    let cfg = fe_cfg(&sock, ns, extra, port, log.port(), servers);
    Resolving {
        _proxy: start(&cfg, port),
        log,
        sock,
    }
}

/// The log lines naming servers, without their headers.
fn server_lines(log: &Syslog) -> Vec<String> {
    log.lines
        .lock()
        .unwrap()
        .iter()
        .filter(|l| l.contains("fe/") || l.contains("pool/"))
        .map(|l| l.split_once("]: ").map_or(l.as_str(), |x| x.1).to_string())
        .collect()
}

/// State lines without the slots' ids and names, sorted.
fn unnamed(v: Vec<String>) -> Vec<String> {
    let mut v: Vec<String> = v
        .iter()
        .map(|l| {
            let pool = l.contains(" pool ");
            l.split(' ')
                .enumerate()
                .filter(|(i, _)| !pool || (*i != 2 && *i != 3))
                .map(|(_, x)| x)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    v.sort();
    v
}

fn wait_both(what: &str, logs: [&Syslog; 2], needle: &str) {
    for log in logs {
        wait_for(what, Duration::from_secs(10), || {
            server_lines(log)
                .iter()
                .any(|l| l.contains(needle))
                .then_some(())
        });
    }
}

#[test]
fn names_and_srv_records_follow_a_real_name_server_as_haproxy() {
    let dir = tempdir("resolvers");
    // The web server moves from 127.0.0.1 to 127.0.0.2 (same port).
    let one = Server::named("one");
    let l2 = TcpListener::bind(("127.0.0.2", one.port())).unwrap();
    let _two = Server::start_on(l2, |mut c| {
        use std::io::Write;
        let _ = c.write_all(b"two");
    });
    let mut dns = Dnsmasq::start(
        &dir.join("dns"),
        "127.0.0.1 web.test\n127.0.0.1 node1.test\n127.0.0.2 node2.test\n",
        &[
            "_http._tcp.svc.test,node1.test,18081,0,100",
            "_http._tcp.svc.test,node2.test,18082,0,300",
        ],
    );
    let (hs, ws) = (dir.join("h.sock"), dir.join("w.sock"));
    let (hp, wp) = (free_port(), free_port());
    let (hlog, wlog) = (Syslog::start(), Syslog::start());
    let Some(_h) = Haproxy::start(&cfg(&hs, hp, hlog.port(), dns.port, one.port()), hp) else {
        panic!("haproxy is not installed: tests/run installs it");
    };
    let _w = Weir::start(&cfg(&ws, wp, wlog.port(), dns.port, one.port()), wp);
    let logs = [&hlog, &wlog];
    wait_both("web resolved", logs, "fe/web administratively READY");
    // (Which slot takes which record depends on the answer's order, which
    // dnsmasq may shuffle: slots are compared without their names.)
    wait_both("srv1 filled", logs, "pool/srv1 ('node");
    wait_both("srv2 filled", logs, "pool/srv2 ('node");
    assert_eq!(fetch(wp).unwrap(), "one");
    assert_eq!(
        unnamed(servers_state_lines(&ws, "")),
        unnamed(servers_state_lines(&hs, "")),
        "weir's, then haproxy's"
    );

    // The address moves.
    dns.set_hosts("127.0.0.2 web.test\n127.0.0.1 node1.test\n127.0.0.2 node2.test\n");
    wait_both(
        "web moved",
        logs,
        "fe/web changed its IP from 127.0.0.1 to 127.0.0.2 by dns/ns1.",
    );
    assert_eq!(fetch(wp).unwrap(), "two", "traffic follows the new address");
    assert_eq!(fetch(hp).unwrap(), "two");

    // An SRV record goes away; the name stops existing.
    dns.set_hosts("127.0.0.1 node1.test\n127.0.0.2 node2.test\n");
    dns.restart(&["_http._tcp.svc.test,node1.test,18081,0,100"]);
    wait_both(
        "a slot emptied",
        logs,
        "is going DOWN for maintenance (entry removed from SRV record).",
    );
    wait_both(
        "web gone",
        logs,
        "fe/web is going DOWN for maintenance (DNS NX status).",
    );
    assert_eq!(
        unnamed(servers_state_lines(&ws, "")),
        unnamed(servers_state_lines(&hs, ""))
    );
    // (The web server's lines in order; the slots' lines as a set.)
    let web = |log: &Syslog| -> Vec<String> {
        server_lines(log)
            .into_iter()
            .filter(|l| l.contains("fe/web "))
            .collect()
    };
    assert_eq!(web(&wlog), web(&hlog));
    let pool = |log: &Syslog| -> Vec<String> {
        let mut v: Vec<String> = server_lines(log)
            .into_iter()
            .filter(|l| l.contains("pool/"))
            .map(|l| match l.split_once("pool/srv") {
                Some((a, b)) => format!("{a}pool/srv?{}", b.get(1..).unwrap_or("")),
                None => l,
            })
            .collect();
        v.sort();
        v
    };
    assert_eq!(pool(&wlog), pool(&hlog));
    assert_eq!(fetch(wp).unwrap(), "", "no server left: closed");
    let shown = ask(&ws, "show resolvers dns\n");
    assert!(
        shown.starts_with("Resolvers section dns\n nameserver ns1:\n  sent: "),
        "{shown}"
    );
    assert!(
        shown.contains("  nx:          ") && !shown.contains("  nx:          0\n"),
        "{shown}"
    );
}

/// A hostile name server: to each query, a datagram with another id, one
/// for another question and garbage, then the true answer.
fn hostile() -> (UdpSocket, u16) {
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = s.local_addr().unwrap().port();
    let s2 = s.try_clone().unwrap();
    std::thread::spawn(move || {
        let mut buf = [0u8; 1500];
        while let Ok((n, from)) = s2.recv_from(&mut buf) {
            let q = &buf[..n];
            let answer = |q: &[u8], ip: [u8; 4]| -> Vec<u8> {
                // Header: same id, QR + RD + RA, one question, one answer.
                let mut r = vec![q[0], q[1], 0x81, 0x80, 0, 1, 0, 1, 0, 0, 0, 0];
                let qend = 12 + q[12..].iter().position(|b| *b == 0).unwrap() + 5;
                r.extend_from_slice(&q[12..qend]);
                let qtype = [q[qend - 4], q[qend - 3]];
                r.extend_from_slice(&[0xc0, 12]);
                r.extend_from_slice(&qtype);
                r.extend_from_slice(&[0, 1, 0, 0, 0, 60]);
                if qtype == [0, 1] {
                    r.extend_from_slice(&[0, 4]);
                    r.extend_from_slice(&ip);
                } else {
                    r.truncate(r.len() - 10);
                    r[7] = 0;
                }
                r
            };
            let mut wrong_id = answer(q, [10, 6, 6, 6]);
            wrong_id[1] ^= 0xff;
            let mut other = q.to_vec();
            // (Another letter: names compare without case.)
            if let Some(b) = other.get_mut(13) {
                *b ^= 0x01;
            }
            let wrong_question = answer(&other, [10, 6, 6, 7]);
            for d in [
                &wrong_id[..],
                &wrong_question[..],
                b"\xde\xad\xbe\xef",
                &answer(q, [127, 0, 0, 1])[..],
            ] {
                let _ = s2.send_to(d, from);
            }
        }
    });
    (s, port)
}

#[test]
fn spoofed_and_garbage_answers_are_dropped_and_counted() {
    let (_ns, port) = hostile();
    let one = Server::named("one");
    let dir = tempdir("resolvers-bad");
    let sock = dir.join("w.sock");
    let fe = free_port();
    let cfg = format!(
        "global\n    stats socket {} level admin\n\
         resolvers dns\n    nameserver evil 127.0.0.1:{port}\n    timeout resolve 100ms\n    timeout retry 300ms\n\
         defaults\n    mode tcp\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         listen fe\n    bind 127.0.0.1:{fe}\n    server web web.test:{} resolvers dns init-addr none resolve-prefer ipv4\n",
        sock.display(),
        one.port()
    );
    let _w = Weir::start(&cfg, fe);
    let st = wait_for("web resolved", Duration::from_secs(10), || {
        let s = servers_state_lines(&sock, "");
        s.iter()
            .any(|l| l.contains(" web 127.0.0.1 2 "))
            .then_some(s)
    });
    assert!(
        st[0].contains(" web 127.0.0.1 "),
        "never a spoofed address: {st:?}"
    );
    assert_eq!(fetch(fe).unwrap(), "one");
    let shown = ask(&sock, "show resolvers\n");
    let count = |k: &str| -> u64 {
        shown
            .lines()
            .find_map(|l| l.trim().strip_prefix(&format!("{k}:")))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0)
    };
    assert!(count("valid") >= 1, "{shown}");
    assert!(count("outdated") >= 1, "another id: {shown}");
    assert!(
        count("invalid") >= 2,
        "another question and garbage: {shown}"
    );
}

/// `set server … fqdn`: the server resolves its new name at once (the
/// answer, the log lines and `show servers state` as haproxy's); a server
/// without resolvers, or a malformed name, is refused in haproxy's words.
#[test]
fn set_server_fqdn_resolves_the_new_name_as_haproxy() {
    let dir = tempdir("set-fqdn");
    let dns = Dnsmasq::start(&dir, "127.0.0.2 a.test\n127.0.0.3 b.test\n", &[]);
    let run = |start: Start<'_>| -> Vec<String> {
        let ns = format!("127.0.0.1:{}", dns.port);
        let Resolving { _proxy, log, sock } = resolving(
            start,
            &dir,
            &ns,
            "hold valid 200ms\n    timeout resolve 100ms",
            "server s a.test:80 resolvers dns init-addr none\n    server t 127.0.0.1:80",
        );
        log.wait_line("to 127.0.0.2 by dns/ns1", Duration::from_secs(10));
        let mut out = Vec::new();
        for cmd in [
            "set server fe/s fqdn b.test",
            "set server fe/t fqdn b.test",
            "set server fe/s fqdn bad..name",
        ] {
            out.push(format!("{cmd} -> {:?}", ask(&sock, &format!("{cmd}\n"))));
        }
        log.wait_line("to 127.0.0.3 by dns/ns1", Duration::from_secs(10));
        out.extend(servers_state_lines(&sock, "fe"));
        out.extend(server_lines(&log));
        out
    };
    Haproxy::bin().expect("haproxy is not installed: tests/run installs it");
    let theirs = beside_haproxy(run);
    assert!(
        theirs
            .iter()
            .any(|l| l.contains("changed its FQDN from a.test to b.test")),
        "{theirs:#?}"
    );
}

/// A name server over TCP (`tcp@`): names resolve through it as through
/// haproxy's, and `show resolvers` counts its answers.
#[test]
fn a_name_server_over_tcp_as_haproxy() {
    let dir = tempdir("dns-tcp");
    let dns = Dnsmasq::start(&dir, "127.0.0.2 a.test\n", &[]);
    let run = |start: Start<'_>| -> Vec<String> {
        let ns = format!("tcp@127.0.0.1:{}", dns.port);
        let Resolving { _proxy, log, sock } = resolving(
            start,
            &dir,
            &ns,
            "hold valid 200ms\n    timeout resolve 100ms",
            "server s a.test:80 resolvers dns init-addr none",
        );
        log.wait_line("to 127.0.0.2 by dns/ns1", Duration::from_secs(10));
        let shown = ask(&sock, "show resolvers\n");
        let valid = shown
            .lines()
            .find(|l| l.trim_start().starts_with("valid:"))
            .and_then(|l| l.split(':').nth(1)?.trim().parse::<u64>().ok())
            .unwrap_or(0);
        assert!(valid >= 1, "{shown}");
        let mut out = servers_state_lines(&sock, "fe");
        out.extend(server_lines(&log));
        out
    };
    Haproxy::bin().expect("haproxy is not installed: tests/run installs it");
    beside_haproxy(run);
}

/// `hold obsolete`: a record an answer no longer has stays with its
/// server that long, then the server goes to maintenance (haproxy and
/// weir alike).
#[test]
fn hold_obsolete_keeps_a_vanished_record_for_a_while_as_haproxy() {
    Haproxy::bin().expect("haproxy is not installed: tests/run installs it");
    let dir = tempdir("dns-obsolete");
    let dns = Dnsmasq::start(&dir, "127.0.0.2 web.test\n127.0.0.3 web.test\n", &[]);
    let run = |start: Start<'_>| {
        dns.set_hosts("127.0.0.2 web.test\n127.0.0.3 web.test\n");
        let ns = format!("127.0.0.1:{}", dns.port);
        let Resolving { _proxy, log, sock } = resolving(
            start,
            &dir,
            &ns,
            "hold valid 100ms\n    hold obsolete 3s\n    timeout resolve 100ms",
            "server-template w 2 web.test:80 resolvers dns init-addr none",
        );
        log.wait_line("to 127.0.0.3 by ", Duration::from_secs(10));
        let valid = || {
            ask(&sock, "show resolvers\n")
                .lines()
                .find(|l| l.trim_start().starts_with("valid:"))
                .and_then(|l| l.split(':').nth(1)?.trim().parse::<u64>().ok())
                .unwrap_or(0)
        };
        dns.set_hosts("127.0.0.2 web.test\n");
        let gone = std::time::Instant::now();
        // Three valid answers later the record is still held...
        let before = valid();
        wait_for("three more answers", Duration::from_secs(5), || {
            (valid() >= before + 3).then_some(())
        });
        let held = ask(&sock, "show servers state fe\n");
        if gone.elapsed() < Duration::from_secs(2) {
            assert!(held.contains(" 127.0.0.3 "), "still held: {held}");
        }
        // ... then dropped, once `hold obsolete` passed.
        log.wait_line("is going DOWN for maintenance", Duration::from_secs(10));
        assert!(
            gone.elapsed() >= Duration::from_millis(2500),
            "{:?}",
            gone.elapsed()
        );
    };
    beside_haproxy(run);
}

/// `http-request do-resolve`: the request waits for the address of the
/// name its expression gives (nothing stored for a name that does not
/// resolve), as haproxy's; a section that does not exist is refused.
#[test]
fn do_resolve_stores_the_address_as_haproxy() {
    Haproxy::bin().expect("haproxy is not installed: tests/run installs it");
    let dir = tempdir("do-resolve");
    let dns = Dnsmasq::start(&dir, "127.0.0.2 a.test\n127.0.0.3 b.test\n", &[]);
    let run = |start: Start<'_>| -> Vec<String> {
        let port = free_port();
        let cfg = format!(
            "resolvers dns\n    nameserver ns1 127.0.0.1:{}\n    hold valid 10s\n    timeout retry 300ms\n\
             defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
             frontend fe\n    bind 127.0.0.1:{port}\n\
             \x20   http-request do-resolve(txn.ip,dns,ipv4) hdr(host),host_only\n\
             \x20   http-request return status 200 content-type text/plain lf-string \"ip=%[var(txn.ip)]\"\n",
            dns.port
        );
        let _p = start(&cfg, port);
        ["a.test", "b.test:8080", "nosuch.test", "a.test"]
            .iter()
            .map(|host| {
                let mut c = crate::common::http::Client::connect(port);
                c.send(format!("GET / HTTP/1.1\r\nhost: {host}\r\n\r\n").as_bytes());
                format!("{host}: {}", c.response("GET").text())
            })
            .collect()
    };
    let theirs = beside_haproxy(run);
    assert_eq!(theirs[0], "a.test: ip=127.0.0.2");
    let bad = "resolvers dns\n    nameserver ns1 127.0.0.1:53\ndefaults\n    mode http\n    timeout connect 1s\n    timeout client 1s\n    timeout server 1s\n\
               frontend fe\n    bind 127.0.0.1:1\n    http-request do-resolve(txn.ip,nosuch) hdr(host)\n";
    let (code, out, err) = check_cfg(bad);
    assert_ne!(code, 0);
    assert!(
        format!("{out}{err}").contains(
            ":10] : Proxy 'fe': Can't find resolvers section 'nosuch' for do-resolve action."
        ),
        "{out}{err}"
    );
}

/// `tcp-request content do-resolve` in `mode tcp`, the canonical use: the
/// connection goes to the address found (`set-dst` on a `0.0.0.0`
/// server), as haproxy's.
#[test]
fn tcp_request_do_resolve_as_haproxy() {
    let dir = tempdir("tcp-do-resolve");
    let dns = Dnsmasq::start(&dir, "127.0.0.2 a.test\n", &[]);
    let l = std::net::TcpListener::bind("127.0.0.2:0").unwrap();
    let oport = l.local_addr().unwrap().port();
    let _origin = Server::start_on(l, |mut c| {
        use std::io::Write;
        let _ = c.write_all(b"reached 127.0.0.2");
    });
    let theirs = beside_haproxy(|start: Start<'_>| -> Vec<String> {
        let tport = free_port();
        let cfg = format!(
            "resolvers dns\n    nameserver ns1 127.0.0.1:{}\n    hold valid 10s\n    timeout retry 300ms\n\
             defaults\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
             listen t\n    mode tcp\n    bind 127.0.0.1:{tport}\n    tcp-request inspect-delay 1s\n\
             \x20   tcp-request content do-resolve(sess.ip,dns,ipv4) str(a.test)\n\
             \x20   tcp-request content set-dst var(sess.ip)\n\
             \x20   tcp-request content accept\n    server s 0.0.0.0:{oport}\n",
            dns.port
        );
        let _p = start(&cfg, tport);
        vec![fetch(tport).unwrap_or_default()]
    });
    assert_eq!(theirs, ["reached 127.0.0.2"]);
}
