//! Unit tests of `set.rs`.

use super::*;
use weir_config::{HashFunction, HashMethod};

fn set(algo: Algo, weights: &[u32]) -> ServerSet {
    let infos = weights
        .iter()
        .enumerate()
        .map(|(i, &w)| ServerInfo {
            id: i as u32 + 1,
            weight: w,
            backup: false,
            maxconn: None,
            minconn: None,
        })
        .collect();
    ServerSet::new(algo, HashType::default(), false, infos)
}

fn counts(s: &mut ServerSet, n: usize, release: bool) -> Vec<usize> {
    let mut rng = Rng::new(7);
    let mut c = vec![0; s.len()];
    for k in 0..n {
        let key = (k as u32).to_be_bytes();
        match s.pick(&key, &mut rng, None) {
            Pick::Server(i) => {
                c[i] += 1;
                s.take(i);
                if release {
                    s.release(i);
                }
            }
            p => panic!("unexpected {p:?}"),
        }
    }
    c
}

#[test]
fn roundrobin_weights_are_exact() {
    let mut s = set(Balance::RoundRobin, &[1, 2, 3]);
    assert_eq!(counts(&mut s, 60, true), vec![10, 20, 30]);
    // and smooth: the heaviest never runs three times in a row
    let mut s = set(Balance::RoundRobin, &[1, 1, 4]);
    let mut rng = Rng::new(1);
    let seq: Vec<Pick> = (0..6).map(|_| s.pick(b"", &mut rng, None)).collect();
    assert!(
        seq.windows(3).all(|w| !(w[0] == w[1] && w[1] == w[2])),
        "{seq:?}"
    );
}

#[test]
fn weight_change_and_zero() {
    let mut s = set(Balance::RoundRobin, &[1, 1]);
    s.set_weight(1, 0);
    assert_eq!(counts(&mut s, 10, true), vec![10, 0]);
    s.set_weight(1, 3);
    assert_eq!(counts(&mut s, 40, true), vec![10, 30]);
}

#[test]
fn down_servers_get_nothing_and_backups_take_over() {
    let infos = vec![
        ServerInfo {
            id: 1,
            weight: 1,
            backup: false,
            maxconn: None,
            minconn: None,
        },
        ServerInfo {
            id: 2,
            weight: 1,
            backup: true,
            maxconn: None,
            minconn: None,
        },
        ServerInfo {
            id: 3,
            weight: 1,
            backup: true,
            maxconn: None,
            minconn: None,
        },
    ];
    let mut s = ServerSet::new(
        Balance::RoundRobin,
        HashType::default(),
        false,
        infos.clone(),
    );
    assert_eq!(counts(&mut s, 5, true), vec![5, 0, 0]);
    s.set_up(0, false);
    assert_eq!(counts(&mut s, 6, true), vec![0, 6, 0], "first backup only");
    let mut s = ServerSet::new(Balance::RoundRobin, HashType::default(), true, infos);
    s.set_up(0, false);
    assert_eq!(counts(&mut s, 6, true), vec![0, 3, 3], "allbackups");
    s.set_up(1, false);
    s.set_up(2, false);
    assert_eq!(s.pick(b"", &mut Rng::new(1), None), Pick::NoServer);
}

#[test]
fn leastconn_prefers_idle_and_rotates_ties() {
    let mut s = set(Balance::LeastConn, &[1, 1, 1]);
    let c = counts(&mut s, 9, true);
    assert_eq!(c, vec![3, 3, 3]);
    let mut s = set(Balance::LeastConn, &[1, 1]);
    s.take(0);
    s.take(0);
    let mut rng = Rng::new(1);
    assert_eq!(s.pick(b"", &mut rng, None), Pick::Server(1));
    let c = counts(&mut s, 4, false);
    assert_eq!(
        c,
        vec![1, 3],
        "fills the idle one up to equality, then alternates"
    );
}

#[test]
fn first_fills_in_id_order_then_queues() {
    let infos = (1..=3)
        .map(|id| ServerInfo {
            id,
            weight: 1,
            backup: false,
            maxconn: Some(2),
            minconn: None,
        })
        .collect();
    let mut s = ServerSet::new(Balance::First, HashType::default(), false, infos);
    assert_eq!(counts(&mut s, 6, false), vec![2, 2, 2]);
    assert_eq!(s.pick(b"", &mut Rng::new(1), None), Pick::QueueBackend);
    s.release(1);
    assert_eq!(s.pick(b"", &mut Rng::new(1), None), Pick::Server(1));
}

#[test]
fn full_servers_are_skipped_then_backend_queues() {
    let infos = (1..=2)
        .map(|id| ServerInfo {
            id,
            weight: 1,
            backup: false,
            maxconn: Some(1),
            minconn: None,
        })
        .collect();
    let mut s = ServerSet::new(Balance::RoundRobin, HashType::default(), false, infos);
    let mut rng = Rng::new(1);
    let Pick::Server(a) = s.pick(b"", &mut rng, None) else {
        panic!()
    };
    s.take(a);
    let Pick::Server(b) = s.pick(b"", &mut rng, None) else {
        panic!()
    };
    assert_ne!(a, b);
    s.take(b);
    assert_eq!(s.pick(b"", &mut rng, None), Pick::QueueBackend);
}

