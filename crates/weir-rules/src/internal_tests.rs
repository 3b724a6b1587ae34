use crate::sample::{Ctx, Expr};
use std::net::SocketAddr;

/// A stream of frontend `fe` (#2) sent to backend `be` (#3), server #4,
/// with two cookies named `n`.
struct S {
    chosen: bool,
}

impl Ctx for S {
    fn src(&self) -> Option<SocketAddr> {
        None
    }
    fn dst(&self) -> Option<SocketAddr> {
        None
    }
    fn method(&self) -> &str {
        "POST"
    }
    fn uri(&self) -> &str {
        "/a?b=1"
    }
    fn version(&self) -> &str {
        "1.1"
    }
    fn req_headers(&self) -> Vec<(&str, &[u8])> {
        vec![("Cookie", b"n=12; m=x; n=34".as_slice())]
    }
    fn frontend(&self) -> Option<(String, i64)> {
        Some(("fe".into(), 2))
    }
    fn backend(&self) -> Option<(String, i64)> {
        self.chosen.then(|| ("be".into(), 3))
    }
    fn server_id(&self) -> Option<i64> {
        self.chosen.then_some(4)
    }
}

fn eval(e: &str, chosen: bool) -> Option<String> {
    let e = Expr::parse(e, &|f| Err(f.to_string())).unwrap();
    e.eval(&S { chosen })
        .map(|s| String::from_utf8_lossy(&s.to_bytes()).into_owned())
}

#[test]
fn proxies_server_and_request_line() {
    assert_eq!(eval("fe_name", true).as_deref(), Some("fe"));
    assert_eq!(eval("fe_id", true).as_deref(), Some("2"));
    assert_eq!(eval("be_name", true).as_deref(), Some("be"));
    assert_eq!(eval("be_id", true).as_deref(), Some("3"));
    assert_eq!(eval("srv_id", true).as_deref(), Some("4"));
    // Before the backend is chosen, the stream's backend is its frontend.
    assert_eq!(eval("be_name", false).as_deref(), Some("fe"));
    assert_eq!(eval("srv_id", false), None);
    assert_eq!(eval("capture.req.method", true).as_deref(), Some("POST"));
    assert_eq!(eval("capture.req.uri", true).as_deref(), Some("/a?b=1"));
    assert_eq!(eval("capture.req.ver", true).as_deref(), Some("HTTP/1.1"));
}

#[test]
fn constants_cookies_environment_and_date() {
    assert_eq!(eval("bin(414243)", true).as_deref(), Some("ABC"));
    assert_eq!(eval("bool(1)", true).as_deref(), Some("1"));
    assert_eq!(eval("req.cook_cnt(n)", true).as_deref(), Some("2"));
    assert_eq!(eval("req.cook_cnt", true).as_deref(), Some("3"));
    assert_eq!(eval("req.cook_val(n)", true).as_deref(), Some("34"));
    assert_eq!(eval("req.cook_val(m)", true), None, "not a number");
    assert_eq!(
        eval("req.cook_val", true).as_deref(),
        Some("12"),
        "the first"
    );
    assert_eq!(eval("req.cook", true).as_deref(), Some("12"), "the first");
    assert_eq!(eval("req.cook(n)", true).as_deref(), Some("34"), "the last");
    // base64url without padding, as HAProxy's reg-test expects it.
    assert_eq!(
        eval("bin(14fb9c03d97f12d97e),ub64enc", true).as_deref(),
        Some("FPucA9l_Etl-")
    );
    assert_eq!(
        eval("str(FPucA9l_Etl-),ub64dec,hex", true).as_deref(),
        Some("14FB9C03D97F12D97E")
    );
    assert_eq!(eval("str(foob),ub64enc", true).as_deref(), Some("Zm9vYg"));
    assert_eq!(eval("str(Zm9vYg),ub64dec", true).as_deref(), Some("foob"));
    assert_eq!(eval("str(Zm9v+g),ub64dec", true), None, "not base64url");
    assert_eq!(
        eval("env(PATH)", true),
        std::env::var("PATH").ok(),
        "read from the process"
    );
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let d: i64 = eval("date(10)", true).unwrap().parse().unwrap();
    assert!((now + 10..=now + 11).contains(&d), "{d} vs {now}");
    let ms: i64 = eval("date(0,ms)", true).unwrap().parse().unwrap();
    assert!((now * 1000..=(now + 1) * 1000).contains(&ms));
    for bad in [
        "bin(4)",
        "bin(zz)",
        "bool(2)",
        "date(x)",
        "date(0,h)",
        "env",
    ] {
        assert!(Expr::parse(bad, &|f| Err(f.to_string())).is_err(), "{bad}");
    }
}

#[test]
fn hash_converters() {
    // CRC-32 of "123456789" is the standard check value 0xCBF43926.
    assert_eq!(
        eval("str(123456789),crc32", true).as_deref(),
        Some("3421780262")
    );
    assert_eq!(eval("str(a),djb2", true).as_deref(), Some("177670"));
    assert_eq!(eval("str(a),sdbm", true).as_deref(), Some("97"));
    let plain: u32 = eval("str(x),crc32", true).unwrap().parse().unwrap();
    let mixed: u32 = eval("str(x),crc32(1)", true).unwrap().parse().unwrap();
    assert_eq!(mixed, crate::hash::full_avalanche(plain));
    assert!(Expr::parse("str(x),crc32(2)", &|f| Err(f.to_string())).is_err());
    // Values haproxy 2.6 gave for the same input.
    assert_eq!(
        eval("str(weir-and-haproxy),crc32", true).as_deref(),
        Some("839492139")
    );
    assert_eq!(
        eval("str(weir-and-haproxy),crc32(1)", true).as_deref(),
        Some("3743272993")
    );
}

#[test]
fn random_draws_and_microseconds_stay_in_range() {
    for _ in 0..50 {
        let r: i64 = eval("rand(10)", true).unwrap().parse().unwrap();
        assert!((0..10).contains(&r), "{r}");
        let us: i64 = eval("date_us", true).unwrap().parse().unwrap();
        assert!((0..1_000_000).contains(&us), "{us}");
    }
    let big: i64 = eval("rand", true).unwrap().parse().unwrap();
    assert!((0..=i64::from(u32::MAX)).contains(&big));
    assert!(Expr::parse("rand(0)", &|f| Err(f.to_string())).is_err());
}
