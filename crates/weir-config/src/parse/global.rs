//! `global` section keywords (manual §3).

use super::State;
use crate::addr::parse_bind_list;
use crate::diag::{did_you_mean, Level, Loc};
use crate::keywords::{self, Status};
use crate::model::{CpuMap, StatsSocket};
use crate::units::{parse_duration, parse_size, parse_u32};

/// Highest thread/CPU number a set may name (HAProxy's word size).
pub const MAX_IDS: usize = 64;

pub(super) fn line(st: &mut State<'_>, words: &[String], loc: &Loc) {
    let kw = words[0].as_str();
    let Some(entry) = keywords::find(keywords::GLOBAL, kw) else {
        let hint = did_you_mean(kw, keywords::GLOBAL.iter().map(|k| k.name))
            .map(|s| format!("; did you mean '{s}'?"))
            .unwrap_or_default();
        st.diags.alert(
            loc,
            format!("unknown keyword '{kw}' in 'global' section{hint}"),
        );
        return;
    };
    if entry.status == Status::Refused {
        st.diags
            .alert(loc, format!("'{kw}' is not supported by weir yet"));
        return;
    }
    if let Err(e) = apply(st, words, loc) {
        st.diags.alert(loc, format!("'{kw}' : {e}"));
    }
}

fn one<'a>(words: &'a [String], what: &str) -> Result<&'a str, String> {
    match words.len() {
        2 => Ok(words[1].as_str()),
        1 => Err(format!("expects {what}")),
        _ => Err(format!(
            "expects exactly one argument ({what}), got '{}'",
            words[1..].join(" ")
        )),
    }
}

