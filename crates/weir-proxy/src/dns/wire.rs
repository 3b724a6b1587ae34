//! DNS messages through hickory-proto: a query for a name and a type (with
//! EDNS0 when the payload may exceed 512 bytes), and the answer to it read
//! only if it is the answer to that query (same id, same question);
//! anything else is dropped by the caller and counted.

use hickory_proto::op::{Edns, Header, Message, MessageType, OpCode, Query, ResponseCode};
use hickory_proto::rr::{Name, RData, Record, RecordType};
use hickory_proto::serialize::binary::{BinDecodable, BinDecoder};
use std::collections::HashMap;
use std::net::IpAddr;

/// What is asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    A,
    Aaaa,
    Srv,
}

impl Kind {
    fn record_type(self) -> RecordType {
        match self {
            Kind::A => RecordType::A,
            Kind::Aaaa => RecordType::AAAA,
            Kind::Srv => RecordType::SRV,
        }
    }
}

/// An SRV record: where one instance of a service is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Srv {
    /// The target's name, without the final dot, lower case.
    pub target: String,
    pub port: u16,
    pub weight: u16,
    pub priority: u16,
}

/// An answer to a query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// The records of the type asked (maybe none), with the addresses the
    /// additional section gives for SRV targets.
    Records {
        ips: Vec<IpAddr>,
        srvs: Vec<Srv>,
        extra: HashMap<String, Vec<IpAddr>>,
    },
    NxDomain,
    Refused,
    /// Another error code (SERVFAIL, FORMERR…).
    Other,
}

/// Why a datagram was not taken as the answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Invalid {
    /// It does not decode as a DNS message.
    Malformed,
    /// A query, or an answer with another id (spoofed or late).
    WrongId,
    /// The question it answers is not the one asked.
    WrongQuestion,
    /// Cut to fit (TC set): its records cannot be trusted to be all.
    Truncated,
}

/// The wire form of a query for `name` of kind `kind`, with id `id`.
pub fn query(id: u16, name: &str, kind: Kind, payload: u16) -> Option<Vec<u8>> {
    let mut m = Message::new();
    m.set_id(id)
        .set_message_type(MessageType::Query)
        .set_op_code(OpCode::Query)
        .set_recursion_desired(true);
    m.add_query(Query::query(fqdn(name)?, kind.record_type()));
    if payload > 512 {
        let mut e = Edns::new();
        e.set_max_payload(payload);
        m.set_edns(e);
    }
    m.to_vec().ok()
}

fn fqdn(name: &str) -> Option<Name> {
    let mut n = Name::from_ascii(name).ok()?;
    n.set_fqdn(true);
    Some(n)
}

/// A message read section by section: the header, the question and the
/// answers must decode; the additional records are taken up to the first
/// that does not (some servers write compression pointers past 16 KiB in
/// large answers, which cannot be followed: the targets named there are
/// then asked for themselves).
struct Decoded {
    header: Header,
    queries: Vec<Query>,
    answers: Vec<Record>,
    additionals: Vec<Record>,
}

fn decode(buf: &[u8]) -> Option<Decoded> {
    let mut d = BinDecoder::new(buf);
    let header = Header::read(&mut d).ok()?;
    let queries = (0..header.query_count())
        .map(|_| Query::read(&mut d).ok())
        .collect::<Option<Vec<_>>>()?;
    let answers = (0..header.answer_count())
        .map(|_| Record::read(&mut d).ok())
        .collect::<Option<Vec<_>>>()?;
    let mut additionals = Vec::new();
    let authority = (0..header.name_server_count()).all(|_| Record::read(&mut d).is_ok());
    if authority {
        for _ in 0..header.additional_count() {
            match Record::read(&mut d) {
                Ok(r) => additionals.push(r),
                Err(_) => break,
            }
        }
    }
    Some(Decoded {
        header,
        queries,
        answers,
        additionals,
    })
}

/// Reads `buf` as the answer to the query `id` for `name` of `kind`.
pub fn answer(buf: &[u8], id: u16, name: &str, kind: Kind) -> Result<Answer, Invalid> {
    let m = decode(buf).ok_or(Invalid::Malformed)?;
    if m.header.message_type() != MessageType::Response || m.header.id() != id {
        return Err(Invalid::WrongId);
    }
    let asked = fqdn(name).ok_or(Invalid::WrongQuestion)?;
    let same = m.queries.len() == 1
        && m.queries.iter().all(|q| {
            q.query_type() == kind.record_type() && q.name().to_lowercase() == asked.to_lowercase()
        });
    if !same {
        return Err(Invalid::WrongQuestion);
    }
    if m.header.truncated() {
        return Err(Invalid::Truncated);
    }
    match m.header.response_code() {
        ResponseCode::NoError => {}
        ResponseCode::NXDomain => return Ok(Answer::NxDomain),
        ResponseCode::Refused => return Ok(Answer::Refused),
        _ => return Ok(Answer::Other),
    }
    let (mut ips, mut srvs, mut extra) = (Vec::new(), Vec::new(), HashMap::new());
    for r in &m.answers {
        match (kind, r.data()) {
            (Kind::A, RData::A(a)) => ips.push(IpAddr::V4(a.0)),
            (Kind::Aaaa, RData::AAAA(a)) => ips.push(IpAddr::V6(a.0)),
            (Kind::Srv, RData::SRV(s)) => srvs.push(Srv {
                target: bare(s.target()),
                port: s.port(),
                weight: s.weight(),
                priority: s.priority(),
            }),
            _ => {}
        }
    }
    for r in &m.additionals {
        let ip = match r.data() {
            RData::A(a) => IpAddr::V4(a.0),
            RData::AAAA(a) => IpAddr::V6(a.0),
            _ => continue,
        };
        extra
            .entry(bare(r.name()))
            .or_insert_with(Vec::new)
            .push(ip);
    }
    Ok(Answer::Records { ips, srvs, extra })
}

/// A name as text, lower case, without its final dot.
fn bare(n: &Name) -> String {
    let t = n.to_lowercase().to_ascii();
    t.strip_suffix('.').unwrap_or(&t).to_string()
}

#[cfg(test)]
#[path = "wire_tests.rs"]
mod tests;
