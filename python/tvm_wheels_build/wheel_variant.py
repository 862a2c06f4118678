"""PEP 825 (draft) wheel-variant metadata, made from the variant table.

A variant whose preset lists TVM_WHEEL_VARIANT_PROPERTIES ("namespace :: feature :: value")
ships them in its wheel as `.dist-info/variant.json`, under a variant label equal to its local
version label; tools/make_index.py writes the index-level file for all of them. Variant-aware
installers read these; today's pip ignores them and goes by the local label and the per-variant
index. The build calls this module (cmake/modules/Install.cmake):

    python -m tvm_wheels_build.wheel_variant VARIANT OUT.json
"""

from __future__ import annotations

import json
import re
import sys

from tvm_wheels import variants

# The draft format version the PEP's examples use; 0.x is reserved for drafts.
SCHEMA = "https://variants-schema.wheelnext.dev/v0.0.3.json"
PROPERTY = re.compile(r"^\s*([a-z0-9_]+)\s*::\s*([a-z0-9_]+)\s*::\s*([a-z0-9_.]+)\s*$")
LABEL = re.compile(r"^[0-9a-z_.]{1,16}$")


def properties(variant: variants.Variant) -> dict[str, dict[str, list[str]]]:
    """{namespace: {feature: [values]}} of a variant's preset."""
    out: dict[str, dict[str, list[str]]] = {}
    for prop in variant.properties:
        m = PROPERTY.match(prop)
        if not m:
            raise ValueError(f"{variant.name}: {prop!r} is not a PEP 825 property (namespace :: feature :: value, "
                             "lower case, digits, _ and .)")
        out.setdefault(m[1], {}).setdefault(m[2], []).append(m[3])
    return out


def metadata(members: list[variants.Variant]) -> dict:
    """variant.json (one member) or the index-level {name}-{version}-variants.json (several)."""
    members = [v for v in members if v.properties]
    for v in members:
        if not LABEL.match(v.label):
            raise ValueError(f"{v.name}: label {v.label!r} is not a valid variant label (^[0-9a-z_.]{{1,16}}$)")
    found = {v.label: properties(v) for v in members}
    namespaces = sorted({ns for props in found.values() for ns in props})
    return {"$schema": SCHEMA, "default-priorities": {"namespace": namespaces}, "variants": found}


def main(argv: list[str]) -> int:
    variant = variants.load(argv[1])
    if not variant.properties:
        print(f"{variant.name} has no variant properties: a plain (non-variant) wheel", file=sys.stderr)
        return 1
    with open(argv[2], "w", encoding="utf-8") as f:
        f.write(json.dumps(metadata([variant]), indent=2, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
