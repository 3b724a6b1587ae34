//! Idle HTTP clients without a timer of their own: each waiting session
//! leaves its deadline and waker in a per-thread list, and one task per
//! thread sweeps the list every tick, waking those whose deadline passed,
//! and every one of them on a stop. An idle keep-alive client then costs
//! its socket, its small session state and one list slot.

use crate::conn::Conn;
use crate::state::Shared;
use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;
use tokio::sync::watch;
use tokio::time::Instant;

/// How often the list is swept: the precision of keep-alive and first
/// request timeouts while no byte has come.
const TICK: Duration = Duration::from_millis(50);

struct Entry {
    deadline: Option<Instant>,
    waker: Waker,
}

#[derive(Default)]
struct List {
    entries: Vec<Option<Entry>>,
    free: Vec<usize>,
}

thread_local! {
    static IDLE: RefCell<List> = RefCell::default();
}

/// Sweeps this thread's list forever (the runtime ends it).
pub async fn sweep(sh: Arc<Shared>) {
    let mut due: Vec<Waker> = Vec::new();
    loop {
        tokio::time::sleep(TICK).await;
        let now = Instant::now();
        let stopping = *sh.stopping.borrow();
        IDLE.with(|l| {
            for e in l.borrow_mut().entries.iter_mut() {
                let wake = match e {
                    Some(en) => stopping || en.deadline.is_some_and(|d| d <= now),
                    None => false,
                };
                if wake {
                    if let Some(en) = e.take() {
                        due.push(en.waker);
                    }
                }
            }
        });
        // Woken outside the borrow: a woken session re-registers itself.
        for w in due.drain(..) {
            w.wake();
        }
    }
}

/// Resolves to true once `client` is readable, to false when `deadline`
/// passes or `signal` is set first.
pub(super) struct IdleWait<'a> {
    client: &'a Conn,
    signal: &'a watch::Sender<bool>,
    deadline: Option<Instant>,
    slot: Option<usize>,
}

impl<'a> IdleWait<'a> {
    pub(super) fn new(
        client: &'a Conn,
        signal: &'a watch::Sender<bool>,
        deadline: Option<Instant>,
    ) -> Self {
        IdleWait {
            client,
            signal,
            deadline,
            slot: None,
        }
    }

    fn register(&mut self, waker: &Waker) {
        let entry = Entry {
            deadline: self.deadline,
            waker: waker.clone(),
        };
        IDLE.with(|l| {
            let mut l = l.borrow_mut();
            match self.slot {
                Some(i) if i < l.entries.len() => l.entries[i] = Some(entry),
                _ => {
                    let i = match l.free.pop() {
                        Some(i) => {
                            l.entries[i] = Some(entry);
                            i
                        }
                        None => {
                            l.entries.push(Some(entry));
                            l.entries.len() - 1
                        }
                    };
                    self.slot = Some(i);
                }
            }
        });
    }
}

impl Future for IdleWait<'_> {
    type Output = bool;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<bool> {
        if self.client.poll_read_ready(cx).is_ready() {
            return Poll::Ready(true);
        }
        if *self.signal.borrow() || self.deadline.is_some_and(|d| d <= Instant::now()) {
            return Poll::Ready(false);
        }
        let waker = cx.waker().clone();
        self.register(&waker);
        Poll::Pending
    }
}

impl Drop for IdleWait<'_> {
    fn drop(&mut self) {
        if let Some(i) = self.slot {
            IDLE.with(|l| {
                let mut l = l.borrow_mut();
                if let Some(e) = l.entries.get_mut(i) {
                    *e = None;
                    l.free.push(i);
                }
            });
        }
    }
}
