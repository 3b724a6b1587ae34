//! The stats page through the real binary: `stats auth` (401 with the
//! realm), the HTML page and its `;csv` export, `stats scope`, `stats
//! hide-version`, and, in headless Chromium (Debian `chromium`; `.ci/run`
//! installs it), the rendered tables, a screenshot, and an admin action
//! submitted as a browser submits the page's form.

use crate::common::http::{Client, Origin};
use crate::common::tls::run;
use crate::common::*;
use std::path::Path;

fn cfg(stats: u16, open: u16, port: u16, o1: u16) -> String {
    format!(
        "global\n    nbthread 2\n    node edge-1\n    description front door\n\
         defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         listen stats\n    bind 127.0.0.1:{stats}\n    stats enable\n    stats uri /stats\n    stats realm Weir\\ Stats\n    stats auth admin:secret\n    stats refresh 5s\n    stats hide-version\n    stats scope be\n    stats show-node\n    stats show-desc\n\
         listen open\n    bind 127.0.0.1:{open}\n    stats uri /admin\n    stats admin if {{ src 127.0.0.1 }}\n\
         frontend fe\n    bind 127.0.0.1:{port}\n    default_backend be\n\
         backend be\n    server o1 127.0.0.1:{o1}\n    server dead 127.0.0.1:9 check inter 200ms fall 1\n"
    )
}

fn get(port: u16, path: &str, auth: Option<&str>) -> crate::common::http::Response {
    let mut c = Client::connect(port);
    let mut req = format!("GET {path} HTTP/1.1\r\nHost: t\r\n");
    if let Some(a) = auth {
        req.push_str(&format!("Authorization: Basic {a}\r\n"));
    }
    req.push_str("\r\n");
    c.send(req.as_bytes());
    c.response("GET")
}

/// The tests of this file one at a time: headless chromium, started by one
/// of them, opens sockets of its own, and a port `free_port` handed out
/// to another test was once taken before weir bound it.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

#[test]
fn the_page_and_its_csv_behind_auth_and_scope() {
    let _one_at_a_time = serial();
    let o1 = Origin::start("o1");
    let (stats, open, port) = (free_port(), free_port(), free_port());
    let mut w = Weir::spawn(&cfg(stats, open, port, o1.port()), &[]);
    w.wait_listening(stats);
    w.wait_listening(port);
    let r = get(stats, "/stats", None);
    assert_eq!(r.status, 401);
    assert_eq!(
        r.header("www-authenticate"),
        Some("Basic realm=\"Weir Stats\"")
    );
    let bad = get(stats, "/stats", Some("YWRtaW46d3Jvbmc=")); // admin:wrong
    assert_eq!(bad.status, 401);
    let good = "YWRtaW46c2VjcmV0"; // admin:secret
    let r = get(stats, "/stats", Some(good));
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("text/html"));
    let page = r.text();
    assert!(
        page.contains("<meta http-equiv=\"refresh\" content=\"5\">"),
        "{page}"
    );
    assert!(page.contains("<h1>weir</h1>"), "hide-version");
    assert!(
        page.contains("on edge-1: front door</h2>"),
        "show-node, show-desc: {page}"
    );
    assert!(
        page.contains("id=\"px-be\"") && !page.contains("id=\"px-fe\""),
        "scope"
    );
    assert!(!page.contains("<form"), "no admin rights here");
    let r = get(stats, "/stats;csv", Some(good));
    let csv = r.text();
    assert!(csv.starts_with("# pxname,svname,qcur,"), "{csv}");
    assert!(csv.lines().skip(1).all(|l| l.starts_with("be,")), "{csv}");
}

#[test]
fn the_query_asks_for_csv_and_a_scope_and_a_posted_form_keeps_the_connection() {
    // `;csv` and `scope=` may come in the query (haproxy's own links do
    // so); the scope keeps the proxies whose name holds it, in any case.
    let _one_at_a_time = serial();
    let o1 = Origin::start("o1");
    let (stats, open, port) = (free_port(), free_port(), free_port());
    let mut w = Weir::spawn(&cfg(stats, open, port, o1.port()), &[]);
    w.wait_listening(open);
    let mut c = Client::connect(open);
    c.send(b"GET /admin?;csv;scope=STAT HTTP/1.1\r\nHost: t\r\n\r\n");
    let r = c.response("GET");
    assert_eq!(r.header("content-type"), Some("text/plain"));
    let csv = r.text();
    assert!(
        csv.lines().skip(1).all(|l| l.starts_with("stats,")),
        "{csv}"
    );
    assert!(csv.contains("\nstats,FRONTEND"), "{csv}");
    // An admin form read whole: the 303 leaves the connection open.
    let form = "s=dead&action=maint&b=be";
    c.send(
        format!(
            "POST /admin HTTP/1.1\r\nHost: t\r\nContent-Length: {}\r\n\r\n{form}",
            form.len()
        )
        .as_bytes(),
    );
    let r = c.response("POST");
    assert_eq!(r.status, 303);
    assert_eq!(r.header("connection"), None);
    c.send(b"GET /admin;csv HTTP/1.1\r\nHost: t\r\n\r\n");
    let csv = c.response("GET").text();
    assert!(
        csv.lines()
            .any(|l| l.starts_with("be,dead,") && l.contains("MAINT")),
        "{csv}"
    );
}

