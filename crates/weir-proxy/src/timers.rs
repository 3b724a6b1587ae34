//! Timers kept for reuse: a wait under a timeout takes a tokio `Sleep`
//! from its thread's stock, only once it has to wait, and moves its
//! deadline on, instead of making a timer for each wait (even one that
//! never waits), entering it in the runtime's timer wheel and taking it out
//! again (about 1,000 instructions a keep-alive request). A stocked
//! timer stays in the wheel; moving its deadline later, the common case
//! (the same timeout from a later now), is one atomic store, and the wheel
//! files it again only when the old deadline comes. A timer that fired in
//! the stock wakes the task that used it last, once, for nothing (tasks
//! take spurious wake-ups), and is entered afresh on its next use.
//!
//! Only threads that [`enable`] a stock keep one (weir's worker threads,
//! inside their runtime, which outlives the stock); elsewhere every wait
//! has a timer of its own, as before.

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::time::{Instant, Sleep};

/// Timers a thread keeps at most (a busier moment makes more, dropped
/// when they come back to a full stock).
const KEEP: usize = 256;

type Timer = Pin<Box<Sleep>>;

thread_local! {
    static STOCK: RefCell<Option<Vec<Timer>>> = const { RefCell::new(None) };
}

/// Keeps this thread's stock while it lives; its drop empties the stock
/// (inside the runtime its timers belong to).
pub struct Stock(());

/// Starts this thread's stock; call inside the runtime that runs the
/// thread's waits.
pub fn enable() -> Stock {
    STOCK.with(|s| *s.borrow_mut() = Some(Vec::new()));
    Stock(())
}

impl Drop for Stock {
    fn drop(&mut self) {
        let timers = STOCK.with(|s| s.borrow_mut().take());
        drop(timers);
    }
}

/// A timer lent for one wait: taken when the wait first has to wait, given
/// back when the wait ends.
#[derive(Default)]
pub struct Lease(Option<Timer>);

impl Lease {
    /// Polls the timer for `deadline` (taking one on the first call,
    /// moving it when the deadline changed): `Ready` once it passed.
    pub fn poll_until(&mut self, deadline: Instant, cx: &mut Context<'_>) -> Poll<()> {
        let t = self.0.get_or_insert_with(|| take(deadline));
        if t.deadline() != deadline {
            t.as_mut().reset(deadline);
        }
        t.as_mut().poll(cx)
    }

    /// Polls `fut`, then (when it is not done) the timer for `deadline`:
    /// `Ready(None)` once the deadline passed first.
    pub fn poll_within<F: Future>(
        &mut self,
        fut: Pin<&mut F>,
        deadline: Instant,
        cx: &mut Context<'_>,
    ) -> Poll<Option<F::Output>> {
        if let Poll::Ready(v) = fut.poll(cx) {
            return Poll::Ready(Some(v));
        }
        self.poll_until(deadline, cx).map(|()| None)
    }

    /// Holds a timer now.
    pub fn armed(&self) -> bool {
        self.0.is_some()
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        if let Some(t) = self.0.take() {
            give(t);
        }
    }
}

/// A timer for `deadline`: a stocked one moved there, or a new one.
fn take(deadline: Instant) -> Timer {
    let stocked = STOCK
        .try_with(|s| s.borrow_mut().as_mut().and_then(Vec::pop))
        .ok()
        .flatten();
    match stocked {
        Some(mut t) => {
            t.as_mut().reset(deadline);
            t
        }
        None => Box::pin(tokio::time::sleep_until(deadline)),
    }
}

/// Back to the stock (dropped when this thread keeps none, or a full one).
fn give(t: Timer) {
    let _ = STOCK.try_with(|s| {
        if let Some(v) = s.borrow_mut().as_mut().filter(|v| v.len() < KEEP) {
            v.push(t);
        }
    });
}

