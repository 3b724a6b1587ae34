//! The load generator (like h1load): HTTP/1.1 over `-c` connections on `-t`
//! threads for `-d` seconds or `-n` requests, keep-alive or a new connection
//! per request (`--close`), an optional fixed total rate (`-R`) whose
//! latencies count from each request's intended start (no coordinated
//! omission), a ramp-up (`-s`), several source addresses (`--src`), a live
//! line every second and a final report with HDR-histogram percentiles up to
//! 99.9999 % (`--json FILE` writes it as JSON too).

use crate::args::{parse_secs, Args};
use crate::http1::{parse_head, Chunked, Framing};
use crate::tls::Stream;
use hdrhistogram::Histogram;
use std::cell::RefCell;
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpSocket;

/// Everything a run needs.
#[derive(Debug, Clone)]
pub struct Plan {
    pub target: SocketAddr,
    pub host: String,
    pub path: String,
    pub conns: usize,
    pub threads: usize,
    pub duration: Option<Duration>,
    pub requests: Option<u64>,
    pub rate: Option<f64>,
    pub ramp: Duration,
    pub close: bool,
    pub sources: Vec<std::net::IpAddr>,
    pub timeout: Duration,
    pub live: bool,
    /// `https://`: the client configuration and the name sent as SNI.
    pub tls: Option<(Arc<rustls::ClientConfig>, String)>,
}

/// Counters of one thread (or of the whole run once merged).
#[derive(Debug, Clone)]
pub struct Totals {
    pub ok: u64,
    pub status_errors: u64,
    pub connect_errors: u64,
    pub io_errors: u64,
    pub timeouts: u64,
    pub bytes: u64,
    pub conns_opened: u64,
    /// Latency in microseconds.
    pub hist: Histogram<u64>,
}

impl Totals {
    fn new() -> Self {
        Totals {
            ok: 0,
            status_errors: 0,
            connect_errors: 0,
            io_errors: 0,
            timeouts: 0,
            bytes: 0,
            conns_opened: 0,
            hist: new_hist(),
        }
    }
    fn merge(&mut self, o: &Totals) {
        self.ok += o.ok;
        self.status_errors += o.status_errors;
        self.connect_errors += o.connect_errors;
        self.io_errors += o.io_errors;
        self.timeouts += o.timeouts;
        self.bytes += o.bytes;
        self.conns_opened += o.conns_opened;
        let _ = self.hist.add(&o.hist);
    }
    pub fn errors(&self) -> u64 {
        self.status_errors + self.connect_errors + self.io_errors + self.timeouts
    }
}

/// A latency histogram: 1 µs to 1 hour, 3 significant digits.
pub fn new_hist() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 3_600_000_000, 3).expect("constant bounds are valid")
    // ok: constant, valid arguments
}

