//! Terraform's provider service: each call decoded, handed to its resource or data
//! source, and its answer encoded.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use tokio::sync::RwLock;
use tonic::{Request, Response, Status};

use crate::diag::{self, Diag, Diags};
use crate::proto::tfplugin6 as tf;
use crate::proto::tfplugin6::provider_server::Provider;
use crate::resource::{DataSource, Resource};
use crate::session::{self, Session};
use crate::value::Value;

/// The provider: its resource and data source types, and its configuration once given.
pub struct KopsProvider {
    resources: BTreeMap<&'static str, Box<dyn Resource>>,
    data_sources: BTreeMap<&'static str, Box<dyn DataSource>>,
    session: RwLock<Option<Arc<Session>>>,
}

impl KopsProvider {
    /// The provider with every type.
    pub fn new() -> KopsProvider {
        let mut resources: BTreeMap<&'static str, Box<dyn Resource>> = BTreeMap::new();
        resources.insert("kops_cluster", Box::new(crate::cluster::ClusterResource));
        resources.insert(
            "kops_instance_group",
            Box::new(crate::instance_group::InstanceGroupResource),
        );
        resources.insert(
            "kops_cluster_updater",
            Box::new(crate::updater::UpdaterResource),
        );
        let mut data_sources: BTreeMap<&'static str, Box<dyn DataSource>> = BTreeMap::new();
        data_sources.insert(
            "kops_cluster_status",
            Box::new(crate::data::ClusterStatusData),
        );
        data_sources.insert("kops_cluster", Box::new(crate::data::ClusterData));
        data_sources.insert(
            "kops_instance_group",
            Box::new(crate::data::InstanceGroupData),
        );
        data_sources.insert("kops_kube_config", Box::new(crate::data::KubeConfigData));
        KopsProvider {
            resources,
            data_sources,
            session: RwLock::new(None),
        }
    }

    fn resource(&self, name: &str) -> Result<&dyn Resource, Status> {
        self.resources
            .get(name)
            .map(|r| r.as_ref())
            .ok_or_else(|| Status::not_found(format!("no resource type {name}")))
    }

    fn data_source(&self, name: &str) -> Result<&dyn DataSource, Status> {
        self.data_sources
            .get(name)
            .map(|r| r.as_ref())
            .ok_or_else(|| Status::not_found(format!("no data source {name}")))
    }

    async fn session(&self) -> Result<Arc<Session>, Diags> {
        self.session.read().await.clone().ok_or_else(|| {
            vec![Diag::error(
                "The provider is not configured",
                "Terraform called a resource before configuring the provider.",
            )]
        })
    }
}

/// A `DynamicValue`'s value (MessagePack, or JSON as some calls send).
fn decode(v: Option<&tf::DynamicValue>) -> Result<Value, Diags> {
    let Some(v) = v else { return Ok(Value::Null) };
    let decoded = if !v.msgpack.is_empty() {
        Value::from_msgpack(&v.msgpack)
    } else {
        Value::from_json_bytes(&v.json)
    };
    decoded.map_err(|e| vec![Diag::failed("Unreadable value from Terraform", &e)])
}

fn encode(v: &Value) -> Option<tf::DynamicValue> {
    Some(tf::DynamicValue {
        msgpack: v.to_msgpack(),
        json: Vec::new(),
    })
}

fn schema_of(block: crate::schema::Block) -> tf::Schema {
    tf::Schema {
        version: 0,
        block: Some(block.to_proto()),
    }
}

fn capabilities() -> Option<tf::ServerCapabilities> {
    Some(tf::ServerCapabilities {
        plan_destroy: true,
        get_provider_schema_optional: false,
        move_resource_state: false,
    })
}

#[tonic::async_trait]
impl Provider for KopsProvider {
    async fn get_metadata(
        &self,
        _request: Request<tf::get_metadata::Request>,
    ) -> Result<Response<tf::get_metadata::Response>, Status> {
        Ok(Response::new(tf::get_metadata::Response {
            server_capabilities: capabilities(),
            diagnostics: Vec::new(),
            data_sources: self
                .data_sources
                .keys()
                .map(|k| tf::get_metadata::DataSourceMetadata {
                    type_name: k.to_string(),
                })
                .collect(),
            resources: self
                .resources
                .keys()
                .map(|k| tf::get_metadata::ResourceMetadata {
                    type_name: k.to_string(),
                })
                .collect(),
            functions: Vec::new(),
        }))
    }

