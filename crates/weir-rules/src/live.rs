//! Fetches of manual §7.3.2 on the live state of proxies and servers
//! (`queue`, `avg_queue`, `be_conn_free`, `connslots`, the session and
//! request rates, `srv_conn`, `srv_is_up`, `srv_weight` …, `dst_conn`,
//! `stopping`, `thread`, `proc`): the runtime answers them through
//! [`Ctx::live`](crate::sample::Ctx::live).

use crate::sample::Sample;

/// A server's figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SrvField {
    Conn,
    ConnFree,
    IsUp,
    Queue,
    Weight,
    Iweight,
    Uweight,
    SessRate,
}

/// One live figure; names are empty for the current proxy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Live {
    Queue(String),
    AvgQueue(String),
    BeConnFree(String),
    Connslots(String),
    BeSessRate(String),
    FeSessRate(String),
    FeReqRate(String),
    /// A server as `[<backend>/]<server>`.
    Srv(SrvField, String),
    DstConn,
    Stopping,
    Thread,
    Proc,
}

/// The fetch `name(args)` of this module, or `None` when `name` is not
/// one.
pub fn parse(name: &str, a: &[String]) -> Option<Result<Live, String>> {
    let proxy = || a.first().cloned().unwrap_or_default();
    let srv = |f: SrvField| match a.first().filter(|s| !s.is_empty()) {
        Some(s) => Ok(Live::Srv(f, s.clone())),
        None => Err(format!(
            "fetch method '{name}' expects [<backend>/]<server>"
        )),
    };
    Some(match name {
        "queue" => Ok(Live::Queue(proxy())),
        "avg_queue" => Ok(Live::AvgQueue(proxy())),
        "be_conn_free" => Ok(Live::BeConnFree(proxy())),
        "connslots" => Ok(Live::Connslots(proxy())),
        "be_sess_rate" => Ok(Live::BeSessRate(proxy())),
        "fe_sess_rate" => Ok(Live::FeSessRate(proxy())),
        "fe_req_rate" => Ok(Live::FeReqRate(proxy())),
        "srv_conn" => srv(SrvField::Conn),
        "srv_conn_free" => srv(SrvField::ConnFree),
        "srv_is_up" => srv(SrvField::IsUp),
        "srv_queue" => srv(SrvField::Queue),
        "srv_weight" => srv(SrvField::Weight),
        "srv_iweight" => srv(SrvField::Iweight),
        "srv_uweight" => srv(SrvField::Uweight),
        "srv_sess_rate" => srv(SrvField::SessRate),
        "dst_conn" => Ok(Live::DstConn),
        "stopping" => Ok(Live::Stopping),
        "thread" => Ok(Live::Thread),
        "proc" => Ok(Live::Proc),
        _ => return None,
    })
}

impl Live {
    /// Its sample from the runtime's figure.
    pub fn sample(&self, n: i64) -> Sample {
        match self {
            Live::Srv(SrvField::IsUp, _) | Live::Stopping => Sample::Bool(n != 0),
            _ => Sample::Int(n),
        }
    }

    /// Whether it gives a boolean (an ACL's default match).
    pub fn is_bool(&self) -> bool {
        matches!(self, Live::Srv(SrvField::IsUp, _) | Live::Stopping)
    }
}
