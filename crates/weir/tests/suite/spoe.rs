//! SPOE (`filter spoe`), differential against haproxy 2.6: messages on
//! the request and response events and by `send-spoe-group` (request and
//! response rules, the latter seeing what earlier rules set) go to a real
//! agent (an SPOP agent written here from doc/SPOE.txt, which answers
//! each argument back as a variable), the variables its ACK sets steer
//! the rules, an agent that cannot be reached sets `set-on-error`.

use crate::common::*;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::Duration;

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    if v < 240 {
        out.push(v as u8);
        return;
    }
    out.push((v | 240) as u8);
    v = (v - 240) >> 4;
    while v >= 128 {
        out.push((v | 128) as u8);
        v = (v - 128) >> 7;
    }
    out.push(v as u8);
}

fn varint(b: &[u8], at: &mut usize) -> u64 {
    let mut v = u64::from(b[*at]);
    *at += 1;
    if v < 240 {
        return v;
    }
    let mut shift = 4;
    loop {
        let x = u64::from(b[*at]);
        *at += 1;
        v += x << shift;
        if x < 128 {
            return v;
        }
        shift += 7;
    }
}

fn put_str(out: &mut Vec<u8>, s: &[u8]) {
    put_varint(out, s.len() as u64);
    out.extend_from_slice(s);
}

fn string(b: &[u8], at: &mut usize) -> Vec<u8> {
    let n = varint(b, at) as usize;
    let s = b[*at..*at + n].to_vec();
    *at += n;
    s
}

/// A typed value, as text.
fn value(b: &[u8], at: &mut usize) -> String {
    let t = b[*at];
    *at += 1;
    match t & 0x0f {
        0 => "null".into(),
        1 => format!("bool:{}", t & 0x10 != 0),
        2..=5 => format!("int:{}", varint(b, at) as i64),
        6 => {
            let a = &b[*at..*at + 4];
            *at += 4;
            format!("ipv4:{}.{}.{}.{}", a[0], a[1], a[2], a[3])
        }
        7 => {
            *at += 16;
            "ipv6".into()
        }
        8 => format!("str:{}", String::from_utf8_lossy(&string(b, at))),
        9 => format!("bin:{}", String::from_utf8_lossy(&string(b, at))),
        o => panic!("type {o}"),
    }
}

fn frame(kind: u8, sid: u64, fid: u64, payload: &[u8]) -> Vec<u8> {
    let mut f = vec![kind, 0, 0, 0, 1];
    put_varint(&mut f, sid);
    put_varint(&mut f, fid);
    f.extend_from_slice(payload);
    let mut out = (f.len() as u32).to_be_bytes().to_vec();
    out.extend_from_slice(&f);
    out
}

/// One agent connection: answers the hello, then each NOTIFY with an ACK
/// setting `txn.<prefix>.<message>_<argument>` to the argument as text
/// (`block` to 1 when a value holds "deny").
fn agent_conn(mut c: TcpStream) {
    loop {
        let mut len = [0u8; 4];
        if c.read_exact(&mut len).is_err() {
            return;
        }
        let mut f = vec![0u8; u32::from_be_bytes(len) as usize];
        if c.read_exact(&mut f).is_err() {
            return;
        }
        let mut at = 5;
        let sid = varint(&f, &mut at);
        let fid = varint(&f, &mut at);
        match f[0] {
            1 => {
                let mut p = Vec::new();
                put_str(&mut p, b"version");
                p.push(8);
                put_str(&mut p, b"2.0");
                put_str(&mut p, b"max-frame-size");
                p.push(3);
                put_varint(&mut p, 16380);
                put_str(&mut p, b"capabilities");
                p.push(8);
                put_str(&mut p, b"");
                let _ = c.write_all(&frame(101, 0, 0, &p));
            }
            3 => {
                let mut actions = Vec::new();
                let mut set = |name: String, v: &[u8], int: bool| {
                    actions.extend_from_slice(&[1, 3, 2]);
                    put_str(&mut actions, name.as_bytes());
                    if int {
                        actions.push(2);
                        put_varint(&mut actions, 1);
                    } else {
                        actions.push(8);
                        put_str(&mut actions, v);
                    }
                };
                while at < f.len() {
                    let msg = String::from_utf8_lossy(&string(&f, &mut at)).into_owned();
                    let nb = f[at];
                    at += 1;
                    for i in 0..nb {
                        let mut k = String::from_utf8_lossy(&string(&f, &mut at)).into_owned();
                        if k.is_empty() {
                            k = format!("arg{i}");
                        }
                        let v = value(&f, &mut at);
                        if v.contains("deny") {
                            set("block".into(), b"", true);
                        }
                        set(format!("{msg}_{k}"), v.as_bytes(), false);
                    }
                }
                let _ = c.write_all(&frame(103, sid, fid, &actions));
            }
            2 => {
                let mut p = Vec::new();
                put_str(&mut p, b"status-code");
                p.push(3);
                put_varint(&mut p, 0);
                put_str(&mut p, b"message");
                p.push(8);
                put_str(&mut p, b"");
                let _ = c.write_all(&frame(102, 0, 0, &p));
                return;
            }
            _ => {}
        }
    }
}

