//! Zero-copy forwarding with splice(2) through a pipe, and the per-thread
//! pool of pipes. Only this module and `sys`/`log` use `unsafe`.

use std::cell::RefCell;
use std::io;
use std::os::fd::RawFd;

/// A non-blocking pipe holding `len` bytes in flight.
#[derive(Debug)]
pub struct Pipe {
    pub rd: RawFd,
    pub wr: RawFd,
    pub len: usize,
}

impl Drop for Pipe {
    fn drop(&mut self) {
        // SAFETY: both descriptors were created by pipe2 and are owned here.
        unsafe {
            libc::close(self.rd);
            libc::close(self.wr);
        }
    }
}

thread_local! {
    static POOL: RefCell<Vec<Pipe>> = const { RefCell::new(Vec::new()) };
}

/// Pipes kept per thread for reuse.
const POOL_MAX: usize = 64;

/// Pipe capacity when `tune.pipesize` is not set: four times the kernel's
/// default, so each splice(2) moves up to 256 KiB (pages are only used
/// while bytes are in flight).
pub const DEFAULT_PIPE_SIZE: usize = 256 * 1024;

/// Takes a pipe from this thread's pool or creates one with `size` bytes
/// of capacity (F_SETPIPE_SZ), [`DEFAULT_PIPE_SIZE`] by default.
pub fn get_pipe(size: Option<usize>) -> io::Result<Pipe> {
    let size = Some(size.unwrap_or(DEFAULT_PIPE_SIZE));
    if let Some(p) = POOL.with(|p| p.borrow_mut().pop()) {
        return Ok(p);
    }
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: pipe2 writes two descriptors into the array we own.
    let rc = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_NONBLOCK | libc::O_CLOEXEC) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    if let Some(sz) = size {
        // SAFETY: fcntl on a descriptor we own; failure is harmless.
        unsafe {
            libc::fcntl(fds[1], libc::F_SETPIPE_SZ, sz as libc::c_int);
        }
    }
    Ok(Pipe {
        rd: fds[0],
        wr: fds[1],
        len: 0,
    })
}

/// Returns an empty pipe to the pool (a pipe still holding data is closed).
pub fn put_pipe(p: Pipe) {
    if p.len != 0 {
        return;
    }
    POOL.with(|pool| {
        let mut pool = pool.borrow_mut();
        if pool.len() < POOL_MAX {
            pool.push(p);
        }
    });
}

/// Moves up to `max` bytes from `from` to `to` without copying to user space.
/// Returns 0 at end of stream; `WouldBlock` when nothing can move now.
pub fn splice(from: RawFd, to: RawFd, max: usize) -> io::Result<usize> {
    // SAFETY: splice only reads and writes the kernel objects behind the two
    // descriptors; null offsets mean "current position" for sockets/pipes.
    let n = unsafe {
        libc::splice(
            from,
            std::ptr::null_mut(),
            to,
            std::ptr::null_mut(),
            max,
            libc::SPLICE_F_NONBLOCK | libc::SPLICE_F_MOVE,
        )
    };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

/// recv(2) into `buf` from a non-blocking socket (cheaper than read(2),
/// which goes through the file layer first).
pub fn read_fd(fd: RawFd, buf: &mut [u8]) -> io::Result<usize> {
    // SAFETY: the kernel writes at most buf.len() bytes into buf, which we
    // borrow mutably for the duration of the call.
    let n = unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), 0) };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

/// send(2) of `buf` to a non-blocking socket, without SIGPIPE.
pub fn write_fd(fd: RawFd, buf: &[u8]) -> io::Result<usize> {
    // SAFETY: the kernel reads at most buf.len() bytes from buf.
    let n = unsafe { libc::send(fd, buf.as_ptr().cast(), buf.len(), libc::MSG_NOSIGNAL) };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

/// sendmsg(2) of several slices to a non-blocking socket, without SIGPIPE.
pub fn writev_fd(fd: RawFd, bufs: &[std::io::IoSlice<'_>]) -> io::Result<usize> {
    let n = bufs.len().min(64);
    // SAFETY: an all-zero msghdr is valid (no name, no control data).
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    // IoSlice is guaranteed ABI-compatible with iovec on Unix; the kernel
    // only reads the slices, which stay borrowed for the call.
    msg.msg_iov = bufs.as_ptr() as *mut libc::iovec;
    msg.msg_iovlen = n as _;
    // SAFETY: msg points at valid, borrowed iovecs for the duration.
    let r = unsafe { libc::sendmsg(fd, &msg, libc::MSG_NOSIGNAL) };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r as usize)
    }
}
