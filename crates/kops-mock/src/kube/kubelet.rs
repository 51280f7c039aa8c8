//! A fake kubelet for the mock cloud: every running instance of a kOps instance group
//! becomes a node of the fake API server.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::{Node, NodeSpec, Pod, PodSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::FakeKube;
use super::store::{running_ready, set_node_ready};
use crate::MockAws;
use crate::ec2::Instance;

/// Decides whether an instance's kubelet reports Ready.
pub type ReadyPolicy = Arc<dyn Fn(&Instance) -> bool + Send + Sync>;

/// Registers mock-cloud instances as nodes: name = instance id, `spec.providerID`
/// `aws:///<zone>/<id>`, labels `kops.k8s.io/instancegroup` and the role labels, Ready per
/// the policy (default: always). Control-plane nodes get the kube-apiserver,
/// kube-controller-manager and kube-scheduler static pods. The node of an instance that is
/// no longer running is removed.
#[derive(Clone)]
pub struct FakeKubelet {
    cloud: MockAws,
    kube: Arc<FakeKube>,
    ready: ReadyPolicy,
}

impl fmt::Debug for FakeKubelet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FakeKubelet").finish_non_exhaustive()
    }
}

fn role_of(i: &Instance) -> Option<&'static str> {
    let t = &i.tags;
    if t.contains_key("k8s.io/role/control-plane") || t.contains_key("k8s.io/role/master") {
        Some("control-plane")
    } else if t.contains_key("k8s.io/role/apiserver") {
        Some("api-server")
    } else if t.contains_key("k8s.io/role/node") {
        Some("node")
    } else {
        None
    }
}

impl FakeKubelet {
    /// A kubelet on every instance of `cloud`, reporting to `kube`.
    pub fn new(cloud: MockAws, kube: Arc<FakeKube>) -> FakeKubelet {
        FakeKubelet {
            cloud,
            kube,
            ready: Arc::new(|_| true),
        }
    }

    /// Sets which instances' nodes turn Ready.
    pub fn with_ready_policy(mut self, ready: ReadyPolicy) -> FakeKubelet {
        self.ready = ready;
        self
    }

    /// One pass: registers new instances, updates readiness, removes nodes of instances
    /// that stopped running. Bastions (and instances outside any group) never register.
    pub fn sync(&self) {
        let instances = self.cloud.describe_instances(&[], &[]).unwrap_or_default();
        let mut running = Vec::new();
        for i in &instances {
            if i.state != "running" {
                continue;
            }
            let (Some(role), Some(ig)) = (role_of(i), i.tags.get("kops.k8s.io/instancegroup"))
            else {
                continue;
            };
            running.push(i.id.clone());
            let ready = (self.ready)(i);
            let existing = self.kube.objects().nodes.get(&i.id).cloned();
            match existing {
                Some(n) if super::store::node_ready(&n) == ready => {}
                Some(_) => {
                    self.kube.set_ready(&i.id, ready);
                }
                None => {
                    let mut labels = std::collections::BTreeMap::new();
                    labels.insert("kops.k8s.io/instancegroup".to_string(), ig.clone());
                    labels.insert("kubernetes.io/hostname".to_string(), i.id.clone());
                    labels.insert(format!("node-role.kubernetes.io/{role}"), String::new());
                    let mut node = Node {
                        metadata: ObjectMeta {
                            name: Some(i.id.clone()),
                            labels: Some(labels),
                            ..Default::default()
                        },
                        spec: Some(NodeSpec {
                            provider_id: Some(format!("aws:///{}/{}", i.availability_zone, i.id)),
                            ..Default::default()
                        }),
                        status: None,
                    };
                    set_node_ready(&mut node, ready);
                    self.kube.put_node(node);
                    if role == "control-plane" {
                        for app in [
                            "kube-apiserver",
                            "kube-controller-manager",
                            "kube-scheduler",
                        ] {
                            self.kube.put_pod(static_pod(app, &i.id));
                        }
                    }
                }
            }
        }
        let gone: Vec<String> = self
            .kube
            .objects()
            .nodes
            .iter()
            .filter(|(name, n)| {
                n.spec
                    .as_ref()
                    .and_then(|s| s.provider_id.as_deref())
                    .is_some_and(|p| p.starts_with("aws:///"))
                    && !running.contains(name)
            })
            .map(|(name, _)| name.clone())
            .collect();
        for name in gone {
            self.kube.delete_node(&name);
        }
    }

    /// Runs [`sync`](Self::sync) every `period` until the returned task is aborted (under
    /// tokio's paused time this costs no wall-clock time).
    pub fn spawn(self, period: Duration) -> tokio::task::JoinHandle<()> {
        tokio::spawn(async move {
            loop {
                self.sync();
                tokio::time::sleep(period).await;
            }
        })
    }
}

/// A control-plane static pod as the kubelet mirrors it: `<app>-<node>` in kube-system,
/// labelled `k8s-app=<app>`, owned by the node, priority `system-cluster-critical`.
pub fn static_pod(app: &str, node: &str) -> Pod {
    Pod {
        metadata: ObjectMeta {
            name: Some(format!("{app}-{node}")),
            namespace: Some("kube-system".into()),
            labels: Some([("k8s-app".to_string(), app.to_string())].into()),
            owner_references: Some(vec![
                k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference {
                    api_version: "v1".into(),
                    kind: "Node".into(),
                    name: node.into(),
                    controller: Some(true),
                    ..Default::default()
                },
            ]),
            ..Default::default()
        },
        spec: Some(PodSpec {
            node_name: Some(node.into()),
            priority_class_name: Some("system-cluster-critical".into()),
            ..Default::default()
        }),
        status: Some(running_ready()),
    }
}
