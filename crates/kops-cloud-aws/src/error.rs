//! The crate's error type (for building a backend; cloud calls return
//! [`CloudError`](crate::cloud::CloudError) as the [`AwsCloud`](crate::AwsCloud) trait
//! requires).

/// Result alias of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What can go wrong while configuring the AWS backend.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An option is missing or invalid.
    #[error("AWS backend option {option}: {message}")]
    Invalid {
        /// The option (`region`, `credentials`, ...).
        option: &'static str,
        /// What is wrong.
        message: String,
    },
}
