//! The accept loop every fake HTTP service of this crate runs (the Kubernetes API, Google's
//! APIs, the container registry): HTTP/1 on a free port of 127.0.0.1, each request handed
//! to the service's handler with its shared state, until the returned task is aborted.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// Serves `handle` on a free port of 127.0.0.1 (needs a tokio runtime); returns the address
/// and the accept loop's task, which the fake aborts when dropped.
pub(crate) async fn serve<S, H, F>(
    state: Arc<S>,
    handle: H,
) -> std::io::Result<(SocketAddr, JoinHandle<()>)>
where
    S: Send + Sync + 'static,
    H: Fn(Arc<S>, SocketAddr, Request<Incoming>) -> F + Clone + Send + Sync + 'static,
    F: Future<Output = Response<Full<Bytes>>> + Send + 'static,
{
    let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
    let addr = listener.local_addr()?;
    let accept = tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let (state, handle) = (state.clone(), handle.clone());
            tokio::spawn(async move {
                let service = service_fn(move |req| {
                    let reply = handle(state.clone(), addr, req);
                    async move { Ok::<_, Infallible>(reply.await) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    Ok((addr, accept))
}
