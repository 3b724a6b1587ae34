use super::*;

/// A length-prefixed field.
fn data(b: &[u8]) -> Vec<u8> {
    let mut v = (b.len() as u16).to_be_bytes().to_vec();
    v.extend_from_slice(b);
    v
}

/// A packet: the first byte, the remaining length, the body.
fn packet(first: u8, body: &[u8]) -> Vec<u8> {
    let mut v = vec![first];
    let mut n = body.len();
    loop {
        let b = (n % 128) as u8;
        n /= 128;
        v.push(if n > 0 { b | 0x80 } else { b });
        if n == 0 {
            break;
        }
    }
    v.extend_from_slice(body);
    v
}

/// An MQTT 5.0 CONNECT with connect and will properties (user
/// properties among them), a will, a user name and a password.
fn connect_v5() -> Vec<u8> {
    let mut props = vec![0x27, 0, 0, 0x10, 0]; // maximum packet size 4096
    props.extend([0x11, 0, 0, 0, 60]); // session expiry 60
    props.push(0x26);
    props.extend(data(b"k"));
    props.extend(data(b"v"));
    let mut will = vec![0x03];
    will.extend(data(b"application/json"));
    will.push(0x26);
    will.extend(data(b"wk"));
    will.extend(data(b"wv"));
    let mut b = data(b"MQTT");
    b.extend([5, 0xc4 | 0x02, 0, 30]);
    b.push(props.len() as u8);
    b.extend(props);
    b.extend(data(b"client-7"));
    b.push(will.len() as u8);
    b.extend(will);
    b.extend(data(b"status"));
    b.extend(data(b"offline"));
    b.extend(data(b"alice"));
    b.extend(data(b"s3cret"));
    packet(0x10, &b)
}

fn value(msg: &[u8], t: &str, f: &str) -> Option<String> {
    let t = packet_type(t).unwrap();
    let f = field(t, f).unwrap();
    field_value(msg, t, f).map(|v| String::from_utf8(v).unwrap())
}

#[test]
fn connect_fields_and_properties() {
    let m = connect_v5();
    assert!(matches!(parse(&m), Parsed::Valid(_)));
    for (f, want) in [
        ("protocol_name", "MQTT"),
        ("PROTOCOL_VERSION", "5"),
        ("flags", "198"),
        ("keepalive", "30"),
        ("client_identifier", "client-7"),
        ("will_topic", "status"),
        ("will_payload", "offline"),
        ("username", "alice"),
        ("password", "s3cret"),
        ("39", "4096"),
        ("17", "60"),
        ("3", "application/json"),
    ] {
        assert_eq!(value(&m, "connect", f).as_deref(), Some(want), "{f}");
    }
    assert_eq!(value(&m, "1", "33"), None, "absent property");
    assert_eq!(value(&m, "connack", "flags"), None, "another type");
}

#[test]
fn v311_and_v31_connects() {
    let mut b = data(b"MQTT");
    b.extend([4, 0x02, 0, 60]);
    b.extend(data(b""));
    let m = packet(0x10, &b);
    assert_eq!(
        value(&m, "connect", "protocol_version").as_deref(),
        Some("4")
    );
    assert_eq!(
        value(&m, "connect", "client_identifier").as_deref(),
        Some("")
    );
    assert_eq!(value(&m, "connect", "username"), None);
    let mut b = data(b"MQIsdp");
    b.extend([3, 0x02, 0, 60]);
    b.extend(data(b"old"));
    assert!(matches!(parse(&packet(0x10, &b)), Parsed::Valid(_)));
}

#[test]
fn connack_fields() {
    let m = packet(0x20, &[1, 0]);
    assert_eq!(
        value(&m, "connack", "protocol_version").as_deref(),
        Some("4")
    );
    assert_eq!(value(&m, "connack", "flags").as_deref(), Some("1"));
    let b = [0, 0x87, 7, 0x24, 1, 0x21, 0x01, 0x00, 0x25, 0];
    let m = packet(0x20, &b);
    assert_eq!(
        value(&m, "connack", "protocol_version").as_deref(),
        Some("5")
    );
    assert_eq!(value(&m, "connack", "reason_code").as_deref(), Some("135"));
    assert_eq!(value(&m, "connack", "36").as_deref(), Some("1"));
    assert_eq!(value(&m, "connack", "33").as_deref(), Some("256"));
    assert_eq!(value(&m, "connack", "37").as_deref(), Some("0"));
}

#[test]
fn bad_packets_are_invalid_and_short_ones_partial() {
    let m = connect_v5();
    assert_eq!(parse(&m[..m.len() - 1]), Parsed::Partial);
    assert_eq!(parse(&m[..1]), Parsed::Partial);
    assert_eq!(parse(b""), Parsed::Partial);
    // What follows the first packet is not its business.
    let mut two = m.clone();
    two.extend(packet(0xc0, &[]));
    assert!(matches!(parse(&two), Parsed::Valid(_)));
    assert_eq!(parse(&packet(0xc0, &[])), Parsed::Invalid, "PINGREQ");
    let mut flagged = m.clone();
    flagged[0] = 0x11;
    assert_eq!(parse(&flagged), Parsed::Invalid, "fixed header flags");
    assert_eq!(
        parse(&packet(0x20, &[2, 0])),
        Parsed::Invalid,
        "CONNACK flags"
    );
    assert_eq!(
        parse(&[0x10, 0xff, 0xff, 0xff, 0xff, 0x01]),
        Parsed::Invalid,
        "five-byte length"
    );
    let mut b = data(b"MQTT");
    b.extend([4, 0x02, 0, 60]);
    b.extend(data(b"id"));
    b.extend([0xff, 0xff]);
    assert_eq!(parse(&packet(0x10, &b)), Parsed::Invalid, "bytes left over");
    let mut b = data(b"MQTT");
    b.extend([4, 0x02, 0, 60]);
    b.extend([0, 9, b'i', b'd']);
    assert_eq!(
        parse(&packet(0x10, &b)),
        Parsed::Invalid,
        "string past the end"
    );
    let mut b = data(b"HTTP");
    b.extend([4, 0x02, 0, 60]);
    b.extend(data(b"id"));
    assert_eq!(parse(&packet(0x10, &b)), Parsed::Invalid, "protocol name");
    assert!(packet_type("subscribe").is_ok());
    assert!(packet_type("16").is_err());
    assert!(field(1, "reason_code").is_err());
}
