use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use crate::data::{parse_store, DataType, Schema};
use crate::key::{Key, KeyType};
use crate::table::{Clock, Event, ReadValue, Table, TableDef};

fn ms(s: &str) -> Option<u32> {
    let (n, mul) = match s.strip_suffix("ms") {
        Some(n) => (n, 1),
        None => match s.strip_suffix('s') {
            Some(n) => (n, 1000),
            None => (s, 1),
        },
    };
    n.parse::<u32>().ok().map(|n| n * mul)
}

fn table(store: &str, size: usize, expire: Option<u32>) -> (Arc<Table>, Arc<AtomicU32>) {
    let specs: Vec<_> = crate::data::split_store(store)
        .into_iter()
        .map(|s| parse_store(s, &ms).unwrap())
        .collect();
    let t = Arc::new(AtomicU32::new(1_000_000));
    let c = t.clone();
    let clock: Clock = Arc::new(move || c.load(Ordering::Relaxed));
    let def = TableDef {
        name: "t".into(),
        key: KeyType::Ip,
        size,
        expire,
        nopurge: false,
        srvkey_addr: false,
        schema: Schema::new(&specs).unwrap(),
    };
    (Arc::new(Table::new(def, clock)), t)
}

fn ip(n: u8) -> Key {
    Key::V4([10, 0, 0, n].into())
}

fn num(t: &Table, e: &crate::Entry, ty: DataType) -> u64 {
    match t.read(e, t.def().schema.find(ty, 0).unwrap()) {
        Some(ReadValue::Num(n)) => n,
        other => panic!("{other:?}"),
    }
}

#[test]
fn tracking_counts_a_connection_until_released() {
    let (t, _) = table("conn_cnt,conn_cur,conn_rate(10s)", 10, None);
    let a = t.track(&ip(1)).unwrap();
    let b = t.track(&ip(1)).unwrap();
    let e = a.entry().clone();
    assert_eq!(num(&t, &e, DataType::ConnCur), 2);
    assert_eq!(e.refs(), 2);
    drop(a);
    drop(b);
    assert_eq!(num(&t, &e, DataType::ConnCnt), 2);
    assert_eq!(num(&t, &e, DataType::ConnRate), 2);
    assert_eq!(num(&t, &e, DataType::ConnCur), 0);
    assert_eq!(e.refs(), 0);
}

#[test]
fn tracking_can_count_more_events_at_once() {
    let (t, _) = table(
        "conn_cnt,http_req_cnt,http_req_rate(10s),http_err_cnt",
        10,
        None,
    );
    let tr = t
        .track_counting(&ip(3), &[Event::HttpReq, Event::HttpErr])
        .unwrap();
    let e = tr.entry().clone();
    assert_eq!(num(&t, &e, DataType::ConnCnt), 1);
    assert_eq!(num(&t, &e, DataType::HttpReqCnt), 1);
    assert_eq!(num(&t, &e, DataType::HttpReqRate), 1);
    assert_eq!(num(&t, &e, DataType::HttpErrCnt), 1);
    let again = t.track_counting(&ip(3), &[]).unwrap();
    assert_eq!(num(&t, &e, DataType::ConnCnt), 2);
    assert_eq!(num(&t, &e, DataType::HttpReqCnt), 1);
    drop(again);
}

#[test]
fn show_line_as_haproxy() {
    let (t, _) = table(
        "http_req_rate(10s),gpc(2),gpt0,http_req_cnt",
        10,
        Some(30_000),
    );
    let tr = t.track(&ip(7)).unwrap();
    tr.count(Event::HttpReq);
    let line = t.dump(tr.entry());
    let rest = line.split_once(": ").unwrap().1;
    assert_eq!(
        rest,
        "key=10.0.0.7 use=1 exp=30000 gpt0=0 http_req_cnt=1 http_req_rate(10000)=1 gpc0=0 gpc1=0"
    );
}

#[test]
fn entries_expire_only_when_unreferenced() {
    let (t, clock) = table("gpc0", 10, Some(100));
    let tr = t.track(&ip(1)).unwrap();
    clock.fetch_add(500, Ordering::Relaxed);
    assert!(t.lookup(&ip(1)).is_some(), "a tracked entry stays");
    drop(tr);
    clock.fetch_add(99, Ordering::Relaxed);
    assert!(t.lookup(&ip(1)).is_some());
    clock.fetch_add(1, Ordering::Relaxed);
    assert!(t.lookup(&ip(1)).is_none());
    assert_eq!(t.used(), 0);
    t.get_or_create(&ip(2)).unwrap();
    clock.fetch_add(100, Ordering::Relaxed);
    assert_eq!(t.purge(), 1);
    assert_eq!(t.used(), 0);
}

