//! Listening sockets for `bind` lines and the stats socket: TCP (one
//! SO_REUSEPORT socket per thread), unix and abstract sockets, inherited
//! `fd@N`, with the bind options applied. All created before privileges drop.

use socket2::{Domain, SockAddr, Socket, Type};
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use weir_config::addr::{BindAddr, Family, Host};
use weir_config::Bind;

/// A bound, listening socket ready to hand to a thread.
#[derive(Debug)]
pub enum Listener {
    Tcp(std::net::TcpListener),
    Unix(std::os::unix::net::UnixListener),
}

impl Listener {
    pub fn try_clone(&self) -> io::Result<Listener> {
        Ok(match self {
            Listener::Tcp(l) => Listener::Tcp(l.try_clone()?),
            Listener::Unix(l) => Listener::Unix(l.try_clone()?),
        })
    }
    pub fn local_desc(&self) -> String {
        match self {
            Listener::Tcp(l) => l.local_addr().map(|a| a.to_string()).unwrap_or_default(),
            Listener::Unix(l) => format!("{:?}", l.local_addr().ok()),
        }
    }
}

/// Resolves a host for binding (any address of the family when `Any`).
pub fn resolve_bind_host(host: &Host, family: Family, v6: bool) -> io::Result<IpAddr> {
    match host {
        Host::Any if v6 || family == Family::V6 => Ok(IpAddr::V6(Ipv6Addr::UNSPECIFIED)),
        Host::Any => Ok(IpAddr::V4(Ipv4Addr::UNSPECIFIED)),
        Host::Ip(ip) => Ok(*ip),
        Host::Name(n) => (n.as_str(), 0)
            .to_socket_addrs()?
            .find(|a| match family {
                Family::V4 => a.is_ipv4(),
                Family::V6 => a.is_ipv6(),
                Family::Unspec => true,
            })
            .map(|a| a.ip())
            .ok_or_else(|| {
                io::Error::new(io::ErrorKind::NotFound, format!("could not resolve '{n}'"))
            }),
    }
}

fn set_opt(fd: i32, level: i32, name: i32, val: i32) -> io::Result<()> {
    // SAFETY: setsockopt reads an int from a valid pointer for its size.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            (&val as *const i32).cast(),
            std::mem::size_of::<i32>() as libc::socklen_t,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Binds one TCP address for a bind line. `reuseport` lets each thread own
/// its own socket on the same address.
pub fn bind_tcp(
    addr: SocketAddr,
    b: &Bind,
    reuseport: bool,
    default_backlog: u32,
    bufs: (Option<u32>, Option<u32>),
) -> io::Result<Listener> {
    let make = || Socket::new(Domain::for_address(addr), Type::STREAM, None);
    let sock = match &b.namespace {
        Some(ns) => crate::sys::in_netns(ns, make)?,
        None => make()?,
    };
    // `tune.rcvbuf.client`, `tune.sndbuf.client`: accepted sockets inherit
    // the listener's sizes.
    if let Some(n) = bufs.0 {
        sock.set_recv_buffer_size(n as usize)?;
    }
    if let Some(n) = bufs.1 {
        sock.set_send_buffer_size(n as usize)?;
    }
    sock.set_reuse_address(true)?;
    if reuseport {
        sock.set_reuse_port(true)?;
    }
    sock.set_cloexec(true)?;
    if addr.is_ipv6() {
        // HAProxy listens dual-stack on `::` unless told v6only.
        sock.set_only_v6(b.v6only && !b.v4v6)?;
    }
    if b.transparent {
        set_opt(sock.as_raw_fd(), libc::SOL_IP, libc::IP_TRANSPARENT, 1)?;
    }
    if let Some(ifname) = &b.interface {
        sock.bind_device(Some(ifname.as_bytes()))?;
    }
    if b.defer_accept {
        set_opt(
            sock.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_DEFER_ACCEPT,
            1,
        )?;
    }
    if let Some(mss) = b.mss {
        set_opt(
            sock.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_MAXSEG,
            mss as i32,
        )?;
    }
    if let Some(ut) = b.tcp_ut {
        set_opt(
            sock.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_USER_TIMEOUT,
            ut.as_millis().min(i32::MAX as u128) as i32,
        )?;
    }
    if b.tfo {
        set_opt(
            sock.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_FASTOPEN,
            1024,
        )?;
    }
    sock.bind(&SockAddr::from(addr))?;
    let backlog = b
        .backlog
        .or(b.maxconn)
        .unwrap_or(default_backlog)
        .clamp(1, i32::MAX as u32);
    sock.listen(backlog as i32)?;
    sock.set_nonblocking(true)?;
    Ok(Listener::Tcp(sock.into()))
}

/// Who a unix socket file belongs to and its permissions: `mode`, `user`
/// and `group` of a `bind` or `stats socket` line.
#[derive(Clone, Copy, Default)]
pub struct UnixPerms<'a> {
    pub mode: Option<u32>,
    pub user: Option<&'a str>,
    pub group: Option<&'a str>,
}

