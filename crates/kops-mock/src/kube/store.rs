//! The objects of the fake API server and the rules that change them (eviction with
//! budgets, the controller that recreates pods).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Node, NodeCondition, Pod, PodCondition, PodStatus};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

/// One eviction the server was asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Eviction {
    /// `<namespace>/<pod>`.
    pub pod: String,
    /// The node the pod ran on.
    pub node: Option<String>,
    /// The budget that refused it; `None` when the pod was evicted.
    pub blocked_by: Option<String>,
}

/// One request that changed (or tried to change) something: every call but a GET.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct KubeRequest {
    /// `PATCH`, `POST`, `DELETE`, `PUT`.
    pub method: String,
    /// The path, e.g. `/api/v1/nodes/i-1`.
    pub path: String,
    /// The body, as sent (a patch, an eviction).
    pub body: String,
}

/// Everything the fake API server holds.
#[derive(Debug, Default, Clone)]
#[non_exhaustive]
pub struct KubeObjects {
    /// Nodes by name.
    pub nodes: BTreeMap<String, Node>,
    /// Pods by `(namespace, name)`.
    pub pods: BTreeMap<(String, String), Pod>,
    /// Budgets by `(namespace, name)`.
    pub pdbs: BTreeMap<(String, String), PodDisruptionBudget>,
    /// Every eviction request, in order.
    pub evictions: Vec<Eviction>,
    /// Every request but the reads, in order.
    pub requests: Vec<KubeRequest>,
    /// The last resource version handed out.
    pub resource_version: u64,
    /// Counter for the names of recreated pods.
    pub(crate) recreated: u64,
}

