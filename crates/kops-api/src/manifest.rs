//! Reading and writing manifests: multi-document YAML and JSON.
//!
//! [`parse`] accepts what `kops get -o yaml|json` prints and what users keep in
//! their repositories: one or more YAML documents separated by `---`, a single
//! JSON object, a JSON array of objects, or a JSON `List`. kOps objects
//! (`kops.k8s.io/v1alpha2`, also spelled `kops/v1alpha2`) are decoded strictly:
//! a field the schema does not know is an error that names its path.
//! Objects of other API groups (for example a `KubeSchedulerConfiguration`
//! passed to the cluster as an additional object) are kept as
//! [`Object::Other`].
//!
//! ```
//! let text = b"apiVersion: kops.k8s.io/v1alpha2\nkind: Cluster\nmetadata:\n  name: a.example.com\nspec:\n  networking:\n    foo: {}\n";
//! let err = kops_api::manifest::parse(text, "cluster.yaml").unwrap_err();
//! assert_eq!(err.to_string(), "cluster.yaml: document 1: spec.networking.foo: unknown field (line 7, column 5)");
//! ```

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize, Serializer};

use crate::v1alpha2::{self, Boxed};
use crate::{Error, Result};

/// One object of a manifest.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
// The variants hold the wire types directly (callers match on them); a
// manifest holds a handful of objects, so the size difference does not matter.
#[allow(clippy::large_enum_variant)]
pub enum Object {
    /// A `Cluster`.
    Cluster(v1alpha2::Cluster),
    /// An `InstanceGroup`.
    InstanceGroup(v1alpha2::InstanceGroup),
    /// An `SSHCredential`.
    SshCredential(v1alpha2::SshCredential),
    /// An object that is not a kOps object (another API group), kept untyped.
    Other(OtherObject),
}

/// A non-kOps object found in a manifest, kept as an untyped tree.
///
/// YAML scalars are typed the way YAML 1.2 reads them (`1.30` becomes a
/// number), as any untyped YAML reader would.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct OtherObject {
    /// `apiVersion` as written.
    pub api_version: String,
    /// `kind` as written.
    pub kind: String,
    /// The whole object.
    pub value: serde_json::Value,
}

impl OtherObject {
    /// The object `value`, its `apiVersion` and `kind` read from it (empty when absent).
    pub fn new(value: serde_json::Value) -> Self {
        let text = |k: &str| value[k].as_str().unwrap_or_default().to_owned();
        OtherObject {
            api_version: text("apiVersion"),
            kind: text("kind"),
            value,
        }
    }
}

impl Object {
    /// The object's `kind` as written on the wire.
    pub fn kind(&self) -> &str {
        match self {
            Object::Cluster(o) => &o.kind,
            Object::InstanceGroup(o) => &o.kind,
            Object::SshCredential(o) => &o.kind,
            Object::Other(o) => &o.kind,
        }
    }

    /// The object's `metadata.name`, if it has one.
    pub fn name(&self) -> Option<&str> {
        match self {
            Object::Cluster(o) => o.metadata.name.as_deref(),
            Object::InstanceGroup(o) => o.metadata.name.as_deref(),
            Object::SshCredential(o) => o.metadata.name.as_deref(),
            Object::Other(o) => o.value.get("metadata")?.get("name")?.as_str(),
        }
    }
}

impl Serialize for Object {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            Object::Cluster(o) => o.serialize(s),
            Object::InstanceGroup(o) => o.serialize(s),
            Object::SshCredential(o) => o.serialize(s),
            Object::Other(o) => o.value.serialize(s),
        }
    }
}

impl From<v1alpha2::Cluster> for Object {
    fn from(o: v1alpha2::Cluster) -> Self {
        Object::Cluster(o)
    }
}

impl From<v1alpha2::InstanceGroup> for Object {
    fn from(o: v1alpha2::InstanceGroup) -> Self {
        Object::InstanceGroup(o)
    }
}

impl From<v1alpha2::SshCredential> for Object {
    fn from(o: v1alpha2::SshCredential) -> Self {
        Object::SshCredential(o)
    }
}

/// Only `apiVersion` and `kind`; everything else is skipped.
#[derive(Deserialize)]
struct Head {
    #[serde(rename = "apiVersion", default)]
    api_version: Option<String>,
    #[serde(default)]
    kind: Option<String>,
}

enum Kind {
    Cluster,
    InstanceGroup,
    SshCredential,
    Other,
}

