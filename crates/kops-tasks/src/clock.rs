//! Injectable time: [`Clock`], the real [`TokioClock`], and the virtual [`ManualClock`]
//! that makes retry, backoff and deadline tests run instantly.

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context as TaskCx, Poll, Wake, Waker};
use std::time::Duration;

use futures::future::BoxFuture;

/// A monotonic clock with an async sleep.
pub trait Clock: Send + Sync + fmt::Debug {
    /// Time elapsed since an arbitrary, fixed origin.
    fn now(&self) -> Duration;
    /// Completes after `duration` has passed on this clock.
    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()>;
}

/// The real clock, backed by `tokio::time` (so it also honours tokio's paused test time).
#[derive(Debug, Clone)]
pub struct TokioClock {
    origin: tokio::time::Instant,
}

impl TokioClock {
    /// A clock whose origin is now.
    pub fn new() -> Self {
        TokioClock {
            origin: tokio::time::Instant::now(),
        }
    }
}

impl Default for TokioClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for TokioClock {
    fn now(&self) -> Duration {
        self.origin.elapsed()
    }
    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()> {
        Box::pin(tokio::time::sleep(duration))
    }
}

#[derive(Debug, Default)]
struct ManualState {
    now: Duration,
    next_id: u64,
    sleepers: BTreeMap<u64, (Duration, Option<Waker>)>,
}

/// A virtual clock. Time moves only through [`ManualClock::advance`], or automatically in
/// [`ManualClock::block_on`], which jumps to the next sleeper's wake-up time whenever the
/// future it drives cannot make progress otherwise. Tests of hours of backoff run in
/// microseconds and deterministically.
#[derive(Debug, Clone, Default)]
pub struct ManualClock {
    state: Arc<Mutex<ManualState>>,
}

impl ManualClock {
    /// A clock at time zero.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, ManualState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Moves time forward by `by`, waking every sleeper that is due.
    pub fn advance(&self, by: Duration) {
        let now = self.lock().now + by;
        self.advance_to(now);
    }

    fn advance_to(&self, to: Duration) {
        let wakers: Vec<Waker> = {
            let mut st = self.lock();
            if to > st.now {
                st.now = to;
            }
            let now = st.now;
            st.sleepers
                .values_mut()
                .filter(|(due, _)| *due <= now)
                .filter_map(|(_, w)| w.take())
                .collect()
        };
        wakers.into_iter().for_each(Waker::wake);
    }

    /// Jumps to the earliest pending sleeper; false when nobody sleeps.
    fn advance_to_next(&self) -> bool {
        let next = self.lock().sleepers.values().map(|(due, _)| *due).min();
        match next {
            Some(due) => {
                self.advance_to(due);
                true
            }
            None => false,
        }
    }

    /// Drives `fut` to completion on the current thread, advancing virtual time whenever
    /// the future is waiting only on this clock. Returns `None` if the future stalls
    /// (pending, nothing woke it and no sleeper is left).
    pub fn block_on<F: Future>(&self, fut: F) -> Option<F::Output> {
        struct Flag(AtomicBool);
        impl Wake for Flag {
            fn wake(self: Arc<Self>) {
                self.0.store(true, Ordering::SeqCst);
            }
        }
        let flag = Arc::new(Flag(AtomicBool::new(true)));
        let waker = Waker::from(flag.clone());
        let mut cx = TaskCx::from_waker(&waker);
        let mut fut = std::pin::pin!(fut);
        loop {
            flag.0.store(false, Ordering::SeqCst);
            if let Poll::Ready(v) = fut.as_mut().poll(&mut cx) {
                return Some(v);
            }
            if flag.0.load(Ordering::SeqCst) {
                continue;
            }
            if !self.advance_to_next() {
                return None;
            }
        }
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Duration {
        self.lock().now
    }

    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()> {
        let mut st = self.lock();
        let id = st.next_id;
        st.next_id += 1;
        let due = st.now + duration;
        st.sleepers.insert(id, (due, None));
        drop(st);
        Box::pin(ManualSleep {
            clock: self.clone(),
            id,
            due,
        })
    }
}

struct ManualSleep {
    clock: ManualClock,
    id: u64,
    due: Duration,
}

impl Future for ManualSleep {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut TaskCx<'_>) -> Poll<()> {
        let mut st = self.clock.lock();
        if st.now >= self.due {
            st.sleepers.remove(&self.id);
            return Poll::Ready(());
        }
        if let Some(slot) = st.sleepers.get_mut(&self.id) {
            slot.1 = Some(cx.waker().clone());
        }
        Poll::Pending
    }
}

impl Drop for ManualSleep {
    fn drop(&mut self) {
        self.clock.lock().sleepers.remove(&self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_clock_jumps_to_sleepers() {
        let clock = ManualClock::new();
        let c2 = clock.clone();
        let out = clock.block_on(async move {
            c2.sleep(Duration::from_secs(3600)).await;
            c2.now()
        });
        assert_eq!(out, Some(Duration::from_secs(3600)));
    }

    #[test]
    fn stalled_future_returns_none() {
        let clock = ManualClock::new();
        assert_eq!(clock.block_on(futures::future::pending::<()>()), None);
    }
}
