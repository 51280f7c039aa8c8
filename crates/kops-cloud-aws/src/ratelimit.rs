//! Client-side token buckets, one per AWS service, so a run stays inside the request
//! budget AWS grants (EC2's describe budget is a bucket of 100 refilled at 20 per second)
//! instead of relying on throttling errors and retries.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::cloud::Service;

/// A token bucket's size and refill rate.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct RateLimit {
    /// Burst size: tokens available at once.
    pub capacity: f64,
    /// Tokens added per second.
    pub refill_per_second: f64,
}

impl RateLimit {
    /// A bucket of `capacity` tokens refilled at `refill_per_second`.
    pub fn new(capacity: f64, refill_per_second: f64) -> Self {
        RateLimit {
            capacity,
            refill_per_second,
        }
    }

    /// No client-side limit.
    pub fn unlimited() -> Self {
        RateLimit::new(f64::INFINITY, f64::INFINITY)
    }

    /// The default budget for a service (AWS' documented or observed request budgets).
    pub fn default_for(service: Service) -> Self {
        match service {
            Service::Ec2 => RateLimit::new(100.0, 20.0),
            Service::Autoscaling => RateLimit::new(40.0, 10.0),
            Service::Elbv2 => RateLimit::new(40.0, 10.0),
            Service::Iam => RateLimit::new(20.0, 10.0),
            Service::Route53 => RateLimit::new(5.0, 5.0),
            Service::Sqs | Service::EventBridge => RateLimit::new(50.0, 20.0),
            _ => RateLimit::new(200.0, 100.0),
        }
    }
}

/// A monotonic clock, injectable so the bucket can be tested without waiting.
pub trait Clock: Send + Sync + fmt::Debug + 'static {
    /// Time elapsed since an arbitrary fixed origin.
    fn now(&self) -> Duration;
}

/// The system's monotonic clock.
#[derive(Debug)]
pub struct SystemClock {
    origin: Instant,
}

impl Default for SystemClock {
    fn default() -> Self {
        SystemClock {
            origin: Instant::now(),
        }
    }
}

impl Clock for SystemClock {
    fn now(&self) -> Duration {
        self.origin.elapsed()
    }
}

/// A token bucket over a [`Clock`].
#[derive(Debug)]
pub struct TokenBucket {
    limit: RateLimit,
    clock: Arc<dyn Clock>,
    state: Mutex<BucketState>,
}

#[derive(Debug)]
struct BucketState {
    tokens: f64,
    last: Duration,
}

impl TokenBucket {
    /// A full bucket.
    pub fn new(limit: RateLimit, clock: Arc<dyn Clock>) -> Self {
        let now = clock.now();
        TokenBucket {
            limit,
            clock,
            state: Mutex::new(BucketState {
                tokens: limit.capacity,
                last: now,
            }),
        }
    }

    /// Takes one token now, or says how long to wait before one is available (the token
    /// is then reserved: the caller must wait that long and not call again).
    pub fn take(&self) -> Option<Duration> {
        if self.limit.capacity.is_infinite() {
            return None;
        }
        let now = self.clock.now();
        let mut st = match self.state.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        let elapsed = now.saturating_sub(st.last).as_secs_f64();
        st.tokens = (st.tokens + elapsed * self.limit.refill_per_second).min(self.limit.capacity);
        st.last = now;
        st.tokens -= 1.0;
        if st.tokens >= 0.0 {
            None
        } else if self.limit.refill_per_second > 0.0 {
            Some(Duration::from_secs_f64(
                -st.tokens / self.limit.refill_per_second,
            ))
        } else {
            Some(Duration::from_secs(3600))
        }
    }

    /// Waits until a token is available and takes it.
    pub async fn acquire(&self) {
        if let Some(wait) = self.take() {
            tokio::time::sleep(wait).await;
        }
    }
}

/// One bucket per service.
#[derive(Debug)]
pub(crate) struct Buckets {
    buckets: BTreeMap<Service, TokenBucket>,
}

impl Buckets {
    pub(crate) fn new(limits: &BTreeMap<Service, RateLimit>, clock: Arc<dyn Clock>) -> Self {
        let services = [
            Service::Ec2,
            Service::Autoscaling,
            Service::Elbv2,
            Service::Iam,
            Service::Route53,
            Service::Sqs,
            Service::EventBridge,
            Service::S3,
        ];
        let buckets = services
            .into_iter()
            .map(|s| {
                let limit = limits
                    .get(&s)
                    .copied()
                    .unwrap_or_else(|| RateLimit::default_for(s));
                (s, TokenBucket::new(limit, clock.clone()))
            })
            .collect();
        Buckets { buckets }
    }

    pub(crate) async fn acquire(&self, service: Service) {
        if let Some(b) = self.buckets.get(&service) {
            b.acquire().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};

    #[derive(Debug, Default)]
    struct ManualClock(AtomicU64);
    impl ManualClock {
        fn advance(&self, ms: u64) {
            self.0.fetch_add(ms, Ordering::SeqCst);
        }
    }
    impl Clock for ManualClock {
        fn now(&self) -> Duration {
            Duration::from_millis(self.0.load(Ordering::SeqCst))
        }
    }

    #[test]
    fn burst_then_refill() {
        let clock = Arc::new(ManualClock::default());
        let b = TokenBucket::new(RateLimit::new(3.0, 2.0), clock.clone());
        assert_eq!(b.take(), None);
        assert_eq!(b.take(), None);
        assert_eq!(b.take(), None);
        // Empty: the fourth token arrives after half a second at 2 per second.
        assert_eq!(b.take(), Some(Duration::from_millis(500)));
        // The reservation is kept: after 500 ms the bucket is at zero again.
        clock.advance(500);
        assert_eq!(b.take(), Some(Duration::from_millis(500)));
        clock.advance(10_000);
        // Refill caps at capacity.
        for _ in 0..3 {
            assert_eq!(b.take(), None);
        }
        assert!(b.take().is_some());
    }

    #[test]
    fn unlimited_never_waits() {
        let b = TokenBucket::new(RateLimit::unlimited(), Arc::new(ManualClock::default()));
        for _ in 0..10_000 {
            assert_eq!(b.take(), None);
        }
    }

    #[test]
    fn defaults_follow_ec2_budget() {
        let l = RateLimit::default_for(Service::Ec2);
        assert_eq!((l.capacity, l.refill_per_second), (100.0, 20.0));
    }

    #[tokio::test]
    async fn acquire_waits_for_a_token() {
        let clock: Arc<dyn Clock> = Arc::new(SystemClock::default());
        let b = TokenBucket::new(RateLimit::new(1.0, 50.0), clock);
        let start = Instant::now();
        b.acquire().await;
        b.acquire().await;
        b.acquire().await;
        // Two tokens at 50/s need at least ~40 ms in total.
        assert!(start.elapsed() >= Duration::from_millis(35));
    }
}