fn classify(file: &str, document: usize, head: &Head) -> Result<Kind> {
    let (Some(api_version), Some(kind)) = (head.api_version.as_deref(), head.kind.as_deref())
    else {
        let missing = if head.api_version.is_none() {
            "apiVersion"
        } else {
            "kind"
        };
        return Err(Error::Parse {
            file: file.to_string(),
            document,
            path: missing.to_string(),
            message: "required field is missing".to_string(),
        });
    };
    let is_kops =
        api_version == v1alpha2::API_VERSION || api_version == v1alpha2::LEGACY_API_VERSION;
    if !is_kops {
        if api_version.starts_with("kops.k8s.io/") || api_version.starts_with("kops/") {
            return Err(Error::UnsupportedKind {
                file: file.to_string(),
                document,
                api_version: api_version.to_string(),
                kind: kind.to_string(),
            });
        }
        return Ok(Kind::Other);
    }
    match kind {
        "Cluster" => Ok(Kind::Cluster),
        "InstanceGroup" => Ok(Kind::InstanceGroup),
        "SSHCredential" => Ok(Kind::SshCredential),
        _ => Err(Error::UnsupportedKind {
            file: file.to_string(),
            document,
            api_version: api_version.to_string(),
            kind: kind.to_string(),
        }),
    }
}

/// Parses a manifest: multi-document YAML, or JSON (one object, an array of
/// objects, or a `List`). `source` names the input in errors.
///
/// Errors name the source, the 1-based document index and the field path.
pub fn parse(input: &[u8], source: &str) -> Result<Vec<Object>> {
    let text = std::str::from_utf8(input).map_err(|e| Error::Parse {
        file: source.to_string(),
        document: 1,
        path: String::new(),
        message: format!(
            "input is not UTF-8 text (invalid byte at offset {})",
            e.valid_up_to()
        ),
    })?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let trimmed = text.trim_start();
    if (trimmed.starts_with('{') || trimmed.starts_with('['))
        && let Ok(value) = serde_json::from_str::<serde_json::Value>(trimmed)
    {
        return parse_json(value, source);
    }
    parse_yaml(text, source)
}

fn parse_json(value: serde_json::Value, source: &str) -> Result<Vec<Object>> {
    let decoded = decode_json_items(value, source)?;
    Ok(decoded.into_iter().map(Decoded::into_object).collect())
}

fn decode_json_items(value: serde_json::Value, source: &str) -> Result<Vec<Decoded>> {
    let items = match value {
        serde_json::Value::Array(items) => items,
        serde_json::Value::Object(mut map)
            if map.get("kind").and_then(|k| k.as_str()) == Some("List")
                && map.get("items").is_some_and(|i| i.is_array()) =>
        {
            match map.remove("items") {
                Some(serde_json::Value::Array(items)) => items,
                _ => Vec::new(),
            }
        }
        other => vec![other],
    };
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.into_iter().enumerate() {
        let document = i + 1;
        let head = Head {
            api_version: item
                .get("apiVersion")
                .and_then(|v| v.as_str())
                .map(str::to_string),
            kind: item
                .get("kind")
                .and_then(|v| v.as_str())
                .map(str::to_string),
        };
        if !item.is_object() {
            return Err(Error::Parse {
                file: source.to_string(),
                document,
                path: String::new(),
                message: "expected an object".to_string(),
            });
        }
        let decoded = match classify(source, document, &head)? {
            Kind::Cluster => Decoded::Cluster(decode_json::<Boxed<_>>(item, source, document)?.0),
            Kind::InstanceGroup => {
                Decoded::InstanceGroup(decode_json::<Boxed<_>>(item, source, document)?.0)
            }
            Kind::SshCredential => {
                Decoded::SshCredential(decode_json::<Boxed<_>>(item, source, document)?.0)
            }
            Kind::Other => Decoded::Other(OtherObject {
                api_version: head.api_version.unwrap_or_default(),
                kind: head.kind.unwrap_or_default(),
                value: item,
            }),
        };
        out.push(decoded);
    }
    Ok(out)
}

fn decode_json<T: DeserializeOwned>(
    value: serde_json::Value,
    file: &str,
    document: usize,
) -> Result<T> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = path_string(e.path());
        Error::Parse {
            file: file.to_string(),
            document,
            message: tidy_message(&e.into_inner().to_string()),
            path,
        }
    })
}

fn path_string(path: &serde_path_to_error::Path) -> String {
    let s = path.to_string();
    if s == "." { String::new() } else { s }
}

/// Shortens serde messages: an unknown field is reported as such (with its
/// position when the parser gives one), without the list of the hundred
/// fields that would have been accepted.
/// Parser options for manifests: no source snippet in errors, because the
/// snippet quotes the offending line, and a value typed into the wrong field
/// may be a secret. Errors give the field path and the position instead.
pub(crate) fn yaml_options() -> serde_saphyr::Options {
    serde_saphyr::options! { with_snippet: false }
}

