//! The mock's shared state and id allocation.

use std::collections::{BTreeMap, BTreeSet};

use crate::{asg, ec2, elbv2, events, iam, route53, s3, sqs};

/// Sequential identifiers per prefix (`vpc-1`, `vpc-2`, ...), skipping any id already in
/// use (a fixture's `vpc-12345678` or `igw-1`) and never reusing a deleted one.
#[derive(Debug, Default)]
pub(crate) struct Ids {
    used: BTreeSet<String>,
    counters: BTreeMap<String, u64>,
}

impl Ids {
    /// The next free id `<prefix>-<n>`.
    pub(crate) fn next(&mut self, prefix: &str) -> String {
        let counter = self.counters.entry(prefix.to_owned()).or_insert(0);
        loop {
            *counter += 1;
            let id = format!("{prefix}-{counter}");
            if self.used.insert(id.clone()) {
                return id;
            }
        }
    }

    /// The next number for a prefix without a dash form (Route53 zone ids, ARN suffixes).
    pub(crate) fn next_number(&mut self, prefix: &str) -> u64 {
        let counter = self.counters.entry(prefix.to_owned()).or_insert(0);
        *counter += 1;
        *counter
    }

    /// Marks a caller-chosen id as used; false if it already was.
    pub(crate) fn reserve(&mut self, id: &str) -> bool {
        self.used.insert(id.to_owned())
    }
}

/// Everything the mock holds.
#[derive(Debug, Default)]
pub(crate) struct State {
    pub(crate) ids: Ids,
    pub(crate) ec2: ec2::Ec2State,
    pub(crate) asg: asg::AsgState,
    pub(crate) elbv2: elbv2::ElbState,
    pub(crate) iam: iam::IamState,
    pub(crate) route53: route53::Route53State,
    pub(crate) sqs: sqs::SqsState,
    pub(crate) events: events::EventsState,
    pub(crate) s3: s3::S3State,
}

impl State {
    /// Ids (or names/ARNs) of every object held, each prefixed with its kind.
    pub(crate) fn resource_ids(&self) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        self.ec2.collect_ids(&mut out);
        self.asg.collect_ids(&mut out);
        self.elbv2.collect_ids(&mut out);
        self.iam.collect_ids(&mut out);
        self.route53.collect_ids(&mut out);
        self.sqs.collect_ids(&mut out);
        self.events.collect_ids(&mut out);
        self.s3.collect_ids(&mut out);
        out
    }
}
