//! `show peers [<section>]`: each peers section, its peers and their
//! sessions, laid out as haproxy 2.6 dumps them (its lists run newest
//! first, so the lines are in the reverse of the configuration's order).
//! The addresses are those of weir's own records; the flags carry the
//! bits haproxy shows for the states weir has.

use std::fmt::Write;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::state::peering::{PeerBoard, SectionBoard, SessView};
use crate::state::Shared;

/// The answer, or "No such peers" for an unknown section.
pub fn show(sh: &Shared, section: Option<&str>) -> String {
    let all = sh.peering.sections();
    let chosen: Vec<_> = all
        .iter()
        .filter(|s| section.is_none_or(|n| s.name == n))
        .collect();
    if section.is_some() && chosen.is_empty() {
        return "No such peers\n".into();
    }
    let now = Instant::now();
    let mut out = String::new();
    for s in chosen {
        write_section(&mut out, s, now);
    }
    out
}

fn write_section(out: &mut String, s: &SectionBoard, now: Instant) {
    let synced = s.synced.load(Ordering::Relaxed);
    let timed_out = now >= s.resync_until;
    // Waiting for a push; done (pushed, or waited long enough); pushed by
    // a peer.
    let flags = 0x11 | if synced || timed_out { 0x22 } else { 0 } | if synced { 0x4000 } else { 0 };
    let started = s
        .started
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let date = crate::log::local_date_ms(started);
    let date = date.get(..date.len().saturating_sub(4)).unwrap_or(&date);
    let _ = writeln!(
        out,
        "{:p}: [{date}] id={} disabled=0 flags={flags:#x} resync_timeout={} task_calls={}",
        s,
        s.name,
        if synced {
            "<PAST>".to_string()
        } else {
            remaining(s.resync_until, now)
        },
        s.calls.load(Ordering::Relaxed)
    );
    for p in s.peers.iter().rev() {
        write_peer(out, s, p, now);
    }
}

fn write_peer(out: &mut String, s: &SectionBoard, p: &PeerBoard, now: Instant) {
    let l = p.live().clone();
    let addr = p.addr.map_or("-".to_string(), |a| a.to_string());
    let (role, active) = if p.local {
        ("local", "inactive")
    } else {
        ("remote", "active")
    };
    let _ = writeln!(
        out,
        "  {:p}: id={}({role},{active}) addr={addr} last_status={} last_hdshk={}",
        p,
        p.name,
        l.status.name(),
        l.last_hdshk.map_or("<NEVER>".into(), |t| human(
            now.saturating_duration_since(t)
        ))
    );
    let never = |t: Option<Instant>| t.map_or("<NEVER>".into(), |t| remaining(t, now));
    let _ = writeln!(
        out,
        "        reconnect={} heartbeat={} confirm=0 tx_hbt={} rx_hbt={} no_hbt={} new_conn={} proto_err={} coll={}",
        never(l.reconnect),
        never(l.heartbeat),
        l.tx_hbt,
        l.rx_hbt,
        l.no_hbt,
        l.new_conn,
        l.proto_err,
        l.coll
    );
    match &l.sess {
        Some(v) => write_session(out, s, p, v),
        None => out.push_str("        flags=0x0\n"),
    }
    out.push_str("        shared tables:\n");
    let none = Vec::new();
    let views = l.sess.as_ref().map_or(&none, |v| &v.tables);
    for (i, (name, t)) in s.tables.iter().enumerate().rev() {
        let v = views.get(i).copied().unwrap_or_default();
        let u = t.last_update();
        let _ = writeln!(
            out,
            "          {:#x} local_id={} remote_id={} flags=0x0 remote_data={:#x}\n              last_acked={} last_pushed={} last_get={} teaching_origin=0 update={}\n              table:{:p} id={name} update={u} localupdate={u} commitupdate={u} refcnt=1\n        Dictionary cache not dumped (use \"show peers dict\")",
            entry_id(p, i),
            i + 1,
            v.remote_id,
            v.remote_data,
            v.last_acked,
            v.last_pushed,
            v.last_get,
            v.last_pushed,
            &**t
        );
    }
}

fn write_session(out: &mut String, s: &SectionBoard, p: &PeerBoard, v: &SessView) {
    let _ = writeln!(
        out,
        "        flags=0x20000000 appctx:{:#x} st0=7 st1=0 task_calls={} state=EST",
        (std::ptr::from_ref(p) as usize).wrapping_add((v.id as usize).wrapping_mul(0x1000)),
        v.calls
    );
    let a = |x: Option<std::net::SocketAddr>| x.map_or("-".to_string(), |a| a.to_string());
    if v.incoming {
        let _ = writeln!(
            out,
            "        xprt={} src={} addr={}",
            if v.tls { "SSL" } else { "RAW" },
            a(v.src),
            a(v.addr)
        );
    }
    for (what, t) in [
        ("remote_table", v.last_in),
        ("last_local_table", v.last_out),
    ] {
        let Some(i) = t else {
            continue;
        };
        let Some((name, _)) = s.tables.get(i) else {
            continue;
        };
        let rid = v.tables.get(i).map_or(0, |t| t.remote_id);
        let _ = writeln!(
            out,
            "        {what}:{:#x} id={name} local_id={} remote_id={rid}",
            entry_id(p, i),
            i + 1
        );
    }
}

/// A stable number for peer `p`'s record of shared table `i`.
fn entry_id(p: &PeerBoard, i: usize) -> usize {
    std::ptr::from_ref(p) as usize + 0x40 * (i + 1)
}

/// The time left until `t`, or `<PAST>`.
fn remaining(t: Instant, now: Instant) -> String {
    if t <= now {
        return "<PAST>".into();
    }
    human(t - now)
}

/// A duration as haproxy prints one: its two largest units (`4s`,
/// `1m20s`, `2h5m`, `3d4h`).
fn human(d: Duration) -> String {
    let s = d.as_secs();
    let (days, h, m, sec) = (s / 86400, s / 3600 % 24, s / 60 % 60, s % 60);
    match (days, h, m) {
        (0, 0, 0) => format!("{sec}s"),
        (0, 0, _) => format!("{m}m{sec}s"),
        (0, _, _) => format!("{h}h{m}m"),
        _ => format!("{days}d{h}h"),
    }
}
