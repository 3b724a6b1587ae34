//! `stick-table` lines and the tables rules name.

use super::tests::{errors, ok, parse_str};
use crate::diag::Level;
use weir_stick::{DataType, KeyType};

const HEAD: &str =
    "defaults\n mode http\n timeout client 1s\n timeout server 1s\n timeout connect 1s\n";

fn fe(lines: &str) -> String {
    format!(
        "{HEAD}frontend f\n bind :8080\n{lines}backend b\n stick-table type ip size 1 store gpc0\n"
    )
}

#[test]
fn stick_tables_parse_every_argument() {
    let c = ok(&format!(
        "{HEAD}backend t\n stick-table type string len 8 size 1k expire 30s nopurge srvkey addr store conn_rate(10s),gpc(2) store http_req_cnt\n"
    ));
    let t = c.proxies[0].stick_table.as_ref().unwrap();
    assert_eq!(t.def.key, KeyType::String(8));
    assert_eq!(t.def.size, 1024);
    assert_eq!(t.def.expire, Some(30_000));
    assert!(t.def.nopurge && t.def.srvkey_addr);
    let tys: Vec<_> = t.def.schema.columns().iter().map(|c| c.ty).collect();
    assert_eq!(
        tys,
        [
            DataType::ConnRate,
            DataType::HttpReqCnt,
            DataType::Gpc,
            DataType::Gpc
        ]
    );
}

#[test]
fn bad_stick_tables_say_what_haproxy_says() {
    for (line, msg) in [
        ("stick-table type ip", "stick-table: missing size."),
        ("stick-table size 10", "stick-table: missing type."),
        (
            "stick-table type foo size 1",
            "stick-table: unknown key type 'foo'.",
        ),
        (
            "stick-table type ip size 1 store bogus",
            "unknown store option 'bogus'",
        ),
        (
            "stick-table type ip size 1 store conn_rate",
            "missing argument to store option 'conn_rate'",
        ),
        (
            "stick-table type ip size 1 expire x",
            "unexpected character 'x' in argument of 'expire'",
        ),
        (
            "stick-table type ip size 1 write-to x",
            "unknown argument 'write-to'",
        ),
        (
            "stick-table type ip size 1 store gpc(2),gpc0",
            "simultaneous usage of 'gpc' and 'gpc[0/1]'",
        ),
        (
            "stick-table type ip size 1 peers p",
            "unable to find sync peers 'p'",
        ),
    ] {
        let e = errors(&fe(&format!(" {line}\n")));
        assert!(
            e[0].contains("t.cfg:8") && e[0].contains(msg),
            "{line}: {e:?}"
        );
    }
    let p = parse_str(&fe(" stick-table type ip size 1 store gpc0,gpc0\n"));
    assert!(p.config.is_some());
    assert!(p.diagnostics.items.iter().any(|d| d.level == Level::Warning
        && d.to_string()
            .contains("store option 'gpc0' already enabled, ignored")));
}

#[test]
fn tables_that_rules_name_must_exist() {
    for (line, want) in [
        (
            "http-request track-sc0 src",
            "unable to find table 'f' referenced by track-sc0",
        ),
        (
            "http-request track-sc1 src table nope",
            "unable to find table 'nope' referenced by track-sc1",
        ),
        (
            "http-request deny if { src_conn_rate gt 1 }",
            "unable to find table 'f' referenced by ACL keyword 'src_conn_rate'",
        ),
        (
            "http-request deny if { sc_conn_rate(0,nope) gt 1 }",
            "unable to find table 'nope'",
        ),
        (
            "http-request deny if { src,table_conn_rate(nope) gt 1 }",
            "unable to find table 'nope' referenced by conversion keyword 'table_conn_rate'",
        ),
        (
            "http-request set-header x %[src,in_table(nope)]",
            "unable to find table 'nope'",
        ),
    ] {
        let e = errors(&fe(&format!(" {line}\n")));
        assert!(
            e.iter().any(|m| m.contains("t.cfg:8") && m.contains(want)),
            "{line}: {e:?}"
        );
    }
    for line in [
        "http-request track-sc0 src table b",
        "http-request deny if { sc0_conn_rate gt 1 }",
        "http-request deny if { src,table_gpc0(b) gt 1 }",
        "tcp-request connection sc-inc-gpc0(0)",
        "http-request sc-set-gpt0(1) 5",
        "http-request sc-add-gpc(0,1) req.hdr_cnt(x)",
    ] {
        ok(&fe(&format!(" {line}\n")));
    }
}

