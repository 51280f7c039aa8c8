//! Invariants over random sequences: ids stay unique and sequential, and tag filters
//! return exactly the objects a reference evaluation selects, never another cluster's.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;

use kops_mock::{Filter, MockAws, Tags};
use proptest::prelude::*;

const CLUSTERS: [&str; 3] = ["a.example.com", "b.example.com", "c.example.com"];

/// (cluster index, owned or shared, extra Name tag index)
fn objects() -> impl Strategy<Value = Vec<(usize, bool, u8)>> {
    prop::collection::vec((0..3usize, any::<bool>(), 0..4u8), 0..12)
}

fn tags_of(cluster: usize, owned: bool, name: u8) -> Tags {
    let c = CLUSTERS[cluster];
    let mut t = Tags::new();
    t.insert(
        format!("kubernetes.io/cluster/{c}"),
        if owned { "owned" } else { "shared" }.into(),
    );
    if owned {
        t.insert("KubernetesCluster".into(), c.into());
    }
    t.insert("Name".into(), format!("n{name}"));
    t
}

proptest! {
    #[test]
    fn tag_filters_select_exactly_the_matching_objects(
        objs in objects(),
        cluster in 0..3usize,
        names in prop::collection::btree_set(0..4u8, 1..3),
    ) {
        let m = MockAws::new();
        let mut made = Vec::new();
        for (i, (c, owned, name)) in objs.iter().enumerate() {
            let v = m
                .create_vpc(&format!("10.{i}.0.0/16"), false, tags_of(*c, *owned, *name))
                .unwrap();
            made.push((v.id, *c, *owned, *name));
        }
        let c = CLUSTERS[cluster];
        let name_values: Vec<String> = names.iter().map(|n| format!("n{n}")).collect();
        let got: BTreeSet<String> = m
            .describe_vpcs(
                &[],
                &[
                    Filter::tag_key(format!("kubernetes.io/cluster/{c}")),
                    Filter::new("tag:Name", name_values.clone()),
                ],
            )
            .unwrap()
            .into_iter()
            .map(|v| v.id)
            .collect();
        let want: BTreeSet<String> = made
            .iter()
            .filter(|(_, oc, _, n)| *oc == cluster && names.contains(n))
            .map(|(id, ..)| id.clone())
            .collect();
        prop_assert_eq!(&got, &want);
        // Owned-only: the legacy tag; never another cluster's objects.
        let owned: Vec<_> = m
            .describe_vpcs(&[], &[Filter::tag("KubernetesCluster", c)])
            .unwrap();
        for v in &owned {
            prop_assert_eq!(v.tags.get("KubernetesCluster").map(String::as_str), Some(c));
            prop_assert_eq!(
                v.tags.get(&format!("kubernetes.io/cluster/{c}")).map(String::as_str),
                Some("owned")
            );
        }
    }

    #[test]
    fn ids_are_unique_sequential_and_never_reused(ops in prop::collection::vec(any::<bool>(), 1..40)) {
        let m = MockAws::new();
        let mut live: Vec<String> = Vec::new();
        let mut seen = BTreeSet::new();
        let mut created = 0u64;
        for create in ops {
            if create || live.is_empty() {
                let g = m.create_internet_gateway(Tags::new()).unwrap();
                created += 1;
                prop_assert_eq!(&g.id, &format!("igw-{created}"));
                prop_assert!(seen.insert(g.id.clone()), "id {} reused", g.id);
                live.push(g.id);
            } else {
                let id = live.remove(0);
                m.delete_internet_gateway(&id).unwrap();
            }
        }
        let listed: BTreeSet<String> = m
            .describe_internet_gateways(&[], &[])
            .unwrap()
            .into_iter()
            .map(|g| g.id)
            .collect();
        prop_assert_eq!(listed, live.into_iter().collect::<BTreeSet<_>>());
    }
}
