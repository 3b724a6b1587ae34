//! Unit tests of `ssl.rs`.

use super::*;

fn p(line: &str) -> Option<Result<SslCmd, CliError>> {
    let w: Vec<&str> = line.split(' ').collect();
    parse(w[0], &w[2..])
}

#[test]
fn commands() {
    assert_eq!(
        p("show ssl cert").unwrap(),
        Ok(SslCmd::Show(FileKind::Cert, None))
    );
    assert_eq!(
        p("show ssl ca-file *x.crt:2").unwrap(),
        Ok(SslCmd::Show(FileKind::CaFile, Some("*x.crt:2".into())))
    );
    assert_eq!(
        p("set ssl cert /a.pem << L1 L2").unwrap(),
        Ok(SslCmd::Set(
            FileKind::Cert,
            "/a.pem".into(),
            "L1\nL2\n".into()
        ))
    );
    assert!(p("set ssl cert /a.pem").unwrap().is_err());
    assert_eq!(
        p("commit ssl crl-file c.pem").unwrap(),
        Ok(SslCmd::Commit(FileKind::CrlFile, "c.pem".into()))
    );
    assert!(p("frob ssl cert x").is_none());
    assert!(p("show ssl frob").is_none());
}

#[test]
fn crt_lists() {
    assert_eq!(
        p("show ssl crt-list -n /l//").unwrap(),
        Ok(SslCmd::ShowList {
            numbers: true,
            list: Some("/l".into())
        })
    );
    assert_eq!(
        p("add ssl crt-list /l/ /c.pem").unwrap(),
        Ok(SslCmd::AddList {
            list: "/l".into(),
            line: "/c.pem".into()
        })
    );
    let two = parse("add", &["crt-list", "/l", "<<", "/a.pem x", "/b.pem"]).unwrap();
    assert!(matches!(two, Err(CliError::Usage(m)) if m.contains("only one line")));
    assert_eq!(
        p("del ssl crt-list /l /c.pem:2").unwrap(),
        Ok(SslCmd::DelList {
            list: "/l".into(),
            cert: "/c.pem".into(),
            line: Some(2)
        })
    );
}
