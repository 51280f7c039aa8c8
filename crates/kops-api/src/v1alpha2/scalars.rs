//! Scalar and Kubernetes core types that kOps' v1alpha2 schema borrows.

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A Go duration as written on the wire (`"5m0s"`, `"90s"`), kept as text.
pub type Duration = String;

/// An RFC 3339 timestamp as written on the wire, kept as text.
pub type Time = String;

/// Pod affinity rules (Kubernetes `core/v1.Affinity`), kept as an untyped tree.
///
/// The Kubernetes affinity schema is large and kOps only passes it through to
/// add-on manifests; it is stored losslessly rather than typed.
pub type Affinity = serde_json::Value;

/// A Kubernetes resource quantity (`100m`, `128Mi`, `2`), kept in
/// Kubernetes' canonical text form.
///
/// Accepts a string or a number on input and rejects text that is not a
/// quantity. Like Kubernetes, it stores the value in canonical form: `3.14`
/// becomes `3140m`, `1024Mi` becomes `1Gi`, `2000` becomes `2k`; values
/// finer than nano units are rounded up.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Quantity(pub String);

impl Quantity {
    /// The quantity as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Parses and canonicalises a quantity; the error says what is wrong.
    pub fn parse(text: &str) -> Result<Quantity, String> {
        canonical_quantity(text).map(Quantity)
    }
}

impl From<&str> for Quantity {
    /// Wraps text as it is, without checking it (for defaults written in
    /// canonical form).
    fn from(s: &str) -> Self {
        Quantity(s.to_string())
    }
}

impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Serialize for Quantity {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

struct QuantityVisitor;

impl Visitor<'_> for QuantityVisitor {
    type Value = Quantity;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a resource quantity such as 100m or 128Mi")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Quantity, E> {
        Quantity::parse(v).map_err(E::custom)
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Quantity, E> {
        Quantity::parse(&v.to_string()).map_err(E::custom)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Quantity, E> {
        Quantity::parse(&v.to_string()).map_err(E::custom)
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Quantity, E> {
        Quantity::parse(&v.to_string()).map_err(E::custom)
    }
}

impl<'de> Deserialize<'de> for Quantity {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(QuantityVisitor)
    }
}

#[derive(Clone, Copy, PartialEq)]
enum QuantityFormat {
    DecimalSi,
    BinarySi,
    DecimalExponent,
}

/// Kubernetes' canonical form of a quantity (see [`Quantity`]).
fn canonical_quantity(text: &str) -> Result<String, String> {
    let bad = || format!("{text:?} is not a quantity (expected e.g. 100m, 0.5, 128Mi, 2G or 1e3)");
    let t = text.trim();
    let (negative, body) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let number_len = body
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(body.len());
    let (number, suffix) = body.split_at(number_len);
    if number.is_empty() || number == "." || number.matches('.').count() > 1 {
        return Err(bad());
    }
    let (int_part, frac_part) = number.split_once('.').unwrap_or((number, ""));
    let digits = format!("{int_part}{frac_part}");
    let digits = digits.trim_start_matches('0');
    // Anything that fits 128 bits is accepted, so every canonical form this
    // function writes can be read again.
    let mut mantissa: i128 = if digits.is_empty() {
        0
    } else {
        digits
            .parse()
            .map_err(|_| format!("{text:?} has too many digits for a quantity"))?
    };
    let mut exp: i32 = -i32::try_from(frac_part.len()).map_err(|_| bad())?;
    let (format, scale10, pow1024) = match suffix {
        "" => (QuantityFormat::DecimalSi, 0, 0),
        "n" => (QuantityFormat::DecimalSi, -9, 0),
        "u" => (QuantityFormat::DecimalSi, -6, 0),
        "m" => (QuantityFormat::DecimalSi, -3, 0),
        "k" => (QuantityFormat::DecimalSi, 3, 0),
        "M" => (QuantityFormat::DecimalSi, 6, 0),
        "G" => (QuantityFormat::DecimalSi, 9, 0),
        "T" => (QuantityFormat::DecimalSi, 12, 0),
        "P" => (QuantityFormat::DecimalSi, 15, 0),
        "E" => (QuantityFormat::DecimalSi, 18, 0),
        "Ki" => (QuantityFormat::BinarySi, 0, 1),
        "Mi" => (QuantityFormat::BinarySi, 0, 2),
        "Gi" => (QuantityFormat::BinarySi, 0, 3),
        "Ti" => (QuantityFormat::BinarySi, 0, 4),
        "Pi" => (QuantityFormat::BinarySi, 0, 5),
        "Ei" => (QuantityFormat::BinarySi, 0, 6),
        s if s.starts_with(['e', 'E']) => {
            let e: i32 = s[1..].parse().map_err(|_| bad())?;
            if !(-30..=30).contains(&e) {
                return Err(format!("{text:?}: exponent out of range"));
            }
            (QuantityFormat::DecimalExponent, e, 0)
        }
        _ => return Err(bad()),
    };
    exp += scale10;
    for _ in 0..pow1024 {
        mantissa = mantissa
            .checked_mul(1024)
            .ok_or_else(|| format!("{text:?} is too large"))?;
    }
    // Round up to nano units, as Kubernetes does.
    if exp < -9 {
        let mut div: i128 = 1;
        for _ in 0..(-9 - exp) {
            div = div
                .checked_mul(10)
                .ok_or_else(|| format!("{text:?} is too precise"))?;
        }
        mantissa = (mantissa + div - 1) / div;
        exp = -9;
    }
    if mantissa == 0 {
        return Ok("0".to_string());
    }
    while mantissa % 10 == 0 {
        mantissa /= 10;
        exp += 1;
    }
    let sign = if negative { "-" } else { "" };
    // Small or fractional binary values are written in decimal form.
    let mut format = format;
    if format == QuantityFormat::BinarySi {
        let integral = exp >= 0;
        let value = if integral {
            scale_up(mantissa, exp)
        } else {
            None
        };
        match value {
            Some(v) if v >= 1024 => {
                let mut v = v;
                let mut k = 0;
                while k < 6 && v % 1024 == 0 {
                    v /= 1024;
                    k += 1;
                }
                let suffix = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"][k];
                return Ok(format!("{sign}{v}{suffix}"));
            }
            _ => format = QuantityFormat::DecimalSi,
        }
    }
    // Decimal: the largest exponent that is a multiple of 3 (within n..E) and
    // keeps the mantissa whole.
    let mut e3 = exp.div_euclid(3) * 3;
    e3 = e3.clamp(-9, 18);
    let m = scale_up(mantissa, exp - e3).ok_or_else(|| format!("{text:?} is too large"))?;
    let suffix = match format {
        QuantityFormat::DecimalExponent => {
            if e3 == 0 {
                String::new()
            } else {
                format!("e{e3}")
            }
        }
        _ => match e3 {
            -9 => "n",
            -6 => "u",
            -3 => "m",
            0 => "",
            3 => "k",
            6 => "M",
            9 => "G",
            12 => "T",
            15 => "P",
            _ => "E",
        }
        .to_string(),
    };
    Ok(format!("{sign}{m}{suffix}"))
}

fn scale_up(m: i128, exp: i32) -> Option<i128> {
    let mut v = m;
    for _ in 0..exp {
        v = v.checked_mul(10)?;
    }
    Some(v)
}

/// An integer or a string (Kubernetes `intstr.IntOrString`), e.g. `1` or `"25%"`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum IntOrString {
    /// An integer value.
    Int(i64),
    /// A string value, typically a percentage.
    String(String),
}

impl Serialize for IntOrString {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            IntOrString::Int(i) => s.serialize_i64(*i),
            IntOrString::String(v) => s.serialize_str(v),
        }
    }
}

struct IntOrStringVisitor;

