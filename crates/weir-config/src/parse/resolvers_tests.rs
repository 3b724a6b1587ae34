//! Unit tests of `resolvers.rs` and of the servers that name a section.

use super::super::tests::{errors, ok};

#[test]
fn resolvers_sections_and_server_templates() {
    let e = errors("backend b\n  server s www.test:80 resolvers dns init-addr none\n");
    assert!(
        e[0].contains("t.cfg:2")
            && e[0].contains("unable to find required resolvers section 'dns'"),
        "{e:?}"
    );
    let c = ok("resolvers dns\n  nameserver a 127.0.0.1:53\n  hold valid 5s\n  timeout resolve 2s\nbackend b\n  server-template s 2-3 www.test:80 resolvers dns init-addr none resolve-prefer ipv4\n");
    assert_eq!(c.resolvers[0].hold.valid, std::time::Duration::from_secs(5));
    let names: Vec<&str> = c.proxies[0]
        .servers
        .iter()
        .map(|s| s.name.as_str())
        .collect();
    assert_eq!(names, ["s2", "s3"]);
    assert!(c.proxies[0].servers[0].resolve.prefer_v4 && c.proxies[0].servers[1].template);
    assert_eq!(
        super::resolv_conf("# x\nnameserver 10.0.0.53\nsearch a\nnameserver ::1\n").len(),
        2
    );
}
