//! The provider's configuration: the state store, and how to reach the cloud.

use std::sync::Arc;

use kops_model::cloud_aws::{AwsBackend, AwsBackendBuilder, StaticCredentials};
use kops_model::statestore::s3::S3Config;
use kops_model::statestore::{
    Error as StoreError, Registry, Store, StoreOptions, SystemClock, open,
};

use crate::diag::{Diag, Diags};
use crate::schema::{Attr, Block, Mode, Nested, Step, Ty};
use crate::value::Value;

fn text_attr(name: &str, description: &str) -> Attr {
    Attr::new(name, Ty::String, Mode::Optional, description)
}

/// The provider block's schema (terraform-provider-kops' names).
pub fn schema() -> Block {
    Block {
        attrs: vec![
            text_attr(
                "state_store",
                "Where clusters are kept: s3://, gs://, file:// (default: KOPS_STATE_STORE).",
            ),
            Attr::new(
                "mock_cloud",
                Ty::Bool,
                Mode::Optional,
                "Clusters live on kops-mock's in-memory AWS cloud, not on AWS, kept between \
                 runs in the state store as `kops --mock-cloud` keeps it (for examples and \
                 tests; the config base may then be a file:// one).",
            ),
        ],
        blocks: vec![Nested {
            name: "aws".into(),
            max_items: 1,
            block: Block {
                attrs: vec![
                    text_attr("region", "The state store's region."),
                    text_attr(
                        "endpoint",
                        "An AWS endpoint for every service (an emulator, a VPC endpoint).",
                    ),
                    text_attr("access_key", "An access key id."),
                    text_attr("secret_key", "Its secret.").sensitive(),
                    text_attr("s3_endpoint", "An S3-compatible state store's endpoint."),
                    text_attr("s3_region", "Its region."),
                    text_attr("s3_access_key", "Its access key id."),
                    text_attr("s3_secret_key", "Its secret.").sensitive(),
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
    region: Option<String>,
    credentials: Option<(String, String)>,
    s3_endpoint: Option<String>,
    s3_region: Option<String>,
    s3_credentials: Option<(String, String)>,
}

/// A configured provider.
pub struct Session {
    /// The state store's URL.
    pub state: String,
    /// The state store.
    pub store: Arc<dyn Store>,
    /// Its clusters, in kOps' layout.
    pub registry: Registry,
    /// Mock mode: clusters live on the mock cloud (see [`crate::mock`]).
    pub mock: bool,
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

/// The pair `id` and `secret` of the aws block: both or neither.
fn key_pair(block: &Value, id: &str, secret: &str) -> Result<Option<(String, String)>, Diags> {
    match (text(block, id), text(block, secret)) {
        (Some(i), Some(s)) => Ok(Some((i, s))),
        (None, None) => Ok(None),
        (Some(_), None) => Err(vec![Diag::at(
            aws_path(secret),
            "Missing credential",
            format!("{id} is set but {secret} is not."),
        )]),
        (None, Some(_)) => Err(vec![Diag::at(
            aws_path(id),
            "Missing credential",
            format!("{secret} is set but {id} is not."),
        )]),
    }
}

/// A credential the state store lacks or was refused, said on the block it goes in.
fn missing_credential(state: &str, e: &StoreError) -> Diag {
    Diag::attr(
        "aws",
        "Missing or rejected credential",
        format!(
            "{state}: {e}. Give aws {{ access_key, secret_key }} (an S3-compatible store: \
             s3_access_key, s3_secret_key) or the environment (AWS_ACCESS_KEY_ID, \
             AWS_PROFILE, S3_ACCESS_KEY_ID, ...)."
        ),
    )
}

/// A failure of the state store as a diagnostic: a credential one on `aws`, the rest on
/// `state_store`.
fn store_diag(state: &str, summary: &str, e: &StoreError) -> Diag {
    match e {
        StoreError::Unauthenticated { .. } | StoreError::PermissionDenied { .. } => {
            missing_credential(state, e)
        }
        _ => Diag::attr("state_store", summary, format!("{state}: {e}")),
    }
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
        let block = config.get("aws").items().first().cloned();
        let block = block.unwrap_or(Value::Null);
        let aws = AwsSettings {
            endpoint: text(&block, "endpoint"),
            region: text(&block, "region"),
            credentials: key_pair(&block, "access_key", "secret_key")?,
            s3_endpoint: text(&block, "s3_endpoint"),
            s3_region: text(&block, "s3_region"),
            s3_credentials: key_pair(&block, "s3_access_key", "s3_secret_key")?,
        };
        let cannot_open =
            |e: StoreError| vec![store_diag(&state, "Cannot open the state store", &e)];
        let options = match state.starts_with("s3://") {
            true => StoreOptions::default().with_s3(aws.s3_config().await.map_err(cannot_open)?),
            false => StoreOptions::from_env_for(&state)
                .await
                .map_err(cannot_open)?,
        };
        let store = open(&state, &options).map_err(cannot_open)?;
        let registry = Registry::new(store.clone(), Arc::new(SystemClock));
        // One read now, so that a missing credential is reported here, naming where
        // credentials go, and not as the first resource's failure.
        if let Err(e) = registry.list_clusters().await {
            return Err(vec![store_diag(&state, "Cannot read the state store", &e)]);
        }
        Ok(Session {
            state,
            store,
            registry,
            mock: config.get("mock_cloud").as_bool().unwrap_or(false),
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
    /// The S3 client's settings: the block's, else the environment's.
    async fn s3_config(&self) -> kops_model::statestore::Result<S3Config> {
        let credentials = self.s3_credentials.as_ref().or(self.credentials.as_ref());
        // Credentials in the block: the environment's are neither needed nor checked.
        let mut config = match credentials {
            Some((id, secret)) => S3Config::default().with_static_credentials(id, secret, None),
            None => S3Config::from_env().await?,
        };
        if let Some(endpoint) = self.s3_endpoint.as_ref().or(self.endpoint.as_ref()) {
            config = config.with_endpoint(endpoint).with_force_path_style(true);
        }
        if let Some(region) = self.s3_region.as_ref().or(self.region.as_ref()) {
            config = config.with_region(region);
        }
        Ok(config)
    }
}