#[test]
fn source_is_sticky_and_spread() {
    for method in [HashMethod::MapBased, HashMethod::Consistent] {
        let ht = HashType {
            method,
            function: HashFunction::Sdbm,
            avalanche: true,
        };
        let infos = (1..=4)
            .map(|id| ServerInfo {
                id,
                weight: 1,
                backup: false,
                maxconn: None,
                minconn: None,
            })
            .collect();
        let mut s = ServerSet::new(Balance::Source, ht, false, infos);
        let mut rng = Rng::new(1);
        let a = s.pick(&[10, 0, 0, 1], &mut rng, None);
        for _ in 0..10 {
            assert_eq!(s.pick(&[10, 0, 0, 1], &mut rng, None), a);
        }
        let mut c = [0usize; 4];
        for k in 0..4000u32 {
            if let Pick::Server(i) = s.pick(&k.to_be_bytes(), &mut rng, None) {
                c[i] += 1;
            }
        }
        assert!(c.iter().all(|&n| n > 500), "{method:?} {c:?}");
        let Pick::Server(t) = a else { panic!() };
        assert!(matches!(s.pick(&[10, 0, 0, 1], &mut rng, Some(t)), Pick::Server(o) if o != t));
    }
}

#[test]
fn random_two_choices_balance_load() {
    let mut s = set(Balance::Random { draws: 2 }, &[1, 1, 1, 1]);
    let c = counts(&mut s, 400, false);
    assert!(c.iter().all(|&n| (90..=110).contains(&n)), "{c:?}");
}

#[test]
fn redispatch_avoids_the_failed_server() {
    let mut s = set(Balance::RoundRobin, &[1, 1]);
    let mut rng = Rng::new(1);
    for _ in 0..5 {
        assert_eq!(s.pick(b"", &mut rng, Some(0)), Pick::Server(1));
    }
    let mut s = set(Balance::RoundRobin, &[1]);
    assert_eq!(
        s.pick(b"", &mut rng, Some(0)),
        Pick::Server(0),
        "alone, it is retried"
    );
}

#[test]
fn an_added_server_waits_in_maintenance_then_takes_its_share() {
    let mut s = set(Balance::RoundRobin, &[1]);
    assert!(s.takes_new_servers());
    let i = s.add(ServerInfo {
        id: 2,
        weight: 1,
        backup: false,
        maxconn: None,
        minconn: None,
    });
    assert_eq!(i, 1);
    assert_eq!(counts(&mut s, 10, true), vec![10, 0], "in maintenance");
    s.set_maint(i, false);
    assert_eq!(counts(&mut s, 10, true), vec![5, 5]);
    assert!(!set(Balance::StaticRr, &[1]).takes_new_servers());
    assert!(!set(Balance::Source, &[1]).takes_new_servers(), "map-based");
}

#[test]
fn a_balance_factor_bounds_one_hot_key_on_a_consistent_ring() {
    let ht = HashType {
        method: HashMethod::Consistent,
        function: HashFunction::Sdbm,
        avalanche: true,
    };
    let infos = |w: &[u32]| {
        w.iter()
            .enumerate()
            .map(|(i, &weight)| ServerInfo {
                id: i as u32 + 1,
                weight,
                backup: false,
                maxconn: None,
                minconn: None,
            })
            .collect()
    };
    // One key held open 40 times: without a bound it all lands on one
    // server; with 150 % no server holds more than 1.5 times its share.
    let held = |factor: u32, w: &[u32]| {
        let mut s = ServerSet::new(Balance::Source, ht, false, infos(w));
        s.set_balance_factor(factor);
        let mut rng = Rng::new(1);
        let mut c = vec![0u32; w.len()];
        for _ in 0..40 {
            let Pick::Server(i) = s.pick(b"hot", &mut rng, None) else {
                panic!("no server")
            };
            s.take(i);
            c[i] += 1;
        }
        c
    };
    let free = held(0, &[1, 1, 1, 1]);
    assert_eq!(free.iter().max(), Some(&40), "{free:?}");
    let bounded = held(150, &[1, 1, 1, 1]);
    assert!(bounded.iter().all(|&n| n <= 15), "{bounded:?}");
    assert_eq!(bounded.iter().sum::<u32>(), 40);
    // Weights are respected: a server of weight 3 holds three times more.
    let weighted = held(125, &[3, 1]);
    assert!(weighted[0] >= 27 && weighted[1] >= 8, "{weighted:?}");
    // The key's first choice stays first while it is under its bound.
    let mut s = ServerSet::new(Balance::Source, ht, false, infos(&[1, 1, 1, 1]));
    let mut rng = Rng::new(1);
    let first = s.pick(b"hot", &mut rng, None);
    s.set_balance_factor(150);
    assert_eq!(s.pick(b"hot", &mut rng, None), first);
}

#[test]
fn minconn_ramps_the_limit_with_the_backend_load() {
    // minconn 2, maxconn 20, fullconn 40: haproxy 2.6 let 4 connections
    // reach the server with 9 sessions on the backend, 2 with 3.
    let mut set = ServerSet::new(
        Balance::RoundRobin,
        HashType::default(),
        false,
        vec![ServerInfo {
            id: 1,
            weight: 1,
            backup: false,
            maxconn: Some(20),
            minconn: Some(2),
        }],
    );
    set.set_fullconn(40);
    let fill = |set: &mut ServerSet, load: u32| {
        set.note_load(load);
        let mut n = 0;
        while let Pick::Server(i) = set.pick(b"", &mut Rng::new(1), None) {
            set.take(i);
            n += 1;
        }
        for _ in 0..n {
            set.release(0);
        }
        n
    };
    assert_eq!(fill(&mut set, 3), 2);
    assert_eq!(fill(&mut set, 9), 4);
    assert_eq!(fill(&mut set, 30), 15);
    assert_eq!(fill(&mut set, 40), 20, "at fullconn: maxconn");
    assert_eq!(fill(&mut set, 400), 20);
}