    async fn get_provider_schema(
        &self,
        _request: Request<tf::get_provider_schema::Request>,
    ) -> Result<Response<tf::get_provider_schema::Response>, Status> {
        Ok(Response::new(tf::get_provider_schema::Response {
            provider: Some(schema_of(session::schema())),
            resource_schemas: self
                .resources
                .iter()
                .map(|(k, r)| (k.to_string(), schema_of(r.schema())))
                .collect::<HashMap<_, _>>(),
            data_source_schemas: self
                .data_sources
                .iter()
                .map(|(k, d)| (k.to_string(), schema_of(d.schema())))
                .collect::<HashMap<_, _>>(),
            functions: HashMap::new(),
            diagnostics: Vec::new(),
            provider_meta: None,
            server_capabilities: capabilities(),
        }))
    }

    async fn validate_provider_config(
        &self,
        _request: Request<tf::validate_provider_config::Request>,
    ) -> Result<Response<tf::validate_provider_config::Response>, Status> {
        Ok(Response::new(tf::validate_provider_config::Response {
            diagnostics: Vec::new(),
        }))
    }

    async fn validate_resource_config(
        &self,
        request: Request<tf::validate_resource_config::Request>,
    ) -> Result<Response<tf::validate_resource_config::Response>, Status> {
        self.resource(&request.get_ref().type_name)?;
        Ok(Response::new(tf::validate_resource_config::Response {
            diagnostics: Vec::new(),
        }))
    }

    async fn validate_data_resource_config(
        &self,
        request: Request<tf::validate_data_resource_config::Request>,
    ) -> Result<Response<tf::validate_data_resource_config::Response>, Status> {
        self.data_source(&request.get_ref().type_name)?;
        Ok(Response::new(tf::validate_data_resource_config::Response {
            diagnostics: Vec::new(),
        }))
    }

    async fn upgrade_resource_state(
        &self,
        request: Request<tf::upgrade_resource_state::Request>,
    ) -> Result<Response<tf::upgrade_resource_state::Response>, Status> {
        let req = request.into_inner();
        let raw = req.raw_state.map(|r| r.json).unwrap_or_default();
        let (state, diagnostics) = match Value::from_json_bytes(&raw) {
            Ok(v) => (encode(&v), Vec::new()),
            Err(e) => (
                None,
                diag::to_proto(&[Diag::failed("Unreadable state", &e)]),
            ),
        };
        Ok(Response::new(tf::upgrade_resource_state::Response {
            upgraded_state: state,
            diagnostics,
        }))
    }

    async fn configure_provider(
        &self,
        request: Request<tf::configure_provider::Request>,
    ) -> Result<Response<tf::configure_provider::Response>, Status> {
        let req = request.into_inner();
        let result = match decode(req.config.as_ref()) {
            Ok(config) => Session::open(&config).await,
            Err(d) => Err(d),
        };
        let diagnostics = match result {
            Ok(s) => {
                *self.session.write().await = Some(Arc::new(s));
                Vec::new()
            }
            Err(d) => diag::to_proto(&d),
        };
        Ok(Response::new(tf::configure_provider::Response {
            diagnostics,
        }))
    }

    async fn read_resource(
        &self,
        request: Request<tf::read_resource::Request>,
    ) -> Result<Response<tf::read_resource::Response>, Status> {
        let req = request.into_inner();
        let resource = self.resource(&req.type_name)?;
        let result = async {
            let state = decode(req.current_state.as_ref())?;
            resource.read(&self.session().await?, &state).await
        }
        .await;
        Ok(Response::new(match result {
            Ok(v) => tf::read_resource::Response {
                new_state: encode(&v),
                diagnostics: Vec::new(),
                private: req.private,
            },
            Err(d) => tf::read_resource::Response {
                new_state: req.current_state,
                diagnostics: diag::to_proto(&d),
                private: req.private,
            },
        }))
    }

