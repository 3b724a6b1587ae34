//! Seamless reloads: a `stats socket … expose-fd listeners` hands the
//! process's listening sockets to a new process (`_getsocks`), and a new
//! process started with `-x <socket>` takes them over instead of binding
//! its own, so no connection waiting in a listen queue is lost.
//!
//! weir's own exchange on the stats socket: the new process writes
//! `_getsocks`; the old answers `weir-fds <n>\n`, then the descriptors in
//! batches (`SCM_RIGHTS`, one data byte per descriptor), and closes.

use crate::conn::Conn;
use crate::listen::Listener;
use std::collections::HashSet;
use std::io::{self, Write};
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::time::Duration;
use tokio::io::Interest;

/// The abstract unix name where weir process `pid` hands its listening
/// sockets to a new process started with `-sf <pid>` (without `-x`).
pub fn private_name(pid: i32) -> String {
    format!("weir-listeners-{pid}")
}

/// Binds this process's [`private_name`].
pub fn bind_private() -> io::Result<std::os::unix::net::UnixListener> {
    use std::os::linux::net::SocketAddrExt;
    let name = private_name(std::process::id() as i32);
    let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes())?;
    std::os::unix::net::UnixListener::bind_addr(&addr)
}

/// A connection to weir process `pid`'s [`private_name`], once the kernel
/// says the one listening there is that very process, run by root or this
/// process's user (anyone may bind an abstract name first).
fn connect_private(pid: i32) -> io::Result<UnixStream> {
    use std::os::linux::net::SocketAddrExt;
    let name = private_name(pid);
    let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes())?;
    let s = UnixStream::connect_addr(&addr)?;
    let mut cred = libc::ucred {
        pid: 0,
        uid: 0,
        gid: 0,
    };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: getsockopt writes at most `len` bytes into `cred`, which we
    // own, on a descriptor open for the time of the call.
    let r = unsafe {
        libc::getsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&mut cred as *mut libc::ucred).cast(),
            &mut len,
        )
    };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    if cred.pid != pid || (cred.uid != 0 && cred.uid != me) {
        return Err(io::Error::other(format!(
            "'{name}' is held by process {} (user {}), not by {pid}",
            cred.pid, cred.uid
        )));
    }
    s.set_read_timeout(Some(Duration::from_secs(5)))?;
    s.set_write_timeout(Some(Duration::from_secs(5)))?;
    Ok(s)
}

/// `-sf <pid>` without `-x`: the listening sockets of the weir process
/// `pid`, through its [`private_name`] (none when it is not a weir).
pub fn fetch_private(pid: i32) -> io::Result<Vec<OwnedFd>> {
    fetch_fds(connect_private(pid)?)
}

/// `-sf <pid>`: the session ticket secret of the weir process `pid`
/// (`_gettickets`, answered `weir-tickets <hex>`), so that its clients
/// resume with this one.
pub fn fetch_private_secret(pid: i32) -> io::Result<[u8; 32]> {
    use std::io::Read;
    let mut s = connect_private(pid)?;
    s.write_all(b"_gettickets\n")?;
    let mut text = String::new();
    s.take(256).read_to_string(&mut text)?;
    let hex = text
        .trim()
        .strip_prefix("weir-tickets ")
        .ok_or_else(|| io::Error::other("unexpected answer to _gettickets"))?;
    let mut out = [0u8; 32];
    for (i, b) in out.iter_mut().enumerate() {
        *b = hex
            .get(2 * i..2 * i + 2)
            .and_then(|h| u8::from_str_radix(h, 16).ok())
            .ok_or_else(|| io::Error::other("bad secret"))?;
    }
    Ok(out)
}

/// Whether the peer of `c` may take this process's sockets: root, or this
/// process's own user (either could take them anyway).
pub fn trusted_peer(c: &tokio::net::UnixStream) -> bool {
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    c.peer_cred().is_ok_and(|p| p.uid() == 0 || p.uid() == me)
}

/// Descriptors per message, below the kernel's `SCM_MAX_FD` (253).
const BATCH: usize = 200;
/// The most bytes (one per descriptor, and the count line) or descriptors
/// `-x` takes from the old process.
const MAX_ANSWER: usize = 1 << 20;

