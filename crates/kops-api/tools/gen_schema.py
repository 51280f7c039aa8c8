#!/usr/bin/env python3
"""Generate src/schema/generated.rs: the tables of `kops_api::schema`.

Reads the Rust sources of the serde types, not kOps' Go: every `pub struct`
with named fields in src/v1alpha2/{generated,mod,scalars}.rs and
src/internal/{generated,mod}.rs, and the top-level objects that
src/v1alpha2/mod.rs declares through its `top_level!` macro. A field's JSON name
is its `#[serde(rename = "...")]`, else its identifier under the struct's
`rename_all`; its shape follows its Rust type. A type the generator does not
know stops it, so a new kind of field cannot slip through undescribed.

Usage (from crates/kops-api, after the v1alpha2 or internal types change):
  tools/gen_schema.py > src/schema/generated.rs

The output is final (`mod generated` is `#[rustfmt::skip]`). The unit tests in
src/schema/mod.rs compare every table with what serde reads and writes.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCES = [
    ("v1alpha2", "src/v1alpha2/generated.rs"),
    ("v1alpha2", "src/v1alpha2/mod.rs"),
    ("v1alpha2", "src/v1alpha2/scalars.rs"),
    ("internal", "src/internal/generated.rs"),
    ("internal", "src/internal/mod.rs"),
]
PRIMS = {"String": "String", "bool": "Bool", "f32": "Float", "f64": "Float"}
INTS = {"i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "usize", "isize"}
# Kubernetes scalars, written as strings (`IntOrString` may be an integer).
SCALARS = {"Quantity", "Duration", "Time", "IntOrString", "Secret"}
# Free-form Kubernetes types: any JSON value as far as the schema says.
JSON_TYPES = {"Affinity", "Toleration", "CoreEnvVar", "serde_json::Value", "Value"}
# Enums written as strings.
STRING_ENUMS = {("internal", "InstanceGroupRole")}
KEYWORDS = {"type", "match", "ref", "mod", "use", "override", "static", "self", "crate", "super", "where",
            "loop", "move", "impl", "fn", "let", "in", "as", "box", "async", "await", "dyn", "final", "macro",
            "priv", "try", "yield", "abstract", "become", "do", "typeof", "unsized", "virtual", "gen"}


def die(msg):
    raise SystemExit(f"gen_schema.py: {msg}")


def items(body):
    """Splits a struct body into fields: (docs, attributes, text of `pub name: Type`)."""
    out, docs, attrs, i = [], [], [], 0
    while i < len(body):
        c = body[i]
        if c.isspace() or c == ",":
            i += 1
        elif body.startswith("///", i):
            end = body.find("\n", i)
            end = len(body) if end < 0 else end
            docs.append(body[i + 3:end].strip())
            i = end
        elif body.startswith("//", i):
            i = body.find("\n", i)
            i = len(body) if i < 0 else i
        elif body.startswith("#[", i):
            depth, j = 0, i + 1
            while True:
                depth += {"[": 1, "]": -1}.get(body[j], 0)
                if depth == 0:
                    break
                j += 1
            attrs.append(re.sub(r"\s+", " ", body[i:j + 1]))
            i = j + 1
        else:
            depth, j = 0, i
            while j < len(body) and not (body[j] == "," and depth == 0):
                depth += {"<": 1, ">": -1, "(": 1, ")": -1}.get(body[j], 0)
                j += 1
            out.append((docs, attrs, re.sub(r"\s+", " ", body[i:j]).strip()))
            docs, attrs, i = [], [], j + 1
    return out


def camel(ident):
    head, *rest = ident.split("_")
    return head + "".join(w[:1].upper() + w[1:] for w in rest)


def one_line(docs):
    para = []
    for d in docs:
        if not d:
            break
        para.append(d)
    return " ".join(para)


def parse_struct(module, name, head, body, subst=None):
    rename_all = re.search(r'rename_all = "(\w+)"', head)
    if rename_all and rename_all.group(1) != "camelCase":
        die(f"{name}: rename_all {rename_all.group(1)} is not supported")
    fields = []
    for docs, attrs, text in items(body):
        for k, v in (subst or {}).items():
            text = text.replace(k, v)
        m = re.fullmatch(r"pub (\w+): (.+)", text)
        if not m:
            die(f"{module}::{name}: cannot read field {text!r}")
        ident, ty = m.groups()
        wire = ident[:-1] if ident.endswith("_") and ident[:-1] in KEYWORDS else ident
        plain = wire
        if rename_all:
            wire = camel(wire)
        for a in attrs:
            if a.startswith("#[serde"):
                if re.search(r"\b(flatten|skip|skip_deserializing|skip_serializing|alias)\b", a):
                    die(f"{module}::{name}.{ident}: {a} is not supported")
                r = re.search(r'\brename = "([^"]+)"', a)
                if r:
                    wire = r.group(1)
            elif a.startswith("#[doc = concat!("):
                parts = re.findall(r'"([^"]*)"|(\$\w+)', a[len("#[doc = concat!("):])
                docs = ["".join(s or (subst or {}).get(v, v) for s, v in parts)]
        fields.append({"wire": wire, "name": plain, "doc": one_line(docs), "ty": ty})
    return fields


def imports(text):
    """Names a file takes from v1alpha2 (`use crate::v1alpha2::{self, ObjectMeta};`)."""
    names = set()
    for m in re.finditer(r"^use crate::v1alpha2::(?:\{([^}]*)\}|(\w+));", text, re.M):
        names |= {n.strip() for n in (m.group(1) or m.group(2)).split(",")} - {"self", ""}
    return names


def parse_file(module, path):
    text = open(os.path.join(ROOT, path)).read()
    IMPORTED.update((module, n) for n in imports(text))
    structs = []
    for m in re.finditer(r"((?:^#\[[^\n]*\]\n)*)^pub struct (\w+) \{\n(.*?)^\}", text, re.M | re.S):
        structs.append((m.group(2), parse_struct(module, m.group(2), m.group(1), m.group(3))))
    for m in re.finditer(r"^pub struct (\w+) \{\}", text, re.M):
        structs.append((m.group(1), []))
    # The top-level objects of v1alpha2/mod.rs: the macro's struct, per invocation.
    macro = re.search(r"macro_rules! top_level \{.*?pub struct \$name \{\n(.*?)\n        \}", text, re.S)
    if macro:
        for inv in re.finditer(r'^top_level!\(\n(?:\s*///.*\n)*\s*(\w+),\n\s*\w+ = "\w+",\n\s*"(\w+)",\n\s*(\w+)\n\);',
                               text, re.M):
            name, kind, spec = inv.groups()
            structs.append((name, parse_struct(module, name, "", macro.group(1), {"$spec": spec, "$kind": kind})))
    order = {n: text.find(f"pub struct {n} ") for n, _ in structs}
    for n, _ in structs:
        if order[n] < 0:
            order[n] = text.find(f"\n    {n},\n")
    return sorted(structs, key=lambda s: order[s[0]])


IMPORTED = set()


def static_name(module, name):
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    s = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", s)
    return f"{module}_{s}".upper()


def main():
    objects, order = {}, []
    for module, path in SOURCES:
        for name, fields in parse_file(module, path):
            if name in JSON_TYPES:
                continue
            if (module, name) in objects:
                die(f"{module}::{name} declared twice")
            objects[(module, name)] = fields
            order.append((module, name))
    statics = {k: static_name(*k) for k in order}
    if len(set(statics.values())) != len(statics):
        die("two objects share a static name")

    def shape(module, ty, where):
        ty = ty.replace(" ", "")
        m = re.fullmatch(r"(Option|Box)<(.+)>", ty)
        if m:
            return shape(module, m.group(2), where)
        m = re.fullmatch(r"Vec<(.+)>", ty)
        if m:
            return f"Shape::List(&{shape(module, m.group(1), where)})"
        m = re.fullmatch(r"(?:BTreeMap|HashMap)<String,(.+)>", ty)
        if m:
            return f"Shape::Map(&{shape(module, m.group(1), where)})"
        if ty in PRIMS:
            return f"Shape::{PRIMS[ty]}"
        if ty in INTS:
            return "Shape::Int"
        if ty in JSON_TYPES:
            return "Shape::Json"
        target = "v1alpha2" if (module, ty) in IMPORTED else module
        for prefix, mod in (("crate::v1alpha2::", "v1alpha2"), ("v1alpha2::", "v1alpha2"), ("super::scalars::", module),
                            ("scalars::", module), ("super::", module), ("crate::internal::", "internal")):
            if ty.startswith(prefix):
                ty, target = ty[len(prefix):], mod
                break
        if ty in JSON_TYPES:
            return "Shape::Json"
        if target == "v1alpha2" and ty in SCALARS:
            return f"Shape::Scalar(Scalar::{ty})"
        if (target, ty) in STRING_ENUMS:
            return "Shape::String"
        if (target, ty) in objects:
            return f"Shape::Object(&{statics[(target, ty)]})"
        die(f"{where}: no shape for type {ty!r}")

    def lit(s):
        return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'

    out = sys.stdout
    out.write("// @generated by crates/kops-api/tools/gen_schema.py from the Rust sources of the\n")
    out.write("// v1alpha2 and internal types. Do not edit by hand: from crates/kops-api run\n")
    out.write("//   tools/gen_schema.py > src/schema/generated.rs\n\n")
    out.write("use super::{Field, Object, Scalar, Shape};\n")
    for module, name in order:
        out.write(f"\n/// `{module}::{name}`.\n")
        out.write(f"pub(super) static {statics[(module, name)]}: Object = Object {{\n")
        out.write(f"    module: {lit(module)},\n    name: {lit(name)},\n    fields: &[\n")
        for f in objects[(module, name)]:
            s = shape(module, f["ty"], f"{module}::{name}.{f['name']}")
            out.write(f"        Field {{ wire: {lit(f['wire'])}, name: {lit(f['name'])}, doc: {lit(f['doc'])}, shape: &{s} }},\n")
        out.write("    ],\n};\n")
    out.write("\n/// Every object, v1alpha2 first, each in source order.\n")
    out.write("pub(super) static OBJECTS: &[&Object] = &[\n")
    for k in order:
        out.write(f"    &{statics[k]},\n")
    out.write("];\n")
    out.write("\n/// Each object with a function that decodes and re-encodes its Rust type (tests).\n")
    out.write("#[cfg(test)]\n")
    out.write("pub(super) static TYPES: &[(&Object, super::tests::Codec)] = &[\n")
    for module, name in order:
        out.write(f"    (&{statics[(module, name)]}, super::tests::codec::<crate::{module}::{name}>),\n")
    out.write("];\n")


main()
