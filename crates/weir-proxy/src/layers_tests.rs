//! weir-proxy's layers, lowest first: a module may use its own layer and
//! those below, never one above (docs/design.md draws the map). Run with
//! `cargo test -p weir-proxy layers`. It fails on a new upward `crate::`
//! path, and on a debt below that was paid but is still listed.

use std::collections::BTreeSet;
use std::path::Path;

const LAYERS: &[(&str, &[&str])] = &[
    (
        "base",
        &[
            "alloc", "clock", "cut", "ids", "sys", "term", "splice", "log", "timers", "sendq",
        ],
    ),
    (
        "net",
        &[
            "conn", "conn_io", "listen", "takeover", "tls", "mail", "fcgi",
        ],
    ),
    (
        "state",
        &[
            "state", "stats", "rates", "freq", "capture", "limits", "profile",
        ],
    ),
    ("backend", &["connect", "checks", "dns", "sticky"]),
    ("session", &["session", "sessions", "forward"]),
    ("protocols", &["tcp", "http", "h2", "lua", "spoe"]),
    ("runtime", &["runtime"]),
    (
        "process",
        &[
            "worker",
            "stats_socket",
            "bind",
            "peers",
            "logfwd",
            "master",
        ],
    ),
];

/// Upward paths still owed, with what pays them.
const DEBTS: &[(&str, &str, &str)] = &[];

/// Every `static` of weir-proxy (per-thread state and the few process
/// globals), with what it holds. State that crosses threads lives in
/// `Shared`; these are what each worker keeps for itself (pools, caches,
/// scratch buffers, its clock) or set-once process facts. A new one is
/// named here, and in docs/design.md's table, or this test fails.
const STATICS: &[(&str, &str, &str)] = &[
    (
        "spoe.rs",
        "IDLE",
        "the thread's idle SPOE agent connections (a socket belongs to its thread's event loop)",
    ),
    (
        "spoe.rs",
        "NEXT_ID",
        "the thread's SPOE stream ids",
    ),
    (
        "alloc/cache.rs",
        "CACHE",
        "the thread's freed malloc blocks, by class (worker threads)",
    ),
    (
        "lua/mod.rs",
        "MINE",
        "the thread's own Lua state (`lua-load-per-thread`)",
    ),
    (
        "lua/socket.rs",
        "CLIENT_TLS",
        "the TLS settings of scripts' `connect_ssl` (made on first use)",
    ),
    (
        "clock.rs",
        "CACHE",
        "the thread's cached clock (one read per loop turn)",
    ),
    (
        "timers.rs",
        "STOCK",
        "the thread's timers kept for reuse (worker threads)",
    ),
    (
        "sendq.rs",
        "QUEUE",
        "the thread's sends held to the end of its pass (worker threads)",
    ),
    (
        "forward.rs",
        "BUFFERS",
        "the thread's forwarding buffers, by size class",
    ),
    ("splice.rs", "POOL", "the thread's spare splice pipes"),
    (
        "tls/verify.rs",
        "IGNORED",
        "the code of a client certificate error let through, until its handshake step reads it",
    ),
    (
        "stats.rs",
        "SLOT",
        "the thread's slot in the per-thread counters",
    ),
    (
        "sessions.rs",
        "TABLE",
        "the thread's session registry (show sess)",
    ),
    (
        "sessions.rs",
        "WATCHERS",
        "the thread's sessions watching for a kill (shutdown session, hard stop)",
    ),
    (
        "clock.rs",
        "E",
        "the process's start instant, for session ages",
    ),
    (
        "http/idle.rs",
        "WHEEL",
        "the thread's timer wheel for idle keep-alive clients",
    ),
    (
        "http/pool.rs",
        "POOL",
        "the thread's idle server connections",
    ),
    (
        "http/pool.rs",
        "POOLS",
        "every thread's idle server connections by worker, for a thread whose own has none and for `show servers conn`",
    ),
    (
        "http/lot.rs",
        "LOT",
        "the thread's sleeping sessions (mio registry)",
    ),
    (
        "http/lot.rs",
        "LAST",
        "when the lot last looked at the memory budget",
    ),
    (
        "h2/mod.rs",
        "SCRATCH",
        "the thread's HTTP/2 read buffer, shared by its connections",
    ),
    (
        "h2/upstream.rs",
        "CONNS",
        "the thread's HTTP/2 connections to servers",
    ),
    (
        "tls/traffic.rs",
        "SCRATCH_BUF",
        "the thread's TLS record scratch buffer",
    ),
    (
        "log/mod.rs",
        "ERR",
        "stderr for runtime messages, opened on first use and again after daemonizing",
    ),
    (
        "http/service.rs",
        "SERVICES",
        "the answers the runtime layer registers (stats page, Prometheus)",
    ),
    ("profile.rs", "MODE", "profiling.tasks (on, off, auto)"),
    (
        "profile.rs",
        "BLOCKS",
        "task profiling counters, per thread",
    ),
    ("profile.rs", "EPOCH", "the profiler's start instant"),
    ("master/mod.rs", "QUIET", "`-q` for the master's notices (set once at start)"),
    (
        "tls/tickets.rs",
        "SECRET",
        "the session ticket secret (drawn at start, or handed on by a master or an old process)",
    ),
];

