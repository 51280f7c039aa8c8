//! `terraform-provider-kops`: kOps clusters as Terraform resources, built only on
//! kops-model's public API. See README.md.
//!
//! Terraform starts the binary with its handshake in the environment; the binary
//! listens on 127.0.0.1 with mutual TLS, says where on its first line of output, and
//! serves Terraform's plugin protocol (version 6) until Terraform stops it.

use std::io::Write as _;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context as _, bail};
use base64::Engine as _;
use tokio::net::TcpListener;
use tokio::sync::{mpsc, watch};
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};

mod cloud;
mod cluster;
mod data;
mod diag;
mod instance_group;
mod mock;
mod provider;
mod resource;
mod schema;
mod secrets;
mod session;
mod tls;
mod updater;
mod value;

mod proto {
    //! The protocol code, generated at build time.
    #![allow(missing_docs, dead_code, clippy::all, clippy::pedantic)]
    pub mod tfplugin6 {
        //! Terraform's plugin protocol, version 6.
        tonic::include_proto!("tfplugin6");
    }
    pub mod plugin {
        //! go-plugin's controller.
        tonic::include_proto!("plugin");
    }
}

/// go-plugin's cookie: Terraform sets it, so a binary started by hand can say what it is.
const COOKIE_KEY: &str = "TF_PLUGIN_MAGIC_COOKIE";
const COOKIE_VALUE: &str = "d602bf8f470bc67ca7faa0386276bbdd4330efaf76d1a219cb4d6991ca9872b2";

/// The version of go-plugin's handshake, and of Terraform's protocol this serves.
const CORE_VERSION: u32 = 1;
const PROTOCOL_VERSION: u32 = 6;

/// go-plugin's controller: Terraform's "stop".
struct Controller {
    stop: watch::Sender<bool>,
}

#[tonic::async_trait]
impl proto::plugin::grpc_controller_server::GrpcController for Controller {
    async fn shutdown(
        &self,
        _request: Request<proto::plugin::Empty>,
    ) -> Result<Response<proto::plugin::Empty>, Status> {
        let _ = self.stop.send(true);
        Ok(Response::new(proto::plugin::Empty {}))
    }
}

fn main() -> ExitCode {
    if std::env::var(COOKIE_KEY).as_deref() != Ok(COOKIE_VALUE) {
        eprintln!(
            "terraform-provider-kops is a Terraform provider: Terraform starts it. Use it from \
             a configuration with required_providers {{ kops = {{ source = \"terraform-kops/kops\" }} }}."
        );
        return ExitCode::FAILURE;
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        // The library's model builds and discovery go deep in debug builds; the `kops`
        // CLI runs them on a large stack too.
        .thread_stack_size(64 << 20)
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("terraform-provider-kops: starting the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(serve()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("terraform-provider-kops: {e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn serve() -> anyhow::Result<()> {
    let versions = std::env::var("PLUGIN_PROTOCOL_VERSIONS").unwrap_or_default();
    if !versions.is_empty()
        && !versions
            .split(',')
            .any(|v| v.trim() == PROTOCOL_VERSION.to_string())
    {
        bail!(
            "Terraform speaks protocol versions {versions}; this provider speaks {PROTOCOL_VERSION}"
        );
    }
    let client_cert = std::env::var("PLUGIN_CLIENT_CERT")
        .context("PLUGIN_CLIENT_CERT is not set: Terraform's automatic TLS is required")?;
    let tls = tls::server(&client_cert)?;
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let address = listener.local_addr()?;
    let (conns, incoming) = mpsc::channel::<std::io::Result<tls::Conn>>(16);
    let acceptor = tokio_rustls::TlsAcceptor::from(tls.config.clone());
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            let conns = conns.clone();
            tokio::spawn(async move {
                match acceptor.accept(tcp).await {
                    Ok(stream) => {
                        let _ = conns.send(Ok(tls::Conn(stream))).await;
                    }
                    Err(e) => eprintln!("terraform-provider-kops: a TLS handshake failed: {e}"),
                }
            });
        }
    });
    let (stop, mut stopped) = watch::channel(false);
    let line = format!(
        "{CORE_VERSION}|{PROTOCOL_VERSION}|tcp|{address}|grpc|{}",
        base64::engine::general_purpose::STANDARD_NO_PAD.encode(&tls.cert)
    );
    let mut stdout = std::io::stdout();
    writeln!(stdout, "{line}")?;
    stdout.flush()?;
    let provider = Arc::new(provider::KopsProvider::new());
    tonic::transport::Server::builder()
        .add_service(proto::tfplugin6::provider_server::ProviderServer::from_arc(
            provider,
        ))
        .add_service(
            proto::plugin::grpc_controller_server::GrpcControllerServer::new(Controller { stop }),
        )
        .serve_with_incoming_shutdown(ReceiverStream::new(incoming), async move {
            let _ = stopped.wait_for(|s| *s).await;
        })
        .await?;
    Ok(())
}
