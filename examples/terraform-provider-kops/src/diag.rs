//! Diagnostics: what Terraform shows when a call fails, naming the attribute at fault.

use crate::proto::tfplugin6 as tf;
use crate::schema::Step;

/// One problem, with the attribute it is about when there is one.
#[derive(Debug, Clone)]
pub struct Diag {
    /// One line.
    pub summary: String,
    /// More, when there is more.
    pub detail: String,
    /// The attribute, from the resource's top.
    pub path: Option<Vec<Step>>,
}

/// Problems.
pub type Diags = Vec<Diag>;

impl Diag {
    /// A problem with no attribute.
    pub fn error(summary: impl Into<String>, detail: impl Into<String>) -> Diag {
        Diag {
            summary: summary.into(),
            detail: detail.into(),
            path: None,
        }
    }

    /// A problem of the attribute at `path`.
    pub fn at(path: Vec<Step>, summary: impl Into<String>, detail: impl Into<String>) -> Diag {
        Diag {
            summary: summary.into(),
            detail: detail.into(),
            path: Some(path),
        }
    }

    /// A problem of the top-level attribute `name`.
    pub fn attr(name: &str, summary: impl Into<String>, detail: impl Into<String>) -> Diag {
        Diag::at(vec![Step::Attr(name.to_string())], summary, detail)
    }

    /// A failure of the library (its whole chain of causes as the detail).
    pub fn failed(what: &str, err: &anyhow::Error) -> Diag {
        Diag::error(what, format!("{err:#}"))
    }

    /// The message Terraform reads.
    pub fn to_proto(&self) -> tf::Diagnostic {
        tf::Diagnostic {
            severity: tf::diagnostic::Severity::Error as i32,
            summary: self.summary.clone(),
            detail: self.detail.clone(),
            attribute: self.path.as_ref().map(|p| path_to_proto(p)),
        }
    }
}

/// A path as Terraform's attribute path.
pub fn path_to_proto(path: &[Step]) -> tf::AttributePath {
    use tf::attribute_path::step::Selector;
    tf::AttributePath {
        steps: path
            .iter()
            .map(|s| tf::attribute_path::Step {
                selector: Some(match s {
                    Step::Attr(name) => Selector::AttributeName(name.clone()),
                    Step::Index(i) => Selector::ElementKeyInt(*i as i64),
                }),
            })
            .collect(),
    }
}

/// Diagnostics as Terraform's messages.
pub fn to_proto(diags: &[Diag]) -> Vec<tf::Diagnostic> {
    diags.iter().map(Diag::to_proto).collect()
}

/// A state store failure while doing `what`.
pub fn store_failed(what: &str, e: &kops_model::statestore::Error) -> Diags {
    vec![Diag::error(what, e.to_string())]
}
