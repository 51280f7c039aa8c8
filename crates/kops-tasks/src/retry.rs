//! The one retry policy of kops-rs: exponential backoff, bounded, with jitter that is
//! random by default and reproducible under a seed.
//!
//! The executor retries a task's retryable errors with it (built from its
//! [`ExecutorOptions`](crate::ExecutorOptions), see
//! [`ExecutorOptions::retry_policy`](crate::ExecutorOptions::retry_policy)); the calls
//! made outside tasks (discovery of zones, images and hosted zones, the listings of
//! `delete cluster` and of orphans) go through [`RetryPolicy::run`], so a throttled
//! describe is retried the same way everywhere.
//!
//! ```
//! use std::time::Duration;
//! use kops_tasks::retry::RetryPolicy;
//!
//! let p = RetryPolicy::default()
//!     .with_backoff(Duration::from_millis(100), Duration::from_secs(1))
//!     .with_jitter(0.0)
//!     .with_max_attempts(5);
//! assert_eq!(p.delay(1, 0), Duration::from_millis(100));
//! assert_eq!(p.delay(3, 0), Duration::from_millis(400));
//! assert_eq!(p.delay(9, 0), Duration::from_secs(1));
//! ```

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use rand::Rng;

use crate::clock::{Clock, TokioClock};

/// How a failed call is retried (see the module docs). Defaults: 1 s doubling up to 30 s,
/// ±25 % random jitter, at most 8 attempts, the real clock.
#[derive(Clone)]
#[non_exhaustive]
pub struct RetryPolicy {
    /// Delay after the first failure.
    pub initial_backoff: Duration,
    /// Largest delay.
    pub max_backoff: Duration,
    /// Fraction of the delay added or removed at random (0.0 - 1.0).
    pub jitter: f64,
    /// Attempts in all, the first included (`None`: unbounded; the executor bounds its
    /// tasks by a deadline instead).
    pub max_attempts: Option<u32>,
    /// With a seed the jitter is drawn from it (and the attempt and call), so a run is
    /// reproducible; without, from the thread's random generator.
    pub seed: Option<u64>,
    /// The clock the delays are slept on.
    pub clock: Arc<dyn Clock>,
}

impl fmt::Debug for RetryPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RetryPolicy")
            .field("initial_backoff", &self.initial_backoff)
            .field("max_backoff", &self.max_backoff)
            .field("jitter", &self.jitter)
            .field("max_attempts", &self.max_attempts)
            .field("seed", &self.seed)
            .field("clock", &self.clock)
            .finish()
    }
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            initial_backoff: Duration::from_secs(1),
            max_backoff: Duration::from_secs(30),
            jitter: 0.25,
            max_attempts: Some(8),
            seed: None,
            clock: Arc::new(TokioClock::new()),
        }
    }
}

