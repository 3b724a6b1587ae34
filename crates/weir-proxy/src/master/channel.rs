//! The link between the master and one worker: a unix `SOCK_SEQPACKET`
//! socket pair, the worker's end inherited as descriptor `WEIR_MASTER_FD`.
//!
//! master → worker: at start, the session ticket secret (`K`) and the
//! listening sockets the master holds (`L` messages carrying descriptors,
//! then `E`); then one `C` message per
//! runtime API connection, carrying the worker's end of a new socket pair.
//! worker → master: `READY` once it serves. The worker leaves when the
//! link closes (the master is gone).

use crate::takeover::{recv_with_fds, send_with_fds};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use tokio::io::unix::AsyncFd;
use tokio::io::Interest;

/// The environment variable naming the worker's end of the link.
pub const ENV: &str = "WEIR_MASTER_FD";
/// Descriptors per `L` message, below the kernel's `SCM_MAX_FD` (253).
const BATCH: usize = 200;

/// A new link: (master's end, worker's end), both close-on-exec.
pub fn pair() -> io::Result<(OwnedFd, OwnedFd)> {
    let (a, b) = socket2::Socket::pair(socket2::Domain::UNIX, socket2::Type::SEQPACKET, None)?;
    Ok((a.into(), b.into()))
}

/// Lets `fd` be inherited by the next program started (or not).
pub fn set_inherited(fd: RawFd, on: bool) -> io::Result<()> {
    // SAFETY: fcntl on a descriptor the caller owns only changes its flags.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFD);
        if flags < 0 {
            return Err(io::Error::last_os_error());
        }
        let flags = if on {
            flags & !libc::FD_CLOEXEC
        } else {
            flags | libc::FD_CLOEXEC
        };
        if libc::fcntl(fd, libc::F_SETFD, flags) < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// The worker's end of its link, when a master started this process (the
/// variable is removed so that nothing this process starts sees it).
pub fn from_env() -> Option<OwnedFd> {
    let n: RawFd = std::env::var(ENV).ok()?.parse().ok()?;
    std::env::remove_var(ENV);
    // SAFETY: stat is plain data, valid when zeroed.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fstat only writes the descriptor's metadata into our struct.
    let ok = n >= 3 && unsafe { libc::fstat(n, &mut st) } == 0;
    if !ok || st.st_mode & libc::S_IFMT != libc::S_IFSOCK {
        return None;
    }
    // SAFETY: the master gave this process the descriptor and nothing else
    // in it owns it; it is a socket (checked above).
    let fd = unsafe { OwnedFd::from_raw_fd(n) };
    let _ = set_inherited(n, false);
    Some(fd)
}

/// Master: sends the session ticket secret, then the listening sockets,
/// to a worker that just started.
pub fn send_start(link: &OwnedFd, secret: &[u8; 32], fds: &[OwnedFd]) -> io::Result<()> {
    let mut k = vec![b'K'];
    k.extend_from_slice(secret);
    send_with_fds(link.as_raw_fd(), &k, &[])?;
    for chunk in fds.chunks(BATCH) {
        let raw: Vec<RawFd> = chunk.iter().map(AsRawFd::as_raw_fd).collect();
        send_with_fds(link.as_raw_fd(), b"L", &raw)?;
    }
    send_with_fds(link.as_raw_fd(), b"E", &[]).map(|_| ())
}

/// Worker: the session ticket secret and the listening sockets the master
/// holds, read before anything is built.
pub fn recv_start(link: &OwnedFd) -> io::Result<([u8; 32], Vec<OwnedFd>)> {
    socket2::SockRef::from(link).set_read_timeout(Some(std::time::Duration::from_secs(10)))?;
    let mut fds = Vec::new();
    let mut secret = None;
    let mut buf = [0u8; 64];
    loop {
        let n = recv_with_fds(link.as_raw_fd(), &mut buf, &mut fds)?;
        match buf.get(..n).unwrap_or_default() {
            [] => return Err(io::Error::other("the master closed the link")),
            [b'K', rest @ ..] => secret = <[u8; 32]>::try_from(rest).ok(),
            [b'E'] => break,
            [b'L'] => {}
            _ => return Err(io::Error::other("unexpected message from the master")),
        }
    }
    socket2::SockRef::from(link).set_read_timeout(None)?;
    let secret = secret.ok_or_else(|| io::Error::other("no ticket secret from the master"))?;
    Ok((secret, fds))
}

/// What one side received.
#[derive(Debug)]
pub enum Msg {
    /// A runtime API connection to serve (worker side).
    Conn(OwnedFd),
    /// The worker serves (master side).
    Ready,
    /// The other side is gone.
    Closed,
    /// Anything else (ignored).
    Other,
}

/// One end of a link, in the event loop.
pub struct Link {
    fd: AsyncFd<OwnedFd>,
}

impl Link {
    pub fn new(fd: OwnedFd) -> io::Result<Link> {
        socket2::SockRef::from(&fd).set_nonblocking(true)?;
        // SAFETY: the link owns its descriptor, keeps it open until it is
        // dropped and always returns that same descriptor.
        let fd =
            unsafe { AsyncFd::register_with_interest(fd, Interest::READABLE | Interest::WRITABLE) }
                .map_err(io::Error::from)?;
        Ok(Link { fd })
    }

    /// The next message.
    pub async fn recv(&self) -> io::Result<Msg> {
        loop {
            let mut g = self.fd.readable().await?;
            let mut buf = [0u8; 64];
            let mut fds = Vec::new();
            match g.try_io(|fd| recv_with_fds(fd.as_raw_fd(), &mut buf, &mut fds)) {
                Ok(Ok(0)) => return Ok(Msg::Closed),
                Ok(Ok(n)) => {
                    let data = buf.get(..n).unwrap_or_default();
                    return Ok(match (data, fds.pop()) {
                        (b"C", Some(fd)) => Msg::Conn(fd),
                        (b"READY", _) => Msg::Ready,
                        _ => Msg::Other,
                    });
                }
                Ok(Err(e)) => return Err(e),
                Err(_would_block) => {}
            }
        }
    }

    /// Sends `data`, with `fd` attached when given.
    pub async fn send(&self, data: &[u8], fd: Option<RawFd>) -> io::Result<()> {
        let fds: Vec<RawFd> = fd.into_iter().collect();
        loop {
            let mut g = self.fd.writable().await?;
            match g.try_io(|s| send_with_fds(s.as_raw_fd(), data, &fds)) {
                Ok(r) => return r.map(|_| ()),
                Err(_would_block) => {}
            }
        }
    }
}
