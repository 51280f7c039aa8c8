//! [`TerraformWriter`]: collects resources, data sources, outputs, providers and data files
//! from tasks and prints `kubernetes.tf` in kOps' layout.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

use super::hcl::{Body, Expr, render_expr, write_block, write_body};
use crate::error::{Error, Result};
use crate::graph::TaskGraph;
use crate::key::{TaskKey, TaskRef};
use crate::lifecycle::Lifecycle;

/// kOps' Terraform name sanitising: a leading digit gets a `prefix_`, then `.` becomes
/// `-`, `/` becomes `--` and `:` becomes `_`.
pub fn sanitize_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 8);
    if name.starts_with(|c: char| c.is_ascii_digit()) {
        out.push_str("prefix_");
    }
    for c in name.chars() {
        match c {
            '.' => out.push('-'),
            '/' => out.push_str("--"),
            ':' => out.push('_'),
            c => out.push(c),
        }
    }
    out
}

/// How references to a task are written.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Link {
    /// `type.sanitised-name.attr`.
    Resource {
        /// Resource type, e.g. `aws_vpc`.
        resource_type: String,
        /// Unsanitised name.
        name: String,
    },
    /// `data.type.sanitised-name.attr`.
    Data {
        /// Data source type.
        data_type: String,
        /// Unsanitised name.
        name: String,
    },
    /// A literal value (the ID of a shared object not managed by this configuration).
    Literal(String),
}

#[derive(Debug)]
struct Block {
    owner: Option<TaskKey>,
    body: Body,
}

/// A provider configuration block.
#[derive(Debug, Clone)]
struct Provider {
    name: String,
    alias: Option<String>,
    body: Body,
}

/// The rendered configuration: `kubernetes.tf` and the `data/` files, by relative path.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct TerraformOutput {
    /// Every file by path relative to the output directory (`kubernetes.tf`, `data/...`).
    pub files: BTreeMap<String, Vec<u8>>,
}

impl TerraformOutput {
    /// The name of the main file.
    pub const MAIN: &'static str = "kubernetes.tf";

    /// The main file's text.
    pub fn main_tf(&self) -> &str {
        self.files
            .get(Self::MAIN)
            .and_then(|b| std::str::from_utf8(b).ok())
            .unwrap_or_default()
    }

    /// Writes every file under `dir`, creating directories as needed.
    pub fn write_to(&self, dir: &Path) -> Result<()> {
        for (rel, bytes) in &self.files {
            let path = dir.join(rel);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(|source| Error::Io {
                    path: parent.display().to_string(),
                    source,
                })?;
            }
            std::fs::write(&path, bytes).map_err(|source| Error::Io {
                path: path.display().to_string(),
                source,
            })?;
        }
        Ok(())
    }
}

/// Collects what tasks render for the Terraform target and prints it.
///
/// Tasks call [`TerraformWriter::resource`] from [`crate::Task::render_terraform`]; the
/// first resource a task renders becomes the target of references to it (override with
/// [`TerraformWriter::link`], e.g. a shared VPC referenced by its literal ID).
/// References ([`Expr::Ref`]) are resolved in [`TerraformWriter::finish`], so tasks may
/// render in any order.
#[derive(Debug, Default)]
pub struct TerraformWriter {
    current: Option<TaskKey>,
    resources: BTreeMap<(String, String), Block>,
    data: BTreeMap<(String, String), Block>,
    links: HashMap<TaskKey, Link>,
    outputs: BTreeMap<String, Expr>,
    variables: BTreeMap<String, Body>,
    output_lists: BTreeMap<String, Vec<Expr>>,
    files: BTreeMap<String, Vec<u8>>,
    providers: Vec<Provider>,
    required_version: Option<String>,
    required_providers: BTreeMap<String, (String, String)>,
}

impl TerraformWriter {
    /// An empty writer.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the task on whose behalf the following calls are made (the driver
    /// [`render_graph`] does this).
    pub fn set_current_task(&mut self, key: Option<TaskKey>) {
        self.current = key;
    }

