//! Parser tests: every section, keyword family and diagnostic.

use super::*;
use crate::addr::{BindAddr, PortSpec, ServerAddr};
use crate::model::*;
use std::time::Duration;

fn env(name: &str) -> Option<String> {
    match name {
        "PORT" => Some("8080".into()),
        "WITH_X" => Some("yes".into()),
        _ => None,
    }
}

pub(super) fn parse_str(text: &str) -> Parsed {
    parse(
        &[Source {
            name: "t.cfg".into(),
            text: text.into(),
        }],
        &env,
    )
}

pub(super) fn ok(text: &str) -> Config {
    let p = parse_str(text);
    let errs: Vec<String> = p.diagnostics.errors().map(|d| d.to_string()).collect();
    assert!(errs.is_empty(), "unexpected errors: {errs:#?}");
    p.config.expect("config")
}

pub(super) fn errors(text: &str) -> Vec<String> {
    let p = parse_str(text);
    assert!(p.config.is_none(), "config was accepted");
    p.diagnostics.errors().map(|d| d.to_string()).collect()
}

fn warnings(text: &str) -> Vec<String> {
    parse_str(text)
        .diagnostics
        .items
        .iter()
        .filter(|d| d.level == Level::Warning)
        .map(|d| d.to_string())
        .collect()
}

#[test]
fn quickstart_shape() {
    let c = ok("global\n  maxconn 100\n  nbthread 2\ndefaults\n  mode tcp\n  timeout connect 5s\n  timeout client 30s\n  timeout server 30s\n\
        frontend fe\n  bind 127.0.0.1:9000\n  default_backend be\nbackend be\n  balance leastconn\n  server s1 127.0.0.1:9001 weight 3 check inter 1s rise 1 fall 2\n");
    assert_eq!(c.global.maxconn, Some(100));
    assert_eq!(c.global.nbthread, Some(2));
    let fe = c.proxy("fe").unwrap();
    assert_eq!(fe.kind, ProxyKind::Frontend);
    assert_eq!(fe.timeouts.client, Some(Duration::from_secs(30)));
    assert_eq!(fe.binds[0].addrs.len(), 1);
    let be = c.proxy("be").unwrap();
    assert_eq!(be.balance, Balance::LeastConn);
    let s = &be.servers[0];
    assert_eq!((s.weight, s.check, s.rise, s.fall), (3, true, 1, 2));
    assert_eq!(s.inter, Duration::from_secs(1));
    assert_eq!(be.timeouts.connect, Some(Duration::from_secs(5)));
}

#[test]
fn unknown_keyword_with_suggestion_and_line() {
    let e = errors("backend b\n  balanse roundrobin\n");
    assert_eq!(
        e,
        ["[ALERT] parsing [t.cfg:2] : unknown keyword 'balanse' in 'backend' section; did you mean 'balance'?"]
    );
    let e = errors("global\n  maxcon 10\n");
    assert!(
        e[0].contains("t.cfg:2") && e[0].contains("did you mean 'maxconn'"),
        "{e:?}"
    );
    let e = errors("frontnd x\n");
    assert!(e[0].contains("out of section"), "{e:?}");
}

#[test]
fn all_errors_are_collected() {
    let e = errors("global\n  nbthread 0\n  maxconn x\nfrontend f\n  bind :80\n  default_backend nope\n  timeout client 10q\nbackend b\n  server s 127.0.0.1:99999\n");
    assert_eq!(e.len(), 5, "{e:#?}");
    assert!(e.iter().any(|m| m.contains("t.cfg:2")));
    assert!(e.iter().any(|m| m.contains("t.cfg:3")));
    assert!(e
        .iter()
        .any(|m| m.contains("t.cfg:6")
            && m.contains("unable to find required default_backend: 'nope'")));
    assert!(e.iter().any(|m| m.contains("t.cfg:7")));
    assert!(e.iter().any(|m| m.contains("t.cfg:9")));
    assert!(errors("backend b\n  server s 127.0.0.1:99999\n")[0].contains("t.cfg:2"));
}

#[test]
fn refused_keywords_and_sections_by_name() {
    let e = errors(
        "frontend f\n  bind :80\n  default_backend b\nbackend b\n  filter opentracing config x\n",
    );
    assert!(
        e[0].contains("t.cfg:5")
            && e[0].contains("filter 'opentracing' is not supported by weir yet"),
        "{e:?}"
    );
    let e = errors("cache c\n  total-max-size 4\n  max-objects 3\n");
    assert!(
        e[0].contains("t.cfg:3")
            && e[0].contains("unknown keyword 'max-objects' in 'cache' section"),
        "{e:?}"
    );
    let e = errors("backend b\n  http-request cache-use nosuch\n");
    assert!(
        e[0].contains("t.cfg:2") && e[0].contains("unable to find cache 'nosuch'"),
        "{e:?}"
    );
    let e = errors("backend b\n  server s 127.0.0.1:80 namespace *\n");
    assert!(
        e.iter().any(|m| m.contains(
            "'namespace *' (the namespace a PROXY header names) is not supported by weir yet"
        )),
        "{e:?}"
    );
    let c = ok(
        "backend b\n  server s 127.0.0.1:80 namespace blue\nfrontend f\n  bind :80 namespace red\n",
    );
    assert_eq!(c.proxies[0].servers[0].namespace.as_deref(), Some("blue"));
    assert_eq!(c.proxies[1].binds[0].namespace.as_deref(), Some("red"));
    let e = errors("frontend f\n  bind :443 npn h2\n");
    assert!(
        e.iter()
            .any(|m| m.contains("'npn' is not supported by weir yet")),
        "{e:?}"
    );
    let e = errors("global\n  default-path elsewhere\n");
    assert!(
        e[0].contains("t.cfg:2") && e[0].contains("expects one of"),
        "{e:?}"
    );
    let e = errors("listen l\n  bind :80\n  stats show-modules\n");
    assert!(
        e[0].contains("t.cfg:3")
            && e[0].contains("'stats show-modules' is not supported by weir yet"),
        "{e:?}"
    );
    let e = errors("frontend f\n  bind :80\n  use_backend b if nope\nbackend b\n");
    assert!(e[0].contains("no such ACL : 'nope'"), "{e:?}");
    let e = errors("backend b\n  balance rdp-cookie(\n");
    assert!(e[0].contains("expects rdp-cookie(<name>)"), "{e:?}");
    let e = errors("backend b\n  persist rdp-cookie(\n");
    assert!(
        e[0].contains("t.cfg:2") && e[0].contains("rdp-cookie(<name>)"),
        "{e:?}"
    );
}

