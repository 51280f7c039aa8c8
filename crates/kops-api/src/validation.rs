//! Validation of internal clusters and instance groups.

use std::fmt;

/// One validation problem: where and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidationError {
    /// Field path, e.g. `spec.subnets[1].cidr`.
    pub path: String,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// Every validation problem found, in the order found.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ValidationErrors(pub Vec<ValidationError>);

impl ValidationErrors {
    /// The problems.
    pub fn errors(&self) -> &[ValidationError] {
        &self.0
    }
    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    /// Records a problem.
    pub fn push(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.0.push(ValidationError {
            path: path.into(),
            message: message.into(),
        });
    }
}

impl fmt::Display for ValidationErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} validation error(s)", self.0.len())?;
        for e in &self.0 {
            write!(f, "\n  {e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ValidationErrors {}
