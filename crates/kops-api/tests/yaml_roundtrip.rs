//! Property: whatever `kops_api::yaml` writes reads back (as YAML 1.1, the way
//! go-yaml reads it) to the same value.
//!
//! Strings avoid U+2028 and U+2029 only: go-yaml writes them raw as line
//! breaks (YAML 1.1 breaks), which a YAML 1.2 syntax reader takes as text.

use proptest::prelude::*;
use serde_json::{Map, Number, Value};

fn string() -> impl Strategy<Value = String> {
    prop_oneof![
        // Words YAML 1.1 would read as another type.
        prop::sample::select(vec![
            "",
            "y",
            "Yes",
            "on",
            "OFF",
            "~",
            "null",
            "NULL",
            "true",
            "1",
            "-1",
            "+1",
            "0x1F",
            "0o12",
            "012",
            "0b11",
            "1_000",
            "1.30",
            ".5",
            "1e3",
            "-.inf",
            ".NaN",
            "1:20",
            "2016-12-10T22:42:27Z",
            "2021-1-2",
            "<<",
            "-",
            "?",
            ":",
            "---",
            "...",
            "- a",
            "a: b",
            "#x",
            "a #b",
            "'q'",
            "\"dq\"",
            "\\",
            "|",
            ">",
            "@",
            "`",
            "%",
            "&a",
            "*a",
            "!t",
        ])
        .prop_map(str::to_string),
        // Printable ASCII with indicators.
        "[ -~]{0,20}",
        // Text with spaces, long enough to fold.
        prop::collection::vec("[a-zA-Z0-9:#,-]{1,12}", 0..30).prop_map(|w| w.join(" ")),
        prop::collection::vec("[a-z ]{0,12}", 0..20).prop_map(|w| w.join("  ")),
        // Multi-line text, leading and trailing spaces and breaks.
        "[a-z \n]{0,40}",
        "[ \t\na-z'\"\\\\]{0,30}",
        // Unicode: control characters, no-break space, BOM, astral characters.
        "[\u{0}-\u{1f}\u{7f}-\u{a0}é\u{feff}\u{fffe}\u{1f600}a ]{0,12}",
    ]
}

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|i| Value::Number(i.into())),
        any::<u64>().prop_map(|u| Value::Number(u.into())),
        // Non-integral floats (integral ones are written as integers, as Go does).
        any::<f64>()
            .prop_filter("finite, non-integral", |f| f.is_finite()
                && f.fract() != 0.0)
            .prop_map(|f| Value::Number(Number::from_f64(f).unwrap_or_else(|| 0.into()))),
        string().prop_map(Value::String),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    scalar().prop_recursive(4, 48, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((string(), inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<String, Value>>())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn written_yaml_reads_back(v in value()) {
        let text = kops_api::yaml::value_to_string(&v);
        let back = kops_api::yaml::from_str(&text)
            .map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(&back, &v, "text:\n{}", text);
        // Writing is deterministic and stable under a second round trip.
        prop_assert_eq!(kops_api::yaml::value_to_string(&back), text);
    }

    #[test]
    fn strings_at_any_indent_read_back(s in string(), depth in 0usize..5, in_list in any::<bool>()) {
        let mut v = Value::String(s);
        for i in 0..depth {
            v = if in_list && i % 2 == 0 {
                Value::Array(vec![v])
            } else {
                Value::Object(Map::from_iter([(format!("k{i}"), v)]))
            };
        }
        let text = kops_api::yaml::value_to_string(&v);
        let back = kops_api::yaml::from_str(&text)
            .map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(back, v, "text:\n{}", text);
    }
}