#[test]
fn defaults_inheritance_named_and_anonymous() {
    let c = ok("defaults base\n  timeout connect 1s\n  retries 5\n\
        defaults\n  timeout connect 2s\n\
        backend a\n  server s 127.0.0.1:1\n\
        backend b from base\n  server s 127.0.0.1:1\n\
        defaults child from base\n  timeout server 9s\n\
        backend c\n  server s 127.0.0.1:1\n");
    assert_eq!(
        c.proxy("a").unwrap().timeouts.connect,
        Some(Duration::from_secs(2))
    );
    assert_eq!(c.proxy("a").unwrap().retries, 3);
    assert_eq!(
        c.proxy("b").unwrap().timeouts.connect,
        Some(Duration::from_secs(1))
    );
    assert_eq!(c.proxy("b").unwrap().retries, 5);
    let cc = c.proxy("c").unwrap();
    assert_eq!(
        (cc.timeouts.connect, cc.timeouts.server),
        (Some(Duration::from_secs(1)), Some(Duration::from_secs(9)))
    );
    assert!(errors("backend x from nope\n")[0].contains("defaults section 'nope' not found"));
}

#[test]
fn default_server_applies_to_later_servers() {
    let c = ok("backend b\n  default-server inter 3s fall 5 maxconn 10\n  server a 127.0.0.1:1\n  server b 127.0.0.1:2 maxconn 20 backup\n");
    let be = c.proxy("b").unwrap();
    assert_eq!(be.servers[0].inter, Duration::from_secs(3));
    assert_eq!(be.servers[0].fall, 5);
    assert_eq!(be.servers[0].maxconn, Some(10));
    assert_eq!(be.servers[1].maxconn, Some(20));
    assert!(be.servers[1].backup && !be.servers[0].backup);
}

#[test]
fn conditional_blocks() {
    let c = ok(".if defined(WITH_X)\nglobal\n  maxconn 10\n.elif 1\nglobal\n  maxconn 20\n.else\nglobal\n  maxconn 30\n.endif\n");
    assert_eq!(c.global.maxconn, Some(10));
    let c = ok(".if streq(\"$WITH_X\",no)\nglobal\n  maxconn 10\n.elif version_atleast(2.4)\nglobal\n  maxconn 20\n.else\nglobal\n  maxconn 30\n.endif\n");
    assert_eq!(c.global.maxconn, Some(20));
    let c =
        ok(".if 0\n  .if 1\nglobal\n  maxconn 10\n  .endif\n.else\nglobal\n  maxconn 40\n.endif\n");
    assert_eq!(c.global.maxconn, Some(40));
    let c = ok(".if 0\n  garbage that would not parse\n.endif\nglobal\n");
    assert_eq!(c.global.maxconn, None);
    assert!(errors(".if 1\nglobal\n")[0].contains("missing '.endif'"));
    assert!(errors(".endif\n")[0].contains("without matching"));
    assert!(errors(".if 1\n.else\n.else\n.endif\n")[0].contains("only one '.else'"));
    assert!(errors(".if nosuch(1)\n.endif\n")[0].contains("failed to evaluate"));
}

#[test]
fn directives_and_env() {
    let p = parse_str(".notice hello\n.warning careful\nglobal\n");
    assert!(p.config.is_some());
    assert_eq!(p.diagnostics.items.len(), 2);
    assert_eq!(
        p.diagnostics.items[1].to_string(),
        "[WARNING] parsing [t.cfg:2] : careful"
    );
    assert!(errors(".alert stop here\n")[0].contains("t.cfg:1"));
    let c = ok("frontend f\n  bind \"127.0.0.1:${PORT}\"\n");
    assert!(matches!(
        c.proxy("f").unwrap().binds[0].addrs[0],
        BindAddr::Inet {
            ports: (8080, 8080),
            ..
        }
    ));
    let c = ok("global\n  setenv BE_PORT 7000\nbackend b\n  server s \"127.0.0.1:$BE_PORT\"\n");
    assert!(matches!(
        c.proxy("b").unwrap().servers[0].addr,
        ServerAddr::Inet {
            port: PortSpec::Fixed(7000),
            ..
        }
    ));
    let c = ok("global\n  presetenv PORT 1\nbackend b\n  server s \"127.0.0.1:$PORT\"\n");
    assert!(matches!(
        c.proxy("b").unwrap().servers[0].addr,
        ServerAddr::Inet {
            port: PortSpec::Fixed(8080),
            ..
        }
    ));
    let c = ok("backend b\n  description \"${.SECTION} at ${.LINE}\"\n");
    assert_eq!(
        c.proxy("b").unwrap().description.as_deref(),
        Some("backend at 2")
    );
}

