//! Variables, differential against haproxy 2.6: `proc.*` set by
//! `global`'s `set-var`/`set-var-fmt`, shared by every connection and
//! changed by rules; `set-var` conditions; `var()` defaults; the runtime
//! API's `get var` and `set var` (experimental mode) — the same
//! configuration through both, the same requests, the answers and the
//! CLI's raw text compared.

use crate::common::*;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::time::Duration;

fn cfg(sock: &Path, port: u16) -> String {
    format!(
        "global\n    stats socket {} level admin\n\
         \x20   set-var proc.int12 int(12)\n\
         \x20   set-var proc.int5 var(proc.str60,60),div(proc.int12)\n\
         \x20   set-var proc.str1 str(\"this is\")\n\
         \x20   set-var-fmt proc.str \"%[var(proc.str1)] a string\"\n\
         defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         frontend fe\n    bind 127.0.0.1:{port}\n\
         \x20   http-request set-var(proc.hits) var(proc.hits,0),add(1)\n\
         \x20   http-request set-var(sess.n) var(sess.n,0),add(1)\n\
         \x20   http-request set-var(txn.once,ifnotset) str(first)\n\
         \x20   http-request set-var(txn.once,ifnotset) str(second)\n\
         \x20   http-request set-var(txn.big,ifgt) int(7)\n\
         \x20   http-request set-var(txn.e,ifnotempty) str()\n\
         \x20   http-request set-var-fmt(txn.f) \"%[var(proc.int5)]-%[var(sess.n)]\"\n\
         \x20   http-request return status 200 hdr x-v \"%[var(proc.hits)] %[var(sess.n)] %[var(txn.once)] %[var(txn.big)] [%[var(txn.e)]] %[var(txn.f)] %[var(proc.str)]\"\n",
        sock.display()
    )
}

/// Two requests on one connection, then one on another: each `x-v`.
fn answers(port: u16) -> Vec<String> {
    let mut out = Vec::new();
    for reqs in [2, 1] {
        let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut all = String::new();
        for i in 0..reqs {
            let close = if i + 1 == reqs {
                "Connection: close\r\n"
            } else {
                ""
            };
            c.write_all(format!("GET / HTTP/1.1\r\nHost: a\r\n{close}\r\n").as_bytes())
                .unwrap();
        }
        let mut got = Vec::new();
        let _ = c.read_to_end(&mut got);
        all.push_str(&String::from_utf8_lossy(&got));
        out.extend(
            all.lines()
                .filter_map(|l| l.strip_prefix("x-v: "))
                .map(str::to_string),
        );
    }
    out
}

/// What the CLI says to the same lines.
fn cli(sock: &Path) -> Vec<String> {
    [
        "get var proc.hits\n",
        "get var proc.int5\n",
        "get var proc.nope\n",
        "get var txn.once\n",
        "set var proc.x str(a)\n",
        "experimental-mode on; set var proc.x str(a); get var proc.x\n",
        "experimental-mode on; set var proc.y fmt %[var(proc.x)]b; get var proc.y\n",
        "experimental-mode on; set var proc.z expr int(3),add(proc.int12); get var proc.z\n",
        "experimental-mode on; set var proc.b expr str(YQBi),b64dec; get var proc.b\n",
    ]
    .iter()
    .map(|l| ask(sock, l))
    .collect()
}

#[test]
fn variables_as_haproxy() {
    let dir = tempdir("variables");
    let (ws, hs) = (dir.join("w.sock"), dir.join("h.sock"));
    let (wp, hp) = (free_port(), free_port());
    let Some(_h) = Haproxy::start(&cfg(&hs, hp), hp) else {
        panic!("haproxy is not installed: tests/run installs it");
    };
    let _w = Weir::start(&cfg(&ws, wp), wp);
    let (ours, theirs) = (answers(wp), answers(hp));
    assert_eq!(ours, theirs, "weir's answers, then haproxy's");
    assert_eq!(
        ours,
        [
            "1 1 first 7 [] 5-1 this is a string",
            "2 2 first 7 [] 5-2 this is a string",
            "3 1 first 7 [] 5-1 this is a string",
        ],
        "proc shared by connections, sess by requests of one connection"
    );
    let (ours, theirs) = (cli(&ws), cli(&hs));
    assert_eq!(ours, theirs, "weir's CLI, then haproxy's");
    assert_eq!(ours[0], "proc.hits: type=sint value=<3>\n");
    assert_eq!(ours[7], "\n\nproc.z: type=sint value=<15>\n");
}