/// The parser's message made safe to show: without quoted input values
/// (serde's "invalid type: string \"...\"" form), and with the position kept.
fn tidy_message(message: &str) -> String {
    let message = redact_quoted(message.trim());
    let message = message.strip_prefix("error: ").unwrap_or(&message);
    if message.contains("unknown field") {
        return match position(message) {
            Some((line, column)) => format!("unknown field (line {line}, column {column})"),
            None => "unknown field".to_string(),
        };
    }
    message.trim().to_string()
}

/// Replaces every `"..."` and `` `...` `` span with `"…"`: serde's type
/// errors quote the input value, and the field path already says where.
pub(crate) fn redact_quoted(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut open: Option<char> = None;
    for c in message.chars() {
        match open {
            Some(q) if c == q => {
                out.push('…');
                out.push(c);
                open = None;
            }
            Some(_) => {}
            None if c == '"' || c == '`' => {
                out.push(c);
                open = Some(c);
            }
            None => out.push(c),
        }
    }
    if open.is_some() {
        out.push('…');
    }
    out
}

/// The first "line N column M" in a parser message.
fn position(message: &str) -> Option<(u64, u64)> {
    let i = message.find("line ")?;
    let rest = &message[i + 5..];
    let line_end = rest.find(|c: char| !c.is_ascii_digit())?;
    let line = rest[..line_end].parse().ok()?;
    let rest = rest[line_end..].trim_start_matches([',', ' ']);
    let rest = rest.strip_prefix("column ")?;
    let col_end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    let column = rest[..col_end].parse().ok()?;
    Some((line, column))
}

/// Splits a YAML stream into documents, each with the number of lines that
/// came before it in the input (see [`Document::padded`]).
fn split_documents(text: &str) -> Vec<Document> {
    let mut docs = Vec::new();
    let mut current = String::new();
    let mut offset = 0;
    let mut started = false;
    for (line_no, line) in text.split_inclusive('\n').enumerate() {
        let bare = line.trim_end_matches(['\n', '\r']);
        let rest = bare
            .strip_prefix("---")
            .filter(|rest| rest.chars().next().is_none_or(|c| c == ' ' || c == '\t'));
        let is_end = bare.trim_end() == "...";
        if rest.is_some() || is_end {
            if started || !current.trim().is_empty() {
                docs.push(Document {
                    offset,
                    body: std::mem::take(&mut current),
                });
            }
            started = true;
            offset = line_no;
            if let Some(rest) = rest {
                current.push_str("   ");
                current.push_str(rest);
            }
            current.push('\n');
        } else if bare.starts_with('%') {
            current.push('\n');
        } else {
            current.push_str(line);
        }
    }
    docs.push(Document {
        offset,
        body: current,
    });
    docs
}

/// One document of a YAML stream.
struct Document {
    /// Lines of the input before the document.
    offset: usize,
    /// The document's text (its separator line blanked).
    body: String,
}

impl Document {
    /// The document preceded by as many empty lines as came before it, so
    /// positions in the parser's errors are positions in the file. Built only
    /// for a document that is parsed: padding every document up front cost
    /// memory quadratic in the number of separators.
    fn padded(&self) -> String {
        let mut out = String::with_capacity(self.offset + self.body.len());
        out.extend(std::iter::repeat_n('\n', self.offset));
        out.push_str(&self.body);
        out
    }

    /// `parse` of the document alone; when that fails, of the [padded](Self::padded)
    /// document, so that the error's positions are the file's. Parsing every document
    /// padded made a stream's parse quadratic in its lines (the parser skips the padding).
    fn parse<T>(&self, parse: impl Fn(&str) -> Result<T>) -> Result<T> {
        parse(&self.body).or_else(|_| parse(&self.padded()))
    }
}

fn is_blank_document(doc: &str) -> bool {
    doc.lines().all(|l| {
        let t = l.trim();
        t.is_empty() || t.starts_with('#')
    })
}

fn parse_yaml(text: &str, source: &str) -> Result<Vec<Object>> {
    let decoded = decode_yaml_documents(text, source)?;
    Ok(decoded.into_iter().map(Decoded::into_object).collect())
}