/// Binds a unix (or, with `abstract_ns`, abstract) stream socket. A path
/// socket is bound under a temporary name, given its owner and mode, then
/// renamed over `path`, as haproxy does: whatever was there (a stale
/// socket, the previous process's live one, a regular file) is replaced at
/// once, so the path never goes missing during a reload; a directory there
/// is an error.
pub fn bind_unix(
    path: &str,
    abstract_ns: bool,
    perms: UnixPerms<'_>,
    backlog: u32,
) -> io::Result<Listener> {
    let sock = Socket::new(Domain::UNIX, Type::STREAM, None)?;
    sock.set_cloexec(true)?;
    if abstract_ns {
        sock.bind(&abstract_addr(path)?)?;
    } else {
        bind_path(&sock, path, perms)?;
    }
    sock.listen(backlog.clamp(1, i32::MAX as u32) as i32)?;
    sock.set_nonblocking(true)?;
    let fd: OwnedFd = sock.into();
    Ok(Listener::Unix(std::os::unix::net::UnixListener::from(fd)))
}

/// An abstract unix address: a NUL byte, then `name`.
fn abstract_addr(name: &str) -> io::Result<SockAddr> {
    let mut bytes = vec![0u8];
    bytes.extend_from_slice(name.as_bytes());
    // SAFETY: a zeroed sockaddr_un is valid; we copy at most its path
    // capacity and pass the exact length used.
    let (_, addr) = unsafe {
        SockAddr::try_init(|storage, len| {
            let sun = storage.cast::<libc::sockaddr_un>();
            (*sun).sun_family = libc::AF_UNIX as libc::sa_family_t;
            let cap = (*sun).sun_path.len();
            let n = bytes.len().min(cap);
            let path = &mut (*sun).sun_path;
            for (slot, b) in path.iter_mut().zip(bytes.iter().take(n)) {
                *slot = *b as libc::c_char;
            }
            *len = (std::mem::size_of::<libc::sa_family_t>() + n) as libc::socklen_t;
            Ok(())
        })?
    };
    Ok(addr)
}

/// Binds `sock` at `path` through a temporary name renamed over it (see
/// `bind_unix`); where the temporary name would not fit a socket address,
/// at `path` itself after removing what is there.
fn bind_path(sock: &Socket, path: &str, perms: UnixPerms<'_>) -> io::Result<()> {
    let there = std::fs::symlink_metadata(path).ok();
    if there.as_ref().is_some_and(|m| m.is_dir()) {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            "a directory is in the way",
        ));
    }
    let tmp = format!("{path}.{}.tmp", std::process::id());
    let Ok(tmp_addr) = SockAddr::unix(&tmp) else {
        if there.is_some() {
            std::fs::remove_file(path)?;
        }
        sock.bind(&SockAddr::unix(path)?)?;
        return give(path, perms);
    };
    let _ = std::fs::remove_file(&tmp);
    sock.bind(&tmp_addr)?;
    let placed = give(&tmp, perms).and_then(|()| std::fs::rename(&tmp, path));
    if placed.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    placed
}

/// Sets a socket file's mode and owner.
fn give(path: &str, perms: UnixPerms<'_>) -> io::Result<()> {
    if let Some(m) = perms.mode {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(m))?;
    }
    chown_socket(path, perms.user, perms.group)
}

/// Gives a unix socket file to `user` and `group` (names or numbers), as
/// `user`/`uid` and `group`/`gid` ask on `bind` and `stats socket` lines.
fn chown_socket(path: &str, user: Option<&str>, group: Option<&str>) -> io::Result<()> {
    if user.is_none() && group.is_none() {
        return Ok(());
    }
    let uid = match user {
        Some(u) => Some(
            u.parse()
                .or_else(|_| crate::sys::lookup_user(u).map(|x| x.0))?,
        ),
        None => None,
    };
    let gid = match group {
        Some(g) => Some(g.parse().or_else(|_| crate::sys::lookup_group(g))?),
        None => None,
    };
    std::os::unix::fs::chown(path, uid, gid)
}

