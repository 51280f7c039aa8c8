//! The provider's configuration: the state store, and how to reach the cloud.

use std::sync::Arc;

use kops_model::cloud_aws::{AwsBackend, AwsBackendBuilder, StaticCredentials};
use kops_model::statestore::s3::S3Config;
use kops_model::statestore::{Registry, Store, StoreOptions, SystemClock, open};

use crate::diag::{Diag, Diags};
use crate::schema::{Attr, Block, Mode, Nested, Step, Ty};
use crate::value::Value;

/// The provider block's schema.
pub fn schema() -> Block {
    Block {
        attrs: vec![Attr::new(
            "state_store",
            Ty::String,
            Mode::Optional,
            "Where clusters are kept: s3://, gs://, file:// (default: KOPS_STATE_STORE).",
        )],
        blocks: vec![Nested {
            name: "aws".into(),
            max_items: 1,
            block: Block {
                attrs: vec![
                    Attr::new(
                        "region",
                        Ty::String,
                        Mode::Optional,
                        "The state store's region.",
                    ),
                    Attr::new(
                        "endpoint",
                        Ty::String,
                        Mode::Optional,
                        "An AWS endpoint for every service (an emulator, a VPC endpoint).",
                    ),
                    Attr::new(
                        "s3_endpoint",
                        Ty::String,
                        Mode::Optional,
                        "The S3 endpoint.",
                    ),
                    Attr::new(
                        "access_key",
                        Ty::String,
                        Mode::Optional,
                        "An access key id.",
                    ),
                    Attr::new("secret_key", Ty::String, Mode::Optional, "Its secret.").sensitive(),
                ],
                blocks: Vec::new(),
                description: "AWS credentials and endpoints (default: the SDK's environment)."
                    .into(),
            },
        }],
        description: "kOps clusters, built on kops-rs.".into(),
    }
}

/// AWS settings given in the provider block; what is missing comes from the environment.
#[derive(Clone, Default)]
struct AwsSettings {
    endpoint: Option<String>,
    s3_endpoint: Option<String>,
    region: Option<String>,
    credentials: Option<(String, String)>,
}

/// A configured provider.
pub struct Session {
    /// The state store's URL.
    pub state: String,
    /// The state store.
    pub store: Arc<dyn Store>,
    /// Its clusters, in kOps' layout.
    pub registry: Registry,
    aws: AwsSettings,
}

fn text(v: &Value, name: &str) -> Option<String> {
    v.get(name)
        .as_str()
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

fn aws_path(name: &str) -> Vec<Step> {
    vec![
        Step::Attr("aws".into()),
        Step::Index(0),
        Step::Attr(name.into()),
    ]
}

impl Session {
    /// Opens the state store the provider block names, checking it can be read.
    pub async fn open(config: &Value) -> Result<Session, Diags> {
        let state = text(config, "state_store")
            .or_else(|| std::env::var("KOPS_STATE_STORE").ok())
            .filter(|s| !s.is_empty())
            .ok_or_else(|| {
                vec![Diag::attr(
                    "state_store",
                    "No state store",
                    "Set state_store in the provider block, or KOPS_STATE_STORE.",
                )]
            })?;
        let aws_block = config
            .get("aws")
            .items()
            .first()
            .cloned()
            .unwrap_or(Value::Null);
        let aws = AwsSettings {
            endpoint: text(&aws_block, "endpoint"),
            s3_endpoint: text(&aws_block, "s3_endpoint"),
            region: text(&aws_block, "region"),
            credentials: match (
                text(&aws_block, "access_key"),
                text(&aws_block, "secret_key"),
            ) {
                (Some(id), Some(secret)) => Some((id, secret)),
                (None, None) => None,
                (Some(_), None) => {
                    return Err(vec![Diag::at(
                        aws_path("secret_key"),
                        "Missing credential",
                        "access_key is set but secret_key is not.",
                    )]);
                }
                (None, Some(_)) => {
                    return Err(vec![Diag::at(
                        aws_path("access_key"),
                        "Missing credential",
                        "secret_key is set but access_key is not.",
                    )]);
                }
            },
        };
        let failed = |e: &dyn std::fmt::Display| {
            vec![Diag::attr(
                "state_store",
                "Cannot open the state store",
                format!("{state}: {e}"),
            )]
        };
        let mut options = StoreOptions::from_env_for(&state)
            .await
            .map_err(|e| failed(&e))?;
        if state.starts_with("s3://") {
            options = options.with_s3(aws.s3_config().await.map_err(|e| failed(&e))?);
        }
        let store = open(&state, &options).map_err(|e| failed(&e))?;
        let registry = Registry::new(store.clone(), Arc::new(SystemClock));
        // One read now, so that a missing credential is reported here, naming where
        // credentials go, and not as the first resource's failure.
        if let Err(e) = registry.list_clusters().await {
            use kops_model::statestore::Error;
            let diag = match &e {
                Error::Unauthenticated { .. } | Error::PermissionDenied { .. } => Diag::attr(
                    "aws",
                    "Missing or rejected credential",
                    format!(
                        "{state}: {e}. Give aws {{ access_key, secret_key }} or the AWS \
                         environment (AWS_ACCESS_KEY_ID, AWS_PROFILE, ...)."
                    ),
                ),
                _ => Diag::attr("state_store", "Cannot read the state store", format!("{e}")),
            };
            return Err(vec![diag]);
        }
        Ok(Session {
            state,
            store,
            registry,
            aws,
        })
    }

    /// The AWS account the cluster runs in, in `region`.
    pub async fn aws(&self, region: &str) -> anyhow::Result<AwsBackend> {
        let mut builder = AwsBackendBuilder::from_env_in(region).await;
        if let Some(endpoint) = &self.aws.endpoint {
            builder = builder.endpoint(endpoint);
        }
        if let Some((id, secret)) = &self.aws.credentials {
            builder = builder.credentials(StaticCredentials::new(id, secret));
        }
        Ok(builder.build()?)
    }
}

impl AwsSettings {
    /// The S3 client's settings: the environment's, with what the block gives over them.
    async fn s3_config(&self) -> kops_model::statestore::Result<S3Config> {
        let mut config = S3Config::from_env().await?;
        if let Some(endpoint) = self.s3_endpoint.as_ref().or(self.endpoint.as_ref()) {
            config = config.with_endpoint(endpoint).with_force_path_style(true);
        }
        if let Some(region) = &self.region {
            config = config.with_region(region);
        }
        if let Some((id, secret)) = &self.credentials {
            config = config.with_static_credentials(id, secret, None);
        }
        Ok(config)
    }
}
