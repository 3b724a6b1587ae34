//! Process-level system calls: file-descriptor limits, CPU pinning,
//! daemonizing, chroot and dropping privileges. The few `unsafe` blocks of
//! weir that are not about sockets live here, each with its reason.

use std::ffi::CString;
use std::io;

/// Current (soft, hard) `RLIMIT_NOFILE`.
pub fn nofile_limits() -> io::Result<(u64, u64)> {
    let mut rl = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit only writes into the struct we own.
    let rc = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut rl) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((rl.rlim_cur, rl.rlim_max))
}

/// Sets the soft `RLIMIT_NOFILE` (the hard limit is left as is).
pub fn set_nofile(soft: u64) -> io::Result<()> {
    let (_, hard) = nofile_limits()?;
    let rl = libc::rlimit {
        rlim_cur: soft.min(hard) as libc::rlim_t,
        rlim_max: hard as libc::rlim_t,
    };
    // SAFETY: setrlimit reads the struct we pass.
    let rc = unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &rl) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Number of CPUs this process may run on.
pub fn usable_cpus() -> usize {
    // SAFETY: cpu_set_t is plain data; sched_getaffinity fills it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) == 0 {
            let n = libc::CPU_COUNT(&set);
            if n > 0 {
                return n as usize;
            }
        }
    }
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Pins the calling thread to `cpus`.
pub fn pin_current_thread(cpus: &[usize]) -> io::Result<()> {
    // SAFETY: cpu_set_t is plain data, CPU_SET bounds-checks against its size,
    // and sched_setaffinity(0) applies to the calling thread only.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cpus {
            if c < libc::CPU_SETSIZE as usize {
                libc::CPU_SET(c, &mut set);
            }
        }
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Forks into the background: the parent prints nothing and exits 0 after
/// writing the child's pid to `pidfile`; the child starts a new session
/// with stdin/stdout/stderr on /dev/null. Must run before any thread exists.
pub fn daemonize(pidfile: Option<&str>) -> io::Result<()> {
    // SAFETY: called from the single-threaded start-up, before any runtime
    // or worker thread is created, so fork() duplicates only this thread.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    if pid > 0 {
        if let Some(p) = pidfile {
            std::fs::write(p, format!("{pid}\n"))?;
        }
        std::process::exit(0);
    }
    // SAFETY: setsid has no memory effects; the dup2 targets are the standard
    // descriptors, and /dev/null's descriptor is owned by `null` until closed.
    unsafe {
        libc::setsid();
    }
    let null = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")?;
    use std::os::fd::AsRawFd;
    for fd in 0..3 {
        // SAFETY: see above.
        unsafe {
            libc::dup2(null.as_raw_fd(), fd);
        }
    }
    crate::log::console_reopen();
    Ok(())
}

fn cstr(s: &str) -> io::Result<CString> {
    CString::new(s).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL byte in name"))
}

/// Looks up a user's uid and primary gid.
pub fn lookup_user(name: &str) -> io::Result<(u32, u32)> {
    let c = cstr(name)?;
    // SAFETY: getpwnam returns a pointer to static storage or NULL; we copy
    // the fields out at once, during single-threaded start-up.
    let pw = unsafe { libc::getpwnam(c.as_ptr()) };
    if pw.is_null() {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("unknown user '{name}'"),
        ));
    }
    // SAFETY: pw is non-null and points to a valid passwd struct.
    Ok(unsafe { ((*pw).pw_uid, (*pw).pw_gid) })
}

/// Looks up a group's gid.
pub fn lookup_group(name: &str) -> io::Result<u32> {
    let c = cstr(name)?;
    // SAFETY: as for getpwnam.
    let gr = unsafe { libc::getgrnam(c.as_ptr()) };
    if gr.is_null() {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("unknown group '{name}'"),
        ));
    }
    // SAFETY: gr is non-null and points to a valid group struct.
    Ok(unsafe { (*gr).gr_gid })
}

