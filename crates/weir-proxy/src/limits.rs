//! Start-up limits: the thread count, and the connection limit weighed
//! against the descriptor limit (raised as far as needed and allowed).

use crate::state::Limits;
use crate::sys;
use weir_config::Global;

/// Fixed descriptors weir needs besides two per connection.
const FD_RESERVE: u64 = 64;

/// Decides the limits and raises the process's descriptor limit to match;
/// warnings go to the console unless `quiet`. Fails only under
/// `strict-limits`.
pub fn plan(g: &Global, quiet: bool) -> Result<Limits, String> {
    let nthreads = g
        .nbthread
        .or(g.nbproc)
        .unwrap_or_else(sys::usable_cpus)
        .max(1);
    let (_, hard) = sys::nofile_limits().unwrap_or((1024, 1024));
    let hard = g.fd_hard_limit.map_or(hard, |l| l.min(hard));
    let limit = g.ulimit_n.map_or(hard, |n| n.min(hard));
    let mut maxconn = u64::from(g.maxconn.unwrap_or(0));
    if maxconn == 0 {
        maxconn = (limit.saturating_sub(FD_RESERVE) / 2).clamp(1, 100_000);
    }
    let need = maxconn * 2 + FD_RESERVE;
    if need > limit {
        if g.strict_limits {
            return Err(format!("[ALERT] config : maxconn {maxconn} needs {need} file descriptors but the limit is {limit} (strict-limits is set)"));
        } else if g.ulimit_n.is_some() {
            // As HAProxy: an explicit ulimit-n is obeyed; running out of
            // descriptors then pauses accepting.
            warn(quiet, &format!("FD limit ({limit}) too low for maxconn={maxconn}. Please raise 'ulimit-n' to {need} or more to avoid any trouble."));
        } else {
            let lowered = (limit.saturating_sub(FD_RESERVE) / 2).max(1);
            warn(quiet, &format!("maxconn {maxconn} needs {need} file descriptors but the hard limit is {limit}: lowering maxconn to {lowered}"));
            maxconn = lowered;
        }
    }
    let fd_target = g
        .ulimit_n
        .map_or((maxconn * 2 + FD_RESERVE).min(hard), |n| n.min(hard));
    if let Err(e) = sys::set_nofile(fd_target) {
        warn(
            quiet,
            &format!("cannot set the file descriptor limit to {fd_target}: {e}"),
        );
    }
    Ok(Limits {
        nthreads,
        maxconn: maxconn as u32,
    })
}

/// A start-up warning on the console, unless `quiet`.
pub fn warn(quiet: bool, msg: &str) {
    if !quiet {
        crate::log::console("WARNING", msg);
    }
}
