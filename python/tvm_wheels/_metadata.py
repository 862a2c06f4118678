"""scikit-build-core metadata plugin: the wheel's version and extra build needs.

version = <TVM version>+<label of the variant named by TVM_WHEEL_VARIANT>.
Build requirements: the pinned PyPI LLVM when the variant compiles and the
user named no LLVM of their own (TVM_WHEELS_LLVM).
"""

from __future__ import annotations

import os

from . import cmakedata, variants


def dynamic_metadata(field: str, settings: dict | None = None) -> str:
    if field != "version":
        raise ValueError(f"tvm_wheels._metadata provides 'version', not {field!r}")
    variant = variants.load(variants.selected())
    return variant.version(variants.requirements()["TVM_WHEELS_TVM_VERSION"])


def get_requires_for_dynamic_metadata(settings: dict | None = None) -> list[str]:
    variant = variants.load(variants.selected())
    if not variant.compiler or os.environ.get("TVM_WHEELS_LLVM", "pip") not in ("", "pip"):
        return []
    return cmakedata.as_list(variants.requirements()["TVM_WHEELS_PIP_LLVM"])
