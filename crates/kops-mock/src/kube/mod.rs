//! A stateful fake Kubernetes API server on 127.0.0.1 (feature `kube`), for tests that drive
//! `kops validate cluster` and `kops rolling-update cluster` through the real kube-rs client.
//!
//! [`FakeKube::start`] binds a free loopback port and serves plain HTTP/1.1. It keeps nodes,
//! pods and PodDisruptionBudgets in memory and answers the calls kOps' day-two commands make,
//! with the API server's semantics where they matter to them:
//!
//! - `GET /version`; nodes: list, get, create, replace, delete and patch (JSON merge patch;
//!   a strategic-merge patch is applied the same way, which replaces lists such as
//!   `spec.taints` whole — the day-two code always sends whole lists);
//! - pods: list (all namespaces or one, `fieldSelector=spec.nodeName=<node>`), get, create,
//!   delete; `POST .../pods/<name>/eviction` checks every PodDisruptionBudget of the pod's
//!   namespace whose selector matches the pod, and refuses with 429 and a
//!   `DisruptionBudget` cause naming the budget when one would be violated;
//! - a **controller**: an evicted or orphaned pod that has a controller owner (other than a
//!   DaemonSet) is recreated on a schedulable, Ready node with the fewest pods (Pending
//!   without a node when there is none), so budgets behave as they do with a Deployment;
//! - PodDisruptionBudgets: list and create (`policy/v1`).
//!
//! [`kubelet::FakeKubelet`] registers every running mock-cloud instance as a node and turns
//! it Ready (or not, by a policy the test sets), runs the control-plane static pods, and
//! removes the node of a terminated instance.
//!
//! [`FakeKube::start_tls`] serves the same over HTTPS ([`KubeTls`]: a serving certificate
//! and key, the client CA, bearer tokens), authenticating each request as kube-apiserver
//! does: a client certificate that chains to the client CA and is valid now, or a known
//! bearer token; otherwise `401 Unauthorized`. Discovery (`/api`, `/api/v1`, `/apis`)
//! answers what kubectl asks before `get nodes`.
//!
//! The server never listens on anything but 127.0.0.1.

pub mod kubelet;
mod server;
mod store;
mod tls;

pub use server::FakeKube;
pub use store::{Eviction, KubeObjects, KubeRequest};
pub use tls::KubeTls;
