//! Protocol answers as their servers send them, judged.

use super::*;

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn pgsql_answers() {
    let j = |b: &[u8], closed| judge(Reply::Pgsql, b, closed, "");
    assert_eq!(
        j(&hex("520000000800000000"), false),
        Verdict::Done("L7OK", Some(0), "PostgreSQL server is ok".into())
    );
    assert_eq!(j(&hex("4500000010"), false), Verdict::More);
    assert_eq!(
        j(&hex("450000000B53464154414C00"), false),
        Verdict::Done("L7RSP", None, "FATAL".into())
    );
    assert_eq!(
        j(b"Not a PostgreSQL response", true),
        Verdict::Done("L7STS", Some(0), "PostgreSQL unknown error".into())
    );
    assert_eq!(j(b"R", false), Verdict::More);
    assert_eq!(j(b"", true), Verdict::Done("L7RSP", None, String::new()));
}

#[test]
fn mysql_greetings_and_logins() {
    let greeting = hex("4A0000000A382E302E3139000A0000006F3C025E6249410D00FFFFFF0200FFC715000000000000000000007C182159106E2761144322200063616368696E675F736861325F70617373776F726400");
    assert_eq!(
        judge(Reply::MysqlGreeting { last: true }, &greeting, false, ""),
        Verdict::Done("L7OK", Some(0), "8.0.19".into())
    );
    assert_eq!(
        judge(Reply::MysqlGreeting { last: false }, &greeting, false, ""),
        Verdict::Next("8.0.19".into(), greeting.len())
    );
    assert_eq!(
        judge(
            Reply::MysqlGreeting { last: true },
            &greeting[..20],
            false,
            ""
        ),
        Verdict::More
    );
    assert_eq!(
        judge(Reply::MysqlLogin, &hex("03000002000000"), false, "8.0.19"),
        Verdict::Done("L7OK", Some(0), "8.0.19".into())
    );
    let refused = hex("67000002FFE304436C69656E7420646F6573206E6F7420737570706F72742061757468656E7469636174696F6E2070726F746F636F6C20726571756573746564206279207365727665723B20636F6E736964657220757067726164696E67204D7953514C20636C69656E74");
    assert_eq!(
        judge(Reply::MysqlLogin, &refused, false, "8.0.19"),
        Verdict::Done("L7STS", Some(1251), "Client does not support authentication protocol requested by server; consider upgrading MySQL client".into())
    );
    // A 4.1 error carries its SQL state first, left in the message.
    let e41 = [
        &[0x0f, 0, 0, 2, 0xff, 0x15, 0x04, b'#'][..],
        b"28000",
        b"denied",
    ]
    .concat();
    assert_eq!(
        judge(Reply::MysqlLogin, &e41, false, ""),
        Verdict::Done("L7STS", Some(1045), "#28000denied".into())
    );
}

#[test]
fn mysql_logins_are_the_bytes_servers_expect() {
    let bytes =
        |login: (&str, bool)| match weir_config::mysql_rules(Some(&(login.0.into(), login.1)))
            .first()
        {
            Some(weir_config::TcpCheckRule::Send { data, .. }) => data.clone(),
            _ => panic!("no login"),
        };
    assert_eq!(
        bytes(("user", false)),
        hex("0B00000100800000017573657200000100000001")
    );
    assert_eq!(
        bytes(("user", true)),
        hex("2600000100820000008000012100000000000000000000000000000000000000000000007573657200000100000001")
    );
    let pg = match weir_config::pgsql_rules("postgres").first() {
        Some(weir_config::TcpCheckRule::Send { data, .. }) => data.clone(),
        _ => panic!("no startup message"),
    };
    assert_eq!(pg.len(), 23);
    assert_eq!(&pg[..8], &[0, 0, 0, 23, 0, 3, 0, 0]);
}

#[test]
fn ldap_bind_responses() {
    let j = |b: &[u8], closed| judge(Reply::Ldap, b, closed, "");
    assert_eq!(
        j(&hex("300C02010161070A010004000400"), false),
        Verdict::Done("L7OK", Some(0), "Success".into())
    );
    assert_eq!(
        j(&hex("300C02010160070A010004000400"), false),
        Verdict::Done("L7RSP", None, "Not LDAPv3 protocol".into())
    );
    assert_eq!(
        j(&hex("300C02010161070A010104000400"), false),
        Verdict::Done(
            "L7STS",
            Some(1),
            "See RFC: http://tools.ietf.org/html/rfc4511#section-4.1.9".into()
        )
    );
    // Long lengths, and the result code arriving later.
    let part = hex("3084000000100201016184000000070A01");
    assert_eq!(j(&part, false), Verdict::More);
    assert_eq!(
        j(&[part.clone(), hex("0004000400")].concat(), false),
        Verdict::Done("L7OK", Some(0), "Success".into())
    );
    assert_eq!(
        j(&part, true),
        Verdict::Done("L7RSP", None, "Not LDAPv3 protocol".into())
    );
    assert_eq!(
        j(b"HTTP/1.1 400", false),
        Verdict::Done("L7RSP", None, "Not LDAPv3 protocol".into())
    );
}