#[test]
fn proxies_and_servers_that_fetches_name_must_exist() {
    let cfg = |line: &str| {
        format!("{HEAD}frontend f\n bind :8080\n http-request set-header x \"%[{line}]\"\n default_backend be\nbackend be\n server www 127.0.0.1:80\n")
    };
    for (fetch, want) in [
        ("srv_conn(be/nope)", "unable to find server 'nope' in proxy 'be', referenced in arg 1 of sample fetch keyword 'srv_conn' in proxy 'f'"),
        ("srv_conn(nope/www)", "unable to find proxy 'nope'"),
        ("nbsrv(nope)", "unable to find backend 'nope'"),
        ("srv_conn(www)", "unable to find server 'www' in proxy 'f'"),
        ("fe_req_rate(nope)", "unable to find frontend 'nope'"),
    ] {
        let e = errors(&cfg(fetch));
        assert!(e.iter().any(|m| m.contains("t.cfg:8") && m.contains(want)), "{fetch}: {e:?}");
    }
    for fetch in [
        "srv_conn(be/www)",
        "nbsrv(be)",
        "be_conn",
        "queue",
        "fe_req_rate(f)",
    ] {
        ok(&cfg(fetch));
    }
    // Rules of a defaults section resolve there: no server, no table.
    let e = errors(
        "defaults invalid\n mode http\n http-request set-header x \"%[srv_conn(www)]\"\nbackend be from invalid\n server www 127.0.0.1:80\n",
    );
    assert!(e[0].contains("backend name must be set"), "{e:?}");
    let e = errors(
        "defaults invalid\n mode http\n http-request track-sc0 src\nbackend be\n stick-table type ip size 1\n server www 127.0.0.1:80\n",
    );
    assert!(e[0].contains("unable to find table 'invalid'"), "{e:?}");
}

#[test]
fn init_addr_methods_parse() {
    use crate::model::InitAddr;
    let c = ok(&format!(
        "{HEAD}backend b\n server s x.invalid:80 init-addr last,libc,none\n server t x.invalid:80 init-addr 10.0.0.1\n"
    ));
    let s = &c.proxies[0].servers;
    assert_eq!(
        s[0].init_addr,
        [InitAddr::Last, InitAddr::Libc, InitAddr::None]
    );
    assert_eq!(s[1].init_addr, [InitAddr::Ip("10.0.0.1".parse().unwrap())]);
    let e = errors(&format!(
        "{HEAD}backend b\n server s x.invalid:80 init-addr bogus\n"
    ));
    assert!(e[0].contains("unknown method 'bogus'"), "{e:?}");
}

#[test]
fn peers_take_tls_options_and_refuse_the_others_by_name() {
    let c = ok(&format!(
        "{HEAD}peers p\n default-server ssl crt /x.pem verify none\n bind 127.0.0.1:1 ssl crt /x.pem alpn h2\n server A\n server B 127.0.0.1:2\n peer C 127.0.0.1:3 no-ssl\n"
    ));
    let p = &c.peers[0];
    let tls = p.bind_tls.as_ref().unwrap();
    assert_eq!(tls.crts, ["/x.pem"]);
    assert_eq!(tls.alpn.as_deref(), Some(&["h2".to_string()][..]));
    assert_eq!(p.bind_loc.as_ref().unwrap().line, 8);
    let [a, b, cc] = &p.peers[..] else {
        panic!("{:?}", p.peers)
    };
    assert!(a.tls.enabled && b.tls.enabled && !cc.tls.enabled);
    assert_eq!(b.tls.crt.as_deref(), Some("/x.pem"));
    assert_eq!(b.tls.verify, Some(crate::tls::Verify::None));
    // Without `ssl`, a bind line's certificate is no TLS.
    let c = ok(&format!("{HEAD}peers p\n bind 127.0.0.1:1\n server A\n"));
    assert!(c.peers[0].bind_tls.is_none());
    for (line, msg) in [
        (
            "bind 127.0.0.1:1 ssl",
            "'ssl' needs a certificate ('crt' or 'crt-list')",
        ),
        (
            "bind 127.0.0.1:1 transparent",
            "'transparent' is not supported in a 'peers' section by weir (only TLS options are)",
        ),
        (
            "server B 127.0.0.1:2 check",
            "'check' is not supported in a 'peers' section by weir (only TLS options are)",
        ),
        (
            "default-server weight 3",
            "'weight' is not supported in a 'peers' section by weir (only TLS options are)",
        ),
        (
            "server B 127.0.0.1:2 verify maybe",
            "'verify' expects 'none' or 'required'",
        ),
    ] {
        let e = errors(&format!("{HEAD}peers p\n server A\n {line}\n"));
        assert!(
            e.iter().any(|m| m.contains(msg) && m.contains(":8]")),
            "{line}: {e:?}"
        );
    }
}
