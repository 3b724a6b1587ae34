//! Unit tests of `ssl.rs`.

use super::*;

#[test]
fn names_and_arguments() {
    let p = |n: &str, a: &[&str]| {
        let a: Vec<String> = a.iter().map(|s| s.to_string()).collect();
        parse(n, &a)
    };
    assert_eq!(
        p("ssl_c_sha1", &[]),
        Some(Ok(SslFetch::Cert(Side::Client, CertField::Sha1)))
    );
    assert_eq!(
        p("ssl_s_s_dn", &["CN", "-1"]),
        Some(Ok(SslFetch::Cert(
            Side::Server,
            CertField::SDn(DnArgs {
                entry: Some("CN".into()),
                occ: -1,
                rfc2253: false
            })
        )))
    );
    assert!(matches!(p("ssl_f_i_dn", &["", "0", "ldap"]), Some(Err(_))));
    assert!(matches!(p("ssl_c_s_dn", &["CN", "x"]), Some(Err(_))));
    // The bind's own chain is not a fetch; other names are not ours.
    assert_eq!(p("ssl_f_chain_der", &[]), None);
    assert_eq!(p("ssl_x_der", &[]), None);
    assert_eq!(p("src", &[]), None);
}
