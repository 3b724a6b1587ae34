use super::*;

const MAGIC: u32 = 123456;

fn ip4(src: [u8; 4], dst: [u8; 4], ihl: u8) -> Vec<u8> {
    let mut h = vec![0x40 | ihl, 0, 0, 40, 0, 0, 0, 0, 64, 6, 0, 0];
    h.extend_from_slice(&src);
    h.extend_from_slice(&dst);
    h.resize(usize::from(ihl) * 4, 0);
    h
}

fn ip6(src: Ipv6Addr, dst: Ipv6Addr) -> Vec<u8> {
    let mut h = vec![0x60, 0, 0, 0, 0, 20, 6, 64];
    h.extend_from_slice(&src.octets());
    h.extend_from_slice(&dst.octets());
    h
}

fn tcp(sp: u16, dp: u16) -> Vec<u8> {
    let mut h = sp.to_be_bytes().to_vec();
    h.extend_from_slice(&dp.to_be_bytes());
    h.resize(20, 0);
    h
}

fn legacy(magic: u32, len: u32, hdr: &[u8]) -> Vec<u8> {
    let mut b = magic.to_be_bytes().to_vec();
    b.extend_from_slice(&len.to_be_bytes());
    b.extend_from_slice(hdr);
    b
}

fn standard(magic: u32, typ: u16, len: u16, hdr: &[u8]) -> Vec<u8> {
    let mut b = magic.to_be_bytes().to_vec();
    b.extend_from_slice(&(12 + u32::from(len)).to_be_bytes());
    b.extend_from_slice(&typ.to_be_bytes());
    b.extend_from_slice(&len.to_be_bytes());
    b.extend_from_slice(hdr);
    b
}

fn sa(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

#[test]
fn both_layouts_name_the_clients_addresses_and_ports() {
    let h4 = [ip4([10, 1, 2, 3], [10, 9, 8, 7], 5), tcp(1111, 2222)].concat();
    let want4 = CipHeader {
        src: sa("10.1.2.3:1111"),
        dst: sa("10.9.8.7:2222"),
    };
    let mut b = legacy(MAGIC, h4.len() as u32, &h4);
    b.extend_from_slice(b"hello");
    assert_eq!(parse(&b, MAGIC), Ok(Some((want4, 48))));
    let b = standard(MAGIC, 1, h4.len() as u16, &h4);
    assert_eq!(parse(&b, MAGIC), Ok(Some((want4, 52))));
    // The type is not checked, as haproxy.
    let b = standard(MAGIC, 2, h4.len() as u16, &h4);
    assert_eq!(parse(&b, MAGIC), Ok(Some((want4, 52))));
    let (a, z) = (
        "2001:db8::1".parse().unwrap(),
        "2001:db8::2".parse().unwrap(),
    );
    let h6 = [ip6(a, z), tcp(5555, 6666)].concat();
    let want6 = CipHeader {
        src: sa("[2001:db8::1]:5555"),
        dst: sa("[2001:db8::2]:6666"),
    };
    assert_eq!(parse(&legacy(MAGIC, 60, &h6), MAGIC), Ok(Some((want6, 68))));
    assert_eq!(
        parse(&standard(MAGIC, 1, 60, &h6), MAGIC),
        Ok(Some((want6, 72)))
    );
}

#[test]
fn ip_options_move_the_tcp_header_and_the_length_field_decides_what_is_taken() {
    let h = [ip4([10, 1, 2, 5], [10, 9, 8, 5], 6), tcp(1212, 2323)].concat();
    let got = parse(&legacy(MAGIC, 44, &h), MAGIC).unwrap().unwrap();
    assert_eq!(got.0.src, sa("10.1.2.5:1212"));
    assert_eq!(got.1, 52);
    // A length shorter than the headers: they are read, and only the
    // counted bytes taken (the rest is the stream's), as haproxy.
    let h = [ip4([10, 1, 2, 3], [10, 9, 8, 7], 5), tcp(1111, 2222)].concat();
    assert_eq!(parse(&legacy(MAGIC, 10, &h), MAGIC).unwrap().unwrap().1, 18);
    // A longer one takes bytes past them.
    let mut b = legacy(MAGIC, 44, &h);
    assert_eq!(parse(&b, MAGIC), Ok(None));
    b.extend_from_slice(b"XXXX");
    assert_eq!(parse(&b, MAGIC).unwrap().unwrap().1, 52);
}

#[test]
fn short_input_waits_and_bad_input_is_named() {
    let h = [ip4([10, 1, 2, 3], [10, 9, 8, 7], 5), tcp(1111, 2222)].concat();
    let b = legacy(MAGIC, h.len() as u32, &h);
    for n in 0..b.len() {
        assert_eq!(parse(&b[..n], MAGIC), Ok(None), "{n} bytes");
    }
    // The magic is judged once eight bytes came.
    assert_eq!(parse(&b[..7], 99), Ok(None));
    assert_eq!(parse(&b[..8], 99), Err(CipError::BadMagic));
    assert_eq!(
        parse(&legacy(99, 5, b"hello"), MAGIC),
        Err(CipError::BadMagic)
    );
    // An IP header of another version (read as the standard layout's,
    // whose IP header is then no better).
    let mut bad = h.clone();
    bad[0] = 0x50;
    assert_eq!(
        parse(&legacy(MAGIC, 40, &bad), MAGIC),
        Err(CipError::BadProto)
    );
    let mut bad = h.clone();
    bad[0] = 0x44;
    assert_eq!(
        parse(&legacy(MAGIC, 40, &bad), MAGIC),
        Err(CipError::BadProto)
    );
    // A length past anything sent never completes.
    assert_eq!(parse(&legacy(MAGIC, u32::MAX, &h), MAGIC), Ok(None));
}
