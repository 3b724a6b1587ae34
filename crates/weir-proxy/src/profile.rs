//! Per-task profiling (`set profiling tasks on|off|auto`, `show
//! profiling`) and per-thread activity (`show activity`, `show threads`).
//! Every task weir spawns runs inside a [`Profiled`] wrapper named by its
//! kind. Profiling off, a poll costs one relaxed load and one per-thread
//! count (`tasksw`). On, every call is counted, and one poll in
//! [`SAMPLE`] on each thread is timed (`cpu`) and hands the task a waker
//! that stamps its next wake-up, so that the next poll measures the time
//! from wake-up to poll (`lat`); totals are the samples scaled to the
//! calls. Clock reads are the cost, hence the sampling. The stamp is the
//! wrapper's only state (8 bytes).

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Instant;

/// The kinds of tasks, as `show profiling` names them.
pub const KINDS: &[&str] = &[
    "accept_loop",
    "tcp_session",
    "http_session",
    "https_session",
    "h2_stream",
    "h2_server_conn",
    "health_check",
    "idle_sweep",
    "cli_session",
    "pool_purge",
];
const K: usize = 10;

/// A kind of task: its index in [`KINDS`].
pub trait Kind {
    const I: usize;
}

macro_rules! kinds {
    ($($name:ident = $i:expr),* $(,)?) => {
        $(
            #[doc = concat!("Tasks of kind `", stringify!($name), "`.")]
            pub struct $name;
            impl Kind for $name {
                const I: usize = $i;
            }
        )*
    };
}

kinds!(
    Accept = 0,
    Tcp = 1,
    Http = 2,
    Https = 3,
    H2Stream = 4,
    H2Server = 5,
    Check = 6,
    Idle = 7,
    Cli = 8,
    Purge = 9,
);

/// `set profiling tasks`: 0 off, 1 on, 2 auto (weir treats auto as off).
static MODE: AtomicU8 = AtomicU8::new(2);

pub fn mode_name() -> &'static str {
    match MODE.load(Ordering::Relaxed) {
        1 => "on",
        0 => "off",
        _ => "auto",
    }
}

/// Sets the mode from `on`, `off` or `auto`; false for anything else.
pub fn set_mode(word: &str) -> bool {
    let m = match word {
        "on" => 1,
        "off" => 0,
        "auto" => 2,
        _ => return false,
    };
    MODE.store(m, Ordering::Relaxed);
    true
}

fn on() -> bool {
    MODE.load(Ordering::Relaxed) == 1
}

/// One poll in this many is timed on each thread.
const SAMPLE: u64 = 4;

/// One thread's figures: per kind (calls, timed polls, their cpu ns,
/// latency samples, their ns), and the thread's polls and accepted
/// connections.
#[repr(align(64))]
#[derive(Default)]
struct Block {
    kinds: [[AtomicU64; 5]; K],
    polls: AtomicU64,
    accepted: AtomicU64,
}

static BLOCKS: OnceLock<Box<[Block]>> = OnceLock::new();
static EPOCH: OnceLock<Instant> = OnceLock::new();

/// Sizes the per-thread blocks (worker threads 1..=n, 0 for the others).
pub fn init(nthreads: usize) {
    let _ = EPOCH.set(Instant::now());
    let _ = BLOCKS.set((0..=nthreads).map(|_| Block::default()).collect());
}

fn now_ns() -> u64 {
    match EPOCH.get() {
        Some(e) => e.elapsed().as_nanos() as u64,
        None => EPOCH.get_or_init(Instant::now).elapsed().as_nanos() as u64,
    }
}

/// This thread's block, and whether other threads share it (block 0).
fn block() -> Option<(&'static Block, bool)> {
    let slot = crate::stats::thread_slot();
    BLOCKS.get()?.get(slot).map(|b| (b, slot == 0))
}

