use crate::sample::Sample;
use crate::stick::*;
use std::net::{IpAddr, Ipv6Addr};
use weir_stick::{DataType, Key, KeyType};

fn a(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[test]
fn fetch_names_give_where_and_what() {
    let f = parse_fetch("sc_http_req_rate", &a(&["1", "t"]))
        .unwrap()
        .unwrap();
    assert_eq!(
        (f.from, f.what, f.table.as_deref()),
        (From::Slot(1), What::Data(DataType::HttpReqRate), Some("t"))
    );
    let f = parse_fetch("sc2_get_gpc0", &[]).unwrap().unwrap();
    assert_eq!((f.from, f.what), (From::Slot(2), What::GetGpc(0)));
    let f = parse_fetch("sc_get_gpc", &a(&["3", "0"])).unwrap().unwrap();
    assert_eq!((f.from, f.what), (From::Slot(0), What::GetGpc(3)));
    let f = parse_fetch("src_inc_gpc", &a(&["2", "t"]))
        .unwrap()
        .unwrap();
    assert_eq!(
        (f.from, f.what, f.table.as_deref()),
        (From::Src, What::IncGpc(2), Some("t"))
    );
    let f = parse_fetch("table_avl", &[]).unwrap().unwrap();
    assert_eq!(f.from, From::Table(TableFigure::Avl));
    assert!(
        parse_fetch("sc_conn_cnt", &[]).unwrap().is_err(),
        "a counter number"
    );
    assert!(parse_fetch("sc3_conn_cnt", &[]).is_none());
    assert!(parse_fetch("src_tracked", &[]).unwrap().is_err());
    assert!(parse_fetch("scheme", &[]).is_none());
    assert!(parse_fetch("sc_bogus", &a(&["0"])).is_none());
}

#[test]
fn converter_names_need_a_table() {
    let c = parse_conv("table_gpc_rate", &a(&["1", "t"]))
        .unwrap()
        .unwrap();
    assert_eq!((c.what, c.table.as_str()), (What::GpcRate(1), "t"));
    let c = parse_conv("table_expire", &a(&["t", "-1"]))
        .unwrap()
        .unwrap();
    assert_eq!((c.what, c.default), (What::Expire, Some(-1)));
    assert!(parse_conv("in_table", &[]).unwrap().is_err());
    assert!(parse_conv("table_bogus", &a(&["t"])).is_none());
}

#[test]
fn samples_become_keys_as_haproxy_casts_them() {
    let v4: IpAddr = "10.1.2.3".parse().unwrap();
    assert_eq!(
        key_of(KeyType::Ip, &Sample::Ip(v4)),
        Some(Key::V4([10, 1, 2, 3].into()))
    );
    let mapped = IpAddr::V6("::ffff:10.1.2.3".parse::<Ipv6Addr>().unwrap());
    assert_eq!(
        key_of(KeyType::Ip, &Sample::Ip(mapped)),
        key_of(KeyType::Ip, &Sample::Ip(v4))
    );
    assert_eq!(
        key_of(KeyType::Ip, &Sample::Ip("::1".parse().unwrap())),
        None
    );
    assert_eq!(
        key_of(KeyType::Ip, &Sample::Str(b"127.0.0.1".to_vec())),
        Some(Key::V4([127, 0, 0, 1].into()))
    );
    assert_eq!(key_of(KeyType::Ip, &Sample::Str(b"nope".to_vec())), None);
    assert_eq!(
        key_of(KeyType::Integer, &Sample::Str(b"42abc".to_vec())),
        Some(Key::Int(42))
    );
    assert_eq!(
        key_of(KeyType::Integer, &Sample::Str(b"abc".to_vec())),
        None
    );
    assert_eq!(
        key_of(KeyType::String(3), &Sample::Int(12345)),
        Some(Key::Bytes(b"123".to_vec().into()))
    );
    assert_eq!(
        key_of(KeyType::Binary(4), &Sample::Bin(vec![1, 2])),
        Some(Key::Bytes(vec![1, 2, 0, 0].into()))
    );
}

#[test]
fn actions_parse_with_counters_and_values() {
    let e = |s: &str| crate::sample::Expr::parse(s, &|_| Err("no files".into()));
    let t = parse_action("track-sc1", &a(&["src", "table", "t"]), &e)
        .unwrap()
        .unwrap();
    assert!(matches!(t, StickAction::Track { slot: 1, table: Some(ref n), .. } if n == "t"));
    assert!(parse_action("track-sc3", &a(&["src"]), &e)
        .unwrap()
        .is_err());
    assert_eq!(
        parse_action("sc-inc-gpc1(2)", &[], &e).unwrap().unwrap(),
        StickAction::IncGpc { idx: 1, slot: 2 }
    );
    assert!(matches!(
        parse_action("sc-set-gpt0(0)", &a(&["5"]), &e)
            .unwrap()
            .unwrap(),
        StickAction::SetGpt {
            idx: 0,
            slot: 0,
            ..
        }
    ));
    assert!(parse_action("sc-inc-gpc(1)", &[], &e).unwrap().is_err());
    assert!(parse_action("sc-set-gpt0(0)", &[], &e).unwrap().is_err());
    assert!(parse_action("sc-inc-gpc0(5)", &[], &e).unwrap().is_err());
    assert!(parse_action("set-var(x)", &[], &e).is_none());
}
