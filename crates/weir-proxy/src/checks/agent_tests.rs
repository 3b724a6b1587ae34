//! Unit tests of `agent.rs`.

use super::*;

#[test]
fn a_reply_sets_what_it_names_and_nothing_else() {
    let r = parse_reply(b"75%,maxconn:30,maint,down\n");
    assert_eq!(r.weight_pct, Some(75));
    assert_eq!(r.maxconn, Some(30));
    assert_eq!(r.admin, Some(AdminState::Maint));
    assert_eq!(r.op, Some((false, "down".into())));
    let r = parse_reply(b"up ready\tgarbage 200% # all fine, really\nstopped\n");
    assert_eq!(r.op, Some((true, "up".into())), "one line only");
    assert_eq!(r.admin, Some(AdminState::Ready));
    assert_eq!(r.weight_pct, Some(200));
    assert_eq!(r.maxconn, None);
    assert_eq!(
        parse_reply(b"down#broken"),
        Reply::default(),
        "one unknown word"
    );
    let r = parse_reply(b"fail #disk full, 10%");
    assert_eq!(r.op, Some((false, "fail (disk full, 10%)".into())));
    assert_eq!(r.weight_pct, None, "inside the description");
    assert_eq!(parse_reply(b"nonsense"), Reply::default());
}
