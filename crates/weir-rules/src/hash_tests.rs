//! Unit tests of `hash.rs`.

use super::*;

#[test]
fn dynamic_cookies_as_haproxy_makes_them() {
    // Observed from haproxy 2.6 (`dynamic-cookie-key mysecret`).
    let a = |s: &str| s.parse::<std::net::SocketAddr>().unwrap();
    assert_eq!(
        dynamic_cookie("mysecret", a("127.0.0.1:19411")),
        "8901965bf91ca6e0"
    );
    assert_eq!(
        dynamic_cookie("mysecret", a("127.0.0.1:19412")),
        "ca952d1eb4a4812c"
    );
}
