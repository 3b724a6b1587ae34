//! MQTT packets (pure): `mqtt_is_valid` and `mqtt_field_value`, on the
//! first packet each side sends (CONNECT from the client, CONNACK from the
//! server), for MQTT 3.1, 3.1.1 and 5.0 as the OASIS specifications frame
//! them: a fixed header (type and flags, then a remaining length of one to
//! four 7-bit bytes), a variable header and a payload, with MQTT 5.0's
//! properties.

/// A packet type by its MQTT number.
pub type PacketType = u8;

const CONNECT: PacketType = 1;
const CONNACK: PacketType = 2;

/// What `mqtt_field_value` extracts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    Flags,
    ProtocolName,
    ProtocolVersion,
    ClientId,
    WillTopic,
    WillPayload,
    Username,
    Password,
    Keepalive,
    ReasonCode,
    /// An MQTT 5.0 property, by its identifier.
    Property(u8),
}

/// The packet type of `mqtt_field_value`'s first argument: a name (any
/// case) or its number.
pub fn packet_type(arg: &str) -> Result<PacketType, String> {
    const NAMES: [&str; 15] = [
        "connect",
        "connack",
        "publish",
        "puback",
        "pubrec",
        "pubrel",
        "pubcomp",
        "subscribe",
        "suback",
        "unsubscribe",
        "unsuback",
        "pingreq",
        "pingresp",
        "disconnect",
        "auth",
    ];
    if let Some(i) = NAMES.iter().position(|n| n.eq_ignore_ascii_case(arg)) {
        return Ok(i as u8 + 1);
    }
    match arg.parse::<u8>() {
        Ok(n @ 1..=15) => Ok(n),
        _ => Err(format!(
            "converter 'mqtt_field_value': unknown packet type '{arg}'"
        )),
    }
}

/// The field of `mqtt_field_value`'s second argument for packets of type
/// `t`: a name (any case) or a property identifier.
pub fn field(t: PacketType, arg: &str) -> Result<Field, String> {
    if let Ok(id) = arg.parse::<u8>() {
        return Ok(Field::Property(id));
    }
    let f = match arg.to_ascii_lowercase().as_str() {
        "flags" => Field::Flags,
        "protocol_version" => Field::ProtocolVersion,
        "protocol_name" if t == CONNECT => Field::ProtocolName,
        "client_identifier" if t == CONNECT => Field::ClientId,
        "will_topic" if t == CONNECT => Field::WillTopic,
        "will_payload" if t == CONNECT => Field::WillPayload,
        "username" if t == CONNECT => Field::Username,
        "password" if t == CONNECT => Field::Password,
        "keepalive" if t == CONNECT => Field::Keepalive,
        "reason_code" if t == CONNACK => Field::ReasonCode,
        _ => {
            return Err(format!(
                "converter 'mqtt_field_value': unknown field '{arg}' for this packet type"
            ))
        }
    };
    Ok(f)
}

/// What the bytes say: not a whole packet yet, a bad one, or a packet.
#[derive(Debug, PartialEq, Eq)]
pub enum Parsed<'a> {
    Partial,
    Invalid,
    Valid(Packet<'a>),
}

/// The fields of a CONNECT or CONNACK packet.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Packet<'a> {
    pub kind: PacketType,
    pub flags: u8,
    pub protocol_name: &'a [u8],
    pub version: u8,
    pub keepalive: u16,
    pub reason_code: u8,
    pub client_id: &'a [u8],
    pub will_topic: Option<&'a [u8]>,
    pub will_payload: Option<&'a [u8]>,
    pub username: Option<&'a [u8]>,
    pub password: Option<&'a [u8]>,
    /// The packet's properties, then the will's (MQTT 5.0).
    pub props: Vec<(u8, Value<'a>)>,
}

/// A property's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value<'a> {
    Int(u32),
    Bytes(&'a [u8]),
}

/// Reads the first packet of `msg`.
pub fn parse(msg: &[u8]) -> Parsed<'_> {
    let Some((&first, rest)) = msg.split_first() else {
        return Parsed::Partial;
    };
    let mut r = Reader(rest);
    let len = match r.varint() {
        Ok(n) => n as usize,
        Err(Short) if rest.len() < 4 => return Parsed::Partial,
        Err(Short) => return Parsed::Invalid,
    };
    let Some(body) = r.0.get(..len) else {
        return Parsed::Partial;
    };
    let (kind, flags) = (first >> 4, first & 0x0f);
    let packet = match (kind, flags) {
        (CONNECT, 0) => connect(body),
        (CONNACK, 0) => connack(body),
        _ => None,
    };
    packet.map_or(Parsed::Invalid, Parsed::Valid)
}