/// Runs `make` (which makes a socket) inside network namespace `name`
/// (`ip netns`'s `/var/run/netns/<name>`), then brings this thread back to
/// its own: a socket stays in the namespace it was made in.
pub fn in_netns<T>(name: &str, make: impl FnOnce() -> io::Result<T>) -> io::Result<T> {
    use std::os::fd::AsRawFd;
    let own = std::fs::File::open("/proc/thread-self/ns/net")?;
    let target = std::fs::File::open(format!("/var/run/netns/{name}"))
        .map_err(|e| io::Error::new(e.kind(), format!("network namespace '{name}': {e}")))?;
    // SAFETY: setns on open namespace file descriptors.
    if unsafe { libc::setns(target.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let r = make();
    // SAFETY: as above. Failing to come back would leave the thread's later
    // sockets in the wrong namespace: nothing safe goes on from there.
    if unsafe { libc::setns(own.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
        eprintln!("[ALERT] cannot return to the process's network namespace");
        std::process::abort();
    }
    r
}

/// chroot into `dir` and chdir to its root.
pub fn chroot(dir: &str) -> io::Result<()> {
    let c = cstr(dir)?;
    // SAFETY: plain system calls on a valid C string.
    unsafe {
        if libc::chroot(c.as_ptr()) != 0 || libc::chdir(c"/".as_ptr()) != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Drops to `gid` then `uid` (supplementary groups cleared).
pub fn drop_privileges(uid: Option<u32>, gid: Option<u32>) -> io::Result<()> {
    // SAFETY: plain system calls with integer arguments; setgroups gets an
    // empty list.
    unsafe {
        if let Some(g) = gid {
            if libc::setgroups(0, std::ptr::null()) != 0 && libc::geteuid() == 0 {
                return Err(io::Error::last_os_error());
            }
            if libc::setgid(g) != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        if let Some(u) = uid {
            if libc::setuid(u) != 0 {
                return Err(io::Error::last_os_error());
            }
        }
    }
    Ok(())
}

/// This host's name (for logs).
pub fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most buf.len() bytes into buf.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return "localhost".into();
    }
    let name = buf.split(|&b| b == 0).next().unwrap_or_default();
    String::from_utf8_lossy(name).into_owned()
}

/// Broken-down local time of `secs` since the epoch:
/// (year, month 1-12, day, hour, minute, second, UTC offset in seconds).
pub fn local_time(secs: i64) -> (i32, u32, u32, u32, u32, u32, i64) {
    let t: libc::time_t = secs as libc::time_t;
    // SAFETY: tm is plain data, for which all zeroes are valid.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: localtime_r is the thread-safe variant and writes only into
    // tm, which outlives the call.
    unsafe {
        libc::localtime_r(&t, &mut tm);
    }
    (
        tm.tm_year + 1900,
        (tm.tm_mon + 1) as u32,
        tm.tm_mday as u32,
        tm.tm_hour as u32,
        tm.tm_min as u32,
        tm.tm_sec as u32,
        tm.tm_gmtoff,
    )
}

/// Sends `sig` to process `pid` (`-sf`/`-st`).
pub fn signal_pid(pid: i32, sig: i32) -> io::Result<()> {
    if pid <= 0 {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "invalid pid"));
    }
    // SAFETY: kill(2) with a positive pid affects only that process.
    if unsafe { libc::kill(pid, sig) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Blocks (or unblocks) the stop signals in the calling thread. Start-up
/// blocks them before binding so a signal sent as soon as the port is open
/// waits for the handlers; threads created meanwhile inherit the mask, so
/// only the main thread (which unblocks after installing handlers) gets them.
pub fn block_stop_signals(block: bool) {
    // SAFETY: sigset_t is plain data initialised by sigemptyset; the calls
    // only change this thread's signal mask.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in [libc::SIGTERM, libc::SIGINT, libc::SIGUSR1, libc::SIGHUP] {
            libc::sigaddset(&mut set, s);
        }
        let how = if block {
            libc::SIG_BLOCK
        } else {
            libc::SIG_UNBLOCK
        };
        libc::pthread_sigmask(how, &set, std::ptr::null_mut());
    }
}

/// Registers an epoll instance of weir's own with this thread's event loop
/// (it becomes readable when one of its sockets is).
pub fn register_poll(p: mio::Poll) -> io::Result<tokio::io::unix::AsyncFd<mio::Poll>> {
    // SAFETY: a `mio::Poll` owns its epoll descriptor, keeps it open until
    // it is dropped and always returns that same descriptor.
    unsafe { tokio::io::unix::AsyncFd::register_with_interest(p, tokio::io::Interest::READABLE) }
        .map_err(io::Error::from)
}

/// TCP keep-alive on a socket, with the probe settings given (the
/// system's where unset): `option clitcpka|srvtcpka`, `*tcpka-cnt|idle|intvl`.
pub fn keepalive(s: socket2::SockRef<'_>, ka: &weir_config::TcpKa) {
    let mut k = socket2::TcpKeepalive::new();
    if let Some(t) = ka.idle {
        k = k.with_time(t);
    }
    if let Some(t) = ka.intvl {
        k = k.with_interval(t);
    }
    if let Some(n) = ka.cnt {
        k = k.with_retries(n);
    }
    let _ = s.set_tcp_keepalive(&k);
}