#[test]
fn legacy_timeouts_warn() {
    let w = warnings("defaults\n  contimeout 5s\n  clitimeout 50s\n  srvtimeout 50s\n");
    assert_eq!(w.len(), 3);
    assert!(w[0].contains("use 'timeout connect'"));
    let c = ok("defaults\n  contimeout 5s\nbackend b\n");
    assert_eq!(
        c.proxy("b").unwrap().timeouts.connect,
        Some(Duration::from_secs(5))
    );
}

#[test]
fn nbproc_runs_threads_and_warns_once() {
    let p = parse_str("global\n  nbproc 4\n  cpu-map 1 0\n  cpu-map 2 1\n");
    let c = p.config.unwrap();
    assert_eq!(c.global.nbproc, Some(4));
    assert_eq!(
        p.diagnostics
            .items
            .iter()
            .filter(|d| d.message.contains("nbproc"))
            .count(),
        1
    );
    let c = ok("global\n  nbproc 1\n  nbthread 4\n");
    assert_eq!((c.global.nbproc, c.global.nbthread), (None, Some(4)));
}

#[test]
fn cross_checks() {
    let e = errors("backend b\n  server s 127.0.0.1:1\n  server s 127.0.0.1:2\n");
    assert!(
        e[0].contains("t.cfg:3") && e[0].contains("already used"),
        "{e:?}"
    );
    let e = errors("backend a\n  id 2\n  server s 127.0.0.1:1 id 4\n  server t 127.0.0.1:1 id 4\nbackend c\n  id 2\n");
    assert_eq!(e.len(), 2, "{e:?}");
    assert!(
        e[0].contains("t.cfg:5")
            && e[0].contains("backend c reuses same custom id as backend a (declared at t.cfg:1)"),
        "{e:?}"
    );
    assert!(
        e[1].contains("t.cfg:4")
            && e[1]
                .contains("'server a/t' : 'id' : custom id 4 already used at t.cfg:3 ('server s')"),
        "{e:?}"
    );
    let c = ok("global\n  stats socket /tmp/x.sock\nbackend a\n  server s 127.0.0.1:1\n  server t 127.0.0.1:1 id 1\nbackend b\n");
    let uids: Vec<u32> = c.proxies.iter().map(|p| p.uid).collect();
    assert_eq!(uids, [2, 3], "the stats socket's proxy is #1");
    let uids: Vec<u32> = c.proxies[0].servers.iter().map(|s| s.uid).collect();
    assert_eq!(uids, [2, 1]);
    let e = errors("backend b\nbackend b\n");
    assert!(
        e[0].contains("t.cfg:2") && e[0].contains("same name"),
        "{e:?}"
    );
    ok("frontend x\n  bind :1\n  default_backend x\nbackend x\n");
    let e =
        errors("frontend f\n  mode http\n  bind :1\n  default_backend b\nbackend b\n  mode tcp\n");
    assert!(e[0].contains("cannot use backend"), "{e:?}");
    let e = errors("frontend f\n  default_backend b\nbackend b\n");
    assert!(e[0].contains("no 'bind'"), "{e:?}");
    let e = errors("frontend f\n  bind :1\n  use_backend f\n");
    assert!(
        e[0].contains("unable to find required use_backend"),
        "{e:?}"
    );
}

#[test]
fn options_and_logs() {
    let c = ok("global\n  log 127.0.0.1:514 local0\ndefaults\n  log global\n  option tcplog\n  option redispatch\n  option dontlognull\n  no option dontlognull\n\
        listen l\n  bind :1\n  log 127.0.0.1:515 local1 notice\n  option splice-auto\n  server s 127.0.0.1:2\n");
    let l = c.proxy("l").unwrap();
    assert!(l.options.redispatch && !l.options.dontlognull && l.options.splice_auto);
    assert_eq!(l.logs.len(), 2);
    assert_eq!(l.logs[1].facility, 17);
    assert_eq!(
        l.log_format.as_ref().unwrap().source,
        crate::logformat::TCPLOG_FORMAT
    );
    let c = ok("listen l\n  bind :1\n  mode http\n  option httplog\n  option httpchk GET /health\n  server s 127.0.0.1:2 check\n");
    let l = c.proxy("l").unwrap();
    assert!(l.options.httplog && !l.options.tcplog);
    assert_eq!(
        l.log_format.as_ref().unwrap().source,
        crate::logformat::HTTPLOG_FORMAT
    );
    assert_eq!(l.options.check_proto, Some(crate::model::CheckProto::Http));
    let e = errors("frontend f\n  bind :1\n  log-format %zz\n");
    assert!(e[0].contains("no such format variable"), "{e:?}");
}

#[test]
fn misplaced_keywords_warn() {
    let w = warnings("frontend f\n  bind :1\n  server s 127.0.0.1:1\n");
    assert!(
        w.iter().any(|m| m.contains("no backend capability")),
        "{w:?}"
    );
    let w = warnings("backend b\n  bind :1\n");
    assert!(
        w.iter().any(|m| m.contains("no frontend capability")),
        "{w:?}"
    );
}