/// Adds `v` to `a`, a counter of a block only this thread writes unless
/// `shared`.
#[inline]
fn add(a: &AtomicU64, v: u64, shared: bool) {
    if shared {
        a.fetch_add(v, Ordering::Relaxed);
    } else {
        a.store(a.load(Ordering::Relaxed).wrapping_add(v), Ordering::Relaxed);
    }
}

/// Counts a connection accepted by this thread.
pub fn accepted() {
    if let Some((b, shared)) = block() {
        add(&b.accepted, 1, shared);
    }
}

/// Wakes a task and notes when.
struct Stamp {
    inner: Waker,
    woken: AtomicU64,
}

impl Wake for Stamp {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(now_ns().max(1), Ordering::Relaxed);
        self.inner.wake_by_ref();
    }
}

pin_project_lite::pin_project! {
    /// A task of kind `T`, profiled when profiling is on.
    pub struct Profiled<F, T> {
        #[pin]
        fut: F,
        stamp: Option<Arc<Stamp>>,
        kind: std::marker::PhantomData<fn() -> T>,
    }
}

impl<F: Future, T: Kind> Future for Profiled<F, T> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let _clock = crate::clock::Poll::enter();
        let me = self.project();
        let blk = block();
        let n = blk.map_or(0, |(b, shared)| {
            add(&b.polls, 1, shared);
            b.polls.load(Ordering::Relaxed)
        });
        if !on() {
            if me.stamp.is_some() {
                *me.stamp = None;
            }
            return me.fut.poll(cx);
        }
        let k = blk.and_then(|(b, shared)| Some((b.kinds.get(T::I)?, shared)));
        if let Some((k, shared)) = k {
            add(&k[0], 1, shared);
        }
        // A wake-up stamped after the previous (timed) poll.
        // (A load, and a store only when set: no locked instruction per
        // poll; a wake-up racing the store only loses one sample.)
        let woken = me.stamp.as_ref().map_or(0, |s| {
            let w = s.woken.load(Ordering::Relaxed);
            if w != 0 {
                s.woken.store(0, Ordering::Relaxed);
            }
            w
        });
        if !n.is_multiple_of(SAMPLE) && woken == 0 {
            return me.fut.poll(cx);
        }
        let t0 = now_ns();
        if let (Some((k, shared)), true) = (k, woken != 0) {
            add(&k[3], 1, shared);
            add(&k[4], t0.saturating_sub(woken), shared);
        }
        if !n.is_multiple_of(SAMPLE) {
            return me.fut.poll(cx);
        }
        if !me
            .stamp
            .as_ref()
            .is_some_and(|s| s.inner.will_wake(cx.waker()))
        {
            *me.stamp = Some(Arc::new(Stamp {
                inner: cx.waker().clone(),
                woken: AtomicU64::new(0),
            }));
        }
        let waker = me.stamp.as_ref().map(|s| Waker::from(s.clone()));
        let r = match &waker {
            Some(w) => me.fut.poll(&mut Context::from_waker(w)),
            None => me.fut.poll(cx),
        };
        if let Some((k, shared)) = k {
            add(&k[1], 1, shared);
            add(&k[2], now_ns().saturating_sub(t0), shared);
        }
        r
    }
}

/// Spawns `fut` as a task of kind `T` on the current runtime.
pub fn spawn<T: Kind + 'static, F>(fut: F) -> tokio::task::JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    tokio::spawn(Profiled::<F, T> {
        fut,
        stamp: None,
        kind: std::marker::PhantomData,
    })
}

fn sum(f: impl Fn(&Block) -> u64) -> (u64, Vec<u64>) {
    let per: Vec<u64> = BLOCKS
        .get()
        .map(|bs| bs.iter().map(&f).collect())
        .unwrap_or_default();
    (per.iter().sum(), per)
}

