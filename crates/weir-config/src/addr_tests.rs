//! Unit tests of `addr.rs`.

use super::*;
use std::net::{Ipv4Addr, Ipv6Addr};

#[test]
fn bind_forms() {
    assert_eq!(
        parse_bind_list(":80").unwrap(),
        vec![BindAddr::Inet {
            host: Host::Any,
            family: Family::Unspec,
            ports: (80, 80)
        }]
    );
    assert_eq!(
        parse_bind_list("*:8000-8002").unwrap(),
        vec![BindAddr::Inet {
            host: Host::Any,
            family: Family::Unspec,
            ports: (8000, 8002)
        }]
    );
    let v = parse_bind_list("127.0.0.1:80,[::1]:81").unwrap();
    assert_eq!(v.len(), 2);
    assert_eq!(
        v[1],
        BindAddr::Inet {
            host: Host::Ip(IpAddr::V6(Ipv6Addr::LOCALHOST)),
            family: Family::Unspec,
            ports: (81, 81)
        }
    );
    assert_eq!(
        parse_bind_list("ipv6@::1:80").unwrap()[0],
        BindAddr::Inet {
            host: Host::Ip(IpAddr::V6(Ipv6Addr::LOCALHOST)),
            family: Family::V6,
            ports: (80, 80)
        }
    );
    assert_eq!(
        parse_bind_list("/run/x.sock").unwrap()[0],
        BindAddr::Unix("/run/x.sock".into())
    );
    assert_eq!(
        parse_bind_list("unix@/run/y").unwrap()[0],
        BindAddr::Unix("/run/y".into())
    );
    assert_eq!(
        parse_bind_list("abns@foo").unwrap()[0],
        BindAddr::Abns("foo".into())
    );
    assert_eq!(parse_bind_list("fd@3").unwrap()[0], BindAddr::Fd(3));
    assert!(parse_bind_list("127.0.0.1").is_err());
    assert!(parse_bind_list(":99999").is_err());
    assert!(parse_bind_list(":90-80").is_err());
    assert!(parse_bind_list("fd@x").is_err());
    assert!(parse_bind_list("ipv4@::1:80").is_err());
    assert!(parse_bind_list("quic4@:443").is_err());
}

#[test]
fn server_forms() {
    assert_eq!(
        parse_server_addr("10.0.0.1:8080", None).unwrap(),
        ServerAddr::Inet {
            host: Host::Ip(IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1))),
            family: Family::Unspec,
            port: PortSpec::Fixed(8080)
        }
    );
    assert!(matches!(
        parse_server_addr("10.0.0.1", None).unwrap(),
        ServerAddr::Inet {
            port: PortSpec::Same,
            ..
        }
    ));
    assert!(matches!(
        parse_server_addr("10.0.0.1:0", None).unwrap(),
        ServerAddr::Inet {
            port: PortSpec::Same,
            ..
        }
    ));
    assert!(matches!(
        parse_server_addr("10.0.0.1:+1000", None).unwrap(),
        ServerAddr::Inet {
            port: PortSpec::Offset(1000),
            ..
        }
    ));
    assert!(matches!(
        parse_server_addr("backend.local:80", None).unwrap(),
        ServerAddr::Inet {
            host: Host::Name(_),
            ..
        }
    ));
    assert!(matches!(
        parse_server_addr("::1", None).unwrap(),
        ServerAddr::Inet {
            host: Host::Ip(IpAddr::V6(_)),
            port: PortSpec::Same,
            ..
        }
    ));
    assert!(matches!(
        parse_server_addr("127.0.0.1", Some(514)).unwrap(),
        ServerAddr::Inet {
            port: PortSpec::Fixed(514),
            ..
        }
    ));
    assert_eq!(
        parse_server_addr("/dev/log", None).unwrap(),
        ServerAddr::Unix("/dev/log".into())
    );
    assert!(parse_server_addr("10.0.0.1:99999", None).is_err());
    // No address: the client's destination (haproxy's unset variables).
    assert_eq!(
        parse_server_addr(":80", None).unwrap(),
        parse_server_addr("0.0.0.0:80", None).unwrap()
    );
    // A log target without one: this host's (haproxy takes `log :`).
    assert_eq!(
        parse_server_addr(":", Some(514)).unwrap(),
        parse_server_addr("0.0.0.0:514", None).unwrap()
    );
    let env = |n: &str| (n == "P").then(|| "8080".to_string());
    assert_eq!(expand_env("${H}:$P", &env), ":8080");
    assert_eq!(expand_env("a$", &env), "a$");
    assert!(parse_server_addr("bad host:80", None).is_err());
}