/// The socket's inode: the same listening socket seen through two
/// descriptors (a thread's copy) has the same one.
fn inode(fd: RawFd) -> Option<u64> {
    // SAFETY: fstat writes into a stat struct we own.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fd is an open descriptor for the time of the call.
    (unsafe { libc::fstat(fd, &mut st) } == 0).then_some(st.st_ino)
}

/// One copy of each distinct listening socket among `ls`, to expose.
pub fn distinct<'a>(ls: impl Iterator<Item = &'a Listener>) -> Vec<OwnedFd> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for l in ls {
        let fd = match l {
            Listener::Tcp(t) => t.as_raw_fd(),
            Listener::Unix(u) => u.as_raw_fd(),
        };
        if inode(fd).is_some_and(|i| seen.insert(i)) {
            if let Ok(c) = l.try_clone() {
                out.push(match c {
                    Listener::Tcp(t) => OwnedFd::from(t),
                    Listener::Unix(u) => OwnedFd::from(u),
                });
            }
        }
    }
    out
}

/// A zeroed control buffer with room for `n` descriptors, 8-byte aligned.
fn control(n: usize) -> Vec<u64> {
    // SAFETY: CMSG_SPACE only computes a size.
    let space = unsafe { libc::CMSG_SPACE((n * std::mem::size_of::<RawFd>()) as u32) } as usize;
    vec![0u64; space.div_ceil(8)]
}

/// A message header over one buffer and a control buffer (both must
/// outlive its use).
fn header(iov: &mut libc::iovec, cbuf: &mut [u64]) -> libc::msghdr {
    // SAFETY: msghdr is plain data, valid when zeroed.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = iov;
    msg.msg_iovlen = 1;
    msg.msg_control = cbuf.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of_val(cbuf) as _;
    msg
}

/// Sends `data` with `fds` attached in one message; the bytes sent.
pub(crate) fn send_with_fds(sock: RawFd, data: &[u8], fds: &[RawFd]) -> io::Result<usize> {
    if fds.is_empty() {
        // SAFETY: send(2) reads `data` for the time of the call.
        let n = unsafe {
            libc::send(
                sock,
                data.as_ptr().cast(),
                data.len(),
                libc::MSG_NOSIGNAL | libc::MSG_DONTWAIT,
            )
        };
        return usize::try_from(n).map_err(|_| io::Error::last_os_error());
    }
    let bytes = std::mem::size_of_val(fds);
    let mut cbuf = control(fds.len());
    let mut iov = libc::iovec {
        iov_base: data.as_ptr() as *mut libc::c_void,
        iov_len: data.len(),
    };
    let msg = header(&mut iov, &mut cbuf);
    // SAFETY: the control buffer is sized by CMSG_SPACE for `fds`, and the
    // header's pointers outlive the call.
    unsafe {
        let c = libc::CMSG_FIRSTHDR(&msg);
        (*c).cmsg_level = libc::SOL_SOCKET;
        (*c).cmsg_type = libc::SCM_RIGHTS;
        (*c).cmsg_len = libc::CMSG_LEN(bytes as u32) as _;
        std::ptr::copy_nonoverlapping(fds.as_ptr(), libc::CMSG_DATA(c).cast::<RawFd>(), fds.len());
        let n = libc::sendmsg(sock, &msg, libc::MSG_NOSIGNAL | libc::MSG_DONTWAIT);
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(n as usize)
    }
}

/// Reads into `buf`, keeping any descriptors that come with the bytes.
pub(crate) fn recv_with_fds(
    sock: RawFd,
    buf: &mut [u8],
    fds: &mut Vec<OwnedFd>,
) -> io::Result<usize> {
    let mut cbuf = control(253);
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    let mut msg = header(&mut iov, &mut cbuf);
    // SAFETY: the header's pointers outlive the call; the kernel writes at
    // most msg_controllen bytes of control data, which we walk with the
    // CMSG macros, taking ownership of each descriptor it passed.
    unsafe {
        let n = libc::recvmsg(sock, &mut msg, libc::MSG_CMSG_CLOEXEC);
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        let mut c = libc::CMSG_FIRSTHDR(&msg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_RIGHTS {
                let len = (*c).cmsg_len as usize - libc::CMSG_LEN(0) as usize;
                let p = libc::CMSG_DATA(c).cast::<RawFd>();
                for i in 0..len / std::mem::size_of::<RawFd>() {
                    fds.push(OwnedFd::from_raw_fd(p.add(i).read_unaligned()));
                }
            }
            c = libc::CMSG_NXTHDR(&msg, c);
        }
        if msg.msg_flags & libc::MSG_CTRUNC != 0 {
            return Err(io::Error::other("descriptors were cut off"));
        }
        Ok(n as usize)
    }
}