#[test]
fn balance_forms() {
    let c = ok("backend a\n  balance random(3)\nbackend b\n  balance random\nbackend c\n  balance source\n  hash-type consistent djb2 avalanche\n");
    assert_eq!(c.proxy("a").unwrap().balance, Balance::Random { draws: 3 });
    assert_eq!(c.proxy("b").unwrap().balance, Balance::Random { draws: 2 });
    let h = c.proxy("c").unwrap().hash_type;
    assert_eq!(
        (h.method, h.function, h.avalanche),
        (HashMethod::Consistent, HashFunction::Djb2, true)
    );
    assert!(!errors("backend a\n  balance random(0)\n").is_empty());
    assert!(!errors("backend a\n  balance nope\n").is_empty());
}

#[test]
fn bind_options() {
    let c = ok("frontend f\n  bind 127.0.0.1:80,127.0.0.1:81 name web backlog 100 maxconn 5 accept-proxy defer-accept thread 1-2 v4v6 tfo\n");
    let b = &c.proxy("f").unwrap().binds[0];
    assert_eq!(b.addrs.len(), 2);
    assert_eq!(
        (b.backlog, b.maxconn, b.accept_proxy, b.defer_accept),
        (Some(100), Some(5), true, true)
    );
    assert_eq!(b.threads.as_deref(), Some(&[1, 2][..]));
    let c = ok("frontend f\n  bind :80 mss 1400 tcp-ut 30s\n");
    let b = &c.proxy("f").unwrap().binds[0];
    assert_eq!(
        (b.mss, b.tcp_ut),
        (Some(1400), Some(Duration::from_secs(30)))
    );
    let e = errors("frontend f\n  bind :80 bogus\n");
    assert!(e[0].contains("unknown keyword 'bogus'"), "{e:?}");
    let c = ok("frontend f\n  mode http\n  bind :80 proto h2\n  bind :81 proto h1\n");
    let p = c.proxy("f").unwrap();
    assert_eq!((p.binds[0].h2, p.binds[1].h2), (true, false));
    let e = errors("frontend f\n  mode tcp\n  bind :80 proto h2\n");
    assert!(e[0].contains("only usable in mode http"), "{e:?}");
    let e = errors("frontend f\n  bind :80 proto fcgi\n");
    assert!(
        e[0].contains("'proto' expects 'h1', 'h2' or 'none'"),
        "{e:?}"
    );
}

#[test]
fn h2_tunables() {
    let c = ok("global\n  tune.h2.max-concurrent-streams 0\n  tune.h2.initial-window-size 1048576\n  tune.h2.header-table-size 8192\n  tune.h2.max-frame-size 32768\n");
    let h = c.global.h2;
    assert_eq!(
        (
            h.max_concurrent_streams,
            h.initial_window_size,
            h.header_table_size,
            h.max_frame_size
        ),
        (0, 1 << 20, 8192, 32768)
    );
    assert_eq!(ok("").global.h2.max_concurrent_streams, 100);
    let e = errors("global\n  tune.h2.max-frame-size 1000\n");
    assert!(e[0].contains("between 16384 and 16777215"), "{e:?}");
    let e = errors("global\n  tune.h2.header-table-size 100000\n");
    assert!(e[0].contains("between 0 and 65536"), "{e:?}");
}

#[test]
fn scheduler_tunables() {
    let g = ok("").global;
    assert_eq!((g.runqueue_depth, g.maxpollevents), (200, None));
    let g = ok("global\n  tune.runqueue-depth 64\n  tune.maxpollevents 300\n").global;
    assert_eq!((g.runqueue_depth, g.maxpollevents), (64, Some(300)));
    let e = errors("global\n  tune.runqueue-depth 0\n  tune.maxpollevents many\n");
    assert_eq!(e.len(), 2, "{e:?}");
    assert!(
        e[0].contains(":2") && e[0].contains("between 1 and 1000000"),
        "{e:?}"
    );
    assert!(e[1].contains(":3") && e[1].contains("got 'many'"), "{e:?}");
}

#[test]
fn server_option_errors() {
    let e = errors("backend b\n  server s 127.0.0.1:1 weight 300 rise 0\n");
    assert_eq!(e.len(), 2, "{e:?}");
    let e = errors("backend b\n  server s\n");
    assert!(e[0].contains("missing address"));
    let e = errors("backend b\n  server s 127.0.0.1:1 on-marked-up shutdown-sessions\n");
    assert!(e[0].contains("expects 'shutdown-backup-sessions'"), "{e:?}");
}

#[test]
fn stats_socket() {
    let c = ok("global\n  stats socket /tmp/x.sock mode 600 level admin expose-fd listeners\n  stats timeout 30s\n");
    let s = &c.global.stats_sockets[0];
    assert_eq!(
        (s.mode, s.level.as_str(), s.expose_fd),
        (Some(0o600), "admin", true)
    );
    assert_eq!(
        c.global.stats_timeout,
        Some(std::time::Duration::from_secs(30))
    );
    assert!(errors("global\n  stats socket /x level god\n")[0].contains("level"));
}

