#!/usr/bin/env python3
"""Generate crates/kops-api/src/v1alpha2/generated.rs from kOps' v1alpha2 Go type files.

Usage: gen_v1alpha2.py <kops-checkout>/pkg/apis/kops/v1alpha2 > src/v1alpha2/generated.rs
(then regenerate the internal types as tools/gen_internal.py says, and the
schema tables: tools/gen_schema.py > src/schema/generated.rs)

Only the schema is taken over (type names, JSON field names and field types);
every field becomes an `Option` so that what the user omitted stays omitted, and
every struct rejects unknown fields. Top-level objects (Cluster, InstanceGroup,
SSHCredential, Keyset and lists) are written by hand in `mod.rs`.
"""
import re, sys, os

SKIP_TYPES = {"Cluster", "ClusterList", "InstanceGroup", "InstanceGroupList", "SSHCredential",
              "SSHCredentialList", "Keyset", "KeysetList", "Host", "HostList", "HostSpec"}
FILES = ["cluster.go", "componentconfig.go", "networking.go", "instancegroup.go", "containerdconfig.go",
         "topology.go", "bastion.go", "sshcredential.go", "dockerconfig.go", "ntpconfig.go"]
# Fields that kOps' v1alpha2 Go types lack but that manifests in the wild carry.
IGNORED_ETCD = ("Not a v1alpha2 field of an etcd cluster (kOps reads it per member): kOps drops it "
    "when loading; accepted here and ignored the same way.")
EXTRA = {"EtcdClusterSpec": [("volumeSize", "i32", IGNORED_ETCD), ("volumeIops", "i32", IGNORED_ETCD),
                             ("volumeThroughput", "i32", IGNORED_ETCD), ("volumeType", "String", IGNORED_ETCD), ("type", "String", IGNORED_ETCD)],
         "ClusterSpec": [("serviceOIDCProvider", "super::IgnoredServiceOidcProvider",
    "Not a v1alpha2 field: kOps drops it when loading; accepted here and ignored the same way.")],
         "InstanceGroupSpec": [("rootVolume", "super::IgnoredRootVolume",
    "Not a v1alpha2 field: kOps ignores it when loading; accepted here and ignored the same way "
    "(use `rootVolumeSize`, `rootVolumeType`, ... instead).")]}
# Structs whose `Deserialize` goes through a private twin with every nested
# struct field boxed (`#[serde(from = ...)]`). Their values are kilobytes large
# (ClusterSpec ~18 KB) and serde's generic layers each keep a copy on the stack
# while decoding, so a manifest needed over 1 MiB of stack in debug builds.
# The twin keeps the decoding frames small; the public types stay unboxed.
BOXED_WIRE = {"ClusterSpec", "InstanceGroupSpec", "NetworkingSpec"}
# Fields holding secrets: typed `Secret` so that `Debug` never prints them.
SECRET_FIELDS = {"secret", "vSpherePassword"}
KEYWORDS = {"type", "match", "ref", "mod", "use", "override", "static", "self", "crate", "super", "where",
            "loop", "move", "impl", "fn", "let", "in", "as", "box", "async", "await", "dyn", "final", "macro",
            "priv", "try", "yield", "abstract", "become", "do", "typeof", "unsized", "virtual", "gen"}

PRIM = {"string": "String", "bool": "bool", "int": "i64", "int16": "i16", "int32": "i32", "int64": "i64",
        "uint8": "u8", "uint32": "u32", "uint64": "u64", "float32": "f64", "float64": "f64"}
EXTERNAL = {"metav1.Duration": "Duration", "v1.Duration": "Duration", "metav1.Time": "Time",
            "resource.Quantity": "Quantity", "intstr.IntOrString": "IntOrString",
            "corev1.Toleration": "Toleration", "corev1.EnvVar": "CoreEnvVar", "corev1.Affinity": "Affinity", "Secret": "Secret"}


def snake(name):
    name = re.sub(r"([A-Z]{2,})s(?=[A-Z]|$)", lambda m: m.group(1).capitalize() + "s", name)
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    s = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", s)
    s = s.replace("-", "_").replace(".", "_").lower()
    if s in KEYWORDS:
        s += "_"
    return s


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return "\n".join(re.sub(r"//.*$", "", l) for l in text.splitlines())


def parse(dirpath):
    structs, aliases, order = {}, {}, []
    for f in FILES:
        text = strip_comments(open(os.path.join(dirpath, f)).read())
        for m in re.finditer(r"^type (\w+) (\w+)\s*$", text, re.M):
            aliases[m.group(1)] = m.group(2)
        for m in re.finditer(r"^type (\w+) struct\s*\{\}\s*$", text, re.M):
            structs[m.group(1)] = []
            order.append(m.group(1))
        for m in re.finditer(r"^type (\w+) struct \{\n(.*?)^\}", text, re.M | re.S):
            name, body = m.group(1), m.group(2)
            fields = []
            for line in body.splitlines():
                line = line.strip()
                if not line:
                    continue
                fm = re.match(r'^(\w+)\s+(\S+)\s+`json:"([^"]*)"', line)
                if fm:
                    gname, gtype, tag = fm.groups()
                    jname = tag.split(",")[0]
                    if jname == "-":
                        continue
                    if jname == "" and "inline" in tag:
                        fields.append(("inline", gtype, None))
                        continue
                    fields.append((gname, gtype, jname))
                    continue
                em = re.match(r'^([\w.]+)(\s+`json:"[^"]*"`)?$', line)
                if em:
                    fields.append(("inline", em.group(1), None))
                    continue
                raise SystemExit(f"cannot parse field line in {name}: {line!r}")
            structs[name] = fields
            order.append(name)
    return structs, aliases, order


