//! Unit tests of `wire.rs`: answers built with hickory-proto as a name
//! server would, and the datagrams a resolver must drop.

use super::*;
use hickory_proto::rr::rdata::{A, AAAA, SRV};
use hickory_proto::rr::Record;

fn reply(id: u16, name: &str, kind: Kind, code: ResponseCode) -> Message {
    let mut m = Message::new();
    m.set_id(id)
        .set_message_type(MessageType::Response)
        .set_response_code(code);
    m.add_query(Query::query(fqdn(name).unwrap(), kind.record_type()));
    m
}

fn bytes(m: &Message) -> Vec<u8> {
    m.to_vec().unwrap()
}

#[test]
fn a_query_asks_one_question_with_edns_when_larger() {
    let q = query(7, "www.example", Kind::A, 512).unwrap();
    let m = Message::from_vec(&q).unwrap();
    assert_eq!(m.id(), 7);
    assert!(m.recursion_desired() && m.extensions().is_none());
    assert_eq!(m.queries()[0].name().to_ascii(), "www.example.");
    let q = query(8, "_http._tcp.example", Kind::Srv, 4096).unwrap();
    let m = Message::from_vec(&q).unwrap();
    assert_eq!(m.extensions().as_ref().map(|e| e.max_payload()), Some(4096));
    assert_eq!(m.queries()[0].query_type(), RecordType::SRV);
}

#[test]
fn records_of_the_type_asked_and_srv_targets_addresses() {
    let mut m = reply(1, "www.example", Kind::A, ResponseCode::NoError);
    let n = fqdn("www.example").unwrap();
    m.add_answer(Record::from_rdata(
        n.clone(),
        60,
        RData::A(A::new(10, 0, 0, 1)),
    ));
    m.add_answer(Record::from_rdata(
        n.clone(),
        60,
        RData::A(A::new(10, 0, 0, 2)),
    ));
    m.add_answer(Record::from_rdata(
        n,
        60,
        RData::AAAA(AAAA::new(0, 0, 0, 0, 0, 0, 0, 1)),
    ));
    let Answer::Records { ips, .. } = answer(&bytes(&m), 1, "WWW.example", Kind::A).unwrap() else {
        panic!()
    };
    assert_eq!(
        ips,
        [
            "10.0.0.1".parse::<IpAddr>().unwrap(),
            "10.0.0.2".parse().unwrap()
        ]
    );

    let mut m = reply(2, "_http._tcp.example", Kind::Srv, ResponseCode::NoError);
    let t = fqdn("node1.example").unwrap();
    m.add_answer(Record::from_rdata(
        fqdn("_http._tcp.example").unwrap(),
        60,
        RData::SRV(SRV::new(0, 512, 8080, t.clone())),
    ));
    m.add_additional(Record::from_rdata(t, 60, RData::A(A::new(10, 0, 0, 9))));
    let Answer::Records { srvs, extra, .. } =
        answer(&bytes(&m), 2, "_http._tcp.example", Kind::Srv).unwrap()
    else {
        panic!()
    };
    assert_eq!(
        srvs,
        [Srv {
            target: "node1.example".into(),
            port: 8080,
            weight: 512,
            priority: 0
        }]
    );
    assert_eq!(
        extra["node1.example"],
        ["10.0.0.9".parse::<IpAddr>().unwrap()]
    );
}

#[test]
fn error_codes_are_told_apart() {
    for (code, want) in [
        (ResponseCode::NXDomain, Answer::NxDomain),
        (ResponseCode::Refused, Answer::Refused),
        (ResponseCode::ServFail, Answer::Other),
    ] {
        let m = reply(3, "x.example", Kind::A, code);
        assert_eq!(answer(&bytes(&m), 3, "x.example", Kind::A), Ok(want));
    }
}

#[test]
fn spoofed_truncated_and_malformed_datagrams_are_dropped() {
    let m = reply(4, "x.example", Kind::A, ResponseCode::NoError);
    assert_eq!(
        answer(&bytes(&m), 5, "x.example", Kind::A),
        Err(Invalid::WrongId)
    );
    assert_eq!(
        answer(&bytes(&m), 4, "y.example", Kind::A),
        Err(Invalid::WrongQuestion)
    );
    assert_eq!(
        answer(&bytes(&m), 4, "x.example", Kind::Aaaa),
        Err(Invalid::WrongQuestion)
    );
    let mut t = m.clone();
    t.set_truncated(true);
    assert_eq!(
        answer(&bytes(&t), 4, "x.example", Kind::A),
        Err(Invalid::Truncated)
    );
    let q = query(4, "x.example", Kind::A, 512).unwrap();
    assert_eq!(
        answer(&q, 4, "x.example", Kind::A),
        Err(Invalid::WrongId),
        "a query, not an answer"
    );
    assert_eq!(
        answer(b"\x00\x04\x81", 4, "x.example", Kind::A),
        Err(Invalid::Malformed)
    );
    let full = bytes(&m);
    assert_eq!(
        answer(&full[..full.len() - 3], 4, "x.example", Kind::A),
        Err(Invalid::Malformed)
    );
}

#[test]
fn an_additional_record_that_does_not_decode_leaves_the_answers() {
    let mut m = reply(9, "_h._tcp.example", Kind::Srv, ResponseCode::NoError);
    let t = fqdn("n1.example").unwrap();
    m.add_answer(Record::from_rdata(
        fqdn("_h._tcp.example").unwrap(),
        60,
        RData::SRV(SRV::new(0, 1, 80, t.clone())),
    ));
    m.add_additional(Record::from_rdata(t, 60, RData::A(A::new(10, 0, 0, 9))));
    let mut b = bytes(&m);
    // The additional record's owner: a compression pointer made an
    // extended label (as a pointer past 16 KiB comes out).
    let at = b.len() - 16;
    assert_eq!(b[at] & 0xc0, 0xc0);
    b[at] = 0x74;
    let Answer::Records { srvs, extra, .. } = answer(&b, 9, "_h._tcp.example", Kind::Srv).unwrap()
    else {
        panic!()
    };
    assert_eq!(srvs.len(), 1);
    assert!(extra.is_empty(), "its target is asked for itself");
}