/// The value of `f` in `msg`'s first packet, when it is of type `t`.
pub fn field_value(msg: &[u8], t: PacketType, f: Field) -> Option<Vec<u8>> {
    let Parsed::Valid(p) = parse(msg) else {
        return None;
    };
    if p.kind != t {
        return None;
    }
    let num = |n: u32| Some(n.to_string().into_bytes());
    match f {
        Field::Flags => num(u32::from(p.flags)),
        Field::ProtocolName => Some(p.protocol_name.to_vec()),
        Field::ProtocolVersion => num(u32::from(p.version)),
        Field::ClientId => Some(p.client_id.to_vec()),
        Field::WillTopic => p.will_topic.map(<[u8]>::to_vec),
        Field::WillPayload => p.will_payload.map(<[u8]>::to_vec),
        Field::Username => p.username.map(<[u8]>::to_vec),
        Field::Password => p.password.map(<[u8]>::to_vec),
        Field::Keepalive => num(u32::from(p.keepalive)),
        Field::ReasonCode => num(u32::from(p.reason_code)),
        Field::Property(id) => match p.props.iter().find(|(i, _)| *i == id)?.1 {
            Value::Int(n) => num(n),
            Value::Bytes(b) => Some(b.to_vec()),
        },
    }
}

/// The bytes ran out.
struct Short;

/// A cursor over a packet's bytes.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], Short> {
        let (a, b) = (self.0.get(..n).ok_or(Short)?, self.0.get(n..).ok_or(Short)?);
        self.0 = b;
        Ok(a)
    }
    fn byte(&mut self) -> Result<u8, Short> {
        Ok(self.take(1)?.first().copied().unwrap_or(0))
    }
    fn int(&mut self, n: usize) -> Result<u32, Short> {
        Ok(self
            .take(n)?
            .iter()
            .fold(0u32, |v, &b| (v << 8) | u32::from(b)))
    }
    /// A length-prefixed string or binary field.
    fn data(&mut self) -> Result<&'a [u8], Short> {
        let n = self.int(2)? as usize;
        self.take(n)
    }
    /// A variable byte integer: at most four bytes.
    fn varint(&mut self) -> Result<u32, Short> {
        let mut v = 0u32;
        for i in 0..4 {
            let b = self.byte()?;
            v |= u32::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(Short)
    }
    /// An MQTT 5.0 property block, appended to `out`.
    fn props(&mut self, out: &mut Vec<(u8, Value<'a>)>) -> Result<(), Short> {
        let n = self.varint()? as usize;
        let mut r = Reader(self.take(n)?);
        while !r.0.is_empty() {
            let id = r.byte()?;
            let v = match id {
                1 | 23 | 25 | 36 | 37 | 40 | 41 | 42 => Value::Int(u32::from(r.byte()?)),
                19 | 33 | 34 | 35 => Value::Int(r.int(2)?),
                2 | 17 | 24 | 39 => Value::Int(r.int(4)?),
                11 => Value::Int(r.varint()?),
                3 | 8 | 9 | 18 | 21 | 22 | 26 | 28 | 31 => Value::Bytes(r.data()?),
                38 => {
                    // A user property: a name and a value (not offered).
                    r.data()?;
                    r.data()?;
                    continue;
                }
                _ => return Err(Short),
            };
            out.push((id, v));
        }
        Ok(())
    }
}

/// A CONNECT packet's body, all of it used.
fn connect(body: &[u8]) -> Option<Packet<'_>> {
    let mut r = Reader(body);
    let mut p = Packet {
        kind: CONNECT,
        ..Packet::default()
    };
    p.protocol_name = r.data().ok()?;
    p.version = r.byte().ok()?;
    match (p.protocol_name, p.version) {
        (b"MQIsdp", 3) | (b"MQTT", 4 | 5) => {}
        _ => return None,
    }
    p.flags = r.byte().ok()?;
    if p.flags & 1 != 0 {
        return None;
    }
    p.keepalive = r.int(2).ok()? as u16;
    let v5 = p.version == 5;
    if v5 {
        r.props(&mut p.props).ok()?;
    }
    p.client_id = r.data().ok()?;
    if p.flags & 0x04 != 0 {
        if v5 {
            r.props(&mut p.props).ok()?;
        }
        p.will_topic = Some(r.data().ok()?);
        p.will_payload = Some(r.data().ok()?);
    }
    if p.flags & 0x80 != 0 {
        p.username = Some(r.data().ok()?);
    }
    if p.flags & 0x40 != 0 {
        p.password = Some(r.data().ok()?);
    }
    r.0.is_empty().then_some(p)
}

/// A CONNACK packet's body: MQTT 5.0 when it carries properties.
fn connack(body: &[u8]) -> Option<Packet<'_>> {
    let mut r = Reader(body);
    let mut p = Packet {
        kind: CONNACK,
        ..Packet::default()
    };
    p.flags = r.byte().ok()?;
    if p.flags & 0xfe != 0 {
        return None;
    }
    p.reason_code = r.byte().ok()?;
    p.version = 4;
    if !r.0.is_empty() {
        p.version = 5;
        r.props(&mut p.props).ok()?;
    }
    r.0.is_empty().then_some(p)
}

#[cfg(test)]
#[path = "mqtt_tests.rs"]
mod tests;
