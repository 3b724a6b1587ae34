//! Unit tests of `log.rs`.

use super::*;

fn p(line: &str) -> Result<LogTarget, String> {
    let w: Vec<String> = line.split_whitespace().map(String::from).collect();
    parse_log_target(&w, &Loc::default())
}

#[test]
fn forms() {
    let t = p("127.0.0.1:5140 local0").unwrap();
    assert_eq!(t.facility, 16);
    assert_eq!(t.max_level, 7);
    let t = p("127.0.0.1 len 2048 format rfc5424 local1 notice info").unwrap();
    assert_eq!(t.max_len, 2048);
    assert_eq!(t.format, Some(LogFormatKind::Rfc5424));
    assert_eq!((t.facility, t.max_level, t.min_level), (17, 5, 6));
    assert!(matches!(
        p("/dev/log daemon").unwrap().dest,
        LogDest::Unix(_)
    ));
    assert!(matches!(
        p("stdout format raw local0").unwrap().dest,
        LogDest::Stdout
    ));
    assert!(p("127.0.0.1 nofacility").is_err());
    assert!(p("127.0.0.1 local0 loud").is_err());
    assert!(p("127.0.0.1 local0 info debug extra").is_err());
    assert_eq!(
        p("ring@buf local0").unwrap().dest,
        LogDest::Ring("buf".into())
    );
    assert!(p("tcp@127.0.0.1:514 local0").is_err());
    assert!(p("127.0.0.1 len 10 local0").is_err());
}

#[test]
fn httpslog_and_keepalive_probes() {
    let c = super::super::tests::ok(
        "defaults\n    mode http\n    option httpslog\n    option http-no-delay\n    clitcpka-idle 7s\n    srvtcpka-cnt 3\n    srvtcpka-intvl 2\nfrontend f\n    bind :8080\n",
    );
    let f = &c.proxies[0];
    assert!(f.options.httpslog && f.options.httplog);
    let text = f
        .log_format
        .as_ref()
        .map(|l| l.source.clone())
        .unwrap_or_default();
    assert!(text.ends_with("%[ssl_fc_sni]/%sslv/%sslc"), "{text}");
    assert_eq!(
        f.options.clitcpka_params.idle,
        Some(std::time::Duration::from_secs(7))
    );
    assert_eq!(f.options.srvtcpka_params.cnt, Some(3));
    assert_eq!(
        f.options.srvtcpka_params.intvl,
        Some(std::time::Duration::from_secs(2))
    );
}
