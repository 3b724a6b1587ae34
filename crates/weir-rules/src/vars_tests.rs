//! Unit tests of `vars.rs`.

use super::*;

#[test]
fn names_and_conditions() {
    let v = VarSet::parse("sess.x_cust,ifnotempty,ifnotset").unwrap();
    assert_eq!(v.name, "sess.x_cust");
    assert_eq!(v.conds, [Cond::IfNotEmpty, Cond::IfNotSet]);
    assert!(VarSet::parse("bad.x").is_err());
    assert!(VarSet::parse("txn.x,ifwhatever").is_err());
    assert!(VarSet::parse("txn.x,ifset,ifset,ifset,ifset,ifset").is_err());
    assert!(parse_action("set-var(txn.a)", "set-var").is_ok());
}

#[test]
fn conditions_as_the_manual_describes_them() {
    let s = |x: &str| Sample::Str(x.as_bytes().to_vec());
    let p = |c: &str| VarSet::parse(&format!("txn.v,{c}")).unwrap();
    assert!(p("ifempty").allows(None, false, &s("")));
    assert!(!p("ifempty").allows(None, false, &Sample::Int(0)));
    assert!(p("ifnotempty").allows(None, false, &Sample::Int(0)));
    assert!(p("ifset").allows(Some(&s("a")), true, &s("b")));
    assert!(!p("ifset").allows(None, true, &s("b")));
    assert!(p("ifexists").allows(None, true, &s("b")));
    assert!(p("ifgt").allows(Some(&Sample::Int(5)), true, &Sample::Int(3)));
    assert!(!p("ifgt").allows(Some(&Sample::Int(2)), true, &Sample::Int(3)));
    assert!(p("iflt").allows(Some(&Sample::Int(2)), true, &Sample::Int(3)));
    assert!(p("ifgt").allows(Some(&s("x")), true, &Sample::Int(3)));
}