/// A duration in HAProxy's short form: four significant digits and a unit
/// (`971.0ns`, `83.36us`, `5.418ms`, `9.089s`, `12.44m`, `6.315h`).
pub fn short_duration(ns: u64) -> String {
    let ns = ns as f64;
    let (v, unit) = if ns < 1e3 {
        (ns, "ns")
    } else if ns < 1e6 {
        (ns / 1e3, "us")
    } else if ns < 1e9 {
        (ns / 1e6, "ms")
    } else if ns < 60e9 {
        (ns / 1e9, "s")
    } else if ns < 3600e9 {
        (ns / 60e9, "m")
    } else {
        (ns / 3600e9, "h")
    };
    let decimals = if v < 10.0 {
        3
    } else if v < 100.0 {
        2
    } else {
        1
    };
    format!("{v:.decimals$}{unit}")
}

/// `show profiling`.
pub fn show() -> String {
    let mut out = format!(
        "Per-task CPU profiling              : {:<13} # set profiling tasks {{on|auto|off}}\n\
         Memory usage profiling              : off           # not supported by weir\n\
         Tasks activity:\n  {:<28}{:>7}{:>10}{:>10}{:>10}{:>10}\n",
        mode_name(),
        "function",
        "calls",
        "cpu_tot",
        "cpu_avg",
        "lat_tot",
        "lat_avg"
    );
    let get = |k: usize, i: usize| {
        sum(|b| {
            let a = b.kinds.get(k).and_then(|r| r.get(i));
            a.map_or(0, |a| a.load(Ordering::Relaxed))
        })
        .0
    };
    // Averages from the samples; totals scaled to every call.
    let avg = |total: u64, n: u64| total.checked_div(n).unwrap_or(0);
    let mut rows: Vec<(usize, u64, u64, u64)> = (0..K)
        .map(|k| {
            let calls = get(k, 0);
            let cpu_avg = avg(get(k, 2), get(k, 1));
            let lat_avg = avg(get(k, 4), get(k, 3));
            (k, calls, cpu_avg, lat_avg)
        })
        .filter(|r| r.1 > 0)
        .collect();
    rows.sort_by_key(|r| std::cmp::Reverse(r.1));
    for (k, calls, cpu_avg, lat_avg) in rows {
        out.push_str(&format!(
            "  {:<28}{:>7}{:>10}{:>10}{:>10}{:>10}\n",
            KINDS.get(k).copied().unwrap_or("?"),
            calls,
            short_duration(cpu_avg.saturating_mul(calls)),
            short_duration(cpu_avg),
            short_duration(lat_avg.saturating_mul(calls)),
            short_duration(lat_avg)
        ));
    }
    out
}

/// Clears the profiling figures (`set profiling tasks on` starts afresh).
pub fn reset() {
    if let Some(bs) = BLOCKS.get() {
        for b in bs.iter() {
            for k in &b.kinds {
                for a in k {
                    a.store(0, Ordering::Relaxed);
                }
            }
        }
    }
}

/// `show activity`: process totals then each thread's share, `[ … ]`.
pub fn activity(nthreads: usize) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let line = |name: &str, f: &dyn Fn(&Block) -> u64| {
        let (total, per) = sum(f);
        let threads: Vec<String> = per.iter().skip(1).map(u64::to_string).collect();
        format!("{name}: {total} [ {} ]\n", threads.join(" "))
    };
    let mut out = format!(
        "thread_id: 0 (1..{nthreads})\ndate_now: {}.{:06}\n",
        now.as_secs(),
        now.subsec_micros()
    );
    out.push_str(&line("tasksw", &|b| b.polls.load(Ordering::Relaxed)));
    out.push_str(&line("accepted", &|b| b.accepted.load(Ordering::Relaxed)));
    out
}

#[cfg(test)]
mod tests {
    use super::short_duration;

    #[test]
    fn durations_have_four_digits_and_a_unit() {
        assert_eq!(short_duration(294), "294.0ns");
        assert_eq!(short_duration(971), "971.0ns");
        assert_eq!(short_duration(83_360), "83.36us");
        assert_eq!(short_duration(5_418_000), "5.418ms");
        assert_eq!(short_duration(9_089_000_000), "9.089s");
        assert_eq!(short_duration(746_400_000_000), "12.44m");
        assert_eq!(short_duration(22_734_000_000_000), "6.315h");
    }
}
