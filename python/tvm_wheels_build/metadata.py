"""scikit-build-core metadata plugin: the wheel's version and extra build needs.

version = <TVM version>+<label of the variant named by TVM_WHEEL_VARIANT>.
dependencies = pyproject's common list + the variant's TVM_WHEEL_DEPENDENCIES.
optional-dependencies = pyproject's common extras + the variant's TVM_WHEEL_EXTRAS.
Build requirements: the pinned PyPI LLVM when the variant compiles and the
user named no LLVM of their own (TVM_WHEELS_LLVM); a CUDA variant's pinned
NVIDIA wheels when the user named no toolkit (TVM_WHEELS_CUDA). Not for a cross
build: pip would install them for the build machine, and the build needs the
variant's architecture (tools/wheelhouse.py provisions those).
"""

from __future__ import annotations

import os
import platform

from tvm_wheels import cmakedata, variants


def dynamic_metadata(field: str, settings: dict | None = None) -> str | list[str]:
    variant = variants.load(variants.selected())
    if field == "version":
        return variant.version(variants.requirements()["TVM_WHEELS_TVM_VERSION"])
    if field == "dependencies":  # pyproject's common list, then the variant's own
        return [*(settings or {}).get("common", []), *variant.dependencies]
    if field == "optional-dependencies":
        extras = {name: list(reqs) for name, reqs in (settings or {}).get("common", {}).items()}
        for name, reqs in variant.extras.items():
            extras.setdefault(name, []).extend(reqs)
        return extras
    raise ValueError(f"tvm_wheels_build.metadata provides 'version', 'dependencies' and 'optional-dependencies', "
                     f"not {field!r}")


def _from_pip(knob: str) -> bool:
    return os.environ.get(knob, "pip") in ("", "pip")


def get_requires_for_dynamic_metadata(settings: dict | None = None) -> list[str]:
    variant = variants.load(variants.selected())
    reqs = []
    if variant.cross(platform.machine()):
        return reqs
    if variant.compiler and _from_pip("TVM_WHEELS_LLVM"):
        reqs += cmakedata.as_list(variants.requirements()["TVM_WHEELS_PIP_LLVM"])
    if variant.cuda and _from_pip("TVM_WHEELS_CUDA"):
        reqs += list(variant.cuda_pip)
    return reqs