fn decode_yaml_documents(text: &str, source: &str) -> Result<Vec<Decoded>> {
    let mut out = Vec::new();
    for (i, doc) in split_documents(text).iter().enumerate() {
        let document = i + 1;
        if is_blank_document(&doc.body) {
            continue;
        }
        let head: Option<Head> = doc.parse(|text| {
            serde_saphyr::from_str_with_options(text, yaml_options()).map_err(|e| Error::Parse {
                file: source.to_string(),
                document,
                path: String::new(),
                message: tidy_message(&e.to_string()),
            })
        })?;
        let Some(head) = head else { continue };
        let decoded = match classify(source, document, &head)? {
            Kind::Cluster => Decoded::Cluster(
                doc.parse(|text| decode_yaml::<Boxed<_>>(text, source, document))?
                    .0,
            ),
            Kind::InstanceGroup => Decoded::InstanceGroup(
                doc.parse(|text| decode_yaml::<Boxed<_>>(text, source, document))?
                    .0,
            ),
            Kind::SshCredential => Decoded::SshCredential(
                doc.parse(|text| decode_yaml::<Boxed<_>>(text, source, document))?
                    .0,
            ),
            Kind::Other => Decoded::Other(OtherObject {
                api_version: head.api_version.unwrap_or_default(),
                kind: head.kind.unwrap_or_default(),
                value: doc.parse(|text| decode_yaml(text, source, document))?,
            }),
        };
        out.push(decoded);
    }
    Ok(out)
}

fn decode_yaml<T: DeserializeOwned>(doc: &str, file: &str, document: usize) -> Result<T> {
    let mut path = String::new();
    let result = serde_saphyr::with_deserializer_from_str_with_options(doc, yaml_options(), |de| {
        serde_path_to_error::deserialize(de).map_err(|e| {
            path = path_string(e.path());
            e.into_inner()
        })
    });
    result.map_err(|e| Error::Parse {
        file: file.to_string(),
        document,
        path,
        message: tidy_message(&e.to_string()),
    })
}

/// A decoded kOps object, boxed.
///
/// The functions on the decoding path handle only this pointer-sized value,
/// never an [`Object`] (a `Cluster` is ~18 KB): in debug builds every
/// temporary of a function gets its own stack slot, and with the nesting of
/// serde's generic layers that once took over 1 MiB of stack per manifest.
enum Decoded {
    Cluster(Box<v1alpha2::Cluster>),
    InstanceGroup(Box<v1alpha2::InstanceGroup>),
    SshCredential(Box<v1alpha2::SshCredential>),
    Other(OtherObject),
}

impl Decoded {
    /// The object, with `apiVersion` normalised to [`v1alpha2::API_VERSION`]
    /// (the legacy spelling is accepted on input only).
    fn into_object(self) -> Object {
        let api_version = || v1alpha2::API_VERSION.to_string();
        match self {
            Decoded::Cluster(mut c) => {
                c.api_version = api_version();
                Object::Cluster(*c)
            }
            Decoded::InstanceGroup(mut g) => {
                g.api_version = api_version();
                Object::InstanceGroup(*g)
            }
            Decoded::SshCredential(mut s) => {
                s.api_version = api_version();
                Object::SshCredential(*s)
            }
            Decoded::Other(o) => Object::Other(o),
        }
    }
}

/// Writes objects as YAML documents separated by `---`.
pub fn to_yaml(objects: &[Object]) -> Result<String> {
    let mut out = String::new();
    for (i, object) in objects.iter().enumerate() {
        if i > 0 {
            out.push_str("---\n");
        }
        let text = serde_saphyr::to_string(object).map_err(|e| Error::Serialize {
            what: format!(
                "{} {:?} as YAML",
                object.kind(),
                object.name().unwrap_or("")
            ),
            message: e.to_string(),
        })?;
        out.push_str(&text);
        if !out.ends_with('\n') {
            out.push('\n');
        }
    }
    Ok(out)
}

/// Writes objects as pretty-printed JSON: one object as a JSON object, several
/// as a JSON array.
pub fn to_json(objects: &[Object]) -> Result<String> {
    let result = if objects.len() == 1 {
        serde_json::to_string_pretty(&objects[0])
    } else {
        serde_json::to_string_pretty(objects)
    };
    result.map_err(|e| Error::Serialize {
        what: "objects as JSON".to_string(),
        message: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_documents_and_keeps_lines() {
        let docs = split_documents("a: 1\n---\nb: 2\n--- \nc: 3\n");
        assert_eq!(docs.len(), 3);
        assert_eq!(docs[1].padded(), "\n   \nb: 2\n");
        assert_eq!(docs[2].offset, 3);
        assert!(docs[2].padded().ends_with("c: 3\n"));
    }

    #[test]
    fn many_separators_cost_linear_memory() {
        // 200,000 empty documents: padding each with the lines before it
        // would take 20 GB.
        let text = "---\n".repeat(200_000);
        assert!(parse(text.as_bytes(), "seps").unwrap().is_empty());
        let text = format!("{text}apiVersion: kops.k8s.io/v1alpha2\nkind: Cluster\nfoo: 1\n");
        let err = parse(text.as_bytes(), "seps").unwrap_err().to_string();
        assert!(err.contains("document 200000"), "{err}");
        assert!(err.contains("line 200003"), "{err}");
    }
}
