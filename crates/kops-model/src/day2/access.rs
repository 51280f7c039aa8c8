//! Why the cluster's API could not be reached: the TLS and authentication failures a user
//! fixes, read out of a client error so that a command can say what failed in one line
//! instead of a TLS library's text.

use std::fmt;

/// A failure to reach the cluster's API that the user fixes.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ApiAccessProblem {
    /// The server's certificate is not signed by a CA the client trusts.
    UntrustedServer,
    /// The server's certificate does not name the server as the client addressed it.
    WrongServerName {
        /// The name (or address) the client checked.
        expected: String,
        /// The names and addresses the certificate holds.
        presented: Vec<String>,
    },
    /// The server's certificate is expired or not yet valid.
    ServerCertificateNotValidNow,
    /// The server refused the client's credentials (`401 Unauthorized`).
    Unauthorized,
}

impl fmt::Display for ApiAccessProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ApiAccessProblem::UntrustedServer => f.write_str(
                "the API server's certificate is not signed by the cluster CA the client \
                 trusts (the kubeconfig's certificate-authority-data): the server is not this \
                 cluster's, or the kubeconfig is another cluster's (`kops export kubeconfig` \
                 writes this one's)",
            ),
            ApiAccessProblem::WrongServerName {
                expected,
                presented,
            } => write!(
                f,
                "the API server's certificate is not valid for {expected} (it names {}): \
                 the kubeconfig's server or tls-server-name must be one of them",
                presented.join(", ")
            ),
            ApiAccessProblem::ServerCertificateNotValidNow => f.write_str(
                "the API server's certificate is expired or not yet valid (check this \
                 machine's clock, then the control plane's certificates)",
            ),
            ApiAccessProblem::Unauthorized => f.write_str(
                "the API server refused the credentials (401 Unauthorized): the client \
                 certificate is expired or not signed by this cluster's CA, or the token is \
                 unknown; `kops export kubeconfig --admin` writes a fresh credential",
            ),
        }
    }
}

/// The problem somewhere in `e`'s chain of causes, if it is one a user fixes: kube-rs'
/// `401` status, or rustls' verdict on the server's certificate (also where an I/O error
/// carries it).
pub fn api_access_problem(e: &(dyn std::error::Error + 'static)) -> Option<ApiAccessProblem> {
    let mut cur = Some(e);
    while let Some(c) = cur {
        if let Some(kube::Error::Api(s)) = c.downcast_ref::<kube::Error>()
            && s.code == 401
        {
            return Some(ApiAccessProblem::Unauthorized);
        }
        if let Some(t) = c.downcast_ref::<rustls::Error>() {
            return from_rustls(t);
        }
        // An I/O error's `source` skips the error it wraps: look at that one too.
        if let Some(inner) = c
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
            && let Some(p) = api_access_problem(inner)
        {
            return Some(p);
        }
        cur = c.source();
    }
    None
}

fn from_rustls(e: &rustls::Error) -> Option<ApiAccessProblem> {
    use rustls::CertificateError as C;
    let rustls::Error::InvalidCertificate(c) = e else {
        return None;
    };
    Some(match c {
        C::UnknownIssuer | C::BadSignature => ApiAccessProblem::UntrustedServer,
        C::NotValidForNameContext {
            expected,
            presented,
        } => ApiAccessProblem::WrongServerName {
            expected: server_name(expected),
            presented: presented.iter().map(|p| presented_name(p)).collect(),
        },
        C::NotValidForName => ApiAccessProblem::WrongServerName {
            expected: "the server's name".into(),
            presented: Vec::new(),
        },
        C::Expired | C::ExpiredContext { .. } | C::NotValidYet | C::NotValidYetContext { .. } => {
            ApiAccessProblem::ServerCertificateNotValidNow
        }
        _ => return None,
    })
}

/// A name as rustls reports it (`DnsName("a.example")`, `IpAddress(10.0.0.1)`), bare.
fn presented_name(p: &str) -> String {
    let inner = p
        .strip_prefix("DnsName(")
        .or_else(|| p.strip_prefix("IpAddress("))
        .and_then(|s| s.strip_suffix(')'))
        .unwrap_or(p);
    inner.trim_matches('"').to_owned()
}

fn server_name(n: &rustls::pki_types::ServerName<'_>) -> String {
    match n {
        rustls::pki_types::ServerName::DnsName(d) => d.as_ref().to_owned(),
        rustls::pki_types::ServerName::IpAddress(ip) => std::net::IpAddr::from(*ip).to_string(),
        _ => "the server".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presented_names_are_bare() {
        assert_eq!(presented_name("DnsName(\"kubernetes\")"), "kubernetes");
        assert_eq!(presented_name("IpAddress(100.64.0.1)"), "100.64.0.1");
        assert_eq!(presented_name("other"), "other");
    }

    #[test]
    fn a_401_and_rustls_verdicts_are_read_through_io_errors() {
        let status = kube::core::Status::failure("Unauthorized", "Unauthorized").with_code(401);
        let e = kube::Error::Api(Box::new(status));
        assert_eq!(api_access_problem(&e), Some(ApiAccessProblem::Unauthorized));
        let tls = rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer);
        let io = std::io::Error::other(tls);
        assert_eq!(
            api_access_problem(&io),
            Some(ApiAccessProblem::UntrustedServer)
        );
        let other = std::io::Error::other("connection refused");
        assert_eq!(api_access_problem(&other), None);
    }
}
