//! Unit tests of `protobuf.rs`: the answers haproxy 2.6 gave for the same
//! bytes (rendered through `hex` or as integers).

use super::*;

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn conv(path: &str, ty: Option<&str>, grpc: bool) -> PbConv {
    let mut a = vec![path.to_string()];
    a.extend(ty.map(str::to_string));
    parse("protobuf", &a, grpc).unwrap()
}

fn int(input: &str, path: &str, ty: &str) -> Option<i64> {
    match extract(&conv(path, Some(ty), false), &hex(input))? {
        PbValue::Int(i) => Some(i),
        PbValue::Raw(_) => panic!("typed field gave bytes"),
    }
}

fn raw(input: &str, path: &str) -> Option<Vec<u8>> {
    match extract(&conv(path, None, false), &hex(input))? {
        PbValue::Raw(b) => Some(b),
        PbValue::Int(_) => panic!("raw field gave an integer"),
    }
}

/// Fields 1 (150, then 7 again at the end), 2 ("abc"), 3 (a message of
/// 1 = -5, 2 = 9, 3 = "hi"), 4 (fixed32 5), 5 (fixed64 -7), 6 (float
/// 1.5), 7 (double 2.5), 8 (1), 9 (sfixed32 -3).
const MSG: &str = "08960112036162631a1108fbffffffffffffffff0110091a026869250500000029f9ffffffffffffff350000c03f39000000000000044040014dfdffffff0807";

#[test]
fn fields_as_haproxy_reads_them() {
    assert_eq!(int(MSG, "1", "int32"), Some(150));
    assert_eq!(raw(MSG, "1"), Some(vec![0x96, 0x01]));
    assert_eq!(raw(MSG, "2"), Some(b"abc".to_vec()));
    assert_eq!(int(MSG, "2", "int32"), None);
    assert_eq!(int(MSG, "3.1", "uint32"), Some(-5));
    assert_eq!(int(MSG, "3.2", "sint32"), Some(-5));
    assert_eq!(int(MSG, "3.2", "int32"), Some(9));
    assert_eq!(raw(MSG, "3.3"), Some(b"hi".to_vec()));
    assert_eq!(int(MSG, "4", "fixed32"), Some(5));
    assert_eq!(raw(MSG, "4"), Some(vec![5, 0, 0, 0]));
    assert_eq!(int(MSG, "4", "int32"), None);
    assert_eq!(int(MSG, "5", "fixed64"), Some(-7));
    assert_eq!(int(MSG, "6", "float"), Some(1));
    assert_eq!(int(MSG, "7", "double"), Some(2));
    assert_eq!(int(MSG, "8", "bool"), Some(1));
    assert_eq!(int(MSG, "9", "sfixed32"), Some(-3));
    assert_eq!(int(MSG, "9", "fixed32"), Some(4294967293));
    assert_eq!(int(MSG, "10", "int32"), None);
    assert_eq!(int(MSG, "1.1", "int32"), None);
}

#[test]
fn edges_as_haproxy_reads_them() {
    assert_eq!(int("08", "1", "int32"), Some(0));
    assert_eq!(raw("08", "1"), None);
    assert_eq!(int("0896", "1", "int32"), None);
    assert_eq!(int("0a01610805", "1", "int32"), None);
    assert_eq!(int("0b0c0805", "1", "int32"), None);
    assert_eq!(raw("0a00", "1"), Some(Vec::new()));
    assert_eq!(int("08ffffffffffffffffff7f", "1", "int32"), Some(-1));
    assert_eq!(int("08ffffffffffffffffffff01", "1", "int32"), None);
    assert_eq!(int("08808080800f", "1", "int32"), Some(4026531840));
    assert_eq!(int("08feffffff0f", "1", "sint32"), Some(2147483647));
    assert_eq!(
        int("08ffffffffffffffff7f", "1", "sint64"),
        Some(-4611686018427387904)
    );
    assert_eq!(int("2d0000c0ff", "5", "float"), Some(0));
    assert_eq!(int("2d0000807f", "5", "float"), Some(0));
    assert_eq!(int("290000000000c0e0c3", "5", "double"), Some(i64::MIN));
    assert_eq!(int("29ea8ca039593e2946", "5", "double"), Some(0));
    assert_eq!(int("29000000000000f0ff", "5", "double"), Some(i64::MIN));
    assert_eq!(int("2d5ed0324f", "5", "float"), Some(3000000000));
    assert_eq!(int("0a04080510ff", "1.2", "int32"), None);
    assert_eq!(int("0801", ".1", "int32"), None);
    assert_eq!(int("0a020805", "1..1", "int32"), None);
    assert_eq!(int("0a020805", "99999999999.1", "int32"), None);
}

#[test]
fn grpc_messages_are_read_in_turn() {
    let g = |input: &str, path: &str| match extract(&conv(path, Some("int32"), true), &hex(input)) {
        Some(PbValue::Int(i)) => Some(i),
        _ => None,
    };
    assert_eq!(g("0000000003080510", "1"), Some(5));
    assert_eq!(g("0100000002080510", "1"), Some(5));
    assert_eq!(g("000000000a0805", "1"), None);
    assert_eq!(g("000000000208050000000002100c", "2"), Some(12));
    assert_eq!(g("0000", "1"), None);
    assert_eq!(g(MSG, "1"), None);
}

#[test]
fn arguments_are_checked_as_haproxy_checks_them() {
    let p = |a: &[&str]| {
        parse(
            "protobuf",
            &a.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
            false,
        )
    };
    assert!(p(&["1."]).is_err());
    assert!(p(&["a"]).is_err());
    assert!(p(&[]).is_err());
    assert_eq!(
        p(&["1", "string"]).unwrap_err(),
        "Wrong protocol buffer type 'string'."
    );
    assert_eq!(p(&["1", ""]).unwrap_err(), "Wrong protocol buffer type ''.");
    assert!(p(&["1..2"]).is_ok());
    assert!(p(&[".1"]).is_ok());
    assert!(p(&["48.59.1", "sint64"]).is_ok());
}
