//! SQS queues.

use std::collections::{BTreeMap, BTreeSet};

use crate::MockAws;
use crate::error::{Error, Result};
use crate::filter::Tags;

/// A queue.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Queue {
    /// Name.
    pub name: String,
    /// URL (`https://sqs.<region>.amazonaws.com/<account>/<name>`; never contacted).
    pub url: String,
    /// ARN.
    pub arn: String,
    /// Attributes (`MessageRetentionPeriod`, `Policy`, ...).
    pub attributes: BTreeMap<String, String>,
    /// Tags.
    pub tags: Tags,
}

#[derive(Debug, Default)]
pub(crate) struct SqsState {
    queues: BTreeMap<String, Queue>,
}

impl SqsState {
    pub(crate) fn collect_ids(&self, out: &mut BTreeSet<String>) {
        out.extend(self.queues.values().map(|q| q.arn.clone()));
    }
}

fn by_url<'a>(st: &'a mut SqsState, op: &str, url: &str) -> Result<&'a mut Queue> {
    st.queues
        .values_mut()
        .find(|q| q.url == url)
        .ok_or_else(|| Error::not_found(op, "queue", url))
}

impl MockAws {
    /// `CreateQueue`: idempotent for the same attributes; a different set fails with
    /// `QueueAlreadyExists`, as on AWS.
    pub fn create_queue(
        &self,
        name: &str,
        attributes: BTreeMap<String, String>,
        tags: Tags,
    ) -> Result<Queue> {
        let (partition, region, account) = (
            self.options().partition.clone(),
            self.options().region.clone(),
            self.options().account_id.clone(),
        );
        self.call("sqs:CreateQueue", |st, op| {
            let ok = !name.is_empty()
                && name.len() <= 80
                && name
                    .trim_end_matches(".fifo")
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
            if !ok {
                return Err(Error::invalid(
                    op,
                    "QueueName",
                    format!("{name:?}: 1..80 letters, digits, - and _"),
                ));
            }
            if let Some(q) = st.sqs.queues.get(name) {
                if q.attributes == attributes {
                    return Ok(q.clone());
                }
                return Err(Error::exists(op, "queue", name));
            }
            let q = Queue {
                name: name.to_owned(),
                url: format!("https://sqs.{region}.amazonaws.com/{account}/{name}"),
                arn: format!("arn:{partition}:sqs:{region}:{account}:{name}"),
                attributes,
                tags,
            };
            st.sqs.queues.insert(name.to_owned(), q.clone());
            Ok(q)
        })
    }

    /// `GetQueueUrl`.
    pub fn get_queue_url(&self, name: &str) -> Result<String> {
        self.call("sqs:GetQueueUrl", |st, op| {
            st.sqs
                .queues
                .get(name)
                .map(|q| q.url.clone())
                .ok_or_else(|| Error::not_found(op, "queue", name))
        })
    }

    /// `GetQueueAttributes` (all), plus `QueueArn`.
    pub fn get_queue_attributes(&self, url: &str) -> Result<BTreeMap<String, String>> {
        self.call("sqs:GetQueueAttributes", |st, op| {
            let q = by_url(&mut st.sqs, op, url)?;
            let mut a = q.attributes.clone();
            a.insert("QueueArn".into(), q.arn.clone());
            Ok(a)
        })
    }

    /// `SetQueueAttributes`: merges.
    pub fn set_queue_attributes(
        &self,
        url: &str,
        attributes: BTreeMap<String, String>,
    ) -> Result<()> {
        self.call("sqs:SetQueueAttributes", |st, op| {
            by_url(&mut st.sqs, op, url)?.attributes.extend(attributes);
            Ok(())
        })
    }

    /// `ListQueues`: URLs of queues whose name starts with `prefix`.
    pub fn list_queues(&self, prefix: &str) -> Result<Vec<String>> {
        self.call("sqs:ListQueues", |st, _| {
            Ok(st
                .sqs
                .queues
                .values()
                .filter(|q| q.name.starts_with(prefix))
                .map(|q| q.url.clone())
                .collect())
        })
    }

    /// `TagQueue`.
    pub fn tag_queue(&self, url: &str, tags: &Tags) -> Result<()> {
        self.call("sqs:TagQueue", |st, op| {
            by_url(&mut st.sqs, op, url)?
                .tags
                .extend(tags.iter().map(|(k, v)| (k.clone(), v.clone())));
            Ok(())
        })
    }

    /// `UntagQueue`.
    pub fn untag_queue(&self, url: &str, keys: &[String]) -> Result<()> {
        self.call("sqs:UntagQueue", |st, op| {
            let q = by_url(&mut st.sqs, op, url)?;
            for k in keys {
                q.tags.remove(k);
            }
            Ok(())
        })
    }

    /// `ListQueueTags`.
    pub fn list_queue_tags(&self, url: &str) -> Result<Tags> {
        self.call("sqs:ListQueueTags", |st, op| {
            Ok(by_url(&mut st.sqs, op, url)?.tags.clone())
        })
    }

    /// `DeleteQueue`.
    pub fn delete_queue(&self, url: &str) -> Result<()> {
        self.call("sqs:DeleteQueue", |st, op| {
            let name = by_url(&mut st.sqs, op, url)?.name.clone();
            st.sqs.queues.remove(&name);
            Ok(())
        })
    }
}