#[test]
fn listen_line_address_is_refused_as_haproxy_does() {
    let e = errors("listen poolbench 127.0.0.1:80\n  server s 127.0.0.1:1\n");
    assert!(e[0].contains("please use the 'bind' keyword"), "{e:?}");
}

#[test]
fn typos_get_a_suggestion_and_the_choices() {
    let e = errors("listen l\n  bind :1\n  optoin httplog\n");
    assert!(
        e[0].contains("unknown keyword 'optoin'") && e[0].contains("did you mean 'option'?"),
        "{e:?}"
    );
    let e = errors("listen l\n  bind :1\n  balance roundrobn\n");
    assert!(e[0].contains("did you mean 'roundrobin'?"), "{e:?}");
    assert!(
        e[0].contains("static-rr, leastconn, first, source, uri, url_param, hdr(name), random"),
        "{e:?}"
    );
    // A timeout line that failed says so; no warning that timeouts are missing.
    let text = "defaults\n  timeout client 5x\n  timeout connect 1s\n  timeout server 1s\nlisten l\n  bind :1\n";
    assert!(errors(text)[0].contains("'timeout client'"));
    assert!(!warnings(text)
        .iter()
        .any(|m| m.contains("missing timeouts")));
}

#[test]
fn missing_timeouts_warn_as_haproxy_does() {
    let w = warnings("listen l\n  bind :1\n  server s 127.0.0.1:2\n");
    assert!(
        w.iter().any(
            |m| m.contains("missing timeouts for listen 'l'") && m.contains("'timeout client'")
        ),
        "{w:?}"
    );
    let w = warnings("defaults\n  timeout client 1s\n  timeout connect 1s\n  timeout server 1s\nlisten l\n  bind :1\n");
    assert!(!w.iter().any(|m| m.contains("missing timeouts")), "{w:?}");
}

#[test]
fn zero_warning_makes_warnings_fatal() {
    let e = errors("global\n  zero-warning\ndefaults\n  contimeout 1s\n");
    assert!(e.iter().any(|m| m.contains("zero-warning")));
}

#[test]
fn every_supported_keyword_has_a_parser() {
    use crate::keywords::{GLOBAL, PROXY};
    for k in GLOBAL.iter().filter(|k| k.status != Status::Refused) {
        let p = parse_str(&format!("global\n  {}\n", k.name));
        assert!(
            !p.diagnostics
                .items
                .iter()
                .any(|d| d.message.contains("internal")),
            "global keyword '{}' has no parser",
            k.name
        );
    }
    for k in PROXY.iter().filter(|k| k.status != Status::Refused) {
        let p = parse_str(&format!("listen l\n  {}\n", k.name));
        assert!(
            !p.diagnostics
                .items
                .iter()
                .any(|d| d.message.contains("internal")),
            "proxy keyword '{}' has no parser",
            k.name
        );
    }
}

#[test]
fn never_panics_on_garbage() {
    let samples = [
        "\"",
        "'",
        "\\",
        "\\x",
        "bind",
        "server",
        "frontend",
        "backend \"",
        "listen a\n bind [::1",
        ".if (",
        "global\n cpu-map",
        "global\n cpu-map auto:",
        "global\n log",
        "listen l\n log-format %{",
        "\u{0}\u{1}",
        "defaults from",
        "listen l\n timeout",
        "listen l\n option",
        "listen l\n no",
        "listen l\n balance random(",
    ];
    for s in samples {
        let _ = parse_str(s);
    }
}

#[test]
fn cipher_strings() {
    use crate::tls::{parse_ciphers, Suite};
    // Mozilla's modern list: every name is a suite weir has.
    let all = parse_ciphers("ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305").expect("mozilla");
    assert_eq!(all.len(), 6);
    assert_eq!(all[0], Suite::EcdheEcdsaAes128Gcm);
    // Aliases, exclusions, legacy groups that select nothing.
    let v = parse_ciphers("EECDH+AESGCM:EDH+AESGCM:!aNULL:!MD5").expect("aliases");
    assert_eq!(v.len(), 4);
    assert!(!v.contains(&Suite::EcdheRsaChacha20));
    assert_eq!(
        parse_ciphers("HIGH:!RSA:-AES256").expect("minus"),
        vec![Suite::EcdheEcdsaAes128Gcm, Suite::EcdheEcdsaChacha20]
    );
    assert!(parse_ciphers("!HIGH:HIGH").is_err(), "banned stays banned");
    assert!(parse_ciphers("NOPE").is_err());
    assert!(parse_ciphers("TLS_AES_128_GCM_SHA256").is_err());
    assert!(parse_ciphers("EDH+AESGCM").is_err(), "nothing left");
    assert!(
        parse_ciphers("DHE-RSA-AES128-GCM-SHA256").is_err(),
        "nothing left"
    );
}