/// Applies one supported global keyword; `Err` is the message of an alert.
pub(super) fn apply(st: &mut State<'_>, words: &[String], loc: &Loc) -> Result<(), String> {
    type Family = fn(&mut State<'_>, &[String], &Loc) -> Result<bool, String>;
    const FAMILIES: [Family; 6] = [
        process,
        tuning,
        tls,
        stopping_and_env,
        without_effect,
        super::lua::global,
    ];
    for family in FAMILIES {
        if family(st, words, loc)? {
            return Ok(());
        }
    }
    Err("internal: keyword has no parser".into())
}

/// The global keywords of one family: the process: daemon, threads, limits,
/// privileges, logging; `Ok(false)` for another family's keyword.
fn process(st: &mut State<'_>, words: &[String], loc: &Loc) -> Result<bool, String> {
    let g = &mut st.config.global;
    let kw = words[0].as_str();
    if kw == "default-path" {
        let policy = crate::files::DefaultPath::parse(&words[1..])?;
        let dir = policy.dir(&st.file);
        st.default_path = Some(policy);
        st.set_default_dir(dir, Some(loc));
        return Ok(true);
    }
    match kw {
        "daemon" => g.daemon = true,
        "quiet" => g.quiet = true,
        "zero-warning" => g.zero_warning = true,
        "strict-limits" => g.strict_limits = true,
        "noreuseport" => g.noreuseport = true,
        "nosplice" => g.nosplice = true,
        "h1-accept-payload-with-any-method" => g.h1_accept_payload_with_any_method = true,
        "pp2-never-send-local" => g.pp2_never_send_local = true,
        "profiling.tasks" => match words.get(1..).unwrap_or_default() {
            [m] if ["on", "off", "auto"].contains(&m.as_str()) => {
                g.profiling_tasks = Some(m.clone())
            }
            _ => return Err("'profiling.tasks' expects either 'on', 'off' or 'auto'.".into()),
        },
        "master-worker" => {
            g.master_worker = true;
            match words.get(1..).unwrap_or_default() {
                [] => {}
                [o] if o == "no-exit-on-failure" => g.no_exit_on_failure = true,
                _ => return Err("'master-worker' only supports 'no-exit-on-failure'".into()),
            }
        }
        "h1-case-adjust" => {
            let [_, from, to] = words else {
                return Err("'h1-case-adjust' expects <from> and <to> as argument.".into());
            };
            case_adjust(&mut g.h1_case_adjust, from, to)?;
        }
        "h1-case-adjust-file" => {
            let [_, file] = words else {
                return Err("'h1-case-adjust-file' expects <file> as argument.".into());
            };
            let text = crate::files::read_to_string(file)
                .map_err(|e| format!("h1-case-adjust-file '{file}' : cannot read it ({e})"))?;
            // (Only the last file counts; `h1-case-adjust` lines stay.)
            let mut map = g.h1_case_adjust.clone();
            for (n, line) in text.lines().enumerate() {
                let line = line.trim();
                if line.is_empty() || line.starts_with('#') {
                    continue;
                }
                match line.split_whitespace().collect::<Vec<_>>().as_slice() {
                    [from, to] => case_adjust(&mut map, from, to).map_err(|e| {
                        format!("h1-case-adjust-file '{file}' : {e} at line {}.", n + 1)
                    })?,
                    _ => {
                        return Err(format!(
                            "h1-case-adjust-file '{file}' : expects 2 header names at line {}.",
                            n + 1
                        ))
                    }
                }
            }
            g.h1_case_adjust = map;
        }
        "mworker-max-reloads" => {
            let n = words.get(1).filter(|_| words.len() == 2);
            g.mworker_max_reloads = Some(
                n.and_then(|n| n.parse().ok())
                    .ok_or("'mworker-max-reloads' expects an integer argument.")?,
            );
        }
        "expose-experimental-directives" => {}
        "set-var" | "set-var-fmt" => {
            let [_, name, value] = words else {
                return Err(format!(
                    "expects a variable name and {}",
                    if kw == "set-var" {
                        "a sample expression"
                    } else {
                        "a format string"
                    }
                ));
            };
            if !name.starts_with("proc.") {
                return Err(format!(
                    "only 'proc.' variables may be set in the 'global' section, not '{name}'"
                ));
            }
            let action = format!("{kw}({name})");
            let set = weir_rules::vars::parse_set(&action, &words[2..], &super::http::load)
                .ok_or("internal: not a set-var")??;
            let _ = value;
            g.set_vars.push(set);
        }
        "tune.idle-pool.shared" => {
            let v = one(words, "'on' or 'off'")?;
            if v != "on" && v != "off" {
                return Err(format!("expects 'on' or 'off', got '{v}'"));
            }
            st.diags.push(
                Level::Notice,
                Some(loc),
                "'tune.idle-pool.shared' : weir's idle server connections stay in their thread's pool (as with 'off')",
            );
        }
        "insecure-fork-wanted"
        | "insecure-setuid-wanted"
        | "set-dumpable"
        | "noepoll"
        | "nopoll"
        | "nokqueue"
        | "noevports"
        | "busy-polling" => {
            st.diags.push(
                Level::Notice,
                Some(loc),
                format!("'{kw}' has no effect in weir"),
            );
        }
        "maxconn" => {
            let n = parse_u32(one(words, "an integer")?, kw)?;
            if n == 0 {
                return Err("must be greater than 0".into());
            }
            g.maxconn = Some(n);
        }
        "external-check" => {
            if words.len() > 1 {
                return Err("takes no argument".into());
            }
            g.external_check = true;
        }
        "unix-bind" => {
            let mut u = crate::model::UnixBind::default();
            for pair in words[1..].chunks(2) {
                let [k, v] = pair else {
                    return Err(format!("'{}' expects an argument", pair[0]));
                };
                match k.as_str() {
                    "prefix" => u.prefix = Some(v.clone()),
                    "mode" => {
                        u.mode = Some(
                            u32::from_str_radix(v, 8).map_err(|_| format!("invalid mode '{v}'"))?,
                        )
                    }
                    "user" | "uid" => u.user = Some(v.clone()),
                    "group" | "gid" => u.group = Some(v.clone()),
                    _ => {
                        return Err(format!(
                            "unknown option '{k}' (expects 'prefix', 'mode', 'user', 'uid', 'group' or 'gid')"
                        ))
                    }
                }
            }
            g.unix_bind = u;
        }
        "maxconnrate" | "maxsessrate" | "maxsslrate" | "maxsslconn" => {
            let n = Some(parse_u32(one(words, "an integer")?, kw)?).filter(|n| *n > 0);
            match kw {
                "maxconnrate" => g.maxconnrate = n,
                "maxsessrate" => g.maxsessrate = n,
                "maxsslconn" => g.maxsslconn = n,
                _ => g.maxsslrate = n,
            }
        }
        "nbthread" => {
            let n = parse_u32(one(words, "a thread count")?, kw)? as usize;
            if n == 0 || n > MAX_IDS {
                return Err(format!("must be between 1 and {MAX_IDS}, got {n}"));
            }
            g.nbthread = Some(n);
        }
        "nbproc" => {
            let n = parse_u32(one(words, "a process count")?, kw)? as usize;
            if n == 0 || n > MAX_IDS {
                return Err(format!("must be between 1 and {MAX_IDS}, got {n}"));
            }
            if n > 1 {
                g.nbproc = Some(n);
                if !st.nbproc_warned {
                    st.nbproc_warned = true;
                    st.diags.warn(
                        loc,
                        format!("'nbproc {n}' : weir runs one process with threads; starting {n} threads instead (use 'nbthread')"),
                    );
                }
            }
        }
        "cpu-map" => g.cpu_map.push(parse_cpu_map(words, loc)?),
        "ulimit-n" => {
            g.ulimit_n = Some(u64::from(parse_u32(
                one(words, "a file descriptor count")?,
                kw,
            )?))
        }
        "fd-hard-limit" => {
            g.fd_hard_limit = Some(u64::from(parse_u32(
                one(words, "a file descriptor count")?,
                kw,
            )?))
        }
        "user" => g.user = Some(one(words, "a user name")?.to_string()),
        "group" => g.group = Some(one(words, "a group name")?.to_string()),
        "uid" => g.uid = Some(parse_u32(one(words, "a numeric uid")?, kw)?),
        "gid" => g.gid = Some(parse_u32(one(words, "a numeric gid")?, kw)?),
        "chroot" => g.chroot = Some(one(words, "a directory")?.to_string()),
        "pidfile" => g.pidfile = Some(one(words, "a file name")?.to_string()),
        "server-state-file" => g.server_state_file = Some(one(words, "a file name")?.to_string()),
        "server-state-base" => g.server_state_base = Some(one(words, "a directory")?.to_string()),
        "node" => g.node = Some(one(words, "a node name")?.to_string()),
        "localpeer" => g.localpeer = Some(one(words, "a peer name")?.to_string()),
        "description" => g.description = Some(words[1..].join(" ")),
        "log-tag" => g.log_tag = Some(one(words, "a tag")?.to_string()),
        "log-send-hostname" => {
            g.log_send_hostname = Some(words.get(1).cloned().unwrap_or_default());
        }
        "log" => {
            if words.get(1).map(String::as_str) == Some("global") {
                return Err("'log global' is only valid in proxy sections".into());
            }
            let env = |n: &str| st.env.get(n);
            let t = super::log::log_target_env(&words[1..], loc, &env)?;
            st.config.global.logs.push(t);
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// The global keywords of one family: `tune.*` sizes and scheduling;
/// `Ok(false)` for another family's keyword.
fn tuning(st: &mut State<'_>, words: &[String], _loc: &Loc) -> Result<bool, String> {
    let g = &mut st.config.global;
    let kw = words[0].as_str();
    match kw {
        "tune.bufsize" => {
            let n = parse_size(one(words, "a size")?)?;
            if !(1024..=1 << 30).contains(&n) {
                return Err(format!("must be between 1024 and 1073741824, got {n}"));
            }
            g.bufsize = n as usize;
        }
        "tune.http.maxhdr" => {
            let v = one(words, "an integer")?;
            g.maxhdr = v
                .parse::<usize>()
                .ok()
                .filter(|n| (1..=32767).contains(n))
                .ok_or_else(|| format!("expects an integer between 1 and 32767, got '{v}'"))?;
        }
        "no-memory-trimming" => {
            if words.len() > 1 {
                return Err("takes no argument".into());
            }
            g.no_memory_trimming = true;
        }
        "tune.http.logurilen" => {
            let v = one(words, "an integer")?;
            g.logurilen = v
                .parse::<usize>()
                .ok()
                .filter(|n| (1..=65535).contains(n))
                .ok_or_else(|| format!("expects an integer between 1 and 65535, got '{v}'"))?;
        }
        "tune.h2.header-table-size" => {
            g.h2.header_table_size = int_between(words, 0, 65536)?;
        }
        "tune.h2.initial-window-size" => {
            g.h2.initial_window_size = int_between(words, 0, (1 << 31) - 1)?;
        }
        "tune.h2.max-concurrent-streams" => {
            g.h2.max_concurrent_streams = int_between(words, 0, u32::MAX)?;
        }
        "h2-workaround-bogus-websocket-clients" => {
            if words.len() > 1 {
                return Err(format!("'{kw}' takes no argument"));
            }
            g.h2.no_extended_connect = true;
        }
        "tune.h2.max-frame-size" => {
            g.h2.max_frame_size = int_between(words, 16384, (1 << 24) - 1)?;
        }
        "tune.rcvbuf.client" | "tune.rcvbuf.server" | "tune.sndbuf.client"
        | "tune.sndbuf.server" => {
            let n = int_between(words, 0, i32::MAX as u32)?;
            let b = &mut g.sockbufs;
            let slot = match kw {
                "tune.rcvbuf.client" => &mut b.rcv_client,
                "tune.rcvbuf.server" => &mut b.rcv_server,
                "tune.sndbuf.client" => &mut b.snd_client,
                _ => &mut b.snd_server,
            };
            *slot = (n > 0).then_some(n);
        }
        "tune.http.cookielen" => g.cookielen = int_between(words, 0, 65535)? as usize,
        "tune.pipesize" => g.pipesize = Some(parse_size(one(words, "a size")?)? as usize),
        "tune.maxaccept" => {
            let v = one(words, "an integer")?;
            g.maxaccept = v
                .parse::<i32>()
                .map_err(|_| format!("expects an integer, got '{v}'"))?;
        }
        "tune.runqueue-depth" => g.runqueue_depth = int_between(words, 1, 1_000_000)?,
        "tune.maxpollevents" => g.maxpollevents = Some(int_between(words, 1, 1_000_000)?),
        _ => return Ok(false),
    }
    Ok(true)
}

/// The global keywords of one family: TLS defaults and `tune.ssl.*`;
/// `Ok(false)` for another family's keyword.
fn tls(st: &mut State<'_>, words: &[String], loc: &Loc) -> Result<bool, String> {
    let g = &mut st.config.global;
    let kw = words[0].as_str();
    match kw {
        "ssl-default-bind-ciphers" | "ssl-default-server-ciphers" | "ssl-default-bind-curves"
            if words.len() == 2 =>
        {
            for w in crate::tls::unoffered(kw, &words[1]) {
                st.diags.warn(loc, format!("'{kw}' : {w}"));
            }
            let g = &mut st.config.global;
            match kw {
                "ssl-default-bind-ciphers" => {
                    g.tls.bind_ciphers = Some(crate::tls::parse_ciphers(&words[1])?)
                }
                "ssl-default-server-ciphers" => {
                    g.tls.server_ciphers = Some(crate::tls::parse_ciphers(&words[1])?)
                }
                _ => g.tls.bind_curves = Some(crate::tls::parse_curves(&words[1])?),
            }
        }
        "ssl-default-bind-ciphers" => {
            g.tls.bind_ciphers = Some(crate::tls::parse_ciphers(one(words, "a cipher list")?)?)
        }
        "ssl-default-bind-ciphersuites" => {
            g.tls.bind_ciphersuites =
                Some(crate::tls::parse_ciphersuites(one(words, "a suite list")?)?)
        }
        "ssl-default-bind-curves" => {
            g.tls.bind_curves = Some(crate::tls::parse_curves(one(words, "a curve list")?)?)
        }
        "ssl-default-bind-options" => {
            let mut i = 1;
            while i < words.len() {
                let arg = words.get(i + 1).map(String::as_str);
                match g.tls.bind_opts.apply(&words[i], arg) {
                    Some(r) => i += r?,
                    None => return Err(format!("unknown option '{}'", words[i])),
                }
            }
        }
        "ssl-server-verify" => {
            g.tls.server_verify = match one(words, "'none' or 'required'")? {
                "none" => crate::tls::Verify::None,
                "required" => crate::tls::Verify::Required,
                v => return Err(format!("expects 'none' or 'required', got '{v}'")),
            }
        }
        "ssl-default-server-ciphers" => {
            g.tls.server_ciphers = Some(crate::tls::parse_ciphers(one(words, "a cipher list")?)?)
        }
        "ssl-default-server-ciphersuites" => {
            g.tls.server_ciphersuites =
                Some(crate::tls::parse_ciphersuites(one(words, "a suite list")?)?)
        }
        "ssl-default-server-options" => {
            let mut i = 1;
            while i < words.len() {
                let arg = words.get(i + 1).map(String::as_str);
                match g.tls.server_opts.apply(&words[i], arg) {
                    Some(r) => i += r?,
                    None => return Err(format!("unknown option '{}'", words[i])),
                }
            }
        }
        "tune.ssl.ssl-ctx-cache-size" => {
            g.tls.ctx_cache_size = parse_u32(one(words, "a number")?, kw)? as usize;
        }
        "tune.ssl.cachesize" => {
            g.tls.cachesize = parse_u32(one(words, "an integer")?, kw)? as usize;
        }
        "tune.ssl.lifetime" => {
            let v = one(words, "a time")?;
            // Seconds unless a unit is given.
            let t = if v.bytes().all(|c| c.is_ascii_digit()) {
                std::time::Duration::from_secs(parse_u32(v, kw)?.into())
            } else {
                parse_duration(v)?
            };
            g.tls.lifetime = t.as_secs().min(u64::from(u32::MAX)) as u32;
        }
        "crt-base" => g.tls.crt_base = Some(one(words, "a directory")?.to_string()),
        "ca-base" => g.tls.ca_base = Some(one(words, "a directory")?.to_string()),
        "ssl-load-extra-del-ext" => g.tls.extra_del_ext = true,
        "ssl-skip-self-issued-ca" => g.tls.skip_self_issued_ca = true,
        "issuers-chain-path" => {
            let dir = words
                .get(1)
                .filter(|d| words.len() == 2 && crate::files::resolve(d).is_dir())
                .ok_or("global statement 'issuers-chain-path' expects a directory path as an argument.")?;
            g.tls.issuers_chain_path = Some(dir.clone());
        }
        "tune.ssl.maxrecord" | "tune.ssl.hard-maxrecord" => {
            // Beyond a record's 16 KiB there is nothing to limit.
            let n = parse_u32(one(words, "a number")?, kw)?.min(16384) as u16;
            if kw == "tune.ssl.maxrecord" {
                g.tls.max_record = n;
            } else {
                g.tls.hard_max_record = n;
            }
        }
        "tune.maxrewrite" => {
            let v = parse_size(one(words, "a size")?)?;
            g.maxrewrite = Some(usize::try_from(v).unwrap_or(usize::MAX));
        }
        "tune.comp.maxlevel" => {
            let n = parse_u32(one(words, "a level")?, kw)?;
            if !(1..=9).contains(&n) {
                return Err("should be between 1 and 9".into());
            }
            g.comp_maxlevel = n;
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// The global keywords of one family: stopping, checks spread, the stats
/// socket, the environment; `Ok(false)` for another family's keyword.
fn stopping_and_env(st: &mut State<'_>, words: &[String], loc: &Loc) -> Result<bool, String> {
    let g = &mut st.config.global;
    let kw = words[0].as_str();
    match kw {
        "hard-stop-after" => g.hard_stop_after = Some(parse_duration(one(words, "a time")?)?),
        "grace" => g.grace = Some(parse_duration(one(words, "a time")?)?),
        "spread-checks" => {
            let n = parse_u32(one(words, "a percentage")?, kw)?;
            if n > 50 {
                return Err("must be between 0 and 50".into());
            }
            g.spread_checks = n;
        }
        "stats" => stats(st, words, loc)?,
        "setenv" | "presetenv" => {
            if words.len() != 3 {
                return Err("expects a variable name and a value".into());
            }
            if kw == "setenv" || st.env.get(&words[1]).is_none() {
                st.env.set(&words[1], Some(words[2].clone()));
            }
        }
        "unsetenv" => {
            for name in &words[1..] {
                st.env.set(name, None);
            }
        }
        "resetenv" => st.env.reset_except(words[1..].to_vec()),
        _ => return Ok(false),
    }
    Ok(true)
}

fn stats(st: &mut State<'_>, words: &[String], loc: &Loc) -> Result<(), String> {
    match words.get(1).map(String::as_str) {
        Some("socket") => {
            let addr_text = words
                .get(2)
                .ok_or("'stats socket' expects an address or a path")?;
            let s = stats_socket(
                addr_text,
                words.get(3..).unwrap_or_default(),
                "operator",
                loc,
            )?;
            st.config.global.stats_sockets.push(s);
            Ok(())
        }
        Some("timeout") => {
            let t = parse_duration(words.get(2).ok_or("'stats timeout' expects a time")?)?;
            st.config.global.stats_timeout = Some(t);
            Ok(())
        }
        Some("maxconn") => parse_u32(
            words.get(2).ok_or("'stats maxconn' expects an integer")?,
            "stats maxconn",
        )
        .map(|_| ()),
        Some("bind-process") => {
            st.diags.warn(
                loc,
                "'stats bind-process' is ignored: weir runs one process",
            );
            Ok(())
        }
        other => Err(format!(
            "'stats' expects 'socket', 'timeout', 'maxconn' or 'bind-process', got '{}'",
            other.unwrap_or("")
        )),
    }
}

/// Parses an id set: `all`, `odd`, `even`, `N`, `N-`, `N-M`. `base` is the
/// lowest id (1 for threads, 0 for CPUs).
pub fn parse_set(text: &str, base: usize) -> Result<Vec<usize>, String> {
    let max = base + MAX_IDS - 1;
    let all: Vec<usize> = (base..=max).collect();
    match text {
        "all" => return Ok(all),
        "odd" => return Ok(all.into_iter().filter(|n| n % 2 == 1).collect()),
        "even" => return Ok(all.into_iter().filter(|n| n % 2 == 0).collect()),
        _ => {}
    }
    let num = |s: &str| -> Result<usize, String> {
        let n: usize = s
            .parse()
            .map_err(|_| format!("invalid number '{s}' in set '{text}'"))?;
        if n < base || n > max {
            return Err(format!(
                "'{n}' is out of range {base}-{max} in set '{text}'"
            ));
        }
        Ok(n)
    };
    match text.split_once('-') {
        Some((lo, "")) => Ok((num(lo)?..=max).collect()),
        Some((lo, hi)) => {
            let (lo, hi) = (num(lo)?, num(hi)?);
            if hi < lo {
                return Err(format!("invalid range '{text}'"));
            }
            Ok((lo..=hi).collect())
        }
        None => Ok(vec![num(text)?]),
    }
}

fn parse_cpu_map(words: &[String], loc: &Loc) -> Result<CpuMap, String> {
    if words.len() < 3 {
        return Err("expects a process/thread set followed by one or more CPU sets".into());
    }
    let (auto, spec) = match words[1].strip_prefix("auto:") {
        Some(s) => (true, s),
        None => (false, words[1].as_str()),
    };
    let (process, threads) = match spec.split_once('/') {
        Some((p, t)) => (parse_set(p, 1)?, Some(parse_set(t, 1)?)),
        None => (parse_set(spec, 1)?, None),
    };
    let mut cpus = Vec::new();
    for c in &words[2..] {
        cpus.extend(parse_set(c, 0)?);
    }
    cpus.sort_unstable();
    cpus.dedup();
    if auto {
        let ranged = threads.as_ref().unwrap_or(&process);
        if threads.is_some() && process.len() > 1 {
            return Err(
                "'auto:' with both a process range and a thread range is not supported".into(),
            );
        }
        if ranged.len() != cpus.len() {
            return Err(format!(
                "'auto:' needs as many CPUs as threads ({} threads, {} CPUs)",
                ranged.len(),
                cpus.len()
            ));
        }
    }
    Ok(CpuMap {
        auto,
        process: Some(process),
        threads,
        cpus,
        loc: loc.clone(),
    })
}

/// Resolves every `cpu-map` into one CPU list per thread (index 0 = thread 1);
/// `None` where no mapping applies. Under `nbproc`, process ids name threads.
pub fn thread_cpus(maps: &[CpuMap], nthreads: usize, nbproc_mode: bool) -> Vec<Option<Vec<usize>>> {
    let mut out: Vec<Option<Vec<usize>>> = vec![None; nthreads];
    for m in maps {
        let process = m.process.clone().unwrap_or_default();
        let targets: Vec<usize> = match (&m.threads, nbproc_mode) {
            (Some(t), _) => t.clone(),
            (None, true) => process,
            (None, false) => (1..=nthreads).collect(),
        };
        if m.auto && (m.threads.is_some() || nbproc_mode) {
            for (t, cpu) in targets.iter().zip(m.cpus.iter()) {
                if let Some(slot) = t.checked_sub(1).and_then(|i| out.get_mut(i)) {
                    *slot = Some(vec![*cpu]);
                }
            }
        } else {
            for t in targets {
                if let Some(slot) = t.checked_sub(1).and_then(|i| out.get_mut(i)) {
                    *slot = Some(m.cpus.clone());
                }
            }
        }
    }
    out
}

#[cfg(test)]
#[path = "global_tests.rs"]
mod tests;

/// An integer argument within `min..=max` (`tune.h2.*`: the range HTTP/2
/// allows).
fn int_between(words: &[String], min: u32, max: u32) -> Result<u32, String> {
    let v = one(words, "an integer")?;
    v.parse::<u32>()
        .ok()
        .filter(|n| (min..=max).contains(n))
        .ok_or_else(|| format!("expects an integer between {min} and {max}, got '{v}'"))
}

/// What a keyword without effect takes, checked all the same.
#[derive(Clone, Copy)]
enum Arg {
    Nothing,
    Time,
    Size,
    Number,
    OnOff,
    /// A PEM file of DH parameters, read and checked as HAProxy reads it.
    DhFile,
    /// One word.
    Word,
}

/// Keywords weir accepts with a note: what they tune does not exist in
/// weir, so nothing measurable changes.
const WITHOUT_EFFECT: &[(&str, Arg, &str)] = &[
    ("cluster-secret", Arg::Word, "it keys QUIC's retry tokens, and weir (as Debian's haproxy 2.6) has no QUIC"),
    ("httpclient.resolvers.id", Arg::Word, "the HTTP client of Lua scripts resolves names with the system's resolver"),
    ("httpclient.resolvers.prefer", Arg::Word, "the HTTP client of Lua scripts resolves names with the system's resolver"),
    ("httpclient.ssl.ca-file", Arg::Word, "the HTTP client of Lua scripts speaks plain HTTP only (an https URL is an error)"),
    ("httpclient.ssl.verify", Arg::Word, "the HTTP client of Lua scripts speaks plain HTTP only (an https URL is an error)"),
    ("max-spread-checks", Arg::Time, "weir spreads each server's first check within its own 'inter'"),
    ("maxcompcpuusage", Arg::Number, "weir does not measure compression's CPU usage; responses are compressed whatever the load"),
    ("maxcomprate", Arg::Size, "weir does not limit the compression rate"),
    ("maxpipes", Arg::Number, "weir keeps its spare splice pipes per thread and makes one when a splice needs it"),
    ("maxzlibmem", Arg::Number, "weir's compressors hold what each response needs, without a global memory bound"),
    ("nogetaddrinfo", Arg::Nothing, "weir resolves names at start with getaddrinfo either way"),
    ("numa-cpu-mapping", Arg::Nothing, "weir does not bind its threads to one NUMA node by itself (use cpu-map)"),
    ("ssl-dh-param-file", Arg::DhFile, "weir offers no DHE suite, so DH parameters are not used"),
    ("tune.buffers.limit", Arg::Number, "weir allocates buffers as connections need them, without a pool to bound"),
    ("tune.buffers.reserve", Arg::Number, "weir allocates buffers as connections need them, without a pool to bound"),
    ("tune.fd.edge-triggered", Arg::OnOff, "weir's event loop is always edge-triggered"),
    ("tune.idletimer", Arg::Time, "weir's splicing does not depend on the stream's idle time"),
    ("tune.pattern.cache-size", Arg::Number, "weir keeps no cache of pattern match results"),
    ("tune.peers.max-updates-at-once", Arg::Number, "weir's peers send every pending update of a table in one pass"),
    ("tune.pool-high-fd-ratio", Arg::Number, "weir bounds idle server connections with pool-max-conn and pool-purge-delay, not by file descriptors"),
    ("tune.pool-low-fd-ratio", Arg::Number, "weir bounds idle server connections with pool-max-conn and pool-purge-delay, not by file descriptors"),
    ("tune.recv_enough", Arg::Size, "weir reads what the socket holds in one call"),
    ("tune.sched.low-latency", Arg::OnOff, "weir's threads have no task classes to reorder"),
    ("tune.ssl.capture-buffer-size", Arg::Size, "weir does not capture the ClientHello's cipher list"),
    ("tune.ssl.capture-cipherlist-size", Arg::Size, "weir does not capture the ClientHello's cipher list"),
    ("tune.ssl.default-dh-param", Arg::Number, "weir offers no DHE suite, so DH parameters are not used"),
    ("tune.ssl.force-private-cache", Arg::Nothing, "weir's TLS session cache is one per process already"),
    ("tune.ssl.keylog", Arg::OnOff, "weir has none of the fetches it enables (`ssl_fc_client_random`, `ssl_fc_session_key`, the traffic secrets), which are refused by name"),
    ("tune.vars.global-max-size", Arg::Size, "weir does not bound the memory of variables (each value is bounded by the buffer size)"),
    ("tune.vars.proc-max-size", Arg::Size, "weir does not bound the memory of variables (each value is bounded by the buffer size)"),
    ("tune.vars.reqres-max-size", Arg::Size, "weir does not bound the memory of variables (each value is bounded by the buffer size)"),
    ("tune.vars.sess-max-size", Arg::Size, "weir does not bound the memory of variables (each value is bounded by the buffer size)"),
    ("tune.vars.txn-max-size", Arg::Size, "weir does not bound the memory of variables (each value is bounded by the buffer size)"),
    ("tune.zlib.memlevel", Arg::Number, "weir's deflate (miniz_oxide) has no memory level to set"),
    ("tune.zlib.windowsize", Arg::Number, "weir's deflate always uses a 32 KiB window"),
];

/// A keyword of [`WITHOUT_EFFECT`]: its argument checked, then a note;
/// `Ok(false)` for another keyword.
fn without_effect(st: &mut State<'_>, words: &[String], loc: &Loc) -> Result<bool, String> {
    let kw = words[0].as_str();
    let Some(&(_, arg, why)) = WITHOUT_EFFECT.iter().find(|(k, _, _)| *k == kw) else {
        return Ok(false);
    };
    match arg {
        Arg::Nothing if words.len() > 1 => return Err("takes no argument".into()),
        Arg::Nothing => {}
        Arg::Time => drop(parse_duration(one(words, "a time")?)?),
        Arg::Size => drop(parse_size(one(words, "a size")?)?),
        Arg::Number => drop(parse_u32(one(words, "a number")?, kw)?),
        Arg::Word => drop(one(words, "a value")?),
        Arg::OnOff => {
            if !matches!(one(words, "'on' or 'off'")?, "on" | "off") {
                return Err(format!("'{kw}' expects 'on' or 'off'"));
            }
        }
        Arg::DhFile => {
            let f = one(words, "a file")?;
            let text = crate::files::read(f).unwrap_or_default();
            let pem = String::from_utf8_lossy(&text);
            if !pem.contains("-----BEGIN DH PARAMETERS-----")
                && !pem.contains("-----BEGIN X9.42 DH PARAMETERS-----")
            {
                return Err(format!("unable to load DH parameters from file <{f}>."));
            }
        }
    }
    st.diags.push(
        Level::Notice,
        Some(loc),
        format!("'{kw}' has no effect: {why}"),
    );
    Ok(true)
}

/// One `h1-case-adjust` entry: `from` (taken in lower case) and `to`, the
/// same name.
fn case_adjust(map: &mut Vec<(String, String)>, from: &str, to: &str) -> Result<(), String> {
    if !from.eq_ignore_ascii_case(to) {
        return Err("<from> and <to> must not differ except the case".into());
    }
    let from = from.to_ascii_lowercase();
    if map.iter().any(|(f, _)| *f == from) {
        return Err(format!("duplicate entry '{from}'"));
    }
    map.push((from, to.to_string()));
    Ok(())
}

/// A `stats socket <addr> [options]` (or the master CLI's `-S`): `level`
/// is the level without a `level` option.
pub fn stats_socket(
    addr_text: &str,
    opts: &[String],
    level: &str,
    loc: &Loc,
) -> Result<StatsSocket, String> {
    let mut addrs = parse_bind_list(addr_text)?;
    if addrs.len() != 1 {
        return Err("'stats socket' expects a single address".into());
    }
    let mut s = StatsSocket {
        addr: addrs.remove(0),
        mode: None,
        level: level.into(),
        user: None,
        group: None,
        expose_fd: false,
        loc: loc.clone(),
    };
    let mut i = 0;
    while i < opts.len() {
        let arg = || {
            opts.get(i + 1)
                .ok_or_else(|| format!("'{}' expects an argument", opts[i]))
        };
        match opts[i].as_str() {
            "mode" => {
                let m = arg()?;
                s.mode =
                    Some(u32::from_str_radix(m, 8).map_err(|_| format!("invalid mode '{m}'"))?);
                i += 2;
            }
            "level" => {
                let l = arg()?;
                if !["user", "operator", "admin"].contains(&l.as_str()) {
                    return Err(format!(
                        "'level' only supports 'user', 'operator', and 'admin', got '{l}'"
                    ));
                }
                s.level = l.clone();
                i += 2;
            }
            "user" | "uid" => {
                s.user = Some(arg()?.clone());
                i += 2;
            }
            "group" | "gid" => {
                s.group = Some(arg()?.clone());
                i += 2;
            }
            "expose-fd" => {
                if arg()? != "listeners" {
                    return Err("'expose-fd' only supports 'listeners'".into());
                }
                s.expose_fd = true;
                i += 2;
            }
            "process" | "thread" | "severity-output" | "name" | "maxconn" | "backlog" => i += 2,
            other => return Err(format!("unknown 'stats socket' option '{other}'")),
        }
    }
    Ok(s)
}