/// Whether a node has condition `Ready=True`.
pub(crate) fn node_ready(node: &Node) -> bool {
    node.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

/// Sets the node's `Ready` condition.
pub(crate) fn set_node_ready(node: &mut Node, ready: bool) {
    let status = node.status.get_or_insert_with(Default::default);
    let conditions = status.conditions.get_or_insert_with(Vec::new);
    conditions.retain(|c| c.type_ != "Ready");
    conditions.push(NodeCondition {
        type_: "Ready".into(),
        status: if ready { "True" } else { "False" }.into(),
        reason: Some(
            if ready {
                "KubeletReady"
            } else {
                "KubeletNotReady"
            }
            .into(),
        ),
        ..Default::default()
    });
}

fn schedulable(node: &Node) -> bool {
    let spec = node.spec.as_ref();
    let cordoned = spec.and_then(|s| s.unschedulable).unwrap_or(false);
    let tainted = spec.and_then(|s| s.taints.as_ref()).is_some_and(|t| {
        t.iter()
            .any(|t| t.effect == "NoSchedule" || t.effect == "NoExecute")
    });
    !cordoned && !tainted && node_ready(node)
}

fn prefers_not(node: &Node) -> bool {
    node.spec
        .as_ref()
        .and_then(|s| s.taints.as_ref())
        .is_some_and(|t| t.iter().any(|t| t.effect == "PreferNoSchedule"))
}

/// A running pod whose containers are all ready.
pub(crate) fn running_ready() -> PodStatus {
    PodStatus {
        phase: Some("Running".into()),
        conditions: Some(vec![PodCondition {
            type_: "Ready".into(),
            status: "True".into(),
            ..Default::default()
        }]),
        ..Default::default()
    }
}

fn pod_healthy(pod: &Pod) -> bool {
    pod.metadata.deletion_timestamp.is_none()
        && pod.status.as_ref().is_some_and(|s| {
            s.phase.as_deref() == Some("Running")
                && s.conditions
                    .as_ref()
                    .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
        })
}

fn selector_matches(selector: Option<&LabelSelector>, pod: &Pod) -> bool {
    let Some(sel) = selector else {
        return false;
    };
    let labels = pod.metadata.labels.clone().unwrap_or_default();
    let by_labels = sel
        .match_labels
        .as_ref()
        .is_none_or(|m| m.iter().all(|(k, v)| labels.get(k) == Some(v)));
    let by_exprs = sel.match_expressions.as_ref().is_none_or(|exprs| {
        exprs.iter().all(|e| {
            let values = e.values.clone().unwrap_or_default();
            let have = labels.get(&e.key);
            match e.operator.as_str() {
                "In" => have.is_some_and(|v| values.contains(v)),
                "NotIn" => have.is_none_or(|v| !values.contains(v)),
                "Exists" => have.is_some(),
                "DoesNotExist" => have.is_none(),
                _ => false,
            }
        })
    });
    by_labels && by_exprs
}

/// `value` of a budget field against `total` pods, percentages rounded up as the
/// disruption controller does.
fn scaled(value: &IntOrString, total: i64) -> i64 {
    match value {
        IntOrString::Int(n) => i64::from(*n),
        IntOrString::String(s) => {
            let pct: i64 = s.trim_end_matches('%').parse().unwrap_or(0);
            (pct * total + 99) / 100
        }
    }
}

fn controller_kind(pod: &Pod) -> Option<String> {
    pod.metadata
        .owner_references
        .as_ref()?
        .iter()
        .find(|o| o.controller == Some(true))
        .map(|o| o.kind.clone())
}

impl KubeObjects {
    /// The next resource version.
    pub(crate) fn bump(&mut self) -> String {
        self.resource_version += 1;
        self.resource_version.to_string()
    }

    /// The budget that would be violated by evicting `pod`, with the API server's message.
    fn blocking_budget(&self, ns: &str, pod: &Pod) -> Option<(String, String)> {
        for ((pns, name), pdb) in &self.pdbs {
            if pns != ns {
                continue;
            }
            let spec = pdb.spec.clone().unwrap_or_default();
            if !selector_matches(spec.selector.as_ref(), pod) {
                continue;
            }
            let matching: Vec<&Pod> = self
                .pods
                .iter()
                .filter(|((n, _), p)| n == ns && selector_matches(spec.selector.as_ref(), p))
                .map(|(_, p)| p)
                .collect();
            let expected = matching.len() as i64;
            let healthy = matching.iter().filter(|p| pod_healthy(p)).count() as i64;
            let (allowed, desired) = if let Some(min) = &spec.min_available {
                let min = scaled(min, expected);
                (healthy - min, min)
            } else if let Some(max) = &spec.max_unavailable {
                let max = scaled(max, expected);
                (max - (expected - healthy), expected - max)
            } else {
                (1, 0)
            };
            // Evicting an unhealthy pod does not lower the healthy count.
            if allowed < 1 && pod_healthy(pod) {
                return Some((
                    name.clone(),
                    format!(
                        "The disruption budget {name} needs {desired} healthy pods and has {healthy} currently"
                    ),
                ));
            }
        }
        None
    }

    /// Evicts `ns/name`: `Err((name, message))` naming the budget that refuses it; `Ok(false)`
    /// when there is no such pod.
    pub(crate) fn evict(&mut self, ns: &str, name: &str) -> Result<bool, (String, String)> {
        let key = (ns.to_owned(), name.to_owned());
        let Some(pod) = self.pods.get(&key).cloned() else {
            return Ok(false);
        };
        let node = pod.spec.as_ref().and_then(|s| s.node_name.clone());
        let record = |blocked_by| Eviction {
            pod: format!("{ns}/{name}"),
            node: node.clone(),
            blocked_by,
        };
        if let Some((pdb, message)) = self.blocking_budget(ns, &pod) {
            self.evictions.push(record(Some(pdb.clone())));
            return Err((pdb, message));
        }
        self.evictions.push(record(None));
        self.pods.remove(&key);
        self.reschedule(pod);
        Ok(true)
    }

    /// Deletes a pod; its controller (if any) recreates it.
    pub(crate) fn delete_pod(&mut self, ns: &str, name: &str) -> Option<Pod> {
        let pod = self.pods.remove(&(ns.to_owned(), name.to_owned()))?;
        self.reschedule(pod.clone());
        Some(pod)
    }

    /// Removes a node and every pod bound to it; controllers recreate theirs elsewhere.
    pub(crate) fn delete_node(&mut self, name: &str) -> Option<Node> {
        let node = self.nodes.remove(name)?;
        let bound: Vec<(String, String)> = self
            .pods
            .iter()
            .filter(|(_, p)| p.spec.as_ref().and_then(|s| s.node_name.as_deref()) == Some(name))
            .map(|(k, _)| k.clone())
            .collect();
        for (ns, pod) in bound {
            self.delete_pod(&ns, &pod);
        }
        Some(node)
    }

    /// The controller's part: a replacement for a removed pod that has a (non-DaemonSet)
    /// controller owner, bound to the least-loaded schedulable node.
    fn reschedule(&mut self, old: Pod) {
        match controller_kind(&old).as_deref() {
            None | Some("DaemonSet") | Some("Node") => return,
            Some(_) => {}
        }
        let ns = old
            .metadata
            .namespace
            .clone()
            .unwrap_or_else(|| "default".into());
        let base = old
            .metadata
            .generate_name
            .clone()
            .unwrap_or_else(|| format!("{}-", old.metadata.name.clone().unwrap_or_default()));
        self.recreated += 1;
        let name = format!("{base}r{}", self.recreated);
        let mut pod = old;
        pod.metadata.name = Some(name.clone());
        pod.metadata.uid = Some(format!("uid-{name}"));
        pod.metadata.resource_version = Some(self.bump());
        pod.metadata.deletion_timestamp = None;
        let node = self.pick_node();
        let spec = pod.spec.get_or_insert_with(Default::default);
        spec.node_name = node.clone();
        pod.status = Some(if node.is_some() {
            running_ready()
        } else {
            PodStatus {
                phase: Some("Pending".into()),
                ..Default::default()
            }
        });
        self.pods.insert((ns, name), pod);
    }

    fn pick_node(&self) -> Option<String> {
        let load = |n: &str| {
            self.pods
                .values()
                .filter(|p| p.spec.as_ref().and_then(|s| s.node_name.as_deref()) == Some(n))
                .count()
        };
        self.nodes
            .iter()
            .filter(|(_, n)| schedulable(n))
            .min_by_key(|(name, n)| (prefers_not(n), load(name), (*name).clone()))
            .map(|(name, _)| name.clone())
    }

    /// Binds every Pending controller-owned pod to a schedulable node, as the scheduler would
    /// once capacity appears.
    pub(crate) fn schedule_pending(&mut self) {
        let pending: Vec<(String, String)> = self
            .pods
            .iter()
            .filter(|(_, p)| {
                p.spec.as_ref().and_then(|s| s.node_name.as_ref()).is_none()
                    && p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Pending")
            })
            .map(|(k, _)| k.clone())
            .collect();
        for key in pending {
            let Some(node) = self.pick_node() else {
                return;
            };
            if let Some(p) = self.pods.get_mut(&key) {
                p.spec.get_or_insert_with(Default::default).node_name = Some(node);
                p.status = Some(running_ready());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::PodSpec;
    use k8s_openapi::api::policy::v1::PodDisruptionBudgetSpec;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};

    fn node(name: &str) -> Node {
        let mut n = Node {
            metadata: ObjectMeta {
                name: Some(name.into()),
                ..Default::default()
            },
            ..Default::default()
        };
        set_node_ready(&mut n, true);
        n
    }

    fn pod(name: &str, node: &str) -> Pod {
        Pod {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some("default".into()),
                labels: Some([("app".to_string(), "web".to_string())].into()),
                owner_references: Some(vec![OwnerReference {
                    kind: "ReplicaSet".into(),
                    name: "web".into(),
                    controller: Some(true),
                    ..Default::default()
                }]),
                ..Default::default()
            },
            spec: Some(PodSpec {
                node_name: Some(node.into()),
                ..Default::default()
            }),
            status: Some(running_ready()),
        }
    }

    fn objects(min_available: i32) -> KubeObjects {
        let mut o = KubeObjects::default();
        for n in ["a", "b"] {
            o.nodes.insert(n.into(), node(n));
        }
        o.pods
            .insert(("default".into(), "web-1".into()), pod("web-1", "a"));
        o.pods
            .insert(("default".into(), "web-2".into()), pod("web-2", "a"));
        o.pdbs.insert(
            ("default".into(), "web".into()),
            PodDisruptionBudget {
                metadata: ObjectMeta {
                    name: Some("web".into()),
                    namespace: Some("default".into()),
                    ..Default::default()
                },
                spec: Some(PodDisruptionBudgetSpec {
                    min_available: Some(IntOrString::Int(min_available)),
                    selector: Some(LabelSelector {
                        match_labels: Some([("app".to_string(), "web".to_string())].into()),
                        ..Default::default()
                    }),
                    ..Default::default()
                }),
                status: None,
            },
        );
        o
    }

    #[test]
    fn a_budget_refuses_an_eviction_that_would_violate_it_and_names_itself() {
        let mut o = objects(2);
        let err = o.evict("default", "web-1").unwrap_err();
        assert_eq!(err.0, "web");
        assert!(
            err.1.contains("needs 2 healthy pods and has 2"),
            "{}",
            err.1
        );
        assert!(o.pods.contains_key(&("default".into(), "web-1".into())));
        assert_eq!(o.evictions[0].blocked_by.as_deref(), Some("web"));
    }

    #[test]
    fn an_allowed_eviction_recreates_the_pod_on_a_schedulable_node() {
        let mut o = objects(1);
        o.nodes
            .get_mut("a")
            .unwrap()
            .spec
            .get_or_insert_with(Default::default)
            .unschedulable = Some(true);
        assert_eq!(o.evict("default", "web-1"), Ok(true));
        let replacement = o
            .pods
            .values()
            .find(|p| p.metadata.name.as_deref().unwrap().starts_with("web-1-r"))
            .unwrap();
        assert_eq!(
            replacement.spec.as_ref().unwrap().node_name.as_deref(),
            Some("b")
        );
        // The replacement is healthy, so the budget allows the second eviction too.
        assert_eq!(o.evict("default", "web-2"), Ok(true));
    }

    #[test]
    fn without_a_schedulable_node_the_replacement_stays_pending() {
        let mut o = objects(0);
        o.nodes.remove("b");
        set_node_ready(o.nodes.get_mut("a").unwrap(), false);
        assert_eq!(o.evict("default", "web-1"), Ok(true));
        let pending = o
            .pods
            .values()
            .filter(|p| p.status.as_ref().unwrap().phase.as_deref() == Some("Pending"))
            .count();
        assert_eq!(pending, 1);
        set_node_ready(o.nodes.get_mut("a").unwrap(), true);
        o.schedule_pending();
        assert!(o.pods.values().all(pod_healthy));
    }

    #[test]
    fn percentages_round_up() {
        assert_eq!(scaled(&IntOrString::String("50%".into()), 3), 2);
        assert_eq!(scaled(&IntOrString::String("100%".into()), 3), 3);
        assert_eq!(scaled(&IntOrString::Int(1), 3), 1);
    }
}
