//! Capture slots: their order, ids, and the sections that may have them.

use super::tests::{errors, ok};

/// A proxy's request capture slots: (header, length).
fn req_slots(p: &crate::model::Proxy) -> Vec<(Option<&str>, usize)> {
    let slots = p.http.req_captures.iter();
    slots.map(|s| (s.header.as_deref(), s.len)).collect()
}

/// The (slot, length) of a proxy's `http-request capture` rules.
fn req_capture_rules(p: &crate::model::Proxy) -> Vec<(usize, usize)> {
    let rules = p.http_request.iter();
    rules
        .map(|r| match &r.action {
            weir_rules::ReqAction::Capture { slot, len, .. } => (*slot, *len),
            a => panic!("{a:?}"),
        })
        .collect()
}

#[test]
fn declared_capture_slots_and_ids() {
    let c = ok("defaults\n  mode http\n  timeout client 1s\n  timeout server 1s\n  timeout connect 1s\n\
                frontend f\n  bind :80\n  capture request header Host len 10\n  declare capture request len 32\n\
                \x20 http-request capture req.hdr(x) id 1\n");
    let p = &c.proxies[0];
    assert_eq!(req_slots(p), vec![(Some("Host"), 10), (None, 32)]);
    assert_eq!(req_capture_rules(p), vec![(1, 32)]);
    // Slots are numbered in the order their lines come, whatever their
    // kind; an id may name a header's slot (as haproxy).
    let c = ok("defaults\n  mode http\n  timeout client 1s\n  timeout server 1s\n  timeout connect 1s\n\
                frontend f\n  bind :80\n  declare capture request len 32\n  capture request header Host len 10\n\
                \x20 http-request capture req.hdr(x) len 5\n  http-request capture req.hdr(y) id 1\n\
                \x20 capture response header Server len 7\n  declare capture response len 4\n\
                \x20 http-response capture res.hdr(x) id 0\n");
    let p = &c.proxies[0];
    assert_eq!(
        req_slots(p),
        vec![(None, 32), (Some("Host"), 10), (None, 5)]
    );
    assert_eq!(req_capture_rules(p), vec![(2, 5), (1, 10)]);
    match &p.http_response[0].action {
        weir_rules::ResAction::Capture { slot, len, .. } => assert_eq!((*slot, *len), (0, 7)),
        a => panic!("{a:?}"),
    }
    let e = errors("frontend f\n  bind :80\n  http-request capture req.hdr(x) id 3\n  declare capture response len 4\n  http-response capture res.hdr(x) id 1\n");
    assert!(
        e[0].contains(":3") && e[0].contains("no capture slot 3"),
        "{e:?}"
    );
    assert!(
        e.len() == 2 && e[1].contains(":5") && e[1].contains("no capture slot 1"),
        "{e:?}"
    );
}

/// A backend's capture rules name the frontend's slots by id (as
/// haproxy); it can make no slot of its own.
#[test]
fn backend_captures_name_the_frontends_slots() {
    let c = ok("backend b\n  http-request capture req.hdr(x) id 4\n  http-response capture res.hdr(x) id 2\n");
    assert_eq!(req_capture_rules(&c.proxies[0]), vec![(4, 0)]);
    let e = errors("backend b\n  http-request capture req.hdr(x) len 4\n  declare capture request len 5\n  tcp-request content capture src len 4\n");
    assert!(e.len() == 3, "{e:?}");
    assert!(
        e[0].contains(":2") && e[0].contains("no frontend capability"),
        "{e:?}"
    );
    assert!(
        e[1].contains(":3") && e[1].contains("only available in frontend or listen"),
        "{e:?}"
    );
    assert!(
        e[2].contains(":4") && e[2].contains("no frontend capability"),
        "{e:?}"
    );
}