/// Takes over an inherited listening descriptor (`fd@N`).
pub fn from_fd(n: i32) -> io::Result<Listener> {
    // SAFETY: fcntl(F_GETFD) only checks that the descriptor exists.
    if unsafe { libc::fcntl(n, libc::F_GETFD) } < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the descriptor exists and the configuration hands it to weir;
    // nothing else in the process owns it.
    let sock = unsafe { Socket::from_raw_fd(n) };
    sock.set_nonblocking(true)?;
    let domain_unix = matches!(sock.local_addr().map(|a| a.is_unix()), Ok(true));
    let fd: OwnedFd = sock.into();
    Ok(if domain_unix {
        Listener::Unix(std::os::unix::net::UnixListener::from(fd))
    } else {
        Listener::Tcp(std::net::TcpListener::from(fd))
    })
}

/// Expands a bind address into socket addresses (port ranges) or the other
/// kinds.
pub enum Expanded {
    Tcp(Vec<SocketAddr>),
    Unix(String, bool),
    Fd(i32),
}

pub fn expand(a: &BindAddr) -> io::Result<Expanded> {
    Ok(match a {
        BindAddr::Inet {
            host,
            family,
            ports,
        } => {
            let ip = resolve_bind_host(host, *family, false)?;
            Expanded::Tcp(
                (ports.0..=ports.1)
                    .map(|p| SocketAddr::new(ip, p))
                    .collect(),
            )
        }
        BindAddr::Unix(p) => Expanded::Unix(p.clone(), false),
        BindAddr::Abns(p) => Expanded::Unix(p.clone(), true),
        BindAddr::Fd(n) => Expanded::Fd(*n),
    })
}

/// A listener from a socket a previous process handed over (`-x`).
fn adopt(fd: OwnedFd, unix: bool) -> io::Result<Listener> {
    let sock = Socket::from(fd);
    sock.set_nonblocking(true)?;
    let fd: OwnedFd = sock.into();
    Ok(if unix {
        Listener::Unix(std::os::unix::net::UnixListener::from(fd))
    } else {
        Listener::Tcp(std::net::TcpListener::from(fd))
    })
}

/// Listeners for one bind address, as (thread index, listener) pairs: one
/// `SO_REUSEPORT` socket per thread for TCP (unless `reuseport` is off), or
/// one socket shared by the threads otherwise (unix, `fd@`). Sockets a
/// previous process handed over (`inherited`) are taken before any is
/// bound. Errors say which address failed.
pub fn for_threads(
    a: &BindAddr,
    b: &Bind,
    threads: &[usize],
    reuseport: bool,
    backlog: u32,
    bufs: (Option<u32>, Option<u32>),
    inherited: &mut crate::takeover::Inherited,
) -> Result<Vec<(usize, Listener)>, String> {
    use crate::takeover::Key;
    let share = |l: Listener| -> Result<Vec<(usize, Listener)>, String> {
        threads
            .iter()
            .map(|&t| l.try_clone().map(|c| (t, c)).map_err(|e| e.to_string()))
            .collect()
    };
    match expand(a).map_err(|e| format!("cannot resolve bind address: {e}"))? {
        Expanded::Tcp(addrs) => {
            let mut out = Vec::new();
            for addr in addrs {
                let fail = |e: io::Error| format!("cannot bind socket [{addr}]: {e}");
                let mut get = |reuse: bool| match inherited.take(&Key::Tcp(addr)) {
                    Some(fd) => adopt(fd, false).map_err(fail),
                    None => bind_tcp(addr, b, reuse, backlog, bufs).map_err(fail),
                };
                if reuseport {
                    for &t in threads {
                        out.push((t, get(true)?));
                    }
                } else {
                    out.extend(share(get(false)?)?);
                }
            }
            Ok(out)
        }
        Expanded::Unix(path, abns) => {
            let mut key = if abns { vec![0u8] } else { Vec::new() };
            key.extend_from_slice(path.as_bytes());
            let fail = |e: io::Error| format!("cannot bind unix socket [{path}]: {e}");
            share(match inherited.take(&Key::Unix(key)) {
                Some(fd) => adopt(fd, true).map_err(fail)?,
                None => {
                    let perms = UnixPerms {
                        mode: b.mode,
                        user: b.user.as_deref(),
                        group: b.group.as_deref(),
                    };
                    bind_unix(&path, abns, perms, backlog).map_err(fail)?
                }
            })
        }
        Expanded::Fd(n) => share(from_fd(n).map_err(|e| format!("cannot use fd@{n}: {e}"))?),
    }
}
