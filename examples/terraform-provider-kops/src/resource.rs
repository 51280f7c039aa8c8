//! What a resource and a data source do for Terraform's calls.

use std::sync::Arc;

use crate::diag::Diags;
use crate::schema::{Block, Step};
use crate::session::Session;
use crate::value::Value;

/// A plan: the state after apply (unknown where the apply decides), and which changed
/// attributes replace the object.
pub struct Planned {
    /// The planned state.
    pub state: Value,
    /// Attributes whose change replaces the object.
    pub requires_replace: Vec<Vec<Step>>,
}

impl Planned {
    /// A plan with nothing to replace.
    pub fn of(state: Value) -> Planned {
        Planned {
            state,
            requires_replace: Vec::new(),
        }
    }
}

/// A resource type.
#[async_trait::async_trait]
pub trait Resource: Send + Sync {
    /// Its schema.
    fn schema(&self) -> Block;

    /// The plan from `prior` (null: create) to `proposed` (null: destroy).
    async fn plan(
        &self,
        session: Option<&Session>,
        prior: &Value,
        proposed: &Value,
    ) -> Result<Planned, Diags>;

    /// Carries out the plan; returns the new state (null: destroyed).
    async fn apply(
        &self,
        session: &Arc<Session>,
        prior: &Value,
        planned: &Value,
    ) -> Result<Value, Diags>;

    /// The object as it is now (null: it is gone).
    async fn read(&self, session: &Arc<Session>, state: &Value) -> Result<Value, Diags>;

    /// The state of the existing object `id`.
    async fn import(&self, session: &Arc<Session>, id: &str) -> Result<Value, Diags>;
}

/// A data source type.
#[async_trait::async_trait]
pub trait DataSource: Send + Sync {
    /// Its schema.
    fn schema(&self) -> Block;

    /// Reads it for `config`.
    async fn read(&self, session: &Arc<Session>, config: &Value) -> Result<Value, Diags>;
}