    /// Adds `resource "<type>" "<sanitised name>" { body }`. A second resource with the
    /// same type and sanitised name is an error.
    pub fn resource(&mut self, resource_type: &str, name: &str, body: Body) -> Result<()> {
        let id = (resource_type.to_owned(), sanitize_name(name));
        if self.resources.contains_key(&id) {
            return Err(Error::invalid(
                format!("{}.{}", id.0, id.1),
                "Terraform resource rendered twice",
            ));
        }
        if let Some(cur) = &self.current {
            self.links
                .entry(cur.clone())
                .or_insert_with(|| Link::Resource {
                    resource_type: resource_type.to_owned(),
                    name: name.to_owned(),
                });
        }
        self.resources.insert(
            id,
            Block {
                owner: self.current.clone(),
                body,
            },
        );
        Ok(())
    }

    /// Adds `data "<type>" "<sanitised name>" { body }`.
    pub fn data_source(&mut self, data_type: &str, name: &str, body: Body) -> Result<()> {
        let id = (data_type.to_owned(), sanitize_name(name));
        if self.data.contains_key(&id) {
            return Err(Error::invalid(
                format!("data.{}.{}", id.0, id.1),
                "Terraform data source rendered twice",
            ));
        }
        if let Some(cur) = &self.current {
            self.links.entry(cur.clone()).or_insert_with(|| Link::Data {
                data_type: data_type.to_owned(),
                name: name.to_owned(),
            });
        }
        self.data.insert(
            id,
            Block {
                owner: self.current.clone(),
                body,
            },
        );
        Ok(())
    }

    /// Sets how references to `key` are written.
    pub fn link(&mut self, key: TaskKey, link: Link) {
        self.links.insert(key, link);
    }

    /// A reference expression to a resource by type and (unsanitised) name:
    /// `type.sanitised.attr`.
    pub fn resource_ref(resource_type: &str, name: &str, attr: &str) -> Expr {
        Expr::Traversal(vec![
            resource_type.to_owned(),
            sanitize_name(name),
            attr.to_owned(),
        ])
    }

    fn file_path(&mut self, resource_type: &str, name: &str, key: &str, bytes: Vec<u8>) -> String {
        let rel = format!("data/{resource_type}_{name}_{key}");
        self.files.insert(rel.clone(), bytes);
        format!("${{path.module}}/{rel}")
    }

    /// Stores a large value in `data/<type>_<name>_<key>` (unsanitised name) and returns
    /// `file("${path.module}/data/...")`.
    pub fn add_file(
        &mut self,
        resource_type: &str,
        name: &str,
        key: &str,
        bytes: impl Into<Vec<u8>>,
    ) -> Expr {
        let path = self.file_path(resource_type, name, key, bytes.into());
        Expr::Call("file".into(), vec![Expr::Template(path)])
    }

    /// Like [`TerraformWriter::add_file`] but read with `filebase64(...)` (binary content
    /// such as launch-template user data).
    pub fn add_file_base64(
        &mut self,
        resource_type: &str,
        name: &str,
        key: &str,
        bytes: impl Into<Vec<u8>>,
    ) -> Expr {
        let path = self.file_path(resource_type, name, key, bytes.into());
        Expr::Call("filebase64".into(), vec![Expr::Template(path)])
    }

    /// Adds an output (and its `locals` entry).
    pub fn output(&mut self, name: impl Into<String>, value: impl Into<Expr>) {
        self.outputs.insert(name.into(), value.into());
    }

    /// Adds a value to a list output; values are de-duplicated and sorted.
    pub fn output_list_item(&mut self, name: impl Into<String>, value: impl Into<Expr>) {
        self.output_lists
            .entry(name.into())
            .or_default()
            .push(value.into());
    }

    /// Declares an input variable, `variable "<name>" { ... }`, which resources read as
    /// `var.<name>`: how a configuration takes a value it must not hold, such as a
    /// credential (`sensitive = true`: Terraform then redacts everything derived from it
    /// in plans).
    pub fn variable(&mut self, name: impl Into<String>, body: Body) {
        self.variables.insert(name.into(), body);
    }

    /// Adds a `provider "<name>" { ... }` block.
    pub fn provider(&mut self, name: impl Into<String>, body: Body) {
        self.providers.push(Provider {
            name: name.into(),
            alias: None,
            body,
        });
    }

