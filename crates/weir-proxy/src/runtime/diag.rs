//! `show errors` (the captured invalid messages) and `show threads`
//! (each thread's CPU time, from `/proc`).

use crate::state::ProxyId;
use crate::state::Shared;

pub(super) fn show_errors(sh: &Shared, px: Option<&str>, which: Option<bool>) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let proxy_id = |i: ProxyId| sh.proxy(i).uid;
    let events: Vec<_> = sh
        .errors
        .events()
        .into_iter()
        .filter(|c| which.is_none_or(|w| w == c.response))
        .filter(|c| {
            px.is_none_or(|p| {
                sh.proxy(c.proxy).name == p || p.parse().ok() == Some(proxy_id(c.proxy))
            })
        })
        .map(|c| weir_admin::errors::ErrorEvent {
            date: crate::log::local_date_ms(c.at),
            side: if c.response { "backend" } else { "frontend" },
            proxy: sh.proxy(c.proxy).name.clone(),
            proxy_id: proxy_id(c.proxy),
            response: c.response,
            backend: None,
            server: c.server,
            event: c.event,
            src: c.src.map_or_else(|| "unix".to_string(), |a| a.to_string()),
            reason: c.reason,
            bytes: c.bytes,
        })
        .collect();
    weir_admin::errors::render(&crate::log::local_date_ms(now), sh.errors.total(), &events)
}

/// `show threads`: each thread of the process, from `/proc`.
pub(super) fn threads() -> String {
    let mut out = String::new();
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return "Threads are not listed on this system.\n".into();
    };
    let mut tids: Vec<u32> = dir
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    tids.sort_unstable();
    let tick = 100u64;
    for tid in tids {
        let base = format!("/proc/self/task/{tid}");
        let name = std::fs::read_to_string(format!("{base}/comm")).unwrap_or_default();
        let stat = std::fs::read_to_string(format!("{base}/stat")).unwrap_or_default();
        // After the command's closing parenthesis come the state (field
        // 3), …, utime (field 14) and stime (field 15).
        let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
        let f: Vec<&str> = rest.split_whitespace().collect();
        let field = |n: usize| {
            f.get(n - 3)
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(0)
        };
        let (utime, stime) = (field(14), field(15));
        out.push_str(&format!(
            "  Thread {} : tid={tid} user={}ms sys={}ms\n",
            name.trim(),
            utime * 1000 / tick,
            stime * 1000 / tick
        ));
    }
    out
}
