use super::*;
use crate::conn::Conn;
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::task::Poll;
use std::time::Duration;

/// A connected pair: the proxy's side under the runtime, the peer's a
/// plain blocking socket (reads time out after 10 s).
async fn pair() -> (Conn, std::net::TcpStream) {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let ours = tokio::net::TcpStream::connect(l.local_addr().expect("addr"))
        .await
        .expect("connect");
    let (peer, _) = l.accept().expect("accept");
    peer.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    (Conn::Tcp(ours), peer)
}

/// Holds `bytes` for `c` as a task does.
async fn hold_on(c: &Conn, bytes: &[u8]) -> bool {
    let fd = c.as_raw_fd();
    std::future::poll_fn(|cx| Poll::Ready(hold(fd, bytes, cx.waker()))).await
}

/// Reads exactly `n` bytes from `peer`.
fn read_n(peer: &mut std::net::TcpStream, n: usize) -> Vec<u8> {
    let mut got = vec![0; n];
    peer.read_exact(&mut got).expect("read");
    got
}

/// Whether `peer` has nothing to read now.
fn nothing_yet(peer: &mut std::net::TcpStream) -> bool {
    peer.set_nonblocking(true).expect("nonblocking");
    let r = peer.read(&mut [0; 64]);
    peer.set_nonblocking(false).expect("blocking");
    matches!(r, Err(e) if e.kind() == io::ErrorKind::WouldBlock)
}

#[tokio::test]
async fn held_sends_leave_together_once_the_ready_tasks_ran() {
    tokio::spawn(enable());
    let (c, mut peer) = pair().await;
    assert!(hold_on(&c, b"one ").await);
    assert!(hold_on(&c, b"two").await);
    assert!(c.has_pending());
    assert!(nothing_yet(&mut peer));
    // The writer was woken by the first send: it runs before this task
    // runs again.
    tokio::task::yield_now().await;
    assert!(!c.has_pending());
    assert_eq!(read_n(&mut peer, 7), b"one two");
}

#[tokio::test]
async fn a_later_write_sends_the_held_bytes_first() {
    tokio::spawn(enable());
    let (c, mut peer) = pair().await;
    assert!(hold_on(&c, b"first ").await);
    assert_eq!(c.try_send(b"second").expect("send"), 6);
    assert!(!c.has_pending());
    assert_eq!(read_n(&mut peer, 12), b"first second");
}

#[tokio::test]
async fn a_closing_socket_writes_what_it_held_and_is_forgotten() {
    tokio::spawn(enable());
    let (c, mut peer) = pair().await;
    let fd = c.as_raw_fd();
    assert!(hold_on(&c, b"bye").await);
    drop(c);
    assert!(!holds(fd));
    let mut all = Vec::new();
    peer.read_to_end(&mut all).expect("read");
    assert_eq!(all, b"bye");
    // A new socket, likely under the same number, receives nothing of it.
    let (d, mut peer2) = pair().await;
    assert!(!d.has_pending());
    tokio::task::yield_now().await;
    assert!(nothing_yet(&mut peer2));
}

#[tokio::test]
async fn a_held_send_that_finds_no_room_is_finished_by_its_task() {
    tokio::spawn(enable());
    let (c, mut peer) = pair().await;
    // Fill the socket while the peer reads nothing.
    let mut sent = 0;
    let chunk = [b'x'; 65536];
    loop {
        match c.try_send(&chunk) {
            Ok(n) => sent += n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
            Err(e) => panic!("send: {e}"),
        }
    }
    assert!(hold_on(&c, b"tail").await);
    tokio::task::yield_now().await;
    let fd = c.as_raw_fd();
    assert!(stalled(fd), "the writer found no room");
    // The peer reads everything, then answers.
    let reader = std::thread::spawn(move || {
        let got = read_n(&mut peer, sent + 4);
        peer.write_all(b"ok").expect("answer");
        got
    });
    // Waiting to read writes the rest first.
    let ready = std::future::poll_fn(|cx| c.poll_read_ready(cx));
    let r = tokio::time::timeout(Duration::from_secs(20), ready).await;
    assert!(matches!(r, Ok(Ok(()))), "the answer came");
    assert!(!c.has_pending());
    let got = reader.join().expect("reader");
    assert_eq!(got.get(sent..), Some(&b"tail"[..]));
}

#[tokio::test]
async fn a_thread_without_the_queue_holds_nothing() {
    let (c, _peer) = pair().await;
    assert!(!hold_on(&c, b"now").await);
    assert!(!c.has_pending());
}

#[test]
fn a_large_send_is_not_held() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        tokio::spawn(enable());
        let (c, _peer) = pair().await;
        assert!(!hold_on(&c, &[0; MOST + 1]).await);
        assert!(hold_on(&c, &[0; MOST]).await);
        // The held bytes and these would pass the bound.
        assert!(!hold_on(&c, b"more").await);
    });
}

#[test]
fn the_ending_runtime_writes_what_is_held() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let (c, mut peer) = rt.block_on(async {
        tokio::spawn(enable());
        let (c, peer) = pair().await;
        assert!(hold_on(&c, b"last").await);
        (c, peer)
    });
    // The writer task is dropped with the runtime.
    drop(rt);
    assert!(!c.has_pending());
    assert_eq!(read_n(&mut peer, 4), b"last");
}

#[tokio::test]
async fn each_socket_keeps_its_own_held_bytes() {
    tokio::spawn(enable());
    let (a, mut pa) = pair().await;
    let (b, mut pb) = pair().await;
    let (c, mut pc) = pair().await;
    assert!(hold_on(&a, b"a1").await);
    assert!(hold_on(&b, b"b1").await);
    assert!(hold_on(&c, b"c1").await);
    // The first goes out early: the others stay held, each its own.
    assert_eq!(a.try_send(b"a2").expect("send"), 2);
    assert!(!a.has_pending() && b.has_pending() && c.has_pending());
    assert!(hold_on(&c, b"c2").await);
    assert!(hold_on(&b, b"b2").await);
    tokio::task::yield_now().await;
    assert!(!b.has_pending() && !c.has_pending());
    assert_eq!(read_n(&mut pa, 4), b"a1a2");
    assert_eq!(read_n(&mut pb, 4), b"b1b2");
    assert_eq!(read_n(&mut pc, 4), b"c1c2");
}
