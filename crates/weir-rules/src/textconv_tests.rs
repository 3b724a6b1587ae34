//! Unit tests of `textconv.rs`.

use super::*;

use crate::NoCtx;

fn run(name: &str, args: &[&str], v: Sample) -> Option<Sample> {
    let a: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    parse(name, &a).unwrap().unwrap().apply(v, &NoCtx)
}

fn s(x: &str) -> Sample {
    Sample::Str(x.as_bytes().to_vec())
}

#[test]
fn trims_hosts_and_numbers() {
    assert_eq!(run("ltrim", &["ab"], s("abbaxab")), Some(s("xab")));
    assert_eq!(run("rtrim", &["ab"], s("abbaxab")), Some(s("abbax")));
    assert_eq!(run("cut_crlf", &[], s("a b\r\nc")), Some(s("a b")));
    assert_eq!(
        run("host_only", &[], s("WWW.X.org:8080")),
        Some(s("www.x.org"))
    );
    assert_eq!(run("host_only", &[], s("[::1]:80")), Some(s("[::1]")));
    assert_eq!(run("port_only", &[], s("[::1]:80")), Some(Sample::Int(80)));
    assert_eq!(run("port_only", &[], s("x.org")), Some(Sample::Int(0)));
    assert_eq!(run("hex2i", &[], s("ff")), Some(Sample::Int(255)));
    assert_eq!(run("hex2i", &[], s("zz")), None);
    assert_eq!(
        run("htonl", &[], Sample::Int(0x0102_0304)),
        Some(Sample::Str(vec![1, 2, 3, 4]))
    );
}

#[test]
fn languages_by_q_factor() {
    let h = s("fr-CH, fr;q=0.9, en;q=0.8, de;q=0.7, *;q=0.5");
    assert_eq!(run("language", &["en;de"], h.clone()), Some(s("en")));
    assert_eq!(run("language", &["fr;en"], h.clone()), Some(s("fr")));
    assert_eq!(run("language", &["es"], h.clone()), None);
    assert_eq!(run("language", &["es", "xx"], h), Some(s("xx")));
    assert_eq!(run("language", &["en"], s("en;q=0")), None);
}

#[test]
fn dates() {
    let t = Sample::Int(1_453_071_758);
    assert_eq!(
        run("http_date", &[], t.clone()),
        Some(s("Sun, 17 Jan 2016 23:02:38 GMT"))
    );
    assert_eq!(
        run("http_date", &["3600"], t.clone()),
        Some(s("Mon, 18 Jan 2016 00:02:38 GMT"))
    );
    assert_eq!(
        run("http_date", &["0", "ms"], Sample::Int(1_453_071_758_123)),
        Some(s("Sun, 17 Jan 2016 23:02:38.123 GMT"))
    );
    assert_eq!(
        run("utime", &["%Y%m%d%H%M%S %j %a %e %%"], t.clone()),
        Some(s("20160117230238 017 Sun 17 %"))
    );
    assert_eq!(
        run("utime", &["%F %T", "-60"], t),
        Some(s("2016-01-17 23:01:38"))
    );
    assert!(parse("http_date", &["1".into(), "h".into()])
        .unwrap()
        .is_err());
    assert!(parse("http_date", &["".into(), "ms".into()])
        .unwrap()
        .is_err());
}