#[test]
fn suites_and_curves_weir_lacks_are_left_out_with_a_warning() {
    // Debian's stock haproxy.cfg: Mozilla's intermediate list, two DHE
    // suites weir does not offer.
    let debian = "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305:DHE-RSA-AES128-GCM-SHA256:DHE-RSA-AES256-GCM-SHA384";
    let text = format!(
        "global\n  ssl-default-bind-ciphers {debian}\n  ssl-default-bind-curves X25519:brainpoolP256r1:P-256\n\
         defaults\n  mode http\n  timeout client 1s\n  timeout server 1s\n  timeout connect 1s\n\
         frontend f\n  bind :443 ssl crt /x.pem ciphers {debian}\n"
    );
    let c = ok(&text);
    assert_eq!(c.global.tls.bind_ciphers.as_ref().map(Vec::len), Some(6));
    assert_eq!(c.global.tls.bind_curves.as_ref().map(Vec::len), Some(2));
    let w = warnings(&text);
    assert_eq!(w.len(), 5, "{w:?}");
    assert!(
        w[0].contains(":2")
            && w[0].contains("'DHE-RSA-AES128-GCM-SHA256' is not offered by weir and is left out"),
        "{w:?}"
    );
    assert!(
        w[2].contains(":3") && w[2].contains("curve 'brainpoolP256r1'"),
        "{w:?}"
    );
    assert!(
        w[3].contains(":10") && w[3].contains("'bind :443'"),
        "{w:?}"
    );
    // A server line has no warning to give: it refuses.
    let e = errors("backend b\n  server s 127.0.0.1:443 ssl ciphers ECDHE-RSA-AES128-GCM-SHA256:DHE-RSA-AES128-GCM-SHA256\n");
    assert!(
        e[0].contains("'DHE-RSA-AES128-GCM-SHA256' is not offered"),
        "{e:?}"
    );
}

#[test]
fn stats_page_keywords_enable_the_page_and_inherit() {
    let c = ok("defaults\n  mode http\n  stats uri /st\n\
                listen a\n  bind :80\n  stats auth u:p\n  stats auth v:q\n  stats realm My\\ Realm\n  stats refresh 10s\n  stats hide-version\n  stats scope .\n  stats admin if TRUE\n\
                frontend b\n  bind :81\n\
                backend c\n  mode http\n  no log\n");
    let a = c.proxies.iter().find(|p| p.name == "a").unwrap();
    let page = a.stats.as_ref().expect("enabled");
    assert_eq!(page.uri, "/st", "from defaults");
    assert_eq!(
        page.auth,
        [("u".into(), "p".into()), ("v".into(), "q".into())]
    );
    assert_eq!(page.realm, "My Realm");
    assert_eq!(page.refresh, Some(Duration::from_secs(10)));
    assert!(page.hide_version && !page.show_legends);
    assert_eq!(page.scope, ["."]);
    assert_eq!(page.admin.len(), 1);
    let b = c.proxies.iter().find(|p| p.name == "b").unwrap();
    assert_eq!(b.stats.as_ref().map(|s| s.uri.as_str()), Some("/st"));
    let plain = ok("frontend f\n  mode http\n  bind :80\n");
    assert!(plain.proxies[0].stats.is_none());
    assert_eq!(
        ok("listen l\n  mode http\n  bind :80\n  stats enable\n").proxies[0]
            .stats
            .as_ref()
            .map(|s| s.uri.as_str()),
        Some("/haproxy?stats")
    );
}

#[test]
fn bad_stats_lines_are_errors_with_their_line() {
    let e = errors("listen l\n  mode http\n  bind :80\n  stats auth nopassword\n  stats admin\n  stats enable now\n");
    assert_eq!(e.len(), 3, "{e:#?}");
    assert!(
        e[0].contains("t.cfg:4") && e[0].contains("<user>:<password>"),
        "{}",
        e[0]
    );
    assert!(
        e[1].contains("t.cfg:5") && e[1].contains("'if' or 'unless'"),
        "{}",
        e[1]
    );
    assert!(
        e[2].contains("t.cfg:6") && e[2].contains("takes no argument"),
        "{}",
        e[2]
    );
}

#[test]
fn tcp_rules_in_every_set_with_defaults_first() {
    let c = ok(
        "defaults d\n mode http\n timeout client 1s\n timeout server 1s\n timeout connect 1s\n \
         tcp-request connection accept if { src 10.0.0.0/8 }\n \
         tcp-request inspect-delay 5s\n\
         frontend f from d\n bind :8080\n \
         tcp-request connection expect-proxy layer4 if { src 127.0.0.1 }\n \
         tcp-request connection reject\n \
         tcp-request session set-var(sess.a) src\n \
         tcp-request content set-var-fmt(txn.b) \"%[src]:x\"\n \
         tcp-request content capture src len 8\n \
         http-request capture path len 4\n \
         tcp-request content set-dst-port int(81)\n \
         default_backend b\n\
         defaults e\n mode http\n timeout client 1s\n timeout server 1s\n timeout connect 1s\n \
         tcp-response content set-var(txn.c) str(x)\n\
         backend b from e\n \
         tcp-response content close\n \
         tcp-response inspect-delay 2s\n \
         server s 127.0.0.1:80\n",
    );
    let f = &c.proxies[0];
    assert_eq!(
        f.tcp.connection.len(),
        3,
        "the defaults' rule, then the frontend's"
    );
    assert!(matches!(
        f.tcp.connection[0].action,
        weir_rules::TcpAction::Accept
    ));
    assert!(matches!(
        f.tcp.connection[1].action,
        weir_rules::TcpAction::ExpectProxy
    ));
    assert_eq!(f.tcp.session.len(), 1);
    assert_eq!(f.tcp.content.len(), 3);
    assert_eq!(f.tcp.inspect_delay, Some(Duration::from_secs(5)));
    // Capture slots in order across tcp-request and http-request rules.
    assert!(matches!(
        f.tcp.content[1].action,
        weir_rules::TcpAction::Capture { slot: 0, .. }
    ));
    assert!(matches!(
        f.http_request[0].action,
        weir_rules::ReqAction::Capture { slot: 1, .. }
    ));
    let b = &c.proxies[1];
    assert_eq!(b.tcp.response.len(), 2);
    assert!(matches!(
        b.tcp.response[1].action,
        weir_rules::TcpAction::Close
    ));
    assert_eq!(b.tcp.response_inspect_delay, Some(Duration::from_secs(2)));
}

