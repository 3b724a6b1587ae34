//! Unit tests of `fcgi-app` sections and their checks.

use crate::diag::Level;
use crate::parse::tests::{errors, parse_str};

#[test]
fn fcgi_apps_parse_and_are_checked_as_haproxy_checks_them() {
    let p = parse_str(
        "fcgi-app php\n  docroot /var/www\n  index index.php\n  path-info ^(/.+\\.php)(/.*)?$\n  acl ov path_beg /ov\n  set-param redirect_status 200\n  set-param SCRIPT_NAME /o if ov\n  pass-header Authorization if { hdr(x-pass) yes }\n  log-stderr global\n  no option keep-conn\n  option max-reqs 4\n\
         backend b\n  mode http\n  use-fcgi-app php\n  server s 127.0.0.1:9000 proto fcgi\n",
    );
    let cfg = p.config.expect("parses");
    let app = &cfg.fcgi_apps[0];
    assert_eq!(app.docroot.as_deref(), Some("/var/www"));
    assert_eq!(app.index.as_deref(), Some("index.php"));
    assert!(app.path_info.is_some() && app.log_stderr_global && !app.keep_conn);
    assert_eq!(app.max_reqs, 4);
    assert!(p
        .diagnostics
        .items
        .iter()
        .any(|d| d.level == Level::Notice && d.to_string().contains("'option max-reqs' accepted")));
    let names: Vec<_> = app
        .set_params
        .iter()
        .map(|s| (s.name.as_str(), s.cond.is_some()))
        .collect();
    assert_eq!(names, [("REDIRECT_STATUS", false), ("SCRIPT_NAME", true)]);
    assert_eq!(app.pass_headers[0].0, "authorization");
    assert!(cfg.proxies[0].servers[0].fcgi);
    assert_eq!(
        cfg.proxies[0].use_fcgi_app.as_ref().map(|a| a.0.as_str()),
        Some("php")
    );
    let d = "defaults\n  mode http\n";
    for (cfg, want) in [
        ("backend b\n  use-fcgi-app nope\n  server s 127.0.0.1:9 proto fcgi\n", "t.cfg:4] : proxy 'b' : fcgi-app 'nope' not found."),
        ("fcgi-app a\n  docroot /x\nbackend b\n  use-fcgi-app a\n  server s 127.0.0.1:9\n", "proxy 'b': FCGI app configured but no FCGI server found."),
        ("fcgi-app a\n  docroot /x\nbackend b\n  server s 127.0.0.1:9 proto fcgi\n", "proxy 'b': FCGI server 's' has no FCGI app configured."),
        ("fcgi-app a\n  index x\nbackend b\n  use-fcgi-app a\n  server s 127.0.0.1:9 proto fcgi\n", "t.cfg:3] : fcgi-app 'a': no docroot configured."),
        ("fcgi-app a\n  docroot /x\nbackend b\n  mode tcp\n  use-fcgi-app a\n  server s 127.0.0.1:9 proto fcgi\n", "FCGI application cannot be used in non-HTTP mode."),
        ("fcgi-app a\n  docroot /x\nfcgi-app b\n  docroot /y\nbackend b\n  use-fcgi-app a\n  use-fcgi-app b\n  server s 127.0.0.1:9 proto fcgi\n", "t.cfg:9] : 'use-fcgi-app' : only one fcgi-app supported per backend"),
        ("fcgi-app a\n  docroot /x\n  path-info ^(x\n", "t.cfg:5] : '^(x' : regex '^(x' is invalid"),
        ("fcgi-app a\n  docroot /x\n  bogus 1\n", "t.cfg:5] : unknown keyword 'bogus' in 'fcgi-app' section"),
        ("fcgi-app a\n  docroot /x\n  set-param Y 2 if bar\n", "t.cfg:5] : 'Y' : no such ACL : 'bar'"),
        ("fcgi-app a\n  docroot /x\nfcgi-app a\n  docroot /y\n", "t.cfg:5] : fcgi-app section 'a' has the same name as another one declared at t.cfg:3."),
    ] {
        let e = errors(&format!("{d}{cfg}"));
        assert!(e.iter().any(|m| m.contains(want)), "{cfg}: {e:?}");
    }
    // `filter fcgi-app <name>` names the application too.
    let p = parse_str("fcgi-app a\n  docroot /x\nbackend b\n  mode http\n  filter fcgi-app a\n  server s 127.0.0.1:9 proto fcgi\n");
    assert!(p
        .config
        .is_some_and(|c| c.proxies[0].use_fcgi_app.is_some()));
}