/// The agent: a thread per connection, for the test's life.
fn agent() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for c in l.incoming().flatten() {
            std::thread::spawn(move || agent_conn(c));
        }
    });
    port
}

const SPOE_CONF: &str = "[e1]\n\
spoe-agent a1\n\
    messages m1 m2 m3\n\
    groups g1 g2\n\
    option var-prefix pfx\n\
    option set-on-error err\n\
    timeout hello 2s\n\
    timeout idle 10s\n\
    timeout processing 2s\n\
    use-backend agents\n\
spoe-message m1\n\
    args path ip=src method=method n=int(42) missing=req.hdr(x-none)\n\
    event on-frontend-http-request\n\
spoe-message m2\n\
    acl is_be path_beg /be\n\
    args host=req.hdr(host)\n\
    event on-backend-http-request if is_be\n\
spoe-message m3\n\
    args status=status\n\
    event on-http-response\n\
spoe-message g\n\
    args q=query\n\
spoe-message r\n\
    args st=status hdr=res.hdr(x-m3)\n\
spoe-group g1\n\
    messages g\n\
spoe-group g2\n\
    messages r\n\
[e2]\n\
spoe-agent a2\n\
    messages down\n\
    option var-prefix pfx2\n\
    option set-on-error err\n\
    timeout hello 1s\n\
    timeout idle 10s\n\
    timeout processing 1s\n\
    use-backend nowhere\n\
spoe-message down\n\
    args path\n\
    event on-frontend-http-request if { path_beg /down }\n\
[e3]\n\
spoe-agent a3\n\
    messages c t\n\
    groups g3\n\
    option var-prefix pfx3\n\
    timeout hello 2s\n\
    timeout idle 10s\n\
    timeout processing 2s\n\
    use-backend agents\n\
spoe-message c\n\
    args ip=src\n\
    event on-client-session\n\
spoe-message t\n\
    args port=dst_port\n\
    event on-frontend-tcp-request\n\
spoe-message q\n\
    args x=req.payload(0,0)\n\
spoe-group g3\n\
    messages q\n";

/// Status, the variables the answer shows, for each request.
fn ask(port: u16, path: &str) -> String {
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    c.write_all(format!("GET {path} HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n").as_bytes())
        .unwrap();
    let mut got = Vec::new();
    let _ = c.read_to_end(&mut got);
    let text = String::from_utf8_lossy(&got);
    let status = text.split(' ').nth(1).unwrap_or("-").to_string();
    let fields: Vec<&str> = text
        .lines()
        .filter(|l| l.to_ascii_lowercase().starts_with("x-"))
        .collect();
    format!("{path}: {status} {}", fields.join(" | "))
}

