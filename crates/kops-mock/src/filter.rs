//! Tags and describe filters with AWS semantics.
//!
//! A describe call takes a list of [`Filter`]s. Every filter must match (AND); a filter
//! matches when any of its values matches (OR). Values may use the wildcards `*` (any run
//! of characters) and `?` (one character), as AWS allows. Besides each kind's own filter
//! names (`vpc-id`, `availability-zone`, ...), every taggable kind accepts:
//!
//! - `tag:<key>`: the object has tag `<key>` with one of the values;
//! - `tag-key`: the object has a tag whose key is one of the values;
//! - `tag-value`: the object has a tag whose value is one of the values.
//!
//! An unknown filter name, or a filter without values, is an [`crate::Error::Invalid`],
//! as it is on AWS.

use std::collections::BTreeMap;

use crate::error::{Error, Result};

/// Tags of an object: key to value (a tag without a value has the value `""`).
pub type Tags = BTreeMap<String, String>;

/// One describe filter: a name and the values any of which may match.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Filter {
    /// The filter name: `tag:<key>`, `tag-key`, `tag-value` or a kind's own name.
    pub name: String,
    /// The accepted values (OR); `*` and `?` are wildcards.
    pub values: Vec<String>,
}

impl Filter {
    /// A filter with a name and values.
    pub fn new<I, S>(name: impl Into<String>, values: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Filter {
            name: name.into(),
            values: values.into_iter().map(Into::into).collect(),
        }
    }

    /// `tag:<key>` = `value`.
    pub fn tag(key: &str, value: impl Into<String>) -> Self {
        Filter::new(format!("tag:{key}"), [value.into()])
    }

    /// `tag-key` = `key`: the object has the tag, with any value.
    pub fn tag_key(key: impl Into<String>) -> Self {
        Filter::new("tag-key", [key.into()])
    }
}

/// Builds the tag map from pairs.
pub fn tags<I, K, V>(pairs: I) -> Tags
where
    I: IntoIterator<Item = (K, V)>,
    K: Into<String>,
    V: Into<String>,
{
    pairs
        .into_iter()
        .map(|(k, v)| (k.into(), v.into()))
        .collect()
}

/// An object that describe filters apply to.
pub(crate) trait Filterable {
    /// The kind's own filter names (besides the tag filters).
    const FILTERS: &'static [&'static str];
    /// The object's tags (empty for kinds without tags).
    fn tags(&self) -> &Tags;
    /// The object's values for one of [`Filterable::FILTERS`].
    fn attr(&self, name: &str) -> Vec<String>;
}

/// Checks that every filter is known to kind `T` and has values.
pub(crate) fn validate<T: Filterable>(operation: &str, filters: &[Filter]) -> Result<()> {
    for (i, f) in filters.iter().enumerate() {
        let known = f.name == "tag-key"
            || f.name == "tag-value"
            || f.name.strip_prefix("tag:").is_some_and(|k| !k.is_empty())
            || T::FILTERS.contains(&f.name.as_str());
        if !known {
            return Err(Error::invalid(
                operation,
                format!("Filters[{i}].Name"),
                format!("the filter {:?} is invalid", f.name),
            ));
        }
        if f.values.is_empty() {
            return Err(Error::invalid(
                operation,
                format!("Filters[{i}].Values"),
                format!("filter {:?} has no values", f.name),
            ));
        }
    }
    Ok(())
}

/// Whether `item` matches every filter (filters must have been validated).
pub(crate) fn matches<T: Filterable>(item: &T, filters: &[Filter]) -> bool {
    filters.iter().all(|f| matches_one(item, f))
}

fn matches_one<T: Filterable>(item: &T, f: &Filter) -> bool {
    let any = |candidates: &mut dyn Iterator<Item = &str>| {
        let mut hit = false;
        for c in candidates {
            if f.values.iter().any(|v| glob(v, c)) {
                hit = true;
                break;
            }
        }
        hit
    };
    if let Some(key) = f.name.strip_prefix("tag:") {
        return item
            .tags()
            .get(key)
            .is_some_and(|v| any(&mut std::iter::once(v.as_str())));
    }
    match f.name.as_str() {
        "tag-key" => any(&mut item.tags().keys().map(String::as_str)),
        "tag-value" => any(&mut item.tags().values().map(String::as_str)),
        name => {
            let vals = item.attr(name);
            any(&mut vals.iter().map(String::as_str))
        }
    }
}