    /// Adds an aliased provider (`alias = "<alias>"` plus `body`), referenced by resources
    /// as `provider = <name>.<alias>`; it is listed in `configuration_aliases`.
    pub fn provider_alias(
        &mut self,
        name: impl Into<String>,
        alias: impl Into<String>,
        body: Body,
    ) {
        let alias = alias.into();
        self.providers.push(Provider {
            name: name.into(),
            alias: Some(alias.clone()),
            body: body.attr("alias", alias),
        });
    }

    /// Sets `terraform { required_version = ... }`.
    pub fn required_version(&mut self, constraint: impl Into<String>) {
        self.required_version = Some(constraint.into());
    }

    /// Adds a `required_providers` entry.
    pub fn required_provider(
        &mut self,
        name: impl Into<String>,
        source: impl Into<String>,
        version: impl Into<String>,
    ) {
        self.required_providers
            .insert(name.into(), (source.into(), version.into()));
    }

    fn resolve(&self, owner: Option<&TaskKey>, at: &str, r: &TaskRef) -> Result<Expr> {
        match self.links.get(&r.key) {
            Some(Link::Resource {
                resource_type,
                name,
            }) => Ok(Self::resource_ref(resource_type, name, &r.attr)),
            Some(Link::Data { data_type, name }) => Ok(Expr::Traversal(vec![
                "data".to_owned(),
                data_type.clone(),
                sanitize_name(name),
                r.attr.to_string(),
            ])),
            Some(Link::Literal(v)) => Ok(Expr::String(v.clone())),
            None => Err(Error::invalid(
                at,
                format!(
                    "{}refers to {} which rendered no Terraform resource",
                    owner.map(|o| format!("task {o} ")).unwrap_or_default(),
                    r.key
                ),
            )),
        }
    }

    /// Resolves every reference and prints `kubernetes.tf` plus the data files:
    /// `variable`s, `locals`, `output`s, `provider`s, resources (by type, then name), data sources,
    /// then the `terraform` block.
    pub fn finish(mut self) -> Result<TerraformOutput> {
        let mut resources = std::mem::take(&mut self.resources);
        for ((t, n), block) in &mut resources {
            let at = format!("{t}.{n}");
            let owner = block.owner.clone();
            block
                .body
                .map_refs(&mut |r| self.resolve(owner.as_ref(), &at, r))?;
        }
        let mut data = std::mem::take(&mut self.data);
        for ((t, n), block) in &mut data {
            let at = format!("data.{t}.{n}");
            let owner = block.owner.clone();
            block
                .body
                .map_refs(&mut |r| self.resolve(owner.as_ref(), &at, r))?;
        }
        let mut outputs = std::mem::take(&mut self.outputs);
        for (name, list) in std::mem::take(&mut self.output_lists) {
            let mut seen = BTreeMap::new();
            for mut e in list {
                e.map_refs(&mut |r| self.resolve(None, &format!("output.{name}"), r))?;
                seen.entry(render_expr(&e, 0)).or_insert(e);
            }
            outputs.insert(name, Expr::List(seen.into_values().collect()));
        }
        for (name, e) in &mut outputs {
            e.map_refs(&mut |r| self.resolve(None, &format!("output.{name}"), r))?;
        }

        let mut out = String::new();
        let sep = |out: &mut String| {
            if !out.is_empty() {
                out.push('\n');
            }
        };
        for (name, body) in &self.variables {
            sep(&mut out);
            write_block(
                &mut out,
                &format!("variable {}", super::hcl::quote(name, false)),
                body,
            );
        }
        if !outputs.is_empty() {
            sep(&mut out);
            let mut locals = Body::new();
            for (k, v) in &outputs {
                locals.set(k.clone(), v.clone());
            }
            write_block(&mut out, "locals", &locals);
            for (k, v) in &outputs {
                sep(&mut out);
                write_block(
                    &mut out,
                    &format!("output {}", super::hcl::quote(k, false)),
                    &Body::new().attr("value", v.clone()),
                );
            }
        }
        for p in &self.providers {
            sep(&mut out);
            write_block(
                &mut out,
                &format!("provider {}", super::hcl::quote(&p.name, false)),
                &p.body,
            );
        }
        for ((t, n), block) in &resources {
            sep(&mut out);
            let header = format!(
                "resource {} {}",
                super::hcl::quote(t, false),
                super::hcl::quote(n, false)
            );
            write_block(&mut out, &header, &block.body);
        }
        for ((t, n), block) in &data {
            sep(&mut out);
            let header = format!(
                "data {} {}",
                super::hcl::quote(t, false),
                super::hcl::quote(n, false)
            );
            write_block(&mut out, &header, &block.body);
        }
        if self.required_version.is_some() || !self.required_providers.is_empty() {
            sep(&mut out);
            out.push_str("terraform {\n");
            if let Some(v) = &self.required_version {
                write_body(
                    &mut out,
                    &Body::new().attr("required_version", v.as_str()),
                    1,
                );
            }
            if !self.required_providers.is_empty() {
                let mut rp = Body::new();
                for (name, (source, version)) in &self.required_providers {
                    let aliases: BTreeSet<String> = self
                        .providers
                        .iter()
                        .filter(|p| &p.name == name)
                        .filter_map(|p| p.alias.as_ref().map(|a| format!("{name}.{a}")))
                        .collect();
                    let mut m = BTreeMap::new();
                    m.insert("source".to_owned(), Expr::string(source.as_str()));
                    m.insert("version".to_owned(), Expr::string(version.as_str()));
                    if !aliases.is_empty() {
                        m.insert(
                            "configuration_aliases".to_owned(),
                            Expr::List(aliases.iter().map(|a| Expr::traversal(a)).collect()),
                        );
                    }
                    rp.set(name.clone(), Expr::Map(m));
                }
                write_body(&mut out, &Body::new().block("required_providers", rp), 1);
            }
            out.push_str("}\n");
        }

        let mut files = self.files;
        files.insert(TerraformOutput::MAIN.to_owned(), out.into_bytes());
        Ok(TerraformOutput { files })
    }
}

