//! kOps' templating (`kops toolbox template`): a text/template engine written for
//! kops-rs, with the Sprig functions templates commonly use and kOps' own `indent` and
//! `include`, plus Helm's `--set` syntax and the deep merge of values files.
//!
//! The language is Go's text/template: text and actions `{{ ... }}` with trim markers
//! (`{{- ` and ` -}}`) and comments, pipelines (`.a.b`, `$x`, literals, function calls,
//! parentheses, `|`), variables, `if`/`else if`/`else`, `range` (maps in sorted key
//! order), `with`, `define`, `template`, `block`, `break` and `continue`. Missing map
//! keys are errors unless [`Templater::fail_on_missing`] is turned off, when they print
//! `<no value>`.
//!
//! Sprig's regex functions (`regexMatch`, `regexFind`, `regexFindAll`,
//! `regexReplaceAll` with `$1`/`${name}`, `regexReplaceAllLiteral`, `regexSplit`,
//! `regexQuoteMeta` and the `must*` forms) take Go's RE2 syntax with Go's meaning: `\d`,
//! `\w`, `\s` and `\b` are ASCII, `\Q...\E` quotes, a `{` that starts no repetition is
//! literal. A bad regex fails the template in both forms (Sprig panics in the plain
//! ones, and its `regexMatch` answers false).
//!
//! Callers add their own functions with [`Templater::with_function`]; the built-in
//! functions win over one of the same name.
//!
//! ```
//! use kops_model::template::Templater;
//! use serde_json::json;
//!
//! let t = Templater::new().with_snippet("greeting", "hello {{ . }}");
//! let out = t.render("main", r#"{{ include "greeting" .name | upper }}
//! {{- range $k, $v := .zones }} {{ $k }}={{ $v }}{{ end }}"#,
//!     &json!({"name": "kops", "zones": {"b": 2, "a": 1}}))?;
//! assert_eq!(out, "HELLO KOPS a=1 b=2");
//! # Ok::<(), kops_model::template::TemplateError>(())
//! ```

mod exec;
mod funcs;
mod parse;
mod re;
mod values;

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

pub use values::{SetValuesError, merge_values, set_values};

/// A failure to parse or render a template, or to apply `--set` values.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{name}:{line}: {message}")]
pub struct TemplateError {
    name: String,
    line: usize,
    message: String,
}

impl TemplateError {
    pub(crate) fn new(name: &str, line: usize, message: String) -> TemplateError {
        TemplateError {
            name: name.to_string(),
            line,
            message,
        }
    }

    /// The name of the template (or snippet) where it failed.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The line (from 1) of the action that failed; 0 when there is none.
    pub fn line(&self) -> usize {
        self.line
    }

    /// What failed, without the place.
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// A function a caller adds to a [`Templater`]: it gets the call's evaluated arguments
/// (a piped value last) and returns the result, or a message the error reports as
/// `error calling NAME: message` with the template's name and line.
pub type TemplateFn = Arc<dyn Fn(&[Value]) -> Result<Value, String> + Send + Sync>;

/// Renders templates with snippets (named templates `include` and `template` reach).
#[derive(Clone)]
pub struct Templater {
    snippets: BTreeMap<String, String>,
    fail_on_missing: bool,
    functions: BTreeMap<String, TemplateFn>,
}

impl std::fmt::Debug for Templater {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Templater")
            .field("snippets", &self.snippets)
            .field("fail_on_missing", &self.fail_on_missing)
            .field("functions", &self.functions.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl Default for Templater {
    fn default() -> Self {
        Templater::new()
    }
}

impl Templater {
    /// A templater with no snippets that fails on missing keys (kOps' default).
    pub fn new() -> Templater {
        Templater {
            snippets: BTreeMap::new(),
            fail_on_missing: true,
            functions: BTreeMap::new(),
        }
    }

    /// Adds a snippet named `name` (a template `include "name" ctx` renders).
    pub fn with_snippet(mut self, name: impl Into<String>, text: impl Into<String>) -> Templater {
        self.snippets.insert(name.into(), text.into());
        self
    }

    /// Adds the function `name`, which templates call like a built-in one. The
    /// built-in functions (text/template's, Sprig's, `include`, `indent`, ...) win: a
    /// function named like one of them is never called. Adding a name again replaces
    /// the earlier function.
    pub fn with_function(mut self, name: impl Into<String>, f: TemplateFn) -> Templater {
        self.functions.insert(name.into(), f);
        self
    }

    /// Whether a missing map key is an error (`true`, the default) or prints
    /// `<no value>`.
    pub fn fail_on_missing(mut self, fail: bool) -> Templater {
        self.fail_on_missing = fail;
        self
    }

    /// Renders `text`, named `name` in errors, with `values` as its data.
    pub fn render(&self, name: &str, text: &str, values: &Value) -> Result<String, TemplateError> {
        if self.snippets.contains_key(name) {
            return Err(TemplateError::new(
                name,
                0,
                format!("a snippet is named like the template {name:?}"),
            ));
        }
        let mut templates = BTreeMap::new();
        for (sname, stext) in &self.snippets {
            let parsed = parse::parse(sname, stext)?;
            templates.insert(sname.clone(), (sname.clone(), parsed.root));
            for (d, body) in parsed.defines {
                templates.insert(d, (sname.clone(), body));
            }
        }
        let parsed = parse::parse(name, text)?;
        for (d, body) in parsed.defines {
            templates.insert(d, (name.to_string(), body));
        }
        let mut ex = exec::Exec {
            templates: &templates,
            fail_on_missing: self.fail_on_missing,
            functions: &self.functions,
            depth: 0,
        };
        ex.run(name, &parsed.root, values)
    }
}