#[test]
fn tcp_rules_are_refused_where_haproxy_refuses_them() {
    let head =
        "defaults\n mode http\n timeout client 1s\n timeout server 1s\n timeout connect 1s\n";
    let e = errors(&format!(
        "{head}frontend f\n bind :8080\n \
         tcp-request content close\n \
         tcp-request connection capture src len 4\n \
         tcp-request content track-sc3 src\n \
         tcp-request content switch-mode tcp\n \
         tcp-request session bogus\n \
         tcp-request inspect-delay\n \
         server s 127.0.0.1:80\n"
    ));
    assert!(
        e[0].contains("t.cfg:8") && e[0].contains("'close' is not allowed"),
        "{e:?}"
    );
    assert!(
        e[1].contains("t.cfg:9") && e[1].contains("'capture' is not allowed"),
        "{e:?}"
    );
    assert!(e[2].contains("track-sc number exceeding 2"), "{e:?}");
    assert!(e[3].contains("'switch-mode' expects 'http"), "{e:?}");
    assert!(e[4].contains("unknown action 'bogus'"), "{e:?}");
    assert!(e[5].contains("expects a timeout"), "{e:?}");
    // Rules in an anonymous defaults section, or one serving a listen or
    // both frontends and backends.
    let e = errors(&format!(
        "{head} tcp-request content accept\n http-request deny\n"
    ));
    assert_eq!(e.len(), 2, "{e:?}");
    assert!(
        e.iter().all(|m| m.contains("anonymous 'defaults'")),
        "{e:?}"
    );
    let named = "defaults d\n mode http\n timeout client 1s\n timeout server 1s\n timeout connect 1s\n http-request deny\n";
    let e = errors(&format!("{named}listen l from d\n bind :8080\n"));
    assert!(e[0].contains("a listen section cannot inherit"), "{e:?}");
    let e = errors(&format!(
        "{named}frontend f from d\n bind :8080\n default_backend b\nbackend b from d\n"
    ));
    assert!(
        e[0].contains("t.cfg:10") && e[0].contains("defaults section at t.cfg:1"),
        "{e:?}"
    );
}

#[test]
fn tunables_without_effect_are_accepted_with_a_note() {
    let text = "global\n  tune.maxrewrite 1024\n  tune.ssl.capture-buffer-size 1\n  tune.ssl.capture-cipherlist-size 800\n";
    let p = parse_str(text);
    assert!(p.config.is_some());
    let notes: Vec<String> = p
        .diagnostics
        .items
        .iter()
        .filter(|d| d.level == Level::Notice)
        .map(|d| d.to_string())
        .collect();
    assert_eq!(notes.len(), 2, "{notes:?}");
    assert!(
        notes[0].contains(":3") && notes[0].contains("no effect"),
        "{notes:?}"
    );
    // `tune.maxrewrite` is the room rewrites have (at most half a buffer).
    let g = &p.config.as_ref().unwrap().global;
    assert_eq!((g.maxrewrite, g.rewrite_room()), (Some(1024), 1024));
    let g = ok("global\n  tune.bufsize 2048\n  tune.maxrewrite 4096\n").global;
    assert_eq!(g.rewrite_room(), 1024);
    let e = errors("global\n  tune.maxrewrite lots\n");
    assert!(
        e[0].contains(":2") && e[0].contains("tune.maxrewrite"),
        "{e:?}"
    );
}

#[test]
fn global_set_var_takes_process_variables_only() {
    let g =
        ok("global\n  set-var proc.a int(1)\n  set-var-fmt proc.b \"%[var(proc.a)]x\"\n").global;
    assert_eq!(g.set_vars.len(), 2);
    assert_eq!(g.set_vars[1].0.name, "proc.b");
    let e = errors("global\n  set-var txn.a int(1)\n  set-var proc.b nosuch()\n  set-var proc.c\n");
    assert_eq!(e.len(), 3, "{e:?}");
    assert!(
        e[0].contains(":2") && e[0].contains("only 'proc.'"),
        "{e:?}"
    );
    assert!(e[1].contains(":3") && e[1].contains("nosuch"), "{e:?}");
    assert!(e[2].contains(":4"), "{e:?}");
}

#[test]
fn restricted_header_names_option() {
    use crate::model::RestrictNames;
    let c = ok("backend a\n  option http-restrict-req-hdr-names delete\nbackend b\n  option http-restrict-req-hdr-names reject\nbackend c\n");
    let modes: Vec<RestrictNames> = c.proxies.iter().map(|p| p.http.restrict_names).collect();
    assert_eq!(
        modes,
        [
            RestrictNames::Delete,
            RestrictNames::Reject,
            RestrictNames::Preserve
        ]
    );
    let e = errors("backend a\n  option http-restrict-req-hdr-names drop\n");
    assert!(e[0].contains(":2") && e[0].contains("got 'drop'"), "{e:?}");
}

