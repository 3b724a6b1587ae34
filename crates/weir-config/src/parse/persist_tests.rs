//! Unit tests of `persist.rs`: `use-server` and its persistence rules,
//! `http-send-name-header`, and the server state keywords.

use super::super::tests::{errors, parse_str};
use crate::model::LoadState;

#[test]
fn use_server_and_persist_rules_need_conditions_and_known_servers() {
    let e = errors("backend b\n  use-server s1\n  server s1 127.0.0.1:80\n");
    assert!(
        e[0].contains("t.cfg:2") && e[0].contains("requires either 'if' or 'unless'"),
        "{e:?}"
    );
    let e = errors("backend b\n  use-server s9 if TRUE\n  server s1 127.0.0.1:80\n");
    assert!(
        e[0].contains("t.cfg:2") && e[0].contains("unable to find server 's9'"),
        "{e:?}"
    );
    let e = errors("backend b\n  force-persist\n  ignore-persist\n  http-send-name-header\n");
    assert_eq!(e.len(), 3, "{e:?}");
    assert!(
        e[0].contains("t.cfg:2") && e[2].contains("t.cfg:4"),
        "{e:?}"
    );
    // A name from a format is resolved per request.
    let p = parse_str(
        "backend b\n  use-server %[req.hdr(x)] if TRUE\n  force-persist if FALSE\n  http-send-name-header X-S\n  server s1 127.0.0.1:80\n",
    );
    let c = p.config.expect("accepted");
    let b = &c.proxies[0];
    assert!(b.use_servers[0].dynamic.is_some());
    assert_eq!(b.force_persist.len(), 1);
    assert_eq!(b.http.send_name_header.as_deref(), Some("X-S"));
}

#[test]
fn server_state_file_keywords() {
    let p = parse_str(
        "global\n  server-state-file st\n  server-state-base /var/lib/weir\ndefaults\n  load-server-state-from-file global\n\
         backend a\n  server s1 127.0.0.1:80\nbackend b\n  load-server-state-from-file local\n  server-state-file-name b.state\n  server s1 127.0.0.1:80\n\
         backend c\n  load-server-state-from-file none\n",
    );
    let c = p.config.expect("accepted");
    assert_eq!(c.global.server_state_file.as_deref(), Some("st"));
    assert_eq!(c.global.server_state_base.as_deref(), Some("/var/lib/weir"));
    let by = |n: &str| c.proxies.iter().find(|p| p.name == n).unwrap();
    assert_eq!(by("a").load_state, LoadState::Global);
    assert_eq!(by("b").load_state, LoadState::Local);
    assert_eq!(by("b").state_file_name.as_deref(), Some("b.state"));
    assert_eq!(by("c").load_state, LoadState::None);
    let e = errors("backend b\n  load-server-state-from-file always\n");
    assert!(
        e[0].contains("t.cfg:2") && e[0].contains("'global', 'local' or 'none'"),
        "{e:?}"
    );
}

/// `transparent`, `option transparent`'s deprecated spelling.
#[test]
fn deprecated_transparent_is_option_transparent() {
    let c = super::super::tests::ok("defaults\n  mode tcp\nlisten l\n  bind :80\n  transparent\n");
    assert!(c.proxies[0].options.transparent);
}