/// Parses `http[s]://host:port/path` (an IP or name; port defaults to 80
/// or 443). Returns the address, `host[:port]`, the path and whether it is
/// https.
pub fn parse_url(url: &str) -> Result<(SocketAddr, String, String, bool), String> {
    use std::net::ToSocketAddrs;
    let (rest, https) = match url.strip_prefix("https://") {
        Some(r) => (r, true),
        None => (
            url.strip_prefix("http://")
                .ok_or_else(|| format!("expected an http:// or https:// URL, got '{url}'"))?,
            false,
        ),
    };
    let (hostport, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let with_port = if hostport
        .rsplit_once(':')
        .is_some_and(|(_, p)| p.parse::<u16>().is_ok())
    {
        hostport.to_string()
    } else {
        format!("{hostport}:{}", if https { 443 } else { 80 })
    };
    let addr = with_port
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve '{hostport}': {e}"))?
        .next()
        .ok_or_else(|| format!("cannot resolve '{hostport}'"))?;
    Ok((addr, hostport.to_string(), path.to_string(), https))
}

pub fn main(a: &mut Args) -> Result<(), String> {
    let conns: usize = a.num("-c", 10)?;
    let threads: usize = a.num("-t", 1)?;
    let duration = a
        .opt("-d")
        .map(|v| parse_secs(&v).ok_or(format!("-d: bad duration '{v}'")))
        .transpose()?;
    let requests = a
        .opt("-n")
        .map(|v| {
            v.parse::<u64>()
                .map_err(|_| format!("-n expects a count, got '{v}'"))
        })
        .transpose()?;
    let rate = a
        .opt("-R")
        .map(|v| {
            v.parse::<f64>()
                .map_err(|_| format!("-R expects a rate, got '{v}'"))
        })
        .transpose()?;
    let ramp = a
        .opt("-s")
        .map(|v| parse_secs(&v).ok_or(format!("-s: bad duration '{v}'")))
        .transpose()?
        .unwrap_or_default();
    let timeout = a
        .opt("--timeout")
        .map(|v| parse_secs(&v).ok_or(format!("--timeout: bad duration '{v}'")))
        .transpose()?
        .unwrap_or(Duration::from_secs(10));
    let close = a.flag("--close");
    let tls_full = a.flag("--tls-full");
    let tls12 = a.flag("--tls12");
    let sni = a.opt("--sni");
    let quiet = a.flag("--quiet");
    let json = a.opt("--json");
    let sources = match a.opt("--src") {
        Some(list) => list
            .split(',')
            .map(|s| s.parse().map_err(|_| format!("--src: bad address '{s}'")))
            .collect::<Result<Vec<_>, _>>()?,
        None => Vec::new(),
    };
    let url = a
        .positional()
        .ok_or("expected a URL: weir-bench load [options] http://host:port/path")?;
    a.finish()?;
    if conns == 0 || threads == 0 {
        return Err("-c and -t must be at least 1".into());
    }
    if threads > conns {
        return Err(format!(
            "-t {threads} is more than -c {conns}: each thread needs a connection"
        ));
    }
    if duration.is_none() && requests.is_none() {
        return Err("give -d <duration> or -n <requests> (or both)".into());
    }
    if rate.is_some_and(|r| r <= 0.0) {
        return Err("-R must be positive".into());
    }
    let (target, host, path, https) = parse_url(&url)?;
    let tls = if https {
        let name = sni.unwrap_or_else(|| {
            host.rsplit_once(':').map_or(host.clone(), |(h, _)| {
                h.trim_matches(['[', ']']).to_string()
            })
        });
        Some((crate::tls::client_config(tls_full, tls12)?, name))
    } else {
        None
    };
    let plan = Plan {
        target,
        host,
        path,
        conns,
        threads,
        duration,
        requests,
        rate,
        ramp,
        close,
        sources,
        timeout,
        live: !quiet,
        tls,
    };
    let (tot, elapsed, timeline) = run(&plan);
    let report = report_text(&plan, &tot, elapsed);
    print!("{report}");
    if let Some(path) = json {
        let j = report_json(&plan, &tot, elapsed, &timeline);
        if path == "-" {
            println!("{j}");
        } else {
            std::fs::write(&path, j).map_err(|e| format!("cannot write {path}: {e}"))?;
        }
    }
    Ok(())
}

/// The percentiles the report shows.
pub const PERCENTILES: &[f64] = &[50.0, 75.0, 90.0, 99.0, 99.9, 99.99, 99.999, 99.9999];

struct Shared {
    sent: AtomicU64,
    stop: AtomicBool,
}

/// Runs the plan; returns the merged totals, the measured duration and the
/// request rate of each second.
pub fn run(plan: &Plan) -> (Totals, Duration, Vec<f64>) {
    let shared = Arc::new(Shared {
        sent: AtomicU64::new(0),
        stop: AtomicBool::new(false),
    });
    let (tx, rx) = mpsc::channel::<(u64, u64, Histogram<u64>)>();
    let start = Instant::now();
    let mut handles = Vec::new();
    for t in 0..plan.threads {
        let n = plan.conns / plan.threads + usize::from(t < plan.conns % plan.threads);
        let first = (0..t)
            .map(|k| plan.conns / plan.threads + usize::from(k < plan.conns % plan.threads))
            .sum::<usize>();
        let (plan, shared, tx) = (plan.clone(), shared.clone(), tx.clone());
        handles.push(std::thread::spawn(move || {
            thread_main(&plan, shared, first, n, start, tx)
        }));
    }
    drop(tx);
    // Live line every second; also enforces the duration.
    let mut last = Instant::now();
    let mut interval = new_hist();
    let (mut iv_ok, mut iv_err) = (0u64, 0u64);
    let mut timeline = Vec::new();
    loop {
        match rx.recv_timeout(Duration::from_millis(100)) {
            Ok((ok, err, h)) => {
                iv_ok += ok;
                iv_err += err;
                let _ = interval.add(&h);
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        if plan
            .duration
            .is_some_and(|d| start.elapsed() >= d + plan.ramp)
        {
            shared.stop.store(true, Ordering::Relaxed);
        }
        if last.elapsed() >= Duration::from_secs(1) {
            let secs = last.elapsed().as_secs_f64();
            timeline.push(iv_ok as f64 / secs);
            if plan.live {
                eprintln!(
                    "{:>5.0}s  {:>10.0} req/s  errors {:>6}  p50 {:>8} us  p99 {:>8} us  p99.9 {:>8} us  max {:>8} us",
                    start.elapsed().as_secs_f64(),
                    iv_ok as f64 / secs,
                    iv_err,
                    interval.value_at_quantile(0.5),
                    interval.value_at_quantile(0.99),
                    interval.value_at_quantile(0.999),
                    interval.max()
                );
            }
            interval.reset();
            iv_ok = 0;
            iv_err = 0;
            last = Instant::now();
        }
    }
    let mut tot = Totals::new();
    for h in handles {
        if let Ok(t) = h.join() {
            tot.merge(&t);
        }
    }
    let elapsed = start.elapsed().saturating_sub(plan.ramp);
    (tot, elapsed, timeline)
}

type Local = Rc<RefCell<(Totals, Histogram<u64>, u64, u64)>>;

fn thread_main(
    plan: &Plan,
    shared: Arc<Shared>,
    first: usize,
    n: usize,
    start: Instant,
    tx: mpsc::Sender<(u64, u64, Histogram<u64>)>,
) -> Totals {
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(_) => return Totals::new(),
    };
    let local: Local = Rc::new(RefCell::new((Totals::new(), new_hist(), 0, 0)));
    let set = tokio::task::LocalSet::new();
    let l2 = local.clone();
    set.block_on(&rt, async move {
        let mut tasks = Vec::new();
        for k in 0..n {
            let idx = first + k;
            tasks.push(tokio::task::spawn_local(conn_loop(
                plan.clone(),
                shared.clone(),
                idx,
                start,
                l2.clone(),
            )));
        }
        let ticker = {
            let (l3, tx, shared) = (l2.clone(), tx.clone(), shared.clone());
            tokio::task::spawn_local(async move {
                loop {
                    tokio::time::sleep(Duration::from_millis(250)).await;
                    let (h, ok, err) = {
                        let mut g = l3.borrow_mut();
                        let h = g.1.clone();
                        g.1.reset();
                        let (ok, err) = (g.2, g.3);
                        g.2 = 0;
                        g.3 = 0;
                        (h, ok, err)
                    };
                    if tx.send((ok, err, h)).is_err() || shared.stop.load(Ordering::Relaxed) {
                        return;
                    }
                }
            })
        };
        for t in tasks {
            let _ = t.await;
        }
        ticker.abort();
        let g = l2.borrow();
        let _ = tx.send((g.2, g.3, g.1.clone()));
    });
    let out = local.borrow().0.clone();
    out
}

async fn connect(plan: &Plan, idx: usize, attempt: u64) -> std::io::Result<Stream> {
    let sock = if plan.target.is_ipv4() {
        TcpSocket::new_v4()?
    } else {
        TcpSocket::new_v6()?
    };
    if !plan.sources.is_empty() {
        let src = plan.sources[(idx + attempt as usize) % plan.sources.len()];
        sock.bind(SocketAddr::new(src, 0))?;
    }
    let s = sock.connect(plan.target).await?;
    s.set_nodelay(true)?;
    match &plan.tls {
        Some((cfg, sni)) => crate::tls::connect(cfg.clone(), sni, s).await,
        None => Ok(Stream::Plain(s)),
    }
}

enum Outcome {
    Ok {
        status: u16,
        bytes: u64,
        close: bool,
    },
    Io,
}

async fn exchange(s: &mut Stream, req: &[u8], buf: &mut Vec<u8>) -> Outcome {
    if s.write_all(req).await.is_err() || s.flush().await.is_err() {
        return Outcome::Io;
    }
    buf.clear();
    let mut tmp = [0u8; 16384];
    let head = loop {
        match parse_head(buf) {
            Ok(Some(h)) => break h,
            Ok(None) => {}
            Err(_) => return Outcome::Io,
        }
        match s.read(&mut tmp).await {
            Ok(0) | Err(_) => return Outcome::Io,
            Ok(n) => buf.extend_from_slice(&tmp[..n]),
        }
    };
    let mut bytes = buf.len() as u64;
    let have = &buf[head.head_len..];
    match head.body {
        Framing::Length(mut left) => {
            let n = (have.len() as u64).min(left);
            left -= n;
            while left > 0 {
                match s.read(&mut tmp).await {
                    Ok(0) | Err(_) => return Outcome::Io,
                    Ok(n) => {
                        bytes += n as u64;
                        left = left.saturating_sub(n as u64);
                    }
                }
            }
        }
        Framing::Chunked => {
            let mut ch = Chunked::default();
            let mut pending: Vec<u8> = have.to_vec();
            loop {
                let used = match ch.feed(&pending) {
                    Ok(u) => u,
                    Err(_) => return Outcome::Io,
                };
                pending.drain(..used);
                if ch.done() {
                    break;
                }
                match s.read(&mut tmp).await {
                    Ok(0) | Err(_) => return Outcome::Io,
                    Ok(n) => {
                        bytes += n as u64;
                        pending.extend_from_slice(&tmp[..n]);
                    }
                }
            }
        }
        Framing::UntilClose => loop {
            match s.read(&mut tmp).await {
                Ok(0) => {
                    return Outcome::Ok {
                        status: head.status,
                        bytes,
                        close: true,
                    }
                }
                Err(_) => return Outcome::Io,
                Ok(n) => bytes += n as u64,
            }
        },
    }
    Outcome::Ok {
        status: head.status,
        bytes,
        close: head.close,
    }
}

async fn conn_loop(plan: Plan, shared: Arc<Shared>, idx: usize, start: Instant, local: Local) {
    let req = format!(
        "GET {} HTTP/1.1\r\nHost: {}\r\nUser-Agent: weir-bench\r\n{}\r\n",
        plan.path,
        plan.host,
        if plan.close {
            "Connection: close\r\n"
        } else {
            ""
        }
    )
    .into_bytes();
    let ramp_offset = if plan.conns > 1 {
        plan.ramp.mul_f64(idx as f64 / plan.conns as f64)
    } else {
        Duration::ZERO
    };
    let t0 = start + ramp_offset;
    tokio::time::sleep_until(t0.into()).await;
    // With -R, each connection sends on its own schedule: rate / conns.
    let period = plan
        .rate
        .map(|r| Duration::from_secs_f64(plan.conns as f64 / r));
    let phase = period.map_or(Duration::ZERO, |p| {
        p.mul_f64(idx as f64 / plan.conns as f64)
    });
    let mut stream: Option<Stream> = None;
    let mut buf = Vec::with_capacity(16384);
    let timer = tokio::time::sleep(plan.timeout);
    tokio::pin!(timer);
    let mut k: u32 = 0;
    let mut attempts = 0u64;
    loop {
        if shared.stop.load(Ordering::Relaxed) {
            return;
        }
        if let Some(n) = plan.requests {
            if shared.sent.fetch_add(1, Ordering::Relaxed) >= n {
                return;
            }
        }
        let intended = match period {
            Some(p) => {
                let at = t0 + phase + p * k;
                k += 1;
                if at > Instant::now() {
                    tokio::time::sleep_until(at.into()).await;
                }
                at
            }
            None => Instant::now(),
        };
        if stream.is_none() {
            attempts += 1;
            match tokio::time::timeout(plan.timeout, connect(&plan, idx, attempts)).await {
                Ok(Ok(s)) => {
                    local.borrow_mut().0.conns_opened += 1;
                    stream = Some(s);
                }
                Ok(Err(_)) | Err(_) => {
                    {
                        let mut g = local.borrow_mut();
                        g.0.connect_errors += 1;
                        g.3 += 1;
                    }
                    // Do not spin on a dead target.
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            }
        }
        let Some(s) = stream.as_mut() else { continue };
        // One timer per connection, moved for each request (cheaper than a
        // new timeout per request).
        timer.as_mut().reset((Instant::now() + plan.timeout).into());
        let r = tokio::select! {
            biased;
            r = exchange(s, &req, &mut buf) => Ok(r),
            _ = timer.as_mut() => Err(()),
        };
        let lat = intended.elapsed().as_micros().max(1) as u64;
        let mut g = local.borrow_mut();
        match r {
            Err(_) => {
                g.0.timeouts += 1;
                g.3 += 1;
                stream = None;
            }
            Ok(Outcome::Io) => {
                g.0.io_errors += 1;
                g.3 += 1;
                stream = None;
            }
            Ok(Outcome::Ok {
                status,
                bytes,
                close,
            }) => {
                g.0.bytes += bytes;
                if (200..400).contains(&status) {
                    g.0.ok += 1;
                    g.2 += 1;
                    let _ = g.0.hist.record(lat);
                    let _ = g.1.record(lat);
                } else {
                    g.0.status_errors += 1;
                    g.3 += 1;
                }
                if close || plan.close {
                    stream = None;
                }
            }
        }
    }
}

/// The human-readable report.
pub fn report_text(plan: &Plan, t: &Totals, elapsed: Duration) -> String {
    let secs = elapsed.as_secs_f64().max(1e-9);
    let mut s = String::new();
    s.push_str(&format!(
        "target {} {}  connections {}  threads {}  mode {}\n",
        plan.target,
        plan.path,
        plan.conns,
        plan.threads,
        if plan.close { "close" } else { "keep-alive" }
    ));
    s.push_str(&format!(
        "requests {}  in {:.2}s  = {:.0} req/s  ({:.2} MB/s)\n",
        t.ok,
        secs,
        t.ok as f64 / secs,
        t.bytes as f64 / secs / 1e6
    ));
    s.push_str(&format!(
        "errors {}  (connect {}, io {}, timeout {}, status {})  connections opened {}\n",
        t.errors(),
        t.connect_errors,
        t.io_errors,
        t.timeouts,
        t.status_errors,
        t.conns_opened
    ));
    s.push_str("latency (us):");
    for p in PERCENTILES {
        s.push_str(&format!("  p{p}={}", t.hist.value_at_percentile(*p)));
    }
    s.push_str(&format!(
        "  max={}  mean={:.1}\n",
        t.hist.max(),
        t.hist.mean()
    ));
    s
}

/// The report as JSON (written by hand: flat and stable).
pub fn report_json(plan: &Plan, t: &Totals, elapsed: Duration, timeline: &[f64]) -> String {
    let secs = elapsed.as_secs_f64().max(1e-9);
    let tl: Vec<String> = timeline.iter().map(|r| format!("{r:.0}")).collect();
    let pct: Vec<String> = PERCENTILES
        .iter()
        .map(|p| format!("\"{p}\": {}", t.hist.value_at_percentile(*p)))
        .collect();
    format!(
        "{{\"target\": \"{}\", \"path\": \"{}\", \"connections\": {}, \"threads\": {}, \"keepalive\": {}, \"rate_target\": {}, \
\"seconds\": {:.3}, \"requests\": {}, \"rps\": {:.1}, \"bytes\": {}, \"errors\": {{\"connect\": {}, \"io\": {}, \"timeout\": {}, \"status\": {}}}, \
\"connections_opened\": {}, \"latency_us\": {{{}, \"max\": {}, \"mean\": {:.1}}}, \"timeline\": [{}]}}",
        plan.target,
        plan.path.replace('"', "%22"),
        plan.conns,
        plan.threads,
        !plan.close,
        plan.rate.map_or("null".to_string(), |r| format!("{r}")),
        secs,
        t.ok,
        t.ok as f64 / secs,
        t.bytes,
        t.connect_errors,
        t.io_errors,
        t.timeouts,
        t.status_errors,
        t.conns_opened,
        pct.join(", "),
        t.hist.max(),
        t.hist.mean(),
        tl.join(", ")
    )
}