    async fn plan_resource_change(
        &self,
        request: Request<tf::plan_resource_change::Request>,
    ) -> Result<Response<tf::plan_resource_change::Response>, Status> {
        let req = request.into_inner();
        let resource = self.resource(&req.type_name)?;
        let result = async {
            let prior = decode(req.prior_state.as_ref())?;
            let proposed = decode(req.proposed_new_state.as_ref())?;
            let session = self.session.read().await.clone();
            resource.plan(session.as_deref(), &prior, &proposed).await
        }
        .await;
        Ok(Response::new(match result {
            Ok(p) => tf::plan_resource_change::Response {
                planned_state: encode(&p.state),
                requires_replace: p
                    .requires_replace
                    .iter()
                    .map(|path| diag::path_to_proto(path))
                    .collect(),
                planned_private: Vec::new(),
                diagnostics: Vec::new(),
                // The plan keeps the prior state where the configuration says the same
                // thing in other words (kOps' spelling, a trimmed key): Terraform's
                // leniency for that is this flag.
                legacy_type_system: true,
            },
            Err(d) => tf::plan_resource_change::Response {
                planned_state: None,
                requires_replace: Vec::new(),
                planned_private: Vec::new(),
                diagnostics: diag::to_proto(&d),
                legacy_type_system: true,
            },
        }))
    }

    async fn apply_resource_change(
        &self,
        request: Request<tf::apply_resource_change::Request>,
    ) -> Result<Response<tf::apply_resource_change::Response>, Status> {
        let req = request.into_inner();
        let resource = self.resource(&req.type_name)?;
        let prior = decode(req.prior_state.as_ref());
        let result = async {
            let planned = decode(req.planned_state.as_ref())?;
            let prior = prior.clone()?;
            resource
                .apply(&self.session().await?, &prior, &planned)
                .await
        }
        .await;
        Ok(Response::new(match result {
            Ok(v) => tf::apply_resource_change::Response {
                new_state: encode(&v),
                private: Vec::new(),
                diagnostics: Vec::new(),
                legacy_type_system: true,
            },
            // A failure leaves the object as it was: the next apply plans it again.
            Err(d) => tf::apply_resource_change::Response {
                new_state: encode(&prior.unwrap_or(Value::Null)),
                private: Vec::new(),
                diagnostics: diag::to_proto(&d),
                legacy_type_system: true,
            },
        }))
    }

    async fn import_resource_state(
        &self,
        request: Request<tf::import_resource_state::Request>,
    ) -> Result<Response<tf::import_resource_state::Response>, Status> {
        let req = request.into_inner();
        let resource = self.resource(&req.type_name)?;
        let result = async { resource.import(&self.session().await?, &req.id).await }.await;
        Ok(Response::new(match result {
            Ok(v) => tf::import_resource_state::Response {
                imported_resources: vec![tf::import_resource_state::ImportedResource {
                    type_name: req.type_name.clone(),
                    state: encode(&v),
                    private: Vec::new(),
                }],
                diagnostics: Vec::new(),
            },
            Err(d) => tf::import_resource_state::Response {
                imported_resources: Vec::new(),
                diagnostics: diag::to_proto(&d),
            },
        }))
    }

    async fn move_resource_state(
        &self,
        _request: Request<tf::move_resource_state::Request>,
    ) -> Result<Response<tf::move_resource_state::Response>, Status> {
        Err(Status::unimplemented("moving state between resource types"))
    }

    async fn read_data_source(
        &self,
        request: Request<tf::read_data_source::Request>,
    ) -> Result<Response<tf::read_data_source::Response>, Status> {
        let req = request.into_inner();
        let source = self.data_source(&req.type_name)?;
        let result = async {
            let config = decode(req.config.as_ref())?;
            source.read(&self.session().await?, &config).await
        }
        .await;
        Ok(Response::new(match result {
            Ok(v) => tf::read_data_source::Response {
                state: encode(&v),
                diagnostics: Vec::new(),
            },
            Err(d) => tf::read_data_source::Response {
                state: None,
                diagnostics: diag::to_proto(&d),
            },
        }))
    }

    async fn get_functions(
        &self,
        _request: Request<tf::get_functions::Request>,
    ) -> Result<Response<tf::get_functions::Response>, Status> {
        Ok(Response::new(tf::get_functions::Response {
            functions: HashMap::new(),
            diagnostics: Vec::new(),
        }))
    }

    async fn call_function(
        &self,
        _request: Request<tf::call_function::Request>,
    ) -> Result<Response<tf::call_function::Response>, Status> {
        Err(Status::unimplemented("this provider has no functions"))
    }

    async fn stop_provider(
        &self,
        _request: Request<tf::stop_provider::Request>,
    ) -> Result<Response<tf::stop_provider::Response>, Status> {
        Ok(Response::new(tf::stop_provider::Response {
            error: String::new(),
        }))
    }
}