/// Headless Chromium, when installed.
fn chromium() -> Option<&'static str> {
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|b| {
            std::process::Command::new(b)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
}

/// One headless run on `url`; its stdout (the DOM with `--dump-dom`).
/// Each run has a profile directory of its own: with the default one, a
/// run that starts while the last one still exits hands its URL over to
/// it and prints nothing.
fn browse(bin: &str, extra: &[&str], url: &str) -> String {
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let profile = tempdir(&format!("chromium-profile-{n}"));
    let data_dir = format!("--user-data-dir={}", profile.display());
    let mut args = vec![
        bin,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-dev-shm-usage",
        "--virtual-time-budget=5000",
        &data_dir,
    ];
    args.extend_from_slice(extra);
    args.push(url);
    let out = run(&args, b"");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn chromium_renders_the_page_and_runs_an_admin_action() {
    let _one_at_a_time = serial();
    let Some(bin) = chromium() else {
        panic!("chromium is not installed: tests/run installs it");
    };
    let o1 = Origin::start("o1");
    let (stats, open, port) = (free_port(), free_port(), free_port());
    let mut w = Weir::spawn(&cfg(stats, open, port, o1.port()), &[]);
    w.wait_listening(open);
    w.wait_listening(port);
    assert_eq!(Client::connect(port).get("/").status, 200);
    let url = format!("http://127.0.0.1:{open}/admin");
    // The check marks 'dead' down; the rendered page shows it in red.
    let dom = wait_for(
        "the rendered page with 'dead' DOWN",
        std::time::Duration::from_secs(20),
        || {
            let d = browse(bin, &["--dump-dom"], &url);
            d.contains("<tr class=\"active_down\" data-sv=\"dead\">")
                .then_some(d)
        },
    );
    for px in ["stats", "open", "fe", "be"] {
        assert!(dom.contains(&format!("id=\"px-{px}\"")), "{px}: {dom}");
    }
    assert!(
        dom.contains("<tr class=\"active_no_check\" data-sv=\"o1\">"),
        "{dom}"
    );
    assert!(dom.contains("name=\"action\""), "admin form: {dom}");
    // HAProxy's columns and process box, as the browser laid them out.
    for text in [
        ">Session rate</th>",
        "<th>Last</th>",
        "<th>Thrtle</th>",
        "system limits: memmax = unlimited; ulimit-n = ",
        "; conn rate = ",
        "Running tasks: ",
    ] {
        assert!(dom.contains(text), "{text}: {dom}");
    }
    let dead = dom
        .split("data-sv=\"dead\">")
        .nth(1)
        .and_then(|r| r.split("</tr>").next())
        .unwrap_or("");
    assert!(
        dead.contains("s DOWN</td><td>L4CON in "),
        "the time in its state and the last check's: {dead}"
    );
    let idle: u32 = dom
        .split("; idle = ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .expect("idle share");
    assert!(idle <= 100, "{idle}");

    // A screenshot, as a person would see it.
    let dir = tempdir("stats-page");
    let shot = dir.join("stats.png");
    let arg = format!("--screenshot={}", shot.display());
    browse(
        bin,
        &[&arg, "--window-size=1400,900", "--hide-scrollbars"],
        &url,
    );
    let png = std::fs::read(&shot).unwrap_or_default();
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 10_000,
        "{} bytes",
        png.len()
    );

    // The browser submits the admin form (a page that submits it on load;
    // a dump taken mid-navigation can come back empty, so the state is
    // read from weir itself): o1 goes to maintenance.
    let form = dir.join("submit.html");
    let o1_status = || {
        let csv = Client::connect(open).get("/admin;csv").text();
        csv.lines()
            .find(|l| l.starts_with("be,o1,"))
            .and_then(|l| l.split(',').nth(17))
            .unwrap_or("")
            .to_string()
    };
    let submit = |action: &str, want: &str| {
        write_form(&form, &url, "be", "o1", action);
        for _ in 0..3 {
            browse(bin, &["--dump-dom"], &format!("file://{}", form.display()));
            if o1_status() == want {
                return;
            }
        }
        panic!(
            "the browser's '{action}' did not take: o1 is {}",
            o1_status()
        );
    };
    submit("maint", "MAINT");
    assert_eq!(Client::connect(port).get("/").status, 503, "no server left");
    // The page the action redirects to shows the outcome and the state.
    let after = browse(bin, &["--dump-dom"], &format!("{url};st=DONE"));
    assert!(
        after.contains("class=\"notice\">The action was applied."),
        "{after}"
    );
    assert!(
        after.contains("<tr class=\"maintain\" data-sv=\"o1\">"),
        "{after}"
    );
    submit("ready", "no check");
    assert_eq!(Client::connect(port).get("/").status, 200);
}

/// A page that submits the stats page's form for one server on load.
fn write_form(path: &Path, url: &str, b: &str, s: &str, action: &str) {
    let html = format!(
        "<html><body onload=\"document.forms[0].submit()\"><form method=\"post\" action=\"{url}\">\
         <input type=\"hidden\" name=\"b\" value=\"{b}\"><input type=\"checkbox\" name=\"s\" value=\"{s}\" checked>\
         <input type=\"hidden\" name=\"action\" value=\"{action}\"></form></body></html>"
    );
    std::fs::write(path, html).unwrap();
}

#[test]
fn a_stalled_admin_form_is_bounded() {
    let _one_at_a_time = serial();
    let o1 = Origin::start("o1");
    let (stats, open, port) = (free_port(), free_port(), free_port());
    // No timeout http-request, a short timeout client.
    let c = cfg(stats, open, port, o1.port()).replace("timeout client 5s", "timeout client 500ms");
    let mut w = Weir::spawn(&c, &[]);
    w.wait_listening(open);
    let mut cl = Client::connect(open);
    cl.send(b"POST /admin HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\ns=o1");
    let started = std::time::Instant::now();
    let r = cl.response("POST");
    assert_eq!(r.status, 303);
    assert_eq!(r.header("location"), Some("/admin;st=ERRP"));
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

/// (status, the realm asked for) of `path` without and with credentials.
fn stats_answers(port: u16, path: &str) -> [(String, String); 2] {
    let url = format!("http://127.0.0.1:{port}{path}");
    let one = |extra: &[&str]| {
        let mut args = vec!["curl", "-s", "-o", "/dev/null", "-D", "-"];
        args.extend_from_slice(extra);
        args.push(&url);
        let t = String::from_utf8_lossy(&run(&args, b"").stdout).into_owned();
        let status = t.split_whitespace().nth(1).unwrap_or("").to_string();
        let realm = t
            .lines()
            .find_map(|l| l.strip_prefix("www-authenticate: "))
            .unwrap_or("")
            .trim()
            .to_string();
        (status, realm)
    };
    [one(&[]), one(&["-u", "a:b"])]
}

#[test]
fn stats_http_request_rules_decide_as_haproxy() {
    let seen = beside_haproxy(|start| {
        let port = free_port();
        let cfg = format!(
            "userlist U\n    user a insecure-password b\n\
             defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
             listen l\n    bind 127.0.0.1:{port}\n    stats enable\n    stats uri /st\n\
             \x20   stats http-request deny if {{ path_end /deny }}\n\
             \x20   stats http-request auth realm Zone if {{ path_end /auth }}\n\
             \x20   stats http-request allow if {{ path_end /allow }}\n\
             \x20   stats http-request auth unless {{ http_auth(U) }}\n"
        );
        let _p = start(&cfg, port);
        let mut seen = ["/st;csv", "/st/deny", "/st/auth", "/st/allow"]
            .map(|p| stats_answers(port, p))
            .to_vec();
        drop(_p);
        // In a frontend too.
        let port = free_port();
        let cfg = format!(
            "defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
             frontend f\n    bind 127.0.0.1:{port}\n    stats enable\n    stats uri /st\n    stats http-request deny\n"
        );
        let _p = start(&cfg, port);
        seen.push(stats_answers(port, "/st"));
        seen
    });
    let s = |a: &str, b: &str| (a.to_string(), b.to_string());
    let asked = "Basic realm=\"HAProxy Statistics\"";
    assert_eq!(seen[0], [s("401", asked), s("200", "")]);
    assert_eq!(seen[1], [s("403", ""), s("403", "")]);
    assert_eq!(seen[2][1], s("401", "Basic realm=\"Zone\""));
    assert_eq!(seen[3], [s("200", ""), s("200", "")]);
    assert_eq!(seen[4], [s("403", ""), s("403", "")]);
    // With `stats auth` they are refused, as haproxy refuses them.
    let (code, out, err) = check_cfg(
        "defaults\n    mode http\nlisten l\n    bind :0\n    stats auth a:b\n    stats http-request allow\n",
    );
    assert_ne!(code, 0);
    assert!(format!("{out}{err}").contains(":6] : 'stats http-request' : stats 'auth'/'realm' and 'http-request' can't be used at the same time"), "{out}{err}");
}