/// Matches `text` against `pattern` with `*` and `?` wildcards (`\` escapes either).
pub(crate) fn glob(pattern: &str, text: &str) -> bool {
    fn tokens(p: &str) -> Vec<Tok> {
        let mut out = Vec::new();
        let mut chars = p.chars();
        while let Some(c) = chars.next() {
            out.push(match c {
                '*' => Tok::Star,
                '?' => Tok::One,
                '\\' => Tok::Lit(chars.next().unwrap_or('\\')),
                c => Tok::Lit(c),
            });
        }
        out
    }
    #[derive(Clone, Copy)]
    enum Tok {
        Star,
        One,
        Lit(char),
    }
    let p = tokens(pattern);
    let t: Vec<char> = text.chars().collect();
    // Iterative matcher with backtracking to the last star.
    let (mut pi, mut ti) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        match p.get(pi) {
            Some(Tok::Star) => {
                star = Some((pi, ti));
                pi += 1;
            }
            Some(Tok::One) => {
                pi += 1;
                ti += 1;
            }
            Some(Tok::Lit(c)) if *c == t[ti] => {
                pi += 1;
                ti += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    pi = sp + 1;
                    ti = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|t| matches!(t, Tok::Star))
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Thing {
        tags: Tags,
        zone: String,
    }

    impl Filterable for Thing {
        const FILTERS: &'static [&'static str] = &["availability-zone"];
        fn tags(&self) -> &Tags {
            &self.tags
        }
        fn attr(&self, name: &str) -> Vec<String> {
            match name {
                "availability-zone" => vec![self.zone.clone()],
                _ => vec![],
            }
        }
    }

    fn thing(pairs: &[(&str, &str)], zone: &str) -> Thing {
        Thing {
            tags: tags(pairs.iter().copied()),
            zone: zone.into(),
        }
    }

    #[test]
    fn glob_wildcards() {
        assert!(glob("abc", "abc"));
        assert!(!glob("abc", "abcd"));
        assert!(glob("a*", "abcd"));
        assert!(glob("*d", "abcd"));
        assert!(glob("a*c*", "abxxcyy"));
        assert!(glob("a?c", "abc"));
        assert!(!glob("a?c", "ac"));
        assert!(glob("*", ""));
        assert!(glob("a\\*", "a*"));
        assert!(!glob("a\\*", "ab"));
        assert!(glob("*.example.com", "api.example.com"));
        assert!(!glob("*.example.com", "example.org"));
    }

    #[test]
    fn tag_filter_semantics() {
        let a = thing(&[("Name", "a"), ("KubernetesCluster", "c1")], "z1");
        let b = thing(&[("Name", "b"), ("KubernetesCluster", "c2")], "z2");
        let c = thing(&[("Other", "")], "z1");
        // tag:Key=value
        let f = [Filter::tag("KubernetesCluster", "c1")];
        assert!(matches(&a, &f));
        assert!(!matches(&b, &f));
        assert!(!matches(&c, &f));
        // multiple values: OR
        let f = [Filter::new("tag:KubernetesCluster", ["c1", "c2"])];
        assert!(matches(&a, &f) && matches(&b, &f) && !matches(&c, &f));
        // multiple filters: AND
        let f = [
            Filter::new("tag:KubernetesCluster", ["c1", "c2"]),
            Filter::new("availability-zone", ["z2"]),
        ];
        assert!(!matches(&a, &f) && matches(&b, &f));
        // tag-key: any value, including empty
        let f = [Filter::tag_key("Other")];
        assert!(matches(&c, &f) && !matches(&a, &f));
        // tag-value
        let f = [Filter::new("tag-value", ["b"])];
        assert!(matches(&b, &f) && !matches(&a, &f));
        // wildcard value
        let f = [Filter::new("tag:Name", ["*"])];
        assert!(matches(&a, &f) && !matches(&c, &f));
        // empty tag value matches "" only
        let f = [Filter::tag("Other", "")];
        assert!(matches(&c, &f));
        let f = [Filter::tag("Other", "x")];
        assert!(!matches(&c, &f));
    }

    #[test]
    fn invalid_filters_are_rejected() {
        assert!(validate::<Thing>("op", &[Filter::new("bogus", ["x"])]).is_err());
        assert!(validate::<Thing>("op", &[Filter::new("tag:", ["x"])]).is_err());
        let empty: [&str; 0] = [];
        assert!(validate::<Thing>("op", &[Filter::new("tag:a", empty)]).is_err());
        assert!(validate::<Thing>("op", &[Filter::new("availability-zone", ["z"])]).is_ok());
    }
}
