#!/usr/bin/env python3
"""Generate src/internal/generated.rs: the internal ClusterSpec and
InstanceGroupSpec fields that keep their v1alpha2 shape, plus the field copies
between the two versions. The fields that move or change shape are declared
here (MOVED_*) and converted by hand in src/internal/conversion.rs.

Both get serde with kOps' internal JSON names: a field that keeps its shape
keeps its v1alpha2 name unless INTERNAL_WIRE renames it; the hand-declared
fields (NEW_*) carry their internal names. With kOps' internal API directory as
second argument, every name is checked against its Go json tags (NOT_IN_KOPS
lists the fields kOps' internal types do not serialise and which are kept
under their v1alpha2 names, so that the internal JSON loses nothing).

Usage (on the unformatted output of gen_v1alpha2.py, before rustfmt):
  gen_v1alpha2.py KOPS/pkg/apis/kops/v1alpha2 > /tmp/v.rs
  gen_internal.py /tmp/v.rs KOPS/pkg/apis/kops > src/internal/generated.rs && cp /tmp/v.rs src/v1alpha2/generated.rs
  cargo fmt -p kops-api
  tools/gen_schema.py > src/schema/generated.rs
"""
import os, re, sys

MOVED_CLUSTER = {
    "configBase", "keyStore", "secretStore", "cloudProvider", "project", "nodeTerminationHandler",
    "awsLoadBalancerController", "warmPool", "podIdentityWebhook", "subnets", "networkCIDR",
    "additionalNetworkCIDRs", "networkID", "topology", "serviceClusterIPRange", "podCIDR",
    "nonMasqueradeCIDR", "egressProxy", "isolateMasters", "DisableSubnetTags", "networking",
    "masterPublicName", "additionalSans", "kubernetesApiAccess", "api", "serviceOIDCProvider",
    "masterInternalName",
}
MOVED_IG = {"role", "rootVolume", "rootVolumeSize", "rootVolumeType", "rootVolumeIops", "rootVolumeThroughput",
            "rootVolumeOptimization", "rootVolumeEncryption", "rootVolumeEncryptionKey"}
RENAME = {("ClusterSpec", "configStore"): "legacy_config_store"}
# Internal JSON names of the fields that keep their shape but not their name.
INTERNAL_WIRE = {
    ("ClusterSpec", "masterKubelet"): "controlPlaneKubelet",
    ("ClusterSpec", "externalDns"): "externalDNS",
    # kOps' internal `configStore` is the struct of state locations; the unused
    # v1alpha2 string of that name (kOps' LegacyConfigStore) needs another name.
    ("ClusterSpec", "configStore"): "legacyConfigStore",
    ("InstanceGroupSpec", "associatePublicIp"): "associatePublicIP",
}
# Internal JSON names kOps' internal Go types do not have (`json:"-"` or no field).
NOT_IN_KOPS = {("ClusterSpec", "containerRuntime"), ("ClusterSpec", "docker"),
               ("ClusterSpec", "legacyConfigStore"), ("InstanceGroupSpec", "rootVolumeDeleteOnTermination")}

# Hand-declared internal fields: (internal JSON name, ident, type, doc).
NEW_CLUSTER = [
    ("configStore", "config_store", "ConfigStoreSpec", "Where the cluster's state lives (`configBase`, `keyStore`, `secretStore` in v1alpha2)."),
    ("cloudProvider", "cloud_provider", "CloudProviderSpec", "The cloud and its provider-specific settings."),
    ("networking", "networking", "NetworkingSpec", "Network layout, addressing and the CNI plug-in."),
    ("api", "api", "ApiSpec", "How the Kubernetes API is reached."),
]
NEW_IG = [
    ("role", "role", "Option<InstanceGroupRole>", "What the machines do (`Master` in v1alpha2 is `ControlPlane` here)."),
    ("rootVolume", "root_volume", "Option<InstanceRootVolumeSpec>", "The root volume (`rootVolume*` fields in v1alpha2)."),
]


def fields_of(text, name):
    m = re.search(r"pub struct %s \{\n(.*?)\n\}" % name, text, re.S)
    out = []
    for doc, jname, ident, ty in re.findall(
            r"    /// (.*)\n    #\[serde\(rename = \"([^\"]+)\".*\]\n    pub (\w+): Option<(.*)>,", m.group(1)):
        out.append((jname, ident, ty, doc))
    return out


