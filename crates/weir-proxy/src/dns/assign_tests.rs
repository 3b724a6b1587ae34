//! Unit tests of `assign.rs`.

use super::*;

fn recs(ips: &[&str]) -> Vec<Rec> {
    ips.iter()
        .map(|i| Rec {
            key: i.to_string(),
            ip: i.parse().unwrap(),
            port: None,
            weight: None,
            target: None,
            how: "dns/ns1".into(),
        })
        .collect()
}

#[test]
fn servers_keep_their_records_and_free_ones_fill_the_gaps() {
    let held = [
        Some("10.0.0.2".to_string()),
        None,
        Some("10.0.0.9".to_string()),
    ];
    let r = recs(&["10.0.0.1", "10.0.0.2", "10.0.0.3"]);
    assert_eq!(assign(&held, &r, false), [Some(1), Some(0), Some(2)]);
    // One record gone, one server left without.
    let r = recs(&["10.0.0.2"]);
    assert_eq!(assign(&held, &r, false), [Some(0), None, None]);
    assert_eq!(assign(&held, &r, true), [Some(0), Some(0), Some(0)]);
    assert_eq!(assign(&held, &[], false), [None, None, None]);
    let dup = [Some("10.0.0.2".to_string()), Some("10.0.0.2".to_string())];
    assert_eq!(
        assign(&dup, &recs(&["10.0.0.2", "10.0.0.5"]), false),
        [Some(0), Some(1)]
    );
}

#[test]
fn preferred_networks_come_first() {
    let mut ips: Vec<IpAddr> = ["192.168.1.5", "10.1.2.3", "172.16.0.1"]
        .iter()
        .map(|i| i.parse().unwrap())
        .collect();
    prefer(
        &mut ips,
        &[
            ("10.0.0.0".parse().unwrap(), 8),
            ("172.16.0.0".parse().unwrap(), 12),
        ],
    );
    assert_eq!(ips[0].to_string(), "10.1.2.3");
    assert_eq!(ips[1].to_string(), "172.16.0.1");
    assert_eq!(srv_weight(0), 1);
    assert_eq!(srv_weight(65535), 256);
}
