//! The provider's configuration: the state store, and how to reach the cloud.

use std::sync::{Arc, Mutex};

use kops_model::cloud_aws::{AwsBackend, AwsBackendBuilder, StaticCredentials};
use kops_model::cloud_gce::cloud::{CloudError, CloudResult};
use kops_model::cloud_gce::rest::{ENDPOINT_ENV, RestConfig, RestGce, TokenSource};
use kops_model::statestore::aws::{AssumeRole, AwsEnv, AwsEnvOptions};
use kops_model::statestore::gcs::{
    CLOUD_PLATFORM_SCOPE, GcsConfig, GcsTokenSource, GoogleCredentials, StaticToken,
};
use kops_model::statestore::s3::S3Config;
use kops_model::statestore::{
    Error as StoreError, Registry, Store, StoreOptions, StoreUrl, SystemClock, open,
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
        blocks: vec![
            Nested {
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
                        text_attr(
                            "profile",
                            "A profile of the shared config files (AWS_CONFIG_FILE, \
                             AWS_SHARED_CREDENTIALS_FILE), for the cloud and an s3:// store.",
                        ),
                    ],
                    blocks: vec![Nested {
                        name: "assume_role".into(),
                        max_items: 1,
                        block: Block {
                            attrs: vec![
                                text_attr("role_arn", "The ARN of the IAM role to assume."),
                                text_attr("session_name", "The role session's name."),
                                text_attr(
                                    "external_id",
                                    "The external id the role's trust policy asks for.",
                                ),
                            ],
                            blocks: Vec::new(),
                            description: "A role assumed through STS with the credentials \
                                          otherwise found, for the cloud and an s3:// store."
                                .into(),
                        },
                    }],
                    description: "AWS credentials and endpoints (default: the SDK's environment)."
                        .into(),
                },
            },
            Nested {
                name: "gce".into(),
                max_items: 1,
                block: Block {
                    attrs: vec![
                        text_attr(
                            "project",
                            "The project of GCE clusters whose spec names none (default: \
                         GOOGLE_CLOUD_PROJECT).",
                        ),
                        text_attr(
                            "endpoint",
                            "One root for every Google API (a fake of them; default: \
                         KOPS_GCE_ENDPOINT). Requests there carry no token unless one is \
                         given here.",
                        ),
                        text_attr(
                            "storage_endpoint",
                            "The gs:// state store's endpoint (an emulator; default: \
                         STORAGE_EMULATOR_HOST). Requests there carry no token unless one is \
                         given here.",
                        ),
                        text_attr(
                            "credentials",
                            "A service-account key or an authorized_user file (gcloud auth \
                         application-default login), its JSON or its path (default: \
                         GOOGLE_APPLICATION_CREDENTIALS, gcloud's file, the metadata server).",
                        )
                        .sensitive(),
                        text_attr(
                            "access_token",
                            "A fixed access token (default: GOOGLE_OAUTH_ACCESS_TOKEN for the \
                         state store).",
                        )
                        .sensitive(),
                    ],
                    blocks: Vec::new(),
                    description: "Google credentials and endpoints, for GCE clusters and gs:// \
                              state stores (default: the environment, as kops reads it)."
                        .into(),
                },
            },
        ],
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
    /// The environment loaded with `profile` and `assume_role`, when the block has either:
    /// the cloud and the store share its credentials provider.
    env: Option<AwsEnv>,
}

/// Google settings given in the provider block; what is missing comes from the
/// environment.
#[derive(Clone, Default)]
struct GceSettings {
    project: Option<String>,
    endpoint: Option<String>,
    storage_endpoint: Option<String>,
    /// A token source the block gives (`credentials` or `access_token`).
    token: Option<Arc<dyn GcsTokenSource>>,
}

