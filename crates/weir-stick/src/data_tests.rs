use crate::data::{parse_store, DataType, Schema};

fn ms(s: &str) -> Option<u32> {
    s.strip_suffix('s')
        .and_then(|n| n.parse::<u32>().ok())
        .map(|n| n * 1000)
}

#[test]
fn store_items_parse_with_periods_and_counts() {
    let r = parse_store("gpc_rate(3,10s)", &ms).unwrap();
    assert_eq!((r.ty, r.count, r.period), (DataType::GpcRate, 3, 10_000));
    assert!(parse_store("conn_rate", &ms).is_err());
    assert!(parse_store("gpc(0)", &ms).is_err());
    assert!(parse_store("gpc(101)", &ms).is_err());
    assert!(parse_store("conn_cnt(1)", &ms).is_err());
    assert!(parse_store("bogus", &ms).is_err());
}

#[test]
fn schema_orders_as_haproxy_and_refuses_mixing_arrays_with_legacy() {
    let s = Schema::new(&[
        parse_store("http_req_cnt", &ms).unwrap(),
        parse_store("gpt(2)", &ms).unwrap(),
        parse_store("server_id", &ms).unwrap(),
    ])
    .unwrap();
    let tys: Vec<_> = s.columns().iter().map(|c| (c.ty, c.idx)).collect();
    assert_eq!(
        tys,
        [
            (DataType::ServerId, 0),
            (DataType::HttpReqCnt, 0),
            (DataType::Gpt, 0),
            (DataType::Gpt, 1)
        ]
    );
    assert_eq!(s.gpt(1), Some(3));
    assert_eq!(s.gpt(0), Some(2));
    assert!(Schema::new(&[
        parse_store("gpc(2)", &ms).unwrap(),
        parse_store("gpc0", &ms).unwrap()
    ])
    .is_err());
    assert!(Schema::new(&[
        parse_store("gpc0", &ms).unwrap(),
        parse_store("gpc0", &ms).unwrap()
    ])
    .is_err());
}