/// Renders every task of a graph (except those with lifecycle `Ignore`) into `w`, in key
/// order.
pub fn render_graph<C: ?Sized + Sync>(graph: &TaskGraph<C>, w: &mut TerraformWriter) -> Result<()> {
    for node in graph.in_key_order().iter().filter_map(|&i| graph.node(i)) {
        if node.lifecycle() == Lifecycle::Ignore {
            continue;
        }
        w.set_current_task(Some(node.key().clone()));
        node.task().render_terraform(w).map_err(|e| Error::Task {
            key: node.key().clone(),
            source: Box::new(e),
        })?;
    }
    w.set_current_task(None);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitises_like_kops() {
        assert_eq!(
            sanitize_name("minimal-aws.example.com"),
            "minimal-aws-example-com"
        );
        assert_eq!(sanitize_name("route-0.0.0.0/0"), "route-0-0-0-0--0");
        assert_eq!(sanitize_name("route-::/0"), "route-__--0");
        assert_eq!(
            sanitize_name("123.example.com-ASGLifecycle"),
            "prefix_123-example-com-ASGLifecycle"
        );
    }

    #[test]
    fn unknown_reference_names_both_sides() {
        let mut w = TerraformWriter::new();
        w.set_current_task(Some(TaskKey::new("Subnet", "a")));
        w.resource(
            "aws_subnet",
            "a",
            Body::new().attr("vpc_id", TaskKey::new("VPC", "missing").to_ref()),
        )
        .unwrap();
        let err = w.finish().unwrap_err().to_string();
        assert!(
            err.contains("Subnet/a") && err.contains("VPC/missing"),
            "{err}"
        );
    }

    #[test]
    fn variables_come_first_and_resources_read_them() {
        let mut w = TerraformWriter::new();
        w.variable(
            "token",
            Body::new()
                .attr("sensitive", true)
                .attr("type", Expr::traversal("string")),
        );
        w.output("cluster_name", "a.example.com");
        w.resource(
            "x_object",
            "a",
            Body::new().attr("secret", Expr::traversal("var.token")),
        )
        .unwrap();
        let out = w.finish().unwrap();
        let main = out.main_tf();
        assert!(
            main.starts_with(
                "variable \"token\" {\n  sensitive = true\n  type      = string\n}\n\nlocals {"
            ),
            "{main}"
        );
        assert!(main.contains("  secret = var.token\n"), "{main}");
    }
}