/// The variables and attributes Google credentials come from, for diagnostics.
const GOOGLE_CREDENTIAL_SOURCES: &str = "Give gce { credentials } (a service-account key or \
     an authorized_user file, its JSON or its path) or gce { access_token }, or the \
     environment: GOOGLE_APPLICATION_CREDENTIALS, GOOGLE_OAUTH_ACCESS_TOKEN (the state \
     store), gcloud auth application-default login, the metadata server on GCE. An emulator \
     needs none: gce { endpoint, storage_endpoint } or KOPS_GCE_ENDPOINT, \
     STORAGE_EMULATOR_HOST.";

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
    google: Google,
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
    if state.starts_with("gs://") {
        return Diag::attr(
            "gce",
            "Missing or rejected credential",
            format!("{state}: {e}. {GOOGLE_CREDENTIAL_SOURCES}"),
        );
    }
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
            env: None,
        };
        let aws = AwsSettings {
            env: aws_env(&block, &aws).await?,
            ..aws
        };
        let block = config.get("gce").items().first().cloned();
        let google = Google {
            settings: GceSettings::of(&block.unwrap_or(Value::Null))?,
            adc: Mutex::new(None),
        };
        let cannot_open =
            |e: StoreError| vec![store_diag(&state, "Cannot open the state store", &e)];
        let options = if state.starts_with("s3://") {
            StoreOptions::default().with_s3(aws.s3_config().await.map_err(cannot_open)?)
        } else if state.starts_with("gs://") {
            StoreOptions::default().with_gcs(google.gcs_config().map_err(cannot_open)?)
        } else {
            StoreOptions::from_env_for(&state)
                .await
                .map_err(cannot_open)?
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
            google,
        })
    }

    /// The project a GCE cluster whose spec names none runs in.
    pub fn gce_project(&self) -> Option<String> {
        self.google
            .settings
            .project
            .clone()
            .or_else(|| env("GOOGLE_CLOUD_PROJECT"))
    }

    /// The GCE cloud of `project` in `region`: the block's endpoint and credentials, else
    /// the environment's as kops reads them (`KOPS_GCE_ENDPOINT`, unauthenticated; the
    /// application-default credentials).
    pub fn gce(&self, project: &str, region: &str) -> anyhow::Result<RestGce> {
        let settings = &self.google.settings;
        let endpoint = settings.endpoint.clone().or_else(|| env(ENDPOINT_ENV));
        let mut config = RestConfig::new(project, region);
        if let Some(e) = &endpoint {
            config = config.with_endpoint(e);
        }
        let token = match &settings.token {
            Some(t) => Some(t.clone()),
            None if endpoint.is_some() => None,
            None => Some(self.google.adc().map_err(|e| {
                anyhow::anyhow!("no Google credentials: {e}. {GOOGLE_CREDENTIAL_SOURCES}")
            })? as Arc<dyn GcsTokenSource>),
        };
        if let Some(t) = token {
            config = config.with_token_source(Arc::new(GoogleToken(t)));
        }
        if let Ok(StoreUrl::Gcs { bucket, .. }) = StoreUrl::parse(&self.state) {
            config = config.with_buckets([bucket]);
        }
        Ok(RestGce::new(config)?)
    }

    /// The AWS account the cluster runs in, in `region`.
    pub async fn aws(&self, region: &str) -> anyhow::Result<AwsBackend> {
        let mut builder = match &self.aws.env {
            // The profile's or the role's credentials, with the keys already in them.
            Some(env) => AwsBackendBuilder::from_aws_env(env).region(region),
            None => {
                let mut b = AwsBackendBuilder::from_env_in(region).await;
                if let Some((id, secret)) = &self.aws.credentials {
                    b = b.credentials(StaticCredentials::new(id, secret));
                }
                b
            }
        };
        if let Some(endpoint) = &self.aws.endpoint {
            builder = builder.endpoint(endpoint);
        }
        Ok(builder.build()?)
    }
}

/// The session's Google settings and application-default credentials.
struct Google {
    settings: GceSettings,
    /// Google's application-default credentials, built once when first needed and shared
    /// by the state store and every GCE cloud the session opens.
    adc: Mutex<Option<Arc<GoogleCredentials>>>,
}

impl Google {
    /// Google's application-default credentials (cloud-platform scope, which covers
    /// storage), built once.
    fn adc(&self) -> kops_model::statestore::Result<Arc<GoogleCredentials>> {
        let mut adc = self.adc.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(c) = adc.as_ref() {
            return Ok(c.clone());
        }
        let c = Arc::new(GoogleCredentials::from_env_with_scopes([
            CLOUD_PLATFORM_SCOPE,
        ])?);
        *adc = Some(c.clone());
        Ok(c)
    }

    /// The `gs://` store's settings: the block's endpoint and credentials, else the
    /// environment's as kops reads them (`STORAGE_EMULATOR_HOST`, unauthenticated;
    /// `GOOGLE_OAUTH_ACCESS_TOKEN`; the application-default credentials).
    fn gcs_config(&self) -> kops_model::statestore::Result<GcsConfig> {
        let endpoint = self.settings.storage_endpoint.clone().or_else(|| {
            env("STORAGE_EMULATOR_HOST").map(|h| match h.contains("://") {
                true => h,
                false => format!("http://{h}"),
            })
        });
        let mut config = GcsConfig::default();
        if let Some(e) = &endpoint {
            config = config.with_endpoint(e);
        }
        let token: Option<Arc<dyn GcsTokenSource>> = match &self.settings.token {
            Some(t) => Some(t.clone()),
            None => match env("GOOGLE_OAUTH_ACCESS_TOKEN") {
                Some(t) => Some(Arc::new(StaticToken::new(t))),
                None if endpoint.is_some() => None,
                None => Some(self.adc()?),
            },
        };
        if let Some(t) = token {
            config = config.with_token_source(t);
        }
        Ok(config)
    }
}

