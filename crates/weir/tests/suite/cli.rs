//! The command line: -c, -cc, -v, -vv, directories, diagnostics with
//! file:line, nothing bound on a bad configuration.

use crate::common::*;
use std::net::TcpListener;

#[test]
fn check_mode_accepts_valid_config() {
    let (code, out, _) = check_cfg(
        "frontend f\n  bind 127.0.0.1:1\n  default_backend b\nbackend b\n  server s 127.0.0.1:2\n",
    );
    assert_eq!(code, 0);
    assert!(out.contains("Configuration file is valid"));
}

#[test]
fn check_mode_reports_every_error_with_file_and_line() {
    let (code, out, err) = check_cfg(
        "global\n  nbthread x\nbackend b\n  balanse roundrobin\n  server s 127.0.0.1:99999\n",
    );
    assert_eq!(code, 1);
    assert!(!out.contains("valid"));
    assert!(err.contains("haproxy.cfg:2]"), "{err}");
    assert!(err.contains("haproxy.cfg:4] : unknown keyword 'balanse' in 'backend' section; did you mean 'balance'?"), "{err}");
    assert!(err.contains("haproxy.cfg:5]"), "{err}");
    assert!(
        err.contains("Fatal errors found in configuration (3)"),
        "{err}"
    );
}

#[test]
fn bad_config_binds_nothing() {
    let port = free_port();
    let dir = tempdir("bad");
    let cfg = dir.join("bad.cfg");
    std::fs::write(
        &cfg,
        format!("frontend f\n  bind 127.0.0.1:{port}\n  default_backend nope\n"),
    )
    .unwrap();
    let (code, _, err) = run_weir(&["-db", "-f", cfg.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(
        err.contains("unable to find required default_backend: 'nope'"),
        "{err}"
    );
    assert!(
        TcpListener::bind(("127.0.0.1", port)).is_ok(),
        "port must still be free"
    );
}

#[test]
fn directory_loads_cfg_files_in_lexical_order() {
    let dir = tempdir("dir");
    std::fs::write(dir.join("10-global.cfg"), "global\n  maxconn 100\n").unwrap();
    std::fs::write(
        dir.join("20-backend.cfg"),
        "backend b\n  server s 127.0.0.1:1\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("30-front.cfg"),
        "frontend f\n  bind 127.0.0.1:1\n  default_backend b\n",
    )
    .unwrap();
    std::fs::write(dir.join("ignored.txt"), "garbage\n").unwrap();
    let (code, out, err) = run_weir(&["-c", "-f", dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("valid"));
    // A later file referring to an earlier one's backend, out of order, fails the same way.
    std::fs::write(
        dir.join("05-front.cfg"),
        "frontend g\n  bind 127.0.0.1:2\n  default_backend zz\n",
    )
    .unwrap();
    let (code, _, err) = run_weir(&["-c", "-f", dir.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(err.contains("05-front.cfg:3"), "{err}");
}

#[test]
fn condition_evaluation() {
    assert_eq!(run_weir(&["-cc", "version_atleast(2.6)"]).0, 0);
    assert_eq!(run_weir(&["-cc", "version_atleast(2.7)"]).0, 1);
    assert_eq!(
        run_weir(&[
            "-cc",
            "feature(EPOLL) && feature(OPENSSL) && feature(LUA) && !feature(QUIC)"
        ])
        .0,
        0
    );
    assert_eq!(run_weir(&["-cc", "streq(a,b) || defined(PATH)"]).0, 0);
    assert_eq!(run_weir(&["-cc", "0"]).0, 1);
    assert_eq!(run_weir(&["-cc", "nosuch(1)"]).0, 2);
}

#[test]
fn version_and_features() {
    let (code, out, _) = run_weir(&["-v"]);
    assert_eq!(code, 0);
    assert!(out.contains("HAProxy 2.6 configuration language"), "{out}");
    let (_, out, _) = run_weir(&["-vv"]);
    let line = out
        .lines()
        .find(|l| l.starts_with("Feature list : "))
        .expect("feature list");
    assert!(
        line.contains("+EPOLL") && line.contains("+LINUX_SPLICE") && line.contains("+OPENSSL"),
        "{line}"
    );
    assert!(
        line.contains("+LUA")
            && line.contains("+ZLIB")
            && line.contains("+PROMEX")
            && line.contains("-QUIC"),
        "{line}"
    );
    assert!(
        out.contains("\nAvailable services : prometheus-exporter\n"),
        "{out}"
    );
}

/// A listener written for a TLS-capable haproxy (`.if feature(OPENSSL)`)
/// is kept: its certificate is read (here: missing, an error naming it).
#[test]
fn feature_openssl_keeps_the_tls_listener() {
    let dir = tempdir("cli-feature-openssl");
    let cfg = dir.join("h.cfg");
    std::fs::write(
        &cfg,
        "defaults\n  mode http\n  timeout client 1s\n  timeout server 1s\n  timeout connect 1s\n\
         frontend f\n  bind 127.0.0.1:1\n.if feature(OPENSSL)\n  bind 127.0.0.1:2 ssl crt /nonexistent/site.pem\n.endif\n",
    )
    .unwrap();
    let (code, _, err) = run_weir(&["-c", "-f", cfg.to_str().unwrap()]);
    assert_ne!(code, 0, "the ssl line was dropped: {err}");
    assert!(
        err.contains("h.cfg:9") && err.contains("/nonexistent/site.pem"),
        "{err}"
    );
}

#[test]
fn unknown_flag_and_missing_file() {
    let (code, _, err) = run_weir(&["--frobnicate"]);
    assert_eq!(code, 1);
    assert!(err.contains("unknown option '--frobnicate'"));
    let (code, _, err) = run_weir(&["-c", "-f", "/nonexistent/weir.cfg"]);
    assert_eq!(code, 1);
    assert!(err.contains("/nonexistent/weir.cfg"), "{err}");
    let (code, _, err) = run_weir(&["-c"]);
    assert_eq!(code, 1);
    assert!(err.contains("No configuration file"));
}

#[test]
fn env_expansion_and_conditions_in_files() {
    let dir = tempdir("env");
    let cfg = dir.join("e.cfg");
    std::fs::write(
        &cfg,
        ".if defined(WEIR_TEST_BE)\nbackend \"$WEIR_TEST_BE\"\n  server s 127.0.0.1:1\n.else\n.alert WEIR_TEST_BE is not set\n.endif\n",
    )
    .unwrap();
    let out = std::process::Command::new(WEIR)
        .args(["-c", "-f", cfg.to_str().unwrap()])
        .env("WEIR_TEST_BE", "app")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let out = std::process::Command::new(WEIR)
        .args(["-c", "-f", cfg.to_str().unwrap()])
        .env_remove("WEIR_TEST_BE")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("e.cfg:5] : WEIR_TEST_BE is not set"));
}

#[test]
fn a_frontend_without_backend_passes_zero_warning_as_in_haproxy() {
    let (code, out, err) = check_cfg(
        "global\n    zero-warning\ndefaults\n    mode http\n    timeout connect 1s\n    timeout client 1s\n    timeout server 1s\n\
         frontend fe\n    bind 127.0.0.1:18999\n    http-request return status 200\n",
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(err.contains("NOTICE") && err.contains(":8]"), "{err}");
}