def rust_type(gtype, aliases, structs):
    if gtype.startswith("*"):
        return rust_type(gtype[1:], aliases, structs)
    if gtype.startswith("[]"):
        inner = gtype[2:]
        if inner == "byte":
            return "String"
        return f"Vec<{rust_type(inner, aliases, structs)}>"
    m = re.match(r"map\[string\](.*)", gtype)
    if m:
        return f"BTreeMap<String, {rust_type(m.group(1), aliases, structs)}>"
    if gtype in EXTERNAL:
        return EXTERNAL[gtype]
    if gtype in PRIM:
        return PRIM[gtype]
    if gtype in aliases:
        return rust_type(aliases[gtype], aliases, structs)
    if gtype in structs:
        return gtype
    raise SystemExit(f"unknown Go type {gtype}")


def expand(name, structs):
    out = []
    for gname, gtype, jname in structs[name]:
        if gname == "inline":
            base = gtype.lstrip("*")
            if base.startswith("metav1."):
                continue
            out.extend(expand(base, structs))
        else:
            out.append((gname, gtype, jname))
    return out


def print_boxed_wire(name, idents, structs):
    """The private decoding twin of `name`: nested structs boxed."""
    boxed = lambda rt: rt in structs
    print(f"/// Decoding form of [`{name}`]: nested structs boxed to keep stack frames small.")
    print("#[derive(Deserialize)]")
    print("#[serde(deny_unknown_fields)]")
    print(f"struct {name}Wire {{")
    for jname, ident, rt in idents:
        ty = f"Box<{rt}>" if boxed(rt) else rt
        print(f"    #[serde(rename = \"{jname}\", default)]")
        print(f"    {ident}: Option<{ty}>,")
    print("}\n")
    print(f"impl From<{name}Wire> for {name} {{")
    print(f"    fn from(w: {name}Wire) -> Self {{")
    print("        Self {")
    for jname, ident, rt in idents:
        value = f"w.{ident}.map(|b| *b)" if boxed(rt) else f"w.{ident}"
        print(f"            {ident}: {value},")
    print("        }")
    print("    }")
    print("}\n")


def words(jname):
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", jname)
    s = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1 \2", s)
    return s


def main():
    structs, aliases, order = parse(sys.argv[1])
    print("// @generated by crates/kops-api/tools/gen_v1alpha2.py from kOps' v1alpha2 schema.")
    print("// Do not edit by hand: change the generator and run it again.\n")
    print("use std::collections::BTreeMap;\n")
    print("use serde::{Deserialize, Serialize};\n")
    body = []
    real = sys.stdout
    sys.stdout = Buf(body)
    for name in order:
        if name in SKIP_TYPES:
            continue
        fields = expand(name, structs)
        print(f"/// `{name}` of `kops.k8s.io/v1alpha2` ({words(name).lower()}).")
        print("#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]")
        if name in BOXED_WIRE:
            print(f"#[serde(from = \"{name}Wire\")]")
        print("#[serde(deny_unknown_fields)]")
        print("#[non_exhaustive]")
        print(f"pub struct {name} {{")
        seen = set()
        # Alphabetical by wire name: kOps writes YAML with sorted keys.
        rows = [(jname, "Secret" if jname in SECRET_FIELDS else rust_type(gtype, aliases, structs),
                 f"Wire field `{jname}` ({words(jname).lower()})." + (" Redacted in `Debug`." if jname in SECRET_FIELDS else ""))
                for gname, gtype, jname in fields]
        rows += EXTRA.get(name, [])
        idents = []
        for jname, rt, doc in sorted(rows, key=lambda r: r[0]):
            ident = snake(jname)
            while ident in seen:
                ident += "_"
            seen.add(ident)
            idents.append((jname, ident, rt))
            print(f"    /// {doc}")
            print(f"    #[serde(rename = \"{jname}\", default, skip_serializing_if = \"Option::is_none\")]")
            print(f"    pub {ident}: Option<{rt}>,")
        print("}\n")
        if name in BOXED_WIRE:
            print_boxed_wire(name, idents, structs)
    sys.stdout = real
    text = "".join(body)
    used = sorted(v for v in set(EXTERNAL.values()) if re.search(r"\b%s\b" % v, text))
    print("use super::scalars::{%s};\n" % ", ".join(used))
    print(text, end="")


class Buf:
    def __init__(self, out):
        self.out = out
    def write(self, s):
        self.out.append(s)
    def flush(self):
        pass


main()
