"""The import guard: `import tvm` runs check() before any native code of the wheel loads.

It refuses, with an ImportError that names the fix:
- a host CPU without the features the variant was compiled for (the wheel's
  code would die with SIGILL);
- an apache-tvm-ffi outside the range this wheel declares (a different
  tvm-ffi ABI crashes TVM later, e.g. in IR serialization).
"""

from __future__ import annotations

import os
from importlib import metadata

from . import buildinfo, host

DIST = "apache-tvm"
FFI = "apache-tvm-ffi"


def _ffi_problem() -> str | None:
    from packaging.requirements import Requirement

    try:
        wanted = next(r for r in map(Requirement, metadata.requires(DIST) or []) if r.name == FFI)
    except (metadata.PackageNotFoundError, StopIteration):
        return None  # not installed as a distribution (a source tree): nothing to compare
    try:
        have = metadata.version(FFI)
    except metadata.PackageNotFoundError:
        return f"{FFI} is not installed. Fix: pip install '{wanted}'"
    if not wanted.specifier.contains(have, prereleases=True):
        return (f"{FFI} {have} is installed, but this TVM wheel is built and tested with {wanted} "
                f"(other releases change the ABI it was compiled against and crash it). "
                f"Fix: pip install '{wanted}'")
    return None


def _cpu_problem(info: dict) -> str | None:
    required = info.get("cpu_features", [])
    missing = host.missing_features(required)
    if not missing:
        return None
    fix = host.variant_fix(compiler=bool(info.get("compiler_included", True)), tvm_version=info["tvm_version"])
    return (f"this apache-tvm wheel is the {info['variant']} variant ({info['version']}), compiled for CPUs with "
            f"{', '.join(required)}; this CPU lacks {', '.join(missing)}, and running it would crash with an "
            f"illegal instruction. Fix: {fix}")


def problems() -> list[str]:
    try:
        info = buildinfo.load()
    except buildinfo.NotBuilt:
        return []
    return [p for p in (_cpu_problem(info), _ffi_problem()) if p]


def check() -> None:
    if os.environ.get("TVM_WHEELS_SKIP_GUARD") == "1":
        return
    found = problems()
    if found:
        raise ImportError("tvm-wheels: " + "\ntvm-wheels: ".join(found))


def refuse_compiling_if_runtime_only(namespace: dict, runtime_only: bool) -> None:
    """In a runtime-only TVM, replace tvm.compile/tvm.build with a clear refusal."""
    if not runtime_only:
        return
    try:
        info = buildinfo.load()
        what = f"the {info['variant']} variant ({info['version']})"
    except buildinfo.NotBuilt:
        what = "a runtime-only build"

    def refuse(*args, **kwargs):
        raise RuntimeError(
            f"tvm-wheels: this apache-tvm is {what}: it loads and runs exported modules "
            "(tvm.runtime.load_module) but has no compiler. Fix: compile with a compiler variant "
            "(TVM_WHEEL_VARIANT=cpu pip install ./) and export_library() the result, or install that variant here.")

    namespace["compile"] = namespace["build"] = refuse
