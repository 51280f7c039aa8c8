//! The crate's error type.

use crate::validation::ValidationErrors;

/// What went wrong in `kops-api`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A manifest could not be decoded. `document` is 1-based; `path` is the
    /// field path inside the document (`spec.networking.foo`), empty when the
    /// problem is not in a field (for example invalid YAML syntax).
    #[error("{file}: document {document}{}: {message}", if path.is_empty() { String::new() } else { format!(": {path}") })]
    Parse {
        /// The name the caller gave the input (a file name, `<stdin>`, a store key).
        file: String,
        /// 1-based document index inside the input.
        document: usize,
        /// Field path inside the document.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// A document's `apiVersion`/`kind` is not one this crate reads.
    #[error(
        "{file}: document {document}: unsupported object apiVersion {api_version:?} kind {kind:?}"
    )]
    UnsupportedKind {
        /// Input name.
        file: String,
        /// 1-based document index.
        document: usize,
        /// `apiVersion` as written.
        api_version: String,
        /// `kind` as written.
        kind: String,
    },
    /// Objects could not be written as YAML or JSON.
    #[error("serialising {what}: {message}")]
    Serialize {
        /// What was being written.
        what: String,
        /// What went wrong.
        message: String,
    },
    /// A v1alpha2 object cannot be represented in the internal API.
    #[error("converting {path}: {message}")]
    Conversion {
        /// Field path of the offending field.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// A channel file could not be read.
    #[error("channel: {path}: {message}")]
    Channel {
        /// Field path inside the channel document.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// Defaulting could not complete the spec.
    #[error("populating {path}: {message}")]
    Populate {
        /// Field path of the value that could not be filled in.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// The spec failed validation; every problem is listed.
    #[error("{0}")]
    Invalid(ValidationErrors),
    /// A field could not be set or unset by its path ([`crate::fields`]).
    #[error("{path}: {message}")]
    Field {
        /// The field's path as given (`spec.kubernetesVersion`).
        path: String,
        /// What is wrong.
        message: String,
    },
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