#[test]
fn spoe_messages_beside_haproxy() {
    let agent = agent();
    let origin = Server::start(|mut c| {
        if read_head(&mut c).is_some() {
            let _ = c.write_all(
                b"HTTP/1.1 201 Created\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            );
        }
    });
    let dir = tempdir("spoe");
    let conf = dir.join("spoe.conf");
    std::fs::write(&conf, SPOE_CONF).unwrap();
    let got = beside_haproxy(|start| {
        let (port, tport) = (free_port(), free_port());
        let cfg = format!(
            "defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
             frontend fe\n    bind 127.0.0.1:{port}\n\
             \x20   filter spoe engine e1 config {conf}\n\
             \x20   filter spoe engine e2 config {conf}\n\
             \x20   http-request send-spoe-group e1 g1 if {{ path_beg /group }}\n\
             \x20   http-request deny deny_status 403 if {{ var(txn.pfx.block) -m int eq 1 }}\n\
             \x20   http-response set-header x-m1 \"%[var(txn.pfx.m1_arg0)] %[var(txn.pfx.m1_ip)] %[var(txn.pfx.m1_method)] %[var(txn.pfx.m1_n)] %[var(txn.pfx.m1_missing)]\"\n\
             \x20   http-response set-header x-m2 \"%[var(txn.pfx.m2_host)]\"\n\
             \x20   http-response set-header x-m3 \"%[var(txn.pfx.m3_status)]\"\n\
             \x20   http-response set-header x-g \"%[var(txn.pfx.g_q)]\"\n\
             \x20   http-response send-spoe-group e1 g2\n\
             \x20   http-response set-header x-r \"%[var(txn.pfx.r_st)] %[var(txn.pfx.r_hdr)]\"\n\
             \x20   http-response set-header x-err \"%[var(txn.pfx.err)] %[var(txn.pfx2.err)]\"\n\
             \x20   default_backend be\n\
             frontend tcpfe\n    mode tcp\n    bind 127.0.0.1:{tport}\n\
             \x20   filter spoe engine e3 config {conf}\n\
             \x20   tcp-request inspect-delay 2s\n\
             \x20   tcp-request content reject if !{{ var(txn.pfx3.c_ip) -m found }} || !{{ var(txn.pfx3.t_port) -m found }}\n\
             \x20   tcp-request content accept if !{{ req.len gt 0 }}\n\
             \x20   tcp-request content send-spoe-group e3 g3 if {{ req.payload(0,0) -m sub /group }}\n\
             \x20   tcp-request content reject if {{ var(txn.pfx3.block) -m int eq 1 }}\n\
             \x20   default_backend be\n\
             backend be\n    server s1 127.0.0.1:{}\n\
             backend agents\n    mode tcp\n    server a1 127.0.0.1:{agent}\n\
             backend nowhere\n    mode tcp\n    server a1 127.0.0.1:{}\n",
            origin.port(),
            free_port(),
            conf = conf.display(),
        );
        let _p = start(&cfg, port);
        let mut out: Vec<String> = ["/a?x=1", "/be/x", "/group?q=7", "/deny", "/down"]
            .iter()
            .map(|p| ask(port, p))
            .collect();
        // In `mode tcp`: the session's events, and a group by a rule.
        for p in ["/ok", "/group/ok", "/group/deny"] {
            out.push(format!("tcp {}", ask(tport, p)));
        }
        out
    });
    assert!(got[0].contains("str:/a"), "{got:#?}");
    assert!(got[0].contains("x-r: int:201 str:int:201"), "{got:#?}");
    assert!(got[3].starts_with("/deny: 403"), "{got:#?}");
    assert_eq!(
        got[5..],
        [
            "tcp /ok: 201 ",
            "tcp /group/ok: 201 ",
            "tcp /group/deny: - "
        ],
        "{got:#?}"
    );
}

/// SPOE files and rules checked as haproxy checks them (`-c`): taken or
/// refused by both; what weir does not do is refused by name.
#[test]
fn spoe_config_checked_beside_haproxy() {
    let dir = tempdir("spoe-check");
    let agent = "spoe-agent a\n    messages m\n    groups g\n    use-backend agents\n    timeout hello 1s\n    timeout idle 1s\n    timeout processing 1s\n";
    let msg = "spoe-message m\n    args src\n    event on-frontend-http-request\nspoe-group g\n    messages m\n";
    // (file, filter line's options, rule, taken by both)
    let cases: Vec<(String, &str, &str, bool)> = vec![
        (format!("{agent}{msg}"), "", "", true),
        (
            format!("[e]\n{agent}{msg}"),
            "engine e ",
            "http-request send-spoe-group e g",
            true,
        ),
        (
            format!("{agent}{msg}"),
            "",
            "http-request send-spoe-group a nope",
            false,
        ),
        (
            format!("{agent}{msg}"),
            "",
            "http-request send-spoe-group other g",
            false,
        ),
        (msg.to_string(), "", "", false),
        (
            format!("{}{msg}", agent.replace("agents", "nowhere")),
            "",
            "",
            false,
        ),
        (
            format!("{}{msg}", agent.replace("messages m", "messages m x")),
            "",
            "",
            false,
        ),
        (format!("{agent}{msg}"), "bogus x ", "", false),
    ];
    for (i, (file, opts, rule, taken)) in cases.iter().enumerate() {
        let conf = dir.join(format!("s{i}.conf"));
        std::fs::write(&conf, file).unwrap();
        let cfg = format!(
            "defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
             frontend fe\n    bind 127.0.0.1:8080\n    filter spoe {opts}config {}\n    {rule}\n    default_backend be\n\
             backend be\n    server s1 127.0.0.1:9\nbackend agents\n    mode tcp\n    server a 127.0.0.1:9\n",
            conf.display()
        );
        assert_eq!(haproxy_accepts(&cfg), *taken, "haproxy on case {i}");
        let (code, _, err) = check_cfg(&cfg);
        assert_eq!(code == 0, *taken, "case {i}: {err}");
    }
    // Events and keywords weir does not have: refused by name.
    let conf = dir.join("tcp.conf");
    std::fs::write(&conf, format!("{agent}spoe-message m\n    args src\n    event on-server-session\nspoe-group g\n    messages m\n")).unwrap();
    let (code, _, err) = check_cfg(&format!(
        "defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         frontend fe\n    bind 127.0.0.1:8080\n    filter spoe config {}\n    default_backend agents\n\
         backend agents\n    mode tcp\n    server a 127.0.0.1:9\n",
        conf.display()
    ));
    assert!(
        code != 0
            && err.contains("tcp.conf:10")
            && err.contains("'on-server-session' is not supported by weir yet"),
        "{err}"
    );
}