#[test]
fn a_full_table_evicts_the_least_recently_used() {
    let (t, clock) = table("gpc0", 3, None);
    for n in 1..=3 {
        t.touch(&t.get_or_create(&ip(n)).unwrap());
        clock.fetch_add(10, Ordering::Relaxed);
    }
    t.touch(&t.lookup(&ip(1)).unwrap());
    let held = t.track(&ip(2)).unwrap();
    // 2 is held, 1 touched last: 3 goes.
    assert!(t.get_or_create(&ip(4)).is_some());
    assert_eq!(t.used(), 3);
    assert!(t.lookup(&ip(3)).is_none());
    assert!(t.lookup(&ip(2)).is_some());
    drop(held);
}

#[test]
fn nopurge_refuses_new_entries_when_full() {
    let (t, _) = table("gpc0", 1, None);
    let mut def = t.def().clone();
    def.nopurge = true;
    let t = Table::new(def, Arc::new(|| 5));
    assert!(t.get_or_create(&ip(1)).is_some());
    assert!(t.get_or_create(&ip(2)).is_none());
    assert!(t.get_or_create(&ip(1)).is_some());
}

#[test]
fn gpc_and_gpt_with_arrays_and_legacy_names() {
    let (t, _) = table("gpc(2),gpc_rate(2,1s),gpt(2)", 4, None);
    let e = t.get_or_create(&ip(1)).unwrap();
    assert_eq!(t.inc_gpc(&e, 1), Some(1));
    assert_eq!(t.add_gpc(&e, 1, 5), Some(6));
    assert_eq!(t.clr_gpc(&e, 1), Some(6));
    assert!(t.set_gpt(&e, 1, 9));
    assert!(!t.set_gpt(&e, 2, 9));
    assert_eq!(t.inc_gpc(&e, 5), None);
    let (l, _) = table("gpc0,gpc1_rate(1s)", 4, None);
    let e = l.get_or_create(&ip(1)).unwrap();
    assert_eq!(l.inc_gpc(&e, 0), Some(1));
    assert_eq!(l.inc_gpc(&e, 1), None);
    assert_eq!(num(&l, &e, DataType::Gpc1Rate), 1);
}

#[test]
fn concurrent_tracking_counts_exactly() {
    let (t, _) = table("conn_cnt,http_req_cnt,conn_cur", 100_000, None);
    let threads: Vec<_> = (0..4)
        .map(|th| {
            let t = t.clone();
            std::thread::spawn(move || {
                for i in 0..5000u32 {
                    let one = t.track(&ip(0)).unwrap();
                    one.count(Event::HttpReq);
                    let many = t.track(&Key::Int(th * 10_000 + i % 100)).unwrap();
                    many.count(Event::HttpReq);
                }
            })
        })
        .collect();
    for th in threads {
        th.join().unwrap();
    }
    let e = t.lookup(&ip(0)).unwrap();
    assert_eq!(num(&t, &e, DataType::HttpReqCnt), 20_000);
    assert_eq!(num(&t, &e, DataType::ConnCur), 0);
    assert_eq!(t.used(), 1 + 400);
    let total: u64 = t
        .entries()
        .iter()
        .filter(|e| matches!(e.key(), Key::Int(_)))
        .map(|e| num(&t, e, DataType::ConnCnt))
        .sum();
    assert_eq!(total, 20_000);
}

#[test]
fn shared_tables_log_local_changes_in_order_and_forget_removed_keys() {
    let (t, clock) = table("gpc0", 10, Some(100));
    let woken = Arc::new(AtomicU32::new(0));
    let w = woken.clone();
    t.share(Box::new(move || {
        w.fetch_add(1, Ordering::Relaxed);
    }));
    let a = t.get_or_create(&ip(1)).unwrap();
    let b = t.get_or_create(&ip(2)).unwrap();
    t.touch(&a);
    t.inc_gpc(&b, 0);
    t.touch(&a);
    let order: Vec<Key> = t
        .updates_after(0, 10)
        .into_iter()
        .map(|(_, e)| e.key().clone())
        .collect();
    assert_eq!(order, [ip(2), ip(1)], "each key once, at its last change");
    assert_eq!(woken.load(Ordering::Relaxed), 3);
    let last = t.last_update();
    assert!(t.updates_after(last, 10).is_empty());
    // What a peer sent is applied, not logged to be sent on.
    t.apply_remote(&ip(3), &[(DataType::Gpc0, 0, crate::peers::Sent::Count(4))]);
    assert_eq!(t.last_update(), last);
    assert_eq!(num(&t, &t.lookup(&ip(3)).unwrap(), DataType::Gpc0), 4);
    clock.fetch_add(1000, Ordering::Relaxed);
    assert_eq!(t.purge(), 3);
    assert!(
        t.updates_after(0, 10).is_empty(),
        "removed keys leave the log"
    );
}
