//! The live figures that fetches read (`queue`, `be_conn_free`,
//! `connslots`, rates, `srv_*`, `dst_conn`, `stopping`, `thread`), from
//! the same counters and server set as `show stat`.

use super::{BackendId, BackendRt, BindInfo, FrontendId, ServerId, Shared};
use std::sync::atomic::Ordering;
use weir_rules::live::{Live, SrvField};

/// Where a fetch runs: its frontend, backend (once chosen) and listener.
pub struct Here<'a> {
    pub fe: FrontendId,
    pub be: Option<&'a BackendRt>,
    pub bind: Option<&'a BindInfo>,
}

/// A backend by name (the current one when empty), with its id.
fn backend<'a>(sh: &'a Shared, here: &Here<'a>, name: &str) -> Option<(BackendId, &'a BackendRt)> {
    let found = if name.is_empty() {
        let be = here.be?;
        sh.backends.iter().position(|b| std::ptr::eq(&**b, be))
    } else {
        sh.backends.iter().position(|b| b.name == name)
    }?;
    Some((BackendId::new(found), sh.backends.get(found)?))
}

/// Connections queued on a backend and its servers.
fn queued(be: &BackendRt) -> i64 {
    let own = i64::from(be.queued.load(Ordering::Relaxed));
    own + be
        .servers()
        .map(|(_, s)| i64::from(s.queued.load(Ordering::Relaxed)))
        .sum::<i64>()
}

/// The free connection slots of a backend's usable servers (backups only
/// when no active server is usable); with queue slots for `connslots`.
/// -1 when a server has no limit.
fn free_slots(be: &BackendRt, with_queue: bool) -> i64 {
    let set = be.set();
    let (act, _) = set.usable_counts();
    let mut total = 0i64;
    for (id, s) in be.servers() {
        let i = id.index();
        let Some((_, _, _, backup)) = set.state(i) else {
            continue;
        };
        if !set.is_up(i) || (backup && act > 0) {
            continue;
        }
        let Some(max) = set.maxconn(i) else {
            return -1;
        };
        total += i64::from(max) - i64::from(s.cur_conns.load(Ordering::Relaxed));
        if with_queue {
            let Some(q) = s.maxqueue.filter(|q| *q > 0) else {
                return -1;
            };
            total += i64::from(q) - i64::from(s.queued.load(Ordering::Relaxed));
        }
    }
    total
}

/// One live figure.
pub fn figure(sh: &Shared, here: &Here<'_>, q: &Live) -> Option<i64> {
    Some(match q {
        Live::Queue(b) => queued(backend(sh, here, b)?.1),
        Live::AvgQueue(b) => {
            let be = backend(sh, here, b)?.1;
            let q = queued(be);
            let (act, _) = be.set().usable_counts();
            match i64::try_from(act).unwrap_or(0) {
                0 => q * 2,
                n => (q + n - 1) / n,
            }
        }
        Live::BeConnFree(b) => free_slots(backend(sh, here, b)?.1, false),
        Live::Connslots(b) => free_slots(backend(sh, here, b)?.1, true),
        Live::BeSessRate(b) => {
            let id = backend(sh, here, b)?.0;
            i64::try_from(sh.rates.backend(id).rate).unwrap_or(i64::MAX)
        }
        Live::FeSessRate(f) | Live::FeReqRate(f) => {
            let id = if f.is_empty() {
                here.fe
            } else {
                FrontendId::new(sh.frontends.iter().position(|x| x.name == *f)?)
            };
            let v = sh.rates.frontend(id);
            let n = if matches!(q, Live::FeReqRate(_)) {
                v.req_rate
            } else {
                v.rate
            };
            i64::try_from(n).unwrap_or(i64::MAX)
        }
        Live::Srv(field, path) => {
            let (b, s) = path.split_once('/').unwrap_or(("", path));
            let (bid, be) = backend(sh, here, b)?;
            let sid = be.server_named(s)?;
            server(sh, bid, be, sid, *field)?
        }
        Live::DstConn => i64::from(here.bind?.conns.load(Ordering::Relaxed)),
        Live::Stopping => i64::from(*sh.stopping.borrow()),
        // Worker threads count from 1 in the counters' slots.
        Live::Thread => crate::stats::thread_slot().saturating_sub(1) as i64,
        Live::Proc => 1,
    })
}

fn server(sh: &Shared, bid: BackendId, be: &BackendRt, sid: ServerId, f: SrvField) -> Option<i64> {
    let i = sid.index();
    let s = be.server_at(sid)?;
    let cur = i64::from(s.cur_conns.load(Ordering::Relaxed));
    Some(match f {
        SrvField::Conn => cur,
        SrvField::ConnFree => be.set().maxconn(i).map_or(-1, |m| i64::from(m) - cur),
        SrvField::IsUp => i64::from(be.set().is_up(i)),
        SrvField::Queue => i64::from(s.queued.load(Ordering::Relaxed)),
        SrvField::Weight => i64::from(be.set().state(i)?.2),
        SrvField::Iweight => i64::from(s.conf.weight),
        SrvField::Uweight => i64::from(s.uweight.load(Ordering::Relaxed)),
        SrvField::SessRate => i64::try_from(sh.rates.server(bid, sid).rate).unwrap_or(i64::MAX),
    })
}