impl AwsSettings {
    /// The S3 client's settings: the block's, else the environment's.
    async fn s3_config(&self) -> kops_model::statestore::Result<S3Config> {
        let credentials = self.s3_credentials.as_ref().or(self.credentials.as_ref());
        // Credentials in the block: the environment's are neither needed nor checked.
        let mut config = match (self.s3_credentials.as_ref(), &self.env, credentials) {
            (None, Some(env), _) => S3Config::default().with_aws_env(env),
            (_, _, Some((id, secret))) => {
                S3Config::default().with_static_credentials(id, secret, None)
            }
            (_, _, None) => S3Config::from_env().await?,
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

/// The AWS environment the block's `profile` and `assume_role` ask for (with its region,
/// endpoint and keys), or `None` when it has neither.
async fn aws_env(block: &Value, aws: &AwsSettings) -> Result<Option<AwsEnv>, Diags> {
    let profile = text(block, "profile");
    let role = block.get("assume_role").items().first().cloned();
    if profile.is_none() && role.is_none() {
        return Ok(None);
    }
    let mut options = AwsEnvOptions::default();
    if let Some(p) = profile {
        options = options.with_profile(p);
    }
    if let Some(r) = &aws.region {
        options = options.with_region(r);
    }
    if let Some(e) = &aws.endpoint {
        options = options.with_endpoint(e);
    }
    if let Some((id, secret)) = &aws.credentials {
        options = options.with_static_credentials(id, secret);
    }
    if let Some(role) = role {
        let Some(arn) = text(&role, "role_arn") else {
            return Err(vec![Diag::at(
                vec![
                    Step::Attr("aws".into()),
                    Step::Index(0),
                    Step::Attr("assume_role".into()),
                    Step::Index(0),
                    Step::Attr("role_arn".into()),
                ],
                "Missing role",
                "assume_role needs role_arn, the ARN of the IAM role to assume.",
            )]);
        };
        let mut assume = AssumeRole::new(arn);
        if let Some(n) = text(&role, "session_name") {
            assume = assume.with_session_name(n);
        }
        if let Some(id) = text(&role, "external_id") {
            assume = assume.with_external_id(id);
        }
        options = options.with_assume_role(assume);
    }
    Ok(Some(AwsEnv::load(&options).await))
}

/// A non-empty environment variable.
fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

fn gce_path(name: &str) -> Vec<Step> {
    vec![
        Step::Attr("gce".into()),
        Step::Index(0),
        Step::Attr(name.into()),
    ]
}

impl GceSettings {
    /// The `gce` block's settings; bad credentials are a diagnostic on their attribute
    /// that never quotes them.
    fn of(block: &Value) -> Result<GceSettings, Diags> {
        let credentials = text(block, "credentials");
        let token = text(block, "access_token");
        let token: Option<Arc<dyn GcsTokenSource>> = match (credentials, token) {
            (Some(_), Some(_)) => {
                return Err(vec![Diag::at(
                    gce_path("access_token"),
                    "Conflicting credentials",
                    "Give credentials or access_token, not both.",
                )]);
            }
            (Some(c), None) => Some(Arc::new(credentials_of(&c)?)),
            (None, Some(t)) => Some(Arc::new(StaticToken::new(t))),
            (None, None) => None,
        };
        Ok(GceSettings {
            project: text(block, "project"),
            endpoint: text(block, "endpoint"),
            storage_endpoint: text(block, "storage_endpoint"),
            token,
        })
    }
}

/// `credentials`: a key file's JSON, or its path.
fn credentials_of(given: &str) -> Result<GoogleCredentials, Diags> {
    let invalid = |e: StoreError| {
        vec![Diag::at(
            gce_path("credentials"),
            "Invalid credentials",
            e.to_string(),
        )]
    };
    if given.trim_start().starts_with('{') {
        return GoogleCredentials::from_json_with_scopes(
            given.as_bytes(),
            "gce.credentials",
            [CLOUD_PLATFORM_SCOPE],
        )
        .map_err(invalid);
    }
    let data = std::fs::read(given).map_err(|e| {
        vec![Diag::at(
            gce_path("credentials"),
            "Invalid credentials",
            format!("{given}: cannot read the credentials file: {e}"),
        )]
    })?;
    GoogleCredentials::from_json_with_scopes(&data, given, [CLOUD_PLATFORM_SCOPE]).map_err(invalid)
}

/// The session's Google tokens serving the GCE backend.
#[derive(Debug)]
struct GoogleToken(Arc<dyn GcsTokenSource>);

#[async_trait::async_trait]
impl TokenSource for GoogleToken {
    async fn token(&self) -> CloudResult<String> {
        self.0
            .token()
            .await
            .map_err(|e| CloudError::PermissionDenied {
                operation: "getting a Google access token".into(),
                source: Some(Box::new(e)),
            })
    }
}
