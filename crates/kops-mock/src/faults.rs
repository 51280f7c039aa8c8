//! Fault injection: make chosen calls fail, deterministically.
//!
//! A [`FaultPlan`] is a list of rules, each naming which operations it applies to
//! (`ec2:DescribeVpcs`, a whole service `ec2:*`, or everything `*`), how often it fires
//! (the next N matching calls, or a fraction of them drawn from a seeded generator) and
//! which error it produces. A [`FaultInjector`] holds a plan and its state; the mock cloud
//! consults one on every call, and another backend can be wrapped with one the same way
//! (call [`FaultInjector::check`] before delegating).

use std::sync::Mutex;

use crate::error::{Error, Result};

/// Which error an injected fault produces.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum FaultKind {
    /// [`Error::Throttled`] with the service's throttling code (`RequestLimitExceeded` for
    /// EC2, `Throttling` elsewhere).
    Throttle,
    /// [`Error::Unavailable`] (`ServiceUnavailable`).
    Unavailable,
    /// [`Error::PermissionDenied`] with the service's code (`UnauthorizedOperation` for
    /// EC2, `AccessDenied` elsewhere).
    PermissionDenied,
    /// [`Error::Quota`] naming the limit, e.g. `VpcLimitExceeded`.
    Quota(String),
    /// [`Error::Invalid`] naming the request parameter, e.g. `CidrBlock`.
    Invalid(String),
    /// [`Error::NotFound`] of an object of this kind (`vpc`, `role`, ...), as when the
    /// object a call names was removed behind the caller's back.
    NotFound(&'static str),
}

/// How often a rule fires.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum FaultTrigger {
    /// The next `n` matching calls fail, later ones succeed.
    Next(u64),
    /// Each matching call fails with this probability (0.0..=1.0), drawn from the plan's
    /// seeded generator, so a given seed and call sequence always fails the same calls.
    Fraction(f64),
}

/// One rule of a [`FaultPlan`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct FaultRule {
    /// `service:Operation`, `service:*` or `*`.
    pub operations: String,
    /// How often it fires.
    pub trigger: FaultTrigger,
    /// What it produces.
    pub kind: FaultKind,
}

impl FaultRule {
    /// A rule that fails the next `n` calls matching `operations`.
    pub fn next(operations: impl Into<String>, n: u64, kind: FaultKind) -> Self {
        FaultRule {
            operations: operations.into(),
            trigger: FaultTrigger::Next(n),
            kind,
        }
    }

    /// A rule that fails a `fraction` of the calls matching `operations`.
    pub fn fraction(operations: impl Into<String>, fraction: f64, kind: FaultKind) -> Self {
        FaultRule {
            operations: operations.into(),
            trigger: FaultTrigger::Fraction(fraction.clamp(0.0, 1.0)),
            kind,
        }
    }

    fn applies_to(&self, operation: &str) -> bool {
        if self.operations == "*" {
            return true;
        }
        match self.operations.strip_suffix(":*") {
            Some(service) => operation.split_once(':').is_some_and(|(s, _)| s == service),
            None => self.operations == operation,
        }
    }
}

/// A set of fault rules and the seed for fractional ones.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct FaultPlan {
    /// The rules, consulted in order; the first that fires decides.
    pub rules: Vec<FaultRule>,
    /// Seed of the generator for [`FaultTrigger::Fraction`].
    pub seed: u64,
}

impl FaultPlan {
    /// An empty plan (nothing fails).
    pub fn new() -> Self {
        FaultPlan::default()
    }

    /// Sets the seed.
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Adds a rule.
    pub fn with_rule(mut self, rule: FaultRule) -> Self {
        self.rules.push(rule);
        self
    }

    /// Throttles a `fraction` of all calls, the "30% throttling" wrapper of the
    /// backend tests: `FaultPlan::throttle_fraction(0.3, seed)`.
    pub fn throttle_fraction(fraction: f64, seed: u64) -> Self {
        FaultPlan::new()
            .with_seed(seed)
            .with_rule(FaultRule::fraction("*", fraction, FaultKind::Throttle))
    }
}

#[derive(Debug)]
struct InjectorState {
    plan: FaultPlan,
    /// Calls fired so far by each `Next` rule.
    fired: Vec<u64>,
    rng: u64,
    injected: u64,
}

/// A [`FaultPlan`] with its state; shareable across threads.
#[derive(Debug)]
pub struct FaultInjector {
    state: Mutex<InjectorState>,
}

impl Default for FaultInjector {
    fn default() -> Self {
        FaultInjector::new(FaultPlan::default())
    }
}

impl FaultInjector {
    /// An injector running `plan` from its start.
    pub fn new(plan: FaultPlan) -> Self {
        FaultInjector {
            state: Mutex::new(InjectorState {
                fired: vec![0; plan.rules.len()],
                rng: plan.seed,
                plan,
                injected: 0,
            }),
        }
    }

