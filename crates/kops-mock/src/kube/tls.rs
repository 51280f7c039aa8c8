//! HTTPS for the fake API server, authenticated as kube-apiserver authenticates: the
//! handshake asks for a client certificate but does not require one (Go's
//! `RequestClientCert`), and each request is then authenticated by a client certificate
//! that chains to the client CA (`--client-ca-file`) and is within its validity, or by a
//! bearer token; anything else gets `401 Unauthorized`, as kube-apiserver answers.

use std::convert::Infallible;
use std::fmt;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, UnixTime};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::server::{ServerConfig, WebPkiClientVerifier};
use rustls::{DigitallySignedStruct, DistinguishedName, RootCertStore, SignatureScheme};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_rustls::TlsAcceptor;

use super::store::KubeObjects;

/// What the fake API server needs to serve HTTPS: its serving certificate chain and key
/// (PEM), the CA its clients' certificates must chain to, and the bearer tokens it accepts.
/// `Debug` does not show the key or the tokens.
#[derive(Clone)]
#[non_exhaustive]
pub struct KubeTls {
    serving_chain_pem: String,
    serving_key_pem: String,
    client_ca_pem: String,
    tokens: Vec<String>,
}

impl fmt::Debug for KubeTls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KubeTls")
            .field("serving_chain_pem", &self.serving_chain_pem)
            .field("client_ca_pem", &self.client_ca_pem)
            .field("tokens", &self.tokens.len())
            .finish_non_exhaustive()
    }
}

impl KubeTls {
    /// Serves `serving_chain_pem` (the leaf first) with `serving_key_pem`, and
    /// authenticates client certificates signed by a CA of `client_ca_pem`.
    pub fn new(
        serving_chain_pem: impl Into<String>,
        serving_key_pem: impl Into<String>,
        client_ca_pem: impl Into<String>,
    ) -> Self {
        KubeTls {
            serving_chain_pem: serving_chain_pem.into(),
            serving_key_pem: serving_key_pem.into(),
            client_ca_pem: client_ca_pem.into(),
            tokens: Vec::new(),
        }
    }

    /// Also authenticates requests carrying `Authorization: Bearer <token>`.
    pub fn with_token(mut self, token: impl Into<String>) -> Self {
        self.tokens.push(token.into());
        self
    }
}

fn invalid(what: &str, e: impl fmt::Display) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidInput, format!("{what}: {e}"))
}

/// Accepts any client certificate during the handshake (checking only that the client
/// holds its key), leaving the decision to the request, as kube-apiserver does.
#[derive(Debug)]
struct RequestClientCert(Arc<dyn ClientCertVerifier>);

impl ClientCertVerifier for RequestClientCert {
    fn offer_client_auth(&self) -> bool {
        true
    }

    fn client_auth_mandatory(&self) -> bool {
        false
    }

    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        self.0.root_hint_subjects()
    }

    fn verify_client_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        Ok(ClientCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

/// The server's TLS configuration and the verifier requests are authenticated with.
fn server_config(
    tls: &KubeTls,
) -> std::io::Result<(Arc<ServerConfig>, Arc<dyn ClientCertVerifier>)> {
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(tls.client_ca_pem.as_bytes()) {
        let cert = cert.map_err(|e| invalid("client CA", e))?;
        roots.add(cert).map_err(|e| invalid("client CA", e))?;
    }
    let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider.clone())
        .allow_unauthenticated()
        .build()
        .map_err(|e| invalid("client CA", e))?;
    let chain = CertificateDer::pem_slice_iter(tls.serving_chain_pem.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| invalid("serving certificate", e))?;
    // The key's own parse error could quote it: name the field only.
    let key = PrivateKeyDer::from_pem_slice(tls.serving_key_pem.as_bytes())
        .map_err(|_| invalid("serving key", "not a PEM private key"))?;
    let config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| invalid("TLS versions", e))?
        .with_client_cert_verifier(Arc::new(RequestClientCert(verifier.clone())))
        .with_single_cert(chain, key)
        .map_err(|e| invalid("serving certificate", e))?;
    Ok((Arc::new(config), verifier))
}

/// Whether a request on a connection whose client presented `certs` (if any) carrying
/// `authorization` is authenticated.
fn authenticated(
    verifier: &dyn ClientCertVerifier,
    tokens: &[String],
    certs: Option<&[CertificateDer<'static>]>,
    authorization: Option<&str>,
) -> bool {
    let by_cert = certs.is_some_and(|c| match c.split_first() {
        Some((leaf, rest)) => verifier
            .verify_client_cert(leaf, rest, UnixTime::now())
            .is_ok(),
        None => false,
    });
    let by_token = authorization
        .and_then(|a| a.strip_prefix("Bearer "))
        .is_some_and(|t| tokens.iter().any(|k| k == t.trim()));
    by_cert || by_token
}

/// Serves the fake over HTTPS on a free port of 127.0.0.1.
pub(super) async fn serve(
    state: Arc<Mutex<KubeObjects>>,
    tls: &KubeTls,
) -> std::io::Result<(SocketAddr, JoinHandle<()>)> {
    let (config, verifier) = server_config(tls)?;
    let acceptor = TlsAcceptor::from(config);
    let tokens = Arc::new(tls.tokens.clone());
    let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
    let addr = listener.local_addr()?;
    let accept = tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let (acceptor, state) = (acceptor.clone(), state.clone());
            let (verifier, tokens) = (verifier.clone(), tokens.clone());
            tokio::spawn(async move {
                // A failed handshake (the client refused our certificate) ends here, as
                // it does on a real server.
                let Ok(stream) = acceptor.accept(stream).await else {
                    return;
                };
                let certs: Option<Vec<CertificateDer<'static>>> =
                    stream.get_ref().1.peer_certificates().map(<[_]>::to_vec);
                let service = service_fn(move |req: http::Request<hyper::body::Incoming>| {
                    let state = state.clone();
                    let authorization = req
                        .headers()
                        .get(http::header::AUTHORIZATION)
                        .and_then(|v| v.to_str().ok())
                        .map(str::to_owned);
                    let ok = authenticated(
                        verifier.as_ref(),
                        &tokens,
                        certs.as_deref(),
                        authorization.as_deref(),
                    );
                    async move {
                        let reply = if ok {
                            super::server::handle(&state, req).await
                        } else {
                            super::server::unauthorized()
                        };
                        Ok::<_, Infallible>(reply)
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    Ok((addr, accept))
}