/// SplitMix64's finalizer: a well-mixed 64-bit value of `x`.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// FNV-1a of `name`: a salt for [`RetryPolicy::delay`] stable across processes.
pub(crate) fn salt_of(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

impl RetryPolicy {
    /// Sets the backoff range (`max` at least `initial`).
    pub fn with_backoff(mut self, initial: Duration, max: Duration) -> Self {
        self.initial_backoff = initial;
        self.max_backoff = max.max(initial);
        self
    }

    /// Sets the jitter fraction (clamped to 0.0 - 1.0).
    pub fn with_jitter(mut self, fraction: f64) -> Self {
        self.jitter = fraction.clamp(0.0, 1.0);
        self
    }

    /// Bounds the attempts (at least 1); `None` removes the bound.
    pub fn with_max_attempts(mut self, n: impl Into<Option<u32>>) -> Self {
        self.max_attempts = n.into().map(|n| n.max(1));
        self
    }

    /// Draws the jitter from `seed` (reproducible runs).
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// Sets the clock.
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Whether another attempt is allowed after `attempt` (counted from 1) failed.
    pub fn allows(&self, attempt: u32) -> bool {
        self.max_attempts.is_none_or(|max| attempt < max)
    }

    /// The delay after failed attempt `attempt` (counted from 1) of the call `salt`
    /// identifies (any stable number; with a seed it decorrelates the calls' jitter).
    pub fn delay(&self, attempt: u32, salt: u64) -> Duration {
        let base = self
            .initial_backoff
            .saturating_mul(2u32.saturating_pow(attempt.saturating_sub(1).min(30)))
            .min(self.max_backoff);
        if self.jitter <= 0.0 || base.is_zero() {
            return base;
        }
        let unit = match self.seed {
            Some(seed) => {
                let z = mix(seed ^ mix(salt ^ mix(u64::from(attempt))));
                (z >> 11) as f64 / (1u64 << 53) as f64
            }
            None => rand::rng().random_range(0.0..=1.0),
        };
        let factor = 1.0 + self.jitter * (2.0 * unit - 1.0);
        base.mul_f64(factor.max(0.0))
    }

    /// Runs `call` until it succeeds, fails with an error `retryable` rejects, or the
    /// attempts run out (the last error is returned), sleeping [`RetryPolicy::delay`]
    /// between attempts. `what` names the call in the debug log.
    pub async fn run<T, E, F, Fut>(
        &self,
        what: &str,
        retryable: impl Fn(&E) -> bool,
        mut call: F,
    ) -> Result<T, E>
    where
        E: fmt::Display,
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, E>>,
    {
        let salt = salt_of(what);
        let mut attempt = 0u32;
        loop {
            attempt += 1;
            match call().await {
                Ok(v) => return Ok(v),
                Err(e) if retryable(&e) && self.allows(attempt) => {
                    let delay = self.delay(attempt, salt);
                    tracing::debug!(call = what, attempt, ?delay, error = %e, "retrying");
                    if !delay.is_zero() {
                        self.clock.sleep(delay).await;
                    }
                }
                Err(e) => return Err(e),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ManualClock;
    use std::sync::atomic::{AtomicU32, Ordering};

    #[test]
    fn seeded_jitter_is_reproducible_and_bounded() {
        let p = RetryPolicy::default()
            .with_backoff(Duration::from_secs(1), Duration::from_secs(8))
            .with_jitter(0.5)
            .with_seed(42);
        let q = p.clone();
        for attempt in 1..10 {
            let d = p.delay(attempt, 7);
            assert_eq!(d, q.delay(attempt, 7));
            let base = Duration::from_secs(1 << (attempt - 1).min(3));
            assert!(d >= base.mul_f64(0.5) && d <= base.mul_f64(1.5), "{d:?}");
        }
        let other = p.clone().with_seed(43);
        assert!((1..10).any(|a| other.delay(a, 7) != p.delay(a, 7)));
    }

    #[test]
    fn run_retries_what_is_retryable_up_to_the_bound() {
        let clock = ManualClock::new();
        let p = RetryPolicy::default()
            .with_clock(Arc::new(clock.clone()))
            .with_jitter(0.0)
            .with_max_attempts(4);
        let calls = AtomicU32::new(0);
        // Fails twice, then succeeds.
        let r: Result<u32, String> = clock
            .block_on(p.run(
                "flaky",
                |e: &String| e == "throttled",
                || async {
                    let n = calls.fetch_add(1, Ordering::SeqCst) + 1;
                    if n < 3 {
                        Err("throttled".to_owned())
                    } else {
                        Ok(n)
                    }
                },
            ))
            .unwrap();
        assert_eq!(r, Ok(3));
        // 1 s + 2 s of backoff slept on the virtual clock.
        assert_eq!(clock.now(), Duration::from_secs(3));

        // Always throttled: four attempts, then the last error.
        calls.store(0, Ordering::SeqCst);
        let r: Result<u32, String> = clock
            .block_on(p.run(
                "always",
                |e: &String| e == "throttled",
                || async {
                    calls.fetch_add(1, Ordering::SeqCst);
                    Err("throttled".to_owned())
                },
            ))
            .unwrap();
        assert_eq!(r, Err("throttled".to_owned()));
        assert_eq!(calls.load(Ordering::SeqCst), 4);

        // Not retryable: one attempt.
        calls.store(0, Ordering::SeqCst);
        let r: Result<u32, String> = clock
            .block_on(p.run(
                "denied",
                |e: &String| e == "throttled",
                || async {
                    calls.fetch_add(1, Ordering::SeqCst);
                    Err("denied".to_owned())
                },
            ))
            .unwrap();
        assert_eq!(r, Err("denied".to_owned()));
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }
}