    /// Replaces the plan and restarts its state.
    pub fn set_plan(&self, plan: FaultPlan) {
        let mut st = self.lock();
        *st = InjectorState {
            fired: vec![0; plan.rules.len()],
            rng: plan.seed,
            plan,
            injected: 0,
        };
    }

    /// How many faults have been injected since the plan was set.
    pub fn injected(&self) -> u64 {
        self.lock().injected
    }

    /// Decides whether `operation` (`service:Operation`) fails now; returns the injected
    /// error if so. Every call advances the plan's state.
    pub fn check(&self, operation: &str) -> Result<()> {
        let mut st = self.lock();
        let mut fire: Option<FaultKind> = None;
        for i in 0..st.plan.rules.len() {
            let rule = &st.plan.rules[i];
            if !rule.applies_to(operation) {
                continue;
            }
            let kind = rule.kind.clone();
            let fires = match rule.trigger {
                FaultTrigger::Next(n) => {
                    if st.fired[i] < n {
                        st.fired[i] += 1;
                        true
                    } else {
                        false
                    }
                }
                FaultTrigger::Fraction(f) => {
                    let draw = next_unit(&mut st.rng);
                    draw < f
                }
            };
            if fires {
                fire = Some(kind);
                break;
            }
        }
        match fire {
            None => Ok(()),
            Some(kind) => {
                st.injected += 1;
                Err(fault_error(operation, &kind))
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, InjectorState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn fault_error(operation: &str, kind: &FaultKind) -> Error {
    let service = operation.split_once(':').map_or(operation, |(s, _)| s);
    match kind {
        FaultKind::Throttle => Error::Throttled {
            operation: operation.to_owned(),
            code: match service {
                "ec2" => "RequestLimitExceeded",
                "route53" => "PriorRequestNotComplete",
                "s3" => "SlowDown",
                "events" => "ThrottlingException",
                _ => "Throttling",
            }
            .to_owned(),
        },
        FaultKind::Unavailable => Error::Unavailable {
            operation: operation.to_owned(),
            code: "ServiceUnavailable".to_owned(),
        },
        FaultKind::PermissionDenied => Error::PermissionDenied {
            operation: operation.to_owned(),
            code: match service {
                "ec2" => "UnauthorizedOperation",
                _ => "AccessDenied",
            }
            .to_owned(),
        },
        FaultKind::Quota(limit) => Error::Quota {
            operation: operation.to_owned(),
            code: limit.clone(),
        },
        FaultKind::Invalid(field) => Error::invalid(operation, field.clone(), "injected fault"),
        FaultKind::NotFound(kind) => Error::not_found(operation, kind, "(injected)"),
    }
}

/// splitmix64 step mapped to [0, 1).
fn next_unit(state: &mut u64) -> f64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_n_then_succeeds() {
        let inj = FaultInjector::new(FaultPlan::new().with_rule(FaultRule::next(
            "ec2:DescribeVpcs",
            2,
            FaultKind::Throttle,
        )));
        assert!(inj.check("ec2:DescribeSubnets").is_ok());
        let e = inj.check("ec2:DescribeVpcs").unwrap_err();
        assert!(e.is_retryable());
        assert_eq!(e.code(), "RequestLimitExceeded");
        assert!(inj.check("ec2:DescribeVpcs").is_err());
        assert!(inj.check("ec2:DescribeVpcs").is_ok());
        assert_eq!(inj.injected(), 2);
    }

    #[test]
    fn service_wildcard() {
        let inj = FaultInjector::new(FaultPlan::new().with_rule(FaultRule::next(
            "iam:*",
            1,
            FaultKind::Unavailable,
        )));
        assert!(inj.check("ec2:CreateVpc").is_ok());
        let e = inj.check("iam:GetRole").unwrap_err();
        assert_eq!(e.code(), "ServiceUnavailable");
    }

    #[test]
    fn fraction_is_deterministic_and_roughly_right() {
        let run = |seed| {
            let inj = FaultInjector::new(FaultPlan::throttle_fraction(0.3, seed));
            (0..1000)
                .map(|_| inj.check("ec2:DescribeVpcs").is_err())
                .collect::<Vec<_>>()
        };
        let a = run(7);
        assert_eq!(a, run(7));
        assert_ne!(a, run(8));
        let failed = a.iter().filter(|f| **f).count();
        assert!((230..370).contains(&failed), "failed {failed} of 1000");
    }

    #[test]
    fn set_plan_restarts() {
        let inj = FaultInjector::new(FaultPlan::throttle_fraction(1.0, 1));
        assert!(inj.check("s3:PutObject").is_err());
        inj.set_plan(FaultPlan::new());
        assert!(inj.check("s3:PutObject").is_ok());
        assert_eq!(inj.injected(), 0);
    }
}