impl Visitor<'_> for IntOrStringVisitor {
    type Value = IntOrString;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an integer or a string")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<IntOrString, E> {
        Ok(IntOrString::String(v.to_string()))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<IntOrString, E> {
        Ok(IntOrString::Int(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<IntOrString, E> {
        i64::try_from(v)
            .map(IntOrString::Int)
            .map_err(|_| E::custom("integer out of range"))
    }
}

impl<'de> Deserialize<'de> for IntOrString {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(IntOrStringVisitor)
    }
}

/// A pod toleration (Kubernetes `core/v1.Toleration`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[non_exhaustive]
pub struct Toleration {
    /// Taint key the toleration applies to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// `Exists` or `Equal`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operator: Option<String>,
    /// Taint value to match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// Taint effect to match (`NoSchedule`, `PreferNoSchedule`, `NoExecute`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effect: Option<String>,
    /// How long a `NoExecute` taint is tolerated, in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub toleration_seconds: Option<i64>,
}

/// An environment variable (Kubernetes `core/v1.EnvVar`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[non_exhaustive]
pub struct CoreEnvVar {
    /// Variable name.
    #[serde(default)]
    pub name: String,
    /// Literal value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// A reference to a secret, config map or field, kept untyped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_from: Option<serde_json::Value>,
}

/// Kubernetes object metadata (`metav1.ObjectMeta`), the fields kOps objects use.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[non_exhaustive]
pub struct ObjectMeta {
    /// Annotations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<BTreeMap<String, String>>,
    /// Creation time (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub creation_timestamp: Option<Time>,
    /// Grace period before deletion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion_grace_period_seconds: Option<i64>,
    /// Deletion time (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion_timestamp: Option<Time>,
    /// Finalizers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finalizers: Option<Vec<String>>,
    /// Prefix for a generated name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generate_name: Option<String>,
    /// Spec generation, bumped when the spec changes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<i64>,
    /// Labels, e.g. `kops.k8s.io/cluster` on instance groups.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<BTreeMap<String, String>>,
    /// Server-side apply bookkeeping, kept untyped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub managed_fields: Option<Vec<serde_json::Value>>,
    /// Object name; for a Cluster the cluster's DNS name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Namespace (unused by kOps objects, accepted for compatibility).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Owner references, kept untyped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner_references: Option<Vec<serde_json::Value>>,
    /// Storage version marker.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_version: Option<String>,
    /// Legacy self link.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub self_link: Option<String>,
    /// Unique id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
}

impl ObjectMeta {
    /// Metadata with only a name.
    pub fn named(name: impl Into<String>) -> Self {
        ObjectMeta {
            name: Some(name.into()),
            ..Default::default()
        }
    }
}

/// A secret string (a gossip secret, a password). `Debug` prints
/// `<redacted>`; serialisation writes the value, as the manifest must hold it.
#[derive(Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Secret(pub String);

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_are_canonical() {
        let c = |s: &str| Quantity::parse(s).unwrap().0;
        assert_eq!(c("3.14"), "3140m");
        assert_eq!(c("0.5"), "500m");
        assert_eq!(c("100m"), "100m");
        assert_eq!(c("1000m"), "1");
        assert_eq!(c("1500"), "1500");
        assert_eq!(c("2000"), "2k");
        assert_eq!(c("128Mi"), "128Mi");
        assert_eq!(c("1024Mi"), "1Gi");
        assert_eq!(c("1.5Gi"), "1536Mi");
        assert_eq!(c("0.5Ki"), "512");
        assert_eq!(c("1G"), "1G");
        assert_eq!(c("1e3"), "1e3");
        assert_eq!(c("0"), "0");
        assert_eq!(c("-250m"), "-250m");
        assert_eq!(c("1.0000000001"), "1000000001n");
        assert_eq!(c("0.0000000001"), "1n");
        for bad in ["", "abc", "1.2.3", "10X", "1e", "m"] {
            assert!(Quantity::parse(bad).is_err(), "{bad:?} must be rejected");
        }
    }

    proptest::proptest! {
        /// Parsing never panics, and canonical text is a fixed point.
        #[test]
        fn canonical_form_is_stable(
            text in "[-+]?[0-9]{0,12}(\\.[0-9]{0,12})?(n|u|m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei|e[0-9]|E-[0-9]|x)?"
        ) {
            if let Ok(q) = Quantity::parse(&text) {
                proptest::prop_assert_eq!(Quantity::parse(&q.0).map(|q| q.0), Ok(q.0.clone()));
            }
        }
    }
}