/// `_getsocks` on a socket with `expose-fd listeners`: sends `fds`.
pub async fn send(c: &Conn, fds: &[OwnedFd]) -> io::Result<()> {
    c.send_all(format!("weir-fds {}\n", fds.len()).as_bytes())
        .await?;
    let sock = c.as_raw_fd();
    for chunk in fds.chunks(BATCH) {
        let raw: Vec<RawFd> = chunk.iter().map(AsRawFd::as_raw_fd).collect();
        let data = vec![b'F'; raw.len()];
        let mut sent = 0;
        while sent == 0 {
            std::future::poll_fn(|cx| c.poll_write_ready(cx)).await?;
            match c.try_io(Interest::WRITABLE, || send_with_fds(sock, &data, &raw)) {
                Ok(n) => sent = n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e),
            }
        }
        // The rest of the batch's marker bytes carry no descriptors.
        if let Some(rest) = data.get(sent..).filter(|r| !r.is_empty()) {
            c.send_all(rest).await?;
        }
    }
    Ok(())
}

/// Where an inherited socket listens.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Key {
    Tcp(SocketAddr),
    /// A path, or an abstract name (with its leading NUL).
    Unix(Vec<u8>),
}

fn key_of(fd: &OwnedFd) -> Option<Key> {
    let s = socket2::SockRef::from(fd);
    if !matches!(s.r#type(), Ok(socket2::Type::STREAM)) {
        return None;
    }
    let a = s.local_addr().ok()?;
    if let Some(sa) = a.as_socket() {
        return Some(Key::Tcp(sa));
    }
    if let Some(p) = a.as_pathname() {
        return Some(Key::Unix(p.as_os_str().as_encoded_bytes().to_vec()));
    }
    let mut name = vec![0u8];
    name.extend_from_slice(a.as_abstract_namespace()?);
    Some(Key::Unix(name))
}

/// The sockets a previous process handed over, until bind lines take them.
#[derive(Default)]
pub struct Inherited {
    socks: Vec<(Key, OwnedFd)>,
}

impl Inherited {
    /// The listening sockets among `fds`, by where they listen.
    pub fn from_fds(fds: Vec<OwnedFd>) -> Inherited {
        let socks = fds
            .into_iter()
            .filter_map(|fd| key_of(&fd).map(|k| (k, fd)))
            .collect();
        Inherited { socks }
    }
    /// Takes one inherited socket listening on `key`.
    pub fn take(&mut self, key: &Key) -> Option<OwnedFd> {
        let i = self.socks.iter().position(|(k, _)| k == key)?;
        Some(self.socks.swap_remove(i).1)
    }
    /// Sockets no bind line took (closed when dropped).
    pub fn left(&self) -> usize {
        self.socks.len()
    }
}

/// `_getsocks` over a connection to a runtime API: the sockets sent.
pub fn fetch_fds(mut s: UnixStream) -> io::Result<Vec<OwnedFd>> {
    s.set_read_timeout(Some(Duration::from_secs(5)))?;
    s.set_write_timeout(Some(Duration::from_secs(5)))?;
    s.write_all(b"_getsocks\n")?;
    let mut data = Vec::new();
    let mut fds = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = recv_with_fds(s.as_raw_fd(), &mut buf, &mut fds)?;
        if n == 0 {
            break;
        }
        data.extend_from_slice(buf.get(..n).unwrap_or_default());
        // A peer that is not a weir sending sockets is not read forever.
        if data.len() > MAX_ANSWER || fds.len() > MAX_ANSWER {
            return Err(io::Error::other("the answer to _getsocks is too long"));
        }
    }
    let text = String::from_utf8_lossy(&data);
    let want: usize = text
        .strip_prefix("weir-fds ")
        .and_then(|r| r.split('\n').next())
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| {
            io::Error::other(format!(
                "unexpected answer to _getsocks: {:?}",
                text.lines().next().unwrap_or("")
            ))
        })?;
    if fds.len() != want {
        return Err(io::Error::other(format!(
            "{} of {want} sockets came",
            fds.len()
        )));
    }
    Ok(fds)
}
