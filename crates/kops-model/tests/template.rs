//! The template engine of `kops toolbox template`: the language, the functions, the
//! `--set` syntax and the merge of values.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use kops_model::template::{Templater, merge_values, set_values};
use serde_json::{Value, json};

fn render(text: &str, data: &Value) -> String {
    Templater::new()
        .render("t", text, data)
        .unwrap_or_else(|e| panic!("{text:?}: {e}"))
}

fn render_err(text: &str, data: &Value) -> String {
    match Templater::new().render("t", text, data) {
        Ok(out) => panic!("{text:?} rendered {out:?}, wanted an error"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn text_fields_and_trim_markers() {
    let d = json!({"a": {"b": "x"}, "n": 3});
    assert_eq!(render("hi {{ .a.b }}!", &d), "hi x!");
    assert_eq!(render("a  \n  {{- .n -}}  \n b", &d), "a3b");
    assert_eq!(render("a {{- .n }} b", &d), "a3 b");
    assert_eq!(render("x{{/* a comment */}}y", &d), "xy");
    assert_eq!(render("x \n{{- /* c */ -}}\n y", &d), "xy");
    assert_eq!(render("{{ $.a.b }}", &d), "x");
    assert_eq!(
        render(r#"{{ "q\n\"" }}{{ `r\n` }}{{ 1.5 }}{{ -2 }}{{ true }}"#, &d),
        "q\n\"r\\n1.5-2true"
    );
}

#[test]
fn printing_as_go() {
    let d = json!({"l": [1, "a", true, null], "m": {"z": 1, "a": [2]}, "f": 2.5, "big": 1e21, "nil": null});
    assert_eq!(render("{{ .l }}", &d), "[1 a true <nil>]");
    assert_eq!(render("{{ .m }}", &d), "map[a:[2] z:1]");
    assert_eq!(
        render("{{ .f }} {{ .big }} {{ .nil }}", &d),
        "2.5 1e+21 <no value>"
    );
}

#[test]
fn if_else_if_else() {
    let t = "{{ if eq .x 1 }}one{{ else if eq .x 2 }}two{{ else }}many{{ end }}";
    assert_eq!(render(t, &json!({"x": 1})), "one");
    assert_eq!(render(t, &json!({"x": 2})), "two");
    assert_eq!(render(t, &json!({"x": 7})), "many");
    // Truthiness as Go's.
    let t = "{{ if .v }}T{{ else }}F{{ end }}";
    for (v, want) in [
        (json!(0), "F"),
        (json!(""), "F"),
        (json!([]), "F"),
        (json!({}), "F"),
        (json!(null), "F"),
        (json!(false), "F"),
        (json!(0.5), "T"),
        (json!("0"), "T"),
        (json!([0]), "T"),
    ] {
        assert_eq!(render(t, &json!({"v": v})), want, "{v}");
    }
}

#[test]
fn range_lists_and_maps_in_sorted_order() {
    let d = json!({"l": ["a", "b"], "m": {"zeta": 1, "alpha": 2, "mid": 3}, "e": []});
    assert_eq!(render("{{ range .l }}<{{ . }}>{{ end }}", &d), "<a><b>");
    assert_eq!(
        render("{{ range $i, $v := .l }}{{ $i }}={{ $v }};{{ end }}", &d),
        "0=a;1=b;"
    );
    assert_eq!(
        render("{{ range $k, $v := .m }}{{ $k }}={{ $v }} {{ end }}", &d),
        "alpha=2 mid=3 zeta=1 "
    );
    assert_eq!(render("{{ range $v := .m }}{{ $v }}{{ end }}", &d), "231");
    assert_eq!(
        render("{{ range .e }}x{{ else }}empty{{ end }}", &d),
        "empty"
    );
    assert_eq!(
        render(
            "{{ range .l }}{{ if eq . \"b\" }}{{ break }}{{ end }}{{ . }}{{ end }}",
            &d
        ),
        "a"
    );
    assert_eq!(
        render(
            "{{ range .l }}{{ if eq . \"a\" }}{{ continue }}{{ end }}{{ . }}{{ end }}",
            &d
        ),
        "b"
    );
    assert_eq!(
        render("{{ range $x := until 3 }}{{ $x }}{{ end }}", &d),
        "012"
    );
}

#[test]
fn with_and_variables_scope() {
    let d = json!({"a": {"b": "x"}, "none": ""});
    assert_eq!(render("{{ with .a }}{{ .b }}{{ end }}", &d), "x");
    assert_eq!(render("{{ with .none }}y{{ else }}n{{ end }}", &d), "n");
    assert_eq!(
        render("{{ with .none }}y{{ else with .a }}{{ .b }}{{ end }}", &d),
        "x"
    );
    assert_eq!(
        render("{{ with $v := .a.b }}{{ $v }}{{ . }}{{ end }}", &d),
        "xx"
    );
    assert_eq!(
        render("{{ if .none }}y\n{{- else -}}\n  n{{ end }}", &d),
        "n"
    );
    assert_eq!(
        render("{{ $x := 1 }}{{ $x }}{{ $x = 2 }}{{ $x }}", &d),
        "12"
    );
    // A variable declared in a block ends with it; an assignment changes the outer one.
    assert_eq!(
        render(
            "{{ $x := \"o\" }}{{ if true }}{{ $x := \"i\" }}{{ $x }}{{ end }}{{ $x }}",
            &d
        ),
        "io"
    );
    assert_eq!(
        render(
            "{{ $x := \"o\" }}{{ range .a }}{{ $x = \"r\" }}{{ end }}{{ $x }}",
            &d
        ),
        "r"
    );
    let e = render_err("{{ if true }}{{ $y := 1 }}{{ end }}{{ $y }}", &d);
    assert_eq!(e, "t:1: undefined variable: $y");
}

#[test]
fn pipes_and_parentheses() {
    let d = json!({"s": "abc", "m": {"k": {"v": 5}}});
    assert_eq!(render("{{ .s | upper | printf \"%s!\" }}", &d), "ABC!");
    assert_eq!(render("{{ (index .m \"k\").v }}", &d), "5");
    assert_eq!(render("{{ .s | replace \"b\" \"B\" }}", &d), "aBc");
    assert_eq!(render("{{ len .s | add 1 }}", &d), "4");
    // The piped value is the last argument.
    assert_eq!(render("{{ \"a\" | printf \"%s-%s\" \"b\" }}", &d), "b-a");
    assert_eq!(render("{{ 'a' }}", &d), "97");
}

#[test]
fn missing_keys_error_or_print_no_value() {
    let d = json!({"a": {}, "n": null});
    assert_eq!(
        render_err("line1\n{{ .a.dnsZone }}", &d),
        "t:2: map has no entry for key \"dnsZone\""
    );
    assert!(render_err("{{ .n.x }}", &d).contains(".x"));
    let t = Templater::new().fail_on_missing(false);
    assert_eq!(
        t.render("t", "[{{ .a.b }}][{{ .x.y.z }}]", &d).unwrap(),
        "[<no value>][<no value>]"
    );
    // `default` and `hasKey` work without the key failing inside `index`.
    assert_eq!(render("{{ index .a \"b\" | default \"d\" }}", &d), "d");
}

#[test]
fn define_template_block_and_include_snippets() {
    let d = json!({"name": "n1", "items": ["a", "b"]});
    assert_eq!(
        render(
            "{{ define \"x\" }}[{{ . }}]{{ end }}{{ template \"x\" .name }}",
            &d
        ),
        "[n1]"
    );
    assert_eq!(
        render("{{ block \"b\" .name }}<{{ . }}>{{ end }}", &d),
        "<n1>"
    );
    let t = Templater::new()
        .with_snippet("docker.options", "opts for {{ .name }}\nline2")
        .with_snippet("lib", "{{ define \"item\" }}- {{ . }}{{ end }}");
    assert_eq!(
        t.render(
            "main",
            "x:\n  {{ include \"docker.options\" . | indent 2 }}",
            &d
        )
        .unwrap(),
        "x:\n  opts for n1\n  line2"
    );
    assert_eq!(
        t.render(
            "main",
            "{{ range .items }}{{ include \"item\" . }}\n{{ end }}",
            &d
        )
        .unwrap(),
        "- a\n- b\n"
    );
    assert_eq!(
        t.render("main", "{{ template \"docker.options\" . }}", &d)
            .unwrap(),
        "opts for n1\nline2"
    );
    // Errors name the snippet they happen in; unknown snippets are named too.
    let t = t.with_snippet("bad", "ok\n{{ .missing }}");
    let e = t.render("main", "{{ include \"bad\" . }}", &d).unwrap_err();
    assert_eq!(e.to_string(), "bad:2: map has no entry for key \"missing\"");
    let e = t
        .render("main", "{{ include \"nope\" . }}", &d)
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "main:1: no such template or snippet \"nope\""
    );
    // A snippet may not be named like the main template.
    assert!(t.render("bad", "x", &d).is_err());
}

#[test]
fn printf_and_print() {
    let d = json!({"s": "x", "n": 42, "f": 1.5, "b": true});
    assert_eq!(
        render(
            r#"{{ printf "%s|%d|%v|%q|%.2f|%t|%%|%5d|%-3s|%03d" .s .n .f .s .f .b .n .s .n }}"#,
            &d
        ),
        "x|42|1.5|\"x\"|1.50|true|%|   42|x  |042"
    );
    assert_eq!(render("{{ printf \"%d\" }}", &d), "%!d(MISSING)");
    assert_eq!(
        render("{{ print 1 2 \"a\" 3 }}|{{ println .s .n }}", &d),
        "1 2a3|x 42\n"
    );
}

#[test]
fn comparisons_and_logic() {
    let d = json!({"a": 1, "b": 2, "s": "x"});
    assert_eq!(
        render(
            "{{ eq .s \"y\" \"x\" }} {{ ne .a .b }} {{ lt .a .b }} {{ ge .a .b }}",
            &d
        ),
        "true true true false"
    );
    assert_eq!(
        render("{{ lt \"a\" \"b\" }} {{ le 2 2 }} {{ gt 2.5 2 }}", &d),
        "true true true"
    );
    assert_eq!(
        render(
            "{{ and 1 0 2 }} {{ and 1 2 }} {{ or 0 \"\" 3 }} {{ or 0 \"\" }} {{ not 0 }}",
            &d
        ),
        "0 2 3  true"
    );
    // `and` stops before an argument that would fail.
    assert_eq!(render("{{ and false .missing }}", &d), "false");
    assert!(render_err("{{ eq 1 \"1\" }}", &d).contains("incompatible types"));
    assert_eq!(
        render("{{ len .s }} {{ index (list 1 (list 2 3)) 1 0 }}", &d),
        "1 2"
    );
}

#[test]
fn indent_is_kops_and_nindent_is_sprig() {
    let d = json!({"s": "a\n\nb"});
    assert_eq!(render("{{ indent 2 .s }}", &d), "a\n\n  b");
    assert_eq!(render("{{ nindent 2 .s }}", &d), "\n  a\n  \n  b");
}

#[test]
fn sprig_functions() {
    let d = json!({"m": {"b": 1, "a": [1, 2]}, "l": ["b", "a", "b"], "e": "", "s": " Hi there "});
    let cases = [
        ("{{ default \"d\" .e }} {{ default \"d\" \"v\" }}", "d v"),
        (
            "{{ empty .e }} {{ coalesce .e 0 \"c\" }} {{ ternary \"y\" \"n\" true }}",
            "true c y",
        ),
        ("{{ quote \"a\" 1 }} {{ squote \"b\" }}", "\"a\" \"1\" 'b'"),
        (
            "{{ upper \"ab\" }}{{ lower \"CD\" }} {{ title \"hello world\" }}",
            "ABcd Hello World",
        ),
        (
            "[{{ trim .s }}] {{ trimAll \"$\" \"$$x$\" }} {{ trimPrefix \"a\" \"abc\" }} {{ trimSuffix \"c\" \"abc\" }}",
            "[Hi there] x bc ab",
        ),
        (
            "{{ contains \"b\" \"abc\" }} {{ hasPrefix \"a\" \"abc\" }} {{ hasSuffix \"x\" \"abc\" }} {{ repeat 3 \"ab\" }}",
            "true true false ababab",
        ),
        (
            "{{ join \",\" .l }} {{ splitList \",\" \"a,b\" }} {{ join \"-\" (list 1 2) }}",
            "b,a,b [a b] 1-2",
        ),
        (
            "{{ keys .m }} {{ hasKey .m \"a\" }} {{ get .m \"b\" }} [{{ get .m \"zz\" }}]",
            "[a b] true 1 []",
        ),
        (
            "{{ $d := dict \"x\" 1 }}{{ $_ := set $d \"y\" 2 }}{{ $d }}",
            "map[x:1 y:2]",
        ),
        (
            "{{ toJson .m }} {{ b64enc \"hi\" }} {{ b64dec \"aGk=\" }}",
            "{\"a\":[1,2],\"b\":1} aGk= hi",
        ),
        (
            "{{ int \"12\" }} {{ int64 3.9 }} {{ float64 2 }} {{ toString 5 | printf \"%q\" }}",
            "12 3 2 \"5\"",
        ),
        (
            "{{ add 1 2 3 }} {{ sub 5 2 }} {{ mul 2 3 }} {{ div 7 2 }} {{ mod 7 2 }} {{ max 1 5 3 }} {{ min 4 2 }}",
            "6 3 6 3 1 5 2",
        ),
        (
            "{{ until 3 }} {{ sortAlpha .l }} {{ uniq .l }} {{ first .l }} {{ last .l }} {{ has \"a\" .l }}",
            "[0 1 2] [a b b] [b a] b b true",
        ),
        (
            "{{ trunc 3 \"abcdef\" }} {{ trunc -2 \"abcdef\" }} {{ substr 1 3 \"abcdef\" }}",
            "abc ef bc",
        ),
        ("{{ fromYaml \"a: 1\" | toJson }}", "{\"a\":1}"),
    ];
    for (t, want) in cases {
        assert_eq!(render(t, &d), want, "{t}");
    }
    assert_eq!(
        render_err("{{ required \"dnsZone is required\" .e }}", &d),
        "t:1: error calling required: dnsZone is required"
    );
    assert_eq!(
        render_err("{{ nosuch 1 }}", &d),
        "t:1: function \"nosuch\" not defined"
    );
}

#[test]
fn to_yaml_writes_sorted_keys() {
    let d = json!({"spec": {"b": [1, "yes"], "a": {"x": true}}});
    assert_eq!(
        render("spec:\n  {{ toYaml .spec | indent 2 }}", &d),
        "spec:\n  a:\n    x: true\n  b:\n  - 1\n  - \"yes\""
    );
}

#[test]
fn parse_errors_name_the_line() {
    let d = json!({});
    assert_eq!(
        render_err("a\nb\n{{ if true }}x", &d),
        "t:3: unexpected EOF in if"
    );
    assert_eq!(render_err("{{ end }}", &d), "t:1: unexpected {{end}}");
    assert_eq!(render_err("\n{{ \"open }}", &d), "t:2: unclosed action");
    assert_eq!(
        render_err("{{ \"a\nb\" }}", &d),
        "t:1: unterminated quoted string"
    );
    assert_eq!(
        render_err("{{ break }}", &d),
        "t:1: {{break}} outside {{range}}"
    );
}

#[test]
fn set_syntax_as_helm() {
    let mut v = json!({});
    set_values(
        &mut v,
        "a.b=c,d[1]=x,n=12,t=true,z=null,s=012,l={a,2,false}",
        false,
    )
    .unwrap();
    assert_eq!(
        v,
        json!({"a": {"b": "c"}, "d": [null, "x"], "n": 12, "t": true, "z": null, "s": "012", "l": ["a", 2, false]})
    );
    let mut v = json!({});
    set_values(&mut v, "t=true,n=1,e=a\\,b,k\\.dot=1", true).unwrap();
    assert_eq!(v, json!({"t": "true", "n": "1", "e": "a,b", "k.dot": "1"}));
    let mut v = json!({"list": [{"name": "a"}]});
    set_values(&mut v, "list[0].size=3", false).unwrap();
    assert_eq!(v, json!({"list": [{"name": "a", "size": 3}]}));
    assert!(set_values(&mut v, "novalue", false).is_err());
    assert!(set_values(&mut v, "a[x]=1", false).is_err());
    assert!(set_values(&mut v, "=1", false).is_err());
}

#[test]
fn deep_merge_src_wins() {
    let mut dest = json!({"a": {"x": 1, "y": {"p": 1}}, "l": [1, 2], "k": "v"});
    merge_values(
        &mut dest,
        &json!({"a": {"y": {"q": 2}, "z": 3}, "l": [3], "k": {"m": 1}}),
    );
    assert_eq!(
        dest,
        json!({"a": {"x": 1, "y": {"p": 1, "q": 2}, "z": 3}, "l": [3], "k": {"m": 1}})
    );
}

#[test]
fn caller_functions_get_their_arguments_and_report_errors_with_the_place() {
    use std::sync::Arc;
    let t = Templater::new()
        .with_function(
            "join3",
            Arc::new(|args: &[Value]| {
                if args.len() != 3 {
                    return Err(format!("want 3 args, got {}", args.len()));
                }
                let parts: Vec<String> = args
                    .iter()
                    .map(|a| match a {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    })
                    .collect();
                Ok(Value::String(parts.join("-")))
            }),
        )
        .with_function("boom", Arc::new(|_: &[Value]| Err("it broke".to_string())));
    let d = json!({"x": "piped"});
    assert_eq!(
        t.render("t", r#"{{ join3 "a" 2 .x }}|{{ .x | join3 "b" true }}"#, &d)
            .unwrap(),
        "a-2-piped|b-true-piped"
    );
    let e = t
        .render("main.tmpl", "one\ntwo {{ boom 1 }}", &d)
        .unwrap_err();
    assert_eq!(e.name(), "main.tmpl");
    assert_eq!(e.line(), 2);
    assert_eq!(e.message(), "error calling boom: it broke");
    assert_eq!(e.to_string(), "main.tmpl:2: error calling boom: it broke");
    let e = t.render("t", "{{ join3 1 }}", &d).unwrap_err();
    assert_eq!(
        e.to_string(),
        "t:1: error calling join3: want 3 args, got 1"
    );
    // Without the function the name is unknown, as before.
    let e = Templater::new().render("t", "{{ boom }}", &d).unwrap_err();
    assert_eq!(e.to_string(), "t:1: function \"boom\" not defined");
}

#[test]
fn caller_functions_do_not_shadow_builtins() {
    use std::sync::Arc;
    let never = || -> kops_model::template::TemplateFn {
        Arc::new(|_: &[Value]| Ok(Value::String("shadowed".into())))
    };
    let t = Templater::new()
        .with_function("eq", never())
        .with_function("and", never())
        .with_function("upper", never())
        .with_function("include", never())
        .with_snippet("s", "snip");
    let d = json!({});
    assert_eq!(
        t.render(
            "t",
            r#"{{ eq 1 1 }} {{ and 1 2 }} {{ upper "a" }} {{ include "s" . }}"#,
            &d
        )
        .unwrap(),
        "true 2 A snip"
    );
    // A built-in's own error is reported, not the caller's function called instead.
    let e = t.render("t", "{{ upper }}", &d).unwrap_err();
    assert!(!e.to_string().contains("shadowed"), "{e}");
    assert!(e.message().starts_with("error calling upper:"), "{e}");
    assert!(format!("{t:?}").contains("upper"));
}

#[test]
fn sprig_regex_functions() {
    let d = json!({"host": "api.prod-1.example.com", "v": "v1.34.2"});
    let cases = [
        // Sprig's documented examples.
        (
            r#"{{ regexMatch "^[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\\.[A-Za-z]{2,}$" "test@acme.com" }}"#,
            "true",
        ),
        (
            r#"{{ regexFindAll "[2,4,6,8]" "123456789" -1 }}"#,
            "[2 4 6 8]",
        ),
        (r#"{{ regexFind "[a-zA-Z][1-9]" "abcd1234" }}"#, "d1"),
        (
            r#"{{ regexReplaceAll "a(x*)b" "-ab-axxb-" "${1}W" }}"#,
            "-W-xxW-",
        ),
        (
            r#"{{ regexReplaceAllLiteral "a(x*)b" "-ab-axxb-" "${1}" }}"#,
            "-${1}-${1}-",
        ),
        (r#"{{ regexSplit "z+" "pizza" -1 }}"#, "[pi a]"),
        (r#"{{ regexQuoteMeta "1.2.3" }}"#, r"1\.2\.3"),
        // Counts, no match, piping, values.
        (
            r#"{{ regexFindAll "[0-9]+" .host 1 }} {{ regexFindAll "[0-9]+" .host 0 }} {{ regexFindAll "z" .host -1 | len }}"#,
            "[1] [] 0",
        ),
        (
            r#"[{{ regexFind "z" .host }}] {{ regexMatch "^v1\\.3[0-9]" .v }} {{ .v | regexMatch "^1" }}"#,
            "[] true false",
        ),
        (
            r#"{{ regexSplit "\\." .host 2 }} {{ regexSplit "\\." .host 0 }} {{ regexSplit "" "abc" -1 }}"#,
            "[api prod-1.example.com] [] [a b c]",
        ),
        // Go's Expand: numbers, names, $$, a name running on, a $ without a name.
        (
            r#"{{ regexReplaceAll "^v(?P<major>\\d+)\\.(\\d+)\\.\\d+$" .v "$major.${2}x $2x $$ $" }}"#,
            "1.34x  $ $",
        ),
        (
            r#"{{ regexReplaceAll "(\\w+)\\.(\\w+)" "a.b c.d" "$2.$1" }}"#,
            "b.a d.c",
        ),
        // Empty matches: one between characters, none right after a match.
        (r#"{{ regexReplaceAll "x*" "abc" "-" }}"#, "-a-b-c-"),
        (r#"{{ regexReplaceAll "a*" "baaac" "-" }}"#, "-b-c-"),
        // Go's syntax and meaning: ASCII \w, literal braces, \Q...\E.
        (r#"{{ regexFind "\\w+" "café" }}"#, "caf"),
        (
            r#"{{ regexReplaceAll "\\${[a-z]+}" "x=${zone}" "us" }}"#,
            "x=us",
        ),
        (r#"{{ regexFind "\\Q1.2+\\E" "v1.2+3" }}"#, "1.2+"),
        // The must forms answer the same when the regex is good.
        (
            r#"{{ mustRegexMatch "b" "abc" }} {{ mustRegexFind "b+" "abbc" }} {{ mustRegexFindAll "b" "abcb" -1 }} {{ mustRegexReplaceAll "b(c)" "abc" "[$1]" }} {{ mustRegexReplaceAllLiteral "b" "abc" "$1" }} {{ mustRegexSplit "b" "abc" -1 }}"#,
            "true bb [b b] a[c] a$1c [a c]",
        ),
        (
            r#"{{ regexQuoteMeta "a.b*c{1}" | printf "^%s$" }}"#,
            r"^a\.b\*c\{1\}$",
        ),
    ];
    for (t, want) in cases {
        assert_eq!(render(t, &d), want, "{t}");
    }
    // A quoted name matches itself.
    assert_eq!(
        render(
            r#"{{ $p := printf "^%s$" (regexQuoteMeta .host) }}{{ regexMatch $p .host }} {{ regexMatch $p "apixprod-1.example.com" }}"#,
            &d
        ),
        "true false"
    );
}

#[test]
fn a_bad_regex_is_an_error_naming_the_place_and_the_regex() {
    let d = json!({});
    assert_eq!(
        render_err("ok\n{{ regexFind \"a(b\" \"ab\" }}", &d),
        "t:2: error calling regexFind: error parsing regexp: unclosed group: `a(b`"
    );
    assert_eq!(
        render_err("{{ mustRegexReplaceAll \"[z\" \"ab\" \"x\" }}", &d),
        "t:1: error calling mustRegexReplaceAll: error parsing regexp: unclosed character class: `[z`"
    );
    // Sprig's regexMatch would answer false; here it fails like the others.
    assert_eq!(
        render_err("{{ regexMatch \"*\" \"ab\" }}", &d),
        "t:1: error calling regexMatch: error parsing regexp: repetition operator missing expression: `*`"
    );
    assert_eq!(
        render_err("{{ regexSplit \"a\" \"b\" }}", &d),
        "t:1: error calling regexSplit: wrong number of args for regexSplit: want 3 got 2"
    );
    assert_eq!(
        render_err("{{ regexFindAll \"a\" \"b\" \"all\" }}", &d),
        "t:1: error calling regexFindAll: regexFindAll: expected an integer, got string"
    );
}