#[test]
fn errorloc_pages_redirect() {
    let c = ok(
        "frontend f\n  bind :80\n  errorloc 503 http://m.example/down\n  errorloc303 403 /denied\n",
    );
    let pages = &c.proxies[0].http.errorfiles;
    let page = |code: u16| {
        let (_, b) = pages.iter().find(|(s, _)| *s == code).unwrap();
        String::from_utf8(b.to_vec()).unwrap()
    };
    assert!(
        page(503).starts_with("HTTP/1.1 302 Found\r\n")
            && page(503).contains("location: http://m.example/down\r\n")
    );
    assert!(page(403).starts_with("HTTP/1.1 303 See Other\r\n"));
    let e = errors("frontend f\n  bind :80\n  errorloc 302 /x\n  errorloc302 503\n");
    assert!(
        e[0].contains(":3") && e[0].contains("cannot be overridden"),
        "{e:?}"
    );
    assert!(
        e[1].contains(":4") && e[1].contains("expects <status_code> and <url>"),
        "{e:?}"
    );
}

#[test]
fn error_pages_apply_in_order_inherited_first() {
    let dir = std::env::temp_dir().join(format!("weir-errorfiles-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let page = |name: &str, code: u16| {
        let f = dir.join(format!("{name}-{code}.http"));
        std::fs::write(&f, format!("HTTP/1.1 {code} X\r\nx-from: {name}\r\n\r\n")).unwrap();
        f.display().to_string()
    };
    let mut cfg = String::new();
    for (section, codes) in [("one", &[400, 403, 500][..]), ("two", &[400, 403][..])] {
        cfg += &format!("http-errors {section}\n");
        for &c in codes {
            cfg += &format!("  errorfile {c} {}\n", page(section, c));
        }
    }
    cfg += &format!(
        "defaults\n  mode http\n  errorfiles two\n  errorfile 400 {}\n",
        page("own", 400)
    );
    cfg += "frontend a\n  bind :80\n  errorfiles one\n";
    cfg += &format!(
        "frontend b\n  bind :81\n  errorfile 500 {}\n  errorfiles one 500\n",
        page("own", 500)
    );
    let c = ok(&cfg);
    let from = |p: usize, code: u16| {
        let (_, b) = c.proxies[p]
            .http
            .errorfiles
            .iter()
            .find(|(s, _)| *s == code)
            .unwrap();
        let text = String::from_utf8(b.to_vec()).unwrap();
        text.split("x-from: ")
            .nth(1)
            .unwrap()
            .split('\r')
            .next()
            .unwrap()
            .to_string()
    };
    // a: its section replaces every inherited page it has.
    assert_eq!(
        [from(0, 400), from(0, 403), from(0, 500)],
        ["one", "one", "one"]
    );
    // b: the later `errorfiles one 500` replaces its own earlier page; the
    // inherited ones stay (`errorfile 400` after `errorfiles two`).
    assert_eq!(
        [from(1, 400), from(1, 403), from(1, 500)],
        ["own", "two", "one"]
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn log_addresses_expand_variables_unquoted() {
    let c = ok("global\n  setenv LOGH 127.0.0.9\nbackend b\n  log ${LOGH}:1514 local0\n");
    assert!(format!("{:?}", c.proxies[0].logs[0]).contains("127.0.0.9"));
}

#[test]
fn layer7_hashes_fall_back_to_round_robin_in_tcp_mode() {
    let p = parse_str(
        "defaults\n  mode tcp\nlisten l\n  bind :8001\n  balance uri\n  server s1 127.0.0.1:1\nlisten h\n  mode http\n  bind :8002\n  balance uri\n  server s1 127.0.0.1:1\n",
    );
    let warned = p
        .diagnostics
        .items
        .iter()
        .filter(|d| {
            d.to_string()
                .contains("Layer 7 hash not possible for proxy 'l'")
        })
        .count();
    assert_eq!(warned, 1);
    let c = p.config.expect("config");
    let px = |n: &str| c.proxies.iter().find(|p| p.name == n).expect("proxy");
    assert_eq!(px("l").balance, Balance::RoundRobin);
    assert!(px("l").balance_key.is_none());
    assert_eq!(px("h").balance, Balance::Key);
}

/// `shards`: checked, and accepted (each thread has its own socket).
#[test]
fn bind_shards_are_checked_and_accepted() {
    ok("frontend f\n  bind :80 shards 4\n  bind :81 shards by-thread\n");
    let e = errors("frontend f\n  bind :80 shards 0\n");
    assert!(
        e[0].contains("t.cfg:2")
            && e[0].contains("invalid value 0, allowed range is 1..64 or 'by-thread'"),
        "{e:?}"
    );
}

/// `default-bind` in `peers`: the local listener's TLS, before `bind`'s.
#[test]
fn peers_default_bind_gives_the_listener_its_tls() {
    let c = ok("peers p\n  default-bind ssl crt /x.pem\n  peer a 127.0.0.1:1\n");
    assert_eq!(
        c.peers[0].bind_tls.as_ref().map(|t| t.crts.clone()),
        Some(vec!["/x.pem".to_string()])
    );
    let e = errors("peers p\n  default-bind ssl\n");
    assert!(
        e[0].contains("t.cfg:2") && e[0].contains("needs a certificate"),
        "{e:?}"
    );
    let e = errors("peers p\n  default-bind maxconn 3\n");
    assert!(
        e[0].contains("'maxconn' is not supported in a 'peers' section"),
        "{e:?}"
    );
}