/// The `static` items of one source file: (file, name).
fn statics_of(rel: &str, text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("").trim_start();
        let code = code
            .strip_prefix("pub(crate) ")
            .or_else(|| code.strip_prefix("pub "))
            .unwrap_or(code);
        if let Some(rest) = code.strip_prefix("static ") {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            out.push((rel.to_string(), name));
        }
    }
    out
}

#[test]
fn every_static_is_named() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut found = BTreeSet::new();
    for f in files {
        let rel = f.strip_prefix(&src).unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(&f).unwrap();
        found.extend(statics_of(&rel, &text));
    }
    let named: BTreeSet<(String, String)> = STATICS
        .iter()
        .map(|(f, n, _)| (f.to_string(), n.to_string()))
        .collect();
    let new: Vec<_> = found.difference(&named).collect();
    assert!(new.is_empty(), "statics not named in STATICS: {new:?}");
    let gone: Vec<_> = named.difference(&found).collect();
    assert!(gone.is_empty(), "named statics that are gone: {gone:?}");
}

fn layer(module: &str) -> Option<usize> {
    LAYERS.iter().position(|(_, ms)| ms.contains(&module))
}

/// The top-level modules a source file names through `crate::` (comments
/// left out; `crate::{a, b::c}` names a and b).
fn named(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(i) = rest.find("crate::") {
            rest = &rest[i + "crate::".len()..];
            if let Some(group) = rest.strip_prefix('{') {
                let inner = group.split('}').next().unwrap_or("");
                for item in inner.split(',') {
                    let name = item.trim().split("::").next().unwrap_or("");
                    out.insert(name.split_whitespace().next().unwrap_or("").to_string());
                }
            } else {
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                out.insert(name);
            }
        }
    }
    out.retain(|n| !n.is_empty());
    out
}

fn sources(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs")
            && !p.to_string_lossy().ends_with("_tests.rs")
        {
            out.push(p);
        }
    }
}

/// Every (module, module above it) pair a source file makes.
fn upward() -> BTreeSet<(String, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut out = BTreeSet::new();
    for f in files {
        let rel = f.strip_prefix(&src).unwrap().to_string_lossy().to_string();
        let top = rel.split('/').next().unwrap().trim_end_matches(".rs");
        if top == "lib" {
            continue;
        }
        let own = layer(top).unwrap_or_else(|| panic!("module {top} is in no layer: add it"));
        let text = std::fs::read_to_string(&f).unwrap();
        for m in named(&text) {
            if let Some(l) = layer(&m) {
                if l > own {
                    out.insert((top.to_string(), m));
                }
            }
        }
    }
    out
}

#[test]
fn layers_import_only_downward() {
    let found = upward();
    let owed: BTreeSet<(String, String)> = DEBTS
        .iter()
        .map(|(a, b, _)| (a.to_string(), b.to_string()))
        .collect();
    let new: Vec<_> = found.difference(&owed).collect();
    assert!(
        new.is_empty(),
        "modules using a layer above theirs: {new:?} (layers, lowest first: {:?})",
        LAYERS.iter().map(|(n, _)| n).collect::<Vec<_>>()
    );
    let paid: Vec<_> = owed.difference(&found).collect();
    assert!(paid.is_empty(), "paid debts still listed: {paid:?}");
}

#[test]
fn the_scanner_reads_paths_and_groups() {
    let n = named("use crate::{conn::Conn, state};\n// crate::http\nlet x = crate::h2::serve();");
    assert_eq!(n.into_iter().collect::<Vec<_>>(), ["conn", "h2", "state"]);
}
