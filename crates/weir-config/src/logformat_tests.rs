//! Unit tests of `logformat.rs`.

use super::*;

#[test]
fn tcplog_compiles() {
    let f = compile(TCPLOG_FORMAT).unwrap();
    assert_eq!(
        f.pieces[0],
        Piece::Var {
            var: Var::ClientIp,
            quote: false
        }
    );
    assert_eq!(f.pieces[1], Piece::Lit(":".into()));
    assert!(f.pieces.contains(&Piece::Var {
        var: Var::TermState,
        quote: false
    }));
}

#[test]
fn flags_and_escapes() {
    let f = compile("%{+Q}b 100%% %ci").unwrap();
    assert_eq!(
        f.pieces,
        vec![
            Piece::Var {
                var: Var::BackendName,
                quote: true
            },
            Piece::Lit(" 100% ".into()),
            Piece::Var {
                var: Var::ClientIp,
                quote: false
            },
        ]
    );
    assert_eq!(
        compile("%r").unwrap().pieces[0],
        Piece::Var {
            var: Var::Request,
            quote: false
        }
    );
}

#[test]
fn errors() {
    assert!(compile("%zz").is_err());
    assert!(compile("%{+Q").is_err());
    assert!(compile("%[nope]").is_err());
    assert!(compile("%[src").is_err());
    let f = compile("%[src] %{+Q}[path,lower]").unwrap();
    assert!(matches!(
        f.pieces[0],
        Piece::Sample {
            index: 0,
            quote: false,
            ..
        }
    ));
    assert!(matches!(
        f.pieces[2],
        Piece::Sample {
            index: 1,
            quote: true,
            ..
        }
    ));
    assert!(compile("abc %").is_err());
}