/// Timers in this thread's stock (tests).
pub fn stocked() -> usize {
    STOCK.with(|s| s.borrow().as_ref().map_or(0, Vec::len))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::future::poll_fn;
    use std::time::Duration;

    fn pending_wait(lease: &mut Lease, deadline: Instant) -> Poll<()> {
        let mut cx = Context::from_waker(std::task::Waker::noop());
        lease.poll_until(deadline, &mut cx)
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    /// Arms a lease for `deadline` and ends it: its timer goes to the stock.
    fn stock_one(deadline: Instant) {
        let mut a = Lease::default();
        assert!(pending_wait(&mut a, deadline).is_pending());
        assert!(a.armed());
    }

    /// Waits on `lease` until `deadline`; false if that took 20 s.
    async fn ends_by(lease: &mut Lease, deadline: Instant) -> bool {
        let wait = poll_fn(|cx| lease.poll_until(deadline, cx));
        tokio::time::timeout(Duration::from_secs(20), wait)
            .await
            .is_ok()
    }

    #[tokio::test]
    async fn a_lent_timer_comes_back_and_serves_a_later_deadline() {
        let _stock = enable();
        stock_one(Instant::now() + ms(30));
        assert_eq!(stocked(), 1);
        // Reused for a later deadline: it waits until then, not the old one.
        let mut b = Lease::default();
        let until = Instant::now() + ms(200);
        assert!(pending_wait(&mut b, until).is_pending());
        assert_eq!(stocked(), 0);
        assert!(ends_by(&mut b, until).await);
        assert!(Instant::now() >= until);
    }

    #[tokio::test]
    async fn a_timer_that_fired_in_stock_waits_again_when_reused() {
        let _stock = enable();
        let first = Instant::now() + ms(10);
        stock_one(first);
        // Its deadline passes while it is stocked.
        tokio::time::sleep_until(first + ms(20)).await;
        let mut b = Lease::default();
        let until = Instant::now() + ms(100);
        assert!(pending_wait(&mut b, until).is_pending());
        assert!(ends_by(&mut b, until).await);
        assert!(Instant::now() >= until);
    }

    #[tokio::test]
    async fn a_deadline_earlier_than_the_stocked_timers_is_kept() {
        let _stock = enable();
        stock_one(Instant::now() + Duration::from_secs(100));
        let mut b = Lease::default();
        let sooner = Instant::now() + ms(50);
        assert!(
            ends_by(&mut b, sooner).await,
            "the earlier deadline was not kept"
        );
        assert!(Instant::now() >= sooner);
    }

    #[tokio::test]
    async fn a_lease_follows_a_new_deadline() {
        let mut a = Lease::default();
        assert!(pending_wait(&mut a, Instant::now() + Duration::from_secs(100)).is_pending());
        let sooner = Instant::now() + ms(30);
        assert!(
            ends_by(&mut a, sooner).await,
            "the lease kept its first deadline"
        );
    }

    #[tokio::test]
    async fn a_wait_takes_no_timer_when_its_future_is_ready() {
        let _stock = enable();
        let mut a = Lease::default();
        let mut done = std::pin::pin!(std::future::ready(7));
        let mut cx = Context::from_waker(std::task::Waker::noop());
        let far = Instant::now() + Duration::from_secs(100);
        assert_eq!(
            a.poll_within(done.as_mut(), far, &mut cx),
            Poll::Ready(Some(7))
        );
        assert!(!a.armed());
        // A future that never ends gives way to the deadline.
        let mut never = std::pin::pin!(std::future::pending::<()>());
        let soon = Instant::now() + ms(20);
        assert_eq!(
            poll_fn(|cx| a.poll_within(never.as_mut(), soon, cx)).await,
            None
        );
    }

    #[tokio::test]
    async fn without_a_stock_timers_are_not_kept() {
        let mut a = Lease::default();
        assert!(pending_wait(&mut a, Instant::now() + Duration::from_secs(5)).is_pending());
        drop(a);
        assert_eq!(stocked(), 0);
    }

    #[tokio::test]
    async fn a_full_stock_drops_what_comes_back() {
        let _stock = enable();
        let leases: Vec<Lease> = (0..KEEP + 3)
            .map(|_| {
                let mut l = Lease::default();
                let _ = pending_wait(&mut l, Instant::now() + Duration::from_secs(5));
                l
            })
            .collect();
        drop(leases);
        assert_eq!(stocked(), KEEP);
    }
}
