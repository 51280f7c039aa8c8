//! The addresses a cluster's API answers on, as its cloud reports them (kOps'
//! `ApiIngressStatus`): found by `aws::api_ingress` and `gce::api_ingress`, chosen from
//! by [`ApiIngress::choose`].

/// One address of a cluster's API load balancer.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[non_exhaustive]
pub struct ApiIngress {
    /// Reachable only inside the cluster's network (an internal load balancer).
    pub internal: bool,
    /// A DNS name (AWS) or an IP address (GCE).
    pub address: String,
}

impl ApiIngress {
    /// An address, internal or not.
    pub fn new(address: impl Into<String>, internal: bool) -> Self {
        ApiIngress {
            address: address.into(),
            internal,
        }
    }

    /// The address a client outside the cluster should use, as kOps chooses it: the
    /// first external one in order, else the first internal one; `None` when there is
    /// none.
    pub fn choose(found: &[ApiIngress]) -> Option<&ApiIngress> {
        found.iter().min()
    }
}

#[cfg(test)]
mod tests {
    use super::ApiIngress;

    #[test]
    fn an_external_address_is_chosen_before_an_internal_one() {
        let found = [
            ApiIngress::new("10.0.0.2", true),
            ApiIngress::new("203.0.113.9", false),
            ApiIngress::new("203.0.113.1", false),
        ];
        assert_eq!(
            ApiIngress::choose(&found).map(|a| a.address.as_str()),
            Some("203.0.113.1")
        );
        assert_eq!(
            ApiIngress::choose(&found[..1]).map(|a| a.address.as_str()),
            Some("10.0.0.2")
        );
        assert_eq!(ApiIngress::choose(&[]), None);
    }
}