def qualify(ty):
    prims = {"String", "bool", "i16", "i32", "i64", "u8", "u32", "u64", "f64"}
    def repl(m):
        w = m.group(0)
        if w in prims or w in ("Vec", "BTreeMap"):
            return w
        return "v1alpha2::" + w
    return re.sub(r"\b[A-Za-z_]\w*\b", repl, ty)


def go_json_tags(kops_dir, name):
    """The JSON names of kOps' internal Go struct `name`."""
    for f in sorted(os.listdir(kops_dir)):
        if not f.endswith(".go") or f.endswith("_test.go"):
            continue
        m = re.search(r"^type %s struct \{\n(.*?)^\}" % name, open(os.path.join(kops_dir, f)).read(), re.M | re.S)
        if m:
            return {t.split(",")[0] for t in re.findall(r'`json:"([^"]*)"', m.group(1))} - {"", "-"}
    raise SystemExit(f"no struct {name} in {kops_dir}")


def emit(text, vname, moved, new, iname, kops_dir):
    common = []
    for jname, ident, ty, doc in fields_of(text, vname):
        if jname in moved:
            continue
        common.append((RENAME.get((vname, jname), ident), ident, qualify(ty), doc, INTERNAL_WIRE.get((vname, jname), jname)))
    wires = [w for w, _, _, _ in new] + [c[4] for c in common]
    if len(set(wires)) != len(wires):
        raise SystemExit(f"{iname}: duplicate internal JSON names")
    if kops_dir:
        tags = go_json_tags(kops_dir, iname)
        for w in wires:
            if (w in tags) == ((iname, w) in NOT_IN_KOPS):
                raise SystemExit(f"{iname}.{w}: kOps' internal json tags disagree with INTERNAL_WIRE/NOT_IN_KOPS")
    print(f"/// Internal `{iname}`: see the field docs; shapes follow kOps' internal API.")
    print("#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]")
    print("#[serde(deny_unknown_fields)]")
    print("#[non_exhaustive]")
    print(f"pub struct {iname} {{")
    for wire, ident, ty, doc in new:
        print(f"    /// {doc}")
        if ty.startswith("Option<"):
            print(f"    #[serde(rename = \"{wire}\", default, skip_serializing_if = \"Option::is_none\")]")
        else:
            print(f"    #[serde(rename = \"{wire}\", default)]")
        print(f"    pub {ident}: {ty},")
    for iident, vident, ty, doc, wire in common:
        doc = doc.replace("Wire field", "Same as v1alpha2")
        if wire != doc.split("`")[1]:
            doc += f" Internal JSON name `{wire}`."
        if (iname, wire) in NOT_IN_KOPS:
            doc += " Not a field of kOps' internal type; kept so that nothing is lost."
        print(f"    /// {doc}")
        print(f"    #[serde(rename = \"{wire}\", default, skip_serializing_if = \"Option::is_none\")]")
        print(f"    pub {iident}: Option<{ty}>,")
    print("}\n")
    low = iname.lower()
    print(f"/// Copies the fields that keep their shape, v1alpha2 to internal.")
    print(f"pub(crate) fn copy_{low}_to_internal(a: &v1alpha2::{vname}, b: &mut {iname}) {{")
    for iident, vident, ty, doc, wire in common:
        print(f"    b.{iident} = a.{vident}.clone();")
    print("}\n")
    print(f"/// Copies the fields that keep their shape, internal to v1alpha2.")
    print(f"pub(crate) fn copy_{low}_to_v1alpha2(b: &{iname}, a: &mut v1alpha2::{vname}) {{")
    for iident, vident, ty, doc, wire in common:
        print(f"    a.{vident} = b.{iident}.clone();")
    print("}\n")


def main():
    text = open(sys.argv[1]).read()
    kops_dir = sys.argv[2] if len(sys.argv) > 2 else None
    print("// @generated by crates/kops-api/tools/gen_internal.py. Do not edit by hand.\n")
    print("#![allow(clippy::all)]\n")
    print("use std::collections::BTreeMap;\n")
    print("use serde::{Deserialize, Serialize};\n")
    print("use super::{ApiSpec, CloudProviderSpec, ConfigStoreSpec, InstanceGroupRole, InstanceRootVolumeSpec, NetworkingSpec};")
    print("use crate::v1alpha2;\n")
    emit(text, "ClusterSpec", MOVED_CLUSTER, NEW_CLUSTER, "ClusterSpec", kops_dir)
    emit(text, "InstanceGroupSpec", MOVED_IG, NEW_IG, "InstanceGroupSpec", kops_dir)


main()
